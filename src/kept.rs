//! Kept cells — left running by `run --keep` or `run --step N` — and what an author does with
//! them: list them (`ps`), open a shell inside one (`shell`), attach to one for grading, and tear
//! them down (`down`). A kept cell is described by `cell.json` in its directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sandbox::{Sandbox, unix};

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
}

impl KeptCell {
    pub fn save(&self) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(self.dir.join("cell.json"), text)
    }

    /// Whether the cell's holder (its namespaces) still runs.
    pub fn alive(&self) -> bool {
        self.holder > 0 && Path::new(&format!("/proc/{}", self.holder)).exists()
    }

    /// Attaches to the cell's sandbox.
    pub fn sandbox(&self) -> Result<Sandbox, String> {
        if !self.alive() {
            return Err(format!(
                "cell {} is not running (its holder {} is gone)",
                self.name, self.holder
            ));
        }
        let env = self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.into()))
            .collect();
        Sandbox::attach(&self.dir, self.holder, env, self.workdir.clone())
            .map_err(|e| e.to_string())
    }

    /// Stops the cell's processes and removes its directory. Mounts live only in the cell's
    /// namespace and go with its last process.
    pub async fn down(&self) -> Result<(), String> {
        for pid in &self.cluster_pids {
            unix::kill_group(*pid as i32, libc::SIGTERM);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        for pid in &self.cluster_pids {
            unix::kill_group(*pid as i32, libc::SIGKILL);
        }
        if self.holder > 0 {
            unix::kill_group(self.holder, libc::SIGKILL);
        }
        for _ in 0..50 {
            let alive = self
                .cluster_pids
                .iter()
                .any(|p| Path::new(&format!("/proc/{p}")).exists())
                || self.alive();
            if !alive {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        std::fs::remove_dir_all(&self.dir)
            .map_err(|e| format!("cannot remove {}: {e}", self.dir.display()))
    }
}

/// Every kept cell under the state directory.
pub fn list(state_dir: &Path) -> Vec<KeptCell> {
    let Ok(entries) = std::fs::read_dir(state_dir.join("cells")) else {
        return Vec::new();
    };
    let mut cells: Vec<KeptCell> = entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cell.json")).ok())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    cells.sort_by(|a, b| a.name.cmp(&b.name));
    cells
}

/// The kept cell called `name` (or the only one whose name starts with it).
pub fn find(state_dir: &Path, name: &str) -> Result<KeptCell, String> {
    let cells = list(state_dir);
    if let Some(c) = cells.iter().find(|c| c.name == name) {
        return Ok(c.clone());
    }
    let matching: Vec<&KeptCell> = cells.iter().filter(|c| c.name.starts_with(name)).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!(
            "no kept cell named {name:?}; kept cells: {}",
            if cells.is_empty() {
                "none".to_owned()
            } else {
                cells
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
        many => Err(format!(
            "{name:?} names several kept cells: {}",
            many.iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
