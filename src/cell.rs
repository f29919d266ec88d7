//! A cell's environment: everything one lab run on one point of the matrix owns — its sandbox
//! (files, namespaces, env vars) and, as the lab needs it, its cluster and toolset — plus the
//! transcripts its learner commands leave for the report. Step definitions act on a [`Cell`];
//! the runner creates and tears it down.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::model::{CellId, Lab, Transcript};
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
    transcripts: Mutex<Vec<Transcript>>,
    prepared: Mutex<HashSet<String>>,
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
            transcripts: Mutex::new(Vec::new()),
            prepared: Mutex::new(HashSet::new()),
        }
    }

    /// Keeps a transcript for the report of the current step.
    pub fn record(&self, t: Transcript) {
        self.transcripts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(t);
    }

    /// The transcripts recorded since the last call.
    pub fn take_transcripts(&self) -> Vec<Transcript> {
        std::mem::take(&mut *self.transcripts.lock().unwrap_or_else(|e| e.into_inner()))
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
        if rel.is_absolute() {
            return rel.exists().then(|| rel.to_owned());
        }
        let feature =
            std::fs::canonicalize(&self.lab.path).unwrap_or_else(|_| self.lab.path.clone());
        feature
            .ancestors()
            .skip(1)
            .map(|a| a.join(rel))
            .find(|p| p.exists())
    }
}
