//! How a learner command enters the cell ([`Namespaces::entry`]: every namespace of the cell,
//! its control group, a container's capabilities), for the sandbox's own commands and for those
//! that outlive a borrow of it and may run in another network namespace than the cell's
//! ([`LearnerCommands`]: what `kubectl exec` into a live mesh's Pod runs, in the Pod's network).

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use super::{Network, unix};

/// The cell's namespaces but the network, held open: those every learner command enters.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) ipc: File,
    pub(super) uts: File,
    pub(super) mnt: File,
    /// The cell's PID namespace (the holder's children's).
    pub(super) pid: File,
}

impl Namespaces {
    /// How a learner command enters the cell: these namespaces and network namespace `net`, the
    /// control group's `cgroups`, starting in `cwd`, with a container's capabilities; ending every
    /// other process of the cell first when `end_others`.
    pub(super) fn entry(
        &self,
        net: RawFd,
        cwd: CString,
        cgroups: Vec<CString>,
        die_with_parent: bool,
        end_others: bool,
    ) -> unix::Entry {
        unix::Entry {
            namespaces: vec![
                (self.ipc.as_raw_fd(), libc::CLONE_NEWIPC),
                (self.uts.as_raw_fd(), libc::CLONE_NEWUTS),
                (net, libc::CLONE_NEWNET),
                (self.mnt.as_raw_fd(), libc::CLONE_NEWNS),
            ],
            pid: Some(self.pid.as_raw_fd()),
            cwd: Some(cwd),
            cgroups,
            die_with_parent,
            drop_capabilities: true,
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
        );
        unix::enter(&mut cmd, entry);
        cmd
    }
}
