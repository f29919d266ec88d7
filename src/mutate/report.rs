//! What `labcheck mutate` tells: one line per mutant, the diff of every missed one with its
//! file:line, scores per step and per lab (caught / (caught + missed)), and the files under
//! `target/labcheck/mutants/`: `outcomes.json`, `caught.txt`, `missed.txt` and `report.html`
//! (per version, each step's score and every mutant opening to its diff and what caught it).

use std::collections::BTreeMap;
use std::path::Path;

use super::{Outcome, Result};
use crate::model::Lang;
use crate::report::esc;

/// One line for a finished mutant.
pub fn line(r: &Result, lang: Lang) -> String {
    let m = &r.mutant;
    let word = match (&r.outcome, &r.equivalent) {
        (Outcome::Missed, Some(_)) => lang.pick("equivalent", "同等").to_owned(),
        (o, _) => o.word(lang).to_owned(),
    };
    let label = if r.label == "-" {
        String::new()
    } else {
        format!("[istio {}] ", r.label)
    };
    let word = if r.cached {
        format!("{word} ({})", lang.pick("kept", "以前の結果"))
    } else {
        word
    };
    let mut out = format!(
        "{word:<10} {label}{} {} ({}) {} {}",
        lang.pick("step", "ステップ"),
        m.step,
        m.id,
        lang.pick("line", "行"),
        m.lines.0
    );
    out.push_str(&format!(": {}", m.describe()));
    match &r.outcome {
        Outcome::Caught { line, .. } => out.push_str(&format!(
            " — {} {line}",
            lang.pick("by the check at line", "検出した行:")
        )),
        Outcome::Unviable { message } | Outcome::Error { message } => {
            out.push_str(&format!(" — {message}"))
        }
        Outcome::Missed | Outcome::Timeout => {}
    }
    if let Some(spent) = r.spent {
        out.push_str(&format!(
            " ({:.1} {s}: {} {:.1} {s}, {} {:.1} {s})",
            (spent.setup + spent.steps).as_secs_f64(),
            lang.pick("start", "起動"),
            spent.setup.as_secs_f64(),
            lang.pick("steps", "ステップ"),
            spent.steps.as_secs_f64(),
            s = lang.pick("s", "秒"),
        ));
    }
    out
}

/// The mutant as a diff against the feature text.
pub fn diff(r: &Result, path: &Path) -> String {
    let m = &r.mutant;
    let mut out = format!(
        "{}:{}: {} ({})\n",
        path.display(),
        m.lines.0,
        m.operator.name(),
        m.id
    );
    for l in &m.before {
        out.push_str(&format!("  - {l}\n"));
    }
    for l in &m.after {
        out.push_str(&format!("  + {l}\n"));
    }
    if let Some(reason) = &r.equivalent {
        out.push_str(&format!("  equivalent: {reason}\n"));
    }
    out
}

/// `(caught, missed not marked equivalent)` of some results.
fn tally<'a>(rs: impl Iterator<Item = &'a Result>) -> (usize, usize) {
    let mut t = (0, 0);
    for r in rs {
        match (&r.outcome, &r.equivalent) {
            (Outcome::Caught { .. }, _) => t.0 += 1,
            (Outcome::Missed, None) => t.1 += 1,
            _ => {}
        }
    }
    t
}

fn score((caught, missed): (usize, usize)) -> String {
    if caught + missed == 0 {
        "-".to_owned()
    } else {
        format!("{:.2}", caught as f64 / (caught + missed) as f64)
    }
}

/// Counts and scores per version and step, and per version for the whole lab.
pub fn summary(results: &[Result], lang: Lang) -> String {
    let mut by_label: BTreeMap<&str, Vec<&Result>> = BTreeMap::new();
    for r in results {
        by_label.entry(&r.label).or_default().push(r);
    }
    let mut out = String::new();
    for (label, rs) in by_label {
        let mut steps: BTreeMap<usize, Vec<&Result>> = BTreeMap::new();
        for r in &rs {
            steps.entry(r.mutant.step).or_default().push(r);
        }
        for (step, srs) in steps {
            let t = tally(srs.iter().copied());
            out.push_str(&format!(
                "istio {label} {} {step}: {} {}, {} {} — {} {}\n",
                lang.pick("step", "ステップ"),
                t.0,
                lang.pick("caught", "検出"),
                t.1,
                lang.pick("missed", "見逃し"),
                lang.pick("score", "スコア"),
                score(t)
            ));
        }
        let count = |f: fn(&Outcome) -> bool| rs.iter().filter(|r| f(&r.outcome)).count();
        let t = tally(rs.iter().copied());
        let equivalent = rs
            .iter()
            .filter(|r| r.outcome == Outcome::Missed && r.equivalent.is_some())
            .count();
        out.push_str(&format!(
            "istio {label}: {} {}: {} {}, {} {}, {} {}, {} {}, {} {}, {} {} — {} {}\n",
            rs.len(),
            lang.pick("mutants", "個の変異"),
            t.0,
            lang.pick("caught", "検出"),
            t.1,
            lang.pick("missed", "見逃し"),
            equivalent,
            lang.pick("equivalent", "同等"),
            count(|o| matches!(o, Outcome::Unviable { .. })),
            lang.pick("unviable", "実行不能"),
            count(|o| matches!(o, Outcome::Timeout)),
            lang.pick("timeouts", "タイムアウト"),
            count(|o| matches!(o, Outcome::Error { .. })),
            lang.pick("errors", "エラー"),
            lang.pick("score", "スコア"),
            score(t)
        ));
    }
    out
}

