//! A run is green only when it ran something and graded it: runs that plan nothing, labs that
//! grade nothing and steps grading could not evaluate never pass.

use assert_cmd::Command;
use predicates::prelude::*;

fn labcheck() -> Command {
    let mut cmd = Command::cargo_bin("labcheck").expect("binary");
    cmd.timeout(std::time::Duration::from_secs(120));
    cmd
}

#[test]
fn tags_matching_nothing_exit_2() {
    labcheck()
        .args([
            "run",
            "features/selftest/files.feature",
            "--tags",
            "@nothing",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "nothing to run: no scenario matches --tags",
        ));
}

#[test]
fn step_0_exits_2() {
    labcheck()
        .args(["run", "features/selftest/files.feature", "--step", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--step 0 selects no step"));
}

#[test]
fn a_lab_that_grades_nothing_exits_2_with_file_and_line() {
    labcheck()
        .args(["run", "tests/labs/empty/no-scenario.feature"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "tests/labs/empty/no-scenario.feature:1:1: the Feature has no Scenario",
        ));
    labcheck()
        .args(["run", "tests/labs/empty/no-check.feature"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "tests/labs/empty/no-check.feature:3:3: the Scenario \"Commands only\" grades nothing",
        ));
}

#[test]
fn an_istio_lab_run_from_outside_the_repository_finds_its_versions_or_says_why() {
    // The versions file is found next to the lab, not in the working directory.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let lab = std::fs::canonicalize("features/selftest/istio.feature").expect("lab");
    labcheck()
        .current_dir(elsewhere.path())
        .args(["run", "--istio", "1.31", "--report-dir"])
        .arg(elsewhere.path().join("reports"))
        .arg(&lab)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3 passed, 0 failed"));
    // A copy with no versions file beside it: exit 2 and the reason, never a silent pass.
    let copy = elsewhere.path().join("istio.feature");
    std::fs::copy(&lab, &copy).expect("copy");
    labcheck()
        .current_dir(elsewhere.path())
        .args(["run"])
        .arg(&copy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "there is no Istio version to run it on",
        ));
    // An explicit --istio with no versions file is an error too.
    labcheck()
        .current_dir(elsewhere.path())
        .args(["run", "--istio", "1.31"])
        .arg(&copy)
        .assert()
        .code(2);
}

#[test]
fn an_upgrade_lab_on_one_istio_version_says_it_needs_two() {
    // Refused before any tool is resolved or cell started: exit 2, never a silent pass.
    labcheck()
        .args([
            "run",
            "--istio",
            "1.31",
            "features/istio/canary-upgrade.feature",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("passed").not())
        .stderr(predicate::str::contains(
            "canary-upgrade.feature: the lab is tagged @upgrade and the matrix has one Istio \
             version (1.31)",
        ));
    // Left out by --tags, it plans nothing and refuses nothing: the other lab runs.
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args([
            "run",
            "--istio",
            "1.31",
            "--tags",
            "not @upgrade and not @アップグレード",
            "features/istio/canary-upgrade.feature",
            "features/selftest/files.feature",
            "--report-dir",
        ])
        .arg(reports.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("files.feature"))
        .stdout(predicate::str::contains("canary-upgrade").not());
}

#[test]
fn grading_does_not_pass_a_step_it_could_not_evaluate() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/broken/not-graded.feature";
    let out = labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["run", lab, "--step", "2", "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cell = std::fs::read_dir(state.path().join("cells"))
        .expect("cells")
        .flatten()
        .next()
        .expect("a kept cell")
        .file_name()
        .to_string_lossy()
        .into_owned();
    let graded = labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["grade", lab, "--cell", &cell])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "Step 1: Make the directory — pass",
        ))
        .stdout(predicate::str::contains("Step 2: Say hello — not graded"))
        .stdout(predicate::str::contains("1 of 2 steps pass"));
    drop(graded);
    labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["down", "--all"])
        .assert()
        .code(0);
}

#[test]
fn doctor_finds_the_versions_file_from_a_subdirectory_as_run_does() {
    let sub = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("features/istio");
    assert_cmd::Command::cargo_bin("labcheck")
        .expect("binary")
        .current_dir(&sub)
        .arg("doctor")
        .assert()
        .stdout(predicates::str::contains("istio-versions.toml"))
        .stderr(predicates::str::contains("cannot read the version config").not());
}

#[test]
fn reports_that_cannot_be_written_are_a_harness_error() {
    let dir = tempfile::tempdir().expect("dir");
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "a file where the report directory should be").expect("file");
    labcheck()
        .args(["run", "tests/labs/sandbox/alpha.feature", "--report-dir"])
        .arg(&not_a_dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write reports"));
}
