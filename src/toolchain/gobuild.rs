//! Building a tool from its Go module: the [`Recipe`] (module, pins, package, version ldflags),
//! the generated wrapper module (`go.mod` with `require` and `replace` lines, a `tools.go` that
//! imports the main package), and running `go mod tidy` and `go build` with a timeout and a
//! progress line on stderr.
//!
//! A wrapper module is needed because `go install pkg@version` refuses modules whose go.mod has
//! `replace` directives (etcd, Kubernetes) and cannot add pins a snapshot needs (Istio 1.30).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use super::error::io_err;
use super::versions::{GoModule, IstioSpec, Replace, pseudo_commit, staging_version};
use super::{Tool, ToolError};

/// The Go release the wrapper modules declare (`go 1.26`) and the oldest that builds them.
pub const GO_MIN: (u32, u32) = (1, 26);

/// `go mod tidy` and `go mod download` of a warm module cache take seconds; a cold one minutes.
const TIDY_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// A cold istioctl build took 331 s on 2 cores; leave room for slower machines.
const BUILD_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How to build one tool at one version from Go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    pub tool: Tool,
    /// The version the binary reports, and its cache key.
    pub version: String,
    pub module: String,
    pub module_version: String,
    /// Pins from the version config.
    pub replace: Vec<Replace>,
    /// Replace every module this go.mod points at `./staging/…` with this version (Kubernetes).
    pub staging: Option<String>,
    /// The main package to build.
    pub package: String,
    /// `-X` assignments that stamp the version.
    pub stamps: Vec<String>,
}

impl Recipe {
    /// istioctl of one Istio version, from its module with its pins.
    pub fn istioctl(spec: &IstioSpec, module: &GoModule) -> Self {
        Self::istio(Tool::Istioctl, "istioctl/cmd/istioctl", spec, module)
    }

    /// pilot-discovery (istiod) of one Istio version: the same module, pins and version stamps
    /// as its istioctl, so `pilot-discovery version` reports what `istioctl version` does.
    pub fn pilot_discovery(spec: &IstioSpec, module: &GoModule) -> Self {
        Self::istio(
            Tool::PilotDiscovery,
            "pilot/cmd/pilot-discovery",
            spec,
            module,
        )
    }

    /// `tool` from the Istio module: the main package at `package` under it.
    fn istio(tool: Tool, package: &str, spec: &IstioSpec, module: &GoModule) -> Self {
        // `buildVersion` is what `istioctl version` prints *and* the image tag: pkg/version sets
        // `DockerInfo.Tag = buildVersion`, and operator/pkg/render's hubTagOverlay renders
        // `<buildHub>/proxyv2:<buildVersion>` once both are stamped (else testing images).
        let revision = pseudo_commit(&module.version)
            .unwrap_or(&module.version)
            .to_string();
        let v = "istio.io/istio/pkg/version";
        Recipe {
            tool,
            version: spec.version.clone(),
            module: module.path.clone(),
            module_version: module.version.clone(),
            replace: module.replace.clone(),
            staging: None,
            package: format!("{}/{package}", module.path),
            stamps: vec![
                format!("{v}.buildVersion={}", spec.version),
                format!("{v}.buildGitRevision={revision}"),
                format!("{v}.buildTag={}", spec.version),
                format!("{v}.buildHub=docker.io/istio"),
                format!("{v}.buildStatus=Clean"),
            ],
        }
    }

    /// kube-apiserver, kubectl, kube-controller-manager or kube-scheduler at a Kubernetes tag
    /// such as `v1.35.4`: `k8s.io/kubernetes/cmd/<tool>`.
    pub fn kubernetes(tool: Tool, version: &str) -> Self {
        let (major, minor) = {
            let mut parts = version.trim_start_matches('v').split('.');
            (
                parts.next().unwrap_or_default().to_string(),
                parts.next().unwrap_or_default().to_string(),
            )
        };
        // The official build stamps both packages: component-base serves the binaries' --version,
        // client-go the version clients send and report.
        let stamps = [
            "k8s.io/component-base/version",
            "k8s.io/client-go/pkg/version",
        ]
        .iter()
        .flat_map(|pkg| {
            [
                format!("{pkg}.gitVersion={version}"),
                format!("{pkg}.gitMajor={major}"),
                format!("{pkg}.gitMinor={minor}"),
            ]
        })
        .collect();
        Recipe {
            tool,
            version: version.to_string(),
            module: "k8s.io/kubernetes".into(),
            module_version: version.to_string(),
            replace: Vec::new(),
            staging: staging_version(version).ok(),
            package: format!("k8s.io/kubernetes/cmd/{}", tool.name()),
            stamps,
        }
    }

