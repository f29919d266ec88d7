//! A `@mesh` cell's Pods are run by the harness as processes of their own (pilot-agent, Envoy,
//! the echo app, and labcheck as the exec shim kwok runs), each driven by what the learner wrote;
//! they run in the cell's node, with no more power than a learner's command (README, "The
//! node"). These tests are the labs a hostile learner writes against them, with the host checked before
//! and after each run: a root-owned file under `/var/tmp` keeps its content, mode, owner, extended
//! attributes and times; no file appears at a host path the lab aims at; a secret in the run's
//! own state directory (hidden from cells) is not read; no process, control group or network
//! namespace of the run is left, after the run or after `down --all`; and what a cell shows does
//! not name the harness's host paths. The levers:
//!
//! - a Pod's `istio-proxy` volume whose mount path climbs out of the Pod's directory (`..`, and
//!   through a link the learner made in the cell), filled by the harness itself;
//! - `LD_PRELOAD` naming the learner's library in the injected proxy's environment (pilot-agent
//!   and Envoy load it);
//! - `LD_PRELOAD` added to the kwok `Exec` rule of a Pod (kwok's exec shim loads it at the next
//!   `kubectl exec`);
//! - an `EnvoyFilter` whose Lua code uses LuaJIT's `ffi` (Envoy runs it on a request);
//! - `clone3(CLONE_INTO_CGROUP)` into the cgroup v2 root, from a learner's command, from a
//!   command run by `kubectl exec`, and from the exec shim, in a kept cell ended by `down --all`;
//! - reading `/proc/self/mountinfo`, `/proc/1/cmdline` and `/var/lib/labcheck/state-dirs` from a
//!   learner's command and from `kubectl exec`.
//!
//! Each lab also proves its lever was pulled: the learner's code ran and its report (what it
//! tried, each attempt with its errno) reached the learner, inside the cell — by a TCP connection
//! to a listener of the learner's in the cell's network, by a file in the cell's `/tmp`, or as
//! the body of the answer to the learner's request. The learner's code is `pods/evil.c` (a library
//! or a program, compiled in the cell with the host's gcc) and `pods/filter.lua`.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// The learner's C code: a library whose constructor does the damage, or a program.
const EVIL_C: &str = include_str!("pods/evil.c");
/// The learner's Lua filter (`@…@` filled in).
const FILTER_LUA: &str = include_str!("pods/filter.lua");
/// The port of the learner's listener in the cell (the node's address, `10.244.255.1`, is the
/// cell's: a Pod's network reaches it through its default route).
const SINK_PORT: u16 = 17017;

/// One hostile lab, its run, and the host it is checked against.
struct Trial {
    /// The lever's letter: names its files and its survivors.
    lever: &'static str,
    labs: tempfile::TempDir,
    state: tempfile::TempDir,
    reports: tempfile::TempDir,
    /// `labcheck-pods-<test pid>`: every host path the lab aims at starts with it.
    name: String,
    /// The root-owned host file the lab tries to change.
    target: PathBuf,
    before: Snapshot,
    /// The secret in the state directory, and its content.
    secret: PathBuf,
    secret_text: String,
    /// What a process that left the cell's control group calls itself.
    tag: String,
    /// The network namespaces processes held before the run.
    netns_before: BTreeSet<String>,
}

/// A file as the host has it.
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
    xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    content: Vec<u8>,
}

fn snapshot(path: &Path) -> Result<Snapshot, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let content = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Snapshot {
        mode: meta.mode(),
        uid: meta.uid(),
        gid: meta.gid(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        xattrs: xattrs(path),
        content,
    })
}

