//! A Pod's network, as a CNI plugin makes it: a network namespace of the Pod's own holding its
//! IP on `eth0`, one end of a veth pair whose other end stays in the cell's namespace with a
//! route to that IP. The Pod's default route goes through the simulated node's address (on the
//! cell's interface), so the Pod reaches istiod and the cell reaches the Pod. Removing the cell's
//! end removes the pair; the namespace ends with the last process in it.

use std::process::Stdio;

use tokio::io::AsyncWriteExt;

use super::NODE_IP;
use crate::cluster::ClusterError;
use crate::sandbox::{Network, NetworkCommands};

/// A Pod's network namespace, made and addressed.
#[derive(Debug)]
pub struct PodNet {
    /// Commands in the Pod's namespace (and the cell's control group).
    pub commands: NetworkCommands,
    /// The veth end in the cell's namespace.
    pub host_end: String,
}

/// Makes the Pod's namespace with `ip` on `eth0` and the cell's end `host_end`.
pub async fn create(
    cell: &NetworkCommands,
    ip: &str,
    host_end: &str,
) -> Result<PodNet, ClusterError> {
    let net = Network::create().map_err(|e| ClusterError::Io(format!("a Pod's network: {e}")))?;
    let pod = cell.with_network(net.clone());
    let netns = net.path().display().to_string();
    batch(
        cell,
        &format!(
            "link add {host_end} type veth peer name eth0 netns {netns}\nlink set {host_end} up\n"
        ),
    )
    .await?;
    let made = async {
        batch(
            &pod,
            &format!(
                "link set lo up\naddr add {ip}/32 dev eth0\nlink set eth0 up\n\
                 route add default via {NODE_IP} dev eth0 onlink\n"
            ),
        )
        .await?;
        batch(cell, &format!("route add {ip}/32 dev {host_end}\n")).await
    };
    if let Err(e) = made.await {
        remove(cell, host_end).await;
        return Err(e);
    }
    Ok(PodNet {
        commands: pod,
        host_end: host_end.to_owned(),
    })
}

/// Removes the cell's end of a Pod's veth pair (and so the pair, and the route through it).
pub async fn remove(cell: &NetworkCommands, host_end: &str) {
    let _ = batch(cell, &format!("link del {host_end}\n")).await;
}

/// Runs `ip -batch -` with `commands` in a namespace.
async fn batch(net: &NetworkCommands, commands: &str) -> Result<(), ClusterError> {
    let what = format!("ip -batch - <<< {commands:?}");
    let spawn = |source| ClusterError::Spawn {
        what: what.clone(),
        source,
    };
    let mut child = net
        .command("ip")
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(commands.as_bytes()).await.map_err(spawn)?;
    }
    let out = child.wait_with_output().await.map_err(spawn)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ClusterError::Command {
            command: what,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}
