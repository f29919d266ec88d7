//! Copying a tree of files into a cell: read on the host side (where the repository is, wherever
//! it was cloned), written inside the cell's mount namespace. Symlinks are copied as symlinks and
//! never followed, so a link in a fixture cannot pull the host's files into a cell. And
//! [`copy`]: a tree copied as it is on the host (an overlay's upper layer, etcd's data), for
//! checkpoints and cluster templates.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One entry of a tree, relative to its root (the empty path is the root itself).
#[derive(Clone, Debug)]
pub enum Entry {
    Dir(PathBuf),
    File {
        path: PathBuf,
        bytes: Vec<u8>,
        mode: u32,
    },
    Symlink {
        path: PathBuf,
        target: PathBuf,
    },
}

/// The largest tree [`read`] takes, so a fixture pointing at a huge directory fails clearly.
pub const MAX_BYTES: u64 = 256 << 20;

/// Reads the tree at `root` (a file, a directory or a symlink) without following symlinks; a
/// device, FIFO or socket in it, or more than [`MAX_BYTES`] of files, is an error.
pub fn read(root: &Path) -> io::Result<Vec<Entry>> {
    let mut walk = Walk::default();
    walk.read_into(root, PathBuf::new())?;
    Ok(walk.out)
}

/// What [`read_lenient`] read.
pub struct Lenient {
    pub entries: Vec<Entry>,
    /// The bytes of the files read.
    pub bytes: u64,
    /// Whether files were left out for the budget.
    pub cut: bool,
}

/// Like [`read`], but devices, FIFOs and sockets (an overlay's whiteouts among them) are left
/// out, and so are files past `max_bytes` in all.
pub fn read_lenient(root: &Path, max_bytes: u64) -> io::Result<Lenient> {
    let mut walk = Walk {
        lenient: Some(max_bytes),
        ..Walk::default()
    };
    walk.read_into(root, PathBuf::new())?;
    Ok(Lenient {
        entries: walk.out,
        bytes: walk.total,
        cut: walk.cut,
    })
}

#[derive(Default)]
struct Walk {
    out: Vec<Entry>,
    total: u64,
    /// Leniency: the byte budget, special files skipped.
    lenient: Option<u64>,
    /// Whether files were left out for the budget.
    cut: bool,
}

impl Walk {
    fn read_into(&mut self, from: &Path, rel: PathBuf) -> io::Result<()> {
        let meta = std::fs::symlink_metadata(from)?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            self.out.push(Entry::Symlink {
                path: rel,
                target: std::fs::read_link(from)?,
            });
        } else if kind.is_dir() {
            self.out.push(Entry::Dir(rel.clone()));
            let mut names: Vec<_> = std::fs::read_dir(from)?
                .map(|e| e.map(|e| e.file_name()))
                .collect::<io::Result<_>>()?;
            names.sort();
            for name in names {
                self.read_into(&from.join(&name), rel.join(&name))?;
            }
        } else if kind.is_file() {
            let total = self.total + meta.len();
            match self.lenient {
                Some(budget) if total > budget => {
                    self.cut = true;
                    return Ok(());
                }
                None if total > MAX_BYTES => {
                    return Err(io::Error::other(format!(
                        "more than {} MiB to copy",
                        MAX_BYTES >> 20
                    )));
                }
                _ => {}
            }
            self.total = total;
            self.out.push(Entry::File {
                path: rel,
                bytes: std::fs::read(from)?,
                mode: meta.permissions().mode() & 0o7777,
            });
        } else if self.lenient.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is neither a file, a directory nor a symlink",
                    from.display()
                ),
            ));
        }
        Ok(())
    }
}

/// Writes `entries` under `to` (call it inside the cell's mount namespace). Files are written
/// anew: no extended attribute (a file capability among them) and no set-id bit comes along.
pub fn write(entries: &[Entry], to: &Path) -> io::Result<()> {
    let at = |rel: &Path| {
        if rel.as_os_str().is_empty() {
            to.to_owned()
        } else {
            to.join(rel)
        }
    };
    for entry in entries {
        match entry {
            Entry::Dir(rel) => std::fs::create_dir_all(at(rel))?,
            Entry::File { path, bytes, mode } => {
                let dst = at(path);
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&dst, bytes)?;
                // Never setuid, setgid or sticky: what a cell wrote must not run as root on the
                // host (leftovers lie in the report directory).
                let mode = *mode & 0o777;
                std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode))?;
            }
            Entry::Symlink { path, target } => {
                let dst = at(path);
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                let _ = std::fs::remove_file(&dst);
                std::os::unix::fs::symlink(target, &dst)?;
            }
        }
    }
    Ok(())
}

/// Copies the tree `from` to `to` (which must not exist) as it is: owners, modes, times,
/// extended attributes (an overlay's opaque directories), whiteouts (device 0:0) and symlinks,
/// sparse files staying sparse. GNU `cp -a` does exactly that.
pub async fn copy(from: &Path, to: &Path) -> io::Result<()> {
    if !from.exists() {
        return std::fs::create_dir_all(to);
    }
    let out = tokio::process::Command::new("cp")
        .args(["-a", "--sparse=always", "--no-target-directory"])
        .arg(from)
        .arg(to)
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "cp -a {} {}: {}",
            from.display(),
            to.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Takes every way to gain privilege off the files under `dir` (symlinks are not followed): the
/// setuid and setgid bits of files and directories, and file capabilities (the
/// `security.capability` attribute a learner's `setcap` leaves). A checkpoint keeps what a cell
/// wrote, never a way to run as its owner or with capabilities the learner gave a file.
pub fn drop_privileges(dir: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.is_file() {
        super::unix::remove_xattr(dir, c"security.capability")?;
    }
    let mode = meta.permissions().mode();
    if mode & 0o6000 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & !0o6000))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            drop_privileges(&entry?.path())?;
        }
    }
    Ok(())
}

/// The regular files under `dir`, at any depth, sorted; symlinks are not followed, and what
/// cannot be read is left out.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(e.path()),
                Ok(t) if t.is_file() => files.push(e.path()),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_are_copied_as_links() -> io::Result<()> {
        let src = tempfile::tempdir()?;
        std::fs::write(src.path().join("a.txt"), "a")?;
        std::os::unix::fs::symlink("/etc/hostname", src.path().join("host"))?;
        let dst = tempfile::tempdir()?;
        write(&read(src.path())?, &dst.path().join("copy"))?;
        let link = dst.path().join("copy/host");
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(std::fs::read_link(&link)?, Path::new("/etc/hostname"));
        assert_eq!(std::fs::read_to_string(dst.path().join("copy/a.txt"))?, "a");
        Ok(())
    }

    #[test]
    fn a_single_file_is_copied_to_the_destination() -> io::Result<()> {
        let src = tempfile::tempdir()?;
        std::fs::write(src.path().join("f.yaml"), "k: v")?;
        let dst = tempfile::tempdir()?;
        write(
            &read(&src.path().join("f.yaml"))?,
            &dst.path().join("x/f.yaml"),
        )?;
        assert_eq!(
            std::fs::read_to_string(dst.path().join("x/f.yaml"))?,
            "k: v"
        );
        Ok(())
    }
}