/// A file's extended attributes, names and values.
fn xattrs(path: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let file = CString::new(path.as_os_str().as_bytes()).expect("a path without NUL");
    let mut names = vec![0u8; 1 << 16];
    // SAFETY: `file` is a NUL-terminated path and `names` a buffer of the length given.
    let n = unsafe { libc::llistxattr(file.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    names.truncate(usize::try_from(n).unwrap_or(0));
    names
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|name| {
            let attr = CString::new(name).expect("an attribute name without NUL");
            let mut value = vec![0u8; 1 << 16];
            // SAFETY: NUL-terminated path and name, a buffer of the length given.
            let m = unsafe {
                libc::lgetxattr(
                    file.as_ptr(),
                    attr.as_ptr(),
                    value.as_mut_ptr().cast(),
                    value.len(),
                )
            };
            value.truncate(usize::try_from(m).unwrap_or(0));
            (name.to_vec(), value)
        })
        .collect()
}

/// What a run said and how long it took.
struct Outcome {
    code: Option<i32>,
    output: String,
    /// The labcheck process's pid: its cells' control groups end with `-<pid>`.
    run: u32,
    took: Duration,
    /// What the learner's code reported, gathered before a kept cell was removed.
    evidence: String,
    /// The host paths the lab aims at (none existed before the run).
    tried: Vec<PathBuf>,
}

impl Trial {
    fn new(lever: &'static str) -> Trial {
        let pid = std::process::id();
        let name = format!("labcheck-pods-{pid}");
        // What the labs load or run from the learner's /root must not be a host file.
        for host in ["/root/evil.so", "/root/evil"] {
            assert!(
                !Path::new(host).exists(),
                "{host} exists on the host: a lab's fallback path would load it"
            );
        }
        let target = PathBuf::from(format!("/var/tmp/{name}-{lever}-target"));
        let _ = std::fs::remove_file(&target);
        std::fs::write(&target, format!("original target of {name}-{lever}\n")).expect("target");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644))
            .expect("chmod target");
        std::os::unix::fs::chown(&target, Some(0), Some(0)).expect("chown target");
        let before = snapshot(&target).expect("the target before");
        let state = tempfile::tempdir_in("/var/tmp").expect("state");
        let secret = state.path().join("labcheck-pods-secret");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let secret_text = format!("harness-secret-{pid}-{lever}-{nanos}");
        std::fs::write(&secret, format!("{secret_text}\n")).expect("secret");
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600))
            .expect("chmod secret");
        let mut tag = format!("lcp{pid}{lever}");
        tag.truncate(15);
        Trial {
            lever,
            labs: tempfile::tempdir().expect("labs"),
            state,
            reports: tempfile::tempdir().expect("reports"),
            name,
            target,
            before,
            secret,
            secret_text,
            tag,
            netns_before: network_namespaces(),
        }
    }

    /// The report file the learner's code writes for `lever` (`/tmp/…`: the host's today).
    fn report(&self, lever: &str) -> PathBuf {
        PathBuf::from(format!("/tmp/{}-{lever}.txt", self.name))
    }

    /// The file the learner's code creates for `lever` (under the host's `/var/tmp`).
    fn created(&self, lever: &str) -> PathBuf {
        PathBuf::from(format!("/var/tmp/{}-created-{lever}", self.name))
    }

    /// Fills `@KEY@` of a template with the trial's values.
    fn fill(&self, template: &str) -> String {
        template
            .replace("@EVIL_C@", EVIL_C)
            .replace("@TAG@", &self.tag)
            .replace("@TARGET@", &self.target.display().to_string())
            .replace("@SECRET@", &self.secret.display().to_string())
            .replace("@SECRET_TEXT@", &self.secret_text)
            .replace("@REPORT_PREFIX@", &format!("/tmp/{}-", self.name))
            .replace(
                "@CREATE_PREFIX@",
                &format!("/var/tmp/{}-created-", self.name),
            )
            .replace("@NAME@", &self.name)
            .replace("@LEVER@", self.lever)
            .replace("@PORT@", &SINK_PORT.to_string())
            .replace("@STATE@", &self.state.path().display().to_string())
            .replace("@REPORTS@", &self.reports.path().display().to_string())
    }

    /// Writes the lab (`@mesh`, one scenario) and returns its path.
    fn lab(&self, feature: &str, scenario: &str, script: &str, checks: &[&str]) -> String {
        let script = self.fill(script);
        let body: String = script
            .lines()
            .map(|l| {
                if l.is_empty() {
                    "\n".to_owned()
                } else {
                    format!("      {l}\n")
                }
            })
            .collect();
        let checks: String = checks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "    {} {}\n",
                    if i == 0 { "Then" } else { "And" },
                    self.fill(c)
                )
            })
            .collect();
        let text = format!(
            "@mesh\nFeature: {feature}\n\n  @timeout=300\n  Scenario: {scenario}\n    When the learner runs:\n      \"\"\"\n{body}      \"\"\"\n{checks}"
        );
        let path = self
            .labs
            .path()
            .join(format!("pods-{}.feature", self.lever));
        std::fs::write(&path, text).expect("write lab");
        path.display().to_string()
    }

    /// Runs `lab` on Istio 1.31 with `args`, to its end; `tried`, the host paths it aims at,
    /// must not exist before.
    fn run(&self, lab: &str, args: &[&str], tried: Vec<PathBuf>) -> Outcome {
        for path in &tried {
            assert!(
                std::fs::symlink_metadata(path).is_err(),
                "{} exists on the host before the run",
                path.display()
            );
        }
        let started = Instant::now();
        let child = Command::cargo_bin("labcheck")
            .expect("binary")
            .env("LABCHECK_STATE_DIR", self.state.path())
            .args(["run", lab, "--istio", "1.31"])
            .args(args)
            .arg("--report-dir")
            .arg(self.reports.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("labcheck starts");
        let run = child.id();
        let (code, output) = crate::mesh::finish(child);
        Outcome {
            code,
            output,
            run,
            took: started.elapsed(),
            evidence: String::new(),
            tried,
        }
    }

    /// `labcheck down --all` on the trial's state directory.
    fn down_all(&self) -> String {
        let out = Command::cargo_bin("labcheck")
            .expect("binary")
            .env("LABCHECK_STATE_DIR", self.state.path())
            .args(["down", "--all"])
            .output()
            .expect("labcheck down");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Checks the host after the run and cleans what the run left (survivors killed by pid,
    /// control groups removed, files the lab wrote at the paths it aims at removed, the target
    /// removed);
    /// then fails with every break found, or if the lab did not pass with `passed` steps.
    fn verdict(&self, outcome: &Outcome, passed: usize) {
        let mut breaks: Vec<String> = Vec::new();
        match snapshot(&self.target) {
            Ok(after) if after == self.before => {}
            Ok(after) => breaks.push(format!(
                "the host file {} changed: before {:?}, after {:?} (content {:?})",
                self.target.display(),
                brief(&self.before),
                brief(&after),
                String::from_utf8_lossy(&after.content)
            )),
            Err(e) => breaks.push(format!("the host file is gone: {e}")),
        }
        for path in &outcome.tried {
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                let what = if meta.is_dir() {
                    let entries: Vec<String> = std::fs::read_dir(path)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect();
                    format!("a directory holding {entries:?}")
                } else {
                    format!(
                        "a file of {} bytes, mode {:o}, starting {:?}",
                        meta.len(),
                        meta.mode(),
                        String::from_utf8_lossy(
                            &std::fs::read(path)
                                .unwrap_or_default()
                                .into_iter()
                                .take(300)
                                .collect::<Vec<u8>>()
                        )
                    )
                };
                breaks.push(format!(
                    "the lab wrote {} on the host: {what}",
                    path.display()
                ));
                if meta.is_dir() {
                    let _ = std::fs::remove_dir_all(path);
                } else {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let survivors = survivors(&self.tag, outcome.run);
        for (pid, what) in &survivors {
            let netns = std::fs::read_link(format!("/proc/{pid}/ns/net"))
                .map(|l| l.display().to_string())
                .unwrap_or_default();
            breaks.push(format!("process {pid} outlived the run: {what}"));
            if !netns.is_empty() && !self.netns_before.contains(&netns) {
                breaks.push(format!(
                    "the network namespace {netns} outlived the run, held by process {pid}"
                ));
            }
        }
        for (pid, _) in &survivors {
            // SAFETY: kill(2) on a process of this test's run, found above.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while survivors.iter().any(|(pid, _)| alive(*pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let left = leftovers(self.state.path(), outcome.run);
        breaks.extend(left.iter().map(|l| format!("the run left {l}")));
        remove_groups(outcome.run);
        let cells = std::fs::read_dir(self.state.path().join("cells"))
            .map(|d| d.count())
            .unwrap_or_default();
        if cells != 0 {
            breaks.push(format!("{cells} cell directories are left"));
        }
        let _ = std::fs::remove_file(&self.target);
        let summary = format!("{passed} passed, 0 failed");
        let lab_passed = outcome.code == Some(0) && outcome.output.contains(&summary);
        if breaks.is_empty() && lab_passed {
            return;
        }
        let mut evidence = [outcome.evidence.clone(), self.evidence()].join("\n");
        if evidence.trim().is_empty() {
            evidence = "(none found)".to_owned();
        }
        let breaks = if breaks.is_empty() {
            "no break of the host found".to_owned()
        } else {
            format!(
                "{} break(s) of the host:\n- {}",
                breaks.len(),
                breaks.join("\n- ")
            )
        };
        panic!(
            "lever {} ({} s): {breaks}\n\nthe lab {} (exit {:?}, wanted \"{summary}\")\n\nwhat the learner's code reported:\n{evidence}\n\nthe run's output (end):\n{}",
            self.lever,
            outcome.took.as_secs(),
            if lab_passed { "passed" } else { "did not pass" },
            outcome.code,
            tail(&without_transcript(&outcome.output), 4000),
        );
    }

    /// The reports the learner's code wrote, where the test can read them: the host's `/tmp`
    /// (removed once read) and the failed cell's files kept in the report directory; the
    /// mount tables left out.
    fn evidence(&self) -> String {
        let mut found = Vec::new();
        for lever in [self.lever, "e-plain", "e-exec"] {
            let path = self.report(lever);
            if let Ok(text) = std::fs::read_to_string(&path) {
                found.push(format!(
                    "== {} (on the host)\n{}",
                    path.display(),
                    short(&text)
                ));
                let _ = std::fs::remove_file(&path);
            }
        }
        let roots = [
            self.reports.path().to_owned(),
            self.state.path().join("cells"),
        ];
        for name in ["report.txt", "answer.txt"] {
            for path in roots.iter().flat_map(|r| files_named(r, name)) {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    found.push(format!("== {}\n{}", path.display(), short(&text)));
                }
            }
        }
        if found.is_empty() {
            String::new()
        } else {
            found.join("\n")
        }
    }
}

impl Drop for Trial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.target);
        for lever in [self.lever, "e-plain", "e-exec"] {
            let _ = std::fs::remove_file(self.report(lever));
        }
    }
}

/// Mode, owner and times of a snapshot, for a message.
fn brief(s: &Snapshot) -> String {
    format!(
        "mode {:o} owner {}:{} mtime {:?} ctime {:?} xattrs {:?} {} bytes",
        s.mode,
        s.uid,
        s.gid,
        s.mtime,
        s.ctime,
        s.xattrs
            .iter()
            .map(|(n, v)| format!(
                "{}={}",
                String::from_utf8_lossy(n),
                String::from_utf8_lossy(v)
            ))
            .collect::<Vec<_>>(),
        s.content.len()
    )
}

/// A report without its mount tables and control groups (long), at most 160 lines.
fn short(text: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        let line = line.trim_start_matches("[0 body] ");
        if line.starts_with("--- groups") {
            skipping = true;
            continue;
        }
        if line.starts_with("--- end groups") {
            skipping = false;
            continue;
        }
        if line.starts_with("--- mountinfo") {
            skipping = true;
            out.push("--- mountinfo (left out; its upperdir lines follow)".to_owned());
            continue;
        }
        if line.starts_with("--- end mountinfo") {
            skipping = false;
            continue;
        }
        if skipping {
            if let Some(at) = line.find("upperdir=") {
                out.push(format!("    {}", &line[at..]));
            }
            continue;
        }
        out.push(line.to_owned());
    }
    out.truncate(160);
    out.join("\n")
}

