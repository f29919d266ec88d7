//! The only `unsafe` code in labcheck: what a child process does between fork and exec to build a
//! cell (the holder), a cell's node (the real node's enclosure) or to enter one (every command),
//! and killing a whole process group.
//!
//! Everything a `pre_exec` closure touches is prepared before the fork (C strings, raw fds, the
//! list of mount operations): after fork in a multi-threaded process only async-signal-safe calls
//! are allowed, so these closures make system calls and nothing else — no allocation, no locks.
//!
//! A PID namespace only applies to the children of the process that creates or enters it. So the
//! holder forks once more after `unshare`: that child is the cell's init (pid 1), it builds the
//! cell's root and then reaps orphans until it is killed. A command that enters a cell forks after
//! `setns`: the outer process stays outside, waits, and exits as its child did; the child execs
//! the command as a process of the cell.

mod caps;
mod signal;

use caps::drop_capabilities;
pub use caps::{CAP_NET_ADMIN, CONTAINER_CAPABILITIES, NODE_CAPABILITIES};
pub use signal::{kill_group, kill_process, stop_group};

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// One step of building a cell's root, run by the cell's init before `pivot_root`.
#[derive(Clone, Debug)]
pub enum Op {
    Mount {
        source: Option<CString>,
        target: CString,
        fstype: Option<CString>,
        flags: libc::c_ulong,
        data: Option<CString>,
        /// A missing target is not an error (a `/proc` file this kernel lacks).
        optional: bool,
    },
    Mkdir(CString),
    /// Creates an empty file to bind a device onto.
    Touch(CString),
    Symlink {
        target: CString,
        link: CString,
    },
    /// Attaches a detached copy of a host directory or file ([`clone_tree`]) at `target`.
    Attach {
        tree: RawFd,
        target: CString,
    },
    /// Changes the working directory (overlay options then name the cell's layers relative to
    /// it, so the cell's mount table shows no host path).
    Chdir(CString),
}

/// What every holder's init does: the holder joins `cgroups` (its descendants follow it) and, but
/// for a kept cell's, dies with the harness; its init carries out `ops` and, once ready, blanks
/// the harness's argument area (`argv`, [`super::procfs::argv_area`]) so that its command line
/// shows no host path.
#[derive(Clone, Debug)]
pub struct Init {
    pub cgroups: Vec<CString>,
    pub ops: Vec<Op>,
    pub die_with_parent: bool,
    pub argv: Option<(usize, usize)>,
}

/// What the holder of a cell sets up in its fresh namespaces.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The cell's root, mounted by `init.ops` and then made `/` with `pivot_root`.
    pub root: CString,
    pub hostname: CString,
    pub new_net: bool,
    pub init: Init,
}

/// What the holder of a cell's node sets up: it joins the cell's namespaces (`enter`, the mount
/// namespace last), then makes a mount namespace (a copy of the cell's), a PID namespace and a
/// cgroup namespace of its own, whose init carries out `init.ops` (no `pivot_root`: the root is
/// already the cell's).
#[derive(Clone, Debug)]
pub struct NodeSetup {
    pub enter: Vec<(RawFd, libc::c_int)>,
    pub init: Init,
}

/// How a child enters a cell, prepared before the fork.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Namespaces to join in this order (fd, `CLONE_NEW*`), the mount namespace last.
    pub namespaces: Vec<(RawFd, libc::c_int)>,
    /// The cell's PID namespace: the command runs as a process of the cell.
    pub pid: Option<RawFd>,
    pub cwd: Option<CString>,
    /// `cgroup.procs` files to join.
    pub cgroups: Vec<CString>,
    /// Die when the harness dies, so a crash leaves no process behind.
    pub die_with_parent: bool,
    /// The capabilities kept (a mask of `1 << CAP_*`; [`CONTAINER_CAPABILITIES`] for learner
    /// commands and Pods), or all of them.
    pub capabilities: Option<u64>,
    /// Before exec, kill every other process of the cell but its init (ends what a learner
    /// command left running). Needs `pid`.
    pub end_others: bool,
}

