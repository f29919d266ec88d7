//! The steps of a lab: the phrase table ([`phrases`]) from which every step is compiled to an
//! [`Action`](action::Action) ([`compile`]), the cucumber bindings built from the same table
//! ([`bindings`]), the same table written out as step definitions for editors ([`editor`]), and
//! [`LabWorld`], cucumber's per-scenario world that carries actions out in a
//! [`Cell`](crate::cell::Cell) ([`prepare`] for the Background's). What lasts across a lab's
//! scenarios lives in its cell.

pub mod action;
pub mod args;
pub mod bindings;
pub mod compile;
pub mod editor;
pub mod names;
pub mod phrases;
mod prepare;
pub mod vocabulary;
pub mod world;

pub use world::{LabWorld, ScenarioContext, StepFailure};
