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
pub mod poll;
pub mod pool;
pub mod pressure;
pub(crate) mod processes;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::sandbox::Sandbox;
pub use kind::{Kind, KindNode};
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
    /// A node the cell's steps ran on was under pressure (see [`pressure`]).
    #[error("{0}")]
    NodePressure(pressure::Pressure),
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
        _guard: Box<kind::Guard>,
        /// A `@mesh` cell's watch for istiod ([`mesh`]).
        _mesh: Option<mesh::Mesh>,
        /// What a kept cell's record holds: the cluster, and its registry's pids.
        kept: kind::KindRecord,
        registry: Vec<u32>,
    },
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

    /// A pressure condition that holds on one of the cluster's nodes, for backends whose nodes
    /// are the cell's own (a real node, kind): a failed cell on such a node failed for the
    /// machine's sake. `None` for an existing cluster, whose nodes are not labcheck's.
    pub async fn pressure(&self) -> Option<pressure::Pressure> {
        let own_nodes = match &self.inner {
            Inner::Local { processes, .. } => processes.node.is_some(),
            Inner::Kind { .. } => true,
            Inner::Existing => false,
        };
        if own_nodes {
            pressure::of(&self.client).await
        } else {
            None
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
        // A real node's runtime starts while the API server readies itself; its kubelet once
        // the server is ready.
        let node_commands = match env.node.as_ref().map(|_| cell_commands(env)).transpose() {
            Ok(c) => c,
            Err(e) => {
                processes.stop().await;
                return Err(e);
            }
        };
        let start =
            env.node
                .as_ref()
                .zip(node_commands.as_ref())
                .map(|(tools, (commands, learner))| node::Start {
                    commands,
                    tools,
                    dir: &env.dir,
                    pki: &pki,
                    client: &client,
                    keep: env.sandbox.keeps(),
                    learner,
                });
        let runtime = async {
            match &start {
                Some(s) => Some(node::start_runtime(s).await),
                None => None,
            }
        };
        // Every readiness check, even from a template: the two bootstrap hooks look for the
        // first time a second after the server serves (`wait.Poll`), and a lab may read
        // `/readyz` itself.
        let (ready, runtime) = tokio::join!(poll_ready(&client, remaining), runtime);
        let mut node = match runtime.transpose() {
            Ok(n) => n,
            Err(e) => {
                processes.stop().await;
                return Err(e);
            }
        };
        let version = match ready {
            Ok(v) => v,
            Err(detail) => {
                let detail = format!("{detail}\n{}", processes.apiserver_log_tail());
                if let Some(n) = node.as_mut() {
                    n.stop().await;
                }
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
        if let (Some(mut n), Some(s)) = (node, start.as_ref()) {
            if let Err(e) = n.join(s).await {
                processes.stop().await;
                return Err(e);
            }
            processes.node = Some(n);
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
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    let namespaces = &namespaces;
    poll::until(timeout, Duration::from_millis(20), || async move {
        let readyz = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        let body = client
            .request_text(readyz)
            .await
            .map_err(|e| e.to_string())?;
        if body.trim() != "ok" {
            return Err(body.lines().last().unwrap_or_default().to_owned());
        }
        namespaces
            .list(&Default::default())
            .await
            .map_err(|e| e.to_string())?;
        Ok(client
            .apiserver_version()
            .await
            .map(|v| v.git_version)
            .unwrap_or_default())
    })
    .await
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
