//! Oracle checks: a learner's file compared with the output of a command the grader itself runs
//! in the cell at check time (the cell's tools, sandbox, KUBECONFIG and a timeout). This is how a
//! lab says "the output of `istioctl version`" and means it: a typed-in value that only looks
//! right does not pass. And the grader's command's own output judged ([`OracleCheck::Output`]):
//! what a learner sees when they run it, tried again with a wait as a learner tries a request
//! again while the proxies converge.
//!
//! This module judges; running the grader's command is the caller's (it needs the cell).

use std::path::{Path, PathBuf};

use super::documents::{compile, parse_text, query, same, single};
use super::{CheckError, Env, Failure, Fault, excerpt, lab_path, read_text};
use crate::model::{Lang, Transcript};

/// How a file is compared with the grader's command's output (its stdout).
#[derive(Clone, Debug)]
pub enum OracleCheck {
    /// Equal, with trailing whitespace of each line and trailing blank lines ignored.
    Equals { file: PathBuf, command: String },
    /// Every non-blank line of the output is a line of the file (whitespace at either end of a
    /// line ignored, so a count column padded differently still matches).
    ContainsLines { file: PathBuf, command: String },
    /// A jq query on the file equals a jq query on the output parsed as YAML or JSON; an output
    /// of several YAML documents is one array of them (as `jq -s` reads them), so a query can
    /// count across documents.
    QueryEquals {
        file: PathBuf,
        query: String,
        command: String,
        output_query: String,
    },
    /// The command's output itself (stdout, then stderr, whatever its exit code) contains, matches
    /// or lacks something: no learner's file.
    Output {
        command: String,
        expect: OutputExpect,
    },
}

/// What the grader's command's output should hold ([`OracleCheck::Output`]).
#[derive(Clone, Debug)]
pub enum OutputExpect {
    Contains(String),
    Matches(regex::Regex),
    Lacks(String),
}

impl OracleCheck {
    /// The grader's command.
    pub fn command(&self) -> &str {
        match self {
            OracleCheck::Equals { command, .. }
            | OracleCheck::ContainsLines { command, .. }
            | OracleCheck::QueryEquals { command, .. }
            | OracleCheck::Output { command, .. } => command,
        }
    }

    /// The learner's file, if the check compares one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            OracleCheck::Equals { file, .. }
            | OracleCheck::ContainsLines { file, .. }
            | OracleCheck::QueryEquals { file, .. } => Some(file),
            OracleCheck::Output { .. } => None,
        }
    }

    /// Lint: the path is a lab path, the queries compile, the command is not empty.
    pub fn validate(&self) -> Result<(), CheckError> {
        if let Some(file) = self.file() {
            lab_path(file)?;
        }
        if self.command().trim().is_empty() {
            return Err(CheckError::Oracle {
                command: String::new(),
                reason: "is empty".to_owned(),
            });
        }
        if let OracleCheck::QueryEquals {
            query,
            output_query,
            ..
        } = self
        {
            compile(query)?;
            compile(output_query)?;
        }
        Ok(())
    }

    /// Reads the learner's file (none for [`OracleCheck::Output`]): a missing file fails before
    /// the grader's command runs.
    pub fn read(&self, env: &Env<'_>, lang: Lang) -> Result<String, Fault> {
        match self.file() {
            Some(file) => read_text(env, file, lang),
            None => Ok(String::new()),
        }
    }

    /// Judges the learner's `text` against what the grader's command did.
    pub fn judge(&self, text: &str, run: &Transcript, lang: Lang) -> Result<(), Fault> {
        if let OracleCheck::Output { command, expect } = self {
            return judge_output(command, expect, run, lang);
        }
        let output = oracle_output(self.command(), run)?;
        match self {
            OracleCheck::Equals { file, command } => {
                if normalise(text) == normalise(&output) {
                    return Ok(());
                }
                Err(Failure::new(
                    format!(
                        "{} {} {command:?}:{}",
                        file.display(),
                        lang.pick("equal to the output of", "がコマンドの出力と等しいこと:"),
                        excerpt(&output)
                    ),
                    first_difference(text, &output, lang),
                )
                .into())
            }
            OracleCheck::ContainsLines { file, command } => {
                let have: Vec<&str> = text.lines().map(str::trim).collect();
                let missing: Vec<&str> = output
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.trim().is_empty() && !have.contains(l))
                    .collect();
                if missing.is_empty() {
                    return Ok(());
                }
                Err(Failure::new(
                    format!(
                        "{} {} {command:?}",
                        file.display(),
                        lang.pick(
                            "to hold every line of the output of",
                            "にコマンドの出力のすべての行が含まれること:"
                        )
                    ),
                    format!(
                        "{} {}:{}",
                        missing.len(),
                        lang.pick("lines missing, the first", "行が欠けている。最初の行"),
                        excerpt(&missing.join("\n"))
                    ),
                )
                .into())
            }
            OracleCheck::QueryEquals {
                file,
                query: code,
                command,
                output_query,
            } => {
                let docs = parse_text(file, text, lang)?;
                let left = single(query(&docs, code)?, file, code, lang)?;
                let out_docs = parse_output(command, &output)?;
                let source = PathBuf::from(format!("`{command}`"));
                let right = single(query(&out_docs, output_query)?, &source, output_query, lang)?;
                Ok(same(&left, &right, || {
                    format!("{} {code} = `{command}` {output_query}", file.display())
                })?)
            }
            OracleCheck::Output { .. } => Ok(()),
        }
    }
}

