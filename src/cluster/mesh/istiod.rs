//! istiod as a process of the cell, started only once the lab itself has installed Istio: a
//! watch on `istio-system`'s `app=istiod` Pods; when kwok reports one Running with an IP, the
//! cell makes that IP its own (a /32 on the cell's interface) and starts pilot-discovery as that
//! Pod (its name, namespace, IP and revision), listening on all addresses. So the Service's
//! EndpointSlice (filled by the real controller), the webhooks the lab applied and kwok's
//! port-forward all reach it unchanged. If that Pod goes away, its process goes too; another
//! Running istiod Pod gets a process of its own. The log is `istiod.log` in the cluster's
//! directory, each start marked.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};

use super::INTERFACE;
use crate::sandbox::{NetworkCommands, unix};

const NAMESPACE: &str = "istio-system";
const SELECTOR: &str = "app=istiod";
/// Where istiod answers its readiness probe (`/ready`, plain HTTP).
pub const READY_PORT: u16 = 8080;

/// istiod's settings that keep Istio's own Envoy extensions out of the proxies' configuration:
/// the peer metadata exchange filters (`istio.metadata_exchange`) and the ALPN override filter
/// (`istio.alpn`). Istio's stats filter (`istio.stats`) goes with Istio's metrics ([`TELEMETRY`]).
pub const UPSTREAM_ENVOY_ENV: [(&str, &str); 2] = [
    ("PILOT_ENABLE_METADATA_EXCHANGE", "false"),
    ("PILOT_ENABLE_ALPN_FILTER", "false"),
];

/// The Telemetry the profile applies in the root namespace once istiod runs: Istio's standard
/// metrics off (their `istio.stats` filter is Istio's own build's), the learner's install left as
/// it is.
pub const TELEMETRY: &str = "labcheck-metrics-off";

/// What the watch needs.
pub struct Watch {
    pub client: kube::Client,
    pub commands: NetworkCommands,
    pub binary: PathBuf,
    /// The components' kubeconfig (the API server inside the cell).
    pub kubeconfig: PathBuf,
    /// The cluster's directory: `istiod.log`, and `istiod/` as its working directory.
    pub dir: PathBuf,
    pub keep: bool,
}

/// The Pod istiod runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AsPod {
    name: String,
    ip: String,
    revision: String,
}

/// The running istiod process and the Pod it is.
#[derive(Debug)]
struct Running {
    pod: AsPod,
    child: tokio::process::Child,
}

/// The watch and the process it started.
#[derive(Debug)]
pub struct Istiod {
    task: tokio::task::JoinHandle<()>,
    running: Arc<Mutex<Option<Running>>>,
    keep: bool,
}

impl Istiod {
    /// Starts watching for the lab's istiod Pod.
    pub fn watch(w: Watch) -> Istiod {
        let running = Arc::new(Mutex::new(None));
        let keep = w.keep;
        let task = tokio::spawn(follow(w, running.clone()));
        Istiod {
            task,
            running,
            keep,
        }
    }

    /// The process's pid, while one runs.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.running).as_ref().and_then(|r| r.child.id())
    }

    /// Ends the watch, then the process.
    pub async fn stop(&mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
        let running = lock(&self.running).take();
        if let Some(mut r) = running {
            crate::cluster::processes::stop(&mut r.child).await;
        }
    }
}

impl Drop for Istiod {
    fn drop(&mut self) {
        self.task.abort();
        if self.keep {
            return;
        }
        if let Some(pid) = lock(&self.running).as_ref().and_then(|r| r.child.id()) {
            unix::kill_group(pid as i32, libc::SIGKILL);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Follows the istiod Pods for the cell's lifetime (until aborted).
async fn follow(w: Watch, running: Arc<Mutex<Option<Running>>>) {
    let api: Api<Pod> = Api::namespaced(w.client.clone(), NAMESPACE);
    let (reader, writer) = reflector::store();
    let events = reflector(
        writer,
        watcher(api, watcher::Config::default().labels(SELECTOR)),
    )
    .default_backoff();
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        if event.is_err() {
            continue;
        }
        let pods: Vec<Arc<Pod>> = reader.state();
        let current = lock(&running).as_ref().map(|r| r.pod.clone());
        let wanted = choose(&pods, current.as_ref());
        if wanted == current {
            continue;
        }
        let old = lock(&running).take();
        if let Some(mut old) = old {
            crate::cluster::processes::stop(&mut old.child).await;
            let addr = format!("{}/32", old.pod.ip);
            let _ = super::ip(&w.commands, &["addr", "del", &addr, "dev", INTERFACE]).await;
        }
        if let Some(pod) = wanted {
            match start(&w, &pod).await {
                Ok(child) => {
                    *lock(&running) = Some(Running { pod, child });
                    if let Err(e) = metrics_off(&w.client).await {
                        note(&w, &format!("cannot apply Telemetry {TELEMETRY}: {e}"));
                    }
                }
                Err(e) => note(&w, &format!("cannot start istiod as Pod {}: {e}", pod.name)),
            }
        }
    }
}

/// Whether an istiod Pod is Running now (a cell from a checkpoint taken after the lab installed
/// Istio).
pub async fn pod_running(client: &kube::Client) -> bool {
    let api: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let params = kube::api::ListParams::default().labels(SELECTOR);
    match api.list(&params).await {
        Ok(list) => {
            let pods: Vec<Arc<Pod>> = list.items.into_iter().map(Arc::new).collect();
            choose(&pods, None).is_some()
        }
        Err(_) => false,
    }
}

/// The Pod istiod should run as: the current one while it stays Running, else the oldest
/// Running one with an IP that is not being deleted.
fn choose(pods: &[Arc<Pod>], current: Option<&AsPod>) -> Option<AsPod> {
    let mut candidates: Vec<(&Pod, AsPod)> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let status = p.status.as_ref()?;
            if status.phase.as_deref() != Some("Running") {
                return None;
            }
            let as_pod = AsPod {
                name: p.metadata.name.clone()?,
                ip: status.pod_ip.clone()?,
                revision: p
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("istio.io/rev").cloned())
                    .unwrap_or_else(|| "default".to_owned()),
            };
            Some((p.as_ref(), as_pod))
        })
        .collect();
    if let Some(c) = current.filter(|c| candidates.iter().any(|(_, p)| p == *c)) {
        return Some(c.clone());
    }
    candidates.sort_by(|(a, x), (b, y)| {
        let created = |p: &Pod| p.metadata.creation_timestamp.clone().map(|t| t.0);
        created(a).cmp(&created(b)).then(x.name.cmp(&y.name))
    });
    candidates.into_iter().next().map(|(_, p)| p)
}

