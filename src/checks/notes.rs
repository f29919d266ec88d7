//! Checks on free-text notes a learner writes: which words they mention, case-insensitively
//! (Japanese text included).

use super::{Check, Env, Failure, Fault, excerpt, read_text};
use crate::model::Lang;

pub(super) fn evaluate(check: &Check, env: &Env<'_>, lang: Lang) -> Result<(), Fault> {
    let (path, words, all) = match check {
        Check::MentionsAny(p, w) => (p, w, false),
        Check::MentionsAll(p, w) => (p, w, true),
        _ => return Ok(()),
    };
    let text = read_text(env, path, lang)?.to_lowercase();
    let missing: Vec<&String> = words
        .iter()
        .filter(|w| !text.contains(&w.to_lowercase()))
        .collect();
    let ok = if all {
        missing.is_empty()
    } else {
        missing.len() < words.len()
    };
    if ok {
        return Ok(());
    }
    let list = |ws: &[&String]| {
        ws.iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all_words: Vec<&String> = words.iter().collect();
    let expected = match (lang, all) {
        (Lang::En, true) => format!("a note mentioning all of {}", list(&all_words)),
        (Lang::En, false) => format!("a note mentioning any of {}", list(&all_words)),
        (Lang::Ja, true) => format!("{} のすべてに触れたメモ", list(&all_words)),
        (Lang::Ja, false) => format!("{} のいずれかに触れたメモ", list(&all_words)),
    };
    let found = match lang {
        Lang::En => format!("missing {}:{}", list(&missing), excerpt(&text)),
        Lang::Ja => format!("{} がない:{}", list(&missing), excerpt(&text)),
    };
    Err(Fault::Failed(Failure::new(expected, found)))
}
