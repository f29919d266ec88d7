//! Writing beneath a directory whose contents another side controls (a Pod's directory, where
//! its processes write; a cell's upper layer, which holds what the learner wrote): every path is
//! walked one component at a time from a descriptor of the directory, `..` and absolute
//! components are never taken, and a symbolic link on the way is refused (`ELOOP`/`ENOTDIR`),
//! never followed — so nothing the harness writes for that side lands outside the directory.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};

/// A directory to write beneath.
#[derive(Debug)]
pub struct Beneath(OwnedFd);

/// The flags of every step of a walk.
fn walk_flags() -> OFlag {
    OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_RDONLY
}

/// A path of a Pod's spec resolved as inside a container's root: absolute components dropped and
/// `..` clamped at the root (`/../../etc/x` is `etc/x`), as runc resolves a mount path inside a
/// root. What remains names no directory above the one it is taken beneath.
pub fn clamp(path: &Path) -> PathBuf {
    let mut inside = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => inside.push(name),
            Component::ParentDir => {
                inside.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    inside
}

impl Beneath {
    /// Opens `dir` itself (the harness's own path: a link there is followed).
    pub fn open(dir: &Path) -> io::Result<Beneath> {
        let fd = nix::fcntl::open(dir, walk_flags() - OFlag::O_NOFOLLOW, Mode::empty())?;
        Ok(Beneath(fd))
    }

    /// The directory at `rel` (its normal components; see [`clamp`]), made with `mode` where it
    /// is missing (`make` says so for each prefix; `None`: the directory must exist).
    pub fn dir(&self, rel: &Path, make: impl Fn(&Path) -> Option<Mode>) -> io::Result<Beneath> {
        let mut current = self.0.try_clone()?;
        let mut prefix = PathBuf::new();
        for name in clamp(rel).iter() {
            prefix.push(name);
            if let Some(mode) = make(&prefix) {
                match mkdirat(current.as_fd(), name, mode) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            current = openat(current.as_fd(), name, walk_flags(), Mode::empty())
                .map_err(|e| refused(&prefix, e))?;
        }
        Ok(Beneath(current))
    }

    /// Writes `bytes` to the file `name` in this directory with `mode`, replacing a file there (a
    /// link there is replaced, not followed).
    pub fn write(&self, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        if Path::new(name).components().count() != 1
            || !matches!(
                Path::new(name).components().next(),
                Some(Component::Normal(_))
            )
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file name", Path::new(name).display()),
            ));
        }
        match nix::unistd::unlinkat(
            self.0.as_fd(),
            name,
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        ) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(self.0.as_fd(), name, flags, Mode::from_bits_truncate(0o600))?;
        let file = std::fs::File::from(fd);
        io::Write::write_all(&mut &file, bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))
    }

    /// Makes an overlay whiteout (a 0:0 character device) named `name` in this directory.
    pub fn whiteout(&self, name: &OsStr) -> io::Result<()> {
        use nix::sys::stat::{SFlag, mknodat};
        mknodat(
            self.0.as_fd(),
            name,
            SFlag::S_IFCHR,
            Mode::empty(),
            nix::sys::stat::makedev(0, 0),
        )
        .map_err(io::Error::from)
    }

    /// What is at `name` in this directory (a link is not followed), if anything.
    pub fn stat(&self, name: &OsStr) -> io::Result<Option<nix::sys::stat::FileStat>> {
        use nix::fcntl::AtFlags;
        match nix::sys::stat::fstatat(self.0.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives the entry `name` owner `uid`:`gid` and `mode` (a link is not followed).
    pub fn own(&self, name: &OsStr, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
        use nix::fcntl::AtFlags;
        nix::unistd::fchownat(
            self.0.as_fd(),
            name,
            Some(nix::unistd::Uid::from_raw(uid)),
            Some(nix::unistd::Gid::from_raw(gid)),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )?;
        nix::sys::stat::fchmodat(
            self.0.as_fd(),
            name,
            Mode::from_bits_truncate(mode & 0o7777),
            nix::sys::stat::FchmodatFlags::NoFollowSymlink,
        )
        .map_err(io::Error::from)
    }
}

/// A step of a walk that met a link or a file where a directory was to be.
fn refused(prefix: &Path, e: Errno) -> io::Error {
    match e {
        Errno::ELOOP | Errno::ENOTDIR => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a link or a file, not a directory: not followed",
                prefix.display()
            ),
        ),
        e => io::Error::from(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_clamped_inside() {
        assert_eq!(clamp(Path::new("/../../../../etc/x")), Path::new("etc/x"));
        assert_eq!(
            clamp(Path::new("/var/run/../lib/./x")),
            Path::new("var/lib/x")
        );
        assert_eq!(clamp(Path::new("/")), Path::new(""));
    }

    #[test]
    fn a_link_on_the_way_is_refused_and_nothing_is_written_through_it() {
        let root = tempfile::tempdir().expect("root");
        let outside = tempfile::tempdir().expect("outside");
        std::os::unix::fs::symlink(outside.path(), root.path().join("var"))
            .expect("a learner's link");
        let dir = Beneath::open(root.path()).expect("open");
        let err = dir
            .dir(Path::new("/var/run/secrets"), |_| {
                Some(Mode::from_bits_truncate(0o755))
            })
            .expect_err("a link is not followed");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).expect("read").count(), 0);

        std::fs::create_dir(root.path().join("etc")).expect("etc");
        std::os::unix::fs::symlink(
            outside.path().join("x"),
            root.path().join("etc/root-cert.pem"),
        )
        .expect("a link to a file outside");
        let etc = dir.dir(Path::new("etc"), |_| None).expect("etc");
        etc.write(OsStr::new("root-cert.pem"), b"cert", 0o644)
            .expect("the link is replaced");
        assert!(!outside.path().join("x").exists());
        assert_eq!(
            std::fs::read(root.path().join("etc/root-cert.pem")).expect("read"),
            b"cert"
        );
        assert!(etc.write(OsStr::new("../x"), b"", 0o644).is_err());
    }
}
