//! One `labcheck mutate` session, start to end: load the lab, list or run the reference
//! solution, run every viable mutant per Istio version, print what was missed and the scores,
//! write the reports, and end with a [`LabOutcome`] that knows its exit code (as cargo-mutants'
//! does). The command line only turns flags into a [`Request`].

use std::path::PathBuf;
use std::rc::Rc;

use super::console::{Hearer, Listing, Said, Told};
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
    /// Which mutants run (`--mutant ID`, `--in-diff BASE`).
    pub selection: super::select::Selection,
    /// Read and write kept outcomes (`--no-cache` turns it off).
    pub cache: bool,
    /// Lend mutants pooled clusters reset to their checkpoint (`--fresh-clusters` turns it off).
    pub pool: bool,
}

/// How a mutation session ended.
#[derive(Debug)]
pub enum LabOutcome {
    /// `--list`: the mutants were printed, none ran.
    Listed,
    /// The selection (`--in-diff`) left no mutant to run.
    NothingSelected,
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
            LabOutcome::Listed | LabOutcome::NothingSelected => 0,
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

/// Runs a mutation session, telling `reporter` how it goes.
pub async fn mutate(
    req: &Request,
    reporter: Rc<Hearer>,
) -> std::result::Result<LabOutcome, MutateError> {
    let loaded = super::load(&req.lab, req.step)?;
    let lang = loaded.lab.lang;
    if loaded.scripts.is_empty() {
        return Err(MutateError::NothingToMutate);
    }
    let equivalents = super::equivalents::load(&req.lab)?;
    // The selection, checked before anything runs: an unknown id is an error.
    let affected = req.selection.affected(&req.lab, &loaded)?;
    let listed = req
        .selection
        .filter(generate::mutants(&loaded.scripts, None), affected.as_ref())?;
    if req.list {
        let mutants: Vec<(&generate::Mutant, Listing)> =
            listed.iter().map(|m| (m, listing(m))).collect();
        reporter.report(&Said {
            lang,
            told: Told::Listed {
                lab: &req.lab,
                mutants: &mutants,
            },
        });
        return Ok(LabOutcome::Listed);
    }
    if listed.is_empty() {
        reporter.report(&Said {
            lang,
            told: Told::NothingSelected,
        });
        return Ok(LabOutcome::NothingSelected);
    }
    let setup = runner::tool_setup_for(std::slice::from_ref(&req.lab));
    let opts = MutateOptions {
        lab: req.lab.clone(),
        selection: req.selection.clone(),
        cache: req.cache,
        pool: req.pool,
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
    reporter.report(&Said {
        lang,
        told: Told::Baseline { cells: cells.len() },
    });
    let baseline = super::baseline(&base, &env, cells).await;
    for (label, step) in &baseline.resumed {
        let step = *step;
        reporter.report(&Said {
            lang,
            told: Told::BaselineResumed { label, step },
        });
    }
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
    let fixtures = super::cache::tree_digest(&super::select::fixture_dirs(&req.lab, &loaded));
    for label in baseline.labels.keys() {
        let istio = match &setup {
            Ok((_, versions)) => format!("{:?}", versions.resolve(label).ok()),
            Err(_) => String::new(),
        };
        let cache = opts.cache.then(|| {
            super::cache::Cache::open(
                &crate::state::Area::Outcomes.dir(&opts.state_dir),
                &[label.as_bytes(), istio.as_bytes(), &executable(), &fixtures],
            )
        });
        let session = Label {
            opts: &opts,
            loaded: &loaded,
            env: &env,
            equivalents: &equivalents,
            dir: work.join(label.replace('.', "-")),
            affected: affected.as_ref(),
            cache,
            reporter: reporter.clone(),
        };
        interrupted = session.run(label, &baseline, &mut results).await?;
        if interrupted.is_some() {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    finish(req, lang, &*reporter, results, interrupted)
}

/// What identifies this executable: its size and modification time (a rebuilt labcheck keeps
/// no outcome of the one before).
fn executable() -> Vec<u8> {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => format!("{} {:?}", m.len(), m.modified().ok()).into_bytes(),
        Err(_) => b"unknown".to_vec(),
    }
}

/// How the run would treat a listed mutant: a script bash rejects is unviable (not run), and a
/// typed answer is made only when its command's reference output has more than one line (known
/// after the reference run).
fn listing(m: &generate::Mutant) -> Listing {
    if super::syntax_error(&m.script).is_some() {
        Listing::Unviable
    } else if m.operator == generate::Operator::TypedAnswer {
        Listing::Typed
    } else {
        Listing::Runs
    }
}

/// The mutants of one Istio label.
struct Label<'a> {
    opts: &'a MutateOptions,
    loaded: &'a Loaded,
    env: &'a Environment,
    equivalents: &'a std::collections::HashMap<String, String>,
    /// Where the mutants' feature files are written.
    dir: PathBuf,
    /// The steps a diff affects (`--in-diff`), if the session is limited to them.
    affected: Option<&'a super::select::Affected>,
    /// Kept outcomes, unless `--no-cache`.
    cache: Option<super::cache::Cache>,
    reporter: Rc<Hearer>,
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
        let result = |mutant: generate::Mutant, outcome, cached, spent| Result {
            equivalent: self.equivalents.get(&mutant.id).cloned(),
            mutant,
            label: label.to_owned(),
            outcome,
            cached,
            spent,
        };
        let mut viable = Vec::new();
        let mut kept = 0;
        let mutants = generate::mutants(&self.loaded.scripts, answers);
        // Ids were checked against the listed mutants already.
        let mutants = self
            .opts
            .selection
            .filter(mutants, self.affected)
            .unwrap_or_default();
        for m in mutants {
            if let Some(message) = super::syntax_error(&m.script) {
                results.push(result(m, Outcome::Unviable { message }, false, None));
                continue;
            }
            let text = super::lab::mutated_feature(&self.loaded.text, &m);
            match self.cache.as_ref().and_then(|c| c.get(&text)) {
                Some(outcome) => {
                    let r = result(m, outcome, true, None);
                    self.reporter.report(&Said {
                        lang,
                        told: Told::Mutant(&r),
                    });
                    results.push(r);
                    kept += 1;
                }
                None => viable.push(m),
            }
        }
        let to_run = viable.len();
        self.reporter.report(&Said {
            lang,
            told: Told::Planned {
                label,
                to_run,
                kept,
            },
        });
        if viable.is_empty() {
            return Ok(None);
        }
        let paths = super::write_mutants(&self.dir, self.loaded, &viable)?;
        let run_opts = super::mutant_options(
            self.opts,
            paths.values().cloned().collect(),
            label,
            baseline.slowest,
        );
        let mut cells = runner::plan(&run_opts)?;
        let slug = self.loaded.lab.slug();
        let by_slug: std::collections::HashMap<String, generate::Mutant> = viable
            .iter()
            .map(|m| (format!("{slug}.m-{}", m.id), m.clone()))
            .collect();
        // In the order of the steps they change: cells that start from the same checkpoint
        // follow each other, and a pooled cluster mostly resets to the checkpoint it had.
        cells.sort_by_key(|c| by_slug.get(&c.id.lab).map(|m| m.step));
        let (eq, l, reporter) = (
            self.equivalents.clone(),
            label.to_owned(),
            self.reporter.clone(),
        );
        let done: Done = Rc::new(move |m, o, spent| {
            let r = Result {
                mutant: m.clone(),
                label: l.clone(),
                outcome: o.clone(),
                equivalent: eq.get(&m.id).cloned(),
                cached: false,
                spent: Some(spent),
            };
            reporter.report(&Said {
                lang,
                told: Told::Mutant(&r),
            });
        });
        let ran = super::run_mutants(&run_opts, self.env, cells, by_slug, done).await;
        let (outcomes, stopped) = (ran.outcomes, ran.interrupted);
        if let Some(stats) = &ran.clusters {
            self.reporter.report(&Said {
                lang,
                told: Told::Clusters { label, stats },
            });
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        for m in viable {
            let (outcome, spent) = match outcomes.get(&m.id) {
                Some((outcome, spent)) => (outcome.clone(), Some(*spent)),
                None => (
                    Outcome::Error {
                        message: "not run (the run was interrupted)".to_owned(),
                    },
                    None,
                ),
            };
            if let Some(cache) = &self.cache {
                cache.put(
                    &super::lab::mutated_feature(&self.loaded.text, &m),
                    &outcome,
                );
            }
            results.push(result(m, outcome, false, spent));
        }
        Ok(stopped)
    }
}

/// Tells the missed mutants and the scores, writes the reports, and says how it ended.
fn finish(
    req: &Request,
    lang: Lang,
    reporter: &Hearer,
    mut results: Vec<Result>,
    interrupted: Option<i32>,
) -> std::result::Result<LabOutcome, MutateError> {
    results.sort_by(|a, b| {
        (&a.label, a.mutant.lines, &a.mutant.id).cmp(&(&b.label, b.mutant.lines, &b.mutant.id))
    });
    let lab = &req.lab;
    reporter.report(&Said {
        lang,
        told: Told::Scores {
            lab,
            results: &results,
        },
    });
    let dir = req.report_dir.join("mutants");
    report::write(&dir, lab, &results).map_err(|source| MutateError::Report {
        path: dir.clone(),
        source,
    })?;
    let unmarked: Vec<&Result> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Missed && r.equivalent.is_none())
        .collect();
    let mut skeleton = None;
    if !unmarked.is_empty() && interrupted.is_none() {
        // One entry per mutant, whatever the versions that missed it.
        let mut entries: Vec<(&str, String)> = unmarked
            .iter()
            .map(|r| (r.mutant.id.as_str(), r.mutant.describe()))
            .collect();
        entries.sort();
        entries.dedup_by(|a, b| a.0 == b.0);
        let path = dir.join("equivalents-skeleton.toml");
        std::fs::write(&path, super::equivalents::skeleton(lab, &entries)).map_err(|source| {
            MutateError::Report {
                path: path.clone(),
                source,
            }
        })?;
        skeleton = Some(path);
    }
    reporter.report(&Said {
        lang,
        told: Told::Written {
            lab,
            reports: &dir,
            skeleton: skeleton.as_deref(),
        },
    });
    Ok(LabOutcome::Ran {
        unmarked: !unmarked.is_empty(),
        errors: results
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Error { .. })),
        interrupted,
    })
}
