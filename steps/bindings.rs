//! The cucumber bindings: every sentence of the phrase table, in both languages, registered with
//! cucumber as one step function that compiles the step and carries it out. A step that does not
//! pass panics with its [`StepFault`] (cucumber's way to fail a step), which the runner's
//! adapter takes back as that typed value.

use cucumber::gherkin::StepType;
use cucumber::step::{Collection, Context};
use futures::FutureExt;
use futures::future::LocalBoxFuture;

use super::compile::regexes;
use super::world::LabWorld;
use crate::model::StepFault;

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
            std::panic::panic_any::<StepFault>(failure);
        }
    }
    .boxed_local()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cucumber::gherkin::{LineCol, Span, Step};

    #[test]
    fn every_example_and_a_waiting_check_have_one_binding() {
        let steps = collection();
        let step = |ty, value: &str| Step {
            keyword: String::new(),
            ty,
            value: value.to_owned(),
            docstring: None,
            table: None,
            span: Span { start: 0, end: 0 },
            position: LineCol { line: 0, col: 0 },
        };
        for p in super::super::phrases::PHRASES.iter() {
            for text in [p.en.example, p.ja.example] {
                assert!(
                    matches!(steps.find(&step(p.ty, text)), Ok(Some(_))),
                    "{text}"
                );
            }
        }
        for text in [
            r#"the file "/a" should exist within 2 seconds"#,
            r#"2 秒以内に ファイル "/a" が存在する"#,
        ] {
            let found = steps.find(&step(StepType::Then, text));
            assert!(
                matches!(found, Ok(Some(_))),
                "{text}: {:?}",
                found.map(|f| f.is_some())
            );
        }
    }
}
