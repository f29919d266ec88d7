//! The command line: clap definitions and one function per subcommand, each validating its
//! input before acting. Exit codes: 0 every lab passed, 1 a lab failed, 2 the harness failed.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use clap::{Parser, Subcommand};

use crate::cluster::{self, Backend, LocalTools};
use crate::kept;
use crate::report::console::Console;
use crate::runner::{self, PlanError, RunOptions};
use crate::toolchain::{self, Toolchain};

#[derive(Debug, Parser)]
#[command(
    name = "labcheck",
    version,
    about = "Proves hands-on labs work: runs their steps for real and grades every expected outcome"
)]
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
    /// Build or download the binaries labs need; list what is cached.
    Tools {
        #[command(subcommand)]
        action: ToolsAction,
    },
    /// What is installed, where it came from, what is missing and how to get it.
    Doctor {
        /// Istio versions to look for (default: the default matrix).
        #[arg(long, value_delimiter = ',')]
        istio: Vec<String>,
    },
    /// Print every phrase labs can use, English and Japanese, as a Markdown table.
    Vocabulary,
    /// Merge the reports of several runs (the shards of one CI run) into one: reads each
    /// directory's record.json and writes every report to --report-dir.
    Merge {
        /// Report directories of the runs.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged reports go.
        #[arg(long, default_value = "target/labcheck")]
        report_dir: PathBuf,
    },
    /// Write a lab as a learner reads it: its description, setup, each step's task and hints,
    /// its common mistakes; the reference commands only with --with-solution.
    Render {
        /// The lab (a feature file).
        lab: PathBuf,
        /// Also show each step's reference commands (and the mistakes' wrong answers).
        #[arg(long)]
        with_solution: bool,
        #[arg(long, value_enum, default_value_t = crate::render::Format::Md)]
        format: crate::render::Format,
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Grade a learner's environment: run only the lab's checks, step by step.
    Grade(GradeArgs),
    /// Mutation testing of a lab's checks: run plausible wrong answers made from its reference
    /// solution and report those that no check rejects.
    Mutate(MutateArgs),
    /// List kept cells.
    Ps,
    /// Open a shell inside a kept cell: its files, KUBECONFIG, PATH and network.
    Shell {
        /// The cell's name (as `labcheck ps` shows it), or a unique prefix.
        cell: String,
    },
    /// Tear down kept cells: their processes, namespaces, mounts and files.
    Down {
        /// The cell's name, or a unique prefix.
        #[arg(required_unless_present = "all")]
        cell: Option<String>,
        /// Every kept cell.
        #[arg(long)]
        all: bool,
    },
    /// Tear down every kept cell and remove every checkpoint (what `run --step N`, mistakes and
    /// mutants start from).
    Clean,
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
    /// Istio versions for labs tagged @istio: labels from istio-versions.toml or release numbers
    /// (default: the file's default matrix).
    #[arg(long, value_delimiter = ',')]
    pub istio: Vec<String>,
    /// Where clusters come from.
    #[arg(long, value_enum, default_value_t = ClusterKind::Local)]
    pub cluster: ClusterKind,
    /// With --cluster existing: the kubeconfig.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// With --cluster existing: the context to use (labs mutate it).
    #[arg(long)]
    pub context: Option<String>,
    /// With --cluster existing: allow labs to mutate that cluster.
    #[arg(long)]
    pub allow_existing_cluster: bool,
    /// With --cluster kind: the node image.
    #[arg(long)]
    pub kind_image: Option<String>,
    /// Run one shard of the planned cells, K of N (CI runners side by side): every cell is in
    /// exactly one shard.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<runner::Shard>,
    /// With --step N: replay steps 1..N-1 instead of starting from their checkpoint, and write
    /// the checkpoints anew.
    #[arg(long)]
    pub fresh: bool,
    /// Replay every step a cell needs: no cell starts from a checkpoint.
    #[arg(long)]
    pub no_checkpoints: bool,
}

#[derive(Debug, clap::Args)]
pub struct MutateArgs {
    /// The lab (a feature file).
    pub lab: PathBuf,
    /// Istio versions (default: the versions file's default matrix).
    #[arg(long, value_delimiter = ',')]
    pub istio: Vec<String>,
    /// Mutate steps 1..=N only (every mutant still runs to the end of the lab).
    #[arg(long)]
    pub step: Option<usize>,
    /// Mutant cells run in parallel.
    #[arg(long, short, default_value_t = 2)]
    pub jobs: usize,
    /// List the mutants without running anything.
    #[arg(long)]
    pub list: bool,
    /// Where `mutants/` (outcomes.json, caught.txt, missed.txt) goes.
    #[arg(long, default_value = "target/labcheck")]
    pub report_dir: PathBuf,
}

