//! The command line: clap definitions and one function per subcommand, each validating its
//! input before acting. Exit codes: 0 every lab passed, 1 a lab failed, 2 the harness failed.

use std::path::PathBuf;
use std::rc::Rc;

use clap::{Parser, Subcommand};

use crate::report::console::Console;
use crate::runner::{self, PlanError, RunOptions};

#[derive(Debug, Parser)]
#[command(name = "labcheck", version, about = "Proves hands-on labs work: runs their steps for real and grades every expected outcome")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run labs (default: every feature under features/) and grade each step.
    Run(RunArgs),
    /// Report Gherkin problems and undefined steps with file:line:col.
    Lint {
        /// Feature files or directories.
        #[arg(default_value = "features")]
        paths: Vec<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Feature files or directories.
    #[arg(default_value = "features")]
    pub paths: Vec<PathBuf>,
    /// Cells run in parallel.
    #[arg(long, short, default_value_t = 2)]
    pub jobs: usize,
    /// Keep every cell (sandbox and processes) after the run.
    #[arg(long)]
    pub keep: bool,
    /// Run only scenarios matching this tag expression, e.g. "not @slow".
    #[arg(long)]
    pub tags: Option<String>,
    /// Run steps 1..=N of each lab, then stop and keep the cell.
    #[arg(long)]
    pub step: Option<usize>,
    /// Where reports and failed cells' files go.
    #[arg(long, default_value = "target/labcheck")]
    pub report_dir: PathBuf,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("labcheck: cannot start the async runtime: {e}");
            return 2;
        }
    };
    match cli.command {
        Command::Run(args) => runtime.block_on(run(args)),
        Command::Lint { paths } => lint(&paths),
    }
}

fn lint(paths: &[PathBuf]) -> i32 {
    let opts = RunOptions::new(paths.to_vec());
    match runner::plan(&opts) {
        Ok(cells) => {
            println!("labcheck lint: no problems ({} cell(s) planned)", cells.len());
            0
        }
        Err(e) => report_plan_error(&e),
    }
}

fn report_plan_error(e: &PlanError) -> i32 {
    eprintln!("{e}");
    match e {
        PlanError::Lint(problems) => {
            eprintln!("labcheck: {} problem(s)", problems.len());
            1
        }
        PlanError::Read(_) | PlanError::Tags { .. } | PlanError::Empty(_) => 2,
    }
}

/// `labcheck run`, also what `cargo test` runs on features/.
pub async fn run(args: RunArgs) -> i32 {
    let mut opts = RunOptions::new(args.paths);
    opts.jobs = args.jobs;
    opts.keep = args.keep;
    opts.tags = args.tags;
    opts.step = args.step;
    opts.report_dir = args.report_dir;
    let cells = match runner::plan(&opts) {
        Ok(c) => c,
        Err(e) => return report_plan_error(&e),
    };
    let console = Rc::new(Console::default());
    let sink_console = console.clone();
    let env = runner::Environment::sandbox_only();
    let summary = runner::run(&opts, &env, cells, Rc::new(move |e| sink_console.handle(&e))).await;
    let record = console.record();
    match record.write(&opts.report_dir) {
        Ok(paths) => {
            if let Some(html) = paths.iter().find(|p| p.extension().is_some_and(|e| e == "html")) {
                eprintln!("labcheck: report {}", html.display());
            }
        }
        Err(e) => eprintln!("labcheck: cannot write reports to {}: {e}", opts.report_dir.display()),
    }
    for e in &summary.harness_errors {
        eprintln!("labcheck: harness error: {e}");
    }
    println!("{}", crate::report::summary::markdown(&record));
    let (passed, failed, not_run) = record.counts();
    println!("{passed} passed, {failed} failed, {not_run} skipped");
    summary.exit_code()
}
