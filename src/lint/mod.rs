//! Lint and parse: reads a feature file, reports Gherkin problems with file:line:col and a hint
//! (full-width colons and spaces after keywords, keywords the parser lacks, parse errors,
//! undefined or ambiguous steps with the nearest known phrase) and, when there are none, turns it
//! into a [`Lab`].

use std::fmt;
use std::path::{Path, PathBuf};

use cucumber::gherkin::{self, GherkinEnv};

use crate::model::{Lab, LabStep, Lang, StepKind};
use crate::steps::lab::CompiledLab;

mod steps;
mod structure;
mod text;

use steps::check_steps;
use structure::limits;
pub use structure::scenarios_in_order;
use text::{parse_error_position, scan_text};

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
    /// Feature tags that set a cell's limits (`@memory=8GiB`, `@pids=8192`, `@cpus=1.5`).
    pub const MEMORY: &[&str] = &["memory=", "メモリ="];
    pub const PIDS: &[&str] = &["pids=", "プロセス数="];
    pub const CPUS: &[&str] = &["cpus=", "CPU数="];
    /// Feature tags that say what a lab's cells need: a cluster, Istio's matrix, a live mesh
    /// (which implies `@istio`).
    pub const KUBERNETES: &[&str] = &["kubernetes"];
    pub const ISTIO: &[&str] = &["istio"];
    pub const MESH: &[&str] = &["mesh", "メッシュ"];
    /// A live mesh with two Istio versions, once per adjacent pair of the matrix (implies
    /// `@mesh`).
    pub const UPGRADE: &[&str] = &["upgrade", "アップグレード"];
    /// A real node: the kubelet, a container runtime, kube-proxy and CoreDNS.
    pub const NODE: &[&str] = &["node", "ノード"];

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

/// A lab that lints, and its steps compiled once: what a run hands down to its cells.
#[derive(Debug)]
pub struct Linted {
    pub lab: Lab,
    pub compiled: CompiledLab,
}

/// Lints a feature file. `Ok` holds the lab when there are no problems.
pub fn load(path: &Path) -> Result<Result<Linted, Vec<Problem>>, ReadError> {
    load_as(path, path)
}

/// Like [`load`], for a copy of the lab at `origin` (a mutant): its fixtures are looked for
/// from `origin`, and the lab says it came from there.
pub fn load_as(path: &Path, origin: &Path) -> Result<Result<Linted, Vec<Problem>>, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError {
        path: path.to_owned(),
        source,
    })?;
    Ok(lint_text(path, origin, &text))
}

/// Lints the text of a feature file that lives at `path` (a copy of `origin`). Never panics:
/// whatever the text, the answer is a lab or problems with their lines (a fuzz target holds it
/// to that).
pub fn lint_text(path: &Path, origin: &Path, text: &str) -> Result<Linted, Vec<Problem>> {
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
    let compiled = CompiledLab::new(text, &feature);
    let problems = check_steps(path, origin, &feature, &compiled, lang);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut lab = to_lab(path, &feature, lang);
    if origin != path {
        lab.source = Some(origin.to_owned());
    }
    lab.text = text.to_owned();
    lab.parsed = Some(std::sync::Arc::new(feature));
    Ok(Linted { lab, compiled })
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
}