    /// etcd at a tag such as `v3.6.16`. Its version lives in source (api/v3/version.Version);
    /// the commit (`GitSHA`) is not knowable from the module, so it stays "Not provided".
    pub fn etcd(version: &str) -> Self {
        Recipe {
            tool: Tool::Etcd,
            version: version.to_string(),
            module: "go.etcd.io/etcd/server/v3".into(),
            module_version: version.to_string(),
            replace: Vec::new(),
            staging: None,
            package: "go.etcd.io/etcd/server/v3".into(),
            stamps: Vec::new(),
        }
    }

    /// kwok (the kubelet simulator) at a tag such as `v0.8.0`. Its version lives in source
    /// (pkg/consts.Version, what `kwok --version` prints), so nothing is stamped.
    pub fn kwok(version: &str) -> Self {
        Recipe {
            tool: Tool::Kwok,
            version: version.to_string(),
            module: "sigs.k8s.io/kwok".into(),
            module_version: version.to_string(),
            replace: Vec::new(),
            staging: None,
            package: "sigs.k8s.io/kwok/cmd/kwok".into(),
            stamps: Vec::new(),
        }
    }

    /// `module@version`, as reports show it.
    pub fn module_id(&self) -> String {
        format!("{}@{}", self.module, self.module_version)
    }

    /// The declared pins as go.mod lines, as reports show them.
    pub fn overrides(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.replace.iter().map(Replace::to_string).collect();
        if let Some(staging) = &self.staging {
            lines.push(format!("staging modules of {} => {staging}", self.module));
        }
        lines
    }

    /// The `-ldflags` value: strip symbols, stamp the version.
    pub fn ldflags(&self) -> String {
        let mut flags = String::from("-s -w");
        for stamp in &self.stamps {
            flags.push_str(" -X ");
            flags.push_str(stamp);
        }
        flags
    }
}

/// The wrapper module's go.mod.
pub fn go_mod(name: &str, require: (&str, &str), replace: &[Replace]) -> String {
    let mut text = format!(
        "module labcheck.local/{name}\n\ngo {}.{}\n\nrequire {} {}\n",
        GO_MIN.0, GO_MIN.1, require.0, require.1
    );
    if !replace.is_empty() {
        text.push('\n');
        for r in replace {
            text.push_str(&format!("replace {r}\n"));
        }
    }
    text
}

/// The wrapper module's only source file: it imports the main package so `go mod tidy` keeps
/// its dependencies; the build tag keeps it out of every build.
pub fn tools_go(package: &str) -> String {
    format!("//go:build tools\n\npackage tools\n\nimport _ \"{package}\"\n")
}

