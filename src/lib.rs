//! labcheck proves hands-on lab content works: each lab is a Gherkin feature whose scenarios are
//! the lab's steps, run for real in a sandboxed cell and graded by checks.
//!
//! The modules follow the pipeline, and dependencies point down it only:
//! [`model`] (labs, cells, outcomes, events; no I/O) → [`checks`] (checks as data, and their
//! evaluation on files) → [`steps`] (the phrase table; `compile(step) -> Action`, pure; a lab's
//! steps compiled once; the world that carries actions out and the cucumber bindings) → [`lint`]
//! (parses and compiles each lab once, runs nothing; its compiled steps go down with it) → [`sandbox`], [`cluster`], [`toolchain`] (a cell's environment) → [`runner`]
//! (plan, resolve the environment, run cells, checkpoints) → [`report`]; [`mutate`] drives the
//! runner; [`cli`] only turns flags into calls and outcomes into exit codes.

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
