//! Document checks: YAML (multi-document) or JSON artifacts queried with jq syntax through jaq.
//! A query runs on each document of a file and its results are concatenated, as `yq` does.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::{Check, CheckError, Env, Failure, Fault, read_text};
use crate::model::Lang;

/// The JSON type a query result should have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    String,
    Number,
    Array,
    Object,
    Boolean,
    Null,
}

impl JsonType {
    /// Parses an English or Japanese type name.
    pub fn parse(s: &str) -> Option<JsonType> {
        Some(match s {
            "string" | "文字列" => JsonType::String,
            "number" | "数値" => JsonType::Number,
            "array" | "配列" => JsonType::Array,
            "object" | "オブジェクト" => JsonType::Object,
            "boolean" | "真偽値" => JsonType::Boolean,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    fn of(v: &Value) -> JsonType {
        match v {
            Value::String(_) => JsonType::String,
            Value::Number(_) => JsonType::Number,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
            Value::Bool(_) => JsonType::Boolean,
            Value::Null => JsonType::Null,
        }
    }

    fn name(self, lang: Lang) -> &'static str {
        match self {
            JsonType::String => lang.pick("string", "文字列"),
            JsonType::Number => lang.pick("number", "数値"),
            JsonType::Array => lang.pick("array", "配列"),
            JsonType::Object => lang.pick("object", "オブジェクト"),
            JsonType::Boolean => lang.pick("boolean", "真偽値"),
            JsonType::Null => "null",
        }
    }
}

/// What the results of a query should be (on a document or over the cluster).
#[derive(Clone, Debug)]
pub enum Expect {
    /// Exactly one result, equal to this value.
    Equals(Value),
    /// The results (a single array result stands for its elements) include all of these.
    Includes(Vec<Value>),
    /// At least this many results, counted the same way.
    CountAtLeast(usize),
    /// Not exactly one result equal to this value (no result, several, or another value).
    NotEquals(Value),
    /// The results include none of these.
    Excludes(Vec<Value>),
    /// At most this many results.
    CountAtMost(usize),
}

/// Checks the results of `code` run on `source` against `expect`.
pub(crate) fn expect(
    results: Vec<Value>,
    expect: &Expect,
    source: &Path,
    code: &str,
    lang: Lang,
) -> Result<(), Failure> {
    match expect {
        Expect::Equals(value) => {
            let got = single(results, source, code, lang)?;
            if numeric_eq(&got, value) {
                Ok(())
            } else {
                Err(Failure::new(
                    format!("{code} = {}", show(value)),
                    show(&got),
                ))
            }
        }
        Expect::Includes(items) => membership(results, items, true, code, lang),
        Expect::NotEquals(value) => {
            let equal = results.len() == 1 && numeric_eq(&results[0], value);
            if !equal {
                return Ok(());
            }
            Err(Failure::new(
                format!("{code} ≠ {}", show(value)),
                show(&results[0]),
            ))
        }
        Expect::Excludes(items) => membership(results, items, false, code, lang),
        Expect::CountAtMost(n) => count(results, *n, false, code, lang),
        Expect::CountAtLeast(n) => count(results, *n, true, code, lang),
    }
}

/// The results include every one of `items` (`all`), or none of them.
fn membership(
    results: Vec<Value>,
    items: &[Value],
    all: bool,
    code: &str,
    lang: Lang,
) -> Result<(), Failure> {
    let got = flatten(results);
    // The items that break the expectation: missing ones, or present ones.
    let breaking: Vec<String> = items
        .iter()
        .filter(|i| got.iter().any(|g| numeric_eq(g, i)) != all)
        .map(show)
        .collect();
    if breaking.is_empty() {
        return Ok(());
    }
    let (wanted, found) = if all {
        (
            lang.pick("to include", "に次がすべて含まれること:"),
            lang.pick("missing", "不足:"),
        )
    } else {
        (
            lang.pick("to include none of", "に次がどれも含まれないこと:"),
            lang.pick("present:", "含まれている:"),
        )
    };
    Err(Failure::new(
        format!(
            "{code} {wanted} {}",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        format!(
            "{found} {} — {}: {}",
            breaking.join(", "),
            lang.pick("results", "結果"),
            show(&Value::Array(got))
        ),
    ))
}

/// There are at least (`at_least`) or at most `n` results.
fn count(
    results: Vec<Value>,
    n: usize,
    at_least: bool,
    code: &str,
    lang: Lang,
) -> Result<(), Failure> {
    let got = flatten(results);
    if (at_least && got.len() >= n) || (!at_least && got.len() <= n) {
        return Ok(());
    }
    let expected = match (lang, at_least) {
        (Lang::En, true) => format!("at least {n} results of {code}"),
        (Lang::En, false) => format!("at most {n} results of {code}"),
        (Lang::Ja, true) => format!("{code} の結果が {n} 個以上"),
        (Lang::Ja, false) => format!("{code} の結果が {n} 個以下"),
    };
    let found = match lang {
        Lang::En => format!("{}: {}", got.len(), show(&Value::Array(got))),
        Lang::Ja => format!("{} 個: {}", got.len(), show(&Value::Array(got))),
    };
    Err(Failure::new(expected, found))
}

/// A parsed artifact: its documents.
pub struct Document;

impl Document {
    /// Parses `text` as JSON when the path says `.json`, else as YAML with any number of
    /// documents. Errors carry the parser's line and column.
    pub fn parse(path: &Path, text: &str) -> Result<Vec<Value>, String> {
        let is_json = path.extension().is_some_and(|e| e == "json");
        if is_json {
            return serde_json::from_str::<Value>(text)
                .map(|v| vec![v])
                .map_err(|e| {
                    format!(
                        "invalid JSON at line {}, column {}: {e}",
                        e.line(),
                        e.column()
                    )
                });
        }
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(text).map_err(|e| format!("invalid YAML: {e}"))?;
        Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
    }
}

/// How long a query may run on one file or list.
pub const QUERY_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
/// How many results a query may give.
pub const QUERY_MAX_RESULTS: usize = 100_000;

/// Checks that a jq query compiles (lint).
pub fn compile(code: &str) -> Result<(), CheckError> {
    query_unbounded(&[], code).map(|_| ())
}

/// Runs a jq query on each document and concatenates the results, within
/// [`QUERY_TIME_LIMIT`] and [`QUERY_MAX_RESULTS`], and within the stack and memory bounds of
/// [`super::jq`] (which says where it runs).
pub fn query(docs: &[Value], code: &str) -> Result<Vec<Value>, CheckError> {
    super::jq::run(docs, code)
}

/// Runs a query on a thread of this process, within [`QUERY_TIME_LIMIT`]: a query that never
/// ends keeps its thread; the check is reported as an error meanwhile.
pub(super) fn query_in_thread(docs: &[Value], code: &str) -> Result<Vec<Value>, CheckError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (docs, owned) = (docs.to_vec(), code.to_owned());
    let spawned = std::thread::Builder::new()
        .name("jq".to_owned())
        .stack_size(super::jq::STACK)
        .spawn(move || {
            let _ = tx.send(query_unbounded(&docs, &owned));
        });
    if let Err(e) = spawned {
        return Err(CheckError::JqFailed {
            query: code.to_owned(),
            message: format!("cannot start the query thread: {e}"),
        });
    }
    rx.recv_timeout(QUERY_TIME_LIMIT).unwrap_or_else(|_| {
        Err(CheckError::JqTimeout {
            query: code.to_owned(),
            limit: QUERY_TIME_LIMIT,
        })
    })
}

pub(super) fn query_unbounded(docs: &[Value], code: &str) -> Result<Vec<Value>, CheckError> {
    use jaq_core::load::{Arena, File, Loader};
    use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
    use jaq_json::Val;

    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| CheckError::JqInvalid {
            query: code.to_owned(),
            message: describe_load_errors(code, &errs),
        })?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| CheckError::JqInvalid {
            query: code.to_owned(),
            message: format!("{} undefined name(s)", errs.len()),
        })?;
    let mut out = Vec::new();
    for doc in docs {
        let input = Val::deserialize(doc).map_err(|e| CheckError::JqFailed {
            query: code.to_owned(),
            message: e.to_string(),
        })?;
        let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
        for v in filter.id.run((ctx, input)).map(unwrap_valr) {
            let v = v.map_err(|e| CheckError::JqFailed {
                query: code.to_owned(),
                message: e.to_string(),
            })?;
            if out.len() >= QUERY_MAX_RESULTS {
                return Err(CheckError::JqTooMany {
                    query: code.to_owned(),
                    max: QUERY_MAX_RESULTS,
                });
            }
            let json = serde_json::from_str(&v.to_string()).unwrap_or(Value::String(v.to_string()));
            out.push(json);
        }
    }
    Ok(out)
}

