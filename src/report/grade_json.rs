//! `labcheck grade --format json`: a grade as data, for a lab platform's "check" button. One
//! object per graded lab (see `schemas/grade.schema.json`, which a test validates every answer
//! against): each step's verdict with the learner-facing message in the lab's language and the
//! step's hints, and each check's own verdict.

use serde_json::{Value, json};

use super::{CellRecord, Record, StepRecord};
use crate::model::{Outcome, Verdict};
use crate::steps::lab::CompiledLab;

/// The grade of every cell of `record`, as one JSON document.
pub fn render(record: &Record) -> String {
    let labs: Vec<Value> = record.cells.values().map(lab).collect();
    let doc = match labs.as_slice() {
        [one] => one.clone(),
        _ => json!({ "labs": labs }),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_owned())
}

fn lab(c: &CellRecord) -> Value {
    let mut steps: Vec<&StepRecord> = c.steps.iter().collect();
    steps.sort_by_key(|s| s.step.index);
    let feature = c.lab.feature();
    // A record read back holds the lab's text, not its compiled steps: compiled here, once.
    let compiled = feature.as_deref().map(|f| CompiledLab::new(&c.lab.text, f));
    let passed = steps.iter().filter(|s| s.outcome.is_pass()).count();
    json!({
        "lab": c.lab.origin().display().to_string(),
        "name": c.lab.name,
        "lang": c.lab.lang.code(),
        "passed": passed,
        "total": steps.len(),
        "steps": steps
            .iter()
            .map(|s| step(c, s, feature.as_deref().zip(compiled.as_ref())))
            .collect::<Vec<_>>(),
    })
}

fn step(
    c: &CellRecord,
    s: &StepRecord,
    lab: Option<(&cucumber::gherkin::Feature, &CompiledLab)>,
) -> Value {
    let (verdict, message, line) = match &s.outcome {
        Outcome::Passed => ("passed", None, None),
        Outcome::Failed { line, fault } => ("failed", Some(fault.render()), Some(*line)),
        Outcome::Error { line, fault } => ("error", Some(fault.render()), Some(*line)),
        Outcome::NotRun { reason } => ("not run", Some(reason.clone()), None),
        Outcome::NotGraded { reason } => ("not graded", Some(reason.clone()), None),
    };
    let hints = lab
        .map(|(f, _)| crate::render::hints(&c.lab.text, f, s.step.line))
        .unwrap_or_default();
    // The step's checks: its Then steps (not the preparations nor the learner's commands); those
    // on the learner's command are not graded (grading runs no command).
    let checks_at: Vec<(usize, bool)> = lab
        .and_then(|(f, compiled)| {
            let sc = f
                .scenarios
                .iter()
                .chain(f.rules.iter().flat_map(|r| &r.scenarios))
                .find(|sc| sc.position.line == s.step.line)?;
            let then = sc
                .steps
                .iter()
                .filter(|st| st.ty == cucumber::gherkin::StepType::Then);
            Some(
                then.map(|st| (st.position.line, compiled.about_command(st.position.line)))
                    .collect(),
            )
        })
        .unwrap_or_default();
    let checks: Vec<Value> = s
        .checks
        .iter()
        .filter_map(|k| {
            let (_, ungraded) = checks_at
                .iter()
                .find(|(line, _)| *line == k.line && !k.listed)?;
            Some((k, *ungraded))
        })
        .map(|(k, ungraded)| {
            let (verdict, message) = match &k.verdict {
                Verdict::Passed if ungraded => ("not graded", None),
                Verdict::Passed => ("passed", None),
                Verdict::Failed(fault) => ("failed", Some(fault.render())),
                Verdict::Skipped => ("skipped", None),
            };
            json!({ "line": k.line, "text": k.text, "verdict": verdict, "message": message })
        })
        .collect();
    json!({
        "index": s.step.index,
        "name": s.step.name,
        "line": s.step.line,
        "verdict": verdict,
        "message": message,
        "failed_line": line,
        "hints": hints,
        "checks": checks,
    })
}
