//! Cucumber JSON (`cucumber.json`): the format CI plugins for Cucumber read — an array of
//! features, each with its scenarios ("elements") and their Gherkin steps, every step with a
//! result (`passed`, `failed` with an `error_message`, `skipped`) and a duration in nanoseconds.
//!
//! One feature per cell, named `<lab> [istio X]`; one element per step the cell ran, named
//! `<lab> › <step> [istio X]` as in JUnit. Each Gherkin step carries the verdict recorded when
//! it ran ([`super::verdicts`], as in the Messages). The steps come from the feature file, read
//! again when the report is written.

use cucumber::gherkin;
use serde_json::{Value, json};

use super::{CellRecord, Record, StepRecord, gherkin_steps, test_name, verdicts};
use crate::model::Verdict;

/// The whole run as Cucumber JSON.
pub fn render(record: &Record) -> String {
    let features: Vec<Value> = record.cells.values().map(feature).collect();
    serde_json::to_string_pretty(&features).unwrap_or_else(|_| "[]".to_owned())
}

fn feature(c: &CellRecord) -> Value {
    let path = c.lab.origin();
    let parsed = c.lab.feature();
    let label = if c.id.label == "-" {
        String::new()
    } else {
        format!(" [istio {}]", c.id.label)
    };
    let elements: Vec<Value> = c
        .steps
        .iter()
        .map(|s| element(c, s, parsed.as_deref()))
        .collect();
    json!({
        "uri": path.display().to_string(),
        "id": c.id.slug(),
        "keyword": parsed.as_ref().map_or("Feature", |f| f.keyword.as_str()),
        "name": format!("{}{label}", c.lab.name),
        "description": "",
        "line": parsed.as_ref().map_or(1, |f| f.position.line),
        "tags": parsed.as_ref().map_or_else(Vec::new, |f| tags(&f.tags, f.position.line)),
        "elements": elements,
    })
}

fn tags(names: &[String], line: usize) -> Vec<Value> {
    names
        .iter()
        .map(|t| json!({"name": format!("@{}", t.trim_start_matches('@')), "line": line.saturating_sub(1).max(1)}))
        .collect()
}

fn element(c: &CellRecord, s: &StepRecord, feature: Option<&gherkin::Feature>) -> Value {
    let found = feature.and_then(|f| gherkin_steps(f, s));
    let scenario = found.as_ref().map(|(sc, _)| *sc);
    let (failed_line, message) = match s.outcome.failure() {
        Some((line, fault)) => (Some(line), Some(fault.render())),
        None => (None, None),
    };
    let gherkin_steps = scenario.map_or(&[][..], |sc| sc.steps.as_slice());
    // Verdicts over the Background's steps too (a failure there skips the scenario's); only the
    // scenario's own steps are elements' steps.
    let all = found
        .as_ref()
        .map(|(_, all)| verdicts(s, all))
        .unwrap_or_default();
    let own = &all[all.len().saturating_sub(gherkin_steps.len())..];
    let mut steps = Vec::new();
    for (i, (st, verdict)) in gherkin_steps.iter().zip(own).enumerate() {
        let mut result = match verdict {
            Verdict::Passed => json!({"status": "passed", "duration": 0}),
            Verdict::Failed(fault) => {
                json!({"status": "failed", "duration": 0, "error_message": fault.render()})
            }
            Verdict::Skipped => json!({"status": "skipped", "duration": 0}),
        };
        if i == 0 && result["status"] != "skipped" {
            result["duration"] = json!(s.duration.as_nanos() as u64);
        }
        let mut step = json!({
            "keyword": st.keyword.clone(),
            "name": st.value.clone(),
            "line": st.position.line,
            "match": {"location": format!("{}:{}", c.lab.origin().display(), st.position.line)},
            "result": result,
        });
        if let Some(doc) = &st.docstring {
            step["doc_string"] =
                json!({"value": doc.trim_matches('\n'), "line": st.position.line + 1});
            // A mistake's list: how each listed check judged the wrong answer.
            let listed: Vec<String> = s
                .checks
                .iter()
                .filter(|k| k.listed && k.line > st.position.line)
                .map(|k| k.rejection(c.lab.lang))
                .collect();
            if !listed.is_empty() {
                step["output"] = json!(listed);
            }
        }
        steps.push(step);
    }
    // A failure outside the scenario's own steps (its Background, a harness error): on the
    // scenario line, so it is never lost.
    if let (Some(line), true) = (
        failed_line,
        !gherkin_steps
            .iter()
            .any(|st| Some(st.position.line) == failed_line),
    ) {
        steps.push(json!({
            "keyword": "Then ",
            "name": "the step's checks",
            "line": line,
            "match": {"location": format!("{}:{line}", c.lab.origin().display())},
            "result": {"status": "failed", "duration": 0, "error_message": message.unwrap_or_default()},
        }));
    }
    let keyword = scenario
        .as_ref()
        .map_or("Scenario", |sc| sc.keyword.as_str());
    json!({
        "id": format!("{};{}", c.id.slug(), s.step.line),
        "keyword": keyword,
        "type": "scenario",
        "name": test_name(c, s),
        "description": "",
        "line": s.step.line,
        "tags": tags(&s.step.tags, s.step.line),
        "steps": steps,
    })
}
