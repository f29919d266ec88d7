//! A cell's network namespace seen from the harness: a handle that keeps it open and connects
//! into it ([`Network`], for the forwarder to the cell's API server), and commands started in it
//! and in the cell's control group while seeing the host's files ([`NetworkCommands`], for a
//! cluster's processes). A live mesh's Pods get network namespaces of their own
//! ([`Network::create`]), whose commands stay in the cell's control group.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::unix;

/// A cell's network namespace, held open.
#[derive(Clone, Debug)]
pub struct Network(pub(super) std::sync::Arc<File>);

impl Network {
    /// A new network namespace, with only `lo` (down), held open by the handle: a Pod's. It ends
    /// when the last handle and the last process in it are gone.
    pub fn create() -> io::Result<Network> {
        std::thread::spawn(|| {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
            File::open("/proc/thread-self/ns/net")
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("network thread panicked")))
        .map(|f| Network(std::sync::Arc::new(f)))
    }

    /// A path other processes (`ip … netns PATH`) open the namespace by, while the handle lives.
    pub fn path(&self) -> std::path::PathBuf {
        format!("/proc/{}/fd/{}", std::process::id(), self.0.as_raw_fd()).into()
    }

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

    /// Sends `request` to `addr` inside the namespace and reads the answer until the peer closes
    /// (an HTTP/1.0 exchange), waiting at most `timeout` for each read; off the async threads.
    pub async fn exchange(
        &self,
        addr: std::net::SocketAddr,
        request: Vec<u8>,
        timeout: std::time::Duration,
    ) -> io::Result<Vec<u8>> {
        let network = self.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = network.connect(addr)?;
            s.set_read_timeout(Some(timeout))?;
            s.write_all(&request)?;
            let mut answer = Vec::new();
            s.read_to_end(&mut answer)?;
            Ok(answer)
        })
        .await
        .unwrap_or_else(|e| Err(io::Error::other(e.to_string())))
    }

    /// Listens on `addr` inside the namespace (bound from a thread that entered it), non-blocking.
    pub fn listen(&self, addr: std::net::SocketAddr) -> io::Result<std::net::TcpListener> {
        let ns = self.0.clone();
        std::thread::spawn(move || {
            nix::sched::setns(&*ns, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(io::Error::from)?;
            let listener = std::net::TcpListener::bind(addr)?;
            listener.set_nonblocking(true)?;
            Ok(listener)
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

    /// The same commands in network namespace `net` instead (a Pod's), still in the cell's
    /// control group.
    pub fn with_network(&self, net: Network) -> NetworkCommands {
        NetworkCommands {
            net,
            cgroups: self.cgroups.clone(),
            die_with_parent: self.die_with_parent,
        }
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
            capabilities: None,
            end_others: false,
        };
        unix::enter(&mut cmd, entry);
        cmd
    }
}
