//! A node started on a cluster from a checkpoint: etcd's copy still holds the Pods bound to
//! the node, with the status the old kubelet last wrote (Ready, its containers' ids), and the
//! Node's own Ready condition. The new kubelet recreates those Pods (same names and uids, new
//! sandboxes, new IPs). [`Before`] records, before the kubelet starts, what was ready then; the
//! node counts as started only once it has reported in itself and every Pod that was Ready is
//! Ready again in new containers — as ready as the cell the checkpoint was taken from.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::ListParams;

/// What the cluster held before the kubelet started.
#[derive(Debug, Default)]
pub struct Before {
    node: String,
    /// The Node's last heartbeat, as etcd's copy has it.
    heartbeat: Option<String>,
    /// The Pods that were Ready, by uid: `namespace/name`.
    ready: BTreeMap<String, String>,
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

/// What a Pod's containers that are not ready are doing: each one's state and restarts, and
/// how it last ended.
fn unready(pod: &Pod) -> String {
    let Some(status) = &pod.status else {
        return "no status".to_owned();
    };
    let containers = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten())
        .filter(|c| !c.ready);
    let described: Vec<String> = containers
        .map(|c| {
            let state = c.state.as_ref();
            let now = if let Some(w) = state.and_then(|s| s.waiting.as_ref()) {
                format!("waiting: {}", w.reason.as_deref().unwrap_or("-"))
            } else if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
                format!(
                    "exited {} ({})",
                    t.exit_code,
                    t.reason.as_deref().unwrap_or("-")
                )
            } else {
                "running".to_owned()
            };
            let last = c
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .map(|t| {
                    format!(
                        ", last exited {} ({})",
                        t.exit_code,
                        t.reason.as_deref().unwrap_or("-")
                    )
                })
                .unwrap_or_default();
            format!("{} {now}, {} restarts{last}", c.name, c.restart_count)
        })
        .collect();
    if described.is_empty() {
        let phase = status.phase.as_deref().unwrap_or("no phase");
        format!("{phase}, its containers of before")
    } else {
        described.join("; ")
    }
}

fn heartbeat(node: &Node) -> Option<String> {
    let conditions = node.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
    ready.last_heartbeat_time.as_ref().map(|t| format!("{t:?}"))
}

/// The Pods bound to `node`.
async fn on_node(client: &kube::Client, node: &str) -> Result<Vec<Pod>, kube::Error> {
    let pods: Api<Pod> = Api::all(client.clone());
    let bound = ListParams::default().fields(&format!("spec.nodeName={node}"));
    pods.list(&bound).await.map(|l| l.items)
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
    let listed = on_node(client, node).await.unwrap_or_default();
    let ready = listed
        .iter()
        .filter(|p| is_ready(p) && p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let m = &p.metadata;
            let name = format!(
                "{}/{}",
                m.namespace.as_deref().unwrap_or_default(),
                m.name.as_deref().unwrap_or_default()
            );
            Some((m.uid.clone()?, name))
        })
        .collect();
    Before {
        node: node.to_owned(),
        heartbeat,
        ready,
        containers: listed.iter().flat_map(container_ids).collect(),
    }
}

impl Before {
    /// Whether etcd's copy held the node: the cell starts from a checkpoint.
    pub fn restores(&self) -> bool {
        self.heartbeat.is_some()
    }

    /// Whether `node` has reported in since: its heartbeat is not etcd's copy's.
    pub fn reported(&self, node: &Node) -> bool {
        self.heartbeat.is_none() || heartbeat(node) != self.heartbeat
    }

    /// Waits until every Pod that was Ready is Ready again in containers the new kubelet
    /// started, or is gone; the Pods still waiting when `timeout` passes.
    pub async fn wait_pods(&self, client: &kube::Client, timeout: Duration) -> Result<(), String> {
        crate::cluster::poll::until(timeout, Duration::from_millis(200), || async {
            let pods = on_node(client, &self.node)
                .await
                .map_err(|e| format!("the Pods cannot be listed ({e})"))?;
            let waiting: Vec<String> = self
                .ready
                .iter()
                .filter_map(|(uid, name)| {
                    let now = pods.iter().find(|p| p.metadata.uid.as_ref() == Some(uid))?;
                    let waiting = !is_ready(now)
                        || container_ids(now).any(|id| self.containers.contains(&id));
                    waiting.then(|| format!("{name} ({})", unready(now)))
                })
                .collect();
            if waiting.is_empty() {
                Ok(())
            } else {
                Err(format!("not Ready again: {}", waiting.join(", ")))
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_pod_says_what_its_unready_containers_do() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "httpbin-1", "namespace": "foo"},
            "status": {
                "phase": "Running",
                "initContainerStatuses": [{
                    "name": "istio-proxy", "ready": false, "restartCount": 3, "image": "", "imageID": "",
                    "state": {"running": {}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}
                }],
                "containerStatuses": [
                    {"name": "httpbin", "ready": true, "restartCount": 0, "image": "", "imageID": ""},
                    {"name": "side", "ready": false, "restartCount": 0, "image": "", "imageID": "",
                     "state": {"waiting": {"reason": "ContainerCreating"}}}
                ]
            }
        }))
        .expect("pod");
        assert_eq!(
            unready(&pod),
            "istio-proxy running, 3 restarts, last exited 137 (OOMKilled); side waiting: ContainerCreating, 0 restarts"
        );
    }
}
