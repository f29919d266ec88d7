//! The author's and grader's loop on a real lab: `run --step N` keeps the cell, `ps` lists it,
//! `grade` passes it, a step undone in `shell` fails exactly that step, `down --all` leaves no
//! process or mount behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;

const LAB: &str = "features/istio/mesh-install.feature";

pub(crate) use crate::support::labcheck;
use crate::support::{mounts_mentioning, runs, still_running};

fn kept_cell(state: &Path) -> (String, serde_json::Value) {
    let cells: Vec<PathBuf> = std::fs::read_dir(state.join("cells"))
        .expect("cells")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(cells.len(), 1, "one kept cell: {cells:?}");
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(cells[0].join("cell.json")).expect("cell.json"),
    )
    .expect("json");
    (record["name"].as_str().expect("name").to_owned(), record)
}

/// Tears down whatever the test kept, even when it fails half-way.
pub(crate) struct Down<'a>(pub(crate) &'a Path);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = labcheck(self.0).args(["down", "--all"]).output();
    }
}

#[test]
fn keep_grade_undo_one_step_and_tear_down() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    labcheck(state.path())
        .args(["run", LAB, "--istio", "1.31", "--step", "8", "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(0)
        .stderr(predicate::str::contains("enter it with `labcheck shell"));
    let (name, record) = kept_cell(state.path());
    labcheck(state.path())
        .arg("ps")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(&name).and(predicate::str::contains("running")));

    labcheck(state.path())
        .args(["grade", LAB, "--cell", &name])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("8 ステップ中 8 ステップ合格"));

    // The learner "undoes" step 7: its artifact is gone.
    labcheck(state.path())
        .args(["shell", &name])
        .write_stdin("rm /root/istio/out/sidecar.json\n")
        .assert()
        .code(0);
    labcheck(state.path())
        .args(["grade", LAB, "--cell", &name])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("✘ ステップ 7"))
        .stdout(predicate::str::contains("ファイルが存在しない"))
        .stdout(predicate::str::contains("8 ステップ中 7 ステップ合格"));

    let dir = record["dir"].as_str().expect("dir").to_owned();
    let pids: Vec<u32> = std::iter::once(&record["holder"])
        .chain(record["cluster_pids"].as_array().expect("pids"))
        .filter_map(|p| p.as_u64()?.try_into().ok())
        .collect();
    assert!(
        pids.len() > 1,
        "a holder and the cluster's processes: {record}"
    );
    assert!(pids.iter().all(|p| runs(*p)), "the kept cell runs");
    assert!(
        mounts_mentioning(&dir) > 0,
        "the kept cell's overlays are mounted in its namespace"
    );
    labcheck(state.path())
        .args(["down", "--all"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(&name));
    // `down` waits for them: what runs a moment after it returned survived it.
    let alive = still_running(&pids, Duration::from_secs(1));
    assert!(
        alive.is_empty(),
        "processes of the cell survived `down`: {alive:?}"
    );
    assert_eq!(
        mounts_mentioning(&dir),
        0,
        "mounts of the cell survived `down`"
    );
    assert!(!Path::new(&dir).exists());
    labcheck(state.path())
        .arg("ps")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no kept cells"));
}

/// Copies a directory tree (a learner's files, as a grader receives them): its directories and
/// regular files (an overlay's whiteouts are no learner's files).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The learner-facing message files.feature gives its check of out/summary.json.
const MESSAGE: &str =
    "Write the names of the Deployment's containers, as a list, to out/summary.json.";

#[test]
fn grade_a_learners_files_copied_under_a_root() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let lab = "features/selftest/files.feature";
    labcheck(state.path())
        .args(["run", lab, "--step", "3", "--report-dir"])
        .arg(state.path().join("r"))
        .assert()
        .code(0);
    let (_, record) = kept_cell(state.path());
    // The learner's environment, as files handed to the grader: what their commands wrote.
    let learner = tempfile::tempdir().expect("learner root");
    let upper = Path::new(record["dir"].as_str().expect("dir")).join("fs/upper");
    copy_tree(&upper, learner.path());
    labcheck(state.path())
        .args(["grade", lab, "--step", "3", "--root"])
        .arg(learner.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3 of 3 steps pass"));
    std::fs::remove_file(
        learner
            .path()
            .join("root/labcheck-selftest/out/summary.json"),
    )
    .expect("undo step 2");
    labcheck(state.path())
        .args(["grade", lab, "--step", "3", "--root"])
        .arg(learner.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("✘ Step 2"))
        // The lab's message for the check, not what the check expected in jq.
        .stdout(predicate::str::contains(MESSAGE))
        .stdout(predicate::str::contains(".containers").not())
        .stdout(predicate::str::contains("2 of 3 steps pass"));
    // The same grade as data, for a lab platform: it follows its published schema.
    let out = labcheck(state.path())
        .args(["grade", lab, "--step", "3", "--format", "json", "--root"])
        .arg(learner.path())
        .output()
        .expect("grade");
    assert_eq!(out.status.code(), Some(1), "the exit code is the grade's");
    let grade: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schemas/grade.schema.json"
        ))
        .expect("schema"),
    )
    .expect("schema JSON");
    let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&grade)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{grade}: {errors:?}");
    assert!(!validator.is_valid(&serde_json::json!({"lab": "x", "steps": []})));
    assert_eq!(
        (grade["passed"].as_u64(), grade["total"].as_u64()),
        (Some(2), Some(3))
    );
    let step2 = &grade["steps"][1];
    assert_eq!(step2["verdict"], "failed", "{step2}");
    assert_eq!(step2["message"], MESSAGE, "{step2}");
    let failed_checks = step2["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["verdict"] == "failed")
        .count();
    assert_eq!(failed_checks, 1, "{step2}");
    assert!(
        !Path::new("/root/labcheck-selftest").exists(),
        "grading read the root, never the host's paths"
    );
}