/// A run's output without the learner's script echoed in a failure's transcript.
fn without_transcript(output: &str) -> String {
    output
        .lines()
        .filter(|l| !l.trim_start().starts_with("│ $"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tail(text: &str, max: usize) -> &str {
    let mut at = text.len().saturating_sub(max);
    while !text.is_char_boundary(at) {
        at += 1;
    }
    &text[at..]
}

/// Every file called `name` under `root`.
fn files_named(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if e.file_name() == name {
                out.push(e.path());
            }
        }
    }
    out
}

/// Whether `pid` is a process that has not ended (a zombie has).
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, r)| r.split_whitespace().next())
        .is_some_and(|s| s != "Z" && s != "X")
}

/// Whether a `/proc/PID/cgroup` text puts the process in a cell of run `run`.
fn in_run(cgroup: &str, run: u32) -> bool {
    let suffix = format!("-{run}");
    cgroup
        .lines()
        .any(|l| l.contains("/labcheck/") && l.ends_with(&suffix))
}

/// Live processes of the run after it ended: those named `tag` (the learner's code that left
/// the cell's control group) and those still in one of the run's cells' groups.
fn survivors(tag: &str, run: u32) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let read = |f: &str| std::fs::read(e.path().join(f)).unwrap_or_default();
        let comm = String::from_utf8_lossy(&read("comm")).trim().to_owned();
        let cgroup = String::from_utf8_lossy(&read("cgroup")).into_owned();
        if (comm == tag || in_run(&cgroup, run)) && alive(pid) {
            let exe = std::fs::read_link(e.path().join("exe"))
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let groups = cgroup.trim().replace('\n', "; ");
            found.push((pid, format!("{comm} ({exe}), groups {groups}")));
        }
    }
    found
}

