//! The phrase table: every phrase of the vocabulary once, with its English and Japanese
//! sentences (a Cucumber Expression, an example, the order of its arguments) and the function
//! that builds the step's [`Action`] from its arguments. The cucumber bindings of both languages
//! ([`super::bindings`]), [`super::compile`], lint's suggestions and the README's vocabulary
//! table ([`super::vocabulary`]) all come from it. A data table: each entry is one phrase,
//! grouped by what it is about ([`scenario`], [`local`], [`cluster`], [`oracle`]); [`PHRASES`]
//! holds them all in that order.

use std::sync::LazyLock;

use cucumber::gherkin::StepType;

use super::action::{Action, Check as AnyCheck, Commands, Release, listed_checks};
use super::args::Args;
use crate::checks::{Check, ClusterCheck, Exit, Expect, OracleCheck, OutputExpect};
use crate::sandbox::Shell;

/// One phrase of the vocabulary.
pub struct Phrase {
    pub ty: StepType,
    pub what: &'static str,
    pub en: Sentence,
    pub ja: Sentence,
    /// Builds the step's action from its arguments (in the order [`Sentence::order`] gives).
    pub build: fn(&Args<'_>) -> Result<Action, String>,
}

/// A phrase in one language.
pub struct Sentence {
    /// The Cucumber Expression the step's text must match (parameters: `{string}`, `{int}`,
    /// and labcheck's `{value}`, `{values}`, `{jsontype}`, see [`super::args::PARAMETERS`]).
    pub expr: &'static str,
    /// An example sentence: the README's vocabulary and lint's suggestions.
    pub example: &'static str,
    /// For each argument the expression captures, in its order: its place among the arguments
    /// the phrase's `build` reads (languages order their arguments differently).
    pub order: &'static [usize],
}

use StepType::{Given, Then, When};

/// The mistake scenario's phrase (English, Japanese): its docstring lists check phrases.
pub const REJECTION: (&str, &str) = (
    "these checks should reject it:",
    "次のチェックで不合格になる",
);

/// The learner's commands: the step's docstring.
fn run(a: &Args<'_>, shell: Shell, until: Option<std::time::Duration>) -> Result<Action, String> {
    Ok(Action::Run(Commands {
        script: a.docstring().trim_start_matches('\n').to_owned(),
        shell,
        until,
    }))
}

fn local(check: Check) -> Result<Action, String> {
    Ok(Action::Check(AnyCheck::Local(check)))
}

fn cluster(check: ClusterCheck) -> Result<Action, String> {
    Ok(Action::Check(AnyCheck::Cluster(check)))
}

fn oracle(check: OracleCheck) -> Result<Action, String> {
    Ok(Action::Check(AnyCheck::Oracle(check)))
}

/// A query on a file (arguments: file, query), with what its results should be.
fn file_query(a: &Args<'_>, expect: Expect) -> Result<Action, String> {
    local(Check::Query {
        file: a.path(0),
        query: a.text(1),
        expect,
    })
}

/// A query over the cluster (arguments: resource, query), with what its results should be.
fn cluster_query(a: &Args<'_>, expect: Expect) -> Result<Action, String> {
    cluster(ClusterCheck::Query {
        resource: a.text(0),
        query: a.text(1),
        expect,
    })
}

mod cluster;
mod local;
mod oracle;
mod scenario;

/// Every phrase of the vocabulary, in the table's order.
pub static PHRASES: LazyLock<Vec<&'static Phrase>> = LazyLock::new(|| {
    [
        scenario::PHRASES,
        local::PHRASES,
        cluster::PHRASES,
        oracle::PHRASES,
    ]
    .into_iter()
    .flatten()
    .collect()
});
