//! Image layers: small ones written entry by entry — directories, files, symlinks — owned by root
//! with a fixed modification time, so the same inputs give the same layer bytes; and big ones
//! copied from another tarball with some entries left out, byte for byte otherwise.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Writes one uncompressed layer tarball. Paths are relative to the image root (`bin/sh`).
pub struct LayerWriter {
    builder: tar::Builder<BufWriter<File>>,
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header
}

impl LayerWriter {
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut builder = tar::Builder::new(BufWriter::new(File::create(path)?));
        builder.follow_symlinks(false);
        Ok(LayerWriter { builder })
    }

    pub fn dir(&mut self, path: &str, mode: u32) -> io::Result<()> {
        self.dir_owned(path, mode, 0)
    }

    /// A directory owned by `id` (user and group), such as a proxy's writable one.
    pub fn dir_owned(&mut self, path: &str, mode: u32, id: u64) -> io::Result<()> {
        let mut header = header(tar::EntryType::Directory, mode, 0);
        header.set_uid(id);
        header.set_gid(id);
        let path = format!("{}/", path.trim_end_matches('/'));
        self.builder.append_data(&mut header, path, io::empty())
    }

    pub fn file(&mut self, path: &str, mode: u32, bytes: &[u8]) -> io::Result<()> {
        let mut header = header(tar::EntryType::Regular, mode, bytes.len() as u64);
        self.builder.append_data(&mut header, path, bytes)
    }

    /// Streams the file at `from` into the layer as `path`.
    pub fn copy(&mut self, path: &str, mode: u32, from: &Path) -> io::Result<()> {
        let source = File::open(from)?;
        let size = source.metadata()?.len();
        let mut header = header(tar::EntryType::Regular, mode, size);
        self.builder
            .append_data(&mut header, path, source.take(size))
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        let mut header = header(tar::EntryType::Symlink, 0o777, 0);
        self.builder.append_link(&mut header, path, target)
    }

    pub fn finish(self) -> io::Result<()> {
        let mut out = self.builder.into_inner()?;
        io::Write::flush(&mut out)?;
        out.get_ref().sync_all()
    }
}

/// Copies the tarball `src` to `dst` leaving out the entries whose path `keep` refuses, with
/// their GNU long-name and pax headers; everything else is copied block for block, streamed.
pub fn filter(src: &Path, dst: &Path, keep: impl Fn(&str) -> bool) -> io::Result<()> {
    let mut input = BufReader::new(File::open(src)?);
    let mut out = BufWriter::new(File::create(dst)?);
    // Headers that describe the next entry (long names, pax records), held until it is judged.
    let mut pending = Vec::new();
    let mut long_path: Option<String> = None;
    loop {
        let mut block = [0u8; 512];
        input.read_exact(&mut block)?;
        if block.iter().all(|&b| b == 0) {
            // End of archive: the marker and whatever padding follows.
            out.write_all(&block)?;
            io::copy(&mut input, &mut out)?;
            break;
        }
        let header = tar::Header::from_byte_slice(&block);
        let size = header.entry_size()?;
        let mut body = (&mut input).take(size.div_ceil(512) * 512);
        let kind = header.entry_type();
        if kind.is_gnu_longname() || kind.is_pax_local_extensions() {
            let mut data = Vec::new();
            body.read_to_end(&mut data)?;
            let data_part = &data[..data.len().min(size as usize)];
            if kind.is_gnu_longname() {
                let name = data_part.split(|&b| b == 0).next().unwrap_or_default();
                long_path = Some(String::from_utf8_lossy(name).into_owned());
            } else if let Some(path) = pax_path(data_part) {
                long_path = Some(path);
            }
            pending.extend_from_slice(&block);
            pending.extend_from_slice(&data);
            continue;
        }
        if kind.is_gnu_longlink() || kind.is_pax_global_extensions() {
            pending.extend_from_slice(&block);
            body.read_to_end(&mut pending)?;
            continue;
        }
        let path = long_path
            .take()
            .unwrap_or_else(|| String::from_utf8_lossy(&header.path_bytes()).into_owned());
        if keep(&path) {
            out.write_all(&pending)?;
            out.write_all(&block)?;
            io::copy(&mut body, &mut out)?;
        } else {
            io::copy(&mut body, &mut io::sink())?;
        }
        pending.clear();
    }
    out.flush()?;
    out.get_ref().sync_all()
}

/// The `path` record of pax extended header data (`<len> path=<value>\n` records).
fn pax_path(mut data: &[u8]) -> Option<String> {
    let mut path = None;
    while let Some(space) = data.iter().position(|&b| b == b' ') {
        let len: usize = std::str::from_utf8(&data[..space]).ok()?.parse().ok()?;
        let record = data.get(space + 1..len)?;
        if let Some(value) = record.strip_prefix(b"path=") {
            let value = value.strip_suffix(b"\n").unwrap_or(value);
            path = Some(String::from_utf8_lossy(value).into_owned());
        }
        data = &data[len..];
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_drops_only_what_it_is_told_with_its_long_name_headers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = dir.path().join("src.tar");
        let long = format!("./dev/{}", "x".repeat(150));
        let kept_long = format!("./var/log/{}", "y".repeat(150));
        let mut writer = LayerWriter::create(&src).expect("create");
        writer.dir("./dev", 0o755).expect("dir");
        writer.file("./dev/null", 0o666, b"").expect("file");
        writer.file(&long, 0o644, b"long").expect("long");
        writer
            .symlink("./dev/stdout", "/proc/self/fd/1")
            .expect("link");
        writer.dir("./var/log/nginx", 0o755).expect("dir");
        writer
            .symlink("./var/log/nginx/access.log", "/dev/stdout")
            .expect("link");
        writer
            .file(&kept_long, 0o644, &[7; 1000])
            .expect("long kept");
        writer.file("./etc/hostname", 0o644, b"x").expect("file");
        writer.finish().expect("finish");

        let dst = dir.path().join("dst.tar");
        filter(&src, &dst, |p| !super::super::debian::device_entry(p)).expect("filter");
        let mut names = Vec::new();
        let mut archive = tar::Archive::new(File::open(&dst).expect("open"));
        for entry in archive.entries().expect("entries") {
            let mut entry = entry.expect("entry");
            let name = entry.path().expect("path").to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("read");
            if name == kept_long {
                assert_eq!(bytes, [7; 1000]);
            }
            // The tar crate drops `./` from short names only.
            names.push(name.trim_start_matches("./").to_string());
        }
        let expected = [
            "dev/",
            "var/log/nginx/",
            "var/log/nginx/access.log",
            &kept_long[2..],
            "etc/hostname",
        ];
        assert_eq!(names, expected);
    }

    #[test]
    fn pax_records_give_the_path() {
        let data = b"20 mtime=1700000000\n20 path=./var/log/x\n";
        assert_eq!(pax_path(data).as_deref(), Some("./var/log/x"));
    }
}