/// What a run left behind (processes, mounts of the state directory, control groups), as the
/// mesh tests find it.
fn leftovers(state: &Path, run: u32) -> Vec<String> {
    crate::mesh::leftovers(state, run)
}

/// The control groups of the run's cells, deepest first.
fn run_groups(run: u32) -> Vec<PathBuf> {
    let groups = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "8", "-type", "d", "-path"])
        .arg(format!("*/labcheck/*-{run}"))
        .output()
        .expect("find");
    let mut found: Vec<PathBuf> = String::from_utf8_lossy(&groups.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found
}

/// Removes the run's control groups (once their processes are gone).
fn remove_groups(run: u32) {
    for group in run_groups(run) {
        let _ = std::fs::remove_dir(&group);
    }
}

/// The network namespaces live processes are in.
fn network_namespaces() -> BTreeSet<String> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path().join("ns/net")).ok())
        .map(|l| l.display().to_string())
        .collect()
}

/// The learner writes the C code and compiles it: `/root/evil.so` (`so`) or the program
/// `/root/evil`, for `@LEVER@`, reporting to the listener on `@PORT@` as well as `/tmp`.
fn compile(program: bool) -> String {
    let (flags, out) = if program {
        ("-DPROGRAM", "/root/evil")
    } else {
        ("-shared -fPIC", "/root/evil.so")
    };
    format!(
        "cat > /root/evil.c <<'EVIL'\n@EVIL_C@EVIL\n\
         gcc {flags} -o {out} /root/evil.c -DTAG='\"@TAG@\"' -DTARGET='\"@TARGET@\"' \
         -DSECRET='\"@SECRET@\"' -DREPORT_PREFIX='\"@REPORT_PREFIX@\"' \
         -DCREATE_PREFIX='\"@CREATE_PREFIX@\"' -DLEVER='\"@LEVER@\"' -DSINK_PORT=@PORT@\n"
    )
}