/// Where a query does not parse, and what was expected there.
fn describe_load_errors<P>(
    code: &str,
    errs: &[(jaq_core::load::File<&str, P>, jaq_core::load::Error<&str>)],
) -> String {
    use jaq_core::load::Error;
    let at = |rest: &str| code.len().saturating_sub(rest.len()) + 1;
    let mut out = Vec::new();
    for (_, e) in errs {
        match e {
            Error::Io(v) => out.extend(v.iter().map(|(_, m)| m.clone())),
            Error::Lex(v) => out
                .extend(v.iter().map(|(exp, rest)| {
                    format!("expected {} at column {}", exp.as_str(), at(rest))
                })),
            Error::Parse(v) => out
                .extend(v.iter().map(|(exp, rest)| {
                    format!("expected {} at column {}", exp.as_str(), at(rest))
                })),
        }
    }
    out.join("; ")
}

fn load(env: &Env<'_>, path: &Path, lang: Lang) -> Result<Vec<Value>, Fault> {
    let text = read_text(env, path, lang)?;
    parse_text(path, &text, lang)
}

/// Parses a document the learner (or a grader's command) produced; malformed text is a failure.
pub(crate) fn parse_text(path: &Path, text: &str, lang: Lang) -> Result<Vec<Value>, Fault> {
    Document::parse(path, text).map_err(|e| {
        Failure::new(
            format!(
                "{} {}",
                lang.pick("a well-formed document", "正しい形式のドキュメント"),
                path.display()
            ),
            e,
        )
        .into()
    })
}

