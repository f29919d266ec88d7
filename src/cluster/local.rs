//! The `local` backend: etcd and kube-apiserver started inside the cell's network namespace
//! (only `lo`: nothing leaves the machine; fixed ports can't collide between cells), with
//! certificates made in-process. Exactly the lab environment: an API server, no nodes, no
//! controllers, no istiod — unless the lab asks for a real node ([`super::node`]), which this
//! cluster then carries.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::{ClusterError, certs, kubeconfig};
use crate::sandbox::{Network, Sandbox, unix};

pub const ETCD_PORT: u16 = 2379;
pub const APISERVER_PORT: u16 = 6443;
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// The binaries the local backend runs.
#[derive(Clone, Debug)]
pub struct LocalTools {
    pub etcd: PathBuf,
    pub kube_apiserver: PathBuf,
}

/// A running local cluster's processes.
#[derive(Debug)]
pub struct LocalCluster {
    pub etcd: tokio::process::Child,
    pub apiserver: tokio::process::Child,
    pub dir: PathBuf,
    /// A kept cell's cluster outlives the harness.
    pub keep: bool,
    /// The watch that completes Istio on the node (`@mesh` labs), once started.
    pub mesh: Option<super::mesh::Mesh>,
    /// The real node of this cluster (`@node` labs), once started.
    pub node: Option<super::node::RealNode>,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for child in [&self.apiserver, &self.etcd] {
            if let Some(pid) = child.id() {
                unix::kill_group(pid as i32, libc::SIGKILL);
            }
        }
    }
}

pub(super) fn log_file(dir: &Path, name: &str) -> Result<(Stdio, Stdio), ClusterError> {
    let path = dir.join(format!("{name}.log"));
    let f = std::fs::File::create(&path)
        .map_err(|e| ClusterError::Io(format!("cannot create {}: {e}", path.display())))?;
    let g = f.try_clone().map_err(|e| ClusterError::Io(e.to_string()))?;
    Ok((Stdio::from(f), Stdio::from(g)))
}

pub(super) fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Starts etcd and kube-apiserver in the sandbox's network and writes the learner's kubeconfig
/// to `learner_kubeconfig`. Returns the processes, the PKI and the address inside the cell. For
/// a real node, the cell's network gets its interface first and the API server the flags the
/// node needs.
pub async fn start(
    sandbox: &Sandbox,
    tools: &LocalTools,
    dir: &Path,
    learner_kubeconfig: &Path,
    profile: Profile,
) -> Result<(LocalCluster, certs::Pki), ClusterError> {
    if profile != Profile::Plain {
        let commands = sandbox
            .network_commands()
            .map_err(|e| ClusterError::Io(e.to_string()))?;
        super::node::network(&commands).await?;
    }
    let pki = certs::existing_or_write(&dir.join("pki")).map_err(ClusterError::Io)?;
    let etcd_url = format!("http://127.0.0.1:{ETCD_PORT}");
    let etcd = start_etcd(sandbox, tools, dir, &etcd_url).await?;
    let p = |p: &PathBuf| p.display().to_string();
    let (out, err) = log_file(dir, "kube-apiserver")?;
    let apiserver = sandbox
        .network_command(&tools.kube_apiserver)
        .args([
            format!("--etcd-servers={etcd_url}"),
            format!("--secure-port={APISERVER_PORT}"),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            // Webhooks resolve to endpoints (none without istiod) instead of dialing a ClusterIP
            // through the host's default route.
            "--enable-aggregator-routing=true".into(),
            "--allow-privileged=true".into(),
            "--authorization-mode=RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", p(&pki.sa_pub)),
            format!("--service-account-signing-key-file={}", p(&pki.sa_key)),
            format!("--client-ca-file={}", p(&pki.ca_cert)),
            format!("--tls-cert-file={}", p(&pki.server_cert)),
            format!("--tls-private-key-file={}", p(&pki.server_key)),
            "--enable-priority-and-fairness=false".into(),
            "--watch-cache=false".into(),
            "--profiling=false".into(),
        ])
        .args(apiserver_profile_flags(profile, &pki))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| ClusterError::Spawn {
            what: tools.kube_apiserver.display().to_string(),
            source: e,
        })?;
    kubeconfig::write(
        learner_kubeconfig,
        &format!("https://127.0.0.1:{APISERVER_PORT}"),
        &pki,
    )
    .map_err(|e| {
        ClusterError::Io(format!(
            "cannot write {}: {e}",
            learner_kubeconfig.display()
        ))
    })?;
    Ok((
        LocalCluster {
            etcd,
            apiserver,
            dir: dir.to_owned(),
            keep: sandbox.keeps(),
            mesh: None,
            node: None,
        },
        pki,
    ))
}

