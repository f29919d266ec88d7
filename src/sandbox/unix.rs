//! The only `unsafe` code in labcheck: what a child process does between fork and exec to build a
//! cell (the holder) or to enter one (every command), confining a process with Landlock, and
//! killing a whole process group.
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

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

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
}

/// What the holder of a cell sets up in its fresh namespaces.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The cell's root, mounted by `ops` and then made `/` with `pivot_root`.
    pub root: CString,
    pub ops: Vec<Op>,
    pub hostname: CString,
    pub new_net: bool,
    /// `cgroup.procs` files the holder joins before it forks (its descendants follow it).
    pub cgroups: Vec<CString>,
    pub die_with_parent: bool,
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
    /// Keep only the capabilities a container's root has (learner commands).
    pub drop_capabilities: bool,
    /// Before exec, kill every other process of the cell but its init (ends what a learner
    /// command left running). Needs `pid`.
    pub end_others: bool,
}

/// The capabilities learner commands keep: Docker's default set without `CAP_MKNOD`. Everything
/// else (mounting, modules, raw I/O, rebooting, the host's network setup, `open_by_handle_at`)
/// reaches beyond the cell.
const KEPT_CAPABILITIES: &[libc::c_int] = &[
    0,  // CAP_CHOWN
    1,  // CAP_DAC_OVERRIDE
    3,  // CAP_FOWNER
    4,  // CAP_FSETID
    5,  // CAP_KILL
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    8,  // CAP_SETPCAP
    10, // CAP_NET_BIND_SERVICE
    13, // CAP_NET_RAW
    18, // CAP_SYS_CHROOT
    29, // CAP_AUDIT_WRITE
    31, // CAP_SETFCAP
];

