//! The matrix summary: per lab, rows are its steps and columns the matrix labels (Istio
//! versions), each entry pass/fail, time and the first failing check with its file:line; the
//! toolchain of each column underneath. Rendered as Markdown (printed at the end) and as a
//! self-contained HTML file.

use std::collections::BTreeSet;

use super::{CellRecord, Record, StepRecord, esc};
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
        self.cells_for(step, label)
            .and_then(|c| c.steps.iter().find(|s| s.step.line == step.line))
    }

    /// The cell that runs `step` on `label`: the main cell, or the mistake's own.
    fn cells_for(&self, step: &LabStep, label: &str) -> Option<&'a CellRecord> {
        let mistake = (step.kind == StepKind::Mistake).then_some(step.line);
        self.cells
            .iter()
            .copied()
            .find(|c| c.id.label == label && c.id.mistake == mistake)
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
                        Outcome::Passed => {
                            format!("✔ {:.1}s{}", s.duration.as_secs_f64(), tries(s))
                        }
                        Outcome::Failed { line, fault } | Outcome::Error { line, fault } => {
                            format!("✘ line {line}: {}", fault.headline().replace('|', "\\|"))
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
    out.push_str(&super::versions::markdown(record));
    out.push_str(&format!(
        "\nTotal time {:.1}s\n",
        record.duration.as_secs_f64()
    ));
    out
}

