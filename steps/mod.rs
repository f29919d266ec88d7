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
pub mod lab;
pub mod names;
pub mod phrases;
mod prepare;
pub mod vocabulary;
pub mod world;

pub use world::{LabWorld, ScenarioContext};

use cucumber::gherkin;

/// Every step of a feature: its Background's, its Scenarios' and Rules' (with their
/// Backgrounds').
pub fn all_steps(feature: &gherkin::Feature) -> Vec<&gherkin::Step> {
    let scenarios = feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios));
    feature
        .background
        .iter()
        .flat_map(|b| &b.steps)
        .chain(scenarios.flat_map(|s| &s.steps))
        .chain(
            feature
                .rules
                .iter()
                .flat_map(|r| r.background.iter().flat_map(|b| &b.steps)),
        )
        .collect()
}
