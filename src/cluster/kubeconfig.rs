//! Writing kubeconfig files for a cluster: the learner's (server as seen inside the cell) and the
//! harness's (server through the forward). JSON, which every kubeconfig reader accepts.

use std::path::Path;

use super::certs::Pki;

/// The context name labcheck gives its clusters.
pub const CONTEXT: &str = "labcheck";

/// Writes an admin kubeconfig for `server` to `path`.
pub fn write(path: &Path, server: &str, pki: &Pki) -> std::io::Result<()> {
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {"server": server, "certificate-authority": pki.ca_cert}}],
        "users": [{"name": "admin", "user": {"client-certificate": pki.admin_cert, "client-key": pki.admin_key}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "admin"}}],
        "current-context": CONTEXT,
    });
    std::fs::write(
        path,
        serde_json::to_string_pretty(&config).unwrap_or_default(),
    )
}
