//! `compile`: a Gherkin step to an [`Action`], purely — the step's text is matched against every
//! sentence of the phrase table (each Cucumber Expression turned into a regular expression
//! once), its arguments are captured, and the phrase builds and validates the action. Lint,
//! the cucumber bindings, discrimination, mistakes and grading all go through it: no world, no
//! cell and no cluster are needed to know what a step means.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use cucumber::gherkin::{Step, StepType};
use cucumber_expressions::Expression;
use regex::Regex;

use super::action::Action;
use super::args::{Args, PARAMETERS};
use super::phrases::{PHRASES, Phrase, Sentence};
use crate::model::Lang;

/// A step, compiled.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub action: Action,
    /// The language of the sentence the step matched: its messages are in that language.
    pub lang: Lang,
    /// The phrase's index in [`PHRASES`].
    pub phrase: usize,
}

/// Why a step does not compile.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompileError {
    /// No phrase of the step's type matches its text.
    #[error("undefined step: {0}")]
    Undefined(String),
    /// Several phrases match (a defect of the table, which a test rules out).
    #[error("ambiguous step: {text}: it matches {}", .matches.join(", "))]
    Ambiguous { text: String, matches: Vec<String> },
    /// The phrase matched, but an argument does not parse or the action is invalid (a path, a
    /// query, a regular expression), in the sentence's language.
    #[error("{0}")]
    Invalid(String),
}

/// One sentence of the table as a regular expression.
struct Compiled1 {
    phrase: usize,
    lang: Lang,
    regex: Regex,
}

fn sentences() -> &'static [Compiled1] {
    static SENTENCES: OnceLock<Vec<Compiled1>> = OnceLock::new();
    SENTENCES.get_or_init(|| {
        let parameters: HashMap<&str, &str> = PARAMETERS.iter().copied().collect();
        let mut out = Vec::new();
        for (phrase, p) in PHRASES.iter().enumerate() {
            for (lang, sentence) in [(Lang::En, &p.en), (Lang::Ja, &p.ja)] {
                // The table is the program's own text: a sentence that does not compile is a
                // defect a unit test catches before any release.
                let regex = Expression::regex_with_parameters(sentence.expr, &parameters)
                    .unwrap_or_else(|e| panic!("phrase {:?}: {e}", sentence.expr));
                out.push(Compiled1 {
                    phrase,
                    lang,
                    regex,
                });
            }
        }
        out
    })
}

/// The regular expressions of every sentence with its step type, and the forms of a check that
/// waits: what the cucumber bindings register.
pub fn regexes() -> impl Iterator<Item = (StepType, &'static Regex)> {
    sentences()
        .iter()
        .map(|s| (PHRASES[s.phrase].ty, &s.regex))
        .chain(waiting_forms().iter().map(|(re, _)| (StepType::Then, re)))
}

/// The arguments a regex captured, in the expression's order: an unnamed group is one argument;
/// groups named `__{id}_{n}` (the alternatives of `{string}`) are one argument, the one that
/// matched.
fn captured(regex: &Regex, text: &str) -> Option<Vec<String>> {
    let caps = regex.captures(text)?;
    let mut args = Vec::new();
    let mut alternatives: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    for (i, name) in regex.capture_names().enumerate().skip(1) {
        let value = caps.get(i).map(|m| m.as_str().to_owned());
        match name.and_then(|n| n.strip_prefix("__")) {
            Some(id) => {
                let id: usize = id
                    .split('_')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(usize::MAX);
                let slot = alternatives.entry(id).or_insert_with(|| {
                    args.push(String::new());
                    (args.len() - 1, String::new())
                });
                if let Some(v) = value {
                    slot.1 = v;
                }
            }
            None => args.push(value.unwrap_or_default()),
        }
    }
    for (at, value) in alternatives.into_values() {
        args[at] = value;
    }
    Some(args)
}

/// Puts a sentence's arguments in the order its phrase's builder reads them.
fn reorder(sentence: &Sentence, captured: Vec<String>) -> Vec<String> {
    let mut args = vec![String::new(); captured.len()];
    for (value, &to) in captured.into_iter().zip(sentence.order) {
        if let Some(slot) = args.get_mut(to) {
            *slot = value;
        }
    }
    args
}

/// The forms of a check that may wait: `… within 30 seconds` (English) and `30 秒以内に …`
/// (Japanese), around any check phrase.
pub fn waiting_forms() -> &'static [(Regex, Lang); 2] {
    static FORMS: OnceLock<[(Regex, Lang); 2]> = OnceLock::new();
    FORMS.get_or_init(|| {
        [
            (
                Regex::new(r"^(?P<check>.+) within (?P<n>\d+) seconds?$").expect("static regex"),
                Lang::En,
            ),
            (
                Regex::new(r"^(?P<n>\d+) ?秒以内に、? ?(?P<check>.+)$").expect("static regex"),
                Lang::Ja,
            ),
        ]
    })
}

/// A check that may wait: the check's own text and the wait.
fn eventually(value: &str) -> Option<(String, Duration, Lang)> {
    waiting_forms().iter().find_map(|(re, lang)| {
        let caps = re.captures(value)?;
        let seconds: u64 = caps["n"].parse().ok()?;
        Some((
            caps["check"].to_owned(),
            Duration::from_secs(seconds),
            *lang,
        ))
    })
}

