//! The only `unsafe` code in labcheck: what a child process does between fork and exec to enter a
//! cell (its mount and network namespaces, its own process group, death with its parent), how the
//! holder process of a cell builds those namespaces, and killing a whole process group.
//!
//! Everything a `pre_exec` closure touches is prepared before the fork (C strings, raw fds): after
//! fork in a multi-threaded process only async-signal-safe calls are allowed.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// How a child enters a cell, prepared before the fork.
#[derive(Clone, Debug)]
pub struct Entry {
    pub net_fd: Option<RawFd>,
    pub mnt_fd: Option<RawFd>,
    pub cwd: Option<CString>,
    /// Die when the harness dies, so a crash leaves no process behind.
    pub die_with_parent: bool,
}

/// An overlay mount the holder makes: `target` shows `lower` (the host's directory) with writes
/// landing in `upper`.
#[derive(Clone, Debug)]
pub struct Overlay {
    pub target: CString,
    pub options: CString,
}

/// What the holder of a cell sets up in its fresh namespaces before it execs.
#[derive(Clone, Debug)]
pub struct Setup {
    pub overlays: Vec<Overlay>,
    /// Mount a fresh tmpfs here (the cell's `/tmp`).
    pub tmpfs: Vec<CString>,
    pub new_net: bool,
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes `command` enter the cell described by `entry` in the child, before exec.
pub fn enter(command: &mut tokio::process::Command, entry: Entry) {
    // SAFETY: the closure only makes async-signal-safe system calls on data prepared before fork.
    unsafe {
        command.pre_exec(move || {
            if entry.die_with_parent {
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            }
            if let Some(fd) = entry.net_fd {
                check(libc::setns(fd, libc::CLONE_NEWNET))?;
            }
            if let Some(fd) = entry.mnt_fd {
                check(libc::setns(fd, libc::CLONE_NEWNS))?;
            }
            if let Some(cwd) = &entry.cwd {
                check(libc::chdir(cwd.as_ptr()))?;
            }
            Ok(())
        });
    }
}

/// Lets the child inherit `fd` (opened close-on-exec in the harness, so no other child gets it).
pub fn pass_fd(command: &mut tokio::process::Command, fd: RawFd) {
    // SAFETY: fcntl(2) on a descriptor number; no memory is involved.
    unsafe {
        command.pre_exec(move || check(libc::fcntl(fd, libc::F_SETFD, 0)));
    }
}

/// Makes `command` (the cell's holder) create new mount and network namespaces and mount the
/// cell's overlays in them. Fails at spawn with the system's error when the machine does not allow
/// it (not root, no namespaces, no overlayfs).
pub fn build(command: &mut tokio::process::Command, setup: Setup, die_with_parent: bool) {
    // SAFETY: as in `enter`; only system calls on data prepared before fork.
    unsafe {
        command.pre_exec(move || {
            if die_with_parent {
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            }
            let mut flags = libc::CLONE_NEWNS;
            if setup.new_net {
                flags |= libc::CLONE_NEWNET;
            }
            check(libc::unshare(flags))?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for o in &setup.overlays {
                check(libc::mount(
                    c"overlay".as_ptr(),
                    o.target.as_ptr(),
                    c"overlay".as_ptr(),
                    0,
                    o.options.as_ptr().cast(),
                ))?;
            }
            for t in &setup.tmpfs {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    t.as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    c"mode=1777".as_ptr().cast(),
                ))?;
            }
            if setup.new_net {
                loopback_up()?;
            }
            Ok(())
        });
    }
}

/// Brings `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a plain socket + ioctl on a zeroed, correctly sized ifreq.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        check(sock)?;
        let mut req: libc::ifreq = std::mem::zeroed();
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        let res = check(libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req)).and_then(|()| {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            check(libc::ioctl(sock, libc::SIOCSIFFLAGS, &req))
        });
        libc::close(sock);
        res
    }
}

/// Sends `signal` to every process of group `pgid`. A group that no longer exists is not an error.
pub fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid addresses a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, signal);
    }
}
