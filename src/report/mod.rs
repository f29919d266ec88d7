//! Reporting: sinks that consume the runner's [`Event`]s — the live [`console`], and a
//! [`Record`] of the whole run from which [`junit`] and [`summary`] (Markdown and HTML matrix)
//! are written at the end. Every sink matches every event variant.

pub mod builds;
pub mod console;
pub mod cucumber_json;
pub mod github;
pub mod grade_json;
pub mod junit;
pub mod messages;
pub mod summary;
pub mod versions;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::{
    Artifact, CellId, Event, Lab, LabStep, Outcome, StepCheck, StepKind, ToolsInfo, Transcript,
};

/// One step of one cell, as recorded.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    pub step: LabStep,
    pub outcome: Outcome,
    pub duration: Duration,
    pub transcripts: Vec<Transcript>,
    /// Each Gherkin step and how it went (older records have none).
    #[serde(default)]
    pub checks: Vec<StepCheck>,
    /// Text files the step left in the lab's directories.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
}

/// One cell, as recorded.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CellRecord {
    pub id: CellId,
    pub lab: Lab,
    /// Lines of the scenarios the cell was to run.
    pub planned: Vec<usize>,
    pub tools: ToolsInfo,
    pub setup: Option<Duration>,
    /// The steps the cell reports: a main cell's steps, a mistake cell's own step.
    pub steps: Vec<StepRecord>,
    /// Steps a mistake cell ran only to reach the step it gets wrong (when it could not start
    /// from a checkpoint): they count in its time, and are the main cell's test cases, never
    /// this cell's.
    #[serde(default)]
    pub replayed: Vec<StepRecord>,
    pub finished: bool,
    pub passed: bool,
    pub kept: Option<PathBuf>,
    pub error: Option<String>,
    /// Bytes, when the kernel tells.
    pub peak_memory: Option<u64>,
    /// The checkpoint the cell started from, if any.
    #[serde(default)]
    pub resumed: Option<crate::model::Resumed>,
    /// How long the cell waited for its sandbox and cluster once its turn came.
    #[serde(default)]
    pub waited: Duration,
}

/// Where a cell's time went.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub setup: Duration,
    pub steps: Duration,
    pub commands: Duration,
}

impl CellRecord {
    pub fn timing(&self) -> Timing {
        Timing {
            setup: self.setup.unwrap_or_default(),
            steps: self.all_steps().map(|s| s.duration).sum(),
            commands: self
                .all_steps()
                .flat_map(|s| &s.transcripts)
                .map(|t| t.duration)
                .sum(),
        }
    }

    /// Every step the cell ran, replayed ones included.
    fn all_steps(&self) -> impl Iterator<Item = &StepRecord> {
        self.replayed.iter().chain(&self.steps)
    }

    /// Where a step's record goes: a mistake cell's replay of an earlier step is not its own.
    fn record(&mut self, step: StepRecord) {
        if self.id.mistake.is_some() && step.step.kind == StepKind::Step {
            self.replayed.push(step);
        } else {
            self.steps.push(step);
        }
    }
}

/// The whole run, built from events.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub cells: BTreeMap<CellId, CellRecord>,
    pub interrupted: bool,
    pub duration: Duration,
}

/// `record.json`, the form of a [`Record`] on disk: what `labcheck merge` reads back from the
/// report directories of shards.
#[derive(serde::Serialize, serde::Deserialize)]
struct RecordFile {
    cells: Vec<CellRecord>,
    interrupted: bool,
    duration: Duration,
}

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a labcheck record: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cell {cell} is in {path} and in an earlier report: shards must not overlap")]
    Twice { cell: CellId, path: PathBuf },
    #[error("{path} is not a labcheck record: {why}")]
    Refused { path: PathBuf, why: String },
}

/// The most a record a merge reads may hold.
const RECORD_LIMIT: u64 = 256 << 20;

/// Whether a name a record gives a cell can name a file of the report directory: one path
/// component, neither `.` nor `..`.
fn safe_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

