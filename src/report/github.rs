//! GitHub Actions: under `GITHUB_ACTIONS=true`, every failing check becomes an `::error` workflow
//! command on its feature file and line (shown on the pull request's diff), a cell that could not
//! run becomes one on its lab, and summary.md is appended to `$GITHUB_STEP_SUMMARY`.

use std::io::Write;

use super::{Record, test_name};
use crate::model::Outcome;

/// Whether this process runs in a GitHub Actions job.
pub fn active() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// The `::error` lines for the record's failures, in cell order.
pub fn annotations(record: &Record) -> Vec<String> {
    let mut out = Vec::new();
    for c in record.cells.values() {
        let file = c.lab.origin().display().to_string();
        for s in &c.steps {
            if let Outcome::Failed { line, fault } | Outcome::Error { line, fault } = &s.outcome {
                out.push(format!(
                    "::error file={},line={line},title={}::{}",
                    property(&file),
                    property(&test_name(c, s)),
                    data(&fault.render())
                ));
            }
        }
        if let Some(e) = &c.error {
            out.push(format!(
                "::error file={},title={}::{}",
                property(&file),
                property(&c.id.to_string()),
                data(e)
            ));
        }
    }
    out
}

/// Prints the annotations and appends `summary` to the job's step summary.
pub fn publish(record: &Record, summary: &str) {
    for line in annotations(record) {
        crate::outln!("{line}");
    }
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| f.write_all(summary.as_bytes()));
    if let Err(e) = appended {
        crate::errln!(
            "labcheck: cannot append to GITHUB_STEP_SUMMARY {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

/// A workflow command's message: `%`, CR and LF escaped, and any other control character (a
/// learner's escape sequence) written out.
fn data(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| match c {
            '\r' | '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect();
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_the_runner_would_split_on() {
        assert_eq!(data("50%\nfound: a"), "50%25%0Afound: a");
        assert_eq!(property("a › b, c: d"), "a › b%2C c%3A d");
    }
}
