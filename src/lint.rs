//! Lint and parse: reads a feature file, reports Gherkin problems with file:line:col and a hint
//! (full-width colons and spaces after keywords, keywords the parser lacks, parse errors,
//! undefined or ambiguous steps with the nearest known phrase) and, when there are none, turns it
//! into a [`Lab`].

use std::fmt;
use std::path::{Path, PathBuf};

use cucumber::gherkin::{self, GherkinEnv, StepType};

use crate::model::{Lab, LabStep, Lang, StepKind};
use crate::steps::action::Action;
use crate::steps::compile::{CompileError, Compiled, compile};
use crate::steps::phrases::{PHRASES, REJECTION};

/// One problem in a feature file.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
    pub message: String,
    pub hint: Option<String>,
    /// The lab (or one of its steps) grades nothing: a run of it would prove nothing.
    pub grades_nothing: bool,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.col,
            self.message
        )?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

/// Reading the file failed: a harness error, not a lab problem.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {source}")]
pub struct ReadError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Tags a scenario can carry, in English and Japanese.
pub mod tags {
    pub const MISTAKE: &[&str] = &["mistake", "間違い"];
    pub const NO_DISCRIMINATION: &[&str] = &["no-discrimination", "判別なし"];
    pub const TIMEOUT: &[&str] = &["timeout=", "タイムアウト="];
    /// Feature tags that raise a cell's limits (`@memory=8GiB`, `@pids=8192`).
    pub const MEMORY: &[&str] = &["memory=", "メモリ="];
    pub const PIDS: &[&str] = &["pids=", "プロセス数="];

    /// Whether `tags` holds one of `names`.
    pub fn has(tags: &[String], names: &[&str]) -> bool {
        tags.iter()
            .any(|t| names.contains(&t.trim_start_matches('@')))
    }

    /// The value of a `name=value` tag.
    pub fn value<'a>(tags: &'a [String], prefixes: &[&str]) -> Option<&'a str> {
        tags.iter().find_map(|t| {
            prefixes
                .iter()
                .find_map(|p| t.trim_start_matches('@').strip_prefix(p))
        })
    }
}

const BLOCK_KEYWORDS: &[&str] = &[
    "Feature",
    "Background",
    "Scenario Outline",
    "Scenario Template",
    "Scenario",
    "Example",
    "Examples",
    "Rule",
    "機能",
    "フィーチャ",
    "背景",
    "シナリオアウトライン",
    "シナリオテンプレート",
    "シナリオ",
    "例",
    "サンプル",
];
const STEP_KEYWORDS: &[&str] = &[
    "Given",
    "When",
    "Then",
    "And",
    "But",
    "前提",
    "もし",
    "ならば",
    "かつ",
    "しかし",
    "但し",
    "ただし",
];
/// Keywords authors write that the parser does not know, with what to write instead.
const UNKNOWN_KEYWORDS: &[(&str, &str)] = &[
    ("且つ", "かつ"),
    (
        "ルール",
        "Rule (the Japanese dialect of the parser has no ルール)",
    ),
    ("前提条件", "前提"),
    ("シナリオ例", "シナリオ"),
];

/// Lints a feature file. `Ok` holds the lab when there are no problems.
pub fn load(path: &Path) -> Result<Result<Lab, Vec<Problem>>, ReadError> {
    load_as(path, path)
}

/// Like [`load`], for a copy of the lab at `origin` (a mutant): its fixtures are looked for
/// from `origin`, and the lab says it came from there.
pub fn load_as(path: &Path, origin: &Path) -> Result<Result<Lab, Vec<Problem>>, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError {
        path: path.to_owned(),
        source,
    })?;
    Ok(lint_text(path, origin, &text))
}

