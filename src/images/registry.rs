//! A read-only registry of the image table's built images, for a cell's node: the OCI
//! distribution API's pull side (`/v2/`, manifests by tag or digest, blobs by digest) over HTTP/1.1,
//! served from the images' archives where they lie in the cache, by the tags each archive
//! carries. It runs as a process of the cell (`labcheck registry`, in its network and control
//! group), so a kept cell keeps it. A node's containerd pulls every
//! image through it that it does not hold from its start ([`super::preload`]; its hosts
//! configuration sends every registry here), as a node pulls from a registry —
//! `imagePullPolicy: Always` included — and an image the table does not build is refused as a
//! registry refuses a repository it does not have, the reason naming the table.

use std::collections::BTreeMap;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The manifest's media type (OCI) and a layer's (an uncompressed tarball).
const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const CONFIG: &str = "application/vnd.oci.image.config.v1+json";
const LAYER: &str = "application/vnd.oci.image.layer.v1.tar";

/// Where a blob's bytes are: a range of an archive.
#[derive(Clone, Debug)]
struct Blob {
    archive: PathBuf,
    offset: u64,
    size: u64,
}

/// What the registry serves.
#[derive(Debug, Default)]
struct Index {
    /// Manifest bytes by digest.
    manifests: BTreeMap<String, Vec<u8>>,
    /// Manifest digest by normalized reference (`docker.io/library/nginx:latest`).
    tags: BTreeMap<String, String>,
    blobs: BTreeMap<String, Blob>,
}

/// What the registry was asked for and could not serve, each once, written to its log (which a
/// failed cell's report keeps).
#[derive(Clone, Debug)]
struct Misses {
    seen: Arc<Mutex<Vec<String>>>,
    log: PathBuf,
}

impl Misses {
    fn add(&self, reference: String, held: &BTreeMap<String, String>) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if seen.contains(&reference) {
            return;
        }
        let line = format!("a Pod asked for it: {}\n", not_built(&reference, held));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        seen.push(reference);
    }
}

/// `labcheck registry`: serves `archives` at `listen` until killed; what it cannot serve goes
/// to `log`. Returns the exit code.
pub async fn run(listen: std::net::SocketAddr, log: &Path, archives: &[PathBuf]) -> i32 {
    let served = index(archives).and_then(|index| {
        let listener = std::net::TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        Ok((index, TcpListener::from_std(listener)?))
    });
    let (index, listener) = match served {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("labcheck registry: {e}");
            return 2;
        }
    };
    let index = Arc::new(index);
    let misses = Misses {
        seen: Arc::default(),
        log: log.to_owned(),
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (index, misses) = (index.clone(), misses.clone());
        tokio::spawn(async move {
            let _ = connection(stream, &index, &misses).await;
        });
    }
}

