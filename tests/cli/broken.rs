//! Broken labs are caught: each fails for its intended reason, naming the feature file and line,
//! with a non-zero exit.

use assert_cmd::Command;
use predicates::prelude::*;

fn run(lab: &str) -> assert_cmd::assert::Assert {
    let reports = tempfile::tempdir().expect("temp dir");
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args([
            "run",
            &format!("tests/labs/broken/{lab}.feature"),
            "--report-dir",
        ])
        .arg(reports.path())
        .timeout(std::time::Duration::from_secs(60))
        .assert()
}

#[test]
fn wrong_answer_fails_at_its_check_and_stops_the_lab() {
    run("wrong-answer")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/wrong-answer.feature:8",
        ))
        .stderr(predicate::str::contains(
            "expected: a line containing \"hello\"",
        ))
        .stderr(predicate::str::contains("good bye"))
        .stderr(predicate::str::contains(
            "2. Never reached (not run: an earlier step failed)",
        ));
}

#[test]
fn check_that_already_passes_before_its_step_is_rejected() {
    run("already-passes")
        .code(1)
        .stderr(predicate::str::contains(
            "these checks already pass before the step",
        ))
        .stderr(predicate::str::contains(
            "tests/labs/broken/already-passes.feature:7",
        ));
}

#[test]
fn hung_command_times_out_and_leaves_no_process_of_its_group() {
    run("hung")
        .code(1)
        .stderr(predicate::str::contains("tests/labs/broken/hung.feature:4"))
        .stderr(predicate::str::contains("the command timed out after 2s"))
        .stderr(predicate::str::contains("started"));
    let survivors = crate::support::processes_with("labcheck-hung-marker");
    assert!(
        survivors.is_empty(),
        "processes of the timed-out group survived: {survivors:?}"
    );
}

#[test]
fn undefined_step_is_reported_with_the_nearest_phrase() {
    run("undefined-step")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/undefined-step.feature:7:5: undefined step",
        ))
        .stderr(predicate::str::contains(
            "nearest known phrase is: the file \"/root/lab/a.txt\" should exist",
        ));
}

#[test]
fn full_width_colon_is_located() {
    run("fullwidth-colon")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/fullwidth-colon.feature:3:7: full-width colon",
        ));
}

#[test]
fn malformed_json_artifact_says_where_it_breaks() {
    run("malformed-json")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/malformed-json.feature:8",
        ))
        .stderr(predicate::str::contains("invalid JSON at line 3"));
}

#[test]
fn missing_file_is_reported_in_the_labs_language() {
    run("missing-file")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/missing-file.feature:9",
        ))
        .stderr(predicate::str::contains("ファイルが存在しない"));
}

#[test]
fn lint_reports_every_broken_lab_without_running_anything() {
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["lint", "tests/labs/broken"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("fullwidth-colon.feature:3:7"))
        .stderr(predicate::str::contains("undefined-step.feature:7:5"));
}

#[test]
fn bad_flag_and_missing_file_are_harness_errors() {
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "--jobs", "x"])
        .assert()
        .code(2);
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/no-such.feature"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("tests/labs/no-such.feature"));
}

#[test]
fn tag_expressions_select_scenarios_and_bad_ones_are_refused() {
    let reports = tempfile::tempdir().expect("temp dir");
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args([
            "run",
            "features/selftest/files.feature",
            "--tags",
            "not @timeout=20",
            "--report-dir",
        ])
        .arg(reports.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3 passed, 0 failed, 0 skipped"))
        .stdout(predicate::str::contains(
            "| 4. A search that finds nothing fails | · |",
        ));
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "features/selftest/files.feature", "--tags", "@@@"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid tag expression"));
}

#[test]
fn a_check_error_in_a_mistake_is_a_harness_error_not_a_rejection() {
    run("mistake-check-error")
        .code(2)
        .stderr(predicate::str::contains(
            "tests/labs/broken/mistake-check-error.feature:19",
        ))
        .stderr(predicate::str::contains("check error: jq query"))
        .stderr(predicate::str::contains("cannot"));
}

#[test]
fn a_mistake_named_by_a_check_that_does_not_compile_fails_the_run() {
    run("mistake-jq-syntax")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/mistake-jq-syntax.feature:9:",
        ))
        .stderr(predicate::str::contains(
            "tests/labs/broken/mistake-jq-syntax.feature:20:",
        ))
        .stderr(predicate::str::contains("invalid jq query \".mode |\""));
}

#[test]
fn a_fifo_where_a_file_should_be_is_a_check_error_and_does_not_hang() {
    run("fifo")
        .code(2)
        .stderr(predicate::str::contains(
            "tests/labs/broken/fifo.feature:10",
        ))
        .stderr(predicate::str::contains("a FIFO, not a regular file"));
}

