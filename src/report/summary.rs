//! The matrix summary: per lab, rows are its steps and columns the matrix labels (Istio
//! versions), each entry pass/fail, time and the first failing check with its file:line; the
//! toolchain of each column underneath. Rendered as Markdown (printed at the end) and as a
//! self-contained HTML file.

use std::collections::BTreeSet;

use super::{CellRecord, Record, StepRecord};
use crate::model::{Lab, LabStep, Outcome, StepKind};

/// One lab's matrix.
struct Matrix<'a> {
    lab: &'a Lab,
    labels: Vec<String>,
    cells: Vec<&'a CellRecord>,
}

impl<'a> Matrix<'a> {
    fn of(record: &'a Record) -> Vec<Matrix<'a>> {
        let mut labs: Vec<&Lab> = Vec::new();
        for c in record.cells.values() {
            if !labs.iter().any(|l| l.path == c.lab.path) {
                labs.push(&c.lab);
            }
        }
        labs.into_iter()
            .map(|lab| {
                let cells: Vec<&CellRecord> = record
                    .cells
                    .values()
                    .filter(|c| c.lab.path == lab.path)
                    .collect();
                let labels: BTreeSet<String> = cells.iter().map(|c| c.id.label.clone()).collect();
                Matrix {
                    lab,
                    labels: labels.into_iter().rev().collect(),
                    cells,
                }
            })
            .collect()
    }

    fn entry(&self, step: &LabStep, label: &str) -> Option<&'a StepRecord> {
        let mistake = (step.kind == StepKind::Mistake).then_some(step.line);
        self.cells
            .iter()
            .find(|c| c.id.label == label && c.id.mistake == mistake)
            .and_then(|c| c.steps.iter().find(|s| s.step.line == step.line))
    }

    fn column(&self, label: &str) -> Option<&'a CellRecord> {
        self.cells
            .iter()
            .copied()
            .find(|c| c.id.label == label && c.id.mistake.is_none())
    }
}

fn step_title(step: &LabStep) -> String {
    match step.kind {
        StepKind::Step => format!("{}. {}", step.index, step.name),
        StepKind::Mistake => format!("⚠ {} (→ {})", step.name, step.index),
    }
}

fn label_title(label: &str) -> String {
    if label == "-" {
        "result".to_owned()
    } else {
        format!("istio {label}")
    }
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or_default()
}

