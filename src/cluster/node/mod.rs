//! A cell's real node (`@node` labs): the kubelet with containerd and runc, the CNI plugins,
//! kube-proxy and CoreDNS as the cluster's `kube-dns`, beside kube-controller-manager and
//! kube-scheduler. The kubelet, containerd (its shims, runc and every container) and kube-proxy
//! run in the cell's node ([`crate::sandbox::Node`]: the cell's network, a copy of its mount
//! namespace with the node's own `/run`, `/var/lib/kubelet`, `/var/log` and cgroup hierarchies,
//! a PID namespace out of the learner's reach, a cgroup namespace rooted at the cell's groups);
//! containers run under the runtime's policy ([`policy`]). Every image a Pod runs comes from
//! the image table ([`crate::images`]): the node's containerd starts with the cell's set of
//! them unpacked ([`crate::images::preload`]) and pulls the rest — and every manifest a Pod
//! asks again, `imagePullPolicy: Always` — from the cell's registry (`labcheck registry`, a
//! process of the cell).

mod config;
pub mod coredns;
pub(crate) mod network;
mod paths;
pub mod policy;
mod restore;

pub use network::{INTERFACE, NODE_IP, network};

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node as NodeObject;
use kube::Api;

use super::processes::Processes;
use super::{ClusterError, certs, kubeconfig, poll};
use crate::sandbox::{LearnerCommands, Network, NetworkCommands, Node, NodeCommands, unix};
use paths::Paths;

/// The image of every Pod's sandbox (`pause`), from the image table.
pub const PAUSE: &str = "registry.k8s.io/pause:3.10.1";
/// CoreDNS's image, from the image table.
pub const COREDNS: &str = "registry.k8s.io/coredns/coredns:v1.15.0";

/// The node's name.
pub const NODE_NAME: &str = "labcheck-node";
/// The Pods' addresses.
const POD_CIDR: &str = "10.244.0.0/24";
/// The Services' addresses (the API server's `--service-cluster-ip-range`).
const SERVICE_CIDR: &str = "10.0.0.0/24";
/// The `kube-dns` Service's address.
const CLUSTER_DNS: &str = "10.0.0.10";
/// How long the node may take to be Ready once the kubelet starts.
const NODE_READY: Duration = Duration::from_secs(60);
/// The cell's registry, which every image a Pod names is pulled from.
const REGISTRY: std::net::SocketAddr =
    std::net::SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 5000);
/// How long the Pods of a cluster from a checkpoint may take to be Ready again.
const PODS_READY: Duration = Duration::from_secs(120);
/// How long containerd may take to answer.
const RUNTIME_READY: Duration = Duration::from_secs(30);

/// The API server's flags for a real node, beyond the local cluster's: reachable from the Pods
/// at the node's address (the `kubernetes` Service's endpoint), service accounts for Pods, and
/// the kubelet's API (logs, exec, port-forward) reached with the admin's certificate.
pub fn apiserver_flags(pki: &certs::Pki) -> Vec<String> {
    vec![
        "--bind-address=0.0.0.0".into(),
        format!("--advertise-address={NODE_IP}"),
        "--kubelet-preferred-address-types=InternalIP".into(),
        format!("--kubelet-client-certificate={}", pki.admin_cert.display()),
        format!("--kubelet-client-key={}", pki.admin_key.display()),
    ]
}

/// The binaries of a real node.
#[derive(Clone, Debug)]
pub struct NodeTools {
    pub kube_controller_manager: PathBuf,
    pub kube_scheduler: PathBuf,
    pub kubelet: PathBuf,
    pub kube_proxy: PathBuf,
    pub containerd: PathBuf,
    pub containerd_shim: PathBuf,
    pub ctr: PathBuf,
    pub runc: PathBuf,
    /// The CNI plugins (bridge, host-local, loopback, portmap).
    pub cni: Vec<PathBuf>,
    /// The images the cell's registry serves: the table's, built.
    pub images: Vec<crate::images::Built>,
    /// The same images unpacked, which the node's containerd starts with (none: it pulls each
    /// one from the registry).
    pub preloaded: Option<crate::images::preload::Root>,
}

