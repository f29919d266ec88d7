//! A cell is a sealed box, tried as a hostile learner would: writes all over the filesystem,
//! paths that climb out, processes left behind, `kill -9 -1`, links to the host's secrets, the
//! harness's state directory, memory and process limits, and a run without root.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;

/// A lab written to a temporary directory, run with a state and report directory of its own.
struct Trial {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Trial {
    fn new() -> Trial {
        Trial {
            dir: tempfile::tempdir().expect("lab dir"),
            state: tempfile::tempdir_in("/var/tmp").expect("state dir"),
        }
    }

    fn lab(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write lab");
        path
    }

    fn reports(&self) -> PathBuf {
        self.dir.path().join("reports")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::cargo_bin("labcheck")
            .expect("binary")
            .env("LABCHECK_STATE_DIR", self.state.path())
            .arg("run")
            .args(args)
            .arg("--report-dir")
            .arg(self.reports())
            .output()
            .expect("labcheck runs")
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

use crate::support::processes_with;

#[test]
fn writes_anywhere_leave_the_host_unchanged() {
    let trial = Trial::new();
    let tag = format!("labcheck-hostile-{}", std::process::id());
    let canary = trial.state.path().join("canary");
    std::fs::write(&canary, "host canary\n").expect("canary");
    // A host file the cell can see (through the overlay), and deletes.
    let visible = tempfile::NamedTempFile::new_in("/var/tmp").expect("visible canary");
    std::fs::write(visible.path(), "visible canary\n").expect("visible canary");
    let bashrc = std::fs::read("/root/.bashrc").ok();
    let written = [
        format!("/var/lib/{tag}/f"),
        format!("/var/tmp/{tag}"),
        format!("/usr/bin/{tag}"),
        format!("/usr/share/{tag}"),
        format!("/dev/shm/{tag}"),
        format!("/srv/{tag}/f"),
        format!("/{tag}"),
    ];
    let mut script = format!("mkdir -p /var/lib/{tag} /srv/{tag}\n");
    for path in &written {
        script.push_str(&format!("echo written > {path}\n"));
    }
    script.push_str("echo 'echo hostile' >> /root/.bashrc\n");
    script.push_str(&format!("rm -rf {}\n", trial.state.path().display()));
    script.push_str(&format!("rm -f {}\n", visible.path().display()));
    script.push_str(&format!(
        "test ! -e {} && echo gone > /root/{tag}.deleted\n",
        visible.path().display()
    ));
    script.push_str(&format!("echo done > /root/{tag}.done\n"));
    let indented: String = script.lines().map(|l| format!("      {l}\n")).collect();
    let lab = trial.lab(
        "writes.feature",
        &format!(
            "Feature: writes everywhere\n\n  Scenario: write the whole filesystem\n    When the learner runs:\n      \"\"\"\n{indented}      \"\"\"\n    Then the file \"/root/{tag}.done\" should contain \"done\"\n    And the file \"/usr/bin/{tag}\" should contain \"written\"\n    And the file \"/root/.bashrc\" should contain \"echo hostile\"\n    And the file \"/root/{tag}.deleted\" should contain \"gone\"\n"
        ),
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for path in &written {
        assert!(!Path::new(path).exists(), "{path} reached the host");
    }
    assert!(!Path::new(&format!("/var/lib/{tag}")).exists());
    assert!(!Path::new(&format!("/srv/{tag}")).exists());
    assert_eq!(
        std::fs::read("/root/.bashrc").ok(),
        bashrc,
        "/root/.bashrc changed"
    );
    assert_eq!(
        std::fs::read_to_string(&canary).ok().as_deref(),
        Some("host canary\n"),
        "the cell removed a host file (the state directory is hidden from it)"
    );
    assert_eq!(
        std::fs::read_to_string(visible.path()).ok().as_deref(),
        Some("visible canary\n"),
        "a host file the cell deleted is gone from the host"
    );
}

#[test]
fn paths_that_climb_out_are_rejected_with_their_line() {
    let trial = Trial::new();
    for (name, step) in [
        (
            "dir.feature",
            "Given the lab directory \"/root/../var/tmp/labcheck-climb\"",
        ),
        (
            "fixture.feature",
            "Given the fixture \"fixtures/istio\" is placed at \"/root/../var/tmp/labcheck-climb\"",
        ),
    ] {
        let lab = trial.lab(
            name,
            &format!(
                "Feature: climb\n\n  Background:\n    {step}\n\n  Scenario: write\n    When the learner runs:\n      \"\"\"\n      touch /root/x\n      \"\"\"\n    Then the file \"/root/x\" should exist\n"
            ),
        );
        let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
        let all = text(&out);
        assert_ne!(out.status.code(), Some(0), "{all}");
        assert!(all.contains(&format!("{name}:4")), "no file:line in: {all}");
        assert!(all.contains(".."), "{all}");
        assert!(!Path::new("/var/tmp/labcheck-climb").exists());
    }
}

#[test]
fn processes_left_behind_end_with_their_command_and_keep_its_output() {
    let trial = Trial::new();
    let mark = format!("{}", std::process::id() % 10_000);
    let lab = trial.lab(
        "leftovers.feature",
        &format!(
            r#"Feature: leftovers

  Scenario: leave processes behind
    When the learner runs:
      """
      setsid sleep 1000.{mark} &
      ( ( sleep 1001.{mark} & ) & )
      setsid sh -c 'sleep 1002.{mark}' &
      echo visible-output
      """
    Then its output should contain "visible-output"

  Scenario: nothing is left
    When the learner runs:
      """
      ps -eo args > /root/ps.txt
      """
    Then the file "/root/ps.txt" should not contain "{mark}"
    And the file "/root/ps.txt" should contain "ps -eo args"
"#
        ),
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        processes_with(&format!("1000.{mark}")).is_empty()
            && processes_with(&format!("1001.{mark}")).is_empty()
            && processes_with(&format!("1002.{mark}")).is_empty(),
        "a learner's process outlived its cell"
    );
}

#[test]
fn kill_everything_inside_a_cell_leaves_the_harness_and_other_cells_intact() {
    let trial = Trial::new();
    let host_ns = std::fs::read_link("/proc/self/ns/pid").expect("host pid namespace");
    let host_ns = host_ns.display();
    trial.lab(
        "killer.feature",
        &format!(
            r#"Feature: killer

  Background:
    Given the lab directory "/root/killer"

  Scenario: kill every process it can see
    When the learner runs:
      """
      if [ "$(readlink /proc/self/ns/pid)" = "{host_ns}" ]; then
        echo "the cell shares the host's PID namespace: not running kill -9 -1" >&2
        exit 99
      fi
      sleep 300 &
      kill -9 -1
      kill -9 1
      echo alive > /root/killer/one.txt
      """
    Then the file "/root/killer/one.txt" should contain "alive"

  Scenario: kill its parent
    When the learner runs:
      """
      echo before > /root/killer/two.txt
      kill -9 $PPID
      echo after >> /root/killer/two.txt
      """
    Then the file "/root/killer/two.txt" should contain "before"
"#
        ),
    );
    trial.lab(
        "bystander.feature",
        r#"Feature: bystander

  Scenario: work while another cell kills
    When the learner runs:
      """
      sleep 3
      echo still-here > /root/bystander.txt
      """
    Then the file "/root/bystander.txt" should contain "still-here"
"#,
    );
    let out = trial.run(&[
        trial.dir.path().to_str().expect("utf-8 path"),
        "--jobs",
        "2",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let summary = std::fs::read_to_string(trial.reports().join("summary.md")).expect("summary");
    assert!(summary.contains("bystander"), "{summary}");
    assert!(summary.contains("killer"), "{summary}");
}

#[test]
fn leftovers_of_a_failed_cell_hold_links_not_the_hosts_files() {
    let trial = Trial::new();
    let lab = trial.lab(
        "links.feature",
        r#"Feature: links

  Scenario: link to the host
    When the learner runs:
      """
      mkdir -p /root/links
      ln -s / /root/links/root
      ln -s /etc/shadow /root/links/shadow
      """
    Then the file "/root/links/never" should exist
"#,
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let files = trial.reports().join("links/files/root/links");
    for (name, target) in [("root", "/"), ("shadow", "/etc/shadow")] {
        let link = files.join(name);
        let meta = std::fs::symlink_metadata(&link).expect("leftover link");
        assert!(
            meta.file_type().is_symlink(),
            "{} is not a link",
            link.display()
        );
        assert_eq!(std::fs::read_link(&link).expect("link"), Path::new(target));
    }
}

#[test]
fn a_cell_sees_its_own_processes_and_name_and_not_the_state_directory() {
    let trial = Trial::new();
    let state = trial.state.path().display().to_string();
    std::fs::write(trial.state.path().join("secret"), "harness state\n").expect("state file");
    let lab = trial.lab(
        "sealed.feature",
        &format!(
            r#"Feature: sealed

  Background:
    Given the lab directory "/root/seen"

  Scenario: look around
    When the learner runs:
      """
      ls -A {state} > /root/seen/state.txt
      ps -e --no-headers | wc -l > /root/seen/ps.txt
      hostname > /root/seen/hostname.txt
      """
    Then the file "/root/seen/state.txt" should not contain "secret"
    And the file "/root/seen/state.txt" should not contain "cells"
    And the file "/root/seen/ps.txt" should match "^[1-6]$"
    And the file "/root/seen/hostname.txt" should match "^sealed-[0-9]+$"
"#
        ),
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn memory_process_and_cpu_limits_hold_and_peak_memory_is_reported() {
    let trial = Trial::new();
    let lab = trial.lab(
        "limits.feature",
        r#"@memory=96MiB @pids=48 @cpus=0.25
Feature: limits

  Scenario: too much memory
    When the learner runs:
      """
      python3 -c 'b = b"x" * (512 << 20); print(len(b))'
      """
    Then the last command should fail

  Scenario: too many processes
    When the learner runs:
      """
      python3 - > /root/forks.txt <<'PY'
      import os, time
      made = 0
      try:
          for _ in range(200):
              if os.fork() == 0:
                  time.sleep(30)
                  os._exit(0)
              made += 1
      except OSError as e:
          print("refused after", made, e.strerror)
      PY
      """
    Then the file "/root/forks.txt" should contain "Resource temporarily unavailable"

  Scenario: two processes spinning for two seconds get a quarter of a CPU
    When the learner runs:
      """
      python3 - > /root/cpu.txt <<'PY'
      import os, time
      for _ in range(2):
          if os.fork() == 0:
              end = time.monotonic() + 2
              while time.monotonic() < end:
                  pass
              os._exit(0)
      for _ in range(2):
          os.wait()
      t = os.times()
      print(f"{t.children_user + t.children_system:.2f}")
      PY
      """
    Then the file "/root/cpu.txt" should match "^0\.[0-9]+$"
"#,
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let summary = std::fs::read_to_string(trial.reports().join("summary.md")).expect("summary");
    assert!(summary.contains("peak memory"), "{summary}");
}

#[test]
fn without_root_labcheck_exits_2_and_says_why() {
    let trial = Trial::new();
    // An unprivileged user needs to reach the binary, the lab and directories it may write.
    let bin = trial.dir.path().join("labcheck");
    std::fs::copy(assert_cmd::cargo::cargo_bin("labcheck"), &bin).expect("copy binary");
    let lab = trial.lab(
        "plain.feature",
        "Feature: plain\n\n  Scenario: write\n    When the learner runs:\n      \"\"\"\n      echo hi > /root/plain.txt\n      \"\"\"\n    Then the file \"/root/plain.txt\" should contain \"hi\"\n",
    );
    for dir in [trial.dir.path(), trial.state.path()] {
        let _ = Command::new("chmod").arg("0777").arg(dir).status();
    }
    let _ = Command::new("chmod").arg("0755").arg(&bin).status();
    let _ = Command::new("chmod").arg("0644").arg(&lab).status();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&bin)
        .arg("run")
        .arg(&lab)
        .arg("--report-dir")
        .arg(trial.dir.path().join("nobody-reports"))
        .env("LABCHECK_STATE_DIR", trial.state.path().join("nobody"))
        .env("HOME", trial.dir.path())
        .output()
        .expect("setpriv runs");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("needs root"), "{all}");
}

#[test]
fn output_past_the_cap_is_marked_as_cut() {
    let trial = Trial::new();
    let lab = trial.lab(
        "loud.feature",
        r#"Feature: loud

  Scenario: print too much
    When the learner runs:
      """
      head -c 5000000 /dev/zero | tr '\0' 'x'
      echo
      echo END-MARKER
      """
    Then its output should contain "END-MARKER"
"#,
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("output cut"),
        "the failure does not say: {all}"
    );
    let transcript =
        std::fs::read_to_string(trial.reports().join("loud/transcript.txt")).unwrap_or_default();
    let found = std::fs::read_dir(trial.reports().join("loud"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .any(|t| t.contains("--- (output cut"))
        })
        .unwrap_or(false);
    assert!(
        found || transcript.contains("output cut"),
        "no transcript marks the cut"
    );
}

#[test]
fn a_learner_cannot_mount_make_devices_or_touch_the_kernel() {
    let trial = Trial::new();
    let lab = trial.lab(
        "root-powers.feature",
        r#"Feature: root powers

  Background:
    Given the lab directory "/root/powers"

  Scenario: try what only the host's root may do
    When the learner runs:
      """
      mount -t tmpfs x /mnt 2>/dev/null && echo mounted >> /root/powers/done.txt
      mknod /tmp/disk b 8 0 2>/dev/null && echo device >> /root/powers/done.txt
      echo 1 > /proc/sys/vm/drop_caches 2>/dev/null && echo kernel >> /root/powers/done.txt
      ip link add dummy0 type dummy 2>/dev/null && echo network >> /root/powers/done.txt
      grep ^CapBnd /proc/self/status > /root/powers/caps.txt
      echo tried >> /root/powers/done.txt
      """
    Then the file "/root/powers/done.txt" should have exactly 1 line
    And the file "/root/powers/done.txt" should contain "tried"
    And the file "/root/powers/caps.txt" should contain "00000000a00425fb"
"#,
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Runs a two-step lab whose second step fails: `--step 1` (the author's loop writes a
/// checkpoint), then the whole lab, whose failed cell leaves its leftovers.
fn checkpoint_then_leftovers(trial: &Trial, lab: &Path) {
    let lab = lab.to_str().expect("utf-8 path");
    let out = trial.run(&[lab, "--step", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let _ = Command::cargo_bin("labcheck")
        .expect("binary")
        .env("LABCHECK_STATE_DIR", trial.state.path())
        .args(["down", "--all"])
        .output();
    let out = trial.run(&[lab]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn set_id_bits_never_leave_a_cell_and_the_state_dir_is_its_owners() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let trial = Trial::new();
    let lab = trial.lab(
        "setid.feature",
        "Feature: setid\n\n  Scenario: leave a setuid copy of id\n    When the learner runs:\n      \"\"\"\n      mkdir -p /root/setid && cp /usr/bin/id /root/setid/id && chmod u+s,g+s /root/setid/id\n      \"\"\"\n    Then the file \"/root/setid/id\" should exist\n\n  Scenario: then fail\n    When the learner runs:\n      \"\"\"\n      echo no > /root/setid/out.txt\n      \"\"\"\n    Then the file \"/root/setid/out.txt\" should contain \"yes\"\n",
    );
    // A checkpoint after step 1 (the author's loop writes one), and a failed run's leftovers.
    checkpoint_then_leftovers(&trial, &lab);
    let copies: Vec<(PathBuf, u32)> = [trial.state.path().join("checkpoints"), trial.reports()]
        .iter()
        .flat_map(|root| files_named(root, "id"))
        .map(|path| {
            let mode = std::fs::symlink_metadata(&path)
                .expect("meta")
                .permissions()
                .mode();
            (path, mode)
        })
        .collect();
    assert!(
        copies.len() >= 2,
        "a checkpoint and the leftovers hold the copy: {copies:?}"
    );
    for (path, mode) in &copies {
        assert_eq!(
            mode & 0o6000,
            0,
            "{} keeps a set-id bit: {mode:o}",
            path.display()
        );
    }
    // A state directory labcheck makes is its owner's only, and another user's is refused.
    let fresh = trial.dir.path().join("fresh-state");
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .arg("ps")
        .env("LABCHECK_STATE_DIR", &fresh)
        .output()
        .expect("labcheck");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mode = std::fs::metadata(&fresh).expect("state dir made").mode();
    assert_eq!(mode & 0o777, 0o700, "state dir mode {mode:o}");
    let theirs = trial.dir.path().join("theirs");
    std::fs::create_dir(&theirs).expect("dir");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .arg("run")
        .arg(&lab)
        .env("LABCHECK_STATE_DIR", &theirs)
        .output()
        .expect("labcheck");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("belongs to user 65534"),
        "{}",
        text(&out)
    );
}

#[test]
fn file_capabilities_never_leave_a_cell() {
    let trial = Trial::new();
    // The learner keeps CAP_SETFCAP (a container's root has it): `setcap` works in the cell.
    let lab = trial.lab(
        "caps.feature",
        "Feature: caps\n\n  Scenario: leave copies of id with a capability\n    When the learner runs:\n      \"\"\"\n      mkdir -p /root/caps\n      cp /usr/bin/id /root/caps/id && /usr/sbin/setcap cap_net_raw+ep /root/caps/id\n      cp /usr/bin/id /tmp/id && /usr/sbin/setcap cap_net_raw+ep /tmp/id\n      /usr/sbin/getcap /root/caps/id /tmp/id > /root/caps/getcap.txt\n      \"\"\"\n    Then the file \"/root/caps/getcap.txt\" should contain \"/root/caps/id cap_net_raw=ep\"\n    And the file \"/root/caps/getcap.txt\" should contain \"/tmp/id cap_net_raw=ep\"\n\n  Scenario: then fail\n    When the learner runs:\n      \"\"\"\n      echo no > /root/caps/out.txt\n      \"\"\"\n    Then the file \"/root/caps/out.txt\" should contain \"yes\"\n",
    );
    // A checkpoint after step 1, and a failed run's leftovers.
    checkpoint_then_leftovers(&trial, &lab);
    let checkpoints = trial.state.path().join("checkpoints");
    let copies: Vec<PathBuf> = [&checkpoints, &trial.reports()]
        .into_iter()
        .flat_map(|root| files_named(root, "id"))
        .collect();
    assert!(
        copies.len() >= 3,
        "the checkpoint (/root and /tmp) and the leftovers hold the copies: {copies:?}"
    );
    let getcap = Command::new("/usr/sbin/getcap")
        .arg("-r")
        .arg(&checkpoints)
        .arg(trial.reports())
        .output()
        .expect("getcap");
    assert_eq!(
        String::from_utf8_lossy(&getcap.stdout).trim(),
        "",
        "files with capabilities left the cell"
    );
}

/// Every file called `name` under `root`.
fn files_named(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let meta = std::fs::symlink_metadata(e.path()).expect("meta");
            if meta.is_dir() {
                stack.push(e.path());
            } else if e.file_name() == name {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn down_all_says_what_it_removes_and_leaves_other_users_cells() {
    let trial = Trial::new();
    let labcheck = || {
        let mut cmd = Command::cargo_bin("labcheck").expect("binary");
        cmd.env("LABCHECK_STATE_DIR", trial.state.path());
        cmd
    };
    let lab = "features/selftest/files.feature";
    for _ in 0..2 {
        let out = trial.run(&[lab, "--step", "1"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let cells_dir = trial.state.path().join("cells");
    let mut cells: Vec<PathBuf> = std::fs::read_dir(&cells_dir)
        .expect("cells")
        .flatten()
        .map(|e| e.path())
        .collect();
    cells.sort();
    assert_eq!(cells.len(), 2, "{cells:?}");
    // One cell's record belongs to another user; a planted record names a directory elsewhere.
    std::os::unix::fs::chown(cells[1].join("cell.json"), Some(65534), Some(65534)).expect("chown");
    let victim = trial.dir.path().join("victim");
    std::fs::create_dir(&victim).expect("victim");
    let planted = cells_dir.join("planted");
    std::fs::create_dir(&planted).expect("planted");
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cells[0].join("cell.json")).expect("record"))
            .expect("json");
    record["dir"] = serde_json::json!(victim);
    record["name"] = serde_json::json!("planted");
    std::fs::write(planted.join("cell.json"), record.to_string()).expect("plant");
    let name = |p: &Path| p.file_name().expect("name").to_string_lossy().into_owned();

    let out = labcheck().args(["down", "--all"]).output().expect("down");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("removed 1 kept cell(s): {}", name(&cells[0]))),
        "{said}"
    );
    assert!(said.contains("belongs to user 65534"), "{said}");
    assert!(!cells[0].exists() && cells[1].exists(), "{said}");
    assert!(
        victim.exists(),
        "a planted record made down remove {victim:?}"
    );

    let out = labcheck()
        .args(["clean", "--everyone"])
        .output()
        .expect("clean");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("removed 1 kept cell(s): {}", name(&cells[1]))),
        "{said}"
    );
    assert!(said.contains("checkpoint(s)"), "{said}");
    assert!(!cells[1].exists() && victim.exists(), "{said}");
}

#[test]
fn a_removed_workdir_or_start_directory_is_no_harness_error() {
    let trial = Trial::new();
    // The learner removes everything under /root, the lab directory (the workdir) with it; the
    // next command starts at `/` and the next correct step passes.
    let lab = trial.lab(
        "wipe.feature",
        "Feature: wipe\n\n  Background:\n    Given the lab directory \"/root/lab\"\n\n  @no-discrimination\n  Scenario: wipe /root\n    When the learner runs:\n      \"\"\"\n      echo x > /root/lab/a.txt\n      rm -rf /root/*\n      \"\"\"\n    Then the file \"/root/lab/a.txt\" should not exist\n\n  Scenario: write again\n    When the learner runs:\n      \"\"\"\n      mkdir -p /root/lab && echo y > /root/lab/b.txt\n      \"\"\"\n    Then the file \"/root/lab/b.txt\" should contain \"y\"\n",
    );
    let out = trial.run(&[lab.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // labcheck started from a directory that is removed while it runs.
    let slow = trial.lab(
        "slow.feature",
        "Feature: slow\n\n  Scenario: wait\n    When the learner runs:\n      \"\"\"\n      sleep 2; mkdir -p /root/slow && echo one > /root/slow/one.txt\n      \"\"\"\n    Then the file \"/root/slow/one.txt\" should contain \"one\"\n",
    );
    let start = trial.dir.path().join("start");
    std::fs::create_dir(&start).expect("start dir");
    let child = Command::cargo_bin("labcheck")
        .expect("binary")
        .current_dir(&start)
        .env("LABCHECK_STATE_DIR", trial.state.path())
        .arg("run")
        .arg(&slow)
        .arg("--report-dir")
        .arg(trial.reports())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("labcheck");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    std::fs::remove_dir(&start).expect("remove the start directory");
    let out = child.wait_with_output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn no_cell_sees_another_state_directory() {
    let (a, b) = (Trial::new(), Trial::new());
    let lab = "features/selftest/files.feature";
    // A cell kept in state directory A, made before B is ever used.
    let out = a.run(&[lab, "--step", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let kept: Vec<String> = std::fs::read_dir(a.state.path().join("cells"))
        .expect("cells")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let labcheck = |state: &Path| {
        let mut cmd = Command::cargo_bin("labcheck").expect("binary");
        cmd.env("LABCHECK_STATE_DIR", state);
        cmd
    };
    let _down = crate::author::Down(a.state.path());
    // B comes into use afterwards, with a file in it a cell must not read.
    let out = labcheck(b.state.path()).arg("ps").output().expect("ps");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::create_dir_all(b.state.path().join("cells")).expect("cells");
    std::fs::write(b.state.path().join("cells/secret-of-b"), "b\n").expect("secret");
    // A's running cell does not see B's.
    let mut shell = labcheck(a.state.path())
        .args(["shell", &kept[0]])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("shell");
    {
        use std::io::Write;
        let script = format!("ls -A {}/cells; echo listed\n", b.state.path().display());
        let mut stdin = shell.stdin.take().expect("stdin");
        stdin.write_all(script.as_bytes()).expect("script");
    }
    let out = shell.wait_with_output().expect("shell ends");
    let seen = text(&out);
    assert!(seen.contains("listed"), "{seen}");
    assert!(
        !seen.contains("secret-of-b"),
        "A's cell reads B's state: {seen}"
    );
    // And B's cells do not see A's.
    let a_cells = a.state.path().join("cells").display().to_string();
    let look = b.lab(
        "look.feature",
        &format!(
            "Feature: look\n\n  Background:\n    Given the lab directory \"/root/look\"\n\n  Scenario: look at A\n    When the learner runs:\n      \"\"\"\n      ls -A {a_cells} > /root/look/a.txt; cat {a_cells}/*/cell.json >> /root/look/a.txt; echo end >> /root/look/a.txt\n      \"\"\"\n    Then the file \"/root/look/a.txt\" should contain \"end\"\n    And the file \"/root/look/a.txt\" should not contain \"{}\"\n",
            kept[0]
        ),
    );
    let out = b.run(&[look.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
