//! A [`Recipe`]'s inputs, resolved before building: the files it compiles or copies (hashed),
//! the host's Debian mirror, the Istio version's samples and builds. They key the image cache
//! ([`key`]).

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::archive;
use super::debian::{host_codename, host_mirror};
use super::table::{ISTIO_BASE, IstioPart, KUBE_BASE, Recipe, Row};
use super::{ImageError, IstioSources, Sources, io_err};

/// Bump when a change to `build` or `debian` changes what the same recipe builds: the
/// cache keys change with it.
pub(super) const BUILD_FORMAT: &str = "labcheck-images 3";
/// What a recipe is built from, resolved before building.
#[derive(Debug)]
pub enum Input {
    File {
        path: PathBuf,
        sha256: String,
    },
    Mirror {
        mirror: String,
    },
    HostApt {
        mirror: String,
        codename: String,
    },
    /// An image of Istio's samples: the version's `samples/` and the sha256 of the files the
    /// recipe reads from it, on a rootfs from `mirror`.
    Sample {
        mirror: String,
        samples: PathBuf,
        sha256: String,
    },
    /// A Go program of Istio's samples: the version's `samples/` and the sha256 of its sources.
    SampleSource {
        samples: PathBuf,
        sha256: String,
    },
    /// A control-plane image: its binary (hashed) on [`KUBE_BASE`] from `mirror`.
    OnBase {
        mirror: String,
        path: PathBuf,
        sha256: String,
    },
    /// A kind node: kind's base files (hashed as one tree) and the node's binaries (each
    /// hashed) on kind's packages from `mirror`.
    KindNode {
        mirror: String,
        kubernetes: String,
        base_files: PathBuf,
        base_sha256: String,
        /// (path in the node, the binary, its sha256)
        files: Vec<(&'static str, PathBuf, String)>,
    },
    /// An Istio image: its version's binaries (with their hashes) on the base from `mirror`.
    Istio {
        mirror: String,
        tag: String,
        /// (path in the image, the build, its sha256)
        files: Vec<(&'static str, PathBuf, String)>,
    },
}

/// Resolves the inputs of `row`'s recipe: hashes the files it compiles or copies, reads the
/// host's Debian mirror.
pub async fn input(row: &Row, sources: &Sources) -> Result<Input, ImageError> {
    let image = row.name();
    let (file, what) = match &row.recipe {
        Recipe::Pause { .. } => (
            sources.pause_source.clone(),
            "the pause container's source (Kubernetes' build/pause/linux/pause.c)",
        ),
        Recipe::Static { binary, .. } => (
            sources.binaries.get(binary).cloned().unwrap_or_default(),
            binary.what(),
        ),
        Recipe::Busybox { .. } => {
            return Ok(Input::HostApt {
                mirror: host_mirror(image)?,
                codename: host_codename(),
            });
        }
        Recipe::Debian { .. } => {
            return Ok(Input::Mirror {
                mirror: host_mirror(image)?,
            });
        }
        Recipe::Sample { sources: dirs, .. } => {
            let istio = istio_of(sources, image)?;
            let samples = istio.samples.clone();
            let read = samples.clone();
            let dirs: &'static [&'static str] = dirs;
            let sha256 = tokio::task::spawn_blocking(move || hash_tree(&read, dirs))
                .await
                .map_err(io::Error::other)
                .and_then(|r| r)
                .map_err(io_err(image, "cannot read Istio's samples", &samples))?;
            return Ok(Input::Sample {
                mirror: host_mirror(image)?,
                samples,
                sha256,
            });
        }
        Recipe::SampleGo { source, .. } => {
            let istio = istio_of(sources, image)?;
            let samples = istio.samples.clone();
            let read = samples.clone();
            let dirs = [*source];
            let sha256 = tokio::task::spawn_blocking(move || hash_tree(&read, &dirs))
                .await
                .map_err(io::Error::other)
                .and_then(|r| r)
                .map_err(io_err(image, "cannot read Istio's samples", &samples))?;
            return Ok(Input::SampleSource { samples, sha256 });
        }
        Recipe::Kubernetes { binary } => {
            let path = sources.binaries.get(binary).cloned().unwrap_or_default();
            let sha256 = hash(image, &path, binary.what()).await?;
            return Ok(Input::OnBase {
                mirror: host_mirror(image)?,
                path,
                sha256,
            });
        }
        Recipe::KindNode => {
            let node = sources
                .kind_node
                .as_ref()
                .ok_or_else(|| ImageError::Unexpected {
                    image: image.to_string(),
                    what: "it is built for the kind backend, and no kind node's tools were given"
                        .into(),
                })?;
            let mut files = Vec::new();
            for (inside, path) in &node.binaries {
                let sha256 = hash(image, path, "a kind node's binary").await?;
                files.push((*inside, path.clone(), sha256));
            }
            let root = node.base_files.clone();
            let read = root.clone();
            let base_sha256 = tokio::task::spawn_blocking(move || hash_tree(&read, &["."]))
                .await
                .map_err(io::Error::other)
                .and_then(|r| r)
                .map_err(io_err(image, "cannot read kind's base files", &root))?;
            return Ok(Input::KindNode {
                mirror: host_mirror(image)?,
                kubernetes: node.kubernetes.clone(),
                base_files: root,
                base_sha256,
                files,
            });
        }
        Recipe::Istio { part } => {
            let istio = istio_of(sources, image)?;
            let mut files = Vec::new();
            for (inside, path, what) in istio_files(*part, istio) {
                let sha256 = hash(image, &path, what).await?;
                files.push((inside, path, sha256));
            }
            return Ok(Input::Istio {
                mirror: host_mirror(image)?,
                tag: istio.tag.clone(),
                files,
            });
        }
    };
    let sha256 = hash(image, &file, what).await?;
    Ok(Input::File { path: file, sha256 })
}

/// The sha256 of the build input `file`, which must exist.
async fn hash(image: &str, file: &Path, what: &'static str) -> Result<String, ImageError> {
    if !file.is_file() {
        return Err(ImageError::MissingInput {
            image: image.to_string(),
            what,
            path: file.to_owned(),
        });
    }
    let hashed = file.to_owned();
    tokio::task::spawn_blocking(move || archive::sha256_file(&hashed))
        .await
        .map_err(io::Error::other)
        .and_then(|r| r)
        .map_err(io_err(image, "cannot read the build input", file))
}

/// The Istio version an image of `image`'s row is built from.
fn istio_of<'a>(sources: &'a Sources, image: &str) -> Result<&'a IstioSources, ImageError> {
    sources
        .istio
        .as_ref()
        .ok_or_else(|| ImageError::NoIstioVersion {
            image: image.to_string(),
        })
}

