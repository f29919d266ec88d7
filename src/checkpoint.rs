//! Checkpoints: a cell as it stood after a passing step, so that a cell that would replay the
//! same steps starts there instead — mistake cells, mutants, and the author's `run --step N`.
//!
//! A checkpoint holds the files the cell's commands wrote (the overlay's upper layer and the
//! cell's `/tmp`), its cluster's state (a copy of etcd's data directory made while etcd is
//! stopped) and what the cell carries from step to step (its working directory, the Background's
//! preparations, the fixtures it copied in). Restoring makes a new cell — its own namespaces,
//! ports and certificates — whose files and cluster objects are the checkpoint's.
//!
//! Checkpoints are content-addressed: the key hashes the matrix label, labcheck itself, the
//! toolchain (each binary's path, size and modification time) and the lab's text up to the end
//! of the step. The fixtures' contents are hashed when a checkpoint is written and checked again
//! before it is used. They live under `<state dir>/checkpoints/<key>/`, at most [`Store::cap`]
//! bytes in all; the least recently used go first.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::cell::Cell;
use crate::cluster::local::EtcdState;
use crate::model::{Lab, LabStep, StepKind};

/// The default of [`Store::cap`]: `LABCHECK_CHECKPOINT_CAP` overrides it (`2GiB`, `500MiB`).
pub const DEFAULT_CAP: u64 = 4 << 30;

/// A checkpoint's name: a digest of everything its contents depend on.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(String);

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("checkpoint after step {step} of {lab}: {what}: {source}")]
    Io {
        lab: String,
        step: usize,
        what: String,
        #[source]
        source: io::Error,
    },
}

/// The key of the checkpoint after each step of `lab` (by the step's line): the identity and
/// the lab's text from its first line up to the next step's Scenario (mistakes between them
/// included; an edit there only costs a replay).
pub fn keys(text: &str, lab: &Lab, identity: &str) -> BTreeMap<usize, Key> {
    let lines: Vec<&str> = text.lines().collect();
    let steps: Vec<&LabStep> = lab
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Step)
        .collect();
    let mut keys = BTreeMap::new();
    // One pass over the text: each key hashes the prefix up to its step's end, so the hash of
    // the text so far is carried from step to step (linear in the lab's length).
    let mut hash = Sha256::new();
    hash.update(b"labcheck checkpoint 1\n");
    hash.update(identity.as_bytes());
    let mut hashed = 0;
    for (i, step) in steps.iter().enumerate() {
        let end = steps
            .get(i + 1)
            .map(|next| next.line.saturating_sub(1))
            .unwrap_or(lines.len())
            .min(lines.len())
            .max(hashed);
        for line in &lines[hashed..end] {
            hash.update(line.as_bytes());
            hash.update(b"\n");
        }
        hashed = end;
        keys.insert(step.line, Key(hex(&hash.clone().finalize())));
    }
    keys
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a checkpoint records besides files.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// The lab's name and the step the checkpoint follows.
    pub lab: String,
    pub label: String,
    pub step: usize,
    pub line: usize,
    /// Where learner commands start.
    pub workdir: PathBuf,
    /// The preparations the Background made (lab directories, fixtures, the working directory).
    pub prepared: Vec<String>,
    /// Each fixture copied in, as found in the repository, and the digest of its contents then.
    pub fixtures: Vec<(PathBuf, String)>,
    /// Whether the checkpoint holds a cluster's state.
    pub cluster: bool,
}

/// A checkpoint on disk.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub key: Key,
    pub dir: PathBuf,
    pub state: State,
}

impl Checkpoint {
    /// Copies the checkpoint's files into a new cell's directory `cell_dir` (before its sandbox
    /// starts): the overlay's upper layer and `/tmp`.
    pub async fn restore_files(&self, cell_dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(cell_dir.join("fs"))?;
        crate::sandbox::tree::copy(&self.dir.join("upper"), &cell_dir.join("fs/upper")).await?;
        crate::sandbox::tree::copy(&self.dir.join("tmp"), &cell_dir.join("fs/tmp")).await
    }