/// Cluster backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClusterKind {
    /// kube-apiserver + etcd inside each cell (the default).
    Local,
    /// A named context of a kubeconfig (needs --allow-existing-cluster).
    Existing,
    /// A kind cluster per cell.
    Kind,
}

#[derive(Debug, Subcommand)]
pub enum ToolsAction {
    /// Resolve istioctl for each Istio version, kube-apiserver, kubectl and etcd.
    Install {
        #[arg(long, value_delimiter = ',')]
        istio: Vec<String>,
    },
    /// What the cache holds.
    List,
}

#[derive(Debug, clap::Args)]
pub struct GradeArgs {
    /// The lab (a feature file).
    pub lab: PathBuf,
    /// Grade steps 1..=N only.
    #[arg(long)]
    pub step: Option<usize>,
    /// Grade a cell kept by `run --keep` / `run --step N` (see `labcheck ps`).
    #[arg(long, conflicts_with_all = ["kubeconfig", "context", "root"])]
    pub cell: Option<String>,
    /// The learner's kubeconfig (default: KUBECONFIG or ~/.kube/config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The context of that kubeconfig (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// A directory holding the learner's files, mapped to the lab's paths (DIR/root/istio is
    /// /root/istio). Default: the host's own paths, only read.
    #[arg(long)]
    pub root: Option<PathBuf>,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    main_from(std::env::args_os())
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
            eprintln!("labcheck: cannot start the async runtime: {e}");
            return 2;
        }
    };
    match cli.command {
        Command::Run(args) => runtime.block_on(run(args)),
        Command::Lint { paths } => lint(&paths),
        Command::Grade(args) => runtime.block_on(grade(args)),
        Command::Tools { action } => match tool_setup() {
            Err(e) => {
                eprintln!("labcheck: {e}");
                2
            }
            Ok((tc, versions)) => match action {
                ToolsAction::Install { istio } => runtime.block_on(async {
                    let install = toolchain::commands::install(&tc, &versions, &istio);
                    runner::interruptible(install)
                        .await
                        .unwrap_or_else(|signal| interrupted_install(&tc, signal))
                }),
                ToolsAction::List => toolchain::commands::list(&tc),
            },
        },
        Command::Doctor { istio } => match tool_setup() {
            Err(e) => {
                eprintln!("labcheck: {e}");
                2
            }
            Ok((tc, versions)) => toolchain::commands::doctor(&tc, &versions, &istio),
        },
        Command::Mutate(args) => runtime.block_on(mutate(args)),
        Command::Ps => ps(),
        Command::Shell { cell } => runtime.block_on(shell(&cell)),
        Command::Down { cell, all } => runtime.block_on(down(cell.as_deref(), all)),
        Command::Clean => runtime.block_on(async {
            let code = down(None, true).await;
            let state = runner::default_state_dir();
            let store = crate::checkpoint::Store::new(&state);
            println!("removed {} checkpoint(s)", store.clear());
            let _ = std::fs::remove_dir_all(state.join("templates"));
            code
        }),
        Command::Merge { dirs, report_dir } => merge(&dirs, &report_dir),
        Command::Render {
            lab,
            with_solution,
            format,
            output,
        } => render(&lab, with_solution, format, output.as_deref()),
        Command::Vocabulary => {
            print!("{}", crate::steps::phrases::markdown_table());
            0
        }
    }
}

