//! What the tests of the real binary share: the binary with a state directory of its own, the
//! machine's processes as `/proc` shows them, and the cells a state directory holds.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// The real binary with a state directory of its own (at most 10 minutes a run).
pub fn labcheck(state: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("labcheck").expect("binary");
    cmd.env("LABCHECK_STATE_DIR", state)
        .timeout(Duration::from_secs(600));
    cmd
}

/// `labcheck run LAB ARGS… --report-dir REPORTS` on a state directory of its own, to spawn.
pub fn run_command(
    state: &Path,
    reports: &Path,
    lab: &str,
    args: &[&str],
) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("labcheck"));
    cmd.env("LABCHECK_STATE_DIR", state)
        .args(["run", lab])
        .args(args)
        .arg("--report-dir")
        .arg(reports);
    cmd
}

/// A run started in the background, its output kept for [`finish`].
pub fn start(state: &Path, reports: &Path, lab: &str, args: &[&str]) -> Child {
    run_command(state, reports, lab, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("labcheck starts")
}

/// Waits for a run; its exit code and its output.
pub fn finish(child: Child) -> (Option<i32>, String) {
    let out = child.wait_with_output().expect("wait");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// One process of the machine, as `/proc/<pid>` shows it.
pub struct Proc {
    pub pid: u32,
    dir: PathBuf,
}

impl Proc {
    fn read(&self, file: &str) -> String {
        std::fs::read(self.dir.join(file))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Its command line, arguments separated by spaces (empty once it is gone).
    pub fn cmdline(&self) -> String {
        self.read("cmdline").replace('\0', " ")
    }

    /// Its `/proc/<pid>/cgroup`: a line per hierarchy.
    pub fn cgroup(&self) -> String {
        self.read("cgroup")
    }

    /// Its `/proc/<pid>/stat`.
    pub fn stat(&self) -> String {
        self.read("stat")
    }

    /// Its mount table (`/proc/<pid>/mountinfo`).
    pub fn mountinfo(&self) -> String {
        self.read("mountinfo")
    }

    /// The file name of its executable.
    pub fn exe_name(&self) -> String {
        std::fs::read_link(self.dir.join("exe"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default()
    }

    /// Its working directory.
    pub fn cwd(&self) -> Option<PathBuf> {
        std::fs::read_link(self.dir.join("cwd")).ok()
    }

    /// Whether it holds `target` open.
    pub fn holds_open(&self, target: &Path) -> bool {
        std::fs::read_dir(self.dir.join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target))
    }

    /// Whether it sits in the control group `group` (a path under a hierarchy) or below it.
    pub fn in_group(&self, group: &str) -> bool {
        self.cgroup()
            .lines()
            .any(|l| l.ends_with(group) || l.contains(&format!("{group}/")))
    }
}

/// Every process of the machine that runs: a zombie, which waits only to be collected, is none
/// (see [`runs`]), though `/proc` still shows its control group.
pub fn processes() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            runs(pid).then(|| Proc { pid, dir: e.path() })
        })
        .collect()
}

/// Whether process `pid` runs: it exists and is no zombie. A killed process whose parent went
/// first waits as a zombie for the machine's init, or for a subreaper that may collect it only
/// when it ends; it holds nothing but its pid.
pub fn runs(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state is the first field after the command name, which may hold spaces.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state != "Z" && state != "X")
}

/// The processes of `pids` that still run after at most `wait`.
pub fn still_running(pids: &[u32], wait: Duration) -> Vec<u32> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| runs(*p)).collect();
        if left.is_empty() || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command lines of the processes that contain `needle`.
pub fn processes_with(needle: &str) -> Vec<String> {
    processes()
        .iter()
        .map(Proc::cmdline)
        .filter(|c| c.contains(needle))
        .collect()
}

/// How many processes' mount tables mention `needle`.
pub fn mounts_mentioning(needle: &str) -> usize {
    processes()
        .iter()
        .filter(|p| p.mountinfo().contains(needle))
        .count()
}

/// The names of the cell directories under a state directory.
pub fn cells(state: &Path) -> Vec<String> {
    std::fs::read_dir(state.join("cells"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}
