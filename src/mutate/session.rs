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

/// Runs a mutation session.
pub async fn mutate(req: &Request) -> std::result::Result<LabOutcome, MutateError> {
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
        list(req, &loaded, &listed);
        return Ok(LabOutcome::Listed);
    }
    if listed.is_empty() {
        crate::errln!(
            "labcheck mutate: {}",
            lang.pick(
                "no mutant is selected (the diff touches no step's script or checks)",
                "選ばれた変異がない(差分はどのステップのスクリプトにもチェックにも触れていない)"
            )
        );
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
    crate::errln!(
        "labcheck mutate: {} ({} {})",
        lang.pick("running the reference solution", "模範解答を実行"),
        cells.len(),
        lang.pick("cell(s)", "セル")
    );
    let baseline = super::baseline(&base, &env, cells).await;
    for (label, step) in &baseline.resumed {
        let version = if label == "-" {
            String::new()
        } else {
            format!("istio {label}: ")
        };
        crate::errln!(
            "labcheck mutate: {version}{}",
            lang.pick(
                &format!("the reference solution ran from the checkpoint of step {step}"),
                &format!("模範解答はステップ {step} のチェックポイントから実行")
            )
        );
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
        };
        interrupted = session.run(label, &baseline, &mut results).await?;
        if interrupted.is_some() {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    finish(req, lang, results, interrupted)
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

/// Prints the selected mutants without running anything, marked as the run would treat them:
/// a script bash rejects is unviable (not run), and a typed answer is made only when its
/// command's reference output has more than one line (known after the reference run).
fn list(req: &Request, loaded: &Loaded, mutants: &[generate::Mutant]) {
    let lang = loaded.lab.lang;
    let (mut unviable, mut typed) = (0, 0);
    for m in mutants {
        let mark = if super::syntax_error(&m.script).is_some() {
            unviable += 1;
            lang.pick(" [unviable: not run]", " [実行不能: 実行しない]")
        } else if m.operator == generate::Operator::TypedAnswer {
            typed += 1;
            lang.pick(
                " [only if the reference output has more than one line]",
                " [模範解答の出力が 2 行以上のときだけ]",
            )
        } else {
            ""
        };
        crate::outln!(
            "{} {} {} {}:{}: {}{mark}",
            m.id,
            lang.pick("step", "ステップ"),
            m.step,
            req.lab.display(),
            m.lines.0,
            m.describe()
        );
    }
    crate::outln!(
        "{} {} ({} {}, {} {}, {} {})",
        mutants.len(),
        lang.pick("mutants", "個の変異"),
        mutants.len() - unviable - typed,
        lang.pick("run", "は実行"),
        typed,
        lang.pick(
            "typed answers depend on the reference run",
            "個の入力した答えは模範解答の実行による"
        ),
        unviable,
        lang.pick("unviable", "個は実行不能"),
    );
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
        let result = |mutant: generate::Mutant, outcome, cached| Result {
            equivalent: self.equivalents.get(&mutant.id).cloned(),
            mutant,
            label: label.to_owned(),
            outcome,
            cached,
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
                results.push(result(m, Outcome::Unviable { message }, false));
                continue;
            }
            let text = super::lab::mutated_feature(&self.loaded.text, &m);
            match self.cache.as_ref().and_then(|c| c.get(&text)) {
                Some(outcome) => {
                    let r = result(m, outcome, true);
                    crate::errln!("{}", report::line(&r, lang));
                    results.push(r);
                    kept += 1;
                }
                None => viable.push(m),
            }
        }
        crate::errln!(
            "labcheck mutate: istio {label}: {} {} ({kept} {})",
            viable.len(),
            lang.pick("mutants to run", "個の変異を実行"),
            lang.pick("kept from earlier runs", "個は以前の結果")
        );
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
        let (eq, l) = (self.equivalents.clone(), label.to_owned());
        let done: Done = Rc::new(move |m, o| {
            let r = Result {
                mutant: m.clone(),
                label: l.clone(),
                outcome: o.clone(),
                equivalent: eq.get(&m.id).cloned(),
                cached: false,
            };
            crate::errln!("{}", report::line(&r, lang));
        });
        let ran = super::run_mutants(&run_opts, self.env, cells, by_slug, done).await;
        let (outcomes, stopped) = (ran.outcomes, ran.interrupted);
        if let Some(s) = ran.clusters {
            crate::errln!(
                "labcheck mutate: istio {label}: {}",
                lang.pick(
                    &format!(
                        "clusters: {} started, {} reset to a checkpoint, {} lent unchanged",
                        s.starts, s.resets, s.unchanged
                    ),
                    &format!(
                        "クラスター: {} 回起動, {} 回チェックポイントへ戻した, {} 回そのまま貸した",
                        s.starts, s.resets, s.unchanged
                    )
                )
            );
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        for m in viable {
            let outcome = outcomes.get(&m.id).cloned().unwrap_or(Outcome::Error {
                message: "not run (the run was interrupted)".to_owned(),
            });
            if let Some(cache) = &self.cache {
                cache.put(
                    &super::lab::mutated_feature(&self.loaded.text, &m),
                    &outcome,
                );
            }
            results.push(result(m, outcome, false));
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
        // One entry per mutant, whatever the versions that missed it.
        let mut entries: Vec<(&str, String)> = missed
            .iter()
            .filter(|r| r.equivalent.is_none())
            .map(|r| (r.mutant.id.as_str(), r.mutant.describe()))
            .collect();
        entries.sort();
        entries.dedup_by(|a, b| a.0 == b.0);
        let skeleton = dir.join("equivalents-skeleton.toml");
        std::fs::write(&skeleton, super::equivalents::skeleton(&req.lab, &entries)).map_err(
            |source| MutateError::Report {
                path: skeleton.clone(),
                source,
            },
        )?;
        crate::errln!(
            "labcheck mutate: {} {} ({} {})",
            lang.pick(
                "mark a missed mutant that changes nothing a grader could see in",
                "採点で区別できない見逃しは次のファイルで同等と記す:"
            ),
            super::equivalents::path_for(&req.lab).display(),
            lang.pick("a skeleton of the entries:", "記入の雛形:"),
            skeleton.display()
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
