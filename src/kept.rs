//! Kept cells — left running by `run --keep` or `run --step N` — and what an author does with
//! them: list them (`ps`), open a shell inside one (`shell`), attach to one for grading, and tear
//! them down (`down`). A kept cell is described by `cell.json` in its directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sandbox::{Sandbox, start_time, unix};

/// `cell.json`: how to find a kept cell's processes and environment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeptCell {
    pub name: String,
    pub id: String,
    pub lab: PathBuf,
    pub dir: PathBuf,
    pub holder: i32,
    pub cluster_pids: Vec<u32>,
    pub env: BTreeMap<String, String>,
    pub workdir: PathBuf,
    pub has_cluster: bool,
    /// When each recorded process started (clock ticks after boot, `/proc/PID/stat`), by pid: a
    /// pid that now names another process (after a reboot, say) is never acted on.
    #[serde(default)]
    pub started: BTreeMap<i32, u64>,
    /// The inode of the cell's PID namespace: a holder pid whose namespace is another one is not
    /// the cell's holder.
    #[serde(default)]
    pub pid_namespace: Option<u64>,
    /// The cell's kind cluster, which `down` deletes with its network.
    #[serde(default)]
    pub kind: Option<Box<crate::toolchain::kind::KindRecord>>,
}

/// The inode of the PID namespace that process `pid`'s children get (a cell holder's is the
/// cell's), if it runs.
pub fn pid_namespace(pid: i32) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/pid_for_children"))
        .ok()
        .map(|m| m.ino())
}

impl KeptCell {
    /// The record in the cell directory `dir`, if it holds one.
    pub fn load(dir: &Path) -> Option<KeptCell> {
        let text = std::fs::read_to_string(dir.join("cell.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Another user than this process's that owns the cell's directory or its `cell.json`, if
    /// any: `down --all` leaves such a cell unless told `--everyone`.
    pub fn owner(&self) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        let me = nix::unistd::geteuid().as_raw();
        [self.dir.clone(), self.dir.join("cell.json")]
            .iter()
            .filter_map(|p| std::fs::symlink_metadata(p).ok())
            .map(|m| m.uid())
            .find(|uid| *uid != me)
    }

    pub fn save(&self) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(self.dir.join("cell.json"), text)
    }

    /// Whether the cell's holder (its namespaces) still runs.
    pub fn alive(&self) -> bool {
        self.holder > 0
            && self.same_process(self.holder)
            && self.pid_namespace.is_some()
            && pid_namespace(self.holder) == self.pid_namespace
    }

    /// Whether `pid` still names the process this record was made for. A record without its
    /// start time (an older labcheck's) is refused, never trusted.
    fn same_process(&self, pid: i32) -> bool {
        match (self.started.get(&pid), start_time(pid)) {
            (Some(recorded), Some(now)) => *recorded == now,
            _ => false,
        }
    }

    /// Attaches to the cell's sandbox.
    pub fn sandbox(&self) -> Result<Sandbox, KeptError> {
        if !self.alive() {
            return Err(KeptError::NotRunning {
                name: self.name.clone(),
                holder: self.holder,
            });
        }
        let env = self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.into()))
            .collect();
        Sandbox::attach(&self.dir, self.holder, env, self.workdir.clone()).map_err(|source| {
            KeptError::Attach {
                name: self.name.clone(),
                source,
            }
        })
    }

    /// Stops the cell's processes and removes its directory. Mounts live only in the cell's
    /// namespace and go with its last process.
    pub async fn down(&self) -> Result<(), KeptError> {
        // The cell's control group, found through its holder while it runs: it holds the
        // processes the record may not name (a Pod's proxy started after it was written).
        let group = self
            .alive()
            .then(|| crate::sandbox::cgroup::Cgroup::of_process(self.holder))
            .flatten();
        // Only processes that are still the ones recorded are signalled.
        let ours: Vec<i32> = self
            .cluster_pids
            .iter()
            .map(|p| *p as i32)
            .filter(|p| self.same_process(*p))
            .collect();
        for pid in &ours {
            unix::kill_group(*pid, libc::SIGTERM);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        for pid in &ours {
            unix::kill_group(*pid, libc::SIGKILL);
        }
        if self.alive() {
            unix::kill_group(self.holder, libc::SIGKILL);
        }
        for _ in 0..50 {
            let alive = ours.iter().any(|p| self.same_process(*p)) || self.alive();
            if !alive {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if let Some(group) = group {
            // What is left in the group ends with it.
            group.remove().await;
        }
        if let Some(kind) = self.kind.clone() {
            let _ = tokio::task::spawn_blocking(move || kind.delete()).await;
        }
        std::fs::remove_dir_all(&self.dir).map_err(|source| KeptError::Remove {
            path: self.dir.clone(),
            source,
        })?;
        crate::sandbox::cgroup::reap_stale();
        Ok(())
    }
}

/// Why a kept cell cannot be found, entered or removed.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    #[error(
        "cell {name} is not running (its holder {holder} is gone, or that pid is now another \
         process): `labcheck down {name}` removes what is left"
    )]
    NotRunning { name: String, holder: i32 },
    #[error("cannot enter cell {name}: {source}")]
    Attach {
        name: String,
        #[source]
        source: crate::sandbox::SandboxError,
    },
    #[error("cannot remove {}: {source}", .path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no kept cell named {name:?}; kept cells: {known}")]
    NotFound { name: String, known: String },
    #[error("{name:?} names several kept cells: {matching}")]
    Ambiguous { name: String, matching: String },
}

