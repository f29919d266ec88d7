//! Cucumber Messages (`messages.ndjson`): one JSON envelope per line, the stream that
//! `@cucumber/html-formatter` and other Cucumber tools read — meta, each feature file's source and
//! Gherkin document, then per cell a pickle and a test case for every step it ran, with a result
//! for every Gherkin step, and the run's end.
//!
//! Pickles are per cell (named `<lab> › <step> [istio X]`, as in JUnit), so the versions of a
//! matrix stay apart. labcheck keeps no wall-clock time per Gherkin step: timestamps are laid out
//! from the run's end and each scenario's duration, in order.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cucumber::gherkin;
use serde_json::{Value, json};

use super::{CellRecord, Record, StepRecord, gherkin_steps, test_name, verdicts};
use crate::model::{Lang, Verdict};

/// The protocol version these messages follow (the schema the tests validate against).
pub const PROTOCOL_VERSION: &str = "34.2.1";

/// The whole run as NDJSON, one envelope per line.
pub fn render(record: &Record) -> String {
    let mut out = Vec::new();
    let end = SystemTime::now();
    let start = end.checked_sub(record.duration).unwrap_or(end);
    out.push(json!({"meta": {
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": {"name": "labcheck", "version": env!("CARGO_PKG_VERSION")},
        "runtime": {"name": "rust"},
        "os": {"name": std::env::consts::OS},
        "cpu": {"name": std::env::consts::ARCH},
    }}));
    // Each feature file once: its source and its document.
    let mut documents: BTreeMap<String, Option<std::sync::Arc<gherkin::Feature>>> = BTreeMap::new();
    for c in record.cells.values() {
        let uri = c.lab.origin().display().to_string();
        if documents.contains_key(&uri) {
            continue;
        }
        let feature = c.lab.feature();
        out.push(json!({"source": {
            "uri": uri,
            "data": c.lab.text,
            "mediaType": "text/x.cucumber.gherkin+plain",
        }}));
        if let Some(f) = &feature {
            out.push(json!({"gherkinDocument": document(&uri, f, c.lab.lang)}));
        }
        documents.insert(uri, feature);
    }
    out.push(json!({"testRunStarted": {"timestamp": timestamp(start)}}));
    let mut clock = start;
    for c in record.cells.values() {
        let uri = c.lab.origin().display().to_string();
        let Some(Some(feature)) = documents.get(&uri) else {
            continue;
        };
        for s in &c.steps {
            cell_step(&mut out, &uri, feature, c, s, &mut clock);
        }
    }
    let success = record.passed();
    out.push(
        json!({"testRunFinished": {"success": success, "timestamp": timestamp(end.max(clock))}}),
    );
    out.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn timestamp(t: SystemTime) -> Value {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    json!({"seconds": d.as_secs(), "nanos": d.subsec_nanos()})
}

fn duration(d: Duration) -> Value {
    json!({"seconds": d.as_secs(), "nanos": d.subsec_nanos()})
}

fn location(p: gherkin::LineCol) -> Value {
    json!({"line": p.line, "column": p.col})
}

fn node_id(uri: &str, line: usize) -> String {
    format!("{uri}:{line}")
}

fn tags(uri: &str, names: &[String], line: usize) -> Vec<Value> {
    names
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "location": {"line": line.saturating_sub(1).max(1)},
                "name": format!("@{}", t.trim_start_matches('@')),
                "id": format!("{}#tag{i}", node_id(uri, line)),
            })
        })
        .collect()
}

fn step(uri: &str, s: &gherkin::Step) -> Value {
    let mut v = json!({
        "location": location(s.position),
        "keyword": s.keyword,
        "text": s.value,
        "id": node_id(uri, s.position.line),
    });
    if let Some(doc) = &s.docstring {
        v["docString"] = json!({
            "location": {"line": s.position.line + 1},
            "content": doc.trim_matches('\n'),
            "delimiter": "\"\"\"",
        });
    }
    v
}

fn scenario(uri: &str, s: &gherkin::Scenario) -> Value {
    json!({"scenario": {
        "location": location(s.position),
        "tags": tags(uri, &s.tags, s.position.line),
        "keyword": s.keyword,
        "name": s.name,
        "description": s.description.clone().unwrap_or_default(),
        "steps": s.steps.iter().map(|st| step(uri, st)).collect::<Vec<_>>(),
        "examples": [],
        "id": node_id(uri, s.position.line),
    }})
}

fn background(uri: &str, b: &gherkin::Background) -> Value {
    json!({"background": {
        "location": location(b.position),
        "keyword": b.keyword,
        "name": b.name,
        "description": b.description.clone().unwrap_or_default(),
        "steps": b.steps.iter().map(|st| step(uri, st)).collect::<Vec<_>>(),
        "id": node_id(uri, b.position.line),
    }})
}

