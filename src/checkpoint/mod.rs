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
//! toolchain (each binary's path, size and modification time), the lab's path and its text up to
//! the end of the step, with the contents of each fixture a step up to there copies. A
//! [`manifest`] of every file is written with a checkpoint and checked before it is used: one
//! that changed since is discarded. They live under `<state dir>/checkpoints/<key>/`, written
//! aside and moved in place in one rename (a second writer of the same key keeps the first's),
//! at most [`Store::cap`] bytes in all once no run uses them ([`pins`]); the least recently used
//! go first.

pub mod manifest;
mod pins;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::cell::Cell;
use crate::cluster::local::EtcdState;
use crate::cluster::pool::Saved;
use crate::model::{Lab, LabStep, StepKind};
use crate::steps::lab::CompiledLab;

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

/// The key of the checkpoint after each step of `lab` (by the step's line): the identity, the
/// lab's path and its text from its first line up to the next step's Scenario (mistakes between
/// them included; an edit there only costs a replay), each fixture step's fixture contents
/// hashed with its line.
pub fn keys(text: &str, lab: &Lab, compiled: &CompiledLab, identity: &str) -> BTreeMap<usize, Key> {
    let lines: Vec<&str> = text.lines().collect();
    let fixtures = fixture_digests(lab, compiled);
    let steps: Vec<&LabStep> = lab
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Step)
        .collect();
    let mut keys = BTreeMap::new();
    // One pass over the text: each key hashes the prefix up to its step's end, so the hash of
    // the text so far is carried from step to step (linear in the lab's length).
    let mut hash = Sha256::new();
    hash.update(b"labcheck checkpoint 2\n");
    hash.update(identity.as_bytes());
    let origin = std::fs::canonicalize(lab.origin()).unwrap_or_else(|_| lab.origin().to_owned());
    hash.update(format!("lab={}\n", origin.display()).as_bytes());
    let mut hashed = 0;
    for (i, step) in steps.iter().enumerate() {
        let end = steps
            .get(i + 1)
            .map(|next| next.line.saturating_sub(1))
            .unwrap_or(lines.len())
            .min(lines.len())
            .max(hashed);
        for (n, line) in lines.iter().enumerate().take(end).skip(hashed) {
            hash.update(line.as_bytes());
            hash.update(b"\n");
            // Gherkin lines count from 1.
            for digest in fixtures.get(&(n + 1)).into_iter().flatten() {
                hash.update(format!("fixture={digest}\n").as_bytes());
            }
        }
        hashed = end;
        keys.insert(step.line, Key(hex(&hash.clone().finalize())));
    }
    keys
}

/// The digest of the contents of each fixture the lab's steps copy, by the step's line (a
/// fixture that cannot be read hashes as its error: lint and the run report it).
fn fixture_digests(lab: &Lab, compiled: &CompiledLab) -> BTreeMap<usize, Vec<String>> {
    let mut out: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (line, source) in compiled.fixtures(lab.origin()) {
        let digest = match source {
            Some(path) => digest_tree(&path).unwrap_or_else(|e| format!("unreadable: {e}")),
            None => "missing".to_owned(),
        };
        out.entry(line).or_default().push(digest);
    }
    out
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
    /// The learner-command time of the slowest step up to this one (mutants' timeout).
    #[serde(default)]
    pub slowest: std::time::Duration,
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

    /// Copies the checkpoint's etcd data and PKI into a new cell's cluster directory (before its
    /// cluster starts).
    pub async fn restore_cluster(&self, cluster_dir: &Path) -> io::Result<()> {
        self.saved().restore(cluster_dir).await
    }

    /// What a cluster starts from to hold what this checkpoint's cluster held.
    pub fn saved(&self) -> Saved {
        Saved {
            key: self.key.to_string(),
            etcd: self.state.cluster.then(|| self.dir.join("etcd")),
            pki: Some(self.dir.join("pki")).filter(|p| self.state.cluster && p.is_dir()),
        }
    }
}

/// The checkpoints under a state directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    /// The most bytes (on disk) all checkpoints take.
    pub cap: u64,
}

/// `LABCHECK_CHECKPOINT_CAP` does not give a size.
#[derive(Debug, thiserror::Error)]
#[error("LABCHECK_CHECKPOINT_CAP={0:?} is not a size (write 4GiB, 500MiB or a number of bytes)")]
pub struct CapError(String);

