//! Which mutants a session runs: all of them, the ones named by id (`--mutant ID`), or the ones a
//! change since a git revision can affect (`--in-diff BASE`, cargo-mutants' convention): the
//! mutants of every step whose learner script the diff touches, and of every step at or before a
//! step whose checks the diff touches (their later checks changed). A diff that touches the
//! Background, the Feature's header or a fixture of the lab affects every step.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use cucumber::gherkin;

use super::generate::{Mutant, StepScript};
use super::{Loaded, MutateError};

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Mutant ids (none: no filter).
    pub ids: Vec<String>,
    /// The git revision a diff is taken against.
    pub in_diff: Option<String>,
}

/// The steps a diff affects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Affected {
    All,
    Steps(BTreeSet<usize>),
}

impl Selection {
    /// The steps whose mutants this selection may keep (`None`: every step).
    pub fn affected(&self, lab: &Path, loaded: &Loaded) -> Result<Option<Affected>, MutateError> {
        let Some(base) = &self.in_diff else {
            return Ok(None);
        };
        let feature = loaded.lab.feature().ok_or(MutateError::NothingToMutate)?;
        let fixtures = fixture_dirs(lab, loaded);
        let diff = Diff::since(base, lab, &fixtures)?;
        Ok(Some(diff.affected(&feature, &loaded.scripts)))
    }

    /// Keeps the mutants this selection runs; an id that names no mutant is an error.
    pub fn filter(
        &self,
        mutants: Vec<Mutant>,
        affected: Option<&Affected>,
    ) -> Result<Vec<Mutant>, MutateError> {
        for id in &self.ids {
            if !mutants.iter().any(|m| &m.id == id) {
                return Err(MutateError::UnknownMutant {
                    id: id.clone(),
                    count: mutants.len(),
                });
            }
        }
        Ok(mutants
            .into_iter()
            .filter(|m| self.ids.is_empty() || self.ids.contains(&m.id))
            .filter(|m| match affected {
                None | Some(Affected::All) => true,
                Some(Affected::Steps(steps)) => steps.contains(&m.step),
            })
            .collect())
    }
}

/// The fixture directories a lab copies into its cells, as found from the lab.
pub fn fixture_dirs(lab: &Path, loaded: &Loaded) -> Vec<PathBuf> {
    loaded
        .compiled
        .fixtures(lab)
        .into_iter()
        .filter_map(|(_, source)| source)
        .collect()
}

/// What changed since a revision: the lab's changed lines (in today's text) and whether its
/// fixtures changed or the lab is new to git.
struct Diff {
    lines: BTreeSet<usize>,
    everything: bool,
}