/// Compiles a step: which phrase it is, in which language, and the action it makes. A Then step
/// with a wait (`… within 30 seconds`) compiles its check and waits for it.
pub fn compile(step: &Step) -> Result<Compiled, CompileError> {
    if step.ty == StepType::Then
        && let Some((text, wait, lang)) = eventually(&step.value)
    {
        let inner = Step {
            value: text,
            ..step.clone()
        };
        let compiled = compile_phrase(&inner)?;
        let Action::Check(check) = compiled.action else {
            return Err(CompileError::Invalid(
                lang.pick("only a check can wait", "待てるのはチェックだけ")
                    .to_owned(),
            ));
        };
        let action = Action::Eventually(check, wait);
        action.validate(lang).map_err(CompileError::Invalid)?;
        return Ok(Compiled { action, ..compiled });
    }
    compile_phrase(step)
}

/// Compiles a step that is one phrase of the table.
fn compile_phrase(step: &Step) -> Result<Compiled, CompileError> {
    let mut found: Vec<(&Compiled1, Vec<String>)> = sentences()
        .iter()
        .filter(|s| PHRASES[s.phrase].ty == step.ty)
        .filter_map(|s| captured(&s.regex, &step.value).map(|args| (s, args)))
        .collect();
    let (sentence, args) = match found.len() {
        0 => return Err(CompileError::Undefined(step.value.clone())),
        1 => found.remove(0),
        _ => {
            return Err(CompileError::Ambiguous {
                text: step.value.clone(),
                matches: found
                    .iter()
                    .map(|(s, _)| s.regex.as_str().to_owned())
                    .collect(),
            });
        }
    };
    let phrase: &Phrase = PHRASES[sentence.phrase];
    let lang = sentence.lang;
    let words = match lang {
        Lang::En => &phrase.en,
        Lang::Ja => &phrase.ja,
    };
    let args = Args::new(reorder(words, args), step.docstring.as_deref(), lang);
    let action = (phrase.build)(&args).map_err(CompileError::Invalid)?;
    action.validate(lang).map_err(CompileError::Invalid)?;
    Ok(Compiled {
        action,
        lang,
        phrase: sentence.phrase,
    })
}

/// Compiles the text of a Then step (a check a mistake lists).
pub fn compile_check(text: &str, like: &Step) -> Result<Compiled, CompileError> {
    compile(&Step {
        keyword: "Then ".to_owned(),
        ty: StepType::Then,
        value: text.to_owned(),
        docstring: None,
        table: None,
        span: like.span,
        position: like.position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Check;
    use crate::steps::action::Check as AnyCheck;
    use cucumber::gherkin::{LineCol, Span};

    fn then(value: &str) -> Step {
        Step {
            keyword: "Then ".to_owned(),
            ty: StepType::Then,
            value: value.to_owned(),
            docstring: None,
            table: None,
            span: Span { start: 0, end: 0 },
            position: LineCol { line: 1, col: 1 },
        }
    }

    #[test]
    fn arguments_are_unescaped_and_reordered() {
        let c = compile(&then(
            r#""/root/lab/a.json" のクエリ '.a["x"] | .b' の結果が 2 個以上ある"#,
        ))
        .unwrap();
        assert_eq!(c.lang, Lang::Ja);
        match c.action {
            Action::Check(AnyCheck::Local(Check::Query { file, query, .. })) => {
                assert_eq!(file, std::path::PathBuf::from("/root/lab/a.json"));
                assert_eq!(query, r#".a["x"] | .b"#);
            }
            other => panic!("{other:?}"),
        }
        let c = compile(&then(r#"its output should contain "say \"hi\"""#)).unwrap();
        assert!(
            matches!(c.action, Action::Check(AnyCheck::Local(Check::OutputContains(t))) if t == "say \"hi\"")
        );
    }

    #[test]
    fn a_check_may_wait_in_either_language_but_not_on_a_finished_command() {
        let en = compile(&then(
            r#"the file "/root/a.txt" should exist within 30 seconds"#,
        ));
        let ja = compile(&then(r#"30 秒以内に ファイル "/root/a.txt" が存在する"#));
        for c in [en, ja] {
            match c.map(|c| c.action) {
                Ok(Action::Eventually(AnyCheck::Local(Check::FileExists(_)), wait)) => {
                    assert_eq!(wait, Duration::from_secs(30))
                }
                other => panic!("{other:?}"),
            }
        }
        let bad = compile(&then("the last command should succeed within 5 seconds"));
        assert!(
            matches!(&bad, Err(CompileError::Invalid(m)) if m.contains("finished command")),
            "{bad:?}"
        );
        let bad = compile(&then(
            r#"the file "/root/a.txt" should exist within 0 seconds"#,
        ));
        assert!(matches!(bad, Err(CompileError::Invalid(_))), "{bad:?}");
        let bad = compile(&then(
            r#"the file "/root/a.txt" should exist within 601 seconds"#,
        ));
        assert!(matches!(bad, Err(CompileError::Invalid(_))), "{bad:?}");
    }

    #[test]
    fn undefined_and_invalid_steps_say_why() {
        assert!(matches!(
            compile(&then("the moon should be full")),
            Err(CompileError::Undefined(_))
        ));
        let bad = compile(&then(r#"the file "relative.txt" should exist"#));
        assert!(matches!(bad, Err(CompileError::Invalid(_))), "{bad:?}");
        let bad = compile(&then(r#"the query ".[" on "/root/a.json" should equal 1"#));
        assert!(
            matches!(&bad, Err(CompileError::Invalid(m)) if m.contains("invalid jq query")),
            "{bad:?}"
        );
        let bad = compile(&then(r#"its output should match "(""#));
        assert!(
            matches!(&bad, Err(CompileError::Invalid(m)) if m.contains("invalid regular expression")),
            "{bad:?}"
        );
        let bad = compile(&then(
            "the file \"/a\" should have exactly 99999999999999999999999 lines",
        ));
        assert!(matches!(bad, Err(CompileError::Invalid(_))), "{bad:?}");
    }
}
