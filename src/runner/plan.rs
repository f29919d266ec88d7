//! Planning a run: what `labcheck run` was asked ([`RunOptions`]) turned into cells
//! ([`CellPlan`]), validated before anything starts — discovery, lint, the tag expression,
//! `--step`, the Istio matrix, shards, and which checkpoints each cell starts from and writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cucumber::gherkin;
use cucumber::tag::Ext as _;

use super::{Needs, Shard, resume};
use crate::checkpoint::Key;
use crate::lint::{self, Linted, Problem, ReadError};
use crate::model::{CellId, Lab, StepKind};
use crate::steps::lab::CompiledLab;

/// Why a run is made. What it does follows from it: whether mistakes get cells, whether steps
/// must discriminate, where main cells start and which checkpoints they write, whether cells are
/// kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// `labcheck run`: every step of every lab, and each mistake in a cell of its own.
    Validate,
    /// `labcheck run --step N`, the author's loop: steps 1..=N from the latest checkpoint on
    /// disk, a checkpoint after every step for the next try, the cell kept.
    Author,
    /// The reference run of `labcheck mutate`: no mistakes, from the latest checkpoint on disk
    /// (its last step always runs), a checkpoint after every step for the mutants to start from.
    Baseline,
    /// Mutants: no mistakes, no discrimination (their earlier steps already differ from the
    /// reference), each from the latest checkpoint before the step it changes.
    Mutant,
    /// `labcheck grade` and `lint`: the lab's own steps, checked where they are; nothing runs
    /// them, so nothing starts from or writes a checkpoint.
    Grade,
}

impl Purpose {
    /// Whether mistake scenarios get cells of their own.
    pub fn mistakes(self) -> bool {
        self == Purpose::Validate
    }

    /// Whether a step must show a failing check before its commands run.
    pub fn discrimination(self) -> bool {
        self != Purpose::Mutant
    }

    /// Whether main cells start from the latest checkpoint of their steps on disk.
    pub fn resume(self) -> bool {
        matches!(self, Purpose::Author | Purpose::Baseline | Purpose::Mutant)
    }

    /// Whether a main cell writes a checkpoint after every passing step, not only those another
    /// cell of the run starts from.
    pub fn checkpoint_all(self) -> bool {
        matches!(self, Purpose::Author | Purpose::Baseline)
    }

    /// Whether cells stay after the run for `shell`, `grade` and the next try.
    pub fn keeps_cells(self) -> bool {
        self == Purpose::Author
    }
}

/// What a run was asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub paths: Vec<PathBuf>,
    pub purpose: Purpose,
    pub jobs: usize,
    /// Keep every cell (`--keep`), whatever the purpose.
    pub keep: bool,
    pub tags: Option<String>,
    /// Steps 1..=N of each lab only.
    pub step: Option<usize>,
    /// Where cells live while they run (`LABCHECK_STATE_DIR`, default `/var/tmp/labcheck`).
    pub state_dir: PathBuf,
    /// Where reports and the leftovers of failed cells go (default `target/labcheck`).
    pub report_dir: PathBuf,
    /// The Istio labels of the matrix, for labs tagged `@istio`.
    pub istio: Vec<String>,
    /// Why there are no Istio labels (no versions file found), for labs tagged `@istio`.
    pub istio_unavailable: Option<String>,
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
    /// Checkpoints on disk are not used (`--fresh`); what the run writes replaces none that
    /// still matches its manifest.
    pub fresh: bool,
    /// Plain local clusters are lent by a pool and reset between cells instead of started per
    /// cell (mutants, unless `mutate --fresh-clusters`).
    pub pool: bool,
}

