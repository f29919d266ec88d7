//! The `labcheck` binary: all the work is in the library; this only hands over the exit code.

fn main() {
    std::process::exit(labcheck::cli::main());
}
