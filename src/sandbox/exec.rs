//! Runs one learner command (a bash script) in a cell: its own process group, a timeout after
//! which the whole group is killed, every process it left behind ended when it ends, and a
//! [`Transcript`] of what it printed and how it ended.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::{Sandbox, unix};
use crate::model::Transcript;

const OUTPUT_LIMIT: usize = Transcript::OUTPUT_LIMIT;
/// Between SIGTERM and SIGKILL of a timed-out group.
const GRACE: Duration = Duration::from_millis(500);

/// The host's bash, by its absolute path: a `bash` found first on the cell's `PATH` (a
/// learner's, in a directory of a copied tree) never stands in for it.
fn bash() -> &'static str {
    ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .unwrap_or("/bin/bash")
}

/// Runs `script` with bash inside the cell. Errors only when bash cannot be started.
///
/// The script reaches bash as a file (an in-memory file the child inherits, read as
/// `/dev/fd/N`), not as an argument: a script of any size runs, and its stdin stays free.
pub async fn run_script(
    sandbox: &Sandbox,
    script: &str,
    timeout: Duration,
) -> std::io::Result<Transcript> {
    run_with(sandbox, script_file(script)?, script, timeout, &[]).await
}

/// Runs bash on `main` (a [`script_file`]) in the cell, with `files` open in it as well (at
/// their own descriptor numbers); the transcript names `script`.
pub(super) async fn run_with(
    sandbox: &Sandbox,
    main: std::fs::File,
    script: &str,
    timeout: Duration,
    files: &[&std::fs::File],
) -> std::io::Result<Transcript> {
    use std::os::fd::AsRawFd;
    let started = Instant::now();
    let file = main;
    let fd = file.as_raw_fd();
    let mut command = sandbox.command(bash());
    command
        .args(["--noprofile", "--norc"])
        .arg(format!("/dev/fd/{fd}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    unix::pass_fd(&mut command, fd);
    for passed in files {
        unix::pass_fd(&mut command, passed.as_raw_fd());
    }
    let mut child = command.spawn()?;
    drop(file);
    let pgid = child.id().map(|p| p as i32);
    // If this future is dropped (the run was interrupted), the group dies with it.
    let _guard = GroupGuard(pgid);
    let out = tokio::spawn(read_limited(child.stdout.take()));
    let err = tokio::spawn(read_limited(child.stderr.take()));

    let (exit_code, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status?.code(), false),
        Err(_) => {
            if let Some(pgid) = pgid {
                unix::kill_group(pgid, libc::SIGTERM);
                if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
                    unix::kill_group(pgid, libc::SIGKILL);
                }
                // Children of the group may still run after the leader exits.
                unix::kill_group(pgid, libc::SIGKILL);
            }
            let _ = child.wait().await;
            (None, true)
        }
    };
    // The group is gone; a process that left it may still hold the pipes: don't wait forever.
    let collect = |h: tokio::task::JoinHandle<(Vec<u8>, bool)>| async move {
        match tokio::time::timeout(Duration::from_secs(2), h).await {
            Ok(Ok((bytes, cut))) => (String::from_utf8_lossy(&bytes).into_owned(), cut),
            _ => (String::new(), false),
        }
    };
    if let (false, Some(pgid)) = (timed_out, pgid) {
        unix::kill_group(pgid, libc::SIGKILL);
    }
    // What the command left running (background jobs, `setsid` daemons, double forks) ends with
    // it, before its output is collected: a daemon holding stdout cannot keep the pipe open.
    sandbox.end_leftovers().await?;
    let (stdout, out_cut) = collect(out).await;
    let (stderr, err_cut) = collect(err).await;
    Ok(Transcript {
        script: script.to_owned(),
        stdout,
        stderr,
        exit_code,
        duration: started.elapsed(),
        timed_out,
        truncated: out_cut || err_cut,
        attempt: None,
    })
}

/// An in-memory, close-on-exec file holding `script`, rewound.
pub(super) fn script_file(script: &str) -> std::io::Result<std::fs::File> {
    let mut file = memfd()?;
    fill(&mut file, script)?;
    Ok(file)
}

/// An empty in-memory, close-on-exec file.
pub(super) fn memfd() -> std::io::Result<std::fs::File> {
    let fd =
        nix::sys::memfd::memfd_create(c"labcheck-script", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
            .map_err(std::io::Error::from)?;
    Ok(std::fs::File::from(fd))
}

/// Writes `text` into `file` and rewinds it.
pub(super) fn fill(file: &mut std::fs::File, text: &str) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    file.write_all(text.as_bytes())?;
    file.rewind()
}

/// Reads a stream to its end, keeping the first [`OUTPUT_LIMIT`] bytes; whether more came.
async fn read_limited<R: tokio::io::AsyncRead + Unpin>(stream: Option<R>) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut cut = false;
    let Some(mut stream) = stream else {
        return (buf, cut);
    };
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_LIMIT - buf.len();
                cut |= n > room;
                buf.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
    (buf, cut)
}

/// Kills a process group when dropped, and reaps its leader (the command's outer process) if the
/// command was still running: an interrupted run exits right after, and leaves no zombie.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        let Some(pgid) = self.0 else { return };
        unix::kill_group(pgid, libc::SIGKILL);
        let leader = nix::unistd::Pid::from_raw(pgid);
        for _ in 0..50 {
            match waitpid(leader, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(10)),
                // Reaped now, or already (the command finished and was waited for).
                _ => return,
            }
        }
    }
}
