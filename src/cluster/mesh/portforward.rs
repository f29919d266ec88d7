//! Port-forwarding to a Pod whose proxy runs, as a kubelet's container runtime does it: a
//! connection to one of the Pod's ports reaches `127.0.0.1:<port>` inside the Pod's network
//! namespace (where Envoy's admin listens). The API server's `pods/portforward` reaches kwok,
//! the node's kubelet, and kwok follows a rule per Pod: a kwok `PortForward` (kwok's own API,
//! `kwok.x-k8s.io/v1alpha1`, its CRD installed by the cell before kwok starts) named as the Pod,
//! owned by it, whose targets are this module's relays — one listener per port on
//! `127.0.0.1:<any>` in the cell's network namespace, splicing each connection to the Pod's
//! loopback. So `istioctl proxy-config … deploy/X` and `kubectl port-forward` are unmodified.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use tokio::net::{TcpListener, TcpStream};

use crate::cluster::ClusterError;
use crate::sandbox::Network;

/// kwok v0.8.0's `PortForward` CRD.
const CRD: &str = include_str!("kwok-portforward-crd.yaml");
const CRD_NAME: &str = "portforwards.kwok.x-k8s.io";
/// How long the CRD may take to be Established.
const CRD_READY: Duration = Duration::from_secs(30);
/// The field manager (and `managed-by` label) of the rules.
const MANAGER: &str = "labcheck";

/// The ports every proxied Pod forwards, beside those its containers declare: Envoy's admin
/// (`istioctl proxy-config`, `x describe`, `dashboard envoy`), pilot-agent's status, the health
/// and the Prometheus ports.
pub const PROXY_PORTS: [u16; 4] = [15000, 15020, 15021, 15090];

/// Installs kwok's `PortForward` CRD (a cell from a checkpoint has it) and waits until it is
/// Established, so that kwok, started with `--enable-crds=PortForward`, lists it at once.
pub async fn install_crd(client: &kube::Client) -> Result<(), ClusterError> {
    let io = |e: String| ClusterError::Io(format!("kwok's PortForward CRD: {e}"));
    let crd: CustomResourceDefinition =
        serde_saphyr::from_str(CRD).map_err(|e| io(e.to_string()))?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.create(&PostParams::default(), &crd).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => {
            return Err(ClusterError::Command {
                command: format!("create crd {CRD_NAME}"),
                message: e.to_string(),
            });
        }
    }
    let started = Instant::now();
    let mut last = String::from("no Established condition");
    while started.elapsed() < CRD_READY {
        match crds.get(CRD_NAME).await {
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
        what: format!("CRD {CRD_NAME}"),
        waited: CRD_READY.as_secs(),
        detail: last,
    })
}

