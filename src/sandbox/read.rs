//! Reading a file for a check, as the learner sees it: regular files only, up to [`READ_LIMIT`],
//! never a learner's link into the kernel's files, and with a learner's copied tree (`grade
//! --root`) never a file outside it.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The largest file a check reads.
pub const READ_LIMIT: u64 = 64 << 20;

/// Reads the regular file at `path`. `confine`: the only directories it may lie in, links
/// resolved.
pub(super) fn read_regular(path: &Path, confine: Option<&[PathBuf]>) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    let within = |p: &Path| confine.is_none_or(|dirs| dirs.iter().any(|d| p.starts_with(d)));
    if !within(path) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "not in the learner's tree (grade --root)",
        ));
    }
    // A learner's link that leads into the kernel's files (/proc/kmsg, /sys, /dev/…) is not
    // followed: a check reads those only where the lab names them itself.
    let real = std::fs::canonicalize(path)?;
    let kernel = |p: &Path| ["/proc", "/sys", "/dev"].iter().any(|k| p.starts_with(k));
    if kernel(&real) && !kernel(path) {
        return Err(refused(format!(
            "a link to {}: a check does not follow links into the kernel's files",
            real.display()
        )));
    }
    if !within(&real) {
        return Err(refused(format!(
            "a link to {}, out of the learner's tree: a check reads only the tree's files",
            real.display()
        )));
    }
    not_special(&std::fs::metadata(&real)?)?;
    // Opened without blocking (a FIFO opens at once) and looked at again through the
    // descriptor: what is read is what was looked at.
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(&real)?;
    let meta = file.metadata()?;
    not_special(&meta)?;
    let too_large = |len: u64| {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{len} bytes, over the {} MiB a check reads",
                READ_LIMIT >> 20
            ),
        )
    };
    if meta.len() > READ_LIMIT {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(READ_LIMIT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > READ_LIMIT {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A FIFO, socket, device or directory is refused: only a regular file is read.
fn not_special(meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file"),
    ))
}