/// Starts the cell's etcd on its data directory and waits until it is healthy.
async fn start_etcd(
    sandbox: &Sandbox,
    tools: &LocalTools,
    dir: &Path,
    etcd_url: &str,
) -> Result<tokio::process::Child, ClusterError> {
    let (out, err) = log_file(dir, "etcd")?;
    let etcd = sandbox
        .network_command(&tools.etcd)
        .args(["--data-dir", &dir.join("etcd").display().to_string()])
        .args([
            "--listen-client-urls",
            etcd_url,
            "--advertise-client-urls",
            etcd_url,
        ])
        .args([
            "--listen-peer-urls",
            "http://127.0.0.1:2380",
            "--unsafe-no-fsync",
            "--log-level",
            "warn",
        ])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| ClusterError::Spawn {
            what: tools.etcd.display().to_string(),
            source: e,
        })?;
    let network = sandbox
        .network()
        .map_err(|e| ClusterError::Io(e.to_string()))?;
    let etcd_addr = SocketAddr::from(([127, 0, 0, 1], ETCD_PORT));
    wait_http(
        &network,
        etcd_addr,
        "/health",
        "\"health\":\"true\"",
        Duration::from_secs(30),
    )
    .await
    .map_err(|e| ClusterError::NotReady {
        what: "etcd".into(),
        waited: 30,
        detail: format!("{e}\n{}", tail(&dir.join("etcd.log"))),
    })?;
    Ok(etcd)
}

/// What a cell's local cluster runs besides etcd and the API server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Nothing: no controller, no node.
    Plain,
    /// A real node ([`super::node`]).
    Node,
}

/// The API server's flags that differ between profiles. A plain cluster serves at 127.0.0.1
/// only, and the `kubernetes` Service has no endpoint; with no controllers to make service
/// accounts, Pods are not made to name one. A real node's Pods
/// reach the API server at the node's address.
fn apiserver_profile_flags(profile: Profile, pki: &certs::Pki) -> Vec<String> {
    let local = [
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        "--endpoint-reconciler-type=none",
    ];
    match profile {
        Profile::Plain => local
            .iter()
            .chain(&["--disable-admission-plugins=ServiceAccount"])
            .map(|f| f.to_string())
            .collect(),
        Profile::Node => super::node::apiserver_flags(pki),
    }
}

impl LocalCluster {
    /// The last lines of the API server's log, for errors.
    pub fn apiserver_log_tail(&self) -> String {
        tail(&self.dir.join("kube-apiserver.log"))
    }

    /// Stops the live mesh, then both processes: SIGTERM, a grace period, SIGKILL.
    pub async fn stop(&mut self) {
        if let Some(mesh) = self.mesh.as_mut() {
            mesh.stop().await;
        }
        if let Some(node) = self.node.as_mut() {
            node.stop().await;
        }
        for child in [&mut self.apiserver, &mut self.etcd] {
            super::processes::stop(child).await;
        }
    }

    /// Ends both processes at once (SIGKILL), for a cluster whose state nobody keeps, and waits
    /// until they are gone (their ports free again).
    pub async fn kill(&mut self) {
        for child in [&mut self.apiserver, &mut self.etcd] {
            if let Some(pid) = child.id() {
                unix::kill_group(pid as i32, libc::SIGKILL);
                let _ = child.wait().await;
            }
        }
    }

    /// What copies etcd's state while it runs.
    pub fn etcd_state(&self) -> Option<EtcdState> {
        Some(EtcdState {
            pid: self.etcd.id()? as i32,
            data: self.dir.join("etcd"),
            pki: self.dir.join("pki"),
        })
    }

