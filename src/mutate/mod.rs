//! `labcheck mutate`: mutation testing of a lab's checks, the way cargo-mutants tests a test
//! suite. The reference solution must pass first (the baseline). Then each mutant — the lab with
//! one step's learner script changed into a plausible wrong answer ([`generate`]) — runs from
//! step 1 to the end of the lab in a cell of its own, and is *caught* when a check of its step or
//! of a later one fails, *missed* when every check passes, a *timeout* when a command hangs, and
//! *unviable* when bash rejects the script. Missed mutants are the lab's weak checks, unless the
//! author marks them equivalent ([`equivalents`]).

mod arguments;
pub mod bash;
pub mod cache;
pub mod console;
pub mod equivalents;
pub mod generate;
mod jq;
pub mod lab;
pub mod report;
pub mod select;
pub mod session;
mod targets;
mod typed;
mod values;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use generate::{Answers, Mutant};

use crate::model::{CellId, Event, Lab, Outcome as StepOutcome};
use crate::runner::{self, CellPlan, Environment, RunOptions};

/// What became of one mutant (cargo-mutants' names).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    /// A check failed: the feature line of the first one, and what it said.
    Caught { line: usize, message: String },
    /// Every check passed.
    Missed,
    /// A learner command of the mutant did not finish in time.
    Timeout,
    /// bash rejects the mutated script.
    Unviable { message: String },
    /// The mutant's cell could not be run or graded (a harness error).
    Error { message: String },
}

impl Outcome {
    pub fn word(&self, lang: crate::model::Lang) -> &'static str {
        match self {
            Outcome::Caught { .. } => lang.pick("caught", "検出"),
            Outcome::Missed => lang.pick("MISSED", "見逃し"),
            Outcome::Timeout => lang.pick("timeout", "タイムアウト"),
            Outcome::Unviable { .. } => lang.pick("unviable", "実行不能"),
            Outcome::Error { .. } => lang.pick("error", "エラー"),
        }
    }
}

/// One mutant on one Istio version, and its outcome.
#[derive(Clone, Debug)]
pub struct Result {
    pub mutant: Mutant,
    pub label: String,
    pub outcome: Outcome,
    /// The author's reason, when the mutant is marked equivalent.
    pub equivalent: Option<String>,
    /// The outcome was kept from an earlier session (the mutant did not run).
    pub cached: bool,
    /// How long the mutant's cell took, when it ran now.
    pub spent: Option<Spent>,
}

/// How long a mutant's cell took: its sandbox and cluster (from a checkpoint), then its steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub setup: Duration,
    pub steps: Duration,
}

