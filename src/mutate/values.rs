//! Mutation operators on the values a learner types into documents: in a heredoc (YAML or JSON)
//! or an inline JSON string, a number ±1 or 0, a boolean flipped, one character of a string,
//! two sibling values swapped, a list item or a key dropped, a map key changed.

use regex::Regex;
use tree_sitter::Node;

use super::bash::text;
use super::generate::{Edit, Operator};

/// The value ranges of sibling keys, with their text.
type Values = Vec<(std::ops::Range<usize>, String)>;

/// The indentation of a line.
fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The block line `i` opens (it and the following lines indented deeper) dropped: as a list
/// item, or as a key that is not a manifest's identity (`apiVersion`, `kind`, `metadata`,
/// `name`). The dropped lines are left blank, so line numbers stay.
fn block_edits(
    base: usize,
    body: &str,
    lines: &[(usize, &str)],
    i: usize,
    key: &str,
    edits: &mut Vec<Edit>,
) {
    let (start, line) = lines[i];
    let own = indent(line);
    let is_item = line.trim_start().starts_with("- ");
    let end = lines[i + 1..]
        .iter()
        .position(|(_, l)| !l.trim().is_empty() && indent(l) <= own)
        .map_or(lines.len(), |p| i + 1 + p);
    let block_end = lines.get(end).map_or(base + body.len(), |(s, _)| *s);
    let range = start..block_end;
    let removed = body[range.start - base..range.end - base]
        .matches('\n')
        .count();
    let with = "\n".repeat(removed);
    let op = if is_item {
        Operator::DropItem
    } else if line.contains(':') && !matches!(key, "apiVersion" | "kind" | "metadata" | "name") {
        Operator::DropKey
    } else {
        return;
    };
    edits.push(Edit { op, range, with });
}

/// Line-based edits of YAML (or JSON lines) in a heredoc body starting at byte `base`.
pub(super) fn yaml_edits(base: usize, body: &str, edits: &mut Vec<Edit>) {
    static SCALAR: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let scalar = SCALAR.get_or_init(|| {
        Regex::new(r#"^(\s*(?:-\s+)?)("?[A-Za-z0-9_.\-/]+"?):(\s+)([^|>&*#\s{\[][^#]*?)(,?)\s*$"#)
            .expect("static regex")
    });
    let mut lines = Vec::new();
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        lines.push((base + at, line.trim_end_matches('\n')));
        at += line.len();
    }
    // (key, indent) → the value ranges of those keys, for swaps.
    let mut siblings: std::collections::BTreeMap<(String, usize), Values> =
        std::collections::BTreeMap::new();
    // A Kubernetes manifest's keys are its schema's fields (a changed one is refused by the API
    // server): only the keys that are data are changed there. Any other document is the
    // learner's own data.
    let manifest = lines
        .iter()
        .any(|(_, l)| l.starts_with("apiVersion:") || l.starts_with("kind:"));
    // The block keys that enclose the line: (indent, key).
    let mut open: Vec<(usize, String)> = Vec::new();
    for (i, (start, line)) in lines.iter().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let depth = indent(line) + usize::from(line.trim_start().starts_with("- ")) * 2;
        while open.last().is_some_and(|(d, _)| *d >= depth) {
            open.pop();
        }
        let parent = open.last().map(|(_, k)| k.as_str());
        map_keys(*start, line, manifest.then_some(parent), edits);
        let key_of = |l: &str| {
            l.trim_start()
                .trim_start_matches("- ")
                .split(':')
                .next()
                .unwrap_or_default()
                .trim_matches('"')
                .to_owned()
        };
        if line.contains(':') {
            open.push((depth, key_of(line)));
        }
        if let Some(c) = scalar.captures(line) {
            let key = c[2].trim_matches('"').to_owned();
            let value = c.get(4).expect("group 4");
            let range = start + value.start()..start + value.end();
            if key != "apiVersion" {
                for with in scalar_changes(value.as_str()) {
                    edits.push(Edit {
                        op: Operator::Scalar,
                        range: range.clone(),
                        with,
                    });
                }
                siblings
                    .entry((key, indent(line) + c[1].len()))
                    .or_default()
                    .push((range, value.as_str().to_owned()));
            }
        }
        block_edits(base, body, &lines, i, &key_of(line), edits);
    }
    swaps(base, body, &siblings, edits);
}

/// Each pair of neighbouring sibling values swapped, where they differ: one edit spanning both
/// values, rewriting the text between them unchanged.
fn swaps(
    base: usize,
    body: &str,
    siblings: &std::collections::BTreeMap<(String, usize), Values>,
    edits: &mut Vec<Edit>,
) {
    for values in siblings.values() {
        for pair in values.windows(2) {
            let ((r1, v1), (r2, v2)) = (&pair[0], &pair[1]);
            if v1 == v2 {
                continue;
            }
            let between = &body[r1.end - base..r2.start - base];
            edits.push(Edit {
                op: Operator::SwapValues,
                range: r1.start..r2.end,
                with: format!("{v2}{between}{v1}"),
            });
        }
    }
}

