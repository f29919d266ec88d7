//! `labcheck render`: the lab as a learner reads it, from the feature that tests it — the
//! Feature's description, what the Background prepares, each step's task (its Scenario's
//! description) with its hints (paragraphs that start with `Hint:` or `ヒント:`), and the common
//! mistakes. The reference commands appear only with `--with-solution`.

use cucumber::gherkin;

use crate::lint::tags;
use crate::model::{Lab, Lang};

/// `s` as HTML text (also inside a quoted attribute).
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What `render` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Html,
}

/// A description split into the learner's task and its hints.
struct Text {
    task: Vec<String>,
    hints: Vec<String>,
}

const HINT_PREFIXES: &[&str] = &["Hint:", "ヒント:", "ヒント："];

/// The description written between `after` and `before` (1-based lines of `source`), blank
/// lines kept (the Gherkin parser drops them, and with them the paragraphs); comments and tag
/// lines left out.
fn raw_description(source: &str, after: usize, before: usize) -> String {
    source
        .lines()
        .skip(after)
        .take(before.saturating_sub(after + 1))
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with('@'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The hints of the step written at `line` of a lab (its description's paragraphs that start
/// with `Hint:` or `ヒント:`), for the grader's answer.
pub fn hints(source: &str, feature: &gherkin::Feature, line: usize) -> Vec<String> {
    let scenario = feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios))
        .find(|s| s.position.line == line);
    let Some(s) = scenario else {
        return Vec::new();
    };
    let first_step = s.steps.first().map_or(usize::MAX, |st| st.position.line);
    split(&raw_description(source, s.position.line, first_step)).hints
}

/// Paragraphs of a description (blank lines apart, lines of one paragraph joined as written).
fn split(description: &str) -> Text {
    let mut text = Text {
        task: Vec::new(),
        hints: Vec::new(),
    };
    for paragraph in description.split("\n\n") {
        let lines: Vec<&str> = paragraph
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            continue;
        }
        let joined = lines.join("\n");
        match HINT_PREFIXES.iter().find_map(|p| joined.strip_prefix(p)) {
            Some(hint) => text.hints.push(hint.trim().to_owned()),
            None => text.task.push(joined),
        }
    }
    text
}

/// The learner commands of a scenario (its docstrings), in order.
fn commands(scenario: &gherkin::Scenario) -> Vec<&str> {
    scenario
        .steps
        .iter()
        .filter_map(|s| s.docstring.as_deref())
        .collect()
}

struct Words {
    setup: &'static str,
    step: &'static str,
    hint: &'static str,
    solution: &'static str,
    mistakes: &'static str,
    wrong: &'static str,
}

fn words(lang: Lang) -> Words {
    match lang {
        Lang::En => Words {
            setup: "Setup",
            step: "Step",
            hint: "Hint",
            solution: "Solution",
            mistakes: "Common mistakes",
            wrong: "The wrong answer",
        },
        Lang::Ja => Words {
            setup: "準備",
            step: "ステップ",
            hint: "ヒント",
            solution: "模範解答",
            mistakes: "よくある間違い",
            wrong: "間違った解答",
        },
    }
}

/// Renders `feature` (whose lab is `lab`, written as `source`) for a learner.
pub fn render(
    source: &str,
    feature: &gherkin::Feature,
    lab: &Lab,
    format: Format,
    with_solution: bool,
) -> String {
    let w = words(lab.lang);
    let scenarios = crate::lint::scenarios_in_order(feature);
    let end = feature
        .background
        .as_ref()
        .map(|b| b.position.line)
        .into_iter()
        .chain(scenarios.iter().map(|s| s.position.line))
        .chain(feature.rules.iter().map(|r| r.position.line))
        .min()
        .unwrap_or(usize::MAX);
    let description = |s: &gherkin::Scenario| {
        let first_step = s.steps.first().map_or(usize::MAX, |st| st.position.line);
        split(&raw_description(source, s.position.line, first_step))
    };
    let (mistakes, steps): (Vec<&gherkin::Scenario>, Vec<&gherkin::Scenario>) = scenarios
        .iter()
        .copied()
        .partition(|s| tags::has(&s.tags, tags::MISTAKE));
    let mut page = Page::new(format, &feature.name);
    for p in split(&raw_description(source, feature.position.line, end)).task {
        page.paragraph(&p);
    }
    if let Some(bg) = &feature.background {
        page.heading(2, w.setup);
        page.list(bg.steps.iter().map(|s| s.value.as_str()));
    }
    for (i, s) in steps.iter().enumerate() {
        page.heading(2, &format!("{} {}: {}", w.step, i + 1, s.name));
        let text = description(s);
        for p in &text.task {
            page.paragraph(p);
        }
        for h in &text.hints {
            page.hint(w.hint, h);
        }
        if with_solution {
            page.code(w.solution, &commands(s));
        }
    }
    if !mistakes.is_empty() {
        page.heading(2, w.mistakes);
        for m in &mistakes {
            page.heading(3, &m.name);
            for p in description(m).task {
                page.paragraph(&p);
            }
            if with_solution {
                page.code(w.wrong, &commands(m));
            }
        }
    }
    page.finish()
}