/// Lints the text of a feature file that lives at `path` (a copy of `origin`). Never panics:
/// whatever the text, the answer is a lab or problems with their lines (a fuzz target holds it
/// to that).
pub fn lint_text(path: &Path, origin: &Path, text: &str) -> Result<Lab, Vec<Problem>> {
    let problems = scan_text(path, text);
    if !problems.is_empty() {
        return Err(problems);
    }
    let feature = match gherkin::Feature::parse(text, GherkinEnv::default()) {
        Ok(mut f) => {
            f.path = Some(path.to_owned());
            f
        }
        Err(e) => {
            let (line, col) = parse_error_position(&e);
            return Err(vec![Problem {
                path: path.to_owned(),
                line,
                col,
                message: format!("Gherkin parse error: {e}"),
                hint: Some(
                    "check keywords, indentation of docstrings (\"\"\") and tables".to_owned(),
                ),
                grades_nothing: false,
            }]);
        }
    };
    let lang = language(text);
    let problems = check_steps(path, origin, &feature, lang);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut lab = to_lab(path, &feature, lang);
    if origin != path {
        lab.source = Some(origin.to_owned());
    }
    lab.text = text.to_owned();
    lab.parsed = Some(std::sync::Arc::new(feature));
    Ok(lab)
}

fn language(text: &str) -> Lang {
    let header = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let header = header.trim().trim_start_matches('#').trim();
    match header.strip_prefix("language:").map(str::trim) {
        Some("ja") => Lang::Ja,
        _ => Lang::En,
    }
}

fn parse_error_position(e: &gherkin::ParseError) -> (usize, usize) {
    let text = format!("{e:?}");
    // peg errors carry `line: N, column: M`.
    let grab = |key: &str| {
        text.split(key).nth(1).and_then(|r| {
            r.trim_start_matches([':', ' '])
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
    };
    (grab("line").unwrap_or(1), grab("column").unwrap_or(1))
}

/// Problems visible in the text itself, which make the parser fail with no location.
fn scan_text(path: &Path, text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut in_docstring: Option<&str> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start_matches([' ', '\t']);
        let col = raw.chars().count() - trimmed.chars().count() + 1;
        for fence in ["\"\"\"", "```"] {
            if trimmed.starts_with(fence) {
                in_docstring = match in_docstring {
                    Some(f) if f == fence => None,
                    None => Some(fence),
                    other => other,
                };
            }
        }
        if in_docstring.is_some() || trimmed.starts_with('#') || trimmed.starts_with("\"\"\"") {
            continue;
        }
        let at = |message: String, hint: &str, extra: usize| Problem {
            path: path.to_owned(),
            line: i + 1,
            col: col + extra,
            message,
            hint: Some(hint.to_owned()),
            grades_nothing: false,
        };
        if trimmed.starts_with('\u{3000}') {
            problems.push(at(
                "full-width space (U+3000) in indentation".into(),
                "indent with ASCII spaces",
                0,
            ));
            continue;
        }
        for (bad, good) in UNKNOWN_KEYWORDS {
            if let Some(rest) = trimmed.strip_prefix(bad)
                && (rest.starts_with([' ', '\u{3000}', ':', '：']) || !rest.is_empty())
                && !trimmed.starts_with(good)
            {
                problems.push(at(
                    format!("the Gherkin parser has no keyword {bad:?}"),
                    &format!("write {good}"),
                    0,
                ));
            }
        }
        for kw in BLOCK_KEYWORDS.iter().chain(STEP_KEYWORDS) {
            let Some(rest) = trimmed.strip_prefix(kw) else {
                continue;
            };
            let kw_len = kw.chars().count();
            if rest.starts_with('：') {
                problems.push(at(
                    format!("full-width colon (：) after the keyword {kw:?}"),
                    &format!("write \"{kw}:\" with an ASCII colon"),
                    kw_len,
                ));
            } else if rest.starts_with('\u{3000}') {
                problems.push(at(
                    format!("full-width space (U+3000) after the keyword {kw:?}"),
                    "separate keyword and text with an ASCII space",
                    kw_len,
                ));
            }
            break;
        }
    }
    problems
}

fn all_steps(feature: &gherkin::Feature) -> Vec<&gherkin::Step> {
    let mut steps: Vec<&gherkin::Step> = Vec::new();
    steps.extend(feature.background.iter().flat_map(|b| &b.steps));
    for sc in feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios))
    {
        steps.extend(&sc.steps);
    }
    for rule in &feature.rules {
        steps.extend(rule.background.iter().flat_map(|b| &b.steps));
    }
    steps
}

