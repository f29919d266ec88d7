//! Mutation operators: from one step's learner script (parsed with tree-sitter-bash), the wrong
//! answers a learner could plausibly give. Every mutant keeps the script's line count, so the
//! feature's line numbers stay true in every report.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use regex::Regex;
use tree_sitter::Node;

use super::bash::{self, descendants, named_children, text};

/// What a mutant changed, named as the README and the outcomes name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operator {
    /// A command (a line, a list element or a pipeline) deleted.
    DeleteCommand,
    /// A command whose output is saved to a file replaced by `echo` of a typed constant.
    TypedAnswer,
    /// A redirection dropped (`2>&1`, `> file`, …).
    DropRedirect,
    /// One stage of a pipeline dropped.
    DropStage,
    /// One scalar of inline YAML/JSON changed (a number ±1 or 0, one character of a string, a
    /// boolean flipped).
    Scalar,
    /// Two sibling values of inline YAML swapped.
    SwapValues,
    /// One list item of inline YAML/JSON dropped.
    DropItem,
    /// One key of inline YAML dropped.
    DropKey,
    /// A target argument changed: a namespace, a file, a context, a resource name.
    Target,
}

impl Operator {
    pub fn name(self) -> &'static str {
        match self {
            Operator::DeleteCommand => "delete-command",
            Operator::TypedAnswer => "typed-answer",
            Operator::DropRedirect => "drop-redirect",
            Operator::DropStage => "drop-stage",
            Operator::Scalar => "scalar",
            Operator::SwapValues => "swap-values",
            Operator::DropItem => "drop-item",
            Operator::DropKey => "drop-key",
            Operator::Target => "target",
        }
    }
}

/// One learner script of a lab step, where it is in the feature file.
#[derive(Clone, Debug)]
pub struct StepScript {
    /// The step's number in the lab and its Scenario's name and line.
    pub index: usize,
    pub name: String,
    pub scenario_line: usize,
    /// The feature line of the script's first line.
    pub first_line: usize,
    pub script: String,
}

/// One mutant: a step's script with one change.
#[derive(Clone, Debug)]
pub struct Mutant {
    /// Stable while the step's name, the change and the text it changes stay the same.
    pub id: String,
    pub operator: Operator,
    pub step: usize,
    pub step_name: String,
    pub scenario_line: usize,
    /// The feature lines the change spans.
    pub lines: (usize, usize),
    /// Those lines before and after the change.
    pub before: Vec<String>,
    pub after: Vec<String>,
    /// The whole mutated script (same number of lines as the original).
    pub script: String,
    /// Which script of the step (its first feature line) the mutant replaces.
    pub script_line: usize,
}

impl Mutant {
    /// One line: what changed, where.
    pub fn describe(&self) -> String {
        let before = self
            .before
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ⏎ ");
        let after = self
            .after
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ⏎ ");
        let short = |s: &str| {
            if s.chars().count() > 90 {
                format!("{}…", s.chars().take(90).collect::<String>())
            } else {
                s.to_owned()
            }
        };
        format!(
            "{} `{}` → `{}`",
            self.operator.name(),
            short(&before),
            short(&after)
        )
    }
}

/// What the reference run left, for typed answers: the first line of each file a command
/// wrote, by absolute path, and whether it was the file's only line.
pub type Answers = HashMap<PathBuf, (String, bool)>;

/// The placeholder of a typed answer when no reference run is at hand (`--list`).
pub const UNKNOWN_ANSWER: &str = "<first line of the reference output>";

/// An edit of a script: replace `range` with `with`.
struct Edit {
    op: Operator,
    range: std::ops::Range<usize>,
    with: String,
}