/// One Pod's relays, by Pod port; they stop when dropped.
#[derive(Debug, Default)]
pub struct Relays {
    /// Pod port and the relay's address in the cell's namespace.
    pub targets: Vec<(u16, SocketAddr)>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Relays {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Starts a relay in `cell` for each of `ports`, to the Pod's loopback in `pod`.
pub fn relay(cell: &Network, pod: &Network, ports: &[u16]) -> std::io::Result<Relays> {
    let mut relays = Relays {
        targets: Vec::new(),
        tasks: Vec::new(),
    };
    for &port in ports {
        let listener = cell.listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
        let local = listener.local_addr()?;
        let listener = TcpListener::from_std(listener)?;
        let pod = pod.clone();
        let target = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        relays.tasks.push(tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let pod = pod.clone();
                tokio::spawn(async move {
                    let Ok(Ok(stream)) =
                        tokio::task::spawn_blocking(move || pod.connect(target)).await
                    else {
                        return;
                    };
                    if stream.set_nonblocking(true).is_err() {
                        return;
                    }
                    let Ok(mut outbound) = TcpStream::from_std(stream) else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
            }
        }));
        relays.targets.push((port, local));
    }
    Ok(relays)
}

/// The ports a Pod forwards: [`PROXY_PORTS`] and every port its containers declare (TCP).
pub fn ports(pod: &Pod) -> Vec<u16> {
    let declared = pod
        .spec
        .iter()
        .flat_map(|s| {
            s.init_containers
                .iter()
                .flatten()
                .chain(s.containers.iter())
        })
        .flat_map(|c| c.ports.iter().flatten())
        .filter(|p| p.protocol.as_deref().is_none_or(|p| p == "TCP"))
        .filter_map(|p| u16::try_from(p.container_port).ok());
    let mut ports: Vec<u16> = PROXY_PORTS.into_iter().chain(declared).collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

fn resource() -> ApiResource {
    ApiResource {
        group: "kwok.x-k8s.io".into(),
        version: "v1alpha1".into(),
        api_version: "kwok.x-k8s.io/v1alpha1".into(),
        kind: "PortForward".into(),
        plural: "portforwards".into(),
    }
}

/// The `PortForward` kwok follows for `pod`: named as it, owned by it (so it goes with it),
/// with one target per relay.
pub fn rule(pod: &Pod, relays: &Relays) -> serde_json::Value {
    let forwards: Vec<serde_json::Value> = relays
        .targets
        .iter()
        .map(|(port, local)| {
            serde_json::json!({
                "ports": [port],
                "target": {"address": local.ip().to_string(), "port": local.port()},
            })
        })
        .collect();
    serde_json::json!({
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "PortForward",
        "metadata": {
            "name": pod.metadata.name,
            "namespace": pod.metadata.namespace,
            "labels": {"app.kubernetes.io/managed-by": MANAGER},
            "annotations": {
                "labcheck.dev/why": "kwok (the simulated node's kubelet) forwards this Pod's ports \
                    to its proxy's network namespace through labcheck's relays, as a container \
                    runtime forwards to a Pod's loopback",
            },
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.metadata.name,
                "uid": pod.metadata.uid,
            }],
        },
        "spec": {"forwards": forwards},
    })
}

/// Applies `pod`'s rule (server-side, replacing a restored cell's stale one).
pub async fn apply(client: &kube::Client, pod: &Pod, relays: &Relays) -> Result<(), String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource());
    let params = PatchParams::apply(MANAGER).force();
    api.patch(name, &params, &Patch::Apply(rule(pod, relays)))
        .await
        .map(|_| ())
        .map_err(|e| format!("apply PortForward {namespace}/{name}: {e}"))
}

/// Deletes the rule of a Pod whose proxy ended (gone already with its Pod is fine).
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource());
    let _ = api.delete(name, &DeleteParams::default()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crd_is_kwoks_portforward() {
        let crd: CustomResourceDefinition = serde_saphyr::from_str(CRD).expect("the CRD parses");
        assert_eq!(crd.metadata.name.as_deref(), Some(CRD_NAME));
        assert_eq!(crd.spec.scope, "Namespaced");
    }

    #[test]
    fn a_pod_forwards_the_proxy_ports_and_its_declared_tcp_ports() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1"},
            "spec": {"containers": [
                {"name": "app", "ports": [{"containerPort": 8080}, {"containerPort": 53, "protocol": "UDP"}]},
                {"name": "istio-proxy", "ports": [{"containerPort": 15090, "protocol": "TCP"}]},
            ]},
        }))
        .expect("a Pod");
        assert_eq!(ports(&pod), vec![8080, 15000, 15020, 15021, 15090]);
    }

    #[test]
    fn the_rule_is_named_and_owned_as_the_pod_with_a_target_per_port() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1"},
        }))
        .expect("a Pod");
        let relays = Relays {
            targets: vec![(15000, "127.0.0.1:40001".parse().expect("addr"))],
            tasks: Vec::new(),
        };
        let rule = rule(&pod, &relays);
        assert_eq!(rule["metadata"]["name"], "web-1");
        assert_eq!(rule["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(rule["spec"]["forwards"][0]["ports"][0], 15000);
        assert_eq!(rule["spec"]["forwards"][0]["target"]["port"], 40001);
        assert_eq!(
            rule["spec"]["forwards"][0]["target"]["address"],
            "127.0.0.1"
        );
    }
}
