//! Checkpoints: a cell that starts from one ends exactly as a cell that replays the steps before
//! it (every step's outcome, every artifact, byte for byte once the values that differ between
//! any two runs — times, uids, resourceVersions — are replaced); `run --step N` starts from the
//! checkpoint of step N-1 only while the steps before, their fixtures and the toolchain are
//! unchanged; `--fresh` replays; the cap holds; `clean` removes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use predicates::prelude::*;

use crate::author::{Down, labcheck};

pub(crate) const CARRY: &str = "tests/labs/checkpoint/carry.feature";

/// Every step a run recorded, by cell and line: its outcome and its artifacts.
type Steps = BTreeMap<(String, u64), (serde_json::Value, Vec<(String, String)>)>;

fn steps(report: &Path) -> (Steps, serde_json::Value) {
    let text = std::fs::read_to_string(report.join("record.json")).expect("record.json");
    let record: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut out = Steps::new();
    for cell in record["cells"].as_array().expect("cells") {
        let id = cell["id"].to_string();
        // Every step the cell ran: its own, and those a mistake cell replayed to reach its own.
        let replayed = cell["replayed"].as_array().into_iter().flatten();
        for step in cell["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .chain(replayed)
        {
            let artifacts = step["artifacts"]
                .as_array()
                .expect("artifacts")
                .iter()
                .map(|a| {
                    let path = a["path"].as_str().expect("path").to_owned();
                    let text = a["text"].as_str().expect("text");
                    (path, labcheck::report::versions::normalise(text))
                })
                .collect();
            let line = step["step"]["line"].as_u64().expect("line");
            out.insert((id.clone(), line), (step["outcome"].clone(), artifacts));
        }
    }
    (out, record)
}

/// The cells of a record that started from a checkpoint.
fn resumed_cells(record: &serde_json::Value) -> Vec<&serde_json::Value> {
    record["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .filter(|c| !c["resumed"].is_null())
        .collect()
}

/// Runs `args` twice, from checkpoints and replaying every step, and compares what both
/// recorded: every step the checkpointed run ran has the replay's outcome and artifacts.
/// Returns the checkpointed run's record.
fn same_as_replay(args: &[&str]) -> serde_json::Value {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let (forked, replayed) = (
        tempfile::tempdir().expect("r"),
        tempfile::tempdir().expect("r"),
    );
    for (dir, extra) in [(&forked, None), (&replayed, Some("--no-checkpoints"))] {
        labcheck(state.path())
            .args(args)
            .args(extra)
            .arg("--report-dir")
            .arg(dir.path())
            .assert()
            .code(0);
    }
    let (forked_steps, record) = steps(forked.path());
    let (replayed_steps, _) = steps(replayed.path());
    assert!(!forked_steps.is_empty());
    for (key, got) in &forked_steps {
        let want = replayed_steps
            .get(key)
            .unwrap_or_else(|| panic!("{key:?} ran only from a checkpoint"));
        assert_eq!(got.0, want.0, "outcome of {key:?}");
        assert_eq!(got.1, want.1, "artifacts of {key:?}");
    }
    // The replay ran every step the checkpointed run skipped, and nothing else differs.
    let skipped = replayed_steps.len() - forked_steps.len();
    let resumed = resumed_cells(&record);
    let expected: u64 = resumed
        .iter()
        .map(|c| c["resumed"]["after_step"].as_u64().expect("after_step"))
        .sum();
    assert_eq!(skipped as u64, expected, "steps not replayed");
    record
}

/// The checkpoints a state directory holds (not the ones being written, whose names start
/// with a dot).
pub(crate) fn checkpoints(state: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state.join("checkpoints"))
        .expect("checkpoints")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect()
}

/// The cell of a record's mistake.
fn mistake_cell(record: &serde_json::Value) -> &serde_json::Value {
    record["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .find(|c| !c["id"]["mistake"].is_null())
        .expect("the mistake's cell")
}

#[test]
fn a_mistake_from_a_checkpoint_ends_as_its_replay_byte_for_byte() {
    let record = same_as_replay(&["run", CARRY]);
    let mistake = mistake_cell(&record);
    assert_eq!(mistake["resumed"]["after_step"], 2, "{mistake}");
    let lines: Vec<&serde_json::Value> = mistake["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| &s["step"]["line"])
        .collect();
    assert_eq!(lines, [48], "only the mistake runs");
}

#[test]
fn an_istio_lab_from_checkpoints_ends_as_its_replay_byte_for_byte() {
    // Every mistake cell of the traffic-routing lab restores files and cluster state.
    let record = same_as_replay(&[
        "run",
        "features/istio/traffic-routing.feature",
        "--istio",
        "1.31",
    ]);
    let resumed = resumed_cells(&record).len();
    assert!(resumed >= 3, "mistake cells from checkpoints: {resumed}");
}

/// A copy of the carry lab with a fixture, in a repository of its own.
pub(crate) fn repository() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir_in("/var/tmp").expect("repo");
    std::fs::create_dir_all(repo.path().join("fixtures/words")).expect("fixtures");
    std::fs::write(repo.path().join("fixtures/words/a.txt"), "alpha\n").expect("fixture");
    let text = std::fs::read_to_string(CARRY).expect("lab").replace(
        "    Given the lab directory \"/root/carry\"\n",
        "    Given the lab directory \"/root/carry\"\n    \
         And the fixture \"fixtures/words\" is placed at \"/opt/words\"\n",
    );
    let lab = repo.path().join("carry.feature");
    std::fs::write(&lab, text).expect("lab");
    (repo, lab)
}

pub(crate) fn step3(state: &Path, lab: &Path, extra: &[&str]) -> String {
    let reports = tempfile::tempdir().expect("reports");
    let out = labcheck(state)
        .arg("run")
        .arg(lab)
        .args(["--step", "3"])
        .args(extra)
        .arg("--report-dir")
        .arg(reports.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let _ = labcheck(state).args(["down", "--all"]).output();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) const RESUMED: &str = "from the checkpoint of step 2";

#[test]
fn step_n_starts_from_step_n_minus_1_while_nothing_before_changed() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let (repo, lab) = repository();
    let first = step3(state.path(), &lab, &[]);
    assert!(
        !first.contains(RESUMED),
        "nothing to start from yet: {first}"
    );
    assert!(first.contains("1. Leave files behind"), "{first}");

    let again = step3(state.path(), &lab, &[]);
    assert!(again.contains(RESUMED), "{again}");
    assert!(!again.contains("1. Leave files behind"), "{again}");
    assert!(again.contains("3. Count what is there"), "{again}");

    let fresh = step3(state.path(), &lab, &["--fresh"]);
    assert!(!fresh.contains(RESUMED), "--fresh replays: {fresh}");

    // A changed fixture: the steps before would not leave the same state.
    std::fs::write(repo.path().join("fixtures/words/a.txt"), "beta\n").expect("fixture");
    let fixture = step3(state.path(), &lab, &[]);
    assert!(!fixture.contains(RESUMED), "fixture changed: {fixture}");
    assert!(step3(state.path(), &lab, &[]).contains(RESUMED));

    // A changed step 1.
    let text = std::fs::read_to_string(&lab).expect("lab");
    std::fs::write(
        &lab,
        text.replace("echo one > notes.txt", "echo one>notes.txt"),
    )
    .expect("edit");
    let edited = step3(state.path(), &lab, &[]);
    assert!(!edited.contains(RESUMED), "step 1 changed: {edited}");

    // A change after step 2 keeps the checkpoint of step 2.
    let text = std::fs::read_to_string(&lab).expect("lab");
    std::fs::write(
        &lab,
        text.replace("} > report.txt\n    Then", "}>report.txt\n    Then"),
    )
    .expect("edit");
    let later = step3(state.path(), &lab, &[]);
    assert!(later.contains(RESUMED), "only step 3 changed: {later}");

    let written = checkpoints(state.path()).len();
    assert!(written >= 3, "{written} checkpoints");
    labcheck(state.path())
        .arg("clean")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "removed {written} checkpoint(s)"
        )));
    let left = std::fs::read_dir(state.path().join("checkpoints"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "clean removes the checkpoints");
}

