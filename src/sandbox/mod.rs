//! The sandbox of a cell: the learner's commands see the lab's literal absolute paths (`/root/…`,
//! `/opt/…`) while every write lands in the cell's own directory, and nothing they do leaves the
//! machine.
//!
//! A cell owns one *holder* process that lives in a private mount namespace (overlays on the
//! host's top-level directories, upper layers in the cell) and a network namespace with only `lo`.
//! Learner commands, the cluster's processes and the harness's own file reads enter those
//! namespaces; the host's paths are never created or modified. Unsafe code lives in [`unix`].

mod exec;
pub mod tree;
pub mod unix;

pub use exec::run_script;

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The host directories a cell overlays, when they exist: a lab's paths must lie under one.
pub const SANDBOXED_ROOTS: &[&str] = &[
    "/root",
    "/opt",
    "/home",
    "/srv",
    "/mnt",
    "/etc",
    "/usr/local",
];

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "cannot build the cell's sandbox (mount and network namespaces with overlays): {source}. \
         labcheck runs learner commands only inside a sandbox and needs root to build it; it \
         never falls back to the host's paths"
    )]
    Unsupported {
        #[source]
        source: io::Error,
    },
    #[error(
        "the cell directory {dir} lies under {root}, which the sandbox overlays; set LABCHECK_STATE_DIR elsewhere"
    )]
    CellUnderRoot { dir: PathBuf, root: String },
    #[error("lab path {path} has `.` or `..` in it: write the path it means")]
    NotNormal { path: PathBuf },
    #[error("lab path {path} is outside the sandboxed directories ({roots})")]
    Outside { path: PathBuf, roots: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> SandboxError + 'a {
    move |source| SandboxError::Io {
        what,
        path: path.to_owned(),
        source,
    }
}

/// The running holder: its pid and its namespaces, held open.
#[derive(Debug)]
struct Holder {
    pid: i32,
    /// Absent when attached to a kept cell's holder started by another labcheck.
    child: Option<tokio::process::Child>,
    net: File,
    mnt: File,
}

impl Holder {
    /// Holds the namespaces of process `pid` open.
    fn open(pid: i32, child: Option<tokio::process::Child>) -> Result<Holder, SandboxError> {
        let open = |ns: &str| {
            let p = PathBuf::from(format!("/proc/{pid}/ns/{ns}"));
            File::open(&p).map_err(io_err("cannot open namespace", &p))
        };
        Ok(Holder {
            pid,
            net: open("net")?,
            mnt: open("mnt")?,
            child,
        })
    }
}

/// A cell's sandbox. See the module docs.
#[derive(Debug)]
pub struct Sandbox {
    dir: PathBuf,
    roots: Vec<PathBuf>,
    view: Option<PathBuf>,
    keep_alive: bool,
    isolate_network: bool,
    holder: Mutex<Option<Holder>>,
    env: Mutex<BTreeMap<String, OsString>>,
    workdir: Mutex<PathBuf>,
}

impl Sandbox {
    /// Creates the cell directory `dir` and starts the holder. With `keep_alive`, the holder
    /// outlives the harness (a kept cell); otherwise it dies with it. With `isolate_network`, the
    /// cell gets a network namespace of its own with only `lo` (cells with a local cluster);
    /// without, it shares the host's network (cells that reach an existing or kind cluster).
    pub async fn create(
        dir: &Path,
        keep_alive: bool,
        isolate_network: bool,
    ) -> Result<Sandbox, SandboxError> {
        Self::create_viewing(dir, keep_alive, isolate_network, None).await
    }

