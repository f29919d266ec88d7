//! The `@mesh` profile: a real node ([`super::node`]) whose registry also serves Istio's images
//! of the cell's Istio version (`pilot`, `proxyv2`, the echo app), so that the lab's own
//! `istioctl install` runs istiod and the gateways as Pods and the injector's `istio-init` and
//! `istio-proxy` containers run in them. What upstream Envoy needs from istiod is in the `pilot`
//! image's environment (see the image table); the one thing an image cannot carry is owned
//! here: once an istiod Pod exists, the cell applies [`TELEMETRY`], which turns Istio's
//! standard metrics off (their `istio.stats` filter is Istio's own Envoy build's). The watch
//! ends with the cell.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;

const NAMESPACE: &str = "istio-system";
/// istiod's Pods, as every install of Istio labels them.
const ISTIOD: &str = "app=istiod";
/// How often the watch looks.
const POLL: Duration = Duration::from_millis(500);

/// The Telemetry the profile applies in the root namespace once istiod's Pod exists: Istio's
/// standard metrics off, the learner's install left as it is.
pub const TELEMETRY: &str = "labcheck-metrics-off";

/// The watch. Dropped or stopped, it ends.
#[derive(Debug)]
pub struct Mesh {
    task: tokio::task::JoinHandle<()>,
}

impl Mesh {
    /// Starts watching for istiod's Pod.
    pub fn watch(client: kube::Client) -> Mesh {
        Mesh {
            task: tokio::spawn(follow(client)),
        }
    }

    pub async fn stop(&mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Applies [`TELEMETRY`] whenever an istiod Pod exists and it does not (a lab that deletes it
/// gets it back).
async fn follow(client: kube::Client) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let gvk = GroupVersionKind::gvk("telemetry.istio.io", "v1", "Telemetry");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "telemetries");
    let telemetries: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), NAMESPACE, &resource);
    let istiod = ListParams::default().labels(ISTIOD).limit(1);
    loop {
        tokio::time::sleep(POLL).await;
        let running = pods.list(&istiod).await.is_ok_and(|l| !l.items.is_empty());
        if running && matches!(telemetries.get_opt(TELEMETRY).await, Ok(None)) {
            let _ = metrics_off(&telemetries).await;
        }
    }
}

/// Applies [`TELEMETRY`] (server-side, as the field manager `labcheck`): every Istio metric of
/// the `prometheus` provider disabled, mesh-wide.
async fn metrics_off(api: &Api<DynamicObject>) -> Result<(), kube::Error> {
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
