//! [`LabWorld`]: the state of one scenario — its cell, its last learner command, the checks it
//! declares (for discrimination) — and how a compiled step's [`Action`] is carried out in it.
//! A step that does not pass ends with a [`StepFault`]: a typed value, never text to read back.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cucumber::gherkin;

use super::action::{Action, Check, Commands};
use super::compile::Compiled;
use super::lab::CompiledLab;
use super::prepare;
use crate::cell::{Cell, DEFAULT_TIMEOUT};
use crate::checks::{CheckError, Env, Failure, Fault};
use crate::model::{Attempt, Lang, Message, StepCheck, StepFault, Transcript, Verdict};

/// How long a learner waits before running a step's commands again.
const RETRY_PAUSE: Duration = Duration::from_secs(1);
/// How many evaluations in a row a retried step's checks must pass to end its tries.
const SETTLED_IN_A_ROW: usize = 2;

/// What the scenario being run declares, captured by the runner's `before` hook.
#[derive(Clone, Debug, Default)]
pub struct ScenarioContext {
    pub feature: String,
    /// The lab's steps, compiled when it was linted.
    pub lab: Arc<CompiledLab>,
    /// The scenario's `Then` steps, evaluated before its commands run.
    pub checks: Vec<gherkin::Step>,
    pub timeout: Option<Duration>,
    pub discriminate: bool,
}

/// A check's fault as a step's: a verdict keeps what was expected and found (and the lab's
/// message for it), an error what could not be evaluated.
fn check_fault(fault: Fault, lang: Lang, message: Option<Message>) -> StepFault {
    match fault {
        Fault::Failed(f) => StepFault::Check {
            lang,
            expected: f.expected,
            found: f.found,
            message,
        },
        Fault::Error(e) => StepFault::CheckError {
            lang,
            error: e.to_string(),
        },
    }
}

fn harness(text: String) -> StepFault {
    StepFault::Harness { text }
}

fn step_fault(text: String) -> StepFault {
    StepFault::Step { text }
}

/// What a scenario's steps leave for its report: the learner commands' transcripts, how the
/// checks a mistake lists judged it (by the mistake step's line), and what grading made of its
/// checks. The runner takes it from the world when the scenario ends.
#[derive(Debug, Default)]
pub struct Notes {
    pub transcripts: Vec<Transcript>,
    pub listed: Vec<(usize, Vec<StepCheck>)>,
    pub tally: Tally,
}

/// What grading made of a scenario's checks.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub graded: usize,
    pub not_graded: Vec<String>,
}

impl Tally {
    /// Counts a check's evaluation: `None` is a check grading cannot evaluate (on the learner's
    /// command: no command runs when grading).
    fn count<T>(&mut self, result: &Option<T>, lang: Lang) {
        match result {
            Some(_) => self.graded += 1,
            None => self.not_graded.push(
                lang.pick(
                    "a check on the learner's command (no command runs when grading)",
                    "学習者のコマンドについてのチェック(採点ではコマンドを実行しない)",
                )
                .to_owned(),
            ),
        }
    }
}

#[derive(Debug, Default, cucumber::World)]
pub struct LabWorld {
    pub cell: Option<Arc<Cell>>,
    pub scenario: ScenarioContext,
    pub last: Option<Transcript>,
    /// What the scenario's steps leave for its report.
    pub notes: Notes,
    discriminated: bool,
}

impl LabWorld {
    /// The cell; a step run outside a cell is a harness fault.
    pub fn cell(&self) -> Result<Arc<Cell>, StepFault> {
        self.cell
            .clone()
            .ok_or_else(|| harness("labcheck: step run outside a cell".to_owned()))
    }

