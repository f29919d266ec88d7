//! kwok as the kubelet of the cell's one simulated node: its configuration (the stages kwokctl
//! gives it, and a port-forward of `istio-system`'s Pods to the cell's istiod process), its flags
//! (among them the Pod IP range, one no Pod of a checkpoint holds), the Node it manages,
//! registered with the cluster's Kubernetes version as its kubelet's, that Node's Lease, which a
//! kwok of an earlier process (a checkpoint's) must not keep holding, and kwok's own CRDs for the
//! per-Pod rules it follows (`PortForward`, `Exec`).

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};

use super::NODE_IP;
use crate::cluster::ClusterError;

/// The simulated node's name.
pub const NODE_NAME: &str = "kwok-node-0";
/// The kubelet API's port on the node's IP.
const NODE_PORT: u16 = 10250;
/// kwok v0.8.0's own stages: node initialize and heartbeat with lease, Pod ready, complete and
/// delete. Run standalone, kwok has none (it exits "no stages found").
const STAGES: &str = include_str!("kwok-stages.yaml");
/// kwok v0.8.0's CRDs of the per-Pod rules it follows, with `--enable-crds`: port-forwards
/// ([`super::portforward`]) and execs ([`super::exec`]).
const CRDS: [(&str, &str); 2] = [
    (
        "portforwards.kwok.x-k8s.io",
        include_str!("kwok-portforward-crd.yaml"),
    ),
    ("execs.kwok.x-k8s.io", include_str!("kwok-exec-crd.yaml")),
];
/// How long a CRD may take to be Established.
const CRD_READY: Duration = Duration::from_secs(30);

/// istiod's ports (xDS plaintext and TLS, monitoring, webhooks, debug): a port-forward to an
/// `istio-system` Pod on one of them reaches the cell's istiod, which listens on all addresses.
const ISTIOD_PORTS: [u16; 5] = [15010, 15012, 15014, 15017, 8080];

/// kwok's configuration file: its stages, then the port-forward rule.
pub fn config() -> String {
    let mut text = STAGES.trim_end().to_owned();
    text.push_str(
        "\n---\nkind: ClusterPortForward\napiVersion: kwok.x-k8s.io/v1alpha1\n\
         metadata: {name: istiod}\nspec:\n  selector: {matchNamespaces: [istio-system]}\n  \
         forwards:\n",
    );
    for p in ISTIOD_PORTS {
        text.push_str(&format!(
            "  - {{ports: [{p}], target: {{port: {p}, address: 127.0.0.1}}}}\n"
        ));
    }
    text
}

/// kwok's flags: every node it is given, the kubelet API on the node's IP with TLS.
pub fn args(
    kubeconfig: &Path,
    config: &Path,
    cert: &Path,
    key: &Path,
    pod_cidr: &str,
) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        format!("--kubeconfig={}", path(kubeconfig)),
        format!("--config={}", path(config)),
        "--manage-all-nodes=true".into(),
        // kwok renews the node's Lease, as a kubelet does (kwokctl's default): without it the
        // node lifecycle controller marks the node NotReady after its grace period, kwok's
        // initialize stage runs again and the node's addresses come and go.
        "--node-lease-duration-seconds=40".into(),
        format!("--node-ip={NODE_IP}"),
        format!("--node-port={NODE_PORT}"),
        format!("--server-address={NODE_IP}:{NODE_PORT}"),
        format!("--cidr={pod_cidr}"),
        // Per-Pod port-forward and exec rules come from kwok's resources in the cluster (a
        // served Pod's, see `portforward` and `exec`); the istiod rule stays in the configuration.
        "--enable-crds=PortForward,Exec".into(),
        format!("--tls-cert-file={}", path(cert)),
        format!("--tls-private-key-file={}", path(key)),
    ]
}