/// The Markdown summary.
pub fn markdown(record: &Record) -> String {
    let mut out = String::from("# labcheck summary\n");
    if record.interrupted {
        out.push_str("\n**The run was interrupted.**\n");
    }
    for m in Matrix::of(record) {
        out.push_str(&format!(
            "\n## {} (`{}`)\n\n| step |",
            m.lab.name,
            m.lab.origin().display()
        ));
        for l in &m.labels {
            out.push_str(&format!(" {} |", label_title(l)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(m.labels.len()));
        out.push('\n');
        for step in &m.lab.steps {
            out.push_str(&format!("| {} |", step_title(step).replace('|', "\\|")));
            for l in &m.labels {
                let text = match m.entry(step, l) {
                    None => "·".to_owned(),
                    Some(s) => match &s.outcome {
                        Outcome::Passed => format!("✔ {:.1}s", s.duration.as_secs_f64()),
                        Outcome::Failed { line, message } | Outcome::Error { line, message } => {
                            format!("✘ line {line}: {}", first_line(message).replace('|', "\\|"))
                        }
                        Outcome::NotRun { reason } => format!("– {reason}"),
                        Outcome::NotGraded { reason } => format!("– not graded: {reason}"),
                    },
                };
                out.push_str(&format!(" {text} |"));
            }
            out.push('\n');
        }
        for l in &m.labels {
            if let Some(c) = m.column(l) {
                let t = c.timing();
                out.push_str(&format!(
                    "\n{}: setup {:.2}s, steps {:.2}s, of which learner commands {:.2}s{}\n",
                    label_title(l),
                    t.setup.as_secs_f64(),
                    t.steps.as_secs_f64(),
                    t.commands.as_secs_f64(),
                    peak(c.peak_memory, ", peak memory ")
                ));
                let tools: Vec<String> = c
                    .tools
                    .tools
                    .iter()
                    .map(|(t, v, src)| format!("{t} {v} ({src})"))
                    .collect();
                if !tools.is_empty() {
                    out.push_str(&format!("\n{}: {}\n", label_title(l), tools.join(", ")));
                }
                if let Some(e) = &c.error {
                    out.push_str(&format!("\n{}: **{}**\n", label_title(l), first_line(e)));
                }
            }
        }
    }
    out.push_str(&format!(
        "\nTotal time {:.1}s\n",
        record.duration.as_secs_f64()
    ));
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The self-contained HTML report.
pub fn html(record: &Record) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>labcheck report</title><style>\
body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}\
th,td{border:1px solid #ccc;padding:.4em .6em;vertical-align:top;text-align:left}td:first-child{min-width:18em}th{background:#f3f3f3}\
.pass{background:#e6f6e6}.fail{background:#fbe3e3}.skip{background:#f2f2f2;color:#777}\
.msg{font-family:monospace;font-size:.85em;white-space:pre-wrap;max-width:40em}.tools{font-size:.85em;color:#444}\
.banner{background:#fff3cd;padding:.5em 1em;border:1px solid #e0c060}</style></head><body><h1>labcheck report</h1>",
    );
    if record.interrupted {
        out.push_str("<p class=\"banner\">The run was interrupted.</p>");
    }
    for m in Matrix::of(record) {
        out.push_str(&format!(
            "<h2>{}</h2><p><code>{}</code></p><table><tr><th>step</th>",
            esc(&m.lab.name),
            esc(&m.lab.origin().display().to_string())
        ));
        for l in &m.labels {
            out.push_str(&format!("<th>{}</th>", esc(&label_title(l))));
        }
        out.push_str("</tr>");
        for step in &m.lab.steps {
            out.push_str(&format!("<tr><td>{}</td>", esc(&step_title(step))));
            for l in &m.labels {
                match m.entry(step, l) {
                    None => out.push_str("<td class=\"skip\">·</td>"),
                    Some(s) => match &s.outcome {
                        Outcome::Passed => out.push_str(&format!("<td class=\"pass\">✔ {:.1}s</td>", s.duration.as_secs_f64())),
                        Outcome::Failed { line, message } | Outcome::Error { line, message } => out.push_str(&format!(
                            "<td class=\"fail\">✘ {:.1}s<div class=\"msg\">{}:{line}\n{}</div></td>",
                            s.duration.as_secs_f64(),
                            esc(&m.lab.origin().display().to_string()),
                            esc(message)
                        )),
                        Outcome::NotRun { reason } | Outcome::NotGraded { reason } => out.push_str(&format!("<td class=\"skip\">– {}</td>", esc(reason))),
                    },
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("<tr><th>toolchain</th>");
        for l in &m.labels {
            let mut cell = String::new();
            if let Some(c) = m.column(l) {
                for (t, v, src) in &c.tools.tools {
                    cell.push_str(&format!("{} {} <i>({})</i><br>", esc(t), esc(v), esc(src)));
                }
                if let Some(setup) = c.setup {
                    cell.push_str(&format!(
                        "environment ready in {:.1}s<br>",
                        setup.as_secs_f64()
                    ));
                }
                cell.push_str(&peak(c.peak_memory, "peak memory "));
                if c.peak_memory.is_some() {
                    cell.push_str("<br>");
                }
                if let Some(e) = &c.error {
                    cell.push_str(&format!("<b>{}</b>", esc(e)));
                }
            }
            out.push_str(&format!("<td class=\"tools\">{cell}</td>"));
        }
        out.push_str("</tr></table>");
    }
    out.push_str(&format!(
        "<p>Total time {:.1}s</p></body></html>\n",
        record.duration.as_secs_f64()
    ));
    out
}

/// `prefix` and a cell's peak memory in MiB, or nothing when it is not known.
fn peak(bytes: Option<u64>, prefix: &str) -> String {
    bytes.map_or(String::new(), |b| {
        format!("{prefix}{:.0} MiB", b as f64 / f64::from(1 << 20))
    })
}
