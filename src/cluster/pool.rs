//! Local clusters lent to one cell after another (mutants), so that a cell does not pay an API
//! server's start. Each slot of the pool is a network namespace of its own (a sandbox that runs
//! no learner command) with etcd and kube-apiserver in it; a cell that borrows it joins that
//! network, so its commands reach the API server at the address a cell's own would have.
//!
//! Before a slot is lent for a checkpoint (or for a fresh cluster), its store is made equal to
//! what a cluster started from that checkpoint holds once ready: the first slot to serve a
//! checkpoint starts its cluster from it, as a cell of its own would, and reads every key etcd
//! then holds; the next cells get that snapshot back through etcd itself — the keys the last cell
//! added deleted, the ones it changed or deleted put back — with the API server still running.
//! Its watches see the changes as any other write, and the store is read again to prove it equal.
//! Only a change to what the API server serves (custom resource definitions, API services), or a
//! store that is not equal after the reset, costs a restart from the checkpoint.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use super::etcd::{self, Etcd, EtcdError, Snapshot};
use super::{CellEnv, Cluster, ClusterBackend, ClusterError, Local, local};
use crate::sandbox::{Limits, Network, Sandbox, SandboxOptions};

/// Keys the running API server writes for itself (its identity lease, the compaction mark, the
/// client CA it publishes, which is the slot's own): left as they are by a reset.
fn owned_by_server(key: &[u8]) -> bool {
    key == b"compact_rev_key"
        || key == b"/registry/configmaps/kube-system/extension-apiserver-authentication"
        || key.starts_with(b"/registry/leases/kube-system/apiserver-")
        || key.starts_with(b"/registry/masterleases/")
}

/// Keys whose change alters what the API server serves, which it rebuilds in the background
/// (discovery, OpenAPI, handlers): a reset that would change one restarts the cluster instead.
fn changes_what_is_served(key: &[u8]) -> bool {
    key.starts_with(b"/registry/apiextensions.k8s.io/")
        || key.starts_with(b"/registry/apiregistration.k8s.io/")
}

/// How long a cell waits for a lent cluster to come back before the pool starts one more (beyond
/// one per job): about what a start takes.
const START_WAIT: Duration = Duration::from_secs(2);

/// How long the API server's own watchers (admission's and the authorizer's caches of
/// namespaces, webhooks, roles) get to see a reset before a cell runs.
const SETTLE: Duration = Duration::from_millis(100);

/// What a slot is made equal to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Target {
    /// A fresh cluster (no checkpoint).
    Fresh,
    Checkpoint(String),
}

/// What a cluster is started from: a checkpoint's key, its copy of etcd (none when the
/// checkpoint holds no cluster) and of the cluster's PKI (without one, the cluster makes a new
/// one).
#[derive(Clone, Debug)]
pub struct Saved {
    pub key: String,
    pub etcd: Option<std::path::PathBuf>,
    pub pki: Option<std::path::PathBuf>,
}

impl Saved {
    /// Places the saved etcd and PKI in a new cluster's directory (its callers make it anew),
    /// where the cluster's start finds them.
    pub async fn restore(&self, cluster_dir: &std::path::Path) -> std::io::Result<()> {
        let Some(etcd) = &self.etcd else {
            return Ok(());
        };
        std::fs::create_dir_all(cluster_dir)?;
        crate::sandbox::tree::copy(etcd, &cluster_dir.join("etcd")).await?;
        match &self.pki {
            Some(pki) => crate::sandbox::tree::copy(pki, &cluster_dir.join("pki")).await,
            None => Ok(()),
        }
    }
}

/// How the pool served its cells.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Clusters started (a slot's first, and restarts).
    pub starts: usize,
    /// Cells served by a reset.
    pub resets: usize,
    /// Cells whose slot held the target's state already.
    pub unchanged: usize,
}

/// The run's pool of local clusters.
#[derive(Clone)]
pub struct Pool {
    inner: Rc<Inner>,
}

struct Inner {
    local: Local,
    /// Where slots' directories go (the state directory's cells).
    root: PathBuf,
    /// Host directories no slot's sandbox shows.
    hide: Vec<PathBuf>,
    capacity: usize,
    /// Clusters started as soon as a cell needs one (one per job); the rest only after a cell
    /// waited [`START_WAIT`] for one to come back.
    eager: usize,
    state: RefCell<State>,
    freed: tokio::sync::Notify,
}

#[derive(Default)]
struct State {
    idle: Vec<Slot>,
    made: usize,
    targets: HashMap<Target, Rc<Snapshot>>,
    stats: Stats,
}

/// One cluster of the pool, with the network it runs in.
struct Slot {
    dir: PathBuf,
    sandbox: Sandbox,
    cluster: Option<Cluster>,
    /// The target the slot was last made equal to (what the last cell started from).
    serving: Option<Target>,
}