    /// Like [`Sandbox::create`], but the lab's paths show the files under `view` (a learner's
    /// environment copied elsewhere: `view/root/istio` appears as `/root/istio`) instead of the
    /// host's. Nothing under `view` is modified either.
    pub async fn create_viewing(
        dir: &Path,
        keep_alive: bool,
        isolate_network: bool,
        view: Option<&Path>,
    ) -> Result<Sandbox, SandboxError> {
        let roots: Vec<PathBuf> = SANDBOXED_ROOTS
            .iter()
            .map(PathBuf::from)
            .filter(|r| r.is_dir())
            .collect();
        for root in &roots {
            if dir.starts_with(root) {
                return Err(SandboxError::CellUnderRoot {
                    dir: dir.to_owned(),
                    root: root.display().to_string(),
                });
            }
        }
        for sub in ["home", "tmp", "bin"] {
            let p = dir.join(sub);
            std::fs::create_dir_all(&p).map_err(io_err("cannot create", &p))?;
        }
        let mut env = BTreeMap::new();
        let host_path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        let mut path = dir.join("bin").into_os_string();
        path.push(":");
        path.push(host_path);
        env.insert("PATH".to_owned(), path);
        env.insert("HOME".to_owned(), dir.join("home").into());
        env.insert("TMPDIR".to_owned(), dir.join("tmp").into());
        env.insert("KUBECONFIG".to_owned(), dir.join("kubeconfig").into());
        env.insert("LANG".to_owned(), "C.UTF-8".into());
        env.insert("TERM".to_owned(), "dumb".into());
        env.insert("USER".to_owned(), "root".into());
        let sandbox = Sandbox {
            dir: dir.to_owned(),
            roots,
            view: view.map(Path::to_owned),
            keep_alive,
            isolate_network,
            holder: Mutex::new(None),
            env: Mutex::new(env),
            workdir: Mutex::new(dir.join("home")),
        };
        sandbox.start_holder()?;
        Ok(sandbox)
    }

    fn start_holder(&self) -> Result<(), SandboxError> {
        let mut overlays = Vec::new();
        for root in &self.roots {
            let layer = self.dir.join("fs").join(slug(root));
            let (upper, work) = (layer.join("upper"), layer.join("work"));
            for d in [&upper, &work] {
                std::fs::create_dir_all(d).map_err(io_err("cannot create", d))?;
            }
            let lower = match &self.view {
                None => root.clone(),
                Some(view) => {
                    let mapped = view.join(root.strip_prefix("/").unwrap_or(root));
                    if mapped.is_dir() {
                        mapped
                    } else {
                        let empty = layer.join("empty");
                        std::fs::create_dir_all(&empty).map_err(io_err("cannot create", &empty))?;
                        empty
                    }
                }
            };
            let options = format!(
                "lowerdir={},upperdir={},workdir={}",
                lower.display(),
                upper.display(),
                work.display()
            );
            overlays.push(unix::Overlay {
                target: cstring(root),
                options: cstring(&options),
            });
        }
        let setup = unix::Setup {
            overlays,
            tmpfs: vec![cstring("/tmp")],
            new_net: self.isolate_network,
        };
        let mut cmd = tokio::process::Command::new("sleep");
        cmd.arg("infinity")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        unix::build(&mut cmd, setup, !self.keep_alive);
        let child = cmd
            .spawn()
            .map_err(|source| SandboxError::Unsupported { source })?;
        let pid = child.id().map(|p| p as i32).unwrap_or_default();
        let holder = Holder::open(pid, Some(child))?;
        *self.holder.lock().unwrap_or_else(|e| e.into_inner()) = Some(holder);
        Ok(())
    }

    /// Attaches to the sandbox of a kept cell whose holder runs as `pid`.
    pub fn attach(
        dir: &Path,
        pid: i32,
        env: BTreeMap<String, OsString>,
        workdir: PathBuf,
    ) -> Result<Sandbox, SandboxError> {
        let holder = Holder::open(pid, None)?;
        Ok(Sandbox {
            dir: dir.to_owned(),
            roots: SANDBOXED_ROOTS
                .iter()
                .map(PathBuf::from)
                .filter(|r| r.is_dir())
                .collect(),
            view: None,
            keep_alive: true,
            isolate_network: true,
            holder: Mutex::new(Some(holder)),
            env: Mutex::new(env),
            workdir: Mutex::new(workdir),
        })
    }

    /// The directory learner commands start in.
    pub fn workdir(&self) -> PathBuf {
        self.workdir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A shell for a person inside the cell: like [`Sandbox::command`] but in the terminal's
    /// process group, so it can read from the terminal.
    pub fn interactive_command(
        &self,
        program: impl AsRef<std::ffi::OsStr>,
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.env_clear().envs(self.env());
        unix::enter(&mut cmd, self.entry(true));
        cmd
    }

    /// Whether the cell outlives this process (kept cells).
    pub fn keeps(&self) -> bool {
        self.keep_alive
    }

    /// The cell's directory on the host.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The pid of the holder process (the cell's namespaces), for `nsenter`-style entry.
    pub fn holder_pid(&self) -> Option<i32> {
        self.holder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|h| h.pid)
    }