/// The library's path as a hostile learner names it for a process outside the cell: the cell's
/// upper layer on the host if `/proc/self/mountinfo` shows it, and `/root/evil.so` (what a
/// process that sees the cell's files finds).
const LIBRARY_PATH: &str = r#"UPPER=$(grep -o 'upperdir=[^,]*' /proc/self/mountinfo | head -n 1 | cut -d= -f2-)
SO=/root/evil.so
[ -n "$UPPER" ] && SO="$UPPER/root/evil.so:/root/evil.so"
echo "LD_PRELOAD=$SO"
"#;

/// A listener of the learner's in the cell's network: what connects to `@PORT@` is appended to
/// `/root/sink.txt`. `$SINK` is its pid.
const LISTENER: &str = r#"/usr/bin/python3 - @PORT@ /root/sink.txt > /root/sink.log 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(16)
s.settimeout(0.5)
end = time.time() + 280
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.settimeout(5)
    data = b""
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    c.close()
    with open(sys.argv[2], "ab") as f:
        f.write(data)
PY
SINK=$!
sleep 0.5
"#;

/// Waits up to a minute for the report of `@LEVER@` (from the listener or `/tmp`), then stops the
/// listener and gathers both into `/root/report.txt`.
const GATHER: &str = r#"for i in $(seq 120); do
  grep -qs "^END lever=@LEVER@ " /root/sink.txt @REPORT_PREFIX@@LEVER@.txt && break
  sleep 0.5
done
sleep 2
kill $SINK
cat /root/sink.txt @REPORT_PREFIX@@LEVER@.txt > /root/report.txt 2>/dev/null
true
"#;

/// A Pod of the echo image (which the cell runs, so it has an `Exec` rule), not injected.
const ECHO_POD: &str = r#"kubectl create namespace evil
kubectl -n evil run web --image=gcr.io/istio-testing/app:latest
kubectl -n evil wait pod/web --for=condition=Ready --timeout=60s
"#;

/// Adds `LD_PRELOAD=$SO` to the Pod `web`'s kwok `Exec` rule (the cell makes it as the Pod is
/// created).
const PATCH_EXEC: &str = r#"for i in $(seq 50); do kubectl -n evil get execs.kwok.x-k8s.io web > /dev/null 2>&1 && break; sleep 0.2; done
kubectl -n evil patch execs.kwok.x-k8s.io web --type=json -p "[{\"op\": \"add\", \"path\": \"/spec/execs/0/local/envs/-\", \"value\": {\"name\": \"LD_PRELOAD\", \"value\": \"$SO\"}}]"
for i in $(seq 30); do
  kubectl -n evil exec web -- true >> /root/exec.txt 2>&1
  grep -qs "^END lever=@LEVER@ " /root/sink.txt && break
  sleep 1