#[test]
fn a_link_into_the_kernels_files_is_a_check_error_at_once() {
    for (lab, line) in [("kernel-link", 12), ("kernel-link-device", 10)] {
        let started = std::time::Instant::now();
        run(lab)
            .code(2)
            .stderr(predicate::str::contains(format!(
                "tests/labs/broken/{lab}.feature:{line}"
            )))
            .stderr(predicate::str::contains(
                "a check does not follow links into the kernel's files",
            ));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{lab} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_jq_query_past_its_stack_or_memory_is_a_check_error_naming_the_bound() {
    for (lab, line, bound) in [
        ("jq-deep", 11, "went past its stack of 64 MiB"),
        ("jq-recursive", 11, "went past its stack of 64 MiB"),
        ("jq-memory", 13, "went past its memory of 1024 MiB"),
    ] {
        run(lab)
            .code(2)
            .stderr(predicate::str::contains(format!(
                "tests/labs/broken/{lab}.feature:{line}: check error"
            )))
            .stderr(predicate::str::contains(bound));
    }
}

#[test]
fn a_learners_control_characters_never_reach_the_terminal_or_the_ci_log() {
    let reports = tempfile::tempdir().expect("temp dir");
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/broken/escapes.feature", "--report-dir"])
        .arg(reports.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", reports.path().join("summary.md"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("labcheck");
    assert_eq!(out.status.code(), Some(1));
    let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
    let text = String::from_utf8_lossy(&all);
    assert!(
        !text.contains('\u{1b}'),
        "an escape sequence reached the console: {text:?}"
    );
    assert!(
        !text
            .split(['\n', '\r'])
            .any(|l| l.starts_with("::error::pwned")),
        "the learner's output made a workflow command: {text:?}"
    );
    assert!(text.contains("\\u{1b}[2J"), "{text}");
}

#[test]
fn a_file_that_should_be_gone_fails_with_what_it_holds() {
    run("file-still-there")
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/broken/file-still-there.feature:9",
        ))
        .stderr(predicate::str::contains(
            "expected: no file at /root/labcheck-gone/old.txt",
        ))
        .stderr(predicate::str::contains("stale"));
}

#[test]
fn under_github_actions_a_failure_is_an_annotation_on_its_line() {
    let reports = tempfile::tempdir().expect("temp dir");
    let step_summary = reports.path().join("step-summary.md");
    std::fs::write(&step_summary, "# earlier step\n").expect("summary file");
    wrong_answer(reports.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &step_summary)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "::error file=tests/labs/broken/wrong-answer.feature,line=8,title=Broken%3A a wrong answer › Write the greeting::",
        ))
        .stdout(predicate::str::contains("%0A"));
    let summary = std::fs::read_to_string(&step_summary).expect("summary");
    assert!(summary.starts_with("# earlier step\n"), "{summary}");
    assert!(summary.contains("Write the greeting"), "{summary}");
    // Outside GitHub Actions, no workflow commands.
    wrong_answer(reports.path())
        .env_remove("GITHUB_ACTIONS")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("::error").not());
}

#[test]
fn cucumber_json_has_the_shape_ci_plugins_read() {
    let reports = wrong_answer_reports();
    let text =
        std::fs::read_to_string(reports.path().join("cucumber.json")).expect("cucumber.json");
    let features: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let features = features.as_array().expect("an array of features");
    assert_eq!(features.len(), 1, "one feature per cell");
    let f = &features[0];
    assert_eq!(f["uri"], "tests/labs/broken/wrong-answer.feature");
    for key in ["id", "keyword", "name", "line", "elements"] {
        assert!(!f[key].is_null(), "feature without {key}: {f}");
    }
    let elements = f["elements"].as_array().expect("elements");
    assert_eq!(elements.len(), 2, "{elements:?}");
    let mut statuses = Vec::new();
    for e in elements {
        assert_eq!(e["type"], "scenario");
        for key in ["id", "keyword", "name", "line", "steps"] {
            assert!(!e[key].is_null(), "element without {key}: {e}");
        }
        for s in e["steps"].as_array().expect("steps") {
            for key in ["keyword", "name", "line"] {
                assert!(!s[key].is_null(), "step without {key}: {s}");
            }
            let status = s["result"]["status"].as_str().expect("status").to_owned();
            assert!(["passed", "failed", "skipped"].contains(&status.as_str()));
            assert!(s["result"]["duration"].as_u64().is_some(), "{s}");
            if status == "failed" {
                assert_eq!(s["line"], 8);
                let message = s["result"]["error_message"].as_str().expect("message");
                assert!(message.contains("hello"), "{message}");
            }
            statuses.push(status);
        }
    }
    assert_eq!(statuses, ["passed", "failed", "skipped", "skipped"]);
    assert_eq!(
        elements[0]["name"], "Broken: a wrong answer › Write the greeting",
        "the same stable name as JUnit"
    );
}

