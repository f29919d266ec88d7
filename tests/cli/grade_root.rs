//! `grade --root DIR` treats a learner's copied tree as data: it reads only the regular files
//! under the root (a link out of it — to `/etc/shadow` — is a check error that shows nothing of
//! the host's file, a link to `/proc/kmsg` or a FIFO never hangs), and nothing in the tree runs: a
//! `bash` the learner put first on the PATH does not answer for the grader's command.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::author::labcheck;

const LAB: &str = r#"Feature: graded from a copied tree

  Scenario: the secret
    When the learner runs:
      """
      mkdir -p /root/lab && echo labcheck-never > /root/lab/shadow.txt
      """
    Then the file "/root/lab/shadow.txt" should contain "labcheck-never"

  Scenario: the kernel's log
    When the learner runs:
      """
      echo labcheck-never > /root/lab/kmsg.txt
      """
    Then the file "/root/lab/kmsg.txt" should contain "labcheck-never"

  Scenario: a FIFO
    When the learner runs:
      """
      echo labcheck-never > /root/lab/fifo.txt
      """
    Then the file "/root/lab/fifo.txt" should contain "labcheck-never"

  Scenario: the version
    When the learner runs:
      """
      echo real > /root/lab/version.txt
      """
    Then the file "/root/lab/version.txt" should equal the output of "echo real"
"#;

#[test]
fn grade_root_reads_only_the_trees_regular_files_and_runs_none_of_them() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let dir = tempfile::tempdir().expect("lab dir");
    let lab = dir.path().join("graded.feature");
    std::fs::write(&lab, LAB).expect("lab");
    let tree = dir.path().join("tree");
    let lab_dir = tree.join("root/lab");
    std::fs::create_dir_all(&lab_dir).expect("tree");
    std::os::unix::fs::symlink("/etc/shadow", lab_dir.join("shadow.txt")).expect("link");
    std::os::unix::fs::symlink("/proc/kmsg", lab_dir.join("kmsg.txt")).expect("link");
    nix::unistd::mkfifo(
        &lab_dir.join("fifo.txt"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .expect("fifo");
    // A typed answer, and a `bash` first on the PATH that prints it whatever it is asked.
    std::fs::write(lab_dir.join("version.txt"), "typed\n").expect("answer");
    let bin = tree.join("root/bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("bash"), "#!/bin/sh\necho typed\n").expect("bash");
    std::fs::set_permissions(bin.join("bash"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");

    let started = Instant::now();
    let out = labcheck(state.path())
        .env("PATH", "/root/bin:/usr/local/bin:/usr/bin:/bin")
        .timeout(Duration::from_secs(120))
        .args(["grade", "--format", "json", "--step", "4", "--root"])
        .arg(&tree)
        .arg(&lab)
        .output()
        .expect("grade");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(took < Duration::from_secs(60), "grading took {took:?}");
    let shadow = std::fs::read_to_string("/etc/shadow").expect("the host's shadow");
    let secret = shadow.lines().next().expect("a line");
    assert!(
        !stdout.contains(secret) && !stderr.contains(secret),
        "the host's /etc/shadow reached the grade: {stdout}"
    );
    let grade: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let verdicts: Vec<&str> = grade["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["verdict"].as_str().expect("verdict"))
        .collect();
    assert_eq!(
        verdicts,
        ["error", "error", "error", "failed"],
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("out of the learner's tree"), "{stdout}");
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
}
