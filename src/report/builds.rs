//! Tool builds as the console shows them, from the toolchain's [`Event::ToolBuild`]s: a line when
//! a build starts and when it ends; on a terminal a spinner with the elapsed time and the go
//! command running, in a log a line every 10 s so the build is seen alive. Shared between
//! threads: the toolchain reports from wherever its builds run.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::model::{BuildPhase, BuildSink, Event, Reporter};

/// The console's view of tool builds.
#[derive(Default)]
pub struct Builds {
    /// The live display, on a terminal.
    multi: Option<MultiProgress>,
    spinners: Mutex<HashMap<String, ProgressBar>>,
}

impl Builds {
    /// Builds shown in `multi` (a terminal's live display), or as plain lines.
    pub fn new(multi: Option<MultiProgress>) -> Builds {
        Builds {
            multi,
            spinners: Mutex::new(HashMap::new()),
        }
    }

    /// Builds shown on stderr on their own (`labcheck tools install`): spinners on a terminal.
    pub fn on_stderr() -> Arc<Builds> {
        let multi = std::io::stderr().is_terminal().then(MultiProgress::new);
        Arc::new(Builds::new(multi))
    }

    /// A sink for the toolchain.
    pub fn sink(self: &Arc<Self>) -> BuildSink {
        Arc::clone(self) as BuildSink
    }

    fn say(&self, line: &str) {
        match &self.multi {
            Some(multi) => multi.suspend(|| crate::errln!("{line}")),
            None => crate::errln!("{line}"),
        }
    }

    /// Shows one event (anything but a tool build is not this view's).
    pub fn handle(&self, event: &Event) {
        self.report(event)
    }
}

impl Reporter for Builds {
    fn report(&self, event: &Event) {
        let Event::ToolBuild { what, phase } = event else {
            return;
        };
        let mut spinners = self.spinners.lock().unwrap_or_else(|e| e.into_inner());
        match phase {
            BuildPhase::Started { steps } => {
                self.say(&format!("labcheck: building {what} ({steps})"));
                if let Some(multi) = &self.multi {
                    let bar = multi.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} building {msg} [{elapsed}]")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    let first = steps.split(',').next().unwrap_or(steps);
                    bar.set_message(format!("{what} ({first})"));
                    bar.enable_steady_tick(std::time::Duration::from_millis(200));
                    spinners.insert(what.clone(), bar);
                }
            }
            BuildPhase::Step(step) => {
                if let Some(bar) = spinners.get(what) {
                    bar.set_message(format!("{what} ({step})"));
                }
            }
            BuildPhase::Alive { elapsed, step } => {
                if self.multi.is_none() {
                    let secs = elapsed.as_secs();
                    self.say(&format!("labcheck: building {what}: {secs} s ({step})"));
                }
            }
            BuildPhase::Finished { ok, took } => {
                if let Some(bar) = spinners.remove(what) {
                    bar.finish_and_clear();
                    if let Some(multi) = &self.multi {
                        multi.remove(&bar);
                    }
                }
                let verb = if *ok { "built" } else { "failed to build" };
                let secs = took.as_secs_f64();
                self.say(&format!("labcheck: {verb} {what} in {secs:.0} s"));
            }
        }
    }
}
