//! The tools of a real node, in one table: the kubelet and kube-proxy (from `k8s.io/kubernetes`
//! like the API server), containerd with its runc shim and `ctr`, runc, the CNI plugins a
//! node's network needs, CoreDNS, and the Go programs of the image table's sample images
//! (go-httpbin, fortio) — each built from its Go module at the version the config's `[node]`
//! table pins ([`NodeVersions`]).

use serde::Deserialize;

use super::Tool;
use super::forms::is_tag;
use super::gobuild::Recipe;

/// The containerd version when the config's `[node]` table names none.
pub const DEFAULT_CONTAINERD: &str = "v2.4.2";
/// The runc version when the config's `[node]` table names none.
pub const DEFAULT_RUNC: &str = "v1.5.3";
/// The CNI plugins' version when the config's `[node]` table names none.
pub const DEFAULT_CNI_PLUGINS: &str = "v1.9.1";
/// The CoreDNS version when the config's `[node]` table names none.
pub const DEFAULT_COREDNS: &str = "v1.15.0";
/// go-httpbin's version when the config's `[node]` table names none: the one Istio's
/// `samples/httpbin` names.
pub const DEFAULT_GO_HTTPBIN: &str = "v2.15.0";
/// fortio's version when the config's `[node]` table names none.
pub const DEFAULT_FORTIO: &str = "v1.68.2";

/// The versions of a real node's components that are not Kubernetes'.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeVersions {
    #[serde(default = "containerd")]
    pub containerd: String,
    #[serde(default = "runc")]
    pub runc: String,
    #[serde(default = "cni_plugins")]
    pub cni_plugins: String,
    #[serde(default = "coredns")]
    pub coredns: String,
    #[serde(default = "go_httpbin")]
    pub go_httpbin: String,
    #[serde(default = "fortio")]
    pub fortio: String,
}

fn containerd() -> String {
    DEFAULT_CONTAINERD.into()
}
fn runc() -> String {
    DEFAULT_RUNC.into()
}
fn cni_plugins() -> String {
    DEFAULT_CNI_PLUGINS.into()
}
fn coredns() -> String {
    DEFAULT_COREDNS.into()
}
fn go_httpbin() -> String {
    DEFAULT_GO_HTTPBIN.into()
}
fn fortio() -> String {
    DEFAULT_FORTIO.into()
}

impl Default for NodeVersions {
    fn default() -> Self {
        NodeVersions {
            containerd: containerd(),
            runc: runc(),
            cni_plugins: cni_plugins(),
            coredns: coredns(),
            go_httpbin: go_httpbin(),
            fortio: fortio(),
        }
    }
}

impl NodeVersions {
    /// Every version is a tag (`v2.4.2`): the module proxy resolves no names.
    pub fn validate(&self) -> Result<(), String> {
        for (key, version) in [
            ("containerd", &self.containerd),
            ("runc", &self.runc),
            ("cni_plugins", &self.cni_plugins),
            ("coredns", &self.coredns),
            ("go_httpbin", &self.go_httpbin),
            ("fortio", &self.fortio),
        ] {
            if !is_tag(version) {
                return Err(format!(
                    "[node] {key} {version:?} is not a tag like {}",
                    Self::default().of_key(key)
                ));
            }
        }
        Ok(())
    }

    fn of_key(&self, key: &str) -> &str {
        match key {
            "containerd" => &self.containerd,
            "runc" => &self.runc,
            "cni_plugins" => &self.cni_plugins,
            "go_httpbin" => &self.go_httpbin,
            "fortio" => &self.fortio,
            _ => &self.coredns,
        }
    }

    /// The version `tool` (one of [`node_tools`]) is built at; `kubernetes` for the kubelet
    /// and kube-proxy.
    pub fn version<'a>(&'a self, tool: Tool, kubernetes: &'a str) -> &'a str {
        match row(tool).map(|r| r.module) {
            Some(Module::Kubernetes) | None => kubernetes,
            Some(Module::Containerd) => &self.containerd,
            Some(Module::Runc) => &self.runc,
            Some(Module::Cni) => &self.cni_plugins,
            Some(Module::Coredns) => &self.coredns,
            Some(Module::GoHttpbin) => &self.go_httpbin,
            Some(Module::Fortio) => &self.fortio,
        }
    }
}

/// Which module a node tool comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    Kubernetes,
    Containerd,
    Runc,
    Cni,
    Coredns,
    GoHttpbin,
    Fortio,
}

