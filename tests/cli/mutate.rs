//! `labcheck mutate` on a sandbox-only lab with one weak and one strong check: the weak check's
//! mutants are reported missed with their diff and file:line, the strong check's caught, and
//! marking the missed ones equivalent makes the run pass.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const LAB: &str = "tests/labs/mutate/weak-and-strong.feature";

fn labcheck() -> Command {
    let mut cmd = Command::cargo_bin("labcheck").expect("binary");
    cmd.timeout(std::time::Duration::from_secs(300));
    cmd
}

fn outcomes(dir: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("mutants/outcomes.json")).expect("outcomes.json");
    serde_json::from_str::<Vec<Value>>(&text).expect("a JSON array")
}

fn find<'a>(rows: &'a [Value], after: &str) -> &'a Value {
    rows.iter()
        .find(|r| {
            r["after"]
                .as_array()
                .is_some_and(|a| a.iter().any(|l| l == after))
        })
        .unwrap_or_else(|| panic!("no mutant gives {after:?}: {rows:?}"))
}

#[test]
fn list_shows_every_mutant_without_running() {
    labcheck()
        .args(["mutate", LAB, "--list"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(format!(
            "{LAB}:15: scalar `replicas: 3` → `replicas: 4`"
        )))
        .stdout(predicate::str::contains("delete-command"))
        .stdout(predicate::str::contains(
            "map-key `replicas: 3` → `replicat: 3`",
        ))
        .stdout(predicate::str::contains("8 mutants"));
}

#[test]
fn the_weak_check_misses_and_the_strong_one_catches() {
    let reports = tempfile::tempdir().expect("reports");
    labcheck()
        .args(["mutate", LAB, "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!("{LAB}:15: scalar")))
        .stdout(predicate::str::contains("  - replicas: 3\n  + replicas: 4"))
        .stdout(predicate::str::contains("6 caught, 2 missed"))
        .stdout(predicate::str::contains("score 0.75"))
        .stderr(predicate::str::contains(
            "scalar `name: shop` → `name: shoq` — by the check at line 19",
        ))
        .stderr(
            predicate::str::is_match(r"line 19 \(\d+\.\d s: start \d+\.\d s, steps \d+\.\d s\)")
                .expect("regex"),
        );
    let rows = outcomes(reports.path());
    assert_eq!(rows.len(), 8);
    let weak = find(&rows, "replicas: 4");
    assert_eq!(weak["outcome"], "missed");
    assert_eq!(weak["lines"][0], 15);
    let strong = find(&rows, "name: shoq");
    assert_eq!(strong["outcome"], "caught");
    assert_eq!(strong["line"], 19);
    // Every mutant ran now: its cell's start and its steps are timed.
    for row in &rows {
        let start = row["start_secs"].as_f64().expect("start_secs");
        let steps = row["steps_secs"].as_f64().expect("steps_secs");
        assert!(start > 0.0 && steps > 0.0, "{row}");
    }
    let missed =
        std::fs::read_to_string(reports.path().join("mutants/missed.txt")).expect("missed");
    assert!(
        missed.contains("replicas: 0") && !missed.contains("shoq"),
        "{missed}"
    );
    // The HTML report: the missed mutants first, each opening to its diff.
    let html =
        std::fs::read_to_string(reports.path().join("mutants/report.html")).expect("report.html");
    let first = html.find("<details class=\"").expect("mutants");
    assert!(
        html[first..].starts_with("<details class=\"missed\">"),
        "{html}"
    );
    assert!(html.contains("caught by the check at") && html.contains("shoq"));
    assert!(html.contains("<td>0.75</td>"), "{html}");
}

#[test]
fn missed_mutants_marked_equivalent_pass_and_the_lab_works_from_tmp() {
    // A copy under /tmp: labs anywhere work, and the equivalents file lives beside the lab.
    let dir = tempfile::tempdir().expect("temp dir");
    let lab = dir.path().join("weak.feature");
    std::fs::copy(LAB, &lab).expect("copy");
    std::fs::create_dir_all(dir.path().join("fixtures/selftest")).expect("fixture dir");
    std::fs::copy(
        "fixtures/selftest/app.yaml",
        dir.path().join("fixtures/selftest/app.yaml"),
    )
    .expect("fixture");
    let reports = dir.path().join("reports");
    let mutate = || {
        let mut cmd = labcheck();
        cmd.arg("mutate")
            .arg(&lab)
            .arg("--report-dir")
            .arg(&reports);
        cmd
    };
    mutate().assert().code(1);
    let ids: Vec<String> = outcomes(&reports)
        .iter()
        .filter(|r| r["outcome"] == "missed")
        .map(|r| r["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids.len(), 2);
    let entries: String = ids
        .iter()
        .map(|id| {
            format!("[[equivalent]]\nid = \"{id}\"\nreason = \"the task names no replica count\"\n")
        })
        .collect();
    std::fs::write(dir.path().join("weak.mutants.toml"), entries).expect("write");
    mutate()
        .assert()
        .code(0)
        .stderr(predicate::str::contains("equivalent"))
        .stdout(predicate::str::contains("2 equivalent"))
        // Marked mutants are listed apart with their reason, never under the missed heading.
        .stdout(predicate::str::contains("Missed mutants (no check rejects").not())
        .stdout(predicate::str::contains("Missed, marked equivalent"))
        .stdout(predicate::str::contains("the task names no replica count"));
}

#[test]
fn a_learners_jq_program_is_mutated_and_every_wrong_program_is_caught() {
    let lab = "tests/labs/mutate/jq-answer.feature";
    let reports = tempfile::tempdir().expect("reports");
    labcheck()
        .args(["mutate", lab, "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("score 1.00"));
    let rows = outcomes(reports.path());
    let ops = |op: &str| -> Vec<&Value> { rows.iter().filter(|r| r["operator"] == op).collect() };
    for op in ["jq-stage", "jq-select", "jq-key", "jq-literal", "drop-flag"] {
        let made = ops(op);
        assert!(!made.is_empty(), "no {op} mutant: {rows:?}");
        assert!(made.iter().all(|r| r["outcome"] == "caught"), "{made:?}");
    }
    // The negated select and a changed literal are among them.
    let after = |r: &&Value| r["after"][0].as_str().unwrap_or_default().to_owned();
    assert!(
        ops("jq-select")
            .iter()
            .map(after)
            .any(|a| a.contains("| not)"))
    );
    assert!(
        ops("jq-literal")
            .iter()
            .map(after)
            .any(|a| a.contains("\"shoq\""))
    );
}

/// A git repository holding a copy of a lab, committed.
fn committed(lab: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("lab.feature");
    std::fs::copy(lab, &path).expect("copy the lab");
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "lab.feature"]);
    git(&["commit", "-qm", "lab"]);
    (dir, path)
}

fn listed_steps(lab: &std::path::Path, extra: &[&str]) -> std::collections::BTreeSet<String> {
    let out = labcheck()
        .args(["mutate", "--list"])
        .arg(lab)
        .args(extra)
        .output()
        .expect("labcheck runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(" step ").nth(1))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn in_diff_runs_only_the_mutants_a_change_can_affect() {
    let (dir, lab) = committed("tests/labs/mutate/two-steps.feature");
    let text = std::fs::read_to_string(&lab).expect("lab");
    // Nothing changed: nothing is selected, and nothing runs.
    labcheck()
        .args(["mutate", "--in-diff", "HEAD"])
        .arg(&lab)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("no mutant is selected"));
    // A change to the second step's script: its mutants only.
    std::fs::write(&lab, text.replace("echo second >", "echo second  >")).expect("edit");
    assert_eq!(
        listed_steps(&lab, &["--in-diff", "HEAD"]),
        ["2".to_owned()].into()
    );
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["mutate", "--in-diff", "HEAD", "--report-dir"])
        .arg(reports.path())
        .arg(&lab)
        .assert()
        .code(0);
    let rows = outcomes(reports.path());
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["step"] == 2), "{rows:?}");
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "caught" && r["kept"] == false)
    );
    // Run again: every outcome is kept from the first run, none runs.
    labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["mutate", "--in-diff", "HEAD", "--report-dir"])
        .arg(reports.path())
        .arg(&lab)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("0 mutants to run"))
        // The reference solution runs its last step only, from the first run's checkpoint.
        .stderr(predicate::str::contains(
            "the reference solution ran from the checkpoint of step 1",
        ));
    let again = outcomes(reports.path());
    assert_eq!(again.len(), rows.len());
    // A kept outcome did not run: it has no timing.
    assert!(
        again
            .iter()
            .all(|r| r["kept"] == true && r.get("start_secs").is_none()),
        "{again:?}"
    );
    let strip = |rs: &[Value]| -> Vec<Value> {
        rs.iter()
            .map(|r| {
                let mut r = r.clone();
                if let Some(o) = r.as_object_mut() {
                    for key in ["kept", "start_secs", "steps_secs"] {
                        o.remove(key);
                    }
                }
                r
            })
            .collect()
    };
    assert_eq!(strip(&again), strip(&rows));
    // A change to the second step's checks: the mutants of both steps.
    std::fs::write(&lab, text.replace("contain \"second\"", "contain \"sec\"")).expect("edit");
    assert_eq!(
        listed_steps(&lab, &["--in-diff", "HEAD"]),
        ["1".to_owned(), "2".to_owned()].into()
    );
    // A revision that does not exist is an error, not an empty diff.
    labcheck()
        .args(["mutate", "--list", "--in-diff", "no-such-revision"])
        .arg(&lab)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot take the diff since no-such-revision",
        ));
    drop(dir);
}

