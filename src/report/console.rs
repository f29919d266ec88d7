//! The live console: a line per step as it finishes, failures with their feature line, message and
//! transcript, and a closing `N passed, N failed` line.

use std::cell::RefCell;

use super::Record;
use crate::model::{Event, Outcome};

/// Prints events to stderr as they come.
#[derive(Default)]
pub struct Console {
    record: RefCell<Record>,
}

impl Console {
    pub fn handle(&self, event: &Event) {
        let mut record = self.record.borrow_mut();
        record.apply(event);
        match event {
            Event::RunStarted { cells } => eprintln!("labcheck: {} cell(s)", cells.len()),
            Event::CellStarted { cell } => eprintln!("▶ {cell}"),
            Event::Captured { .. } => {}
            Event::EnvironmentReady { cell, setup, .. } => {
                eprintln!("  {cell}: environment ready in {:.2}s", setup.as_secs_f64())
            }
            Event::StepFinished {
                cell,
                step,
                outcome,
                duration,
                transcripts,
                ..
            } => {
                let path = record
                    .cells
                    .get(cell)
                    .map(|c| c.lab.origin().display().to_string())
                    .unwrap_or_default();
                match outcome {
                    Outcome::Passed => {
                        eprintln!(
                            "  ✔ {cell} {}. {} ({:.2}s)",
                            step.index,
                            step.name,
                            duration.as_secs_f64()
                        )
                    }
                    Outcome::Failed { line, message } | Outcome::Error { line, message } => {
                        eprintln!("  ✘ {cell} {}. {}  {path}:{line}", step.index, step.name);
                        for l in message.lines() {
                            eprintln!("      {l}");
                        }
                        for t in transcripts {
                            for l in t.render().lines() {
                                eprintln!("      │ {l}");
                            }
                        }
                    }
                    Outcome::NotRun { reason } => {
                        eprintln!(
                            "  - {cell} {}. {} (not run: {reason})",
                            step.index, step.name
                        )
                    }
                    Outcome::NotGraded { reason } => {
                        eprintln!(
                            "  - {cell} {}. {} (not graded: {reason})",
                            step.index, step.name
                        )
                    }
                }
            }
            Event::CellFinished {
                cell,
                passed,
                kept,
                error,
                ..
            } => {
                if let Some(e) = error {
                    eprintln!("✘ {cell}: {e}");
                }
                if let Some(k) = kept {
                    eprintln!("  {cell}: kept at {}", k.display());
                    if let Some(name) = k.file_name().filter(|_| k.join("cell.json").exists()) {
                        let name = name.to_string_lossy();
                        eprintln!(
                            "  enter it with `labcheck shell {name}`, remove it with `labcheck down {name}`"
                        );
                    }
                }
                eprintln!("{} {cell}", if *passed { "✔" } else { "✘" });
            }
            Event::RunFinished {
                interrupted,
                duration,
            } => {
                if *interrupted {
                    eprintln!("labcheck: run interrupted");
                }
                eprintln!("labcheck: {:.1}s", duration.as_secs_f64());
            }
        }
    }

    /// The record built so far.
    pub fn record(&self) -> Record {
        self.record.borrow().clone()
    }
}