    /// The environment learner commands see.
    pub fn env(&self) -> BTreeMap<String, OsString> {
        self.env.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The directory learner commands start in.
    pub fn set_workdir(&self, dir: &Path) {
        *self.workdir.lock().unwrap_or_else(|e| e.into_inner()) = dir.to_owned();
    }

    /// Checks that a lab path lies in the sandbox.
    pub fn contains(&self, path: &Path) -> Result<(), SandboxError> {
        if !is_normal(path) {
            return Err(SandboxError::NotNormal {
                path: path.to_owned(),
            });
        }
        if path.is_absolute() && self.roots.iter().any(|r| path.starts_with(r)) {
            return Ok(());
        }
        Err(SandboxError::Outside {
            path: path.to_owned(),
            roots: self
                .roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    fn entry(&self, with_mounts: bool) -> unix::Entry {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        unix::Entry {
            net_fd: holder.as_ref().map(|h| h.net.as_raw_fd()),
            mnt_fd: holder
                .as_ref()
                .filter(|_| with_mounts)
                .map(|h| h.mnt.as_raw_fd()),
            cwd: with_mounts
                .then(|| cstring(&*self.workdir.lock().unwrap_or_else(|e| e.into_inner()))),
            die_with_parent: !self.keep_alive,
        }
    }

    /// A command that runs inside the cell (its mounts and network), in a process group of its
    /// own, with the cell's environment only.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.env_clear().envs(self.env()).process_group(0);
        unix::enter(&mut cmd, self.entry(true));
        cmd
    }

    /// A command that runs in the cell's network namespace but sees the host's files (the
    /// cluster's own processes).
    pub fn network_command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.process_group(0);
        unix::enter(&mut cmd, self.entry(false));
        cmd
    }

    /// Runs `f` on a thread that has entered the cell's mount namespace: how the harness reads
    /// the learner's files without touching the host's paths.
    pub fn inside<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        use nix::sched::{CloneFlags, setns, unshare};
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        let Some(h) = holder.as_ref() else {
            return Err(io::Error::other("the cell's sandbox is not running"));
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                unshare(CloneFlags::CLONE_FS).map_err(io::Error::from)?;
                setns(&h.mnt, CloneFlags::CLONE_NEWNS).map_err(io::Error::from)?;
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("sandbox thread panicked")))
        })
    }

    /// A handle on the cell's network namespace that outlives borrows of the sandbox (for the
    /// forwarder that lets the harness reach the cell's API server).
    pub fn network(&self) -> io::Result<Network> {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        let h = holder
            .as_ref()
            .ok_or_else(|| io::Error::other("the cell's sandbox is not running"))?;
        Ok(Network(std::sync::Arc::new(h.net.try_clone()?)))
    }

    /// Reads a file as the learner sees it, up to [`READ_LIMIT`] bytes. A FIFO, socket or
    /// device is refused (`InvalidInput`) rather than read, which could block or never end.
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let path = path.to_owned();
        self.inside(move || read_regular(&path))
    }

    /// Stops the holder (and with it the namespaces, once their last process is gone).
    pub async fn shutdown(&self) {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = holder {
            unix::kill_group(h.pid, libc::SIGKILL);
            if let Some(mut child) = h.child {
                let _ = child.wait().await;
            }
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.keep_alive {
            return;
        }
        if let Some(h) = self
            .holder
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            unix::kill_group(h.pid, libc::SIGKILL);
        }
    }
}

/// A cell's network namespace, held open.
#[derive(Clone, Debug)]
pub struct Network(std::sync::Arc<File>);

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

/// Whether a path a lab names has no `.` or `..` in it (compared as text, `/root/../var` would
/// pass a prefix check and name the host's `/var`).
pub fn is_normal(path: &Path) -> bool {
    use std::path::Component;
    !path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
}

/// The largest file a check reads.
pub const READ_LIMIT: u64 = 64 << 20;

fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path)?;
    let kind = meta.file_type();
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    } else {
        ""
    };
    if !what.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file"),
        ));
    }
    if meta.len() > READ_LIMIT {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} bytes, over the {} MiB a check reads",
                meta.len(),
                READ_LIMIT >> 20
            ),
        ));
    }
    std::fs::read(path)
}

fn slug(path: &Path) -> String {
    let s = path.to_string_lossy().trim_matches('/').replace('/', "_");
    if s.is_empty() { "rootfs".to_owned() } else { s }
}

fn cstring(s: impl AsRef<std::ffi::OsStr>) -> CString {
    CString::new(s.as_ref().as_bytes()).unwrap_or_else(|_| c"/".to_owned())
}
