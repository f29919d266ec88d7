//! labcheck proves hands-on lab content works: each lab is a Gherkin feature whose scenarios are
//! the lab's steps, run for real in a sandboxed cell and graded by checks.
//!
//! The modules stand in layers; each imports only from the layers below it (the test
//! `layers` below holds the code to this map):
//!
//! 0. [`model`] (labs, outcomes, events and the [`model::Reporter`] interface; no I/O),
//!    [`output`] (terminal lines), [`filelock`].
//! 1. [`sandbox`] (a cell's namespaces, processes, files and limits), [`toolchain`] (the tools,
//!    pinned, built and cached).
//! 2. [`cell`] (one cell's environment), [`checks`] (checks as data, evaluated on files),
//!    [`images`] (the image table, built offline), [`state`] (the state directory's areas).
//! 3. [`cluster`] (the control plane, the real node, the pool, checks on the cluster), [`kept`]
//!    (kept cells), [`steps`] (the phrase table; `compile(step) -> Action`, pure; a lab's steps
//!    compiled once; the world that carries actions out and the cucumber bindings).
//! 4. [`checkpoint`], [`lint`] (parses and compiles each lab once, runs nothing).
//! 5. [`runner`] (plan, resolve the environment, run cells, write checkpoints), [`render`] (the
//!    learner's page).
//! 6. [`report`] (the record and its writers).
//! 7. [`mutate`] (drives the runner with wrong answers).
//! 8. [`cli`] (flags into calls, outcomes into exit codes; the toolchain's subcommands).

pub mod cell;
pub mod checkpoint;
pub mod checks;
pub mod cli;
pub mod cluster;
pub mod filelock;
pub mod images;
pub mod kept;
pub mod lint;
pub mod model;
pub mod mutate;
pub mod output;
pub mod render;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod state;
#[path = "../steps/mod.rs"]
pub mod steps;
pub mod toolchain;

/// The map above, held: no module of the library imports one of its own layer or above.
#[cfg(test)]
mod layers {
    const LAYERS: &[&[&str]] = &[
        &["model", "output", "filelock"],
        &["sandbox", "toolchain"],
        &["cell", "checks", "images", "state"],
        &["cluster", "kept", "steps"],
        &["checkpoint", "lint"],
        &["runner", "render"],
        &["report"],
        &["mutate"],
        &["cli"],
    ];

    fn layer(module: &str) -> Option<usize> {
        LAYERS.iter().position(|l| l.contains(&module))
    }

    /// Every `crate::MODULE` a file names outside comments and its tests.
    fn imports(text: &str) -> Vec<String> {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let re = regex::Regex::new(r"crate::(\w+)").expect("static regex");
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .flat_map(|l| {
                re.captures_iter(l)
                    .map(|c| c[1].to_owned())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn no_module_imports_its_own_layer_or_one_above() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut broken = Vec::new();
        let mut seen = 0;
        for (dir, fixed) in [("src", None), ("steps", Some("steps"))] {
            let files = walk(&root.join(dir));
            for file in files {
                let rel = file.strip_prefix(root.join(dir)).expect("under the root");
                let first = rel.components().next().expect("a component");
                let name = first.as_os_str().to_string_lossy();
                let module = fixed.unwrap_or_else(|| name.trim_end_matches(".rs"));
                if ["main", "lib"].contains(&module) {
                    continue;
                }
                let own = layer(module).unwrap_or_else(|| panic!("{module} is in no layer"));
                let text = std::fs::read_to_string(&file).expect("a source file");
                for import in imports(&text) {
                    let Some(other) = layer(&import) else {
                        continue;
                    };
                    seen += 1;
                    if import != module && other >= own {
                        broken.push(format!("{}: {module} imports {import}", file.display()));
                    }
                }
            }
        }
        assert!(seen > 100, "the imports were not found ({seen})");
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)
            .expect("a source directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
        out
    }
}
