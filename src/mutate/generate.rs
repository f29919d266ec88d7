//! Mutation operators: from one step's learner script (parsed with tree-sitter-bash), the wrong
//! answers a learner could plausibly give. Every mutant keeps the script's line count, so the
//! feature's line numbers stay true in every report.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::arguments::arguments;
use super::bash::{self, descendants, named_children, text};
use super::jq::jq_program;
use super::targets::targets;
use super::typed::typed_answer;
pub use super::typed::{Answers, UNKNOWN_ANSWER, saved_files};
pub use super::values::one_char;
use super::values::{inline_json, unquote, yaml_edits};

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
    /// A key of inline YAML/JSON changed (one character, or a number ±1).
    MapKey,
    /// A number in a command's arguments changed (`--port 8080`).
    Argument,
    /// A flag of a command dropped (`-A`, `--overwrite`, `--dry-run=client`).
    DropFlag,
    /// A stage of a jq program's top-level pipe dropped.
    JqStage,
    /// A jq `select` negated or dropped.
    JqSelect,
    /// A key or an index of a jq program changed.
    JqKey,
    /// A literal of a jq program changed.
    JqLiteral,
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
            Operator::MapKey => "map-key",
            Operator::Argument => "argument",
            Operator::DropFlag => "drop-flag",
            Operator::JqStage => "jq-stage",
            Operator::JqSelect => "jq-select",
            Operator::JqKey => "jq-key",
            Operator::JqLiteral => "jq-literal",
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
        let (before, after) = around_change(&before, &after);
        format!("{} `{before}` → `{after}`", self.operator.name())
    }
}

/// Two texts shortened to what tells them apart: up to 90 characters each, a long line cut to the
/// part around its first difference (with `…` where text is left out).
fn around_change(before: &str, after: &str) -> (String, String) {
    const WIDTH: usize = 90;
    let (b, a): (Vec<char>, Vec<char>) = (before.chars().collect(), after.chars().collect());
    let common = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let start = if b.len().max(a.len()) > WIDTH {
        common.saturating_sub(30)
    } else {
        0
    };
    let cut = |s: &[char]| {
        let end = (start + WIDTH).min(s.len());
        let mut out: String = s[start.min(end)..end].iter().collect();
        if start > 0 {
            out.insert(0, '…');
        }
        if end < s.len() {
            out.push('…');
        }
        out
    };
    (cut(&b), cut(&a))
}

/// An edit of a script: replace `range` with `with`.
pub(super) struct Edit {
    pub(super) op: Operator,
    pub(super) range: std::ops::Range<usize>,
    pub(super) with: String,
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
                "raw_string" if !is_jq_argument(node, src) => inline_json(node, src, &mut edits),
                "command" => {
                    targets(node, src, &paths, &mut edits);
                    arguments(node, src, &mut edits);
                    jq_program(node, src, &mut edits);
                }
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

/// Whether a quoted word is an argument of jq (its program, or a value jq reads as text): not
/// inline JSON to mutate as such.
fn is_jq_argument(node: Node<'_>, src: &str) -> bool {
    node.parent()
        .filter(|p| p.kind() == "command")
        .and_then(|p| p.child_by_field_name("name"))
        .is_some_and(|n| text(n, src) == "jq")
}

/// The statements a learner could leave out: top-level commands and the elements of `&&`/`||`
/// lists.
pub(super) fn statements(root: Node<'_>) -> Vec<Node<'_>> {
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
        // Which occurrence of the changed text in the script, not its byte offset: editing
        // another command of the script leaves the id (and the author's marks) as they were.
        let place = if original.is_empty() {
            range.start
        } else {
            src[..range.start].match_indices(original).count()
        };
        h.update(place.to_le_bytes());
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
    use std::path::PathBuf;

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
    fn keys_arguments_flags_and_jq_programs_change() {
        let ms = mutants(
            &[step(
                "cat > /root/pa.yaml <<'EOF'\napiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: web\n  labels:\n    team: shop\nspec:\n  portLevelMtls: {8081: {mode: STRICT}}\nEOF\necho '{\"count\": 2}' > /root/answer.json\nkubectl -n shop port-forward svc/web 8080 --address=0.0.0.0 -A\nkubectl get pods -o json | jq -r '.items[] | select(.status.phase == \"Running\") | .metadata.name' > /root/names.txt\n",
            )],
            None,
        );
        let keys = of(&ms, Operator::MapKey);
        // A manifest's data keys and numeric keys change; its schema's fields do not.
        assert!(keys.iter().any(|a| a == "    tean: shop"), "{keys:?}");
        assert!(keys.iter().any(|a| a.contains("{8082: {mode")), "{keys:?}");
        assert!(
            !keys
                .iter()
                .any(|a| a.contains("spec") || a.contains("modf")),
            "{keys:?}"
        );
        // An answer file's keys are the learner's data.
        assert!(keys.iter().any(|a| a.contains("\"counu\": 2")), "{keys:?}");
        let args = of(&ms, Operator::Argument);
        assert!(args.iter().any(|a| a.contains("svc/web 8081 ")), "{args:?}");
        let flags = of(&ms, Operator::DropFlag);
        assert!(flags.iter().any(|a| a.ends_with("8080 -A")), "{flags:?}");
        assert!(flags.iter().any(|a| a.ends_with("0.0.0.0")), "{flags:?}");
        assert!(
            flags.iter().any(|a| a.contains("| jq '.items")),
            "{flags:?}"
        );
        assert!(
            of(&ms, Operator::JqSelect)
                .iter()
                .any(|a| a.contains("select((.status.phase == \"Running\") | not)"))
        );
        assert!(
            of(&ms, Operator::JqLiteral)
                .iter()
                .any(|a| a.contains("\"Runninh\""))
        );
        assert!(
            of(&ms, Operator::JqStage)
                .iter()
                .any(|a| a.contains("jq -r '.items[] |  | .metadata.name'")
                    || a.contains("jq -r '.items[] | .metadata.name'")),
            "{:?}",
            of(&ms, Operator::JqStage)
        );
        assert!(
            of(&ms, Operator::JqKey)
                .iter()
                .any(|a| a.contains(".metadata.namf"))
        );
    }

    #[test]
    fn ids_survive_an_edit_of_another_command() {
        let ids = |script: &str| -> BTreeSet<String> {
            mutants(&[step(script)], None)
                .into_iter()
                .filter(|m| m.before.iter().any(|l| l.contains("/root/y")))
                .map(|m| m.id)
                .collect()
        };
        let before = ids("echo a > /root/x\necho b > /root/y\n");
        let after = ids("echo aaa  >  /root/x\necho b > /root/y\n");
        assert!(!before.is_empty());
        assert_eq!(before, after);
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
