//! A cell's control group: its memory, pids and CPU limits, its peak memory for the report, and
//! ending every process that was ever in it at once (those that moved in one hierarchy are still
//! members of the others: every hierarchy's members are signalled, not only v2's `cgroup.kill`).
//!
//! Two layouts are found on Linux machines. cgroup v2 has one hierarchy with the controllers
//! (GitHub's runners); cells go under `/sys/fs/cgroup/labcheck/`, beside the harness's own group
//! because v2 lets a group with processes have no controlled children. cgroup v1 has a hierarchy
//! per controller, often with a controller-less v2 hierarchy mounted at
//! `/sys/fs/cgroup/unified` (this machine); cells go under the harness's own group in the memory
//! and pids hierarchies (so the limits the harness runs under still hold) and in the unified one
//! for `cgroup.kill`.

use std::path::{Path, PathBuf};

const ROOT: &str = "/sys/fs/cgroup";
/// The directory, under the harness's group or the v2 root, that holds the cells' groups.
const PARENT: &str = "labcheck";
/// Between attempts to remove a group whose processes are still exiting.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

pub use crate::model::Limits;

/// The CFS period the CPU limit is a share of (the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;

/// Reads a `@cpus=` tag's value: `2`, `1.5`, `0.25` (at least a hundredth of a CPU).
pub fn parse_cpus(text: &str) -> Option<u64> {
    let t = text.trim();
    let (whole, fraction) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
        || fraction.len() > 3
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction: u64 = format!("{fraction:0<3}").parse().ok()?;
    let milli = whole.checked_mul(1000)?.checked_add(fraction)?;
    (milli >= 10).then_some(milli)
}

#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {source}", path.display())]
pub struct CgroupError {
    what: &'static str,
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

fn err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> CgroupError + 'a {
    move |source| CgroupError {
        what,
        path: path.to_owned(),
        source,
    }
}

/// A cell's groups, one per hierarchy; removed by [`Cgroup::remove`].
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    peak: Option<PathBuf>,
    kill: Option<PathBuf>,
}

impl Cgroup {
    /// Creates the groups of the cell `name` with `limits`.
    pub fn create(name: &str, limits: Limits) -> Result<Cgroup, CgroupError> {
        let root = Path::new(ROOT);
        if root.join("cgroup.controllers").exists() {
            return Self::create_v2(root, name, limits);
        }
        let own = own_groups();
        let mut group = Cgroup {
            dirs: Vec::new(),
            peak: None,
            kill: None,
        };
        let under = |hierarchy: &str, key: &str| v1_parent(&own, hierarchy, key).join(name);
        let memory = under("memory", "memory");
        group.make(&memory)?;
        write(&memory, "memory.limit_in_bytes", limits.memory)?;
        group.peak = Some(memory.join("memory.max_usage_in_bytes"));
        let pids = under("pids", "pids");
        group.make(&pids)?;
        write(&pids, "pids.max", limits.pids)?;
        if root.join("cpu/cgroup.procs").exists() {
            let cpu = under("cpu", "cpu");
            group.make(&cpu)?;
            write(&cpu, "cpu.cfs_period_us", CPU_PERIOD_US)?;
            write(&cpu, "cpu.cfs_quota_us", quota(limits))?;
        }
        if root.join("unified/cgroup.procs").exists() {
            let unified = under("unified", "");
            group.make(&unified)?;
            group.kill = Some(unified.join("cgroup.kill")).filter(|k| k.exists());
        }
        for (hierarchy, key) in other_hierarchies() {
            let dir = under(&hierarchy, &key);
            group.make(&dir)?;
            match hierarchy.as_str() {
                "cpuset" => inherit_cpuset(&dir)?,
                "devices" => allow_devices(&dir)?,
                _ => {}
            }
        }
        Ok(group)
    }