done
"#;

#[test]
fn a_proxy_volumes_mount_path_cannot_climb_out_of_the_pods_directory() {
    let trial = Trial::new("a");
    let name = format!("{}-a", trial.name);
    let lab = trial.lab(
        "A Pod's volume mount paths climb out of the Pod's directory",
        "A Pod with an istio-proxy container mounts ConfigMaps at paths with .. and through a link",
        r#"UPPER=$(grep -o 'upperdir=[^,]*' /proc/self/mountinfo | head -n 1 | cut -d= -f2-)
UP=/../../../../../../../../../../../../../../../../..
ln -s /var/tmp /root/evil-link
kubectl create namespace evil
kubectl -n evil create configmap climb --from-literal=@NAME@-a-target=overwritten-by-a-configmap --from-literal=@NAME@-a-file=written-by-a-configmap
printf '\377\376binary' > /root/bin.dat
kubectl -n evil create configmap climb-bin --from-file=@NAME@-a-bin=/root/bin.dat
kubectl -n evil get configmap climb-bin -o jsonpath='{.binaryData}' > /root/binary-data.txt
kubectl apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: climb
  namespace: evil
spec:
  containers:
  - name: istio-proxy
    image: docker.io/istio/proxyv2:1.31.0
    volumeMounts:
    - name: data
      mountPath: "$UP/var/tmp"
    - name: binary
      mountPath: "$UP/var/tmp/@NAME@-a-bindir"
    - name: empty
      mountPath: "$UP/var/tmp/@NAME@-a-empty"
    - name: linked
      mountPath: "$UP$UPPER/root/evil-link/@NAME@-a-link"
  volumes:
  - name: data
    configMap:
      name: climb
  - name: binary
    configMap:
      name: climb-bin
  - name: empty
    emptyDir: {}
  - name: linked
    configMap:
      name: climb
YAML
kubectl -n evil wait pod/climb --for=jsonpath='{.status.phase}'=Running --timeout=60s
sleep 5
"#,
        &[
            r#"the query '[.items[] | select(.metadata.name == "climb") | .status.phase]' over the cluster's "pods" should equal ["Running"]"#,
            r#"the query '[.items[] | select(.metadata.name == "climb") | .spec.containers[0].volumeMounts[].mountPath | select(contains("/../"))] | length' over the cluster's "pods" should equal 4"#,
            r#"the file "/root/binary-data.txt" should contain "@NAME@-a-bin""#,
        ],
    );
    let tried: Vec<PathBuf> = ["file", "bin", "bindir", "empty", "link"]
        .iter()
        .map(|f| PathBuf::from(format!("/var/tmp/{name}-{f}")))
        .collect();
    let outcome = trial.run(&lab, &[], tried);
    trial.verdict(&outcome, 1);
}

#[test]
fn ld_preload_in_the_injected_proxys_environment_stays_in_the_cell() {
    let trial = Trial::new("b");
    let script = format!(
        "{}{LIBRARY_PATH}{LISTENER}{}",
        compile(false),
        r#"istioctl install -y > /root/install.txt 2>&1
kubectl create namespace evil
kubectl label namespace evil istio-injection=enabled
kubectl apply -f - <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: evil
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: gcr.io/istio-testing/app:latest
      - name: istio-proxy
        image: auto
        env:
        - name: LD_PRELOAD
          value: "$SO"
YAML
kubectl -n evil rollout status deployment/web --timeout=90s
"#
    ) + GATHER;
    let lab = trial.lab(
        "The learner's library in the injected proxy's LD_PRELOAD",
        "An injected Deployment declares istio-proxy with LD_PRELOAD",
        &script,
        &[
            r#"the file "/root/report.txt" should contain "END lever=b ""#,
            r#"the file "/root/report.txt" should match "BEGIN lever=b pid=[0-9]+ exe=[^ ]*(envoy|pilot-agent)""#,
            r#"the file "/root/report.txt" should contain "chmod 06777 @TARGET@: ""#,
            r#"the query '[.items[] | select(.metadata.namespace == "evil") | (.spec.initContainers // [])[], .spec.containers[] | select(.name == "istio-proxy") | .env[]? | select(.name == "LD_PRELOAD")] | length > 0' over the cluster's "pods" should equal true"#,
            r#"the file "/root/report.txt" should not contain "@SECRET_TEXT@""#,
        ],
    );
    let tried = vec![trial.report("b"), trial.created("b")];
    let outcome = trial.run(&lab, &[], tried);
    trial.verdict(&outcome, 1);
}

