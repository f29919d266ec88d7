//! The cell's network as a node's: one non-loopback interface holding the node's address (a
//! veth pair whose two ends stay in the cell's namespace, carrying nothing anywhere: nothing
//! leaves the cell), and IPv4 forwarding between the cell's interfaces, as a node forwards
//! between its Pods.

use std::net::Ipv4Addr;

use crate::cluster::ClusterError;
use crate::sandbox::NetworkCommands;

/// The cell's non-loopback interface and its peer (both in the cell's namespace).
pub const INTERFACE: &str = "mesh0";
const PEER: &str = "mesh1";
/// The node's InternalIP, on [`INTERFACE`]: where the kubelet serves its API.
pub const NODE_IP: Ipv4Addr = Ipv4Addr::new(10, 244, 255, 1);

/// Makes the cell's non-loopback interface with the node's address, before anything listens.
pub async fn network(commands: &NetworkCommands) -> Result<(), ClusterError> {
    let node = format!("{NODE_IP}/32");
    ip(
        commands,
        &[
            "link", "add", INTERFACE, "type", "veth", "peer", "name", PEER,
        ],
    )
    .await?;
    ip(commands, &["link", "set", INTERFACE, "up"]).await?;
    ip(commands, &["link", "set", PEER, "up"]).await?;
    ip(commands, &["addr", "add", &node, "dev", INTERFACE]).await?;
    forward(commands).await
}

/// Makes the cell's namespace forward IPv4 between its interfaces, as a node forwards between its
/// Pods: a Pod's request to another Pod goes out its `eth0` into the cell and on to the other
/// Pod's veth. A new namespace starts with forwarding off.
async fn forward(commands: &NetworkCommands) -> Result<(), ClusterError> {
    run(commands, "sysctl", &["-q", "-w", "net.ipv4.ip_forward=1"]).await
}

/// Runs `ip` (iproute2) in the cell's network namespace.
pub async fn ip(commands: &NetworkCommands, args: &[&str]) -> Result<(), ClusterError> {
    run(commands, "ip", args).await
}

/// Runs `program` in the cell's network namespace; its error output is the error.
async fn run(commands: &NetworkCommands, program: &str, args: &[&str]) -> Result<(), ClusterError> {
    let mut command = commands.command(program);
    command.args(args);
    crate::cluster::processes::run(command, format!("{program} {}", args.join(" "))).await
}
