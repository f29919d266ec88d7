//! The kind backend's start: a kind cluster per cell (labcheck's node image with the cell's
//! registry beside it, or one the user named), the learner's link to it, and the guard that
//! deletes it with the cell.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster::{
    CellEnv, Cluster, ClusterBackend, ClusterError, Inner, client_for, kind, mesh, wait_ready,
};

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
        let mut guard = Guard {
            command: Some(command.clone()),
            beside,
        };
        command.create().await?;
        let client = client_for(&command.kubeconfig, None).await?;
        let what = format!("kind cluster {}", command.name);
        let version = wait_ready(&client, Duration::from_secs(120), &what).await?;
        wait_default_account(&client, &what).await?;
        wait_cluster_dns(&client, &what).await?;
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

/// Asks `probe` every 200 ms until it answers `Ok`; after `timeout`, `NotReady` with its last
/// answer.
async fn wait_until<F, Fut>(what: &str, timeout: Duration, probe: F) -> Result<(), ClusterError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    crate::cluster::poll::until(timeout, Duration::from_millis(200), probe)
        .await
        .map_err(|detail| ClusterError::NotReady {
            what: what.to_owned(),
            waited: timeout.as_secs(),
            detail,
        })
}

/// Waits until the controllers have made the `default` namespace's ServiceAccount: until then a
/// learner's first `kubectl run` is refused ("serviceaccount \"default\" not found").
async fn wait_default_account(client: &kube::Client, what: &str) -> Result<(), ClusterError> {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let accounts: kube::Api<ServiceAccount> = kube::Api::namespaced(client.clone(), "default");
    let accounts = &accounts;
    wait_until(what, Duration::from_secs(60), || async move {
        match accounts.get_opt("default").await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err("no ServiceAccount default/default yet".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    })
    .await
}

/// Waits until the cluster's DNS (kubeadm's CoreDNS) serves.
async fn wait_cluster_dns(client: &kube::Client, what: &str) -> Result<(), ClusterError> {
    let what = format!("{what}: the cluster's DNS (kube-system/kube-dns)");
    wait_until(&what, Duration::from_secs(120), || {
        crate::cluster::node::coredns::serves(client)
    })
    .await
}

/// The images a kind node runs beside its control plane, as the image table builds them.
const KIND_TAGS: kind::ImageTags = kind::ImageTags {
    pause: "registry.k8s.io/pause:3.10.1",
    coredns: "v1.15.0",
    etcd: "3.6.16-0",
};

/// Deletes a kind cluster, its registry and its network when dropped while armed: a cell that
/// was interrupted leaves none behind. Disarmed once they are gone, or for a kept cell.
#[derive(Debug)]
pub(in crate::cluster) struct Guard {
    command: Option<kind::KindCommand>,
    beside: Option<kind::Beside>,
}

impl Guard {
    fn disarm(&mut self) {
        self.command = None;
        self.beside = None;
    }

    /// Deletes what the guard holds, in order: the cluster, then its registry and network.
    pub(in crate::cluster) async fn delete(&mut self) {
        if let Some(command) = self.command.take() {
            let _ = command.delete().await;
        }
        if let Some(mut beside) = self.beside.take() {
            beside.stop().await;
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The registry's processes go with their list; the cluster, then its network, with
        // its record.
        self.beside = None;
        if let Some(c) = self.command.take() {
            c.record().delete();
        }
    }
}
