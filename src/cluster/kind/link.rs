//! The learner's way into a cell's kind cluster. The learner's commands keep the cell's own
//! network namespace; one veth pair joins it to the kind node's namespace (and nothing else:
//! not the Docker network, not the machine). Through it the learner reaches what a kind user
//! reaches from the machine the cluster runs on: the API server on the node's address, a
//! `NodePort` on the node, a `ClusterIP` and a Pod's address (the node routes them, as
//! kube-proxy and the Pod network have them). The pair goes with either namespace: with the
//! cell, or with the cluster's node. The node's own filter keeps what runs on it from the
//! machine ([`fence`]).

use std::net::Ipv4Addr;
use std::path::Path;

use super::super::ClusterError;
use super::super::docker;
use super::super::node::network::ip;
use crate::sandbox::NetworkCommands;

/// The Pods' and the Services' address ranges of a kind cluster, set in its configuration:
/// kind's Pod range, and the local backend's Services' range (its DNS server at `10.0.0.10`).
pub const POD_SUBNET: &str = "10.244.0.0/16";
pub const SERVICE_SUBNET: &str = "10.0.0.0/24";

/// The pair's ends: in the cell, and in the node.
pub const CELL_END: &str = "kind0";
const NODE_END: &str = "learner0";
/// The pair's addresses, in a range (shared address space, RFC 6598) that neither Docker's
/// networks nor the cluster's ranges use.
const NODE_ADDRESS: Ipv4Addr = Ipv4Addr::new(100, 100, 255, 1);
const CELL_ADDRESS: Ipv4Addr = Ipv4Addr::new(100, 100, 255, 2);
const PREFIX: u8 = 30;

/// The API server's port on the node.
pub const APISERVER_PORT: u16 = 6443;

/// Joins the cell's network namespace (`cell`) to the node container's; returns the node's
/// address on the cell's Docker network, where the learner reaches it.
pub async fn connect(
    docker_client: &Path,
    node: &str,
    network: Option<&str>,
    cell: &NetworkCommands,
) -> Result<Ipv4Addr, ClusterError> {
    let container = docker::container_on(docker_client, node, network).await?;
    let node_ip = container.address;
    let pid = container.pid.to_string();
    ip(
        cell,
        &[
            "link", "add", CELL_END, "type", "veth", "peer", "name", NODE_END, "netns", &pid,
        ],
    )
    .await?;
    let cell_address = format!("{CELL_ADDRESS}/{PREFIX}");
    ip(cell, &["addr", "add", &cell_address, "dev", CELL_END]).await?;
    ip(cell, &["link", "set", CELL_END, "up"]).await?;
    let node_address = format!("{NODE_ADDRESS}/{PREFIX}");
    docker::exec(
        docker_client,
        node,
        &["ip", "addr", "add", &node_address, "dev", NODE_END],
    )
    .await?;
    docker::exec(docker_client, node, &["ip", "link", "set", NODE_END, "up"]).await?;
    let via = NODE_ADDRESS.to_string();
    for destination in [
        format!("{node_ip}/32"),
        POD_SUBNET.into(),
        SERVICE_SUBNET.into(),
    ] {
        ip(cell, &["route", "add", &destination, "via", &via]).await?;
    }
    fence(docker_client, node, container.gateway).await?;
    Ok(node_ip)
}

/// The node's filter toward the machine (its network's gateway): nothing on the node — a Pod
/// of `hostNetwork: true`, a Pod the node forwards for, the learner through the pair — opens a
/// connection to the machine, but for the node's containerd to the cell's registry. A Pod
/// cannot lift it: it is the node's, and no container sharing the node's network has
/// NET_ADMIN (the runtime's policy).
async fn fence(docker_client: &Path, node: &str, gateway: Ipv4Addr) -> Result<(), ClusterError> {
    let gateway = format!("{gateway}/32");
    let registry = super::REGISTRY_PORT.to_string();
    let new = ["-m", "conntrack", "--ctstate", "NEW"];
    let rules: [Vec<&str>; 3] = [
        [&["OUTPUT", "-d", &gateway][..], &new, &["-j", "REJECT"]].concat(),
        vec![
            "OUTPUT", "-d", &gateway, "-p", "tcp", "--dport", &registry, "-j", "ACCEPT",
        ],
        vec!["FORWARD", "-d", &gateway, "-j", "REJECT"],
    ];
    for rule in rules {
        let mut args = vec!["iptables", "-w", "-I", rule[0], "1"];
        args.extend_from_slice(&rule[1..]);
        docker::exec(docker_client, node, &args).await?;
    }
    Ok(())
}

/// The learner's kubeconfig: kind's (the API server on the machine's loopback, which the cell
/// does not share) with the server on the node's address instead, which kubeadm's certificate
/// names.
pub fn learner_kubeconfig(kind_kubeconfig: &str, node_ip: Ipv4Addr) -> String {
    let server = format!("https://{node_ip}:{APISERVER_PORT}");
    kind_kubeconfig
        .lines()
        .map(|line| match line.split_once("server:") {
            Some((indent, _)) if indent.trim().is_empty() => format!("{indent}server: {server}"),
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learner_reaches_the_api_server_on_the_node() {
        let kind = "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: QQ==\n    server: https://127.0.0.1:40123\n  name: kind-a\n";
        let learner = learner_kubeconfig(kind, Ipv4Addr::new(172, 18, 0, 2));
        assert!(
            learner.contains("    server: https://172.18.0.2:6443\n"),
            "{learner}"
        );
        assert!(!learner.contains("127.0.0.1"));
        assert!(learner.contains("certificate-authority-data: QQ=="));
    }
}