/// One sha256 over the files under each of `dirs` of `root` (paths and bytes, in order).
fn hash_tree(root: &Path, dirs: &[&str]) -> io::Result<String> {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, files)?;
            } else {
                files.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for dir in dirs {
        walk(&root.join(dir), &mut files)?;
    }
    files.sort();
    let mut sha = Sha256::new();
    for file in files {
        sha.update(
            file.strip_prefix(root)
                .unwrap_or(&file)
                .as_os_str()
                .as_encoded_bytes(),
        );
        sha.update([0]);
        sha.update(std::fs::read(&file)?);
    }
    Ok(archive::hex(&sha.finalize()))
}

/// The files an Istio image adds to its base: (path in the image, the build, what it is).
fn istio_files(
    part: IstioPart,
    istio: &IstioSources,
) -> Vec<(&'static str, PathBuf, &'static str)> {
    match part {
        IstioPart::Pilot => vec![(
            "usr/local/bin/pilot-discovery",
            istio.pilot_discovery.clone(),
            "pilot-discovery",
        )],
        IstioPart::Proxy => vec![
            (
                "usr/local/bin/pilot-agent",
                istio.pilot_agent.clone(),
                "pilot-agent",
            ),
            ("usr/local/bin/envoy", istio.envoy.clone(), "upstream Envoy"),
            (
                "var/lib/istio/envoy/envoy_bootstrap_tmpl.json",
                istio.bootstrap.clone(),
                "Istio's Envoy bootstrap template",
            ),
        ],
        IstioPart::App => vec![
            (
                "usr/local/bin/server",
                istio.echo_server.clone(),
                "Istio's echo server",
            ),
            (
                "usr/local/bin/client",
                istio.echo_client.clone(),
                "Istio's echo client",
            ),
        ],
    }
}

/// The cache key of `row` built from `input`: what the recipe says, and what it reads.
pub fn key(row: &Row, input: &Input) -> String {
    let description = match input {
        Input::File { sha256, .. } => format!("file sha256 {sha256}"),
        Input::Mirror { mirror } => format!("mirror {mirror}"),
        Input::HostApt { mirror, codename } => format!("apt {mirror} {codename}"),
        Input::Sample { mirror, sha256, .. } => format!("mirror {mirror} samples sha256 {sha256}"),
        Input::SampleSource { sha256, .. } => format!("samples sha256 {sha256}"),
        Input::OnBase { mirror, sha256, .. } => {
            format!("base {KUBE_BASE:?} mirror {mirror} file sha256 {sha256}")
        }
        Input::KindNode {
            mirror,
            kubernetes,
            base_sha256,
            files,
            ..
        } => format!(
            "kind node {kubernetes} mirror {mirror} base files {base_sha256} files {:?}",
            files.iter().map(|(_, _, sha)| sha).collect::<Vec<_>>()
        ),
        Input::Istio { mirror, tag, files } => format!(
            "istio {tag} base {ISTIO_BASE:?} mirror {mirror} files {:?}",
            files.iter().map(|(_, _, sha)| sha).collect::<Vec<_>>()
        ),
    };
    let text = format!(
        "{BUILD_FORMAT}\n{}\n{row:?}\n{description}\n",
        archive::architecture()
    );
    archive::hex(&Sha256::digest(text.as_bytes()))
}
