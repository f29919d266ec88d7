//! What cells need beyond a sandbox, prepared once per run before any cell starts: the cluster
//! backend and the tools each cell puts first on the learner's PATH (istioctl of the cell's Istio
//! version, the kubectl that matches the cluster).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cluster::Backend;
use crate::model::ToolsInfo;

/// What a lab needs, from its Feature's tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Files and commands only.
    Sandbox,
    /// A cluster (`@kubernetes`).
    Cluster,
    /// A cluster and istioctl, once per Istio version of the matrix (`@istio`).
    Istio,
    /// As [`Needs::Istio`], on a cluster with a live mesh: controllers, a simulated node and
    /// istiod of the cell's version (`@mesh`, `@メッシュ`).
    Mesh,
    /// A cluster with a real node: the kubelet, containerd, kube-proxy and CoreDNS, Pods
    /// running the image table's images (`@node`, `@ノード`).
    Node,
}

impl Needs {
    pub fn of(feature_tags: &[String]) -> Needs {
        use crate::lint::tags;
        if tags::has(feature_tags, tags::MESH) {
            Needs::Mesh
        } else if tags::has(feature_tags, tags::NODE) {
            Needs::Node
        } else if tags::has(feature_tags, tags::ISTIO) {
            Needs::Istio
        } else if tags::has(feature_tags, tags::KUBERNETES) {
            Needs::Cluster
        } else {
            Needs::Sandbox
        }
    }

    /// Whether the lab runs once per Istio version, with that version's istioctl.
    pub fn istio(self) -> bool {
        matches!(self, Needs::Istio | Needs::Mesh)
    }

    /// Whether the lab's cells have a cluster.
    pub fn cluster(self) -> bool {
        self != Needs::Sandbox
    }
}

/// A resolved tool.
#[derive(Clone, Debug)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// Where it came from, for reports (cache, build with overrides, download, PATH).
    pub source: String,
    pub path: PathBuf,
}

/// The run's environment.
#[derive(Clone, Debug)]
pub struct Environment {
    pub backend: Option<Backend>,
    pub kubectl: Option<Tool>,
    pub kubernetes: Option<Tool>,
    /// istioctl by matrix label.
    pub istioctl: BTreeMap<String, Tool>,
    /// What a live mesh runs (`@mesh` cells only): istiod by matrix label, and the controllers
    /// and kwok, which every version shares.
    pub pilot_discovery: BTreeMap<String, Tool>,
    /// The sidecars' agent and the echo app (server, client) by matrix label.
    pub per_version: BTreeMap<String, Vec<Tool>>,
    pub mesh: Vec<Tool>,
    /// What a real node runs (`@node` cells only): the controllers, the kubelet, its runtime,
    /// the CNI plugins, kube-proxy, CoreDNS; and the images it holds.
    pub node: Vec<Tool>,
    pub images: Vec<crate::images::Built>,
}

impl Environment {
    /// An environment for labs that need no cluster.
    pub fn sandbox_only() -> Environment {
        Environment {
            backend: None,
            kubectl: None,
            kubernetes: None,
            istioctl: BTreeMap::new(),
            pilot_discovery: BTreeMap::new(),
            per_version: BTreeMap::new(),
            mesh: Vec::new(),
            node: Vec::new(),
            images: Vec::new(),
        }
    }

    /// The tools a cell with `label` runs with.
    pub fn tools_for(&self, needs: Needs, label: &str) -> Vec<&Tool> {
        let mut tools = Vec::new();
        if needs.istio()
            && let Some(t) = self.istioctl.get(label)
        {
            tools.push(t);
        }
        if needs.cluster() {
            tools.extend(self.kubectl.iter());
            tools.extend(self.kubernetes.iter());
        }
        if needs == Needs::Mesh {
            tools.extend(self.pilot_discovery.get(label));
            tools.extend(self.per_version.get(label).into_iter().flatten());
            tools.extend(self.mesh.iter());
        }
        if needs == Needs::Node {
            tools.extend(self.node.iter());
        }
        tools
    }

    /// The binaries and images of a real node, when all were resolved.
    pub fn node_tools(&self) -> Option<crate::cluster::node::NodeTools> {
        use crate::toolchain::Tool as T;
        let named = |tool: T| {
            self.node
                .iter()
                .find(|t| t.name == tool.name())
                .map(|t| t.path.clone())
        };
        let cni = [T::CniBridge, T::CniHostLocal, T::CniLoopback, T::CniPortmap]
            .into_iter()
            .map(named)
            .collect::<Option<Vec<_>>>()?;
        Some(crate::cluster::node::NodeTools {
            kube_controller_manager: named(T::KubeControllerManager)?,
            kube_scheduler: named(T::KubeScheduler)?,
            kubelet: named(T::Kubelet)?,
            kube_proxy: named(T::KubeProxy)?,
            containerd: named(T::Containerd)?,
            containerd_shim: named(T::ContainerdShim)?,
            ctr: named(T::Ctr)?,
            runc: named(T::Runc)?,
            cni,
            images: self.images.clone(),
        })
    }

