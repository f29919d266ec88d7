//! Downloading an official istioctl release: `istioctl-<v>-linux-<arch>.tar.gz` and its
//! `.sha256` from Istio's GitHub releases (base URL from `LABCHECK_ISTIO_RELEASE_URL`, for tests
//! and mirrors). The archive's SHA-256 is checked before anything is unpacked; only the
//! `istioctl` file is taken out, into a temporary file the cache then installs.
//!
//! Blocking I/O (ureq): callers run it on a blocking thread.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::DownloadError;

/// Where Istio publishes its releases.
pub const DEFAULT_RELEASE_URL: &str = "https://github.com/istio/istio/releases/download";

/// The environment variable that replaces [`DEFAULT_RELEASE_URL`].
pub const RELEASE_URL_ENV: &str = "LABCHECK_ISTIO_RELEASE_URL";

/// An istioctl taken out of a verified archive, not yet installed.
#[derive(Debug)]
pub struct Fetched {
    /// The extracted binary, executable, in the cache's temporary directory.
    pub binary: PathBuf,
    pub url: String,
    /// The archive's SHA-256, as checked.
    pub archive_sha256: String,
}

/// The archive's file name for this machine: `istioctl-1.29.3-linux-amd64.tar.gz`.
pub fn archive_name(release: &str) -> Result<String, DownloadError> {
    let arch = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "amd64",
        ("linux", "aarch64") => "arm64",
        (os, arch) => return Err(DownloadError::Platform { os, arch }),
    };
    Ok(format!("istioctl-{release}-linux-{arch}.tar.gz"))
}

/// The archive's URL under `base`.
pub fn archive_url(base: &str, release: &str) -> Result<String, DownloadError> {
    Ok(format!(
        "{}/{release}/{}",
        base.trim_end_matches('/'),
        archive_name(release)?
    ))
}

/// Downloads istioctl `release` to `archive_path`, verifies it, and unpacks its `istioctl` to
/// `binary_path`. The archive is removed afterwards, and the binary too on any failure.
pub fn fetch_istioctl(
    base: &str,
    release: &str,
    archive_path: &Path,
    binary_path: &Path,
) -> Result<Fetched, DownloadError> {
    let file = archive_name(release)?;
    let url = archive_url(base, release)?;
    let checksum_url = format!("{url}.sha256");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .timeout_recv_body(Some(Duration::from_secs(30 * 60)))
        .build()
        .into();

    let checksum_text = get(&agent, &checksum_url)?
        .body_mut()
        .read_to_string()
        .map_err(|e| DownloadError::Http {
            url: checksum_url.clone(),
            source: Box::new(e),
        })?;
    let expected =
        parse_checksum(&checksum_text, &file).ok_or_else(|| DownloadError::ChecksumFile {
            url: checksum_url.clone(),
            file: file.clone(),
            content: checksum_text.chars().take(200).collect(),
        })?;

    if let Some(dir) = archive_path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| DownloadError::Io {
            action: "cannot create",
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let archive = TempFile::new(archive_path.to_path_buf());
    let actual = {
        let mut response = get(&agent, &url)?;
        let mut body = response.body_mut().as_reader();
        let mut out = File::create(archive_path).map_err(|source| DownloadError::Io {
            action: "cannot create",
            path: archive_path.to_path_buf(),
            source,
        })?;
        copy_hashing(&mut body, &mut out).map_err(|source| DownloadError::Read {
            url: url.clone(),
            source,
        })?
    };
    if actual != expected {
        return Err(DownloadError::ChecksumMismatch {
            file,
            checksum_url,
            expected,
            actual,
        });
    }

    let extracted = TempFile::new(binary_path.to_path_buf());
    extract_istioctl(archive_path, binary_path).map_err(|e| match e {
        Extract::Missing => DownloadError::NoBinary { file: file.clone() },
        Extract::Io(source) => DownloadError::Unpack {
            file: file.clone(),
            source,
        },
    })?;
    drop(archive);
    extracted.keep();
    Ok(Fetched {
        binary: binary_path.to_path_buf(),
        url,
        archive_sha256: actual,
    })
}

fn get(agent: &ureq::Agent, url: &str) -> Result<ureq::http::Response<ureq::Body>, DownloadError> {
    agent.get(url).call().map_err(|e| DownloadError::Http {
        url: url.to_string(),
        source: Box::new(e),
    })
}

/// `<sha256 hex>  <file>` (sha256sum's format), or a bare digest. A named file must be ours.
pub fn parse_checksum(text: &str, file: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let digest = words.next()?.to_ascii_lowercase();
    let named = words.next().map(|n| n.trim_start_matches('*'));
    let is_digest = digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit());
    (is_digest && named.is_none_or(|n| n == file || n.ends_with(&format!("/{file}"))))
        .then_some(digest)
}

fn copy_hashing(from: &mut impl Read, to: &mut File) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        to.write_all(&buf[..n])?;
    }
    to.flush()?;
    Ok(hex(&hasher.finalize()))
}

enum Extract {
    Missing,
    Io(io::Error),
}

/// Copies the archive's `istioctl` regular file (at any depth) to `dest`, mode 0755. The
/// entry's own path is never used for writing.
fn extract_istioctl(archive: &Path, dest: &Path) -> Result<(), Extract> {
    let file = File::open(archive).map_err(Extract::Io)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in tar.entries().map_err(Extract::Io)? {
        let mut entry = entry.map_err(Extract::Io)?;
        let is_istioctl = entry
            .path()
            .map_err(Extract::Io)?
            .file_name()
            .is_some_and(|n| n == "istioctl");
        if !is_istioctl || !entry.header().entry_type().is_file() {
            continue;
        }
        let mut out = File::create(dest).map_err(Extract::Io)?;
        io::copy(&mut entry, &mut out).map_err(Extract::Io)?;
        out.set_permissions(std::fs::Permissions::from_mode(0o755))
            .map_err(Extract::Io)?;
        return Ok(());
    }
    Err(Extract::Missing)
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Removes its file when dropped, unless kept.
struct TempFile(Option<PathBuf>);

impl TempFile {
    fn new(path: PathBuf) -> Self {
        TempFile(Some(path))
    }

    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn checksum_files_in_sha256sum_format() {
        let file = "istioctl-1.29.3-linux-amd64.tar.gz";
        assert_eq!(
            parse_checksum(&format!("{DIGEST}  {file}\n"), file).as_deref(),
            Some(DIGEST)
        );
        assert_eq!(
            parse_checksum(&format!("{}  *{file}", DIGEST.to_uppercase()), file).as_deref(),
            Some(DIGEST)
        );
        assert_eq!(parse_checksum(DIGEST, file).as_deref(), Some(DIGEST));
        assert_eq!(
            parse_checksum(&format!("{DIGEST}  other.tar.gz"), file),
            None
        );
        assert_eq!(parse_checksum("<html>Not Found</html>", file), None);
        assert_eq!(parse_checksum("", file), None);
    }

    #[test]
    fn archive_names_follow_the_release_layout() {
        if std::env::consts::ARCH == "x86_64" {
            assert_eq!(
                archive_url("http://127.0.0.1:1/dl/", "1.29.3")
                    .ok()
                    .as_deref(),
                Some("http://127.0.0.1:1/dl/1.29.3/istioctl-1.29.3-linux-amd64.tar.gz")
            );
        }
    }
}
