//! Building a tool from its Go module: the `go` command found and checked, the wrapper module of a
//! [`Recipe`] written, and `go mod tidy` and `go build` run with a timeout, telling the
//! toolchain's reporter how the build goes ([`Event::ToolBuild`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use super::ToolError;
use super::error::io_err;
pub use super::recipe::{Recipe, go_mod, staging_replaces, tools_go, vendor_pins};
use super::versions::Replace;
use crate::model::{BuildPhase, Event};

/// The Go release the wrapper modules declare (`go 1.26`) and the oldest that builds them.
pub const GO_MIN: (u32, u32) = (1, 26);

/// `go mod tidy` and `go mod download` of a warm module cache take seconds; a cold one minutes.
const TIDY_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// A cold istioctl build took 331 s on 2 cores; leave room for slower machines.
const BUILD_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The `go` command and the Go release it is.
#[derive(Debug, Clone)]
pub struct Go {
    pub bin: PathBuf,
    pub version: String,
}

impl Go {
    /// Finds `bin` (a name looked up on PATH, or a path) and checks it is Go ≥ 1.26.
    /// The error is a sentence for the user: what is missing. Blocks for at most 30 s.
    pub fn detect(bin: &Path) -> Result<Go, String> {
        use std::io::Read as _;
        let shown = bin.display();
        let mut child = std::process::Command::new(bin)
            .args(["env", "GOVERSION"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("Go is not installed (`{shown}`: {e})"))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "`{shown} env GOVERSION` did not answer within 30 s"
                    ));
                }
                Err(e) => return Err(format!("`{shown} env GOVERSION`: {e}")),
            }
        };
        // The output is one short line: it fits the pipe, so reading after exit cannot block.
        let mut stdout = String::new();
        let mut stderr = String::new();
        if let Some(mut out) = child.stdout.take() {
            let _ = out.read_to_string(&mut stdout);
        }
        if let Some(mut err) = child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        if !status.success() {
            return Err(format!("`{shown} env GOVERSION` failed: {}", stderr.trim()));
        }
        let version = stdout.trim().to_string();
        match parse_go_version(&version) {
            Some(v) if v >= GO_MIN => Ok(Go {
                bin: bin.to_path_buf(),
                version,
            }),
            Some(_) => Err(format!(
                "{version} is older than go{}.{}, which these modules need",
                GO_MIN.0, GO_MIN.1
            )),
            None => Err(format!("cannot tell the Go release from {version:?}")),
        }
    }

    /// Generates the wrapper module in `dir`, then builds `recipe` into `out`. Returns the
    /// `replace` lines that were generated (Kubernetes' staging modules).
    pub async fn build(
        &self,
        recipe: &Recipe,
        dir: &Path,
        out: &Path,
        progress: &super::Reporter,
    ) -> Result<Vec<Replace>, ToolError> {
        let generated = self.wrapper_module(recipe, dir).await?;
        let started = Instant::now();
        let what = format!(
            "{} {} from {}",
            recipe.tool,
            recipe.version,
            recipe.module_id()
        );
        let tell = |phase| {
            progress.tell(Event::ToolBuild {
                what: what.clone(),
                phase,
            })
        };
        tell(BuildPhase::Started {
            steps: "go mod tidy, go build",
        });
        let current = Mutex::new("go mod tidy");
        let build = async {
            // A vendored module's pins hold for what it builds, not for the tests of its
            // dependencies, which `go mod tidy` also loads: their errors do not stop it.
            let tidy: &[&str] = if recipe.vendor_pins {
                &["mod", "tidy", "-e"]
            } else {
                &["mod", "tidy"]
            };
            self.run(recipe, dir, tidy, TIDY_TIMEOUT).await?;
            let out_arg = out.to_string_lossy();
            let ldflags = recipe.ldflags();
            *current.lock().unwrap_or_else(|e| e.into_inner()) = "go build";
            tell(BuildPhase::Step("go build"));
            let tags = recipe.tags.join(",");
            let mut args = vec!["build", "-ldflags", &ldflags];
            if !tags.is_empty() {
                args.extend(["-tags", &tags]);
            }
            args.extend(["-o", &out_arg, &recipe.package]);
            self.run(recipe, dir, &args, BUILD_TIMEOUT).await
        };
        // Alive every 10 s, from this task: the reporter decides whether a log shows it.
        tokio::pin!(build);
        let period = Duration::from_secs(10);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        let result = loop {
            tokio::select! {
                done = &mut build => break done,
                _ = tick.tick() => {
                    let step = *current.lock().unwrap_or_else(|e| e.into_inner());
                    tell(BuildPhase::Alive { elapsed: started.elapsed(), step });
                }
            }
        };
        tell(BuildPhase::Finished {
            ok: result.is_ok(),
            took: started.elapsed(),
        });
        result.map(|_| generated)
    }

    /// Writes the wrapper module of `recipe` in `dir` (its go.mod and tools.go); the `replace`
    /// lines it generated for Kubernetes' staging modules.
    async fn wrapper_module(&self, recipe: &Recipe, dir: &Path) -> Result<Vec<Replace>, ToolError> {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(io_err("cannot create the wrapper module", dir))?;
        let name = format!("{}-{}", recipe.tool, recipe.version);
        let go_mod_path = dir.join("go.mod");
        let require = (recipe.module.as_str(), recipe.module_version.as_str());
        let mut replace = recipe.replace.clone();
        let mut generated = Vec::new();
        if let Some(staging) = &recipe.staging {
            // A bare module first, so `go mod download` runs in a module of our own.
            write(&go_mod_path, &go_mod(&name, require, &[])).await?;
            let upstream = self.module_go_mod(recipe, dir).await?;
            generated = staging_replaces(&upstream, staging);
            if generated.is_empty() {
                return Err(ToolError::GoOutput {
                    command: format!("go mod download -json {}", recipe.module_id()),
                    problem: "its go.mod replaces no module with a ./staging/ directory".into(),
                });
            }
            replace.extend(generated.iter().cloned());
        }
        if recipe.vendor_pins {
            write(&go_mod_path, &go_mod(&name, require, &[])).await?;
            let vendor_mod = self.module_dir(recipe, dir).await?.join("vendor.mod");
            let text = tokio::fs::read_to_string(&vendor_mod)
                .await
                .map_err(|source| ToolError::Io {
                    action: "cannot read the module's vendor.mod",
                    path: vendor_mod.clone(),
                    source,
                })?;
            generated = vendor_pins(&text);
            if generated.is_empty() {
                return Err(ToolError::GoOutput {
                    command: format!("go mod download -json {}", recipe.module_id()),
                    problem: "its vendor.mod requires no module".into(),
                });
            }
            replace.extend(generated.iter().cloned());
        }
        write(&go_mod_path, &go_mod(&name, require, &replace)).await?;
        write(&dir.join("tools.go"), &tools_go(&recipe.package)).await?;
        Ok(generated)
    }

    /// The text of the go.mod `recipe.module` publishes, read from the module cache.
    async fn module_go_mod(&self, recipe: &Recipe, dir: &Path) -> Result<String, ToolError> {
        let path = self.module_file(recipe, dir, "GoMod").await?;
        tokio::fs::read_to_string(&path)
            .await
            .map_err(|source| ToolError::Io {
                action: "cannot read the module's go.mod",
                path,
                source,
            })
    }

    /// Where the module cache holds `recipe.module`'s source tree (after a build, or a
    /// `go mod download` of its own).
    pub async fn module_dir(&self, recipe: &Recipe, dir: &Path) -> Result<PathBuf, ToolError> {
        self.module_file(recipe, dir, "Dir").await
    }

    /// A path `go mod download -json` reports for `recipe.module` (`GoMod`, `Dir`).
    async fn module_file(
        &self,
        recipe: &Recipe,
        dir: &Path,
        field: &str,
    ) -> Result<PathBuf, ToolError> {
        let id = recipe.module_id();
        let stdout = self
            .run(
                recipe,
                dir,
                &["mod", "download", "-json", &id],
                TIDY_TIMEOUT,
            )
            .await?;
        let command = format!("go mod download -json {id}");
        let info: serde_json::Value =
            serde_json::from_str(&stdout).map_err(|e| ToolError::GoOutput {
                command: command.clone(),
                problem: format!("not JSON: {e}"),
            })?;
        match info.get(field).and_then(|v| v.as_str()) {
            Some(path) => Ok(PathBuf::from(path)),
            None => {
                let problem = match info.get("Error").and_then(|v| v.as_str()) {
                    Some(e) => e.to_string(),
                    None => format!("no {field} field"),
                };
                Err(ToolError::GoOutput { command, problem })
            }
        }
    }

    /// Runs `go args…` in `dir` in its own process group; on timeout the whole group (the
    /// compiler and linker included) is killed. Returns stdout.
    async fn run(
        &self,
        recipe: &Recipe,
        dir: &Path,
        args: &[&str],
        timeout: Duration,
    ) -> Result<String, ToolError> {
        let command = format!("go {}", args.join(" "));
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.args(args)
            .current_dir(dir)
            // No VCS stamping (the wrapper is no repository); a go.work above the cache must not
            // pull the wrapper into someone's workspace.
            .env("GOFLAGS", "-buildvcs=false")
            .env("GOWORK", "off")
            .envs(
                recipe
                    .cgo
                    .map(|on| ("CGO_ENABLED", if on { "1" } else { "0" })),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let child = cmd.spawn().map_err(|source| ToolError::Spawn {
            tool: recipe.tool,
            version: recipe.version.clone(),
            command: command.clone(),
            source,
        })?;
        let pgid = child.id();
        // If this future is dropped (the run was interrupted), the compiler and linker go too.
        let _group = KillGroup(pgid.and_then(|p| i32::try_from(p).ok()));
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(output)) if output.status.success() => {
                Ok(String::from_utf8_lossy(&output.stdout).into_owned())
            }
            Ok(Ok(output)) => {
                let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
                text.push_str(&String::from_utf8_lossy(&output.stdout));
                Err(ToolError::Build {
                    tool: recipe.tool,
                    version: recipe.version.clone(),
                    command,
                    dir: dir.to_path_buf(),
                    status: output.status.to_string(),
                    output_tail: tail(&text, 30),
                })
            }
            Ok(Err(source)) => Err(ToolError::Spawn {
                tool: recipe.tool,
                version: recipe.version.clone(),
                command,
                source,
            }),
            Err(_) => {
                if let Some(pid) = pgid.and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                Err(ToolError::Timeout {
                    tool: recipe.tool,
                    version: recipe.version.clone(),
                    command,
                    timeout,
                })
            }
        }
    }
}

/// `go1.26.8` → (1, 26).
pub fn parse_go_version(s: &str) -> Option<(u32, u32)> {
    let rest = s.trim().strip_prefix("go")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

async fn write(path: &Path, text: &str) -> Result<(), ToolError> {
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|source| ToolError::Io {
            action: "cannot write",
            path: path.to_path_buf(),
            source,
        })?;
    file.write_all(text.as_bytes())
        .await
        .map_err(|source| ToolError::Io {
            action: "cannot write",
            path: path.to_path_buf(),
            source,
        })
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Kills a process group when dropped (a build whose run was interrupted). Killing a group that
/// has already exited is harmless.
struct KillGroup(Option<i32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_versions() {
        assert_eq!(parse_go_version("go1.26.8"), Some((1, 26)));
        assert_eq!(parse_go_version("go1.27rc1"), Some((1, 27)));
        assert_eq!(parse_go_version("devel"), None);
        assert!(parse_go_version("go1.25.3") < Some(GO_MIN));
    }
}
