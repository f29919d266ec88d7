//! JUnit XML: one suite per cell, one test case per step with a stable name
//! (`<lab> › <step> [istio X]`); failures carry the feature line and the transcript.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Record, test_name, transcript_text};
use crate::model::Outcome;

pub fn render(record: &Record) -> String {
    let mut report = Report::new("labcheck");
    report.set_time(record.duration);
    for c in record.cells.values() {
        let mut suite = TestSuite::new(c.id.to_string());
        if let Some(e) = &c.error {
            suite.set_system_err(e.clone());
        }
        for s in &c.steps {
            let status = match &s.outcome {
                Outcome::Passed => TestCaseStatus::success(),
                Outcome::Failed { line, fault } | Outcome::Error { line, fault } => {
                    let kind = if matches!(s.outcome, Outcome::Error { .. }) {
                        NonSuccessKind::Error
                    } else {
                        NonSuccessKind::Failure
                    };
                    let mut st = TestCaseStatus::non_success(kind);
                    st.set_message(format!(
                        "{}:{line}: {}",
                        c.lab.origin().display(),
                        fault.headline()
                    ));
                    st.set_description(fault.render());
                    st
                }
                Outcome::NotRun { reason } | Outcome::NotGraded { reason } => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(reason.clone());
                    st
                }
            };
            let mut case = TestCase::new(test_name(c, s), status);
            case.set_classname(c.lab.origin().display().to_string());
            case.set_time(s.duration);
            let mut out = String::new();
            // A mistake: each listed check's verdict on the wrong answer.
            for check in s.checks.iter().filter(|k| k.listed) {
                out.push_str(&check.rejection(c.lab.lang));
                out.push('\n');
            }
            if !s.outcome.is_pass() {
                out.extend(s.transcripts.iter().map(|t| t.render()));
            }
            if !out.is_empty() {
                case.set_system_out(out);
            }
            suite.add_test_case(case);
        }
        if !c.passed && c.steps.is_empty() {
            suite.set_system_out(transcript_text(c));
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot render JUnit: {e} -->"))
}
