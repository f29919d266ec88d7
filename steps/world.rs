//! [`LabWorld`]: the state of one scenario — its cell, its last learner command, the checks it
//! declares (for discrimination) — and the two modes in which a step runs without failing it:
//! probe mode (checks are evaluated and their results recorded) and lint mode (no cell: checks
//! and paths are only validated, so lint finds what would otherwise fail at run time).

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cucumber::gherkin;
use futures::FutureExt;

use crate::cell::{Cell, DEFAULT_TIMEOUT};
use crate::checks::{Check, CheckError, Env, Fault, OracleCheck};
use crate::cluster::checks::ClusterCheck;
use crate::model::{Lang, Transcript};

/// What the scenario being run declares, captured by the runner's `before` hook.
#[derive(Clone, Debug, Default)]
pub struct ScenarioContext {
    pub feature: String,
    /// The scenario's `Then` steps, evaluated before its commands run.
    pub checks: Vec<gherkin::Step>,
    pub timeout: Option<Duration>,
    pub discriminate: bool,
}

/// One check evaluated in probe mode.
#[derive(Clone, Debug)]
pub struct Probed {
    pub about_command: bool,
    pub result: Result<(), Fault>,
}

#[derive(Debug, Default, cucumber::World)]
pub struct LabWorld {
    pub cell: Option<Arc<Cell>>,
    pub scenario: ScenarioContext,
    pub last: Option<Transcript>,
    probe: Option<Vec<Probed>>,
    probed: bool,
    /// Lint mode: no cell; handlers validate their arguments and checks instead of acting.
    pub linting: bool,
}

/// The step definitions, built once.
pub fn collection() -> &'static cucumber::step::Collection<LabWorld> {
    static STEPS: OnceLock<cucumber::step::Collection<LabWorld>> = OnceLock::new();
    STEPS.get_or_init(<LabWorld as cucumber::World>::collection)
}

impl LabWorld {
    /// The cell; a step run outside a cell is a harness fault.
    pub fn cell(&self) -> Result<Arc<Cell>, String> {
        self.cell
            .clone()
            .ok_or_else(|| "labcheck: step run outside a cell".to_owned())
    }

