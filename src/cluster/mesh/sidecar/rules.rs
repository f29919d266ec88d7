//! The Pods' exec rules ([`super::exec`]): each Pod with a container the cell runs gets its
//! kwok `Exec` as soon as it is created.

use std::collections::BTreeSet;
use std::path::PathBuf;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};

use super::{app, exec, kwok, note, pod_name, proxy_container};

/// Gives each Pod its exec rule as soon as it is created, before it is scheduled and kwok makes
/// it Running, so that `kubectl exec` right after `rollout status` finds it (and waits for the
/// processes, which [`super::follow`] starts one Pod after another). For the cell's lifetime.
pub(super) async fn follow(client: kube::Client, dir: PathBuf) {
    let api: Api<Pod> = Api::all(client.clone());
    let (reader, writer) = reflector::store();
    let events = reflector(writer, watcher(api, watcher::Config::default())).default_backoff();
    let mut events = std::pin::pin!(events);
    let mut ruled: BTreeSet<String> = BTreeSet::new();
    while let Some(event) = events.next().await {
        if event.is_err() {
            continue;
        }
        let pods = reader.state();
        ruled.retain(|uid| pods.iter().any(|p| p.metadata.uid.as_ref() == Some(uid)));
        for pod in &pods {
            let Some(uid) = pod.metadata.uid.clone() else {
                continue;
            };
            let containers = exec_containers(pod);
            if containers.is_empty() || ruled.contains(&uid) {
                continue;
            }
            if let Err(e) = kwok::apply_rule(&client, &exec::rule(pod, &containers)).await {
                note(
                    &dir,
                    &format!("cannot let {} be exec'd into: {e}", pod_name(pod)),
                );
            }
            ruled.insert(uid);
        }
    }
}

/// The containers of a Pod the cell runs, which `kubectl exec` enters: its proxy and its
/// application containers ([`app`]).
fn exec_containers(pod: &Pod) -> Vec<String> {
    proxy_container(pod)
        .into_iter()
        .chain(app::containers(pod))
        .map(|c| c.name.clone())
        .collect()
}
