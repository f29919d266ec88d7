//! The Istio matrix: a broken copy of a seed lab step fails on every version, and the HTML
//! report shows the failing check with its line in each version's column.

use assert_cmd::Command;

#[test]
fn broken_step_fails_on_every_version_with_its_line_in_the_html_report() {
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/broken/mesh-install-broken.feature";
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", lab, "--report-dir"])
        .arg(reports.path())
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("labcheck runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(reports.path().join("report.html")).expect("report.html");
    let line = std::fs::read_to_string(lab)
        .expect("lab")
        .lines()
        .position(|l| l.contains("manifest-kinds.txt\" に \"CustomResourceDefinition\""))
        .map(|i| i + 1)
        .expect("the broken step's check");
    let location = format!("{lab}:{line}");
    assert_eq!(
        html.matches(&format!("{location} ")).count(),
        2,
        "one failing entry per Istio version: {location}"
    );
    assert!(
        html.contains("istio 1.31") && html.contains("istio 1.30"),
        "columns per version"
    );
    assert!(
        html.contains("期待: 次を含むこと: &quot;CustomResourceDefinition&quot;"),
        "the failing check's message"
    );
    let junit = std::fs::read_to_string(reports.path().join("junit.xml")).expect("junit.xml");
    assert!(junit.contains("[istio 1.31]") && junit.contains("[istio 1.30]"));
    // The two versions render different manifests; their version strings alone are no difference.
    let summary = std::fs::read_to_string(reports.path().join("summary.md")).expect("summary.md");
    let section = summary
        .split("## What differs between Istio versions")
        .nth(1)
        .expect("a section on what differs between versions");
    assert!(
        section.contains("`/root/istio/manifest.yaml`: 1.31 → 1.30: +"),
        "{section}"
    );
    assert!(
        !section.contains("version.txt"),
        "only version strings differ there: {section}"
    );
    assert!(html.contains("What differs between Istio versions"));
    what_a_person_sees_in_chromium(&reports.path().join("report.html"), &location);
}

/// Opens the report in headless Chromium at the failing entry (the link a CI annotation would
/// give) and checks what is on the page then: the entry is open, with its file:line and the
/// failing check's expected and found. Skipped, and said so, where Chromium is not installed.
fn what_a_person_sees_in_chromium(report: &std::path::Path, location: &str) {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok()
        })
    else {
        eprintln!("SKIPPED: the report in Chromium — no chromium on PATH (.ci/run installs it)");
        return;
    };
    let html = std::fs::read_to_string(report).expect("report");
    let marker = format!("{location} ");
    let at = html.find(&marker).expect("the failing entry");
    let id_start = html[..at].rfind("<details id=\"").expect("an entry") + "<details id=\"".len();
    let id = &html[id_start..id_start + html[id_start..].find('"').expect("id end")];
    let profile = tempfile::tempdir().expect("profile");
    let url = format!("file://{}#{id}", report.display());
    let dom = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let open = format!("<details id=\"{id}\" open=\"\">");
    let start = dom
        .find(&open)
        .unwrap_or_else(|| panic!("the entry {id} is not open in Chromium:\n{dom}"));
    let end = start + dom[start..].find("</details>").expect("entry end");
    let entry = &dom[start..end];
    assert!(entry.contains(location), "{entry}");
    assert!(
        entry.contains("期待:") && entry.contains("実際:"),
        "{entry}"
    );
    let shot = report.with_file_name("report.png");
    let _ = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--window-size=1400,1800", &url])
        .output();
    if let Ok(dir) = std::env::var("LABCHECK_SCREENSHOT_DIR") {
        let _ = std::fs::copy(&shot, std::path::Path::new(&dir).join("report.png"));
    }
}

