//! The vocabulary of a run, with no I/O: a [`Lab`] and its steps as parsed from a feature file,
//! the [`CellId`] of one lab run, the [`Transcript`] of a learner command, step [`Outcome`]s and the
//! [`Event`]s that are the one interface between running and reporting.

use std::path::PathBuf;
use std::time::Duration;

mod fault;
pub use fault::{Message, StepFault, expected_found};

/// The language a lab is written in; checks speak it in their messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Lang {
    #[default]
    En,
    Ja,
}

impl Lang {
    /// The Gherkin language code (`# language: ja`).
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
        }
    }

    /// Picks the text for this language.
    pub fn pick<'a>(self, en: &'a str, ja: &'a str) -> &'a str {
        match self {
            Lang::En => en,
            Lang::Ja => ja,
        }
    }
}

/// What a scenario is in a lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StepKind {
    /// A lab step: the reference solution and its checks.
    Step,
    /// A known wrong answer that named checks must reject; runs in a cell of its own.
    Mistake,
}

/// One scenario of a lab, as the runner and the reports see it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LabStep {
    /// For a step, its number in the lab (1-based, file order, mistakes not counted); for a
    /// mistake, the number of the step it gets wrong (the step just before it).
    pub index: usize,
    pub name: String,
    pub line: usize,
    pub tags: Vec<String>,
    pub kind: StepKind,
}

/// A cell's limits. Defaults hold the labs here (a local cluster's apiserver and etcd, istioctl),
/// with room; a Feature tag changes them (`@memory=8GiB`, `@pids=8192`, `@cpus=1.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Bytes of memory, page cache and tmpfs files included.
    pub memory: u64,
    /// Processes and threads.
    pub pids: u64,
    /// CPU time per wall-clock time, in thousandths of a CPU (1500: one and a half CPUs).
    #[serde(default = "default_millicpus")]
    pub millicpus: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory: 4 << 30,
            pids: 4096,
            millicpus: default_millicpus(),
        }
    }
}

/// Every CPU of the machine but half of one (at least half a CPU): a cell that spins on every
/// core still leaves the machine usable.
fn default_millicpus() -> u64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    (cpus * 1000).saturating_sub(500).max(500)
}

/// One lab: a feature file.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Lab {
    pub path: PathBuf,
    pub name: String,
    pub lang: Lang,
    pub steps: Vec<LabStep>,
    /// Where the lab came from when `path` is a derived copy (a mutant): fixtures resolve from
    /// there, and reports point there.
    pub source: Option<PathBuf>,
    /// Its cells' memory and pids limits.
    pub limits: Limits,
    /// The name of its cells: the file stem, or more of its path when two labs of a run share
    /// a stem.
    pub id: String,
    /// The feature file's text as it was linted: checkpoint keys, reports, mutation and the
    /// learner's page read it from here, never from the file again (an edit during a run changes
    /// nothing the run does). Records carry it, so `labcheck merge` reads no feature file.
    #[serde(default)]
    pub text: String,
    /// The parsed feature, handed to cucumber as it is; absent in a record read back from disk
    /// (see [`Lab::feature`]).
    #[serde(skip)]
    pub parsed: Option<std::sync::Arc<cucumber::gherkin::Feature>>,
}

impl Lab {
    /// The feature file the lab was written in.
    pub fn origin(&self) -> &std::path::Path {
        self.source.as_deref().unwrap_or(&self.path)
    }

    /// The parsed feature: as linted, or parsed again from [`Lab::text`] for a record read
    /// back from disk.
    pub fn feature(&self) -> Option<std::sync::Arc<cucumber::gherkin::Feature>> {
        self.parsed.clone().or_else(|| {
            cucumber::gherkin::Feature::parse(&self.text, cucumber::gherkin::GherkinEnv::default())
                .ok()
                .map(|mut f| {
                    f.path = Some(self.path.clone());
                    std::sync::Arc::new(f)
                })
        })
    }

    /// The short name used in cell ids and directories.
    pub fn slug(&self) -> String {
        self.id.clone()
    }
}

/// What joins an upgrade cell's two Istio versions in its label, older first: `1.30→1.31`.
pub const UPGRADE: char = '→';

