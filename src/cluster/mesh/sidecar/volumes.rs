//! The proxy container's volumes, filled as a kubelet fills them, under the Pod's working
//! directory at each mount path (pilot-agent reads `./var/run/secrets/…` relative to it):
//! empty directories; ConfigMaps (`data` and `binaryData`; istiod's CA root certificate, waited
//! for while istiod has not yet written it to the Pod's namespace) and Secrets, with their
//! modes; the downward API's labels and annotations; projected service account tokens, minted by
//! the API server's TokenRequest for the Pod's service account with the volume's audience and
//! lifetime, bound to the Pod. Other volume types are empty directories here.
//!
//! A mount path or an item's path is resolved inside the Pod's directory as a container runtime
//! resolves it inside a root (`/../../etc/x` is the Pod's `etc/x`), and walked without following
//! a link ([`Beneath`]): the Pod's processes write in that directory, and a link they left there
//! is refused with the Pod's start (the reason in `sidecars.log`), never followed out of it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapProjection, Container, DownwardAPIVolumeFile, KeyToPath, Pod, Secret,
    SecretProjection, ServiceAccount, ServiceAccountTokenProjection, Volume,
};
use kube::api::{Api, PostParams};
use nix::sys::stat::Mode;

use crate::sandbox::beneath::{Beneath, clamp};

/// How long a ConfigMap or Secret the proxy mounts may take to appear (istiod writes the CA
/// root certificate into each namespace shortly after it starts).
const CONFIGMAP_WAIT: Duration = Duration::from_secs(30);
/// A volume's files' mode when it names none (the API's default).
const DEFAULT_MODE: u32 = 0o644;

/// A file of a volume: its path inside the volume, its bytes, its mode.
type File = (String, Vec<u8>, u32);
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
    let root = Beneath::open(workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let made = |_: &Path| Some(Mode::from_bits_truncate(0o755));
    for mount in container.volume_mounts.iter().flatten() {
        if mount.sub_path.is_some() || mount.sub_path_expr.is_some() {
            continue;
        }
        let at = |e: std::io::Error| {
            format!("volume {} mounted at {}: {e}", mount.name, mount.mount_path)
        };
        let dir = root.dir(Path::new(&mount.mount_path), made).map_err(at)?;
        let Some(volume) = volumes.get(mount.name.as_str()) else {
            continue;
        };
        let files = contents(client, pod, volume)
            .await
            .map_err(|e| format!("volume {}: {e}", volume.name))?;
        for (path, bytes, mode) in files {
            let inside = clamp(Path::new(&path));
            let (Some(parent), Some(name)) = (inside.parent(), inside.file_name()) else {
                return Err(at(std::io::Error::other(format!("{path:?} names no file"))));
            };
            dir.dir(parent, made)
                .and_then(|d| d.write(name, &bytes, mode))
                .map_err(|e| at(std::io::Error::new(e.kind(), format!("{path}: {e}"))))?;
        }
    }
    Ok(())
}

/// The files of one volume, by path inside it.
async fn contents(client: &kube::Client, pod: &Pod, volume: &Volume) -> Result<Vec<File>, String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let mode = |m: Option<i32>| {
        m.and_then(|m| u32::try_from(m).ok())
            .unwrap_or(DEFAULT_MODE)
    };
    let mut files = Vec::new();
    if let Some(cm) = &volume.config_map {
        let found = keys(
            client,
            namespace,
            &cm.name,
            cm.optional.unwrap_or(false),
            config_map_keys,
        )
        .await?;
        files.extend(keyed(found, cm.items.as_deref(), mode(cm.default_mode)));
    }
    if let Some(secret) = &volume.secret {
        let name = secret.secret_name.as_deref().unwrap_or_default();
        let found = keys(
            client,
            namespace,
            name,
            secret.optional.unwrap_or(false),
            secret_keys,
        )
        .await?;
        files.extend(keyed(
            found,
            secret.items.as_deref(),
            mode(secret.default_mode),
        ));
    }
    if let Some(downward) = &volume.downward_api {
        let items = downward.items.as_deref().unwrap_or_default();
        files.extend(downward_api(pod, items, mode(downward.default_mode)));
    }
    if let Some(projected) = &volume.projected {
        let default = mode(projected.default_mode);
        for source in projected.sources.iter().flatten() {
            if let Some(token) = &source.service_account_token {
                let text = self::token(client, pod, token).await?;
                files.push((token.path.clone(), text.into(), default));
            }
            if let Some(ConfigMapProjection {
                name,
                items,
                optional,
            }) = &source.config_map
            {
                let found = keys(
                    client,
                    namespace,
                    name,
                    optional.unwrap_or(false),
                    config_map_keys,
                )
                .await?;
                files.extend(keyed(found, items.as_deref(), default));
            }
            if let Some(SecretProjection {
                name,
                items,
                optional,
            }) = &source.secret
            {
                let found = keys(
                    client,
                    namespace,
                    name,
                    optional.unwrap_or(false),
                    secret_keys,
                )
                .await?;
                files.extend(keyed(found, items.as_deref(), default));
            }
            if let Some(downward) = &source.downward_api {
                let items = downward.items.as_deref().unwrap_or_default();
                files.extend(downward_api(pod, items, default));
            }
        }
    }
    Ok(files)
}