fn lint(paths: &[PathBuf]) -> i32 {
    let mut opts = RunOptions::new(paths.to_vec());
    // Lint needs no toolchain: one placeholder point of the matrix stands for all.
    opts.istio = vec!["-".to_owned()];
    match runner::plan(&opts) {
        Ok(cells) => {
            let mut labs: Vec<&std::path::Path> =
                cells.iter().map(|c| c.lab.path.as_path()).collect();
            labs.dedup();
            println!("labcheck lint: no problems in {} lab(s)", labs.len());
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
        | PlanError::EmptyShard { .. } => 2,
    }
}

/// `labcheck run`, also what `cargo test` runs on features/.
pub async fn run(args: RunArgs) -> i32 {
    let mut opts = RunOptions::new(args.paths.clone());
    opts.jobs = args.jobs;
    opts.keep = args.keep;
    opts.tags = args.tags.clone();
    opts.step = args.step;
    opts.shard = args.shard;
    opts.report_dir = args.report_dir.clone();
    // The author's loop: start from the last step's checkpoint, and leave one for the next try.
    opts.resume = args.step.is_some();
    opts.checkpoint_all = args.step.is_some();
    opts.fresh = args.fresh;
    opts.checkpoints = !args.no_checkpoints;
    let setup = tool_setup_for(&args.paths);
    match &setup {
        Ok((_, versions)) => opts.istio = matrix(versions, &args.istio),
        Err(e) if !args.istio.is_empty() => {
            eprintln!("labcheck: --istio {}: {e}", args.istio.join(","));
            return 2;
        }
        Err(e) => opts.istio_unavailable = Some(e.clone()),
    }
    let cells = match runner::plan(&opts) {
        Ok(c) => c,
        Err(e) => return report_plan_error(&e),
    };
    let env = match environment_for(&setup, &args, &cells).await {
        Ok(env) => env,
        Err(e) => {
            eprintln!("labcheck: {e}");
            return 2;
        }
    };
    let console = Rc::new(Console::new());
    let sink_console = console.clone();
    let summary = runner::run(
        &opts,
        &env,
        cells,
        Rc::new(move |e| sink_console.handle(&e)),
    )
    .await;
    let record = console.record();
    match record.write(&opts.report_dir) {
        Ok(paths) => {
            if let Some(html) = paths
                .iter()
                .find(|p| p.extension().is_some_and(|e| e == "html"))
            {
                eprintln!("labcheck: report {}", html.display());
            }
        }
        Err(e) => eprintln!(
            "labcheck: cannot write reports to {}: {e}",
            opts.report_dir.display()
        ),
    }
    for e in &summary.harness_errors {
        eprintln!("labcheck: harness error: {e}");
    }
    let markdown = crate::report::summary::markdown(&record);
    if crate::report::github::active() {
        crate::report::github::publish(&record, &markdown);
    }
    println!("{markdown}");
    let (passed, failed, not_run) = record.counts();
    println!("{passed} passed, {failed} failed, {not_run} skipped");
    summary.exit_code()
}

/// `labcheck mutate`: the baseline, then every mutant, then the report. Exit 0 when every missed
/// mutant is marked equivalent, 1 when some are not (or a mutant's checks could not be
/// evaluated), 2 when mutation testing could not be done.
async fn mutate(args: MutateArgs) -> i32 {
    use crate::mutate::{self, MutateOptions, generate, report};
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("labcheck mutate: {e}");
        2
    };
    let loaded = match mutate::load(&args.lab, args.step) {
        Ok(l) => l,
        Err(mutate::MutateError::Plan(e)) => return report_plan_error(&e),
        Err(e) => return fail(&e),
    };
    let lang = loaded.lab.lang;
    if loaded.scripts.is_empty() {
        return fail(&"the lab has no learner commands to mutate");
    }
    let equivalents = match mutate::equivalents::load(&args.lab) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    if args.list {
        let all = generate::mutants(&loaded.scripts, None);
        for m in &all {
            println!(
                "{} {} {} {}:{}: {}",
                m.id,
                lang.pick("step", "ステップ"),
                m.step,
                args.lab.display(),
                m.lines.0,
                m.describe()
            );
        }
        println!("{} {}", all.len(), lang.pick("mutants", "個の変異"));
        return 0;
    }
    let setup = tool_setup_for(std::slice::from_ref(&args.lab));
    let opts = MutateOptions {
        lab: args.lab.clone(),
        labels: match &setup {
            Ok((_, versions)) => matrix(versions, &args.istio),
            Err(_) => Vec::new(),
        },
        step: args.step,
        jobs: args.jobs,
        state_dir: runner::default_state_dir(),
    };
    let mut base = mutate::baseline_options(&opts, generate::saved_files(&loaded.scripts));
    if let Err(e) = &setup {
        base.istio_unavailable = Some(e.clone());
    }
    let cells = match runner::plan(&base) {
        Ok(c) => c,
        Err(e) => return report_plan_error(&e),
    };
    // Mutants run on the default backend, as `labcheck run` does.
    let Ok(Cli {
        command: Command::Run(run_args),
    }) = Cli::try_parse_from(["labcheck", "run"])
    else {
        return fail(&"cannot build the default run options");
    };
    let env = match environment_for(&setup, &run_args, &cells).await {
        Ok(env) => env,
        Err(e) => return fail(&e),
    };
    eprintln!(
        "labcheck mutate: {} ({} {})",
        lang.pick("running the reference solution", "模範解答を実行"),
        cells.len(),
        lang.pick("cell(s)", "セル")
    );
    let baseline = mutate::baseline(&base, &env, cells).await;
    if let Some(signal) = baseline.interrupted {
        return 128 + signal;
    }
    for (label, (passed, _)) in &baseline.labels {
        if !passed {
            return fail(&mutate::MutateError::Baseline {
                label: label.clone(),
                lab: args.lab.display().to_string(),
            });
        }
    }
    let slug = loaded.lab.slug();
    let work = opts
        .state_dir
        .join("mutants")
        .join(format!("{slug}-{}", std::process::id()));
    let mut results: Vec<mutate::Result> = Vec::new();
    let mut interrupted = None;
    for (label, (_, answers)) in &baseline.labels {
        let all = generate::mutants(&loaded.scripts, Some(answers));
        let mut viable = Vec::new();
        for m in all {
            match mutate::syntax_error(&m.script) {
                Some(message) => results.push(mutate::Result {
                    mutant: m,
                    label: label.clone(),
                    outcome: mutate::Outcome::Unviable { message },
                    equivalent: None,
                }),
                None => viable.push(m),
            }
        }
        eprintln!(
            "labcheck mutate: istio {label}: {} {}",
            viable.len(),
            lang.pick("mutants to run", "個の変異を実行")
        );
        let dir = work.join(label.replace('.', "-"));
        let paths = match mutate::write_mutants(&dir, &loaded, &viable) {
            Ok(p) => p,
            Err(e) => return fail(&e),
        };
        let run_opts = mutate::mutant_options(
            &opts,
            paths.values().cloned().collect(),
            label,
            baseline.slowest,
        );
        let cells = match runner::plan(&run_opts) {
            Ok(c) => c,
            Err(e) => return report_plan_error(&e),
        };
        let by_slug = viable
            .iter()
            .map(|m| (format!("{slug}.m-{}", m.id), m.clone()))
            .collect();
        let (eq, l) = (equivalents.clone(), label.clone());
        let done: mutate::Done = Rc::new(move |m, o| {
            let r = mutate::Result {
                mutant: m.clone(),
                label: l.clone(),
                outcome: o.clone(),
                equivalent: eq.get(&m.id).cloned(),
            };
            eprintln!("{}", report::line(&r, lang));
        });
        let (outcomes, stopped) = mutate::run_mutants(&run_opts, &env, cells, by_slug, done).await;
        let _ = std::fs::remove_dir_all(&dir);
        for m in viable {
            let outcome = outcomes
                .get(&m.id)
                .cloned()
                .unwrap_or(mutate::Outcome::Error {
                    message: "not run (the run was interrupted)".to_owned(),
                });
            let equivalent = equivalents.get(&m.id).cloned();
            results.push(mutate::Result {
                mutant: m,
                label: label.clone(),
                outcome,
                equivalent,
            });
        }
        if stopped.is_some() {
            interrupted = stopped;
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    results.sort_by(|a, b| {
        (&a.label, a.mutant.lines, &a.mutant.id).cmp(&(&b.label, b.mutant.lines, &b.mutant.id))
    });
    let missed: Vec<&mutate::Result> = results
        .iter()
        .filter(|r| r.outcome == mutate::Outcome::Missed)
        .collect();
    if !missed.is_empty() {
        println!(
            "\n{}",
            lang.pick(
                "Missed mutants (no check rejects these wrong answers):",
                "見逃した変異(どのチェックもこの間違った解答を不合格にしない):"
            )
        );
        for r in &missed {
            let label = if r.label == "-" {
                String::new()
            } else {
                format!("[istio {}] ", r.label)
            };
            print!("{label}{}", report::diff(r, &args.lab));
        }
    }
    println!("\n{}", report::summary(&results, lang));
    let dir = args.report_dir.join("mutants");
    if let Err(e) = report::write(&dir, &args.lab, &results) {
        eprintln!("labcheck mutate: cannot write {}: {e}", dir.display());
        return 2;
    }
    println!("labcheck mutate: {}", dir.display());
    let unmarked = missed.iter().any(|r| r.equivalent.is_none());
    let errors = results
        .iter()
        .any(|r| matches!(r.outcome, mutate::Outcome::Error { .. }));
    if let Some(signal) = interrupted {
        128 + signal
    } else if unmarked || errors {
        if unmarked {
            eprintln!(
                "labcheck mutate: {} {}",
                lang.pick(
                    "mark a missed mutant that changes nothing a grader could see in",
                    "採点で区別できない見逃しは次のファイルで同等と記す:"
                ),
                mutate::equivalents::path_for(&args.lab).display()
            );
        }
        1
    } else {
        0
    }
}

/// The Istio labels to run: those asked for, else the versions file's default matrix; a label
/// asked for twice (`--istio 1.31,1.31`) is one point of the matrix.
fn matrix(versions: &toolchain::Versions, requested: &[String]) -> Vec<String> {
    let mut labels = if requested.is_empty() {
        versions.default_labels().to_vec()
    } else {
        requested.to_vec()
    };
    let mut seen = std::collections::HashSet::new();
    labels.retain(|l| seen.insert(l.clone()));
    labels
}

/// The toolchain and the versions file (`istio-versions.toml` in the working directory).
fn tool_setup() -> Result<(Toolchain, toolchain::Versions), String> {
    tool_setup_for(&[])
}

/// The toolchain and the versions file that applies to the labs at `paths` (the nearest
/// `istio-versions.toml` walking up from them, else the working directory's).
fn tool_setup_for(paths: &[PathBuf]) -> Result<(Toolchain, toolchain::Versions), String> {
    let versions = toolchain::load_versions(&toolchain::versions_dir(paths))
        .map_err(|e| toolchain::error_chain(&e))?;
    let tc = Toolchain::new(Toolchain::default_cache_dir()).with_versions(&versions);
    Ok((tc, versions))
}

fn tool(r: &toolchain::Resolved) -> runner::Tool {
    runner::Tool {
        name: r.tool.name().to_owned(),
        version: r.version.clone(),
        source: r.source.to_string(),
        path: r.path.clone(),
    }
}

/// The environment the planned cells need: nothing beyond the sandbox for sandbox-only labs,
/// else the toolchain resolved (built where missing) and the cluster backend.
async fn environment_for(
    setup: &Result<(Toolchain, toolchain::Versions), String>,
    args: &RunArgs,
    cells: &[runner::CellPlan],
) -> Result<runner::Environment, String> {
    if cells.iter().all(|c| c.needs == runner::Needs::Sandbox) {
        return Ok(runner::Environment::sandbox_only());
    }
    match setup {
        Ok((tc, versions)) => {
            match runner::interruptible(prepare_environment(tc, versions, args, cells)).await {
                Ok(env) => env,
                Err(signal) => std::process::exit(interrupted_install(tc, signal)),
            }
        }
        Err(e) => Err(e.clone()),
    }
}

/// After a signal during tool builds (their process groups already killed): removes this
/// process's half-written files from the cache and returns the exit code, 128 + the signal.
fn interrupted_install(tc: &Toolchain, signal: i32) -> i32 {
    tc.clean_interrupted();
    eprintln!("labcheck: interrupted while installing tools; nothing half-built was kept");
    128 + signal
}

/// Resolves every tool the planned cells need (building what the cache lacks) and the backend.
async fn prepare_environment(
    tc: &Toolchain,
    versions: &toolchain::Versions,
    args: &RunArgs,
    cells: &[runner::CellPlan],
) -> Result<runner::Environment, String> {
    let chain = |e: toolchain::ToolError| toolchain::error_chain(&e);
    let mut env = runner::Environment::sandbox_only();
    let mut labels: Vec<String> = cells
        .iter()
        .filter(|c| c.needs == runner::Needs::Istio)
        .map(|c| c.id.label.clone())
        .collect();
    labels.dedup();
    for label in labels {
        let spec = versions.resolve(&label).map_err(chain)?;
        let resolved = tc.istioctl(&spec).await.map_err(chain)?;
        env.istioctl.insert(label, tool(&resolved));
    }
    env.kubectl = Some(tool(&tc.kubectl().await.map_err(chain)?));
    env.backend = Some(match args.cluster {
        ClusterKind::Local => {
            let apiserver = tc.kube_apiserver().await.map_err(chain)?;
            let etcd = tc.etcd().await.map_err(chain)?;
            env.kubernetes = Some(tool(&apiserver));
            Backend::Local(cluster::Local {
                tools: LocalTools {
                    etcd: etcd.path,
                    kube_apiserver: apiserver.path,
                },
                templates: Some(runner::default_state_dir().join("templates")),
            })
        }
        ClusterKind::Existing => {
            let kubeconfig = args
                .kubeconfig
                .clone()
                .ok_or("--cluster existing needs --kubeconfig")?;
            let context = args
                .context
                .clone()
                .ok_or("--cluster existing needs --context")?;
            if !args.allow_existing_cluster {
                return Err(cluster::ClusterError::ExistingNotAllowed { context }.to_string());
            }
            Backend::Existing(cluster::Existing {
                kubeconfig,
                context,
                allowed: args.allow_existing_cluster,
            })
        }
        ClusterKind::Kind => Backend::Kind(cluster::Kind {
            node_image: args.kind_image.clone(),
            kind: PathBuf::from("kind"),
        }),
    });
    Ok(env)
}

fn ps() -> i32 {
    let cells = kept::list(&runner::default_state_dir());
    if cells.is_empty() {
        println!("no kept cells");
        return 0;
    }
    println!("{:<40} {:<8} {:<8} LAB", "CELL", "STATE", "CLUSTER");
    for c in cells {
        let state = if c.alive() { "running" } else { "stopped" };
        let cluster = if c.has_cluster { "local" } else { "-" };
        println!("{:<40} {state:<8} {cluster:<8} {}", c.name, c.lab.display());
    }
    0
}

async fn shell(name: &str) -> i32 {
    let cell = match kept::find(&runner::default_state_dir(), name)
        .and_then(|c| c.sandbox().map(|s| (c, s)))
    {
        Ok(found) => found,
        Err(e) => {
            eprintln!("labcheck shell: {e}");
            return 2;
        }
    };
    let (kept, sandbox) = cell;
    eprintln!(
        "labcheck: shell in {} ({}); exit to leave, the cell keeps running",
        kept.name, kept.id
    );
    let mut cmd = sandbox.interactive_command("bash");
    cmd.env("PS1", format!("[{}] \\w# ", kept.name));
    match cmd.status().await {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("labcheck shell: cannot start bash in {}: {e}", kept.name);
            2
        }
    }
}

async fn down(name: Option<&str>, all: bool) -> i32 {
    let state = runner::default_state_dir();
    let cells = if all {
        kept::list(&state)
    } else {
        match kept::find(&state, name.unwrap_or_default()) {
            Ok(c) => vec![c],
            Err(e) => {
                eprintln!("labcheck down: {e}");
                return 2;
            }
        }
    };
    let mut code = 0;
    for c in cells {
        match c.down().await {
            Ok(()) => println!("down: {}", c.name),
            Err(e) => {
                eprintln!("labcheck down: {}: {e}", c.name);
                code = 2;
            }
        }
    }
    code
}

async fn grade(args: GradeArgs) -> i32 {
    let mut opts = RunOptions::new(vec![args.lab.clone()]);
    opts.step = args.step;
    let target = match &args.cell {
        Some(name) => match kept::find(&opts.state_dir, name) {
            Ok(c) => runner::GradeTarget::Kept(c),
            Err(e) => {
                eprintln!("labcheck grade: {e}");
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
    let summary = match runner::grade(
        &opts,
        target,
        Rc::new(move |e| sink_record.borrow_mut().apply(&e)),
    )
    .await
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("labcheck grade: {e}");
            return 2;
        }
    };
    print!("{}", crate::report::grade_text(&record.borrow()));
    for e in &summary.harness_errors {
        eprintln!("labcheck grade: {e}");
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
    let (lab, feature) = match crate::lint::load(lab) {
        Err(e) => {
            eprintln!("labcheck render: {e}");
            return 2;
        }
        Ok(Err(problems)) => {
            for p in &problems {
                eprintln!("{p}");
            }
            return 1;
        }
        Ok(Ok(loaded)) => loaded,
    };
    let source = std::fs::read_to_string(&lab.path).unwrap_or_default();
    let page = crate::render::render(&source, &feature, &lab, format, with_solution);
    match output {
        None => {
            print!("{page}");
            0
        }
        Some(path) => match std::fs::write(path, page) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("labcheck render: cannot write {}: {e}", path.display());
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
            eprintln!("labcheck merge: {e}");
            return 2;
        }
    }
    if let Err(e) = record.write(out) {
        eprintln!(
            "labcheck merge: cannot write reports to {}: {e}",
            out.display()
        );
        return 2;
    }
    println!("{}", crate::report::summary::markdown(&record));
    let (passed, failed, not_run) = record.counts();
    println!("{passed} passed, {failed} failed, {not_run} skipped");
    if record.passed() { 0 } else { 1 }
}