    fn create_v2(root: &Path, name: &str, limits: Limits) -> Result<Cgroup, CgroupError> {
        let parent = root.join(PARENT);
        std::fs::create_dir_all(&parent).map_err(err("create", &parent))?;
        for dir in [root, parent.as_path()] {
            let control = dir.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&control).map_err(err("read", &control))?;
            let missing: Vec<String> = ["memory", "pids", "cpu"]
                .iter()
                .filter(|c| !enabled.split_whitespace().any(|e| e == **c))
                .map(|c| format!("+{c}"))
                .collect();
            if !missing.is_empty() {
                std::fs::write(&control, missing.join(" ")).map_err(err("enable", &control))?;
            }
        }
        let cell = parent.join(name);
        let mut group = Cgroup {
            dirs: Vec::new(),
            peak: Some(cell.join("memory.peak")),
            kill: Some(cell.join("cgroup.kill")),
        };
        group.make(&cell)?;
        write(&cell, "memory.max", limits.memory)?;
        write(&cell, "pids.max", limits.pids)?;
        let path = cell.join("cpu.max");
        std::fs::write(&path, format!("{} {CPU_PERIOD_US}", quota(limits)))
            .map_err(err("write", &path))?;
        Ok(group)
    }

    /// The groups process `pid` is in under labcheck's parent (a kept cell's holder): every
    /// process of that cell, those no record names included. `None` when it is in none.
    pub fn of_process(pid: i32) -> Option<Cgroup> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let root = Path::new(ROOT);
        let v2 = root.join("cgroup.controllers").exists();
        let mut group = Cgroup {
            dirs: Vec::new(),
            peak: None,
            kill: None,
        };
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            if !path.contains(&format!("/{PARENT}/")) {
                continue;
            }
            let path = path.trim_start_matches('/');
            let dir = match controllers {
                "" if v2 => root.join(path),
                "" => root.join("unified").join(path),
                "memory" | "pids" | "cpu" => root.join(controllers).join(path),
                other => root.join(other.trim_start_matches("name=")).join(path),
            };
            if controllers.is_empty() {
                group.kill = Some(dir.join("cgroup.kill")).filter(|k| k.exists());
            }
            group.dirs.push(dir);
        }
        (!group.dirs.is_empty()).then_some(group)
    }

    fn make(&mut self, dir: &Path) -> Result<(), CgroupError> {
        std::fs::create_dir_all(dir).map_err(err("create", dir))?;
        self.dirs.push(dir.to_owned());
        Ok(())
    }

    /// The `cgroup.procs` files a process writes to join the cell.
    pub fn procs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// The most memory the cell's processes used at once, when the kernel tells.
    pub fn peak_memory(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.peak.as_ref()?).ok()?;
        text.trim().parse().ok()
    }

    /// Kills every process in the cell's groups, then removes the groups once they are empty
    /// (killing again what was forked meanwhile).
    pub async fn remove(&self) {
        for _ in 0..50 {
            self.kill();
            if self.try_remove() {
                return;
            }
            tokio::time::sleep(PAUSE).await;
        }
    }

    /// [`Cgroup::remove`] for a thread that cannot wait asynchronously (a sandbox dropped when a
    /// run is interrupted). What is still busy after a second is left to [`reap_stale`].
    pub fn remove_blocking(&self) {
        for _ in 0..50 {
            self.kill();
            if self.try_remove() {
                return;
            }
            std::thread::sleep(PAUSE);
        }
    }

    /// Kills every process in the groups: with `cgroup.kill` where the kernel has it, and each
    /// process listed in any of them — a process that left the v2 group (`clone3` with
    /// `CLONE_INTO_CGROUP`) is still a member of the v1 memory, pids and CPU groups.
    fn kill(&self) {
        if let Some(kill) = &self.kill {
            let _ = std::fs::write(kill, "1");
        }
        for procs in self.procs() {
            let text = std::fs::read_to_string(procs).unwrap_or_default();
            for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                super::unix::kill_process(pid, libc::SIGKILL);
            }
        }
    }

    /// Removes the groups that are empty, the groups made inside them first (a node's
    /// kubelet makes a tree of them); whether all are gone.
    fn try_remove(&self) -> bool {
        self.dirs
            .iter()
            .rev()
            .all(|d| remove_tree(d) || !d.exists())
    }
}

/// Removes the group `dir` and every group under it, deepest first; whether it is gone.
fn remove_tree(dir: &Path) -> bool {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    std::fs::remove_dir(dir).is_ok()
}

/// Every v1 hierarchy this process is in besides memory, pids and CPU (and the unified one), by
/// its directory under [`ROOT`] and its key in `/proc/self/cgroup`: a cell is in all of them, so
/// that a node's cgroup namespace is rooted at the cell's group everywhere and the groups a
/// kubelet makes there are the cell's.
fn other_hierarchies() -> Vec<(String, String)> {
    own_groups()
        .into_iter()
        .map(|(controllers, _)| controllers)
        .filter(|c| !c.is_empty() && !matches!(c.as_str(), "memory" | "pids" | "cpu"))
        .map(|c| (c.trim_start_matches("name=").to_owned(), c))
        .filter(|(dir, _)| Path::new(ROOT).join(dir).join("cgroup.procs").exists())
        .collect()
}

/// Every v1 hierarchy this process is in that the machine mounts, by directory and key: memory,
/// pids and CPU, then the others ([`other_hierarchies`]).
pub fn v1_hierarchies() -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = ["memory", "pids", "cpu"]
        .iter()
        .filter(|h| Path::new(ROOT).join(h).join("cgroup.procs").exists())
        .map(|h| (h.to_string(), h.to_string()))
        .collect();
    all.extend(other_hierarchies());
    all
}