/// The maps of a manifest whose keys are data, not fields of the schema.
const DATA_MAPS: &[&str] = &[
    "labels",
    "matchLabels",
    "selector",
    "nodeSelector",
    "annotations",
    "data",
    "stringData",
    "portLevelMtls",
];

/// The keys of a YAML line — the block key it starts with and the keys of flow mappings on it
/// (`portLevelMtls: {8081: {mode: STRICT}}`) — each changed: a number +1, a name by one
/// character. In a manifest (`in_manifest` holds the enclosing block key) only keys that are
/// data change: numbers, and the keys of a data map (labels, selectors, annotations, …).
fn map_keys(start: usize, line: &str, in_manifest: Option<Option<&str>>, edits: &mut Vec<Edit>) {
    static KEY: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| {
        Regex::new(r#"(?:^\s*(?:-\s+)?|[{,]\s*)"?(?P<key>[A-Za-z0-9_.\-/]+)"?:(?:\s|$)"#)
            .expect("static regex")
    });
    // The block key of the line, the parent of its first-level flow keys.
    let own = line
        .trim_start()
        .trim_start_matches("- ")
        .split(':')
        .next()
        .unwrap_or_default()
        .trim_matches('"');
    for c in key.captures_iter(line) {
        let k = c.name("key").expect("named group");
        if let Some(parent) = in_manifest {
            let flow_depth =
                line[..k.start()].matches('{').count() - line[..k.start()].matches('}').count();
            let parent = match flow_depth {
                0 => parent,
                1 => Some(own),
                _ => None,
            };
            let data = parent.is_some_and(|p| DATA_MAPS.contains(&p));
            if !(data || k.as_str().parse::<u64>().is_ok()) {
                continue;
            }
        }
        edits.push(Edit {
            op: Operator::MapKey,
            range: start + k.start()..start + k.end(),
            with: changed_key(k.as_str()),
        });
    }
}

/// A key changed: a number +1, a name by one character.
fn changed_key(key: &str) -> String {
    match key.parse::<u64>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => one_char(key),
    }
}

/// Scalar edits inside a single-quoted JSON string (`echo '{"a": 1}'`): values changed, items
/// of arrays of scalars dropped.
pub(super) fn inline_json(node: Node<'_>, src: &str, edits: &mut Vec<Edit>) {
    static PAIR: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    static ARRAY: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let raw = text(node, src);
    let inner = raw.trim_matches('\'');
    if !(inner.trim_start().starts_with('{') || inner.trim_start().starts_with('[')) {
        return;
    }
    let base = node.start_byte() + 1;
    let pair = PAIR.get_or_init(|| {
        Regex::new(r#""[^"]+"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)"#)
            .expect("static regex")
    });
    static KEY: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| Regex::new(r#""([^"\\]+)"\s*:"#).expect("static regex"));
    for c in key.captures_iter(inner) {
        let k = c.get(1).expect("group 1");
        edits.push(Edit {
            op: Operator::MapKey,
            range: base + k.start()..base + k.end(),
            with: changed_key(k.as_str()),
        });
    }
    for c in pair.captures_iter(inner) {
        let v = c.get(1).expect("group 1");
        for with in scalar_changes(v.as_str()) {
            edits.push(Edit {
                op: Operator::Scalar,
                range: base + v.start()..base + v.end(),
                with,
            });
        }
    }
    let array = ARRAY.get_or_init(|| Regex::new(r"\[([^\[\]{}]+)\]").expect("static regex"));
    for c in array.captures_iter(inner) {
        let items = c.get(1).expect("group 1");
        let parts: Vec<&str> = items.as_str().split(',').collect();
        if parts.len() < 2 {
            continue;
        }
        for i in 0..parts.len() {
            let kept: Vec<&str> = parts
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| *p)
                .collect();
            edits.push(Edit {
                op: Operator::DropItem,
                range: base + items.start()..base + items.end(),
                with: kept.join(",").trim_start().to_owned(),
            });
        }
    }
}

/// Plausible wrong values for a scalar: numbers ±1 or 0, booleans flipped, strings with one
/// character changed (quotes kept).
pub(super) fn scalar_changes(value: &str) -> Vec<String> {
    let v = value.trim();
    if let Ok(n) = v.parse::<i64>() {
        let mut out = vec![(n + 1).to_string()];
        if n != 0 {
            out.push("0".to_owned());
        }
        return out;
    }
    if let Ok(f) = v.parse::<f64>() {
        return vec![(f + 1.0).to_string()];
    }
    match v {
        "true" => return vec!["false".to_owned()],
        "false" => return vec!["true".to_owned()],
        _ => {}
    }
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return vec![format!("{q}{}{q}", one_char(inner))];
        }
    }
    vec![one_char(v)]
}

/// A word with its last letter or digit changed (a → b, z → a, 9 → 0), or `x` appended.
pub fn one_char(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    if let Some(i) = chars.iter().rposition(|c| c.is_ascii_alphanumeric()) {
        chars[i] = match chars[i] {
            'z' => 'a',
            'Z' => 'A',
            '9' => '0',
            c => (c as u8 + 1) as char,
        };
        chars.into_iter().collect()
    } else {
        format!("{s}x")
    }
}

pub(super) fn unquote(s: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    s.to_owned()
}
