//! A cell's network namespace seen from the harness: a handle that keeps it open and connects
//! into it ([`Network`], for the forwarder to the cell's API server), and commands started in it
//! and in the cell's control group while seeing the host's files ([`NetworkCommands`], for a
//! cluster's processes).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::unix;

/// A cell's network namespace, held open.
#[derive(Clone, Debug)]
pub struct Network(pub(super) std::sync::Arc<File>);

impl Network {
    /// Opens a TCP connection to `addr` inside the cell's network, from a thread that entered it
    /// (a socket stays in the namespace it was made in).
    pub fn connect(&self, addr: std::net::SocketAddr) -> io::Result<std::net::TcpStream> {
        let ns = self.0.clone();
        std::thread::spawn(move || {
            nix::sched::setns(&*ns, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(io::Error::from)?;
            std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3))
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("network thread panicked")))
    }
}

/// Makes commands like [`Sandbox::network_command`], holding the cell's network namespace open
/// itself.
#[derive(Clone, Debug)]
pub struct NetworkCommands {
    pub(super) net: Network,
    pub(super) cgroups: Vec<CString>,
    pub(super) die_with_parent: bool,
}

impl NetworkCommands {
    /// The cell's network namespace.
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// A command in the cell's network namespace and control group that sees the host's files.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.process_group(0);
        let entry = unix::Entry {
            namespaces: vec![(self.net.0.as_raw_fd(), libc::CLONE_NEWNET)],
            pid: None,
            cwd: None,
            cgroups: self.cgroups.clone(),
            die_with_parent: self.die_with_parent,
            drop_capabilities: false,
            end_others: false,
        };
        unix::enter(&mut cmd, entry);
        cmd
    }
}