impl Record {
    /// Reads the `record.json` a run wrote into `dir`.
    pub fn load(dir: &Path) -> Result<Record, MergeError> {
        let path = dir.join("record.json");
        let refused = |why: String| MergeError::Refused {
            path: path.clone(),
            why,
        };
        // A regular file of bounded size: never a FIFO or device to block on or read forever.
        let meta = std::fs::metadata(&path).map_err(|source| MergeError::Read {
            path: path.clone(),
            source,
        })?;
        if !meta.is_file() {
            return Err(refused("not a regular file".to_owned()));
        }
        if meta.len() > RECORD_LIMIT {
            return Err(refused(format!("over {} MiB", RECORD_LIMIT >> 20)));
        }
        let text = std::fs::read_to_string(&path).map_err(|source| MergeError::Read {
            path: path.clone(),
            source,
        })?;
        let file: RecordFile = serde_json::from_str(&text).map_err(|source| MergeError::Parse {
            path: path.clone(),
            source,
        })?;
        if let Some(c) = file
            .cells
            .iter()
            .find(|c| !safe_name(&c.id.lab) || !safe_name(&c.id.label))
        {
            return Err(refused(format!(
                "cell {:?} names a path, not a cell",
                c.id.slug()
            )));
        }
        Ok(Record {
            cells: file.cells.into_iter().map(|c| (c.id.clone(), c)).collect(),
            interrupted: file.interrupted,
            duration: file.duration,
        })
    }

    /// Adds the cells of `other` (another shard's run, read from `path`). A cell in both is an
    /// error: the shards overlapped.
    pub fn merge(&mut self, other: Record, path: &Path) -> Result<(), MergeError> {
        for (id, cell) in other.cells {
            if self.cells.contains_key(&id) {
                return Err(MergeError::Twice {
                    cell: id,
                    path: path.to_owned(),
                });
            }
            self.cells.insert(id, cell);
        }
        self.interrupted |= other.interrupted;
        self.duration = self.duration.max(other.duration);
        Ok(())
    }

    fn to_json(&self) -> String {
        let file = RecordFile {
            cells: self.cells.values().cloned().collect(),
            interrupted: self.interrupted,
            duration: self.duration,
        };
        serde_json::to_string(&file).unwrap_or_default()
    }

    /// Whether every cell passed and the run was not interrupted.
    pub fn passed(&self) -> bool {
        !self.interrupted && self.cells.values().all(|c| c.passed)
    }
}

impl CellRecord {
    /// A cell as the run planned it, before it starts.
    fn planned(id: &CellId, lab: &Lab, planned: &[usize]) -> CellRecord {
        CellRecord {
            id: id.clone(),
            lab: lab.clone(),
            planned: planned.to_vec(),
            tools: ToolsInfo::default(),
            setup: None,
            steps: Vec::new(),
            replayed: Vec::new(),
            finished: false,
            passed: false,
            kept: None,
            error: None,
            peak_memory: None,
            resumed: None,
            waited: Duration::ZERO,
        }
    }
}

/// The record as a run's reporter: each event folded in as it comes.
impl crate::model::Reporter for std::cell::RefCell<Record> {
    fn report(&self, event: &Event) {
        self.borrow_mut().apply(event);
    }
}