/// Every kept cell under the state directory.
pub fn list(state_dir: &Path) -> Vec<KeptCell> {
    let Ok(entries) = std::fs::read_dir(crate::state::Area::Cells.dir(state_dir)) else {
        return Vec::new();
    };
    // A record counts only for the directory it lies in: one that names another directory (to
    // have `down` remove it) is not a kept cell.
    let mut cells: Vec<KeptCell> = entries
        .flatten()
        .filter_map(|e| KeptCell::load(&e.path()).filter(|k| k.dir == e.path()))
        .collect();
    cells.sort_by(|a, b| a.name.cmp(&b.name));
    cells
}

/// The kept cell called `name` (or the only one whose name starts with it).
pub fn find(state_dir: &Path, name: &str) -> Result<KeptCell, KeptError> {
    let cells = list(state_dir);
    if let Some(c) = cells.iter().find(|c| c.name == name) {
        return Ok(c.clone());
    }
    let matching: Vec<&KeptCell> = cells.iter().filter(|c| c.name.starts_with(name)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(KeptError::NotFound {
            name: name.to_owned(),
            known: if cells.is_empty() {
                "none".to_owned()
            } else {
                cells
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        }),
        many => Err(KeptError::Ambiguous {
            name: name.to_owned(),
            matching: many
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[tokio::test]
    async fn a_stale_record_signals_nothing_and_is_removed()
    -> Result<(), Box<dyn std::error::Error>> {
        // A process that took the recorded pids' place: it must survive `down`.
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()?;
        let pid = other.id() as i32;
        let now = start_time(pid).ok_or("no start time")?;
        let dir = tempfile::tempdir()?;
        let record = KeptCell {
            name: "stale".into(),
            id: "stale [-]".into(),
            lab: "x.feature".into(),
            dir: dir.path().join("cell"),
            holder: pid,
            cluster_pids: vec![pid as u32],
            env: BTreeMap::new(),
            workdir: "/".into(),
            has_cluster: false,
            kind: None,
            started: [(pid, now + 1)].into_iter().collect(),
            pid_namespace: pid_namespace(pid),
        };
        std::fs::create_dir_all(&record.dir)?;
        assert!(!record.alive());
        // The right start time in another PID namespace is not the cell's holder either.
        let elsewhere = KeptCell {
            started: [(pid, now)].into_iter().collect(),
            pid_namespace: pid_namespace(pid).map(|n| n + 1),
            ..record.clone()
        };
        assert!(!elsewhere.alive());
        let same = KeptCell {
            started: [(pid, now)].into_iter().collect(),
            ..record.clone()
        };
        assert!(same.alive(), "the record's own process");
        assert!(record.sandbox().is_err());
        record.down().await?;
        assert!(
            other.try_wait()?.is_none(),
            "down signalled a process that is not the cell's"
        );
        assert!(!record.dir.exists());
        other.kill()?;
        other.wait()?;
        Ok(())
    }
}
