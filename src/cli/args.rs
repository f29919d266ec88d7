//! The command line's flags: clap's definitions of every subcommand and its arguments, and what
//! they mean for the library (the cluster backend asked for).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::runner;

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
        /// Look for the kind backend's tools too, and whether a Docker engine answers.
        #[arg(long)]
        kind: bool,
    },
    /// Print every phrase labs can use, English and Japanese, as a Markdown table.
    Vocabulary {
        /// Print the phrases as step definitions for the Cucumber Language Server instead
        /// (the repository's editor/glue.rs).
        #[arg(long)]
        glue: bool,
    },
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
    /// Serve image archives as a read-only registry (what a real node's containerd pulls from;
    /// run by a cell, not by hand).
    #[command(hide = true)]
    Registry {
        /// The address to listen on (in the cell's network).
        #[arg(long)]
        listen: std::net::SocketAddr,
        /// Where to log what it was asked for and does not have.
        #[arg(long)]
        log: std::path::PathBuf,
        /// The image archives (`docker save` layout).
        archives: Vec<std::path::PathBuf>,
    },
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
        /// Every kept cell (yours: see --everyone).
        #[arg(long)]
        all: bool,
        /// Also cells another user's labcheck left (a cell directory or `cell.json` owned by
        /// another user is skipped otherwise).
        #[arg(long)]
        everyone: bool,
    },
    /// Tear down every kept cell and remove every checkpoint (what `run --step N`, mistakes and
    /// mutants start from).
    Clean {
        /// Also cells another user's labcheck left.
        #[arg(long)]
        everyone: bool,
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
    /// Run only the mutant with this id (as `--list` and the reports show it); repeatable.
    #[arg(long = "mutant", value_name = "ID")]
    pub mutants: Vec<String>,
    /// Only the mutants a change since this git revision can affect: those of the steps whose
    /// scripts it touches, and of every step at or before a step whose checks it touches.
    #[arg(long, value_name = "BASE")]
    pub in_diff: Option<String>,
    /// Neither read nor keep outcomes of earlier runs.
    #[arg(long)]
    pub no_cache: bool,
    /// Start a cluster for each mutant from its checkpoint, instead of resetting a running one
    /// to it (slower; what the reset is checked against).
    #[arg(long)]
    pub fresh_clusters: bool,
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
        /// Build the kind backend's tools too (kind, Docker, kubeadm, crictl, the `ptp` plugin)
        /// and its node image's parts.
        #[arg(long)]
        kind: bool,
    },
    /// What the cache holds.
    List,
    /// Print where the cache holds a tool (`dockerd`, `kind`, `kubectl`…); exit 2 if it does
    /// not (for scripts, such as CI's start of a Docker engine).
    Path {
        /// The tool's name, as `doctor` lists it.
        tool: String,
    },
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
    /// How the grade is written: text for people, or JSON (schemas/grade.schema.json).
    #[arg(long, value_enum, default_value_t = GradeFormat::Text)]
    pub format: GradeFormat,
}

/// How `labcheck grade` writes its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GradeFormat {
    Text,
    Json,
}

impl RunArgs {
    /// The cluster backend asked for.
    pub fn cluster_choice(&self) -> runner::ClusterChoice {
        match self.cluster {
            ClusterKind::Local => runner::ClusterChoice::Local,
            ClusterKind::Existing => runner::ClusterChoice::Existing {
                kubeconfig: self.kubeconfig.clone(),
                context: self.context.clone(),
                allowed: self.allow_existing_cluster,
            },
            ClusterKind::Kind => runner::ClusterChoice::Kind {
                node_image: self.kind_image.clone(),
            },
        }
    }
}