/// The cap `LABCHECK_CHECKPOINT_CAP` sets, or [`DEFAULT_CAP`].
pub fn cap_from_env() -> Result<u64, CapError> {
    match std::env::var("LABCHECK_CHECKPOINT_CAP") {
        Err(_) => Ok(DEFAULT_CAP),
        Ok(v) => crate::sandbox::cgroup::parse_size(&v).ok_or(CapError(v)),
    }
}

impl Store {
    pub fn new(state_dir: &Path) -> Store {
        let cap = cap_from_env().unwrap_or(DEFAULT_CAP);
        Store {
            root: crate::state::Area::Checkpoints.dir(state_dir),
            cap,
        }
    }

    /// The checkpoint `key`, if there is one that matches its manifest and the fixtures it
    /// copied in are unchanged; using it makes it the most recently used, and pins it for this
    /// run (no run's pruning removes it until this run ends). One that does not match its
    /// manifest is removed, and the caller is told why.
    pub fn open(&self, key: &Key) -> Result<Option<Checkpoint>, Discarded> {
        let dir = self.root.join(&key.0);
        if std::fs::symlink_metadata(&dir).is_err() {
            return Ok(None);
        }
        // Pinned before it is checked: a pruning run that moved it away puts it back when it
        // sees the pin, or this run finds it gone and replays.
        if pins::pin(&self.root, key).is_err() {
            return Ok(None);
        }
        let state = manifest::verify(&dir)
            .map_err(|m| m.to_string())
            .and_then(|()| {
                let text =
                    std::fs::read_to_string(dir.join("state.json")).map_err(|e| e.to_string())?;
                serde_json::from_str::<State>(&text).map_err(|e| format!("state.json: {e}"))
            });
        let state = match state {
            Ok(state) => state,
            Err(_) if std::fs::symlink_metadata(&dir).is_err() => {
                pins::unpin(&self.root, key);
                return Ok(None);
            }
            Err(reason) => {
                pins::unpin(&self.root, key);
                self.retire(&dir);
                return Err(Discarded {
                    key: key.clone(),
                    reason,
                });
            }
        };
        let fresh = state
            .fixtures
            .iter()
            .all(|(path, digest)| digest_tree(path).is_ok_and(|d| &d == digest));
        if !fresh {
            pins::unpin(&self.root, key);
            return Ok(None);
        }
        let _ = std::fs::File::options()
            .write(true)
            .open(dir.join("state.json"))
            .and_then(|f| f.set_modified(SystemTime::now()));
        Ok(Some(Checkpoint {
            key: key.clone(),
            dir,
            state,
        }))
    }

