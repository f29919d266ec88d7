//! The vocabulary as an editor reads it: the phrase table written as cucumber-rs step
//! definitions (`editor/glue.rs`, printed by `labcheck vocabulary --glue`) for the Cucumber
//! Language Server, which finds Rust steps by their `#[given]`/`#[when]`/`#[then]` attributes
//! and parameter types by `#[param(name, regex)]` — labcheck binds its steps at runtime from
//! [`PHRASES`], which the server cannot read. A test keeps the file equal to [`glue`].

use cucumber::gherkin::{LineCol, Span, Step, StepType};

use super::args::PARAMETERS;
use super::compile::compile;
use super::phrases::{PHRASES, Phrase};

/// Where the generated file lives, from the repository's root.
pub const GLUE_PATH: &str = "editor/glue.rs";

/// The generated glue file: every parameter type, every sentence of both languages and, for a
/// check that may wait, its waiting forms (`… within {int} second(s)`, `{int} 秒以内に …`).
pub fn glue() -> String {
    let mut out = String::from(
        "//! Step definitions for editors, generated from steps/phrases.rs by\n\
         //! `labcheck vocabulary --glue > editor/glue.rs`; do not edit (a test keeps it current).\n\
         //! labcheck does not compile this file: the Cucumber Language Server reads it to know\n\
         //! labcheck's steps (README, \"Editor support\").\n\n",
    );
    for (name, regex) in PARAMETERS {
        out.push_str(&format!(
            "#[derive(Parameter)]\n#[param(name = {}, regex = {})]\nstruct {};\n\n",
            string_literal(name),
            string_literal(regex),
            type_name(name)
        ));
    }
    for (i, p) in PHRASES.iter().enumerate() {
        let attr = match p.ty {
            StepType::Given => "given",
            StepType::When => "when",
            StepType::Then => "then",
        };
        out.push_str(&format!("// {}\n", p.what));
        let waits = can_wait(p);
        for (lang, expr) in [("en", p.en.expr), ("ja", p.ja.expr)] {
            out.push_str(&definition(attr, expr, &format!("phrase_{i}_{lang}")));
            if waits {
                let waiting = match lang {
                    "en" => format!("{expr} within {{int}} second(s)"),
                    _ => format!("{{int}} 秒以内に {expr}"),
                };
                out.push_str(&definition(
                    attr,
                    &waiting,
                    &format!("phrase_{i}_{lang}_within"),
                ));
            }
        }
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The number of step definitions [`glue`] writes.
pub fn definitions() -> usize {
    PHRASES
        .iter()
        .map(|p| if can_wait(p) { 4 } else { 2 })
        .sum()
}

fn definition(attr: &str, expr: &str, name: &str) -> String {
    // The server takes a raw string's text between `r#"` and `"#` as it is.
    assert!(
        !expr.contains("\"#") && !expr.contains('\\'),
        "{expr}: not writable as r#\"…\"#"
    );
    format!("#[{attr}(expr = r#\"{expr}\"#)]\nfn {name}() {{}}\n")
}

/// Whether the phrase is a check that may wait (`… within 5 seconds` compiles).
fn can_wait(p: &Phrase) -> bool {
    p.ty == StepType::Then
        && compile(&Step {
            keyword: "Then ".to_owned(),
            ty: StepType::Then,
            value: format!("{} within 5 seconds", p.en.example),
            docstring: None,
            table: None,
            span: Span { start: 0, end: 0 },
            position: LineCol { line: 0, col: 0 },
        })
        .is_ok()
}

/// A Rust string literal (the server reads `#[param]` only from plain, not raw, strings).
fn string_literal(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn type_name(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_glue_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/editor/glue.rs");
        let file = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            file == glue(),
            "{GLUE_PATH}: run `labcheck vocabulary --glue > {GLUE_PATH}`"
        );
    }

    #[test]
    fn both_languages_of_a_check_wait_and_a_finished_command_does_not() {
        let text = glue();
        assert!(text.contains(
            "#[then(expr = r#\"the file {string} should exist within {int} second(s)\"#)]"
        ));
        assert!(
            text.contains("#[then(expr = r#\"{int} 秒以内に ファイル {string} が存在する\"#)]")
        );
        assert!(!text.contains("the last command should succeed within"));
        assert_eq!(
            text.matches("#[given(").count()
                + text.matches("#[when(").count()
                + text.matches("#[then(").count(),
            definitions()
        );
    }
}
