//! A cell's node: where a real node's kubelet, container runtime and containers run, with no
//! more power than a learner's command. The node's holder joins the cell's control group and
//! namespaces, then makes a mount namespace (a copy of the cell's: the host's files are the
//! cell's overlay, read-only below, its hidden areas hidden), a PID namespace (a learner's
//! `kill -9 -1` does not reach it, nor does the node's `kill -1` reach the learner's) and a
//! cgroup namespace (rooted at the cell's group) of its own. Its init mounts the node's `/proc`
//! and a `/run` of its own, where it attaches the host directories and files the node needs
//! ([`Attachment`]: the cluster's directory read-only, the Pods' working directories, the
//! programs they run). Every process entering it keeps a container's capabilities
//! (or, for the node's daemons, [`unix::NODE_CAPABILITIES`]) and joins a network namespace of the
//! caller's choosing (the cell's). It ends with
//! the cell: its holder is in the cell's control group, and the init's end ends every process of
//! the node.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libc::{MS_BIND, MS_NODEV, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT};

use super::learner::Namespaces;
use super::{LearnerCommands, Network, cstring, unix};
use unix::Op;

/// The node's own `/run`, where its attachments are.
pub const RUN: &str = "/run";

/// A host directory or file shown in the node at `at` (under [`RUN`]; or, for a file that
/// exists in the cell's view, over it).
#[derive(Clone, Debug)]
pub struct Attachment {
    pub host: PathBuf,
    pub at: PathBuf,
    pub writable: bool,
}

/// A running node: its holder. Dropped, it ends (unless kept).
#[derive(Debug)]
pub struct Node {
    holder: Option<tokio::process::Child>,
    commands: NodeCommands,
    keep: bool,
}

/// What makes commands in a node; outlives borrows of it.
#[derive(Clone, Debug)]
pub struct NodeCommands {
    namespaces: Arc<Namespaces>,
    cgroups: Vec<CString>,
    die_with_parent: bool,
}

