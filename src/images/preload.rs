//! Images a cell's node starts with, already unpacked: a containerd root holding a set of the
//! table's images, built once per set (and containerd version) by the real containerd — `ctr
//! images import` of each archive, its layers unpacked by the overlayfs snapshotter and their
//! blobs dropped — and cached beside the archives (`<cache>/images/<key>/root`). A cell's
//! containerd root is made from it by [`Root::seed`]: containerd's databases and the images'
//! manifests and configs copied, the unpacked layers (the snapshotter's committed snapshots)
//! attached read-only where the cell's containerd looks for them. A cell pays no pull and no
//! unpack for an image of the table, what its containers write goes to snapshots of its own,
//! and no cell can change what another one starts with.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::process::Command;

use super::cache::Cache;
use super::{Built, ImageError, io_err};

/// What the builder's errors and lock name.
const WHAT: &str = "the node's preloaded images";
/// The overlayfs snapshotter's committed snapshots, relative to containerd's root.
const SNAPSHOTS: &str = "io.containerd.snapshotter.v1.overlayfs/snapshots";
/// What a cell's root copies of the built one, relative to containerd's root: the metadata
/// (images, content, snapshots by key), the snapshotter's own ids, the manifests and configs.
const COPIED: [&str; 3] = [
    "io.containerd.metadata.v1.bolt",
    "io.containerd.snapshotter.v1.overlayfs/metadata.db",
    "io.containerd.content.v1.content",
];
/// How long containerd may take to answer, and one import to finish.
const ANSWER: Duration = Duration::from_secs(30);
const IMPORT: Duration = Duration::from_secs(10 * 60);
/// How long containerd gets to stop after SIGTERM.
const GRACE: Duration = Duration::from_secs(10);

/// The containerd that builds a root (the version the cells run).
#[derive(Clone, Copy, Debug)]
pub struct Runtime<'a> {
    pub containerd: &'a Path,
    pub ctr: &'a Path,
    /// Its version, which the root's key covers.
    pub version: &'a str,
}

/// A built root.
#[derive(Clone, Debug, PartialEq)]
pub struct Root {
    dir: PathBuf,
}

/// A snapshot a cell's containerd finds at `relative` under its root: `host`, attached read-only.
#[derive(Debug, PartialEq)]
pub struct Snapshot {
    pub host: PathBuf,
    pub relative: PathBuf,
}

/// The key of the root holding `images` (in their order: a later one's tag wins) for `version`.
pub fn key(version: &str, images: &[Built]) -> String {
    let mut hash = Sha256::new();
    hash.update(format!("containerd {version}\n"));
    for image in images {
        hash.update(format!(
            "{} {} {}\n",
            image.archive.display(),
            image.digest,
            image.reference.join(",")
        ));
    }
    format!("root-{:x}", hash.finalize())
}

