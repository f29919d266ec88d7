//! The `typed-answer` operator: the files a step saves a tool's output to, what the reference
//! run left in them, and the `echo` of that first line that stands in for the tool.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use tree_sitter::Node;

use super::bash::{self, descendants, named_children, text};
use super::generate::{Edit, Operator, StepScript, statements};
use super::values::unquote;

/// What the reference run left, for typed answers: the first line of each file a command
/// wrote, by absolute path, and whether it was the file's only line.
pub type Answers = HashMap<PathBuf, (String, bool)>;

/// The placeholder of a typed answer when no reference run is at hand (`--list`).
pub const UNKNOWN_ANSWER: &str = "<first line of the reference output>";

/// The absolute files a statement saves a tool's output to (`cmd > /path`): what a typed answer
/// replaces. Statements that already write a constant (echo, printf, cat, heredocs) save none.
fn saved_outputs(stmt: Node<'_>, src: &str) -> Vec<String> {
    if stmt.kind() != "redirected_statement" {
        return Vec::new();
    }
    let kids = named_children(stmt);
    if kids.iter().any(|k| k.kind() == "heredoc_redirect") {
        return Vec::new();
    }
    let Some(body) = kids.first() else {
        return Vec::new();
    };
    let producer = descendants(*body)
        .into_iter()
        .find(|n| n.kind() == "command_name")
        .map(|n| text(n, src));
    if matches!(producer, Some("echo" | "printf" | "cat" | "true" | ":")) {
        return Vec::new();
    }
    kids.iter()
        .filter(|k| k.kind() == "file_redirect")
        .filter(|r| r.child(0).is_some_and(|c| c.kind() != "file_descriptor"))
        .filter(|r| {
            let op = r.child(0).map(|c| text(c, src)).unwrap_or_default();
            matches!(op, ">" | ">>" | "&>" | ">|")
        })
        .filter_map(|r| r.child_by_field_name("destination"))
        .map(|dest| unquote(text(dest, src)))
        .filter(|dest| dest.starts_with('/'))
        .collect()
}

/// Every file the lab's scripts save a tool's output to: what the reference run captures for
/// typed answers.
pub fn saved_files(steps: &[StepScript]) -> Vec<PathBuf> {
    let mut out = BTreeSet::new();
    for step in steps {
        let Some(tree) = bash::parse(&step.script) else {
            continue;
        };
        for stmt in statements(tree.root_node()) {
            out.extend(
                saved_outputs(stmt, &step.script)
                    .into_iter()
                    .map(PathBuf::from),
            );
        }
    }
    out.into_iter().collect()
}

pub(super) fn typed_answer(
    stmt: Node<'_>,
    src: &str,
    answers: Option<&Answers>,
    edits: &mut Vec<Edit>,
) {
    for dest in saved_outputs(stmt, src) {
        let answer = match answers {
            None => UNKNOWN_ANSWER.to_owned(),
            Some(a) => match a.get(&PathBuf::from(&dest)) {
                // A one-line output typed in verbatim is the right answer, not a mutant.
                Some((_, true)) | None => continue,
                Some((first, false)) => first.clone(),
            },
        };
        edits.push(Edit {
            op: Operator::TypedAnswer,
            range: stmt.byte_range(),
            with: format!("echo {} > {dest}", shell_quote(&answer)),
        });
        return;
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
