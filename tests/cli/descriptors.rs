//! Descriptors labcheck inherits from whoever started it (an open directory, a lock) reach none
//! of the processes it starts: not a learner command, not a kept cell's holder, not a cluster.

use std::path::Path;

use crate::author::{Down, labcheck};

/// The pids of every process on the machine holding `target` open.
fn holders(target: &Path) -> Vec<String> {
    crate::support::processes()
        .iter()
        .filter(|p| p.holds_open(target))
        .map(|p| p.pid.to_string())
        .collect()
}

#[test]
fn a_descriptor_held_around_run_step_is_closed_in_the_kept_cell() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    let held = tempfile::tempdir().expect("held dir");
    let bin = labcheck(state.path()).get_program().to_owned();
    // As a shell script would: `exec 9<DIR` (no close-on-exec), then labcheck, which keeps the
    // cell of `--step 1` after it exits.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"exec 9<"$HELD"; exec "$LABCHECK" run "$LAB" --step 1 --report-dir "$REPORTS""#)
        .env("HELD", held.path())
        .env("LABCHECK", &bin)
        .env("LAB", "tests/labs/descriptors/inherited.feature")
        .env("REPORTS", reports.path())
        .env("LABCHECK_STATE_DIR", state.path())
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("enter it with `labcheck shell"),
        "the cell is kept: {stderr}"
    );
    let kept = std::fs::read_dir(state.path().join("cells"))
        .expect("cells")
        .count();
    assert_eq!(kept, 1, "one kept cell");
    // labcheck has exited; its kept cell lives on and must not hold the directory.
    assert_eq!(holders(held.path()), Vec::<String>::new());
}