/// The `name` attributes of a run's JUnit elements of one kind, sorted.
fn junit_names(dir: &std::path::Path, element: &str) -> Vec<String> {
    let xml = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml");
    let mut names: Vec<String> = xml
        .split(&format!("<{element} "))
        .skip(1)
        .filter_map(|s| s.split("name=\"").nth(1))
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// The cells a run's JUnit report names (one suite per cell).
fn suites(dir: &std::path::Path) -> Vec<String> {
    junit_names(dir, "testsuite")
}

/// The test case names of a JUnit report, sorted.
fn test_cases(dir: &std::path::Path) -> Vec<String> {
    junit_names(dir, "testcase")
}

#[test]
fn shards_together_run_every_cell_once() {
    let run = |shard: Option<&str>| {
        let reports = tempfile::tempdir().expect("reports");
        let mut cmd = Command::cargo_bin("labcheck").expect("binary");
        cmd.args([
            "run",
            "tests/labs/sandbox",
            "tests/labs/twins",
            "tests/labs/checkpoint",
            "--no-checkpoints",
            "--report-dir",
        ])
        .arg(reports.path());
        if let Some(s) = shard {
            cmd.args(["--shard", s]);
        }
        let out = cmd.output().expect("labcheck runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names = suites(reports.path());
        let cases = test_cases(reports.path());
        (reports, (names, cases))
    };
    let (_, (all, all_cases)) = run(None);
    let ((dir_one, (one, one_cases)), (dir_two, (two, two_cases))) =
        (run(Some("1/2")), run(Some("2/2")));
    assert!(all.len() >= 2, "{all:?}");
    assert!(!one.is_empty() && !two.is_empty(), "{one:?} {two:?}");
    assert!(one.iter().all(|c| !two.contains(c)), "{one:?} {two:?}");
    let mut both: Vec<String> = one.into_iter().chain(two).collect();
    both.sort();
    assert_eq!(both, all);
    // Each step is one test case: in the full run and across the shards, no name twice (a
    // mistake cell reports its own step, never the steps it replays).
    let mut unique = all_cases.clone();
    unique.dedup();
    assert_eq!(unique, all_cases, "a test case twice in the full run");
    let mut both_cases: Vec<String> = one_cases.into_iter().chain(two_cases).collect();
    both_cases.sort();
    assert_eq!(both_cases, all_cases);
    // A merge job puts the shards' reports back together; overlapping shards are refused.
    let merged = tempfile::tempdir().expect("merged");
    Command::cargo_bin("labcheck")
        .expect("binary")
        .arg("merge")
        .args([dir_one.path(), dir_two.path()])
        .arg("--report-dir")
        .arg(merged.path())
        .assert()
        .code(0);
    assert_eq!(suites(merged.path()), all);
    Command::cargo_bin("labcheck")
        .expect("binary")
        .arg("merge")
        .args([dir_one.path(), dir_one.path()])
        .arg("--report-dir")
        .arg(merged.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("shards must not overlap"));
    for bad in ["3/2", "0/1", "x"] {
        Command::cargo_bin("labcheck")
            .expect("binary")
            .args(["run", "features/selftest", "--shard", bad])
            .assert()
            .code(2);
    }
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "features/selftest", "--shard", "99/99"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("shard 99/99 has no cells"));
}

#[test]
fn a_terminal_gets_a_live_display_and_a_log_plain_lines() {
    let reports = tempfile::tempdir().expect("reports");
    let bin = assert_cmd::cargo::cargo_bin("labcheck");
    let command = format!(
        "{} run tests/labs/sandbox --report-dir {}",
        bin.display(),
        reports.path().display()
    );
    // `script` gives the run a pseudo-terminal, as a person's shell would.
    let Ok(tty) = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
    else {
        eprintln!("SKIPPED: the live display — no `script` (util-linux) to give a terminal");
        return;
    };
    assert_eq!(tty.status.code(), Some(0));
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(shown.contains("cells 2/2"), "{shown}");
    assert!(shown.contains("\u{1b}["), "a live display redraws: {shown}");
    let log = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/sandbox", "--report-dir"])
        .arg(reports.path())
        .output()
        .expect("labcheck runs");
    let plain = String::from_utf8_lossy(&log.stderr);
    assert!(plain.contains("✔ alpha"), "{plain}");
    assert!(
        !plain.contains('\u{1b}'),
        "no terminal codes in a log: {plain}"
    );
}

#[test]
fn merge_refuses_records_that_name_paths_or_are_not_files() {
    let merged = tempfile::tempdir().expect("merged");
    let merge = |dir: &std::path::Path| {
        Command::cargo_bin("labcheck")
            .expect("binary")
            .arg("merge")
            .arg(dir)
            .arg("--report-dir")
            .arg(merged.path())
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .expect("labcheck merge")
    };
    // A real record whose lab id is made to climb out of the report directory.
    let climbing = tempfile::tempdir().expect("record");
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/sandbox/alpha.feature", "--report-dir"])
        .arg(climbing.path())
        .assert()
        .code(0);
    let path = climbing.path().join("record.json");
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("record")).expect("json");
    record["cells"][0]["id"]["lab"] = serde_json::json!("../x");
    std::fs::write(&path, record.to_string()).expect("write record");
    let out = merge(climbing.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("names a path, not a cell"), "{stderr}");
    assert!(!merged.path().parent().expect("parent").join("x").exists());
    // A record that is a device: refused at once, never read.
    let device = tempfile::tempdir().expect("record");
    std::os::unix::fs::symlink("/dev/zero", device.path().join("record.json")).expect("link");
    let out = merge(device.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}