fn document(uri: &str, f: &gherkin::Feature, lang: Lang) -> Value {
    let mut children: Vec<Value> = f.background.iter().map(|b| background(uri, b)).collect();
    children.extend(f.scenarios.iter().map(|s| scenario(uri, s)));
    for r in &f.rules {
        let mut rule_children: Vec<Value> =
            r.background.iter().map(|b| background(uri, b)).collect();
        rule_children.extend(r.scenarios.iter().map(|s| scenario(uri, s)));
        children.push(json!({"rule": {
            "location": location(r.position),
            "tags": tags(uri, &r.tags, r.position.line),
            "keyword": r.keyword,
            "name": r.name,
            "description": r.description.clone().unwrap_or_default(),
            "children": rule_children,
            "id": node_id(uri, r.position.line),
        }}));
    }
    json!({
        "uri": uri,
        "feature": {
            "location": location(f.position),
            "tags": tags(uri, &f.tags, f.position.line),
            "language": lang.code(),
            "keyword": f.keyword,
            "name": f.name,
            "description": f.description.clone().unwrap_or_default(),
            "children": children,
        },
        "comments": [],
    })
}

/// The pickle of one step of one cell: its Gherkin steps as written, its tags.
fn pickle(
    uri: &str,
    pickle_id: &str,
    c: &CellRecord,
    s: &StepRecord,
    sc: &gherkin::Scenario,
    gherkin_steps: &[&gherkin::Step],
) -> Value {
    let pickle_steps: Vec<Value> = gherkin_steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let mut v = json!({
                "astNodeIds": [node_id(uri, st.position.line)],
                "id": format!("{pickle_id};p{i}"),
                "text": st.value,
            });
            if let Some(doc) = &st.docstring {
                v["argument"] = json!({"docString": {"content": doc.trim_matches('\n')}});
            }
            v
        })
        .collect();
    json!({"pickle": {
        "id": pickle_id,
        "uri": uri,
        "name": test_name(c, s),
        "language": c.lab.lang.code(),
        "steps": pickle_steps,
        "tags": s.step.tags.iter().map(|t| json!({
            "name": format!("@{}", t.trim_start_matches('@')),
            "astNodeId": node_id(uri, sc.position.line),
        })).collect::<Vec<_>>(),
        "astNodeIds": [node_id(uri, sc.position.line)],
    }})
}

/// The pickle, test case and results of one step of one cell.
fn cell_step(
    out: &mut Vec<Value>,
    uri: &str,
    feature: &gherkin::Feature,
    c: &CellRecord,
    s: &StepRecord,
    clock: &mut SystemTime,
) {
    let Some((sc, gherkin_steps)) = gherkin_steps(feature, s) else {
        return;
    };
    let pickle_id = format!("{};{}", c.id.slug(), sc.position.line);
    out.push(pickle(uri, &pickle_id, c, s, sc, &gherkin_steps));
    let case_id = format!("{pickle_id};case");
    let test_steps: Vec<Value> = (0..gherkin_steps.len())
        .map(|i| {
            json!({
                "id": format!("{pickle_id};t{i}"),
                "pickleStepId": format!("{pickle_id};p{i}"),
                "stepDefinitionIds": [],
                "stepMatchArgumentsLists": [],
            })
        })
        .collect();
    out.push(json!({"testCase": {"id": case_id, "pickleId": pickle_id, "testSteps": test_steps}}));
    let started_id = format!("{pickle_id};started");
    out.push(json!({"testCaseStarted": {
        "attempt": 0,
        "id": started_id,
        "testCaseId": case_id,
        "timestamp": timestamp(*clock),
    }}));
    let share = s.duration / (gherkin_steps.len().max(1) as u32);
    for (i, verdict) in verdicts(s, &gherkin_steps).into_iter().enumerate() {
        let step_id = format!("{pickle_id};t{i}");
        out.push(json!({"testStepStarted": {
            "testCaseStartedId": started_id,
            "testStepId": step_id,
            "timestamp": timestamp(*clock),
        }}));
        let (mut result, took) = match verdict {
            Verdict::Passed => (json!({"status": "PASSED"}), share),
            Verdict::Failed(fault) => (
                json!({"status": "FAILED", "message": fault.render()}),
                share,
            ),
            Verdict::Skipped => (json!({"status": "SKIPPED"}), Duration::ZERO),
        };
        *clock += took;
        result["duration"] = duration(took);
        out.push(json!({"testStepFinished": {
            "testCaseStartedId": started_id,
            "testStepId": step_id,
            "testStepResult": result,
            "timestamp": timestamp(*clock),
        }}));
    }
    out.push(json!({"testCaseFinished": {
        "testCaseStartedId": started_id,
        "timestamp": timestamp(*clock),
        "willBeRetried": false,
    }}));
}
