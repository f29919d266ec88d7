//! labcheck proves hands-on lab content works: each lab is a Gherkin feature whose scenarios are
//! the lab's steps, run for real in a sandboxed cell and graded by checks.
//!
//! The modules follow the pipeline, and dependencies point down it only:
//! [`model`] (labs, cells, outcomes, events; no I/O) → [`lint`] → [`sandbox`] → [`checks`] →
//! [`steps`] (the cucumber bindings) → [`runner`] → [`report`].

pub mod cell;
pub mod checkpoint;
pub mod checks;
pub mod cli;
pub mod cluster;
pub mod kept;
pub mod lint;
pub mod model;
pub mod mutate;
pub mod render;
pub mod report;
pub mod runner;
pub mod sandbox;
#[path = "../steps/mod.rs"]
pub mod steps;
pub mod toolchain;