/// A new cpuset group has no CPU and no memory node: it takes its parent's, at every level from
/// the hierarchy's root down.
fn inherit_cpuset(dir: &Path) -> Result<(), CgroupError> {
    let root = Path::new(ROOT).join("cpuset");
    let levels: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| a.starts_with(&root) && *a != root)
        .collect();
    for level in levels.into_iter().rev() {
        for file in ["cpuset.cpus", "cpuset.mems"] {
            let parent = level.parent().unwrap_or(&root).join(file);
            let value = std::fs::read_to_string(&parent).map_err(err("read", &parent))?;
            let own = level.join(file);
            if std::fs::read_to_string(&own)
                .unwrap_or_default()
                .trim()
                .is_empty()
            {
                std::fs::write(&own, value.trim()).map_err(err("write", &own))?;
            }
        }
    }
    Ok(())
}

/// The devices a cell's processes may open: those of a container's `/dev` (runc's default
/// list), nothing else — no disk, whatever a process of the cell or a container of its node
/// makes with `mknod` or is given. Its groups, a node's containers', cannot be given more.
const DEVICES: &[&str] = &[
    "c *:* m",
    "b *:* m",
    "c 1:3 rwm",    // null
    "c 1:5 rwm",    // zero
    "c 1:7 rwm",    // full
    "c 1:8 rwm",    // random
    "c 1:9 rwm",    // urandom
    "c 5:0 rwm",    // tty
    "c 5:1 rwm",    // console
    "c 5:2 rwm",    // ptmx
    "c 136:* rwm",  // pseudo-terminals
    "c 10:200 rwm", // tun
];

fn allow_devices(dir: &Path) -> Result<(), CgroupError> {
    let deny = dir.join("devices.deny");
    std::fs::write(&deny, "a").map_err(err("write", &deny))?;
    let allow = dir.join("devices.allow");
    for rule in DEVICES {
        std::fs::write(&allow, rule).map_err(err("write", &allow))?;
    }
    Ok(())
}

/// The CFS quota of `limits`' CPUs per [`CPU_PERIOD_US`].
fn quota(limits: Limits) -> u64 {
    limits.millicpus.saturating_mul(CPU_PERIOD_US) / 1000
}

fn write(dir: &Path, file: &str, value: u64) -> Result<(), CgroupError> {
    let path = dir.join(file);
    std::fs::write(&path, value.to_string()).map_err(err("write", &path))
}

/// This process's groups: (controllers, path) per line of `/proc/self/cgroup`; the v2 line has no
/// controllers.
fn own_groups() -> Vec<(String, String)> {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers.to_owned(), path.to_owned()))
        })
        .collect()
}

/// The directory that holds the cells' groups in a v1 hierarchy (or the unified one, `key` ""):
/// [`PARENT`] under this process's own group there (`own` from [`own_groups`]).
fn v1_parent(own: &[(String, String)], hierarchy: &str, key: &str) -> PathBuf {
    let base = own.iter().find(|(k, _)| k == key).map(|(_, p)| p.as_str());
    Path::new(ROOT)
        .join(hierarchy)
        .join(base.unwrap_or("/").trim_start_matches('/'))
        .join(PARENT)
}

/// Removes the groups that cells of labcheck processes that are gone left behind (a run killed
/// outright, whose processes died with it). Groups are named `<cell>-<pid>`. A group that still
/// has processes belongs to a kept cell, of this state directory or another: the kernel refuses
/// to remove it, and it stays.
pub fn reap_stale() {
    let own = own_groups();
    let mut parents = vec![
        Path::new(ROOT).join(PARENT),
        v1_parent(&own, "memory", "memory"),
        v1_parent(&own, "pids", "pids"),
        v1_parent(&own, "cpu", "cpu"),
        v1_parent(&own, "unified", ""),
    ];
    parents.extend(
        other_hierarchies()
            .iter()
            .map(|(dir, key)| v1_parent(&own, dir, key)),
    );
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            if super::left_by_a_gone_run(&e.file_name().to_string_lossy()) {
                remove_tree(&e.path());
            }
        }
    }
}

/// Reads a limit tag's value: `4GiB`, `512MiB`, `8G`, or a plain number.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let n: u64 = number.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4GiB"), Some(4 << 30));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("100"), Some(100));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("1T"), None);
    }

    #[test]
    fn cpus() {
        assert_eq!(parse_cpus("2"), Some(2000));
        assert_eq!(parse_cpus("1.5"), Some(1500));
        assert_eq!(parse_cpus(".25"), Some(250));
        assert_eq!(parse_cpus("0.005"), None);
        assert_eq!(parse_cpus("1.2345"), None);
        assert_eq!(parse_cpus("-1"), None);
        assert_eq!(parse_cpus("many"), None);
        assert_eq!(parse_cpus("."), None);
        assert!(Limits::default().millicpus >= 500);
    }
}
