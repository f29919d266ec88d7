//! The learner's shell persists: a variable, a function, an alias and the working directory set
//! in one step are there in a later one — run from scratch, from a checkpoint (`run --step 3`)
//! and in a mistake from a checkpoint — and not in a step that runs in a new shell.

use crate::author::{Down, labcheck};
use crate::checkpoint::RESUMED;

const SESSION: &str = "tests/labs/shell/session.feature";
const SESSION_JA: &str = "tests/labs/shell/session-ja.feature";

#[test]
fn the_shell_carries_from_scratch_from_a_checkpoint_and_into_mistakes() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    let out = labcheck(state.path())
        .args(["run", SESSION, "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("5 passed, 0 failed"), "{stdout}");
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

    let again = labcheck(state.path())
        .args(["run", SESSION, "--step", "3", "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(RESUMED), "{stderr}");
    assert!(stderr.contains("3. Use what the terminal kept"), "{stderr}");
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}

#[test]
fn a_japanese_lab_carries_its_shell_and_a_new_shell_starts_clean() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    let out = labcheck(state.path())
        .args(["run", SESSION_JA, "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("3 passed, 0 failed"), "{stdout}");
}