    /// Copies the checkpoint's etcd data into a new cell's cluster directory (before its
    /// cluster starts).
    pub async fn restore_cluster(&self, cluster_dir: &Path) -> io::Result<()> {
        if !self.state.cluster {
            return Ok(());
        }
        std::fs::create_dir_all(cluster_dir)?;
        crate::sandbox::tree::copy(&self.dir.join("etcd"), &cluster_dir.join("etcd")).await
    }
}

/// The checkpoints under a state directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    /// The most bytes (on disk) all checkpoints take.
    pub cap: u64,
}

impl Store {
    pub fn new(state_dir: &Path) -> Store {
        let cap = std::env::var("LABCHECK_CHECKPOINT_CAP")
            .ok()
            .and_then(|v| crate::sandbox::cgroup::parse_size(&v))
            .unwrap_or(DEFAULT_CAP);
        Store {
            root: crate::state::Area::Checkpoints.dir(state_dir),
            cap,
        }
    }

    /// The checkpoint `key`, if there is one and the fixtures it copied in are unchanged; using
    /// it makes it the most recently used.
    pub fn open(&self, key: &Key) -> Option<Checkpoint> {
        let dir = self.root.join(&key.0);
        let text = std::fs::read_to_string(dir.join("state.json")).ok()?;
        let state: State = serde_json::from_str(&text).ok()?;
        let fresh = state
            .fixtures
            .iter()
            .all(|(path, digest)| digest_tree(path).is_ok_and(|d| &d == digest));
        if !fresh {
            return None;
        }
        let _ = std::fs::File::options()
            .write(true)
            .open(dir.join("state.json"))
            .and_then(|f| f.set_modified(SystemTime::now()));
        Some(Checkpoint {
            key: key.clone(),
            dir,
            state,
        })
    }

