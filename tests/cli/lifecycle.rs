//! Cells never outlive their run: SIGTERM ends a run with 143 and removes its cells, a run killed
//! outright leaves directories the next run removes, two labs with one file name get cells of
//! their own, and a reader that goes away (a pipe into `head`) never panics a run.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

fn start(state: &Path, reports: &Path, lab: &str) -> Child {
    crate::support::run_command(state, reports, lab, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("labcheck starts")
}

use crate::support::{cells, processes, processes_with};

/// Waits until the run's cell has started its learner command.
fn wait_for_cell(state: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while cells(state).is_empty() {
        assert!(Instant::now() < deadline, "no cell appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(800));
}

fn wait(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        assert!(Instant::now() < deadline, "labcheck did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A run of the slow lab in a state directory of its own, once its cell runs its command.
fn slow_run() -> (tempfile::TempDir, tempfile::TempDir, Child) {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let child = start(
        state.path(),
        reports.path(),
        "tests/labs/slow/sleeper.feature",
    );
    wait_for_cell(state.path());
    (state, reports, child)
}

#[test]
fn sigterm_exits_143_and_removes_the_cells() {
    let (state, _reports, mut child) = slow_run();
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let run = child.id();
    assert_eq!(wait(&mut child), Some(143));
    assert!(cells(state.path()).is_empty(), "{:?}", cells(state.path()));
    // No process of the cell is left: none is in its control group (named after the cell). The
    // cell's init and a killed command end at once, as zombies the machine's init (or a
    // subreaper) collects when it will, which `processes` does not count; this waits up to 5 s
    // for them to end.
    let group = format!("labcheck/sleeper-{run}");
    let in_cell = || -> Vec<String> {
        processes()
            .iter()
            .filter(|p| p.cgroup().contains(&group))
            .map(|p| p.stat())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !in_cell().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        in_cell().is_empty(),
        "processes of the cell outlived the run: {:?}",
        in_cell()
    );
}

#[test]
fn a_killed_runs_cells_are_removed_by_the_next_run() {
    let (state, reports, mut child) = slow_run();
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let left = cells(state.path());
    assert_eq!(left.len(), 1, "a SIGKILLed run cannot clean up: {left:?}");
    let mut next = start(
        state.path(),
        reports.path(),
        "features/selftest/files.feature",
    );
    assert_eq!(wait(&mut next), Some(0));
    assert!(cells(state.path()).is_empty(), "{:?}", cells(state.path()));
}

#[test]
fn two_labs_with_one_file_name_run_side_by_side() {
    let reports = tempfile::tempdir().expect("reports");
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/twins", "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let junit = std::fs::read_to_string(reports.path().join("junit.xml")).expect("junit");
    assert!(
        junit.contains("Twin a") && junit.contains("Twin b"),
        "{junit}"
    );
    assert!(
        stderr.contains("tests-labs-twins-a-same") && stderr.contains("tests-labs-twins-b-same"),
        "{stderr}"
    );
}

#[test]
fn a_reader_that_goes_away_never_panics_the_run() {
    let reports = tempfile::tempdir().expect("reports");
    let bin = assert_cmd::cargo::cargo_bin("labcheck");
    // Both streams into a pipe whose reader exits at once: every line labcheck prints meets a
    // closed pipe, and the run still ends with its own exit code and writes its reports.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#""$LABCHECK" run tests/labs/sandbox/alpha.feature --report-dir "$REPORTS" 2>&1 | true; echo "exit=${PIPESTATUS[0]}""#)
        .env("LABCHECK", &bin)
        .env("REPORTS", reports.path())
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("exit=0"), "{stdout}");
    assert!(reports.path().join("record.json").is_file());
    assert!(reports.path().join("junit.xml").is_file());
}

#[test]
fn sigint_during_a_slow_check_ends_the_run_at_once() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let mut child = start(
        state.path(),
        reports.path(),
        "tests/labs/slow/slow-check.feature",
    );
    wait_for_cell(state.path());
    // The learner's command is done within the wait; the check's `sleep 60` runs now.
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let interrupted = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            interrupted.elapsed() < Duration::from_secs(10),
            "SIGINT did not end the run during a slow check"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    assert!(cells(state.path()).is_empty(), "the cell was removed");
}

/// The command lines of the processes in the control group of the cell `name` (its holder, init,
/// commands and cluster) or below it (a real node's containers sit in groups of their own).
pub(crate) fn in_group(name: &str) -> Vec<String> {
    let group = format!("labcheck/{name}");
    processes()
        .iter()
        .filter(|p| p.in_group(&group))
        .map(|p| p.cmdline())
        .collect()
}

#[test]
fn an_interrupted_step_n_leaves_no_cell_process_or_partial_checkpoint() {
    // `--step N` keeps its cell, but only once its steps have run: interrupted before, while the
    // cluster starts or a step runs, nothing of the cell stays.
    for delay in [2, 6] {
        let state = tempfile::tempdir_in("/var/tmp").expect("state");
        let reports = tempfile::tempdir().expect("reports");
        let mut child = Command::cargo_bin("labcheck")
            .expect("binary")
            .env("LABCHECK_STATE_DIR", state.path())
            .args([
                "run",
                "features/istio/traffic-routing.feature",
                "--istio",
                "1.31",
                "--step",
                "3",
                "--fresh",
                "--report-dir",
            ])
            .arg(reports.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("labcheck starts");
        std::thread::sleep(Duration::from_secs(delay));
        // SAFETY: kill(2) on the pid of the child this test started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let run = child.id();
        assert_eq!(wait(&mut child), Some(130), "after {delay} s");
        let name = format!("traffic-routing-1-31-{run}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !in_group(&name).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(in_group(&name), Vec::<String>::new(), "after {delay} s");
        let marker = state.path().display().to_string();
        let named = processes_with(&marker);
        assert_eq!(named, Vec::<String>::new(), "after {delay} s");
        assert!(cells(state.path()).is_empty(), "{:?}", cells(state.path()));
        let aside: Vec<String> = std::fs::read_dir(state.path().join("checkpoints"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".partial") || n.starts_with(".trash"))
            .collect();
        assert_eq!(aside, Vec::<String>::new(), "after {delay} s");
    }
}
