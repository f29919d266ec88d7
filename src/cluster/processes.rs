//! The processes a cell's cluster starts beside etcd and the API server — the controllers (and
//! their arguments), a node's daemons, labcheck itself as a helper: each logs into the
//! cluster's directory under its name, they stop in the reverse of their start order (every
//! process of a cluster ends by [`stop`]), and, unless the cell is kept, a dropped list kills
//! their process groups. A command a cluster runs to its end (`ip`, `kind`) is [`run`].

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::{ClusterError, certs};
use crate::sandbox::unix;

/// A started process and the name its log has.
#[derive(Debug)]
struct Process {
    name: &'static str,
    child: tokio::process::Child,
}

/// A cluster's processes, in start order.
#[derive(Debug)]
pub struct Processes {
    list: Vec<Process>,
    dir: PathBuf,
    keep: bool,
}

impl Processes {
    /// An empty list logging into `dir`; a kept cell's processes outlive it.
    pub fn new(dir: &Path, keep: bool) -> Processes {
        Processes {
            list: Vec::new(),
            dir: dir.to_owned(),
            keep,
        }
    }

    /// Spawns `command` (of `binary`) with `args`, its output into `<name>.log`.
    pub fn spawn(
        &mut self,
        mut command: tokio::process::Command,
        name: &'static str,
        binary: &Path,
        args: &[String],
    ) -> Result<(), ClusterError> {
        let (out, err) = super::local::log_file(&self.dir, name)?;
        let child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|source| ClusterError::Spawn {
                what: binary.display().to_string(),
                source,
            })?;
        self.list.push(Process { name, child });
        Ok(())
    }

    /// Stops them, the last started first: SIGTERM, a grace period, SIGKILL.
    pub async fn stop(&mut self) {
        for p in self.list.iter_mut().rev() {
            stop(&mut p.child).await;
        }
    }

    /// The pids of those still known, for a kept cell's record.
    pub fn pids(&self) -> Vec<u32> {
        self.list.iter().filter_map(|p| p.child.id()).collect()
    }

    /// Their logs (and `also`'s, by name), those that exist.
    pub fn logs(&self, also: &[&str]) -> Vec<PathBuf> {
        self.list
            .iter()
            .map(|p| p.name)
            .chain(also.iter().copied())
            .map(|name| self.dir.join(format!("{name}.log")))
            .filter(|p| p.exists())
            .collect()
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for p in &self.list {
            if let Some(pid) = p.child.id() {
                unix::kill_group(pid as i32, libc::SIGKILL);
            }
        }
    }
}

/// kube-controller-manager and kube-scheduler, with their arguments: the Deployments,
/// ReplicaSets, EndpointSlices and service-account tokens of a cluster with Pods, signed
/// certificates, and Pods put on nodes.
pub(super) fn controllers(
    controller_manager: &Path,
    scheduler: &Path,
    config: &Path,
    pki: &certs::Pki,
) -> [(&'static str, PathBuf, Vec<String>); 2] {
    let path = |p: &Path| p.display().to_string();
    let kubeconfig = format!("--kubeconfig={}", path(config));
    let controller_manager_args = vec![
        kubeconfig.clone(),
        "--use-service-account-credentials=false".into(),
        format!("--service-account-private-key-file={}", path(&pki.sa_key)),
        format!("--root-ca-file={}", path(&pki.ca_cert)),
        format!("--cluster-signing-cert-file={}", path(&pki.ca_cert)),
        format!("--cluster-signing-key-file={}", path(&pki.ca_key)),
        "--leader-elect=false".into(),
        "--bind-address=127.0.0.1".into(),
        "--secure-port=10257".into(),
    ];
    let scheduler_args = vec![
        kubeconfig,
        "--leader-elect=false".into(),
        "--bind-address=127.0.0.1".into(),
        "--secure-port=10259".into(),
    ];
    [
        (
            "kube-controller-manager",
            controller_manager.to_owned(),
            controller_manager_args,
        ),
        ("kube-scheduler", scheduler.to_owned(), scheduler_args),
    ]
}

/// Stops a process group: SIGTERM, up to 3 s, then SIGKILL. Every process of a cell's cluster
/// ends this way.
/// Runs `command` (shown as `what`) to its end with no input; its error output is the error
/// when it fails.
pub(super) async fn run(
    mut command: tokio::process::Command,
    what: String,
) -> Result<(), ClusterError> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| ClusterError::Spawn {
            what: what.clone(),
            source,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ClusterError::Command {
            command: what,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

pub(super) async fn stop(child: &mut tokio::process::Child) {
    unix::stop_group(child, Duration::from_secs(3)).await;
}

/// The labcheck executable a cluster runs as a helper (a node's runtime policy and
/// registry): this process's when it is labcheck; else (the library run by a test
/// harness, in `target/<profile>/deps/`) the `labcheck` beside it or one directory up, as cargo
/// lays them out. Never another program: run as a helper, anything but labcheck would do what
/// its own arguments say.
pub fn helper() -> io::Result<PathBuf> {
    let me = std::env::current_exe()?;
    if me.file_name().is_some_and(|n| n == "labcheck") {
        return Ok(me);
    }
    me.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("labcheck"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            io::Error::other(format!(
                "no labcheck executable beside {} to run as the cluster's helper",
                me.display()
            ))
        })
}
