//! The on-disk cache of resolved binaries, by tool and version:
//!
//! ```text
//! <cache>/tools/<tool>/<version>/<tool>       the binary
//! <cache>/tools/<tool>/<version>/meta.json    where it came from (Metadata)
//! <cache>/build/<tool>-<version>/             the generated Go wrapper module
//! <cache>/locks/<tool>-<version>.lock         held (flock) while one process installs it
//! <cache>/tmp/                                partial downloads and builds
//! ```
//!
//! A binary enters the cache by `rename` from `tmp/` (same filesystem), and its metadata after
//! it, so a reader sees a complete binary with matching metadata or a miss, never half a file.

use std::fs::File;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::Flock;
use serde::{Deserialize, Serialize};

use super::error::io_err;
use super::{Source, Tool, ToolError};

/// What the cache records beside each binary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub tool: Tool,
    pub version: String,
    /// [`Source::Build`] or [`Source::Download`].
    pub source: Source,
    /// `replace` lines generated at build time (Kubernetes' staging modules).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generated_replaces: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ldflags: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub go_version: Option<String>,
    /// The downloaded archive's SHA-256, as verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_sha256: Option<String>,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    /// How long the build or download took.
    pub seconds: f64,
    /// The binary's size; a different size on disk means someone replaced or truncated it.
    pub size: u64,
}