/// Every mutant of a lab's step scripts. `answers` comes from the reference run (`None` lists
/// typed answers with a placeholder). `paths` are files the lab names, for `-f` targets.
pub fn mutants(steps: &[StepScript], answers: Option<&Answers>) -> Vec<Mutant> {
    let paths = lab_paths(steps);
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for step in steps {
        let Some(tree) = bash::parse(&step.script) else {
            continue;
        };
        let src = step.script.as_str();
        let mut edits = Vec::new();
        let root = tree.root_node();
        for stmt in statements(root) {
            edits.push(Edit {
                op: Operator::DeleteCommand,
                range: stmt.byte_range(),
                with: ":".to_owned(),
            });
            typed_answer(stmt, src, answers, &mut edits);
        }
        for node in descendants(root) {
            match node.kind() {
                "pipeline" => drop_stages(node, &mut edits),
                "file_redirect" => edits.push(Edit {
                    op: Operator::DropRedirect,
                    range: with_leading_space(src, node.byte_range()),
                    with: String::new(),
                }),
                "heredoc_body" => yaml_edits(node.start_byte(), text(node, src), &mut edits),
                "raw_string" => inline_json(node, src, &mut edits),
                "command" => targets(node, src, &paths, &mut edits),
                _ => {}
            }
        }
        for edit in edits {
            if let Some(m) = apply(step, edit)
                && seen.insert(m.id.clone())
            {
                out.push(m);
            }
        }
    }
    out
}

/// The statements a learner could leave out: top-level commands and the elements of `&&`/`||`
/// lists.
fn statements(root: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    for n in named_children(root) {
        match n.kind() {
            "comment" => {}
            "list" => {
                out.push(n);
                out.extend(
                    named_children(n)
                        .into_iter()
                        .filter(|c| c.kind() != "comment"),
                );
            }
            _ => out.push(n),
        }
    }
    out
}

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