    /// Writes the checkpoint `key` of `cell` (and of its cluster, whose state `cluster` copies)
    /// after `step`, replacing any older one.
    pub async fn write(
        &self,
        key: &Key,
        cell: &Cell,
        cluster: Option<&EtcdState>,
        step: &LabStep,
    ) -> Result<Checkpoint, CheckpointError> {
        let io = |what: &str| {
            let what = what.to_owned();
            let lab = cell.lab.name.clone();
            let step = step.index;
            move |source| CheckpointError::Io {
                lab,
                step,
                what,
                source,
            }
        };
        let partial = self
            .root
            .join(format!(".partial-{}-{}", key.0, std::process::id()));
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial).map_err(io("cannot create the checkpoint"))?;
        let written = async {
            crate::sandbox::tree::copy(&cell.sandbox.upper_dir(), &partial.join("upper"))
                .await
                .map_err(io("cannot copy the cell's files"))?;
            crate::sandbox::tree::copy(&cell.sandbox.tmp_dir(), &partial.join("tmp"))
                .await
                .map_err(io("cannot copy the cell's /tmp"))?;
            for part in ["upper", "tmp"] {
                crate::sandbox::tree::drop_set_id_bits(&partial.join(part))
                    .map_err(io("cannot clear set-id bits in the checkpoint"))?;
            }
            if let Some(c) = cluster {
                c.copy(&partial.join("etcd"))
                    .await
                    .map_err(io("cannot copy the cluster's etcd data"))?;
            }
            let fixtures = cell
                .fixtures()
                .into_iter()
                .map(|p| digest_tree(&p).map(|d| (p, d)))
                .collect::<io::Result<Vec<_>>>()
                .map_err(io("cannot read a fixture"))?;
            let state = State {
                lab: cell.lab.name.clone(),
                label: cell.id.label.clone(),
                step: step.index,
                line: step.line,
                workdir: cell.sandbox.workdir(),
                prepared: cell.prepared(),
                fixtures,
                cluster: cluster.is_some(),
            };
            let json = serde_json::to_vec_pretty(&state).unwrap_or_default();
            std::fs::write(partial.join("state.json"), json)
                .map_err(io("cannot write state.json"))?;
            let dir = self.root.join(&key.0);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::rename(&partial, &dir).map_err(io("cannot move the checkpoint in place"))?;
            Ok(Checkpoint {
                key: key.clone(),
                dir,
                state,
            })
        }
        .await;
        match &written {
            Ok(c) => self.prune(&c.dir),
            Err(_) => {
                let _ = std::fs::remove_dir_all(&partial);
            }
        }
        written
    }

    /// The checkpoints on disk: each one's directory, last use and size in bytes on disk.
    pub fn list(&self) -> Vec<(PathBuf, SystemTime, u64)> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| {
                let used = e
                    .path()
                    .join("state.json")
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (e.path(), used, disk_usage(&e.path()))
            })
            .collect()
    }

    /// Removes the least recently used checkpoints until all take at most [`Store::cap`]
    /// bytes; `keep` (the one just written) stays.
    pub fn prune(&self, keep: &Path) {
        let mut all = self.list();
        let mut total: u64 = all.iter().map(|(_, _, size)| size).sum();
        all.sort_by_key(|(_, used, _)| *used);
        for (dir, _, size) in all {
            if total <= self.cap {
                break;
            }
            if dir != keep && std::fs::remove_dir_all(&dir).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }

    /// Removes every checkpoint; returns how many there were.
    pub fn clear(&self) -> usize {
        let count = self.list().len();
        let _ = std::fs::remove_dir_all(&self.root);
        count
    }

    /// Removes checkpoints that a run which is gone left half written.
    pub fn reap_partial(&self) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(".partial-") && crate::sandbox::left_by_a_gone_run(&name) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Bytes a tree takes on disk (sparse files count what they hold).
fn disk_usage(root: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if let Ok(meta) = e.path().symlink_metadata() {
                total += meta.blocks() * 512;
                if meta.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    total
}

/// A digest of a fixture's contents: every entry's path, kind, mode and bytes, in path order.
fn digest_tree(root: &Path) -> io::Result<String> {
    use crate::sandbox::tree::Entry;
    let mut lines: Vec<Vec<u8>> = crate::sandbox::tree::read(root)?
        .into_iter()
        .map(|e| match e {
            Entry::Dir(path) => format!("d {}", path.display()).into_bytes(),
            Entry::Symlink { path, target } => {
                format!("l {} {}", path.display(), target.display()).into_bytes()
            }
            Entry::File { path, bytes, mode } => {
                let mut line = format!("f {} {mode:o} ", path.display()).into_bytes();
                line.extend(Sha256::digest(&bytes));
                line
            }
        })
        .collect();
    lines.sort();
    let mut hash = Sha256::new();
    for line in lines {
        hash.update(&line);
        hash.update(b"\n");
    }
    Ok(hex(&hash.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key is the hash of the text up to its step's end: the one pass gives what hashing
    /// each prefix anew gives (checkpoints written before stay valid).
    #[test]
    fn keys_hash_each_steps_prefix() {
        let text = "Feature: f\n\n  Scenario: one\n    When the learner runs:\n      \"\"\"\n      true\n      \"\"\"\n    Then the last command should succeed\n\n  Scenario: two\n    When the learner runs:\n      \"\"\"\n      true\n      \"\"\"\n    Then the last command should succeed\n";
        let path = std::path::Path::new("f.feature");
        let lab = crate::lint::lint_text(path, path, text).expect("the lab lints");
        let keys = keys(text, &lab, "id");
        let lines: Vec<&str> = text.lines().collect();
        let prefix = |end: usize| {
            let mut hash = Sha256::new();
            hash.update(b"labcheck checkpoint 1\n");
            hash.update(b"id");
            for line in &lines[..end] {
                hash.update(line.as_bytes());
                hash.update(b"\n");
            }
            Key(hex(&hash.finalize()))
        };
        assert_eq!(keys.get(&3), Some(&prefix(9)));
        assert_eq!(keys.get(&10), Some(&prefix(lines.len())));
    }
}
