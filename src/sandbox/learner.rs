//! How a learner command enters the cell ([`Namespaces::entry`]: every namespace of the cell,
//! its control group and cgroup namespace, a container's capabilities), for the sandbox's own
//! commands and for those that outlive a borrow of it and may run in another network namespace
//! than the cell's ([`LearnerCommands`]: what `kubectl exec` into a live mesh's Pod runs, in the
//! Pod's network). A cell's node ([`super::node`]) is entered the same way, into its own
//! namespaces.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use super::{Network, unix};

/// A holder's namespaces but the network, held open: those every command entering it joins.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) ipc: File,
    pub(super) uts: File,
    pub(super) mnt: File,
    /// The holder's children's PID namespace.
    pub(super) pid: File,
    /// Rooted at the cell's control group: a process sees no group above it.
    pub(super) cgroup: File,
}

impl Namespaces {
    /// Holds the namespaces of process `pid` (a holder) open: its own, and its children's PID
    /// namespace.
    pub(super) fn open(pid: u32) -> std::io::Result<Namespaces> {
        let open = |ns: &str| {
            let path = format!("/proc/{pid}/ns/{ns}");
            File::open(&path).map_err(|e| std::io::Error::new(e.kind(), format!("{path}: {e}")))
        };
        Ok(Namespaces {
            ipc: open("ipc")?,
            uts: open("uts")?,
            mnt: open("mnt")?,
            pid: open("pid_for_children")?,
            cgroup: open("cgroup")?,
        })
    }

    /// How a command enters: these namespaces and network namespace `net`, the control group's
    /// `cgroups` (joined before the cgroup namespace), starting in `cwd`, keeping the
    /// `capabilities` mask; ending every other process of the PID namespace first when
    /// `end_others`.
    pub(super) fn entry(
        &self,
        net: RawFd,
        cwd: CString,
        cgroups: Vec<CString>,
        die_with_parent: bool,
        end_others: bool,
        capabilities: u64,
    ) -> unix::Entry {
        unix::Entry {
            namespaces: vec![
                (self.ipc.as_raw_fd(), libc::CLONE_NEWIPC),
                (self.uts.as_raw_fd(), libc::CLONE_NEWUTS),
                (net, libc::CLONE_NEWNET),
                (self.cgroup.as_raw_fd(), libc::CLONE_NEWCGROUP),
                (self.mnt.as_raw_fd(), libc::CLONE_NEWNS),
            ],
            pid: Some(self.pid.as_raw_fd()),
            cwd: Some(cwd),
            cgroups,
            die_with_parent,
            capabilities: Some(capabilities),
            end_others,
        }
    }
}
/// Makes learner commands in a network namespace of the caller's choosing.
#[derive(Clone, Debug)]
pub struct LearnerCommands {
    pub(super) namespaces: Arc<Namespaces>,
    pub(super) cgroups: Vec<CString>,
    pub(super) env: BTreeMap<String, OsString>,
    pub(super) die_with_parent: bool,
}

impl LearnerCommands {
    /// The environment learner commands see.
    pub fn env(&self) -> &BTreeMap<String, OsString> {
        &self.env
    }

    /// A command inside the cell, in network namespace `net`, starting in `cwd` (the cell's
    /// view), in a process group of its own, with no environment (the caller gives it one).
    pub fn command(
        &self,
        net: &Network,
        cwd: &std::path::Path,
        program: impl AsRef<std::ffi::OsStr>,
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.env_clear().process_group(0);
        let entry = self.namespaces.entry(
            net.0.as_raw_fd(),
            super::cstring(cwd),
            self.cgroups.clone(),
            self.die_with_parent,
            false,
            unix::CONTAINER_CAPABILITIES,
        );
        unix::enter(&mut cmd, entry);
        cmd
    }
}
