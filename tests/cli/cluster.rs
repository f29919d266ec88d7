//! Clusters: an interrupted run leaves nothing behind and says so; the existing-cluster backend
//! is refused unless allowed, and works against a real local cluster started by the test.

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

use crate::support::processes_with;

#[test]
fn sigint_stops_every_process_and_reports_the_interruption() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    let mut child = std::process::Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/cluster/slow.feature", "--report-dir"])
        .arg(reports.path())
        .env("LABCHECK_STATE_DIR", state.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("labcheck runs");
    let started = Instant::now();
    while processes_with("labcheck-sigint-marker").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the learner command never started"
        );
        assert!(
            child.try_wait().expect("wait").is_none(),
            "labcheck ended before the command ran"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let cell_dir = state.path().display().to_string();
    assert!(
        !processes_with(&cell_dir).is_empty(),
        "etcd and kube-apiserver run from the cell"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    let interrupted = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            interrupted.elapsed() < Duration::from_secs(10),
            "labcheck did not stop within 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_ne!(status.code(), Some(0));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<String> = [
            processes_with(&cell_dir),
            processes_with("labcheck-sigint-marker"),
        ]
        .concat();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processes survived the interrupt: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out)
        .expect("read stdout");
    assert!(out.contains("The run was interrupted"), "{out}");
    let junit = std::fs::read_to_string(reports.path().join("junit.xml")).expect("junit written");
    assert!(junit.contains("interrupted"), "{junit}");
}

#[test]
fn existing_cluster_is_refused_without_the_flag() {
    let out = std::process::Command::cargo_bin("labcheck")
        .expect("binary")
        .args([
            "run",
            "tests/labs/cluster/existing.feature",
            "--cluster",
            "existing",
        ])
        .args(["--kubeconfig", "/nonexistent", "--context", "prod"])
        .output()
        .expect("labcheck runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--allow-existing-cluster") && stderr.contains("\"prod\""),
        "{stderr}"
    );
}

/// `labcheck grade LAB` against the cluster of `kubeconfig` (context `labcheck`).
async fn grade(lab: &str, kubeconfig: &Path) -> std::process::Output {
    tokio::process::Command::new(assert_cmd::cargo::cargo_bin("labcheck"))
        .args(["grade", lab, "--context", "labcheck", "--kubeconfig"])
        .arg(kubeconfig)
        .output()
        .await
        .expect("labcheck grade runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_cluster_runs_a_lab_against_a_local_cluster() {
    use labcheck::cluster::{Backend, CellEnv, Local, LocalTools};
    use labcheck::toolchain::{Toolchain, load_versions};

    let versions = load_versions(Path::new(".")).expect("istio-versions.toml");
    let tc = Toolchain::new(Toolchain::default_cache_dir()).with_versions(&versions);
    let tools = LocalTools {
        etcd: tc.etcd().await.expect("etcd").path,
        kube_apiserver: tc.kube_apiserver().await.expect("kube-apiserver").path,
    };
    let kubectl = tc.kubectl().await.expect("kubectl").path;
    let dir = tempfile::tempdir_in("/var/tmp").expect("cell dir");
    let options = labcheck::sandbox::SandboxOptions {
        isolate_network: true,
        ..Default::default()
    };
    let sandbox = labcheck::sandbox::Sandbox::create(dir.path(), options)
        .await
        .expect("sandbox");
    let env = CellEnv {
        sandbox: &sandbox,
        dir: dir.path().join("cluster"),
        kubeconfig: dir.path().join("kubeconfig"),
        name: "existing-test".into(),
        mesh: false,
        node: None,
    };
    std::fs::create_dir_all(&env.dir).expect("cluster dir");
    let mut cluster = Backend::Local(Local {
        tools,
        templates: None,
    })
    .start(&env)
    .await
    .expect("local cluster starts");
    // The forward on the host's loopback makes this cluster an "existing" one for another run.
    let host_kubeconfig = env.dir.join("host-kubeconfig");
    let path = format!(
        "{}:{}",
        kubectl
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("labcheck"))
        .args([
            "run",
            "tests/labs/cluster/existing.feature",
            "--cluster",
            "existing",
            "--context",
            "labcheck",
        ])
        .arg("--kubeconfig")
        .arg(&host_kubeconfig)
        .arg("--allow-existing-cluster")
        .env("PATH", path)
        .output()
        .await
        .expect("labcheck runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The same cluster as a learner's environment: grade the lab against it, checks only.
    let graded = grade("tests/labs/cluster/existing.feature", &host_kubeconfig).await;
    let report = String::from_utf8_lossy(&graded.stdout);
    assert_eq!(
        graded.status.code(),
        Some(0),
        "{report}{}",
        String::from_utf8_lossy(&graded.stderr)
    );
    assert!(report.contains("1 of 1 steps pass"), "{report}");
    // A lab whose step this cluster never saw fails that step.
    let not_done = grade("tests/labs/cluster/slow.feature", &host_kubeconfig).await;
    let report = String::from_utf8_lossy(&not_done.stdout);
    assert_eq!(not_done.status.code(), Some(1), "{report}");
    assert!(
        report.contains("✘ Step 1") && report.contains("0 of 1 steps pass"),
        "{report}"
    );
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(cluster.client.clone());
    let created = ns
        .get("existing-lab")
        .await
        .expect("the lab created its namespace in that cluster");
    assert_eq!(
        created
            .metadata
            .labels
            .unwrap_or_default()
            .get("purpose")
            .map(String::as_str),
        Some("test")
    );
    cluster.stop().await;
    sandbox.shutdown().await;
}