/// What starting a node needs from the local cluster that runs it.
pub struct Start<'a> {
    pub commands: &'a NetworkCommands,
    pub tools: &'a NodeTools,
    /// The cluster's directory: logs, the node's directory.
    pub dir: &'a Path,
    pub pki: &'a certs::Pki,
    pub client: &'a kube::Client,
    pub keep: bool,
    pub learner: &'a LearnerCommands,
}

/// A running node. Dropped, it ends with every container (unless the cell is kept).
#[derive(Debug)]
pub struct RealNode {
    /// In start order: the registry and containerd, then the controllers, the kubelet and
    /// kube-proxy.
    processes: Processes,
    node: Option<Node>,
    dir: PathBuf,
}

/// Starts what of the node needs no API server — the cell's registry of the table's images,
/// the node's namespaces and containerd — while the API server readies itself. If any of it
/// fails, what did start is stopped.
pub async fn start_runtime(s: &Start<'_>) -> Result<RealNode, ClusterError> {
    let mut node = RealNode {
        processes: Processes::new(s.dir, s.keep),
        node: None,
        dir: s.dir.to_owned(),
    };
    match runtime(s, &mut node).await {
        Ok(()) => Ok(node),
        Err(e) => {
            node.stop().await;
            Err(e)
        }
    }
}

impl RealNode {
    /// Once the API server is ready: starts the controllers, kube-proxy, the kubelet (until the
    /// node is Ready) and CoreDNS, and, from a checkpoint, waits for its Pods to be Ready again.
    /// If any of it fails, the whole node is stopped.
    pub async fn join(&mut self, s: &Start<'_>) -> Result<(), ClusterError> {
        let joined = kubelet(s, self).await;
        if joined.is_err() {
            self.stop().await;
        }
        joined
    }
}

fn io(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Io(e.to_string())
}

/// Writes the node's files: configurations, the kubelet's certificate, the values the kubelet
/// wants to read from the kernel's global knobs.
fn write_files(s: &Start<'_>, p: &Paths) -> Result<(), ClusterError> {
    p.create()
        .map_err(|e| io(format!("cannot create {}: {e}", p.host.display())))?;
    let write = |name: &str, text: &str| {
        let path = p.on_host(name);
        std::fs::write(&path, text).map_err(|e| io(format!("cannot write {}: {e}", path.display())))
    };
    write("containerd.toml", &config::containerd(p, PAUSE))?;
    write("net.d/10-labcheck.conflist", &config::cni())?;
    write("kubelet.yaml", &config::kubelet(p))?;
    write("kube-proxy.yaml", &config::kube_proxy(p))?;
    write("resolv.conf", config::RESOLV_CONF)?;
    write(
        "certs.d/_default/hosts.toml",
        &crate::images::registry::hosts_toml(&REGISTRY.to_string()),
    )?;
    let server = format!("https://127.0.0.1:{}", super::local::APISERVER_PORT);
    kubeconfig::write(&p.on_host("kubeconfig"), &server, s.pki)
        .map_err(|e| io(format!("cannot write the node's kubeconfig: {e}")))?;
    std::fs::copy(&s.pki.ca_cert, p.on_host("ca.crt"))
        .map_err(|e| io(format!("cannot copy the CA: {e}")))?;
    let (cert, key) = certs::node_serving(&p.host, NODE_NAME, NODE_IP.into()).map_err(io)?;
    std::fs::rename(&cert, p.on_host("kubelet.crt")).map_err(io)?;
    std::fs::rename(&key, p.on_host("kubelet.key")).map_err(io)?;
    for (knob, value) in KERNEL_KNOBS {
        write(&knob_file(knob), value)?;
    }
    Ok(())
}

