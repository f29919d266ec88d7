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
