//! Preparing a cell before its turn: its files from a checkpoint, its sandbox, its tools and its
//! cluster — started for the cell, or lent by the run's pool of clusters (mutants) and made
//! equal to the checkpoint first.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{CellError, CellPlan, Environment, Needs, Shared, environment, hidden_dirs};
use crate::cell::{Cell, IstioRelease};
use crate::checkpoint::Checkpoint;
use crate::cluster::pool::{CellCluster, Lease};
use crate::cluster::{Backend, CellEnv, Cluster};
use crate::model::ToolsInfo;
use crate::sandbox::{Sandbox, SandboxOptions};

/// A cell ready to run its steps.
pub(super) struct Prepared {
    pub cell: Arc<Cell>,
    pub cluster: Option<CellCluster>,
    /// How long the sandbox, the checkpoint's files and the cluster took.
    pub setup: Duration,
    /// How long copying the checkpoint's files and cluster state in took (or making a lent
    /// cluster equal to the checkpoint).
    pub restore: Duration,
}

/// Builds a cell: its sandbox, its tools, its cluster — from `checkpoint` when there is one.
pub(super) async fn prepare(
    shared: &Shared<'_>,
    plan: &CellPlan,
    checkpoint: Option<&Checkpoint>,
    dir: &Path,
    keep: bool,
) -> Result<Prepared, CellError> {
    let (env, opts) = (shared.env, shared.opts);
    let started = Instant::now();
    let mut restore = Duration::ZERO;
    let backend = match plan.needs {
        Needs::Sandbox => None,
        Needs::Cluster | Needs::Istio | Needs::Mesh | Needs::Node => {
            Some(env.backend.as_ref().ok_or(CellError::NoBackend)?)
        }
    };
    let tools = env.tools_for(plan.needs, &plan.id.label);
    if plan.needs.istio() && !tools.iter().any(|t| t.name == "istioctl") {
        return Err(CellError::NoIstioctl(plan.id.label.clone()));
    }
    let node = node_tools(env, plan)?;
    let restoring = |what: &'static str, source: std::io::Error| CellError::Restore {
        step: checkpoint.map_or(0, |c| c.state.step),
        what,
        source,
    };
    if let Some(c) = checkpoint {
        let t = Instant::now();
        c.restore_files(dir)
            .await
            .map_err(|e| restoring("its files", e))?;
        restore += t.elapsed();
    }
    // A mutant's plain cluster is lent by the pool, equal to the checkpoint before the cell
    // joins its network.
    let lease = match (&shared.pool, backend, plan.needs) {
        (Some(pool), Some(Backend::Local(_)), Needs::Cluster | Needs::Istio) => {
            let t = Instant::now();
            let lease = pool
                .lend(checkpoint.map(Checkpoint::saved).as_ref())
                .await
                .map_err(|source| CellError::Cluster {
                    backend: "local",
                    source,
                })?;
            restore += t.elapsed();
            Some(lease)
        }
        _ => None,
    };
    let options = SandboxOptions {
        keep_alive: keep,
        isolate_network: backend.is_none_or(|b| b.isolates_network()),
        view: None,
        hide: hidden_dirs(opts),
        tools: environment::learner_tools(&tools),
        limits: plan.lab.limits,
        network: match &lease {
            Some(l) => Some(l.network().map_err(|e| restoring("its network", e))?),
            None => None,
        },
    };
    let sandbox = Sandbox::create(dir, options).await?;
    let mut cell = Cell::new(plan.id.clone(), plan.lab.clone(), sandbox);
    cell.discrimination = opts.purpose.discrimination();
    cell.timeout = opts.timeout;
    cell.istio_releases = istio_releases(&tools, &plan.id.label);
    if let Some(c) = checkpoint {
        let fixtures: Vec<PathBuf> = c.state.fixtures.iter().map(|(p, _)| p.clone()).collect();
        cell.sandbox.set_workdir(&c.state.workdir);
        cell.resume(&c.state.prepared, &fixtures, c.state.slowest);
    }
    let cluster = match (lease, backend) {
        (Some(lease), _) => Some(lend(&cell, lease).map_err(|e| restoring("its kubeconfig", e))?),
        (None, None) => None,
        (None, Some(b)) => {
            let cenv = CellEnv {
                sandbox: &cell.sandbox,
                dir: dir.join("cluster"),
                kubeconfig: cell.sandbox.share_dir().join("kubeconfig"),
                name: format!("{}-{}", plan.id.slug(), std::process::id()),
                node,
                mesh: plan.needs == Needs::Mesh,
            };
            let started = own_cluster(b, &cenv, checkpoint).await;
            if started.is_err() {
                // A cell that is to be kept but never started is not kept: its holder goes.
                cell.sandbox.shutdown().await;
            }
            let (cluster, restored) = started?;
            restore += restored;
            Some(cluster)
        }
    };
    if let Some(c) = &cluster {
        cell.kube = Some(c.client.clone());
    }
    Ok(Prepared {
        cell: Arc::new(cell),
        cluster,
        setup: started.elapsed(),
        restore,
    })
}