/// The kernel's global knobs the kubelet sets at its start (and fails if it cannot): the node
/// shows it files with the values it wants over them, so the machine's stay as they are.
const KERNEL_KNOBS: [(&str, &str); 6] = [
    ("vm/overcommit_memory", "1\n"),
    ("vm/panic_on_oom", "0\n"),
    ("kernel/panic", "10\n"),
    ("kernel/panic_on_oops", "1\n"),
    ("kernel/keys/root_maxkeys", "1000000\n"),
    ("kernel/keys/root_maxbytes", "25000000\n"),
];

fn knob_file(knob: &str) -> String {
    format!("sysctl-{}", knob.replace('/', "."))
}

/// What [`start_runtime`] does, into `node`.
async fn runtime(s: &Start<'_>, node: &mut RealNode) -> Result<(), ClusterError> {
    let p = Paths::new(s.dir);
    write_files(s, &p)?;
    route_services(s.commands).await?;
    // labcheck itself: containerd's runc (the runtime's policy) and the cell's registry.
    let helper =
        super::processes::helper().map_err(|e| io(format!("labcheck's executable: {e}")))?;
    let mut registry = vec![
        "registry".to_owned(),
        format!("--listen={REGISTRY}"),
        format!("--log={}", s.dir.join("registry.log").display()),
    ];
    registry.extend(
        s.tools
            .images
            .iter()
            .map(|i| i.archive.display().to_string()),
    );
    let command = s.commands.command(&helper);
    node.processes
        .spawn(command, "registry-server", &helper, &registry)?;
    let network = s.commands.network();
    if let Err(detail) =
        super::local::wait_http(network, REGISTRY, "/v2/", " 200 ", RUNTIME_READY).await
    {
        let what = format!("the cell's registry at {REGISTRY}");
        let log = s.dir.join("registry-server.log");
        return Err(not_ready(what, RUNTIME_READY, detail, &log));
    }
    let mut attachments = paths::attachments(&p, s.tools, &helper);
    attachments.extend(
        KERNEL_KNOBS
            .iter()
            .map(|(knob, _)| crate::sandbox::Attachment {
                host: p.on_host(&knob_file(knob)),
                at: Path::new("/proc/sys").join(knob),
                writable: false,
            }),
    );
    if let Some(root) = &s.tools.preloaded {
        let target = p.on_host("containerd");
        let snapshots = root
            .seed(&target)
            .await
            .map_err(|e| io(format!("cannot seed {}: {e}", target.display())))?;
        attachments.extend(snapshots.into_iter().map(|s| crate::sandbox::Attachment {
            host: s.host,
            at: Path::new(paths::CONTAINERD_ROOT).join(s.relative),
            writable: false,
        }));
    }
    let started = Node::start_container_host(s.learner, s.commands.network(), &attachments, s.keep)
        .map_err(|e| io(format!("cannot start the cell's node: {e}")))?;
    let commands = started.commands();
    node.node = Some(started);
    let net = s.commands.network();
    let containerd = node_command(&commands, net, "containerd");
    let config = p.in_node("containerd.toml").display().to_string();
    node.processes.spawn(
        containerd,
        "containerd",
        Path::new("containerd"),
        &["--config".into(), config],
    )?;
    wait_runtime(&commands, net, &s.dir.join("containerd.log")).await
}

