//! Why a check did not pass, as data: [`Fault::Failed`] is a verdict on the environment, and
//! [`Fault::Error`] holds a [`CheckError`]: the check could not be evaluated at all, which is the
//! harness's (or the lab author's) problem and never counts as a verdict on the learner.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Failure;
use crate::model::Lang;

/// A check that could not be evaluated.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CheckError {
    #[error("invalid jq query {query:?}: {message}")]
    JqInvalid { query: String, message: String },
    #[error("jq query {query:?} failed: {message}")]
    JqFailed { query: String, message: String },
    #[error("jq query {query:?} did not finish within {limit:?}")]
    JqTimeout { query: String, limit: Duration },
    #[error("jq query {query:?} gave more than {max} results")]
    JqTooMany { query: String, max: usize },
    #[error("jq query {query:?} went past {bound}")]
    JqBound { query: String, bound: String },
    #[error("invalid regular expression /{pattern}/: {message}")]
    Regex { pattern: String, message: String },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("resource type {0:?}: the cluster does not serve it")]
    UnknownResource(String),
    #[error("resource type {name:?} is served by several API groups; write one of {choices}")]
    AmbiguousResource { name: String, choices: String },
    #[error("the API server did not answer: {0}")]
    Api(Arc<kube::Error>),
    #[error("this lab has no cluster: tag its Feature @istio or @kubernetes")]
    NoCluster,
    #[error("the grader's command {command:?} {reason}")]
    Oracle { command: String, reason: String },
    #[error("lab path {0}: {1}")]
    Path(PathBuf, String),
}

impl CheckError {
    /// The error as the report shows it, in the lab's language.
    pub fn render(&self, lang: Lang) -> String {
        format!("{} {self}", lang.pick("check error:", "チェックエラー:"))
    }
}

/// Why a check did not pass.
#[derive(Clone, Debug)]
pub enum Fault {
    /// The check ran and found the environment wrong.
    Failed(Failure),
    /// The check could not be evaluated.
    Error(CheckError),
}

impl Fault {
    /// The fault as the learner or author reads it.
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Fault::Failed(f) => f.render(lang),
            Fault::Error(e) => e.render(lang),
        }
    }
}

impl From<Failure> for Fault {
    fn from(f: Failure) -> Fault {
        Fault::Failed(f)
    }
}

impl From<CheckError> for Fault {
    fn from(e: CheckError) -> Fault {
        Fault::Error(e)
    }
}