fn check(rc: libc::c_int) -> io::Result<()> {
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
            if entry.drop_capabilities {
                drop_capabilities()?;
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

/// Lowers the capability bounding set to [`KEPT_CAPABILITIES`]: what the command execs keeps no
/// more than that, setuid programs included.
fn drop_capabilities() -> io::Result<()> {
    for cap in 0..64 {
        if KEPT_CAPABILITIES.contains(&cap) {
            continue;
        }
        // SAFETY: prctl(2) with integer arguments.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if rc == -1 && errno() != libc::EINVAL {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Landlock's ABI (`landlock_create_ruleset` with `LANDLOCK_CREATE_RULESET_VERSION`), `None`
/// when the kernel has no Landlock.
pub fn landlock_abi() -> Option<i64> {
    // SAFETY: a query that reads no memory (null attributes, size 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    (abi > 0).then_some(abi)
}

/// `struct landlock_ruleset_attr` (its three fields; the kernel takes the larger size while the
/// fields it does not know are zero).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed, as the kernel declares it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Landlock's file system rights: execute, write, and every way of making, removing, renaming,
/// linking or truncating a file (ABI 1–3).
const LL_EXECUTE: u64 = 1 << 0;
const LL_WRITE_FILE: u64 = 1 << 1;
const LL_CHANGE_ABI1: u64 = (1 << 4) // REMOVE_DIR
    | (1 << 5) // REMOVE_FILE
    | (1 << 6) // MAKE_CHAR
    | (1 << 7) // MAKE_DIR
    | (1 << 8) // MAKE_REG
    | (1 << 9) // MAKE_SOCK
    | (1 << 10) // MAKE_FIFO
    | (1 << 11) // MAKE_BLOCK
    | (1 << 12); // MAKE_SYM
const LL_REFER: u64 = 1 << 13;
const LL_TRUNCATE: u64 = 1 << 14;
/// Scopes (ABI 6): no signal to, and no abstract Unix socket of, a process outside the domain.
const LL_SCOPE_ALL: u64 = (1 << 0) | (1 << 1);

/// Confines a command with Landlock before it execs: it may execute only `executables` (itself,
/// what it starts, their ELF interpreters) and write only beneath `writable`, to `/dev/null` and
/// to what it was given open; with ABI 6, it may not signal a process outside its domain nor
/// reach its abstract Unix sockets either. What it starts inherits all of it. Made before the
/// fork; errors if the kernel has no Landlock.
pub fn confine(
    command: &mut tokio::process::Command,
    executables: &[std::path::PathBuf],
    writable: &[std::path::PathBuf],
) -> io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;

    let abi = landlock_abi().ok_or_else(|| io::Error::other("the kernel has no Landlock"))?;
    let mut fs = LL_EXECUTE | LL_WRITE_FILE | LL_CHANGE_ABI1;
    if abi >= 2 {
        fs |= LL_REFER;
    }
    if abi >= 3 {
        fs |= LL_TRUNCATE;
    }
    let attr = RulesetAttr {
        handled_access_fs: fs,
        handled_access_net: 0,
        scoped: if abi >= 6 { LL_SCOPE_ALL } else { 0 },
    };
    // SAFETY: `attr` is a live, correctly sized struct; the fd returned is owned below.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd (close-on-exec) that nothing else owns.
    let ruleset = unsafe { OwnedFd::from_raw_fd(rc as RawFd) };
    let allow = |path: &std::path::Path, access: u64| -> io::Result<()> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(path)?;
        let rule = PathBeneathAttr {
            allowed_access: access,
            parent_fd: file.as_raw_fd(),
        };
        // SAFETY: `rule` is live for the call; the kernel copies it.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                1u32, // LANDLOCK_RULE_PATH_BENEATH
                &rule as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    for program in executables {
        allow(program, LL_EXECUTE)?;
    }
    allow(std::path::Path::new("/dev/null"), LL_WRITE_FILE)?;
    for dir in writable {
        allow(dir, fs & !LL_EXECUTE)?;
    }
    let fd = ruleset.as_raw_fd();
    // SAFETY: system calls only, on an fd opened before the fork (kept open by the closure).
    unsafe {
        command.pre_exec(move || {
            let _keep = &ruleset;
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// Lets the child inherit `fd` (opened close-on-exec in the harness, so no other child gets it).
pub fn pass_fd(command: &mut tokio::process::Command, fd: RawFd) {
    // SAFETY: fcntl(2) on a descriptor number; no memory is involved.
    unsafe {
        command.pre_exec(move || check(libc::fcntl(fd, libc::F_SETFD, 0)));
    }
}

/// Makes `command` the holder of a new cell: new mount, UTS, IPC and PID namespaces (and a network
/// namespace with only `lo` when `new_net`), whose init builds the cell's root from `setup.ops`
/// and pivots into it. The holder execs `command` once the root is ready; spawning fails with the
/// system's error when the machine does not allow it (not root, no namespaces, no overlayfs).
pub fn build(command: &mut tokio::process::Command, setup: Setup) {
    // SAFETY: as in `enter`; only system calls on data prepared before fork.
    unsafe {
        command.pre_exec(move || {
            if setup.die_with_parent {
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            }
            join_cgroups(&setup.cgroups)?;
            let mut flags =
                libc::CLONE_NEWNS | libc::CLONE_NEWUTS | libc::CLONE_NEWIPC | libc::CLONE_NEWPID;
            if setup.new_net {
                flags |= libc::CLONE_NEWNET;
            }
            check(libc::unshare(flags))?;
            let mut pipe = [0; 2];
            check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
            let child = libc::fork();
            check(child)?;
            if child == 0 {
                libc::close(pipe[0]);
                let code = match init_root(&setup) {
                    Ok(()) => 0,
                    Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
                };
                if code != 0 {
                    libc::write(pipe[1], (&raw const code).cast(), size_of::<libc::c_int>());
                    libc::_exit(1);
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
        });
    }
}

/// In the cell's init: builds the root and makes it `/`.
fn init_root(setup: &Setup) -> io::Result<()> {
    // SAFETY: system calls on C strings prepared before fork.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        for op in &setup.ops {
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
            }
        }
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

/// Sends `signal` to every process of group `pgid`. A group that no longer exists is not an error.
pub fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid addresses a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Sends `signal` to process `pid`. A process that no longer exists is not an error.
pub fn kill_process(pid: i32, signal: i32) {
    if pid > 0 {
        // SAFETY: kill(2) with a positive pid addresses one process; no memory is involved.
        unsafe {
            libc::kill(pid, signal);
        }
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
