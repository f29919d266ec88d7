//! The Pods' proxies as processes: a watch on every Pod of the cell; each Running Pod with an
//! IP whose spec has an `istio-proxy` container (an injected sidecar, a native sidecar's init
//! container, or a gateway's proxy) gets pilot-agent — which starts upstream Envoy — in a network
//! namespace of the Pod's own holding the Pod's IP ([`podnet`]). The cell does for it what a
//! kubelet does for that container: its volumes filled ([`volumes`]: the projected service
//! account token from the API server's TokenRequest, the CA root certificate ConfigMap, the
//! downward API's labels and annotations, empty directories) under a working directory of the
//! Pod's own (pilot-agent's paths are relative), its environment resolved from the spec
//! (literals, `$(VAR)`, field references) and its arguments expanded. Two things differ, both
//! because the proxy cannot use the cluster's DNS: the discovery and CA addresses are the
//! istiod Service's endpoint address, with `ISTIOD_SAN` keeping the name istiod's certificate is
//! checked against (and `CA_ADDR` naming istiod goes, so the CA is checked the same way); and Envoy is upstream's, named in `PROXY_CONFIG` (`binaryPath`), with the
//! Pod's module's bootstrap template (`ISTIO_BOOTSTRAP`). Every process of a Pod runs in the
//! cell's node ([`crate::sandbox::Node`]: the cell's files, a container's capabilities), and
//! kwok forwards the Pod's ports into its namespace ([`portforward`]). A proxy ends when its Pod stops
//! running, is deleted, or the cell ends. Logs: `proxy-<namespace>-<pod>.log` and
//! `sidecars.log` in the cluster's directory.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Container, Pod};
use kube::api::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};

use super::{exec, kwok, podnet, portforward};
use crate::sandbox::{LearnerCommands, NetworkCommands, NodeCommands, unix};

mod app;
mod capture;
mod env;
mod process;
mod restart;
mod rules;
mod volumes;

use process::{end, log_file, spawn_agent, spawn_app};

/// The proxy container's name in an injected Pod (and a gateway's).
const PROXY_CONTAINER: &str = "istio-proxy";

/// The directory of the cluster's that holds each Pod's working directory.
pub const PODS: &str = "pods";

/// What the watch needs. Programs are named as the node shows them.
pub struct Watch {
    pub client: kube::Client,
    /// Commands in the cell's network namespace.
    pub commands: NetworkCommands,
    /// Commands in the cell's node: every process of a Pod.
    pub node: NodeCommands,
    pub agent: PathBuf,
    /// pilot-agent's Envoy bootstrap template.
    pub bootstrap: PathBuf,
    pub envoy: PathBuf,
    /// Istio's echo server: what a container of the echo image runs ([`app`]).
    pub echo: PathBuf,
    /// The cluster's directory: logs, and `pods/` with each proxy's working directory.
    pub dir: PathBuf,
    pub keep: bool,
    /// What runs `kubectl exec` into a Pod's container ([`exec`]).
    pub learner: LearnerCommands,
    /// kwok's pid: the only process whose children's execs are served.
    pub kwok: u32,
}

/// One Pod's running processes: its proxy and its application containers.
#[derive(Debug)]
struct Proxy {
    namespace: String,
    name: String,
    ip: std::net::Ipv4Addr,
    /// The proxy's agent (which leads a process group with its Envoy), if the Pod has one.
    child: Option<tokio::process::Child>,
    /// The application containers' processes, each leading a process group of its own.
    apps: Vec<tokio::process::Child>,
    net: podnet::PodNet,
    /// The relays kwok's port-forward rule for the Pod targets.
    relays: portforward::Relays,
    /// The containers `kubectl exec` enters, by name.
    targets: exec::Targets,
    /// The Pod as its processes were started.
    pod: Arc<Pod>,
    /// Its working directory (`pods/<namespace>_<name>` in the cluster's).
    workdir: PathBuf,
    /// How its agent was started, to start it again.
    agent: Option<AgentSpec>,
    /// The agent's process group (its Envoy's too), known after the agent is reaped.
    agent_pgid: Option<i32>,
    /// Its containers' exits, by name ([`restart`]).
    backoff: BTreeMap<String, restart::Backoff>,
}