/// Every module a go.mod replaces with a directory under `./staging/`, replaced instead with
/// the published module at `version` (Kubernetes publishes its staging tree as modules).
pub fn staging_replaces(go_mod: &str, version: &str) -> Vec<Replace> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in go_mod.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let directive = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("replace") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            if !rest.contains("=>") {
                continue;
            }
            rest
        } else {
            continue;
        };
        let Some((old, new)) = directive.split_once("=>") else {
            continue;
        };
        let (Some(path), Some(target)) =
            (old.split_whitespace().next(), new.split_whitespace().next())
        else {
            continue;
        };
        if target.starts_with("./staging/") {
            found.push(Replace {
                path: path.into(),
                with_path: path.into(),
                with_version: version.into(),
            });
        }
    }
    found.sort();
    found.dedup();
    found
}

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
    ) -> Result<Vec<Replace>, ToolError> {
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
        write(&go_mod_path, &go_mod(&name, require, &replace)).await?;
        write(&dir.join("tools.go"), &tools_go(&recipe.package)).await?;

        let started = Instant::now();
        let progress = Progress::start(recipe, started);
        let result = async {
            self.run(recipe, dir, &["mod", "tidy"], TIDY_TIMEOUT)
                .await?;
            let out_arg = out.to_string_lossy();
            let ldflags = recipe.ldflags();
            progress.step("go build");
            self.run(
                recipe,
                dir,
                &[
                    "build",
                    "-ldflags",
                    &ldflags,
                    "-o",
                    &out_arg,
                    &recipe.package,
                ],
                BUILD_TIMEOUT,
            )
            .await
        }
        .await;
        progress.finish(result.is_ok());
        result.map(|_| generated)
    }

    /// The text of the go.mod `recipe.module` publishes, read from the module cache.
    async fn module_go_mod(&self, recipe: &Recipe, dir: &Path) -> Result<String, ToolError> {
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
        let Some(path) = info.get("GoMod").and_then(|v| v.as_str()) else {
            let problem = match info.get("Error").and_then(|v| v.as_str()) {
                Some(e) => e.to_string(),
                None => "no GoMod field".to_string(),
            };
            return Err(ToolError::GoOutput { command, problem });
        };
        tokio::fs::read_to_string(path)
            .await
            .map_err(|source| ToolError::Io {
                action: "cannot read the module's go.mod",
                path: PathBuf::from(path),
                source,
            })
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

/// The build's progress on stderr: on a terminal one line rewritten every second, otherwise a
/// plain line every ten seconds, so CI logs show the build is alive without flooding.
struct Progress {
    display: Display,
    what: String,
    started: Instant,
    step: Arc<Mutex<&'static str>>,
}

impl Progress {
    fn start(recipe: &Recipe, started: Instant) -> Progress {
        let what = format!(
            "{} {} from {}",
            recipe.tool,
            recipe.version,
            recipe.module_id()
        );
        eprintln!("labcheck: building {what} (go mod tidy, go build)");
        let step = Arc::new(Mutex::new("go mod tidy"));
        // On a terminal, a spinner with the elapsed time; in a log, a line every 10 s.
        let display = if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} building {msg} [{elapsed}]")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.set_message(format!("{what} (go mod tidy)"));
            bar.enable_steady_tick(Duration::from_millis(200));
            Display::Spinner(bar)
        } else {
            let (line, current) = (what.clone(), Arc::clone(&step));
            Display::Lines(tokio::spawn(async move {
                let period = Duration::from_secs(10);
                let mut tick =
                    tokio::time::interval_at(tokio::time::Instant::now() + period, period);
                loop {
                    tick.tick().await;
                    let secs = started.elapsed().as_secs();
                    let step = current.lock().map_or("go", |s| *s);
                    eprintln!("labcheck: building {line}: {secs} s ({step})");
                }
            }))
        };
        Progress {
            display,
            what,
            started,
            step,
        }
    }

    /// Names the go command now running.
    fn step(&self, step: &'static str) {
        if let Ok(mut current) = self.step.lock() {
            *current = step;
        }
        if let Display::Spinner(bar) = &self.display {
            bar.set_message(format!("{} ({step})", self.what));
        }
    }

    fn finish(self, ok: bool) {
        match self.display {
            Display::Spinner(bar) => bar.finish_and_clear(),
            Display::Lines(task) => task.abort(),
        }
        let secs = self.started.elapsed().as_secs_f64();
        let verb = if ok { "built" } else { "failed to build" };
        eprintln!("labcheck: {verb} {} in {secs:.0} s", self.what);
    }
}

/// How a build's progress shows.
enum Display {
    Spinner(indicatif::ProgressBar),
    Lines(tokio::task::JoinHandle<()>),
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
    use crate::toolchain::versions::Versions;

    #[test]
    fn go_mod_for_istio_130_carries_its_pins() {
        let text = include_str!("../../istio-versions.toml");
        let versions =
            Versions::parse(text, Path::new("istio-versions.toml")).expect("config parses");
        let spec = versions.resolve("1.30").expect("1.30 resolves");
        let module = spec.module.clone().expect("module");
        let recipe = Recipe::istioctl(&spec, &module);
        let generated = go_mod(
            "istioctl-1.30-dev.9739e10e",
            (&recipe.module, &recipe.module_version),
            &recipe.replace,
        );
        assert_eq!(
            generated,
            "module labcheck.local/istioctl-1.30-dev.9739e10e\n\ngo 1.26\n\n\
             require istio.io/istio v0.0.0-20260826214018-9739e10eb9d7\n\n\
             replace istio.io/api => istio.io/api v1.30.8\n\
             replace istio.io/client-go => istio.io/client-go v1.30.8\n\
             replace github.com/envoyproxy/go-control-plane/envoy => github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260713214202-ca8ce173c36f\n\
             replace github.com/envoyproxy/go-control-plane/contrib => github.com/envoyproxy/go-control-plane/contrib v1.36.1-0.20260713214202-ca8ce173c36f\n\
             replace github.com/agentgateway/agentgateway/api => github.com/agentgateway/agentgateway/api v0.0.0-20260501213430-773586679f1c\n"
        );
        assert_eq!(recipe.package, "istio.io/istio/istioctl/cmd/istioctl");
        assert_eq!(
            recipe.ldflags(),
            "-s -w -X istio.io/istio/pkg/version.buildVersion=1.30-dev.9739e10e \
             -X istio.io/istio/pkg/version.buildGitRevision=9739e10eb9d7 \
             -X istio.io/istio/pkg/version.buildTag=1.30-dev.9739e10e \
             -X istio.io/istio/pkg/version.buildHub=docker.io/istio \
             -X istio.io/istio/pkg/version.buildStatus=Clean"
        );

        // istiod of the same version: same module, pins and stamps, another main package.
        let istiod = Recipe::pilot_discovery(&spec, &module);
        assert_eq!(istiod.package, "istio.io/istio/pilot/cmd/pilot-discovery");
        assert_eq!(
            (istiod.module_id(), istiod.overrides(), istiod.ldflags()),
            (recipe.module_id(), recipe.overrides(), recipe.ldflags())
        );
    }

