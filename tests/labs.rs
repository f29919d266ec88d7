//! Every lab under `features/`, run through cucumber-rs exactly as `labcheck run features` does:
//! the default Istio matrix, one cell per lab and version (and per mistake scenario), undefined
//! or skipped steps failing the run. Builds missing tools first. Exits non-zero when a lab fails.

fn main() {
    std::process::exit(labcheck::cli::main_from(["labcheck", "run", "features"]));
}
