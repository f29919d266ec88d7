//! Checks named once. A comment right above a check step names it — `# check: legacy-sidecar`
//! (`# チェック: legacy-sidecar`) — and a mistake's list refers to it by that name —
//! `check "legacy-sidecar"` (`チェック "legacy-sidecar"`), with an optional wait of its own
//! (`check "legacy-sidecar" within 20 seconds`, `20 秒以内に チェック "legacy-sidecar"`) — instead of
//! a copy of the check's text. This module finds the names in a lab's text and resolves the
//! references; lint reports what does not resolve, the mistake's step evaluates what does.
//! A comment `# message: …` (`# メッセージ: …`) right above a check gives the sentence a learner
//! reads when the check fails, instead of the check's own expected value.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use cucumber::gherkin::{self, StepType};
use regex::Regex;

use super::compile::waiting_forms;
use crate::model::Lang;

/// A check step that carries a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The line of the naming comment.
    pub label_line: usize,
    /// The line of the check step it names.
    pub step_line: usize,
    /// The check step's text, as written (its wait included).
    pub text: String,
}

/// A comment that names something other than one check step, or a name given twice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelProblem {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// The named checks of a lab, by name, and the learner-facing messages of its checks, by the
/// check's line.
#[derive(Clone, Debug, Default)]
pub struct Names(BTreeMap<String, Named>, BTreeMap<usize, String>);

/// A mistake's listed line that refers to a named check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference<'a> {
    pub name: &'a str,
    /// The reference's own wait (seconds) and the language it is written in.
    pub wait: Option<(u64, Lang)>,
}

/// Why a reference does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub name: String,
    /// The names the lab does give, for the hint.
    pub known: Vec<String>,
}

impl UnknownName {
    pub fn render(&self, lang: Lang) -> String {
        let known = if self.known.is_empty() {
            lang.pick("the lab names no check", "ラボに名前の付いたチェックはない")
                .to_owned()
        } else {
            format!(
                "{} {}",
                lang.pick("named checks:", "名前の付いたチェック:"),
                self.known.join(", ")
            )
        };
        format!(
            "{} {:?} ({known})",
            lang.pick("no check is named", "次の名前のチェックはない:"),
            self.name
        )
    }
}

fn label_form() -> &'static Regex {
    static FORM: OnceLock<Regex> = OnceLock::new();
    FORM.get_or_init(|| {
        Regex::new(r"^#\s*(?:check|チェック)\s*[:：]\s*(?P<name>\S*)\s*$").expect("static regex")
    })
}

fn message_form() -> &'static Regex {
    static FORM: OnceLock<Regex> = OnceLock::new();
    FORM.get_or_init(|| {
        Regex::new(r"^#\s*(?:message|メッセージ)\s*[:：]\s*(?P<text>.*?)\s*$")
            .expect("static regex")
    })
}

/// The learner-facing message a comment line gives (`# message: …`, `# メッセージ: …`), if it is
/// one; an empty message is returned as such, for lint to report.
pub fn message(line: &str) -> Option<&str> {
    let caps = message_form().captures(line.trim())?;
    Some(caps.name("text").map_or("", |m| m.as_str()))
}

fn reference_form() -> &'static Regex {
    static FORM: OnceLock<Regex> = OnceLock::new();
    FORM.get_or_init(|| {
        Regex::new(r#"^(?:check|チェック) ?"(?P<name>[^"]+)"$"#).expect("static regex")
    })
}

/// The name a comment line gives (`# check: NAME`), if it is a naming comment; an empty name
/// is returned as such, for lint to report.
pub fn label(line: &str) -> Option<&str> {
    let caps = label_form().captures(line.trim())?;
    Some(caps.name("name").map_or("", |m| m.as_str()))
}

/// The named check a listed line refers to, if it is a reference.
pub fn reference(listed: &str) -> Option<Reference<'_>> {
    let listed = listed.trim();
    if let Some(caps) = reference_form().captures(listed) {
        return Some(Reference {
            name: caps.name("name")?.as_str(),
            wait: None,
        });
    }
    waiting_forms().iter().find_map(|(re, lang)| {
        let caps = re.captures(listed)?;
        let inner = reference_form().captures(caps.name("check")?.as_str())?;
        Some(Reference {
            name: inner.name("name")?.as_str(),
            wait: Some((caps["n"].parse().ok()?, *lang)),
        })
    })
}

/// The lines of a text that are Gherkin comments (outside docstrings), with their 1-based
/// numbers and columns.
fn comment_lines(text: &str) -> Vec<(usize, usize, &str)> {
    let mut in_doc: Option<&str> = None;
    let mut comments = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match in_doc {
            Some(delim) if t.starts_with(delim) => in_doc = None,
            Some(_) => {}
            None if t.starts_with("\"\"\"") => in_doc = Some("\"\"\""),
            None if t.starts_with("```") => in_doc = Some("```"),
            None if t.starts_with('#') => comments.push((i + 1, line.len() - t.len() + 1, t)),
            None => {}
        }
    }
    comments
}

/// The steps of a feature by line, with their type.
fn steps_by_line(feature: &gherkin::Feature) -> BTreeMap<usize, &gherkin::Step> {
    super::all_steps(feature)
        .into_iter()
        .map(|s| (s.position.line, s))
        .collect()
}

