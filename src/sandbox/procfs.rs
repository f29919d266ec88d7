//! What `/proc` says of a process that the sandbox and the cluster's processes need: whether it
//! runs, its parent, its children, and where this process's arguments lie.

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces and
/// parentheses): the state first, then the parent, and so on.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// The fields of `/proc/PID/stat` while process `pid` runs: it exists and is no zombie. A
/// process whose parent ended first waits as a zombie for the machine's init (or a subreaper,
/// which may collect it only when it ends itself); it holds nothing but its pid.
fn running_fields(pid: i32) -> Option<Vec<String>> {
    let fields = stat_fields(pid)?;
    let zombie = matches!(fields.first()?.as_str(), "Z" | "X");
    (!zombie).then_some(fields)
}

/// Whether process `pid` runs (is no zombie).
pub fn runs(pid: i32) -> bool {
    running_fields(pid).is_some()
}

/// When process `pid` started (field 22 of `/proc/PID/stat`, clock ticks after boot), while it
/// runs.
pub fn start_time(pid: i32) -> Option<u64> {
    running_fields(pid)?.get(19)?.parse().ok()
}

/// The parent of process `pid`, while it is a process (not yet reaped).
pub fn parent_of(pid: i32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// The processes whose parent is `parent`, while they are processes.
pub fn children_of(parent: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// Where this process's arguments lie in its memory (`/proc/self/stat`'s `arg_start` and
/// `arg_end`): an init forked from the harness blanks them, so the cell's `/proc/1/cmdline`
/// shows `init` rather than the harness's command line with its host paths.
pub(super) fn argv_area() -> Option<(usize, usize)> {
    let fields = stat_fields(std::process::id() as i32)?;
    let start = fields.get(48 - 3)?.parse().ok()?;
    let end: usize = fields.get(49 - 3)?.parse().ok()?;
    (end > start + 5).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_does_not_run_and_has_no_start_time() -> std::io::Result<()> {
        let mut sleeping = std::process::Command::new("sleep").arg("30").spawn()?;
        let mut ended = std::process::Command::new("true").spawn()?;
        let (sleeping_pid, ended_pid) = (sleeping.id() as i32, ended.id() as i32);
        assert!(runs(sleeping_pid));
        assert!(start_time(sleeping_pid).is_some());
        assert_eq!(parent_of(sleeping_pid), Some(std::process::id()));
        // Not yet waited for, `true` stays a zombie once it ends.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while runs(ended_pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(std::path::Path::new(&format!("/proc/{ended_pid}")).exists());
        assert!(!runs(ended_pid));
        assert_eq!(start_time(ended_pid), None);
        sleeping.kill()?;
        sleeping.wait()?;
        ended.wait()?;
        assert!(!runs(ended_pid));
        Ok(())
    }
}