    /// The binaries of a live mesh for a cell with `label`, when all were resolved.
    pub fn mesh_tools(&self, label: &str) -> Option<crate::cluster::MeshTools> {
        let named = |name: &str| {
            self.mesh
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.path.clone())
        };
        let versioned = |name: &str| {
            self.per_version
                .get(label)?
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.path.clone())
        };
        Some(crate::cluster::MeshTools {
            kube_controller_manager: named("kube-controller-manager")?,
            kube_scheduler: named("kube-scheduler")?,
            kwok: named("kwok")?,
            pilot_discovery: self.pilot_discovery.get(label)?.path.clone(),
            pilot_agent: versioned("pilot-agent")?,
            envoy: named("envoy")?,
            echo_server: versioned("echo-server")?,
            echo_client: versioned("echo-client")?,
        })
    }

    /// The report's view of a cell's toolchain.
    /// A real node's cell lists the image table's images too, each with what it really holds.
    pub fn info(&self, needs: Needs, label: &str) -> ToolsInfo {
        let mut tools: Vec<(String, String, String)> = self
            .tools_for(needs, label)
            .into_iter()
            .map(|t| (t.name.clone(), t.version.clone(), t.source.clone()))
            .collect();
        if needs == Needs::Node {
            tools.extend(self.images.iter().map(|i| {
                let reference = i.reference.first().cloned().unwrap_or_default();
                (
                    format!("image {reference}"),
                    i.digest.clone(),
                    i.contents.clone(),
                )
            }));
        }
        ToolsInfo { tools }
    }
}

/// What only the cluster runs, never the learner (besides a real node's tools,
/// [`crate::toolchain::node::node_tools`]).
const CLUSTER_ONLY: &[&str] = &[
    "kube-apiserver",
    "pilot-discovery",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "pilot-agent",
    "envoy",
    "echo-server",
    "echo-client",
];

/// The tools a cell puts first on the learner's PATH, by name: all but those only the cluster
/// runs.
pub fn learner_tools(tools: &[&Tool]) -> Vec<(String, PathBuf)> {
    tools
        .iter()
        .filter(|t| {
            !CLUSTER_ONLY.contains(&t.name.as_str())
                && !crate::toolchain::node::node_tools().any(|n| n.name() == t.name)
        })
        .map(|t| (t.name.clone(), t.path.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            version: "v1".to_owned(),
            source: "cache".to_owned(),
            path: PathBuf::from(format!("/cache/{name}")),
        }
    }

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|t| format!("@{t}")).collect()
    }

    #[test]
    fn mesh_implies_istio_in_both_languages() {
        assert_eq!(Needs::of(&tags(&["mesh"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["メッシュ"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["istio", "mesh"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["istio"])), Needs::Istio);
        assert_eq!(Needs::of(&tags(&["kubernetes"])), Needs::Cluster);
        assert_eq!(Needs::of(&tags(&[])), Needs::Sandbox);
        assert!(Needs::Mesh.istio() && Needs::Istio.istio() && !Needs::Cluster.istio());
    }

    #[test]
    fn a_node_cell_runs_the_nodes_tools_and_the_learner_gets_none() {
        let mut env = Environment::sandbox_only();
        env.kubectl = Some(tool("kubectl"));
        env.node = ["kube-controller-manager", "kube-scheduler"]
            .into_iter()
            .chain(crate::toolchain::node::node_tools().map(|t| t.name()))
            .map(tool)
            .collect();
        assert_eq!(Needs::of(&tags(&["kubernetes", "node"])), Needs::Node);
        assert_eq!(Needs::of(&tags(&["ノード"])), Needs::Node);
        let learner: Vec<String> = learner_tools(&env.tools_for(Needs::Node, "-"))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(learner, ["kubectl"]);
        let node = env.node_tools().expect("all resolved");
        assert_eq!(node.kubelet, PathBuf::from("/cache/kubelet"));
        assert_eq!(node.cni.len(), 4);
        assert!(Environment::sandbox_only().node_tools().is_none());
    }

    #[test]
    fn only_a_mesh_cell_runs_the_mesh_tools_and_the_learner_gets_none() {
        let mut env = Environment::sandbox_only();
        env.istioctl.insert("1.31".into(), tool("istioctl"));
        env.kubectl = Some(tool("kubectl"));
        env.kubernetes = Some(tool("kube-apiserver"));
        env.pilot_discovery
            .insert("1.31".into(), tool("pilot-discovery"));
        env.per_version.insert(
            "1.31".into(),
            ["pilot-agent", "echo-server", "echo-client"]
                .map(tool)
                .to_vec(),
        );
        env.mesh = ["kube-controller-manager", "kube-scheduler", "kwok", "envoy"]
            .map(tool)
            .to_vec();
        let names = |needs| -> Vec<String> {
            env.tools_for(needs, "1.31")
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(
            names(Needs::Istio),
            ["istioctl", "kubectl", "kube-apiserver"]
        );
        assert_eq!(names(Needs::Mesh).len(), 11);
        let learner: Vec<String> = learner_tools(&env.tools_for(Needs::Mesh, "1.31"))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(learner, ["istioctl", "kubectl"]);
        let mesh = env.mesh_tools("1.31").expect("all resolved");
        assert_eq!(
            mesh.pilot_discovery,
            PathBuf::from("/cache/pilot-discovery")
        );
        assert_eq!(
            (mesh.pilot_agent, mesh.envoy),
            (
                PathBuf::from("/cache/pilot-agent"),
                PathBuf::from("/cache/envoy")
            )
        );
        assert!(env.mesh_tools("1.30").is_none(), "no istiod for 1.30");
    }
}