/// The Istio versions of a matrix label: the one of a version's cell, or an upgrade cell's two,
/// older first.
pub fn label_versions(label: &str) -> Vec<&str> {
    label.split(UPGRADE).collect()
}

/// An upgrade lab's labels: one per adjacent pair of the matrix's versions, ordered by version
/// number, older → newer (`1.30→1.31`).
pub fn upgrade_pairs(labels: &[String]) -> Vec<String> {
    let mut sorted: Vec<&String> = labels.iter().collect();
    sorted.sort_by(|a, b| version_order(a, b));
    sorted.dedup();
    sorted
        .windows(2)
        .map(|w| format!("{}{UPGRADE}{}", w[0], w[1]))
        .collect()
}

/// Orders version labels by their dot-separated numbers (`1.9` before `1.10`); a part that is
/// not a number compares as text.
fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |s: &str| -> Vec<(u64, String)> {
        s.split(['.', '-'])
            .map(|p| (p.parse().unwrap_or(u64::MAX), p.to_owned()))
            .collect()
    };
    parts(a).cmp(&parts(b))
}

/// Identifies one cell: a lab (or one of its mistake scenarios) on one point of the matrix.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct CellId {
    pub lab: String,
    /// The matrix label, e.g. the Istio version `1.31`; `-` when the lab needs none.
    pub label: String,
    /// Set (to the mistake scenario's line) for a cell that replays a lab up to one mistake.
    pub mistake: Option<usize>,
}

impl CellId {
    /// A name safe for directories and the command line.
    pub fn slug(&self) -> String {
        let mut s = self.lab.clone();
        if self.label != "-" {
            let label = self.label.replace('.', "-").replace(UPGRADE, "-to-");
            s.push_str(&format!("-{label}"));
        }
        if let Some(m) = self.mistake {
            s.push_str(&format!("-mistake-l{m}"));
        }
        s
    }
}

impl std::fmt::Display for CellId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.lab, self.label)?;
        if let Some(m) = self.mistake {
            write!(f, " (mistake at line {m})")?;
        }
        Ok(())
    }
}

/// What a learner command did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Transcript {
    pub script: String,
    pub stdout: String,
    pub stderr: String,
    /// `None` when the command was killed (timeout or signal).
    pub exit_code: Option<i32>,
    pub duration: Duration,
    pub timed_out: bool,
    /// The command printed more than [`Transcript::OUTPUT_LIMIT`] on a stream: the rest was cut.
    pub truncated: bool,
    /// Which try this was, when the step runs its commands again until its checks pass.
    #[serde(default)]
    pub attempt: Option<Attempt>,
}

/// One try of a step whose commands run again until its checks pass.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attempt {
    /// 1 for the first run.
    pub number: u32,
    /// How long the step may keep trying.
    pub until: Duration,
}

impl Transcript {
    /// How much of each stream a transcript keeps.
    pub const OUTPUT_LIMIT: usize = 4 << 20;

    /// The note a reader of a cut output gets.
    pub fn truncation_note(&self) -> Option<String> {
        self.truncated.then(|| {
            format!(
                "(output cut: the command printed more than {} MiB on a stream; only the first {} MiB were kept)",
                Self::OUTPUT_LIMIT >> 20,
                Self::OUTPUT_LIMIT >> 20
            )
        })
    }

    /// How many tries a step took, when it ran its commands again until its checks passed
    /// (`None` for a step that runs them once, or that took one try).
    pub fn tries(transcripts: &[Transcript]) -> Option<u32> {
        let last = transcripts
            .iter()
            .filter_map(|t| t.attempt)
            .map(|a| a.number)
            .max()?;
        (last > 1).then_some(last)
    }

