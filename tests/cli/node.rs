//! The `@node` profile's real node with a hostile learner: Pods whose specs would reach beyond
//! the cell — `privileged: true`, an added `SYS_ADMIN`, a `hostPath` of `/` or of the host's
//! `/var/tmp` written to, `hostPID`, `hostIPC`, `seccompProfile: Unconfined`,
//! `procMount: Unmasked`, an unsafe sysctl, the host's disk as a block device, and
//! `kubectl debug node/…` — each refused with the reason in the Pod's events (or by the API
//! server), or made harmless (a `hostPath` write lands in the cell's own files); and an image
//! labcheck does not build, whose pull error names the image table. The host is
//! checked before and after: a root-owned file under `/var/tmp` that the Pods write to keeps its
//! content and metadata, no file appears where they aim, and nothing of the run — process,
//! control group, mount — is left after the lab passes, fails, or is ended by SIGTERM. A learner
//! who fills the node's disk gets the node's `DiskPressure` as the cell's harness error.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::mesh::{assert_nothing_left, finish};

/// The hostile lab: `@TARGET@` is the host file's name under `/var/tmp`.
const HOSTILE: &str = r#"@kubernetes @node
Feature: A hostile learner's Pods on a real node

  Scenario: Pods whose specs would reach beyond the cell
    When the learner runs:
      """
      pod() { kubectl apply -f - <<YAML
      apiVersion: v1
      kind: Pod
      metadata: {name: $1}
      spec:
        $3
        containers:
        - name: c
          image: busybox
          command: ["sh", "-c", "echo pwned-$1 > /host/@TARGET@; echo pwned-$1 > /host/@TARGET@-new; sleep 3600"]
          $2
      YAML
      }
      pod privileged 'securityContext: {privileged: true}' 'volumes: [{name: h, hostPath: {path: /var/tmp}}]'
      pod sysadmin 'securityContext: {capabilities: {add: [SYS_ADMIN]}}'
      pod rootfs 'volumeMounts: [{name: h, mountPath: /host}]' 'volumes: [{name: h, hostPath: {path: /}}]'
      pod vartmp 'volumeMounts: [{name: h, mountPath: /host}]' 'volumes: [{name: h, hostPath: {path: /var/tmp}}]'
      pod images 'volumeMounts: [{name: h, mountPath: /host}]' 'volumes: [{name: h, hostPath: {path: @IMAGES@}}]'
      pod hostpid '' 'hostPID: true'
      pod hostipc '' 'hostIPC: true'
      pod unconfined 'securityContext: {seccompProfile: {type: Unconfined}}'
      pod sysctl '' 'securityContext: {sysctls: [{name: kernel.panic, value: "0"}]}'
      pod disk 'volumeMounts: [{name: h, mountPath: /host}]' 'volumes: [{name: h, hostPath: {path: /dev/vda, type: BlockDevice}}]'
      kubectl debug node/labcheck-node --image=busybox -- sh -c 'echo pwned > /host/var/tmp/@TARGET@'
      kubectl run redis --image=redis:7
      pod unmasked 'securityContext: {procMount: Unmasked}'
      """
    Then the last command should fail
    And its output should contain "`hostUsers` must be false to use `Unmasked`"
    And the output of "kubectl get events --field-selector involvedObject.name=privileged -o jsonpath='{.items[*].message}'" should contain "labcheck: a container of this cell runs under a seccomp filter" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=sysadmin -o jsonpath='{.items[*].message}'" should contain "labcheck: no container of this cell runs with SYS_ADMIN" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=rootfs -o jsonpath='{.items[*].message}'" should contain "labcheck: a container of this cell binds none of its node's own directories: / is one of them" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=hostpid -o jsonpath='{.items[*].message}'" should contain "hostPID: true would share the node's" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=hostipc -o jsonpath='{.items[*].message}'" should contain "hostIPC: true would share the node's" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=unconfined -o jsonpath='{.items[*].message}'" should contain "seccompProfile: Unconfined" within 60 seconds
    And the output of "kubectl get pod sysctl -o jsonpath='{.status.reason}'" should contain "SysctlForbidden" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=disk -o jsonpath='{.items[*].message}'" should contain "is not a block device" within 60 seconds
    And the output of "kubectl get events --no-headers -o custom-columns=OBJ:.involvedObject.name,MSG:.message | grep ^node-debugger-" should contain "hostPID: true would share the node's" within 60 seconds
    And the output of "kubectl get events --field-selector involvedObject.name=redis -o jsonpath='{.items[*].message}'" should contain "labcheck builds no image docker.io/library/redis:7: the image table (src/images/table.rs) serves" within 60 seconds
    And the output of "kubectl get pod vartmp -o jsonpath='{.status.phase}'" should contain "Running" within 60 seconds
    And the output of "cat /var/tmp/@TARGET@" should contain "pwned-vartmp" within 30 seconds
    And the output of "kubectl get pod images -o jsonpath='{.status.phase}'" should contain "Running" within 60 seconds