/// Judges the grader's command's own output (stdout, then stderr), whatever its exit code — a
/// refused request's error is an output to judge — unless it did not run to its end.
fn judge_output(
    command: &str,
    expect: &OutputExpect,
    run: &Transcript,
    lang: Lang,
) -> Result<(), Fault> {
    let err = |reason: String| {
        Fault::Error(CheckError::Oracle {
            command: command.to_owned(),
            reason,
        })
    };
    match run.exit_code {
        _ if run.timed_out => {
            return Err(err(format!(
                "did not finish within {:.0}s",
                run.duration.as_secs_f64()
            )));
        }
        None => return Err(err("was killed by a signal".to_owned())),
        Some(c @ (126 | 127)) => {
            return Err(err(format!(
                "could not run (exit {c}): {}",
                run.stderr.lines().next().unwrap_or_default()
            )));
        }
        Some(_) => {}
    }
    let output = format!("{}{}", run.stdout, run.stderr);
    let found = || {
        let mut text = excerpt(&output);
        if let Some(note) = run.truncation_note() {
            text = format!("{text}\n{note}");
        }
        format!("exit {}:{text}", run.exit_code.unwrap_or_default())
    };
    let held = match expect {
        OutputExpect::Contains(t) => output.contains(t.as_str()),
        OutputExpect::Matches(re) => re.is_match(&output),
        // What a cut output did not show may lie past the cut: a negative check fails on it.
        OutputExpect::Lacks(t) => !run.truncated && !output.contains(t.as_str()),
    };
    if held {
        return Ok(());
    }
    let expected = match expect {
        OutputExpect::Contains(t) => format!(
            "{} {command:?} {} {t:?}",
            lang.pick("the output of", "コマンド"),
            lang.pick("containing", "の出力に次を含むこと:")
        ),
        OutputExpect::Matches(re) => format!(
            "{} {command:?} {} /{re}/",
            lang.pick("the output of", "コマンド"),
            lang.pick("matching", "の出力が次にマッチすること:")
        ),
        OutputExpect::Lacks(t) => format!(
            "{} {command:?} {} {t:?}",
            lang.pick("the output of", "コマンド"),
            lang.pick("without", "の出力に次を含まないこと:")
        ),
    };
    Err(Failure::new(expected, found()).into())
}

/// The output the grader's command gave, or why it cannot serve as an answer key: it did not
/// finish, bash could not run it, or it printed nothing while failing.
fn oracle_output(command: &str, run: &Transcript) -> Result<String, CheckError> {
    let err = |reason: String| CheckError::Oracle {
        command: command.to_owned(),
        reason,
    };
    if run.timed_out {
        return Err(err(format!(
            "did not finish within {:.0}s",
            run.duration.as_secs_f64()
        )));
    }
    if run.truncated {
        return Err(err(format!(
            "printed more than {} MiB, so its whole output is not known",
            Transcript::OUTPUT_LIMIT >> 20
        )));
    }
    match run.exit_code {
        None => Err(err("was killed by a signal".to_owned())),
        Some(c @ (2 | 126 | 127)) if run.stdout.trim().is_empty() => Err(err(format!(
            "could not run (exit {c}): {}",
            run.stderr.lines().next().unwrap_or_default()
        ))),
        Some(c) if c != 0 && run.stdout.trim().is_empty() => Err(err(format!(
            "failed (exit {c}) and printed nothing: {}",
            run.stderr.lines().next().unwrap_or_default()
        ))),
        Some(_) => Ok(run.stdout.clone()),
    }
}

fn parse_output(command: &str, output: &str) -> Result<Vec<serde_json::Value>, CheckError> {
    let trimmed = output.trim_start();
    let hint = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        "output.json"
    } else {
        "output.yaml"
    };
    let mut docs =
        super::Document::parse(Path::new(hint), output).map_err(|e| CheckError::Oracle {
            command: command.to_owned(),
            reason: format!("printed no YAML or JSON: {e}"),
        })?;
    Ok(match docs.len() {
        1 => vec![docs.remove(0)],
        _ => vec![serde_json::Value::Array(docs)],
    })
}

