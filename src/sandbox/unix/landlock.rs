//! Landlock: what a confined process may execute and write, made before the fork and applied
//! between fork and exec.

use std::io;
use std::os::fd::RawFd;

use super::check;

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
