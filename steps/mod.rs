//! The cucumber-rs step definitions: thin bindings from the phrases of a lab (English in
//! [`en`], Japanese in [`ja`]) to the handlers in [`handlers`], which turn them into sandbox
//! actions and [`Check`](crate::checks::Check)s. [`LabWorld`] is cucumber's per-scenario world;
//! what lasts across a lab's scenarios lives in its [`Cell`](crate::cell::Cell).

mod en;
pub mod handlers;
mod ja;
pub mod params;
pub mod phrases;
pub mod world;

pub use world::{LabWorld, ScenarioContext};
