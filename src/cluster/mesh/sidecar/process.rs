//! A Pod's processes started and ended: the proxy's agent (with its Envoy) and the application
//! containers, in the Pod's network namespace and the cell's control group, confined with
//! Landlock; ended with the Pod's network.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod};

use super::{Proxy, Watch, app, podnet};
use crate::sandbox::{NetworkCommands, parent_of};

/// Stops a Pod's processes and removes its network: its applications; Envoy, which its agent
/// (its parent) then reaps, so that no Envoy is left for the machine's init to collect while the
/// cell's control group goes; then the agent's process group as every cluster process stops.
pub(super) async fn end(cell: &NetworkCommands, mut proxy: Proxy) {
    // No new port-forwarded connection from here on.
    drop(proxy.relays);
    futures::future::join_all(proxy.apps.iter_mut().map(super::super::stop)).await;
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
    super::super::stop(&mut child).await;
    podnet::remove(cell, &proxy.net.host_end).await;
}

/// The processes whose parent is `parent` (the agent's Envoy).
fn children_of(parent: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| is_child_of(*pid, parent))
        .collect()
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

/// Starts the proxy's agent in the Pod's namespace, confined. It runs with the proxy
/// container's group, which the capture's `--gid-owner` rule lets out uncaptured (its user
/// stays root: the tools it executes lie under root's home, which no other user may enter).
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
    let host_path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let mut command = net.command(&w.agent);
    // The agent and its Envoy act on what the Pod's spec and the mesh's configuration say (the
    // learner's), as root outside the cell's sandbox: confined, they execute only themselves and
    // write only beneath the Pod's working directory.
    let executables: Vec<PathBuf> = super::super::executables(&w.agent)
        .into_iter()
        .chain(super::super::executables(&w.envoy))
        .collect();
    crate::sandbox::unix::confine(&mut command, &executables, &[workdir.to_owned()])
        .map_err(|e| format!("cannot confine the proxy with Landlock: {e}"))?;
    command
        .current_dir(workdir)
        .gid(group)
        .env_clear()
        .env("PATH", host_path)
        .envs(vars)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("{}: {e}", w.agent.display()))
}

/// Starts an application container's echo server in the Pod's namespace, confined: it executes
/// only itself and writes only beneath its own directory in the Pod's.
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
    let mut command = net.command(&w.echo);
    crate::sandbox::unix::confine(
        &mut command,
        &super::super::executables(&w.echo),
        std::slice::from_ref(&dir),
    )
    .map_err(|e| {
        format!(
            "cannot confine container {} with Landlock: {e}",
            container.name
        )
    })?;
    command
        .current_dir(&dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .envs(vars)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("container {} ({}): {e}", container.name, w.echo.display()))
}
