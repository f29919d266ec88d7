//! Editor support: the Cucumber Language Server that editors run (editor/node_modules, pinned by
//! editor/package-lock.json), configured by the repository's .vscode/settings.json, over every
//! feature of the repository: it knows labcheck's parameter types and every step definition of
//! editor/glue.rs, finds undefined exactly the steps labcheck finds undefined, and completes an
//! English and a Japanese prefix with the phrases of the table. Skipped, and said so, where node
//! or the npm packages are missing, unless LABCHECK_REQUIRE_EDITOR is set (as .ci/run does).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cucumber::gherkin::{Feature, GherkinEnv, StepType};
use labcheck::steps::args::PARAMETERS;
use labcheck::steps::compile::{CompileError, compile};
use labcheck::steps::editor;
use labcheck::steps::phrases::PHRASES;
use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Says something in the test's output even when the test passes (the harness captures only
/// `print!`-family output).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Why the language server cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    match Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => return Some("no node on PATH (.ci/run needs node and npm)".to_owned()),
    }
    let server = Path::new(ROOT).join("editor/node_modules/.bin/cucumber-language-server");
    if !server.exists() {
        return Some(format!(
            "{} is missing: run `npm ci --prefix editor`",
            server.display()
        ));
    }
    None
}

/// Every feature file under the directories the settings name, from the root.
fn features() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "feature") {
                let rel = path.strip_prefix(ROOT).unwrap_or(&path);
                out.insert(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    for dir in ["features", "tests/labs"] {
        walk(&Path::new(ROOT).join(dir), &mut out);
    }
    out
}

/// The steps labcheck itself finds undefined in a feature (path:line), or None when the
/// feature does not parse.
fn undefined_by_labcheck(path: &str) -> Option<BTreeSet<String>> {
    let file = PathBuf::from(ROOT).join(path);
    let text = std::fs::read_to_string(&file).ok()?;
    let feature = Feature::parse(&text, GherkinEnv::default()).ok()?;
    Some(
        labcheck::steps::all_steps(&feature)
            .into_iter()
            .filter(|step| matches!(compile(step), Err(CompileError::Undefined(_))))
            .map(|step| format!("{path}:{}", step.position.line))
            .collect(),
    )
}

/// The completion a prefix must offer: each phrase of the table whose sentence (in that
/// language, of a Then step) starts with it; the server labels a suggestion with its
/// expression.
fn expected_completions(prefix: &str, ja: bool) -> BTreeSet<String> {
    PHRASES
        .iter()
        .filter(|p| p.ty == StepType::Then)
        .map(|p| if ja { p.ja.expr } else { p.en.expr })
        .filter(|e| e.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// The prefixes whose completion the tests ask for: English and Japanese.
const EN: &str = "the file ";
const JA: &str = "ファイル ";

/// Runs editor/lsp-check.cjs (against the launcher editors run, or the package's own bin):
/// its answer and how long it took.
fn lsp_check(upstream: bool) -> (Value, std::time::Duration) {
    let prefixes = json!([
        {"name": "en", "language": "en", "feature": "Feature", "scenario": "Scenario",
         "keyword": "Then ", "text": EN},
        {"name": "ja", "language": "ja", "feature": "機能", "scenario": "シナリオ",
         "keyword": "ならば ", "text": JA},
    ]);
    let mut cmd = Command::new("node");
    cmd.arg("editor/lsp-check.cjs")
        .arg(ROOT)
        .arg(prefixes.to_string())
        .current_dir(ROOT);
    if upstream {
        cmd.arg("upstream");
    }
    let started = Instant::now();
    let out = cmd.output().expect("node runs");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "editor/lsp-check.cjs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = serde_json::from_slice(&out.stdout).expect("lsp-check prints JSON");
    (answer, took)
}

/// The labels of a completion the check asked for.
fn completion<'a>(answer: &'a Value, name: &str) -> Vec<&'a str> {
    answer["completions"][name]
        .as_array()
        .expect("completions")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether the test can run; says why not (and fails where the editor support is required).
fn available() -> bool {
    match unavailable() {
        None => true,
        Some(reason) if std::env::var_os("LABCHECK_REQUIRE_EDITOR").is_some() => {
            panic!("LABCHECK_REQUIRE_EDITOR is set, but {reason}")
        }
        Some(reason) => {
            say(&format!(
                "SKIPPED: the Cucumber Language Server test — {reason}"
            ));
            false
        }
    }
}

#[test]
fn the_cucumber_language_server_knows_every_step_and_completes_both_languages() {
    if !available() {
        return;
    }
    let (answer, took) = lsp_check(false);
    let log: Vec<&str> = answer["log"]
        .as_array()
        .expect("log")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let logged = |line: &str| log.contains(&line);

    // The glue as the server read it: no error, every parameter type and every definition.
    let errors: Vec<&&str> = log.iter().filter(|l| l.contains("errors:")).collect();
    assert!(errors.is_empty(), "the server's errors: {errors:#?}");
    assert!(
        logged("* Found 1 glue file(s) in [\"editor/glue.rs\"]"),
        "{log:#?}"
    );
    let definitions = editor::definitions();
    assert!(
        logged(&format!(
            "* Found {definitions} step definitions in those glue files"
        )),
        "{log:#?}"
    );
    assert!(
        logged(&format!(
            "* Found {} parameter types in those glue files",
            PARAMETERS.len()
        )),
        "{log:#?}"
    );
    for (name, regex) in PARAMETERS {
        // The server keeps a Rust string's `\"` as those two characters: the same in a regex.
        let seen = log
            .iter()
            .find_map(|l| l.strip_prefix(&format!("  * {{{name}}} = ")))
            .unwrap_or_else(|| panic!("parameter type {name} not in {log:#?}"));
        assert_eq!(seen.replace("\\\"", "\""), *regex, "{{{name}}}");
    }

    // Every feature of the repository, opened as an editor opens it.
    let opened: BTreeSet<String> = answer["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_owned())
        .collect();
    assert_eq!(opened, features(), "the settings' globs find every feature");
    let steps: usize = log
        .iter()
        .find_map(|l| {
            l.strip_prefix("* Found ")?
                .strip_suffix(" steps in those feature files")?
                .parse()
                .ok()
        })
        .expect("the server counts the features' steps");

    // Undefined for the editor exactly where undefined for labcheck (the broken labs' own).
    let mut undefined_lsp = BTreeSet::new();
    let mut undefined_labcheck = BTreeSet::new();
    let mut other = Vec::new();
    for f in answer["features"].as_array().expect("features") {
        let path = f["path"].as_str().expect("path");
        let by_labcheck = undefined_by_labcheck(path);
        for d in f["diagnostics"].as_array().expect("diagnostics") {
            let at = format!("{path}:{}", d["line"]);
            if d["code"] == "cucumber.undefined-step" {
                undefined_lsp.insert(at);
            } else if by_labcheck.is_some() {
                other.push(format!("{at}: {}", d["message"]));
            }
        }
        undefined_labcheck.extend(by_labcheck.unwrap_or_default());
    }
    assert!(other.is_empty(), "the server reports: {other:#?}");
    assert_eq!(
        undefined_lsp, undefined_labcheck,
        "undefined for the server (left) and for labcheck (right)"
    );

    // Completion of an English and a Japanese prefix: every phrase that starts with it.
    for (name, prefix, ja) in [("en", EN, false), ("ja", JA, true)] {
        let labels = completion(&answer, name);
        let expected = expected_completions(prefix, ja);
        assert!(expected.len() >= 2, "{prefix}: {expected:?}");
        for expr in &expected {
            assert!(
                labels.contains(&expr.as_str()),
                "completion of {prefix:?}: no {expr:?} in {labels:#?}"
            );
        }
    }

    say(&format!(
        "editor: the Cucumber Language Server checked {} features ({steps} steps) against \
         {definitions} step definitions ({} undefined, as labcheck says) and completed \
         {:?} ({}) and {:?} ({}) in {:.1} s (index {} ms, features {} ms, completion {} ms)",
        opened.len(),
        undefined_lsp.len(),
        EN,
        completion(&answer, "en").len(),
        JA,
        completion(&answer, "ja").len(),
        took.as_secs_f64(),
        answer["ms"]["index"],
        answer["ms"]["features"],
        answer["ms"]["completions"],
    ));
}

/// Why editor/cucumber-language-server.cjs changes the server's search tokenizer: unchanged,
/// the server completes an English prefix and no Japanese one. When an upstream release
/// completes Japanese, this fails: the change can go.
#[test]
fn the_upstream_server_completes_english_but_no_japanese() {
    if !available() {
        return;
    }
    let (answer, _) = lsp_check(true);
    assert!(
        expected_completions(EN, false)
            .iter()
            .all(|e| completion(&answer, "en").contains(&e.as_str())),
        "{answer:#}"
    );
    assert_eq!(
        completion(&answer, "ja"),
        Vec::<&str>::new(),
        "the upstream server completes Japanese now: drop the tokenizer change of \
         editor/cucumber-language-server.cjs"
    );
}
