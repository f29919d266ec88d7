//! Cucumber JSON (`cucumber.json`): the format CI plugins for Cucumber read — an array of
//! features, each with its scenarios ("elements") and their Gherkin steps, every step with a
//! result (`passed`, `failed` with an `error_message`, `skipped`) and a duration in nanoseconds.
//!
//! One feature per cell, named `<lab> [istio X]`; one element per step the cell ran, named
//! `<lab> › <step> [istio X]` as in JUnit. labcheck grades a scenario as a whole, so a failed
//! scenario's Gherkin steps before the failing line passed, the step at that line failed, and
//! the rest were skipped. The steps come from the feature file, read again when the report is
//! written.

use cucumber::gherkin;
use serde_json::{Value, json};

use super::{CellRecord, Record, StepRecord, test_name};
use crate::model::Outcome;

/// The whole run as Cucumber JSON.
pub fn render(record: &Record) -> String {
    let features: Vec<Value> = record.cells.values().map(feature).collect();
    serde_json::to_string_pretty(&features).unwrap_or_else(|_| "[]".to_owned())
}

fn feature(c: &CellRecord) -> Value {
    let path = c.lab.origin();
    let parsed = gherkin::Feature::parse_path(path, gherkin::GherkinEnv::default()).ok();
    let label = if c.id.label == "-" {
        String::new()
    } else {
        format!(" [istio {}]", c.id.label)
    };
    let elements: Vec<Value> = c
        .steps
        .iter()
        .map(|s| element(c, s, parsed.as_ref()))
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
    let scenario = feature.and_then(|f| {
        crate::lint::scenarios_in_order(f)
            .into_iter()
            .find(|sc| sc.position.line == s.step.line)
            .cloned()
    });
    let (failed_line, message) = match &s.outcome {
        Outcome::Failed { line, message } | Outcome::Error { line, message } => {
            (Some(*line), Some(message.as_str()))
        }
        _ => (None, None),
    };
    let mut state = match &s.outcome {
        Outcome::Passed | Outcome::Failed { .. } | Outcome::Error { .. } => "passed",
        Outcome::NotRun { .. } | Outcome::NotGraded { .. } => "skipped",
    };
    let gherkin_steps = scenario.as_ref().map_or(&[][..], |sc| sc.steps.as_slice());
    let mut steps = Vec::new();
    for (i, st) in gherkin_steps.iter().enumerate() {
        let mut result = json!({"status": state, "duration": 0});
        if failed_line == Some(st.position.line) {
            result = json!({"status": "failed", "duration": 0, "error_message": message.unwrap_or_default()});
            state = "skipped";
        }
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
