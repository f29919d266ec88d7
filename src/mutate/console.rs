//! What a mutation session tells as it goes, as data ([`Told`]), and the writer that turns it into
//! text on the terminal ([`Console`]). The session prints nothing itself: it tells a
//! [`Hearer`] (the one [`Reporter`] interface, over [`Said`]), in the lab's language.

use std::path::Path;

use super::generate::Mutant;
use super::{Outcome, Result, report};
use crate::cluster::pool::Stats;
use crate::model::{Lang, Reporter};

/// How `--list` marks a mutant: as the run would treat it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Runs,
    /// bash rejects its script: it does not run.
    Unviable,
    /// A typed answer: made only when its command's reference output has more than one line.
    Typed,
}

/// One thing a session tells.
pub enum Told<'a> {
    /// `--list`: the selected mutants, each with how the run would treat it.
    Listed {
        lab: &'a Path,
        mutants: &'a [(&'a Mutant, Listing)],
    },
    /// The selection (`--in-diff`) left no mutant.
    NothingSelected,
    /// The reference solution starts, in this many cells.
    Baseline { cells: usize },
    /// The reference solution of a version ran from a step's checkpoint.
    BaselineResumed { label: &'a str, step: usize },
    /// A version's mutants: how many run, how many outcomes are kept from earlier runs.
    Planned {
        label: &'a str,
        to_run: usize,
        kept: usize,
    },
    /// A mutant's outcome, as it comes (run now or kept).
    Mutant(&'a Result),
    /// How the pool of clusters served a version's mutants.
    Clusters { label: &'a str, stats: &'a Stats },
    /// Every mutant is done: the missed ones and the scores.
    Scores {
        lab: &'a Path,
        results: &'a [Result],
    },
    /// The reports are written; so is a skeleton of equivalents to mark when some missed mutant
    /// is not marked.
    Written {
        lab: &'a Path,
        reports: &'a Path,
        skeleton: Option<&'a Path>,
    },
}

/// What a session tells, in the lab's language: one event of a session.
pub struct Said<'a> {
    pub lang: Lang,
    pub told: Told<'a>,
}

/// Who hears what a session tells: a [`Reporter`] of its events, whatever they borrow.
pub type Hearer = dyn for<'a> Reporter<Said<'a>>;

/// The terminal: progress on stderr, the list, missed mutants and scores on stdout.
pub struct Console;

impl<'a> Reporter<Said<'a>> for Console {
    fn report(&self, said: &Said<'a>) {
        let lang = said.lang;
        match said.told {
            Told::Listed { lab, mutants } => listed(lang, lab, mutants),
            Told::NothingSelected => crate::errln!(
                "labcheck mutate: {}",
                lang.pick(
                    "no mutant is selected (the diff touches no step's script or checks)",
                    "選ばれた変異がない(差分はどのステップのスクリプトにもチェックにも触れていない)"
                )
            ),
            Told::Baseline { cells } => crate::errln!(
                "labcheck mutate: {} ({cells} {})",
                lang.pick("running the reference solution", "模範解答を実行"),
                lang.pick("cell(s)", "セル")
            ),
            Told::BaselineResumed { label, step } => crate::errln!(
                "labcheck mutate: {}{}",
                version(label),
                lang.pick(
                    &format!("the reference solution ran from the checkpoint of step {step}"),
                    &format!("模範解答はステップ {step} のチェックポイントから実行")
                )
            ),
            Told::Planned {
                label,
                to_run,
                kept,
            } => crate::errln!(
                "labcheck mutate: istio {label}: {to_run} {} ({kept} {})",
                lang.pick("mutants to run", "個の変異を実行"),
                lang.pick("kept from earlier runs", "個は以前の結果")
            ),
            Told::Mutant(r) => crate::errln!("{}", report::line(r, lang)),
            Told::Clusters { label, stats: s } => crate::errln!(
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
            ),
            Told::Scores { lab, results } => scores(lang, lab, results),
            Told::Written {
                lab,
                reports,
                skeleton,
            } => written(lang, lab, reports, skeleton),
        }
    }
}

/// `istio 1.31: `, or nothing for a lab without Istio.
fn version(label: &str) -> String {
    if label == "-" {
        String::new()
    } else {
        format!("istio {label}: ")
    }
}

/// `[istio 1.31] `, or nothing for a lab without Istio.
fn bracketed(label: &str) -> String {
    if label == "-" {
        String::new()
    } else {
        format!("[istio {label}] ")
    }
}

fn listed(lang: Lang, lab: &Path, mutants: &[(&Mutant, Listing)]) {
    for (m, listing) in mutants {
        let mark = match listing {
            Listing::Runs => "",
            Listing::Unviable => lang.pick(" [unviable: not run]", " [実行不能: 実行しない]"),
            Listing::Typed => lang.pick(
                " [only if the reference output has more than one line]",
                " [模範解答の出力が 2 行以上のときだけ]",
            ),
        };
        crate::outln!(
            "{} {} {} {}:{}: {}{mark}",
            m.id,
            lang.pick("step", "ステップ"),
            m.step,
            lab.display(),
            m.lines.0,
            m.describe()
        );
    }
    let count = |l| mutants.iter().filter(|(_, k)| *k == l).count();
    let (unviable, typed) = (count(Listing::Unviable), count(Listing::Typed));
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

fn scores(lang: Lang, lab: &Path, results: &[Result]) {
    let missed = results.iter().filter(|r| r.outcome == Outcome::Missed);
    // Missed mutants the author has not marked are the checks' gaps; marked ones are listed
    // apart, one line each, with the author's reason.
    let (marked, unmarked): (Vec<&Result>, Vec<&Result>) =
        missed.partition(|r| r.equivalent.is_some());
    if !unmarked.is_empty() {
        crate::outln!(
            "\n{}",
            lang.pick(
                "Missed mutants (no check rejects these wrong answers):",
                "見逃した変異(どのチェックもこの間違った解答を不合格にしない):"
            )
        );
        for r in &unmarked {
            crate::out!("{}{}", bracketed(&r.label), report::diff(r, lab));
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
                bracketed(&r.label),
                r.mutant.id,
                r.mutant.describe()
            );
        }
    }
    crate::outln!("\n{}", report::summary(results, lang));
}

fn written(lang: Lang, lab: &Path, reports: &Path, skeleton: Option<&Path>) {
    crate::outln!("labcheck mutate: {}", reports.display());
    if let Some(skeleton) = skeleton {
        crate::errln!(
            "labcheck mutate: {} {} ({} {})",
            lang.pick(
                "mark a missed mutant that changes nothing a grader could see in",
                "採点で区別できない見逃しは次のファイルで同等と記す:"
            ),
            super::equivalents::path_for(lab).display(),
            lang.pick("a skeleton of the entries:", "記入の雛形:"),
            skeleton.display()
        );
    }
}
