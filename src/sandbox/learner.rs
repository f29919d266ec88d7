//! Learner commands that outlive a borrow of the sandbox and may run in another network
//! namespace than the cell's: what `kubectl exec` into a live mesh's Pod runs. The command
//! enters every namespace of the cell but the network (the Pod's instead), joins the cell's
//! control group and keeps only a container's capabilities, as any learner command does.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use super::{Network, unix};

/// The cell's namespaces (all but the network), held open.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) ipc: File,
    pub(super) uts: File,
    pub(super) mnt: File,
    pub(super) pid: File,
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
        let ns = &self.namespaces;
        let entry = unix::Entry {
            namespaces: vec![
                (ns.ipc.as_raw_fd(), libc::CLONE_NEWIPC),
                (ns.uts.as_raw_fd(), libc::CLONE_NEWUTS),
                (net.0.as_raw_fd(), libc::CLONE_NEWNET),
                (ns.mnt.as_raw_fd(), libc::CLONE_NEWNS),
            ],
            pid: Some(ns.pid.as_raw_fd()),
            cwd: Some(super::cstring(cwd)),
            cgroups: self.cgroups.clone(),
            die_with_parent: self.die_with_parent,
            drop_capabilities: true,
            end_others: false,
        };
        unix::enter(&mut cmd, entry);
        cmd
    }
}
