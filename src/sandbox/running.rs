//! What one run does about cells that are not its own: hides a state directory first used after
//! they started in every running cell, and tells the directories and groups a killed run left
//! behind by the pid in their names.

use std::fs::File;
use std::io;
use std::path::Path;

/// Hides the host directory `dir` (an empty read-only tmpfs over it) in every cell that runs
/// now, of every labcheck run: a state directory first used after those cells started. Cells
/// are found by their control groups (`…/labcheck/<cell>`); their mount namespaces are entered
/// one by one. What cannot be entered is left (a cell that just ended).
pub fn hide_in_running_cells(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let own = std::fs::metadata("/proc/self/ns/mnt").map(|m| m.ino()).ok();
    let mut seen = std::collections::HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in procs.flatten() {
        let in_cell = std::fs::read_to_string(e.path().join("cgroup"))
            .is_ok_and(|c| c.lines().any(|l| l.contains("/labcheck/")));
        if !in_cell {
            continue;
        }
        let ns = e.path().join("ns/mnt");
        let Ok(ino) = std::fs::metadata(&ns).map(|m| m.ino()) else {
            continue;
        };
        if Some(ino) == own || !seen.insert(ino) {
            continue;
        }
        let Ok(file) = File::open(&ns) else {
            continue;
        };
        let _ = std::thread::scope(|s| {
            s.spawn(|| -> io::Result<()> {
                use nix::mount::{MsFlags, mount};
                use nix::sched::{CloneFlags, setns, unshare};
                unshare(CloneFlags::CLONE_FS)?;
                setns(&file, CloneFlags::CLONE_NEWNS)?;
                if !dir.is_dir() {
                    return Ok(());
                }
                let flags = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
                mount(
                    Some("tmpfs"),
                    dir,
                    Some("tmpfs"),
                    flags,
                    Some("mode=755,size=4k"),
                )?;
                Ok(())
            })
            .join()
        });
    }
}

/// Whether a cell's directory or group named `name` (`<cell>-<pid>`, as every run names them) was
/// left by a labcheck process that is gone.
pub fn left_by_a_gone_run(name: &str) -> bool {
    let Some(pid) = name.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    pid != std::process::id() && !super::runs(pid as i32)
}