/// What [`RealNode::join`] does, into `node`.
async fn kubelet(s: &Start<'_>, node: &mut RealNode) -> Result<(), ClusterError> {
    let p = Paths::new(s.dir);
    let kubeconfig = p.on_host("kubeconfig");
    for (name, binary, args) in super::processes::controllers(
        &s.tools.kube_controller_manager,
        &s.tools.kube_scheduler,
        &kubeconfig,
        s.pki,
    ) {
        node.processes
            .spawn(s.commands.command(&binary), name, &binary, &args)?;
    }
    let Some(commands) = node.node.as_ref().map(Node::commands) else {
        return Err(io("the node's runtime was not started"));
    };
    let net = s.commands.network();
    let before = restore::before(s.client, NODE_NAME).await;
    // kube-proxy first: the Services' rules are in place before a Pod's first request (a
    // restored Pod's DNS query sent before them is lost, and waits out its resolver's timeout).
    // It finds the node's addresses once the kubelet has registered it.
    let proxy = node_command(&commands, net, "kube-proxy");
    let args = [format!(
        "--config={}",
        p.in_node("kube-proxy.yaml").display()
    )];
    node.processes
        .spawn(proxy, "kube-proxy", Path::new("kube-proxy"), &args)?;
    let kubelet = node_command(&commands, net, "kubelet");
    let args = [
        format!("--config={}", p.in_node("kubelet.yaml").display()),
        format!("--kubeconfig={}", p.in_node("kubeconfig").display()),
        format!("--hostname-override={NODE_NAME}"),
        format!("--node-ip={NODE_IP}"),
        "--v=1".into(),
    ];
    node.processes
        .spawn(kubelet, "kubelet", Path::new("kubelet"), &args)?;
    if let Err(detail) = wait_ready(s.client, NODE_NAME, NODE_READY, &before).await {
        let what = format!("the node {NODE_NAME}");
        return Err(not_ready(
            what,
            NODE_READY,
            detail,
            &s.dir.join("kubelet.log"),
        ));
    }
    coredns::install(s.client).await?;
    if let Err(detail) = before.wait_pods(s.client, PODS_READY).await {
        let what = "the Pods of the checkpoint".to_owned();
        return Err(not_ready(
            what,
            PODS_READY,
            detail,
            &s.dir.join("kubelet.log"),
        ));
    }
    // A fresh cell starts once its DNS serves. A restored one's CoreDNS is among the Pods above
    // when it was Ready in the checkpoint; a lab may have removed or stopped it since.
    if before.restores() {
        return Ok(());
    }
    let dns = poll::until(PODS_READY, Duration::from_millis(100), || {
        coredns::serves(s.client)
    })
    .await;
    dns.map_err(|detail| {
        let what = "the cluster's DNS (kube-system/kube-dns)".to_owned();
        not_ready(what, PODS_READY, detail, &s.dir.join("kubelet.log"))
    })
}

/// A program of the node, with the node's capabilities and its PATH (containerd finds its shim
/// there, the kubelet `mount`, kube-proxy `iptables`).
fn node_command(commands: &NodeCommands, net: &Network, name: &str) -> tokio::process::Command {
    let mut command = commands.command(
        net,
        Path::new("/"),
        paths::program(name),
        unix::NODE_CAPABILITIES,
    );
    command.env(
        "PATH",
        format!(
            "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            paths::BIN
        ),
    );
    command
}

/// Services' addresses are routed to the node's interface, so that kube-proxy's rules apply to
/// a request for a ClusterIP from the cell (the learner's shell) too.
async fn route_services(commands: &NetworkCommands) -> Result<(), ClusterError> {
    let route = ["route", "add", SERVICE_CIDR, "dev", INTERFACE];
    network::ip(commands, &route).await
}

