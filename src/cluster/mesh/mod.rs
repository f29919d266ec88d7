//! The `@mesh` profile: a live mesh on top of the local cluster, inside the cell's network
//! namespace. It owns the cell's one non-loopback interface (a veth pair whose two ends stay in
//! the namespace, carrying nothing anywhere: istioctl's xDS client takes its node IP from a
//! non-loopback interface), kube-controller-manager and kube-scheduler, kwok as the kubelet of
//! one simulated node ([`kwok`]) and istiod, the lab's own istiod Pod's process once kwok reports
//! that Pod Running ([`istiod`]). kwok and every process of a Pod run in the cell's node
//! ([`Node`]: a copy of the cell's mount namespace, a PID and a cgroup namespace of its own, a
//! container's capabilities): what a learner's Pod spec, a rule or the mesh's configuration makes
//! them do reaches no further than a learner's own command. Each process logs into the
//! cluster's directory and ends with the cell (stopped, dropped, or with the harness).

mod exec;
mod istiod;
mod kwok;
mod node;
mod podnet;
mod portforward;
mod sidecar;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::processes::Processes;
use super::{ClusterError, certs, kubeconfig};
use crate::sandbox::{LearnerCommands, NetworkCommands, Node, NodeCommands, unix};
use node::{NODE_DIR, executables, in_node, node_program};

pub use exec::{pod_tools, shim};

/// The binaries a live mesh adds to the local cluster's, for one Istio version.
#[derive(Clone, Debug)]
pub struct MeshTools {
    pub kube_controller_manager: PathBuf,
    pub kube_scheduler: PathBuf,
    pub kwok: PathBuf,
    /// istiod of the cell's Istio version.
    pub pilot_discovery: PathBuf,
    /// The sidecars' agent of the cell's Istio version; its Envoy bootstrap template lies
    /// beside it.
    pub pilot_agent: PathBuf,
    /// Upstream Envoy, the sidecars' proxy.
    pub envoy: PathBuf,
    /// Istio's echo app of the cell's Istio version: what a Pod of the echo image runs.
    pub echo_server: PathBuf,
    /// Istio's echo client: requests from inside a Pod.
    pub echo_client: PathBuf,
}

/// The cell's non-loopback interface and its peer (both in the cell's namespace).
pub(super) const INTERFACE: &str = "mesh0";
const PEER: &str = "mesh1";
/// The simulated node's InternalIP: where kwok serves the kubelet API.
pub const NODE_IP: Ipv4Addr = Ipv4Addr::new(10, 244, 255, 1);
/// How long the simulated node may take to become Ready.
const NODE_READY: Duration = Duration::from_secs(30);
/// How long istiod may take to answer once its Pod runs.
const ISTIOD_READY: Duration = Duration::from_secs(60);
/// How long a restored cell's proxies may take to be ready once istiod answers.
const PROXIES_READY: Duration = Duration::from_secs(60);

/// The API server's flags for a live mesh, beyond the local cluster's: `pods/portforward` (how
/// istioctl reaches istiod) dials the node's InternalIP.
pub const APISERVER_FLAGS: &[&str] = &["--kubelet-preferred-address-types=InternalIP"];

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
pub(super) async fn ip(commands: &NetworkCommands, args: &[&str]) -> Result<(), ClusterError> {
    run(commands, "ip", args).await
}