impl Pool {
    /// A pool of at most `capacity` clusters of the `local` backend, started as cells need them:
    /// `eager` at once, the others once a cell waited a start's time for one to come back.
    pub fn new(
        local: Local,
        root: &Path,
        hide: Vec<PathBuf>,
        eager: usize,
        capacity: usize,
    ) -> Pool {
        Pool {
            inner: Rc::new(Inner {
                local,
                root: root.to_owned(),
                hide,
                capacity: capacity.max(1),
                eager: eager.max(1),
                state: RefCell::default(),
                freed: tokio::sync::Notify::new(),
            }),
        }
    }

    /// How the pool served its cells so far.
    pub fn stats(&self) -> Stats {
        self.inner.state.borrow().stats
    }

    /// Lends a cluster holding what a cluster started from `checkpoint` (a fresh one without)
    /// holds; waits while every slot is lent.
    pub async fn lend(&self, checkpoint: Option<&Saved>) -> Result<Lease, ClusterError> {
        let target = checkpoint.map_or(Target::Fresh, |c| Target::Checkpoint(c.key.clone()));
        let mut waited = false;
        let slot = loop {
            if let Some(slot) = self.take_idle(&target) {
                break slot;
            }
            let n = {
                let mut state = self.inner.state.borrow_mut();
                let limit = if waited {
                    self.inner.capacity
                } else {
                    self.inner.eager.min(self.inner.capacity)
                };
                (state.made < limit).then(|| {
                    state.made += 1;
                    state.made
                })
            };
            if let Some(n) = n {
                match self.new_slot(n).await {
                    Ok(slot) => break slot,
                    Err(e) => {
                        self.inner.state.borrow_mut().made -= 1;
                        return Err(e);
                    }
                }
            }
            // A cluster coming back is cheaper than a start, unless none comes back soon; once
            // every cluster is started, wait as long as it takes.
            let all_made = self.inner.state.borrow().made >= self.inner.capacity;
            if all_made {
                self.inner.freed.notified().await;
            } else if tokio::time::timeout(START_WAIT, self.inner.freed.notified())
                .await
                .is_err()
            {
                waited = true;
            }
        };
        let mut lease = Lease {
            inner: self.inner.clone(),
            slot: Some(Box::new(slot)),
        };
        lease.make_equal(target, checkpoint).await?;
        Ok(lease)
    }

    /// An idle slot, one that served `target` last if there is one.
    fn take_idle(&self, target: &Target) -> Option<Slot> {
        let mut state = self.inner.state.borrow_mut();
        let i = state
            .idle
            .iter()
            .position(|s| s.serving.as_ref() == Some(target))
            .or_else(|| state.idle.len().checked_sub(1))?;
        Some(state.idle.swap_remove(i))
    }

    async fn new_slot(&self, n: usize) -> Result<Slot, ClusterError> {
        let dir = self
            .inner
            .root
            .join(format!("pool-{n}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let options = SandboxOptions {
            keep_alive: false,
            isolate_network: true,
            view: None,
            hide: self.inner.hide.clone(),
            tools: Vec::new(),
            limits: Limits::default(),
            network: None,
        };
        let sandbox = Sandbox::create(&dir, options)
            .await
            .map_err(|e| ClusterError::Sandbox(Box::new(e)))?;
        Ok(Slot {
            dir,
            sandbox,
            cluster: None,
            serving: None,
        })
    }

    /// Stops every cluster of the pool and removes the slots' directories (once every lease is
    /// back).
    pub async fn shutdown(&self) {
        let idle = std::mem::take(&mut self.inner.state.borrow_mut().idle);
        for mut slot in idle {
            if let Some(c) = slot.cluster.as_mut() {
                c.kill().await;
            }
            slot.sandbox.shutdown().await;
            let _ = std::fs::remove_dir_all(&slot.dir);
        }
    }
}

/// A pooled cluster lent to one cell; back to the pool when dropped (once the cell's processes
/// are gone).
pub struct Lease {
    inner: Rc<Inner>,
    slot: Option<Box<Slot>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.inner.state.borrow_mut().idle.push(*slot);
            self.inner.freed.notify_one();
        }
    }
}

impl Lease {
    fn slot(&self) -> &Slot {
        self.slot
            .as_ref()
            .expect("a lease holds its slot until dropped")
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        self.slot()
            .cluster
            .as_ref()
            .expect("a lent slot has a running cluster")
    }

    /// The network the cluster runs in, which the borrowing cell joins.
    pub fn network(&self) -> std::io::Result<Network> {
        self.slot().sandbox.network()
    }

    /// The learner's kubeconfig for this cluster (as a cell's own would be).
    pub fn kubeconfig(&self) -> PathBuf {
        self.slot().dir.join("kubeconfig")
    }