    /// The transcript as text a person reads: the script, its output and how it ended.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(a) = self.attempt {
            out.push_str(&format!(
                "--- try {} (run again until the step's checks pass, up to {} s)\n",
                a.number,
                a.until.as_secs()
            ));
        }
        for line in self.script.lines() {
            out.push_str(&format!("$ {line}\n"));
        }
        if !self.stdout.is_empty() {
            out.push_str("--- stdout\n");
            out.push_str(&self.stdout);
            if !self.stdout.ends_with('\n') {
                out.push('\n');
            }
        }
        if !self.stderr.is_empty() {
            out.push_str("--- stderr\n");
            out.push_str(&self.stderr);
            if !self.stderr.ends_with('\n') {
                out.push('\n');
            }
        }
        if let Some(note) = self.truncation_note() {
            out.push_str(&format!("--- {note}\n"));
        }
        let how = match (self.timed_out, self.exit_code) {
            (true, _) => "timed out, process group killed".to_owned(),
            (false, Some(c)) => format!("exit {c}"),
            (false, None) => "killed by a signal".to_owned(),
        };
        out.push_str(&format!(
            "--- {how} after {:.2}s\n",
            self.duration.as_secs_f64()
        ));
        out
    }
}

/// How one lab step ended in one cell.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Passed,
    /// A check or command failed: `line` is the feature line of the failing Gherkin step.
    Failed {
        line: usize,
        fault: StepFault,
    },
    /// A check could not be evaluated (a harness error, never a verdict): `line` is the
    /// feature line of the Gherkin step that made it.
    Error {
        line: usize,
        fault: StepFault,
    },
    /// Grading only: none of the step's checks could be evaluated without the learner's
    /// commands, so the step is not a pass.
    NotGraded {
        reason: String,
    },
    /// Not run because an earlier step of the lab failed, or the run was interrupted.
    NotRun {
        reason: String,
    },
}

impl Outcome {
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Passed)
    }

    /// The feature line and fault of a failed step or a check error.
    pub fn failure(&self) -> Option<(usize, &StepFault)> {
        match self {
            Outcome::Failed { line, fault } | Outcome::Error { line, fault } => {
                Some((*line, fault))
            }
            _ => None,
        }
    }
}

/// A text file the learner's commands left in a lab directory during one step (new or changed),
/// as the report compares it across versions.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Artifact {
    pub path: PathBuf,
    pub text: String,
}

/// One Gherkin step of a scenario (a command, a check, a preparation) and how it went.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepCheck {
    pub line: usize,
    /// The keyword and text, as written.
    pub text: String,
    pub verdict: Verdict,
    /// A check a mistake lists (a line of its docstring), not a Gherkin step: `Failed` is this
    /// check rejecting the wrong answer (with what it expected and found), `Passed` is it
    /// letting the wrong answer through.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listed: bool,
}

impl StepCheck {
    /// What a check a mistake lists made of the wrong answer, for people.
    pub fn rejection(&self, lang: Lang) -> String {
        match &self.verdict {
            Verdict::Failed(why) => format!(
                "{} {}: {}\n{}",
                lang.pick("line", "行"),
                self.line,
                lang.pick("rejects it", "不合格にする"),
                why.render()
            ),
            Verdict::Passed => format!(
                "{} {}: {}",
                lang.pick("line", "行"),
                self.line,
                lang.pick("does NOT reject it", "不合格にしない")
            ),
            Verdict::Skipped => format!(
                "{} {}: {}",
                lang.pick("line", "行"),
                self.line,
                lang.pick("not evaluated", "評価していない")
            ),
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    Passed,
    Failed(StepFault),
    /// Not evaluated: an earlier step of the scenario failed.
    Skipped,
}

/// A cell that started from a checkpoint instead of running the steps before.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resumed {
    /// The step (its number in the lab) the checkpoint follows.
    pub after_step: usize,
    /// How long copying the checkpoint's files and cluster state took.
    pub restore: Duration,
    /// The learner-command time of the slowest step the checkpoint covers.
    #[serde(default)]
    pub slowest: Duration,
    /// Why the first start from the checkpoint failed, when its cluster did not come back and
    /// the cell was started from it again.
    #[serde(default)]
    pub again: Option<String>,
}

/// The toolchain a cell ran with, as shown in reports.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolsInfo {
    /// `(tool, version, source)` rows.
    pub tools: Vec<(String, String, String)>,
}

