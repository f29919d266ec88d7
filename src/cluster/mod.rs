//! Clusters for cells, behind one trait: [`ClusterBackend`] is implemented by [`Local`] (etcd +
//! kube-apiserver inside the cell, the default), [`Existing`] (a named kubeconfig context, only
//! when explicitly allowed) and [`Kind`] (a kind cluster per cell). A started [`Cluster`] gives the
//! learner a kubeconfig inside the cell and the harness a kube-rs client; [`checks`] grades it.
//! A local cluster can carry a real node ([`node`]: controllers, the kubelet, a container
//! runtime, kube-proxy, CoreDNS) for `@node` labs, and for `@mesh` labs with Istio's images
//! ([`mesh`]).

mod certs;
pub mod checks;
pub mod docker;
pub mod etcd;
pub mod forward;
pub mod kind;
pub mod kubeconfig;
pub mod local;
pub mod mesh;
pub mod node;
pub mod pool;
pub(crate) mod processes;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::sandbox::Sandbox;
pub use local::LocalTools;

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cannot start {what}: {source}")]
    Spawn {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} was not ready after {waited}s: {detail}")]
    NotReady {
        what: String,
        waited: u64,
        detail: String,
    },
    #[error("kubeconfig {path}: {message}")]
    Kubeconfig { path: PathBuf, message: String },
    #[error(
        "the existing-cluster backend mutates the cluster of context {context:?}: pass --allow-existing-cluster to allow it"
    )]
    ExistingNotAllowed { context: String },
    #[error("{command}: {message}")]
    Command { command: String, message: String },
    #[error(
        "a real node (@node, @mesh) runs on the local or kind backend, and this cell's cluster is {backend}"
    )]
    NodeNeedsLocal { backend: &'static str },
    #[error("{0}")]
    Io(String),
    #[error("a pooled cluster: {0}")]
    Etcd(#[from] etcd::EtcdError),
    #[error("a pooled cluster's network: {0}")]
    Sandbox(#[source] Box<crate::sandbox::SandboxError>),
}

/// What a backend gets to start a cluster for a cell.
pub struct CellEnv<'a> {
    pub sandbox: &'a Sandbox,
    /// A directory of the cell for the cluster's files.
    pub dir: PathBuf,
    /// Where the learner's kubeconfig goes (the cell's `KUBECONFIG`).
    pub kubeconfig: PathBuf,
    /// A name unique to the cell, for backends that name clusters.
    pub name: String,
    /// A real node in the cluster (`@node` and `@mesh` labs; the local backend only).
    pub node: Option<node::NodeTools>,
    /// Whether the node runs Istio (`@mesh` labs): see [`mesh`].
    pub mesh: bool,
}

/// A backend: starts (or attaches to) a cluster for one cell.
pub trait ClusterBackend {
    /// Whether learner commands may keep a network namespace with only loopback.
    fn isolates_network(&self) -> bool;
    fn start(&self, env: &CellEnv<'_>) -> impl Future<Output = Result<Cluster, ClusterError>>;
}

/// A running cluster of a cell.
pub struct Cluster {
    pub client: kube::Client,
    /// The API server's version, e.g. `v1.35.4`.
    pub version: String,
    pub backend: &'static str,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Local {
        processes: Box<local::LocalCluster>,
        _forward: forward::Forward,
    },
    Existing,
    Kind {
        /// Deletes the kind cluster if the cell's future is dropped (an interrupted run).
        _guard: Box<KindGuard>,
        /// A `@mesh` cell's watch for istiod ([`mesh`]).
        _mesh: Option<mesh::Mesh>,
        /// What a kept cell's record holds: the cluster, and its registry's pids.
        kept: kind::KindRecord,
        registry: Vec<u32>,
    },
}

/// Deletes a kind cluster, its registry and its network when dropped while armed: a cell that
/// was interrupted leaves none behind. Disarmed once they are gone, or for a kept cell.
#[derive(Debug)]
struct KindGuard {
    command: Option<kind::KindCommand>,
    beside: Option<kind::Beside>,
}

impl KindGuard {
    fn disarm(&mut self) {
        self.command = None;
        self.beside = None;
    }

    /// Deletes what the guard holds, in order: the cluster, then its registry and network.
    async fn delete(&mut self) {
        if let Some(command) = self.command.take() {
            let _ = command.delete().await;
        }
        if let Some(mut beside) = self.beside.take() {
            beside.stop().await;
        }
    }
}

impl Drop for KindGuard {
    fn drop(&mut self) {
        // The registry's processes go with their list; the cluster, then its network, with
        // its record.
        self.beside = None;
        if let Some(c) = self.command.take() {
            c.record().delete();
        }
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("backend", &self.backend)
            .field("version", &self.version)
            .finish()
    }
}

impl Cluster {
    /// Stops what the backend started (nothing for an existing cluster).
    pub async fn stop(&mut self) {
        match &mut self.inner {
            Inner::Local { processes, .. } => processes.stop().await,
            Inner::Existing => {}
            Inner::Kind { _guard, _mesh, .. } => {
                if let Some(mesh) = _mesh {
                    mesh.stop().await;
                }
                _guard.delete().await
            }
        }
    }

    /// Ends a local cluster at once, its state discarded (a pooled cluster); stops the others.
    pub async fn kill(&mut self) {
        match &mut self.inner {
            Inner::Local { processes, .. } if processes.node.is_none() => processes.kill().await,
            _ => self.stop().await,
        }
    }

    /// What copies the cluster's state (etcd's data) for a checkpoint; `None` for backends
    /// whose state cannot be copied (an existing or kind cluster).
    pub fn state(&self) -> Option<local::EtcdState> {
        match &self.inner {
            Inner::Local { processes, .. } => processes.etcd_state(),
            Inner::Existing | Inner::Kind { .. } => None,
        }
    }

    /// The logs of a real node's processes and Pods' containers, by the name a failed cell's
    /// report gives them; none without a node.
    pub fn node_logs(&self) -> Vec<(String, PathBuf)> {
        match &self.inner {
            Inner::Local { processes, .. } => processes
                .node
                .iter()
                .flat_map(node::RealNode::logs)
                .collect(),
            Inner::Existing | Inner::Kind { .. } => Vec::new(),
        }
    }

    /// Pids of processes that belong to the cluster (kept cells record them).
    pub fn pids(&self) -> Vec<u32> {
        match &self.inner {
            Inner::Local { processes, .. } => processes.pids(),
            Inner::Kind { registry, .. } => registry.clone(),
            Inner::Existing => Vec::new(),
        }
    }

    /// A kind cluster, as a kept cell records it for `down`.
    pub fn kind_record(&self) -> Option<kind::KindRecord> {
        match &self.inner {
            Inner::Kind { kept, .. } => Some(kept.clone()),
            _ => None,
        }
    }
}

/// The default backend: see [`local`].
#[derive(Clone, Debug)]
pub struct Local {
    pub tools: LocalTools,
    /// Where a bootstrapped cluster's etcd data is kept, per pair of binaries: a new cluster
    /// starts from it instead of bootstrapping (namespaces, RBAC roles, priority classes).
    pub templates: Option<PathBuf>,
}

impl ClusterBackend for Local {
    fn isolates_network(&self) -> bool {
        true
    }

    async fn start(&self, env: &CellEnv<'_>) -> Result<Cluster, ClusterError> {
        let started = Instant::now();
        let template = self
            .templates
            .as_ref()
            .map(|t| local::template(t, &self.tools));
        let data = env.dir.join("etcd");
        // A cell from a checkpoint has its data already; any other starts bootstrapped.
        let mut bootstrapped = data.exists();
        if let Some(t) = template.as_ref().filter(|t| !bootstrapped && t.exists()) {
            bootstrapped = crate::sandbox::tree::copy(t, &data).await.is_ok();
        }
        let profile = if env.node.is_some() {
            local::Profile::Node
        } else {
            local::Profile::Plain
        };
        let (mut processes, pki) =
            local::start(env.sandbox, &self.tools, &env.dir, &env.kubeconfig, profile).await?;
        let (client, forward) =
            match forward_client(env.sandbox, &pki, &env.dir.join("host-kubeconfig")).await {
                Ok(c) => c,
                Err(e) => {
                    processes.stop().await;
                    return Err(e);
                }
            };
        let remaining = local::ready_timeout().saturating_sub(started.elapsed());
        // Every readiness check, even from a template: the two bootstrap hooks look for the
        // first time a second after the server serves (`wait.Poll`), and a lab may read
        // `/readyz` itself.
        let version = match poll_ready(&client, remaining).await {
            Ok(v) => v,
            Err(detail) => {
                let detail = format!("{detail}\n{}", processes.apiserver_log_tail());
                processes.stop().await;
                return Err(ClusterError::NotReady {
                    what: "kube-apiserver".into(),
                    waited: local::ready_timeout().as_secs(),
                    detail,
                });
            }
        };
        if let (Some(t), false) = (&template, bootstrapped)
            && let Some(etcd) = processes.etcd_state()
        {
            local::save_template(&etcd, t).await;
        }
        if let Some(tools) = &env.node {
            match start_node(env, tools, &pki, &client).await {
                Ok(n) => processes.node = Some(n),
                Err(e) => {
                    processes.stop().await;
                    return Err(e);
                }
            }
        }
        if env.mesh {
            processes.mesh = Some(mesh::Mesh::watch(client.clone()));
        }
        Ok(Cluster {
            client,
            version,
            backend: "local",
            inner: Inner::Local {
                processes: Box::new(processes),
                _forward: forward,
            },
        })
    }
}

/// What makes commands in the cell's network (the cluster's) and as the cell's learner.
fn cell_commands(
    env: &CellEnv<'_>,
) -> Result<
    (
        crate::sandbox::NetworkCommands,
        crate::sandbox::LearnerCommands,
    ),
    ClusterError,
> {
    let io = |e: std::io::Error| ClusterError::Io(e.to_string());
    let commands = env.sandbox.network_commands().map_err(io)?;
    let learner = env.sandbox.learner_commands().map_err(io)?;
    Ok((commands, learner))
}

/// Starts a real node on a local cluster that is ready.
async fn start_node(
    env: &CellEnv<'_>,
    tools: &node::NodeTools,
    pki: &certs::Pki,
    client: &kube::Client,
) -> Result<node::RealNode, ClusterError> {
    let (commands, learner) = cell_commands(env)?;
    node::start(node::Start {
        commands: &commands,
        tools,
        dir: &env.dir,
        pki,
        client,
        keep: env.sandbox.keeps(),
        learner: &learner,
    })
    .await
}

/// An existing cluster: a named context of a kubeconfig. Labs mutate clusters, so it must be
/// allowed explicitly.
#[derive(Clone, Debug)]
pub struct Existing {
    pub kubeconfig: PathBuf,
    pub context: String,
    pub allowed: bool,
}

impl ClusterBackend for Existing {
    fn isolates_network(&self) -> bool {
        false
    }

    async fn start(&self, env: &CellEnv<'_>) -> Result<Cluster, ClusterError> {
        if !self.allowed {
            return Err(ClusterError::ExistingNotAllowed {
                context: self.context.clone(),
            });
        }
        let flat = flatten_context(&self.kubeconfig, &self.context)?;
        std::fs::write(&env.kubeconfig, flat).map_err(|e| ClusterError::Io(e.to_string()))?;
        let client = client_for(&env.kubeconfig, Some(&self.context)).await?;
        let what = format!("the cluster of context {}", self.context);
        let version = wait_ready(&client, Duration::from_secs(30), &what).await?;
        Ok(Cluster {
            client,
            version,
            backend: "existing",
            inner: Inner::Existing,
        })
    }
}

/// A kind cluster per cell, deleted at the end of the cell unless kept.
#[derive(Clone, Debug)]
pub struct Kind {
    pub kind: PathBuf,
    /// The Docker client kind runs.
    pub docker: PathBuf,
    pub node: KindNode,
}

/// The node image of a kind cell.
#[derive(Clone, Debug)]
pub enum KindNode {
    /// labcheck's, built offline: loaded into the engine when it lacks it; the cell's registry
    /// serves `images` to it.
    Built {
        reference: String,
        archive: PathBuf,
        images: Vec<PathBuf>,
    },
    /// One the user named (`--kind-image`), as kind takes it: pulled by the engine, its images
    /// from their registries.
    Named(Option<String>),
}

impl ClusterBackend for Kind {
    /// The learner's commands reach the cluster through the cell's own namespace's link to the
    /// node ([`kind::link`]).
    fn isolates_network(&self) -> bool {
        true
    }

    async fn start(&self, env: &CellEnv<'_>) -> Result<Cluster, ClusterError> {
        let name = kind::cluster_name(&env.name);
        let keep = env.sandbox.keeps();
        let mut command = kind::KindCommand {
            kind: self.kind.clone(),
            name: name.clone(),
            node_image: None,
            // The harness's: the API server on the machine's loopback.
            kubeconfig: env.dir.join("kind-kubeconfig"),
            config: None,
            network: None,
            docker: Some(self.docker.clone()),
        };
        let mut beside = None;
        match &self.node {
            KindNode::Named(image) => {
                command.node_image = image.clone();
                command.config = Some(write_config(&env.dir, kind::named_config())?);
            }
            KindNode::Built {
                reference,
                archive,
                images,
            } => {
                kind::ensure_node_image(&self.docker, reference, archive).await?;
                // A `@node` or `@mesh` cell's images too: the table's, its Istio version's.
                let mut served = images.clone();
                if let Some(node) = &env.node {
                    served.extend(node.images.iter().map(|i| i.archive.clone()));
                }
                let (started, mounts) =
                    kind::Beside::start(&self.docker, &name, &env.dir, &served, keep).await?;
                command.node_image = Some(reference.clone());
                command.config = Some(write_config(&env.dir, kind::config(&mounts, &KIND_TAGS))?);
                command.network = Some(started.network.name.clone());
                beside = Some(started);
            }
        }
        // From here on the cluster may exist: an error, or an interrupted run, deletes it.
        let mut guard = KindGuard {
            command: Some(command.clone()),
            beside,
        };
        command.create().await?;
        let client = client_for(&command.kubeconfig, None).await?;
        let what = format!("kind cluster {}", command.name);
        let version = wait_ready(&client, Duration::from_secs(120), &what).await?;
        wait_default_account(&client, &what).await?;
        learner_link(env, &command, &self.docker).await?;
        let kept = command.record();
        let registry = guard
            .beside
            .as_ref()
            .map(|b| b.registry.pids())
            .unwrap_or_default();
        if keep {
            guard.disarm();
        }
        let _mesh = env.mesh.then(|| mesh::Mesh::watch(client.clone()));
        Ok(Cluster {
            client,
            version,
            backend: "kind",
            inner: Inner::Kind {
                _guard: Box::new(guard),
                _mesh,
                kept,
                registry,
            },
        })
    }
}

/// Writes a kind cluster's configuration into the cell's cluster directory.
fn write_config(dir: &Path, text: String) -> Result<PathBuf, ClusterError> {
    let config = dir.join("kind.yaml");
    std::fs::write(&config, text)
        .map_err(|e| ClusterError::Io(format!("cannot write {}: {e}", config.display())))?;
    Ok(config)
}

/// Joins the cell's network to the kind node and writes the learner's kubeconfig for it.
async fn learner_link(
    env: &CellEnv<'_>,
    command: &kind::KindCommand,
    docker: &Path,
) -> Result<(), ClusterError> {
    let io = |e: std::io::Error| ClusterError::Io(e.to_string());
    let cell = env.sandbox.network_commands().map_err(io)?;
    let node = command.node_container();
    let node_ip = kind::link::connect(docker, &node, command.network.as_deref(), &cell).await?;
    let read =
        std::fs::read_to_string(&command.kubeconfig).map_err(|e| ClusterError::Kubeconfig {
            path: command.kubeconfig.clone(),
            message: e.to_string(),
        })?;
    let learner = kind::link::learner_kubeconfig(&read, node_ip);
    std::fs::write(&env.kubeconfig, learner).map_err(|e| ClusterError::Kubeconfig {
        path: env.kubeconfig.clone(),
        message: e.to_string(),
    })
}

/// Waits until the controllers have made the `default` namespace's ServiceAccount: until then a
/// learner's first `kubectl run` is refused ("serviceaccount \"default\" not found").
async fn wait_default_account(client: &kube::Client, what: &str) -> Result<(), ClusterError> {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let accounts: kube::Api<ServiceAccount> = kube::Api::namespaced(client.clone(), "default");
    let timeout = Duration::from_secs(60);
    let started = Instant::now();
    loop {
        let last = match accounts.get_opt("default").await {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => "no ServiceAccount default/default yet".to_owned(),
            Err(e) => e.to_string(),
        };
        if started.elapsed() >= timeout {
            return Err(ClusterError::NotReady {
                what: what.to_owned(),
                waited: timeout.as_secs(),
                detail: last,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The images a kind node runs beside its control plane, as the image table builds them.
const KIND_TAGS: kind::ImageTags = kind::ImageTags {
    pause: "registry.k8s.io/pause:3.10.1",
    coredns: "v1.15.0",
    etcd: "3.6.16-0",
};

/// The backends, as the command line chooses them.
#[derive(Clone, Debug)]
pub enum Backend {
    Local(Local),
    Existing(Existing),
    Kind(Kind),
}

impl Backend {
    pub fn isolates_network(&self) -> bool {
        match self {
            Backend::Local(b) => b.isolates_network(),
            Backend::Existing(b) => b.isolates_network(),
            Backend::Kind(b) => b.isolates_network(),
        }
    }

    pub async fn start(&self, env: &CellEnv<'_>) -> Result<Cluster, ClusterError> {
        if env.node.is_some() && matches!(self, Backend::Existing(_)) {
            return Err(ClusterError::NodeNeedsLocal {
                backend: self.name(),
            });
        }
        match self {
            Backend::Local(b) => b.start(env).await,
            Backend::Existing(b) => b.start(env).await,
            Backend::Kind(b) => b.start(env).await,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Local(_) => "local",
            Backend::Existing(_) => "existing",
            Backend::Kind(_) => "kind",
        }
    }
}

/// The harness's client for a kept local cell's cluster: a new forward into the cell's network
/// (the one of the run that kept it ended with that run). Keep the forward while using the client.
pub async fn attach_local(
    sandbox: &Sandbox,
    cluster_dir: &Path,
) -> Result<(kube::Client, forward::Forward), ClusterError> {
    let pki = certs::Pki::existing(&cluster_dir.join("pki"));
    forward_client(sandbox, &pki, &cluster_dir.join("attach-kubeconfig")).await
}

/// The harness's client for the API server inside a cell: a forward from the host's loopback,
/// and a kubeconfig for it written to `config`.
async fn forward_client(
    sandbox: &Sandbox,
    pki: &certs::Pki,
    config: &Path,
) -> Result<(kube::Client, forward::Forward), ClusterError> {
    let io = |e: std::io::Error| ClusterError::Io(e.to_string());
    let network = sandbox.network().map_err(io)?;
    let target = std::net::SocketAddr::from(([127, 0, 0, 1], local::APISERVER_PORT));
    let forward = forward::Forward::start(network, target).await.map_err(io)?;
    kubeconfig::write(config, &format!("https://{}", forward.local), pki).map_err(io)?;
    let client = client_for(config, None).await?;
    Ok((client, forward))
}

/// A kube-rs client for a kubeconfig (and context).
pub async fn client_for(path: &Path, context: Option<&str>) -> Result<kube::Client, ClusterError> {
    let err = |message: String| ClusterError::Kubeconfig {
        path: path.to_owned(),
        message,
    };
    let kc = Kubeconfig::read_from(path).map_err(|e| err(e.to_string()))?;
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| err(e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| err(e.to_string()))
}

/// Waits until `/readyz` answers `ok` and namespaces can be listed; returns the server version.
/// `what` names the cluster in the error.
pub async fn wait_ready(
    client: &kube::Client,
    timeout: Duration,
    what: &str,
) -> Result<String, ClusterError> {
    poll_ready(client, timeout)
        .await
        .map_err(|detail| ClusterError::NotReady {
            what: what.to_owned(),
            waited: timeout.as_secs(),
            detail,
        })
}

async fn poll_ready(client: &kube::Client, timeout: Duration) -> Result<String, String> {
    use k8s_openapi::api::core::v1::Namespace;
    let started = Instant::now();
    let mut last = String::from("no answer");
    while started.elapsed() < timeout {
        let readyz = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        match client.request_text(readyz).await {
            Ok(body) if body.trim() == "ok" => {
                let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
                match namespaces.list(&Default::default()).await {
                    Ok(_) => {
                        let version = client
                            .apiserver_version()
                            .await
                            .map(|v| v.git_version)
                            .unwrap_or_default();
                        return Ok(version);
                    }
                    Err(e) => last = e.to_string(),
                }
            }
            Ok(body) => last = body.lines().last().unwrap_or_default().to_owned(),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(last)
}

/// The kubeconfig reduced to one context with its credentials inlined (what the learner gets).
fn flatten_context(path: &Path, context: &str) -> Result<String, ClusterError> {
    let output = std::process::Command::new("kubectl")
        .args([
            "config",
            "view",
            "--minify",
            "--flatten",
            "--context",
            context,
        ])
        .env("KUBECONFIG", path)
        .output()
        .map_err(|e| ClusterError::Spawn {
            what: "kubectl config view".into(),
            source: e,
        })?;
    if !output.status.success() {
        return Err(ClusterError::Kubeconfig {
            path: path.to_owned(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
