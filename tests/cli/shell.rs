//! The learner's shell persists: a variable, a function, an alias and the working directory set
//! in one step are there in a later one — run from scratch, from a checkpoint (`run --step 3`)
//! and in a mistake from a checkpoint — and not in a step that runs in a new shell.

use std::path::Path;

use crate::author::{Down, labcheck};
use crate::checkpoint::RESUMED;

const SESSION: &str = "tests/labs/shell/session.feature";
const SESSION_JA: &str = "tests/labs/shell/session-ja.feature";

/// `labcheck run` with `args`, which must pass with `summary` in its summary: its stderr.
fn passes(state: &Path, reports: &Path, args: &[&str], summary: &str) -> String {
    let out = labcheck(state)
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(reports)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(summary), "{stdout}");
    stderr
}

#[test]
fn the_shell_carries_from_scratch_from_a_checkpoint_and_into_mistakes() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    passes(
        state.path(),
        reports.path(),
        &[SESSION],
        "5 passed, 0 failed",
    );
    // Both mistakes started from the checkpoint of step 2: one was rejected because it saw the
    // shell, the other because its new shell had none of it.
    let text = std::fs::read_to_string(reports.path().join("record.json")).expect("record");
    let record: serde_json::Value = serde_json::from_str(&text).expect("json");
    let resumed: Vec<&serde_json::Value> = record["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .filter(|c| !c["id"]["mistake"].is_null())
        .map(|c| &c["resumed"]["after_step"])
        .collect();
    assert_eq!(resumed, [2, 2], "{record}");

    let again = passes(
        state.path(),
        reports.path(),
        &[SESSION, "--step", "3"],
        "1 passed, 0 failed",
    );
    assert!(again.contains(RESUMED), "{again}");
    assert!(again.contains("3. Use what the terminal kept"), "{again}");
    // The Japanese phrases: the same shell, and a new one.
    passes(
        state.path(),
        reports.path(),
        &[SESSION_JA],
        "3 passed, 0 failed",
    );
}