    #[test]
    fn go_mod_without_pins_and_tools_go() {
        let recipe = Recipe::etcd("v3.6.16");
        assert_eq!(
            go_mod(
                "etcd-v3.6.16",
                (&recipe.module, &recipe.module_version),
                &[]
            ),
            "module labcheck.local/etcd-v3.6.16\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 v3.6.16\n"
        );
        assert_eq!(
            tools_go(&recipe.package),
            "//go:build tools\n\npackage tools\n\nimport _ \"go.etcd.io/etcd/server/v3\"\n"
        );
        assert_eq!(recipe.ldflags(), "-s -w");
    }

    #[test]
    fn kubernetes_recipe_stamps_both_version_packages() {
        let recipe = Recipe::kubernetes(Tool::Kubectl, "v1.35.4");
        assert_eq!(recipe.package, "k8s.io/kubernetes/cmd/kubectl");
        assert_eq!(recipe.staging.as_deref(), Some("v0.35.4"));
        let flags = recipe.ldflags();
        for want in [
            "-X k8s.io/component-base/version.gitVersion=v1.35.4",
            "-X k8s.io/component-base/version.gitMajor=1",
            "-X k8s.io/component-base/version.gitMinor=35",
            "-X k8s.io/client-go/pkg/version.gitVersion=v1.35.4",
        ] {
            assert!(flags.contains(want), "{flags} lacks {want}");
        }
        for (tool, package) in [
            (Tool::KubeApiserver, "k8s.io/kubernetes/cmd/kube-apiserver"),
            (
                Tool::KubeControllerManager,
                "k8s.io/kubernetes/cmd/kube-controller-manager",
            ),
            (Tool::KubeScheduler, "k8s.io/kubernetes/cmd/kube-scheduler"),
        ] {
            let other = Recipe::kubernetes(tool, "v1.35.4");
            assert_eq!(other.package, package);
            assert_eq!(
                (other.module_id(), other.overrides(), other.ldflags()),
                (recipe.module_id(), recipe.overrides(), recipe.ldflags()),
                "{tool} is built like kubectl"
            );
        }
    }

    #[test]
    fn kwok_recipe_builds_its_command() {
        let recipe = Recipe::kwok("v0.8.0");
        assert_eq!(recipe.module_id(), "sigs.k8s.io/kwok@v0.8.0");
        assert_eq!(recipe.package, "sigs.k8s.io/kwok/cmd/kwok");
        assert!(recipe.overrides().is_empty());
        assert_eq!(recipe.ldflags(), "-s -w");
    }

    #[test]
    fn staging_replaces_come_from_the_go_mod() {
        let upstream = "module k8s.io/kubernetes\n\ngo 1.25.0\n\n\
            require (\n\tk8s.io/api v0.0.0\n\tgithub.com/x/y v1.0.0 // indirect\n)\n\n\
            replace (\n\
            \tk8s.io/api => ./staging/src/k8s.io/api\n\
            \tk8s.io/client-go => ./staging/src/k8s.io/client-go // staging\n\
            \tgithub.com/x/y => github.com/x/y v1.0.1\n\
            )\n\n\
            replace k8s.io/kubectl => ./staging/src/k8s.io/kubectl\n\
            replace k8s.io/other v0.0.0 => ../elsewhere\n";
        let lines: Vec<String> = staging_replaces(upstream, "v0.35.4")
            .iter()
            .map(Replace::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "k8s.io/api => k8s.io/api v0.35.4",
                "k8s.io/client-go => k8s.io/client-go v0.35.4",
                "k8s.io/kubectl => k8s.io/kubectl v0.35.4",
            ]
        );
        assert!(staging_replaces("module x\n", "v0.1.0").is_empty());
    }

    #[test]
    fn go_versions() {
        assert_eq!(parse_go_version("go1.26.8"), Some((1, 26)));
        assert_eq!(parse_go_version("go1.27rc1"), Some((1, 27)));
        assert_eq!(parse_go_version("devel"), None);
        assert!(parse_go_version("go1.25.3") < Some(GO_MIN));
    }
}
