//! The runner: [`plan`] turns paths and options into cells (validated before anything starts),
//! [`resolve`] finds the tools and backend they need, and this module runs them — each cell's
//! environment prepared ahead of its turn, its lab through cucumber-rs ([`scenarios`]), cells in
//! parallel up to `--jobs`, stopped by [`signal`]s; [`leftovers`] keeps what a cell leaves. A
//! failed step stops its lab; what did not run is reported as such. Reporting happens only
//! through [`Event`]s handed to a [`Sink`].

mod adapter;
pub mod environment;
mod error;
mod grade;
mod leftovers;
mod plan;
mod prepare;
pub mod resolve;
pub mod resume;
mod scenarios;
pub mod shard;
mod signal;

pub use crate::state::default_state_dir;
pub use environment::{Environment, Needs, Tool};
pub use error::{CellError, HarnessError};
pub use grade::{GradeError, GradeTarget, grade};
pub use plan::{CellPlan, PlanError, Purpose, RunOptions, plan};
pub use resolve::{
    ClusterChoice, EnvironmentError, Setup, environment_for, matrix, tool_setup_for,
};
pub use shard::Shard;
pub use signal::{interruptible, listen, shutdown_signal};

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cell::Cell;
use crate::checkpoint::{Checkpoint, Store};
use crate::cluster::ClusterError;
use crate::cluster::pool::{CellCluster, Pool};
use crate::model::{CellId, Event, HarnessFault, Resumed};
use leftovers::{keep_leftovers, keep_start_logs, record_kept};
use prepare::{Prepared, cell_tools, prepare};
use scenarios::{Checkpointer, not_run, run_scenarios};

/// Where events go: console, JUnit, summaries.
pub type Sink = Rc<dyn crate::model::Reporter>;

/// How a run ended.
#[derive(Debug, Default)]
pub struct Summary {
    pub cells: usize,
    pub failed_cells: Vec<CellId>,
    pub harness_errors: Vec<HarnessError>,
    /// The signal that interrupted the run (SIGINT, SIGTERM, SIGHUP), if one did.
    pub interrupted: Option<i32>,
    /// How the pool of clusters served the cells, when cells borrowed clusters.
    pub clusters: Option<crate::cluster::pool::Stats>,
}

impl Summary {
    /// 0 every lab passed, 1 a lab failed, 2 the harness failed; an interrupted run is 128 + the
    /// signal (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
    pub fn exit_code(&self) -> i32 {
        if let Some(signal) = self.interrupted {
            128 + signal
        } else if !self.harness_errors.is_empty() {
            2
        } else if !self.failed_cells.is_empty() {
            1
        } else {
            0
        }
    }
}

/// What the cells of one run share.
pub(super) struct Shared<'a> {
    opts: &'a RunOptions,
    env: &'a Environment,
    sink: Sink,
    store: Store,
    slots: Rc<resume::Slots>,
    /// Cells whose steps run now: `--jobs`.
    running: tokio::sync::Semaphore,
    /// Cells that exist (prepared ahead or running): `--jobs` plus those whose clusters start
    /// before their turn.
    alive: tokio::sync::Semaphore,
    /// Clusters lent to mutants' cells: one per job at once, and up to one per cell that may exist
    /// at once when cells wait for them.
    pool: Option<Pool>,
}

/// How many cells beyond `--jobs` start their sandbox and cluster before their turn: as many as
/// `--jobs`, fewer when memory is short (a cell with a cluster takes up to 1 GiB).
fn prepared_ahead(jobs: usize) -> usize {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| (kib >> 20) as usize);
    jobs.min(available.saturating_sub(jobs))
}