    /// The timeout for learner commands of this scenario.
    pub fn timeout(&self) -> Duration {
        self.cell
            .as_ref()
            .and_then(|c| c.timeout)
            .or(self.scenario.timeout)
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// Carries out a step's action, as lint compiled it.
    pub async fn execute(&mut self, step: &gherkin::Step) -> Result<(), StepFault> {
        let lab = self.scenario.lab.clone();
        let Compiled { action, lang, .. } = lab
            .step(step.position.line)
            .map_err(|e| step_fault(e.to_string()))?;
        let (cell, lang) = (self.cell()?, *lang);
        match action {
            Action::LabDirectory(dir) => prepare::lab_directory(&cell, lang, dir),
            Action::Fixture { src, dst } => prepare::fixture(&cell, lang, src, dst),
            Action::IstioRelease(which, dst) => prepare::istio_release(&cell, lang, *which, dst),
            Action::Run(commands) => self.run(&cell, lang, commands).await,
            Action::Reject(_) => self.reject(&cell, lang, step).await,
            Action::Check(check) => {
                let result = evaluate(&cell, check, lang, self.last.as_ref(), self.timeout()).await;
                self.notes.tally.count(&result, lang);
                match result {
                    None | Some(Ok(())) => Ok(()),
                    Some(Err(fault)) => Err(failed(&lab, &cell, step, fault, lang)),
                }
            }
            Action::Eventually(check, wait) => {
                let last = self.last.as_ref();
                let result = evaluate_within(&cell, check, lang, last, self.timeout(), *wait).await;
                self.notes.tally.count(&result, lang);
                match result {
                    None | Some(Ok(())) => Ok(()),
                    Some(Err(fault)) => Err(failed(&lab, &cell, step, fault, lang)),
                }
            }
        }
    }

    /// The learner's commands: discrimination first, then the commands, for real — again, a
    /// second apart, while the step says so and its checks do not pass yet.
    async fn run(&mut self, cell: &Cell, lang: Lang, commands: &Commands) -> Result<(), StepFault> {
        if cell.grading {
            return Ok(());
        }
        self.discriminate(cell, lang).await?;
        let deadline = commands.until.map(|wait| Instant::now() + wait);
        let checks = if deadline.is_some() {
            compiled_checks(&self.scenario.lab, &self.scenario.checks)
        } else {
            Vec::new()
        };
        let mut number = 0;
        loop {
            number += 1;
            let mut transcript = crate::sandbox::run_learner(
                &cell.sandbox,
                &commands.script,
                commands.shell,
                self.timeout(),
            )
            .await
            .map_err(|e| {
                harness(format!(
                    "labcheck: cannot start bash in the cell {}: {e}",
                    cell.id
                ))
            })?;
            transcript.attempt = commands.until.map(|until| Attempt { number, until });
            self.notes.transcripts.push(transcript.clone());
            let timed_out = transcript.timed_out;
            self.last = Some(transcript);
            if timed_out {
                return Err(StepFault::Timeout {
                    lang,
                    after: self.timeout(),
                });
            }
            let Some(deadline) = deadline else {
                return Ok(());
            };
            if self.settled(cell, &checks).await {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            tokio::time::sleep(RETRY_PAUSE.min(deadline - now)).await;
        }
    }

    /// Whether the scenario's checks are settled after a try: each passes in two evaluations in
    /// a row, or one cannot be evaluated (trying again would not make it a verdict; the checks
    /// report it as an error). Twice, because a proxy that took a new policy still serves the
    /// connections it accepted before under the old one until they drain: one grader's request
    /// can be refused on a new connection and the next answered on an old one.
    async fn settled(&self, cell: &Cell, checks: &[(&gherkin::Step, &Check, Lang)]) -> bool {
        for _ in 0..SETTLED_IN_A_ROW {
            for (_, check, lang) in checks {
                let result = evaluate(cell, check, *lang, self.last.as_ref(), self.timeout()).await;
                if let Some(Err(Fault::Failed(_))) = result {
                    return false;
                }
            }
        }
        true
    }

    /// A mistake scenario: every listed check must fail on the mistake's environment (command
    /// checks look at the mistake's own commands).
    async fn reject(
        &mut self,
        cell: &Cell,
        lang: Lang,
        step: &gherkin::Step,
    ) -> Result<(), StepFault> {
        let (last, timeout) = (self.last.as_ref(), self.timeout());
        let mut verdicts = Vec::new();
        for listed in self.scenario.lab.listed(step.position.line) {
            let (line, written) = (listed.line, &listed.written);
            let (_, compiled) = listed
                .check
                .as_ref()
                .map_err(|e| step_fault(format!("{written}: {}", e.render(lang))))?;
            // A reference shows the check it stands for.
            let text = listed.shown();
            let compiled = compiled
                .as_ref()
                .map_err(|e| step_fault(format!("{text}: {e}")))?;
            let check_lang = compiled.lang;
            let result = match &compiled.action {
                Action::Check(check) => evaluate(cell, check, check_lang, last, timeout).await,
                Action::Eventually(check, wait) => {
                    evaluate_within(cell, check, check_lang, last, timeout, *wait).await
                }
                _ => {
                    return Err(step_fault(format!(
                        "{text}: {}",
                        lang.pick("not a check", "チェックではない")
                    )));
                }
            };
            self.notes.tally.count(&result, check_lang);
            let verdict = match result {
                // A check that could not be evaluated rejects nothing: a harness error.
                Some(Err(fault @ Fault::Error(_))) => {
                    return Err(check_fault(fault, check_lang, None));
                }
                Some(Err(fault @ Fault::Failed(_))) => {
                    Verdict::Failed(check_fault(fault, check_lang, None))
                }
                None | Some(Ok(())) => Verdict::Passed,
            };
            verdicts.push(StepCheck {
                line,
                text,
                verdict,
                listed: true,
            });
        }
        let accepted: Vec<String> = verdicts
            .iter()
            .filter(|c| c.verdict == Verdict::Passed)
            .map(|c| c.text.clone())
            .collect();
        self.notes.listed.push((step.position.line, verdicts));
        if accepted.is_empty() {
            return Ok(());
        }
        Err(StepFault::NotRejected {
            lang,
            checks: accepted,
        })
    }

    /// Discrimination: before the scenario's first learner command, at least one of its checks on
    /// the environment must fail or be unable to evaluate yet, or the step grades nothing.
    async fn discriminate(&mut self, cell: &Cell, lang: Lang) -> Result<(), StepFault> {
        if std::mem::replace(&mut self.discriminated, true)
            || !(self.scenario.discriminate && cell.discrimination)
        {
            return Ok(());
        }
        let mut passing = Vec::new();
        let mut any_environment_check = false;
        // Before the step, a check that may wait is looked at once: it must not hold yet.
        for (step, check, check_lang) in compiled_checks(&self.scenario.lab, &self.scenario.checks)
        {
            if check.is_about_command() {
                continue;
            }
            let result = evaluate(cell, check, check_lang, None, self.timeout()).await;
            any_environment_check = true;
            // A check that cannot be evaluated yet (its grader's command fails, its kind or
            // object does not exist before the step) does not hold yet. It runs again after the
            // step, where an error is an error.
            if !matches!(result, None | Some(Ok(()))) {
                return Ok(());
            }
            passing.push(format!(
                "{}:{}: {}",
                self.scenario.feature, step.position.line, step.value
            ));
        }
        if !any_environment_check {
            return Ok(());
        }
        Err(StepFault::GradesNothing {
            lang,
            checks: passing,
        })
    }
}

/// A scenario's checks (its Then steps) as compiled (waiting ones included), each with its step
/// and language.
fn compiled_checks<'a>(
    lab: &'a CompiledLab,
    steps: &'a [gherkin::Step],
) -> Vec<(&'a gherkin::Step, &'a Check, Lang)> {
    steps
        .iter()
        .filter_map(|step| {
            let (check, lang) = lab.check(step.position.line)?;
            Some((step, check, lang))
        })
        .collect()
}

/// A check of `step` that did not pass, with the lab's message for it, if it has one.
fn failed(
    lab: &CompiledLab,
    cell: &Cell,
    step: &gherkin::Step,
    fault: Fault,
    lang: Lang,
) -> StepFault {
    let message = lab
        .names()
        .message_of(step.position.line)
        .map(|text| Message {
            text: text.to_owned(),
            for_learner: cell.grading,
        });
    check_fault(fault, lang, message)
}

/// Evaluates a check on the cell as it is now; `None` when grading cannot evaluate it (a check on
/// the learner's command: no command runs when grading).
pub async fn evaluate(
    cell: &Cell,
    check: &Check,
    lang: Lang,
    last: Option<&Transcript>,
    timeout: Duration,
) -> Option<Result<(), Fault>> {
    if cell.grading && check.is_about_command() {
        return None;
    }
    let read = |p: &std::path::Path| cell.sandbox.read(p);
    let env = Env { read: &read, last };
    Some(match check {
        Check::Local(check) => check.evaluate(&env, lang),
        Check::Cluster(check) => match cell.kube.clone() {
            None => Err(Fault::Error(CheckError::NoCluster)),
            Some(client) => check.evaluate(&client, &env, lang).await,
        },
        Check::Oracle(check) => match check.read(&env, lang) {
            Err(f) => Err(f),
            Ok(text) => {
                match crate::sandbox::run_script(&cell.sandbox, check.command(), timeout).await {
                    Err(e) => Err(Fault::Error(CheckError::Oracle {
                        command: check.command().to_owned(),
                        reason: format!("could not start bash: {e}"),
                    })),
                    Ok(run) => check.judge(&text, &run, lang),
                }
            }
        },
    })
}

/// Evaluates a check until it holds or `wait` is up, polling with backoff (0.1 s, doubling up to
/// 2 s). A check error ends the wait at once; on timeout, the last failure says how long it
/// waited.
pub async fn evaluate_within(
    cell: &Cell,
    check: &Check,
    lang: Lang,
    last: Option<&Transcript>,
    timeout: Duration,
    wait: Duration,
) -> Option<Result<(), Fault>> {
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(100);
    loop {
        let result = evaluate(cell, check, lang, last, timeout).await;
        let Some(Err(Fault::Failed(failure))) = result else {
            return result;
        };
        let now = Instant::now();
        if now >= deadline {
            let found = format!(
                "{} ({} {} s)",
                failure.found,
                lang.pick("still so after", "待っても変わらない:"),
                wait.as_secs()
            );
            return Some(Err(Fault::Failed(Failure::new(failure.expected, found))));
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}

/// Step definitions fail by panicking, as cucumber expects; cucumber silences the panic hook
/// while it runs, but several cells run cucumber at once and restore each other's hooks. This
/// hook stays quiet for panics raised by step definitions and reports every other panic as Rust
/// does. Installed at start and again after each cucumber run.
pub fn quiet_step_panics() {
    type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync>;
    static DEFAULT: OnceLock<Hook> = OnceLock::new();
    DEFAULT.get_or_init(std::panic::take_hook);
    std::panic::set_hook(Box::new(|info| {
        let from_step = info.payload().is::<StepFault>();
        if !from_step && let Some(default) = DEFAULT.get() {
            default(info);
        }
    }));
}

/// The text of a panic payload that is not a [`StepFault`] (a hook's, or a defect's).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else {
        "step panicked".to_owned()
    }
}