/// `host`, a path in the cluster's directory, as the node shows it.
fn in_node(w: &Watch, host: &Path) -> PathBuf {
    super::in_node(&w.dir, host)
}

/// The name of a Pod's proxy's log in the cluster's directory.
fn proxy_log(namespace: &str, name: &str) -> String {
    format!("proxy-{namespace}-{name}.log")
}

/// The name of a Pod's application container's log in the cluster's directory.
fn app_log(namespace: &str, name: &str, container: &str) -> String {
    format!("app-{namespace}-{name}-{container}.log")
}

/// The agent's arguments, environment and group.
#[derive(Debug)]
struct AgentSpec {
    args: Vec<String>,
    vars: Vec<(String, String)>,
    group: u32,
}

/// How often the Pods' processes are checked for exits.
const CHECK_EXITS: Duration = Duration::from_secs(1);

/// Where pilot-agent answers its readiness probe (Envoy has taken its listeners and clusters):
/// its status port, which takes the probe's HTTP/1.0 (Envoy's 15021 refuses it with 426).
const READY_PORT: u16 = 15020;

/// The watch and the proxies it started, by Pod uid.
#[derive(Debug)]
pub struct Sidecars {
    task: tokio::task::JoinHandle<()>,
    /// Gives Pods their exec rules.
    rules: tokio::task::JoinHandle<()>,
    running: Arc<Mutex<BTreeMap<String, Proxy>>>,
    commands: NetworkCommands,
    keep: bool,
    /// Runs `kubectl exec` into the running Pods.
    _exec: exec::Server,
}

impl Sidecars {
    /// Starts watching the cell's Pods, and serving `kubectl exec` into those it runs.
    pub fn watch(w: Watch) -> std::io::Result<Sidecars> {
        let running: Arc<Mutex<BTreeMap<String, Proxy>>> = Arc::new(Mutex::new(BTreeMap::new()));
        let lookup: exec::Lookup = {
            let running = running.clone();
            Arc::new(move |uid: &str, container: &str| {
                let running = lock(&running);
                let pod = running.get(uid)?;
                let target = pod.targets.get(container)?.clone();
                Some((pod.net.commands.network().clone(), target))
            })
        };
        let server = exec::Server::listen(&w.dir, w.learner.clone(), lookup, w.kwok)?;
        let keep = w.keep;
        let commands = w.commands.clone();
        let rules = tokio::spawn(rules::follow(w.client.clone(), w.dir.clone()));
        let task = tokio::spawn(follow(w, running.clone()));
        Ok(Sidecars {
            task,
            rules,
            running,
            commands,
            keep,
            _exec: server,
        })
    }

    /// The pids of the running proxies' agents (each leads a process group with its Envoy) and
    /// of the application processes.
    pub fn pids(&self) -> Vec<u32> {
        lock(&self.running)
            .values()
            .flat_map(|p| p.child.iter().chain(&p.apps))
            .filter_map(|c| c.id())
            .collect()
    }

