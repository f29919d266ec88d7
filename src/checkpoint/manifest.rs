//! A checkpoint's manifest: every entry under the checkpoint's directory — its path, kind, mode,
//! owner, size and a SHA-256 of its bytes (a link's target, a device's number) — written when the
//! checkpoint is, and checked before it is used. A checkpoint edited since (a changed file, a
//! link where `upper`, `tmp` or `etcd` was, another checkpoint's etcd data, an edited
//! `state.json`) no longer matches, and is not trusted.
//!
//! Extended attributes (an overlay's opaque directories) and times are not in it.

use std::collections::BTreeMap;
use std::io::{self, Read};

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The manifest's name in a checkpoint's directory.
pub const FILE: &str = "manifest";

/// The largest manifest read back (a checkpoint of a million entries stays under it).
const MAX_BYTES: u64 = 256 << 20;

/// How a checkpoint differs from its manifest.
#[derive(Debug, thiserror::Error)]
pub enum Mismatch {
    #[error("{} is a link or not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("it has no manifest")]
    NoManifest,
    #[error("its manifest cannot be read: {0}")]
    Unreadable(#[source] io::Error),
    #[error("it cannot be read: {0}")]
    Io(#[source] io::Error),
    #[error("{} is missing", .0.display())]
    Missing(PathBuf),
    #[error("{} was added", .0.display())]
    Added(PathBuf),
    #[error("{} changed (was {was}, now {now})", .path.display())]
    Changed {
        path: PathBuf,
        was: String,
        now: String,
    },
}

/// Writes the manifest of the checkpoint in `dir` (all of it but the manifest itself).
pub fn write(dir: &Path) -> io::Result<()> {
    let text: String = entries(dir)?
        .into_iter()
        .map(|(path, what)| format!("{what}\t{}\n", quote(&path)))
        .collect();
    std::fs::write(dir.join(FILE), text)
}

/// Checks the checkpoint in `dir` against its manifest.
pub fn verify(dir: &Path) -> Result<(), Mismatch> {
    let meta = std::fs::symlink_metadata(dir).map_err(Mismatch::Io)?;
    if !meta.is_dir() {
        return Err(Mismatch::NotADirectory(dir.to_owned()));
    }
    let manifest = dir.join(FILE);
    let meta = match std::fs::symlink_metadata(&manifest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Mismatch::NoManifest),
        other => other.map_err(Mismatch::Unreadable)?,
    };
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(Mismatch::Unreadable(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file of a manifest's size",
        )));
    }
    let text = std::fs::read_to_string(&manifest).map_err(Mismatch::Unreadable)?;
    let mut want = BTreeMap::new();
    for line in text.lines() {
        let (what, path) = line.rsplit_once('\t').ok_or_else(|| {
            Mismatch::Unreadable(io::Error::new(io::ErrorKind::InvalidData, "a bad line"))
        })?;
        want.insert(unquote(path), what.to_owned());
    }
    let have = entries(dir).map_err(Mismatch::Io)?;
    for (path, was) in &want {
        match have.get(path) {
            None => return Err(Mismatch::Missing(path.clone())),
            Some(now) if now != was => {
                return Err(Mismatch::Changed {
                    path: path.clone(),
                    was: summary(was),
                    now: summary(now),
                });
            }
            Some(_) => {}
        }
    }
    match have.keys().find(|p| !want.contains_key(*p)) {
        Some(path) => Err(Mismatch::Added(path.clone())),
        None => Ok(()),
    }
}

/// An entry's description without its digest, for messages.
fn summary(what: &str) -> String {
    what.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

/// Every entry under `dir` but the manifest, by path relative to `dir`, never following links.
fn entries(dir: &Path) -> io::Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if path == Path::new(FILE) {
                continue;
            }
            let full = dir.join(&path);
            let meta = std::fs::symlink_metadata(&full)?;
            let kind = meta.file_type();
            let owner = format!("{:o} {}:{}", meta.mode(), meta.uid(), meta.gid());
            let what = if kind.is_dir() {
                stack.push(path.clone());
                format!("d {owner}")
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&full)?;
                format!("l {owner} {}", quote(&target))
            } else if kind.is_file() {
                format!("f {owner} {} {}", meta.len(), digest(&full)?)
            } else if kind.is_char_device() || kind.is_block_device() {
                format!("c {owner} {}", meta.rdev())
            } else {
                format!("o {owner}")
            };
            out.insert(path, what);
        }
    }
    Ok(out)
}

