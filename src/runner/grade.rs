//! `labcheck grade`: a lab's checks, step by step, on an environment someone else built — a kept
//! cell, or a learner's cluster and files. No learner command runs, and every step is graded on
//! its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::scenarios::run_scenarios;
use super::{Needs, RunOptions, Sink, Summary, plan};
use crate::cell::Cell;
use crate::model::{Event, HarnessFault};
use crate::sandbox::{Sandbox, SandboxOptions};

/// Where `labcheck grade` looks.
pub enum GradeTarget {
    /// A cell kept by `run --keep` or `run --step N`.
    Kept(crate::kept::KeptCell),
    /// A learner's environment: their cluster (a kubeconfig and context; default: `KUBECONFIG`
    /// or `~/.kube/config`) and their files (under `root`, mapped to the lab's paths; default:
    /// the host's own paths, only read).
    Learner {
        kubeconfig: Option<PathBuf>,
        context: Option<String>,
        root: Option<PathBuf>,
    },
}

/// Why a lab could not be graded.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    #[error(transparent)]
    Plan(#[from] super::PlanError),
    #[error("the lab has no steps to grade")]
    NoSteps,
    #[error(transparent)]
    Kept(#[from] crate::kept::KeptError),
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error("no kubeconfig: pass --kubeconfig")]
    NoKubeconfig,
}

/// Grades a lab's steps (1..=`opts.step`) on an environment someone else built: only the checks
/// run, every step independently.
pub async fn grade(
    opts: &RunOptions,
    target: GradeTarget,
    sink: Sink,
) -> Result<Summary, GradeError> {
    // The learner's environment has one istioctl, whatever its version: one cell.
    let mut opts = opts.clone();
    opts.istio = vec!["-".to_owned()];
    let opts = &opts;
    let plan = plan(opts)?
        .into_iter()
        .find(|c| c.id.mistake.is_none())
        .ok_or(GradeError::NoSteps)?;
    let started = Instant::now();
    let dir = crate::state::Area::Grade.dir(&opts.state_dir).join(format!(
        "{}-{}",
        plan.id.slug(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let (sandbox, client, _forward) = environment(&target, opts, &plan, &dir).await?;
    let mut cell = Cell::new(plan.id.clone(), plan.lab.clone(), sandbox);
    cell.grading = true;
    cell.kube = client;
    sink.report(&Event::RunStarted {
        cells: vec![(plan.id.clone(), (*plan.lab).clone(), plan.lines.clone())],
    });
    sink.report(&Event::CellStarted {
        cell: plan.id.clone(),
    });
    sink.report(&Event::EnvironmentReady {
        cell: plan.id.clone(),
        tools: Default::default(),
        setup: started.elapsed(),
        waited: std::time::Duration::ZERO,
        resumed: None,
    });
    let cell = Arc::new(cell);
    let (passed, error) = run_scenarios(&plan, cell.clone(), sink.clone(), None).await;
    let error = error.map(Arc::new);
    if !matches!(target, GradeTarget::Kept(_)) {
        cell.sandbox.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
    sink.report(&Event::CellFinished {
        cell: plan.id.clone(),
        passed,
        kept: None,
        error: error.clone().map(|e| e as HarnessFault),
        peak_memory: None,
    });
    sink.report(&Event::RunFinished {
        interrupted: false,
        duration: started.elapsed(),
    });
    let mut summary = Summary {
        cells: 1,
        ..Summary::default()
    };
    if !passed {
        summary.failed_cells.push(plan.id.clone());
    }
    summary
        .harness_errors
        .extend(error.map(|error| super::HarnessError {
            cell: plan.id.clone(),
            error,
        }));
    Ok(summary)
}

/// The environment to grade: a kept cell's sandbox and cluster, or a learner's files (in a
/// sandbox of their own) and cluster.
async fn environment(
    target: &GradeTarget,
    opts: &RunOptions,
    plan: &super::CellPlan,
    dir: &Path,
) -> Result<
    (
        Sandbox,
        Option<kube::Client>,
        Option<crate::cluster::forward::Forward>,
    ),
    GradeError,
> {
    Ok(match &target {
        GradeTarget::Kept(kept) => {
            let sandbox = kept.sandbox()?;
            let (client, forward) = if kept.has_cluster {
                let (c, f) =
                    crate::cluster::attach_local(&sandbox, &kept.dir.join("cluster")).await?;
                (Some(c), Some(f))
            } else {
                (None, None)
            };
            (sandbox, client, forward)
        }
        GradeTarget::Learner {
            kubeconfig,
            context,
            root,
        } => {
            let options = SandboxOptions {
                view: root.clone(),
                hide: super::hidden_dirs(opts),
                limits: plan.lab.limits,
                ..SandboxOptions::default()
            };
            let sandbox = Sandbox::create(dir, options).await?;
            let client = match plan.needs {
                Needs::Sandbox => None,
                Needs::Cluster | Needs::Istio | Needs::Mesh | Needs::Node => {
                    Some(learner_client(kubeconfig.as_deref(), context.as_deref()).await?)
                }
            };
            (sandbox, client, None)
        }
    })
}

async fn learner_client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, GradeError> {
    let path = match kubeconfig {
        Some(p) => p.to_owned(),
        None => std::env::var_os("KUBECONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kube/config")))
            .ok_or(GradeError::NoKubeconfig)?,
    };
    Ok(crate::cluster::client_for(&path, context).await?)
}