/// Reads each archive's `manifest.json` (its tags) and where its config and layers lie in it.
fn index(archives: &[PathBuf]) -> std::io::Result<Index> {
    let mut index = Index::default();
    for archive in archives {
        let mut places: BTreeMap<String, Blob> = BTreeMap::new();
        let mut file = std::fs::File::open(archive)?;
        for entry in tar::Archive::new(&mut file).entries_with_seek()? {
            let entry = entry?;
            let name = entry.path()?.to_string_lossy().into_owned();
            let (offset, size) = (entry.raw_file_position(), entry.size());
            let archive = archive.clone();
            places.insert(
                name,
                Blob {
                    archive,
                    offset,
                    size,
                },
            );
        }
        let place = |name: &str| {
            places
                .get(name)
                .cloned()
                .ok_or_else(|| std::io::Error::other(format!("{name} is not in the archive")))
        };
        let manifest_json = place("manifest.json")?;
        let mut bytes = vec![0; usize::try_from(manifest_json.size).unwrap_or(0)];
        file.seek(std::io::SeekFrom::Start(manifest_json.offset))?;
        file.read_exact(&mut bytes)?;
        let docker: Value = serde_json::from_slice(&bytes)?;
        let Some(first) = docker.get(0) else {
            continue;
        };
        // A `docker save` archive names each blob by its digest: `<hex>.json`, `<hex>/layer.tar`.
        let blob = |name: &str| -> std::io::Result<(String, Blob)> {
            let digest = format!("sha256:{}", name.split(['/', '.']).next().unwrap_or(name));
            Ok((digest, place(name)?))
        };
        let (config_digest, config) = blob(first["Config"].as_str().unwrap_or_default())?;
        let mut layers = Vec::new();
        for layer in first["Layers"].as_array().into_iter().flatten() {
            let (digest, b) = blob(layer.as_str().unwrap_or_default())?;
            layers.push(json!({"mediaType": LAYER, "digest": digest, "size": b.size}));
            index.blobs.insert(digest, b);
        }
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": {"mediaType": CONFIG, "digest": config_digest, "size": config.size},
            "layers": layers,
        }))?;
        index.blobs.insert(config_digest, config);
        let digest = format!("sha256:{:x}", Sha256::digest(&manifest));
        for tag in first["RepoTags"].as_array().into_iter().flatten() {
            let reference = super::normalize(tag.as_str().unwrap_or_default());
            index.tags.insert(reference, digest.clone());
        }
        index.manifests.insert(digest, manifest);
    }
    Ok(index)
}

/// One client connection: requests until it closes.
async fn connection(stream: TcpStream, index: &Index, misses: &Misses) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        // HTTP/1.0 closes after the answer unless asked not to; HTTP/1.1 keeps the connection
        // unless asked to close it.
        let mut close = parts.next() == Some("HTTP/1.0");
        loop {
            let mut header = String::new();
            if stream.read_line(&mut header).await? == 0 || header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.trim().eq_ignore_ascii_case("connection")
            {
                close = value.trim().eq_ignore_ascii_case("close");
            }
        }
        let head = method == "HEAD";
        respond(stream.get_mut(), index, misses, target, head).await?;
        if close {
            return Ok(());
        }
    }
}

/// Answers one request for `target` (path and query).
async fn respond(
    out: &mut TcpStream,
    index: &Index,
    misses: &Misses,
    target: &str,
    head: bool,
) -> std::io::Result<()> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let ns = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("ns="))
        .unwrap_or("docker.io");
    let rest = path.strip_prefix("/v2/").unwrap_or("");
    if path == "/v2/" || path == "/v2" {
        return send(out, 200, "application/json", None, b"{}", head).await;
    }
    if let Some((name, reference)) = rest.rsplit_once("/manifests/") {
        let digest = if reference.starts_with("sha256:") {
            Some(reference.to_owned())
        } else {
            let wanted = super::normalize(&format!("{ns}/{name}:{reference}"));
            let found = index.tags.get(&wanted).cloned();
            if found.is_none() {
                misses.add(wanted, &index.tags);
            }
            found
        };
        if let Some(bytes) = digest.as_ref().and_then(|d| index.manifests.get(d)) {
            return send(out, 200, MANIFEST, digest.as_deref(), bytes, head).await;
        }
        // As a registry answers for a repository it does not have (Docker Hub: "denied"), with
        // the reason in the body: containerd asks again with GET for it, and the kubelet's event
        // for the Pod carries it.
        let what = super::normalize(&format!("{ns}/{name}:{reference}"));
        return send_error(out, 403, "DENIED", &not_built(&what, &index.tags), head).await;
    }
    if let Some((_, digest)) = rest.rsplit_once("/blobs/")
        && let Some(blob) = index.blobs.get(digest)
    {
        return send_blob(out, digest, blob, head).await;
    }
    not_found(out, "BLOB_UNKNOWN", rest, head).await
}