impl Record {
    /// Folds one event into the record.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::RunStarted { cells } => {
                for (id, lab, planned) in cells {
                    let planned = CellRecord::planned(id, lab, planned);
                    self.cells.insert(id.clone(), planned);
                }
            }
            Event::CellStarted { .. } => {}
            Event::EnvironmentReady {
                cell,
                tools,
                setup,
                waited,
                resumed,
            } => {
                if let Some(c) = self.cells.get_mut(cell) {
                    c.tools = tools.clone();
                    c.setup = Some(*setup);
                    c.waited = *waited;
                    c.resumed = resumed.clone();
                }
            }
            Event::StepFinished {
                cell,
                step,
                outcome,
                duration,
                transcripts,
                checks,
                artifacts,
            } => {
                if let Some(c) = self.cells.get_mut(cell) {
                    c.record(StepRecord {
                        step: step.clone(),
                        outcome: outcome.clone(),
                        duration: *duration,
                        transcripts: transcripts.clone(),
                        checks: checks.clone(),
                        artifacts: artifacts.clone(),
                    });
                }
            }
            Event::CellFinished {
                cell,
                passed,
                kept,
                error,
                peak_memory,
            } => {
                if let Some(c) = self.cells.get_mut(cell)
                    && !c.finished
                {
                    c.finished = true;
                    c.passed = *passed;
                    c.kept = kept.clone();
                    c.error = error.as_ref().map(|e| e.to_string());
                    c.peak_memory = *peak_memory;
                }
            }
            Event::Captured { .. }
            | Event::ToolBuild { .. }
            | Event::CheckpointDiscarded { .. } => {}
            Event::RunFinished {
                interrupted,
                duration,
            } => {
                self.interrupted = *interrupted;
                self.duration = *duration;
                if *interrupted {
                    self.mark_unfinished("interrupted");
                }
            }
        }
    }

    /// `(passed, failed, not run)` over every step of every cell.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut counts = (0, 0, 0);
        for s in self.cells.values().flat_map(|c| &c.steps) {
            match s.outcome {
                Outcome::Passed => counts.0 += 1,
                Outcome::Failed { .. } | Outcome::Error { .. } => counts.1 += 1,
                Outcome::NotRun { .. } | Outcome::NotGraded { .. } => counts.2 += 1,
            }
        }
        counts
    }

    /// Steps that never reported are recorded as not run.
    fn mark_unfinished(&mut self, reason: &str) {
        for c in self.cells.values_mut() {
            let ran: Vec<usize> = c.all_steps().map(|s| s.step.line).collect();
            let missing: Vec<LabStep> = c
                .lab
                .steps
                .iter()
                .filter(|s| c.planned.contains(&s.line) && !ran.contains(&s.line))
                .cloned()
                .collect();
            for step in missing {
                c.record(StepRecord {
                    step,
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

    /// Writes JUnit, Markdown, HTML and `record.json` into `dir` and the transcripts of failed cells beside
    /// them. Returns the paths written.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        let files = [
            ("junit.xml", junit::render(self)),
            ("summary.md", summary::markdown(self)),
            ("report.html", summary::html(self)),
            ("record.json", self.to_json()),
            ("cucumber.json", cucumber_json::render(self)),
            ("messages.ndjson", messages::render(self)),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::write(&path, text)?;
            written.push(path);
        }
        for c in self.cells.values().filter(|c| !c.passed) {
            let cdir = dir.join(c.id.slug());
            std::fs::create_dir_all(&cdir)?;
            let path = cdir.join("transcript.txt");
            std::fs::write(&path, transcript_text(c))?;
            written.push(path);
        }
        Ok(written)
    }

    /// How a run ends: every report written into `dir` (the HTML page's path on stderr), GitHub's
    /// annotations and job summary when the run is a GitHub Actions step, and the Markdown
    /// summary with the counts on stdout. Returns whether the reports were written.
    pub fn publish(&self, dir: &Path) -> bool {
        let written = match self.write(dir) {
            Ok(paths) => {
                if let Some(html) = paths
                    .iter()
                    .find(|p| p.extension().is_some_and(|e| e == "html"))
                {
                    crate::errln!("labcheck: report {}", html.display());
                }
                true
            }
            Err(e) => {
                crate::errln!("labcheck: cannot write reports to {}: {e}", dir.display());
                false
            }
        };
        let markdown = summary::markdown(self);
        if github::active() {
            github::publish(self, &markdown);
        }
        crate::outln!("{markdown}");
        let (passed, failed, not_run) = self.counts();
        crate::outln!("{passed} passed, {failed} failed, {not_run} skipped");
        written
    }
}

/// The scenario of `feature` that a recorded step ran (by its line), and the Gherkin steps it ran
/// in order: the Background's (the Feature's, then its Rule's), then its own.
pub fn gherkin_steps<'f>(
    feature: &'f cucumber::gherkin::Feature,
    s: &StepRecord,
) -> Option<(
    &'f cucumber::gherkin::Scenario,
    Vec<&'f cucumber::gherkin::Step>,
)> {
    let scenario = crate::lint::scenarios_in_order(feature)
        .into_iter()
        .find(|sc| sc.position.line == s.step.line)?;
    let rule_background = feature
        .rules
        .iter()
        .find(|r| {
            r.scenarios
                .iter()
                .any(|x| x.position.line == scenario.position.line)
        })
        .and_then(|r| r.background.as_ref());
    let steps = feature
        .background
        .iter()
        .chain(rule_background)
        .flat_map(|b| &b.steps)
        .chain(&scenario.steps)
        .collect();
    Some((scenario, steps))
}

/// How each of `steps` (a recorded step's Gherkin steps, in the order they ran) went: its
/// recorded verdict; without one (a record without verdicts), failed at the outcome's failing
/// line, skipped when the step did not run, passed otherwise. Every step after a failure is
/// skipped.
pub fn verdicts(s: &StepRecord, steps: &[&cucumber::gherkin::Step]) -> Vec<crate::model::Verdict> {
    use crate::model::Verdict;
    let ran = !matches!(
        s.outcome,
        Outcome::NotRun { .. } | Outcome::NotGraded { .. }
    );
    let failure = s.outcome.failure();
    let mut failed = false;
    steps
        .iter()
        .map(|st| {
            let line = st.position.line;
            let verdict = match s.checks.iter().find(|k| k.line == line) {
                _ if failed || !ran => Verdict::Skipped,
                Some(k) => k.verdict.clone(),
                None => match failure {
                    Some((l, fault)) if l == line => Verdict::Failed(fault.clone()),
                    _ => Verdict::Passed,
                },
            };
            failed |= matches!(verdict, Verdict::Failed(_));
            verdict
        })
        .collect()
}

pub use crate::render::esc;

/// A cell's transcripts, step by step.
pub fn transcript_text(c: &CellRecord) -> String {
    let mut out = format!("# {}\n", c.id);
    for s in &c.steps {
        out.push_str(&format!(
            "\n## {}. {} — {}\n",
            s.step.index,
            s.step.name,
            outcome_word(&s.outcome)
        ));
        if let Some((line, fault)) = s.outcome.failure() {
            out.push_str(&format!(
                "{}:{line}\n{}\n",
                c.lab.origin().display(),
                fault.render()
            ));
        }
        for t in &s.transcripts {
            out.push_str(&t.render());
        }
    }
    out
}

/// A one-word outcome.
pub fn outcome_word(o: &Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed { .. } => "FAILED",
        Outcome::Error { .. } => "CHECK ERROR",
        Outcome::NotRun { .. } => "not run",
        Outcome::NotGraded { .. } => "not graded",
    }
}

