//! The labcheck that kwok runs for `kubectl exec` (under every name of its PATH): it sends the
//! Pod, the container and the command, with its standard input, output and error, to the
//! harness that runs the cell, and exits with the command's status.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::net::UnixStream;

use super::{CONTAINER, POD, Request, SOCKET, SOCKET_DIR};

/// When this process is kwok's exec (its environment names the socket's directory): runs it and
/// returns the exit code. Otherwise `None`.
pub fn shim() -> Option<i32> {
    let dir = std::env::var_os(SOCKET_DIR)?;
    Some(run(&dir).unwrap_or_else(|e| {
        eprintln!("labcheck (kubectl exec): {e}");
        126
    }))
}

fn run(dir: &std::ffi::OsStr) -> io::Result<i32> {
    let var = |name: &str| {
        std::env::var(name)
            .map_err(|_| io::Error::other(format!("{name} is not set: no Pod's exec")))
    };
    let request = Request {
        pod: var(POD)?,
        container: var(CONTAINER)?,
        argv: std::env::args_os().map(|a| a.into_vec()).collect(),
    };
    let json = serde_json::to_vec(&request)?;
    let mut payload = u32::try_from(json.len())
        .map_err(|_| io::Error::other("the command is too long"))?
        .to_le_bytes()
        .to_vec();
    payload.extend_from_slice(&json);
    let dir = std::fs::File::open(dir)?;
    let mut stream = UnixStream::connect(format!("/proc/self/fd/{}/{SOCKET}", dir.as_raw_fd()))?;
    send(&stream, &payload)?;
    let mut status = [0u8; 4];
    stream
        .read_exact(&mut status)
        .map_err(|e| io::Error::other(format!("the cell ended the command: {e}")))?;
    Ok(i32::from_le_bytes(status))
}

/// Sends `payload` with this process's standard input, output and error.
fn send(stream: &UnixStream, payload: &[u8]) -> io::Result<()> {
    use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
    let fds = [0, 1, 2];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    let mut sent = sendmsg::<()>(
        stream.as_raw_fd(),
        &[io::IoSlice::new(payload)],
        &cmsg,
        MsgFlags::empty(),
        None,
    )?;
    while sent < payload.len() {
        sent += io::Write::write(&mut &*stream, &payload[sent..])?;
    }
    Ok(())
}
