//! Every lab under `features/`, run through cucumber-rs exactly as `labcheck run features` does:
//! the default Istio matrix, one cell per lab and version (and per mistake scenario), undefined
//! or skipped steps failing the run. Builds missing tools first. Exits non-zero when a lab fails.
//!
//! With `LABCHECK_KIND=1` (and a Docker engine), every lab runs again on kind clusters
//! (`--cluster kind`): on Istio 1.31, and the upgrade labs from 1.30 to 1.31 — each lab's steps,
//! its mistake scenarios only with `LABCHECK_KIND=all` (on kind a mistake cell replays the steps
//! before it, which more than doubles the pass). What is left out is reported as skipped.

use labcheck::lint::tags::{MISTAKE, UPGRADE};

/// A tag expression that matches any of `names` (one tag of the lint's table, in each language).
fn any(names: &[&str]) -> String {
    let tags: Vec<String> = names.iter().map(|n| format!("@{n}")).collect();
    format!("({})", tags.join(" or "))
}

fn main() {
    let local = labcheck::cli::main_from(["labcheck", "run", "features"]);
    let setting = std::env::var("LABCHECK_KIND").unwrap_or_default();
    let kind = if setting.is_empty() || setting == "0" {
        eprintln!("SKIPPED the labs on kind: set LABCHECK_KIND=1 (with a Docker engine)");
        0
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
        let run = |istio: &str, tags: &str, reports: &str| {
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
        let labs = run("1.31", &labs_tags, "target/labcheck-kind");
        let upgrades = run("1.30,1.31", &upgrade_tags, "target/labcheck-kind-upgrade");
        if labs != 0 { labs } else { upgrades }
    };
    std::process::exit(if local != 0 { local } else { kind });
}
