//! Checks: pure functions of a cell's environment (its files, the last learner command, later its
//! cluster) that pass or fail with a message a learner can read, in the lab's language.
//!
//! A [`Check`] is data; [`Check::evaluate`] reads what it needs through [`Env`] and returns a
//! [`Fault`] when it does not pass: a [`Failure`] (what was expected, what was found — a verdict
//! on the environment), or a [`CheckError`] (the check could not be evaluated — a harness error,
//! never a verdict).

pub mod cluster;
pub mod documents;
mod error;
mod files;
pub mod jq;
mod notes;
pub mod oracle;

pub use cluster::ClusterCheck;
pub use documents::{Document, Expect, JsonType, query};
pub use error::{CheckError, Fault};
pub use oracle::{OracleCheck, OutputExpect};

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::model::{Lang, Transcript};

/// What checks may look at.
pub struct Env<'a> {
    /// Reads a file as the learner sees it (inside the cell's sandbox).
    pub read: &'a dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    /// The last learner command of the current scenario.
    pub last: Option<&'a Transcript>,
}

/// How the last command should have ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exit {
    Success,
    Failure,
    Code(i32),
}

/// One gradable expectation. See the vocabulary table in the README.
#[derive(Clone, Debug)]
pub enum Check {
    LastExit(Exit),
    OutputContains(String),
    OutputMatches(Regex),
    /// No line of the output contains the text.
    OutputLacks(String),
    /// No part of the output matches the regex.
    OutputMismatches(Regex),
    FileExists(PathBuf),
    /// The file is not there (nothing at the path).
    FileAbsent(PathBuf),
    FileNonEmpty(PathBuf),
    FileContains(PathBuf, String),
    FileLacks(PathBuf, String),
    FileMatches(PathBuf, Regex),
    LinesMatchingAtLeast(PathBuf, usize, Regex),
    LineCount(PathBuf, usize),
    /// A jq query on a document, with what its results should be.
    Query {
        file: PathBuf,
        query: String,
        expect: Expect,
    },
    QueryType {
        file: PathBuf,
        query: String,
        ty: JsonType,
    },
    QueryEqualsQuery {
        file: PathBuf,
        query: String,
        other: PathBuf,
        other_query: String,
    },
    MentionsAny(PathBuf, Vec<String>),
    MentionsAll(PathBuf, Vec<String>),
}

/// Why a check did not hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub expected: String,
    pub found: String,
}

