//! What to build and how: a [`Recipe`] names a tool's Go module, version and pins, the package
//! to build and the version ldflags it gets; [`go_mod`] and [`tools_go`] write the wrapper module
//! around it, with Kubernetes' staging modules pinned ([`staging_replaces`]).
//!
//! A wrapper module is needed because `go install pkg@version` refuses modules whose go.mod has
//! `replace` directives (etcd, Kubernetes) and cannot add pins a snapshot needs (Istio 1.30).

use super::Tool;
use super::forms::{pseudo_commit, staging_version};
use super::gobuild::GO_MIN;
use super::versions::{GoModule, IstioSpec, Replace};

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
    /// Files of the module installed beside the binary: (path in the module, name beside it).
    pub companions: Vec<(String, &'static str)>,
    /// Build tags (`go build -tags`).
    pub tags: Vec<String>,
    /// `CGO_ENABLED` for the build, when the recipe needs it one way.
    pub cgo: Option<bool>,
    /// Pin every module the module's own `vendor.mod` requires, at its version: a module with
    /// no go.mod (Docker's) builds only with the dependencies it vendors.
    pub vendor_pins: bool,
}

impl Recipe {
    /// istioctl of one Istio version, from its module with its pins.
    pub fn istioctl(spec: &IstioSpec, module: &GoModule) -> Self {
        let mut recipe = Self::istio(Tool::Istioctl, "istioctl/cmd/istioctl", spec, module);
        recipe.companions = super::tool::ISTIO_RELEASE
            .iter()
            .map(|dir| (dir.to_string(), *dir))
            .collect();
        recipe
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

    /// pilot-agent (the sidecar's agent) of one Istio version: built like its pilot-discovery.
    pub fn pilot_agent(spec: &IstioSpec, module: &GoModule) -> Self {
        let mut recipe = Self::istio(Tool::PilotAgent, "pilot/cmd/pilot-agent", spec, module);
        recipe.companions = vec![(
            "tools/packaging/common/envoy_bootstrap.json".into(),
            super::tool::ENVOY_BOOTSTRAP,
        )];
        recipe
    }

    /// Istio's echo app (server or client) of one Istio version: built like its pilot-agent,
    /// from the test package every Istio release carries (the `app` image's binaries).
    pub fn echo(tool: Tool, spec: &IstioSpec, module: &GoModule) -> Self {
        let package = match tool {
            Tool::EchoClient => "pkg/test/echo/cmd/client",
            _ => "pkg/test/echo/cmd/server",
        };
        Self::istio(tool, package, spec, module)
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
            companions: Vec::new(),
            tags: Vec::new(),
            cgo: None,
            vendor_pins: false,
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
            companions: Vec::new(),
            tags: Vec::new(),
            cgo: None,
            vendor_pins: false,
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
            companions: Vec::new(),
            tags: Vec::new(),
            cgo: None,
            vendor_pins: false,
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
        if self.vendor_pins {
            lines.push(format!(
                "the requirements of {}'s vendor.mod",
                self.module_id()
            ));
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

/// The bodies of a go.mod's `verb` directives (`replace`, `require`), one per line of a block
/// or per single-line directive, comments left out.
fn directives<'a>(go_mod: &'a str, verb: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in go_mod.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        if in_block {
            if line == ")" {
                in_block = false;
            } else if !line.is_empty() {
                found.push(line);
            }
        } else if let Some(rest) = line.strip_prefix(verb) {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
            } else if !rest.is_empty() {
                found.push(rest);
            }
        }
    }
    found
}

/// Every module a go.mod replaces with a directory under `./staging/`, replaced instead with
/// the published module at `version` (Kubernetes publishes its staging tree as modules).
pub fn staging_replaces(go_mod: &str, version: &str) -> Vec<Replace> {
    let mut found: Vec<Replace> = directives(go_mod, "replace")
        .into_iter()
        .filter_map(|directive| {
            let (old, new) = directive.split_once("=>")?;
            let path = old.split_whitespace().next()?;
            let target = new.split_whitespace().next()?;
            target.starts_with("./staging/").then(|| Replace {
                path: path.into(),
                with_path: path.into(),
                with_version: version.into(),
            })
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Every module a `vendor.mod` requires, pinned at the version it requires (a `replace` of the
/// module by itself): what the module's vendor directory would hold.
pub fn vendor_pins(vendor_mod: &str) -> Vec<Replace> {
    let mut found: Vec<Replace> = directives(vendor_mod, "require")
        .into_iter()
        .filter_map(|requirement| {
            let mut words = requirement.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some(path), Some(version), None) => Some(Replace {
                    path: path.into(),
                    with_path: path.into(),
                    with_version: version.into(),
                }),
                _ => None,
            }
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::versions::Versions;
    use std::path::Path;

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

        // istiod and the sidecar's agent of the same version: same module, pins and stamps,
        // another main package.
        let istiod = Recipe::pilot_discovery(&spec, &module);
        assert_eq!(istiod.package, "istio.io/istio/pilot/cmd/pilot-discovery");
        assert_eq!(
            (istiod.module_id(), istiod.overrides(), istiod.ldflags()),
            (recipe.module_id(), recipe.overrides(), recipe.ldflags())
        );
        let agent = Recipe::pilot_agent(&spec, &module);
        assert_eq!(agent.package, "istio.io/istio/pilot/cmd/pilot-agent");
        assert_eq!(
            agent.companions,
            [(
                "tools/packaging/common/envoy_bootstrap.json".to_string(),
                "envoy_bootstrap.json"
            )]
        );
        assert_eq!(
            (agent.module_id(), agent.overrides(), agent.ldflags()),
            (recipe.module_id(), recipe.overrides(), recipe.ldflags())
        );
        let server = Recipe::echo(Tool::EchoServer, &spec, &module);
        let client = Recipe::echo(Tool::EchoClient, &spec, &module);
        assert_eq!(server.package, "istio.io/istio/pkg/test/echo/cmd/server");
        assert_eq!(client.package, "istio.io/istio/pkg/test/echo/cmd/client");
        assert_eq!(
            (server.module_id(), server.overrides(), client.ldflags()),
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
    fn vendor_pins_come_from_the_vendor_mod() {
        let vendor_mod = "module github.com/docker/docker\n\ngo 1.24.0\n\n\
            require (\n\tdario.cat/mergo v1.0.2\n\tgithub.com/x/y v1.0.0 // indirect\n)\n\n\
            require github.com/z/w v0.2.0\n\n\
            exclude (\n\tgithub.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc\n)\n";
        let lines: Vec<String> = vendor_pins(vendor_mod)
            .iter()
            .map(Replace::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "dario.cat/mergo => dario.cat/mergo v1.0.2",
                "github.com/x/y => github.com/x/y v1.0.0",
                "github.com/z/w => github.com/z/w v0.2.0",
            ]
        );
    }
}
