//! The capability sets processes of a cell keep: a learner's command's and a Pod's (a
//! container's), what a traffic capture adds, a real node's daemons'; and lowering the bounding
//! set to one of them before exec.

use std::io;

/// The capabilities learner commands and a Pod's processes keep: Docker's default set without
/// `CAP_MKNOD`. Everything else (mounting, modules, raw I/O, rebooting, the host's network setup,
/// `open_by_handle_at`) reaches beyond the cell.
pub const CONTAINER_CAPABILITIES: u64 = (1 << 0) // CAP_CHOWN
    | (1 << 1) // CAP_DAC_OVERRIDE
    | (1 << 3) // CAP_FOWNER
    | (1 << 4) // CAP_FSETID
    | (1 << 5) // CAP_KILL
    | (1 << 6) // CAP_SETGID
    | (1 << 7) // CAP_SETUID
    | (1 << 8) // CAP_SETPCAP
    | (1 << 10) // CAP_NET_BIND_SERVICE
    | (1 << 13) // CAP_NET_RAW
    | (1 << 18) // CAP_SYS_CHROOT
    | (1 << 29) // CAP_AUDIT_WRITE
    | (1 << 31); // CAP_SETFCAP
/// What a Pod's traffic capture adds while it runs (`istio-init`'s `NET_ADMIN`).
pub const CAP_NET_ADMIN: u64 = 1 << 12;

/// What a node's kubelet, container runtime and network plugins keep: every capability but
/// those that reach the machine itself whatever the namespaces — loading modules, raw I/O,
/// the clock, rebooting, the kernel's log and accounting, security modules, BPF and perf. A
/// container of the node can never hold more.
pub const NODE_CAPABILITIES: u64 = !((1 << 16) // CAP_SYS_MODULE
    | (1 << 17) // CAP_SYS_RAWIO
    | (1 << 20) // CAP_SYS_PACCT
    | (1 << 22) // CAP_SYS_BOOT
    | (1 << 25) // CAP_SYS_TIME
    | (1 << 26) // CAP_SYS_TTY_CONFIG
    | (1 << 28) // CAP_LEASE
    | (1 << 30) // CAP_AUDIT_CONTROL
    | (1 << 32) // CAP_MAC_OVERRIDE
    | (1 << 33) // CAP_MAC_ADMIN
    | (1 << 34) // CAP_SYSLOG
    | (1 << 35) // CAP_WAKE_ALARM
    | (1 << 36) // CAP_BLOCK_SUSPEND
    | (1 << 38) // CAP_PERFMON
    | (1 << 39)); // CAP_BPF

/// Lowers the capability bounding set to `kept`: what the command execs keeps no more than
/// that, setuid programs included.
pub(super) fn drop_capabilities(kept: u64) -> io::Result<()> {
    for cap in 0..64 {
        if kept & (1 << cap) != 0 {
            continue;
        }
        // SAFETY: prctl(2) with integer arguments.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc == -1 && super::errno() != libc::EINVAL {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
