//! The `target` mutation operator: kubectl or istioctl pointed elsewhere — another namespace, another
//! file the lab names, another context, another name for the verb to act on.

use tree_sitter::Node;

use super::bash::{command_args, text};
use super::generate::{Edit, Operator};
use super::values::{one_char, unquote};

/// Changes a target argument of kubectl and istioctl: a namespace, a file, a context, the name
/// of the resource a verb acts on.
pub(super) fn targets(command: Node<'_>, src: &str, paths: &[String], edits: &mut Vec<Edit>) {
    let Some((program @ ("kubectl" | "istioctl"), args)) = command_args(command, src) else {
        return;
    };
    let words: Vec<String> = args.iter().map(|a| unquote(text(*a, src))).collect();
    let mut push = |node: Node<'_>, with: String| {
        if with != text(node, src) {
            edits.push(Edit {
                op: Operator::Target,
                range: node.byte_range(),
                with,
            });
        }
    };
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = words[i].as_str();
        let value = args.get(i + 1).copied();
        match w {
            "-n" | "--namespace" => {
                if let Some(v) = value {
                    push(v, other_namespace(&words[i + 1]));
                }
                i += 2;
                continue;
            }
            "-f" | "--filename" => {
                if let Some(v) = value {
                    let current = &words[i + 1];
                    let other = paths
                        .iter()
                        .find(|p| *p != current && !p.is_empty())
                        .cloned()
                        .unwrap_or_else(|| one_char(current));
                    push(v, other);
                }
                i += 2;
                continue;
            }
            "--context" => {
                if let Some(v) = value {
                    push(v, one_char(&words[i + 1]));
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(ns) = w.strip_prefix("--namespace=") {
            push(args[i], format!("--namespace={}", other_namespace(ns)));
        } else if let Some(ctx) = w.strip_prefix("--context=") {
            push(args[i], format!("--context={}", one_char(ctx)));
        } else if w.starts_with('-') {
            // A flag that takes a value: skip the value too.
            if matches!(
                w,
                "-o" | "-l" | "--output" | "--selector" | "-c" | "--type" | "-p"
            ) && i + 1 < args.len()
            {
                i += 1;
            }
        } else {
            positional.push(i);
        }
        i += 1;
    }
    // kubectl VERB TYPE NAME, or kubectl VERB TYPE/NAME.
    if program == "kubectl" && positional.len() >= 2 {
        let verb = words[positional[0]].as_str();
        let acts_on_name = matches!(
            verb,
            "get" | "describe" | "delete" | "label" | "annotate" | "patch" | "create" | "scale"
        );
        if acts_on_name {
            let ty = &words[positional[1]];
            if let Some((t, n)) = ty.split_once('/') {
                push(args[positional[1]], format!("{t}/{}", one_char(n)));
            } else if let Some(&n) = positional.get(2) {
                push(args[n], one_char(&words[n]));
            }
        }
    }
}

pub(super) fn other_namespace(ns: &str) -> String {
    if ns == "default" {
        "kube-system".to_owned()
    } else {
        "default".to_owned()
    }
}
