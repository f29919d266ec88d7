//! The tools of the kind backend, in one table: kind itself, a Docker engine it drives
//! (`dockerd`, its `docker-proxy`, the `docker` client), and what a kind node image holds
//! besides a real node's tools — kubeadm (from `k8s.io/kubernetes` like the kubelet), crictl
//! and the CNI `ptp` plugin kind's node network uses — each built from its Go module at the
//! version the config's `[kind]` table pins ([`KindVersions`]).
//!
//! Docker is built from its module, not taken from Debian's `docker.io` (20.10): that engine
//! asks for every capability the kernel knows for a `--privileged` container, which a machine
//! whose root lacks one (`CAP_SYS_RESOURCE` here) refuses ("unable to apply caps"); from 23.0
//! the engine asks only for what it holds, so kind's privileged node starts.

use serde::Deserialize;

use super::Tool;
use super::forms::is_tag;
use super::gobuild::Recipe;
use super::versions::Replace;

/// kind's version when the config's `[kind]` table names none.
pub const DEFAULT_KIND: &str = "v0.33.0";
/// crictl's version when the config's `[kind]` table names none.
pub const DEFAULT_CRI_TOOLS: &str = "v1.37.0";
/// The Docker engine's and client's version when the config's `[kind]` table names none.
pub const DEFAULT_DOCKER: &str = "v28.5.2";

/// The versions of the kind backend's own tools.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindVersions {
    #[serde(default = "kind")]
    pub kind: String,
    #[serde(default = "cri_tools")]
    pub cri_tools: String,
    #[serde(default = "docker")]
    pub docker: String,
}

fn kind() -> String {
    DEFAULT_KIND.into()
}
fn cri_tools() -> String {
    DEFAULT_CRI_TOOLS.into()
}
fn docker() -> String {
    DEFAULT_DOCKER.into()
}

impl Default for KindVersions {
    fn default() -> Self {
        KindVersions {
            kind: kind(),
            cri_tools: cri_tools(),
            docker: docker(),
        }
    }
}

impl KindVersions {
    /// Every version is a tag (`v0.33.0`): the module proxy resolves no names.
    pub fn validate(&self) -> Result<(), String> {
        let default = Self::default();
        for (key, version, like) in [
            ("kind", &self.kind, &default.kind),
            ("cri_tools", &self.cri_tools, &default.cri_tools),
            ("docker", &self.docker, &default.docker),
        ] {
            if !is_tag(version) {
                return Err(format!("[kind] {key} {version:?} is not a tag like {like}"));
            }
        }
        Ok(())
    }
}

/// A kind cluster of a kept cell, as its record holds it for `labcheck down`: the tools that
/// delete it, its name and its Docker network's.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KindRecord {
    pub kind: std::path::PathBuf,
    pub docker: Option<std::path::PathBuf>,
    /// The cluster's name.
    pub name: String,
    pub network: Option<String>,
}

impl KindRecord {
    /// kind, on the cluster's Docker network, with the Docker client first on its PATH.
    pub fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.kind);
        if let Some(network) = &self.network {
            command.env("KIND_EXPERIMENTAL_DOCKER_NETWORK", network);
        }
        if let Some(dir) = self.docker.as_deref().and_then(std::path::Path::parent) {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::iter::once(dir.to_owned()).chain(std::env::split_paths(&path));
            if let Ok(joined) = std::env::join_paths(dirs) {
                command.env("PATH", joined);
            }
        }
        command
    }

    /// Deletes the cluster, then its network (blocking; what is gone already is no error).
    pub fn delete(&self) {
        use std::process::{Command, Stdio};
        let quiet = |command: &mut Command| {
            let _ = command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        quiet(
            self.command()
                .args(["delete", "cluster", "--name", &self.name]),
        );
        if let (Some(docker), Some(network)) = (&self.docker, &self.network) {
            quiet(Command::new(docker).args(["network", "rm", network]));
        }
    }
}

/// Which module a kind tool comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Module {
    Kind,
    Kubernetes,
    CriTools,
    Cni,
    Moby,
    DockerCli,
}

impl Module {
    fn path(self) -> &'static str {
        match self {
            Module::Kind => "sigs.k8s.io/kind",
            Module::Kubernetes => "k8s.io/kubernetes",
            Module::CriTools => "sigs.k8s.io/cri-tools",
            Module::Cni => "github.com/containernetworking/plugins",
            Module::Moby => "github.com/docker/docker",
            Module::DockerCli => "github.com/docker/cli",
        }
    }

    /// The module version of tag `version`: Docker's modules have no go.mod, so the proxy
    /// serves their tags as `+incompatible`.
    fn module_version(self, version: &str) -> String {
        match self {
            Module::Moby | Module::DockerCli => format!("{version}+incompatible"),
            _ => version.to_owned(),
        }
    }

    /// The `-X` assignments that make the binary report `version`.
    fn stamps(self, version: &str) -> Vec<String> {
        let bare = version.trim_start_matches('v');
        match self {
            Module::CriTools => vec![format!("{}/pkg/version.Version={version}", self.path())],
            Module::Cni => vec![format!(
                "{}/pkg/utils/buildversion.BuildVersion={version}",
                self.path()
            )],
            Module::Moby => vec![format!("{}/dockerversion.Version={bare}", self.path())],
            Module::DockerCli => vec![format!("{}/cli/version.Version={bare}", self.path())],
            // kind's version is a constant of its source; Kubernetes' are the recipe's own.
            Module::Kind | Module::Kubernetes => Vec::new(),
        }
    }

    /// Pins beyond the module's own: the client's dependencies reach the monolithic
    /// `google.golang.org/genproto` of 2023, which still holds the packages its split modules
    /// now have (an ambiguous import); the engine's vendor.mod pins a later one, taken here.
    fn pins(self) -> Vec<Replace> {
        match self {
            Module::DockerCli => vec![Replace {
                path: "google.golang.org/genproto".into(),
                with_path: "google.golang.org/genproto".into(),
                with_version: "v0.0.0-20240227224415-6ceb2ff114de".into(),
            }],
            _ => Vec::new(),
        }
    }

    /// The engine without the storage drivers that need cgo.
    fn tags(self) -> &'static [&'static str] {
        match self {
            Module::Moby => &[
                "exclude_graphdriver_btrfs",
                "exclude_graphdriver_devicemapper",
            ],
            _ => &[],
        }
    }
}