/// A system call's return code as a result: -1 is the call's `errno`.
pub fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn ptr(s: &Option<CString>) -> *const libc::c_char {
    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

/// Writes "0" (the calling process) into each `cgroup.procs` file.
fn join_cgroups(files: &[CString]) -> io::Result<()> {
    for f in files {
        // SAFETY: open/write/close on a C string prepared before fork.
        unsafe {
            let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            check(fd)?;
            let rc = libc::write(fd, c"0".as_ptr().cast(), 1);
            libc::close(fd);
            if rc != 1 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Marks every descriptor from 3 up close-on-exec, once at start: what labcheck inherited from
/// its caller (an open directory, a lock taken around `labcheck run`) then reaches nothing it
/// starts — no learner command, no kept cell's holder, no etcd or kube-apiserver. (Processes it
/// forks without exec close their descriptors themselves: see `relay` and `init_loop`.)
pub fn close_inherited_on_exec() {
    // SAFETY: close_range(2) takes plain integers.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if done {
        return;
    }
    // Kernels before 5.11: one descriptor at a time.
    let fds: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl(2) on a descriptor number; one that is gone (the directory's own) fails
        // with EBADF and is skipped.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Closes every descriptor from `first` up.
fn close_from(first: libc::c_uint) {
    // SAFETY: close_range(2) takes plain integers.
    unsafe {
        libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0);
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
            join_cgroups(&entry.cgroups)?;
            for &(fd, kind) in &entry.namespaces {
                check(libc::setns(fd, kind))?;
            }
            if let Some(pid) = entry.pid {
                check(libc::setns(pid, libc::CLONE_NEWPID))?;
                let child = libc::fork();
                check(child)?;
                if child > 0 {
                    relay(child);
                }
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                if entry.end_others {
                    end_others(pid)?;
                }
            }
            // A working directory the learner removed (`rm -rf /root/*`) or replaced is not the
            // harness's fault: the command starts at `/`, as a shell left in a deleted
            // directory would reach nothing there either.
            if let Some(cwd) = &entry.cwd
                && libc::chdir(cwd.as_ptr()) == -1
            {
                check(libc::chdir(c"/".as_ptr()))?;
            }
            if let Some(kept) = entry.capabilities {
                drop_capabilities(kept)?;
            }
            Ok(())
        });
    }
}

/// The outer process of an entered command: closes what it inherited (so no pipe of the harness
/// stays open through it), waits for its child in the cell and ends the same way.
///
/// # Safety
/// Only after fork; never returns.
unsafe fn relay(child: libc::pid_t) -> ! {
    // SAFETY: system calls only; `_exit` ends the process without running Rust code.
    unsafe {
        close_from(3);
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        let mut status = 0;
        loop {
            let rc = libc::waitpid(child, &mut status, 0);
            if rc == child {
                break;
            }
            if rc == -1 && errno() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(status));
    }
}

/// Kills every process of the cell but init and the caller, after making sure the caller really
/// is in the cell's PID namespace (on the host's, `kill(-1)` would end every process).
fn end_others(pid_ns: RawFd) -> io::Result<()> {
    // SAFETY: fstat/stat into zeroed structs, and kill(2).
    unsafe {
        let mut cell: libc::stat = std::mem::zeroed();
        let mut own: libc::stat = std::mem::zeroed();
        check(libc::fstat(pid_ns, &mut cell))?;
        check(libc::stat(c"/proc/self/ns/pid".as_ptr(), &mut own))?;
        if cell.st_ino != own.st_ino || cell.st_dev != own.st_dev {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        // ESRCH: nothing else runs in the cell.
        if libc::kill(-1, libc::SIGKILL) == -1 && errno() != libc::ESRCH {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Lets the child inherit `fd` (opened close-on-exec in the harness, so no other child gets it).
pub fn pass_fd(command: &mut tokio::process::Command, fd: RawFd) {
    // SAFETY: fcntl(2) on a descriptor number; no memory is involved.
    unsafe {
        command.pre_exec(move || check(libc::fcntl(fd, libc::F_SETFD, 0)));
    }
}

/// Makes `command` the holder of a new cell: new mount, UTS, IPC, PID and cgroup namespaces (and
/// a network namespace with only `lo` when `new_net`), whose init builds the cell's root from
/// `setup.init.ops` and pivots into it. The holder execs `command` once the root is ready;
/// spawning fails with the system's error when the machine does not allow it (not root, no
/// namespaces, no overlayfs).
pub fn build(command: &mut tokio::process::Command, setup: Setup) {
    let mut flags = libc::CLONE_NEWNS
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWCGROUP;
    if setup.new_net {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: as in `enter`; only system calls on data prepared before fork.
    unsafe {
        command.pre_exec(move || hold(&setup.init, &[], flags, || pivot_into(&setup)));
    }
}

/// Makes `command` the holder of a cell's node ([`NodeSetup`]).
pub fn build_node(command: &mut tokio::process::Command, setup: NodeSetup) {
    let flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWCGROUP;
    // SAFETY: as in `enter`; only system calls on data prepared before fork.
    unsafe {
        command.pre_exec(move || hold(&setup.init, &setup.enter, flags, || Ok(())));
    }
}

/// In a holder, between fork and exec: joins `init`'s groups, then the namespaces `enter`, then
/// unshares `flags` — the cgroup namespace after joining the groups, so its root is the cell's
/// group — and forks the new namespaces' init. The init carries out `init.ops`, then `then`, and
/// reports through a pipe: an error code, or nothing once it is ready (it closes every
/// descriptor); it then reaps orphans until it is killed. Returns when the init is ready.
///
/// # Safety
/// Only after fork, on data prepared before it.
unsafe fn hold(
    init: &Init,
    enter: &[(RawFd, libc::c_int)],
    flags: libc::c_int,
    then: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    // SAFETY: system calls on data prepared before fork; `_exit` ends a failed init without
    // running Rust code.
    unsafe {
        if init.die_with_parent {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        }
        join_cgroups(&init.cgroups)?;
        for &(fd, kind) in enter {
            check(libc::setns(fd, kind))?;
        }
        check(libc::unshare(flags))?;
        let mut pipe = [0; 2];
        check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
        let child = libc::fork();
        check(child)?;
        if child == 0 {
            libc::close(pipe[0]);
            let ready = check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))
                .and_then(|()| run_ops(&init.ops))
                .and_then(|()| then());
            if let Err(e) = ready {
                let code = e.raw_os_error().unwrap_or(libc::EIO);
                libc::write(pipe[1], (&raw const code).cast(), size_of::<libc::c_int>());
                libc::_exit(1);
            }
            if let Some((start, end)) = init.argv {
                blank_argv(start, end);
            }
            init_loop();
        }
        libc::close(pipe[1]);
        let mut code: libc::c_int = 0;
        let n = libc::read(pipe[0], (&raw mut code).cast(), size_of::<libc::c_int>());
        libc::close(pipe[0]);
        if n == size_of::<libc::c_int>() as isize {
            return Err(io::Error::from_raw_os_error(code));
        }
        Ok(())
    }
}

/// Overwrites the argument area with `init` and NULs.
///
/// # Safety
/// `start..end` must be this process's argument area ([`super::procfs::argv_area`], read before
/// the fork).
unsafe fn blank_argv(start: usize, end: usize) {
    // SAFETY: the area is this process's own writable memory (its initial stack).
    unsafe {
        let area = start as *mut u8;
        std::ptr::write_bytes(area, 0, end - start);
        std::ptr::copy_nonoverlapping(b"init".as_ptr(), area, 4);
    }
}

/// A detached copy of the host's `path` (a directory or a file), to attach in a cell's mount
/// namespace with [`Op::Attach`]. Its descriptor is close-on-exec.
pub fn clone_tree(path: &std::path::Path) -> io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))?;
    // SAFETY: a NUL-terminated path that lives across the call; the fd returned is owned below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// In the cell's init, its root built: makes it `/`, names the cell, brings `lo` up.
fn pivot_into(setup: &Setup) -> io::Result<()> {
    // SAFETY: system calls on C strings prepared before fork.
    unsafe {
        check(libc::chdir(setup.root.as_ptr()))?;
        check(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int)?;
        check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
        check(libc::chdir(c"/".as_ptr()))?;
        let name = setup.hostname.as_bytes();
        check(libc::sethostname(name.as_ptr().cast(), name.len()))?;
        if setup.new_net {
            loopback_up()?;
        }
        Ok(())
    }
}

/// Carries out mount operations, in order.
fn run_ops(ops: &[Op]) -> io::Result<()> {
    // SAFETY: system calls on C strings and descriptors prepared before fork.
    unsafe {
        for op in ops {
            match op {
                Op::Mount {
                    source,
                    target,
                    fstype,
                    flags,
                    data,
                    optional,
                } => {
                    let rc = libc::mount(
                        ptr(source),
                        target.as_ptr(),
                        ptr(fstype),
                        *flags,
                        ptr(data).cast(),
                    );
                    if rc == -1 && !(*optional && errno() == libc::ENOENT) {
                        return Err(io::Error::last_os_error());
                    }
                }
                Op::Mkdir(path) => {
                    if libc::mkdir(path.as_ptr(), 0o755) == -1 && errno() != libc::EEXIST {
                        return Err(io::Error::last_os_error());
                    }
                }
                Op::Touch(path) => {
                    let fd = libc::open(
                        path.as_ptr(),
                        libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                        0o644,
                    );
                    check(fd)?;
                    libc::close(fd);
                }
                Op::Symlink { target, link } => {
                    check(libc::symlink(target.as_ptr(), link.as_ptr()))?;
                }
                Op::Attach { tree, target } => {
                    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
                    check(libc::syscall(
                        libc::SYS_move_mount,
                        *tree,
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        target.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    ) as libc::c_int)?;
                }
                Op::Chdir(dir) => check(libc::chdir(dir.as_ptr()))?,
            }
        }
        Ok(())
    }
}

/// The cell's init once its root is built: holds no descriptor, ignores every signal it can, and
/// reaps the orphans that the kernel gives it, until it is killed. Its end ends the cell.
fn init_loop() -> ! {
    // SAFETY: signal-mask and wait system calls on zeroed local structs.
    unsafe {
        close_from(0);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        loop {
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            libc::sigwaitinfo(&chld, std::ptr::null_mut());
        }
    }
}

/// Brings `lo` up in the current network namespace.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a plain socket + ioctl on a zeroed, correctly sized ifreq.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
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

/// Removes the extended attribute `name` of `path` itself (a symlink is not followed). An
/// attribute the file does not have is not an error.
pub fn remove_xattr(path: &std::path::Path, name: &std::ffi::CStr) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))?;
    // SAFETY: both pointers are NUL-terminated C strings that live across the call.
    let rc = unsafe { libc::lremovexattr(path.as_ptr(), name.as_ptr()) };
    if rc == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENODATA | libc::EOPNOTSUPP) => Ok(()),
        _ => Err(error),
    }
}
