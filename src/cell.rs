//! A cell's environment: everything one lab run on one point of the matrix owns — its sandbox
//! (files, namespaces, env vars) and, as the lab needs it, its cluster and toolset — plus what its
//! checkpoints record (what was prepared, the fixtures, the slowest step). Step definitions act
//! on a [`Cell`]; the runner creates and tears it down.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::model::{Artifact, CellId, Lab};
use crate::sandbox::Sandbox;

/// The default timeout of one learner command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Cell {
    pub id: CellId,
    pub lab: Arc<Lab>,
    pub sandbox: Sandbox,
    /// Whether scenarios must show a failing check before their commands run.
    pub discrimination: bool,
    /// Grading a learner's environment: learner commands are not run, and checks on a
    /// command's result are not evaluated.
    pub grading: bool,
    /// The harness's client for the cell's cluster, when the lab has one.
    pub kube: Option<kube::Client>,
    /// A timeout for every learner command, instead of the scenarios' own (mutants).
    pub timeout: Option<Duration>,
    /// The cell's Istio versions as a release unpacks them, older first (two in an upgrade
    /// cell).
    pub istio_releases: Vec<IstioRelease>,
    prepared: Mutex<HashSet<String>>,
    /// The files of the lab's directories as last seen (size, modification time), so each step
    /// reports only what it changed.
    seen: Mutex<HashMap<PathBuf, (u64, i64, i64)>>,
    /// The fixtures the cell's steps copied in, as found in the repository (checkpoints record
    /// their digests).
    fixtures: Mutex<Vec<PathBuf>>,
    /// The learner-command time of the slowest step so far (the steps a checkpoint covers
    /// included).
    slowest: Mutex<Duration>,
}

/// One of a cell's Istio versions as a release unpacks it.
#[derive(Clone, Debug)]
pub struct IstioRelease {
    /// Where the host keeps its `samples/` and `manifests/`: beside its istioctl, when that
    /// was built from its module (`None` for an istioctl downloaded alone).
    pub dir: Option<PathBuf>,
    /// Its istioctl's name among the learner's tools: `istioctl`, or in an upgrade cell
    /// `istioctl-<version>`.
    pub istioctl: String,
}

impl std::fmt::Debug for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cell")
            .field("id", &self.id)
            .field("cluster", &self.kube.is_some())
            .finish()
    }
}

impl Cell {
    pub fn new(id: CellId, lab: Arc<Lab>, sandbox: Sandbox) -> Cell {
        Cell {
            id,
            lab,
            sandbox,
            discrimination: true,
            grading: false,
            kube: None,
            timeout: None,
            istio_releases: Vec::new(),
            prepared: Mutex::new(HashSet::new()),
            seen: Mutex::new(HashMap::new()),
            fixtures: Mutex::new(Vec::new()),
            slowest: Mutex::new(Duration::ZERO),
        }
    }

    /// The preparations made so far (lab directories, fixtures, the working directory), for a
    /// checkpoint.
    pub fn prepared(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    /// The fixtures copied in so far, as found in the repository.
    pub fn fixtures(&self) -> Vec<PathBuf> {
        self.fixtures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Makes a cell started from a checkpoint carry on as the checkpointed one would: its
    /// preparations are done, its fixtures known, and the files already in the lab's directories
    /// are not reported again as the next step's, and its slowest step is the checkpoint's.
    pub fn resume(&self, prepared: &[String], fixtures: &[PathBuf], slowest: Duration) {
        *self.slowest.lock().unwrap_or_else(|e| e.into_inner()) = slowest;
        self.prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(prepared.iter().cloned());
        self.fixtures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(fixtures.iter().cloned());
        self.mark_seen();
    }

    /// Counts a step's learner-command time towards the slowest step's (checkpoints record it).
    pub fn spent(&self, step: Duration) {
        let mut slowest = self.slowest.lock().unwrap_or_else(|e| e.into_inner());
        *slowest = (*slowest).max(step);
    }

    /// The learner-command time of the slowest step so far.
    pub fn slowest_step(&self) -> Duration {
        *self.slowest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The text files in the lab's directories that are new or changed since the last call,
    /// each cut at [`ARTIFACT_MAX`] bytes, at most [`ARTIFACTS_MAX`] files. Binary files and
    /// what cannot be read are left out: this feeds the report, never a verdict.
    pub fn take_artifacts(&self) -> Vec<Artifact> {
        let changed = self.mark_seen();
        if changed.is_empty() {
            return Vec::new();
        }
        // One visit to the cell for all of them, reading no more of each than is kept.
        let read = move || {
            Ok(changed
                .into_iter()
                .filter_map(|path| {
                    use std::io::Read;
                    let mut bytes = Vec::new();
                    std::fs::File::open(&path)
                        .ok()?
                        .take(ARTIFACT_MAX as u64)
                        .read_to_end(&mut bytes)
                        .ok()?;
                    let text = String::from_utf8(bytes).ok()?;
                    Some(Artifact { path, text })
                })
                .collect())
        };
        self.sandbox.inside(read).unwrap_or_default()
    }

    /// Records the files of the lab's directories as seen now; returns those that are new or
    /// changed since the last call (at most [`ARTIFACTS_MAX`]).
    fn mark_seen(&self) -> Vec<PathBuf> {
        let dirs: Vec<PathBuf> = self
            .prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(|k| k.strip_prefix("dir:").map(PathBuf::from))
            .collect();
        if dirs.is_empty() {
            return Vec::new();
        }
        let Ok(files) = self.sandbox.inside(move || Ok(list_files(&dirs))) else {
            return Vec::new();
        };
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        files
            .into_iter()
            .filter(|(path, stamp)| seen.insert(path.clone(), *stamp) != Some(*stamp))
            .map(|(path, _)| path)
            .take(ARTIFACTS_MAX)
            .collect()
    }

    /// Runs a preparation once per cell (Background steps repeat before every scenario).
    pub fn first_time(&self, key: &str) -> bool {
        self.prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_owned())
    }

    /// Resolves a fixture path named in a lab: relative to the nearest ancestor of the feature
    /// file that holds it.
    pub fn fixture_source(&self, rel: &Path) -> Option<PathBuf> {
        let found = fixture_source(self.lab.origin(), rel)?;
        self.fixtures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(found.clone());
        Some(found)
    }
}

/// The most of one file a step's artifacts keep.
pub const ARTIFACT_MAX: usize = 256 << 10;
/// The most files one step's artifacts hold.
pub const ARTIFACTS_MAX: usize = 200;

/// Regular files under `dirs` (links not followed) with their size and modification time.
fn list_files(dirs: &[PathBuf]) -> Vec<(PathBuf, (u64, i64, i64))> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() && out.len() < 10_000 {
                out.push((e.path(), (meta.len(), meta.mtime(), meta.mtime_nsec())));
            }
        }
    }
    out.sort();
    out
}

/// Resolves a fixture path named in the lab at `feature`: relative to the nearest ancestor of
/// the feature file that holds it (the repository, wherever it was cloned).
pub fn fixture_source(feature: &Path, rel: &Path) -> Option<PathBuf> {
    if rel.is_absolute() {
        return rel.exists().then(|| rel.to_owned());
    }
    let feature = std::fs::canonicalize(feature).unwrap_or_else(|_| feature.to_owned());
    feature
        .ancestors()
        .skip(1)
        .map(|a| a.join(rel))
        .find(|p| p.exists())
}
