//! The phrases of checks against the grader's own command: its output, or a query on it,
//! compared with the learner's files or expected text.

use super::*;

pub(super) const PHRASES: &[Phrase] = &[
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
