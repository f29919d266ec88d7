//! The little of etcd's v3 API a pooled cluster's reset needs, spoken as JSON to etcd's own
//! gRPC gateway (served on its client port) from inside the cell's network: read every key with
//! its value, and apply puts and deletes in transactions.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::sandbox::Network;

/// Every key of the store with its value, in key order.
pub type Snapshot = BTreeMap<Vec<u8>, Vec<u8>>;

/// A change to one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
}

impl Op {
    pub fn key(&self) -> &[u8] {
        match self {
            Op::Put(k, _) | Op::Delete(k) => k,
        }
    }

    fn size(&self) -> usize {
        match self {
            Op::Put(k, v) => k.len() + v.len(),
            Op::Delete(k) => k.len(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Op::Put(k, v) => serde_json::json!({
                "request_put": {"key": B64.encode(k), "value": B64.encode(v)}
            }),
            Op::Delete(k) => serde_json::json!({
                "request_delete_range": {"key": B64.encode(k)}
            }),
        }
    }
}

/// At most this many operations per transaction (etcd's `--max-txn-ops` is 128 by default).
const TXN_OPS: usize = 100;
/// At most this many bytes of keys and values per transaction (etcd refuses requests over
/// 1.5 MiB by default; base64 grows them by a third).
const TXN_BYTES: usize = 900 << 10;

#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    #[error("cannot enter the cluster's network: {0}")]
    Network(#[source] std::io::Error),
    #[error("etcd {path}: {source}")]
    Io {
        path: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("etcd {path} answered {status}: {body}")]
    Status {
        path: &'static str,
        status: String,
        body: String,
    },
    #[error("etcd {path} answered what is not its JSON: {detail}")]
    Answer { path: &'static str, detail: String },
}

/// etcd at `addr` inside `network`.
#[derive(Clone, Debug)]
pub struct Etcd {
    pub network: Network,
    pub addr: SocketAddr,
}

impl Etcd {
    /// Every key and value.
    pub async fn snapshot(&self) -> Result<Snapshot, EtcdError> {
        const PATH: &str = "/v3/kv/range";
        let all = B64.encode([0u8]);
        let body = serde_json::json!({"key": all, "range_end": all});
        let answer = self.post(PATH, body).await?;
        let bad = |detail: &str| EtcdError::Answer {
            path: PATH,
            detail: detail.to_owned(),
        };
        let mut out = Snapshot::new();
        let kvs = match answer.get("kvs") {
            None => return Ok(out),
            Some(kvs) => kvs.as_array().ok_or_else(|| bad("kvs is no list"))?,
        };
        for kv in kvs {
            let field = |name: &str| -> Result<Vec<u8>, EtcdError> {
                match kv.get(name).and_then(|v| v.as_str()) {
                    None => Ok(Vec::new()),
                    Some(s) => B64.decode(s).map_err(|e| bad(&format!("{name}: {e}"))),
                }
            };
            out.insert(field("key")?, field("value")?);
        }
        Ok(out)
    }

    /// Applies `ops` in transactions of bounded size, in order.
    pub async fn apply(&self, ops: &[Op]) -> Result<(), EtcdError> {
        let mut start = 0;
        while start < ops.len() {
            let (mut end, mut bytes) = (start, 0);
            while end < ops.len() && end - start < TXN_OPS {
                bytes += ops[end].size();
                if bytes > TXN_BYTES && end > start {
                    break;
                }
                end += 1;
            }
            let success: Vec<serde_json::Value> = ops[start..end].iter().map(Op::json).collect();
            self.post("/v3/kv/txn", serde_json::json!({ "success": success }))
                .await?;
            start = end;
        }
        Ok(())
    }

    /// POSTs `body` to `path` (HTTP/1.0: the answer ends when the connection closes).
    async fn post(
        &self,
        path: &'static str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value, EtcdError> {
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        let raw = self
            .network
            .exchange(self.addr, request.into_bytes(), Duration::from_secs(30))
            .await
            .map_err(|source| EtcdError::Io { path, source })?;
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head.lines().next().unwrap_or_default();
        if status.split_whitespace().nth(1) != Some("200") {
            return Err(EtcdError::Status {
                path,
                status: status.to_owned(),
                body: body.chars().take(300).collect(),
            });
        }
        serde_json::from_str(body).map_err(|e| EtcdError::Answer {
            path,
            detail: e.to_string(),
        })
    }
}

/// What turns `live` into `target`, leaving out the keys `keep` says the running API server
/// owns: deletes first, then puts, each in key order.
pub fn diff(live: &Snapshot, target: &Snapshot, keep: impl Fn(&[u8]) -> bool) -> Vec<Op> {
    let deletes = live
        .keys()
        .filter(|k| !keep(k) && !target.contains_key(*k))
        .map(|k| Op::Delete(k.clone()));
    let puts = target
        .iter()
        .filter(|(k, v)| !keep(k) && live.get(*k) != Some(*v))
        .map(|(k, v)| Op::Put(k.clone(), v.clone()));
    deletes.chain(puts).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(kvs: &[(&str, &str)]) -> Snapshot {
        kvs.iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn the_diff_deletes_what_is_new_and_puts_back_what_changed_or_went() {
        let live = snap(&[
            ("/a", "1"),
            ("/b", "changed"),
            ("/new", "x"),
            ("/lease", "9"),
        ]);
        let target = snap(&[("/a", "1"), ("/b", "2"), ("/gone", "3"), ("/lease", "1")]);
        let ops = diff(&live, &target, |k| k == b"/lease");
        assert_eq!(
            ops,
            vec![
                Op::Delete(b"/new".to_vec()),
                Op::Put(b"/b".to_vec(), b"2".to_vec()),
                Op::Put(b"/gone".to_vec(), b"3".to_vec()),
            ]
        );
        assert!(diff(&target, &target, |_| false).is_empty());
    }
}
