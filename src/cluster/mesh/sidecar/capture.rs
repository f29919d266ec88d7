//! A Pod's traffic capture, as its `istio-init` container makes it: that init container's
//! arguments (`istio-iptables -p 15001 -z 15006 -u 1337 …`, as the injector wrote them) given to
//! the Pod's pilot-agent (the proxy image's entrypoint), run inside the Pod's network namespace
//! before its proxy starts. pilot-agent runs the machine's `iptables-*-restore`: in a Pod's fresh
//! namespace, with no rules of either kind, it picks `iptables-nft` (nf_tables) — Debian's
//! `iptables` package provides both. It runs in the cell's node with a container's capabilities
//! and `NET_ADMIN` besides, as `istio-init` has them.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Pod};

use crate::sandbox::NetworkCommands;

/// The first argument of the init container that makes the capture.
const CAPTURE: &str = "istio-iptables";
/// How long the capture may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Where the iptables commands are looked for.
const SEARCH: &str = "/usr/sbin:/sbin:/usr/bin:/bin";

/// The Pod's init container that makes the capture (`istio-init`), if it has one.
pub fn container(pod: &Pod) -> Option<&Container> {
    pod.spec
        .as_ref()?
        .init_containers
        .iter()
        .flatten()
        .find(|c| c.args.as_ref().and_then(|a| a.first()).map(String::as_str) == Some(CAPTURE))
}

/// Runs the capture of `pod` in its namespace (`net`) with `w`'s agent, logging into `log`.
pub async fn run(
    w: &super::Watch,
    net: &NetworkCommands,
    pod: &Pod,
    init: &Container,
    workdir: &Path,
    log: &std::fs::File,
) -> Result<(), String> {
    if !std::env::split_paths(SEARCH).any(|d| d.join("iptables-restore").exists()) {
        return Err(format!(
            "no iptables on this machine ({SEARCH}): install Debian's `iptables` package"
        ));
    }
    let vars = super::env::resolve(pod, init);
    let args = super::env::expand_args(init, &vars);
    let mut command = w.node.command(
        net.network(),
        &super::in_node(w, workdir),
        &w.agent,
        crate::sandbox::unix::CAP_NET_ADMIN,
    );
    let out = log.try_clone().map_err(|e| e.to_string())?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let mut child = command
        .env("PATH", SEARCH)
        .envs(vars)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("{} {}: {e}", w.agent.display(), args.join(" ")))?;
    match tokio::time::timeout(TIMEOUT, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!(
            "the traffic capture (pilot-agent {}) failed: {status}",
            args.join(" ")
        )),
        Ok(Err(e)) => Err(format!("the traffic capture: {e}")),
        Err(_) => {
            let _ = child.kill().await;
            Err(format!(
                "the traffic capture took longer than {} s",
                TIMEOUT.as_secs()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_is_the_init_container_running_istio_iptables() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1"},
            "spec": {
                "initContainers": [
                    {"name": "istio-init", "args": ["istio-iptables", "-p", "15001", "-u", "1337"]},
                    {"name": "istio-proxy", "args": ["proxy", "sidecar"]},
                ],
                "containers": [{"name": "web"}],
            },
        }))
        .expect("pod");
        assert_eq!(container(&pod).map(|c| c.name.as_str()), Some("istio-init"));
        let plain: Pod = serde_json::from_value(serde_json::json!({
            "spec": {"containers": [{"name": "web"}]},
        }))
        .expect("pod");
        assert!(container(&plain).is_none());
    }
}
