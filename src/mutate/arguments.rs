//! Mutation of the arguments a learner types to kubectl, istioctl and jq: a number changed
//! (`--port 8080` → 8081 or 0, `--replicas=3` → 4) and a flag that takes no value dropped
//! (`-A`, `--overwrite`, `-y`, `jq -r`) or a `--flag=value` dropped whole.

use tree_sitter::Node;

use super::bash::{command_args, text};
use super::generate::{Edit, Operator};
use super::values::scalar_changes;

/// The flags of a program that take a value (the next word).
fn takes_value(program: &str, flag: &str) -> bool {
    if program == "jq" {
        return matches!(
            flag,
            "--arg" | "--argjson" | "--slurpfile" | "--rawfile" | "--indent" | "-L"
        );
    }
    matches!(
        flag,
        "-n" | "--namespace"
            | "-f"
            | "--filename"
            | "--context"
            | "-o"
            | "--output"
            | "-l"
            | "--selector"
            | "-c"
            | "--container"
            | "--type"
            | "-p"
            | "--patch"
            | "--revision"
            | "--set"
            | "--timeout"
    )
}

pub(super) fn arguments(command: Node<'_>, src: &str, edits: &mut Vec<Edit>) {
    let Some((program @ ("kubectl" | "istioctl" | "jq"), args)) = command_args(command, src) else {
        return;
    };
    let mut i = 0;
    while i < args.len() {
        let (node, word) = (args[i], text(args[i], src));
        if !matches!(node.kind(), "word" | "number") {
            i += 1;
            continue;
        }
        if takes_value(program, word) {
            i += 2;
            continue;
        }
        if let Some((flag, value)) = word.split_once('=')
            && flag.starts_with("--")
        {
            if value.chars().all(|c| c.is_ascii_digit()) && !value.is_empty() {
                for with in scalar_changes(value) {
                    edits.push(Edit {
                        op: Operator::Argument,
                        range: node.start_byte() + flag.len() + 1..node.end_byte(),
                        with,
                    });
                }
            }
            edits.push(drop(src, node));
        } else if word.starts_with('-') && word.len() > 1 {
            // A flag followed by another flag (or by nothing) takes no value; jq's flags that
            // take none are known.
            let next = args.get(i + 1).map(|n| text(*n, src));
            if program == "jq" || next.is_none_or(|n| n.starts_with('-')) {
                edits.push(drop(src, node));
            }
        } else if word.chars().all(|c| c.is_ascii_digit()) {
            for with in scalar_changes(word) {
                edits.push(Edit {
                    op: Operator::Argument,
                    range: node.byte_range(),
                    with,
                });
            }
        }
        i += 1;
    }
}

/// The flag dropped, with the space before it.
fn drop(src: &str, node: Node<'_>) -> Edit {
    let r = node.byte_range();
    let before = &src[..r.start];
    let spaces = before.len() - before.trim_end_matches([' ', '\t']).len();
    Edit {
        op: Operator::DropFlag,
        range: r.start - spaces..r.end,
        with: String::new(),
    }
}