/// Runs `program` in the cell's network namespace; its error output is the error.
async fn run(commands: &NetworkCommands, program: &str, args: &[&str]) -> Result<(), ClusterError> {
    let command = format!("{program} {}", args.join(" "));
    let out = commands
        .command(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| ClusterError::Spawn {
            what: command.clone(),
            source,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ClusterError::Command {
            command,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// A running live mesh. Dropped, it kills its processes (unless the cell is kept).
#[derive(Debug)]
pub struct Mesh {
    /// kube-controller-manager, kube-scheduler, kwok, in start order.
    processes: Processes,
    istiod: Option<istiod::Istiod>,
    /// The Pods' proxies.
    sidecars: Option<sidecar::Sidecars>,
    /// Where kwok and the Pods' processes run; ends last.
    node: Option<Node>,
    dir: PathBuf,
}

/// What starting a mesh needs from the local cluster that runs it.
pub struct Start<'a> {
    pub commands: &'a NetworkCommands,
    pub tools: &'a MeshTools,
    /// The cluster's directory: logs, the components' kubeconfig, kwok's files.
    pub dir: &'a Path,
    pub pki: &'a certs::Pki,
    /// The harness's client (registers the node, watches for istiod's Pod).
    pub client: &'a kube::Client,
    /// The API server's version, which the simulated node's kubelet reports.
    pub version: &'a str,
    pub keep: bool,
    /// What runs `kubectl exec` into a Pod: learner commands in the Pod's network.
    pub learner: &'a LearnerCommands,
    /// The host directory of the learner's tools (`SHARE/bin`): names `kubectl exec` finds.
    pub learner_bin: &'a Path,
}

/// Starts the controllers and kwok, registers the simulated node and waits until it is Ready,
/// then watches for the lab's istiod Pod and the Pods that get proxies. If any of it fails, what
/// did start is stopped (a kept cell's too: its cell is not kept).
pub async fn start(s: Start<'_>) -> Result<Mesh, ClusterError> {
    let mut mesh = Mesh {
        processes: Processes::new(s.dir, s.keep),
        istiod: None,
        sidecars: None,
        node: None,
        dir: s.dir.to_owned(),
    };
    match bring_up(&s, &mut mesh).await {
        Ok(()) => Ok(mesh),
        Err(e) => {
            mesh.stop().await;
            Err(e)
        }
    }
}

/// The watch that starts the Pods' proxies, in the node.
fn sidecars(
    s: &Start<'_>,
    node: NodeCommands,
    kwok: u32,
) -> Result<sidecar::Sidecars, ClusterError> {
    sidecar::Sidecars::watch(sidecar::Watch {
        client: s.client.clone(),
        commands: s.commands.clone(),
        node,
        agent: node_program("pilot-agent"),
        bootstrap: node_program(crate::toolchain::ENVOY_BOOTSTRAP),
        envoy: node_program("envoy"),
        echo: node_program("echo-server"),
        dir: s.dir.to_owned(),
        keep: s.keep,
        learner: s.learner.clone(),
        kwok,
    })
    .map_err(|e| ClusterError::Io(format!("the socket of the Pods' exec: {e}")))
}

/// What [`start`] does, into `mesh`.
async fn bring_up(s: &Start<'_>, mesh: &mut Mesh) -> Result<(), ClusterError> {
    let io = |e: String| ClusterError::Io(e);
    let config = s.dir.join("components-kubeconfig");
    let server = format!("https://127.0.0.1:{}", super::local::APISERVER_PORT);
    kubeconfig::write(&config, &server, s.pki)
        .map_err(|e| io(format!("cannot write {}: {e}", config.display())))?;
    let (cert, key) =
        certs::node_serving(&s.dir.join("pki"), kwok::NODE_NAME, NODE_IP.into()).map_err(io)?;
    let kwok_config = s.dir.join("kwok.yaml");
    std::fs::write(&kwok_config, kwok::config())
        .map_err(|e| io(format!("cannot write {}: {e}", kwok_config.display())))?;

    for (name, binary, args) in super::processes::controllers(
        &s.tools.kube_controller_manager,
        &s.tools.kube_scheduler,
        &config,
        s.pki,
    ) {
        mesh.spawn(s.commands, name, &binary, &args)?;
    }
    // kwok's CRDs before kwok, which follows the Pods' rules in them.
    kwok::install_crds(s.client).await?;
    kwok::release_lease(s.client).await?;
    let pod_cidr = kwok::pod_cidr(s.client).await?;
    let node = |p: &Path| in_node(s.dir, p);
    let kwok_args = kwok::args(
        &node(&config),
        &node(&kwok_config),
        &node(&cert),
        &node(&key),
        &pod_cidr,
    );
    let learner_path = s.learner.env().get("PATH").cloned().unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&learner_path).collect();
    dirs.push(s.learner_bin.to_owned());
    let helper = super::processes::helper().map_err(|e| io(e.to_string()))?;
    let kwok_env = exec::prepare(
        s.dir,
        Path::new(NODE_DIR),
        &dirs,
        &pod_tools(s.tools),
        &node_program("labcheck"),
    )
    .map_err(|e| io(format!("the commands of the Pods' exec: {e}")))?;
    let pods = s.dir.join(sidecar::PODS);
    std::fs::create_dir_all(&pods)
        .map_err(|e| io(format!("cannot create {}: {e}", pods.display())))?;
    let started = Node::start(
        s.learner,
        s.commands.network(),
        &node::attachments(s.dir, s.tools, &helper),
        s.keep,
    )
    .map_err(|e| io(format!("cannot start the cell's node: {e}")))?;
    let node_commands = started.commands();
    mesh.node = Some(started);
    let kwok = mesh.spawn_kwok(
        &node_commands,
        s.commands.network(),
        &s.tools.kwok,
        &kwok_args,
        kwok_env,
        &helper,
    )?;

    kwok::register_node(s.client, s.version).await?;
    if let Err(detail) = super::node::wait_ready(s.client, kwok::NODE_NAME, NODE_READY).await {
        return Err(ClusterError::NotReady {
            what: format!("the simulated node {}", kwok::NODE_NAME),
            waited: NODE_READY.as_secs(),
            detail: format!("{detail}\n{}", super::local::tail(&s.dir.join("kwok.log"))),
        });
    }
    let restored_istiod = istiod::pod_running(s.client).await;
    mesh.istiod = Some(istiod::Istiod::watch(istiod::Watch {
        client: s.client.clone(),
        commands: s.commands.clone(),
        binary: s.tools.pilot_discovery.clone(),
        kubeconfig: config,
        dir: s.dir.to_owned(),
        keep: s.keep,
    }));
    // A cell from a checkpoint whose lab had installed Istio starts as ready as the checkpointed
    // one was: with istiod answering and its Pods' proxies ready (started once istiod answers,
    // so their first requests to it do not fail and back off).
    if !restored_istiod {
        mesh.sidecars = Some(sidecars(s, node_commands.clone(), kwok)?);
    } else {
        let ready = std::net::SocketAddr::from(([127, 0, 0, 1], istiod::READY_PORT));
        let network = s.commands.network();
        if let Err(detail) =
            super::local::wait_http(network, ready, "/ready", " 200 ", ISTIOD_READY).await
        {
            return Err(ClusterError::NotReady {
                what: "istiod (restored)".into(),
                waited: ISTIOD_READY.as_secs(),
                detail: format!(
                    "{detail}\n{}",
                    super::local::tail(&s.dir.join("istiod.log"))
                ),
            });
        }
        mesh.sidecars = Some(sidecars(s, node_commands, kwok)?);
        // And with the proxies of its Running injected Pods ready.
        if let Some(sidecars) = &mesh.sidecars
            && let Err(detail) = sidecars.wait_ready(s.client, PROXIES_READY).await
        {
            return Err(ClusterError::NotReady {
                what: "the Pods' proxies (restored)".into(),
                waited: PROXIES_READY.as_secs(),
                detail: std::iter::once(detail)
                    .chain(
                        mesh.proxy_logs()
                            .iter()
                            .map(|l| format!("{}:\n{}", l.display(), super::local::tail(l))),
                    )
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
    }
    Ok(())
}

impl Mesh {
    fn spawn(
        &mut self,
        commands: &NetworkCommands,
        name: &'static str,
        binary: &Path,
        args: &[String],
    ) -> Result<(), ClusterError> {
        self.spawn_with(commands, name, binary, args, |_| Ok(()))
    }

    /// kwok, in the cell's node and network, confined besides with Landlock
    /// ([`unix::confine`]): it follows port-forward and exec rules from resources the learner
    /// may write too, and runs a rule's command; confined, kwok can execute nothing but itself
    /// and labcheck's exec ([`exec`], which asks the harness: its PATH), write no file and signal
    /// no process outside it. Its pid (in the harness's view, inside the node): the parent of
    /// the execs it runs.
    fn spawn_kwok(
        &mut self,
        node: &NodeCommands,
        net: &crate::sandbox::Network,
        binary: &Path,
        args: &[String],
        env: Vec<(String, std::ffi::OsString)>,
        helper: &Path,
    ) -> Result<u32, ClusterError> {
        let allowed: Vec<PathBuf> = executables(binary)
            .into_iter()
            .chain(executables(helper))
            .collect();
        let mut command = node.command(net, Path::new("/"), node_program("kwok"), 0);
        command.envs(env);
        unix::confine(&mut command, &allowed, &[])
            .map_err(|e| ClusterError::Io(format!("cannot confine kwok with Landlock: {e}")))?;
        self.processes.spawn(command, "kwok", binary, args)?;
        let relay = self
            .processes
            .last_pid()
            .ok_or_else(|| ClusterError::Io("kwok ended as it started".to_owned()))?;
        crate::sandbox::children_of(relay)
            .first()
            .map(|&pid| pid as u32)
            .ok_or_else(|| ClusterError::Io("kwok ended as it started".to_owned()))
    }

    fn spawn_with(
        &mut self,
        commands: &NetworkCommands,
        name: &'static str,
        binary: &Path,
        args: &[String],
        prepare: impl FnOnce(&mut tokio::process::Command) -> Result<(), ClusterError>,
    ) -> Result<(), ClusterError> {
        let mut command = commands.command(binary);
        prepare(&mut command)?;
        self.processes.spawn(command, name, binary, args)
    }

    /// Stops the Pods' proxies, istiod, then kwok, the scheduler and the controllers: SIGTERM,
    /// a grace period, SIGKILL.
    pub async fn stop(&mut self) {
        if let Some(sidecars) = self.sidecars.as_mut() {
            sidecars.stop().await;
        }
        if let Some(istiod) = self.istiod.as_mut() {
            istiod.stop().await;
        }
        self.processes.stop().await;
        if let Some(node) = self.node.as_mut() {
            node.stop().await;
        }
    }

    /// The pids of its processes (istiod's and the proxies' as they are now), for a kept
    /// cell's record.
    pub fn pids(&self) -> Vec<u32> {
        let running = self.processes.pids().into_iter();
        let proxies = self.sidecars.iter().flat_map(sidecar::Sidecars::pids);
        running
            .chain(self.istiod.as_ref().and_then(istiod::Istiod::pid))
            .chain(proxies)
            .collect()
    }

    /// The logs of its processes (istiod's once it ran, the proxies' and the harness's notes on
    /// them), for a failed cell's report.
    pub fn logs(&self) -> Vec<PathBuf> {
        let mut logs = self.processes.logs(&["istiod"]);
        logs.extend(self.proxy_logs());
        logs
    }

    /// `sidecars.log`, each proxy's log and each application container's, by name.
    fn proxy_logs(&self) -> Vec<PathBuf> {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n == "sidecars.log" || n.starts_with("proxy-") || n.starts_with("app-")
                })
            })
            .collect();
        logs.sort();
        logs
    }
}
