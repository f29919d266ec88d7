//! The handlers behind the phrases: one function per action or check, shared by the English and
//! the Japanese bindings, which only pass their language along.

use std::path::PathBuf;

use cucumber::gherkin::{Step, StepType};
use regex::Regex;

use super::LabWorld;
use super::params::unescape;
use crate::checks::{Check, Exit, JsonType, OracleCheck};
use crate::cluster::checks::{ClusterCheck, Expect};
use crate::model::Lang;
use crate::sandbox;

fn path(p: &str) -> PathBuf {
    PathBuf::from(unescape(p))
}

fn lab_path(p: &std::path::Path, lang: Lang) -> Result<(), String> {
    crate::checks::lab_path(p).map_err(|e| e.render(lang))
}

fn regex(re: &str, lang: Lang) -> Result<Regex, String> {
    // Line anchors: `^` and `$` match at every line, as with grep.
    Regex::new(&format!("(?m){}", unescape(re))).map_err(|e| {
        format!(
            "{} /{re}/: {e}",
            lang.pick("invalid regular expression", "正規表現が不正")
        )
    })
}

/// Given the lab directory P: it exists (empty) in the sandbox, and commands start there.
pub fn lab_directory(w: &mut LabWorld, lang: Lang, dir: &str) -> Result<(), String> {
    let dir = path(dir);
    if w.linting {
        return lab_path(&dir, lang);
    }
    let cell = w.cell()?;
    cell.sandbox.contains(&dir).map_err(|e| e.to_string())?;
    if cell.first_time(&format!("dir:{}", dir.display())) {
        let d = dir.clone();
        cell.sandbox
            .inside(move || std::fs::create_dir_all(&d))
            .map_err(|e| {
                format!(
                    "{} {}: {e}",
                    lang.pick("cannot create", "作成できない:"),
                    dir.display()
                )
            })?;
        if cell.first_time("workdir") {
            cell.sandbox.set_workdir(&dir);
        }
    }
    Ok(())
}

/// Given the fixture SRC placed at DST: a copy of the repository's SRC appears at DST.
pub fn fixture(w: &mut LabWorld, lang: Lang, src: &str, dst: &str) -> Result<(), String> {
    let (src, dst) = (path(src), path(dst));
    if w.linting {
        lab_path(&dst, lang)?;
        let feature = std::path::Path::new(&w.scenario.feature);
        return match crate::cell::fixture_source(feature, &src) {
            Some(_) => Ok(()),
            None => Err(format!(
                "{} {} ({} {})",
                lang.pick("fixture not found:", "フィクスチャが見つからない:"),
                src.display(),
                lang.pick("searched from", "探した場所:"),
                feature.display()
            )),
        };
    }
    let cell = w.cell()?;
    cell.sandbox.contains(&dst).map_err(|e| e.to_string())?;
    if !cell.first_time(&format!("fixture:{}", dst.display())) {
        return Ok(());
    }
    let from = cell.fixture_source(&src).ok_or_else(|| {
        format!(
            "{} {} ({} {})",
            lang.pick("fixture not found:", "フィクスチャが見つからない:"),
            src.display(),
            lang.pick("searched from", "探した場所:"),
            cell.lab.path.display()
        )
    })?;
    // Read on the host side: the repository may lie where the cell sees something else (/tmp).
    let entries = sandbox::tree::read(&from).map_err(|e| {
        format!(
            "{} {}: {e}",
            lang.pick("cannot read fixture", "フィクスチャを読めない:"),
            from.display()
        )
    })?;
    let to = dst.clone();
    cell.sandbox
        .inside(move || sandbox::tree::write(&entries, &to))
        .map_err(|e| {
            format!(
                "{} {}: {e}",
                lang.pick("cannot place fixture at", "フィクスチャを置けない:"),
                dst.display()
            )
        })
}

