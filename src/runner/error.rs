//! Why a cell could not be run, as data: its environment could not be had (no backend, no
//! istioctl, a sandbox or cluster that would not start, a checkpoint that would not restore), a
//! checkpoint could not be written, or a check could not be evaluated. Each is a harness error
//! (exit 2), never a verdict on the learner.

use std::path::PathBuf;
use std::sync::Arc;

use crate::checkpoint::CheckpointError;
use crate::cluster::ClusterError;
use crate::model::{CellId, StepFault};
use crate::sandbox::SandboxError;

/// Why a cell could not be run.
#[derive(Debug, thiserror::Error)]
pub enum CellError {
    #[error("this lab needs a cluster, and no cluster backend is configured")]
    NoBackend,
    #[error("no istioctl for Istio {0}")]
    NoIstioctl(String),
    #[error("no real node's tools (kubelet, containerd, runc, CNI plugins, kube-proxy) resolved")]
    NoNodeTools,
    #[error("no Istio images (pilot, proxyv2, the echo app) built for Istio {0}")]
    NoIstioImages(String),
    #[error("cannot start from the checkpoint of step {step} ({what}): {source}")]
    Restore {
        step: usize,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("cluster ({backend}): {source}")]
    Cluster {
        backend: &'static str,
        #[source]
        source: ClusterError,
    },
    /// A checkpoint the cell wrote, or the one it waited for, could not be written.
    #[error("{cell}: {source}")]
    Checkpoint {
        cell: CellId,
        #[source]
        source: Arc<CheckpointError>,
    },
    /// A check of a step could not be evaluated, or labcheck could not act in the cell: the
    /// step's line and fault (its first line said).
    #[error("{}:{line}: {}", file.display(), fault.headline())]
    Step {
        file: PathBuf,
        line: usize,
        fault: StepFault,
    },
    /// cucumber could not read the lab.
    #[error("{0}")]
    Unreadable(String),
    /// The run is closing (a signal came) before the cell could start.
    #[error("the run is closing")]
    Closing,
    /// A signal came while the cell ran.
    #[error("interrupted")]
    Interrupted,
}

impl CellError {
    /// Whether the cell's cluster started but its node's Pods were not all Ready (again, for a
    /// cluster from a checkpoint) in time.
    pub fn is_restore_not_ready(&self) -> bool {
        matches!(
            self,
            CellError::Cluster {
                source: ClusterError::NotReady { .. },
                ..
            }
        )
    }
}

/// A harness error of one cell of a run.
#[derive(Debug, thiserror::Error)]
#[error("{cell}: {error}")]
pub struct HarnessError {
    pub cell: CellId,
    #[source]
    pub error: Arc<CellError>,
}
