//! The phrase table: every phrase of the vocabulary once, with its English and Japanese
//! sentences (a Cucumber Expression, an example, the order of its arguments) and the function
//! that builds the step's [`Action`] from its arguments. The cucumber bindings of both languages
//! ([`super::bindings`]), [`super::compile`], lint's suggestions and the README's vocabulary
//! table ([`super::vocabulary`]) all come from it. A data table: each entry is one phrase.

use cucumber::gherkin::StepType;

use super::action::{Action, Check as AnyCheck, Commands, listed_checks};
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

pub const PHRASES: &[Phrase] = &[
    Phrase {
        ty: Given,
        what: "a lab directory: exists in the sandbox; commands start in the first one",
        en: Sentence {
            expr: r#"the lab directory {string}"#,
            example: r#"the lab directory "/root/lab""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"ラボのディレクトリ {string} を使う"#,
            example: r#"ラボのディレクトリ "/root/lab" を使う"#,
            order: &[0],
        },
        build: |a| Ok(Action::LabDirectory(a.path(0))),
    },
    Phrase {
        ty: Given,
        what: "a fixture from the repository copied into the sandbox",
        en: Sentence {
            expr: r#"the fixture {string} is placed at {string}"#,
            example: r#"the fixture "fixtures/demo" is placed at "/opt/lab/fixtures/demo""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"フィクスチャ {string} を {string} に置く"#,
            example: r#"フィクスチャ "fixtures/demo" を "/opt/lab/fixtures/demo" に置く"#,
            order: &[0, 1],
        },
        build: |a| {
            Ok(Action::Fixture {
                src: a.path(0),
                dst: a.path(1),
            })
        },
    },
    Phrase {
        ty: Given,
        what: "the cell's Istio version unpacked as a release: samples/, manifests/, bin/istioctl",
        en: Sentence {
            expr: r#"Istio's release is unpacked at {string}"#,
            example: r#"Istio's release is unpacked at "/root/istio""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"Istio のリリースを {string} に展開する"#,
            example: r#"Istio のリリースを "/root/istio" に展開する"#,
            order: &[0],
        },
        build: |a| Ok(Action::IstioRelease(a.path(0))),
    },
    Phrase {
        ty: When,
        what: "the learner's commands (docstring), run by bash in the cell",
        en: Sentence {
            expr: r#"the learner runs:"#,
            example: "the learner runs:",
            order: &[],
        },
        ja: Sentence {
            expr: r#"学習者が次のコマンドを実行する"#,
            example: "学習者が次のコマンドを実行する",
            order: &[],
        },
        build: |a| run(a, Shell::Continued, None),
    },
    Phrase {
        ty: When,
        what: "the learner's commands in a new terminal: nothing of the earlier steps' shell",
        en: Sentence {
            expr: r#"the learner runs in a new shell:"#,
            example: "the learner runs in a new shell:",
            order: &[],
        },
        ja: Sentence {
            expr: r#"学習者が新しいシェルで次のコマンドを実行する"#,
            example: "学習者が新しいシェルで次のコマンドを実行する",
            order: &[],
        },
        build: |a| run(a, Shell::New, None),
    },
    Phrase {
        ty: When,
        what: "the learner's commands, run again (in the same shell, a second apart) until the \
               scenario's checks pass or the time is up, as a learner re-sends a request",
        en: Sentence {
            expr: r#"the learner runs, until the checks pass or {int} seconds are up:"#,
            example: "the learner runs, until the checks pass or 30 seconds are up:",
            order: &[0],
        },
        ja: Sentence {
            expr: r#"学習者がチェックに合格するまで最大 {int} 秒、次のコマンドを繰り返し実行する"#,
            example: "学習者がチェックに合格するまで最大 30 秒、次のコマンドを繰り返し実行する",
            order: &[0],
        },
        build: |a| {
            let seconds = a.int(0)?;
            run(
                a,
                Shell::Continued,
                Some(std::time::Duration::from_secs(seconds)),
            )
        },
    },
    Phrase {
        ty: Then,
        what: "mistake scenario: each listed check (docstring) must fail",
        en: Sentence {
            expr: REJECTION.0,
            example: REJECTION.0,
            order: &[],
        },
        ja: Sentence {
            expr: REJECTION.1,
            example: REJECTION.1,
            order: &[],
        },
        build: |a| Ok(Action::Reject(listed_checks(a.docstring()))),
    },
    Phrase {
        ty: Then,
        what: "the last command exited 0",
        en: Sentence {
            expr: r#"the last command should succeed"#,
            example: "the last command should succeed",
            order: &[],
        },
        ja: Sentence {
            expr: r#"最後のコマンドが成功する"#,
            example: "最後のコマンドが成功する",
            order: &[],
        },
        build: |_| local(Check::LastExit(Exit::Success)),
    },
    Phrase {
        ty: Then,
        what: "the last command exited non-zero",
        en: Sentence {
            expr: r#"the last command should fail"#,
            example: "the last command should fail",
            order: &[],
        },
        ja: Sentence {
            expr: r#"最後のコマンドが失敗する"#,
            example: "最後のコマンドが失敗する",
            order: &[],
        },
        build: |_| local(Check::LastExit(Exit::Failure)),
    },
    Phrase {
        ty: Then,
        what: "the last command exited with N",
        en: Sentence {
            expr: r#"the last command should exit with {int}"#,
            example: "the last command should exit with 79",
            order: &[0],
        },
        ja: Sentence {
            expr: r#"最後のコマンドの終了コードが {int} である"#,
            example: "最後のコマンドの終了コードが 79 である",
            order: &[0],
        },
        build: |a| local(Check::LastExit(Exit::Code(a.int(0)?))),
    },
    Phrase {
        ty: Then,
        what: "stdout or stderr of the last command contains a text",
        en: Sentence {
            expr: r#"its output should contain {string}"#,
            example: r#"its output should contain "client version""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"出力に {string} が含まれる"#,
            example: r#"出力に "client version" が含まれる"#,
            order: &[0],
        },
        build: |a| local(Check::OutputContains(a.text(0))),
    },
    Phrase {
        ty: Then,
        what: "stdout or stderr of the last command matches a regex",
        en: Sentence {
            expr: r#"its output should match {string}"#,
            example: r#"its output should match "\d+\.\d+""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"出力が {string} にマッチする"#,
            example: r#"出力が "\d+\.\d+" にマッチする"#,
            order: &[0],
        },
        build: |a| local(Check::OutputMatches(a.regex(0)?)),
    },
    Phrase {
        ty: Then,
        what: "stdout or stderr of the last command does not contain a text",
        en: Sentence {
            expr: r#"its output should not contain {string}"#,
            example: r#"its output should not contain "Error""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"出力に {string} が含まれない"#,
            example: r#"出力に "Error" が含まれない"#,
            order: &[0],
        },
        build: |a| local(Check::OutputLacks(a.text(0))),
    },
    Phrase {
        ty: Then,
        what: "stdout or stderr of the last command does not match a regex",
        en: Sentence {
            expr: r#"its output should not match {string}"#,
            example: r#"its output should not match "(?i)denied""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"出力が {string} にマッチしない"#,
            example: r#"出力が "(?i)denied" にマッチしない"#,
            order: &[0],
        },
        build: |a| local(Check::OutputMismatches(a.regex(0)?)),
    },
    Phrase {
        ty: Then,
        what: "a file exists",
        en: Sentence {
            expr: r#"the file {string} should exist"#,
            example: r#"the file "/root/lab/a.txt" should exist"#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"ファイル {string} が存在する"#,
            example: r#"ファイル "/root/lab/a.txt" が存在する"#,
            order: &[0],
        },
        build: |a| local(Check::FileExists(a.path(0))),
    },
    Phrase {
        ty: Then,
        what: "a file does not exist",
        en: Sentence {
            expr: r#"the file {string} should not exist"#,
            example: r#"the file "/root/lab/old.txt" should not exist"#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"ファイル {string} が存在しない"#,
            example: r#"ファイル "/root/lab/old.txt" が存在しない"#,
            order: &[0],
        },
        build: |a| local(Check::FileAbsent(a.path(0))),
    },
    Phrase {
        ty: Then,
        what: "a file has non-blank content",
        en: Sentence {
            expr: r#"the file {string} should not be empty"#,
            example: r#"the file "/root/lab/a.txt" should not be empty"#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"ファイル {string} が空でない"#,
            example: r#"ファイル "/root/lab/a.txt" が空でない"#,
            order: &[0],
        },
        build: |a| local(Check::FileNonEmpty(a.path(0))),
    },
    Phrase {
        ty: Then,
        what: "a file contains a text",
        en: Sentence {
            expr: r#"the file {string} should contain {string}"#,
            example: r#"the file "/root/lab/a.txt" should contain "hello""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} に {string} が含まれる"#,
            example: r#"ファイル "/root/lab/a.txt" に "hello" が含まれる"#,
            order: &[0, 1],
        },
        build: |a| local(Check::FileContains(a.path(0), a.text(1))),
    },
    Phrase {
        ty: Then,
        what: "a file does not contain a text",
        en: Sentence {
            expr: r#"the file {string} should not contain {string}"#,
            example: r#"the file "/root/lab/a.txt" should not contain "Error [""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} に {string} が含まれない"#,
            example: r#"ファイル "/root/lab/a.txt" に "Error [" が含まれない"#,
            order: &[0, 1],
        },
        build: |a| local(Check::FileLacks(a.path(0), a.text(1))),
    },
    Phrase {
        ty: Then,
        what: "a file matches a regex",
        en: Sentence {
            expr: r#"the file {string} should match {string}"#,
            example: r#"the file "/root/lab/a.txt" should match "\d+""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} が {string} にマッチする"#,
            example: r#"ファイル "/root/lab/a.txt" が "\d+" にマッチする"#,
            order: &[0, 1],
        },
        build: |a| local(Check::FileMatches(a.path(0), a.regex(1)?)),
    },
    Phrase {
        ty: Then,
        what: "at least N lines match a regex",
        en: Sentence {
            expr: r#"the file {string} should have at least {int} lines matching {string}"#,
            example: r#"the file "/root/lab/a.txt" should have at least 10 lines matching "^kind:""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"ファイル {string} に {string} にマッチする行が {int} 行以上ある"#,
            example: r#"ファイル "/root/lab/a.txt" に "^kind:" にマッチする行が 10 行以上ある"#,
            order: &[0, 2, 1],
        },
        build: |a| {
            local(Check::LinesMatchingAtLeast(
                a.path(0),
                a.int(1)?,
                a.regex(2)?,
            ))
        },
    },
    Phrase {
        ty: Then,
        what: "exactly N lines",
        en: Sentence {
            expr: r#"the file {string} should have exactly {int} line(s)"#,
            example: r#"the file "/root/lab/a.txt" should have exactly 2 lines"#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} がちょうど {int} 行である"#,
            example: r#"ファイル "/root/lab/a.txt" がちょうど 2 行である"#,
            order: &[0, 1],
        },
        build: |a| local(Check::LineCount(a.path(0), a.int(1)?)),
    },
    Phrase {
        ty: Then,
        what: "a jq query on a YAML/JSON file gives one value equal to a JSON literal",
        en: Sentence {
            expr: r#"the query {string} on {string} should equal {value}"#,
            example: r#"the query ".count" on "/root/lab/a.json" should equal 0"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が {value} と等しい"#,
            example: r#""/root/lab/a.json" のクエリ ".count" の値が 0 と等しい"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::Equals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a query's results include all listed values",
        en: Sentence {
            expr: r#"the query {string} on {string} should include {values}"#,
            example: r#"the query ".names" on "/root/lab/a.json" should include "a", "b""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の結果に {values} がすべて含まれる"#,
            example: r#""/root/lab/a.json" のクエリ ".names" の結果に "a", "b" がすべて含まれる"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::Includes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a query gives at least N results (an array counts its elements)",
        en: Sentence {
            expr: r#"the query {string} on {string} should yield at least {int} result(s)"#,
            example: r#"the query ".names" on "/root/lab/a.json" should yield at least 1 result"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の結果が {int} 個以上ある"#,
            example: r#""/root/lab/a.json" のクエリ ".names" の結果が 1 個以上ある"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::CountAtLeast(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a query does not give exactly this value",
        en: Sentence {
            expr: r#"the query {string} on {string} should not equal {value}"#,
            example: r#"the query ".count" on "/root/lab/a.json" should not equal 0"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が {value} と等しくない"#,
            example: r#""/root/lab/a.json" のクエリ ".count" の値が 0 と等しくない"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::NotEquals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a query's results include none of the listed values",
        en: Sentence {
            expr: r#"the query {string} on {string} should include none of {values}"#,
            example: r#"the query ".names" on "/root/lab/a.json" should include none of "c", "d""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の結果に {values} のどれも含まれない"#,
            example: r#""/root/lab/a.json" のクエリ ".names" の結果に "c", "d" のどれも含まれない"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::Excludes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a query gives at most N results",
        en: Sentence {
            expr: r#"the query {string} on {string} should yield at most {int} result(s)"#,
            example: r#"the query ".names" on "/root/lab/a.json" should yield at most 3 results"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の結果が {int} 個以下である"#,
            example: r#""/root/lab/a.json" のクエリ ".names" の結果が 3 個以下である"#,
            order: &[0, 1, 2],
        },
        build: |a| file_query(a, Expect::CountAtMost(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "a key is present with a JSON type",
        en: Sentence {
            expr: r#"the query {string} on {string} should be a(n) {jsontype}"#,
            example: r#"the query ".names" on "/root/lab/a.json" should be an array"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が {jsontype} である"#,
            example: r#""/root/lab/a.json" のクエリ ".names" の値が 配列 である"#,
            order: &[0, 1, 2],
        },
        build: |a| {
            local(Check::QueryType {
                file: a.path(0),
                query: a.text(1),
                ty: a.json_type(2)?,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cross-artifact: a query on one file equals a query on another",
        en: Sentence {
            expr: r#"the query {string} on {string} should equal the query {string} on {string}"#,
            example: r#"the query ".image" on "/root/lab/a.json" should equal the query ".spec.image" on "/root/lab/b.yaml""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が {string} のクエリ {string} の値と等しい"#,
            example: r#""/root/lab/a.json" のクエリ ".image" の値が "/root/lab/b.yaml" のクエリ ".spec.image" の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            local(Check::QueryEqualsQuery {
                file: a.path(0),
                query: a.text(1),
                other: a.path(2),
                other_query: a.text(3),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "a note mentions any of the words (case-insensitive)",
        en: Sentence {
            expr: r#"the notes {string} should mention any of {values}"#,
            example: r#"the notes "/root/lab/note.txt" should mention any of "rollout", "restart""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"メモ {string} が {values} のいずれかに触れている"#,
            example: r#"メモ "/root/lab/note.txt" が "ロールアウト", "再作成" のいずれかに触れている"#,
            order: &[0, 1],
        },
        build: |a| local(Check::MentionsAny(a.path(0), a.words(1)?)),
    },
    Phrase {
        ty: Then,
        what: "a note mentions all of the words (case-insensitive)",
        en: Sentence {
            expr: r#"the notes {string} should mention all of {values}"#,
            example: r#"the notes "/root/lab/note.txt" should mention all of "static", "traffic""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"メモ {string} が {values} のすべてに触れている"#,
            example: r#"メモ "/root/lab/note.txt" が "静的", "トラフィック" のすべてに触れている"#,
            order: &[0, 1],
        },
        build: |a| local(Check::MentionsAll(a.path(0), a.words(1)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: a resource of any type (kind, plural or plural.group) exists",
        en: Sentence {
            expr: r#"the cluster should have a(n) {string} named {string}"#,
            example: r#"the cluster should have a "Namespace" named "mesh-lab""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"クラスターに {string} {string} が存在する"#,
            example: r#"クラスターに "Namespace" "mesh-lab" が存在する"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Exists {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespaced resource exists",
        en: Sentence {
            expr: r#"the cluster should have a(n) {string} named {string} in namespace {string}"#,
            example: r#"the cluster should have a "ConfigMap" named "istio" in namespace "istio-system""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} に {string} {string} が存在する"#,
            example: r#"クラスターのネームスペース "istio-system" に "ConfigMap" "istio" が存在する"#,
            order: &[2, 0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Exists {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: no resource of a type has the name",
        en: Sentence {
            expr: r#"the cluster should not have a(n) {string} named {string}"#,
            example: r#"the cluster should not have a "Namespace" named "legacy""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"クラスターに {string} {string} が存在しない"#,
            example: r#"クラスターに "Namespace" "legacy" が存在しない"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Absent {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: no namespaced resource has the name",
        en: Sentence {
            expr: r#"the cluster should not have a(n) {string} named {string} in namespace {string}"#,
            example: r#"the cluster should not have a "Pod" named "web" in namespace "legacy""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} に {string} {string} が存在しない"#,
            example: r#"クラスターのネームスペース "legacy" に "Pod" "web" が存在しない"#,
            order: &[2, 0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Absent {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a CRD has condition Established=True",
        en: Sentence {
            expr: r#"the CRD {string} should be established"#,
            example: r#"the CRD "virtualservices.networking.istio.io" should be established"#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"CRD {string} が Established である"#,
            example: r#"CRD "virtualservices.networking.istio.io" が Established である"#,
            order: &[0],
        },
        build: |a| cluster(ClusterCheck::CrdEstablished(a.text(0))),
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query over a list of resources (`kubectl get -A -o json` shape) equals a value",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should equal {value}"#,
            example: r#"the query '.items | length' over the cluster's "namespaces" should equal 5"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items | length' の値が 5 と等しい"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Equals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query's results include values",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should include {values}"#,
            example: r#"the query '.items[].metadata.name' over the cluster's "namespaces" should include "mesh-lab""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果に {values} がすべて含まれる"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items[].metadata.name' の結果に "mesh-lab" がすべて含まれる"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Includes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query gives at least N results",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should yield at least {int} result(s)"#,
            example: r#"the query '.items[]' over the cluster's "customresourcedefinitions" should yield at least 5 results"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以上ある"#,
            example: r#"クラスターの "customresourcedefinitions" に対するクエリ '.items[]' の結果が 5 個以上ある"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::CountAtLeast(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query does not give exactly this value",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should not equal {value}"#,
            example: r#"the query '.items | length' over the cluster's "pods" should not equal 0"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しくない"#,
            example: r#"クラスターの "pods" に対するクエリ '.items | length' の値が 0 と等しくない"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::NotEquals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query's results include none of the values",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should include none of {values}"#,
            example: r#"the query '.items[].metadata.name' over the cluster's "namespaces" should include none of "legacy""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果に {values} のどれも含まれない"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items[].metadata.name' の結果に "legacy" のどれも含まれない"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Excludes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query gives at most N results",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should yield at most {int} result(s)"#,
            example: r#"the query '.items[]' over the cluster's "pods" should yield at most 2 results"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以下である"#,
            example: r#"クラスターの "pods" に対するクエリ '.items[]' の結果が 2 個以下である"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::CountAtMost(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespace label has a value",
        en: Sentence {
            expr: r#"the namespace {string} should have the label {string} set to {string}"#,
            example: r#"the namespace "mesh-lab" should have the label "istio-injection" set to "enabled""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"ネームスペース {string} のラベル {string} が {string} である"#,
            example: r#"ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である"#,
            order: &[0, 1, 2],
        },
        build: |a| {
            cluster(ClusterCheck::NamespaceLabel {
                namespace: a.text(0),
                label: a.text(1),
                value: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespace lacks a label",
        en: Sentence {
            expr: r#"the namespace {string} should not have the label {string}"#,
            example: r#"the namespace "legacy" should not have the label "istio-injection""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ネームスペース {string} にラベル {string} がない"#,
            example: r#"ネームスペース "legacy" にラベル "istio-injection" がない"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::NamespaceLabel {
                namespace: a.text(0),
                label: a.text(1),
                value: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query on one object of a namespace (`kubectl get -n NS TYPE NAME -o json`) equals a value; an object that is not there fails",
        en: Sentence {
            expr: r#"the query {string} on the cluster's {string} {string} in namespace {string} should equal {value}"#,
            example: r#"the query '[.spec.subsets[].name]' on the cluster's "DestinationRule" "shop" in namespace "shop-lab" should equal ["v1", "v2"]"#,
            order: &[3, 0, 1, 2, 4],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} の {string} {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターのネームスペース "shop-lab" の "DestinationRule" "shop" に対するクエリ '[.spec.subsets[].name]' の値が ["v1", "v2"] と等しい"#,
            order: &[2, 0, 1, 3, 4],
        },
        build: |a| {
            cluster(ClusterCheck::ObjectQuery {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
                query: a.text(3),
                expect: Expect::Equals(a.value(4)?),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query on one object without a namespace (a Namespace, a CRD, a webhook configuration) equals a value",
        en: Sentence {
            expr: r#"the query {string} on the cluster's {string} {string} should equal {value}"#,
            example: r#"the query '.metadata.labels["istio-injection"]' on the cluster's "Namespace" "mesh-lab" should equal "enabled""#,
            order: &[2, 0, 1, 3],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターの "Namespace" "mesh-lab" に対するクエリ '.metadata.labels["istio-injection"]' の値が "enabled" と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::ObjectQuery {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
                query: a.text(2),
                expect: Expect::Equals(a.value(3)?),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a query over the cluster equals another query over the cluster",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should equal the query {string} over the cluster's {string}"#,
            example: r#"the query '[.items[] | select(.metadata.name == "web") | .spec.ports[0].targetPort]' over the cluster's "services" should equal the query '[.items[] | .spec.portLevelMtls | keys[] | tonumber]' over the cluster's "peerauthentications""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#,
            example: r#"クラスターの "services" に対するクエリ '[.items[] | select(.metadata.name == "web") | .spec.ports[0].targetPort]' の値が クラスターの "peerauthentications" に対するクエリ '[.items[] | .spec.portLevelMtls | keys[] | tonumber]' の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::ClusterEqualsCluster {
                resource: a.text(0),
                query: a.text(1),
                other_resource: a.text(2),
                other_query: a.text(3),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cross-artifact: a query on a file equals a query over the cluster",
        en: Sentence {
            expr: r#"the query {string} on {string} should equal the query {string} over the cluster's {string}"#,
            example: r#"the query ".istio_crds" on "/root/lab/r.json" should equal the query '[.items[] | select(.spec.group | test("istio.io"))] | length' over the cluster's "customresourcedefinitions""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#,
            example: r#""/root/lab/r.json" のクエリ ".istio_crds" の値が クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))] | length' の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::FileEqualsCluster {
                file: a.path(0),
                query: a.text(1),
                resource: a.text(2),
                cluster_query: a.text(3),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: a file equals the stdout of a command the grader runs in the cell at check time (trailing whitespace ignored)",
        en: Sentence {
            expr: r#"the file {string} should equal the output of {string}"#,
            example: r#"the file "/root/lab/version.txt" should equal the output of "istioctl version --remote=false""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} が コマンド {string} の出力と等しい"#,
            example: r#"ファイル "/root/lab/version.txt" が コマンド "istioctl version --remote=false" の出力と等しい"#,
            order: &[0, 1],
        },
        build: |a| {
            oracle(OracleCheck::Equals {
                file: a.path(0),
                command: a.text(1),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: a file holds every line of the grader's command's output",
        en: Sentence {
            expr: r#"the file {string} should contain every line of the output of {string}"#,
            example: r#"the file "/root/lab/precheck.txt" should contain every line of the output of "istioctl x precheck 2>&1""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ファイル {string} に コマンド {string} の出力のすべての行が含まれる"#,
            example: r#"ファイル "/root/lab/precheck.txt" に コマンド "istioctl x precheck 2>&1" の出力のすべての行が含まれる"#,
            order: &[0, 1],
        },
        build: |a| {
            oracle(OracleCheck::ContainsLines {
                file: a.path(0),
                command: a.text(1),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: the output (stdout, then stderr) of a command the grader runs in the cell contains a text, whatever its exit code; with a wait, run again until it does",
        en: Sentence {
            expr: r#"the output of {string} should contain {string}"#,
            example: r#"the output of "kubectl -n shop exec deploy/client -- curl -sS http://web/" should contain "200 OK""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"コマンド {string} の出力に {string} が含まれる"#,
            example: r#"コマンド "kubectl -n shop exec deploy/client -- curl -sS http://web/" の出力に "200 OK" が含まれる"#,
            order: &[0, 1],
        },
        build: |a| {
            oracle(OracleCheck::Output {
                command: a.text(0),
                expect: OutputExpect::Contains(a.text(1)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: the output of a command the grader runs in the cell matches a regex",
        en: Sentence {
            expr: r#"the output of {string} should match {string}"#,
            example: r#"the output of "istioctl proxy-status" should match "web-.* SYNCED""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"コマンド {string} の出力が {string} にマッチする"#,
            example: r#"コマンド "istioctl proxy-status" の出力が "web-.* SYNCED" にマッチする"#,
            order: &[0, 1],
        },
        build: |a| {
            oracle(OracleCheck::Output {
                command: a.text(0),
                expect: OutputExpect::Matches(a.regex(1)?),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: the output of a command the grader runs in the cell does not contain a text (never on cut output)",
        en: Sentence {
            expr: r#"the output of {string} should not contain {string}"#,
            example: r#"the output of "kubectl -n legacy exec deploy/legacy -- curl -sS http://web/" should not contain "200 OK""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"コマンド {string} の出力に {string} が含まれない"#,
            example: r#"コマンド "kubectl -n legacy exec deploy/legacy -- curl -sS http://web/" の出力に "200 OK" が含まれない"#,
            order: &[0, 1],
        },
        build: |a| {
            oracle(OracleCheck::Output {
                command: a.text(0),
                expect: OutputExpect::Lacks(a.text(1)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "oracle: a query on a file equals a query on the grader's command's output (YAML or JSON)",
        en: Sentence {
            expr: r#"the query {string} on {string} should equal the query {string} on the output of {string}"#,
            example: r#"the query ".crds" on "/root/lab/r.json" should equal the query '[.[] | select(.kind == "CustomResourceDefinition")] | length' on the output of "istioctl manifest generate""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が コマンド {string} の出力のクエリ {string} の値と等しい"#,
            example: r#""/root/lab/r.json" のクエリ ".crds" の値が コマンド "istioctl manifest generate" の出力のクエリ '[.[] | select(.kind == "CustomResourceDefinition")] | length' の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            oracle(OracleCheck::QueryEquals {
                file: a.path(0),
                query: a.text(1),
                command: a.text(2),
                output_query: a.text(3),
            })
        },
    },
];
