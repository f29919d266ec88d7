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
        if TARGET_FLAGS.contains(&w) {
            if let Some(v) = value {
                push(v, changed_target(w, &words[i + 1], paths));
            }
            i += 2;
            continue;
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
    if program == "kubectl"
        && let Some((node, with)) = name_target(&args, &words, &positional)
    {
        push(node, with);
    }
}

/// The flags whose value is a target: a namespace, a file, a context.
const TARGET_FLAGS: &[&str] = &["-n", "--namespace", "-f", "--filename", "--context"];

/// Another value for a target flag: another namespace, another file the lab names (or the
/// name changed by a character), another context.
fn changed_target(flag: &str, current: &str, paths: &[String]) -> String {
    match flag {
        "-n" | "--namespace" => other_namespace(current),
        "-f" | "--filename" => paths
            .iter()
            .find(|p| *p != current && !p.is_empty())
            .cloned()
            .unwrap_or_else(|| one_char(current)),
        _ => one_char(current),
    }
}

/// `kubectl VERB TYPE NAME` or `kubectl VERB TYPE/NAME` of a verb that acts on a name: the
/// name's argument and the name changed by a character.
fn name_target<'a>(
    args: &[Node<'a>],
    words: &[String],
    positional: &[usize],
) -> Option<(Node<'a>, String)> {
    let (&verb, &ty) = (positional.first()?, positional.get(1)?);
    let acts_on_name = matches!(
        words[verb].as_str(),
        "get" | "describe" | "delete" | "label" | "annotate" | "patch" | "create" | "scale"
    );
    if !acts_on_name {
        return None;
    }
    if let Some((t, n)) = words[ty].split_once('/') {
        return Some((args[ty], format!("{t}/{}", one_char(n))));
    }
    let &n = positional.get(2)?;
    Some((args[n], one_char(&words[n])))
}

pub(super) fn other_namespace(ns: &str) -> String {
    if ns == "default" {
        "kube-system".to_owned()
    } else {
        "default".to_owned()
    }
}
