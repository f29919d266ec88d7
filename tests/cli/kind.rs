//! The kind backend on this machine, opt-in (`LABCHECK_KIND=1`, with a Docker engine that
//! answers): a learner's privileged Pod is refused by the node's runtime policy while an
//! ordinary one runs, and after a pass, a failure and SIGTERM no kind cluster, container, network
//! or registry of the run is left; the learner's shell and a `hostNetwork` Pod reach the node,
//! never the machine.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{finish, processes, start};

/// Whether the kind tests run; says so when they do not.
fn enabled(test: &str) -> bool {
    let on = std::env::var_os("LABCHECK_KIND").is_some_and(|v| !v.is_empty() && v != "0");
    if !on {
        eprintln!("SKIPPED {test}: set LABCHECK_KIND=1 (with a Docker engine) to run it");
    }
    on
}

/// The Docker client the toolchain built (the kind backend's), else the one on PATH.
fn docker() -> std::path::PathBuf {
    let cache = std::env::var_os("LABCHECK_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_default()
                .join(".cache/labcheck")
        });
    let built = cache.join("tools/docker");
    std::fs::read_dir(&built)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path().join("docker"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| "docker".into())
}

/// What the engine holds of a lab's cells (their names start with `labcheck-<lab>`): kind's
/// node containers, networks, and the cells' registries among the machine's processes.
fn leftovers(lab: &str) -> Vec<String> {
    let prefix = format!("labcheck-{lab}");
    let list = |args: &[&str]| -> Vec<String> {
        let out = Command::new(docker())
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .expect("docker runs");
        assert!(out.status.success(), "docker {args:?} failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| format!("docker: {l}"))
            .collect()
    };
    let mut found = list(&["ps", "-a", "--format", "{{.Names}}"]);
    found.extend(list(&["network", "ls", "--format", "{{.Name}}"]));
    found.extend(
        processes()
            .iter()
            .map(|p| p.cmdline())
            .filter(|c| c.contains(" registry ") && c.contains(&format!("/{lab}-")))
            .map(|c| format!("process: {c}")),
    );
    found
}

fn run(lab: &str, state: &Path, reports: &Path) -> (Option<i32>, String) {
    let path = format!("tests/labs/kind/{lab}.feature");
    finish(start(state, reports, &path, &["--cluster", "kind"]))
}

#[test]
fn a_privileged_pod_is_refused_and_a_passed_lab_leaves_nothing() {
    if !enabled("a_privileged_pod_is_refused_and_a_passed_lab_leaves_nothing") {
        return;
    }
    let (state, reports) = (
        tempfile::tempdir().expect("state"),
        tempfile::tempdir().expect("reports"),
    );
    let (code, out) = run("refused", state.path(), reports.path());
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("cluster v1.35.4 (kind)"), "{out}");
    assert_eq!(leftovers("refused"), Vec::<String>::new());
}

#[test]
fn a_failed_lab_leaves_nothing() {
    if !enabled("a_failed_lab_leaves_nothing") {
        return;
    }
    let (state, reports) = (
        tempfile::tempdir().expect("state"),
        tempfile::tempdir().expect("reports"),
    );
    let (code, out) = run("fails", state.path(), reports.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("never-made"), "{out}");
    assert_eq!(leftovers("fails"), Vec::<String>::new());
}

#[test]
fn sigterm_leaves_no_cluster_network_or_registry() {
    if !enabled("sigterm_leaves_no_cluster_network_or_registry") {
        return;
    }
    let (state, reports) = (
        tempfile::tempdir().expect("state"),
        tempfile::tempdir().expect("reports"),
    );
    let child = start(
        state.path(),
        reports.path(),
        "tests/labs/kind/slow.feature",
        &["--cluster", "kind"],
    );
    // Once the learner's command runs, the cluster, its network and its registry exist.
    let deadline = Instant::now() + Duration::from_secs(400);
    let marker = || {
        processes()
            .iter()
            .any(|p| p.cmdline().trim() == "sleep 240" && p.cgroup().contains("labcheck/slow-"))
    };
    while !marker() {
        assert!(Instant::now() < deadline, "the learner's command never ran");
        std::thread::sleep(Duration::from_millis(500));
    }
    let during = leftovers("slow");
    assert!(
        during.iter().any(|l| l.starts_with("docker: "))
            && during.iter().any(|l| l.starts_with("process: ")),
        "the cell's cluster and registry while it runs: {during:?}"
    );
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let (code, out) = finish(child);
    assert_eq!(code, Some(143), "{out}");
    assert_eq!(leftovers("slow"), Vec::<String>::new(), "{out}");
}

#[test]
fn a_kept_kind_cell_keeps_its_cluster_until_down() {
    if !enabled("a_kept_kind_cell_keeps_its_cluster_until_down") {
        return;
    }
    let (state, reports) = (
        tempfile::tempdir().expect("state"),
        tempfile::tempdir().expect("reports"),
    );
    let (code, out) = finish(start(
        state.path(),
        reports.path(),
        "tests/labs/kind/kept.feature",
        &["--cluster", "kind", "--keep"],
    ));
    assert_eq!(code, Some(0), "{out}");
    let kept = leftovers("kept");
    assert!(
        kept.iter().any(|l| l.starts_with("docker: "))
            && kept.iter().any(|l| l.starts_with("process: ")),
        "a kept cell keeps its cluster and registry: {kept:?}"
    );
    crate::support::labcheck(state.path())
        .args(["down", "--all"])
        .assert()
        .success();
    assert_eq!(leftovers("kept"), Vec::<String>::new());
}

/// The machine's port the network lab tries to reach (`tests/labs/kind/network.feature`).
const MACHINE_PORT: u16 = 18080;

#[test]
fn the_learner_and_a_host_network_pod_reach_the_node_and_never_the_machine() {
    if !enabled("the_learner_and_a_host_network_pod_reach_the_node_and_never_the_machine") {
        return;
    }
    // The machine serves on every address while the lab runs, and counts who came.
    let listener = std::net::TcpListener::bind(("0.0.0.0", MACHINE_PORT)).expect("port 18080");
    listener.set_nonblocking(true).expect("nonblocking");
    let came = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = {
        let (came, done) = (came.clone(), done.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            use std::sync::atomic::Ordering;
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        came.fetch_add(1, Ordering::Relaxed);
                        let _ = stream
                            .write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nmachine\n");
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })
    };
    // The listener answers the machine itself: what the lab cannot reach is there.
    let mut local = std::net::TcpStream::connect(("127.0.0.1", MACHINE_PORT)).expect("listener");
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut local, &mut answer).expect("answer");
    assert!(answer.ends_with("machine\n"), "{answer}");
    let (state, reports) = (
        tempfile::tempdir().expect("state"),
        tempfile::tempdir().expect("reports"),
    );
    let (code, out) = run("network", state.path(), reports.path());
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().expect("listener thread");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        came.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "only this test's own connection reached the machine's port\n{out}"
    );
    assert_eq!(leftovers("network"), Vec::<String>::new());
}