#[test]
fn checkpoints_stay_under_their_cap() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    // The mistake cell still starts from the checkpoint of step 2 (the run uses it), and once
    // the run ends none is left over the cap of one byte.
    let out = labcheck(state.path())
        .env("LABCHECK_CHECKPOINT_CAP", "1")
        .args(["run", CARRY, "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let (_, record) = steps(reports.path());
    assert_eq!(resumed_cells(&record).len(), 1, "the mistake resumed");
    let left = checkpoints(state.path());
    assert_eq!(
        left,
        Vec::<PathBuf>::new(),
        "over the cap once the run ended"
    );
    // An unreadable cap is refused, not taken for the default.
    labcheck(state.path())
        .env("LABCHECK_CHECKPOINT_CAP", "lots")
        .args(["run", CARRY, "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("LABCHECK_CHECKPOINT_CAP"));
}

#[test]
fn a_mistake_says_why_each_listed_check_rejected_it() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    let out = labcheck(state.path())
        .args(["run", CARRY, "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("labcheck runs");
    assert_eq!(out.status.code(), Some(0));
    // The console: which line rejected the wrong answer, and what it expected and found.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 61: rejects it"), "{stderr}");
    assert!(stderr.contains("line 62: rejects it"), "{stderr}");
    assert!(stderr.contains("expected: exactly 7 lines"), "{stderr}");
    // record.json: the mistake's step holds the listed check's own verdict.
    let text = std::fs::read_to_string(reports.path().join("record.json")).expect("record");
    let record: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mistake = mistake_cell(&record);
    let listed: Vec<&serde_json::Value> = mistake["steps"][0]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["listed"] == true)
        .collect();
    // One by the check's name, one word for word: both are the same check.
    assert_eq!(listed.len(), 2, "{mistake}");
    assert_eq!(listed[0]["line"], 61);
    assert_eq!(
        listed[0]["text"],
        "check \"seven-lines\": the file \"/root/carry/report.txt\" should have exactly 7 lines"
    );
    assert_eq!(listed[1]["line"], 62);
    // As data: the check's verdict, with what it expected and what it found.
    let why = &listed[0]["verdict"]["Failed"];
    assert_eq!(why["kind"], "check", "{why}");
    let expected = why["expected"].as_str().expect("a failed check");
    assert!(expected.contains("exactly 7 lines"), "{why}");
    // JUnit and Cucumber JSON carry it too.
    let junit = std::fs::read_to_string(reports.path().join("junit.xml")).expect("junit");
    assert!(junit.contains("line 61: rejects it"), "{junit}");
    let cucumber = std::fs::read_to_string(reports.path().join("cucumber.json")).expect("json");
    assert!(cucumber.contains("line 61: rejects it"));
}

#[test]
fn a_mesh_lab_from_checkpoints_ends_as_its_replay_byte_for_byte() {
    // The mistake cell restores a checkpoint of an installed mesh: its own node starts again from
    // the checkpoint's etcd and runs istiod's Pod again, and the step ends as the replay does.
    let record = same_as_replay(&["run", "tests/labs/mesh/rollout.feature", "--istio", "1.31"]);
    let resumed = resumed_cells(&record).len();
    assert_eq!(resumed, 1, "the mistake's cell starts from a checkpoint");
}