#[derive(serde::Serialize)]
struct Row<'a> {
    id: &'a str,
    istio: &'a str,
    step: usize,
    step_name: &'a str,
    operator: super::generate::Operator,
    file: String,
    lines: [usize; 2],
    before: &'a [String],
    after: &'a [String],
    #[serde(flatten)]
    outcome: &'a Outcome,
    equivalent: Option<&'a str>,
    /// The outcome was kept from an earlier run: the mutant did not run again.
    kept: bool,
    /// Seconds the mutant's cell took to start (from its checkpoint) and to run its steps,
    /// when it ran now.
    #[serde(skip_serializing_if = "Option::is_none")]
    start_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps_secs: Option<f64>,
}

/// Writes `outcomes.json`, `caught.txt` and `missed.txt` under `dir`.
pub fn write(dir: &Path, lab: &Path, results: &[Result]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let rows: Vec<Row<'_>> = results
        .iter()
        .map(|r| Row {
            id: &r.mutant.id,
            istio: &r.label,
            step: r.mutant.step,
            step_name: &r.mutant.step_name,
            operator: r.mutant.operator,
            file: lab.display().to_string(),
            lines: [r.mutant.lines.0, r.mutant.lines.1],
            before: &r.mutant.before,
            after: &r.mutant.after,
            outcome: &r.outcome,
            equivalent: r.equivalent.as_deref(),
            kept: r.cached,
            start_secs: r.spent.map(|s| s.setup.as_secs_f64()),
            steps_secs: r.spent.map(|s| s.steps.as_secs_f64()),
        })
        .collect();
    let json = serde_json::to_string_pretty(&rows).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("outcomes.json"), json)?;
    let text = |keep: fn(&Result) -> bool| {
        results
            .iter()
            .filter(|r| keep(r))
            .map(|r| diff(r, lab))
            .collect::<Vec<_>>()
            .join("\n")
    };
    std::fs::write(
        dir.join("caught.txt"),
        text(|r| matches!(r.outcome, Outcome::Caught { .. })),
    )?;
    std::fs::write(
        dir.join("missed.txt"),
        text(|r| r.outcome == Outcome::Missed),
    )?;
    std::fs::write(dir.join("report.html"), html(lab, results))?;
    Ok(())
}

/// The mutation report to drill into: per version and step the score, then each mutant — missed
/// ones first — opening to its diff and the check that caught it or the reason it is equivalent.
pub fn html(lab: &Path, results: &[Result]) -> String {
    let mut out = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>labcheck mutate</title><style>\
body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse;margin:1em 0}}\
th,td{{border:1px solid #ccc;padding:.3em .6em;text-align:left}}th{{background:#f3f3f3}}\
.missed{{background:#fbe3e3}}.caught{{background:#e6f6e6}}.other{{background:#f2f2f2}}\
pre{{font-size:.85em;white-space:pre-wrap}}summary{{cursor:pointer}}</style></head><body>\
<h1>labcheck mutate</h1><p><code>{}</code></p>",
        esc(&lab.display().to_string())
    );
    let mut by_label: BTreeMap<&str, Vec<&Result>> = BTreeMap::new();
    for r in results {
        by_label.entry(&r.label).or_default().push(r);
    }
    for (label, rs) in by_label {
        out.push_str(&format!(
            "<h2>istio {}</h2><table><tr><th>step</th><th>caught</th><th>missed</th><th>score</th></tr>",
            esc(label)
        ));
        let mut steps: BTreeMap<usize, Vec<&Result>> = BTreeMap::new();
        for r in &rs {
            steps.entry(r.mutant.step).or_default().push(r);
        }
        for (step, srs) in &steps {
            let t = tally(srs.iter().copied());
            let name = srs.first().map_or("", |r| r.mutant.step_name.as_str());
            out.push_str(&format!(
                "<tr><td>{step}. {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                t.0,
                t.1,
                score(t)
            ));
        }
        out.push_str("</table>");
        let mut ordered = rs.clone();
        ordered.sort_by_key(|r| {
            (
                !matches!((&r.outcome, &r.equivalent), (Outcome::Missed, None)),
                r.mutant.lines.0,
            )
        });
        for r in ordered {
            let class = match (&r.outcome, &r.equivalent) {
                (Outcome::Missed, None) => "missed",
                (Outcome::Caught { .. }, _) => "caught",
                _ => "other",
            };
            let mut body = format!("<pre>{}</pre>", esc(&diff(r, lab)));
            if let Outcome::Caught { line, message } = &r.outcome {
                body.push_str(&format!(
                    "<p>caught by the check at {}:{line}</p><pre>{}</pre>",
                    esc(&lab.display().to_string()),
                    esc(message)
                ));
            }
            out.push_str(&format!(
                "<details class=\"{class}\"><summary>{}</summary>{body}</details>",
                esc(&line(r, Lang::En))
            ));
        }
    }
    out.push_str("</body></html>\n");
    out
}
