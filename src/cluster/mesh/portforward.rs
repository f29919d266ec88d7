//! Port-forwarding to a Pod whose proxy runs, as a kubelet's container runtime does it: a
//! connection to one of the Pod's ports reaches `127.0.0.1:<port>` inside the Pod's network
//! namespace (where Envoy's admin listens). The API server's `pods/portforward` reaches kwok,
//! the node's kubelet, and kwok follows a rule per Pod: a kwok `PortForward` (kwok's own API,
//! `kwok.x-k8s.io/v1alpha1`, its CRD installed by the cell before kwok starts) named as the Pod,
//! owned by it, whose targets are this module's relays — one listener per port on
//! `127.0.0.1:<any>` in the cell's network namespace, splicing each connection to the Pod's
//! loopback. So `istioctl proxy-config … deploy/X` and `kubectl port-forward` are unmodified.

use std::net::{Ipv4Addr, SocketAddr};

use k8s_openapi::api::core::v1::Pod;
use tokio::net::{TcpListener, TcpStream};

use crate::sandbox::Network;

/// The ports every proxied Pod forwards, beside those its containers declare: Envoy's admin
/// (`istioctl proxy-config`, `x describe`, `dashboard envoy`), pilot-agent's status, the health
/// and the Prometheus ports.
pub const PROXY_PORTS: [u16; 4] = [15000, 15020, 15021, 15090];

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
    super::kwok::rule(
        pod,
        "PortForward",
        "kwok (the simulated node's kubelet) forwards this Pod's ports to its proxy's network \
         namespace through labcheck's relays, as a container runtime forwards to a Pod's loopback",
        serde_json::json!({"forwards": forwards}),
    )
}

/// Applies `pod`'s rule (server-side, replacing a restored cell's stale one).
pub async fn apply(client: &kube::Client, pod: &Pod, relays: &Relays) -> Result<(), String> {
    super::kwok::apply_rule(client, &rule(pod, relays)).await
}

#[cfg(test)]
mod tests {
    use super::*;

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