/// Why mutation testing could not be done.
#[derive(Debug, thiserror::Error)]
pub enum MutateError {
    #[error(transparent)]
    Plan(#[from] runner::PlanError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Equivalents(#[from] equivalents::EquivalentsError),
    #[error(
        "the reference solution fails on {label}, so its mutants would prove nothing: run `labcheck run {lab}` and fix it first"
    )]
    Baseline { label: String, lab: String },
    #[error("cannot write mutant {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the lab has no learner commands to mutate")]
    NothingToMutate,
    #[error("no mutant has the id {id} (the lab has {count}; `labcheck mutate --list` shows them)")]
    UnknownMutant { id: String, count: usize },
    #[error("cannot take the diff since {base}: {message}")]
    Diff { base: String, message: String },
    #[error(transparent)]
    Environment(Box<runner::EnvironmentError>),
    #[error("cannot write {path}: {source}")]
    Report {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<runner::EnvironmentError> for MutateError {
    fn from(e: runner::EnvironmentError) -> MutateError {
        MutateError::Environment(Box::new(e))
    }
}

impl MutateError {
    /// 2 (mutation testing could not be done), or 128 + a signal that stopped the tool builds.
    pub fn exit_code(&self) -> i32 {
        match self {
            MutateError::Environment(e) => e.exit_code(),
            _ => 2,
        }
    }
}

/// What `labcheck mutate` was asked to do.
#[derive(Clone, Debug)]
pub struct MutateOptions {
    pub lab: PathBuf,
    /// Which mutants run.
    pub selection: select::Selection,
    /// Whether kept outcomes are read and written.
    pub cache: bool,
    /// Whether mutants borrow pooled clusters (see [`crate::cluster::pool`]).
    pub pool: bool,
    pub labels: Vec<String>,
    pub step: Option<usize>,
    pub jobs: usize,
    pub state_dir: PathBuf,
}

/// The lab's text, its parsed feature and lab, its steps compiled, and its step scripts.
pub struct Loaded {
    pub text: String,
    pub lab: Lab,
    pub compiled: crate::steps::lab::CompiledLab,
    pub scripts: Vec<generate::StepScript>,
}

/// Reads and lints the lab, and finds its step scripts.
pub fn load(path: &Path, step: Option<usize>) -> std::result::Result<Loaded, MutateError> {
    let crate::lint::Linted { lab, compiled } = crate::lint::load(path)
        .map_err(runner::PlanError::from)?
        .map_err(runner::PlanError::Lint)?;
    let text = lab.text.clone();
    let scripts = match lab.feature() {
        Some(feature) => lab::scripts(&text, &feature, step),
        None => Vec::new(),
    };
    Ok(Loaded {
        text,
        lab,
        compiled,
        scripts,
    })
}

/// The baseline's options: the lab alone, no mistakes, capturing what typed answers need.
pub fn baseline_options(opts: &MutateOptions, capture: Vec<PathBuf>) -> RunOptions {
    let mut run = RunOptions::new(vec![opts.lab.clone()], runner::Purpose::Baseline);
    run.istio = opts.labels.clone();
    run.jobs = opts.jobs;
    run.capture = capture;
    run.state_dir = opts.state_dir.clone();
    // Every mutant starts from the checkpoint of the step before the one it changes: the
    // purpose writes one after every step.
    run
}

/// What the reference run showed.
pub struct Baseline {
    /// Per Istio label: whether the reference solution passed, and the answers it captured.
    pub labels: BTreeMap<String, (bool, Answers)>,
    /// The learner-command time of the slowest step.
    pub slowest: Duration,
    /// The signal that interrupted the run, if one did.
    pub interrupted: Option<i32>,
    /// Per Istio label, the step whose checkpoint the reference run started from, if one.
    pub resumed: BTreeMap<String, usize>,
}

/// Runs the reference solution on every label.
pub async fn baseline(run_opts: &RunOptions, env: &Environment, cells: Vec<CellPlan>) -> Baseline {
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink_events = events.clone();
    let sink: runner::Sink = Rc::new(move |e: &Event| sink_events.borrow_mut().push(e.clone()));
    let summary = runner::run(run_opts, env, cells.clone(), sink).await;
    let mut out: BTreeMap<String, (bool, Answers)> = BTreeMap::new();
    let mut slowest = Duration::ZERO;
    let mut resumed = BTreeMap::new();
    for c in &cells {
        let passed = !summary.failed_cells.contains(&c.id) && summary.interrupted.is_none();
        out.insert(c.id.label.clone(), (passed, Answers::new()));
    }
    for e in events.borrow().iter() {
        match e {
            Event::Captured { cell, files } => {
                if let Some((_, answers)) = out.get_mut(&cell.label) {
                    for (path, bytes) in files {
                        let text = String::from_utf8_lossy(bytes);
                        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
                        if let Some(first) = lines.next() {
                            let only = lines.next().is_none();
                            answers.insert(path.clone(), (first.to_owned(), only));
                        }
                    }
                }
            }
            Event::StepFinished { transcripts, .. } => {
                let spent: Duration = transcripts.iter().map(|t| t.duration).sum();
                slowest = slowest.max(spent);
            }
            // The steps a checkpoint covers ran in the run that wrote it.
            Event::EnvironmentReady {
                cell,
                resumed: Some(r),
                ..
            } => {
                slowest = slowest.max(r.slowest);
                resumed.insert(cell.label.clone(), r.after_step);
            }
            _ => {}
        }
    }
    Baseline {
        labels: out,
        slowest,
        interrupted: summary.interrupted,
        resumed,
    }
}

/// Whether bash accepts the script (`bash -n`); the reason when not.
pub fn syntax_error(script: &str) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let child = Command::new("bash")
        .args(["--noprofile", "--norc", "-n"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Some(format!("cannot run bash -n: {e}")),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(script.as_bytes());
    }
    match child.wait_with_output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("bash -n failed")
                .to_owned(),
        ),
        Err(e) => Some(format!("cannot run bash -n: {e}")),
    }
}

/// Writes each mutant's feature file under `dir`; returns the paths by mutant id.
pub fn write_mutants(
    dir: &Path,
    loaded: &Loaded,
    mutants: &[Mutant],
) -> std::result::Result<HashMap<String, PathBuf>, MutateError> {
    std::fs::create_dir_all(dir).map_err(|source| MutateError::Write {
        path: dir.to_owned(),
        source,
    })?;
    let mut out = HashMap::new();
    for m in mutants {
        let path = dir.join(format!("{}.m-{}.feature", loaded.lab.slug(), m.id));
        std::fs::write(&path, lab::mutated_feature(&loaded.text, m)).map_err(|source| {
            MutateError::Write {
                path: path.clone(),
                source,
            }
        })?;
        out.insert(m.id.clone(), path);
    }
    Ok(out)
}