/// The stable name of a step in a cell: `<lab> › <step> [<label>]`.
pub fn test_name(c: &CellRecord, s: &StepRecord) -> String {
    let label = if c.id.label == "-" {
        String::new()
    } else {
        format!(" [istio {}]", c.id.label)
    };
    format!("{} › {}{label}", c.lab.name, s.step.name)
}

/// A grade's result, step by step, in the lab's language.
pub fn grade_text(record: &Record) -> String {
    use crate::model::Lang;
    let mut out = String::new();
    for c in record.cells.values() {
        let lang = c.lab.lang;
        out.push_str(&format!("{}\n", c.lab.name));
        let mut steps: Vec<&StepRecord> = c.steps.iter().collect();
        steps.sort_by_key(|s| s.step.index);
        for s in steps {
            let word = lang.pick("Step", "ステップ");
            match &s.outcome {
                Outcome::Passed => out.push_str(&format!(
                    "  ✔ {word} {}: {} — {}\n",
                    s.step.index,
                    s.step.name,
                    lang.pick("pass", "合格")
                )),
                Outcome::Failed { line, fault } | Outcome::Error { line, fault } => {
                    let verdict = if matches!(s.outcome, Outcome::Error { .. }) {
                        lang.pick("check error", "チェックエラー")
                    } else {
                        lang.pick("not yet", "不合格")
                    };
                    out.push_str(&format!(
                        "  ✘ {word} {}: {} — {verdict} ({}:{line})\n",
                        s.step.index,
                        s.step.name,
                        c.lab.origin().display()
                    ));
                    for l in fault.render().lines() {
                        out.push_str(&format!("      {l}\n"));
                    }
                }
                Outcome::NotRun { reason } => out.push_str(&format!(
                    "  - {word} {}: {} ({reason})\n",
                    s.step.index, s.step.name
                )),
                Outcome::NotGraded { reason } => out.push_str(&format!(
                    "  - {word} {}: {} — {} ({reason})\n",
                    s.step.index,
                    s.step.name,
                    lang.pick("not graded", "採点できない")
                )),
            }
        }
        let (passed, total) = (
            c.steps.iter().filter(|s| s.outcome.is_pass()).count(),
            c.steps.len(),
        );
        out.push_str(&match lang {
            Lang::En => format!("{passed} of {total} steps pass\n"),
            Lang::Ja => format!("{total} ステップ中 {passed} ステップ合格\n"),
        });
    }
    out
}