/// Installs kwok's CRDs (a cell from a checkpoint has them) and waits until they are
/// Established, so that kwok, started with `--enable-crds`, lists them at once.
pub async fn install_crds(client: &kube::Client) -> Result<(), ClusterError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for (name, text) in CRDS {
        let crd: CustomResourceDefinition = serde_saphyr::from_str(text)
            .map_err(|e| ClusterError::Io(format!("kwok's CRD {name}: {e}")))?;
        match crds.create(&PostParams::default(), &crd).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => {
                return Err(ClusterError::Command {
                    command: format!("create crd {name}"),
                    message: e.to_string(),
                });
            }
        }
    }
    for (name, _) in CRDS {
        wait_established(&crds, name).await?;
    }
    Ok(())
}

/// Waits until CRD `name` is Established.
async fn wait_established(
    crds: &Api<CustomResourceDefinition>,
    name: &str,
) -> Result<(), ClusterError> {
    let started = Instant::now();
    let mut last = String::from("no Established condition");
    while started.elapsed() < CRD_READY {
        match crds.get(name).await {
            Ok(crd) => {
                let established = crd
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True");
                if established {
                    return Ok(());
                }
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(ClusterError::NotReady {
        what: format!("CRD {name}"),
        waited: CRD_READY.as_secs(),
        detail: last,
    })
}

/// The field manager (and `managed-by` label) of the per-Pod rules.
const MANAGER: &str = "labcheck";

/// A per-Pod rule of kwok's of `kind` (`PortForward`, `Exec`): named as the Pod, owned by it (so
/// it goes with it), its annotation saying `why`.
pub fn rule(pod: &Pod, kind: &str, why: &str, spec: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": pod.metadata.name,
            "namespace": pod.metadata.namespace,
            "labels": {"app.kubernetes.io/managed-by": MANAGER},
            "annotations": {"labcheck.dev/why": why},
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.metadata.name,
                "uid": pod.metadata.uid,
            }],
        },
        "spec": spec,
    })
}

/// The API resource of a rule's `kind`.
fn resource(kind: &str) -> ApiResource {
    ApiResource {
        group: "kwok.x-k8s.io".into(),
        version: "v1alpha1".into(),
        api_version: "kwok.x-k8s.io/v1alpha1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    }
}

/// Applies a rule made by [`rule`] (server-side, replacing a restored cell's stale one).
pub async fn apply_rule(client: &kube::Client, rule: &serde_json::Value) -> Result<(), String> {
    let field = |f: &str| rule["metadata"][f].as_str().unwrap_or_default().to_owned();
    let (namespace, name) = (field("namespace"), field("name"));
    let kind = rule["kind"].as_str().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource(kind));
    let params = PatchParams::apply(MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(rule))
        .await
        .map(|_| ())
        .map_err(|e| format!("apply {kind} {namespace}/{name}: {e}"))
}

/// Deletes the rule of `kind` of a Pod whose processes ended (gone already with its Pod is fine).
pub async fn delete_rule(client: &kube::Client, kind: &str, namespace: &str, name: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource(kind));
    let _ = api.delete(name, &DeleteParams::default()).await;
}

/// Registers the simulated node, as a kubelet registers its own: its kubelet reports `version`
/// (istiod injects native sidecars only where every node's kubelet is recent enough, and kwok's
/// own `kwok-0.8.0` is no version). A node already there (a cell from a checkpoint) is kept.
pub async fn register_node(client: &kube::Client, version: &str) -> Result<(), ClusterError> {
    let node: Node = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE_NAME,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
            "labels": {
                "kubernetes.io/hostname": NODE_NAME,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "nodeInfo": {"kubeletVersion": version},
        },
    }))
    .map_err(|e| ClusterError::Io(format!("the simulated node: {e}")))?;
    let nodes: Api<Node> = Api::all(client.clone());
    match nodes.create(&PostParams::default(), &node).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(ClusterError::Command {
            command: format!("register node {NODE_NAME}"),
            message: e.to_string(),
        }),
    }
}

