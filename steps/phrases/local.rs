//! The phrases of checks on what the cell holds without a cluster: the learner's last command
//! (exit, output) and the lab's files (existence, text, lines, queries on documents).

use super::*;

pub(super) const PHRASES: &[Phrase] = &[
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
];