impl Diff {
    fn since(base: &str, lab: &Path, fixtures: &[PathBuf]) -> Result<Diff, MutateError> {
        let dir = lab
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let git = |args: &[&str], paths: &[&Path]| -> Result<String, MutateError> {
            let out = Command::new("git")
                .current_dir(dir)
                .args(args)
                .arg("--")
                .args(paths)
                .output()
                .map_err(|e| MutateError::Diff {
                    base: base.to_owned(),
                    message: format!("cannot run git: {e}"),
                })?;
            if !out.status.success() {
                let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                return Err(MutateError::Diff {
                    base: base.to_owned(),
                    message: if said.is_empty() {
                        format!("git {} failed", args.join(" "))
                    } else {
                        said
                    },
                });
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let lab = std::path::absolute(lab).map_err(|e| MutateError::Diff {
            base: base.to_owned(),
            message: e.to_string(),
        })?;
        // The revision must exist: a typo is an error, not an empty diff.
        git(
            &["rev-parse", "--verify", &format!("{base}^{{commit}}")],
            &[],
        )?;
        let tracked = git(&["ls-files", "--full-name"], &[&lab])?;
        let untracked = tracked.trim().is_empty();
        let fixture_paths: Vec<&Path> = fixtures.iter().map(PathBuf::as_path).collect();
        let fixtures_changed = !fixture_paths.is_empty()
            && !git(&["diff", "--name-only", base], &fixture_paths)?
                .trim()
                .is_empty();
        // Git's own diff, whatever diff tool or colours the user's configuration asks for.
        let patch = git(
            &["diff", "--no-color", "--no-ext-diff", "--unified=0", base],
            &[&lab],
        )?;
        Ok(Diff {
            lines: changed_lines(&patch),
            everything: untracked || fixtures_changed,
        })
    }

    fn affected(&self, feature: &gherkin::Feature, scripts: &[StepScript]) -> Affected {
        if self.everything {
            return Affected::All;
        }
        let scenarios: Vec<&gherkin::Scenario> = crate::lint::scenarios_in_order(feature)
            .into_iter()
            .filter(|s| !crate::lint::tags::has(&s.tags, crate::lint::tags::MISTAKE))
            .collect();
        let first = scenarios.first().map_or(usize::MAX, |s| s.position.line);
        let mut steps = BTreeSet::new();
        for &line in &self.lines {
            // Before the first step: the header or the Background, which every step runs on.
            if line < first {
                return Affected::All;
            }
            // The step the line belongs to; a mistake's lines belong to no step's mutants.
            let Some(index) = scenarios.iter().rposition(|s| s.position.line <= line) else {
                continue;
            };
            let sc = scenarios[index];
            let in_mistake = crate::lint::scenarios_in_order(feature).iter().any(|m| {
                crate::lint::tags::has(&m.tags, crate::lint::tags::MISTAKE)
                    && m.position.line <= line
                    && m.position.line > sc.position.line
            });
            if in_mistake {
                continue;
            }
            let is_check = sc
                .steps
                .iter()
                .filter(|s| s.ty == gherkin::StepType::Then)
                .any(|s| s.position.line <= line)
                && !in_script(scripts, line);
            if is_check {
                // A changed check judges the mutants of its step and of every step before it.
                steps.extend(1..=index + 1);
            } else {
                steps.insert(index + 1);
            }
        }
        Affected::Steps(steps)
    }
}

/// Whether a line is inside a learner script (its fences included).
fn in_script(scripts: &[StepScript], line: usize) -> bool {
    scripts.iter().any(|s| {
        let lines = s.script.lines().count();
        line + 1 >= s.first_line && line <= s.first_line + lines
    })
}

/// The lines of today's text a `--unified=0` diff adds or changes (a deletion marks the line
/// after it).
fn changed_lines(patch: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for hunk in patch.lines().filter(|l| l.starts_with("@@ ")) {
        let Some(new) = hunk.split_whitespace().find(|w| w.starts_with('+')) else {
            continue;
        };
        let mut parts = new[1..].splitn(2, ',');
        let start: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let count: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
        if count == 0 {
            out.insert(start + 1);
        } else {
            out.extend(start..start + count);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB: &str = r#"Feature: x

  Background:
    Given the lab directory "/root/x"

  Scenario: one
    When the learner runs:
      """
      echo 1 > /root/x/a
      """
    Then the file "/root/x/a" should contain "1"

  Scenario: two
    When the learner runs:
      """
      echo 2 > /root/x/b
      """
    Then the file "/root/x/b" should contain "2"

  Scenario: three
    When the learner runs:
      """
      echo 3 > /root/x/c
      """
    Then the file "/root/x/c" should contain "3"
"#;

    fn affected(lines: &[usize]) -> Affected {
        let feature = gherkin::Feature::parse(LAB, gherkin::GherkinEnv::default()).expect("parses");
        let scripts = super::super::lab::scripts(LAB, &feature, None);
        Diff {
            lines: lines.iter().copied().collect(),
            everything: false,
        }
        .affected(&feature, &scripts)
    }

    #[test]
    fn a_script_change_is_its_step_a_check_change_its_step_and_those_before() {
        assert_eq!(affected(&[16]), Affected::Steps([2].into()));
        assert_eq!(affected(&[25]), Affected::Steps([1, 2, 3].into()));
        assert_eq!(affected(&[18]), Affected::Steps([1, 2].into()));
        // The fences belong to the script.
        assert_eq!(affected(&[15, 17]), Affected::Steps([2].into()));
        assert_eq!(affected(&[4]), Affected::All);
        assert_eq!(affected(&[]), Affected::Steps(BTreeSet::new()));
    }

    #[test]
    fn hunks_give_the_lines_of_todays_text() {
        let patch = "@@ -3,0 +4,2 @@\n+a\n+b\n@@ -10 +12 @@\n-x\n+y\n@@ -20,2 +21,0 @@\n-p\n-q\n";
        assert_eq!(changed_lines(patch), [4, 5, 12, 22].into());
    }
}