"#;

/// Starts `labcheck run LAB` with a state directory of its own.
fn start(state: &Path, reports: &Path, lab: &Path) -> std::process::Child {
    crate::mesh::start(state, reports, &lab.display().to_string(), &[])
}

/// A file's content and metadata.
fn snapshot(path: &Path) -> (Vec<u8>, u32, u32, i64, i64) {
    let meta = std::fs::metadata(path).expect("the target");
    let content = std::fs::read(path).expect("the target");
    (content, meta.mode(), meta.uid(), meta.mtime(), meta.ctime())
}

#[test]
fn a_hostile_learners_pods_do_not_reach_the_host() {
    let name = format!("labcheck-node-{}-target", std::process::id());
    let target = PathBuf::from("/var/tmp").join(&name);
    let created = PathBuf::from("/var/tmp").join(format!("{name}-new"));
    std::fs::write(&target, "the host's own\n").expect("target");
    let _ = std::fs::remove_file(&created);
    let before = snapshot(&target);
    // The cache holds the images every cell's node starts from (attached read-only to it).
    let images = labcheck::toolchain::Toolchain::default_cache_dir().join("images");
    let in_images = images.join(&name);

    let labs = tempfile::tempdir().expect("labs");
    let lab = labs.path().join("hostile.feature");
    let text = HOSTILE
        .replace("@TARGET@", &name)
        .replace("@IMAGES@", &images.display().to_string());
    std::fs::write(&lab, text).expect("lab");
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let child = start(state.path(), reports.path(), &lab);
    let run = child.id();
    let (code, output) = finish(child);

    let after = snapshot(&target);
    let _ = std::fs::remove_file(&target);
    let new_file = created.exists();
    let _ = std::fs::remove_file(&created);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("1 passed, 0 failed"), "{output}");
    assert_eq!(before, after, "the host's file changed");
    assert!(!new_file, "a Pod made {} on the host", created.display());
    assert!(!in_images.exists(), "a Pod wrote into the image cache");
    assert_nothing_left(state.path(), run);
}

/// A lab whose Pods run when SIGTERM comes.
const RUNNING: &str = r#"@kubernetes @node
Feature: Pods running when the run ends

  Scenario: Two Deployments
    When the learner runs:
      """
      kubectl create deployment web --image=nginx --replicas=2
      kubectl rollout status deployment/web --timeout=120s
      touch /tmp/ready
      sleep 600
      """
    Then the last command should succeed
"#;

#[test]
fn sigterm_ends_a_real_node_with_its_containers_and_leaves_nothing() {
    let labs = tempfile::tempdir().expect("labs");
    let lab = labs.path().join("running.feature");
    std::fs::write(&lab, RUNNING).expect("lab");
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let child = start(state.path(), reports.path(), &lab);
    let run = child.id();
    // nginx's workers run in the run's cell: found by their command line and control group.
    let nginx = || -> Vec<u32> {
        crate::support::processes()
            .iter()
            .filter(|p| {
                p.cmdline().starts_with("nginx") && p.cgroup().contains(&format!("-{run}/"))
            })
            .map(|p| p.pid)
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(240);
    while nginx().len() < 2 {
        assert!(Instant::now() < deadline, "nginx never ran in the cell");
        std::thread::sleep(Duration::from_millis(200));
    }
    let running = nginx();
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(run as i32, libc::SIGTERM);
    }
    let (code, output) = finish(child);
    assert_eq!(code, Some(143), "{output}");
    assert_nothing_left(state.path(), run);
    let alive = crate::support::still_running(&running, Duration::from_secs(5));
    assert!(alive.is_empty(), "containers outlived the run: {alive:?}");
}

/// Runs `labcheck ARGS…` on `state` and returns its exit code and output (`input` on stdin).
fn labcheck(state: &Path, args: &[&str], input: &str) -> (Option<i32>, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("labcheck"))
        .env("LABCHECK_STATE_DIR", state)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("labcheck starts");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).expect("stdin");
    }
    finish(child)
}