/// When the learner runs the docstring: discrimination first, then the commands, for real.
pub async fn learner_runs(w: &mut LabWorld, lang: Lang, step: &Step) -> Result<(), String> {
    let script = step.docstring.clone().unwrap_or_default();
    if script.trim().is_empty() {
        return Err(lang
            .pick(
                "the step has no commands (a docstring)",
                "コマンド(ドキュメント文字列)がない",
            )
            .to_owned());
    }
    if w.linting {
        return Ok(());
    }
    let cell = w.cell()?;
    if cell.grading {
        return Ok(());
    }
    w.discriminate(lang).await?;
    let transcript =
        sandbox::run_script(&cell.sandbox, script.trim_start_matches('\n'), w.timeout())
            .await
            .map_err(|e| format!("labcheck: cannot start bash in the cell {}: {e}", cell.id))?;
    cell.record(transcript.clone());
    let timed_out = transcript.timed_out;
    w.last = Some(transcript);
    if timed_out {
        return Err(format!(
            "{} {}s ({})",
            lang.pick("the command timed out after", "コマンドがタイムアウトした:"),
            w.timeout().as_secs(),
            lang.pick(
                "its whole process group was killed",
                "プロセスグループごと終了させた"
            )
        ));
    }
    Ok(())
}

/// Then these checks should reject it (a mistake scenario): every listed check must fail.
pub async fn checks_reject(w: &mut LabWorld, lang: Lang, step: &Step) -> Result<(), String> {
    let listed: Vec<String> = step
        .docstring
        .iter()
        .flat_map(|d| d.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if listed.is_empty() {
        return Err(lang
            .pick("no checks listed", "チェックが列挙されていない")
            .to_owned());
    }
    if w.linting {
        // Each listed check is linted as a step of its own.
        return Ok(());
    }
    let mut accepted = Vec::new();
    for text in listed {
        let check_step = Step {
            keyword: "Then ".to_owned(),
            ty: StepType::Then,
            value: text.clone(),
            docstring: None,
            table: None,
            span: step.span,
            position: step.position,
        };
        // Command checks in a mistake look at the mistake's own commands.
        let probe = w.probe(&check_step, w.last.clone()).await?;
        // A check that could not be evaluated rejects nothing: it is a harness error.
        w.raise_errors(lang, &probe)?;
        if probe.iter().all(|p| p.result.is_ok()) {
            accepted.push(text);
        }
    }
    if accepted.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n  {}",
            lang.pick(
                "these checks did not reject the wrong answer:",
                "次のチェックが間違った解答を不合格にしなかった:"
            ),
            accepted.join("\n  ")
        ))
    }
}

pub fn last_exit(w: &mut LabWorld, lang: Lang, exit: Exit) -> Result<(), String> {
    w.check(lang, Check::LastExit(exit))
}

pub fn output_contains(w: &mut LabWorld, lang: Lang, text: &str) -> Result<(), String> {
    w.check(lang, Check::OutputContains(unescape(text)))
}

pub fn output_matches(w: &mut LabWorld, lang: Lang, re: &str) -> Result<(), String> {
    let re = regex(re, lang)?;
    w.check(lang, Check::OutputMatches(re))
}

pub fn file_exists(w: &mut LabWorld, lang: Lang, p: &str) -> Result<(), String> {
    w.check(lang, Check::FileExists(path(p)))
}

pub fn file_non_empty(w: &mut LabWorld, lang: Lang, p: &str) -> Result<(), String> {
    w.check(lang, Check::FileNonEmpty(path(p)))
}

pub fn file_contains(w: &mut LabWorld, lang: Lang, p: &str, text: &str) -> Result<(), String> {
    w.check(lang, Check::FileContains(path(p), unescape(text)))
}

pub fn file_lacks(w: &mut LabWorld, lang: Lang, p: &str, text: &str) -> Result<(), String> {
    w.check(lang, Check::FileLacks(path(p), unescape(text)))
}

pub fn file_matches(w: &mut LabWorld, lang: Lang, p: &str, re: &str) -> Result<(), String> {
    let re = regex(re, lang)?;
    w.check(lang, Check::FileMatches(path(p), re))
}

pub fn lines_matching(
    w: &mut LabWorld,
    lang: Lang,
    p: &str,
    n: usize,
    re: &str,
) -> Result<(), String> {
    let re = regex(re, lang)?;
    w.check(lang, Check::LinesMatchingAtLeast(path(p), n, re))
}

pub fn line_count(w: &mut LabWorld, lang: Lang, p: &str, n: usize) -> Result<(), String> {
    w.check(lang, Check::LineCount(path(p), n))
}

pub fn query(
    w: &mut LabWorld,
    lang: Lang,
    file: &str,
    query: &str,
    expect: Expect,
) -> Result<(), String> {
    w.check(
        lang,
        Check::Query {
            file: path(file),
            query: unescape(query),
            expect,
        },
    )
}