    /// The pids, for a kept cell's record.
    pub fn pids(&self) -> Vec<u32> {
        let node = self.node.iter().flat_map(super::node::RealNode::pids);
        [self.etcd.id(), self.apiserver.id()]
            .into_iter()
            .flatten()
            .chain(node)
            .collect()
    }
}

/// Polls `GET path` on `addr` inside the cell until the body contains `expect`.
pub(super) async fn wait_http(
    network: &Network,
    addr: SocketAddr,
    path: &str,
    expect: &str,
    timeout: Duration,
) -> Result<(), String> {
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let request = &request;
    super::poll::until(timeout, Duration::from_millis(10), || async move {
        let raw = network
            .exchange(addr, request.clone().into_bytes(), Duration::from_secs(2))
            .await
            .map_err(|e| e.to_string())?;
        let body = String::from_utf8_lossy(&raw);
        if body.contains(expect) {
            Ok(())
        } else {
            Err(body.lines().last().unwrap_or_default().to_owned())
        }
    })
    .await
}

/// How long to wait for the API server.
pub fn ready_timeout() -> Duration {
    READY_TIMEOUT
}

/// Where the bootstrapped etcd data of a cluster made of these binaries is kept under
/// `templates`: one directory per pair of binaries (path, size, modification time).
pub fn template(templates: &Path, tools: &LocalTools) -> PathBuf {
    use sha2::Digest;
    let identity =
        crate::state::identity("cluster", &[tools.etcd.as_path(), &tools.kube_apiserver]);
    let digest = sha2::Sha256::digest(identity.as_bytes());
    let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    templates.join(name)
}

/// Keeps the data of a cluster that just bootstrapped as the template `to`; a failure only
/// means the next cluster bootstraps too.
pub async fn save_template(etcd: &EtcdState, to: &Path) {
    let Some(parent) = to.parent() else {
        return;
    };
    let partial = parent.join(format!(".partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    if std::fs::create_dir_all(parent).is_ok()
        && etcd.copy(&partial).await.is_ok()
        && std::fs::rename(&partial, to).is_ok()
    {
        return;
    }
    let _ = std::fs::remove_dir_all(&partial);
}

/// A running etcd's data directory, and how to copy it consistently; and the cluster's PKI,
/// which a checkpoint keeps with it.
#[derive(Clone, Debug)]
pub struct EtcdState {
    pid: i32,
    data: PathBuf,
    pki: PathBuf,
}

impl EtcdState {
    /// Copies etcd's data directory to `to` while etcd is stopped (SIGSTOP, then SIGCONT
    /// whatever happens): a crash-consistent copy, which etcd restarts from as after a crash
    /// (every write it acknowledged is in its files).
    pub async fn copy(&self, to: &Path) -> std::io::Result<()> {
        let _stopped = Stopped::new(self.pid).await;
        crate::sandbox::tree::copy(&self.data, to).await
    }

    /// Copies the cluster's PKI to `to`. A cluster started from a checkpoint keeps the
    /// checkpoint's CA: what etcd holds was made under it (every namespace's `kube-root-ca.crt`,
    /// which a Pod the kubelet recreates mounts before the controllers could publish a new CA).
    pub async fn copy_pki(&self, to: &Path) -> std::io::Result<()> {
        crate::sandbox::tree::copy(&self.pki, to).await
    }
}

/// A process stopped with SIGSTOP until this is dropped.
struct Stopped(i32);

impl Stopped {
    /// Stops `pid` and waits (up to a second) until every thread of it has stopped.
    async fn new(pid: i32) -> Stopped {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGSTOP,
        );
        let stopped = Stopped(pid);
        for _ in 0..1000 {
            if all_stopped(pid) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        stopped
    }
}

/// Whether every thread of `pid` is stopped (state `T` in `/proc/<pid>/task/*/stat`).
fn all_stopped(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let (_, rest) = stat.rsplit_once(')')?;
                rest.split_whitespace().next().map(|s| s == "T" || s == "t")
            })
            .unwrap_or(true)
    })
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGCONT,
        );
    }
}
