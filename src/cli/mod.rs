//! The command line: one function per subcommand ([`args`] holds clap's definitions), each
//! turning flags into a library call and its outcome into an exit code: 0 every lab passed, 1 a
//! lab failed, 2 the harness failed, 128 + a signal when interrupted.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use clap::Parser;

use crate::kept;
use crate::report::console::Console;
use crate::runner::{self, PlanError, RunOptions};
use crate::toolchain::{self, Toolchain};

mod args;
mod cells;
pub mod tools;

pub use args::{
    Cli, ClusterKind, Command, GradeArgs, GradeFormat, MutateArgs, RunArgs, ToolsAction,
};

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    crate::sandbox::unix::close_inherited_on_exec();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == crate::checks::jq::WORKER_ARG)
    {
        return crate::checks::jq::serve();
    }
    // Queries run in workers of this binary, so that none can take the harness down.
    if let Ok(exe) = std::env::current_exe() {
        crate::checks::jq::use_workers(exe);
    }
    main_from(args)
}

/// Runs a command line given as arguments (the first is the program name).
pub fn main_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    crate::steps::world::quiet_step_panics();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            crate::errln!("labcheck: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let uses_state = matches!(
        cli.command,
        Command::Run(_)
            | Command::Grade(_)
            | Command::Mutate(_)
            | Command::Ps
            | Command::Shell { .. }
            | Command::Down { .. }
            | Command::Clean { .. }
    );
    if uses_state && let Err(e) = crate::state::prepare(&runner::default_state_dir()) {
        crate::errln!("labcheck: {e}");
        return 2;
    }
    if uses_state && let Err(e) = crate::checkpoint::cap_from_env() {
        crate::errln!("labcheck: {e}");
        return 2;
    }
    // A signal that comes before a run waits for one (tools resolving, a lab being planned)
    // still stops it.
    if matches!(
        cli.command,
        Command::Run(_) | Command::Grade(_) | Command::Mutate(_) | Command::Tools { .. }
    ) {
        let _context = runtime.enter();
        runner::listen();
    }
    match cli.command {
        Command::Run(args) => runtime.block_on(run(args)),
        Command::Lint { paths } => lint(&paths),
        Command::Grade(args) => runtime.block_on(grade(args)),
        Command::Tools { action } => match tool_setup() {
            Err(e) => {
                crate::errln!("labcheck: {e}");
                2
            }
            Ok((tc, versions)) => match action {
                ToolsAction::Install { istio, kind } => runtime.block_on(async {
                    let tc = tc.with_progress(crate::report::builds::Builds::on_stderr().sink());
                    let install = tools::install(&tc, &versions, &istio, kind);
                    runner::interruptible(install)
                        .await
                        .unwrap_or_else(|signal| interrupted_install(&tc, signal))
                }),
                ToolsAction::List => tools::list(&tc),
                ToolsAction::Path { tool } => tools::path(&tc, &versions, &tool),
            },
        },
        Command::Doctor { istio, kind } => match tool_setup() {
            Err(e) => {
                crate::errln!("labcheck: {e}");
                2
            }
            Ok((tc, versions)) => runtime.block_on(tools::doctor(&tc, &versions, &istio, kind)),
        },
        Command::Mutate(args) => runtime.block_on(mutate(args)),
        Command::Ps => cells::ps(),
        Command::Registry {
            listen,
            log,
            archives,
        } => runtime.block_on(crate::images::registry::run(listen, &log, &archives)),
        Command::Shell { cell } => runtime.block_on(cells::shell(&cell)),
        Command::Down {
            cell,
            all,
            everyone,
        } => runtime.block_on(cells::down(cell.as_deref(), all, everyone)),
        Command::Clean { everyone } => runtime.block_on(cells::clean(everyone)),
        Command::Merge { dirs, report_dir } => merge(&dirs, &report_dir),
        Command::Render {
            lab,
            with_solution,
            format,
            output,
        } => render(&lab, with_solution, format, output.as_deref()),
        Command::Vocabulary { glue: false } => {
            crate::out!("{}", crate::steps::vocabulary::markdown_table());
            0
        }
        Command::Vocabulary { glue: true } => {
            crate::out!("{}", crate::steps::editor::glue());
            0
        }
    }
}