impl Node {
    /// Starts the node of the cell whose learner commands `cell` makes, in network namespace
    /// `net` (the cell's), showing `attachments`, for a kubelet and its runtime: its init mounts the node's own cgroup hierarchies (rooted at the cell's groups by the node's
    /// cgroup namespace: every group the runtime makes is the cell's) and makes the network's
    /// knobs (`/proc/sys/net`, the cell's network namespace's own) writable; the kernel's other
    /// knobs stay read-only. A kept node outlives this process.
    pub fn start_container_host(
        cell: &LearnerCommands,
        net: &Network,
        attachments: &[Attachment],
        keep: bool,
    ) -> io::Result<Node> {
        let mut trees: Vec<OwnedFd> = Vec::new();
        let mut ops = vec![Op::Mount {
            source: None,
            target: cstring("/"),
            fstype: None,
            flags: MS_REC | MS_PRIVATE,
            data: None,
            optional: false,
        }];
        ops.extend(super::root::node_proc());
        ops.extend(writable_net_knobs());
        ops.extend(cgroup_mounts());
        ops.extend(kernel_log());
        ops.push(Op::Mount {
            source: Some(cstring("tmpfs")),
            target: cstring(RUN),
            fstype: Some(cstring("tmpfs")),
            flags: MS_NOSUID | MS_NODEV,
            data: Some(cstring("mode=755")),
            optional: false,
        });
        for a in attachments {
            let tree = unix::clone_tree(&a.host)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", a.host.display())))?;
            ops.extend(attach(a, tree.as_raw_fd(), a.host.is_dir()));
            trees.push(tree);
        }
        let ns = &cell.namespaces;
        let setup = unix::NodeSetup {
            enter: vec![
                (ns.ipc.as_raw_fd(), libc::CLONE_NEWIPC),
                (ns.uts.as_raw_fd(), libc::CLONE_NEWUTS),
                (net.0.as_raw_fd(), libc::CLONE_NEWNET),
                (ns.mnt.as_raw_fd(), libc::CLONE_NEWNS),
            ],
            init: unix::Init {
                cgroups: cell.cgroups.clone(),
                ops,
                die_with_parent: !keep,
                argv: super::procfs::argv_area(),
            },
        };
        let mut cmd = tokio::process::Command::new("sleep");
        cmd.arg("infinity")
            .env_clear()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        unix::build_node(&mut cmd, setup);
        let holder = cmd
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("the cell's node: {e}")))?;
        drop(trees);
        let pid = holder
            .id()
            .ok_or_else(|| io::Error::other("the node ended at once"))?;
        let namespaces = Arc::new(Namespaces::open(pid)?);
        Ok(Node {
            holder: Some(holder),
            commands: NodeCommands {
                namespaces,
                cgroups: cell.cgroups.clone(),
                die_with_parent: !keep,
            },
            keep,
        })
    }

    /// What makes commands in the node.
    pub fn commands(&self) -> NodeCommands {
        self.commands.clone()
    }

    /// Ends the node and every process in it.
    pub async fn stop(&mut self) {
        if let Some(mut holder) = self.holder.take() {
            if let Some(pid) = holder.id() {
                unix::kill_group(pid as i32, libc::SIGKILL);
            }
            let _ = holder.wait().await;
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Some(mut holder) = self.holder.take() {
            if let Some(pid) = holder.id() {
                unix::kill_group(pid as i32, libc::SIGKILL);
            }
            for _ in 0..100 {
                if !matches!(holder.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

impl NodeCommands {
    /// A command in the node, in network namespace `net`, starting in `cwd` (the node's view),
    /// in a process group of its own, with no environment (the caller gives it one), keeping a
    /// container's capabilities and `extra` ones ([`unix::NODE_CAPABILITIES`] for a kubelet and
    /// its runtime).
    pub fn command(
        &self,
        net: &Network,
        cwd: &Path,
        program: impl AsRef<std::ffi::OsStr>,
        extra: u64,
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.env_clear().process_group(0);
        let entry = self.namespaces.entry(
            net.0.as_raw_fd(),
            cstring(cwd),
            self.cgroups.clone(),
            self.die_with_parent,
            false,
            unix::CONTAINER_CAPABILITIES | extra,
        );
        unix::enter(&mut cmd, entry);
        cmd
    }
}

/// `/proc/sys/net` made writable again under the read-only `/proc/sys`: what it holds is the
/// network namespace's own (forwarding, a bridge's knobs), which a node's CNI plugins set.
fn writable_net_knobs() -> Vec<Op> {
    let net = cstring("/proc/sys/net");
    vec![
        Op::Mount {
            source: Some(net.clone()),
            target: net.clone(),
            fstype: None,
            flags: MS_BIND | MS_REC,
            data: None,
            optional: false,
        },
        Op::Mount {
            source: None,
            target: net,
            fstype: None,
            flags: MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | libc::MS_NOEXEC,
            data: None,
            optional: false,
        },
    ]
}

/// A kubelet's out-of-memory watcher opens the kernel's log (`/dev/kmsg`) and gives up the
/// kubelet's start if it cannot; the node's reads as empty (the machine's log is not the cell's).
fn kernel_log() -> Vec<Op> {
    let kmsg = cstring("/dev/kmsg");
    vec![
        Op::Touch(kmsg.clone()),
        Op::Mount {
            source: Some(cstring("/dev/null")),
            target: kmsg,
            fstype: None,
            flags: MS_BIND,
            data: None,
            optional: false,
        },
    ]
}

/// The node's own `/sys/fs/cgroup`: a tmpfs with each hierarchy the cell is in mounted afresh,
/// so that its root is the node's cgroup namespace's (the cell's group).
fn cgroup_mounts() -> Vec<Op> {
    let root = "/sys/fs/cgroup";
    let flags = MS_NOSUID | MS_NODEV | libc::MS_NOEXEC;
    let mut ops = vec![Op::Mount {
        source: Some(cstring("tmpfs")),
        target: cstring(root),
        fstype: Some(cstring("tmpfs")),
        flags,
        data: Some(cstring("mode=755")),
        optional: false,
    }];
    for (dir, key) in super::cgroup::v1_hierarchies() {
        let target = cstring(format!("{root}/{dir}"));
        let data = if key.starts_with("name=") {
            format!("none,{key}")
        } else {
            key
        };
        ops.push(Op::Mkdir(target.clone()));
        ops.push(Op::Mount {
            source: Some(cstring("cgroup")),
            target,
            fstype: Some(cstring("cgroup")),
            flags,
            data: Some(cstring(data)),
            optional: false,
        });
    }
    if Path::new(root).join("unified/cgroup.procs").exists() {
        let target = cstring(format!("{root}/unified"));
        ops.push(Op::Mkdir(target.clone()));
        ops.push(Op::Mount {
            source: Some(cstring("cgroup2")),
            target,
            fstype: Some(cstring("cgroup2")),
            flags,
            data: None,
            optional: false,
        });
    }
    ops
}

/// The operations that attach `tree` (a copy of `a.host`) at `a.at`: its place made on the
/// node's `/run` (parents included), attached, then made read-only unless writable.
fn attach(a: &Attachment, tree: std::os::fd::RawFd, is_dir: bool) -> Vec<Op> {
    let mut ops = Vec::new();
    if a.at.starts_with(RUN) {
        let parents: Vec<&Path> =
            a.at.ancestors()
                .skip(1)
                .take_while(|p| p.starts_with(RUN) && *p != Path::new(RUN))
                .collect();
        ops.extend(parents.into_iter().rev().map(|p| Op::Mkdir(cstring(p))));
        ops.push(if is_dir {
            Op::Mkdir(cstring(&a.at))
        } else {
            Op::Touch(cstring(&a.at))
        });
    } else if is_dir {
        // A directory of the node over the cell's view, made there (empty) when missing.
        ops.push(Op::Mkdir(cstring(&a.at)));
    }
    ops.push(Op::Attach {
        tree,
        target: cstring(&a.at),
    });
    if !a.writable {
        ops.push(Op::Mount {
            source: None,
            target: cstring(&a.at),
            fstype: None,
            flags: MS_BIND | MS_REMOUNT | MS_RDONLY,
            data: None,
            optional: false,
        });
    }
    ops
}
