//! The sandbox: learner commands see the lab's absolute paths, the host's same paths are never
//! created or changed, and two cells writing the same path in parallel don't see each other.

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

const HOST_PATHS: &[&str] = &["/root/labcheck-isolation", "/opt/labcheck-isolation"];

fn snapshot(path: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let p = Path::new(path);
    if !p.exists() {
        return None;
    }
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(p)
        .ok()?
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn parallel_cells_write_the_same_paths_without_touching_the_host() {
    let before: Vec<_> = HOST_PATHS.iter().map(|p| snapshot(p)).collect();
    let reports = tempfile::tempdir().expect("temp dir");
    let mut child = std::process::Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/sandbox", "--jobs", "2", "--report-dir"])
        .arg(reports.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("labcheck runs");
    // During the run (each lab sleeps 2 s with its files written), the host stays as it was.
    let started = Instant::now();
    let status = loop {
        let now: Vec<_> = HOST_PATHS.iter().map(|p| snapshot(p)).collect();
        assert_eq!(now, before, "the host's lab paths changed during the run");
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run did not finish"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        status.code(),
        Some(0),
        "both isolation labs pass: each saw only its own file"
    );
    let after: Vec<_> = HOST_PATHS.iter().map(|p| snapshot(p)).collect();
    assert_eq!(after, before, "the host's lab paths changed after the run");
}

/// A script over the kernel's 128 KiB argument limit runs (it reaches bash as a file), and a lab
/// stored under /tmp places its fixtures (they are read on the host side).
#[test]
fn big_scripts_run_and_labs_under_tmp_use_fixtures() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("fixtures/big")).expect("fixture dir");
    std::fs::write(dir.path().join("fixtures/big/seed.txt"), "seed\n").expect("fixture");
    let mut script = String::new();
    for i in 0..3000 {
        script.push_str(&format!(
            "      echo \"line {i:05} of a script longer than the argument limit\" >> /root/labcheck-big/out.txt\n"
        ));
    }
    assert!(script.len() > 128 * 1024);
    let lab = format!(
        "Feature: big\n\n  Background:\n    Given the lab directory \"/root/labcheck-big\"\n    And the fixture \"fixtures/big\" is placed at \"/opt/labcheck-big\"\n\n  Scenario: many lines\n    When the learner runs:\n      \"\"\"\n      cp /opt/labcheck-big/seed.txt /root/labcheck-big/seed.txt\n{script}      \"\"\"\n    Then the file \"/root/labcheck-big/out.txt\" should have exactly 3000 lines\n    And the file \"/root/labcheck-big/seed.txt\" should contain \"seed\"\n"
    );
    let path = dir.path().join("big.feature");
    std::fs::write(&path, lab).expect("lab");
    let out = std::process::Command::cargo_bin("labcheck")
        .expect("binary")
        .arg("run")
        .arg(&path)
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!Path::new("/root/labcheck-big").exists());
}
