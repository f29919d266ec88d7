//! The vocabulary as people read it: the phrase table as the README's Markdown table (printed by
//! `labcheck vocabulary`), kept equal to the README by a test, and the table's own tests.

use cucumber::gherkin::StepType::{Given, Then, When};

use super::phrases::PHRASES;

/// The vocabulary as a Markdown table (the README's, and `labcheck vocabulary`).
pub fn markdown_table() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out =
        String::from("| keyword | what it does | English | 日本語 |\n|---|---|---|---|\n");
    for p in PHRASES.iter() {
        let kw = match p.ty {
            Given => "Given / 前提",
            When => "When / もし",
            Then => "Then / ならば",
        };
        out.push_str(&format!(
            "| {kw} | {} | `{}` | `{}` |\n",
            cell(p.what),
            cell(p.en.example),
            cell(p.ja.example)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::steps::compile::compile;
    use crate::steps::phrases::PHRASES;
    use cucumber::gherkin::StepType;
    use cucumber::gherkin::{LineCol, Span, Step};

    fn step(ty: StepType, value: &str) -> Step {
        Step {
            keyword: String::new(),
            ty,
            value: value.to_owned(),
            docstring: Some("x".to_owned()),
            table: None,
            span: Span { start: 0, end: 0 },
            position: LineCol { line: 0, col: 0 },
        }
    }

    #[test]
    fn every_example_compiles_to_its_own_phrase() {
        for (i, p) in PHRASES.iter().enumerate() {
            for (text, lang) in [
                (p.en.example, crate::model::Lang::En),
                (p.ja.example, crate::model::Lang::Ja),
            ] {
                let compiled = compile(&step(p.ty, text));
                match compiled {
                    Ok(c) => {
                        assert_eq!(c.phrase, i, "{text}");
                        assert_eq!(c.lang, lang, "{text}");
                    }
                    Err(e) => panic!("{text}: {e}"),
                }
            }
        }
    }

    #[test]
    fn both_languages_put_arguments_in_the_same_places() {
        // The examples of both languages use the same values (but for the words of notes), so
        // they must build the same action: a wrong `order` swaps a file and its query.
        for p in PHRASES.iter().filter(|p| !p.what.contains("note mentions")) {
            let build = |text| format!("{:?}", compile(&step(p.ty, text)).map(|c| c.action));
            assert_eq!(build(p.en.example), build(p.ja.example), "{}", p.what);
        }
    }
}

#[cfg(test)]
mod readme {
    #[test]
    fn readme_vocabulary_is_current() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .unwrap_or_default();
        assert!(
            readme.contains(&super::markdown_table()),
            "README.md: paste the output of `labcheck vocabulary`"
        );
    }
}