/// One tool: its module and main package (under the module's path).
struct Row {
    tool: Tool,
    module: Module,
    package: &'static str,
}

const ROWS: [Row; 7] = [
    Row {
        tool: Tool::Kind,
        module: Module::Kind,
        package: "",
    },
    Row {
        tool: Tool::Dockerd,
        module: Module::Moby,
        package: "cmd/dockerd",
    },
    Row {
        tool: Tool::DockerProxy,
        module: Module::Moby,
        package: "cmd/docker-proxy",
    },
    Row {
        tool: Tool::Docker,
        module: Module::DockerCli,
        package: "cmd/docker",
    },
    Row {
        tool: Tool::Kubeadm,
        module: Module::Kubernetes,
        package: "cmd/kubeadm",
    },
    Row {
        tool: Tool::Crictl,
        module: Module::CriTools,
        package: "cmd/crictl",
    },
    Row {
        tool: Tool::CniPtp,
        module: Module::Cni,
        package: "plugins/main/ptp",
    },
];

/// The kind backend's tools, in build order.
pub fn kind_tools() -> impl Iterator<Item = Tool> {
    ROWS.iter().map(|r| r.tool)
}

fn row(tool: Tool) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.tool == tool)
}

/// The version `tool` (one of [`kind_tools`]) is built at: kubeadm at `kubernetes`, the `ptp`
/// plugin at the node's CNI plugins' version `cni`.
pub fn version<'a>(
    tool: Tool,
    versions: &'a KindVersions,
    kubernetes: &'a str,
    cni: &'a str,
) -> &'a str {
    match row(tool).map(|r| r.module) {
        Some(Module::Kind) => &versions.kind,
        Some(Module::CriTools) => &versions.cri_tools,
        Some(Module::Moby | Module::DockerCli) => &versions.docker,
        Some(Module::Cni) => cni,
        Some(Module::Kubernetes) | None => kubernetes,
    }
}

/// How to build `tool` (one of [`kind_tools`]) at `version`; `None` for any other tool.
pub fn recipe(tool: Tool, version: &str) -> Option<Recipe> {
    let row = row(tool)?;
    if row.module == Module::Kubernetes {
        return Some(Recipe::kubernetes(tool, version));
    }
    let module = row.module.path();
    let package = if row.package.is_empty() {
        module.to_owned()
    } else {
        format!("{module}/{}", row.package)
    };
    let docker = matches!(row.module, Module::Moby | Module::DockerCli);
    let companions = match tool {
        Tool::Kind => vec![("images/base/files".to_owned(), super::tool::KIND_BASE_FILES)],
        _ => Vec::new(),
    };
    Some(Recipe {
        tool,
        version: version.to_owned(),
        module: module.to_owned(),
        module_version: row.module.module_version(version),
        replace: row.module.pins(),
        staging: None,
        package,
        stamps: row.module.stamps(version),
        companions,
        tags: row.module.tags().iter().map(|t| t.to_string()).collect(),
        cgo: docker.then_some(false),
        vendor_pins: docker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_tool_has_a_recipe_from_its_module() {
        let versions = KindVersions::default();
        for tool in kind_tools() {
            let recipe =
                recipe(tool, version(tool, &versions, "v1.35.4", "v1.9.1")).expect("a recipe");
            assert_eq!(recipe.tool, tool);
            assert!(recipe.package.starts_with(&recipe.module), "{recipe:?}");
        }
        let dockerd = recipe(Tool::Dockerd, "v28.5.2").expect("dockerd");
        assert_eq!(
            (dockerd.module_id(), dockerd.vendor_pins, dockerd.cgo),
            (
                "github.com/docker/docker@v28.5.2+incompatible".to_owned(),
                true,
                Some(false)
            )
        );
        assert!(dockerd.ldflags().contains("dockerversion.Version=28.5.2"));
        assert_eq!(
            recipe(Tool::Kubeadm, "v1.35.4").map(|r| r.package),
            Some("k8s.io/kubernetes/cmd/kubeadm".to_owned())
        );
        assert_eq!(
            version(Tool::CniPtp, &versions, "v1.35.4", "v1.9.1"),
            "v1.9.1"
        );
        assert!(recipe(Tool::Kubelet, "v1.35.4").is_none());
    }

    #[test]
    fn a_version_that_is_no_tag_is_refused() {
        let bad = KindVersions {
            docker: "28.5.2".into(),
            ..KindVersions::default()
        };
        let err = bad.validate().expect_err("refused");
        assert!(
            err.contains("[kind] docker \"28.5.2\" is not a tag like v28.5.2"),
            "{err}"
        );
    }
}