/// Removes the node's Lease left by the kwok of the cell a checkpoint was taken from, before this
/// cell's kwok starts. kwok takes a new holder identity at each start (the hostname and a UUID)
/// and manages a node, its Pods included, only while it holds the node's Lease: with the old
/// holder's Lease still valid, a Pod created in the new cell would wait until that Lease expired
/// (up to its 40 s) before kwok made it Running. A kubelet that restarts renews its own Lease at
/// once (its identity is the node's name); removing the stale one gives kwok the same start. A
/// cell with no Lease yet (a fresh cluster) has nothing to remove.
pub async fn release_lease(client: &kube::Client) -> Result<(), ClusterError> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    match leases.delete(NODE_NAME, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(ClusterError::Command {
            command: format!("delete lease kube-node-lease/{NODE_NAME}"),
            message: e.to_string(),
        }),
    }
}

/// The Pod IPs this kwok gives out: the first /24 of `10.244.0.0/16` above every Pod IP the
/// cluster holds (`10.244.0.0/24` in a new one). kwok gives IPs from the start of its range at
/// each start, and its own way to keep the IPs of Pods from before (marking them used as it goes
/// through them) missed them here: in a cell from a checkpoint a new Pod got istiod's IP. A range
/// no Pod of the checkpoint holds cannot collide. The node's own address, `10.244.255.1`, stays
/// out of every range.
pub async fn pod_cidr(client: &kube::Client) -> Result<String, ClusterError> {
    let pods: Api<Pod> = Api::all(client.clone());
    let list = pods
        .list(&kube::api::ListParams::default())
        .await
        .map_err(|e| ClusterError::Command {
            command: "list pods (the IPs they hold)".to_owned(),
            message: e.to_string(),
        })?;
    let ips = list
        .items
        .iter()
        .filter_map(|p| p.status.as_ref()?.pod_ip.as_deref()?.parse().ok());
    next_range(ips).ok_or_else(|| {
        ClusterError::Io("no /24 of 10.244.0.0/16 is left for new Pod IPs".to_owned())
    })
}

/// The first /24 of `10.244.0.0/16` above all of `ips` that lie in it, below the node's.
fn next_range(ips: impl Iterator<Item = std::net::Ipv4Addr>) -> Option<String> {
    let above = ips
        .map(|ip| ip.octets())
        .filter(|o| o[0] == 10 && o[1] == 244)
        .map(|o| u16::from(o[2]) + 1)
        .max()
        .unwrap_or(0);
    (above < u16::from(NODE_IP.octets()[2])).then(|| format!("10.244.{above}.0/24"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_pod_ips_come_from_a_range_no_pod_holds() {
        let ip = |s: &str| s.parse::<std::net::Ipv4Addr>().expect("an IP");
        assert_eq!(
            next_range(std::iter::empty()).as_deref(),
            Some("10.244.0.0/24")
        );
        let held = [
            ip("10.244.0.1"),
            ip("10.244.0.4"),
            ip("10.244.2.7"),
            ip("10.96.0.1"),
        ];
        assert_eq!(
            next_range(held.into_iter()).as_deref(),
            Some("10.244.3.0/24")
        );
        assert_eq!(next_range(std::iter::once(ip("10.244.254.9"))), None);
    }

    #[test]
    fn the_crds_are_kwoks_namespaced_rules() {
        for (name, text) in CRDS {
            let crd: CustomResourceDefinition = serde_saphyr::from_str(text).expect("a CRD");
            assert_eq!(crd.metadata.name.as_deref(), Some(name));
            assert_eq!(crd.spec.scope, "Namespaced");
        }
    }

    #[test]
    fn the_config_holds_kwoks_stages_and_the_istiod_forward() {
        let config = config();
        let docs: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&config).expect("kwok's config is YAML");
        let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
        let stages = |name: &str| {
            docs.iter()
                .filter(|d| d["kind"] == "Stage" && d["metadata"]["name"] == name)
                .count()
        };
        // kwok's five.
        assert_eq!(
            kinds.iter().filter(|k| **k == "Stage").count(),
            5,
            "{kinds:?}"
        );
        assert_eq!(stages("pod-ready"), 1);
        assert_eq!(kinds.last(), Some(&"ClusterPortForward"));
        let forwards = &docs[docs.len() - 1]["spec"]["forwards"];
        assert_eq!(forwards.as_array().map(Vec::len), Some(ISTIOD_PORTS.len()));
        assert_eq!(forwards[1]["target"]["port"].as_u64(), Some(15012));
    }
}
