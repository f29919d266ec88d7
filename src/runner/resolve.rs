//! Resolving a run's [`Environment`]: the versions file that applies to the labs, the Istio
//! matrix, every tool the planned cells need (built where the cache lacks it) and the cluster
//! backend they run on. The command line only says what was asked; this decides what it means.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::environment::{Environment, Needs, Tool, path_of, tool_of};
use super::{CellPlan, default_state_dir, interruptible};
use crate::cluster::{self, Backend, LocalTools};
use crate::toolchain::{self, Toolchain, Versions};

/// Where clusters come from (`--cluster`).
#[derive(Clone, Debug, Default)]
pub enum ClusterChoice {
    /// kube-apiserver + etcd inside each cell (the default).
    #[default]
    Local,
    /// A named context of a kubeconfig; labs mutate it, so it must be allowed.
    Existing {
        kubeconfig: Option<PathBuf>,
        context: Option<String>,
        allowed: bool,
    },
    /// A kind cluster per cell.
    Kind { node_image: Option<String> },
}

/// Why a run's environment could not be had.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// A tool could not be resolved.
    #[error("{}", toolchain::error_chain(.0))]
    Tool(#[from] toolchain::ToolError),
    /// The versions file could not be read.
    #[error("{}", toolchain::error_chain(&**.0))]
    Setup(Arc<toolchain::ToolError>),
    #[error("--cluster existing needs --kubeconfig")]
    NoKubeconfig,
    #[error("--cluster existing needs --context")]
    NoContext,
    #[error(transparent)]
    Cluster(#[from] cluster::ClusterError),
    /// An image of the table could not be built.
    #[error(transparent)]
    Image(#[from] crate::images::ImageError),
    /// A signal came while tools were being built; nothing half-built was kept.
    #[error("interrupted while installing tools; nothing half-built was kept")]
    Interrupted(i32),
}

impl EnvironmentError {
    /// The exit code: 128 + the signal for an interruption, else 2 (a harness error).
    pub fn exit_code(&self) -> i32 {
        match self {
            EnvironmentError::Interrupted(signal) => 128 + signal,
            _ => 2,
        }
    }
}

/// The toolchain and the versions file, or why the versions file could not be read.
pub type Setup = Result<(Toolchain, Versions), Arc<toolchain::ToolError>>;

/// The toolchain and the versions file that apply to the labs at `paths` (the nearest
/// `istio-versions.toml` walking up from them, else the working directory's).
pub fn tool_setup_for(paths: &[PathBuf]) -> Setup {
    let versions = toolchain::load_versions(&toolchain::versions_dir(paths)).map_err(Arc::new)?;
    let tc = Toolchain::new(Toolchain::default_cache_dir()).with_versions(&versions);
    Ok((tc, versions))
}

/// The Istio labels to run: those asked for, else the versions file's default matrix; a label
/// asked for twice (`--istio 1.31,1.31`) is one point of the matrix.
pub fn matrix(versions: &Versions, requested: &[String]) -> Vec<String> {
    let mut labels = if requested.is_empty() {
        versions.default_labels().to_vec()
    } else {
        requested.to_vec()
    };
    let mut seen = std::collections::HashSet::new();
    labels.retain(|l| seen.insert(l.clone()));
    labels
}

fn tool(r: &toolchain::Resolved) -> Tool {
    Tool {
        name: r.tool.name().to_owned(),
        version: r.version.clone(),
        source: r.source.to_string(),
        path: r.path.clone(),
    }
}

/// The environment the planned cells need: nothing beyond the sandbox for sandbox-only labs,
/// else the toolchain resolved (built where missing) and the cluster backend. A signal during
/// the builds stops them and removes what this process half-wrote.
pub async fn environment_for(
    setup: &Setup,
    choice: &ClusterChoice,
    cells: &[CellPlan],
) -> Result<Environment, EnvironmentError> {
    if cells.iter().all(|c| c.needs == Needs::Sandbox) {
        return Ok(Environment::sandbox_only());
    }
    let (tc, versions) = match setup {
        Ok(setup) => setup,
        Err(e) => return Err(EnvironmentError::Setup(e.clone())),
    };
    match interruptible(prepare(tc, versions, choice, cells)).await {
        Ok(env) => env,
        Err(signal) => {
            tc.clean_interrupted();
            Err(EnvironmentError::Interrupted(signal))
        }
    }
}

/// Where a real node's tools (resolved) keep the inputs of the table's images: the pause
/// container's source beside the kubelet, CoreDNS and the sample images' programs.
fn node_sources(node: &[Tool]) -> crate::images::Sources {
    crate::images::Sources::of_node(|tool| path_of(node, tool).unwrap_or_default())
}

/// Each upgrade cell's istioctl of both its versions, as the learner finds them beside
/// `istioctl` (its older version's): `istioctl-1.30`, `istioctl-1.31`.
fn upgrade_tools(
    istioctl: &BTreeMap<String, Tool>,
    cells: &[CellPlan],
) -> BTreeMap<String, Vec<Tool>> {
    let mut upgrades = BTreeMap::new();
    for cell in cells {
        let versions = crate::model::label_versions(&cell.id.label);
        if versions.len() < 2 {
            continue;
        }
        let named = versions
            .iter()
            .filter_map(|v| {
                istioctl.get(*v).map(|t| Tool {
                    name: super::environment::istioctl_name(&cell.id.label, v),
                    ..t.clone()
                })
            })
            .collect();
        upgrades.insert(cell.id.label.clone(), named);
    }
    upgrades
}

/// Resolves every tool the planned cells need (building what the cache lacks) and the backend.
async fn prepare(
    tc: &Toolchain,
    versions: &Versions,
    choice: &ClusterChoice,
    cells: &[CellPlan],
) -> Result<Environment, EnvironmentError> {
    let mut env = Environment::sandbox_only();
    // The Istio versions the cells run: an upgrade cell's label names two.
    let labels = |mesh: bool| {
        let mut labels: Vec<String> = cells
            .iter()
            .filter(|c| c.needs.istio() && (!mesh || c.needs == Needs::Mesh))
            .flat_map(|c| crate::model::label_versions(&c.id.label))
            .map(str::to_owned)
            .collect();
        labels.sort();
        labels.dedup();
        labels
    };
    let mesh_labels = labels(true);
    let node = cells.iter().any(|c| c.needs.node());
    if node && matches!(choice, ClusterChoice::Existing { .. }) {
        let backend = "existing";
        return Err(cluster::ClusterError::NodeNeedsLocal { backend }.into());
    }
    for label in labels(false) {
        let spec = versions.resolve(&label)?;
        env.istioctl.insert(label, tool(&tc.istioctl(&spec).await?));
    }
    env.upgrades = upgrade_tools(&env.istioctl, cells);
    // A real node's tools and images, only when a `@node` or `@mesh` cell is planned.
    if node {
        let needs = [
            toolchain::Need::KubeControllerManager,
            toolchain::Need::KubeScheduler,
        ]
        .into_iter()
        .chain(toolchain::Need::node());
        for need in needs {
            env.node.push(tool(&tc.resolve(&need).await?));
        }
        let common = crate::images::common();
        env.images =
            crate::images::ensure(tc.cache_dir(), &node_sources(&env.node), &common).await?;
    }
    // Istio's images, only for the versions of `@mesh` cells (a plain cell resolves none),
    // tagged as that version's istioctl renders them.
    for label in mesh_labels {
        let spec = versions.resolve(&label)?;
        let mut builds = Vec::new();
        for need in toolchain::Need::mesh(&spec) {
            builds.push(tool(&tc.resolve(&need).await?));
        }
        // The samples' images are built from the samples beside the version's istioctl.
        let istioctl = tc.resolve(&toolchain::Need::Istioctl(spec.clone())).await?;
        let path = |tool| match tool {
            toolchain::Tool::Istioctl => istioctl.path.clone(),
            tool => path_of(&builds, tool).unwrap_or_default(),
        };
        let istio = crate::images::IstioSources::of_builds(&spec.version, path);
        let sources = node_sources(&env.node).with_istio(istio);
        let rows = crate::images::per_istio_version();
        let images = crate::images::ensure(tc.cache_dir(), &sources, &rows).await?;
        env.istio.insert(label.clone(), builds);
        env.istio_images.insert(label, images);
    }
    env.kubectl = Some(tool(&tc.kubectl().await?));
    env.backend = Some(match choice {
        ClusterChoice::Local => {
            let apiserver = tc.kube_apiserver().await?;
            let etcd = tc.etcd().await?;
            env.kubernetes = Some(tool(&apiserver));
            Backend::Local(cluster::Local {
                tools: LocalTools {
                    etcd: etcd.path,
                    kube_apiserver: apiserver.path,
                },
                templates: Some(crate::state::Area::Templates.dir(&default_state_dir())),
            })
        }
        ClusterChoice::Existing {
            kubeconfig,
            context,
            allowed,
        } => {
            let kubeconfig = kubeconfig.clone().ok_or(EnvironmentError::NoKubeconfig)?;
            let context = context.clone().ok_or(EnvironmentError::NoContext)?;
            if !allowed {
                return Err(cluster::ClusterError::ExistingNotAllowed { context }.into());
            }
            Backend::Existing(cluster::Existing {
                kubeconfig,
                context,
                allowed: *allowed,
            })
        }
        ClusterChoice::Kind { node_image } => {
            let (kind, images) = kind_backend(tc, node_image.as_deref()).await?;
            env.images.extend(images);
            Backend::Kind(kind)
        }
    });
    if matches!(env.backend, Some(Backend::Local(_))) {
        preload(tc, &mut env, cells).await?;
    }
    Ok(env)
}

/// The containerd root each planned real node starts from: its images unpacked, built where
/// the cache lacks it (one per set of images, so per Istio version of the `@mesh` cells).
async fn preload(
    tc: &Toolchain,
    env: &mut Environment,
    cells: &[CellPlan],
) -> Result<(), EnvironmentError> {
    use crate::images::preload;
    let named = |tool| tool_of(&env.node, tool).cloned();
    let (Some(containerd), Some(ctr)) = (
        named(toolchain::Tool::Containerd),
        named(toolchain::Tool::Ctr),
    ) else {
        return Ok(());
    };
    let runtime = preload::Runtime {
        containerd: &containerd.path,
        ctr: &ctr.path,
        version: &containerd.version,
    };
    for cell in cells.iter().filter(|c| c.needs.node()) {
        let images = env.images_for(cell.needs, &cell.id.label);
        let key = preload::key(runtime.version, &images);
        if let std::collections::btree_map::Entry::Vacant(entry) = env.roots.entry(key) {
            entry.insert(preload::ensure(tc.cache_dir(), runtime, &images).await?);
        }
    }
    Ok(())
}

/// The kind backend: kind and the Docker client; labcheck's node image and the images its
/// registry serves (the control plane's, pause, CoreDNS), built where the cache lacks them —
/// unless the user named a node image. Returns the built images too, for the reports.
async fn kind_backend(
    tc: &Toolchain,
    named: Option<&str>,
) -> Result<(cluster::Kind, Vec<crate::images::Built>), EnvironmentError> {
    use toolchain::{Need, Tool as T};
    let kind = tc.resolve(&Need::Kind(T::Kind)).await?.path;
    let docker = tc.resolve(&Need::Kind(T::Docker)).await?.path;
    if let Some(image) = named {
        let node = cluster::KindNode::Named(Some(image.to_owned()));
        return Ok((cluster::Kind { kind, docker, node }, Vec::new()));
    }
    let mut paths = BTreeMap::new();
    let needs = [
        Need::Kubectl,
        Need::KubeApiserver,
        Need::KubeControllerManager,
        Need::KubeScheduler,
        Need::Etcd,
    ]
    .into_iter()
    .chain(Need::node())
    .chain(Need::kind());
    for need in needs {
        let resolved = tc.resolve(&need).await?;
        paths.insert(resolved.tool, resolved.path);
    }
    let path = |tool: T| paths.get(&tool).cloned().unwrap_or_default();
    let mut sources = crate::images::Sources::of_node(path);
    sources.kind_node = Some(crate::images::KindNodeSources::of(
        tc.kubernetes_version(),
        path,
    ));
    let mut rows = crate::images::group(crate::images::Group::ControlPlane);
    rows.extend(crate::images::resolve(["registry.k8s.io/pause:3.10.1"])?);
    rows.extend(crate::images::resolve([
        "registry.k8s.io/coredns/coredns:v1.15.0",
    ])?);
    let served = crate::images::ensure(tc.cache_dir(), &sources, &rows).await?;
    let node_rows = crate::images::group(crate::images::Group::KindNode);
    let mut node = crate::images::ensure(tc.cache_dir(), &sources, &node_rows).await?;
    let image = node.pop().ok_or_else(|| {
        EnvironmentError::from(crate::images::ImageError::no_recipe(
            crate::images::KIND_NODE,
        ))
    })?;
    let kind = cluster::Kind {
        kind,
        docker,
        node: cluster::KindNode::Built {
            reference: crate::images::KIND_NODE.to_owned(),
            archive: image.archive.clone(),
            images: served.iter().map(|b| b.archive.clone()).collect(),
        },
    };
    let mut images = served;
    images.push(image);
    Ok((kind, images))
}