impl RunOptions {
    pub fn new(paths: Vec<PathBuf>, purpose: Purpose) -> RunOptions {
        RunOptions {
            paths,
            purpose,
            jobs: 2,
            keep: false,
            tags: None,
            step: None,
            state_dir: crate::state::default_state_dir(),
            report_dir: PathBuf::from("target/labcheck"),
            istio: Vec::new(),
            istio_unavailable: None,
            timeout: None,
            capture: Vec::new(),
            origin: None,
            shard: None,
            checkpoints: true,
            fresh: false,
            pool: false,
        }
    }
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
        "{lab}: the lab is tagged @upgrade and the matrix has one Istio version ({matrix}): an \
         upgrade runs from one version to the next, so give two (--istio 1.30,1.31)"
    )]
    NoUpgrade { lab: String, matrix: String },
    #[error(
        "shard {shard} has no cells: the run plans {planned} labs × versions, so at most {planned} shards have work"
    )]
    EmptyShard { shard: Shard, planned: usize },
}

/// One cell to run: which lab, and which of its scenarios (by line).
#[derive(Clone, Debug)]
pub struct CellPlan {
    pub id: CellId,
    pub lab: Arc<Lab>,
    /// The lab's steps as lint compiled them, shared by its cells.
    pub compiled: Arc<CompiledLab>,
    pub lines: Vec<usize>,
    pub needs: Needs,
    /// The checkpoint the cell starts from (the steps before it are not run).
    pub resume: Option<resume::Resume>,
    /// The steps (by line) after which the cell writes a checkpoint, and their keys.
    pub checkpoints: BTreeMap<usize, Key>,
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
    for file in &files {
        match load(opts, &files, file)? {
            Ok(linted) => cells.extend(lab_cells(opts, file, linted, filter.as_ref())?),
            Err(p) => problems.extend(p),
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
        // The unit of sharding is a lab on one point of the matrix: its main cell and its
        // mistake cells (which start from the main cell's checkpoints) stay together.
        let mut units: Vec<(String, String)> = Vec::new();
        let unit_of = |c: &CellPlan, units: &mut Vec<(String, String)>| {
            let key = (c.id.lab.clone(), c.id.label.clone());
            match units.iter().position(|u| *u == key) {
                Some(i) => i,
                None => {
                    units.push(key);
                    units.len() - 1
                }
            }
        };
        let taken: Vec<bool> = cells
            .iter()
            .map(|c| shard.takes(unit_of(c, &mut units)))
            .collect();
        let planned = units.len();
        let mut keep = taken.into_iter();
        cells.retain(|_| keep.next().unwrap_or(false));
        if cells.is_empty() {
            return Err(PlanError::EmptyShard { shard, planned });
        }
    }
    Ok(cells)
}

/// Lints one lab of the run; two labs of one file name get cells named by their paths.
fn load(
    opts: &RunOptions,
    files: &[PathBuf],
    file: &PathBuf,
) -> Result<Result<Linted, Vec<Problem>>, PlanError> {
    let loaded = match &opts.origin {
        Some(origin) => lint::load_as(file, origin)?,
        None => lint::load(file)?,
    };
    let Ok(mut linted) = loaded else {
        return Ok(loaded);
    };
    let stem = |f: &PathBuf| f.file_stem().map(|s| s.to_owned());
    if files.iter().filter(|f| stem(f) == stem(file)).count() > 1 {
        linted.lab.id = file
            .with_extension("")
            .to_string_lossy()
            .trim_start_matches(['.', '/'])
            .replace(['/', '.'], "-");
    }
    Ok(Ok(linted))
}

/// A lab's cells: one per point of the matrix for its steps, and one per mistake scenario.
fn lab_cells(
    opts: &RunOptions,
    file: &Path,
    Linted { lab, compiled }: Linted,
    filter: Option<&gherkin::tagexpr::TagOperation>,
) -> Result<Vec<CellPlan>, PlanError> {
    let compiled = Arc::new(compiled);
    let feature_tags = lab
        .parsed
        .as_ref()
        .map(|f| f.tags.clone())
        .unwrap_or_default();
    let lab = Arc::new(lab);
    let selected = |s: &crate::model::LabStep| {
        let in_range = opts.step.is_none_or(|n| s.index <= n);
        let tagged = filter.is_none_or(|f| f.eval(s.tags.iter().chain(&feature_tags)));
        in_range && tagged
    };
    let steps: Vec<usize> = lab
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Step && selected(s))
        .map(|s| s.line)
        .collect();
    // A lab the tags leave nothing of plans no cell, whatever its needs.
    if !lab.steps.iter().any(&selected) {
        return Ok(Vec::new());
    }
    let needs = Needs::of(&feature_tags);
    if needs.istio() && opts.istio.is_empty() {
        return Err(PlanError::NoIstio {
            lab: file.display().to_string(),
            why: opts.istio_unavailable.clone().unwrap_or_else(|| {
                "the matrix is empty (istio-versions.toml's default, or --istio)".to_owned()
            }),
        });
    }
    let upgrade = lint::tags::has(&feature_tags, lint::tags::UPGRADE);
    let labels = match needs {
        // Lint's and grade's placeholder point of the matrix stands for every pair too.
        Needs::Mesh if upgrade && opts.istio != ["-"] => {
            // A pair given as such (a mutant runs on its baseline's pair) is kept as it is.
            let (mut pairs, versions): (Vec<String>, Vec<String>) = opts
                .istio
                .iter()
                .cloned()
                .partition(|l| crate::model::label_versions(l).len() == 2);
            pairs.extend(crate::model::upgrade_pairs(&versions));
            if pairs.is_empty() {
                return Err(PlanError::NoUpgrade {
                    lab: file.display().to_string(),
                    matrix: opts.istio.join(", "),
                });
            }
            pairs
        }
        Needs::Istio | Needs::Mesh => opts.istio.clone(),
        Needs::Sandbox | Needs::Cluster | Needs::Node => vec!["-".to_owned()],
    };
    let cell = |label: &str, mistake: Option<usize>, lines: Vec<usize>| CellPlan {
        id: CellId {
            lab: lab.slug(),
            label: label.to_owned(),
            mistake,
        },
        lab: lab.clone(),
        compiled: compiled.clone(),
        lines,
        needs,
        resume: None,
        checkpoints: BTreeMap::new(),
    };
    let mut cells = Vec::new();
    for label in labels {
        if !steps.is_empty() {
            cells.push(cell(&label, None, steps.clone()));
        }
        // `--step N` is an author's loop on the lab's steps; mistakes run in full runs.
        let mistakes = lab.steps.iter().filter(|s| {
            s.kind == StepKind::Mistake
                && opts.step.is_none()
                && opts.purpose.mistakes()
                && selected(s)
        });
        for m in mistakes {
            // The mistake replaces the step it follows: replay the steps before that one.
            let before = lab
                .steps
                .iter()
                .filter(|s| s.kind == StepKind::Step && s.index < m.index);
            let mut lines: Vec<usize> = before.map(|s| s.line).collect();
            lines.push(m.line);
            cells.push(cell(&label, Some(m.line), lines));
        }
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels each lab of `features/istio/` is planned on, for the matrix `istio`.
    fn labels(istio: &[&str]) -> BTreeMap<String, Vec<String>> {
        let mut opts = RunOptions::new(vec![PathBuf::from("features/istio")], Purpose::Validate);
        opts.istio = istio.iter().map(|s| s.to_string()).collect();
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in plan(&opts).expect("the repository's labs plan") {
            let labels = out.entry(c.id.lab).or_default();
            if !labels.contains(&c.id.label) {
                labels.push(c.id.label);
            }
        }
        out
    }

    #[test]
    fn an_upgrade_lab_runs_once_per_pair_and_the_others_once_per_version() {
        let planned = labels(&["1.31", "1.30"]);
        assert_eq!(planned["canary-upgrade"], ["1.30→1.31"]);
        // A mutant's run is given its baseline's pair.
        assert_eq!(labels(&["1.30→1.31"])["canary-upgrade"], ["1.30→1.31"]);
        for (lab, labels) in planned.iter().filter(|(l, _)| *l != "canary-upgrade") {
            assert_eq!(labels, &["1.31", "1.30"], "{lab}");
        }
    }
}