/// The root holding `images`, built into the cache when it lacks it. Concurrent callers wait for
/// one build.
pub async fn ensure(
    cache_dir: &Path,
    runtime: Runtime<'_>,
    images: &[Built],
) -> Result<Root, ImageError> {
    let cache = Cache::open(cache_dir)?;
    let key = key(runtime.version, images);
    if let Some(dir) = cache.root(&key) {
        return Ok(Root { dir });
    }
    let _lock = cache.lock(WHAT, &key).await?;
    if let Some(dir) = cache.root(&key) {
        return Ok(Root { dir });
    }
    crate::errln!("labcheck: unpacking {} images for the nodes", images.len());
    let started = Instant::now();
    let stage = cache.stage(WHAT, &key)?;
    let root = stage.out.join("root");
    build(runtime, images, &root, &stage.work).await?;
    let listing: Vec<&[String]> = images.iter().map(|i| i.reference.as_slice()).collect();
    let dir = cache.install_root(WHAT, &key, &stage, &serde_json::json!(listing))?;
    crate::errln!(
        "labcheck: unpacked {} images for the nodes in {:.1}s",
        images.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(Root { dir })
}

/// The state directory of a build: short, for containerd's socket (a path of at most 107 bytes).
struct State(PathBuf);

impl Drop for State {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs containerd on `root` (in a mount namespace of its own: its unpacking mounts stay there)
/// and imports every archive.
async fn build(
    runtime: Runtime<'_>,
    images: &[Built],
    root: &Path,
    work: &Path,
) -> Result<(), ImageError> {
    let state = State(PathBuf::from(format!(
        "/run/labcheck-unpack-{}",
        std::process::id()
    )));
    let _ = std::fs::remove_dir_all(&state.0);
    std::fs::create_dir_all(&state.0).map_err(io_err(WHAT, "cannot create", &state.0))?;
    let socket = state.0.join("containerd.sock");
    let config = work.join("containerd.toml");
    std::fs::write(&config, containerd_config(root, &state.0, &socket)).map_err(io_err(
        WHAT,
        "cannot write",
        &config,
    ))?;
    let log_path = work.join("containerd.log");
    let log = std::fs::File::create(&log_path).map_err(io_err(WHAT, "cannot write", &log_path))?;
    let err = log
        .try_clone()
        .map_err(io_err(WHAT, "cannot write", &log_path))?;
    let mut daemon = Command::new(runtime.containerd);
    daemon
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: the closure makes only async-signal-safe system calls on static data.
    unsafe {
        daemon.as_std_mut().pre_exec(own_mount_namespace);
    }
    let mut child = daemon.spawn().map_err(|source| ImageError::Spawn {
        image: WHAT.into(),
        command: runtime.containerd.display().to_string(),
        source,
    })?;
    let imported = import_all(runtime, images, &socket, &log_path).await;
    crate::sandbox::unix::stop_group(&mut child, GRACE).await;
    imported?;
    let snapshots = root.join(SNAPSHOTS);
    let unpacked = std::fs::read_dir(&snapshots)
        .map(|d| d.count())
        .unwrap_or(0);
    if unpacked == 0 && !images.is_empty() {
        return Err(ImageError::Unexpected {
            image: WHAT.into(),
            what: format!(
                "containerd left no snapshot in {}; its log: {}",
                snapshots.display(),
                log_path.display()
            ),
        });
    }
    Ok(())
}

/// In the child before exec: dies with labcheck, and mounts in a namespace of its own.
fn own_mount_namespace() -> std::io::Result<()> {
    use crate::sandbox::unix::check;
    // SAFETY: plain system calls with constant arguments.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        check(libc::unshare(libc::CLONE_NEWNS))?;
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))
    }
}