/// What lint finds wrong with a step that compiled: a fixture that is not in the repository.
fn fixture_missing(origin: &Path, compiled: &Compiled) -> Option<String> {
    let Action::Fixture { src, .. } = &compiled.action else {
        return None;
    };
    let lang = compiled.lang;
    match crate::cell::fixture_source(origin, src) {
        Some(_) => None,
        None => Some(format!(
            "{} {} ({} {})",
            lang.pick("fixture not found:", "フィクスチャが見つからない:"),
            src.display(),
            lang.pick("searched from", "探した場所:"),
            origin.display()
        )),
    }
}

fn check_steps(path: &Path, origin: &Path, feature: &gherkin::Feature, lang: Lang) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut check = |step: &gherkin::Step, value: &str, line: usize, col: usize| {
        let probe = gherkin::Step {
            value: value.to_owned(),
            ..step.clone()
        };
        let problem = |message: String, hint: Option<String>| Problem {
            path: path.to_owned(),
            line,
            col,
            message,
            hint,
            grades_nothing: false,
        };
        match compile(&probe) {
            Ok(compiled) => {
                if let Some(message) = fixture_missing(origin, &compiled) {
                    problems.push(problem(
                        format!("{} {value}: {message}", step.keyword.trim()),
                        None,
                    ));
                }
            }
            Err(CompileError::Invalid(message)) => problems.push(problem(
                format!("{} {value}: {message}", step.keyword.trim()),
                None,
            )),
            Err(CompileError::Undefined(_)) => problems.push(problem(
                format!("undefined step: {} {value}", step.keyword.trim()),
                nearest(step.ty, value, lang).map(|n| format!("the nearest known phrase is: {n}")),
            )),
            Err(e @ CompileError::Ambiguous { .. }) => problems.push(problem(e.to_string(), None)),
        }
    };
    for step in all_steps(feature) {
        check(step, &step.value, step.position.line, step.position.col);
        if [REJECTION.0, REJECTION.1].contains(&step.value.as_str()) {
            for (i, line) in step.docstring.iter().flat_map(|d| d.lines()).enumerate() {
                let l = line.trim();
                if !l.is_empty() && !l.starts_with('#') {
                    let then = gherkin::Step {
                        ty: StepType::Then,
                        ..step.clone()
                    };
                    check(&then, l, step.position.line + 2 + i, step.position.col + 2);
                }
            }
        }
    }
    problems.extend(structure(path, feature));
    let mut seen_step = false;
    for sc in feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios))
    {
        if tags::has(&sc.tags, tags::MISTAKE) && !seen_step {
            problems.push(Problem {
                path: path.to_owned(),
                line: sc.position.line,
                col: sc.position.col,
                message: "a mistake scenario must follow the step it gets wrong".to_owned(),
                hint: Some(
                    "place it right after that step: its cell replays the steps before that one"
                        .to_owned(),
                ),
                grades_nothing: false,
            });
        }
        seen_step |= !tags::has(&sc.tags, tags::MISTAKE);
        if let Some(v) = tags::value(&sc.tags, tags::TIMEOUT)
            && v.parse::<u64>().is_err()
        {
            problems.push(Problem {
                path: path.to_owned(),
                line: sc.position.line.saturating_sub(1).max(1),
                col: 1,
                message: format!("timeout tag needs whole seconds, found {v:?}"),
                hint: Some("e.g. @timeout=30".to_owned()),
                grades_nothing: false,
            });
        }
    }
    let line = feature.position.line.saturating_sub(1).max(1);
    let limit_problem = |tag: &str, v: &str, example: &str| Problem {
        path: path.to_owned(),
        line,
        col: 1,
        message: format!("{tag} tag needs a number, found {v:?}"),
        hint: Some(format!("e.g. {example}")),
        grades_nothing: false,
    };
    if let Err(bad) = limits(feature) {
        for (tag, v, example) in bad {
            problems.push(limit_problem(tag, v, example));
        }
    }
    problems
}