    /// The timeout for learner commands of this scenario.
    pub fn timeout(&self) -> Duration {
        self.cell
            .as_ref()
            .and_then(|c| c.timeout)
            .or(self.scenario.timeout)
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// Evaluates a check: fails the step with the learner-readable message, or in probe mode
    /// records the result and lets the step pass. In lint mode it only validates the check.
    pub fn check(&mut self, lang: Lang, check: Check) -> Result<(), String> {
        if self.linting {
            return check.validate().map_err(|e| e.render(lang));
        }
        let cell = self.cell()?;
        if cell.grading && check.is_about_command() {
            // Grading runs no learner command: there is no result to look at.
            cell.not_graded(lang.pick(
                "a check on the learner's command (no command runs when grading)",
                "学習者のコマンドについてのチェック(採点ではコマンドを実行しない)",
            ));
            return Ok(());
        }
        cell.graded();
        let read = |p: &std::path::Path| cell.sandbox.read(p);
        let env = Env {
            read: &read,
            last: self.last.as_ref(),
        };
        let result = check.evaluate(&env, lang);
        self.conclude(lang, &cell, check.is_about_command(), result)
    }

    /// Evaluates a cluster check, like [`LabWorld::check`].
    pub async fn check_cluster(&mut self, lang: Lang, check: ClusterCheck) -> Result<(), String> {
        if self.linting {
            return check.validate().map_err(|e| e.render(lang));
        }
        let cell = self.cell()?;
        cell.graded();
        let result = match cell.kube.clone() {
            None => Err(Fault::Error(CheckError::NoCluster)),
            Some(client) => {
                let read = |p: &std::path::Path| cell.sandbox.read(p);
                let env = Env {
                    read: &read,
                    last: self.last.as_ref(),
                };
                check.evaluate(&client, &env, lang).await
            }
        };
        self.conclude(lang, &cell, false, result)
    }

    /// Evaluates an oracle check: reads the learner's file, then runs the grader's command in
    /// the cell (with the scenario's timeout) and compares.
    pub async fn check_oracle(&mut self, lang: Lang, check: OracleCheck) -> Result<(), String> {
        if self.linting {
            return check.validate().map_err(|e| e.render(lang));
        }
        let cell = self.cell()?;
        cell.graded();
        let read = |p: &std::path::Path| cell.sandbox.read(p);
        let env = Env {
            read: &read,
            last: self.last.as_ref(),
        };
        let result = match check.read(&env, lang) {
            Err(f) => Err(f),
            Ok(text) => {
                match crate::sandbox::run_script(&cell.sandbox, check.command(), self.timeout())
                    .await
                {
                    Err(e) => Err(Fault::Error(CheckError::Oracle {
                        command: check.command().to_owned(),
                        reason: format!("could not start bash: {e}"),
                    })),
                    Ok(run) => check.judge(&text, &run, lang),
                }
            }
        };
        self.conclude(lang, &cell, false, result)
    }

    /// What a check's result does: in probe mode it is recorded; otherwise a failure fails the
    /// step, and an error fails it as a harness error (kept on the cell for the report).
    pub fn conclude(
        &mut self,
        lang: Lang,
        cell: &Cell,
        about_command: bool,
        result: Result<(), Fault>,
    ) -> Result<(), String> {
        if let Some(probe) = &mut self.probe {
            probe.push(Probed {
                about_command,
                result,
            });
            return Ok(());
        }
        match result {
            Ok(()) => Ok(()),
            Err(Fault::Failed(f)) => Err(f.render(lang)),
            Err(Fault::Error(e)) => {
                let message = e.render(lang);
                cell.check_error(e);
                Err(message)
            }
        }
    }

    /// Evaluates `step` (a `Then` step) in probe mode on the cell as it is now. Returns what the
    /// checks it makes found, or why it could not be evaluated.
    pub async fn probe(
        &self,
        step: &gherkin::Step,
        last: Option<Transcript>,
    ) -> Result<Vec<Probed>, String> {
        let found = collection().find(step).map_err(|e| e.to_string())?;
        let Some((step_fn, _, _, ctx)) = found else {
            return Err(format!("undefined step: {}", step.value));
        };
        let mut world = LabWorld {
            cell: self.cell.clone(),
            scenario: self.scenario.clone(),
            last,
            probe: Some(Vec::new()),
            probed: true,
            linting: false,
        };
        let outcome = AssertUnwindSafe(step_fn(&mut world, ctx))
            .catch_unwind()
            .await;
        if let Err(panic) = outcome {
            return Err(panic_message(&*panic));
        }
        Ok(world.probe.unwrap_or_default())
    }

    /// Discrimination: before the scenario's first learner command, at least one of its checks on
    /// the environment must fail, or the step grades nothing.
    pub async fn discriminate(&mut self, lang: Lang) -> Result<(), String> {
        if self.probed || self.probe.is_some() {
            return Ok(());
        }
        self.probed = true;
        let discriminate = self.scenario.discriminate && self.cell()?.discrimination;
        if !discriminate {
            return Ok(());
        }
        let mut passing = Vec::new();
        let mut any_environment_check = false;
        for step in self.scenario.checks.clone() {
            let probed = self.probe(&step, None).await?;
            self.raise_errors(lang, &probed)?;
            let env: Vec<&Probed> = probed.iter().filter(|p| !p.about_command).collect();
            if env.is_empty() {
                continue;
            }
            any_environment_check = true;
            if env.iter().all(|p| p.result.is_ok()) {
                passing.push(format!(
                    "{}:{}: {}",
                    self.scenario.feature, step.position.line, step.value
                ));
            } else {
                return Ok(());
            }
        }
        if !any_environment_check {
            return Ok(());
        }
        Err(format!(
            "{}\n  {}",
            lang.pick(
                "these checks already pass before the step (they grade nothing):",
                "次のチェックはステップの前からすでに合格している(何も採点していない):"
            ),
            passing.join("\n  ")
        ))
    }
}

impl LabWorld {
    /// A world for lint mode: no cell, handlers only validate.
    pub fn for_lint(feature: &str) -> LabWorld {
        LabWorld {
            scenario: ScenarioContext {
                feature: feature.to_owned(),
                ..ScenarioContext::default()
            },
            linting: true,
            ..LabWorld::default()
        }
    }

    /// Fails as a harness error when a probed check could not be evaluated.
    pub fn raise_errors(&self, lang: Lang, probed: &[Probed]) -> Result<(), String> {
        for p in probed {
            if let Err(Fault::Error(e)) = &p.result {
                let message = e.render(lang);
                if let Some(cell) = &self.cell {
                    cell.check_error(e.clone());
                }
                return Err(message);
            }
        }
        Ok(())
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
        let from_step = info.location().is_some_and(|l| l.file().contains("steps/"));
        if !from_step && let Some(default) = DEFAULT.get() {
            default(info);
        }
    }));
}

/// The text of a panic payload.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else {
        "step panicked".to_owned()
    }
}