pub fn query_type(
    w: &mut LabWorld,
    lang: Lang,
    file: &str,
    query: &str,
    ty: JsonType,
) -> Result<(), String> {
    w.check(
        lang,
        Check::QueryType {
            file: path(file),
            query: unescape(query),
            ty,
        },
    )
}

pub fn query_equals_query(
    w: &mut LabWorld,
    lang: Lang,
    (file, query): (&str, &str),
    (other, other_query): (&str, &str),
) -> Result<(), String> {
    w.check(
        lang,
        Check::QueryEqualsQuery {
            file: path(file),
            query: unescape(query),
            other: path(other),
            other_query: unescape(other_query),
        },
    )
}

fn words(values: Vec<serde_json::Value>) -> Vec<String> {
    values
        .into_iter()
        .map(|v| match v {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        })
        .collect()
}

pub fn mentions(
    w: &mut LabWorld,
    lang: Lang,
    p: &str,
    values: Vec<serde_json::Value>,
    all: bool,
) -> Result<(), String> {
    let check = if all {
        Check::MentionsAll(path(p), words(values))
    } else {
        Check::MentionsAny(path(p), words(values))
    };
    w.check(lang, check)
}

fn opt(s: &str) -> String {
    unescape(s)
}

pub async fn resource_exists(
    w: &mut LabWorld,
    lang: Lang,
    resource: &str,
    name: &str,
    namespace: Option<&str>,
) -> Result<(), String> {
    let check = ClusterCheck::Exists {
        resource: opt(resource),
        name: opt(name),
        namespace: namespace.map(opt),
    };
    w.check_cluster(lang, check).await
}

pub async fn crd_established(w: &mut LabWorld, lang: Lang, name: &str) -> Result<(), String> {
    w.check_cluster(lang, ClusterCheck::CrdEstablished(opt(name)))
        .await
}

pub async fn cluster_query(
    w: &mut LabWorld,
    lang: Lang,
    resource: &str,
    query: &str,
    expect: Expect,
) -> Result<(), String> {
    w.check_cluster(
        lang,
        ClusterCheck::Query {
            resource: opt(resource),
            query: opt(query),
            expect,
        },
    )
    .await
}

pub async fn namespace_label(
    w: &mut LabWorld,
    lang: Lang,
    namespace: &str,
    label: &str,
    value: Option<&str>,
) -> Result<(), String> {
    let check = ClusterCheck::NamespaceLabel {
        namespace: opt(namespace),
        label: opt(label),
        value: value.map(opt),
    };
    w.check_cluster(lang, check).await
}

pub async fn file_equals_cluster(
    w: &mut LabWorld,
    lang: Lang,
    (file, query): (&str, &str),
    (resource, cluster_query): (&str, &str),
) -> Result<(), String> {
    let check = ClusterCheck::FileEqualsCluster {
        file: path(file),
        query: opt(query),
        resource: opt(resource),
        cluster_query: opt(cluster_query),
    };
    w.check_cluster(lang, check).await
}

/// The file equals the output of the grader's own run of a command.
pub async fn file_equals_output(
    w: &mut LabWorld,
    lang: Lang,
    file: &str,
    command: &str,
) -> Result<(), String> {
    let check = OracleCheck::Equals {
        file: path(file),
        command: unescape(command),
    };
    w.check_oracle(lang, check).await
}

/// The file holds every line of the output of the grader's own run of a command.
pub async fn file_has_output_lines(
    w: &mut LabWorld,
    lang: Lang,
    file: &str,
    command: &str,
) -> Result<(), String> {
    let check = OracleCheck::ContainsLines {
        file: path(file),
        command: unescape(command),
    };
    w.check_oracle(lang, check).await
}

/// A query on the file equals a query on the output of the grader's own run of a command.
pub async fn query_equals_output(
    w: &mut LabWorld,
    lang: Lang,
    (file, query): (&str, &str),
    (command, output_query): (&str, &str),
) -> Result<(), String> {
    let check = OracleCheck::QueryEquals {
        file: path(file),
        query: unescape(query),
        command: unescape(command),
        output_query: unescape(output_query),
    };
    w.check_oracle(lang, check).await
}