/// The limits of a lab's cells: the defaults, raised by the Feature's tags; or the tags whose
/// values are no number (tag, value, an example).
fn limits(
    feature: &gherkin::Feature,
) -> Result<crate::sandbox::Limits, Vec<(&'static str, &str, &'static str)>> {
    let mut limits = crate::sandbox::Limits::default();
    let mut bad = Vec::new();
    if let Some(v) = tags::value(&feature.tags, tags::MEMORY) {
        match crate::sandbox::cgroup::parse_size(v) {
            Some(m) => limits.memory = m,
            None => bad.push(("memory", v, "@memory=8GiB")),
        }
    }
    if let Some(v) = tags::value(&feature.tags, tags::PIDS) {
        match v.parse() {
            Ok(p) => limits.pids = p,
            Err(_) => bad.push(("pids", v, "@pids=8192")),
        }
    }
    if bad.is_empty() { Ok(limits) } else { Err(bad) }
}

/// The scenarios of a feature (rules included), in file order.
pub fn scenarios_in_order(feature: &gherkin::Feature) -> Vec<&gherkin::Scenario> {
    let mut scenarios: Vec<&gherkin::Scenario> = feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios))
        .collect();
    scenarios.sort_by_key(|s| s.position.line);
    scenarios
}

/// Problems of shape: a lab that grades nothing, a step that checks nothing, outlines, and
/// mistakes naming checks the main lab does not make by then.
fn structure(path: &Path, feature: &gherkin::Feature) -> Vec<Problem> {
    let problem = |line: usize, col: usize, message: String, hint: &str| Problem {
        path: path.to_owned(),
        line,
        col,
        message,
        hint: (!hint.is_empty()).then(|| hint.to_owned()),
        grades_nothing: false,
    };
    let nothing = |line: usize, col: usize, message: String, hint: &str| Problem {
        grades_nothing: true,
        ..problem(line, col, message, hint)
    };
    let mut problems = Vec::new();
    let scenarios = scenarios_in_order(feature);
    if scenarios.is_empty() {
        problems.push(nothing(
            feature.position.line,
            feature.position.col,
            "the Feature has no Scenario: the lab grades nothing".to_owned(),
            "each lab step is a Scenario",
        ));
    }
    // The checks the main lab has made up to each step, by their text.
    let mut made: Vec<String> = Vec::new();
    for sc in scenarios {
        let mistake = tags::has(&sc.tags, tags::MISTAKE);
        let at = (sc.position.line, sc.position.col);
        if !sc.examples.is_empty() {
            problems.push(problem(
                at.0,
                at.1,
                "Scenario Outlines are not supported: a lab step runs once, in order".to_owned(),
                "write one Scenario per step",
            ));
        }
        if sc.steps.is_empty() {
            problems.push(nothing(
                at.0,
                at.1,
                format!("the Scenario {:?} has no steps: it grades nothing", sc.name),
                "",
            ));
            continue;
        }
        let checks: Vec<&gherkin::Step> =
            sc.steps.iter().filter(|s| s.ty == StepType::Then).collect();
        if checks.is_empty() {
            problems.push(nothing(
                at.0,
                at.1,
                format!("the Scenario {:?} grades nothing: it has no check", sc.name),
                "add Then steps that grade what the step makes",
            ));
        }
        if !mistake {
            made.extend(checks.iter().map(|s| s.value.trim().to_owned()));
            continue;
        }
        let rejection = sc
            .steps
            .iter()
            .find(|s| [REJECTION.0, REJECTION.1].contains(&s.value.as_str()));
        let Some(rejection) = rejection else {
            problems.push(problem(
                at.0,
                at.1,
                format!("the mistake {:?} names no check that rejects it", sc.name),
                &format!("add \"{}\" with the checks, one a line", REJECTION.0),
            ));
            continue;
        };
        for (i, line) in rejection
            .docstring
            .iter()
            .flat_map(|d| d.lines())
            .enumerate()
        {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') || made.iter().any(|m| m == l) {
                continue;
            }
            problems.push(problem(
                rejection.position.line + 2 + i,
                rejection.position.col + 2,
                format!("the mistake names a check the lab does not make by this step: {l}"),
                "name checks of the step the mistake gets wrong (or of an earlier step), word for word",
            ));
        }
    }
    problems
}

