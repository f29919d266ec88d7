//! [`StepFault`]: why a step did not pass, as data. Steps build it, events and the run's record
//! carry it, and only the writers (console, JUnit, Cucumber JSON and messages, HTML, grade JSON,
//! GitHub, mutate's report) turn it into text, with [`StepFault::render`].

use std::time::Duration;

use super::Lang;

/// Why a step did not pass.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepFault {
    /// A check found the environment, or the learner's command, wrong: a verdict.
    Check {
        lang: Lang,
        expected: String,
        found: String,
        /// The sentence the lab gives a learner for this check (`# message: …`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<Message>,
    },
    /// A check could not be evaluated: the harness's or the author's problem, never a verdict.
    CheckError { lang: Lang, error: String },
    /// A learner's command ran past its time limit; its process group was killed.
    Timeout { lang: Lang, after: Duration },
    /// Before the step's commands ran, these of its checks already passed: it grades nothing.
    GradesNothing { lang: Lang, checks: Vec<String> },
    /// A mistake's listed checks that let its wrong answer through.
    NotRejected { lang: Lang, checks: Vec<String> },
    /// No phrase of the table matches the Gherkin step.
    Undefined { step: String },
    /// Several phrases match the Gherkin step.
    Ambiguous { detail: String },
    /// The step cannot do what it says (a fixture is missing, it does not compile), in the lab's
    /// language.
    Step { text: String },
    /// labcheck could not act (bash did not start, a hook failed, a defect of labcheck's).
    Harness { text: String },
}

/// The sentence a lab gives a learner when a check fails (`# message: …` above the check).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    pub text: String,
    /// Shown to a learner being graded: the message alone, not the check's expected value.
    pub for_learner: bool,
}

impl StepFault {
    /// Whether the fault is the harness's (a check error included), not the learner's.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            StepFault::CheckError { .. } | StepFault::Harness { .. }
        )
    }

    /// Whether a learner's command ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, StepFault::Timeout { .. })
    }

    /// The fault as a person reads it, in the language it was made in: a failed check with a
    /// message shows the message (and, for the author, what the check expected and found).
    pub fn render(&self) -> String {
        match self {
            StepFault::Check {
                lang,
                expected,
                found,
                message,
            } => {
                let verdict = expected_found(*lang, expected, found);
                match message {
                    Some(m) if m.for_learner => m.text.clone(),
                    Some(m) => format!("{}\n{verdict}", m.text),
                    None => verdict,
                }
            }
            StepFault::CheckError { lang, error } => {
                format!("{} {error}", lang.pick("check error:", "チェックエラー:"))
            }
            StepFault::Timeout { lang, after } => format!(
                "{} {}s ({})",
                lang.pick("the command timed out after", "コマンドがタイムアウトした:"),
                after.as_secs(),
                lang.pick(
                    "its whole process group was killed",
                    "プロセスグループごと終了させた"
                )
            ),
            StepFault::GradesNothing { lang, checks } => format!(
                "{}\n  {}",
                lang.pick(
                    "these checks already pass before the step (they grade nothing):",
                    "次のチェックはステップの前からすでに合格している(何も採点していない):"
                ),
                checks.join("\n  ")
            ),
            StepFault::NotRejected { lang, checks } => format!(
                "{}\n  {}",
                lang.pick(
                    "these checks did not reject the wrong answer:",
                    "次のチェックが間違った解答を不合格にしなかった:"
                ),
                checks.join("\n  ")
            ),
            StepFault::Undefined { step } => format!("undefined step: {step}"),
            StepFault::Ambiguous { detail } => format!("ambiguous step: {detail}"),
            StepFault::Step { text } | StepFault::Harness { text } => text.clone(),
        }
    }

    /// The first line of [`StepFault::render`], for one-line listings.
    pub fn headline(&self) -> String {
        self.render().lines().next().unwrap_or_default().to_owned()
    }
}

/// What a check expected and what it found, as a learner reads it.
pub fn expected_found(lang: Lang, expected: &str, found: &str) -> String {
    match lang {
        Lang::En => format!("expected: {expected}\n   found: {found}"),
        Lang::Ja => format!("期待: {expected}\n実際: {found}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_for_a_learner_hides_the_expected_value_and_one_for_an_author_shows_both() {
        let check = |for_learner| StepFault::Check {
            lang: Lang::En,
            expected: "exit 0".into(),
            found: "exit 1".into(),
            message: Some(Message {
                text: "Install first.".into(),
                for_learner,
            }),
        };
        assert_eq!(check(true).render(), "Install first.");
        assert_eq!(
            check(false).render(),
            "Install first.\nexpected: exit 0\n   found: exit 1"
        );
        assert!(!check(false).is_error());
    }

    #[test]
    fn faults_keep_their_kind_through_the_record() {
        let faults = [
            StepFault::Timeout {
                lang: Lang::Ja,
                after: Duration::from_secs(30),
            },
            StepFault::CheckError {
                lang: Lang::En,
                error: "jq query \".a\" failed: boom".into(),
            },
            StepFault::NotRejected {
                lang: Lang::En,
                checks: vec!["a".into(), "b".into()],
            },
        ];
        for fault in faults {
            let json = serde_json::to_string(&fault).expect("serialize");
            let back: StepFault = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, fault, "{json}");
        }
        let timeout = StepFault::Timeout {
            lang: Lang::Ja,
            after: Duration::from_secs(30),
        };
        assert!(timeout.is_timeout() && !timeout.is_error());
        assert_eq!(
            timeout.render(),
            "コマンドがタイムアウトした: 30s (プロセスグループごと終了させた)"
        );
    }
}