impl Names {
    /// The named checks of a lab (its text and the feature parsed from it), and the naming
    /// comments that name nothing or a name twice.
    pub fn find(text: &str, feature: &gherkin::Feature) -> (Names, Vec<LabelProblem>) {
        let steps = steps_by_line(feature);
        let mut names = BTreeMap::new();
        let mut problems = Vec::new();
        let comments = comment_lines(text);
        let comment_at: BTreeMap<usize, &str> = comments.iter().map(|c| (c.0, c.2)).collect();
        let mut messages = BTreeMap::new();
        for &(line, col, comment) in &comments {
            let mut problem = |message: String| problems.push(LabelProblem { line, col, message });
            // The step a comment annotates is the next line that is neither blank nor a comment.
            let next = text
                .lines()
                .enumerate()
                .skip(line)
                .find(|(i, l)| !l.trim().is_empty() && !comment_at.contains_key(&(i + 1)))
                .map(|(i, _)| i + 1);
            let step = next
                .and_then(|n| steps.get(&n))
                .filter(|s| s.ty == StepType::Then);
            if let Some(text) = message(comment) {
                match step {
                    _ if text.is_empty() => {
                        problem("the comment gives an empty message".to_owned())
                    }
                    Some(step) => {
                        messages.insert(step.position.line, text.to_owned());
                    }
                    None => problem(
                        "the message is not right above a check (a Then step) it could be for"
                            .to_owned(),
                    ),
                }
                continue;
            }
            let Some(name) = label(comment) else {
                continue;
            };
            if name.is_empty() {
                problem("the comment names a check with no name".to_owned());
                continue;
            }
            let Some(step) = step else {
                problem(format!(
                    "the name {name:?} is not right above a check (a Then step) it could name"
                ));
                continue;
            };
            let named = Named {
                label_line: line,
                step_line: step.position.line,
                text: step.value.trim().to_owned(),
            };
            if let Some(first) = names.get(name) {
                let Named { label_line, .. } = first;
                problem(format!(
                    "the name {name:?} is given twice (first on line {label_line})"
                ));
                continue;
            }
            names.insert(name.to_owned(), named);
        }
        (Names(names, messages), problems)
    }

    /// The learner-facing message of the check on that line, if it has one.
    pub fn message_of(&self, step_line: usize) -> Option<&str> {
        self.1.get(&step_line).map(String::as_str)
    }

    /// The names of the check step on that line.
    pub fn names_of(&self, step_line: usize) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(move |(_, n)| n.step_line == step_line)
            .map(|(name, _)| name.as_str())
    }

    /// The named check of that name.
    pub fn get(&self, name: &str) -> Option<&Named> {
        self.0.get(name)
    }

    /// The check text a mistake's listed line stands for: the named check's text for a
    /// reference (with the reference's own wait, if it gives one), the line itself otherwise.
    pub fn resolve(&self, listed: &str) -> Result<String, UnknownName> {
        let Some(reference) = reference(listed) else {
            return Ok(listed.trim().to_owned());
        };
        let named = self.get(reference.name).ok_or_else(|| UnknownName {
            name: reference.name.to_owned(),
            known: self.0.keys().cloned().collect(),
        })?;
        let Some((seconds, lang)) = reference.wait else {
            return Ok(named.text.clone());
        };
        // The reference's wait replaces the check's own.
        let bare = waiting_forms()
            .iter()
            .find_map(|(re, _)| re.captures(&named.text).map(|c| c["check"].to_owned()))
            .unwrap_or_else(|| named.text.clone());
        Ok(match lang {
            Lang::En => format!("{bare} within {seconds} seconds"),
            Lang::Ja => format!("{seconds} 秒以内に {bare}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB: &str = r#"Feature: x
  Scenario: one
    When the learner runs:
      """
      # check: not-a-name-inside-a-docstring
      true
      """
    # check: exists
    Then the file "/root/a" should exist within 30 seconds
    # check: ok
    # a note between the name and its step
    And the last command should succeed

  Scenario: two
    # check: exists
    Then the file "/root/b" should exist
    # check: nothing-below

"#;

    fn find() -> (Names, Vec<LabelProblem>) {
        let feature = gherkin::Feature::parse(LAB, gherkin::GherkinEnv::default()).expect("parses");
        Names::find(LAB, &feature)
    }

    #[test]
    fn names_are_found_above_checks_and_problems_have_lines() {
        let (names, problems) = find();
        assert_eq!(
            names.get("exists").map(|n| (n.label_line, n.step_line)),
            Some((8, 9))
        );
        assert_eq!(names.get("ok").map(|n| n.step_line), Some(12));
        assert!(names.get("not-a-name-inside-a-docstring").is_none());
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![15, 17], "{problems:?}");
        assert!(
            problems[0]
                .message
                .contains("given twice (first on line 8)")
        );
        assert!(problems[1].message.contains("not right above a check"));
    }

    #[test]
    fn references_resolve_with_their_own_wait() {
        let (names, _) = find();
        assert_eq!(
            names.resolve(r#"check "exists""#).as_deref(),
            Ok(r#"the file "/root/a" should exist within 30 seconds"#)
        );
        assert_eq!(
            names
                .resolve(r#"check "exists" within 5 seconds"#)
                .as_deref(),
            Ok(r#"the file "/root/a" should exist within 5 seconds"#)
        );
        assert_eq!(
            names.resolve(r#"5 秒以内に チェック "exists""#).as_deref(),
            Ok(r#"5 秒以内に the file "/root/a" should exist"#)
        );
        assert_eq!(
            names.resolve("the last command should fail").as_deref(),
            Ok("the last command should fail")
        );
        let unknown = names.resolve(r#"check "gone""#).unwrap_err();
        assert_eq!(unknown.known, vec!["exists".to_owned(), "ok".to_owned()]);
        assert!(
            unknown
                .render(Lang::En)
                .contains("no check is named \"gone\"")
        );
    }
}
