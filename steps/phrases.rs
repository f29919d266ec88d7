//! Example sentences of every phrase, English and Japanese side by side: the README's vocabulary
//! table, and what lint suggests for an undefined step. A test proves each one is defined.

use cucumber::gherkin::StepType;

/// One phrase of the vocabulary.
pub struct Phrase {
    pub ty: StepType,
    pub what: &'static str,
    pub en: &'static str,
    pub ja: &'static str,
}

const fn p(ty: StepType, what: &'static str, en: &'static str, ja: &'static str) -> Phrase {
    Phrase { ty, what, en, ja }
}

use StepType::{Given, Then, When};

/// The mistake scenario's phrase (English, Japanese): its docstring lists check phrases.
pub const REJECTION: (&str, &str) = (
    "these checks should reject it:",
    "次のチェックで不合格になる",
);

pub const PHRASES: &[Phrase] = &[
    p(
        Given,
        "a lab directory: exists in the sandbox; commands start in the first one",
        r#"the lab directory "/root/lab""#,
        r#"ラボのディレクトリ "/root/lab" を使う"#,
    ),
    p(
        Given,
        "a fixture from the repository copied into the sandbox",
        r#"the fixture "fixtures/demo" is placed at "/opt/lab/fixtures/demo""#,
        r#"フィクスチャ "fixtures/demo" を "/opt/lab/fixtures/demo" に置く"#,
    ),
    p(
        When,
        "the learner's commands (docstring), run by bash in the cell",
        "the learner runs:",
        "学習者が次のコマンドを実行する",
    ),
    p(
        Then,
        "mistake scenario: each listed check (docstring) must fail",
        REJECTION.0,
        REJECTION.1,
    ),
    p(
        Then,
        "the last command exited 0",
        "the last command should succeed",
        "最後のコマンドが成功する",
    ),
    p(
        Then,
        "the last command exited non-zero",
        "the last command should fail",
        "最後のコマンドが失敗する",
    ),
    p(
        Then,
        "the last command exited with N",
        "the last command should exit with 79",
        "最後のコマンドの終了コードが 79 である",
    ),
    p(
        Then,
        "stdout or stderr of the last command contains a text",
        r#"its output should contain "client version""#,
        r#"出力に "client version" が含まれる"#,
    ),
    p(
        Then,
        "stdout or stderr of the last command matches a regex",
        r#"its output should match "\d+\.\d+""#,
        r#"出力が "\d+\.\d+" にマッチする"#,
    ),
    p(
        Then,
        "a file exists",
        r#"the file "/root/lab/a.txt" should exist"#,
        r#"ファイル "/root/lab/a.txt" が存在する"#,
    ),
    p(
        Then,
        "a file has non-blank content",
        r#"the file "/root/lab/a.txt" should not be empty"#,
        r#"ファイル "/root/lab/a.txt" が空でない"#,
    ),
    p(
        Then,
        "a file contains a text",
        r#"the file "/root/lab/a.txt" should contain "hello""#,
        r#"ファイル "/root/lab/a.txt" に "hello" が含まれる"#,
    ),
    p(
        Then,
        "a file does not contain a text",
        r#"the file "/root/lab/a.txt" should not contain "Error [""#,
        r#"ファイル "/root/lab/a.txt" に "Error [" が含まれない"#,
    ),
    p(
        Then,
        "a file matches a regex",
        r#"the file "/root/lab/a.txt" should match "\d+""#,
        r#"ファイル "/root/lab/a.txt" が "\d+" にマッチする"#,
    ),
    p(
        Then,
        "at least N lines match a regex",
        r#"the file "/root/lab/a.txt" should have at least 10 lines matching "^kind:""#,
        r#"ファイル "/root/lab/a.txt" に "^kind:" にマッチする行が 10 行以上ある"#,
    ),
    p(
        Then,
        "exactly N lines",
        r#"the file "/root/lab/a.txt" should have exactly 2 lines"#,
        r#"ファイル "/root/lab/a.txt" がちょうど 2 行である"#,
    ),
    p(
        Then,
        "a jq query on a YAML/JSON file gives one value equal to a JSON literal",
        r#"the query ".count" on "/root/lab/a.json" should equal 0"#,
        r#""/root/lab/a.json" のクエリ ".count" の値が 0 と等しい"#,
    ),
    p(
        Then,
        "a query's results include all listed values",
        r#"the query ".names" on "/root/lab/a.json" should include "a", "b""#,
        r#""/root/lab/a.json" のクエリ ".names" の結果に "a", "b" がすべて含まれる"#,
    ),
    p(
        Then,
        "a query gives at least N results (an array counts its elements)",
        r#"the query ".names" on "/root/lab/a.json" should yield at least 1 result"#,
        r#""/root/lab/a.json" のクエリ ".names" の結果が 1 個以上ある"#,
    ),
    p(
        Then,
        "a key is present with a JSON type",
        r#"the query ".names" on "/root/lab/a.json" should be an array"#,
        r#""/root/lab/a.json" のクエリ ".names" の値が 配列 である"#,
    ),
    p(
        Then,
        "cross-artifact: a query on one file equals a query on another",
        r#"the query ".image" on "/root/lab/a.json" should equal the query ".spec.image" on "/root/lab/b.yaml""#,
        r#""/root/lab/a.json" のクエリ ".image" の値が "/root/lab/b.yaml" のクエリ ".spec.image" の値と等しい"#,
    ),
    p(
        Then,
        "a note mentions any of the words (case-insensitive)",
        r#"the notes "/root/lab/note.txt" should mention any of "rollout", "restart""#,
        r#"メモ "/root/lab/note.txt" が "ロールアウト", "再作成" のいずれかに触れている"#,
    ),
    p(
        Then,
        "a note mentions all of the words (case-insensitive)",
        r#"the notes "/root/lab/note.txt" should mention all of "static", "traffic""#,
        r#"メモ "/root/lab/note.txt" が "静的", "トラフィック" のすべてに触れている"#,
    ),
    p(
        Then,
        "cluster: a resource of any type (kind, plural or plural.group) exists",
        r#"the cluster should have a "Namespace" named "mesh-lab""#,
        r#"クラスターに "Namespace" "mesh-lab" が存在する"#,
    ),
    p(
        Then,
        "cluster: a namespaced resource exists",
        r#"the cluster should have a "ConfigMap" named "istio" in namespace "istio-system""#,
        r#"クラスターのネームスペース "istio-system" に "ConfigMap" "istio" が存在する"#,
    ),
    p(
        Then,
        "cluster: a CRD has condition Established=True",
        r#"the CRD "virtualservices.networking.istio.io" should be established"#,
        r#"CRD "virtualservices.networking.istio.io" が Established である"#,
    ),
    p(
        Then,
        "cluster: a jq query over a list of resources (`kubectl get -A -o json` shape) equals a value",
        r#"the query '.items | length' over the cluster's "namespaces" should equal 5"#,
        r#"クラスターの "namespaces" に対するクエリ '.items | length' の値が 5 と等しい"#,
    ),
    p(
        Then,
        "cluster: such a query's results include values",
        r#"the query '.items[].metadata.name' over the cluster's "namespaces" should include "mesh-lab""#,
        r#"クラスターの "namespaces" に対するクエリ '.items[].metadata.name' の結果に "mesh-lab" がすべて含まれる"#,
    ),
    p(
        Then,
        "cluster: such a query gives at least N results",
        r#"the query '.items[]' over the cluster's "customresourcedefinitions" should yield at least 5 results"#,
        r#"クラスターの "customresourcedefinitions" に対するクエリ '.items[]' の結果が 5 個以上ある"#,
    ),
    p(
        Then,
        "cluster: a namespace label has a value",
        r#"the namespace "mesh-lab" should have the label "istio-injection" set to "enabled""#,
        r#"ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である"#,
    ),
    p(
        Then,
        "cluster: a namespace lacks a label",
        r#"the namespace "legacy" should not have the label "istio-injection""#,
        r#"ネームスペース "legacy" にラベル "istio-injection" がない"#,
    ),
    p(
        Then,
        "cross-artifact: a query on a file equals a query over the cluster",
        r#"the query ".istio_crds" on "/root/lab/r.json" should equal the query '[.items[] | select(.spec.group | test("istio.io"))] | length' over the cluster's "customresourcedefinitions""#,
        r#""/root/lab/r.json" のクエリ ".istio_crds" の値が クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))] | length' の値と等しい"#,
    ),
    p(
        Then,
        "oracle: a file equals the stdout of a command the grader runs in the cell at check time (trailing whitespace ignored)",
        r#"the file "/root/lab/version.txt" should equal the output of "istioctl version --remote=false""#,
        r#"ファイル "/root/lab/version.txt" が コマンド "istioctl version --remote=false" の出力と等しい"#,
    ),
    p(
        Then,
        "oracle: a file holds every line of the grader's command's output",
        r#"the file "/root/lab/precheck.txt" should contain every line of the output of "istioctl x precheck 2>&1""#,
        r#"ファイル "/root/lab/precheck.txt" に コマンド "istioctl x precheck 2>&1" の出力のすべての行が含まれる"#,
    ),
    p(
        Then,
        "oracle: a query on a file equals a query on the grader's command's output (YAML or JSON)",
        r#"the query ".crds" on "/root/lab/r.json" should equal the query '[.[] | select(.kind == "CustomResourceDefinition")] | length' on the output of "istioctl manifest generate""#,
        r#""/root/lab/r.json" のクエリ ".crds" の値が コマンド "istioctl manifest generate" の出力のクエリ '[.[] | select(.kind == "CustomResourceDefinition")] | length' の値と等しい"#,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::world::collection;
    use cucumber::gherkin::{LineCol, Span, Step};

    fn step(ty: StepType, value: &str) -> Step {
        Step {
            keyword: String::new(),
            ty,
            value: value.to_owned(),
            docstring: None,
            table: None,
            span: Span { start: 0, end: 0 },
            position: LineCol { line: 0, col: 0 },
        }
    }

    #[test]
    fn every_example_is_defined_exactly_once() {
        for p in PHRASES {
            for text in [p.en, p.ja] {
                let found = collection().find(&step(p.ty, text));
                assert!(
                    matches!(found, Ok(Some(_))),
                    "{text}: {:?}",
                    found.map(|f| f.is_some())
                );
            }
        }
    }
}

/// The vocabulary as a Markdown table (the README's, and `labcheck vocabulary`).
pub fn markdown_table() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out =
        String::from("| keyword | what it does | English | 日本語 |\n|---|---|---|---|\n");
    for p in PHRASES {
        let kw = match p.ty {
            Given => "Given / 前提",
            When => "When / もし",
            Then => "Then / ならば",
        };
        out.push_str(&format!(
            "| {kw} | {} | `{}` | `{}` |\n",
            cell(p.what),
            cell(p.en),
            cell(p.ja)
        ));
    }
    out
}

#[cfg(test)]
mod readme {
    #[test]
    fn readme_vocabulary_is_current() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .unwrap_or_default();
        assert!(
            readme.contains(&super::markdown_table()),
            "README.md: paste the output of `labcheck vocabulary`"
        );
    }
}
