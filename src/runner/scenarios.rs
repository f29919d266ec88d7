//! One cell's scenarios through cucumber: the hooks that hand each scenario its cell and context,
//! checkpoints written after passing steps, and the steps that did not run reported as such.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use cucumber::World as _;
use cucumber::gherkin;
use futures::FutureExt;

use super::error::CellError;
use super::{CellPlan, Sink, adapter, resume};
use crate::cell::Cell;
use crate::checkpoint::{Key, Store};
use crate::lint::tags;
use crate::model::{Event, Lab, Outcome};
use crate::steps::lab::CompiledLab;
use crate::steps::world::Notes;
use crate::steps::{LabWorld, ScenarioContext};

/// cucumber's parser for a lab already parsed: it hands over the feature lint parsed, so cucumber
/// runs exactly the text that was linted and the file is not read again.
struct Linted(Arc<Lab>);

impl<I> cucumber::Parser<I> for Linted {
    type Cli = cucumber::cli::Empty;
    type Output =
        futures::stream::Iter<std::vec::IntoIter<cucumber::parser::Result<gherkin::Feature>>>;

    fn parse(self, _: I, _: Self::Cli) -> Self::Output {
        let feature = self.0.feature().map(|f| (*f).clone()).ok_or_else(|| {
            cucumber::parser::Error::Parsing(Arc::new(gherkin::ParseFileError::Reading {
                path: self.0.path.clone(),
                source: std::io::Error::other("the lab's text does not parse"),
            }))
        });
        futures::stream::iter(vec![feature])
    }
}

/// Runs the planned scenarios of one cell through cucumber; returns whether all passed and a
/// harness error, if any.
pub(crate) async fn run_scenarios(
    plan: &CellPlan,
    cell: Arc<Cell>,
    sink: Sink,
    checkpointer: Option<Rc<Checkpointer>>,
) -> (bool, Option<CellError>) {
    let lines = plan.lines.clone();
    let feature_path = plan.lab.path.display().to_string();
    let compiled = plan.compiled.clone();
    let hook_cell = cell.clone();
    let after_cell = cell.clone();
    // What a scenario's steps leave for its report: the after hook takes it from the world,
    // the adapter from here when the scenario's end reaches it.
    let notes: Rc<RefCell<Option<Notes>>> = Rc::default();
    let after_notes = notes.clone();
    let adapter = adapter::Adapter::new(cell.clone(), plan.lab.clone(), sink.clone(), notes);
    let cucumber = LabWorld::cucumber::<PathBuf>()
        .steps(crate::steps::bindings::collection())
        .with_parser(Linted(plan.lab.clone()))
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
            world.scenario = scenario_context(&feature_path, &compiled, scenario);
            async {}.boxed_local()
        })
        .after(move |_, _, scenario, finished, world| {
            // Before the next scenario starts: the cell is as this step left it.
            let passed = matches!(finished, cucumber::event::ScenarioFinished::StepPassed);
            let line = scenario.position.line;
            let (cell, checkpointer) = (after_cell.clone(), checkpointer.clone());
            let taken = world
                .map(|w| std::mem::take(&mut w.notes))
                .unwrap_or_default();
            cell.spent(taken.transcripts.iter().map(|t| t.duration).sum());
            *after_notes.borrow_mut() = Some(taken);
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
    let mut error = writer.error.clone().map(CellError::Unreadable);
    let mut missing = Vec::new();
    for line in &plan.lines {
        match writer.finished.iter().find(|(l, _)| l == line) {
            Some((_, outcome)) => {
                passed &= outcome.is_pass();
                if let Outcome::Error { line, fault } = outcome {
                    error.get_or_insert_with(|| CellError::Step {
                        file: plan.lab.origin().to_owned(),
                        line: *line,
                        fault: fault.clone(),
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
    pub(super) store: Store,
    /// The steps to checkpoint, by line.
    pub(super) keys: BTreeMap<usize, Key>,
    /// The cluster's state, when the cell has a cluster.
    pub(super) etcd: Option<crate::cluster::local::EtcdState>,
    pub(super) slots: Rc<resume::Slots>,
    /// Checkpoints that could not be written (harness faults).
    pub(super) errors: std::cell::RefCell<Vec<Arc<CellError>>>,
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
                let error = Arc::new(CellError::Checkpoint {
                    cell: cell.id.clone(),
                    source: Arc::new(e),
                });
                self.slots.fill(key, resume::Slot::Failed(error.clone()));
                self.errors.borrow_mut().push(error);
            }
        }
    }
}

fn scenario_context(
    feature: &str,
    lab: &Arc<CompiledLab>,
    scenario: &gherkin::Scenario,
) -> ScenarioContext {
    ScenarioContext {
        feature: feature.to_owned(),
        lab: lab.clone(),
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
pub(super) fn not_run(plan: &CellPlan, sink: &Sink, lines: &[usize], reason: &str) {
    for line in lines {
        if let Some(step) = plan.lab.steps.iter().find(|s| s.line == *line) {
            sink.report(&Event::StepFinished {
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