    /// Waits until every Pod that wants a proxy now has one whose agent reports it ready (a cell
    /// from a checkpoint starts as ready as the checkpointed one was). The error names the Pods
    /// still waiting.
    pub async fn wait_ready(&self, client: &kube::Client, timeout: Duration) -> Result<(), String> {
        let api: Api<Pod> = Api::all(client.clone());
        let pods = api
            .list(&kube::api::ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let wanted: BTreeMap<String, String> = pods
            .items
            .iter()
            .filter(|p| wants_proxy(p))
            .filter_map(|p| Some((p.metadata.uid.clone()?, pod_name(p))))
            .collect();
        let started = Instant::now();
        let mut ready: BTreeSet<String> = BTreeSet::new();
        while started.elapsed() < timeout {
            let pending: Vec<(String, crate::sandbox::Network, std::net::Ipv4Addr)> = {
                let running = lock(&self.running);
                wanted
                    .keys()
                    .filter(|uid| !ready.contains(*uid))
                    .filter_map(|uid| {
                        let p = running.get(uid).filter(|p| p.child.is_some())?;
                        Some((uid.clone(), p.net.commands.network().clone(), p.ip))
                    })
                    .collect()
            };
            for (uid, network, ip) in pending {
                let addr = std::net::SocketAddr::from((ip, READY_PORT));
                let probe = Duration::from_millis(300);
                let answer = crate::cluster::local::wait_http(
                    &network,
                    addr,
                    "/healthz/ready",
                    " 200 ",
                    probe,
                )
                .await;
                if answer.is_ok() {
                    ready.insert(uid);
                }
            }
            if ready.len() == wanted.len() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let waiting: Vec<&str> = wanted
            .iter()
            .filter(|(uid, _)| !ready.contains(*uid))
            .map(|(_, name)| name.as_str())
            .collect();
        Err(format!("not ready: {}", waiting.join(", ")))
    }

    /// Ends the watch, then every proxy (all at once).
    pub async fn stop(&mut self) {
        self.rules.abort();
        self.task.abort();
        let _ = (&mut self.task).await;
        let proxies: Vec<Proxy> = std::mem::take(&mut *lock(&self.running))
            .into_values()
            .collect();
        let commands = &self.commands;
        futures::future::join_all(proxies.into_iter().map(|p| end(commands, p))).await;
    }
}

impl Drop for Sidecars {
    fn drop(&mut self) {
        self.rules.abort();
        self.task.abort();
        if self.keep {
            return;
        }
        for p in lock(&self.running).values() {
            for pid in p.child.iter().chain(&p.apps).filter_map(|c| c.id()) {
                unix::kill_group(pid as i32, libc::SIGKILL);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Follows the cell's Pods for its lifetime (until aborted).
async fn follow(w: Watch, running: Arc<Mutex<BTreeMap<String, Proxy>>>) {
    let api: Api<Pod> = Api::all(w.client.clone());
    let (reader, writer) = reflector::store();
    let events = reflector(writer, watcher(api, watcher::Config::default())).default_backoff();
    let mut events = std::pin::pin!(events);
    // Pods whose proxy could not start: not tried again (the reason is in sidecars.log).
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    let mut interfaces = 0u32;
    let mut exits = tokio::time::interval(CHECK_EXITS);
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            _ = exits.tick() => {
                for proxy in lock(&running).values_mut() {
                    restart::check(&w, proxy);
                }
                continue;
            }
        };
        let Some(event) = event else {
            break;
        };
        if event.is_err() {
            continue;
        }
        let wanted: BTreeMap<String, Arc<Pod>> = reader
            .state()
            .into_iter()
            .filter(|p| runs_anything(p))
            .filter_map(|p| Some((p.metadata.uid.clone()?, p)))
            .collect();
        let gone: Vec<String> = lock(&running)
            .keys()
            .filter(|uid| !wanted.contains_key(*uid))
            .cloned()
            .collect();
        for uid in gone {
            let proxy = lock(&running).remove(&uid);
            if let Some(proxy) = proxy {
                note(
                    &w.dir,
                    &format!("the Pod {}/{} ends", proxy.namespace, proxy.name),
                );
                for kind in ["PortForward", "Exec"] {
                    kwok::delete_rule(&w.client, kind, &proxy.namespace, &proxy.name).await;
                }
                end(&w.commands, proxy).await;
            }
        }
        failed.retain(|uid, _| wanted.contains_key(uid));
        for (uid, pod) in wanted {
            if lock(&running).contains_key(&uid) || failed.contains_key(&uid) {
                continue;
            }
            interfaces += 1;
            let name = pod_name(&pod);
            let started = Instant::now();
            match start(&w, &pod, &format!("pod{interfaces}")).await {
                Ok(proxy) => {
                    note(
                        &w.dir,
                        &format!(
                            "the Pod {name} starts at {} ({} ms to prepare)",
                            pod.status
                                .as_ref()
                                .and_then(|s| s.pod_ip.as_deref())
                                .unwrap_or_default(),
                            started.elapsed().as_millis()
                        ),
                    );
                    lock(&running).insert(uid, proxy);
                }
                Err(e) => {
                    note(&w.dir, &format!("cannot start the Pod {name}: {e}"));
                    failed.insert(uid, e);
                }
            }
        }
    }
}

/// Whether a Pod gets a proxy: Running with an IP, not being deleted, with an `istio-proxy`
/// container or init container.
fn wants_proxy(pod: &Pod) -> bool {
    is_running(pod) && proxy_container(pod).is_some()
}

/// Whether the cell runs anything of a Pod: Running with an IP, not being deleted, with a proxy
/// or an application container the cell runs ([`app`]).
fn runs_anything(pod: &Pod) -> bool {
    is_running(pod) && (proxy_container(pod).is_some() || !app::containers(pod).is_empty())
}

/// Running with an IP and not being deleted.
fn is_running(pod: &Pod) -> bool {
    let running = pod
        .status
        .as_ref()
        .is_some_and(|s| s.phase.as_deref() == Some("Running") && s.pod_ip.is_some());
    running && pod.metadata.deletion_timestamp.is_none()
}

/// The Pod's `istio-proxy` container (a native sidecar's is an init container).
fn proxy_container(pod: &Pod) -> Option<&Container> {
    let spec = pod.spec.as_ref()?;
    spec.init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .find(|c| c.name == PROXY_CONTAINER)
}

fn pod_name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Prepares the Pod's files and network and starts its processes: the traffic capture, then the
/// proxy's agent (if the Pod has a proxy), then its application containers.
async fn start(w: &Watch, pod: &Arc<Pod>, host_end: &str) -> Result<Proxy, String> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ip = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .ok_or("no Pod IP")?;
    let address: std::net::Ipv4Addr = ip
        .parse()
        .map_err(|_| format!("Pod IP {ip} is no IPv4 address"))?;
    let workdir = w.dir.join(PODS).join(format!("{namespace}_{name}"));
    let _ = std::fs::remove_dir_all(&workdir);
    std::fs::create_dir_all(&workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let proxy = match proxy_container(pod) {
        Some(container) => Some(prepare_proxy(w, pod, container, &workdir).await?),
        None => None,
    };

    let net = podnet::create(&w.commands, &ip, host_end)
        .await
        .map_err(|e| e.to_string())?;
    let mut started = Proxy {
        namespace: namespace.clone(),
        name: name.clone(),
        ip: address,
        child: None,
        apps: Vec::new(),
        net,
        relays: portforward::Relays::default(),
        targets: exec::Targets::new(),
        pod: pod.clone(),
        workdir: workdir.clone(),
        agent: None,
        agent_pgid: None,
        backoff: BTreeMap::new(),
    };
    let run = async {
        started.relays = portforward::relay(
            w.commands.network(),
            started.net.commands.network(),
            &portforward::ports(pod),
        )
        .map_err(|e| format!("the Pod's port-forward relays: {e}"))?;
        portforward::apply(&w.client, pod, &started.relays).await?;
        if let Some((args, vars, group)) = proxy {
            if let Some(container) = proxy_container(pod) {
                let target = exec_target(exec::PROXY_IMAGE, pod, container, vars.clone());
                started.targets.insert(container.name.clone(), target);
            }
            let log = log_file(w, &proxy_log(&namespace, &name))?;
            if let Some(init) = capture::container(pod) {
                capture::run(w, &started.net.commands, pod, init, &workdir, &log).await?;
            }
            started.child = Some(spawn_agent(
                w,
                &started.net.commands,
                &workdir,
                args.clone(),
                vars.clone(),
                group,
                log,
            )?);
            started.agent_pgid = started
                .child
                .as_ref()
                .and_then(|c| c.id())
                .map(|p| p as i32);
            started.agent = Some(AgentSpec { args, vars, group });
        }
        for container in app::containers(pod) {
            let log = log_file(w, &app_log(&namespace, &name, &container.name))?;
            let child = spawn_app(w, &started.net.commands, pod, container, &workdir, log)?;
            started.apps.push(child);
            let target = exec_target(exec::APP_IMAGE, pod, container, app::env(pod, container));
            started.targets.insert(container.name.clone(), target);
        }
        Ok::<_, String>(())
    };
    match run.await {
        Ok(()) => Ok(started),
        Err(e) => {
            end(&w.commands, started).await;
            Err(e)
        }
    }
}

/// How `kubectl exec` enters `container` of an image: with its environment `env`, in its
/// working directory.
fn exec_target(
    image: &'static str,
    pod: &Pod,
    container: &Container,
    mut env: Vec<(String, String)>,
) -> exec::Target {
    // A container's hostname is its Pod's name.
    let name = pod.metadata.name.clone().unwrap_or_default();
    env.insert(0, ("HOSTNAME".to_owned(), name));
    exec::Target {
        image,
        env,
        workdir: container
            .working_dir
            .clone()
            .filter(|d| d.starts_with('/'))
            .unwrap_or_else(|| "/".to_owned()),
    }
}

/// The proxy's volumes filled, its arguments, environment and group (the container's
/// `runAsGroup`, else `runAsUser`, else Istio's 1337).
async fn prepare_proxy(
    w: &Watch,
    pod: &Pod,
    container: &Container,
    workdir: &Path,
) -> Result<(Vec<String>, Vec<(String, String)>, u32), String> {
    volumes::fill(&w.client, pod, container, workdir).await?;
    let mut vars = env::resolve(pod, container);
    let proxy = env::Proxy {
        envoy: &w.envoy,
        bootstrap: &w.bootstrap,
    };
    let addresses = env::istiod_addresses(&vars);
    let mut resolved = BTreeMap::new();
    for host in addresses {
        let ip = env::endpoint(&w.client, &host).await?;
        resolved.insert(host, ip);
    }
    env::for_this_cell(&mut vars, &proxy, &resolved)?;
    let args = env::expand_args(container, &vars);
    let context = container.security_context.as_ref();
    let group = context
        .and_then(|c| c.run_as_group.or(c.run_as_user))
        .and_then(|g| u32::try_from(g).ok())
        .unwrap_or(PROXY_GROUP);
    Ok((args, vars, group))
}

/// The proxy's group when its container names none: the istio-proxy image's user and group.
const PROXY_GROUP: u32 = 1337;

/// Writes a line of the harness's into `sidecars.log`.
fn note(dir: &Path, line: &str) {
    if let Ok(mut log) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("sidecars.log"))
    {
        let _ = writeln!(log, "# labcheck: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).expect("a Pod")
    }

    #[test]
    fn only_running_pods_with_an_istio_proxy_get_one() {
        let running = serde_json::json!({"phase": "Running", "podIP": "10.244.0.5"});
        let sidecar = pod(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
            "spec": {"containers": [{"name": "nginx"}, {"name": "istio-proxy"}]},
            "status": running,
        }));
        let native = pod(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u2"},
            "spec": {"initContainers": [{"name": "istio-init"}, {"name": "istio-proxy", "restartPolicy": "Always"}],
                     "containers": [{"name": "nginx"}]},
            "status": running,
        }));
        let plain = pod(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u3"},
            "spec": {"containers": [{"name": "nginx"}]},
            "status": running,
        }));
        let pending = pod(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u4"},
            "spec": {"containers": [{"name": "istio-proxy"}]},
            "status": {"phase": "Pending"},
        }));
        let deleted = pod(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "u5",
                         "deletionTimestamp": "2026-12-03T10:00:00Z"},
            "spec": {"containers": [{"name": "istio-proxy"}]},
            "status": running,
        }));
        assert!(wants_proxy(&sidecar));
        assert!(wants_proxy(&native));
        assert!(!wants_proxy(&plain));
        assert!(!wants_proxy(&pending));
        assert!(!wants_proxy(&deleted));
    }
}