/// Gives the cell the Pod's IP and starts pilot-discovery as that Pod.
async fn start(w: &Watch, pod: &AsPod) -> Result<tokio::process::Child, String> {
    let addr = format!("{}/32", pod.ip);
    // Already there when a process for this IP was stopped half-way: not an error.
    if let Err(e) = super::ip(&w.commands, &["addr", "replace", &addr, "dev", INTERFACE]).await {
        return Err(e.to_string());
    }
    let workdir = w.dir.join("istiod");
    std::fs::create_dir_all(&workdir).map_err(|e| e.to_string())?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(w.dir.join("istiod.log"))
        .map_err(|e| e.to_string())?;
    let mut header = log.try_clone().map_err(|e| e.to_string())?;
    let _ = writeln!(
        header,
        "# labcheck: pilot-discovery starts as Pod {NAMESPACE}/{} at {}",
        pod.name, pod.ip
    );
    let err = log.try_clone().map_err(|e| e.to_string())?;
    w.commands
        .command(&w.binary)
        // Ended with the watch that started it (an aborted watch drops it), unless kept.
        .kill_on_drop(!w.keep)
        .current_dir(&workdir)
        .env("POD_NAMESPACE", NAMESPACE)
        .env("POD_NAME", &pod.name)
        .env("INSTANCE_IP", &pod.ip)
        .env("REVISION", &pod.revision)
        .env("ISTIOD_CUSTOM_HOST", format!("istiod.{NAMESPACE}.svc"))
        // What only Istio's own Envoy build understands stays out of the sidecars'
        // configuration, so that upstream Envoy takes all of it (README, "Sidecars that run").
        .envs(UPSTREAM_ENVOY_ENV)
        .arg("discovery")
        .arg(format!("--kubeconfig={}", w.kubeconfig.display()))
        .arg(format!("--httpAddr=:{READY_PORT}"))
        .args([
            "--monitoringAddr=:15014",
            "--grpcAddr=:15010",
            "--secureGRPCAddr=:15012",
            "--log_output_level=default:info",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("{}: {e}", w.binary.display()))
}

/// Applies [`TELEMETRY`] (server-side, as the field manager `labcheck`): every Istio metric of
/// the `prometheus` provider disabled, mesh-wide.
async fn metrics_off(client: &kube::Client) -> Result<(), kube::Error> {
    use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
    use kube::core::GroupVersionKind;
    let gvk = GroupVersionKind::gvk("telemetry.istio.io", "v1", "Telemetry");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "telemetries");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &resource);
    let telemetry = serde_json::json!({
        "apiVersion": "telemetry.istio.io/v1",
        "kind": "Telemetry",
        "metadata": {
            "name": TELEMETRY,
            "namespace": NAMESPACE,
            "annotations": {
                "labcheck.dev/why": "upstream Envoy has no istio.stats filter: Istio's standard metrics are off in this cell",
            },
        },
        "spec": {"metrics": [{
            "providers": [{"name": "prometheus"}],
            "overrides": [{"match": {"metric": "ALL_METRICS", "mode": "CLIENT_AND_SERVER"}, "disabled": true}],
        }]},
    });
    let params = PatchParams::apply("labcheck").force();
    api.patch(TELEMETRY, &params, &Patch::Apply(&telemetry))
        .await
        .map(drop)
}

/// Writes a line of the harness's into istiod's log.
fn note(w: &Watch, line: &str) {
    if let Ok(mut log) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(w.dir.join("istiod.log"))
    {
        let _ = writeln!(log, "# labcheck: {line}");
    }
}
