//! The adapter between cucumber-rs and labcheck's reporters: a cucumber [`Writer`] that turns the
//! events of one cell's run into [`Event::StepFinished`]s, so reporters never see cucumber types.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cucumber::event::{self, Cucumber, Feature, HookType, Rule, Scenario, StepError};
use cucumber::{Event as Cev, Writer, gherkin, parser};

use super::Sink;
use crate::cell::Cell;
use crate::model::{Event, Lab, LabStep, Outcome, StepCheck, StepFault, Verdict};
use crate::steps::LabWorld;
use crate::steps::world::Notes;
use crate::steps::world::panic_message;

/// Collects one cell's step outcomes and forwards them to the sink.
pub struct Adapter {
    cell: Arc<Cell>,
    lab: Arc<Lab>,
    sink: Sink,
    /// What the scenario's steps left, handed over when it ends.
    notes: Rc<RefCell<Option<Notes>>>,
    started: Option<Instant>,
    /// The scenario's first failure: its line and fault.
    failure: Option<(usize, StepFault)>,
    /// The current scenario's Gherkin steps, as they finish.
    checks: Vec<StepCheck>,
    /// Outcomes so far, by scenario line.
    pub finished: Vec<(usize, Outcome)>,
    /// A problem cucumber reported outside any scenario (e.g. the file could not be parsed).
    pub error: Option<String>,
}

impl Adapter {
    pub fn new(
        cell: Arc<Cell>,
        lab: Arc<Lab>,
        sink: Sink,
        notes: Rc<RefCell<Option<Notes>>>,
    ) -> Adapter {
        Adapter {
            cell,
            lab,
            sink,
            notes,
            started: None,
            failure: None,
            checks: Vec::new(),
            finished: Vec::new(),
            error: None,
        }
    }

    fn step_failed(&mut self, step: &gherkin::Step, err: &StepError) {
        let fault = match err {
            StepError::Panic(info) => match info.downcast_ref::<StepFault>() {
                Some(fault) => fault.clone(),
                // Not a step's fault: a defect of labcheck's.
                None => StepFault::Harness {
                    text: format!("labcheck: {}", panic_message(&**info)),
                },
            },
            StepError::NotFound => StepFault::Undefined {
                step: step.value.clone(),
            },
            StepError::AmbiguousMatch(e) => StepFault::Ambiguous {
                detail: e.to_string(),
            },
        };
        self.note(step, Verdict::Failed(fault.clone()));
        self.failure.get_or_insert((step.position.line, fault));
    }

    fn note(&mut self, step: &gherkin::Step, verdict: Verdict) {
        self.checks.push(StepCheck {
            line: step.position.line,
            text: format!("{}{}", step.keyword, step.value),
            verdict,
            listed: false,
        });
    }

    /// The checks of the scenario that ended, each mistake step's listed checks right after it.
    fn take_checks(&mut self, listed: Vec<(usize, Vec<StepCheck>)>) -> Vec<StepCheck> {
        let mut checks = std::mem::take(&mut self.checks);
        for (line, verdicts) in listed {
            let after = checks
                .iter()
                .rposition(|c| c.line == line && !c.listed)
                .map_or(checks.len(), |i| i + 1);
            checks.splice(after..after, verdicts);
        }
        checks
    }

    fn scenario(&mut self, sc: &gherkin::Scenario, ev: &Scenario<LabWorld>) {
        match ev {
            Scenario::Started => {
                self.started = Some(Instant::now());
                self.failure = None;
                self.checks.clear();
            }
            Scenario::Hook(HookType::Before, event::Hook::Failed(_, info))
            | Scenario::Hook(HookType::After, event::Hook::Failed(_, info)) => {
                let text = panic_message(&**info);
                self.failure
                    .get_or_insert((sc.position.line, StepFault::Step { text }));
            }
            Scenario::Hook(_, event::Hook::Started | event::Hook::Passed) => {}
            Scenario::Background(step, event::Step::Failed(_, _, _, err))
            | Scenario::Step(step, event::Step::Failed(_, _, _, err)) => {
                self.step_failed(step, err)
            }
            Scenario::Background(step, event::Step::Skipped)
            | Scenario::Step(step, event::Step::Skipped) => {
                self.note(step, Verdict::Skipped);
                self.failure.get_or_insert((
                    step.position.line,
                    StepFault::Undefined {
                        step: step.value.clone(),
                    },
                ));
            }
            Scenario::Background(step, event::Step::Passed(..))
            | Scenario::Step(step, event::Step::Passed(..)) => self.note(step, Verdict::Passed),
            Scenario::Background(_, event::Step::Started)
            | Scenario::Step(_, event::Step::Started)
            | Scenario::Log(_) => {}
            Scenario::Finished => {
                let duration = self.started.map(|s| s.elapsed()).unwrap_or(Duration::ZERO);
                let notes = self.notes.borrow_mut().take().unwrap_or_default();
                let tally = notes.tally;
                let checks = self.take_checks(notes.listed);
                let outcome = match self.failure.take() {
                    Some((line, fault)) if fault.is_error() => Outcome::Error { line, fault },
                    Some((line, fault)) => Outcome::Failed { line, fault },
                    None if self.cell.grading && tally.graded == 0 => Outcome::NotGraded {
                        reason: tally.not_graded.join("; "),
                    },
                    None => Outcome::Passed,
                };
                let step = self.lab_step(sc);
                self.finished.push((step.line, outcome.clone()));
                self.sink.report(&Event::StepFinished {
                    cell: self.cell.id.clone(),
                    step,
                    outcome,
                    duration,
                    transcripts: notes.transcripts,
                    checks,
                    artifacts: self.cell.take_artifacts(),
                });
            }
        }
    }

    fn lab_step(&self, sc: &gherkin::Scenario) -> LabStep {
        self.lab
            .steps
            .iter()
            .find(|s| s.line == sc.position.line)
            .cloned()
            .unwrap_or_else(|| LabStep {
                index: 0,
                name: sc.name.clone(),
                line: sc.position.line,
                tags: sc.tags.clone(),
                kind: crate::model::StepKind::Step,
            })
    }
}

impl Writer<LabWorld> for Adapter {
    type Cli = cucumber::cli::Empty;

    async fn handle_event(
        &mut self,
        event: parser::Result<Cev<Cucumber<LabWorld>>>,
        _: &Self::Cli,
    ) {
        let event = match event {
            Ok(e) => e.value,
            Err(e) => {
                self.error.get_or_insert(e.to_string());
                return;
            }
        };
        match event {
            Cucumber::Feature(_, Feature::Scenario(sc, retryable))
            | Cucumber::Feature(_, Feature::Rule(_, Rule::Scenario(sc, retryable))) => {
                self.scenario(&sc, &retryable.event)
            }
            Cucumber::Feature(_, Feature::Started | Feature::Finished)
            | Cucumber::Feature(_, Feature::Rule(_, Rule::Started | Rule::Finished))
            | Cucumber::Started
            | Cucumber::ParsingFinished { .. }
            | Cucumber::Finished => {}
        }
    }
}

// One scenario at a time per cell: events arrive in order already.
impl cucumber::writer::Normalized for Adapter {}
