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
}

impl Needs {
    pub fn of(feature_tags: &[String]) -> Needs {
        let has = |t: &str| feature_tags.iter().any(|x| x.trim_start_matches('@') == t);
        if has("istio") {
            Needs::Istio
        } else if has("kubernetes") {
            Needs::Cluster
        } else {
            Needs::Sandbox
        }
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
}

impl Environment {
    /// An environment for labs that need no cluster.
    pub fn sandbox_only() -> Environment {
        Environment {
            backend: None,
            kubectl: None,
            kubernetes: None,
            istioctl: BTreeMap::new(),
        }
    }

    /// The tools a cell with `label` runs with.
    pub fn tools_for(&self, needs: Needs, label: &str) -> Vec<&Tool> {
        let mut tools = Vec::new();
        if needs == Needs::Istio
            && let Some(t) = self.istioctl.get(label)
        {
            tools.push(t);
        }
        if needs != Needs::Sandbox {
            tools.extend(self.kubectl.iter());
            tools.extend(self.kubernetes.iter());
        }
        tools
    }

    /// The report's view of a cell's toolchain.
    pub fn info(&self, needs: Needs, label: &str) -> ToolsInfo {
        ToolsInfo {
            tools: self
                .tools_for(needs, label)
                .into_iter()
                .map(|t| (t.name.clone(), t.version.clone(), t.source.clone()))
                .collect(),
        }
    }
}

/// The tools a cell puts first on the learner's PATH, by name: all but the API server, which
/// only the cluster runs.
pub fn learner_tools(tools: &[&Tool]) -> Vec<(String, PathBuf)> {
    tools
        .iter()
        .filter(|t| t.name != "kube-apiserver")
        .map(|t| (t.name.clone(), t.path.clone()))
        .collect()
}