fn lint(paths: &[PathBuf]) -> i32 {
    let mut opts = RunOptions::new(paths.to_vec(), runner::Purpose::Validate);
    // Lint plans as a run would (mistakes included), to find what a run would refuse.
    // Lint needs no toolchain: one placeholder point of the matrix stands for all.
    opts.istio = vec!["-".to_owned()];
    match runner::plan(&opts) {
        Ok(cells) => {
            let mut labs: Vec<&std::path::Path> =
                cells.iter().map(|c| c.lab.path.as_path()).collect();
            labs.dedup();
            crate::outln!("labcheck lint: no problems in {} lab(s)", labs.len());
            0
        }
        Err(e) => report_plan_error(&e),
    }
}

fn report_plan_error(e: &PlanError) -> i32 {
    crate::errln!("{e}");
    match e {
        PlanError::Lint(problems) => {
            crate::errln!("labcheck: {} problem(s)", problems.len());
            // A lab that grades nothing proves nothing: that is no lab failure but no run either.
            if problems.iter().any(|p| p.grades_nothing) {
                2
            } else {
                1
            }
        }
        PlanError::Read(_)
        | PlanError::Tags { .. }
        | PlanError::Empty(_)
        | PlanError::Nothing(_)
        | PlanError::NoIstio { .. }
        | PlanError::NoUpgrade { .. }
        | PlanError::EmptyShard { .. } => 2,
    }
}

/// `labcheck run`, also what `cargo test` runs on features/.
pub async fn run(args: RunArgs) -> i32 {
    // The author's loop (`--step N`): start from the last step's checkpoint, and leave one for
    // the next try.
    let purpose = match args.step {
        Some(_) => runner::Purpose::Author,
        None => runner::Purpose::Validate,
    };
    let mut opts = RunOptions::new(args.paths.clone(), purpose);
    opts.jobs = args.jobs;
    opts.keep = args.keep;
    opts.tags = args.tags.clone();
    opts.step = args.step;
    opts.shard = args.shard;
    opts.report_dir = args.report_dir.clone();
    opts.fresh = args.fresh;
    opts.checkpoints = !args.no_checkpoints;
    let setup = runner::tool_setup_for(&args.paths);
    match &setup {
        Ok((_, versions)) => opts.istio = runner::matrix(versions, &args.istio),
        Err(e) if !args.istio.is_empty() => {
            let e = toolchain::error_chain(&**e);
            crate::errln!("labcheck: --istio {}: {e}", args.istio.join(","));
            return 2;
        }
        Err(e) => opts.istio_unavailable = Some(toolchain::error_chain(&**e)),
    }
    let cells = match runner::plan(&opts) {
        Ok(c) => c,
        Err(e) => return report_plan_error(&e),
    };
    let console = Rc::new(Console::new());
    // Tool builds the run needs show on the run's console.
    let setup = setup.map(|(tc, versions)| (tc.with_progress(console.builds()), versions));
    let env = match runner::environment_for(&setup, &args.cluster_choice(), &cells).await {
        Ok(env) => env,
        Err(e) => {
            crate::errln!("labcheck: {e}");
            return e.exit_code();
        }
    };
    let sink_console = console.clone();
    let summary = runner::run(&opts, &env, cells, sink_console).await;
    let written = console.record().publish(&opts.report_dir);
    for e in &summary.harness_errors {
        crate::errln!("labcheck: harness error: {e}");
    }
    // Reports that could not be written are a harness error: a CI job must not go green on them.
    match summary.exit_code() {
        0 | 1 if !written => 2,
        code => code,
    }
}

/// `labcheck mutate`: see [`crate::mutate::session`].
async fn mutate(args: MutateArgs) -> i32 {
    use crate::mutate::{MutateError, session};
    let request = session::Request {
        lab: args.lab,
        istio: args.istio,
        step: args.step,
        jobs: args.jobs,
        list: args.list,
        report_dir: args.report_dir,
        selection: crate::mutate::select::Selection {
            ids: args.mutants,
            in_diff: args.in_diff,
        },
        cache: !args.no_cache,
        pool: !args.fresh_clusters,
    };
    let console = Rc::new(crate::mutate::console::Console);
    match session::mutate(&request, console).await {
        Ok(outcome) => outcome.exit_code(),
        Err(MutateError::Plan(e)) => report_plan_error(&e),
        Err(e) => {
            crate::errln!("labcheck mutate: {e}");
            e.exit_code()
        }
    }
}

