//! The runner: turns paths and options into a plan of cells (validate early: discovery, lint, tag
//! expression — before anything starts), then runs each cell's lab through cucumber-rs, one
//! cucumber instance per cell with its scenarios in file order, cells in parallel up to `--jobs`.
//! A failed step stops its lab; what did not run is reported as such. Reporting happens only
//! through [`Event`]s handed to a [`Sink`].

mod adapter;
pub mod environment;
mod grade;
pub mod resolve;
pub mod resume;
pub mod shard;

pub use environment::{Environment, Needs, Tool};
pub use grade::{GradeTarget, grade};
pub use resolve::{
    ClusterChoice, EnvironmentError, Setup, environment_for, matrix, tool_setup_for,
};
pub use shard::Shard;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cucumber::World as _;
use cucumber::gherkin;
use cucumber::tag::Ext as _;
use futures::FutureExt;

use crate::cell::Cell;
use crate::checkpoint::{Checkpoint, Key, Store};
use crate::cluster::{CellEnv, Cluster};
use crate::lint::{self, Problem, ReadError, tags};
use crate::model::{CellId, Event, Lab, Outcome, Resumed, StepKind, ToolsInfo};
use crate::sandbox::{Sandbox, SandboxOptions};
use crate::steps::{LabWorld, ScenarioContext};

/// Where events go: console, JUnit, summaries.
pub type Sink = Rc<dyn Fn(Event)>;

/// What `labcheck run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub paths: Vec<PathBuf>,
    pub jobs: usize,
    pub keep: bool,
    pub tags: Option<String>,
    /// Run steps 1..=N of each lab and keep the cell.
    pub step: Option<usize>,
    /// Where cells live while they run (`LABCHECK_STATE_DIR`, default `/var/tmp/labcheck`).
    pub state_dir: PathBuf,
    /// Where reports and the leftovers of failed cells go (default `target/labcheck`).
    pub report_dir: PathBuf,
    /// The Istio labels of the matrix, for labs tagged `@istio`.
    pub istio: Vec<String>,
    /// Why there are no Istio labels (no versions file found), for labs tagged `@istio`.
    pub istio_unavailable: Option<String>,
    /// Whether mistake scenarios get cells of their own (not in `--step N` or mutation runs).
    pub mistakes: bool,
    /// Whether scenarios must show a failing check before their commands (not for mutants,
    /// whose earlier steps already differ from the reference).
    pub discrimination: bool,
    /// A timeout for every learner command, instead of the scenarios' own.
    pub timeout: Option<Duration>,
    /// Files each cell's sandbox holds at the end of its run, reported as [`Event::Captured`].
    pub capture: Vec<PathBuf>,
    /// The labs are copies of this lab (mutants): fixtures resolve from it, reports point at it.
    pub origin: Option<PathBuf>,
    /// Run only this shard of the plan (`--shard K/N`).
    pub shard: Option<Shard>,
    /// Whether cells may start from checkpoints instead of replaying steps (`--no-checkpoints`
    /// replays every step).
    pub checkpoints: bool,
    /// Main cells start from the latest checkpoint of their steps on disk (`run --step N`,
    /// mutants).
    pub resume: bool,
    /// Checkpoints on disk are not used, and those the run writes replace them (`--fresh`).
    pub fresh: bool,
    /// A checkpoint after every passing step of a main cell (`run --step N`, a mutation run's
    /// baseline), not only those another cell of the run starts from.
    pub checkpoint_all: bool,
}

impl RunOptions {
    pub fn new(paths: Vec<PathBuf>) -> RunOptions {
        RunOptions {
            paths,
            jobs: 2,
            keep: false,
            tags: None,
            step: None,
            state_dir: default_state_dir(),
            report_dir: PathBuf::from("target/labcheck"),
            istio: Vec::new(),
            istio_unavailable: None,
            mistakes: true,
            discrimination: true,
            timeout: None,
            capture: Vec::new(),
            origin: None,
            shard: None,
            checkpoints: true,
            resume: false,
            fresh: false,
            checkpoint_all: false,
        }
    }
}

