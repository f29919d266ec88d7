//! Signalling what a cell or its cluster started: a process, a process group, and a group
//! stopped with a grace period.

use std::time::Duration;

/// Sends `signal` to every process of group `pgid`. A group that no longer exists is not an error.
pub fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid addresses a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Sends `signal` to process `pid`. A process that no longer exists is not an error.
pub fn kill_process(pid: i32, signal: i32) {
    if pid > 0 {
        // SAFETY: kill(2) with a positive pid addresses one process; no memory is involved.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Stops `child`'s process group (it is the group's leader): SIGTERM, up to `grace` for it to
/// end, then SIGKILL.
pub async fn stop_group(child: &mut tokio::process::Child, grace: Duration) {
    let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()) else {
        return;
    };
    kill_group(pgid, libc::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        kill_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
    }
}
