//! A proxy container's environment and arguments as a kubelet resolves them from the Pod's spec
//! (literal values with `$(VAR)` references, the downward API's field references; resource
//! references and Secret or ConfigMap keys are left out, as nothing in the injected proxy needs
//! them here), then what this cell changes: istiod's addresses, the Envoy binary and its
//! bootstrap template, and no cloud platform to probe for.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams};

/// Where the agent finds istiod when its `PROXY_CONFIG` names no discovery address.
const DEFAULT_DISCOVERY: &str = "istiod.istio-system.svc:15012";

/// What the cell runs as the Pod's proxy.
pub struct Proxy<'a> {
    pub envoy: &'a Path,
    pub bootstrap: &'a Path,
}

/// The container's environment, in order (a later entry of a name replaces an earlier one, as
/// in a container).
pub fn resolve(pod: &Pod, container: &Container) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(v), _) => Some(expand(v, &vars)),
            (None, Some(from)) => from
                .field_ref
                .as_ref()
                .and_then(|f| field(pod, &f.field_path)),
            (None, None) => Some(String::new()),
        };
        if let Some(value) = value {
            set(&mut vars, &var.name, value);
        }
    }
    vars
}

/// Sets `name` to `value`, replacing an earlier value.
fn set(vars: &mut Vec<(String, String)>, name: &str, value: String) {
    match vars.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = value,
        None => vars.push((name.to_owned(), value)),
    }
}

fn get<'a>(vars: &'a [(String, String)], name: &str) -> Option<&'a str> {
    vars.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A downward API field of the Pod.
fn field(pod: &Pod, path: &str) -> Option<String> {
    let keyed = |prefix: &str, map: Option<&BTreeMap<String, String>>| {
        let key = path.strip_prefix(prefix)?.strip_suffix("']")?;
        Some(map.and_then(|m| m.get(key)).cloned().unwrap_or_default())
    };
    let status = pod.status.as_ref();
    let spec = pod.spec.as_ref();
    match path {
        "metadata.name" => pod.metadata.name.clone(),
        "metadata.namespace" => pod.metadata.namespace.clone(),
        "metadata.uid" => pod.metadata.uid.clone(),
        "spec.nodeName" => spec.and_then(|s| s.node_name.clone()),
        "spec.serviceAccountName" => Some(
            spec.and_then(|s| s.service_account_name.clone())
                .unwrap_or_else(|| "default".into()),
        ),
        "status.hostIP" => status.and_then(|s| s.host_ip.clone()),
        "status.podIP" => status.and_then(|s| s.pod_ip.clone()),
        "status.hostIPs" => status.and_then(|s| s.host_ips.as_ref()).map(|ips| {
            ips.iter()
                .map(|i| i.ip.clone())
                .collect::<Vec<_>>()
                .join(",")
        }),
        "status.podIPs" => status.and_then(|s| s.pod_ips.as_ref()).map(|ips| {
            ips.iter()
                .map(|i| i.ip.clone())
                .collect::<Vec<_>>()
                .join(",")
        }),
        _ => keyed("metadata.labels['", pod.metadata.labels.as_ref())
            .or_else(|| keyed("metadata.annotations['", pod.metadata.annotations.as_ref())),
    }
}