/// How a tool build is going (`labcheck tools install`, or a run building what it lacks).
#[derive(Clone, Debug)]
pub enum BuildPhase {
    /// Begun; `steps` says what it runs (`go mod tidy, go build`, `pip download`).
    Started {
        steps: &'static str,
    },
    /// The go command now running (`go mod tidy`, `go build`).
    Step(&'static str),
    /// Still building, for logs that show no spinner (every 10 s).
    Alive {
        elapsed: Duration,
        step: &'static str,
    },
    Finished {
        ok: bool,
        took: Duration,
    },
}

/// A harness fault that stopped a cell (the runner's typed error, as an error object): writers
/// turn it into text, others may look at what it is.
pub type HarnessFault = std::sync::Arc<dyn std::error::Error + Send + Sync>;

/// A consumer of a stream of events, each by reference in the order it happened — one interface
/// for every reporter: of a run's [`Event`]s (and the toolchain's builds) the console, the record,
/// the live display, the build view and mutate's collectors; of a mutation session's events
/// (`mutate::console::Said`) its console. A closure over `&E` is one too.
pub trait Reporter<E: ?Sized = Event> {
    fn report(&self, event: &E);
}

impl<E: ?Sized, F: Fn(&E)> Reporter<E> for F {
    fn report(&self, event: &E) {
        self(event)
    }
}

/// Where the toolchain's events go: from whatever thread its builds run on.
pub type BuildSink = std::sync::Arc<dyn Reporter + Send + Sync>;

/// Everything the runner (and the toolchain, while it builds) tells the reporters. Sinks match
/// every variant.
#[derive(Clone, Debug)]
pub enum Event {
    /// A tool being built from its Go module: `what` names the tool, version and module.
    ToolBuild {
        what: String,
        phase: BuildPhase,
    },
    /// Every cell of the run, with its lab and the lines of the scenarios it will run.
    RunStarted {
        cells: Vec<(CellId, Lab, Vec<usize>)>,
    },
    CellStarted {
        cell: CellId,
    },
    /// A checkpoint on disk that no longer matched its manifest: removed, not used; the cells
    /// that would have started from it replay the steps before.
    CheckpointDiscarded {
        lab: PathBuf,
        /// The line of the step it follows.
        line: usize,
        reason: String,
    },
    EnvironmentReady {
        cell: CellId,
        tools: ToolsInfo,
        /// How long its sandbox and cluster took to start.
        setup: Duration,
        /// How long the cell, once its turn came, waited for them (none when they started
        /// ahead of its turn).
        waited: Duration,
        /// The checkpoint it started from, if any.
        resumed: Option<Resumed>,
    },
    StepFinished {
        cell: CellId,
        step: LabStep,
        outcome: Outcome,
        duration: Duration,
        transcripts: Vec<Transcript>,
        /// Each Gherkin step of the scenario (its Background's included) and how it went.
        checks: Vec<StepCheck>,
        /// What the step left in the lab's directories.
        artifacts: Vec<Artifact>,
    },
    /// Files a cell's sandbox held at the end of its run (those the run asked for that exist).
    Captured {
        cell: CellId,
        files: Vec<(PathBuf, Vec<u8>)>,
    },
    CellFinished {
        cell: CellId,
        passed: bool,
        kept: Option<PathBuf>,
        error: Option<HarnessFault>,
        /// The most memory the cell used at once, in bytes, when the kernel tells.
        peak_memory: Option<u64>,
    },
    RunFinished {
        interrupted: bool,
        duration: Duration,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrade_pairs_are_adjacent_versions_older_first() {
        let labels = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(upgrade_pairs(&labels(&["1.31", "1.30"])), ["1.30→1.31"]);
        assert_eq!(
            upgrade_pairs(&labels(&["1.10", "1.9", "1.11"])),
            ["1.9→1.10", "1.10→1.11"]
        );
        assert!(upgrade_pairs(&labels(&["1.31"])).is_empty());
        assert_eq!(label_versions("1.30→1.31"), ["1.30", "1.31"]);
        assert_eq!(label_versions("1.31"), ["1.31"]);
        let id = CellId {
            lab: "upgrade".into(),
            label: "1.30→1.31".into(),
            mistake: None,
        };
        assert_eq!(id.slug(), "upgrade-1-30-to-1-31");
    }
}
