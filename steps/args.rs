//! The arguments of a step, as its phrase's expression captured them: [`Args`] hands them to the
//! phrase's builder as texts, paths, numbers, regular expressions and JSON values, and says in
//! the step's language what does not parse. Beside cucumber's `{string}` and `{int}`, phrases
//! use three parameter types of their own ([`PARAMETERS`]): a JSON value, a list of JSON values
//! and a JSON type name.

use std::path::PathBuf;

use regex::Regex;
use serde_json::Value;

use crate::checks::JsonType;
use crate::model::Lang;

/// labcheck's parameter types: name and regular expression.
pub const PARAMETERS: &[(&str, &str)] = &[
    (
        "value",
        r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null|\[.*\]|\{.*\}"#,
    ),
    (
        "values",
        r#"(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null)(?:\s*[,、]\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null))*"#,
    ),
    (
        "jsontype",
        "string|number|array|object|boolean|null|文字列|数値|配列|オブジェクト|真偽値",
    ),
];

/// A step's arguments, in the order its phrase's builder reads them.
pub struct Args<'a> {
    values: Vec<String>,
    docstring: Option<&'a str>,
    pub lang: Lang,
}

impl<'a> Args<'a> {
    pub fn new(values: Vec<String>, docstring: Option<&'a str>, lang: Lang) -> Args<'a> {
        Args {
            values,
            docstring,
            lang,
        }
    }

    fn raw(&self, i: usize) -> &str {
        self.values.get(i).map(String::as_str).unwrap_or_default()
    }

    /// A quoted argument, its escapes undone.
    pub fn text(&self, i: usize) -> String {
        unescape(self.raw(i))
    }

    /// A quoted argument naming a path.
    pub fn path(&self, i: usize) -> PathBuf {
        PathBuf::from(self.text(i))
    }

    /// The step's docstring (empty when it has none).
    pub fn docstring(&self) -> &str {
        self.docstring.unwrap_or_default()
    }

    /// A whole number: a count or an exit code.
    pub fn int<T: std::str::FromStr>(&self, i: usize) -> Result<T, String> {
        let raw = self.raw(i);
        raw.parse().map_err(|_| {
            format!(
                "{} {raw}",
                self.lang
                    .pick("not a number in range:", "範囲内の数ではない:")
            )
        })
    }

    /// A regular expression; `^` and `$` match at every line, as with grep.
    pub fn regex(&self, i: usize) -> Result<Regex, String> {
        let re = self.raw(i);
        Regex::new(&format!("(?m){}", unescape(re))).map_err(|e| {
            format!(
                "{} /{re}/: {e}",
                self.lang
                    .pick("invalid regular expression", "正規表現が不正")
            )
        })
    }

    /// A JSON literal: `"text"`, `'text'`, `3`, `true`, `null`, `[…]`, `{…}`.
    pub fn value(&self, i: usize) -> Result<Value, String> {
        parse_value(self.raw(i))
    }

    /// A comma-separated list of JSON values: `"mesh-lab", "istio-proxy"`, `90, 10`.
    pub fn values(&self, i: usize) -> Result<Vec<Value>, String> {
        parse_list(self.raw(i))
    }

    /// A list of values as words (strings as they are, other values as JSON).
    pub fn words(&self, i: usize) -> Result<Vec<String>, String> {
        Ok(self
            .values(i)?
            .into_iter()
            .map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect())
    }

    /// A JSON type name, in English or Japanese.
    pub fn json_type(&self, i: usize) -> Result<JsonType, String> {
        let raw = self.raw(i);
        JsonType::parse(raw).ok_or_else(|| format!("unknown JSON type {raw}"))
    }
}

/// Parses a JSON literal; single quotes make a string with `\'` escapes.
pub fn parse_value(s: &str) -> Result<Value, String> {
    if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Ok(Value::String(unescape(inner)));
    }
    serde_json::from_str(s).map_err(|e| format!("not a JSON value: {s}: {e}"))
}

/// Parses `"a", "b", 3` (also with `、`) into values.
pub fn parse_list(s: &str) -> Result<Vec<Value>, String> {
    let bad = || format!("not a list of JSON values: {s}");
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('\'') {
            let end = single_quoted_end(quoted).ok_or_else(bad)?;
            out.push(Value::String(unescape(&quoted[..end])));
            rest = quoted[end + 1..].trim_start();
        } else {
            let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            out.push(values.next().ok_or_else(bad)?.map_err(|_| bad())?);
            rest = rest[values.byte_offset()..].trim_start();
        }
        if !rest.is_empty() {
            rest = rest
                .strip_prefix(',')
                .or_else(|| rest.strip_prefix('、'))
                .ok_or_else(bad)?
                .trim_start();
        }
    }
    Ok(out)
}

/// The byte index of the `'` closing a single-quoted string (backslash escapes skipped).
fn single_quoted_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '\'' => return Some(i),
            _ => {}
        }
    }
    None
}

/// Undoes `\"`, `\'` and `\\` inside a quoted phrase argument.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\'' | '\\')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_of_values_parse_with_either_comma() {
        assert_eq!(
            parse_list(r#""a", "b",3"#).unwrap(),
            vec![Value::from("a"), Value::from("b"), Value::from(3)]
        );
        assert_eq!(parse_list(r#""a"、"b""#).unwrap().len(), 2);
        assert!(parse_list(r#""a" "b""#).is_err());
        assert_eq!(
            parse_list(r#"'say "hi"', "b", 90"#).unwrap(),
            vec![Value::from("say \"hi\""), Value::from("b"), Value::from(90)]
        );
    }

    #[test]
    fn single_quoted_value_is_a_string() {
        assert_eq!(parse_value("'x\\'y'").unwrap(), Value::from("x'y"));
        assert_eq!(parse_value("0").unwrap(), Value::from(0));
    }
}
