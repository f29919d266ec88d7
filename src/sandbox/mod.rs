//! The sandbox of a cell: a sealed box. Learner commands see the whole filesystem as the lab
//! describes it (`/root/…`, `/opt/…`, `/var/…`), every write lands in the cell's own directory,
//! and nothing they do reaches the host, the harness or another cell.
//!
//! A cell owns one *holder* process. Its child is the init (pid 1) of the cell's own PID, mount,
//! UTS and IPC namespaces (and, for a local cluster, a network namespace with only `lo`): it mounts
//! an overlay of the host's `/` (upper layer in the cell directory), a `/proc` of the cell's PID
//! namespace, a minimal `/dev`, a read-only `/sys`, a `/tmp` of its own, private `/run` and `/dev/shm`, hides
//! the harness's state and report directories, and pivots into that root. Learner commands enter
//! those namespaces, join the cell's control group and keep only a container's capabilities; what
//! a command leaves running is ended when it ends. When init ends, every process of the cell ends.
//! Unsafe code lives in [`unix`].

pub mod beneath;
pub mod cgroup;
mod exec;
mod learner;
mod network;
mod node;
mod procfs;
mod read;
mod root;
mod running;
mod session;
pub mod tree;
pub mod unix;

pub use cgroup::Limits;
pub use exec::run_script;
pub use learner::LearnerCommands;
pub use network::{Network, NetworkCommands};
pub use node::{Attachment, Node, NodeCommands};
pub use procfs::{children_of, parent_of, runs, start_time};
pub use read::READ_LIMIT;
use read::read_regular;
pub use running::{hide_in_running_cells, left_by_a_gone_run};
pub use session::{SESSION, Shell, run_learner};

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cgroup::Cgroup;

/// Where a cell sees its share directory (its tools in `bin/`, its `kubeconfig`).
pub const SHARE: &str = "/run/labcheck";