#[test]
fn one_mutant_reruns_by_its_id_and_missed_ones_get_a_skeleton_to_mark() {
    let reports = tempfile::tempdir().expect("reports");
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    labcheck()
        .env("LABCHECK_STATE_DIR", state.path())
        .args(["mutate", LAB, "--mutant", "ffe70ae13630", "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("1 mutants: 0 caught, 1 missed"));
    let rows = outcomes(reports.path());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "ffe70ae13630");
    // The skeleton names the missed mutant with an empty reason: as it is, it marks nothing.
    let skeleton =
        std::fs::read_to_string(reports.path().join("mutants/equivalents-skeleton.toml"))
            .expect("skeleton");
    assert!(skeleton.contains("id = \"ffe70ae13630\"\nmutant = \"scalar `replicas: 3` → `replicas: 4`\"\nreason = \"\""), "{skeleton}");
    // An id that names no mutant is refused before anything runs.
    labcheck()
        .args(["mutate", LAB, "--mutant", "000000000000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no mutant has the id 000000000000 (the lab has 8",
        ));
}

/// Every mutant's outcome (and the line that caught it) by id.
fn verdicts(rows: &[Value]) -> std::collections::BTreeMap<String, (Value, Value)> {
    rows.iter()
        .map(|r| {
            let id = r["id"].as_str().expect("id").to_owned();
            (id, (r["outcome"].clone(), r["line"].clone()))
        })
        .collect()
}

#[test]
fn mutants_on_lent_clusters_see_only_their_checkpoint_as_on_clusters_of_their_own() {
    const POOLED: &str = "tests/labs/mutate/pooled.feature";
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let run = |extra: &[&str]| {
        let reports = tempfile::tempdir().expect("reports");
        // One job: two clusters in the pool, so most mutants run on a cluster an earlier
        // mutant used.
        let out = labcheck()
            .env("LABCHECK_STATE_DIR", state.path())
            .args(["mutate", "--no-cache", "--jobs", "1", "--report-dir"])
            .arg(reports.path())
            .args(extra)
            .arg(POOLED)
            .assert()
            .code(0)
            .get_output()
            .clone();
        (
            outcomes(reports.path()),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (lent, stderr) = run(&[]);
    // Each mutant of step 2 leans on a cluster without an earlier mutant's namespace or
    // ConfigMap: every one is caught.
    assert_eq!(lent.len(), 8, "{lent:?}");
    assert!(lent.iter().all(|r| r["outcome"] == "caught"), "{lent:?}");
    let line = stderr
        .lines()
        .find(|l| l.contains("clusters:"))
        .unwrap_or_else(|| panic!("no line on the pool's clusters: {stderr}"));
    let resets: usize = line
        .split(", ")
        .find_map(|part| part.strip_suffix(" reset to a checkpoint"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of resets in {line:?}"));
    assert!(resets >= 3, "mutants did not run on reset clusters: {line}");
    // The same verdicts, line for line, as with a cluster started for each mutant.
    let (own, stderr) = run(&["--fresh-clusters"]);
    assert!(!stderr.contains("clusters:"), "{stderr}");
    assert_eq!(verdicts(&lent), verdicts(&own));
}