/// `ctr` in the node, against its containerd, in the namespace the kubelet's images are in.
fn ctr(commands: &NodeCommands, net: &Network) -> tokio::process::Command {
    let mut command = node_command(commands, net, "ctr");
    command
        .args([
            "--address",
            paths::CONTAINERD_SOCKET,
            "--namespace",
            "k8s.io",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits until containerd answers.
async fn wait_runtime(
    commands: &NodeCommands,
    net: &Network,
    log: &Path,
) -> Result<(), ClusterError> {
    let answered = poll::until(RUNTIME_READY, Duration::from_millis(50), || async {
        match ctr(commands, net).arg("version").output().await {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
            Err(e) => Err(e.to_string()),
        }
    })
    .await;
    answered.map_err(|last| not_ready("containerd".into(), RUNTIME_READY, last, log))
}

/// `what` was not ready after `waited`: the last thing seen, and the end of the log that says
/// why.
fn not_ready(what: String, waited: Duration, detail: String, log: &Path) -> ClusterError {
    ClusterError::NotReady {
        what,
        waited: waited.as_secs(),
        detail: format!("{detail}\n{}", super::local::tail(log)),
    }
}

/// Waits until the node `name` reports Ready, itself (not etcd's copy of an earlier report); the
/// last thing seen when it does not.
async fn wait_ready(
    client: &kube::Client,
    name: &str,
    timeout: Duration,
    before: &restore::Before,
) -> Result<(), String> {
    let nodes: Api<NodeObject> = Api::all(client.clone());
    let nodes = &nodes;
    poll::until(timeout, Duration::from_millis(100), || async move {
        let node = nodes
            .get_opt(name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("not registered")?;
        if !before.reported(&node) {
            return Err("not reported in yet".into());
        }
        let ready = node
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "Ready")
            .ok_or("no Ready condition")?;
        if ready.status == "True" {
            return Ok(());
        }
        Err(format!(
            "Ready={} ({}: {})",
            ready.status,
            ready.reason.unwrap_or_default(),
            ready.message.unwrap_or_default()
        ))
    })
    .await
}

impl RealNode {
    /// Stops kube-proxy, the kubelet, containerd and the controllers (SIGTERM, a grace period,
    /// SIGKILL), then the node with every container left.
    pub async fn stop(&mut self) {
        self.processes.stop().await;
        if let Some(node) = self.node.as_mut() {
            node.stop().await;
        }
    }

    /// The pids of its processes, for a kept cell's record.
    pub fn pids(&self) -> Vec<u32> {
        self.processes.pids()
    }

    /// The logs of its processes (`kubelet.log`) and its Pods' containers
    /// (`<namespace>_<pod>-<container>-<restart>.log`), for a failed cell's report.
    pub fn logs(&self) -> Vec<(String, PathBuf)> {
        let named = |p: PathBuf| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            (name.unwrap_or_default(), p)
        };
        let mut logs: Vec<(String, PathBuf)> = self
            .processes
            .logs(&["registry"])
            .into_iter()
            .map(named)
            .collect();
        let pods = Paths::new(&self.dir).pod_logs();
        logs.extend(
            crate::sandbox::tree::files_under(&pods)
                .into_iter()
                .map(|p| (container_log_name(&pods, &p), p)),
        );
        logs
    }
}

/// A container's log under the kubelet's `/var/log/pods` (`<ns>_<pod>_<uid>/<container>/<n>.log`)
/// named for a report: `<ns>_<pod>-<container>-<n>.log`.
fn container_log_name(pods: &Path, log: &Path) -> String {
    let parts: Vec<String> = log
        .strip_prefix(pods)
        .unwrap_or(log)
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [pod, container, file] => {
            let pod = pod.rsplit_once('_').map_or(pod.as_str(), |(p, _uid)| p);
            format!("{pod}-{container}-{file}")
        }
        _ => parts.join("-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_containers_log_is_named_by_its_pod_and_container() {
        let pods = Path::new("/cell/node/log/pods");
        let log = pods.join("istio-system_istiod-5f9c_0a1b-2c3d/discovery/0.log");
        assert_eq!(
            container_log_name(pods, &log),
            "istio-system_istiod-5f9c-discovery-0.log"
        );
    }

    #[test]
    fn the_images_a_node_runs_itself_are_the_tables() {
        for reference in [PAUSE, COREDNS] {
            assert!(
                crate::images::lookup(reference).is_some(),
                "{reference} is no row of the image table"
            );
        }
    }
}
