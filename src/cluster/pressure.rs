//! A node under pressure: the kubelet's `DiskPressure`, `MemoryPressure` and `PIDPressure`
//! conditions. While one holds, the kubelet evicts Pods and refuses new ones, so a lab's checks
//! fail for the machine's sake (a nearly full disk, say), not the lab's: a cell that failed on
//! such a node carries it as a harness error, naming the node, the condition and the kubelet's
//! message, so the failure is never taken for the lab's.

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;

/// The node conditions that mean the kubelet is reclaiming resources.
const PRESSURE: [&str; 3] = ["DiskPressure", "MemoryPressure", "PIDPressure"];

/// How long to wait for the API server's answer: a failed cell's server may be gone.
const ASK: Duration = Duration::from_secs(5);

/// A node's condition under pressure, as the API server has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pressure {
    pub node: String,
    pub condition: String,
    pub message: String,
}

impl std::fmt::Display for Pressure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {} has {} ({}): the kubelet evicts Pods while it holds, so this cell's failures \
             may be the machine's, not the lab's",
            self.node, self.condition, self.message
        )
    }
}

/// The first pressure condition that holds on any node of the cluster; `None` when none holds or
/// the API server does not answer in time.
pub async fn of(client: &kube::Client) -> Option<Pressure> {
    let nodes: Api<Node> = Api::all(client.clone());
    let listed = tokio::time::timeout(ASK, nodes.list(&Default::default()))
        .await
        .ok()?
        .ok()?;
    listed.items.iter().find_map(pressure)
}

/// A node's first pressure condition with status `True`.
fn pressure(node: &Node) -> Option<Pressure> {
    let conditions = node.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| PRESSURE.contains(&c.type_.as_str()) && c.status == "True")
        .map(|c| Pressure {
            node: node.metadata.name.clone().unwrap_or_default(),
            condition: c.type_.clone(),
            message: c.message.clone().unwrap_or_default(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeStatus};

    fn node(conditions: &[(&str, &str)]) -> Node {
        Node {
            metadata: kube::api::ObjectMeta {
                name: Some("labcheck-node".into()),
                ..Default::default()
            },
            status: Some(NodeStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(t, s)| NodeCondition {
                            type_: (*t).into(),
                            status: (*s).into(),
                            message: Some(format!("{t} is {s}")),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn only_a_pressure_condition_that_holds_counts() {
        let healthy = node(&[("Ready", "True"), ("DiskPressure", "False")]);
        assert_eq!(pressure(&healthy), None);
        let full = node(&[("Ready", "True"), ("DiskPressure", "True")]);
        let found = pressure(&full).expect("DiskPressure holds");
        assert_eq!(found.condition, "DiskPressure");
        assert_eq!(found.node, "labcheck-node");
        assert!(found.to_string().contains("DiskPressure is True"));
        assert_eq!(pressure(&node(&[("NetworkUnavailable", "True")])), None);
    }
}
