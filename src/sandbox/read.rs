//! Reading a file for a check, as the learner sees it: regular files only, up to [`READ_LIMIT`],
//! never a learner's link into the kernel's files.

use std::io;
use std::path::Path;

/// The largest file a check reads.
pub const READ_LIMIT: u64 = 64 << 20;

pub(super) fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    // A learner's link that leads into the kernel's files (/proc/kmsg, /sys, /dev/…) is not
    // followed: a check reads those only where the lab names them itself.
    let real = std::fs::canonicalize(path)?;
    let kernel = |p: &Path| ["/proc", "/sys", "/dev"].iter().any(|k| p.starts_with(k));
    if kernel(&real) && !kernel(path) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a link to {}: a check does not follow links into the kernel's files",
                real.display()
            ),
        ));
    }
    let meta = std::fs::metadata(path)?;
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
        ""
    };
    if !what.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file"),
        ));
    }
    if meta.len() > READ_LIMIT {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "{} bytes, over the {} MiB a check reads",
                meta.len(),
                READ_LIMIT >> 20
            ),
        ));
    }
    std::fs::read(path)
}