/// Runs the planned cells, reporting through `sink`; stops early on Ctrl-C or SIGTERM.
pub async fn run(
    opts: &RunOptions,
    env: &Environment,
    mut cells: Vec<CellPlan>,
    sink: Sink,
) -> Summary {
    let started = Instant::now();
    let store = Store::new(&opts.state_dir);
    store.reap_partial();
    let slots = Rc::new(resume::Slots::default());
    for d in resume::arrange(opts, env, &store, &mut cells, &slots) {
        sink.report(&Event::CheckpointDiscarded {
            lab: d.lab,
            line: d.line,
            reason: d.reason,
        });
    }
    sink.report(&Event::RunStarted {
        cells: cells
            .iter()
            .map(|c| (c.id.clone(), (*c.lab).clone(), c.lines.clone()))
            .collect(),
    });
    let mut summary = Summary {
        cells: cells.len(),
        ..Summary::default()
    };
    let jobs = opts.jobs.max(1);
    let alive = jobs + prepared_ahead(jobs);
    let pool = pool(opts, env, jobs, alive);
    let shared = Shared {
        opts,
        env,
        sink: sink.clone(),
        store,
        slots,
        running: tokio::sync::Semaphore::new(jobs),
        alive: tokio::sync::Semaphore::new(alive),
        pool,
    };
    let all = futures::future::join_all(cells.iter().cloned().map(|c| run_cell(&shared, c)));
    reap_stale(&opts.state_dir);
    crate::sandbox::cgroup::reap_stale();
    let interrupted = tokio::select! {
        results = all => {
            summary.count(results);
            None
        }
        signal = shutdown_signal() => Some(signal),
    };
    summary.interrupted = interrupted;
    if let Some(pool) = &shared.pool {
        // Every cell is done (or dropped): every lease is back.
        pool.shutdown().await;
        summary.clusters = Some(pool.stats());
    }
    // No cell of this run restores a checkpoint any more: the cap holds again.
    shared.store.release();
    if interrupted.is_some()
        && let Some(second) = clean_after_signal(opts, &cells, &sink).await
    {
        summary.interrupted = Some(second);
    }
    sink.report(&Event::RunFinished {
        interrupted: interrupted.is_some(),
        duration: started.elapsed(),
    });
    summary
}

impl Summary {
    /// Counts the cells' ends: passed, failed, or stopped by a harness fault.
    fn count(&mut self, results: Vec<(CellId, Result<bool, Arc<CellError>>)>) {
        for (id, result) in results {
            match result {
                Ok(true) => {}
                Ok(false) => self.failed_cells.push(id),
                Err(e) => {
                    self.harness_errors.push(HarnessError {
                        cell: id.clone(),
                        error: e,
                    });
                    self.failed_cells.push(id);
                }
            }
        }
    }
}

/// The run's pool of clusters, which lends mutants' cells a plain cluster (local backend).
fn pool(opts: &RunOptions, env: &Environment, jobs: usize, alive: usize) -> Option<Pool> {
    match &env.backend {
        Some(crate::cluster::Backend::Local(local)) if opts.pool => Some(Pool::new(
            local.clone(),
            &crate::state::Area::Cells.dir(&opts.state_dir),
            hidden_dirs(opts),
            jobs,
            alive,
        )),
        _ => None,
    }
}

/// After a signal: dropping the cells' futures killed their process groups, holders and
/// clusters (a cell is kept only once it has run its steps); their directories go too, but for
/// cells kept before the signal came, and each cell is reported interrupted. A second signal
/// ends that at once: its code (the next run removes what is left).
async fn clean_after_signal(opts: &RunOptions, cells: &[CellPlan], sink: &Sink) -> Option<i32> {
    let cleanup = async {
        for c in cells {
            let dir = cell_dir(opts, &c.id);
            if !crate::kept::KeptCell::load(&dir).is_some_and(|k| k.alive()) {
                remove_cell_dir(&dir).await;
            }
        }
    };
    if let Err(signal) = interruptible(cleanup).await {
        return Some(signal);
    }
    for c in cells {
        sink.report(&Event::CellFinished {
            cell: c.id.clone(),
            passed: false,
            kept: None,
            error: Some(Arc::new(CellError::Interrupted)),
            peak_memory: None,
        });
    }
    None
}

/// Where a cell of this run lives.
fn cell_dir(opts: &RunOptions, id: &CellId) -> PathBuf {
    crate::state::Area::Cells.dir(&opts.state_dir).join(format!(
        "{}-{}",
        id.slug(),
        std::process::id()
    ))
}

/// The host directories no cell may see: the state directory (every cell's files), every other
/// state directory labcheck has used (another run's kubeconfigs and etcd data), and the report
/// directory.
pub(crate) fn hidden_dirs(opts: &RunOptions) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = [&opts.state_dir, &opts.report_dir]
        .into_iter()
        .filter_map(|d| std::path::absolute(d).ok())
        .chain(crate::state::hidden_everywhere())
        .collect();
    dirs.sort();
    // A directory under one hidden already is hidden with it (and its mount point is gone).
    let mut hidden: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !hidden.iter().any(|h| dir.starts_with(h)) {
            hidden.push(dir);
        }
    }
    hidden
}