/// The known phrase closest to an undefined step, in the lab's language.
fn nearest(ty: StepType, value: &str, lang: Lang) -> Option<&'static str> {
    PHRASES
        .iter()
        .filter(|p| p.ty == ty)
        .map(|p| lang.pick(p.en.example, p.ja.example))
        .map(|text| {
            (
                strsim::normalized_levenshtein(&strip_args(value), &strip_args(text)),
                text,
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t)
}

/// The phrase with its quoted arguments and numbers blanked, so the wording decides.
fn strip_args(s: &str) -> String {
    let re = regex::Regex::new(r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\d+"#).expect("static regex");
    re.replace_all(s, "_").into_owned()
}

fn to_lab(path: &Path, feature: &gherkin::Feature, lang: Lang) -> Lab {
    let scenarios = feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios));
    let mut list: Vec<&gherkin::Scenario> = scenarios.collect();
    list.sort_by_key(|s| s.position.line);
    let mut number = 0;
    let steps = list
        .iter()
        .map(|s| {
            let kind = if tags::has(&s.tags, tags::MISTAKE) {
                StepKind::Mistake
            } else {
                StepKind::Step
            };
            if kind == StepKind::Step {
                number += 1;
            }
            LabStep {
                index: number,
                name: s.name.clone(),
                line: s.position.line,
                tags: s.tags.clone(),
                kind,
            }
        })
        .collect();
    Lab {
        path: path.to_owned(),
        name: feature.name.clone(),
        lang,
        steps,
        source: None,
        // A lab reaches here only when lint found no problem, its limit tags included.
        limits: limits(feature).unwrap_or_default(),
        id: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "lab".to_owned()),
        text: String::new(),
        parsed: None,
    }
}

/// The feature files under `paths` (files as given, directories searched), in a stable order.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(ReadError {
                path: p.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file or directory",
                ),
            });
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ReadError {
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| ReadError {
            path: dir.to_owned(),
            source,
        })?;
        let p = entry.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "feature") {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<Problem> {
        scan_text(Path::new("x.feature"), text)
    }

    #[test]
    fn full_width_colon_after_keyword_is_located() {
        let p = scan("# language: ja\n機能: ラボ\n  シナリオ：一\n");
        assert_eq!((p[0].line, p[0].col), (3, 7), "{p:?}");
    }

    #[test]
    fn unknown_japanese_and_is_reported_with_hint() {
        let p = scan(
            "# language: ja\n機能: ラボ\n  シナリオ: 一\n    且つ ファイル \"/a\" が存在する\n",
        );
        assert_eq!(p.len(), 1);
        assert!(p[0].hint.as_deref().unwrap_or_default().contains("かつ"));
    }

    #[test]
    fn docstrings_are_not_linted() {
        assert!(scan("Feature: x\n  Scenario: y\n    When the learner runs:\n      \"\"\"\n      echo 機能：\n      \"\"\"\n").is_empty());
    }

    #[test]
    fn nearest_phrase_ignores_arguments() {
        assert_eq!(
            nearest(StepType::Then, r#"the file "/x" should exists"#, Lang::En),
            Some(r#"the file "/root/lab/a.txt" should exist"#)
        );
    }
}
