//! One `labcheck mutate` session, start to end: load the lab, list or run the reference
//! solution, run every viable mutant per Istio version, print what was missed and the scores,
//! write the reports, and end with a [`LabOutcome`] that knows its exit code (as cargo-mutants'
//! does). The command line only turns flags into a [`Request`].

use std::path::PathBuf;
use std::rc::Rc;

use super::{
    Baseline, Done, Loaded, MutateError, MutateOptions, Outcome, Result, generate, report,
};
use crate::model::Lang;
use crate::runner::{self, ClusterChoice, Environment};

/// What `labcheck mutate` was asked to do.
#[derive(Clone, Debug)]
pub struct Request {
    pub lab: PathBuf,
    /// Istio labels asked for (empty: the versions file's default matrix).
    pub istio: Vec<String>,
    pub step: Option<usize>,
    pub jobs: usize,
    /// Only list the mutants.
    pub list: bool,
    pub report_dir: PathBuf,
}

/// How a mutation session ended.
#[derive(Debug)]
pub enum LabOutcome {
    /// `--list`: the mutants were printed, none ran.
    Listed,
    /// Every mutant ran (or the run was interrupted), and the reports were written.
    Ran {
        /// Some missed mutant is not marked equivalent.
        unmarked: bool,
        /// Some mutant's cell could not be run or graded.
        errors: bool,
        /// The signal that stopped the session, if one did.
        interrupted: Option<i32>,
    },
}

impl LabOutcome {
    /// 0 when every missed mutant is marked equivalent (or nothing ran), 1 when one is not or a
    /// mutant errored, 128 + the signal when interrupted.
    pub fn exit_code(&self) -> i32 {
        match self {
            LabOutcome::Listed => 0,
            LabOutcome::Ran {
                interrupted: Some(signal),
                ..
            } => 128 + signal,
            LabOutcome::Ran {
                unmarked, errors, ..
            } => i32::from(*unmarked || *errors),
        }
    }
}

/// Runs a mutation session.
pub async fn mutate(req: &Request) -> std::result::Result<LabOutcome, MutateError> {
    let loaded = super::load(&req.lab, req.step)?;
    let lang = loaded.lab.lang;
    if loaded.scripts.is_empty() {
        return Err(MutateError::NothingToMutate);
    }
    let equivalents = super::equivalents::load(&req.lab)?;
    if req.list {
        list(req, &loaded);
        return Ok(LabOutcome::Listed);
    }
    let setup = runner::tool_setup_for(std::slice::from_ref(&req.lab));
    let opts = MutateOptions {
        lab: req.lab.clone(),
        labels: match &setup {
            Ok((_, versions)) => runner::matrix(versions, &req.istio),
            Err(_) => Vec::new(),
        },
        step: req.step,
        jobs: req.jobs,
        state_dir: runner::default_state_dir(),
    };
    let mut base = super::baseline_options(&opts, generate::saved_files(&loaded.scripts));
    if let Err(e) = &setup {
        base.istio_unavailable = Some(crate::toolchain::error_chain(&**e));
    }
    let cells = runner::plan(&base)?;
    // Mutants run on the default backend, as `labcheck run` does.
    let builds = crate::report::builds::Builds::on_stderr().sink();
    let setup = setup.map(|(tc, versions)| (tc.with_progress(builds), versions));
    let env = runner::environment_for(&setup, &ClusterChoice::default(), &cells).await?;
    crate::errln!(
        "labcheck mutate: {} ({} {})",
        lang.pick("running the reference solution", "模範解答を実行"),
        cells.len(),
        lang.pick("cell(s)", "セル")
    );
    let baseline = super::baseline(&base, &env, cells).await;
    if let Some(signal) = baseline.interrupted {
        return Ok(LabOutcome::Ran {
            unmarked: false,
            errors: false,
            interrupted: Some(signal),
        });
    }
    if let Some((label, _)) = baseline.labels.iter().find(|(_, (passed, _))| !passed) {
        return Err(MutateError::Baseline {
            label: label.clone(),
            lab: req.lab.display().to_string(),
        });
    }
    let work = crate::state::Area::Mutants
        .dir(&opts.state_dir)
        .join(format!("{}-{}", loaded.lab.slug(), std::process::id()));
    let mut results: Vec<Result> = Vec::new();
    let mut interrupted = None;
    for label in baseline.labels.keys() {
        let session = Label {
            opts: &opts,
            loaded: &loaded,
            env: &env,
            equivalents: &equivalents,
            dir: work.join(label.replace('.', "-")),
        };
        interrupted = session.run(label, &baseline, &mut results).await?;
        if interrupted.is_some() {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    finish(req, lang, results, interrupted)
}

/// Prints every mutant without running anything.
fn list(req: &Request, loaded: &Loaded) {
    let lang = loaded.lab.lang;
    let all = generate::mutants(&loaded.scripts, None);
    for m in &all {
        crate::outln!(
            "{} {} {} {}:{}: {}",
            m.id,
            lang.pick("step", "ステップ"),
            m.step,
            req.lab.display(),
            m.lines.0,
            m.describe()
        );
    }
    crate::outln!("{} {}", all.len(), lang.pick("mutants", "個の変異"));
}

/// The mutants of one Istio label.
struct Label<'a> {
    opts: &'a MutateOptions,
    loaded: &'a Loaded,
    env: &'a Environment,
    equivalents: &'a std::collections::HashMap<String, String>,
    /// Where the mutants' feature files are written.
    dir: PathBuf,
}

impl Label<'_> {
    /// Runs every viable mutant of `label`, adding their results (unviable ones included) to
    /// `results`; returns the signal that interrupted the run, if one did.
    async fn run(
        &self,
        label: &str,
        baseline: &Baseline,
        results: &mut Vec<Result>,
    ) -> std::result::Result<Option<i32>, MutateError> {
        let lang = self.loaded.lab.lang;
        let answers = baseline.labels.get(label).map(|(_, a)| a);
        let result = |mutant: generate::Mutant, outcome| Result {
            equivalent: self.equivalents.get(&mutant.id).cloned(),
            mutant,
            label: label.to_owned(),
            outcome,
        };
        let mut viable = Vec::new();
        for m in generate::mutants(&self.loaded.scripts, answers) {
            match super::syntax_error(&m.script) {
                Some(message) => results.push(result(m, Outcome::Unviable { message })),
                None => viable.push(m),
            }
        }
        crate::errln!(
            "labcheck mutate: istio {label}: {} {}",
            viable.len(),
            lang.pick("mutants to run", "個の変異を実行")
        );
        let paths = super::write_mutants(&self.dir, self.loaded, &viable)?;
        let run_opts = super::mutant_options(
            self.opts,
            paths.values().cloned().collect(),
            label,
            baseline.slowest,
        );
        let cells = runner::plan(&run_opts)?;
        let slug = self.loaded.lab.slug();
        let by_slug = viable
            .iter()
            .map(|m| (format!("{slug}.m-{}", m.id), m.clone()))
            .collect();
        let (eq, l) = (self.equivalents.clone(), label.to_owned());
        let done: Done = Rc::new(move |m, o| {
            let r = Result {
                mutant: m.clone(),
                label: l.clone(),
                outcome: o.clone(),
                equivalent: eq.get(&m.id).cloned(),
            };
            crate::errln!("{}", report::line(&r, lang));
        });
        let (outcomes, stopped) =
            super::run_mutants(&run_opts, self.env, cells, by_slug, done).await;
        let _ = std::fs::remove_dir_all(&self.dir);
        for m in viable {
            let outcome = outcomes.get(&m.id).cloned().unwrap_or(Outcome::Error {
                message: "not run (the run was interrupted)".to_owned(),
            });
            results.push(result(m, outcome));
        }
        Ok(stopped)
    }
}

