//! Problems visible in a feature file's text itself, which make the Gherkin parser fail with no
//! location: full-width colons and spaces after keywords, keywords the parser lacks; and where a
//! parse error is.

use std::path::Path;

use cucumber::gherkin;

use super::Problem;

const BLOCK_KEYWORDS: &[&str] = &[
    "Feature",
    "Background",
    "Scenario Outline",
    "Scenario Template",
    "Scenario",
    "Example",
    "Examples",
    "Rule",
    "機能",
    "フィーチャ",
    "背景",
    "シナリオアウトライン",
    "シナリオテンプレート",
    "シナリオ",
    "例",
    "サンプル",
];

const STEP_KEYWORDS: &[&str] = &[
    "Given",
    "When",
    "Then",
    "And",
    "But",
    "前提",
    "もし",
    "ならば",
    "かつ",
    "しかし",
    "但し",
    "ただし",
];

/// Keywords authors write that the parser does not know, with what to write instead.
const UNKNOWN_KEYWORDS: &[(&str, &str)] = &[
    ("且つ", "かつ"),
    (
        "ルール",
        "Rule (the Japanese dialect of the parser has no ルール)",
    ),
    ("前提条件", "前提"),
    ("シナリオ例", "シナリオ"),
];

pub(super) fn parse_error_position(e: &gherkin::ParseError) -> (usize, usize) {
    let text = format!("{e:?}");
    // peg errors carry `line: N, column: M`.
    let grab = |key: &str| {
        text.split(key).nth(1).and_then(|r| {
            r.trim_start_matches([':', ' '])
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
    };
    (grab("line").unwrap_or(1), grab("column").unwrap_or(1))
}

/// Problems visible in the text itself, which make the parser fail with no location.
pub(super) fn scan_text(path: &Path, text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut in_docstring: Option<&str> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start_matches([' ', '\t']);
        let col = raw.chars().count() - trimmed.chars().count() + 1;
        for fence in ["\"\"\"", "```"] {
            if trimmed.starts_with(fence) {
                in_docstring = match in_docstring {
                    Some(f) if f == fence => None,
                    None => Some(fence),
                    other => other,
                };
            }
        }
        if in_docstring.is_some() || trimmed.starts_with('#') || trimmed.starts_with("\"\"\"") {
            continue;
        }
        let at = |message: String, hint: &str, extra: usize| Problem {
            path: path.to_owned(),
            line: i + 1,
            col: col + extra,
            message,
            hint: Some(hint.to_owned()),
            grades_nothing: false,
        };
        if trimmed.starts_with('\u{3000}') {
            problems.push(at(
                "full-width space (U+3000) in indentation".into(),
                "indent with ASCII spaces",
                0,
            ));
            continue;
        }
        for (bad, good) in UNKNOWN_KEYWORDS {
            if let Some(rest) = trimmed.strip_prefix(bad)
                && (rest.starts_with([' ', '\u{3000}', ':', '：']) || !rest.is_empty())
                && !trimmed.starts_with(good)
            {
                problems.push(at(
                    format!("the Gherkin parser has no keyword {bad:?}"),
                    &format!("write {good}"),
                    0,
                ));
            }
        }
        for kw in BLOCK_KEYWORDS.iter().chain(STEP_KEYWORDS) {
            let Some(rest) = trimmed.strip_prefix(kw) else {
                continue;
            };
            let kw_len = kw.chars().count();
            if rest.starts_with('：') {
                problems.push(at(
                    format!("full-width colon (：) after the keyword {kw:?}"),
                    &format!("write \"{kw}:\" with an ASCII colon"),
                    kw_len,
                ));
            } else if rest.starts_with('\u{3000}') {
                problems.push(at(
                    format!("full-width space (U+3000) after the keyword {kw:?}"),
                    "separate keyword and text with an ASCII space",
                    kw_len,
                ));
            }
            break;
        }
    }
    problems
}
