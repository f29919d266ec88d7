//! The cucumber bindings: every sentence of the phrase table, in both languages, registered with
//! cucumber as one step function that compiles the step and carries it out. A step that does not
//! pass panics with its [`StepFailure`] (cucumber's way to fail a step), which the runner's
//! adapter takes back as that typed value.

use cucumber::gherkin::StepType;
use cucumber::step::{Collection, Context};
use futures::FutureExt;
use futures::future::LocalBoxFuture;

use super::compile::regexes;
use super::world::{LabWorld, StepFailure};

/// The step definitions for a cucumber run: every sentence of the table.
pub fn collection() -> Collection<LabWorld> {
    regexes().fold(Collection::new(), |steps, (ty, regex)| match ty {
        StepType::Given => steps.given(None, regex.clone(), run_step),
        StepType::When => steps.when(None, regex.clone(), run_step),
        StepType::Then => steps.then(None, regex.clone(), run_step),
    })
}

fn run_step(world: &mut LabWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    async move {
        if let Err(failure) = world.execute(&ctx.step).await {
            std::panic::panic_any::<StepFailure>(failure);
        }
    }
    .boxed_local()
}