#[test]
fn a_kept_real_node_pulls_after_its_run_and_down_leaves_nothing() {
    let state = tempfile::tempdir_in("/var/tmp").expect("state");
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/bench/node-pod.feature";
    let reports_dir = reports.path().display().to_string();
    let (code, output) = labcheck(
        state.path(),
        &["run", lab, "--keep", "--report-dir", &reports_dir],
        "",
    );
    assert_eq!(code, Some(0), "{output}");
    let (_, ps) = labcheck(state.path(), &["ps"], "");
    let cell = ps
        .lines()
        .find_map(|l| {
            l.split_whitespace()
                .next()
                .filter(|c| c.starts_with("node-pod-"))
        })
        .unwrap_or_else(|| panic!("no kept cell: {ps}"))
        .to_owned();
    // The run has ended: the cell's registry is the cell's own process, and serves a new pull
    // (the node holds busybox from its start: the Pod asks to pull it again).
    let script = "kubectl run late --image=busybox:1.36 --image-pull-policy=Always --command -- sleep 300\n\
                  kubectl wait --for=condition=Ready pod/late --timeout=90s\n\
                  kubectl get events --field-selector involvedObject.name=late -o jsonpath='{.items[*].message}'\n\
                  exit\n";
    let (code, shell) = labcheck(state.path(), &["shell", &cell], script);
    assert_eq!(code, Some(0), "{shell}");
    assert!(shell.contains("pod/late condition met"), "{shell}");
    assert!(
        shell.contains("Successfully pulled image \"busybox:1.36\""),
        "{shell}"
    );
    let (code, down) = labcheck(state.path(), &["down", "--all"], "");
    assert_eq!(code, Some(0), "{down}");
    let run: u32 = cell
        .rsplit('-')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a cell named after its run's pid: {cell}"));
    assert_nothing_left(state.path(), run);
}

/// A lab whose learner fills the disk the node's state lives on, then asks for a new Pod.
const FULL_DISK: &str = r#"@kubernetes @node
Feature: A node whose disk fills up

  Scenario: The disk holding the node fills
    When the learner runs:
      """
      kubectl create deployment web --image=nginx
      kubectl rollout status deployment/web --timeout=120s
      fallocate -l $(( $(df --output=avail -B1 "$HOME" | tail -1) - 40*1024*1024 )) "$HOME/fill"
      kubectl wait node/labcheck-node --for=condition=DiskPressure --timeout=120s
      """
    Then the last command should succeed

  Scenario: A new Pod
    When the learner runs:
      """
      kubectl run late --image=busybox -- sleep 3600
      """
    Then the output of "kubectl get pod late -o jsonpath='{.status.phase}'" should contain "Running" within 30 seconds
"#;

/// A small ext4 file system on a loop device, unmounted and deleted when dropped.
struct SmallDisk {
    image: PathBuf,
    mount: tempfile::TempDir,
}

impl SmallDisk {
    /// A file system of `gib` GiB, or why this machine cannot make one.
    fn new(gib: u64) -> Result<SmallDisk, String> {
        let run = |program: &str, args: &[&std::ffi::OsStr]| -> Result<(), String> {
            let out = std::process::Command::new(program)
                .args(args)
                .output()
                .map_err(|e| format!("{program}: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{program}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        };
        let mount = tempfile::tempdir_in("/var/tmp").map_err(|e| e.to_string())?;
        let image = mount.path().with_extension("img");
        let file = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        file.set_len(gib << 30).map_err(|e| e.to_string())?;
        let disk = SmallDisk { image, mount };
        let (image, dir) = (disk.image.as_os_str(), disk.mount.path().as_os_str());
        // Its inode tables and journal written now, not by the kernel in the background while
        // other tests' cells fsync on the machine's disk.
        let options = "lazy_itable_init=0,lazy_journal_init=0";
        let args = ["-q", "-m", "0", "-E", options].map(std::ffi::OsStr::new);
        run("mkfs.ext4", &[&args[..], &[image]].concat())?;
        run("mount", &["-o".as_ref(), "loop".as_ref(), image, dir])?;
        Ok(disk)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.mount.path())
            .status();
        let _ = std::fs::remove_file(&self.image);
    }
}

#[test]
fn a_cell_failing_on_a_full_disk_says_its_node_was_under_pressure() {
    let disk = match SmallDisk::new(4) {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("SKIPPED a full disk under a real node: no loop-mounted file system ({why})");
            return;
        }
    };
    let labs = tempfile::tempdir().expect("labs");
    let lab = labs.path().join("full-disk.feature");
    std::fs::write(&lab, FULL_DISK).expect("lab");
    let reports = tempfile::tempdir().expect("reports");
    // A directory of the small disk: its own mount point is the test's, not the run's.
    let state = disk.mount.path().join("state");
    std::fs::create_dir(&state).expect("state");
    let child = start(&state, reports.path(), &lab);
    let run = child.id();
    let (code, output) = finish(child);
    // The step's check failed, and the cell says why: a harness error, exit 2, not a lab's fail.
    assert_eq!(code, Some(2), "{output}");
    assert!(output.contains("1 passed, 1 failed"), "{output}");
    assert!(
        output.contains(
            "harness error: full-disk [-]: cluster (local): node labcheck-node has DiskPressure"
        ),
        "{output}"
    );
    assert_nothing_left(&state, run);
}
