//! Parameter types of the phrases, beyond cucumber's `{string}` and `{int}`: a JSON value, a
//! list of JSON values, and a JSON type name.

use std::str::FromStr;

use serde_json::Value;

use crate::checks::JsonType;

/// A JSON literal: `"text"`, `'text'`, `3`, `true`, `null`, `[…]`, `{…}`.
#[derive(Debug, cucumber::Parameter)]
#[param(
    name = "value",
    regex = r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null|\[.*\]|\{.*\}"#
)]
pub struct JsonValue(pub Value);

impl FromStr for JsonValue {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return Ok(JsonValue(Value::String(unescape(inner))));
        }
        serde_json::from_str(s)
            .map(JsonValue)
            .map_err(|e| format!("not a JSON value: {s}: {e}"))
    }
}

/// A comma-separated list of JSON values: `"mesh-lab", "istio-proxy"`, `90, 10`; strings may
/// also be single-quoted, for text with double quotes in it.
#[derive(Debug, cucumber::Parameter)]
#[param(
    name = "values",
    regex = r#"(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null)(?:\s*[,、]\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null))*"#
)]
pub struct JsonValues(pub Vec<Value>);

impl FromStr for JsonValues {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_list(s).map(JsonValues)
    }
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

/// A JSON type name, in English or Japanese.
#[derive(Debug, cucumber::Parameter)]
#[param(
    name = "jsontype",
    regex = "string|number|array|object|boolean|null|文字列|数値|配列|オブジェクト|真偽値"
)]
pub struct TypeName(pub JsonType);

impl FromStr for TypeName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        JsonType::parse(s)
            .map(TypeName)
            .ok_or_else(|| format!("unknown JSON type {s}"))
    }
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
        assert_eq!(
            JsonValue::from_str("'x\\'y'").unwrap().0,
            Value::from("x'y")
        );
        assert_eq!(JsonValue::from_str("0").unwrap().0, Value::from(0));
    }
}