fn typed_answer(stmt: Node<'_>, src: &str, answers: Option<&Answers>, edits: &mut Vec<Edit>) {
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

fn drop_stages(pipeline: Node<'_>, edits: &mut Vec<Edit>) {
    let stages: Vec<Node<'_>> = named_children(pipeline)
        .into_iter()
        .filter(|n| n.kind() != "comment")
        .collect();
    if stages.len() < 2 {
        return;
    }
    for i in 0..stages.len() {
        let range = if i == 0 {
            stages[0].start_byte()..stages[1].start_byte()
        } else {
            stages[i - 1].end_byte()..stages[i].end_byte()
        };
        edits.push(Edit {
            op: Operator::DropStage,
            range,
            with: String::new(),
        });
    }
}

/// Changes a target argument of kubectl and istioctl: a namespace, a file, a context, the name
/// of the resource a verb acts on.
fn targets(command: Node<'_>, src: &str, paths: &[String], edits: &mut Vec<Edit>) {
    let Some(name) = command.child_by_field_name("name") else {
        return;
    };
    let program = text(name, src);
    if !matches!(program, "kubectl" | "istioctl") {
        return;
    }
    let args: Vec<Node<'_>> = named_children(command)
        .into_iter()
        .filter(|n| n.id() != name.id() && n.kind() != "file_redirect")
        .collect();
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

fn other_namespace(ns: &str) -> String {
    if ns == "default" {
        "kube-system".to_owned()
    } else {
        "default".to_owned()
    }
}

/// Line-based edits of YAML (or JSON lines) in a heredoc body starting at byte `base`.
fn yaml_edits(base: usize, body: &str, edits: &mut Vec<Edit>) {
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
    let indent = |l: &str| l.len() - l.trim_start().len();
    // (key, indent) → the value ranges of those keys, for swaps.
    type Values = Vec<(std::ops::Range<usize>, String)>;
    let mut siblings: std::collections::BTreeMap<(String, usize), Values> =
        std::collections::BTreeMap::new();
    for (i, (start, line)) in lines.iter().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let key_of = |l: &str| {
            l.trim_start()
                .trim_start_matches("- ")
                .split(':')
                .next()
                .unwrap_or_default()
                .trim_matches('"')
                .to_owned()
        };
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
        // The block a line opens: the following lines indented deeper.
        let own = indent(line);
        let is_item = line.trim_start().starts_with("- ");
        let end = lines[i + 1..]
            .iter()
            .position(|(_, l)| !l.trim().is_empty() && indent(l) <= own)
            .map_or(lines.len(), |p| i + 1 + p);
        let block_end = lines.get(end).map_or(base + body.len(), |(s, _)| *s);
        let range = *start..block_end;
        let removed = body[range.start - base..range.end - base]
            .matches('\n')
            .count();
        let blank = "\n".repeat(removed);
        if is_item {
            edits.push(Edit {
                op: Operator::DropItem,
                range,
                with: blank,
            });
        } else if line.contains(':')
            && !matches!(
                key_of(line).as_str(),
                "apiVersion" | "kind" | "metadata" | "name"
            )
        {
            edits.push(Edit {
                op: Operator::DropKey,
                range,
                with: blank,
            });
        }
    }
    for values in siblings.values() {
        for pair in values.windows(2) {
            let ((r1, v1), (r2, v2)) = (&pair[0], &pair[1]);
            if v1 == v2 {
                continue;
            }
            // One edit spanning both values, rewriting the text between them unchanged.
            let between = &body[r1.end - base..r2.start - base];
            edits.push(Edit {
                op: Operator::SwapValues,
                range: r1.start..r2.end,
                with: format!("{v2}{between}{v1}"),
            });
        }
    }
}

/// Scalar edits inside a single-quoted JSON string (`echo '{"a": 1}'`): values changed, items
/// of arrays of scalars dropped.
fn inline_json(node: Node<'_>, src: &str, edits: &mut Vec<Edit>) {
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
fn scalar_changes(value: &str) -> Vec<String> {
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

fn unquote(s: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    s.to_owned()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn with_leading_space(src: &str, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let before = &src[..r.start];
    let spaces = before.len() - before.trim_end_matches([' ', '\t']).len();
    r.start - spaces..r.end
}

/// The absolute file paths a lab's scripts name (after `-f` and in redirections).
fn lab_paths(steps: &[StepScript]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for step in steps {
        let Some(tree) = bash::parse(&step.script) else {
            continue;
        };
        for n in descendants(tree.root_node()) {
            if n.kind() == "word" || n.kind() == "string" || n.kind() == "raw_string" {
                let w = unquote(text(n, &step.script));
                if w.starts_with('/') && w.contains('.') && !w.contains(' ') {
                    out.insert(w);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Applies an edit, keeping the line count: a replacement with fewer lines is padded.
fn apply(step: &StepScript, edit: Edit) -> Option<Mutant> {
    let src = &step.script;
    let Edit { op, range, with } = edit;
    let original = src.get(range.clone())?;
    if original == with {
        return None;
    }
    let (old_lines, new_lines) = (original.matches('\n').count(), with.matches('\n').count());
    if new_lines > old_lines {
        return None;
    }
    let with = format!("{with}{}", "\n".repeat(old_lines - new_lines));
    let script = format!("{}{with}{}", &src[..range.start], &src[range.end..]);
    let first = src[..range.start].matches('\n').count();
    // A change that ends with a newline ends on the line before the next one.
    let last = first + original.trim_end_matches('\n').matches('\n').count();
    let slice = |s: &str| -> Vec<String> {
        s.lines()
            .skip(first)
            .take(last - first + 1)
            .map(str::to_owned)
            .collect()
    };
    let (before, after) = (slice(src), slice(&script));
    let id = {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        // A typed answer's constant comes from the reference run: it is not part of the identity.
        let change = if op == Operator::TypedAnswer {
            ""
        } else {
            with.as_str()
        };
        for part in [step.name.as_str(), op.name(), original, change] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        h.update(range.start.to_le_bytes());
        let digest = h.finalize();
        digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
    };
    Some(Mutant {
        id,
        operator: op,
        step: step.index,
        step_name: step.name.clone(),
        scenario_line: step.scenario_line,
        lines: (step.first_line + first, step.first_line + last),
        before,
        after,
        script,
        script_line: step.first_line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(script: &str) -> StepScript {
        StepScript {
            index: 1,
            name: "one".into(),
            scenario_line: 3,
            first_line: 6,
            script: script.into(),
        }
    }

    fn of(ms: &[Mutant], op: Operator) -> Vec<String> {
        ms.iter()
            .filter(|m| m.operator == op)
            .map(|m| m.after.join("\n"))
            .collect()
    }

    #[test]
    fn each_operator_makes_its_wrong_answers() {
        let s = step(
            "kubectl get ns -n mesh-lab -o json | jq '.items' > /root/a.json 2>&1\ncat > /root/b.yaml <<'EOF'\n- name: v1\n  weight: 90\n- name: v2\n  weight: 10\nEOF\nkubectl label namespace legacy istio-injection-\n",
        );
        let mut answers = Answers::new();
        answers.insert("/root/a.json".into(), ("{".into(), false));
        assert_eq!(
            saved_files(std::slice::from_ref(&s)),
            [PathBuf::from("/root/a.json")]
        );
        let ms = mutants(&[s], Some(&answers));
        assert!(of(&ms, Operator::DeleteCommand).iter().any(|a| a == ":"));
        assert!(
            of(&ms, Operator::TypedAnswer)
                .iter()
                .any(|a| a == "echo '{' > /root/a.json")
        );
        assert!(
            of(&ms, Operator::DropRedirect)
                .iter()
                .any(|a| !a.contains("2>&1"))
        );
        assert!(
            of(&ms, Operator::DropStage)
                .iter()
                .any(|a| !a.contains("jq"))
        );
        assert!(
            of(&ms, Operator::Scalar)
                .iter()
                .any(|a| a.contains("weight: 91"))
        );
        assert!(
            of(&ms, Operator::Scalar)
                .iter()
                .any(|a| a.contains("name: v2"))
        );
        let swaps = of(&ms, Operator::SwapValues);
        assert!(
            swaps
                .iter()
                .any(|a| a.contains("weight: 10\n- name: v2\n  weight: 90")),
            "{swaps:?}"
        );
        assert!(
            of(&ms, Operator::DropItem)
                .iter()
                .any(|a| !a.contains("v1"))
        );
        let targets = of(&ms, Operator::Target);
        assert!(
            targets.iter().any(|a| a.contains("-n default")),
            "{targets:?}"
        );
        assert!(
            targets.iter().any(|a| a.contains("namespace legacz")),
            "{targets:?}"
        );
        for m in &ms {
            assert_eq!(
                m.script.lines().count(),
                8,
                "{} changed the line count:\n{}",
                m.describe(),
                m.script
            );
        }
    }

    #[test]
    fn inline_json_lists_lose_an_item() {
        let ms = mutants(
            &[step(
                "echo '{\"containers\": [\"shop\", \"log\"], \"count\": 2}' > /root/s.json\n",
            )],
            None,
        );
        let dropped = of(&ms, Operator::DropItem);
        assert!(
            dropped.iter().any(|a| a.contains("[\"log\"]")),
            "{dropped:?}"
        );
        assert!(
            of(&ms, Operator::Scalar)
                .iter()
                .any(|a| a.contains("\"count\": 3"))
        );
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = mutants(&[step("echo a > /root/x\necho b > /root/y\n")], None);
        let b = mutants(&[step("echo a > /root/x\necho b > /root/y\n")], None);
        let ids: BTreeSet<&String> = a.iter().map(|m| &m.id).collect();
        assert_eq!(ids.len(), a.len());
        assert_eq!(
            a.iter().map(|m| &m.id).collect::<Vec<_>>(),
            b.iter().map(|m| &m.id).collect::<Vec<_>>()
        );
    }
}