#[test]
fn ld_preload_in_a_pods_exec_rule_stays_in_the_cell() {
    let trial = Trial::new("c");
    let script = format!(
        "{}{LIBRARY_PATH}{LISTENER}{ECHO_POD}{PATCH_EXEC}{GATHER}",
        compile(false)
    );
    let lab = trial.lab(
        "The learner's library in a Pod's exec rule",
        "The learner adds LD_PRELOAD to the kwok Exec of a Pod and runs kubectl exec",
        &script,
        &[
            r#"the file "/root/report.txt" should contain "END lever=c ""#,
            r#"the file "/root/report.txt" should contain "chmod 06777 @TARGET@: ""#,
            r#"the query '[.items[] | select(.metadata.name == "web") | .spec.execs[].local.envs[] | select(.name == "LD_PRELOAD")] | length' over the cluster's "execs.kwok.x-k8s.io" should equal 1"#,
            r#"the file "/root/report.txt" should not contain "@SECRET_TEXT@""#,
        ],
    );
    let tried = vec![trial.report("c"), trial.created("c")];
    let outcome = trial.run(&lab, &[], tried);
    trial.verdict(&outcome, 1);
}

#[test]
fn an_envoy_filters_lua_ffi_stays_in_the_cell() {
    let trial = Trial::new("d");
    let lua: String = trial
        .fill(FILTER_LUA)
        .lines()
        .map(|l| format!("              {l}\n"))
        .collect();
    let script = r#"istioctl install -y > /root/install.txt 2>&1
kubectl create namespace evil
kubectl label namespace evil istio-injection=enabled
kubectl -n evil create deployment web --image=gcr.io/istio-testing/app:latest --port=8080
kubectl -n evil expose deployment web --port=80 --target-port=8080 --name=web
kubectl -n evil rollout status deployment/web --timeout=90s
kubectl apply -f - <<'YAML'
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: evil
  namespace: istio-system
spec:
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_OUTBOUND
      listener:
        filterChain:
          filter:
            name: envoy.filters.network.http_connection_manager
            subFilter:
              name: envoy.filters.http.router
    patch:
      operation: INSERT_BEFORE
      value:
        name: envoy.filters.http.lua
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
          default_source_code:
            inline_string: |
@LUA@YAML
IP=$(kubectl -n evil get service web -o jsonpath='{.spec.clusterIP}')
for i in $(seq 30); do
  kubectl -n evil exec deploy/web -- client --timeout 5s http://$IP:80/ > /root/answer.txt 2>&1
  grep -q "END lever=d" /root/answer.txt && break
  sleep 1
done
cat @REPORT_PREFIX@d.txt >> /root/answer.txt 2>/dev/null
true
"#
    .replace("@LUA@", &lua);
    let lab = trial.lab(
        "An EnvoyFilter's Lua code uses LuaJIT's ffi",
        "A Lua filter on the sidecars' outbound HTTP calls libc and reads files",
        &script,
        &[
            r#"the file "/root/answer.txt" should contain "END lever=d""#,
            r#"the file "/root/answer.txt" should match "BEGIN lever=d pid=[0-9]+ exe=[^ ]*envoy""#,
            r#"the file "/root/answer.txt" should contain "chmod 06777 @TARGET@: ""#,
            r#"the file "/root/answer.txt" should not contain "@SECRET_TEXT@""#,
        ],
    );
    let tried = vec![trial.report("d"), trial.created("d")];
    let outcome = trial.run(&lab, &[], tried);
    trial.verdict(&outcome, 1);
}