/// Text with trailing whitespace of each line and trailing blank lines removed.
fn normalise(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

/// Where the learner's text first differs from the expected output.
fn first_difference(text: &str, expected: &str, lang: Lang) -> String {
    let (a, b) = (normalise(text), normalise(expected));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i), lb.get(i));
        if x != y {
            let none = lang.pick("(no line)", "(行なし)");
            return format!(
                "{} {}: {:?} ≠ {:?}",
                lang.pick("line", "行"),
                i + 1,
                x.copied().unwrap_or(none),
                y.copied().unwrap_or(none)
            );
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(stdout: &str, exit: i32) -> Transcript {
        Transcript {
            stdout: stdout.to_owned(),
            exit_code: Some(exit),
            ..Transcript::default()
        }
    }

    fn equals() -> OracleCheck {
        OracleCheck::Equals {
            file: "/root/v.txt".into(),
            command: "istioctl version".into(),
        }
    }

    #[test]
    fn equal_ignores_trailing_whitespace_only() {
        let run = ran("client version: 1.31\n\n", 0);
        assert!(
            equals()
                .judge("client version: 1.31  \n", &run, Lang::En)
                .is_ok()
        );
        let typed = equals().judge("client version: 1.30\n", &run, Lang::En);
        assert!(matches!(typed, Err(Fault::Failed(_))), "{typed:?}");
    }

    #[test]
    fn every_line_must_be_there() {
        let check = OracleCheck::ContainsLines {
            file: "/root/a".into(),
            command: "c".into(),
        };
        let run = ran("a\nb\n", 0);
        assert!(check.judge("x\nb\na\n", &run, Lang::En).is_ok());
        assert!(matches!(
            check.judge("a\n", &run, Lang::Ja),
            Err(Fault::Failed(_))
        ));
    }

    #[test]
    fn a_command_that_cannot_run_is_an_error_not_a_verdict() {
        let run = Transcript {
            stderr: "bash: istioctl: command not found".into(),
            exit_code: Some(127),
            ..Transcript::default()
        };
        assert!(matches!(
            equals().judge("", &run, Lang::En),
            Err(Fault::Error(CheckError::Oracle { .. }))
        ));
        // An answer key that was cut is no answer key.
        let cut = Transcript {
            truncated: true,
            ..ran("1.31\n", 0)
        };
        assert!(matches!(
            equals().judge("1.31\n", &cut, Lang::En),
            Err(Fault::Error(CheckError::Oracle { .. }))
        ));
        // A tool that exits non-zero with an answer (analyze: 79) is still an answer key.
        assert!(
            equals()
                .judge("found\n", &ran("found\n", 79), Lang::En)
                .is_ok()
        );
    }

    #[test]
    fn queries_compare_file_and_output() {
        let check = OracleCheck::QueryEquals {
            file: "/root/r.json".into(),
            query: ".n".into(),
            command: "kubectl get ns -o json".into(),
            output_query: ".items | length".into(),
        };
        let run = ran("{\"items\": [1, 2]}", 0);
        assert!(check.judge("{\"n\": 2}", &run, Lang::En).is_ok());
        let several = OracleCheck::QueryEquals {
            file: "/root/r.json".into(),
            query: ".n".into(),
            command: "istioctl manifest generate".into(),
            output_query: "[.[] | select(.kind == \"A\")] | length".into(),
        };
        let docs = ran("kind: A\n---\nkind: B\n---\nkind: A\n", 0);
        assert!(several.judge("{\"n\": 2}", &docs, Lang::En).is_ok());
        assert!(matches!(
            check.judge("{\"n\": 3}", &run, Lang::En),
            Err(Fault::Failed(_))
        ));
    }

    #[test]
    fn a_commands_own_output_is_judged_whatever_its_exit_and_errors_only_when_it_did_not_run() {
        let output = |expect: OutputExpect| OracleCheck::Output {
            command: "curl -sS http://web/".into(),
            expect,
        };
        let refused = Transcript {
            stderr: "curl: (56) Recv failure: Connection reset by peer\n".into(),
            exit_code: Some(56),
            ..Transcript::default()
        };
        let contains = output(OutputExpect::Contains("200 OK".into()));
        assert!(matches!(
            contains.judge("", &refused, Lang::En),
            Err(Fault::Failed(f)) if f.found.contains("exit 56") && f.found.contains("reset by peer")
        ));
        assert!(
            contains
                .judge("", &ran("HTTP/1.1 200 OK\n", 0), Lang::En)
                .is_ok()
        );
        let lacks = output(OutputExpect::Lacks("200 OK".into()));
        assert!(lacks.judge("", &refused, Lang::En).is_ok());
        let cut = Transcript {
            truncated: true,
            ..ran("x", 0)
        };
        assert!(matches!(
            lacks.judge("", &cut, Lang::En),
            Err(Fault::Failed(_))
        ));
        let matches = output(OutputExpect::Matches(
            regex::Regex::new("(?m)^curl: \\(56\\)").expect("re"),
        ));
        assert!(matches.judge("", &refused, Lang::Ja).is_ok());
        let missing = Transcript {
            stderr: "bash: curl: command not found".into(),
            exit_code: Some(127),
            ..Transcript::default()
        };
        assert!(matches!(
            contains.judge("", &missing, Lang::En),
            Err(Fault::Error(CheckError::Oracle { .. }))
        ));
        assert!(contains.file().is_none() && contains.validate().is_ok());
    }
}