/// Kubernetes' `$(VAR)` expansion: a defined name is replaced, `$$` is a `$`, anything else is
/// kept as written.
pub fn expand(text: &str, vars: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(name) = after
            .strip_prefix('(')
            .and_then(|a| a.find(')').map(|end| &a[..end]))
            .filter(|n| get(vars, n).is_some())
        {
            out.push_str(get(vars, name).unwrap_or_default());
            rest = &after[name.len() + 2..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The container's arguments, expanded.
pub fn expand_args(container: &Container, vars: &[(String, String)]) -> Vec<String> {
    container
        .args
        .iter()
        .flatten()
        .map(|a| expand(a, vars))
        .collect()
}

/// `host:port` → (host, port).
fn split(address: &str) -> (&str, &str) {
    address.rsplit_once(':').unwrap_or((address, "15012"))
}

/// The agent's `PROXY_CONFIG` as a JSON object (empty when absent or not an object).
fn proxy_config(vars: &[(String, String)]) -> serde_json::Map<String, serde_json::Value> {
    get(vars, "PROXY_CONFIG")
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// The host names the agent would dial for istiod: the discovery address and the CA's.
pub fn istiod_addresses(vars: &[(String, String)]) -> Vec<String> {
    let config = proxy_config(vars);
    let discovery = config
        .get("discoveryAddress")
        .and_then(|v| v.as_str())
        .unwrap_or(DEFAULT_DISCOVERY);
    let mut hosts = vec![split(discovery).0.to_owned()];
    if let Some(ca) = get(vars, "CA_ADDR") {
        hosts.push(split(ca).0.to_owned());
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Points the agent at istiod's endpoint addresses (`resolved`, by host name), keeping the
/// name for the certificate check (`ISTIOD_SAN`), and at upstream Envoy with the module's
/// bootstrap template.
pub fn for_this_cell(
    vars: &mut Vec<(String, String)>,
    proxy: &Proxy<'_>,
    resolved: &BTreeMap<String, String>,
) -> Result<(), String> {
    let at = |address: &str| -> Result<(String, String), String> {
        let (host, port) = split(address);
        let ip = resolved
            .get(host)
            .ok_or_else(|| format!("no address for {host}"))?;
        Ok((host.to_owned(), format!("{ip}:{port}")))
    };
    let mut config = proxy_config(vars);
    let discovery = config
        .get("discoveryAddress")
        .and_then(|v| v.as_str())
        .unwrap_or(DEFAULT_DISCOVERY)
        .to_owned();
    let (host, address) = at(&discovery)?;
    config.insert("discoveryAddress".into(), address.into());
    config.insert(
        "binaryPath".into(),
        proxy.envoy.display().to_string().into(),
    );
    let text = serde_json::Value::Object(config).to_string();
    set(vars, "PROXY_CONFIG", text);
    // The agent checks the CA's certificate against ISTIOD_SAN only when the CA is the
    // discovery address by default: a CA_ADDR naming istiod itself goes.
    if let Some(ca) = get(vars, "CA_ADDR").map(str::to_owned) {
        let (ca_host, ca_address) = at(&ca)?;
        if ca_host == host {
            vars.retain(|(n, _)| n != "CA_ADDR");
        } else {
            set(vars, "CA_ADDR", ca_address);
        }
    }
    if get(vars, "ISTIOD_SAN").is_none() {
        set(vars, "ISTIOD_SAN", host);
    }
    // The cell is on no cloud: the agent's platform probe (GCP, AWS, Azure metadata servers)
    // would find none after its 2 s timeout, so it is told so at once.
    if get(vars, "CLOUD_PLATFORM").is_none() {
        set(vars, "CLOUD_PLATFORM", "none".into());
    }
    set(
        vars,
        "ISTIO_BOOTSTRAP",
        proxy.bootstrap.display().to_string(),
    );
    Ok(())
}

/// The address of a ready endpoint of Service `host` (`name.namespace.svc[.cluster.local]`):
/// what the Pod's DNS and the cluster's Service routing would reach. Waits up to 10 s.
pub async fn endpoint(client: &kube::Client, host: &str) -> Result<String, String> {
    let short = host
        .trim_end_matches(".cluster.local")
        .trim_end_matches(".svc");
    let Some((service, namespace)) = short.split_once('.') else {
        return Err(format!("{host} names no Service of a namespace"));
    };
    let api: Api<EndpointSlice> = Api::namespaced(client.clone(), namespace);
    let params = ListParams::default().labels(&format!("kubernetes.io/service-name={service}"));
    let mut last = String::from("no EndpointSlice");
    for _ in 0..20 {
        match api.list(&params).await {
            Ok(list) => {
                let ready = list
                    .items
                    .iter()
                    .flat_map(|s| s.endpoints.iter().flatten())
                    .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
                    .find_map(|e| e.addresses.first().cloned());
                if let Some(ip) = ready {
                    return Ok(ip);
                }
                last = "no ready endpoint".into();
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(format!("Service {service}.{namespace}: {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injected() -> (Pod, Container) {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1",
                         "labels": {"app": "web"}},
            "spec": {"nodeName": "kwok-node-0", "serviceAccountName": "web",
                     "containers": [{"name": "istio-proxy"}]},
            "status": {"phase": "Running", "podIP": "10.244.0.5", "hostIP": "10.244.255.1"},
        }))
        .expect("pod");
        let container: Container = serde_json::from_value(serde_json::json!({
            "name": "istio-proxy",
            "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                     "--cost=$$5", "$(UNSET)"],
            "env": [
                {"name": "PILOT_CERT_PROVIDER", "value": "istiod"},
                {"name": "CA_ADDR", "value": "istiod.istio-system.svc:15012"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "INSTANCE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "SERVICE_ACCOUNT", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
                {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                {"name": "ISTIO_META_APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "GOMAXPROCS", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {"name": "PROXY_CONFIG", "value": "{\"discoveryAddress\":\"istiod.istio-system.svc:15012\",\"concurrency\":2}\n"},
                {"name": "ISTIO_META_MESH_ID", "value": "$(POD_NAMESPACE)-mesh"},
            ],
        }))
        .expect("container");
        (pod, container)
    }

    #[test]
    fn the_environment_resolves_as_a_kubelet_resolves_it() {
        let (pod, container) = injected();
        let vars = resolve(&pod, &container);
        let value = |n: &str| get(&vars, n).map(str::to_owned);
        assert_eq!(value("POD_NAME").as_deref(), Some("web-1"));
        assert_eq!(value("INSTANCE_IP").as_deref(), Some("10.244.0.5"));
        assert_eq!(value("SERVICE_ACCOUNT").as_deref(), Some("web"));
        assert_eq!(value("HOST_IP").as_deref(), Some("10.244.255.1"));
        assert_eq!(value("ISTIO_META_APP").as_deref(), Some("web"));
        assert_eq!(value("ISTIO_META_MESH_ID").as_deref(), Some("shop-mesh"));
        assert_eq!(
            value("GOMAXPROCS"),
            None,
            "resource references are left out"
        );
        assert_eq!(
            expand_args(&container, &vars),
            [
                "proxy",
                "sidecar",
                "--domain",
                "shop.svc.cluster.local",
                "--cost=$5",
                "$(UNSET)"
            ]
        );
    }

    #[test]
    fn the_agent_dials_istiods_endpoint_and_runs_upstream_envoy() {
        let (pod, container) = injected();
        let mut vars = resolve(&pod, &container);
        assert_eq!(istiod_addresses(&vars), ["istiod.istio-system.svc"]);
        let resolved = BTreeMap::from([(
            "istiod.istio-system.svc".to_string(),
            "10.244.0.2".to_string(),
        )]);
        let proxy = Proxy {
            envoy: Path::new("/cache/envoy"),
            bootstrap: Path::new("/cache/envoy_bootstrap.json"),
        };
        for_this_cell(&mut vars, &proxy, &resolved).expect("resolved");
        let config: serde_json::Value =
            serde_json::from_str(get(&vars, "PROXY_CONFIG").expect("PROXY_CONFIG")).expect("JSON");
        assert_eq!(config["discoveryAddress"], "10.244.0.2:15012");
        assert_eq!(config["binaryPath"], "/cache/envoy");
        assert_eq!(
            config["concurrency"], 2,
            "the rest of the mesh's proxy config stays"
        );
        assert_eq!(
            get(&vars, "CA_ADDR"),
            None,
            "the CA is istiod's discovery address"
        );
        assert_eq!(get(&vars, "ISTIOD_SAN"), Some("istiod.istio-system.svc"));
        assert_eq!(get(&vars, "CLOUD_PLATFORM"), Some("none"));
        assert_eq!(
            get(&vars, "ISTIO_BOOTSTRAP"),
            Some("/cache/envoy_bootstrap.json")
        );
        let unresolved = BTreeMap::new();
        assert!(for_this_cell(&mut resolve(&pod, &container), &proxy, &unresolved).is_err());
    }
}
