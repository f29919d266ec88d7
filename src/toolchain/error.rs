//! The toolchain's errors: [`ToolError`] for everything that stops a tool from being resolved,
//! [`DownloadError`] for why an official release could not be used. Each names the tool, the
//! version and the command, URL or file involved; causes hang off `#[source]`.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::Tool;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not a valid version config")]
    VersionsSyntax {
        path: PathBuf,
        #[source]
        source: Box<toml::de::Error>,
    },
    #[error("{path}: {problem}")]
    VersionsInvalid { path: PathBuf, problem: String },
    #[error(
        "no Istio version {requested:?}: name a label from {path} ({known}) or an official release number such as 1.29.3"
    )]
    UnknownIstio {
        requested: String,
        known: String,
        path: PathBuf,
    },
    #[error("cannot build {tool} {version}: {reason}")]
    NoGo {
        tool: Tool,
        version: String,
        reason: String,
    },
    #[error(
        "building {tool} {version} failed: `{command}` in {dir} {status}; its last output:\n{output_tail}"
    )]
    Build {
        tool: Tool,
        version: String,
        command: String,
        dir: PathBuf,
        status: String,
        output_tail: String,
    },
    #[error("cannot run `{command}` for {tool} {version}")]
    Spawn {
        tool: Tool,
        version: String,
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("`{command}` for {tool} {version} did not finish within {}s and was killed", timeout.as_secs())]
    Timeout {
        tool: Tool,
        version: String,
        command: String,
        timeout: Duration,
    },
    #[error("cannot get {tool} {version} from PyPI: `{command}` {problem}")]
    Pip {
        tool: Tool,
        version: String,
        command: String,
        problem: String,
    },
    #[error("unexpected output from `{command}`: {problem}")]
    GoOutput { command: String, problem: String },
    #[error("cannot get {tool} {version}: downloading {url} failed, and {no_build}")]
    Download {
        tool: Tool,
        version: String,
        url: String,
        no_build: String,
        #[source]
        source: Box<DownloadError>,
    },
    #[error(
        "waited {}s for another labcheck to finish installing {tool} {version} (lock {path})",
        timeout.as_secs()
    )]
    LockTimeout {
        tool: Tool,
        version: String,
        path: PathBuf,
        timeout: Duration,
    },
}

/// Why an official release archive was not used.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("GET {url} failed")]
    Http {
        url: String,
        #[source]
        source: Box<ureq::Error>,
    },
    #[error("reading {url} failed")]
    Read {
        url: String,
        #[source]
        source: io::Error,
    },
    #[error("checksum file {url} is not `<sha256>  {file}`: {content:?}")]
    ChecksumFile {
        url: String,
        file: String,
        content: String,
    },
    #[error("checksum mismatch: {file} has SHA-256 {actual}, but {checksum_url} says {expected}")]
    ChecksumMismatch {
        file: String,
        checksum_url: String,
        expected: String,
        actual: String,
    },
    #[error("the archive {file} has no `istioctl` file")]
    NoBinary { file: String },
    #[error("cannot unpack {file}")]
    Unpack {
        file: String,
        #[source]
        source: io::Error,
    },
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the download stopped before it finished")]
    Interrupted(#[source] tokio::task::JoinError),
    #[error("Istio publishes no istioctl archive for {os}/{arch}")]
    Platform {
        os: &'static str,
        arch: &'static str,
    },
}

/// Maps an I/O error on `path` to [`ToolError::Io`], saying what was being done.
pub(crate) fn io_err(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(io::Error) -> ToolError {
    let path = path.to_path_buf();
    move |source| ToolError::Io {
        action,
        path,
        source,
    }
}