/// A page being written in one of the formats.
struct Page {
    format: Format,
    out: String,
}

impl Page {
    fn new(format: Format, title: &str) -> Page {
        let out = match format {
            Format::Md => format!("# {title}\n"),
            Format::Html => format!(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
                t = esc(title)
            ),
        };
        Page { format, out }
    }

    fn heading(&mut self, level: usize, text: &str) {
        match self.format {
            Format::Md => self
                .out
                .push_str(&format!("\n{} {text}\n", "#".repeat(level))),
            Format::Html => self
                .out
                .push_str(&format!("<h{level}>{}</h{level}>\n", esc(text))),
        }
    }

    fn paragraph(&mut self, text: &str) {
        match self.format {
            // Two trailing spaces keep the lab's own line breaks in Markdown.
            Format::Md => self
                .out
                .push_str(&format!("\n{}\n", text.replace('\n', "  \n"))),
            Format::Html => self
                .out
                .push_str(&format!("<p>{}</p>\n", esc(text).replace('\n', "<br>"))),
        }
    }

    fn list<'a>(&mut self, items: impl Iterator<Item = &'a str>) {
        match self.format {
            Format::Md => {
                self.out.push('\n');
                for i in items {
                    self.out.push_str(&format!("- {i}\n"));
                }
            }
            Format::Html => {
                self.out.push_str("<ul>");
                for i in items {
                    self.out.push_str(&format!("<li>{}</li>", esc(i)));
                }
                self.out.push_str("</ul>\n");
            }
        }
    }

    fn hint(&mut self, label: &str, text: &str) {
        match self.format {
            Format::Md => self.out.push_str(&format!(
                "\n> **{label}:** {}\n",
                text.replace('\n', "  \n> ")
            )),
            Format::Html => self.out.push_str(&format!(
                "<details><summary>{}</summary><p>{}</p></details>\n",
                esc(label),
                esc(text).replace('\n', "<br>")
            )),
        }
    }

    fn code(&mut self, label: &str, blocks: &[&str]) {
        for block in blocks {
            let block = block.trim_matches('\n');
            match self.format {
                Format::Md => self
                    .out
                    .push_str(&format!("\n**{label}:**\n\n```bash\n{block}\n```\n")),
                Format::Html => self.out.push_str(&format!(
                    "<p><b>{}</b></p><pre><code>{}</code></pre>\n",
                    esc(label),
                    esc(block)
                )),
            }
        }
    }

    fn finish(mut self) -> String {
        if self.format == Format::Html {
            self.out.push_str("</body></html>\n");
        }
        self.out
    }
}

const STYLE: &str = "body{font-family:sans-serif;max-width:52em;margin:2em auto;line-height:1.6;padding:0 1em}\
h2{border-bottom:1px solid #ccc;margin-top:2em}pre{background:#f4f4f4;padding:.8em;overflow-x:auto}\
details{background:#fffbe6;padding:.4em .8em;margin:.6em 0}summary{cursor:pointer;font-weight:bold}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_paragraphs_that_say_so() {
        let text = split("Do this\nand that.\n\nHint: look here.\n\nヒント: ここを見る。");
        assert_eq!(text.task, vec!["Do this\nand that.".to_owned()]);
        assert_eq!(text.hints, vec!["look here.", "ここを見る。"]);
    }
}
