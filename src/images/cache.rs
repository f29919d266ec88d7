//! The image cache on disk, content-addressed by [`input::key`](super::input::key):
//!
//! ```text
//! <cache>/images/<key>/image.tar    the docker-save archive
//! <cache>/images/<key>/meta.json    references, contents, digest, build seconds, size
//! <cache>/images/root-<key>/root     a containerd root holding a set of images unpacked
//! <cache>/images/root-<key>/images.json  the references it holds (written last: it is complete)
//! <cache>/images/<key>.lock         held (flock) while one process builds the key
//! <cache>/images/tmp-<pid>/<key>/   a build in progress, renamed into place when done
//! ```

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::Flock;
use serde::{Deserialize, Serialize};

use super::archive::Layer;
use super::{ImageError, io_err};

/// Longer than any build of one image can take.
const LOCK_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The `meta.json` of a cached image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub references: Vec<String>,
    pub contents: String,
    pub digest: String,
    pub build_seconds: f64,
    pub size: u64,
}

pub struct Cache {
    root: PathBuf,
}

/// A build's scratch space, removed when dropped: `work` for intermediate files, `out` for
/// what gets renamed into the cache.
pub struct Stage {
    dir: PathBuf,
    pub work: PathBuf,
    pub out: PathBuf,
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        // The per-process directory goes when its last build does.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

impl Cache {
    /// Opens `<cache_dir>/images`, creating it, and removes builds left by dead processes.
    pub fn open(cache_dir: &Path) -> Result<Cache, ImageError> {
        let root = cache_dir.join("images");
        std::fs::create_dir_all(&root).map_err(io_err(
            "the image cache",
            "cannot create",
            &root,
        ))?;
        let cache = Cache { root };
        cache.sweep();
        Ok(cache)
    }

    pub fn archive(&self, key: &str) -> PathBuf {
        self.root.join(key).join("image.tar")
    }

    /// The cached image of `key`, when it is complete.
    pub fn load(&self, key: &str) -> Option<Meta> {
        let text = std::fs::read_to_string(self.root.join(key).join("meta.json")).ok()?;
        let meta: Meta = serde_json::from_str(&text).ok()?;
        let size = std::fs::metadata(self.archive(key)).ok()?.len();
        (size == meta.size).then_some(meta)
    }

    /// Takes the build lock of `key`, waiting (and saying so once) while another process holds
    /// it. Released when the returned value drops.
    pub async fn lock(&self, image: &str, key: &str) -> Result<Flock<File>, ImageError> {
        let path = self.root.join(format!("{key}.lock"));
        crate::filelock::exclusive(&path, &format!("building {image}"), LOCK_TIMEOUT)
            .await
            .map_err(|e| match e {
                crate::filelock::LockError::Io { action, source } => {
                    io_err(image, action, &path)(source)
                }
                crate::filelock::LockError::Timeout => ImageError::LockTimeout {
                    image: image.to_string(),
                    path: path.clone(),
                    timeout: LOCK_TIMEOUT,
                },
            })
    }

    /// A fresh scratch space for building `key` in this process.
    pub fn stage(&self, image: &str, key: &str) -> Result<Stage, ImageError> {
        let dir = self
            .root
            .join(format!("tmp-{}", std::process::id()))
            .join(key);
        let stage = Stage {
            work: dir.join("work"),
            out: dir.join("out"),
            dir,
        };
        if stage.dir.exists() {
            std::fs::remove_dir_all(&stage.dir).map_err(io_err(
                image,
                "cannot clear",
                &stage.dir,
            ))?;
        }
        for dir in [&stage.work, &stage.out] {
            std::fs::create_dir_all(dir).map_err(io_err(image, "cannot create", dir))?;
        }
        Ok(stage)
    }

    /// Writes `meta` next to the archive in `stage.out` and renames it into place as `key`.
    /// The caller holds the lock of `key`.
    pub fn install(
        &self,
        image: &str,
        key: &str,
        stage: &Stage,
        meta: &Meta,
    ) -> Result<(), ImageError> {
        let meta_path = stage.out.join("meta.json");
        let json = serde_json::to_string_pretty(meta).map_err(io::Error::other);
        json.and_then(|json| std::fs::write(&meta_path, json + "\n"))
            .map_err(io_err(image, "cannot write", &meta_path))?;
        self.place(image, key, stage)
    }

    /// Renames `stage.out` into place as `key`, over an incomplete entry (one `load` or `base`
    /// refused; the caller holds the lock of `key`, so nobody else is using it).
    fn place(&self, image: &str, key: &str, stage: &Stage) -> Result<(), ImageError> {
        let target = self.root.join(key);
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(io_err(image, "cannot replace", &target))?;
        }
        std::fs::rename(&stage.out, &target).map_err(io_err(image, "cannot move into", &target))
    }

    /// The containerd root of `key` (see [`super::preload`]), when complete.
    pub fn root(&self, key: &str) -> Option<PathBuf> {
        let dir = self.root.join(key);
        dir.join("images.json").is_file().then(|| dir.join("root"))
    }

    /// Writes the references a root holds into `stage.out` beside it and renames it into place
    /// as `key`; returns the root. The caller holds the lock of `key`.
    pub fn install_root(
        &self,
        what: &str,
        key: &str,
        stage: &Stage,
        references: &serde_json::Value,
    ) -> Result<PathBuf, ImageError> {
        let listing = stage.out.join("images.json");
        let json = serde_json::to_string_pretty(references).map_err(io::Error::other);
        json.and_then(|json| std::fs::write(&listing, json + "\n"))
            .map_err(io_err(what, "cannot write", &listing))?;
        self.place(what, key, stage)?;
        Ok(self.root.join(key).join("root"))
    }

    /// A layer several images share, when complete: the layer and what it holds.
    pub fn base(&self, key: &str) -> Option<(Layer, String)> {
        let dir = self.root.join(key);
        let details = std::fs::read_to_string(dir.join("base.txt")).ok()?;
        let created_by = std::fs::read_to_string(dir.join("created_by.txt")).ok()?;
        let path = dir.join("layer.tar");
        path.is_file()
            .then_some((Layer { path, created_by }, details))
    }

    /// Moves the shared layer `layer` (in `stage.work`) and its `details` into place as `key`.
    /// The caller holds the lock of `key`.
    pub fn install_base(
        &self,
        image: &str,
        key: &str,
        stage: &Stage,
        layer: &Layer,
        details: &str,
    ) -> Result<(), ImageError> {
        let moved = stage.out.join("layer.tar");
        std::fs::rename(&layer.path, &moved).map_err(io_err(image, "cannot move", &layer.path))?;
        for (name, text) in [("base.txt", details), ("created_by.txt", &layer.created_by)] {
            let file = stage.out.join(name);
            std::fs::write(&file, text).map_err(io_err(image, "cannot write", &file))?;
        }
        self.place(image, key, stage)
    }

    /// Removes `tmp-<pid>` directories whose process is gone.
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix("tmp-"));
            let Some(pid) = pid.filter(|p| p.parse::<u32>().is_ok()) else {
                continue;
            };
            if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}
