//! The proxy container's volumes, filled as a kubelet fills them, under the Pod's working
//! directory at each mount path (pilot-agent reads `./var/run/secrets/…` relative to it):
//! empty directories; ConfigMaps (istiod's CA root certificate, waited for while istiod has not
//! yet written it to the Pod's namespace); the downward API's labels and annotations; projected
//! service account tokens, minted by the API server's TokenRequest for the Pod's service account
//! with the volume's audience and lifetime, bound to the Pod. Secrets and other volume types are
//! empty directories here (the injected proxy mounts none it needs).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapProjection, Container, DownwardAPIVolumeFile, KeyToPath, Pod,
    ServiceAccount, ServiceAccountTokenProjection, Volume,
};
use kube::api::{Api, PostParams};

/// How long a ConfigMap the proxy mounts may take to appear (istiod writes the CA root
/// certificate into each namespace shortly after it starts).
const CONFIGMAP_WAIT: Duration = Duration::from_secs(30);
/// A projected token's lifetime when the volume names none (the API's default).
const TOKEN_SECONDS: i64 = 3600;

/// Fills every volume `container` mounts under `workdir`.
pub async fn fill(
    client: &kube::Client,
    pod: &Pod,
    container: &Container,
    workdir: &Path,
) -> Result<(), String> {
    let volumes: BTreeMap<&str, &Volume> = pod
        .spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .map(|v| (v.name.as_str(), v))
        .collect();
    for mount in container.volume_mounts.iter().flatten() {
        if mount.sub_path.is_some() || mount.sub_path_expr.is_some() {
            continue;
        }
        let dir = workdir.join(mount.mount_path.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let Some(volume) = volumes.get(mount.name.as_str()) else {
            continue;
        };
        let files = contents(client, pod, volume)
            .await
            .map_err(|e| format!("volume {}: {e}", volume.name))?;
        for (path, bytes) in files {
            let file = dir.join(path.trim_start_matches('/'));
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&file, bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    Ok(())
}

/// The files of one volume, by path inside it.
async fn contents(
    client: &kube::Client,
    pod: &Pod,
    volume: &Volume,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let mut files = Vec::new();
    if let Some(cm) = &volume.config_map {
        let optional = cm.optional.unwrap_or(false);
        files.extend(config_map(client, namespace, &cm.name, cm.items.as_deref(), optional).await?);
    }
    if let Some(downward) = &volume.downward_api {
        files.extend(downward_api(
            pod,
            downward.items.as_deref().unwrap_or_default(),
        ));
    }
    if let Some(projected) = &volume.projected {
        for source in projected.sources.iter().flatten() {
            if let Some(token) = &source.service_account_token {
                files.push((
                    token.path.clone(),
                    self::token(client, pod, token).await?.into(),
                ));
            }
            if let Some(ConfigMapProjection {
                name,
                items,
                optional,
            }) = &source.config_map
            {
                let optional = optional.unwrap_or(false);
                files
                    .extend(config_map(client, namespace, name, items.as_deref(), optional).await?);
            }
            if let Some(downward) = &source.downward_api {
                files.extend(downward_api(
                    pod,
                    downward.items.as_deref().unwrap_or_default(),
                ));
            }
        }
    }
    Ok(files)
}

/// A ConfigMap's keys (or the listed ones) as files; waits for it unless optional.
async fn config_map(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    items: Option<&[KeyToPath]>,
    optional: bool,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let started = std::time::Instant::now();
    let found = loop {
        match api.get_opt(name).await {
            Ok(Some(cm)) => break cm,
            Ok(None) if optional => return Ok(Vec::new()),
            Ok(None) if started.elapsed() < CONFIGMAP_WAIT => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Ok(None) => {
                return Err(format!(
                    "ConfigMap {namespace}/{name} did not appear within {} s",
                    CONFIGMAP_WAIT.as_secs()
                ));
            }
            Err(e) => return Err(format!("ConfigMap {namespace}/{name}: {e}")),
        }
    };
    let data = found.data.unwrap_or_default();
    Ok(match items {
        Some(items) => items
            .iter()
            .filter_map(|i| Some((i.path.clone(), data.get(&i.key)?.clone().into_bytes())))
            .collect(),
        None => data.into_iter().map(|(k, v)| (k, v.into_bytes())).collect(),
    })
}

/// The downward API's files: the Pod's labels and annotations in the kubelet's format
/// (`key="value"` lines, sorted), other fields as their value.
fn downward_api(pod: &Pod, items: &[DownwardAPIVolumeFile]) -> Vec<(String, Vec<u8>)> {
    let format = |map: Option<&BTreeMap<String, String>>| {
        map.into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={}", serde_json::Value::from(v.as_str())))
            .collect::<Vec<_>>()
            .join("\n")
    };
    items
        .iter()
        .filter_map(|item| {
            let path = &item.field_ref.as_ref()?.field_path;
            let text = match path.as_str() {
                "metadata.labels" => format(pod.metadata.labels.as_ref()),
                "metadata.annotations" => format(pod.metadata.annotations.as_ref()),
                "metadata.name" => pod.metadata.name.clone()?,
                "metadata.namespace" => pod.metadata.namespace.clone()?,
                "metadata.uid" => pod.metadata.uid.clone()?,
                _ => return None,
            };
            Some((item.path.clone(), text.into_bytes()))
        })
        .collect()
}

/// A token for the Pod's service account from the API server's TokenRequest, bound to the Pod.
async fn token(
    client: &kube::Client,
    pod: &Pod,
    projection: &ServiceAccountTokenProjection,
) -> Result<String, String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let account = pod
        .spec
        .as_ref()
        .and_then(|s| s.service_account_name.clone())
        .unwrap_or_else(|| "default".into());
    let request: TokenRequest = serde_json::from_value(serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {
            "audiences": projection.audience.iter().collect::<Vec<_>>(),
            "expirationSeconds": projection.expiration_seconds.unwrap_or(TOKEN_SECONDS),
            "boundObjectRef": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.metadata.name,
                "uid": pod.metadata.uid,
            },
        },
    }))
    .map_err(|e| format!("a TokenRequest: {e}"))?;
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let answer = api
        .create_token_request(&account, &PostParams::default(), &request)
        .await
        .map_err(|e| format!("TokenRequest for service account {namespace}/{account}: {e}"))?;
    answer
        .status
        .and_then(|s| s.token)
        .ok_or_else(|| format!("TokenRequest for {namespace}/{account} returned no token"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_annotations_are_written_as_the_kubelet_writes_them() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "labels": {"version": "v1", "app": "web"},
                         "annotations": {"note": "say \"hi\""}},
        }))
        .expect("pod");
        let items: Vec<DownwardAPIVolumeFile> = serde_json::from_value(serde_json::json!([
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
            {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        ]))
        .expect("items");
        let files = downward_api(&pod, &items);
        let text = |i: usize| String::from_utf8_lossy(&files[i].1).into_owned();
        assert_eq!(files[0].0, "labels");
        assert_eq!(text(0), "app=\"web\"\nversion=\"v1\"");
        assert_eq!(text(1), "note=\"say \\\"hi\\\"\"");
        assert_eq!(text(2), "web-1");
    }
}