/// The real node's tools of a `@node` or `@mesh` cell (Istio's images for a mesh).
fn node_tools(
    env: &Environment,
    plan: &CellPlan,
) -> Result<Option<crate::cluster::node::NodeTools>, CellError> {
    if !plan.needs.node() {
        return Ok(None);
    }
    let tools = env.node_tools(plan.needs, &plan.id.label);
    tools.map(Some).ok_or_else(|| match plan.needs {
        Needs::Mesh => CellError::NoIstioImages(plan.id.label.clone()),
        _ => CellError::NoNodeTools,
    })
}

/// The cell's Istio versions as releases unpack them: each beside its istioctl, when that was
/// built from its module with `samples/` and `manifests/`. An upgrade cell's are its two
/// versions' (`istioctl-<version>`).
fn istio_releases(tools: &[&super::environment::Tool], label: &str) -> Vec<IstioRelease> {
    crate::model::label_versions(label)
        .into_iter()
        .map(|v| environment::istioctl_name(label, v))
        .map(|istioctl| IstioRelease {
            dir: tools
                .iter()
                .find(|t| t.name == istioctl)
                .and_then(|t| t.path.parent())
                .filter(|dir| {
                    crate::toolchain::ISTIO_RELEASE
                        .iter()
                        .all(|d| dir.join(d).is_dir())
                })
                .map(Path::to_owned),
            istioctl,
        })
        .collect()
}

/// Starts the cell's own cluster, its state first restored from `checkpoint`; how long the
/// restore took.
async fn own_cluster(
    backend: &Backend,
    cenv: &CellEnv<'_>,
    checkpoint: Option<&Checkpoint>,
) -> Result<(CellCluster, Duration), CellError> {
    let _ = std::fs::create_dir_all(&cenv.dir);
    let mut restore = Duration::ZERO;
    if let Some(c) = checkpoint {
        let t = Instant::now();
        c.restore_cluster(&cenv.dir)
            .await
            .map_err(|source| CellError::Restore {
                step: c.state.step,
                what: "its cluster",
                source,
            })?;
        restore = t.elapsed();
    }
    match backend.start(cenv).await {
        Ok(cluster) => Ok((CellCluster::Own(Box::new(cluster)), restore)),
        Err(source) => Err(CellError::Cluster {
            backend: backend.name(),
            source,
        }),
    }
}

/// Gives the cell the lent cluster's kubeconfig, as its own cluster would have written it.
fn lend(cell: &Cell, lease: Lease) -> std::io::Result<CellCluster> {
    std::fs::copy(
        lease.kubeconfig(),
        cell.sandbox.share_dir().join("kubeconfig"),
    )?;
    Ok(CellCluster::Lent(lease))
}

/// The report's view of a cell's toolchain, its cluster included.
pub(super) fn cell_tools(
    env: &Environment,
    plan: &CellPlan,
    cluster: Option<&Cluster>,
) -> ToolsInfo {
    let mut info = env.info(plan.needs, &plan.id.label);
    if let Some(c) = cluster {
        info.tools
            .push(("cluster".into(), c.version.clone(), c.backend.into()));
    }
    info
}