impl Failure {
    pub fn new(expected: impl Into<String>, found: impl Into<String>) -> Self {
        Failure {
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// The failure as the learner reads it.
    pub fn render(&self, lang: Lang) -> String {
        crate::model::expected_found(lang, &self.expected, &self.found)
    }
}

impl Check {
    /// Whether the check looks at the last learner command rather than the environment. Such
    /// checks take no part in discrimination: before a step nothing has run.
    pub fn is_about_command(&self) -> bool {
        matches!(
            self,
            Check::LastExit(_)
                | Check::OutputContains(_)
                | Check::OutputMatches(_)
                | Check::OutputLacks(_)
                | Check::OutputMismatches(_)
        )
    }

    /// Validates what can be known without an environment: its paths are absolute and normal,
    /// its queries compile (lint).
    pub fn validate(&self) -> Result<(), CheckError> {
        use Check::*;
        match self {
            LastExit(_) | OutputContains(_) | OutputMatches(_) | OutputLacks(_)
            | OutputMismatches(_) => Ok(()),
            FileExists(p)
            | FileAbsent(p)
            | FileNonEmpty(p)
            | FileContains(p, _)
            | FileLacks(p, _)
            | FileMatches(p, _)
            | LinesMatchingAtLeast(p, ..)
            | LineCount(p, _)
            | MentionsAny(p, _)
            | MentionsAll(p, _) => lab_path(p),
            Query { file, query, .. } | QueryType { file, query, .. } => {
                lab_path(file)?;
                documents::compile(query)
            }
            QueryEqualsQuery {
                file,
                query,
                other,
                other_query,
            } => {
                lab_path(file)?;
                lab_path(other)?;
                documents::compile(query)?;
                documents::compile(other_query)
            }
        }
    }

    /// Evaluates the check.
    pub fn evaluate(&self, env: &Env<'_>, lang: Lang) -> Result<(), Fault> {
        match self {
            Check::LastExit(_)
            | Check::OutputContains(_)
            | Check::OutputMatches(_)
            | Check::OutputLacks(_)
            | Check::OutputMismatches(_) => Ok(command(self, env.last, lang)?),
            Check::FileExists(_)
            | Check::FileAbsent(_)
            | Check::FileNonEmpty(_)
            | Check::FileContains(..)
            | Check::FileLacks(..)
            | Check::FileMatches(..)
            | Check::LinesMatchingAtLeast(..)
            | Check::LineCount(..) => files::evaluate(self, env, lang),
            Check::Query { .. } | Check::QueryType { .. } | Check::QueryEqualsQuery { .. } => {
                documents::evaluate(self, env, lang)
            }
            Check::MentionsAny(..) | Check::MentionsAll(..) => notes::evaluate(self, env, lang),
        }
    }
}

/// A path a lab names: absolute, with no `.` or `..` in it.
pub fn lab_path(p: &Path) -> Result<(), CheckError> {
    if !p.is_absolute() {
        return Err(CheckError::Path(
            p.to_owned(),
            "a relative path: write the absolute path the learner sees".to_owned(),
        ));
    }
    if !crate::sandbox::is_normal(p) {
        return Err(CheckError::Path(
            p.to_owned(),
            "has `.` or `..` in it: write the path it means".to_owned(),
        ));
    }
    Ok(())
}

fn command(check: &Check, last: Option<&Transcript>, lang: Lang) -> Result<(), Failure> {
    let Some(t) = last else {
        return Err(Failure::new(
            lang.pick(
                "a learner command to have run",
                "学習者のコマンドが実行済みであること",
            ),
            lang.pick(
                "no command has run in this step",
                "このステップではまだコマンドが実行されていない",
            ),
        ));
    };
    let ended = || match (t.timed_out, t.exit_code) {
        (true, _) => lang.pick("timed out", "タイムアウト").to_owned(),
        (false, Some(c)) => format!("exit {c}"),
        (false, None) => lang.pick("killed by a signal", "シグナルで終了").to_owned(),
    };
    let output = format!("{}{}", t.stdout, t.stderr);
    // A failure on a cut output says so: what the check did not find may lie past the cut.
    let excerpt = |text: &str| match t.truncation_note() {
        Some(note) => format!("{}\n{note}", excerpt(text)),
        None => excerpt(text),
    };
    match check {
        Check::LastExit(exit) => last_exit(*exit, t, lang).map_err(|expected| {
            Failure::new(expected, format!("{}\n{}", ended(), excerpt(&output)))
        }),
        Check::OutputContains(text) => {
            if output.contains(text.as_str()) {
                Ok(())
            } else {
                Err(Failure::new(
                    format!(
                        "{} {text:?}",
                        lang.pick("output containing", "次を含む出力:")
                    ),
                    excerpt(&output),
                ))
            }
        }
        Check::OutputMatches(re) => {
            if re.is_match(&output) {
                Ok(())
            } else {
                Err(Failure::new(
                    format!(
                        "{} /{re}/",
                        lang.pick("output matching", "次にマッチする出力:")
                    ),
                    excerpt(&output),
                ))
            }
        }
        Check::OutputLacks(text) => absent(
            output.lines().find(|l| l.contains(text.as_str())),
            format!(
                "{} {text:?}",
                lang.pick("output without", "次を含まない出力:")
            ),
            t,
        ),
        Check::OutputMismatches(re) => absent(
            re.find(&output).map(|m| line_of(&output, m.range())),
            format!(
                "{} /{re}/",
                lang.pick("output not matching", "次にマッチしない出力:")
            ),
            t,
        ),
        _ => Ok(()),
    }
}

/// Whether the command ended as `exit` says; what was expected when it did not.
fn last_exit(exit: Exit, t: &Transcript, lang: Lang) -> Result<(), String> {
    let ok = match exit {
        Exit::Success => t.exit_code == Some(0),
        Exit::Failure => matches!(t.exit_code, Some(c) if c != 0),
        Exit::Code(n) => t.exit_code == Some(n),
    };
    if ok {
        return Ok(());
    }
    Err(match exit {
        Exit::Success => lang.pick("exit 0", "終了コード 0").to_owned(),
        Exit::Failure => lang
            .pick("a non-zero exit", "0 以外の終了コード")
            .to_owned(),
        Exit::Code(n) => format!("exit {n}"),
    })
}

/// The whole line of `text` around a match.
fn line_of(text: &str, found: std::ops::Range<usize>) -> &str {
    let start = text[..found.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[found.end..]
        .find('\n')
        .map_or(text.len(), |i| found.end + i);
    &text[start..end]
}

/// A negative check's verdict: the line where what should be absent was `found`, else a pass —
/// unless the output was cut, since what the check did not find may lie past the cut.
fn absent(found: Option<&str>, expected: String, t: &Transcript) -> Result<(), Failure> {
    match (found, t.truncation_note()) {
        (Some(line), _) => Err(Failure::new(
            expected,
            line.trim().chars().take(160).collect::<String>(),
        )),
        (None, Some(note)) => Err(Failure::new(expected, note)),
        (None, None) => Ok(()),
    }
}

/// The first lines of a text, for a failure message.
pub fn excerpt(text: &str) -> String {
    const LINES: usize = 8;
    if text.trim().is_empty() {
        return "(empty)".to_owned();
    }
    let mut lines: Vec<&str> = text.lines().take(LINES).collect();
    let total = text.lines().count();
    let mut out = String::new();
    for l in lines.drain(..) {
        let l: String = l.chars().take(160).collect();
        out.push_str(&format!("\n      | {l}"));
    }
    if total > LINES {
        out.push_str(&format!("\n      | … ({} more lines)", total - LINES));
    }
    out
}

/// Reads a file for a check. A missing file, or a directory where a file should be, is a
/// failure in the learner's terms; anything else that stops the read (a FIFO or a device, a file
/// over the size bound, an I/O error) is a [`CheckError`].
fn read_text(env: &Env<'_>, path: &Path, lang: Lang) -> Result<String, Fault> {
    use std::io::ErrorKind;
    match (env.read)(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Failure::new(
            format!("{} {}", lang.pick("the file", "ファイル"), path.display()),
            lang.pick("no such file", "ファイルが存在しない"),
        )
        .into()),
        Err(e) if e.kind() == ErrorKind::IsADirectory => Err(Failure::new(
            format!("{} {}", lang.pick("the file", "ファイル"), path.display()),
            lang.pick("a directory", "ディレクトリ"),
        )
        .into()),
        Err(source) => Err(CheckError::Read {
            path: path.to_owned(),
            source: std::sync::Arc::new(source),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(stdout: &str, truncated: bool) -> Transcript {
        Transcript {
            stdout: stdout.to_owned(),
            exit_code: Some(0),
            truncated,
            ..Transcript::default()
        }
    }

    #[test]
    fn negative_output_checks_name_the_line_that_breaks_them_and_never_pass_on_cut_output() {
        let denied = ran(
            "ok\ncurl: (56) Recv failure: Connection reset by peer\n",
            false,
        );
        let lacks = Check::OutputLacks("reset by peer".into());
        let failure = command(&lacks, Some(&denied), Lang::En).expect_err("found");
        assert_eq!(
            failure.found,
            "curl: (56) Recv failure: Connection reset by peer"
        );
        assert!(command(&Check::OutputLacks("403".into()), Some(&denied), Lang::En).is_ok());

        let re = Regex::new("Recv fail(ure)?").expect("regex");
        let mismatch = Check::OutputMismatches(re);
        let failure = command(&mismatch, Some(&denied), Lang::Ja).expect_err("matched");
        assert!(
            failure.expected.contains("次にマッチしない出力"),
            "{failure:?}"
        );
        assert!(failure.found.starts_with("curl: (56)"), "{failure:?}");
        let clean = ran("HTTP/1.1 200 OK\n", false);
        assert!(command(&mismatch, Some(&clean), Lang::En).is_ok());

        let cut = ran("HTTP/1.1 200 OK\n", true);
        let failure = command(&lacks, Some(&cut), Lang::En).expect_err("cut output");
        assert!(failure.found.contains("output cut"), "{failure:?}");
        assert!(command(&mismatch, Some(&cut), Lang::En).is_err());
        assert!(lacks.is_about_command() && mismatch.is_about_command());
    }
}
