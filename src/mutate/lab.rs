//! Where a lab's learner scripts are in its feature file, and the feature file of a mutant: the
//! same text with one script replaced line for line, so every line number stays true.

use cucumber::gherkin;

use super::generate::{Mutant, StepScript};
use crate::lint::tags;

/// The learner scripts of the lab's steps (mistakes left out), steps `..=up_to` only.
pub fn scripts(text: &str, feature: &gherkin::Feature, up_to: Option<usize>) -> Vec<StepScript> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut index = 0;
    for sc in crate::lint::scenarios_in_order(feature) {
        if tags::has(&sc.tags, tags::MISTAKE) {
            continue;
        }
        index += 1;
        if up_to.is_some_and(|n| index > n) {
            break;
        }
        for step in &sc.steps {
            if step.ty != gherkin::StepType::When || step.docstring.is_none() {
                continue;
            }
            if let Some((first_line, script)) = docstring_at(&lines, step.position.line) {
                out.push(StepScript {
                    index,
                    name: sc.name.clone(),
                    scenario_line: sc.position.line,
                    first_line,
                    script,
                });
            }
        }
    }
    out
}

/// The docstring following the step at `line` (1-based): the feature line of its first content
/// line, and its text with the fence's indentation removed.
fn docstring_at(lines: &[&str], line: usize) -> Option<(usize, String)> {
    let fence_at = (line..lines.len()).find(|&i| {
        let t = lines[i].trim_start();
        t.starts_with("\"\"\"") || t.starts_with("```")
    })?;
    let fence_line = lines[fence_at];
    let indent = fence_line.len() - fence_line.trim_start().len();
    let fence = &fence_line.trim_start()[..3];
    let end = (fence_at + 1..lines.len()).find(|&i| lines[i].trim() == fence)?;
    let mut script = String::new();
    for l in &lines[fence_at + 1..end] {
        let strip = l.len() - l.trim_start().len();
        script.push_str(&l[strip.min(indent)..]);
        script.push('\n');
    }
    Some((fence_at + 2, script))
}

/// The feature text with the mutant's script in place of the original.
pub fn mutated_feature(text: &str, mutant: &Mutant) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let first = mutant.script_line - 1;
    let indent = lines
        .get(first.saturating_sub(1))
        .map_or(0, |fence| fence.len() - fence.trim_start().len());
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    for (i, new) in mutant.script.lines().enumerate() {
        if let Some(slot) = out.get_mut(first + i) {
            *slot = if new.is_empty() {
                String::new()
            } else {
                format!("{}{new}", " ".repeat(indent))
            };
        }
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB: &str = "Feature: x\n\n  Scenario: one\n    When the learner runs:\n      \"\"\"\n      echo a > /root/a\n        indented\n      \"\"\"\n    Then the file \"/root/a\" should exist\n";

    #[test]
    fn scripts_are_found_at_their_lines_and_mutants_keep_them() {
        let feature = gherkin::Feature::parse(LAB, gherkin::GherkinEnv::default()).expect("parses");
        let found = scripts(LAB, &feature, None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].first_line, 6);
        assert_eq!(found[0].script, "echo a > /root/a\n  indented\n");
        let docstring = feature.scenarios[0].steps[0]
            .docstring
            .clone()
            .unwrap_or_default();
        assert_eq!(docstring.trim(), found[0].script.trim());
        let mutants = super::super::generate::mutants(&found, None);
        let deleted = mutants
            .iter()
            .find(|m| m.after == [":"])
            .expect("a deletion");
        let text = mutated_feature(LAB, deleted);
        assert_eq!(text.lines().nth(5), Some("      :"));
        assert_eq!(text.lines().count(), LAB.lines().count());
    }
}