/// The options mutants run with: no mistakes, no discrimination, a timeout from the baseline.
pub fn mutant_options(
    opts: &MutateOptions,
    paths: Vec<PathBuf>,
    label: &str,
    slowest: Duration,
) -> RunOptions {
    let mut run = RunOptions::new(paths, runner::Purpose::Mutant);
    run.istio = vec![label.to_owned()];
    run.jobs = opts.jobs;
    run.timeout = Some((slowest * 3).max(Duration::from_secs(20)));
    run.state_dir = opts.state_dir.clone();
    run.origin = Some(opts.lab.clone());
    run.pool = opts.pool;
    run
}

/// Told of each mutant's outcome as it finishes, and how long its cell took.
pub type Done = Rc<dyn Fn(&Mutant, &Outcome, Spent)>;

/// What running the mutants of one label gave.
pub struct Ran {
    /// Outcomes by mutant id, with how long each cell took.
    pub outcomes: HashMap<String, (Outcome, Spent)>,
    /// The signal that interrupted the run, if one did.
    pub interrupted: Option<i32>,
    /// How the pool of clusters served the mutants, if they borrowed clusters.
    pub clusters: Option<crate::cluster::pool::Stats>,
}

/// Runs the planned mutant cells; `done` is told of each mutant's outcome as it finishes.
pub async fn run_mutants(
    run_opts: &RunOptions,
    env: &Environment,
    cells: Vec<CellPlan>,
    by_slug: HashMap<String, Mutant>,
    done: Done,
) -> Ran {
    type Seen = HashMap<CellId, (Spent, Vec<(usize, StepOutcome)>)>;
    let seen: Rc<RefCell<Seen>> = Rc::default();
    let outcomes: Rc<RefCell<HashMap<String, (Outcome, Spent)>>> = Rc::default();
    let (s, o, m) = (seen.clone(), outcomes.clone(), Rc::new(by_slug));
    let sink: runner::Sink = Rc::new(move |e: &Event| match e {
        Event::EnvironmentReady { cell, setup, .. } => {
            s.borrow_mut().entry(cell.clone()).or_default().0.setup = *setup;
        }
        Event::StepFinished {
            cell,
            step,
            outcome,
            duration,
            ..
        } => {
            let mut seen = s.borrow_mut();
            let (spent, steps) = seen.entry(cell.clone()).or_default();
            spent.steps += *duration;
            steps.push((step.line, outcome.clone()));
        }
        Event::CellFinished { cell, error, .. } => {
            let Some(mutant) = m.get(&cell.lab) else {
                return;
            };
            let (spent, steps) = s.borrow_mut().remove(cell).unwrap_or_default();
            let error = error.as_ref().map(|e| e.to_string());
            let outcome = classify(mutant, &steps, error.as_deref());
            done(mutant, &outcome, spent);
            o.borrow_mut().insert(mutant.id.clone(), (outcome, spent));
        }
        _ => {}
    });
    let summary = runner::run(run_opts, env, cells, sink).await;
    Ran {
        outcomes: outcomes.take(),
        interrupted: summary.interrupted,
        clusters: summary.clusters,
    }
}

/// A mutant's outcome from its cell's steps.
fn classify(mutant: &Mutant, steps: &[(usize, StepOutcome)], error: Option<&str>) -> Outcome {
    for (line, outcome) in steps {
        match outcome {
            StepOutcome::Passed | StepOutcome::NotRun { .. } | StepOutcome::NotGraded { .. } => {}
            StepOutcome::Error { fault, .. } => {
                return Outcome::Error {
                    message: fault.headline(),
                };
            }
            StepOutcome::Failed { fault, .. } if fault.is_timeout() => return Outcome::Timeout,
            StepOutcome::Failed {
                line: failed,
                fault,
            } => {
                if *line < mutant.scenario_line {
                    return Outcome::Error {
                        message: format!(
                            "step at line {line} failed before the mutated step: {}",
                            fault.headline()
                        ),
                    };
                }
                return Outcome::Caught {
                    line: *failed,
                    message: fault.headline(),
                };
            }
        }
    }
    match error {
        Some(e) => Outcome::Error {
            message: first_line(e),
        },
        None if steps.is_empty() => Outcome::Error {
            message: "the mutant's cell ran no step".to_owned(),
        },
        None => Outcome::Missed,
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_owned()
}