/// A SHA-256 of a regular file's bytes, read without following a link (the caller looked).
/// Only the data is read: a hole (etcd's preallocated WAL is mostly one) hashes as where it is,
/// never as the zeros it reads as.
fn digest(path: &Path) -> io::Result<String> {
    use nix::unistd::{Whence, lseek};
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let len = file.metadata()?.len() as i64;
    let mut hash = Sha256::new();
    let mut buf = vec![0; 1 << 20];
    let mut at: i64 = 0;
    while at < len {
        // The next stretch of data, [start, end); none left past the last.
        let start = match lseek(&file, at, Whence::SeekData) {
            Ok(start) => start,
            Err(nix::errno::Errno::ENXIO) => break,
            Err(e) => return Err(e.into()),
        };
        let end = lseek(&file, start, Whence::SeekHole)?.min(len);
        hash.update(format!("data {start} {end}\n").as_bytes());
        file.seek(SeekFrom::Start(start as u64))?;
        let mut left = (end - start) as usize;
        while left > 0 {
            let n = file.read(&mut buf[..left.min(1 << 20)])?;
            if n == 0 {
                break;
            }
            hash.update(&buf[..n]);
            left -= n;
        }
        at = end;
    }
    Ok(super::hex(&hash.finalize()))
}

/// A path on one line of the manifest (tabs and newlines escaped, as `\t`, `\n` and `\\`).
fn quote(path: &Path) -> String {
    path.to_string_lossy()
        .replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unquote(text: &str) -> PathBuf {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    PathBuf::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkpoint-shaped directory: files, a link, an odd name, etcd data.
    fn checkpoint() -> io::Result<tempfile::TempDir> {
        let dir = tempfile::tempdir()?;
        for sub in ["upper/root/lab", "tmp", "etcd/member"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        std::fs::write(dir.path().join("upper/root/lab/notes.txt"), "one\n")?;
        std::fs::write(dir.path().join("upper/root/lab/tab\tand\nline"), "x")?;
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("upper/root/lab/host"))?;
        std::fs::write(dir.path().join("etcd/member/db"), "objects")?;
        std::fs::write(dir.path().join("state.json"), "{}")?;
        write(dir.path())?;
        Ok(dir)
    }

    #[test]
    fn an_untouched_checkpoint_matches() -> io::Result<()> {
        let dir = checkpoint()?;
        verify(dir.path()).map_err(io::Error::other)
    }

    #[test]
    fn a_sparse_file_is_hashed_by_its_data_and_its_holes() -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let dir = checkpoint()?;
        let wal = dir.path().join("etcd/member/wal");
        let mut file = std::fs::File::create(&wal)?;
        file.set_len(64 << 20)?;
        file.seek(SeekFrom::Start(60 << 20))?;
        file.write_all(b"record")?;
        write(dir.path())?;
        verify(dir.path()).map_err(io::Error::other)?;
        // A byte written into the hole (zero, as the hole reads) is a change all the same.
        file.seek(SeekFrom::Start(1 << 20))?;
        file.write_all(&[0])?;
        file.sync_all()?;
        assert!(
            verify(dir.path()).is_err(),
            "a write into a hole was not seen"
        );
        Ok(())
    }

    /// An edit of a checkpoint's directory.
    type Tamper = fn(&Path) -> io::Result<()>;

    #[test]
    fn every_kind_of_tampering_is_seen() -> io::Result<()> {
        let cases: [(&str, Tamper); 6] = [
            ("an edited file", |d| {
                std::fs::write(d.join("upper/root/lab/notes.txt"), "two\n")
            }),
            ("an edited state.json", |d| {
                std::fs::write(d.join("state.json"), "{ }")
            }),
            ("upper replaced by a link", |d| {
                std::fs::remove_dir_all(d.join("upper"))?;
                std::os::unix::fs::symlink("/root", d.join("upper"))
            }),
            ("tmp replaced by a link to /", |d| {
                std::fs::remove_dir(d.join("tmp"))?;
                std::os::unix::fs::symlink("/", d.join("tmp"))
            }),
            ("another etcd", |d| {
                std::fs::write(d.join("etcd/member/db"), "other objects")
            }),
            ("a file added", |d| {
                std::fs::write(d.join("upper/root/x"), "")
            }),
        ];
        for (what, tamper) in cases {
            let dir = checkpoint()?;
            tamper(dir.path())?;
            assert!(verify(dir.path()).is_err(), "{what} was not seen");
        }
        let dir = checkpoint()?;
        std::fs::remove_file(dir.path().join(FILE))?;
        assert!(matches!(verify(dir.path()), Err(Mismatch::NoManifest)));
        Ok(())
    }
}
