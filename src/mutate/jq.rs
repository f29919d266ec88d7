//! Mutation of the jq programs a learner types (`jq '…'` in a script): a stage of the program's
//! top-level pipe dropped, a `select` negated or dropped, a key or an index changed, a literal
//! changed. A mutant that jq could not compile is not made (when the original compiles), so each
//! one is a wrong answer that runs.

use tree_sitter::Node;

use super::bash::{command_args, text};
use super::generate::{Edit, Operator};
use super::values::{one_char, scalar_changes};

/// jq's options that take values (how many), so the program is the first other argument.
fn values_taken(flag: &str) -> usize {
    match flag {
        "--arg" | "--argjson" | "--slurpfile" | "--rawfile" => 2,
        "--indent" | "-L" => 1,
        _ => 0,
    }
}

/// The edits of the program a `jq` command runs, if it is written as one quoted word.
pub(super) fn jq_program(command: Node<'_>, src: &str, edits: &mut Vec<Edit>) {
    let Some(("jq", args)) = command_args(command, src) else {
        return;
    };
    let mut i = 0;
    while i < args.len() {
        let word = text(args[i], src);
        if word.starts_with('-') && word.len() > 1 {
            i += 1 + values_taken(word);
            continue;
        }
        program_edits(args[i], src, edits);
        return;
    }
}

/// The program's text and where it starts in the script: the inside of a single-quoted word, or
/// a bare word (a double-quoted one may expand the shell's variables: left alone).
fn program(node: Node<'_>, src: &str) -> Option<(usize, String)> {
    let raw = text(node, src);
    match node.kind() {
        "raw_string" => Some((
            node.start_byte() + 1,
            raw.strip_prefix('\'')?.strip_suffix('\'')?.to_owned(),
        )),
        "word" if !raw.contains(['$', '\\', '"', '\'']) => {
            Some((node.start_byte(), raw.to_owned()))
        }
        _ => None,
    }
}

fn program_edits(node: Node<'_>, src: &str, edits: &mut Vec<Edit>) {
    let Some((base, code)) = program(node, src) else {
        return;
    };
    let compiles = |c: &str| crate::checks::documents::compile(c).is_ok();
    let checked = compiles(&code);
    for (op, range, with) in program_changes(&code) {
        let mutated = format!("{}{with}{}", &code[..range.start], &code[range.end..]);
        if checked && !compiles(&mutated) {
            continue;
        }
        edits.push(Edit {
            op,
            range: base + range.start..base + range.end,
            with,
        });
    }
}

/// A token of a jq program that mutation looks at.
#[derive(Debug, PartialEq)]
enum Token {
    /// `|` at the top level (not `|=`).
    Pipe,
    /// `.name` (the range holds the name).
    Key,
    /// `name:` inside an object construction (the range holds the name).
    ObjectKey,
    /// A number, or a string without interpolation.
    Literal,
    /// `[N]`: the range holds N.
    Index,
    /// `select(` … `)`: the range spans it all.
    Select,
}

