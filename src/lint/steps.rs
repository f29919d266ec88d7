//! The steps of a parsed feature: each compiles to an action (lint runs nothing), a fixture it
//! copies exists, a mistake's listed checks compile too; an undefined step gets the nearest known
//! phrase of its language.

use std::path::Path;

use cucumber::gherkin::{self, StepType};

use super::structure::{limits, structure};
use super::{Problem, tags};
use crate::model::Lang;
use crate::steps::action::Action;
use crate::steps::compile::{CompileError, Compiled};
use crate::steps::lab::CompiledLab;
use crate::steps::phrases::PHRASES;

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

/// Where a step is written.
struct At<'a> {
    path: &'a Path,
    origin: &'a Path,
    line: usize,
    col: usize,
}

/// What is wrong with a step whose text is `value` (a listed check's text for a mistake's list),
/// compiled as `compiled`: it does not compile, or it names a fixture the repository lacks.
fn step_problem(
    at: &At<'_>,
    step: (&str, StepType),
    value: &str,
    compiled: Result<&Compiled, &CompileError>,
    lang: Lang,
) -> Option<Problem> {
    let (keyword, ty) = step;
    let problem = |message: String, hint: Option<String>| Problem {
        path: at.path.to_owned(),
        line: at.line,
        col: at.col,
        message,
        hint,
        grades_nothing: false,
    };
    match compiled {
        Ok(compiled) => fixture_missing(at.origin, compiled)
            .map(|message| problem(format!("{keyword} {value}: {message}"), None)),
        Err(CompileError::Invalid(message)) => {
            Some(problem(format!("{keyword} {value}: {message}"), None))
        }
        Err(CompileError::Undefined(_)) => Some(problem(
            format!("undefined step: {keyword} {value}"),
            nearest(ty, value, lang).map(|n| {
                let types = if n.contains("配列") || n.contains("an array") {
                    format!(" (JSON types: {JSON_TYPES})")
                } else {
                    String::new()
                };
                format!("the nearest known phrase is: {n}{types}")
            }),
        )),
        Err(e @ CompileError::Ambiguous { .. }) => Some(problem(e.to_string(), None)),
    }
}

pub(super) fn check_steps(
    path: &Path,
    origin: &Path,
    feature: &gherkin::Feature,
    compiled: &CompiledLab,
    lang: Lang,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    problems.extend(compiled.label_problems().iter().cloned().map(|p| {
        Problem {
        path: path.to_owned(),
        line: p.line,
        col: p.col,
        message: p.message,
        hint: Some(
            "write `# check: NAME` (`# チェック: NAME`) on the line right above the check it names"
                .to_owned(),
        ),
        grades_nothing: false,
    }
    }));
    let at = |line, col| At {
        path,
        origin,
        line,
        col,
    };
    for step in crate::steps::all_steps(feature) {
        let (line, col) = (step.position.line, step.position.col);
        let keyword = step.keyword.trim();
        let found = compiled.step(line);
        problems.extend(step_problem(
            &at(line, col),
            (keyword, step.ty),
            &step.value,
            found,
            lang,
        ));
        for listed in compiled.listed(line) {
            // A reference that names no check is the structure's to report.
            if let Ok((resolved, check)) = &listed.check {
                let at = at(listed.line, col + 2);
                let then = (keyword, StepType::Then);
                problems.extend(step_problem(&at, then, resolved, check.as_ref(), lang));
            }
        }
    }
    problems.extend(structure(path, feature, compiled));
    problems.extend(scenario_tags(path, feature));
    problems
}

/// What the tags of the Scenarios and the Feature get wrong: a mistake before any step, a
/// timeout or a limit that is not a number.
fn scenario_tags(path: &Path, feature: &gherkin::Feature) -> Vec<Problem> {
    let mut problems = Vec::new();
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

/// The JSON type words a type check takes, in both languages.
pub const JSON_TYPES: &str = "string/文字列, number/数値, array/配列, object/オブジェクト, \
     boolean/真偽値, null";

/// The known phrase closest to an undefined step, in the lab's language, and never one that says
/// the opposite (`含まれる` is not answered with `含まれない`) while one of the step's own polarity is
/// there.
fn nearest(ty: StepType, value: &str, lang: Lang) -> Option<&'static str> {
    let negative = negated(value);
    PHRASES
        .iter()
        .filter(|p| p.ty == ty)
        .map(|p| lang.pick(p.en.example, p.ja.example))
        .map(|text| {
            let likeness = strsim::normalized_levenshtein(&strip_args(value), &strip_args(text));
            let opposite = if negated(text) == negative { 0.0 } else { 1.0 };
            (likeness - opposite, text)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t)
}

/// Whether a sentence says something does not hold (its quoted arguments left out).
fn negated(sentence: &str) -> bool {
    let words = strip_args(sentence);
    words.contains(" not ") || words.contains("n't ") || words.contains("ない")
}

/// The phrase with its quoted arguments and numbers blanked, so the wording decides.
fn strip_args(s: &str) -> String {
    let re = regex::Regex::new(r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\d+"#).expect("static regex");
    re.replace_all(s, "_").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_phrase_keeps_the_steps_polarity() {
        assert_eq!(
            nearest(
                StepType::Then,
                r#"ファイル "/x" に "a" が含まれている"#,
                Lang::Ja
            ),
            Some(r#"ファイル "/root/lab/a.txt" に "hello" が含まれる"#)
        );
        assert_eq!(
            nearest(
                StepType::Then,
                r#"the file "/x" should not contains "y""#,
                Lang::En
            ),
            Some(r#"the file "/root/lab/a.txt" should not contain "Error [""#)
        );
    }

    #[test]
    fn nearest_phrase_ignores_arguments() {
        assert_eq!(
            nearest(StepType::Then, r#"the file "/x" should exists"#, Lang::En),
            Some(r#"the file "/root/lab/a.txt" should exist"#)
        );
    }
}
