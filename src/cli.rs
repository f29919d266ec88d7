//! The command line: clap definitions and one function per subcommand, each validating its
//! input before acting. Exit codes: 0 every lab passed, 1 a lab failed, 2 the harness failed.

use std::path::PathBuf;
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
    /// Grade a learner's environment: run only the lab's checks, step by step.
    Grade(GradeArgs),
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
                ToolsAction::Install { istio } => {
                    runtime.block_on(toolchain::commands::install(&tc, &versions, &istio))
                }
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
        Command::Ps => ps(),
        Command::Shell { cell } => runtime.block_on(shell(&cell)),
        Command::Down { cell, all } => runtime.block_on(down(cell.as_deref(), all)),
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
        | PlanError::NoIstio { .. } => 2,
    }
}

/// `labcheck run`, also what `cargo test` runs on features/.
pub async fn run(args: RunArgs) -> i32 {
    let mut opts = RunOptions::new(args.paths.clone());
    opts.jobs = args.jobs;
    opts.keep = args.keep;
    opts.tags = args.tags.clone();
    opts.step = args.step;
    opts.report_dir = args.report_dir.clone();
    let setup = tool_setup_for(&args.paths);
    match &setup {
        Ok((_, versions)) => {
            let mut labels = if args.istio.is_empty() {
                versions.default_labels().to_vec()
            } else {
                args.istio.clone()
            };
            // `--istio 1.31,1.31` is one point of the matrix.
            let mut seen = std::collections::HashSet::new();
            labels.retain(|l| seen.insert(l.clone()));
            opts.istio = labels;
        }
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
    let env = if cells.iter().all(|c| c.needs == runner::Needs::Sandbox) {
        runner::Environment::sandbox_only()
    } else {
        let prepared = match setup {
            Ok((tc, versions)) => prepare_environment(&tc, &versions, &args, &cells).await,
            Err(e) => Err(e),
        };
        match prepared {
            Ok(env) => env,
            Err(e) => {
                eprintln!("labcheck: {e}");
                return 2;
            }
        }
    };
    let console = Rc::new(Console::default());
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
    println!("{}", crate::report::summary::markdown(&record));
    let (passed, failed, not_run) = record.counts();
    println!("{passed} passed, {failed} failed, {not_run} skipped");
    summary.exit_code()
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