/// `LABCHECK_STATE_DIR` or `/var/tmp/labcheck`: outside every directory the sandbox overlays.
pub fn default_state_dir() -> PathBuf {
    std::env::var_os("LABCHECK_STATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/labcheck"))
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{}", .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))]
    Lint(Vec<Problem>),
    #[error("invalid tag expression {expr:?}: {message}")]
    Tags { expr: String, message: String },
    #[error("no lab found under {0}")]
    Empty(String),
    #[error("nothing to run: {0}")]
    Nothing(String),
    #[error("{lab}: the lab is tagged @istio and there is no Istio version to run it on: {why}")]
    NoIstio { lab: String, why: String },
    #[error(
        "shard {shard} has no cells: the run plans {planned}, so at most {planned} shards have work"
    )]
    EmptyShard { shard: Shard, planned: usize },
}

/// One cell to run: which lab, and which of its scenarios (by line).
#[derive(Clone, Debug)]
pub struct CellPlan {
    pub id: CellId,
    pub lab: Arc<Lab>,
    pub lines: Vec<usize>,
    pub needs: Needs,
    /// The checkpoint the cell starts from (the steps before it are not run).
    pub resume: Option<resume::Resume>,
    /// The steps (by line) after which the cell writes a checkpoint, and their keys.
    pub checkpoints: BTreeMap<usize, Key>,
}

