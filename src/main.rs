//! The `labcheck` binary: all the work is in the library; this only hands over the exit code.

fn main() {
    // Run by a real node's containerd as its runc: the runtime's policy, then the real runc.
    if let Some(code) = labcheck::cluster::node::policy::as_runc() {
        std::process::exit(code);
    }
    std::process::exit(labcheck::cli::main());
}
