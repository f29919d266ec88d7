//! A node started on a cluster from a checkpoint: etcd's copy still holds the Pods bound to
//! the node, with the status the old kubelet last wrote (Ready, its containers' ids), and the
//! Node's own Ready condition. The new kubelet recreates those Pods (same names and uids, new
//! sandboxes, new IPs). [`Before`] records, before the kubelet starts, what was ready then; the
//! node counts as started only once it has reported in itself and every Pod that was Ready is
//! Ready again in new containers — as ready as the cell the checkpoint was taken from.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::ListParams;

/// What the cluster held before the kubelet started.
#[derive(Debug, Default)]
pub struct Before {
    /// The Node's last heartbeat, as etcd's copy has it.
    heartbeat: Option<String>,
    /// The Pods that were Ready: (namespace/name, uid).
    ready: Vec<(String, String)>,
    /// Every container id the old kubelet reported.
    containers: BTreeSet<String>,
}

/// Whether a Pod's Ready condition is True.
fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The ids of a Pod's containers (init containers too) as its status reports them.
fn container_ids(pod: &Pod) -> impl Iterator<Item = String> + '_ {
    let status = pod.status.iter();
    status
        .flat_map(|s| {
            s.container_statuses
                .iter()
                .flatten()
                .chain(s.init_container_statuses.iter().flatten())
        })
        .filter_map(|c| c.container_id.clone())
}

fn heartbeat(node: &Node) -> Option<String> {
    let conditions = node.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
    ready.last_heartbeat_time.as_ref().map(|t| format!("{t:?}"))
}

/// Records what etcd's copy holds for `node` (nothing on a fresh cluster).
pub async fn before(client: &kube::Client, node: &str) -> Before {
    let nodes: Api<Node> = Api::all(client.clone());
    let heartbeat = nodes
        .get_opt(node)
        .await
        .ok()
        .flatten()
        .and_then(|n| heartbeat(&n));
    let pods: Api<Pod> = Api::all(client.clone());
    let on_node = ListParams::default().fields(&format!("spec.nodeName={node}"));
    let listed = pods
        .list(&on_node)
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    Before {
        heartbeat,
        ready: listed
            .iter()
            .filter(|p| is_ready(p) && p.metadata.deletion_timestamp.is_none())
            .map(|p| {
                let m = &p.metadata;
                (
                    format!(
                        "{}/{}",
                        m.namespace.clone().unwrap_or_default(),
                        m.name.clone().unwrap_or_default()
                    ),
                    m.uid.clone().unwrap_or_default(),
                )
            })
            .collect(),
        containers: listed.iter().flat_map(container_ids).collect(),
    }
}

impl Before {
    /// Whether `node` has reported in since: its heartbeat is not etcd's copy's.
    pub fn reported(&self, node: &Node) -> bool {
        self.heartbeat.is_none() || heartbeat(node) != self.heartbeat
    }

    /// Waits until every Pod that was Ready is Ready again in containers the new kubelet
    /// started, or is gone; the Pods still waiting when `timeout` passes.
    pub async fn wait_pods(&self, client: &kube::Client, timeout: Duration) -> Result<(), String> {
        let started = Instant::now();
        let mut waiting: Vec<String> = Vec::new();
        while started.elapsed() < timeout {
            waiting.clear();
            for (name, uid) in &self.ready {
                let (namespace, pod) = name.split_once('/').unwrap_or_default();
                let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
                match api.get_opt(pod).await {
                    Ok(Some(p)) if p.metadata.uid.as_deref() == Some(uid.as_str()) => {
                        let fresh = container_ids(&p).all(|id| !self.containers.contains(&id));
                        if !(is_ready(&p) && fresh) {
                            waiting.push(name.clone());
                        }
                    }
                    Ok(_) => {}
                    Err(e) => waiting.push(format!("{name} ({e})")),
                }
            }
            if waiting.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(format!("not Ready again: {}", waiting.join(", ")))
    }
}
