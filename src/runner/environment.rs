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
    /// As [`Needs::Istio`], on a cluster with a real node ([`Needs::Node`]) that also holds
    /// Istio's images of the cell's version, for the lab's own install (`@mesh`, `@メッシュ`);
    /// of both versions of an upgrade cell (`@upgrade`, `@アップグレード`).
    Mesh,
    /// A cluster with a real node: the kubelet, containerd, kube-proxy and CoreDNS, Pods
    /// running the image table's images (`@node`, `@ノード`).
    Node,
}

impl Needs {
    pub fn of(feature_tags: &[String]) -> Needs {
        use crate::lint::tags;
        if tags::has(feature_tags, tags::MESH) || tags::has(feature_tags, tags::UPGRADE) {
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

    /// Whether the lab's cells have a real node.
    pub fn node(self) -> bool {
        matches!(self, Needs::Node | Needs::Mesh)
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
    /// What a real node runs (`@node` and `@mesh` cells only): the controllers, the kubelet,
    /// its runtime, the CNI plugins, kube-proxy, CoreDNS; and the images every node holds.
    pub node: Vec<Tool>,
    pub images: Vec<crate::images::Built>,
    /// Istio's builds Istio's images are made of (`@mesh` cells only), by matrix label.
    pub istio: BTreeMap<String, Vec<Tool>>,
    /// Istio's images (`pilot`, `proxyv2`, the echo app) by matrix label.
    pub istio_images: BTreeMap<String, Vec<crate::images::Built>>,
    /// An upgrade cell's istioctl of each of its versions, named `istioctl-<version>`, by the
    /// cell's label (`1.30→1.31`).
    pub upgrades: BTreeMap<String, Vec<Tool>>,
    /// The containerd roots holding a node's images unpacked, by their key
    /// ([`crate::images::preload::key`]).
    pub roots: BTreeMap<String, crate::images::preload::Root>,
}

impl Environment {
    /// An environment for labs that need no cluster.
    pub fn sandbox_only() -> Environment {
        Environment {
            backend: None,
            kubectl: None,
            kubernetes: None,
            istioctl: BTreeMap::new(),
            node: Vec::new(),
            images: Vec::new(),
            istio: BTreeMap::new(),
            istio_images: BTreeMap::new(),
            upgrades: BTreeMap::new(),
            roots: BTreeMap::new(),
        }
    }

    /// The tools a cell with `label` runs with.
    pub fn tools_for(&self, needs: Needs, label: &str) -> Vec<&Tool> {
        let mut tools = Vec::new();
        let versions = crate::model::label_versions(label);
        // An upgrade cell's `istioctl` is its older version's.
        if needs.istio()
            && let Some(t) = self.istioctl.get(versions[0])
        {
            tools.push(t);
            tools.extend(self.upgrades.get(label).into_iter().flatten());
        }
        if needs.cluster() {
            tools.extend(self.kubectl.iter());
            tools.extend(self.kubernetes.iter());
        }
        if needs == Needs::Mesh {
            for v in &versions {
                tools.extend(self.istio.get(*v).into_iter().flatten());
            }
        }
        if needs.node() {
            tools.extend(self.node.iter());
        }
        tools
    }

    /// The images a cell's node holds: the common ones, and for a `@mesh` cell Istio's of its
    /// version (of both, in an upgrade cell).
    pub fn images_for(&self, needs: Needs, label: &str) -> Vec<crate::images::Built> {
        let versions = match needs {
            Needs::Mesh => crate::model::label_versions(label),
            _ => Vec::new(),
        };
        let istio = versions.iter().filter_map(|v| self.istio_images.get(*v));
        // Both versions of an upgrade cell build the samples' images under the same tags: the
        // newer version's is served, as a registry serves the last image pushed to a tag.
        let mut images: Vec<crate::images::Built> = Vec::new();
        for image in self.images.iter().chain(istio.flatten()) {
            images.retain(|i| i.reference != image.reference);
            images.push(image.clone());
        }
        images
    }

    /// The binaries and images of a cell's real node, when all were resolved (for a `@mesh`
    /// cell, Istio's images of its version too).
    pub fn node_tools(&self, needs: Needs, label: &str) -> Option<crate::cluster::node::NodeTools> {
        let versions = crate::model::label_versions(label);
        if needs == Needs::Mesh && !versions.iter().all(|v| self.istio_images.contains_key(*v)) {
            return None;
        }
        use crate::toolchain::Tool as T;
        let named = |tool: T| path_of(&self.node, tool);
        let cni = [T::CniBridge, T::CniHostLocal, T::CniLoopback, T::CniPortmap]
            .into_iter()
            .map(named)
            .collect::<Option<Vec<_>>>()?;
        let images = self.images_for(needs, label);
        let preloaded = tool_of(&self.node, T::Containerd)
            .and_then(|c| {
                self.roots
                    .get(&crate::images::preload::key(&c.version, &images))
            })
            .cloned();
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
            images,
            preloaded,
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
        if needs.node() {
            tools.extend(self.images_for(needs, label).iter().map(|i| {
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

/// The name the learner finds `version`'s istioctl under in a cell labelled `label`:
/// `istioctl`, or in an upgrade cell, which holds two versions, `istioctl-<version>`.
pub fn istioctl_name(label: &str, version: &str) -> String {
    match crate::model::label_versions(label).len() {
        1 => "istioctl".to_owned(),
        _ => format!("istioctl-{version}"),
    }
}

/// What only the cluster runs, never the learner (besides a real node's tools,
/// [`crate::toolchain::node::node_tools`]).
const CLUSTER_ONLY: &[&str] = &[
    "kube-apiserver",
    "pilot-discovery",
    "kube-controller-manager",
    "kube-scheduler",
    "pilot-agent",
    "envoy",
    "echo-server",
    "echo-client",
];

/// Where `tool` is among the resolved `tools`.
pub fn path_of(tools: &[Tool], tool: crate::toolchain::Tool) -> Option<PathBuf> {
    tool_of(tools, tool).map(|t| t.path.clone())
}

/// `tool` among `tools`, by its name.
pub fn tool_of(tools: &[Tool], tool: crate::toolchain::Tool) -> Option<&Tool> {
    tools.iter().find(|t| t.name == tool.name())
}

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

    /// A real node's tools, all resolved.
    fn node_tools() -> Vec<Tool> {
        ["kube-controller-manager", "kube-scheduler"]
            .into_iter()
            .chain(crate::toolchain::node::node_tools().map(|t| t.name()))
            .map(tool)
            .collect()
    }

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|t| format!("@{t}")).collect()
    }

    #[test]
    fn mesh_implies_istio_in_both_languages() {
        assert_eq!(Needs::of(&tags(&["mesh"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["メッシュ"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["upgrade"])), Needs::Mesh);
        assert_eq!(Needs::of(&tags(&["アップグレード"])), Needs::Mesh);
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
        env.node = node_tools();
        assert_eq!(Needs::of(&tags(&["kubernetes", "node"])), Needs::Node);
        assert_eq!(Needs::of(&tags(&["ノード"])), Needs::Node);
        let learner: Vec<String> = learner_tools(&env.tools_for(Needs::Node, "-"))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(learner, ["kubectl"]);
        let node = env.node_tools(Needs::Node, "-").expect("all resolved");
        assert_eq!(node.kubelet, PathBuf::from("/cache/kubelet"));
        assert_eq!(node.cni.len(), 4);
        assert!(
            Environment::sandbox_only()
                .node_tools(Needs::Node, "-")
                .is_none()
        );
    }

    #[test]
    fn a_mesh_cell_runs_a_node_with_istios_images_and_the_learner_gets_none_of_them() {
        let mut env = Environment::sandbox_only();
        env.istioctl.insert("1.31".into(), tool("istioctl"));
        env.kubectl = Some(tool("kubectl"));
        env.kubernetes = Some(tool("kube-apiserver"));
        env.node = node_tools();
        env.istio.insert(
            "1.31".into(),
            [
                "pilot-discovery",
                "pilot-agent",
                "envoy",
                "echo-server",
                "echo-client",
            ]
            .map(tool)
            .to_vec(),
        );
        let image = |reference: &str| crate::images::Built {
            reference: vec![reference.to_owned()],
            archive: PathBuf::from(format!("/cache/{reference}.tar")),
            contents: "what it holds".into(),
            digest: "sha256:0".into(),
        };
        env.images = vec![image("registry.k8s.io/pause:3.10.1")];
        env.istio_images.insert(
            "1.31".into(),
            vec![image("docker.io/istio/pilot:1.31-dev.eed52ebb")],
        );
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
        assert!(names(Needs::Mesh).contains(&"kubelet".to_owned()));
        let learner: Vec<String> = learner_tools(&env.tools_for(Needs::Mesh, "1.31"))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(learner, ["istioctl", "kubectl"]);
        let served = |env: &Environment, needs, label| -> Vec<String> {
            env.node_tools(needs, label)
                .map(|n| n.images.iter().flat_map(|i| i.reference.clone()).collect())
                .unwrap_or_default()
        };
        assert_eq!(served(&env, Needs::Mesh, "1.31").len(), 2);
        assert_eq!(
            served(&env, Needs::Node, "-"),
            ["registry.k8s.io/pause:3.10.1"]
        );
        assert!(
            env.node_tools(Needs::Mesh, "1.30").is_none(),
            "no Istio images for 1.30"
        );
        // An upgrade cell: the older istioctl as `istioctl`, both by version, both versions'
        // images in its node.
        let older = Tool {
            path: PathBuf::from("/cache/1.30/istioctl"),
            ..tool("istioctl")
        };
        env.istioctl.insert("1.30".into(), older);
        env.istio_images.insert(
            "1.30".into(),
            vec![
                image("docker.io/istio/pilot:1.30-dev.9739e10e"),
                image("registry.istio.io/release/tcp-echo-server:1.3"),
            ],
        );
        env.istio_images
            .get_mut("1.31")
            .expect("1.31's images")
            .push(crate::images::Built {
                digest: "sha256:1".into(),
                ..image("registry.istio.io/release/tcp-echo-server:1.3")
            });
        let by_version = |v: &str| Tool {
            name: format!("istioctl-{v}"),
            ..tool(v)
        };
        env.upgrades.insert(
            "1.30→1.31".into(),
            vec![by_version("1.30"), by_version("1.31")],
        );
        let learner: Vec<(String, PathBuf)> =
            learner_tools(&env.tools_for(Needs::Mesh, "1.30→1.31"));
        assert_eq!(
            learner.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["istioctl", "istioctl-1.30", "istioctl-1.31", "kubectl"]
        );
        assert_eq!(learner[0].1, PathBuf::from("/cache/1.30/istioctl"));
        // pause, each version's pilot, and the sample both build under one tag: the newer's.
        let images = env
            .node_tools(Needs::Mesh, "1.30→1.31")
            .expect("both versions' images")
            .images;
        assert_eq!(images.len(), 4, "{images:?}");
        assert_eq!(images[3].digest, "sha256:1");
    }
}