/// Removes a cell's directory once its processes are gone (they may still be exiting).
async fn remove_cell_dir(dir: &Path) {
    for _ in 0..20 {
        if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Removes what runs that were killed outright (SIGKILL) left under the state directory: cell
/// directories that are not kept (no `cell.json`) of a labcheck process that is gone.
pub fn reap_stale(state_dir: &Path) {
    for area in crate::state::Area::PER_RUN {
        let Ok(entries) = std::fs::read_dir(area.dir(state_dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.join("cell.json").exists() {
                continue;
            }
            if crate::sandbox::left_by_a_gone_run(&e.file_name().to_string_lossy()) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
}

/// Where a failed first start from a checkpoint leaves its logs in the cell's report directory
/// (a second start's, failed, go to `logs/`).
const FIRST_START_LOGS: &str = "logs-first-start";

/// Runs one cell. `Ok(passed)`, or the harness fault that stopped it.
async fn run_cell(shared: &Shared<'_>, plan: CellPlan) -> (CellId, Result<bool, Arc<CellError>>) {
    let (opts, sink) = (shared.opts, &shared.sink);
    let id = plan.id.clone();
    let stopped = |error: Option<Arc<CellError>>, reason: &str| {
        not_run(&plan, sink, &plan.lines, reason);
        sink.report(&Event::CellFinished {
            cell: id.clone(),
            passed: false,
            kept: None,
            error: error.clone().map(|e| e as HarnessFault),
            peak_memory: None,
        });
        shared.slots.close(plan.checkpoints.values());
        (id.clone(), error.map_or(Ok(false), Err))
    };
    let checkpoint = match start_from(shared, &plan).await {
        Ok(checkpoint) => checkpoint,
        Err((error, reason)) => {
            sink.report(&Event::CellStarted { cell: id.clone() });
            return stopped(error, &reason);
        }
    };
    let Ok(_alive) = shared.alive.acquire().await else {
        let closing = Arc::new(CellError::Closing);
        return stopped(Some(closing.clone()), &closing.to_string());
    };
    sink.report(&Event::CellStarted { cell: id.clone() });
    let keep = opts.keep || opts.purpose.keeps_cells();
    let dir = cell_dir(opts, &id);
    let _ = std::fs::remove_dir_all(&dir);
    let (prepared, _turn, waited, again) =
        prepare_in_turn(shared, &plan, checkpoint.as_ref(), &dir, keep).await;
    let Prepared {
        cell,
        cluster,
        setup,
        restore,
    } = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            keep_start_logs(opts, &id, &dir, "logs");
            let _ = std::fs::remove_dir_all(&dir);
            let reason = error.to_string();
            return stopped(Some(Arc::new(error)), &reason);
        }
    };
    sink.report(&Event::EnvironmentReady {
        cell: id.clone(),
        tools: cell_tools(shared.env, &plan, cluster.as_deref()),
        setup,
        waited,
        resumed: checkpoint.as_ref().map(|c| Resumed {
            after_step: c.state.step,
            restore,
            slowest: c.state.slowest,
            again,
        }),
    });
    if keep {
        record_kept(&cell, cluster.as_deref());
    }
    let checkpointer = checkpointer(shared, &plan, cluster.as_deref());
    let (passed, mut error) =
        run_scenarios(&plan, cell.clone(), sink.clone(), checkpointer.clone()).await;
    // A cell that failed on a node under pressure failed for the machine's sake.
    if let (false, None, Some(c)) = (passed, &error, cluster.as_deref())
        && let Some(p) = c.pressure().await
    {
        error = Some(CellError::Cluster {
            backend: c.backend,
            source: ClusterError::NodePressure(p),
        });
    }
    shared.slots.close(plan.checkpoints.values());
    let mut error = error.map(Arc::new);
    if let Some(e) = checkpointer.and_then(|c| c.errors.borrow_mut().drain(..).next()) {
        error.get_or_insert(e);
    }
    let ran = Ran {
        cell,
        cluster,
        passed,
        error,
    };
    finish(shared, &plan, ran, keep, &dir).await
}

/// What writes a main cell's checkpoints as its steps pass, when it has any to write.
fn checkpointer(
    shared: &Shared<'_>,
    plan: &CellPlan,
    cluster: Option<&crate::cluster::Cluster>,
) -> Option<Rc<Checkpointer>> {
    (!plan.checkpoints.is_empty()).then(|| {
        Rc::new(Checkpointer {
            store: shared.store.clone(),
            keys: plan.checkpoints.clone(),
            etcd: cluster.and_then(|c| c.state()),
            slots: shared.slots.clone(),
            errors: Default::default(),
        })
    })
}

/// Prepares a cell (sandbox, cluster) while it waits for its turn: the cell, the turn's
/// permit, how long the cell was not ready yet once its turn came, and why it was prepared a
/// second time. A cluster from a checkpoint whose Pods did not come back is started from it
/// once more, the first start's logs kept for the report.
async fn prepare_in_turn<'a>(
    shared: &'a Shared<'_>,
    plan: &CellPlan,
    checkpoint: Option<&Checkpoint>,
    dir: &Path,
    keep: bool,
) -> (
    Result<Prepared, CellError>,
    Result<tokio::sync::SemaphorePermit<'a>, tokio::sync::AcquireError>,
    Duration,
    Option<String>,
) {
    let (prepared, turn) = futures::join!(
        async {
            let prepared = prepare(shared, plan, checkpoint, dir, keep).await;
            (prepared, Instant::now())
        },
        async {
            let permit = shared.running.acquire().await;
            (permit, Instant::now())
        }
    );
    let ((mut prepared, mut ready_at), (turn, turn_at)) = (prepared, turn);
    let mut again = None;
    if let (Err(error), Some(c)) = (&prepared, checkpoint)
        && error.is_restore_not_ready()
    {
        keep_start_logs(shared.opts, &plan.id, dir, FIRST_START_LOGS);
        let _ = std::fs::remove_dir_all(dir);
        again = Some(error.to_string());
        prepared = prepare(shared, plan, Some(c), dir, keep).await;
        ready_at = Instant::now();
    }
    (
        prepared,
        turn,
        ready_at.saturating_duration_since(turn_at),
        again,
    )
}

/// A cell whose steps have run.
struct Ran {
    cell: Arc<Cell>,
    cluster: Option<CellCluster>,
    passed: bool,
    error: Option<Arc<CellError>>,
}

/// The checkpoint a cell starts from: its own from disk, or the one the lab's main cell of this
/// run writes, waited for holding no slot. `Err` holds why the cell cannot run: a harness error,
/// and the reason its steps did not run.
async fn start_from(
    shared: &Shared<'_>,
    plan: &CellPlan,
) -> Result<Option<Checkpoint>, (Option<Arc<CellError>>, String)> {
    let Some(r) = &plan.resume else {
        return Ok(None);
    };
    if let Some(c) = &r.ready {
        return Ok(Some(c.clone()));
    }
    match shared.slots.wait(&r.key).await {
        resume::Slot::Ready(c) => Ok(Some(c)),
        resume::Slot::Failed(error) => {
            let reason = error.to_string();
            Err((Some(error), reason))
        }
        resume::Slot::Pending | resume::Slot::NotWritten => Err((
            None,
            format!(
                "step {} did not pass in the lab's own cell, and this one starts after it",
                r.after.index
            ),
        )),
    }
}

/// After a cell's steps: what it captured, what it keeps or leaves for the report, and its end.
async fn finish(
    shared: &Shared<'_>,
    plan: &CellPlan,
    ran: Ran,
    keep: bool,
    dir: &Path,
) -> (CellId, Result<bool, Arc<CellError>>) {
    let (opts, sink, id) = (shared.opts, &shared.sink, plan.id.clone());
    let Ran {
        cell,
        mut cluster,
        passed,
        error,
    } = ran;
    if !opts.capture.is_empty() {
        let files = opts
            .capture
            .iter()
            .filter_map(|p| cell.sandbox.read(p).ok().map(|b| (p.clone(), b)))
            .collect();
        sink.report(&Event::Captured {
            cell: id.clone(),
            files,
        });
    }
    if keep {
        // The workdir and environment are settled once the Background has run.
        record_kept(&cell, cluster.as_deref());
        cell.sandbox.keep();
    }
    let kept = if keep || !passed {
        let logs = cluster
            .as_deref()
            .map(crate::cluster::Cluster::node_logs)
            .unwrap_or_default();
        keep_leftovers(opts, &cell, keep, &logs)
    } else {
        None
    };
    let peak_memory = cell.sandbox.peak_memory();
    if !keep {
        if let Some(c) = cluster.as_mut() {
            c.stop().await;
        }
        cell.sandbox.shutdown().await;
        // A lent cluster goes back to the pool once no process of the cell is left.
        drop(cluster);
        let _ = std::fs::remove_dir_all(dir);
    }
    sink.report(&Event::CellFinished {
        cell: id.clone(),
        passed,
        kept,
        error: error.clone().map(|e| e as HarnessFault),
        peak_memory,
    });
    (id, error.map_or(Ok(passed), Err))
}