#[test]
fn messages_ndjson_follows_the_cucumber_messages_schema() {
    let reports = wrong_answer_reports();
    // The schema @cucumber/messages 34.2.1 publishes (messages.schema.json, MIT).
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("tests/schemas/cucumber-messages-34.2.1.schema.json")
            .expect("schema"),
    )
    .expect("schema JSON");
    let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
    let text =
        std::fs::read_to_string(reports.path().join("messages.ndjson")).expect("messages.ndjson");
    let envelopes: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON envelope per line"))
        .collect();
    for e in &envelopes {
        let errors: Vec<String> = validator.iter_errors(e).map(|x| x.to_string()).collect();
        assert!(errors.is_empty(), "{e}: {errors:?}");
    }
    // The schema holds: a wrong envelope is refused.
    assert!(!validator.is_valid(&serde_json::json!({"testStepFinished": {"testStepId": "x"}})));
    let kinds: Vec<&str> = envelopes
        .iter()
        .filter_map(|e| e.as_object()?.keys().next().map(String::as_str))
        .collect();
    assert_eq!(kinds.first(), Some(&"meta"));
    assert_eq!(kinds.last(), Some(&"testRunFinished"));
    for kind in [
        "source",
        "gherkinDocument",
        "pickle",
        "testCase",
        "testCaseStarted",
    ] {
        assert!(kinds.contains(&kind), "no {kind}: {kinds:?}");
    }
    let statuses: Vec<&str> = envelopes
        .iter()
        .filter_map(|e| e["testStepFinished"]["testStepResult"]["status"].as_str())
        .collect();
    assert_eq!(statuses, ["PASSED", "FAILED", "SKIPPED", "SKIPPED"]);
    let failed = envelopes
        .iter()
        .find(|e| e["testStepFinished"]["testStepResult"]["status"] == "FAILED")
        .expect("the failing step");
    let message = failed["testStepFinished"]["testStepResult"]["message"]
        .as_str()
        .expect("its message");
    assert!(message.contains("hello"), "{message}");
    let pickle = envelopes
        .iter()
        .find(|e| e.get("pickle").is_some())
        .expect("a pickle");
    assert_eq!(
        pickle["pickle"]["name"],
        "Broken: a wrong answer › Write the greeting"
    );
    assert!(
        envelopes
            .iter()
            .any(|e| e["testRunFinished"]["success"] == false)
    );
}

/// A run of the wrong-answer lab writing its reports to `reports`.
fn wrong_answer(reports: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("labcheck").expect("binary");
    command
        .args([
            "run",
            "tests/labs/broken/wrong-answer.feature",
            "--report-dir",
        ])
        .arg(reports);
    command
}

/// The reports of a run of the wrong-answer lab (exit 1).
fn wrong_answer_reports() -> tempfile::TempDir {
    let reports = tempfile::tempdir().expect("temp dir");
    wrong_answer(reports.path()).assert().code(1);
    reports
}

#[test]
fn a_check_that_waits_polls_for_its_whole_wait_then_says_how_long() {
    let reports = tempfile::tempdir().expect("temp dir");
    let started = std::time::Instant::now();
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", "tests/labs/eventually/never.feature", "--report-dir"])
        .arg(reports.path())
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "tests/labs/eventually/never.feature:14",
        ))
        .stderr(predicate::str::contains("still so after 2 s"));
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "the check waited its 2 seconds"
    );
}

#[test]
fn a_renamed_or_misplaced_check_name_is_caught_by_lint_where_it_is_written() {
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["lint", "tests/labs/broken/renamed-check.feature"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "renamed-check.feature:15:5: the name \"answer-is-42\" is given twice (first on line 13)",
        ))
        .stderr(predicate::str::contains(
            "renamed-check.feature:17:5: the name \"not-a-check\" is not right above a check",
        ))
        .stderr(predicate::str::contains(
            "renamed-check.feature:27:7: no check is named \"answer-is-fourty-two\" \
             (named checks: answer-is-42, later)",
        ))
        .stderr(predicate::str::contains(
            "renamed-check.feature:28:7: the mistake names a check the lab does not make by this \
             step: later",
        ))
        .stderr(predicate::str::contains(
            "renamed-check.feature:38:5: the comment gives an empty message",
        ))
        .stderr(predicate::str::contains("labcheck: 5 problem(s)"));
}

#[test]
fn a_failed_check_shows_its_message_and_to_the_author_what_it_expected() {
    run("message")
        .code(1)
        .stderr(predicate::str::contains(
            "Write the answer to the question, 42, to /root/answer.txt.",
        ))
        .stderr(predicate::str::contains("expected"))
        .stderr(predicate::str::contains("message.feature:11"));
}