#[test]
fn no_process_leaves_the_cells_control_group_and_outlives_down_all() {
    let trial = Trial::new("e");
    let script = format!(
        "{}{}{LIBRARY_PATH}{}{LISTENER}{ECHO_POD}{}{PATCH_EXEC}{}",
        compile(true),
        compile(false).replace("cat > /root/evil.c <<'EVIL'\n@EVIL_C@EVIL\n", ""),
        "EVIL_LEVER=e-plain /root/evil\n",
        "kubectl -n evil exec web -- sh -c 'EVIL_LEVER=e-exec /root/evil'\n",
        r#"sleep 2
kill $SINK
cat @REPORT_PREFIX@e-plain.txt @REPORT_PREFIX@e-exec.txt /root/sink.txt > /root/report.txt 2>/dev/null
true
"#
    );
    let lab = trial.lab(
        "Processes of a cell try to leave its control group",
        "clone3 into every cgroup v2 directory from a command, kubectl exec and the exec shim",
        &script,
        &[
            r#"the file "/root/report.txt" should contain "END lever=e-plain ""#,
            r#"the file "/root/report.txt" should contain "END lever=e-exec ""#,
            r#"the file "/root/report.txt" should contain "END lever=e ""#,
            r#"the file "/root/report.txt" should match "clone3 into /[^:]*: ""#,
        ],
    );
    let tried: Vec<PathBuf> = ["e", "e-plain", "e-exec"]
        .iter()
        .flat_map(|l| [trial.report(l), trial.created(l)])
        .collect();
    let mut outcome = trial.run(&lab, &["--keep"], tried);
    // The kept cell ends with `down --all`: nothing of it may be left after that.
    outcome.evidence = trial.evidence();
    let said = trial.down_all();
    outcome.output = format!("{}\n(labcheck down --all:)\n{said}", outcome.output);
    trial.verdict(&outcome, 1);
}

#[test]
fn a_cell_shows_no_host_path_of_the_harness() {
    let trial = Trial::new("f");
    // A mount's root within its file system (the fourth field) is left out: a bind mount's names
    // its source — the cell's own `/tmp` and `/run/labcheck`, under its state directory — a place
    // the cell cannot reach, not a way in. Mount points and options are kept whole: the overlay's
    // layers and the hidden directories must not name a host path there.
    let script = format!(
        "{}{ECHO_POD}{}",
        r#"mkdir -p /root/info
cat > /root/info/show.sh <<'SH'
for f in /proc/self/mountinfo /proc/1/cmdline /var/lib/labcheck/state-dirs; do
  out=/root/info/$1$(echo $f | tr / _).txt
  case $f in
    */mountinfo) awk '{$4="(root)"; print}' $f > $out.raw 2> $out.err ;;
    *) cat $f > $out.raw 2> $out.err ;;
  esac || echo "unreadable: $(cat $out.err)" >> $out.raw
  tr '\0' ' ' < $out.raw > $out
done
SH
sh /root/info/show.sh shell
"#,
        r#"kubectl -n evil exec web -- sh /root/info/show.sh exec
true
"#
    );
    let mut checks: Vec<String> = Vec::new();
    for from in ["shell", "exec"] {
        let file = |f: &str| format!("/root/info/{from}{f}.txt");
        checks.push(format!(
            r#"the file "{}" should match "^[0-9]+ [0-9]+ [0-9]+:[0-9]+ ""#,
            file("_proc_self_mountinfo")
        ));
        for f in [
            "_proc_self_mountinfo",
            "_proc_1_cmdline",
            "_var_lib_labcheck_state-dirs",
        ] {
            checks.push(format!(r#"the file "{}" should not be empty"#, file(f)));
            checks.push(format!(
                r#"the file "{}" should not contain "@STATE@""#,
                file(f)
            ));
            checks.push(format!(
                r#"the file "{}" should not contain "@REPORTS@""#,
                file(f)
            ));
        }
    }
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    let lab = trial.lab(
        "What a cell shows of the harness",
        "The learner reads the mount table, PID 1's command line and the state directories",
        &script,
        &checks,
    );
    let mut outcome = trial.run(&lab, &[], Vec::new());
    // The lab stops at its first failing check: which of the files name which path.
    let mut named = Vec::new();
    for path in files_named_like(trial.reports.path(), "/files/root/info/") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (what, dir) in [
            ("state", trial.state.path()),
            ("report", trial.reports.path()),
        ] {
            let dir = dir.display().to_string();
            if let Some(line) = text.lines().find(|l| l.contains(&dir)) {
                named.push(format!(
                    "{} names the {what} directory: {}",
                    path.display(),
                    tail(line, 300)
                ));
            }
        }
    }
    outcome.evidence = named.join("\n");
    trial.verdict(&outcome, 1);
}

/// The files under `root` whose path contains `part`, but the `.raw` and `.err` copies.
fn files_named_like(root: &Path, part: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let text = path.display().to_string();
            if meta.is_dir() {
                stack.push(path);
            } else if text.contains(part) && text.ends_with(".txt") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