/// How a run ended.
#[derive(Debug, Default)]
pub struct Summary {
    pub cells: usize,
    pub failed_cells: Vec<CellId>,
    pub harness_errors: Vec<String>,
    /// The signal that interrupted the run (SIGINT, SIGTERM, SIGHUP), if one did.
    pub interrupted: Option<i32>,
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

/// Lints the labs under `opts.paths` and expands them into cells.
pub fn plan(opts: &RunOptions) -> Result<Vec<CellPlan>, PlanError> {
    let files = lint::discover(&opts.paths)?;
    if files.is_empty() {
        return Err(PlanError::Empty(
            opts.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    let filter = match &opts.tags {
        None => None,
        Some(expr) => Some(
            expr.parse::<gherkin::tagexpr::TagOperation>()
                .map_err(|e| PlanError::Tags {
                    expr: expr.clone(),
                    message: e.to_string(),
                })?,
        ),
    };
    if opts.step == Some(0) {
        return Err(PlanError::Nothing(
            "--step 0 selects no step (steps count from 1)".to_owned(),
        ));
    }
    let mut problems = Vec::new();
    let mut cells = Vec::new();
    let stem = |f: &PathBuf| f.file_stem().map(|s| s.to_owned());
    for file in &files {
        let loaded = match &opts.origin {
            Some(origin) => lint::load_as(file, origin)?,
            None => lint::load(file)?,
        };
        let (mut lab, feature) = match loaded {
            Ok(loaded) => loaded,
            Err(p) => {
                problems.extend(p);
                continue;
            }
        };
        if files.iter().filter(|f| stem(f) == stem(file)).count() > 1 {
            // Two labs of one name: their cells are named by their paths.
            lab.id = file
                .with_extension("")
                .to_string_lossy()
                .trim_start_matches(['.', '/'])
                .replace(['/', '.'], "-");
        }
        let lab = Arc::new(lab);
        let selected = |s: &crate::model::LabStep| {
            let in_range = opts.step.is_none_or(|n| s.index <= n);
            let tagged = filter
                .as_ref()
                .is_none_or(|f| f.eval(s.tags.iter().chain(&feature.tags)));
            in_range && tagged
        };
        let steps: Vec<usize> = lab
            .steps
            .iter()
            .filter(|s| s.kind == StepKind::Step && selected(s))
            .map(|s| s.line)
            .collect();
        let needs = Needs::of(&feature.tags);
        if needs == Needs::Istio && opts.istio.is_empty() {
            return Err(PlanError::NoIstio {
                lab: file.display().to_string(),
                why: opts.istio_unavailable.clone().unwrap_or_else(|| {
                    "the matrix is empty (istio-versions.toml's default, or --istio)".to_owned()
                }),
            });
        }
        let labels = match needs {
            Needs::Istio => opts.istio.clone(),
            Needs::Sandbox | Needs::Cluster => vec!["-".to_owned()],
        };
        for label in labels {
            if !steps.is_empty() {
                cells.push(CellPlan {
                    id: CellId {
                        lab: lab.slug(),
                        label: label.clone(),
                        mistake: None,
                    },
                    lab: lab.clone(),
                    lines: steps.clone(),
                    needs,
                    resume: None,
                    checkpoints: BTreeMap::new(),
                });
            }
            // `--step N` is an author's loop on the lab's steps; mistakes run in full runs.
            let mistakes = lab.steps.iter().filter(|s| {
                s.kind == StepKind::Mistake && opts.step.is_none() && opts.mistakes && selected(s)
            });
            for m in mistakes {
                // The mistake replaces the step it follows: replay the steps before that one.
                let before = lab
                    .steps
                    .iter()
                    .filter(|s| s.kind == StepKind::Step && s.index < m.index);
                let mut lines: Vec<usize> = before.map(|s| s.line).collect();
                lines.push(m.line);
                cells.push(CellPlan {
                    id: CellId {
                        lab: lab.slug(),
                        label: label.clone(),
                        mistake: Some(m.line),
                    },
                    lab: lab.clone(),
                    lines,
                    needs,
                    resume: None,
                    checkpoints: BTreeMap::new(),
                });
            }
        }
    }
    if !problems.is_empty() {
        return Err(PlanError::Lint(problems));
    }
    if cells.is_empty() {
        return Err(PlanError::Nothing(match (&opts.tags, opts.step) {
            (Some(t), _) => format!("no scenario matches --tags {t:?}"),
            (None, Some(n)) => format!("no lab has a step {n} or earlier"),
            (None, None) => "the labs have no steps to run".to_owned(),
        }));
    }
    if let Some(shard) = opts.shard {
        let planned = cells.len();
        let mut position = 0..;
        cells.retain(|_| position.next().is_some_and(|p| shard.takes(p)));
        if cells.is_empty() {
            return Err(PlanError::EmptyShard { shard, planned });
        }
    }
    Ok(cells)
}

/// What the cells of one run share.
struct Shared<'a> {
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
    resume::arrange(opts, env, &store, &mut cells, &slots);
    sink(Event::RunStarted {
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
    let shared = Shared {
        opts,
        env,
        sink: sink.clone(),
        store,
        slots,
        running: tokio::sync::Semaphore::new(jobs),
        alive: tokio::sync::Semaphore::new(jobs + prepared_ahead(jobs)),
    };
    let all = futures::future::join_all(cells.iter().cloned().map(|c| run_cell(&shared, c)));
    reap_stale(&opts.state_dir);
    crate::sandbox::cgroup::reap_stale();
    let interrupted = tokio::select! {
        results = all => {
            for (id, result) in results {
                match result {
                    Ok(true) => {}
                    Ok(false) => summary.failed_cells.push(id),
                    Err(e) => {
                        summary.harness_errors.push(format!("{id}: {e}"));
                        summary.failed_cells.push(id);
                    }
                }
            }
            None
        }
        signal = shutdown_signal() => Some(signal),
    };
    summary.interrupted = interrupted;
    if interrupted.is_some() {
        // Dropping the cells' futures killed their process groups, holders and clusters; their
        // directories go too, unless kept.
        if !(opts.keep || opts.step.is_some()) {
            let cleanup = async {
                for c in &cells {
                    remove_cell_dir(&cell_dir(opts, &c.id)).await;
                }
            };
            // A second signal ends the run at once; the next run removes what is left.
            if let Err(signal) = interruptible(cleanup).await {
                std::process::exit(128 + signal);
            }
        }
        for c in &cells {
            sink(Event::CellFinished {
                cell: c.id.clone(),
                passed: false,
                kept: None,
                error: Some("interrupted".to_owned()),
                peak_memory: None,
            });
        }
    }
    sink(Event::RunFinished {
        interrupted: interrupted.is_some(),
        duration: started.elapsed(),
    });
    summary
}

/// Runs `work` unless SIGINT, SIGTERM or SIGHUP comes first: then `work` is dropped (what it
/// started is killed by its guards) and the signal is returned.
pub async fn interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T, i32> {
    tokio::select! {
        done = work => Ok(done),
        signal = shutdown_signal() => Err(signal),
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP; returns which.
pub async fn shutdown_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => libc::SIGINT,
        _ = term.recv() => libc::SIGTERM,
        _ = hup.recv() => libc::SIGHUP,
    }
}

/// Where a cell of this run lives.
fn cell_dir(opts: &RunOptions, id: &CellId) -> PathBuf {
    opts.state_dir
        .join("cells")
        .join(format!("{}-{}", id.slug(), std::process::id()))
}

/// The host directories no cell may see: the state directory (every cell's files) and the report
/// directory.
pub(crate) fn hidden_dirs(opts: &RunOptions) -> Vec<PathBuf> {
    [&opts.state_dir, &opts.report_dir]
        .into_iter()
        .filter_map(|d| std::path::absolute(d).ok())
        .collect()
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
    for area in ["cells", "grade", "mutants"] {
        let Ok(entries) = std::fs::read_dir(state_dir.join(area)) else {
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

/// Runs one cell. `Ok(passed)`, or the harness fault that stopped it.
async fn run_cell(shared: &Shared<'_>, plan: CellPlan) -> (CellId, Result<bool, String>) {
    let (opts, sink) = (shared.opts, &shared.sink);
    let id = plan.id.clone();
    let stopped = |error: Option<String>, reason: &str| {
        not_run(&plan, sink, &plan.lines, reason);
        sink(Event::CellFinished {
            cell: id.clone(),
            passed: false,
            kept: None,
            error: error.clone(),
            peak_memory: None,
        });
        shared.slots.close(plan.checkpoints.values());
        (id.clone(), error.map_or(Ok(false), Err))
    };
    // A cell that starts from another cell's checkpoint waits for it, holding no slot.
    let checkpoint = match &plan.resume {
        None => None,
        Some(r) => match &r.ready {
            Some(c) => Some(c.clone()),
            None => match shared.slots.wait(&r.key).await {
                resume::Slot::Ready(c) => Some(c),
                resume::Slot::Failed(error) => {
                    sink(Event::CellStarted { cell: id.clone() });
                    return stopped(Some(error.clone()), &error);
                }
                resume::Slot::Pending | resume::Slot::NotWritten => {
                    sink(Event::CellStarted { cell: id.clone() });
                    let reason = format!(
                        "step {} did not pass in the lab's own cell, and this one starts after it",
                        r.after.index
                    );
                    return stopped(None, &reason);
                }
            },
        },
    };
    let Ok(_alive) = shared.alive.acquire().await else {
        return stopped(Some("the run is closing".to_owned()), "the run is closing");
    };
    sink(Event::CellStarted { cell: id.clone() });
    let keep = opts.keep || opts.step.is_some();
    let dir = cell_dir(opts, &id);
    let _ = std::fs::remove_dir_all(&dir);
    // The cell prepares (sandbox, cluster) while it waits for its turn; once its turn comes, it
    // waits only for what is not ready yet.
    let (prepared, turn) = futures::join!(
        async {
            let prepared = prepare(shared, &plan, checkpoint.as_ref(), &dir, keep).await;
            (prepared, Instant::now())
        },
        async {
            let permit = shared.running.acquire().await;
            (permit, Instant::now())
        }
    );
    let ((prepared, ready_at), (_turn, turn_at)) = (prepared, turn);
    let Prepared {
        cell,
        mut cluster,
        setup,
        restore,
    } = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&dir);
            return stopped(Some(error.clone()), &error);
        }
    };
    sink(Event::EnvironmentReady {
        cell: id.clone(),
        tools: cell_tools(shared.env, &plan, cluster.as_ref()),
        setup,
        waited: ready_at.saturating_duration_since(turn_at),
        resumed: checkpoint.as_ref().map(|c| Resumed {
            after_step: c.state.step,
            restore,
        }),
    });
    if keep {
        record_kept(&cell, cluster.as_ref());
    }
    let checkpointer = (!plan.checkpoints.is_empty()).then(|| {
        Rc::new(Checkpointer {
            store: shared.store.clone(),
            keys: plan.checkpoints.clone(),
            etcd: cluster.as_ref().and_then(|c| c.state()),
            slots: shared.slots.clone(),
            errors: Default::default(),
        })
    });
    let (passed, mut error) =
        run_scenarios(&plan, cell.clone(), sink.clone(), checkpointer.clone()).await;
    shared.slots.close(plan.checkpoints.values());
    if let Some(e) = checkpointer.and_then(|c| c.errors.borrow_mut().drain(..).next()) {
        error.get_or_insert(e);
    }
    if !opts.capture.is_empty() {
        let files = opts
            .capture
            .iter()
            .filter_map(|p| cell.sandbox.read(p).ok().map(|b| (p.clone(), b)))
            .collect();
        sink(Event::Captured {
            cell: id.clone(),
            files,
        });
    }
    if keep {
        // The workdir and environment are settled once the Background has run.
        record_kept(&cell, cluster.as_ref());
    }
    let kept = if keep || !passed {
        keep_leftovers(opts, &cell, keep)
    } else {
        None
    };
    let peak_memory = cell.sandbox.peak_memory();
    if !keep {
        if let Some(c) = cluster.as_mut() {
            c.stop().await;
        }
        cell.sandbox.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
    sink(Event::CellFinished {
        cell: id.clone(),
        passed,
        kept,
        error: error.clone(),
        peak_memory,
    });
    (id, error.map_or(Ok(passed), Err))
}

/// A cell ready to run its steps.
struct Prepared {
    cell: Arc<Cell>,
    cluster: Option<Cluster>,
    /// How long the sandbox, the checkpoint's files and the cluster took.
    setup: Duration,
    /// How long copying the checkpoint's files and cluster state in took.
    restore: Duration,
}

/// Builds a cell: its sandbox, its tools, its cluster — from `checkpoint` when there is one.
async fn prepare(
    shared: &Shared<'_>,
    plan: &CellPlan,
    checkpoint: Option<&Checkpoint>,
    dir: &Path,
    keep: bool,
) -> Result<Prepared, String> {
    let (env, opts) = (shared.env, shared.opts);
    let started = Instant::now();
    let mut restore = Duration::ZERO;
    let backend = match plan.needs {
        Needs::Sandbox => None,
        Needs::Cluster | Needs::Istio => Some(
            env.backend
                .as_ref()
                .ok_or("this lab needs a cluster, and no cluster backend is configured")?,
        ),
    };
    let tools = env.tools_for(plan.needs, &plan.id.label);
    if plan.needs == Needs::Istio && !tools.iter().any(|t| t.name == "istioctl") {
        return Err(format!("no istioctl for Istio {}", plan.id.label));
    }
    let restoring = |what: &str, e: std::io::Error| {
        format!(
            "cannot start from the checkpoint of step {} ({what}): {e}",
            checkpoint.map_or(0, |c| c.state.step)
        )
    };
    if let Some(c) = checkpoint {
        let t = Instant::now();
        c.restore_files(dir)
            .await
            .map_err(|e| restoring("its files", e))?;
        restore += t.elapsed();
    }
    let options = SandboxOptions {
        keep_alive: keep,
        isolate_network: backend.is_none_or(|b| b.isolates_network()),
        view: None,
        hide: hidden_dirs(opts),
        tools: environment::learner_tools(&tools),
        limits: plan.lab.limits,
    };
    let sandbox = Sandbox::create(dir, options)
        .await
        .map_err(|e| e.to_string())?;
    let mut cell = Cell::new(plan.id.clone(), plan.lab.clone(), sandbox);
    cell.discrimination = opts.discrimination;
    cell.timeout = opts.timeout;
    if let Some(c) = checkpoint {
        let fixtures: Vec<PathBuf> = c.state.fixtures.iter().map(|(p, _)| p.clone()).collect();
        cell.sandbox.set_workdir(&c.state.workdir);
        cell.resume(&c.state.prepared, &fixtures);
    }
    let cluster = match backend {
        None => None,
        Some(b) => {
            let cenv = CellEnv {
                sandbox: &cell.sandbox,
                dir: dir.join("cluster"),
                kubeconfig: cell.sandbox.share_dir().join("kubeconfig"),
                name: format!("{}-{}", plan.id.slug(), std::process::id()),
            };
            let _ = std::fs::create_dir_all(&cenv.dir);
            if let Some(c) = checkpoint {
                let t = Instant::now();
                c.restore_cluster(&cenv.dir)
                    .await
                    .map_err(|e| restoring("its cluster", e))?;
                restore += t.elapsed();
            }
            let cluster = b
                .start(&cenv)
                .await
                .map_err(|e| format!("cluster ({}): {e}", b.name()))?;
            cell.kube = Some(cluster.client.clone());
            Some(cluster)
        }
    };
    Ok(Prepared {
        cell: Arc::new(cell),
        cluster,
        setup: started.elapsed(),
        restore,
    })
}

/// The report's view of a cell's toolchain, its cluster included.
fn cell_tools(env: &Environment, plan: &CellPlan, cluster: Option<&Cluster>) -> ToolsInfo {
    let mut info = env.info(plan.needs, &plan.id.label);
    if let Some(c) = cluster {
        info.tools
            .push(("cluster".into(), c.version.clone(), c.backend.into()));
    }
    info
}

/// Writes what `labcheck ps`, `shell`, `grade` and `down` need to find a kept cell.
fn record_kept(cell: &Cell, cluster: Option<&Cluster>) {
    let mut record = crate::kept::KeptCell {
        name: cell
            .sandbox
            .dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| cell.id.slug()),
        id: cell.id.to_string(),
        lab: std::fs::canonicalize(&cell.lab.path).unwrap_or_else(|_| cell.lab.path.clone()),
        dir: cell.sandbox.dir().to_owned(),
        holder: cell.sandbox.holder_pid().unwrap_or_default(),
        cluster_pids: cluster.map(|c| c.pids()).unwrap_or_default(),
        env: cell
            .sandbox
            .env()
            .into_iter()
            .map(|(k, v)| (k, v.to_string_lossy().into_owned()))
            .collect(),
        workdir: cell.sandbox.workdir(),
        has_cluster: cluster.is_some(),
        started: Default::default(),
        pid_namespace: None,
    };
    record.pid_namespace = crate::kept::pid_namespace(record.holder);
    record.started = std::iter::once(record.holder)
        .chain(record.cluster_pids.iter().map(|p| *p as i32))
        .filter_map(|p| crate::kept::start_time(p).map(|t| (p, t)))
        .collect();
    let _ = record.save();
}

/// Runs the planned scenarios of one cell through cucumber; returns whether all passed and a
/// harness error, if any.
pub(crate) async fn run_scenarios(
    plan: &CellPlan,
    cell: Arc<Cell>,
    sink: Sink,
    checkpointer: Option<Rc<Checkpointer>>,
) -> (bool, Option<String>) {
    let lines = plan.lines.clone();
    let feature_path = plan.lab.path.display().to_string();
    let hook_cell = cell.clone();
    let after_cell = cell.clone();
    let adapter = adapter::Adapter::new(cell.clone(), plan.lab.clone(), sink.clone());
    let cucumber = LabWorld::cucumber::<PathBuf>()
        .steps(crate::steps::bindings::collection())
        .max_concurrent_scenarios(1);
    // A failed step stops a run (later steps would cascade); grading looks at every step.
    let cucumber = if cell.grading {
        cucumber
    } else {
        cucumber.fail_fast()
    };
    let writer = cucumber
        .before(move |_, _, scenario, world| {
            world.cell = Some(hook_cell.clone());
            world.scenario = scenario_context(&feature_path, scenario);
            async {}.boxed_local()
        })
        .after(move |_, _, scenario, finished, _| {
            // Before the next scenario starts: the cell is as this step left it.
            let passed = matches!(finished, cucumber::event::ScenarioFinished::StepPassed);
            let line = scenario.position.line;
            let (cell, checkpointer) = (after_cell.clone(), checkpointer.clone());
            async move {
                if let Some(c) = checkpointer
                    && passed
                {
                    c.write(&cell, line).await;
                }
            }
            .boxed_local()
        })
        .with_writer(adapter)
        .with_default_cli()
        .filter_run(plan.lab.path.clone(), move |_, _, sc| {
            lines.contains(&sc.position.line)
        })
        .await;
    crate::steps::world::quiet_step_panics();
    let mut passed = writer.error.is_none();
    let mut error = writer.error.clone();
    let mut missing = Vec::new();
    for line in &plan.lines {
        match writer.finished.iter().find(|(l, _)| l == line) {
            Some((_, outcome)) => {
                passed &= outcome.is_pass();
                if let Outcome::Error { line, message } = outcome {
                    error.get_or_insert_with(|| {
                        format!(
                            "{}:{line}: {}",
                            plan.lab.origin().display(),
                            message.lines().next().unwrap_or_default()
                        )
                    });
                }
            }
            None => missing.push(*line),
        }
    }
    passed &= missing.is_empty();
    not_run(plan, &sink, &missing, "an earlier step failed");
    (passed, error)
}

/// Writes a main cell's checkpoints as its steps pass, and hands them to the cells that wait.
pub(crate) struct Checkpointer {
    store: Store,
    /// The steps to checkpoint, by line.
    keys: BTreeMap<usize, Key>,
    /// The cluster's state, when the cell has a cluster.
    etcd: Option<crate::cluster::local::EtcdState>,
    slots: Rc<resume::Slots>,
    /// Checkpoints that could not be written (harness faults).
    errors: std::cell::RefCell<Vec<String>>,
}

impl Checkpointer {
    async fn write(&self, cell: &Cell, line: usize) {
        let Some(key) = self.keys.get(&line) else {
            return;
        };
        let Some(step) = cell.lab.steps.iter().find(|s| s.line == line) else {
            return;
        };
        match self.store.write(key, cell, self.etcd.as_ref(), step).await {
            Ok(c) => self.slots.fill(key, resume::Slot::Ready(c)),
            Err(e) => {
                let error = format!("{}: {e}", cell.id);
                self.slots.fill(key, resume::Slot::Failed(error.clone()));
                self.errors.borrow_mut().push(error);
            }
        }
    }
}

fn scenario_context(feature: &str, scenario: &gherkin::Scenario) -> ScenarioContext {
    ScenarioContext {
        feature: feature.to_owned(),
        checks: scenario
            .steps
            .iter()
            .filter(|s| s.ty == gherkin::StepType::Then)
            .cloned()
            .collect(),
        timeout: tags::value(&scenario.tags, tags::TIMEOUT)
            .and_then(|v| v.parse().ok())
            .map(Duration::from_secs),
        discriminate: !tags::has(&scenario.tags, tags::NO_DISCRIMINATION)
            && !tags::has(&scenario.tags, tags::MISTAKE),
    }
}

/// Reports the scenarios at `lines` of a cell as not run.
fn not_run(plan: &CellPlan, sink: &Sink, lines: &[usize], reason: &str) {
    for line in lines {
        if let Some(step) = plan.lab.steps.iter().find(|s| s.line == *line) {
            sink(Event::StepFinished {
                cell: plan.id.clone(),
                step: step.clone(),
                outcome: Outcome::NotRun {
                    reason: reason.to_owned(),
                },
                duration: Duration::ZERO,
                transcripts: Vec::new(),
                checks: Vec::new(),
                artifacts: Vec::new(),
            });
        }
    }
}

/// The most a failed cell's leftovers take in the report directory.
const LEFTOVERS_MAX: u64 = 64 << 20;

/// Copies what the learner's commands wrote (the overlays' upper layers) into the report
/// directory — symlinks as symlinks, never followed, up to [`LEFTOVERS_MAX`] — or, for a kept
/// cell, points at the live cell.
fn keep_leftovers(opts: &RunOptions, cell: &Cell, keep: bool) -> Option<PathBuf> {
    if keep {
        return Some(cell.sandbox.dir().to_owned());
    }
    let report = opts.report_dir.join(cell.id.slug());
    let target = report.join("files");
    let _ = std::fs::remove_dir_all(&target);
    let read = crate::sandbox::tree::read_lenient(&cell.sandbox.upper_dir(), LEFTOVERS_MAX).ok()?;
    let _ = crate::sandbox::tree::write(&read.entries, &target);
    if read.cut {
        let _ = std::fs::write(
            report.join("files-truncated.txt"),
            format!(
                "the cell wrote more than {} MiB: files past that were not copied\n",
                LEFTOVERS_MAX >> 20
            ),
        );
    }
    Some(report)
}