/// Why `reference` cannot be pulled from a registry holding `held` (by reference): the table
/// has no recipe for it, or builds it only for the cells of an Istio version.
fn not_built(reference: &str, held: &BTreeMap<String, String>) -> String {
    let here = || held.keys().cloned().collect::<Vec<_>>().join(", ");
    match super::lookup(reference) {
        Some(row) if row.per_istio_version() => format!(
            "labcheck builds {reference} for the @mesh cells of each Istio version (its row of the \
             image table, src/images/table.rs: {}), not for this cell; this cell's registry serves {}",
            row.name(),
            here()
        ),
        Some(row) => format!(
            "labcheck builds {reference} ({}), but this cell's registry does not hold it; it serves {}",
            row.name(),
            here()
        ),
        None => format!(
            "labcheck builds no image {reference}: the image table (src/images/table.rs) serves {}",
            super::served()
        ),
    }
}

async fn not_found(out: &mut TcpStream, code: &str, what: &str, head: bool) -> std::io::Result<()> {
    let message = format!("no blob {what} in the cell's registry");
    send_error(out, 404, code, &message, head).await
}

/// An error of the registry API: `status`, and a body of one error with `code` and `message`.
async fn send_error(
    out: &mut TcpStream,
    status: u16,
    code: &str,
    message: &str,
    head: bool,
) -> std::io::Result<()> {
    let body = json!({"errors": [{"code": code, "message": message}]});
    let body = body.to_string();
    send(out, status, "application/json", None, body.as_bytes(), head).await
}

async fn send(
    out: &mut TcpStream,
    status: u16,
    content_type: &str,
    digest: Option<&str>,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    out.write_all(header(status, content_type, digest, body.len() as u64).as_bytes())
        .await?;
    if !head {
        out.write_all(body).await?;
    }
    out.flush().await
}

async fn send_blob(
    out: &mut TcpStream,
    digest: &str,
    blob: &Blob,
    head: bool,
) -> std::io::Result<()> {
    let mut file = tokio::fs::File::open(&blob.archive).await?;
    file.seek(std::io::SeekFrom::Start(blob.offset)).await?;
    let header = header(200, "application/octet-stream", Some(digest), blob.size);
    out.write_all(header.as_bytes()).await?;
    if !head {
        tokio::io::copy(&mut file.take(blob.size), out).await?;
    }
    out.flush().await
}

fn header(status: u16, content_type: &str, digest: Option<&str>, length: u64) -> String {
    let reason = match status {
        200 => "OK",
        403 => "Forbidden",
        _ => "Not Found",
    };
    let mut text = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\
         Docker-Distribution-API-Version: registry/2.0\r\n"
    );
    if let Some(d) = digest {
        text.push_str(&format!("Docker-Content-Digest: {d}\r\n"));
    }
    text.push_str("\r\n");
    text
}

/// containerd's hosts configuration that sends every registry to the cell's registry at
/// `address` (`_default/hosts.toml` under its `config_path`).
pub fn hosts_toml(address: &str) -> String {
    format!(
        "server = \"http://{address}\"\n\n[host.\"http://{address}\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_whether_the_table_builds_the_image_for_other_cells() {
        let held: BTreeMap<String, String> = [(
            "docker.io/library/nginx:latest".to_owned(),
            "sha256:1".to_owned(),
        )]
        .into();
        let mesh_only = not_built("docker.io/istio/pilot:1.31-dev.eed52ebb", &held);
        assert!(
            mesh_only.contains("for the @mesh cells of each Istio version")
                && mesh_only.contains("docker.io/istio/pilot:{istio}")
                && mesh_only
                    .ends_with("this cell's registry serves docker.io/library/nginx:latest"),
            "{mesh_only}"
        );
        let sample = not_built(
            "registry.istio.io/release/examples-helloworld-v1:1.0",
            &held,
        );
        assert!(sample.contains("for the @mesh cells"), "{sample}");
        let none = not_built("docker.io/library/redis:7", &held);
        assert!(
            none.starts_with("labcheck builds no image docker.io/library/redis:7: the image table"),
            "{none}"
        );
    }
}