/// The cache directory and its layout.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    pub fn new(root: PathBuf) -> Self {
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn version_dir(&self, tool: Tool, version: &str) -> PathBuf {
        self.root.join("tools").join(tool.name()).join(version)
    }

    pub fn binary(&self, tool: Tool, version: &str) -> PathBuf {
        self.version_dir(tool, version).join(tool.name())
    }

    /// A file installed beside the binary ([`Tool::companions`]).
    pub fn companion(&self, tool: Tool, version: &str, name: &str) -> PathBuf {
        self.version_dir(tool, version).join(name)
    }

    fn meta_path(&self, tool: Tool, version: &str) -> PathBuf {
        self.version_dir(tool, version).join("meta.json")
    }

    pub fn wrapper_dir(&self, tool: Tool, version: &str) -> PathBuf {
        self.root.join("build").join(format!("{tool}-{version}"))
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// A temporary path for `tool` at `version` in `tmp/`, ending in `suffix`. Only the holder
    /// of the tool's install lock writes these (`~` appears in no version, so one version's
    /// prefix never matches another's).
    pub fn tmp_file(&self, tool: Tool, version: &str, suffix: &str) -> PathBuf {
        self.tmp_dir()
            .join(format!(".{tool}-{version}~{}{suffix}", std::process::id()))
    }

    /// Removes what an interrupted install of `tool` at `version` left in `tmp/`. Call only
    /// while holding its lock.
    pub fn clean_tmp(&self, tool: Tool, version: &str) {
        let prefix = format!(".{tool}-{version}~");
        let Ok(dir) = std::fs::read_dir(self.tmp_dir()) else {
            return;
        };
        for entry in dir.filter_map(|e| e.ok()) {
            if entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                let path = entry.path();
                let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
            }
        }
    }

    /// Removes what this process left in `tmp/` (an install that was interrupted).
    pub fn clean_own_tmp(&self) {
        let mark = format!("~{}", std::process::id());
        let Ok(dir) = std::fs::read_dir(self.tmp_dir()) else {
            return;
        };
        for entry in dir.filter_map(|e| e.ok()) {
            if entry.file_name().to_string_lossy().contains(&mark) {
                let path = entry.path();
                let _ = std::fs::remove_file(&path).or_else(|_| std::fs::remove_dir_all(&path));
            }
        }
    }

    /// The metadata of a complete cached binary, or `None`.
    pub fn read(&self, tool: Tool, version: &str) -> Option<Metadata> {
        let text = std::fs::read_to_string(self.meta_path(tool, version)).ok()?;
        let meta: Metadata = serde_json::from_str(&text).ok()?;
        let file = std::fs::metadata(self.binary(tool, version)).ok()?;
        let complete = meta.tool == tool
            && meta.version == version
            && file.is_file()
            && file.len() == meta.size
            && file.permissions().mode() & 0o111 != 0
            && (!matches!(meta.source, Source::Build { .. })
                || tool
                    .companions()
                    .iter()
                    .all(|name| self.companion(tool, version, name).exists()));
        complete.then_some(meta)
    }

    /// Every complete cached binary, by tool then version.
    pub fn entries(&self) -> Vec<(Metadata, PathBuf)> {
        let mut found = Vec::new();
        for tool in Tool::ALL {
            let Ok(dir) = std::fs::read_dir(self.root.join("tools").join(tool.name())) else {
                continue;
            };
            let mut versions: Vec<String> = dir
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect();
            versions.sort();
            for version in versions {
                if let Some(meta) = self.read(tool, &version) {
                    found.push((meta, self.binary(tool, &version)));
                }
            }
        }
        found
    }

    /// Moves `from` (a file under `tmp/`) into place as the cached binary, after the files that
    /// go beside it (`companions`: a file under `tmp/` and its name), then writes `meta`.
    pub fn install(
        &self,
        from: &Path,
        companions: &[(PathBuf, &str)],
        mut meta: Metadata,
    ) -> Result<(PathBuf, Metadata), ToolError> {
        let dir = self.version_dir(meta.tool, &meta.version);
        std::fs::create_dir_all(&dir).map_err(io_err("cannot create", &dir))?;
        for (file, name) in companions {
            let to = dir.join(name);
            std::fs::rename(file, &to).map_err(io_err("cannot install", &to))?;
        }
        let file = std::fs::metadata(from).map_err(io_err("cannot read the new binary", from))?;
        std::fs::set_permissions(from, std::fs::Permissions::from_mode(0o755))
            .map_err(io_err("cannot make executable", from))?;
        meta.size = file.len();
        meta.installed_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());

        let binary = self.binary(meta.tool, &meta.version);
        std::fs::rename(from, &binary).map_err(io_err("cannot install the binary as", &binary))?;
        let meta_path = self.meta_path(meta.tool, &meta.version);
        let tmp = self.tmp_file(meta.tool, &meta.version, ".json");
        let json = serde_json::to_string_pretty(&meta).map_err(|e| ToolError::Io {
            action: "cannot encode metadata for",
            path: meta_path.clone(),
            source: io::Error::other(e),
        })?;
        std::fs::write(&tmp, json + "\n").map_err(io_err("cannot write", &tmp))?;
        std::fs::rename(&tmp, &meta_path).map_err(io_err("cannot write", &meta_path))?;
        Ok((binary, meta))
    }

    /// Takes the install lock of `tool` at `version`, waiting (and saying so once on stderr)
    /// while another process holds it. The lock is released when the returned value drops.
    pub async fn lock(
        &self,
        tool: Tool,
        version: &str,
        timeout: Duration,
    ) -> Result<Flock<File>, ToolError> {
        let dir = self.root.join("locks");
        std::fs::create_dir_all(&dir).map_err(|source| ToolError::Io {
            action: "cannot create",
            path: dir.clone(),
            source,
        })?;
        std::fs::create_dir_all(self.tmp_dir()).map_err(|source| ToolError::Io {
            action: "cannot create",
            path: self.tmp_dir(),
            source,
        })?;
        let path = dir.join(format!("{tool}-{version}.lock"));
        crate::filelock::exclusive(&path, &format!("installing {tool} {version}"), timeout)
            .await
            .map_err(|e| match e {
                crate::filelock::LockError::Io { action, source } => ToolError::Io {
                    action,
                    path: path.clone(),
                    source,
                },
                crate::filelock::LockError::Timeout => ToolError::LockTimeout {
                    tool,
                    version: version.to_string(),
                    path: path.clone(),
                    timeout,
                },
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(version: &str) -> Metadata {
        Metadata {
            tool: Tool::Etcd,
            version: version.into(),
            source: Source::Download {
                url: "http://127.0.0.1/x".into(),
            },
            generated_replaces: Vec::new(),
            ldflags: None,
            go_version: None,
            archive_sha256: None,
            installed_at: 0,
            seconds: 1.0,
            size: 0,
        }
    }

    #[test]
    fn install_then_read_round_trips() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        assert!(cache.read(Tool::Etcd, "v1.0.0").is_none());
        std::fs::create_dir_all(cache.tmp_dir()).expect("tmp");
        let tmp = cache.tmp_file(Tool::Etcd, "v1.0.0", "");
        std::fs::write(&tmp, b"#!/bin/sh\n").expect("write");
        let (path, installed) = cache.install(&tmp, &[], meta("v1.0.0")).expect("install");
        assert_eq!(path, dir.path().join("tools/etcd/v1.0.0/etcd"));
        assert_eq!(installed.size, 10);
        assert_eq!(cache.read(Tool::Etcd, "v1.0.0"), Some(installed));
        assert_eq!(cache.entries().len(), 1);

        // A truncated binary is not a cache hit.
        std::fs::write(&path, b"#!").expect("truncate");
        assert!(cache.read(Tool::Etcd, "v1.0.0").is_none());
    }

    #[tokio::test]
    async fn a_second_locker_waits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        let first = cache
            .lock(Tool::Etcd, "v1.0.0", Duration::from_secs(5))
            .await
            .expect("first lock");
        let second = cache
            .lock(Tool::Etcd, "v1.0.0", Duration::from_millis(300))
            .await;
        assert!(
            matches!(second, Err(ToolError::LockTimeout { .. })),
            "{second:?}"
        );
        drop(first);
        cache
            .lock(Tool::Etcd, "v1.0.0", Duration::from_secs(5))
            .await
            .expect("lock after release");
    }
}