/// The tokens of a jq program, with their byte ranges; strings and comments are skipped over.
fn tokens(code: &str) -> Vec<(Token, std::ops::Range<usize>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    // The open brackets, innermost last.
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let start = i;
                let mut interpolated = false;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        interpolated |= b.get(i + 1) == Some(&b'(');
                        i += 1;
                    }
                    i += 1;
                }
                let end = (i + 1).min(b.len());
                let is_key = open.last() == Some(&b'{') && next_non_space(b, end) == Some(b':');
                if !interpolated && !is_key {
                    out.push((Token::Literal, start..end));
                }
                i = end;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                if c == b'['
                    && let Some(len) = b[i + 1..].iter().position(|d| !d.is_ascii_digit())
                    && len > 0
                    && b.get(i + 1 + len) == Some(&b']')
                {
                    out.push((Token::Index, i + 1..i + 1 + len));
                }
                open.push(c);
            }
            b')' | b']' | b'}' => {
                open.pop();
            }
            b'|' if open.is_empty() && b.get(i + 1) != Some(&b'=') => {
                out.push((Token::Pipe, i..i + 1))
            }
            b'.' if b
                .get(i + 1)
                .is_some_and(|d| d.is_ascii_alphabetic() || *d == b'_') =>
            {
                let end = i + 1 + b[i + 1..].iter().take_while(|d| ident(**d)).count();
                out.push((Token::Key, i + 1..end));
                i = end;
                continue;
            }
            b'$' => {
                // A variable: its name is no key.
                i += 1 + b[i + 1..].iter().take_while(|d| ident(**d)).count();
                continue;
            }
            _ if c.is_ascii_digit() && (i == 0 || !(ident(b[i - 1]) || b[i - 1] == b'.')) => {
                let end = i + b[i..]
                    .iter()
                    .take_while(|d| d.is_ascii_digit() || **d == b'.')
                    .count();
                if !(b.get(i.wrapping_sub(1)) == Some(&b'[') && b.get(end) == Some(&b']')) {
                    out.push((Token::Literal, i..end));
                }
                i = end;
                continue;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let end = i + b[i..].iter().take_while(|d| ident(**d)).count();
                let word = &code[i..end];
                if word == "select" && b.get(end) == Some(&b'(') {
                    if let Some(close) = matching(b, end) {
                        out.push((Token::Select, i..close + 1));
                    }
                } else if open.last() == Some(&b'{') && next_non_space(b, end) == Some(b':') {
                    out.push((Token::ObjectKey, i..end));
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn next_non_space(b: &[u8], from: usize) -> Option<u8> {
    b[from.min(b.len())..]
        .iter()
        .copied()
        .find(|c| !c.is_ascii_whitespace())
}

/// The index of the bracket that closes the one at `open`, strings skipped.
fn matching(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += usize::from(b[i] == b'\\') + 1;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Every change of a program: (operator, range in the program, replacement).
fn program_changes(code: &str) -> Vec<(Operator, std::ops::Range<usize>, String)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    // Top-level stages: drop one (with the pipe that joins it to its neighbour).
    let pipes: Vec<usize> = toks
        .iter()
        .filter(|(t, _)| *t == Token::Pipe)
        .map(|(_, r)| r.start)
        .collect();
    if !pipes.is_empty() {
        let mut bounds = vec![0];
        bounds.extend(pipes.iter().copied());
        bounds.push(code.len());
        let stages = bounds.len() - 1;
        for s in 0..stages {
            let range = if s == 0 {
                0..bounds[1] + 1
            } else {
                bounds[s]..bounds[s + 1]
            };
            out.push((Operator::JqStage, range, String::new()));
        }
    }
    for (token, range) in toks {
        let original = &code[range.clone()];
        match token {
            Token::Pipe => {}
            Token::Select => {
                let inner = &original["select(".len()..original.len() - 1];
                out.push((
                    Operator::JqSelect,
                    range.clone(),
                    format!("select(({inner}) | not)"),
                ));
                out.push((Operator::JqSelect, range, ".".to_owned()));
            }
            Token::Key | Token::ObjectKey => {
                out.push((Operator::JqKey, range, one_char(original)));
            }
            Token::Index => {
                let n: u64 = original.parse().unwrap_or(0);
                out.push((Operator::JqKey, range, (n + 1).to_string()));
            }
            Token::Literal => {
                for with in scalar_changes(original) {
                    out.push((Operator::JqLiteral, range.clone(), with));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(code: &str) -> Vec<String> {
        program_changes(code)
            .into_iter()
            .map(|(_, r, with)| format!("{}{with}{}", &code[..r.start], &code[r.end..]))
            .collect()
    }

    #[test]
    fn a_program_loses_stages_selects_keys_and_literals() {
        let code = r#"[.items[] | select(.spec.group | test("istio.io"))] | length"#;
        let all = changes(code);
        let has = |m: &str| all.iter().any(|c| c == m);
        // The top-level pipe only: the one inside [ … ] is not a stage of the program.
        assert!(has(" length"), "{all:#?}");
        assert!(has(
            r#"[.items[] | select(.spec.group | test("istio.io"))] "#
        ));
        assert!(has(
            r#"[.items[] | select((.spec.group | test("istio.io")) | not)] | length"#
        ));
        assert!(has(r#"[.items[] | .] | length"#));
        assert!(has(
            r#"[.itemt[] | select(.spec.group | test("istio.io"))] | length"#
        ));
        assert!(has(
            r#"[.items[] | select(.spec.grouq | test("istio.io"))] | length"#
        ));
        assert!(has(
            r#"[.items[] | select(.spec.group | test("istio.ip"))] | length"#
        ));
        // Functions are not keys.
        assert!(!all.iter().any(|c| c.contains("lengti")));
    }

    #[test]
    fn object_keys_indexes_and_numbers_change_but_variables_do_not() {
        let code = r#"{before: $before, n: (.items[0] | length + 1), "s": "x"}"#;
        let all = changes(code);
        let has = |m: &str| all.iter().any(|c| c == m);
        assert!(
            has(r#"{beforf: $before, n: (.items[0] | length + 1), "s": "x"}"#),
            "{all:#?}"
        );
        assert!(has(
            r#"{before: $before, n: (.items[1] | length + 1), "s": "x"}"#
        ));
        assert!(has(
            r#"{before: $before, n: (.items[0] | length + 2), "s": "x"}"#
        ));
        assert!(has(
            r#"{before: $before, n: (.items[0] | length + 1), "s": "y"}"#
        ));
        assert!(!all.iter().any(|c| c.contains("$beforf")));
        // `"s":` is a key, not a literal to change.
        assert!(!all.iter().any(|c| c.contains("\"t\":")));
    }
}