    async fn make_equal(
        &mut self,
        target: Target,
        checkpoint: Option<&Saved>,
    ) -> Result<(), ClusterError> {
        let snapshot = self.inner.state.borrow().targets.get(&target).cloned();
        if let Some(snapshot) = snapshot
            && self.slot().cluster.is_some()
            && let Ok(Some(changed)) = self.reset(&snapshot).await
            && self.serves().await
        {
            let mut state = self.inner.state.borrow_mut();
            if changed {
                state.stats.resets += 1;
            } else {
                state.stats.unchanged += 1;
            }
            drop(state);
            self.slot.as_mut().expect("held").serving = Some(target);
            return Ok(());
        }
        self.restart(&target, checkpoint).await
    }

    /// Whether the lent API server still says it is ready (one a cell left unwell is restarted).
    async fn serves(&self) -> bool {
        let Some(cluster) = self.slot().cluster.as_ref() else {
            return false;
        };
        let Ok(readyz) = http::Request::get("/readyz").body(Vec::new()) else {
            return false;
        };
        matches!(cluster.client.request_text(readyz).await, Ok(body) if body.trim() == "ok")
    }

    fn etcd(&self) -> Result<Etcd, EtcdError> {
        let network = self.network().map_err(EtcdError::Network)?;
        Ok(Etcd {
            network,
            addr: SocketAddr::from(([127, 0, 0, 1], local::ETCD_PORT)),
        })
    }

    /// Makes the running cluster's store equal to `target`: `Some(changed)` once it is, `None`
    /// when only a restart can (the reset would change what the API server serves, or the
    /// store is not equal after it).
    async fn reset(&self, target: &Snapshot) -> Result<Option<bool>, EtcdError> {
        let etcd = self.etcd()?;
        let live = etcd.snapshot().await?;
        let ops = etcd::diff(&live, target, owned_by_server);
        if ops.is_empty() {
            return Ok(Some(false));
        }
        if ops.iter().any(|op| changes_what_is_served(op.key())) {
            return Ok(None);
        }
        etcd.apply(&ops).await?;
        tokio::time::sleep(SETTLE).await;
        let after = etcd.snapshot().await?;
        Ok(etcd::diff(&after, target, owned_by_server)
            .is_empty()
            .then_some(true))
    }

    /// Starts the slot's cluster anew from `checkpoint` (fresh without), as a cell's own
    /// would start; the first start for a target gives the target's snapshot.
    async fn restart(
        &mut self,
        target: &Target,
        checkpoint: Option<&Saved>,
    ) -> Result<(), ClusterError> {
        let slot = self.slot.as_mut().expect("held");
        slot.serving = None;
        if let Some(mut c) = slot.cluster.take() {
            c.kill().await;
        }
        let dir = slot.dir.join("cluster");
        let io = |e: std::io::Error| ClusterError::Io(format!("{}: {e}", dir.display()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io)?;
        if let Some(c) = checkpoint {
            c.restore(&dir).await.map_err(io)?;
        }
        let env = CellEnv {
            sandbox: &slot.sandbox,
            dir: dir.clone(),
            kubeconfig: slot.dir.join("kubeconfig"),
            name: slot
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            mesh: false,
            node: None,
        };
        let cluster = self.inner.local.start(&env).await?;
        let slot = self.slot.as_mut().expect("held");
        slot.cluster = Some(cluster);
        slot.serving = Some(target.clone());
        self.inner.state.borrow_mut().stats.starts += 1;
        let known = self.inner.state.borrow().targets.contains_key(target);
        if !known {
            let snapshot = self.etcd()?.snapshot().await?;
            self.inner
                .state
                .borrow_mut()
                .targets
                .insert(target.clone(), Rc::new(snapshot));
        }
        Ok(())
    }
}

/// A cell's cluster: its own, or one lent by the run's pool.
pub enum CellCluster {
    Own(Box<Cluster>),
    Lent(Lease),
}

impl std::ops::Deref for CellCluster {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        match self {
            CellCluster::Own(c) => c,
            CellCluster::Lent(l) => l.cluster(),
        }
    }
}

impl CellCluster {
    /// Stops a cell's own cluster; a lent one goes back to the pool when dropped.
    pub async fn stop(&mut self) {
        if let CellCluster::Own(c) = self {
            c.stop().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_leaves_the_servers_own_keys_and_restarts_for_what_it_serves() {
        for own in [
            &b"compact_rev_key"[..],
            b"/registry/leases/kube-system/apiserver-abc",
            b"/registry/configmaps/kube-system/extension-apiserver-authentication",
        ] {
            assert!(owned_by_server(own), "{}", String::from_utf8_lossy(own));
        }
        // A lab's own lease and ConfigMap are the lab's.
        assert!(!owned_by_server(b"/registry/leases/shop/web"));
        assert!(!owned_by_server(
            b"/registry/configmaps/kube-system/settings"
        ));
        assert!(changes_what_is_served(
            b"/registry/apiextensions.k8s.io/customresourcedefinitions/gateways.networking.istio.io"
        ));
        assert!(changes_what_is_served(
            b"/registry/apiregistration.k8s.io/apiservices/v1.networking.istio.io"
        ));
        assert!(!changes_what_is_served(
            b"/registry/networking.istio.io/virtualservices/shop/web"
        ));
    }
}