impl Module {
    fn path(self) -> &'static str {
        match self {
            Module::Kubernetes => "k8s.io/kubernetes",
            Module::Containerd => "github.com/containerd/containerd/v2",
            Module::Runc => "github.com/opencontainers/runc",
            Module::Cni => "github.com/containernetworking/plugins",
            Module::Coredns => "github.com/coredns/coredns",
            Module::GoHttpbin => "github.com/mccutchen/go-httpbin/v2",
            Module::Fortio => "fortio.org/fortio",
        }
    }

    /// The `-X` assignments that make the binary report `version`.
    fn stamps(self, version: &str) -> Vec<String> {
        match self {
            Module::Kubernetes => Vec::new(),
            Module::Containerd => vec![format!("{}/version.Version={version}", self.path())],
            Module::Runc => vec![format!("main.version={}", version.trim_start_matches('v'))],
            Module::Cni => vec![format!(
                "{}/pkg/utils/buildversion.BuildVersion={version}",
                self.path()
            )],
            // CoreDNS's version is a constant of its source; go-httpbin reports none; fortio
            // reads its module's version from the build info.
            Module::Coredns | Module::GoHttpbin | Module::Fortio => Vec::new(),
        }
    }

    /// Build tags: containerd without the snapshotters that need cgo; runc with seccomp
    /// (containerd gives every sandbox a seccomp profile, which a runc without it refuses).
    fn tags(self) -> &'static [&'static str] {
        match self {
            Module::Containerd => &["no_btrfs", "no_devmapper", "no_zfs"],
            Module::Runc => &["seccomp"],
            _ => &[],
        }
    }

    /// runc needs cgo (its `nsexec` is C, its seccomp is libseccomp's); the rest are static.
    fn cgo(self) -> bool {
        self == Module::Runc
    }
}

/// One tool of the node: its module and main package (under the module's path).
struct Row {
    tool: Tool,
    module: Module,
    package: &'static str,
}

const ROWS: [Row; 13] = [
    Row {
        tool: Tool::Kubelet,
        module: Module::Kubernetes,
        package: "cmd/kubelet",
    },
    Row {
        tool: Tool::KubeProxy,
        module: Module::Kubernetes,
        package: "cmd/kube-proxy",
    },
    Row {
        tool: Tool::Containerd,
        module: Module::Containerd,
        package: "cmd/containerd",
    },
    Row {
        tool: Tool::ContainerdShim,
        module: Module::Containerd,
        package: "cmd/containerd-shim-runc-v2",
    },
    Row {
        tool: Tool::Ctr,
        module: Module::Containerd,
        package: "cmd/ctr",
    },
    Row {
        tool: Tool::Runc,
        module: Module::Runc,
        package: "",
    },
    Row {
        tool: Tool::CniBridge,
        module: Module::Cni,
        package: "plugins/main/bridge",
    },
    Row {
        tool: Tool::CniHostLocal,
        module: Module::Cni,
        package: "plugins/ipam/host-local",
    },
    Row {
        tool: Tool::CniLoopback,
        module: Module::Cni,
        package: "plugins/main/loopback",
    },
    Row {
        tool: Tool::CniPortmap,
        module: Module::Cni,
        package: "plugins/meta/portmap",
    },
    Row {
        tool: Tool::Coredns,
        module: Module::Coredns,
        package: "",
    },
    Row {
        tool: Tool::GoHttpbin,
        module: Module::GoHttpbin,
        package: "cmd/go-httpbin",
    },
    Row {
        tool: Tool::Fortio,
        module: Module::Fortio,
        package: "",
    },
];

/// The node's tools, in build order.
pub fn node_tools() -> impl Iterator<Item = Tool> {
    ROWS.iter().map(|r| r.tool)
}

fn row(tool: Tool) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.tool == tool)
}

/// How to build `tool` (one of [`node_tools`]) at `version`; `None` for any other tool.
pub fn recipe(tool: Tool, version: &str) -> Option<Recipe> {
    let row = row(tool)?;
    if row.module == Module::Kubernetes {
        let mut recipe = Recipe::kubernetes(tool, version);
        if tool == Tool::Kubelet {
            recipe.companions = vec![(
                "build/pause/linux/pause.c".into(),
                super::tool::PAUSE_SOURCE,
            )];
        }
        return Some(recipe);
    }
    let module = row.module.path();
    let package = if row.package.is_empty() {
        module.to_owned()
    } else {
        format!("{module}/{}", row.package)
    };
    Some(Recipe {
        tool,
        version: version.to_owned(),
        module: module.to_owned(),
        module_version: version.to_owned(),
        replace: Vec::new(),
        staging: None,
        package,
        stamps: row.module.stamps(version),
        companions: Vec::new(),
        tags: row.module.tags().iter().map(|t| t.to_string()).collect(),
        cgo: Some(row.module.cgo()),
        vendor_pins: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_tool_has_a_recipe_from_its_module() {
        let versions = NodeVersions::default();
        for tool in node_tools() {
            let version = versions.version(tool, "v1.35.4");
            let recipe = recipe(tool, version).expect("a recipe");
            assert_eq!(recipe.tool, tool);
            assert!(recipe.package.starts_with(&recipe.module), "{recipe:?}");
        }
        assert_eq!(
            recipe(Tool::Runc, "v1.5.3").map(|r| (r.tags, r.cgo)),
            Some((vec!["seccomp".to_owned()], Some(true)))
        );
        assert_eq!(
            recipe(Tool::Kubelet, "v1.35.4").map(|r| r.package),
            Some("k8s.io/kubernetes/cmd/kubelet".to_owned())
        );
        assert!(recipe(Tool::Istioctl, "1.31").is_none());
    }

    #[test]
    fn a_version_that_is_no_tag_is_refused() {
        let bad = NodeVersions {
            runc: "1.5".into(),
            ..NodeVersions::default()
        };
        let err = bad.validate().expect_err("refused");
        assert!(
            err.contains("[node] runc \"1.5\" is not a tag like v1.5.3"),
            "{err}"
        );
    }
}