/// Waits for containerd, then imports each archive into the `k8s.io` namespace (the kubelet's).
async fn import_all(
    runtime: Runtime<'_>,
    images: &[Built],
    socket: &Path,
    log: &Path,
) -> Result<(), ImageError> {
    let ctr = |args: &[&str]| {
        let mut command = Command::new(runtime.ctr);
        command
            .arg("--address")
            .arg(socket)
            .args(["--namespace", "k8s.io"])
            .args(args);
        command
    };
    let started = Instant::now();
    loop {
        match super::run::run(WHAT, ctr(&["version"]), ANSWER).await {
            Ok(_) => break,
            Err(e) if started.elapsed() > ANSWER => {
                return Err(ImageError::Unexpected {
                    image: WHAT.into(),
                    what: format!(
                        "containerd did not answer ({e}); its log: {}",
                        log.display()
                    ),
                });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    for image in images {
        let name = image.reference.first().map_or("an image", String::as_str);
        let archive = image.archive.to_string_lossy();
        let args = [
            "images",
            "import",
            "--local",
            "--discard-unpacked-layers",
            "--snapshotter",
            "overlayfs",
            &archive,
        ];
        super::run::run(name, ctr(&args), IMPORT).await?;
    }
    Ok(())
}

/// containerd with its metadata, content store and overlayfs snapshotter only: no CRI (nothing
/// runs here).
fn containerd_config(root: &Path, state: &Path, socket: &Path) -> String {
    let disabled = r#"disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.sandbox.controller.v1.shim"]"#;
    containerd_toml(root.display(), state.display(), socket.display(), disabled)
}

/// The head of a containerd 2 configuration (`version = 3`): its root, its state, and the
/// sockets and directories it keeps there; `settings`, more top-level settings, before the
/// tables. The node's containerd and the one that builds a root share it.
pub fn containerd_toml(
    root: impl std::fmt::Display,
    state: impl std::fmt::Display,
    socket: impl std::fmt::Display,
    settings: &str,
) -> String {
    format!(
        r#"version = 3
root = "{root}"
state = "{state}"
{settings}
[grpc]
  address = "{socket}"
[ttrpc]
  address = "{socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{state}/opt"
"#
    )
}

impl Root {
    /// Makes `target`, a new cell's containerd root, hold this root's images: copies its
    /// databases and content, makes an empty directory for each snapshot, and returns the
    /// snapshots to attach there read-only.
    pub async fn seed(&self, target: &Path) -> std::io::Result<Vec<Snapshot>> {
        for copied in COPIED {
            let to = target.join(copied);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            crate::sandbox::tree::copy(&self.dir.join(copied), &to).await?;
        }
        let mut snapshots = Vec::new();
        let dir = self.dir.join(SNAPSHOTS);
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let relative = Path::new(SNAPSHOTS).join(entry.file_name());
            std::fs::create_dir_all(target.join(&relative))?;
            snapshots.push(Snapshot {
                host: entry.path(),
                relative,
            });
        }
        snapshots.sort_by(|a, b| a.relative.cmp(&b.relative));
        Ok(snapshots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(reference: &str, digest: &str) -> Built {
        Built {
            reference: vec![reference.into()],
            archive: PathBuf::from(format!("/cache/images/{digest}/image.tar")),
            contents: String::new(),
            digest: format!("sha256:{digest}"),
        }
    }

    #[test]
    fn a_roots_key_covers_containerd_the_images_and_their_order() {
        let (a, b) = (built("nginx", "aa"), built("curl", "bb"));
        let base = key("v2.4.2", &[a.clone(), b.clone()]);
        assert_ne!(base, key("v2.4.3", &[a.clone(), b.clone()]));
        assert_ne!(base, key("v2.4.2", &[b.clone(), a.clone()]));
        assert_ne!(base, key("v2.4.2", std::slice::from_ref(&a)));
        assert_ne!(base, key("v2.4.2", &[a, built("curl", "cc")]));
        assert!(base.starts_with("root-"));
    }

    #[tokio::test]
    async fn a_seeded_root_copies_the_databases_and_attaches_each_snapshot() {
        let dir = tempfile::tempdir().expect("tempdir");
        let built = dir.path().join("built");
        let write = |relative: &str, text: &str| {
            let path = built.join(relative);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write("io.containerd.metadata.v1.bolt/meta.db", "images");
        write("io.containerd.snapshotter.v1.overlayfs/metadata.db", "ids");
        write(
            "io.containerd.content.v1.content/blobs/sha256/ab",
            "manifest",
        );
        write(&format!("{SNAPSHOTS}/1/fs/bin/sh"), "layer");
        write(&format!("{SNAPSHOTS}/2/fs/etc/os-release"), "layer");
        write("io.containerd.grpc.v1.introspection/uuid", "the builder's");
        let target = dir.path().join("cell");
        let snapshots = Root { dir: built.clone() }
            .seed(&target)
            .await
            .expect("seed");
        let read = |relative: &str| std::fs::read_to_string(target.join(relative)).ok();
        assert_eq!(
            read("io.containerd.metadata.v1.bolt/meta.db").as_deref(),
            Some("images")
        );
        assert_eq!(
            read("io.containerd.snapshotter.v1.overlayfs/metadata.db").as_deref(),
            Some("ids")
        );
        assert_eq!(
            read("io.containerd.content.v1.content/blobs/sha256/ab").as_deref(),
            Some("manifest")
        );
        assert_eq!(read("io.containerd.grpc.v1.introspection/uuid"), None);
        let expected: Vec<Snapshot> = ["1", "2"]
            .into_iter()
            .map(|n| Snapshot {
                host: built.join(SNAPSHOTS).join(n),
                relative: Path::new(SNAPSHOTS).join(n),
            })
            .collect();
        assert_eq!(snapshots, expected);
        for s in &snapshots {
            let made = target.join(&s.relative);
            assert!(made.is_dir(), "{} made", made.display());
            assert_eq!(std::fs::read_dir(&made).map(|d| d.count()).ok(), Some(0));
        }
    }
}
