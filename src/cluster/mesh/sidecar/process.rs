//! A Pod's processes started and ended: the proxy's agent (with its Envoy) and the application
//! containers, in the cell's node (with a container's capabilities) and the Pod's network
//! namespace; ended with the Pod's network.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod};

use super::{Proxy, Watch, app, podnet};
use crate::sandbox::{NetworkCommands, children_of, parent_of};

/// Stops a Pod's processes and removes its network: its applications; Envoy, which its agent
/// (its parent) then reaps, so that no Envoy is left for the machine's init to collect while the
/// cell's control group goes; then the agent's process group as every cluster process stops.
pub(super) async fn end(cell: &NetworkCommands, mut proxy: Proxy) {
    // No new port-forwarded connection from here on.
    drop(proxy.relays);
    futures::future::join_all(proxy.apps.iter_mut().map(crate::cluster::processes::stop)).await;
    let Some(mut child) = proxy.child.take() else {
        podnet::remove(cell, &proxy.net.host_end).await;
        return;
    };
    if let Some(agent) = child.id() {
        let children = children_of(agent);
        for &pid in &children {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let started = Instant::now();
        while children.iter().any(|pid| is_child_of(*pid, agent))
            && started.elapsed() < Duration::from_secs(2)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    crate::cluster::processes::stop(&mut child).await;
    podnet::remove(cell, &proxy.net.host_end).await;
}

/// Whether `pid` is still a process (not yet reaped) whose parent is `parent`.
fn is_child_of(pid: i32, parent: u32) -> bool {
    parent_of(pid) == Some(parent)
}

/// Creates a log file in the cluster's directory.
pub(super) fn log_file(w: &Watch, name: &str) -> Result<std::fs::File, String> {
    let path = w.dir.join(name);
    std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Opens a log file in the cluster's directory to go on writing it (a restarted process's).
pub(super) fn append_log(w: &Watch, name: &str) -> Result<std::fs::File, String> {
    let path = w.dir.join(name);
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Starts the proxy's agent in the cell's node, in the Pod's network namespace, with a
/// container's capabilities. It runs with the proxy container's group, which the capture's
/// `--gid-owner` rule lets out uncaptured.
pub(super) fn spawn_agent(
    w: &Watch,
    net: &NetworkCommands,
    workdir: &Path,
    args: Vec<String>,
    vars: Vec<(String, String)>,
    group: u32,
    log: std::fs::File,
) -> Result<tokio::process::Child, String> {
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let mut command = w
        .node
        .command(net.network(), &super::in_node(w, workdir), &w.agent, 0);
    command
        .gid(group)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .envs(vars)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("{}: {e}", w.agent.display()))
}

/// Starts an application container's echo server in the cell's node, in the Pod's network
/// namespace, with a container's capabilities, in its own directory of the Pod's.
pub(super) fn spawn_app(
    w: &Watch,
    net: &NetworkCommands,
    pod: &Pod,
    container: &Container,
    workdir: &Path,
    log: std::fs::File,
) -> Result<tokio::process::Child, String> {
    let dir = workdir.join("containers").join(&container.name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let vars = app::env(pod, container);
    let args = app::args(pod, container, &vars);
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let mut command = w
        .node
        .command(net.network(), &super::in_node(w, &dir), &w.echo, 0);
    command
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .envs(vars)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("container {} ({}): {e}", container.name, w.echo.display()))
}
