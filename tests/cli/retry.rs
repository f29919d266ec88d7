//! A step that runs its commands again until its checks pass: it passes on the try its checks
//! first hold (the shell carrying from try to try), each try in the record and the report, in
//! both languages; and a step whose checks never hold fails once its time is up, with every try.

use std::path::Path;

use crate::author::{Down, labcheck};

/// The try numbers of every transcript of a run's record.
fn tries(reports: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(reports.join("record.json")).expect("record");
    let record: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut found = Vec::new();
    for cell in record["cells"].as_array().expect("cells") {
        for step in cell["steps"].as_array().expect("steps") {
            for t in step["transcripts"].as_array().expect("transcripts") {
                if let Some(n) = t["attempt"]["number"].as_u64() {
                    found.push(n);
                }
            }
        }
    }
    found
}

/// `labcheck run LAB`: its exit code, stdout and stderr.
fn run(state: &Path, reports: &Path, lab: &str) -> (Option<i32>, String, String) {
    let out = labcheck(state)
        .args(["run", lab, "--report-dir"])
        .arg(reports)
        .output()
        .expect("run");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_retried_step_settles_only_on_checks_that_pass_twice_in_a_row() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/retry/flicker.feature";
    let (code, stdout, stderr) = run(state.path(), reports.path(), lab);
    // Evaluations 1 (pass), 2 (fail): try 2; 3 (fail): try 3; 4 and 5 pass: settled; the
    // step's check is the sixth, and passes. Settling on one evaluation would have ended the
    // tries at the first and failed the step's check on the second.
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    assert_eq!(tries(reports.path()), [1, 2, 3]);
}

#[test]
fn a_step_runs_again_until_its_checks_pass_and_no_longer() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());

    let reports = tempfile::tempdir().expect("reports");
    let (code, stdout, stderr) = run(
        state.path(),
        reports.path(),
        "tests/labs/retry/again.feature",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
    // Three tries, no more: the checks held on the third, with the first step's variable.
    assert_eq!(tries(reports.path()), [1, 2, 3]);
    assert!(stderr.contains("2. Try until the third try"), "{stderr}");
    assert!(stderr.contains(", 3 tries)"), "{stderr}");
    let summary = std::fs::read_to_string(reports.path().join("summary.md")).expect("summary");
    assert!(summary.contains("(3 tries)"), "{summary}");

    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/retry/again-ja.feature";
    let (code, _, stderr) = run(state.path(), reports.path(), lab);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(tries(reports.path()), [1, 2]);

    // Never enough: it tries for its 3 seconds, a second apart, then fails on the last try's
    // output, every try shown.
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/retry/never.feature";
    let (code, stdout, stderr) = run(state.path(), reports.path(), lab);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
    let tried = tries(reports.path());
    assert!(tried.len() >= 3, "{tried:?}");
    assert_eq!(tried, (1..=tried.len() as u64).collect::<Vec<_>>());
    let last = tried.len();
    assert!(stderr.contains(&format!("| tries={last}")), "{stderr}");
    assert!(
        stderr.contains(&format!("--- try {last} (run again")),
        "{stderr}"
    );
}
