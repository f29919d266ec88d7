//! Every lab under `features/`, run through cucumber-rs exactly as `labcheck run features` does:
//! the default Istio matrix, one cell per lab and version (and per mistake scenario), undefined
//! or skipped steps failing the run. Builds missing tools first. Exits non-zero when a lab fails.
//!
//! With `LABCHECK_KIND=1` (and a Docker engine), every lab runs again on kind clusters
//! (`--cluster kind`): on Istio 1.31, and the upgrade labs from 1.30 to 1.31 — each lab's steps,
//! its mistake scenarios only with `LABCHECK_KIND=all` (on kind a mistake cell replays the steps
//! before it, which more than doubles the pass). What is left out is reported as skipped.
//!
//! The output ends with a recap of every pass — its exit code, and each cell that did not pass
//! with its harness error or first failing step — so the last lines a CI log keeps name them.

use labcheck::lint::tags::{MISTAKE, UPGRADE};
use labcheck::report::Record;

/// A tag expression that matches any of `names` (one tag of the lint's table, in each language).
fn any(names: &[&str]) -> String {
    let tags: Vec<String> = names.iter().map(|n| format!("@{n}")).collect();
    format!("({})", tags.join(" or "))
}

/// One pass of the test: what it ran, its exit code and where its reports are.
struct Pass {
    name: &'static str,
    code: i32,
    reports: &'static str,
}

/// Prints each pass's exit code and, for a pass that did not exit 0, the cells its record says
/// did not pass.
fn recap(passes: &[Pass]) {
    eprintln!("labs: recap");
    for p in passes {
        eprintln!("  {}: exit {} (reports in {})", p.name, p.code, p.reports);
        if p.code == 0 {
            continue;
        }
        let record = match Record::load(std::path::Path::new(p.reports)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("    no record: {e}");
                continue;
            }
        };
        if record.interrupted {
            eprintln!("    interrupted");
        }
        for c in record.cells.values().filter(|c| !c.passed) {
            let why = c.error.clone().or_else(|| {
                c.steps.iter().find_map(|s| {
                    s.outcome.failure().map(|(line, fault)| {
                        format!("{}:{line}: {}", c.lab.origin().display(), fault.headline())
                    })
                })
            });
            let why = why.unwrap_or_else(|| "did not finish".to_owned());
            eprintln!("    {} ✘ {}", c.id.slug(), why.lines().next().unwrap_or(""));
        }
    }
}

fn main() {
    let local = labcheck::cli::main_from([
        "labcheck",
        "run",
        "features",
        "--report-dir",
        "target/labcheck",
    ]);
    let mut passes = vec![Pass {
        name: "local backend",
        code: local,
        reports: "target/labcheck",
    }];
    let setting = std::env::var("LABCHECK_KIND").unwrap_or_default();
    if setting.is_empty() || setting == "0" {
        eprintln!("SKIPPED the labs on kind: set LABCHECK_KIND=1 (with a Docker engine)");
    } else {
        let mistakes = setting == "all";
        if !mistakes {
            eprintln!(
                "SKIPPED the mistake scenarios on kind: set LABCHECK_KIND=all to run them too"
            );
        }
        // All labs but those that check the local backend's own processes (`@local`); the
        // upgrade labs in a second pass (they need two versions).
        let labs_tags = format!("not @local and not {}", any(UPGRADE));
        let upgrade_tags = format!("{} and not @local", any(UPGRADE));
        let run = |istio: &str, tags: &str, reports: &str| -> i32 {
            let tags = if mistakes {
                tags.to_owned()
            } else {
                format!("({tags}) and not {}", any(MISTAKE))
            };
            labcheck::cli::main_from([
                "labcheck",
                "run",
                "features",
                "--cluster",
                "kind",
                "--istio",
                istio,
                "--tags",
                &tags,
                "--report-dir",
                reports,
            ])
        };
        let reports = "target/labcheck-kind";
        passes.push(Pass {
            name: "kind, Istio 1.31",
            code: run("1.31", &labs_tags, reports),
            reports,
        });
        let reports = "target/labcheck-kind-upgrade";
        passes.push(Pass {
            name: "kind upgrades, Istio 1.30 to 1.31",
            code: run("1.30,1.31", &upgrade_tags, reports),
            reports,
        });
    }
    recap(&passes);
    let code = passes.iter().map(|p| p.code).find(|&c| c != 0);
    std::process::exit(code.unwrap_or(0));
}
