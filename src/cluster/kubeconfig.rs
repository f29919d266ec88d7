//! Writing kubeconfig files for a cluster: the learner's (server as seen inside the cell) and the
//! harness's (server through the forward). JSON, which every kubeconfig reader accepts.

use std::path::Path;

use super::certs::Pki;

/// The context name labcheck gives its clusters.
pub const CONTEXT: &str = "labcheck";

/// Writes an admin kubeconfig for `server` to `path`, with the certificates inline: a cell sees
/// none of the cluster's files, only this one.
pub fn write(path: &Path, server: &str, pki: &Pki) -> std::io::Result<()> {
    let inline = |p: &Path| -> std::io::Result<String> {
        use base64::Engine as _;
        Ok(base64::engine::general_purpose::STANDARD.encode(std::fs::read(p)?))
    };
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": server,
            "certificate-authority-data": inline(&pki.ca_cert)?,
        }}],
        "users": [{"name": "admin", "user": {
            "client-certificate-data": inline(&pki.admin_cert)?,
            "client-key-data": inline(&pki.admin_key)?,
        }}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "admin"}}],
        "current-context": CONTEXT,
    });
    std::fs::write(
        path,
        serde_json::to_string_pretty(&config).unwrap_or_default(),
    )
}