/// After a signal during `tools install` (the builds' process groups already killed): removes
/// this process's half-written files from the cache; the exit code is 128 + the signal.
fn interrupted_install(tc: &Toolchain, signal: i32) -> i32 {
    let e = runner::EnvironmentError::Interrupted(signal);
    tc.clean_interrupted();
    crate::errln!("labcheck: {e}");
    e.exit_code()
}

/// The toolchain and the versions file (`istio-versions.toml` in the working directory or the
/// nearest directory above it).
fn tool_setup() -> Result<(Toolchain, toolchain::Versions), String> {
    // The nearest `istio-versions.toml` walking up from here, as `run` finds it from its labs.
    runner::tool_setup_for(&[PathBuf::from(".")]).map_err(|e| toolchain::error_chain(&*e))
}

async fn grade(args: GradeArgs) -> i32 {
    let mut opts = RunOptions::new(vec![args.lab.clone()], runner::Purpose::Grade);
    opts.step = args.step;
    let target = match &args.cell {
        Some(name) => match kept::find(&opts.state_dir, name) {
            Ok(c) => runner::GradeTarget::Kept(c),
            Err(e) => {
                crate::errln!("labcheck grade: {e}");
                return 2;
            }
        },
        None => runner::GradeTarget::Learner {
            kubeconfig: args.kubeconfig,
            context: args.context,
            root: args.root,
        },
    };
    let record = Rc::new(std::cell::RefCell::new(crate::report::Record::default()));
    let sink_record = record.clone();
    let summary = match runner::grade(&opts, target, sink_record).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("labcheck grade: {e}");
            return 2;
        }
    };
    match args.format {
        GradeFormat::Text => crate::out!("{}", crate::report::grade_text(&record.borrow())),
        GradeFormat::Json => {
            crate::outln!("{}", crate::report::grade_json::render(&record.borrow()))
        }
    }
    for e in &summary.harness_errors {
        crate::errln!("labcheck grade: {e}");
    }
    summary.exit_code()
}

/// `labcheck render`: 0 when written, 1 when the lab has problems, 2 when it cannot be read or
/// the page cannot be written.
fn render(
    lab: &Path,
    with_solution: bool,
    format: crate::render::Format,
    output: Option<&Path>,
) -> i32 {
    let lab = match crate::lint::load(lab) {
        Err(e) => {
            crate::errln!("labcheck render: {e}");
            return 2;
        }
        Ok(Err(problems)) => {
            for p in &problems {
                crate::errln!("{p}");
            }
            return 1;
        }
        Ok(Ok(linted)) => linted.lab,
    };
    let Some(feature) = lab.feature() else {
        return 2;
    };
    let page = crate::render::render(&lab.text, &feature, &lab, format, with_solution);
    match output {
        None => {
            crate::out!("{page}");
            0
        }
        Some(path) => match std::fs::write(path, page) {
            Ok(()) => 0,
            Err(e) => {
                crate::errln!("labcheck render: cannot write {}: {e}", path.display());
                2
            }
        },
    }
}

/// `labcheck merge`: 0 when every merged cell passed, 1 when one failed, 2 when a report cannot
/// be read, two reports hold the same cell, or the merged reports cannot be written.
fn merge(dirs: &[PathBuf], out: &Path) -> i32 {
    let mut record = crate::report::Record::default();
    for dir in dirs {
        let merged = crate::report::Record::load(dir).and_then(|r| record.merge(r, dir));
        if let Err(e) = merged {
            crate::errln!("labcheck merge: {e}");
            return 2;
        }
    }
    if let Err(e) = record.write(out) {
        crate::errln!(
            "labcheck merge: cannot write reports to {}: {e}",
            out.display()
        );
        return 2;
    }
    crate::outln!("{}", crate::report::summary::markdown(&record));
    let (passed, failed, not_run) = record.counts();
    crate::outln!("{passed} passed, {failed} failed, {not_run} skipped");
    if record.passed() { 0 } else { 1 }
}