/// Paths that belong to the kernel or to the cell's machinery, never to a lab.
const SYSTEM_PATHS: &[&str] = &["/proc", "/sys", "/dev", SHARE];

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "cannot build the cell's sandbox (namespaces, an overlay of `/`, pivot_root): {source}. \
         labcheck runs learner commands only inside a sandbox; it never falls back to the host's \
         paths"
    )]
    Unsupported {
        #[source]
        source: io::Error,
    },
    #[error(
        "labcheck needs root to seal a cell (it runs as uid {uid}): it mounts an overlay of `/`, \
         makes PID, mount, network, UTS and IPC namespaces and a control group for each cell. \
         Run it as root (sudo), or in a container or VM where you are root"
    )]
    NotRoot { uid: u32 },
    #[error("lab path {path} has `.` or `..` in it: write the path it means")]
    NotNormal { path: PathBuf },
    #[error("lab path {path} is not an absolute path the learner sees")]
    NotAbsolute { path: PathBuf },
    #[error("lab path {path} lies under {system}, which belongs to the system, not to a lab")]
    System { path: PathBuf, system: &'static str },
    #[error("path {path} has a `,`, `:` or `\\` in it, which an overlay mount cannot take")]
    OverlayPath { path: PathBuf },
    #[error(transparent)]
    Cgroup(#[from] cgroup::CgroupError),
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

/// How a sandbox is made.
#[derive(Clone, Debug, Default)]
pub struct SandboxOptions {
    /// The holder outlives the harness (a kept cell); otherwise it dies with it.
    pub keep_alive: bool,
    /// A network namespace of its own with only `lo` (cells with a local or kind cluster: the
    /// cluster joins it); without, the cell shares the host's network (cells that reach an
    /// existing cluster).
    pub isolate_network: bool,
    /// Show the files under this directory over the host's (a learner's environment copied
    /// elsewhere: `view/root/istio` appears as `/root/istio`). Nothing under it is modified.
    pub view: Option<PathBuf>,
    /// Host directories the cell must not see (the state directory with the other cells, the
    /// report directory): an empty read-only directory stands in their place.
    pub hide: Vec<PathBuf>,
    /// Programs put first on the learner's PATH, by name (bound read-only into `SHARE/bin`, so
    /// they work wherever the host keeps them).
    pub tools: Vec<(String, PathBuf)>,
    pub limits: Limits,
    /// Learner commands join this network namespace instead of the cell's own (a cell that
    /// borrows a pooled cluster).
    pub network: Option<Network>,
}

/// The running holder: its pid and its namespaces, held open.
#[derive(Debug)]
struct Holder {
    pid: i32,
    /// Absent when attached to a kept cell's holder started by another labcheck.
    child: Option<tokio::process::Child>,
    net: File,
    /// Its other namespaces, those every learner command enters.
    ns: std::sync::Arc<learner::Namespaces>,
}

impl Holder {
    /// Holds the namespaces of process `pid` open.
    fn open(pid: i32, child: Option<tokio::process::Child>) -> Result<Holder, SandboxError> {
        let dir = PathBuf::from(format!("/proc/{pid}/ns"));
        let net = dir.join("net");
        Ok(Holder {
            pid,
            net: File::open(&net).map_err(io_err("cannot open namespace", &net))?,
            ns: std::sync::Arc::new(
                learner::Namespaces::open(pid as u32)
                    .map_err(io_err("cannot open the namespaces in", &dir))?,
            ),
            child,
        })
    }
}

/// How a process enters the cell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A learner command (or the grader's): every namespace, a container's capabilities.
    Learner,
    /// Ends every process of the cell but init.
    Reaper,
    /// A cluster process: the cell's network and control group, the host's files.
    Network,
}

/// A cell's sandbox. See the module docs.
#[derive(Debug)]
pub struct Sandbox {
    dir: PathBuf,
    /// The holder may outlive the harness (made for a cell that may be kept).
    keep_alive: bool,
    /// The cell is kept ([`Sandbox::keep`]): dropping the sandbox leaves it running. A cell made
    /// to be kept that is dropped before (an interrupted run) ends with every process in it.
    kept: std::sync::atomic::AtomicBool,
    holder: Mutex<Option<Holder>>,
    cgroup: Option<Cgroup>,
    env: Mutex<BTreeMap<String, OsString>>,
    workdir: Mutex<PathBuf>,
    /// With a learner's copied tree shown ([`SandboxOptions::view`]): the directories it shows,
    /// the only ones [`Sandbox::read`] reads from.
    confine: Option<Vec<PathBuf>>,
}

impl Sandbox {
    /// Creates the cell directory `dir` and starts the holder.
    pub async fn create(dir: &Path, options: SandboxOptions) -> Result<Sandbox, SandboxError> {
        let uid = nix::unistd::geteuid().as_raw();
        if uid != 0 {
            return Err(SandboxError::NotRoot { uid });
        }
        for p in ["fs/root", "share/bin"].into_iter().map(PathBuf::from) {
            let p = dir.join(p);
            std::fs::create_dir_all(&p).map_err(io_err("cannot create", &p))?;
        }
        let name = hostname(dir);
        let cgroup = Cgroup::create(&name, options.limits)?;
        let mut env = BTreeMap::new();
        let host_path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        let mut path = OsString::from(format!("{SHARE}/bin:"));
        path.push(host_path);
        env.insert("PATH".to_owned(), path);
        env.insert("HOME".to_owned(), "/root".into());
        env.insert("TMPDIR".to_owned(), "/tmp".into());
        env.insert(
            "KUBECONFIG".to_owned(),
            format!("{SHARE}/kubeconfig").into(),
        );
        env.insert("HOSTNAME".to_owned(), name.clone().into());
        env.insert("LANG".to_owned(), "C.UTF-8".into());
        env.insert("TERM".to_owned(), "dumb".into());
        env.insert("USER".to_owned(), "root".into());
        let confine = match &options.view {
            Some(view) => Some(root::view_dirs(view)?),
            None => None,
        };
        let sandbox = Sandbox {
            dir: dir.to_owned(),
            keep_alive: options.keep_alive,
            kept: false.into(),
            holder: Mutex::new(None),
            cgroup: Some(cgroup),
            env: Mutex::new(env),
            workdir: Mutex::new(PathBuf::from("/root")),
            confine,
        };
        let setup = unix::Setup {
            root: cstring(dir.join("fs/root")),
            hostname: cstring(&name),
            new_net: options.isolate_network,
            init: unix::Init {
                cgroups: sandbox.cgroup_procs(),
                ops: root::ops(dir, &options)?,
                die_with_parent: !options.keep_alive,
                argv: procfs::argv_area(),
            },
        };
        let mut cmd = tokio::process::Command::new("sleep");
        cmd.arg("infinity")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        unix::build(&mut cmd, setup);
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(source) => {
                if let Some(c) = &sandbox.cgroup {
                    c.remove().await;
                }
                return Err(SandboxError::Unsupported { source });
            }
        };
        let pid = child.id().map(|p| p as i32).unwrap_or_default();
        let mut holder = Holder::open(pid, Some(child))?;
        if let Some(net) = &options.network {
            holder.net = net
                .0
                .try_clone()
                .map_err(io_err("cannot hold network", dir))?;
        }
        *sandbox.holder.lock().unwrap_or_else(|e| e.into_inner()) = Some(holder);
        Ok(sandbox)
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
            keep_alive: true,
            kept: true.into(),
            holder: Mutex::new(Some(holder)),
            cgroup: None,
            env: Mutex::new(env),
            workdir: Mutex::new(workdir),
            confine: None,
        })
    }

    fn cgroup_procs(&self) -> Vec<CString> {
        self.cgroup
            .iter()
            .flat_map(|c| c.procs())
            .map(cstring)
            .collect()
    }

    /// The host directory the cell sees as [`SHARE`]: its tools (`bin/`) and `kubeconfig`.
    pub fn share_dir(&self) -> PathBuf {
        self.dir.join("share")
    }

    /// The host directory that holds what the cell's commands wrote (the overlay's upper layer).
    pub fn upper_dir(&self) -> PathBuf {
        self.dir.join("fs/upper")
    }

    /// The host directory the cell sees as `/tmp`.
    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.join("fs/tmp")
    }

    /// The most memory the cell used at once (its processes and files in memory), when known.
    pub fn peak_memory(&self) -> Option<u64> {
        self.cgroup.as_ref()?.peak_memory()
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
        unix::enter(&mut cmd, self.entry(Role::Learner));
        cmd
    }

    /// Whether the cell may outlive this process (cells that may be kept).
    pub fn keeps(&self) -> bool {
        self.keep_alive
    }

    /// Keeps the cell: it outlives this sandbox (and labcheck) until `labcheck down`. Only a
    /// sandbox made with [`SandboxOptions::keep_alive`] can be kept.
    pub fn keep(&self) {
        self.kept
            .store(self.keep_alive, std::sync::atomic::Ordering::SeqCst);
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

    /// Checks that a lab path is one a lab may own: absolute, normal, not the system's.
    pub fn contains(&self, path: &Path) -> Result<(), SandboxError> {
        if !is_normal(path) {
            return Err(SandboxError::NotNormal {
                path: path.to_owned(),
            });
        }
        if !path.is_absolute() {
            return Err(SandboxError::NotAbsolute {
                path: path.to_owned(),
            });
        }
        if let Some(system) = SYSTEM_PATHS.iter().find(|s| path.starts_with(s)) {
            return Err(SandboxError::System {
                path: path.to_owned(),
                system,
            });
        }
        Ok(())
    }

    fn entry(&self, role: Role) -> unix::Entry {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        let Some(h) = holder.as_ref() else {
            // A stopped sandbox: entering fails at spawn rather than running on the host.
            return unix::Entry {
                namespaces: vec![(-1, libc::CLONE_NEWNS)],
                pid: None,
                cwd: None,
                cgroups: Vec::new(),
                die_with_parent: true,
                capabilities: Some(unix::CONTAINER_CAPABILITIES),
                end_others: false,
            };
        };
        let net = (h.net.as_raw_fd(), libc::CLONE_NEWNET);
        if role == Role::Network {
            return unix::Entry {
                namespaces: vec![net],
                pid: None,
                cwd: None,
                cgroups: self.cgroup_procs(),
                die_with_parent: !self.keep_alive,
                capabilities: None,
                end_others: false,
            };
        }
        h.ns.entry(
            net.0,
            cstring(&*self.workdir.lock().unwrap_or_else(|e| e.into_inner())),
            self.cgroup_procs(),
            !self.keep_alive,
            role == Role::Reaper,
            unix::CONTAINER_CAPABILITIES,
        )
    }

    /// A command that runs inside the cell as one of its processes, in a process group of its own,
    /// with the cell's environment only.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.env_clear().envs(self.env()).process_group(0);
        unix::enter(&mut cmd, self.entry(Role::Learner));
        cmd
    }

    /// Ends every process of the cell but its init: what a learner command left running
    /// (background jobs, `setsid` daemons, double forks).
    pub async fn end_leftovers(&self) -> io::Result<()> {
        let mut cmd = tokio::process::Command::new("true");
        cmd.env_clear()
            .envs(self.env())
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        unix::enter(&mut cmd, self.entry(Role::Reaper));
        cmd.status().await.map(drop)
    }

    /// A command that runs in the cell's network namespace and control group but sees the host's
    /// files (the cluster's own processes).
    pub fn network_command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.process_group(0);
        unix::enter(&mut cmd, self.entry(Role::Network));
        cmd
    }

    /// What starts cluster processes in the cell's network namespace and control group after
    /// this borrow ends (a live mesh starts istiod when the lab's istiod Pod runs).
    pub fn network_commands(&self) -> io::Result<NetworkCommands> {
        Ok(NetworkCommands {
            net: self.network()?,
            cgroups: self.cgroup_procs(),
            die_with_parent: !self.keep_alive,
        })
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
                setns(&h.ns.mnt, CloneFlags::CLONE_NEWNS).map_err(io::Error::from)?;
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

    /// What makes learner commands after this borrow ends, in a network namespace of the
    /// caller's choosing (`kubectl exec` into a live mesh's Pod).
    pub fn learner_commands(&self) -> io::Result<LearnerCommands> {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner());
        let h = holder
            .as_ref()
            .ok_or_else(|| io::Error::other("the cell's sandbox is not running"))?;
        Ok(LearnerCommands {
            namespaces: h.ns.clone(),
            cgroups: self.cgroup_procs(),
            env: self.env(),
            die_with_parent: !self.keep_alive,
        })
    }

    /// Reads a file as the learner sees it, up to [`READ_LIMIT`] bytes. A FIFO, socket or
    /// device is refused (`InvalidInput`) rather than read, which could block or never end. With
    /// a learner's copied tree, only its files are read: a path outside it is not there
    /// (`NotFound`), a link out of it is refused (`InvalidInput`).
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let path = path.to_owned();
        let confine = self.confine.clone();
        self.inside(move || read_regular(&path, confine.as_deref()))
    }

    /// Stops the holder: its init ends, and with it every process of the cell; then the cell's
    /// control group goes.
    pub async fn shutdown(&self) {
        let holder = self.holder.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = holder {
            unix::kill_group(h.pid, libc::SIGKILL);
            if let Some(mut child) = h.child {
                let _ = child.wait().await;
            }
        }
        if let Some(c) = &self.cgroup {
            c.remove().await;
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // A cell not kept ends here: its holder, and with the control group every process that
        // joined it (learner commands, the cluster's etcd and API server, a mesh's processes).
        if self.kept.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if let Some(h) = self
            .holder
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            unix::kill_group(h.pid, libc::SIGKILL);
            // Reap the holder here (an interrupted run exits right after): no zombie is left
            // for the machine's init to collect.
            if let Some(mut child) = h.child {
                for _ in 0..100 {
                    if !matches!(child.try_wait(), Ok(None)) {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
            if let Some(c) = &self.cgroup {
                c.remove_blocking();
            }
        }
    }
}

/// The cell's hostname: its directory's name, cut to the kernel's 64 bytes.
fn hostname(dir: &Path) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "labcheck-cell".to_owned());
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_owned()
}

/// Whether a path a lab names has no `.` or `..` in it (compared as text, `/root/../var` would
/// pass a prefix check and name the host's `/var`).
pub fn is_normal(path: &Path) -> bool {
    use std::path::Component;
    !path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
}

fn cstring(s: impl AsRef<std::ffi::OsStr>) -> CString {
    CString::new(s.as_ref().as_bytes()).unwrap_or_else(|_| c"/".to_owned())
}
