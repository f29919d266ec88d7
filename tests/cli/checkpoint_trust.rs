//! Checkpoints are trusted only as written: one edited since (a file, `state.json`, `upper` or
//! `tmp` replaced by a link) is discarded with a line on stderr and the steps replay; a lab at
//! another path with other fixture contents never starts from another lab's checkpoint; runs
//! that share one state directory write, use and prune the same checkpoints at once without
//! failing each other.

use std::path::{Path, PathBuf};

use crate::author::Down;
use crate::checkpoint::{CARRY, RESUMED, checkpoints, repository, step3};

const DISCARDED: &str = "was discarded, not used";

/// The checkpoint directory of step `step`.
fn checkpoint_of(state: &Path, step: u64) -> PathBuf {
    std::fs::read_dir(state.join("checkpoints"))
        .expect("checkpoints")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p.join("state.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|s| s["step"] == step)
        })
        .unwrap_or_else(|| panic!("no checkpoint of step {step}"))
}

/// An edit of a checkpoint's directory.
type Tamper<'a> = Box<dyn Fn(&Path) + 'a>;

#[test]
fn a_tampered_checkpoint_is_discarded_and_rebuilt() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let (_repo, lab) = repository();
    let aside = tempfile::tempdir_in("/var/tmp").expect("aside");
    let first = step3(state.path(), &lab, &[]);
    assert!(!first.contains(RESUMED), "{first}");
    let tampers: [(&str, Tamper); 4] = [
        (
            "an edited file",
            Box::new(|c| {
                std::fs::write(c.join("upper/root/carry/notes.txt"), "one\ntwo\nthree\n")
                    .expect("edit")
            }),
        ),
        (
            "an edited state.json",
            Box::new(|c| {
                let text = std::fs::read_to_string(c.join("state.json")).expect("state");
                let edited = text.replace("\"/root/carry\"", "\"/tmp\"");
                assert_ne!(text, edited);
                std::fs::write(c.join("state.json"), edited).expect("edit")
            }),
        ),
        (
            "upper replaced by a link",
            Box::new(|c| {
                let moved = aside.path().join("upper");
                let _ = std::fs::remove_dir_all(&moved);
                std::fs::rename(c.join("upper"), &moved).expect("move");
                std::os::unix::fs::symlink(&moved, c.join("upper")).expect("link")
            }),
        ),
        (
            "tmp replaced by a link",
            Box::new(|c| {
                std::fs::remove_dir_all(c.join("tmp")).expect("remove");
                std::os::unix::fs::symlink("/etc", c.join("tmp")).expect("link")
            }),
        ),
    ];
    for (what, tamper) in tampers {
        tamper(&checkpoint_of(state.path(), 2));
        let out = step3(state.path(), &lab, &[]);
        assert!(!out.contains(RESUMED), "{what}: trusted\n{out}");
        assert!(out.contains(DISCARDED), "{what}: not said\n{out}");
        let again = step3(state.path(), &lab, &[]);
        assert!(again.contains(RESUMED), "{what}: not rebuilt\n{again}");
    }
}

#[test]
fn another_labs_checkpoint_is_never_used() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let (_a, lab_a) = repository();
    let (repo_b, lab_b) = repository();
    std::fs::write(repo_b.path().join("fixtures/words/a.txt"), "beta\n").expect("fixture");
    step3(state.path(), &lab_a, &[]);
    assert!(step3(state.path(), &lab_a, &[]).contains(RESUMED));
    // The same text at another path, with another fixture: its own steps run.
    let b = step3(state.path(), &lab_b, &[]);
    assert!(
        !b.contains(RESUMED),
        "lab B started from lab A's checkpoint\n{b}"
    );
    // The same text and fixture at another path: still its own.
    std::fs::write(repo_b.path().join("fixtures/words/a.txt"), "alpha\n").expect("fixture");
    let (_c, lab_c) = repository();
    let c = step3(state.path(), &lab_c, &[]);
    assert!(
        !c.contains(RESUMED),
        "lab C started from lab A's checkpoint\n{c}"
    );
}

#[test]
fn runs_sharing_a_state_directory_share_its_checkpoints_safely() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let _down = Down(state.path());
    let mut failures = Vec::new();
    for round in 0..8 {
        // Three runs write the same checkpoints at once (`--fresh`: every round); with a cap of
        // one byte (every other round) each prunes what another just wrote and is about to
        // restore.
        let cap = if round % 2 == 1 { "1" } else { "4GiB" };
        let runs: Vec<(tempfile::TempDir, std::process::Child)> = (0..3)
            .map(|_| {
                let reports = tempfile::tempdir().expect("reports");
                let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("labcheck"))
                    .env("LABCHECK_STATE_DIR", state.path())
                    .env("LABCHECK_CHECKPOINT_CAP", cap)
                    .args(["run", CARRY, "--fresh", "--report-dir"])
                    .arg(reports.path())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("labcheck");
                (reports, child)
            })
            .collect();
        for (_reports, child) in runs {
            let out = child.wait_with_output().expect("run");
            if out.status.code() != Some(0) {
                failures.push(format!(
                    "round {round}: {:?}\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let left = checkpoints(state.path());
    assert_eq!(left, Vec::<PathBuf>::new(), "over the cap once all ended");
}