/// A ConfigMap's or Secret's keys as files: every key, or the listed ones at their paths and
/// modes.
fn keyed(keys: BTreeMap<String, Vec<u8>>, items: Option<&[KeyToPath]>, mode: u32) -> Vec<File> {
    match items {
        Some(items) => items
            .iter()
            .filter_map(|i| {
                let item_mode = i.mode.and_then(|m| u32::try_from(m).ok()).unwrap_or(mode);
                Some((i.path.clone(), keys.get(&i.key)?.clone(), item_mode))
            })
            .collect(),
        None => keys.into_iter().map(|(k, v)| (k, v, mode)).collect(),
    }
}

/// The keys of ConfigMap or Secret `name` (`keys_of` reads them), waiting for it unless
/// `optional` (none when it is optional and absent).
async fn keys<K>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    optional: bool,
    keys_of: fn(K) -> BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Vec<u8>>, String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let what = format!("{} {namespace}/{name}", K::kind(&()));
    let started = std::time::Instant::now();
    loop {
        match api.get_opt(name).await {
            Ok(Some(found)) => return Ok(keys_of(found)),
            Ok(None) if optional => return Ok(BTreeMap::new()),
            Ok(None) if started.elapsed() < CONFIGMAP_WAIT => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Ok(None) => {
                return Err(format!(
                    "{what} did not appear within {} s",
                    CONFIGMAP_WAIT.as_secs()
                ));
            }
            Err(e) => return Err(format!("{what}: {e}")),
        }
    }
}

/// A ConfigMap's keys: `data` and `binaryData`.
fn config_map_keys(found: ConfigMap) -> BTreeMap<String, Vec<u8>> {
    let text = found.data.unwrap_or_default();
    let binary = found.binary_data.unwrap_or_default();
    text.into_iter()
        .map(|(k, v)| (k, v.into_bytes()))
        .chain(binary.into_iter().map(|(k, v)| (k, v.0)))
        .collect()
}

/// A Secret's keys: `data`, decoded.
fn secret_keys(found: Secret) -> BTreeMap<String, Vec<u8>> {
    let data = found.data.unwrap_or_default();
    data.into_iter().map(|(k, v)| (k, v.0)).collect()
}

/// The downward API's files: the Pod's labels and annotations in the kubelet's format
/// (`key="value"` lines, sorted), other fields as their value.
fn downward_api(pod: &Pod, items: &[DownwardAPIVolumeFile], mode: u32) -> Vec<File> {
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
            let item_mode = item
                .mode
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(mode);
            Some((item.path.clone(), text.into_bytes(), item_mode))
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
    fn keys_become_files_with_the_volumes_or_the_items_modes() {
        let keys: BTreeMap<String, Vec<u8>> = [
            ("ca.crt".to_owned(), b"text".to_vec()),
            ("blob".to_owned(), vec![0, 159, 146, 150]),
        ]
        .into();
        let all = keyed(keys.clone(), None, 0o600);
        assert_eq!(
            all,
            vec![
                ("blob".to_owned(), vec![0, 159, 146, 150], 0o600),
                ("ca.crt".to_owned(), b"text".to_vec(), 0o600),
            ]
        );
        let items: Vec<KeyToPath> = serde_json::from_value(serde_json::json!([
            {"key": "blob", "path": "bin/blob", "mode": 0o755},
            {"key": "ca.crt", "path": "root-cert.pem"},
            {"key": "absent", "path": "nothing"},
        ]))
        .expect("items");
        let listed = keyed(keys, Some(&items), DEFAULT_MODE);
        assert_eq!(
            listed,
            vec![
                ("bin/blob".to_owned(), vec![0, 159, 146, 150], 0o755),
                ("root-cert.pem".to_owned(), b"text".to_vec(), DEFAULT_MODE),
            ]
        );
    }

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
        let files = downward_api(&pod, &items, DEFAULT_MODE);
        let text = |i: usize| String::from_utf8_lossy(&files[i].1).into_owned();
        assert_eq!(files[0].0, "labels");
        assert_eq!(text(0), "app=\"web\"\nversion=\"v1\"");
        assert_eq!(text(1), "note=\"say \\\"hi\\\"\"");
        assert_eq!(text(2), "web-1");
    }
}