/// Prints the missed mutants and the scores, writes the reports, and says how it ended.
fn finish(
    req: &Request,
    lang: Lang,
    mut results: Vec<Result>,
    interrupted: Option<i32>,
) -> std::result::Result<LabOutcome, MutateError> {
    results.sort_by(|a, b| {
        (&a.label, a.mutant.lines, &a.mutant.id).cmp(&(&b.label, b.mutant.lines, &b.mutant.id))
    });
    let missed: Vec<&Result> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Missed)
        .collect();
    // Missed mutants the author has not marked are the checks' gaps; marked ones are listed
    // apart, one line each, with the author's reason.
    let (marked, unmarked): (Vec<&Result>, Vec<&Result>) =
        missed.iter().partition(|r| r.equivalent.is_some());
    let label = |r: &Result| {
        if r.label == "-" {
            String::new()
        } else {
            format!("[istio {}] ", r.label)
        }
    };
    if !unmarked.is_empty() {
        crate::outln!(
            "\n{}",
            lang.pick(
                "Missed mutants (no check rejects these wrong answers):",
                "見逃した変異(どのチェックもこの間違った解答を不合格にしない):"
            )
        );
        for r in &unmarked {
            crate::out!("{}{}", label(r), report::diff(r, &req.lab));
        }
    }
    if !marked.is_empty() {
        crate::outln!(
            "\n{}",
            lang.pick(
                "Missed, marked equivalent (no grader could tell them apart):",
                "見逃しだが同等と記したもの(採点で区別できない):"
            )
        );
        for r in &marked {
            let reason = r.equivalent.as_deref().unwrap_or_default();
            crate::outln!(
                "{}{} {} — {reason}",
                label(r),
                r.mutant.id,
                r.mutant.describe()
            );
        }
    }
    crate::outln!("\n{}", report::summary(&results, lang));
    let dir = req.report_dir.join("mutants");
    report::write(&dir, &req.lab, &results).map_err(|source| MutateError::Report {
        path: dir.clone(),
        source,
    })?;
    crate::outln!("labcheck mutate: {}", dir.display());
    let unmarked = missed.iter().any(|r| r.equivalent.is_none());
    if unmarked && interrupted.is_none() {
        crate::errln!(
            "labcheck mutate: {} {}",
            lang.pick(
                "mark a missed mutant that changes nothing a grader could see in",
                "採点で区別できない見逃しは次のファイルで同等と記す:"
            ),
            super::equivalents::path_for(&req.lab).display()
        );
    }
    Ok(LabOutcome::Ran {
        unmarked,
        errors: results
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Error { .. })),
        interrupted,
    })
}
