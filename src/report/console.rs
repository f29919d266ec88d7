//! The live console: a line per step as it finishes, failures with their feature line, message and
//! transcript, and a closing `N passed, N failed` line. On a terminal, a live display (indicatif)
//! sits below those lines: cells done of the total, and a line per running cell with its latest
//! step; in a CI log (not a terminal) there are only the plain lines. Tool builds the run needs
//! show there too ([`super::builds`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Arc;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::Record;
use super::builds::Builds;
use crate::model::{CellId, Event, Outcome};

/// Prints events to stderr as they come.
#[derive(Default)]
pub struct Console {
    record: RefCell<Record>,
    live: Option<Live>,
    builds: Arc<Builds>,
}

/// The live display on a terminal.
struct Live {
    multi: MultiProgress,
    total: ProgressBar,
    cells: RefCell<HashMap<CellId, ProgressBar>>,
}

impl Live {
    fn new() -> Live {
        let multi = MultiProgress::new();
        let total = multi.add(ProgressBar::new(0));
        total.set_style(
            ProgressStyle::with_template("{spinner} cells {pos}/{len} [{elapsed}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        total.enable_steady_tick(std::time::Duration::from_millis(200));
        Live {
            multi,
            total,
            cells: RefCell::new(HashMap::new()),
        }
    }

    fn cell(&self, cell: &CellId, message: String) {
        let mut cells = self.cells.borrow_mut();
        let bar = cells.entry(cell.clone()).or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner} [{elapsed}] {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        bar.set_message(message);
    }

    fn cell_done(&self, cell: &CellId) {
        if let Some(bar) = self.cells.borrow_mut().remove(cell) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        self.total.inc(1);
    }
}

impl crate::model::Reporter for Live {
    /// What an event changes on the live display.
    fn report(&self, event: &Event) {
        match event {
            Event::RunStarted { cells } => self.total.set_length(cells.len() as u64),
            Event::CellStarted { cell } => self.cell(cell, format!("{cell}: preparing")),
            Event::EnvironmentReady { cell, .. } => self.cell(cell, format!("{cell}: running")),
            Event::StepFinished { cell, step, .. } => self.cell(
                cell,
                format!(
                    "{cell}: step {} done ({}), running the next",
                    step.index, step.name
                ),
            ),
            Event::CellFinished { cell, .. } => self.cell_done(cell),
            Event::RunFinished { .. } => self.total.finish_with_message("done"),
            Event::Captured { .. }
            | Event::ToolBuild { .. }
            | Event::CheckpointDiscarded { .. } => {}
        }
    }
}

/// A line of a learner's output as the console shows it: control characters (escape sequences,
/// carriage returns) written out, so that output can neither drive the terminal nor start a CI
/// workflow command at the beginning of a line.
fn visible(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A line above the live display, or on stderr.
macro_rules! say {
    ($console:expr, $($arg:tt)*) => {
        match &$console.live {
            Some(live) => live.multi.suspend(|| crate::errln!($($arg)*)),
            None => crate::errln!($($arg)*),
        }
    };
}

impl Console {
    /// A console with a live display when stderr is a terminal.
    pub fn new() -> Console {
        let live = std::io::stderr().is_terminal().then(Live::new);
        let builds = Arc::new(Builds::new(live.as_ref().map(|l| l.multi.clone())));
        Console {
            record: RefCell::default(),
            live,
            builds,
        }
    }

    /// Where the toolchain reports its builds: shown with the run's lines and live display.
    pub fn builds(&self) -> crate::model::BuildSink {
        self.builds.sink()
    }

    /// A step's line: passed with its time, failed with its check's message and transcripts,
    /// or why it did not run or was not graded.
    fn step_finished(
        &self,
        name: &str,
        outcome: &Outcome,
        duration: std::time::Duration,
        transcripts: &[crate::model::Transcript],
        path: &str,
    ) {
        match outcome {
            Outcome::Passed => {
                let tries = crate::model::Transcript::tries(transcripts)
                    .map(|n| format!(", {n} tries"))
                    .unwrap_or_default();
                say!(self, "  ✔ {name} ({:.2}s{tries})", duration.as_secs_f64())
            }
            Outcome::Failed { line, fault } | Outcome::Error { line, fault } => {
                say!(self, "  ✘ {name}  {path}:{line}");
                for l in fault.render().lines() {
                    say!(self, "      {}", visible(l));
                }
                for t in transcripts {
                    for l in t.render().lines() {
                        say!(self, "      │ {}", visible(l));
                    }
                }
            }
            Outcome::NotRun { reason } => say!(self, "  - {name} (not run: {reason})"),
            Outcome::NotGraded { reason } => say!(self, "  - {name} (not graded: {reason})"),
        }
    }

    /// A cell's last lines: its harness error, where it is kept and how to enter it.
    fn cell_finished(
        &self,
        cell: &CellId,
        passed: bool,
        kept: Option<&std::path::Path>,
        error: Option<&str>,
    ) {
        if let Some(e) = error {
            say!(self, "✘ {cell}: {e}");
        }
        if let Some(k) = kept {
            say!(self, "  {cell}: kept at {}", k.display());
            if let Some(name) = k.file_name().filter(|_| k.join("cell.json").exists()) {
                let name = name.to_string_lossy();
                say!(
                    self,
                    "  enter it with `labcheck shell {name}`, remove it with `labcheck down {name}`"
                );
            }
        }
        say!(self, "{} {cell}", if passed { "✔" } else { "✘" });
    }

    /// The record built so far.
    pub fn record(&self) -> Record {
        self.record.borrow().clone()
    }
}

impl crate::model::Reporter for Console {
    /// Folds the event into the record, shows it live, and writes its lines.
    fn report(&self, event: &Event) {
        let mut record = self.record.borrow_mut();
        record.apply(event);
        if let Some(live) = &self.live {
            live.report(event);
        }
        match event {
            Event::RunStarted { cells } => say!(self, "labcheck: {} cell(s)", cells.len()),
            Event::CellStarted { cell } => say!(self, "▶ {cell}"),
            Event::CheckpointDiscarded { lab, line, reason } => say!(
                self,
                "labcheck: the checkpoint after line {line} of {} was discarded, not used: {}; \
                 the steps before replay",
                lab.display(),
                visible(reason)
            ),
            Event::Captured { .. } => {}
            Event::ToolBuild { .. } => self.builds.handle(event),
            Event::EnvironmentReady {
                cell,
                setup,
                waited,
                resumed,
                ..
            } => say!(
                self,
                "  {cell}: environment ready in {:.2}s{}; waited {:.2}s for it",
                setup.as_secs_f64(),
                resumed.as_ref().map_or(String::new(), from_checkpoint),
                waited.as_secs_f64()
            ),
            Event::StepFinished {
                cell,
                step,
                outcome,
                duration,
                transcripts,
                checks,
                ..
            } => {
                let (path, lang) = record.cells.get(cell).map_or_else(
                    || (String::new(), crate::model::Lang::En),
                    |c| (c.lab.origin().display().to_string(), c.lab.lang),
                );
                let name = format!("{cell} {}. {}", step.index, step.name);
                self.step_finished(&name, outcome, *duration, transcripts, &path);
                // A mistake: why its wrong answer was (or was not) rejected, check by check.
                for check in checks.iter().filter(|c| c.listed) {
                    for l in check.rejection(lang).lines() {
                        say!(self, "      {l}");
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
                let error = error.as_ref().map(|e| e.to_string());
                self.cell_finished(cell, *passed, kept.as_deref(), error.as_deref())
            }
            Event::RunFinished {
                interrupted,
                duration,
            } => {
                if *interrupted {
                    say!(self, "labcheck: run interrupted");
                }
                say!(self, "labcheck: {:.1}s", duration.as_secs_f64());
            }
        }
    }
}

/// Where a cell's environment came from, when it was a checkpoint.
fn from_checkpoint(r: &crate::model::Resumed) -> String {
    let again = r.again.as_ref().map_or(String::new(), |why| {
        format!(
            "; started again from it after the first start failed ({}; its logs are in the report's logs-first-start/)",
            why.lines().next().unwrap_or_default()
        )
    });
    format!(
        ", from the checkpoint of step {} (restored in {:.2}s{again})",
        r.after_step,
        r.restore.as_secs_f64()
    )
}