pub(crate) fn run(env: &Env<'_>, path: &Path, code: &str, lang: Lang) -> Result<Vec<Value>, Fault> {
    let docs = load(env, path, lang)?;
    Ok(query(&docs, code)?)
}

/// One result, or a failure saying how many there were.
pub(crate) fn single(
    results: Vec<Value>,
    path: &Path,
    code: &str,
    lang: Lang,
) -> Result<Value, Failure> {
    let n = results.len();
    let mut it = results.into_iter();
    match (it.next(), it.next()) {
        (Some(v), None) => Ok(v),
        _ => Err(Failure::new(
            format!(
                "{} {code} {} {}",
                lang.pick("one result of", "クエリ"),
                lang.pick("on", "の結果が1つ:"),
                path.display()
            ),
            match lang {
                Lang::En => format!("{n} results"),
                Lang::Ja => format!("結果が {n} 個"),
            },
        )),
    }
}

/// The results as a list: a single array result stands for its elements.
pub(crate) fn flatten(results: Vec<Value>) -> Vec<Value> {
    match <[Value; 1]>::try_from(results) {
        Ok([Value::Array(items)]) => items,
        Ok([v]) => vec![v],
        Err(results) => results,
    }
}

pub(crate) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

pub(super) fn evaluate(check: &Check, env: &Env<'_>, lang: Lang) -> Result<(), Fault> {
    match check {
        Check::Query {
            file,
            query,
            expect: e,
        } => Ok(expect(run(env, file, query, lang)?, e, file, query, lang)?),
        Check::QueryType { file, query, ty } => {
            let got = single(run(env, file, query, lang)?, file, query, lang)?;
            let found = JsonType::of(&got);
            if found == *ty {
                Ok(())
            } else {
                Err(Failure::new(
                    format!("{query}: {}", ty.name(lang)),
                    format!("{} ({})", found.name(lang), show(&got)),
                )
                .into())
            }
        }
        Check::QueryEqualsQuery {
            file,
            query,
            other,
            other_query,
        } => {
            let left = single(run(env, file, query, lang)?, file, query, lang)?;
            let right = single(
                run(env, other, other_query, lang)?,
                other,
                other_query,
                lang,
            )?;
            Ok(same(&left, &right, || {
                format!(
                    "{} {query} = {} {other_query}",
                    file.display(),
                    other.display()
                )
            })?)
        }
        _ => Ok(()),
    }
}

/// A check that `left` (what the learner wrote) equals `right` (what it is compared with).
pub(crate) fn same(
    left: &Value,
    right: &Value,
    what: impl FnOnce() -> String,
) -> Result<(), Failure> {
    if numeric_eq(left, right) {
        Ok(())
    } else {
        Err(Failure::new(
            format!("{} ({})", what(), show(right)),
            show(left),
        ))
    }
}

/// JSON equality where `3` and `3.0` are the same number.
pub(crate) fn numeric_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_expectations_pass_and_fail() {
        let at = Path::new("a.json");
        let check = |results: Vec<Value>, e: Expect| expect(results, &e, at, ".x", Lang::En);
        let v = |j: &str| serde_json::from_str::<Value>(j).unwrap();
        assert!(check(vec![v("1")], Expect::NotEquals(v("2"))).is_ok());
        assert!(check(vec![], Expect::NotEquals(v("2"))).is_ok());
        let f = check(vec![v("2")], Expect::NotEquals(v("2"))).unwrap_err();
        assert!(f.expected.contains("≠ 2"), "{f:?}");
        assert!(check(vec![v(r#"["a"]"#)], Expect::Excludes(vec![v(r#""b""#)])).is_ok());
        let f = check(vec![v(r#"["a","b"]"#)], Expect::Excludes(vec![v(r#""b""#)])).unwrap_err();
        assert!(f.found.contains("\"b\""), "{f:?}");
        assert!(check(vec![v("[1,2]")], Expect::CountAtMost(2)).is_ok());
        let f = check(vec![v("[1,2,3]")], Expect::CountAtMost(2)).unwrap_err();
        assert!(f.found.starts_with('3'), "{f:?}");
    }

    #[test]
    fn query_runs_on_every_yaml_document() {
        let docs = Document::parse(Path::new("m.yaml"), "kind: A\n---\nkind: B\n---\n").unwrap();
        assert_eq!(
            query(&docs, ".kind").unwrap(),
            vec![Value::from("A"), Value::from("B")]
        );
    }

    #[test]
    fn malformed_json_says_where() {
        let err = Document::parse(Path::new("x.json"), "{\n  \"a\": [1,\n}").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn single_array_result_is_flattened() {
        assert_eq!(flatten(vec![serde_json::json!([1, 2])]).len(), 2);
        assert_eq!(flatten(vec![Value::from(1), Value::from(2)]).len(), 2);
    }
}
