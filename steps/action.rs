//! What a Gherkin step is, once compiled: an [`Action`] — a preparation of the cell, the
//! learner's commands, a mistake's list of checks that must reject it, or one [`Check`]. Pure
//! data: it says what to do, [`super::world`] does it, and lint only builds and validates it.

use std::path::PathBuf;
use std::time::Duration;

use crate::checks::{self, CheckError, ClusterCheck, OracleCheck};
use crate::model::Lang;
use crate::sandbox::Shell;

/// One step of a lab, compiled.
#[derive(Clone, Debug)]
pub enum Action {
    /// A lab directory: created in the cell; commands start in the first one.
    LabDirectory(PathBuf),
    /// A fixture of the repository (`src`, relative to the lab) copied to `dst` in the cell.
    Fixture { src: PathBuf, dst: PathBuf },
    /// One of the cell's Istio versions placed at the path as a learner's unpacked release has
    /// it: `samples/` and `manifests/` of its module, `bin/istioctl`.
    IstioRelease(Release, PathBuf),
    /// The learner's commands.
    Run(Commands),
    /// A mistake scenario: each listed check (a Then phrase, as the lab's steps write it) must
    /// fail on the mistake's environment.
    Reject(Vec<String>),
    /// One check of the environment or of the last command.
    Check(Check),
    /// A check that may take a while to hold (`… within 30 seconds`): evaluated until it passes
    /// or the time is up, as controllers and istiod converge after a command returns.
    Eventually(Check, Duration),
}

/// Which of the cell's Istio versions a release step unpacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// The cell's version (a lab of one Istio version at a time).
    Cell,
    /// An upgrade cell's older version, the one it upgrades from.
    From,
    /// An upgrade cell's newer version, the one it upgrades to.
    To,
}

/// A step's learner commands: run by bash in the cell as the next commands of the learner's
/// terminal session ([`Shell::Continued`]) or in a new terminal ([`Shell::New`]); with `until`,
/// run again, as a learner re-sends a request after applying a policy, until the scenario's
/// checks pass or that long has passed.
#[derive(Clone, Debug)]
pub struct Commands {
    pub script: String,
    pub shell: Shell,
    pub until: Option<Duration>,
}

/// A check of any kind: on files and the last command, on the cluster, or against the output of
/// the grader's own run of a command.
#[derive(Clone, Debug)]
pub enum Check {
    Local(checks::Check),
    Cluster(ClusterCheck),
    Oracle(OracleCheck),
}

impl Check {
    /// Whether the check looks at the last learner command rather than the environment.
    pub fn is_about_command(&self) -> bool {
        matches!(self, Check::Local(c) if c.is_about_command())
    }

    /// Validates what can be known without an environment: paths, queries, commands.
    pub fn validate(&self) -> Result<(), CheckError> {
        match self {
            Check::Local(c) => c.validate(),
            Check::Cluster(c) => c.validate(),
            Check::Oracle(c) => c.validate(),
        }
    }
}

impl Action {
    /// Validates the action as lint would: lab paths are absolute and normal, checks compile,
    /// docstrings hold something. The fixture's source is looked for by lint, not here (that
    /// needs the file system).
    pub fn validate(&self, lang: Lang) -> Result<(), String> {
        match self {
            Action::LabDirectory(dir) => checks::lab_path(dir).map_err(|e| e.render(lang)),
            Action::Fixture { dst, .. } | Action::IstioRelease(_, dst) => {
                checks::lab_path(dst).map_err(|e| e.render(lang))
            }
            Action::Run(c) if c.script.trim().is_empty() => Err(lang
                .pick(
                    "the step has no commands (a docstring)",
                    "コマンド(ドキュメント文字列)がない",
                )
                .to_owned()),
            Action::Run(Commands {
                until: Some(wait), ..
            }) if out_of_range(*wait) => Err(wait_range(lang)),
            Action::Run(_) => Ok(()),
            Action::Reject(listed) if listed.is_empty() => Err(lang
                .pick("no checks listed", "チェックが列挙されていない")
                .to_owned()),
            Action::Reject(_) => Ok(()),
            Action::Check(check) => check.validate().map_err(|e| e.render(lang)),
            Action::Eventually(check, _) if check.is_about_command() => Err(lang
                .pick(
                    "a check on a finished command cannot change: it needs no \"within\"",
                    "終わったコマンドについてのチェックは変わらない: 「以内に」は要らない",
                )
                .to_owned()),
            Action::Eventually(_, wait) if out_of_range(*wait) => Err(wait_range(lang)),
            Action::Eventually(check, _) => check.validate().map_err(|e| e.render(lang)),
        }
    }

    /// The check the action makes, if it is one (waiting or not).
    pub fn check(&self) -> Option<&Check> {
        match self {
            Action::Check(check) | Action::Eventually(check, _) => Some(check),
            _ => None,
        }
    }
}

/// The longest a check may wait to hold, and a step's commands be run again.
pub const MAX_WAIT: Duration = Duration::from_secs(600);

/// Whether a wait is not 1 s to [`MAX_WAIT`].
fn out_of_range(wait: Duration) -> bool {
    wait.is_zero() || wait > MAX_WAIT
}

/// What a wait out of range is told.
fn wait_range(lang: Lang) -> String {
    format!(
        "{} {}s",
        lang.pick("a wait must be 1 to", "待ち時間は 1 から"),
        MAX_WAIT.as_secs()
    )
}

/// The checks a docstring lists — its non-blank lines that are not comments — with their
/// index among the docstring's lines.
fn listed(docstring: &str) -> impl Iterator<Item = (usize, &str)> {
    docstring
        .lines()
        .map(str::trim)
        .enumerate()
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// The checks a mistake's step lists, with the feature line each is written on.
pub fn listed_with_lines(step: &cucumber::gherkin::Step) -> Vec<(usize, String)> {
    let Some(doc) = &step.docstring else {
        return Vec::new();
    };
    // The docstring's text starts on the line after its opening `"""`; the parser keeps the
    // newline that ends that line.
    let first = step.position.line + if doc.starts_with('\n') { 1 } else { 2 };
    listed(doc)
        .map(|(i, l)| (first + i, l.to_owned()))
        .collect()
}

/// The checks a mistake scenario's docstring lists.
pub fn listed_checks(docstring: &str) -> Vec<String> {
    listed(docstring).map(|(_, l)| l.to_owned()).collect()
}
