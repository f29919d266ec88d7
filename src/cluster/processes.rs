//! The processes a cell's cluster starts beside etcd and the API server — the controllers, a
//! node's daemons, kwok: each logs into the cluster's directory under its name, they stop in
//! the reverse of their start order, and, unless the cell is kept, a dropped list kills their
//! process groups.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::ClusterError;
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
            super::mesh::stop(&mut p.child).await;
        }
    }

    /// The pids of those still known, for a kept cell's record.
    pub fn pids(&self) -> Vec<u32> {
        self.list.iter().filter_map(|p| p.child.id()).collect()
    }

    /// The pid of the last one started.
    pub fn last_pid(&self) -> Option<u32> {
        self.list.last().and_then(|p| p.child.id())
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