/// The report a person drills into: a header with the run's counts, a table per lab (steps ×
/// versions) whose entries open to the step's checks, its failure (expected / found, file:line)
/// and its commands' transcripts, and each version's toolchain folded away. Self-contained: inline
/// CSS and a line of script that opens the entry a link points at (`report.html#<cell>-<line>`).
pub fn html(record: &Record) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>labcheck report</title><style>\
body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}\
th,td{border:1px solid #ccc;padding:.4em .6em;vertical-align:top;text-align:left}td:first-child{min-width:16em}th{background:#f3f3f3}\
.pass{background:#e6f6e6}.fail{background:#fbe3e3}.skip{background:#f2f2f2;color:#777}summary{cursor:pointer}\
.msg,pre{font-family:monospace;font-size:.85em;white-space:pre-wrap;max-width:60em;margin:.4em 0}\
pre{background:#fff;border:1px solid #ddd;padding:.4em}.tools{font-size:.85em;color:#444}ul.checks{padding-left:1.2em;margin:.4em 0}\
.banner{background:#fff3cd;padding:.5em 1em;border:1px solid #e0c060}.head{font-size:1.05em}</style></head><body><h1>labcheck report</h1>",
    );
    let (passed, failed, not_run) = record.counts();
    let mut labels: Vec<String> = record.cells.keys().map(|c| label_title(&c.label)).collect();
    labels.sort();
    labels.dedup();
    out.push_str(&format!(
        "<p class=\"head\">{} cells · {passed} steps passed · {failed} failed · {not_run} not run · {:.1}s · {}</p>",
        record.cells.len(),
        record.duration.as_secs_f64(),
        esc(&labels.join(", "))
    ));
    if record.interrupted {
        out.push_str("<p class=\"banner\">The run was interrupted.</p>");
    }
    for m in Matrix::of(record) {
        let origin = m.lab.origin().display().to_string();
        out.push_str(&format!(
            "<h2>{}</h2><p><code>{}</code></p><table><tr><th>step</th>",
            esc(&m.lab.name),
            esc(&origin)
        ));
        for l in &m.labels {
            out.push_str(&format!("<th>{}</th>", esc(&label_title(l))));
        }
        out.push_str("</tr>");
        for step in &m.lab.steps {
            out.push_str(&format!("<tr><td>{}</td>", esc(&step_title(step))));
            for l in &m.labels {
                out.push_str(&entry_html(&m, step, l, &origin));
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
                if let Some(e) = &c.error {
                    cell.push_str(&format!("<br><b>{}</b>", esc(e)));
                }
            }
            out.push_str(&format!(
                "<td class=\"tools\"><details><summary>toolchain</summary>{cell}</details></td>"
            ));
        }
        out.push_str("</tr></table>");
    }
    out.push_str(&super::versions::html(record));
    out.push_str(&format!(
        "<p>Total time {:.1}s</p><script>var d=location.hash&&document.getElementById(decodeURIComponent(location.hash.slice(1)));if(d){{d.open=true;d.scrollIntoView();}}</script></body></html>\n",
        record.duration.as_secs_f64()
    ));
    out
}

/// The id an entry of the report has: `<cell>-<line>`.
pub fn entry_id(cell: &crate::model::CellId, line: usize) -> String {
    format!("{}-{line}", cell.slug())
}

/// One step of one version: its verdict, opening to what it did.
fn entry_html(m: &Matrix, step: &LabStep, label: &str, origin: &str) -> String {
    let Some(s) = m.entry(step, label) else {
        return "<td class=\"skip\">·</td>".to_owned();
    };
    let cell = m
        .cells_for(step, label)
        .map(|c| entry_id(&c.id, step.line))
        .unwrap_or_default();
    let (class, head) = match &s.outcome {
        Outcome::Passed => (
            "pass",
            format!("✔ {:.1}s{}", s.duration.as_secs_f64(), tries(s)),
        ),
        Outcome::Failed { line, fault } | Outcome::Error { line, fault } => (
            "fail",
            format!(
                "✘ {:.1}s {origin}:{line} {}",
                s.duration.as_secs_f64(),
                fault.headline()
            ),
        ),
        Outcome::NotRun { reason } | Outcome::NotGraded { reason } => {
            ("skip", format!("– {reason}"))
        }
    };
    let mut body = String::new();
    if let Outcome::Failed { line, fault } | Outcome::Error { line, fault } = &s.outcome {
        body.push_str(&format!(
            "<div class=\"msg\">{}:{line}\n{}</div>",
            esc(origin),
            esc(&fault.render())
        ));
    }
    if !s.checks.is_empty() {
        body.push_str("<ul class=\"checks\">");
        for c in &s.checks {
            let mark = match &c.verdict {
                crate::model::Verdict::Passed => "✔",
                crate::model::Verdict::Failed(_) => "✘",
                crate::model::Verdict::Skipped => "–",
            };
            if c.listed {
                // A check a mistake lists: rejecting the wrong answer is what it is there for.
                let (mark, why) = match &c.verdict {
                    crate::model::Verdict::Failed(why) => ("✔ rejects:", why.render()),
                    crate::model::Verdict::Passed => ("✘ lets it through:", String::new()),
                    crate::model::Verdict::Skipped => ("–", String::new()),
                };
                body.push_str(&format!(
                    "<li class=\"listed\">{mark} <code>{}</code> (line {})<pre>{}</pre></li>",
                    esc(&c.text),
                    c.line,
                    esc(&why)
                ));
                continue;
            }
            body.push_str(&format!(
                "<li>{mark} <code>{}</code> (line {})</li>",
                esc(&c.text),
                c.line
            ));
        }
        body.push_str("</ul>");
    }
    for t in &s.transcripts {
        body.push_str(&format!("<pre>{}</pre>", esc(&t.render())));
    }
    format!(
        "<td class=\"{class}\"><details id=\"{}\"><summary>{}</summary>{body}</details></td>",
        esc(&cell),
        esc(&head)
    )
}

/// A passed step's tries, when it ran its commands again until its checks passed.
fn tries(s: &StepRecord) -> String {
    crate::model::Transcript::tries(&s.transcripts)
        .map_or(String::new(), |n| format!(" ({n} tries)"))
}

/// `prefix` and a cell's peak memory in MiB, or nothing when it is not known.
fn peak(bytes: Option<u64>, prefix: &str) -> String {
    bytes.map_or(String::new(), |b| {
        format!("{prefix}{:.0} MiB", b as f64 / f64::from(1 << 20))
    })
}
