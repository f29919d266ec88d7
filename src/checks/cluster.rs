//! Cluster checks as data: what a check on the cluster's state asks (a resource exists, a CRD
//! is Established, a jq query over a list of resources, namespace labels, a query on a learner's
//! file compared with a query over the cluster) and what can be validated without a cluster.
//! Evaluating them through the API server is [`crate::cluster::checks`]'s job.

use std::path::PathBuf;

use super::{CheckError, Expect};

#[derive(Clone, Debug)]
pub enum ClusterCheck {
    Exists {
        resource: String,
        name: String,
        namespace: Option<String>,
    },
    /// No resource of the type has the name (in the namespace, when one is given).
    Absent {
        resource: String,
        name: String,
        namespace: Option<String>,
    },
    CrdEstablished(String),
    Query {
        resource: String,
        query: String,
        expect: Expect,
    },
    NamespaceLabel {
        namespace: String,
        label: String,
        value: Option<String>,
    },
    FileEqualsCluster {
        file: PathBuf,
        query: String,
        resource: String,
        cluster_query: String,
    },
    /// A query on one object (`kubectl get <resource> <name> [-n <namespace>] -o json`); an
    /// object that is not there fails the check.
    ObjectQuery {
        resource: String,
        name: String,
        namespace: Option<String>,
        query: String,
        expect: Expect,
    },
    /// A query over the cluster equal to another query over the cluster.
    ClusterEqualsCluster {
        resource: String,
        query: String,
        other_resource: String,
        other_query: String,
    },
}

impl ClusterCheck {
    /// Validates what can be known without a cluster: queries compile, paths are absolute.
    pub fn validate(&self) -> Result<(), CheckError> {
        use super::documents::compile;
        match self {
            ClusterCheck::Exists { .. }
            | ClusterCheck::Absent { .. }
            | ClusterCheck::CrdEstablished(_)
            | ClusterCheck::NamespaceLabel { .. } => Ok(()),
            ClusterCheck::Query { query, .. } | ClusterCheck::ObjectQuery { query, .. } => {
                compile(query)
            }
            ClusterCheck::ClusterEqualsCluster {
                query, other_query, ..
            } => {
                compile(query)?;
                compile(other_query)
            }
            ClusterCheck::FileEqualsCluster {
                file,
                query,
                cluster_query,
                ..
            } => {
                super::lab_path(file)?;
                compile(query)?;
                compile(cluster_query)
            }
        }
    }
}