    /// Writes the checkpoint `key` of `cell` (and of its cluster, whose state `cluster` copies)
    /// after `step`: aside, then moved in place in one rename. When another run wrote the same
    /// key first, its checkpoint (the same state) stays and this one goes; an older one that no
    /// longer matches its manifest is replaced. The checkpoint stays pinned for this run.
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
                crate::sandbox::tree::drop_privileges(&partial.join(part))
                    .map_err(io("cannot clear set-id bits and file capabilities"))?;
            }
            if let Some(c) = cluster {
                c.copy(&partial.join("etcd"))
                    .await
                    .map_err(io("cannot copy the cluster's etcd data"))?;
                c.copy_pki(&partial.join("pki"))
                    .await
                    .map_err(io("cannot copy the cluster's PKI"))?;
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
                slowest: cell.slowest_step(),
            };
            let json = serde_json::to_vec_pretty(&state).unwrap_or_default();
            std::fs::write(partial.join("state.json"), json)
                .map_err(io("cannot write state.json"))?;
            manifest::write(&partial).map_err(io("cannot write the manifest"))?;
            pins::pin(&self.root, key).map_err(io("cannot pin the checkpoint"))?;
            let dir = self.root.join(&key.0);
            self.publish(&partial, &dir)
                .map_err(io("cannot move the checkpoint in place"))?;
            Ok(Checkpoint {
                key: key.clone(),
                dir,
                state,
            })
        }
        .await;
        let _ = std::fs::remove_dir_all(&partial);
        if written.is_ok() {
            self.prune();
        }
        written
    }

    /// Moves the checkpoint written at `partial` to `dir`, unless another run has put a valid
    /// one there first (the same key: the same state), which then stays.
    fn publish(&self, partial: &Path, dir: &Path) -> io::Result<()> {
        for _ in 0..3 {
            match std::fs::rename(partial, dir) {
                Ok(()) => return Ok(()),
                Err(e) if std::fs::symlink_metadata(dir).is_err() => {
                    if e.kind() != io::ErrorKind::NotFound {
                        return Err(e);
                    }
                }
                Err(_) => {
                    if manifest::verify(dir).is_ok() {
                        return Ok(());
                    }
                    self.retire(dir);
                }
            }
        }
        Err(io::Error::other(format!(
            "{} keeps changing under this run",
            dir.display()
        )))
    }

    /// Removes a checkpoint directory: first moved aside in one rename, so that no run finds it
    /// half removed.
    fn retire(&self, dir: &Path) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let trash = self.root.join(format!(
            ".trash-{}-{n}-{}",
            name.unwrap_or_default(),
            std::process::id()
        ));
        if std::fs::rename(dir, &trash).is_ok() {
            remove_any(&trash);
        }
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
                    .symlink_metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (e.path(), used, disk_usage(&e.path()))
            })
            .collect()
    }

    /// Removes the least recently used checkpoints no live run has pinned until all take at
    /// most [`Store::cap`] bytes. Each goes aside in one rename first, and comes back if a run
    /// pinned it meanwhile.
    pub fn prune(&self) {
        let mut all = self.list();
        let mut total: u64 = all.iter().map(|(_, _, size)| size).sum();
        all.sort_by_key(|(_, used, _)| *used);
        for (dir, _, size) in all {
            if total <= self.cap {
                break;
            }
            let Some(key) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            if pins::pinned(&self.root, &key) {
                continue;
            }
            let trash = self
                .root
                .join(format!(".trash-{key}-prune-{}", std::process::id()));
            if std::fs::rename(&dir, &trash).is_err() {
                continue;
            }
            if pins::pinned(&self.root, &key) {
                let _ = std::fs::rename(&trash, &dir);
                continue;
            }
            remove_any(&trash);
            total = total.saturating_sub(size);
        }
    }

    /// Ends this run's use of its checkpoints (their pins go), then prunes: once no run uses
    /// them, the checkpoints take at most [`Store::cap`] bytes.
    pub fn release(&self) {
        pins::release(&self.root);
        // What this run left aside (a checkpoint it was writing when it was interrupted).
        let mine = format!("-{}", std::process::id());
        for e in std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let aside = name.starts_with(".partial-") || name.starts_with(".trash-");
            if aside && name.ends_with(&mine) {
                remove_any(&e.path());
            }
        }
        self.prune();
    }

    /// Removes every checkpoint; returns how many there were.
    pub fn clear(&self) -> usize {
        let count = self.list().len();
        let _ = std::fs::remove_dir_all(&self.root);
        count
    }

    /// Removes what runs that are gone left: half-written checkpoints, ones moved aside to be
    /// removed, and their pins.
    pub fn reap_partial(&self) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let aside = name.starts_with(".partial-") || name.starts_with(".trash-");
            if aside && crate::sandbox::left_by_a_gone_run(&name) {
                remove_any(&e.path());
            }
        }
        pins::release_gone(&self.root);
    }
}

/// A checkpoint that was not trusted: it no longer matched its manifest, and was removed.
#[derive(Clone, Debug)]
pub struct Discarded {
    pub key: Key,
    pub reason: String,
}

/// Removes a directory, or a file or link where one was.
fn remove_any(path: &Path) {
    if std::fs::remove_dir_all(path).is_err() {
        let _ = std::fs::remove_file(path);
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
    /// each prefix anew gives.
    #[test]
    fn keys_hash_each_steps_prefix() {
        let text = "Feature: f\n\n  Scenario: one\n    When the learner runs:\n      \"\"\"\n      true\n      \"\"\"\n    Then the last command should succeed\n\n  Scenario: two\n    When the learner runs:\n      \"\"\"\n      true\n      \"\"\"\n    Then the last command should succeed\n";
        let path = std::path::Path::new("f.feature");
        let linted = crate::lint::lint_text(path, path, text).expect("the lab lints");
        let keys = keys(text, &linted.lab, &linted.compiled, "id");
        let lines: Vec<&str> = text.lines().collect();
        let prefix = |end: usize| {
            let mut hash = Sha256::new();
            hash.update(b"labcheck checkpoint 2\n");
            hash.update(b"id");
            hash.update(b"lab=f.feature\n");
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
