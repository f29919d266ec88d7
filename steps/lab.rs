//! [`CompiledLab`]: a lab's steps compiled once, when lint parses it — every step's
//! [`Compiled`] action by its line, each check a mistake lists resolved through the lab's names
//! and compiled, and the lab's names and messages. Lint's problems, the world, discrimination,
//! mistakes, grading and checkpoint keys read it; nothing compiles a step again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cucumber::gherkin;

use super::action::{Action, Check, listed_with_lines};
use super::compile::{CompileError, Compiled, compile, compile_check};
use super::names::{LabelProblem, Names, UnknownName};
use crate::model::Lang;

/// One check a mistake lists, as written on its line and as compiled.
#[derive(Clone, Debug)]
pub struct Listed {
    pub line: usize,
    /// The line as written (a check, or a reference to a named one).
    pub written: String,
    /// The check it stands for, compiled; an unknown name when the reference names nothing.
    pub check: Result<(String, Result<Compiled, CompileError>), UnknownName>,
}

impl Listed {
    /// The check as a report shows it: a reference with the check it stands for.
    pub fn shown(&self) -> String {
        match &self.check {
            Ok((resolved, _)) if *resolved != self.written => {
                format!("{}: {resolved}", self.written)
            }
            _ => self.written.clone(),
        }
    }
}

/// A lab's steps, compiled.
#[derive(Debug, Default)]
pub struct CompiledLab {
    steps: BTreeMap<usize, Result<Compiled, CompileError>>,
    listed: BTreeMap<usize, Vec<Listed>>,
    names: Names,
    /// The naming comments that name nothing, or a name twice (lint reports them).
    label_problems: Vec<LabelProblem>,
}

impl CompiledLab {
    /// Compiles every step of a feature (Background, Scenarios, Rules) and the checks its
    /// mistakes list; `text` is the feature's text, where the checks' names are.
    pub fn new(text: &str, feature: &gherkin::Feature) -> CompiledLab {
        let (names, label_problems) = Names::find(text, feature);
        let mut steps = BTreeMap::new();
        let mut listed = BTreeMap::new();
        for step in super::all_steps(feature) {
            let compiled = compile(step);
            if let Ok(Compiled {
                action: Action::Reject(_),
                ..
            }) = &compiled
            {
                let checks = listed_with_lines(step)
                    .into_iter()
                    .map(|(line, written)| Listed {
                        line,
                        check: names
                            .resolve(&written)
                            .map(|resolved| (resolved.clone(), compile_check(&resolved, step))),
                        written,
                    })
                    .collect();
                listed.insert(step.position.line, checks);
            }
            steps.insert(step.position.line, compiled);
        }
        CompiledLab {
            steps,
            listed,
            names,
            label_problems,
        }
    }

    /// The step on that line, compiled (an undefined one for a line with no step).
    pub fn step(&self, line: usize) -> Result<&Compiled, &CompileError> {
        static NONE: std::sync::LazyLock<CompileError> =
            std::sync::LazyLock::new(|| CompileError::Undefined(String::new()));
        match self.steps.get(&line) {
            Some(compiled) => compiled.as_ref(),
            None => Err(&NONE),
        }
    }

    /// The action of the step on that line, when it compiled.
    pub fn action(&self, line: usize) -> Option<&Action> {
        self.step(line).ok().map(|c| &c.action)
    }

    /// The check of the step on that line, waiting or not, with its language.
    pub fn check(&self, line: usize) -> Option<(&Check, Lang)> {
        let compiled = self.step(line).ok()?;
        Some((compiled.action.check()?, compiled.lang))
    }

    /// Whether the step on that line checks the learner's last command (which grading does not
    /// run).
    pub fn about_command(&self, line: usize) -> bool {
        self.check(line).is_some_and(|(c, _)| c.is_about_command())
    }

    /// The checks the mistake's step on that line lists.
    pub fn listed(&self, line: usize) -> &[Listed] {
        self.listed
            .get(&line)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The lab's named checks and messages.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The lab's naming comments that name nothing, or a name twice.
    pub fn label_problems(&self) -> &[LabelProblem] {
        &self.label_problems
    }

    /// The fixtures the lab's steps copy into a cell: each such step's line and the fixture's
    /// source as found from the lab at `origin` (`None` when it is not there).
    pub fn fixtures(&self, origin: &Path) -> Vec<(usize, Option<PathBuf>)> {
        self.steps
            .iter()
            .filter_map(|(line, compiled)| match &compiled.as_ref().ok()?.action {
                Action::Fixture { src, .. } => {
                    Some((*line, crate::cell::fixture_source(origin, src)))
                }
                _ => None,
            })
            .collect()
    }
}
