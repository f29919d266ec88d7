//! What changed between Istio versions: for each lab run on several versions, the files each step
//! left in the lab's directories and the learner commands' output, compared version by version
//! after normalising what always differs (version strings, image tags, timestamps, object ids),
//! so an author sees before a release that a version renders a different manifest even when every
//! check passes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use super::{CellRecord, Record, esc};

/// One thing that differs between two versions of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub lab: String,
    pub step: String,
    /// A file's path, or "output of command N".
    pub what: String,
    pub from: String,
    pub to: String,
    pub added: usize,
    pub removed: usize,
    /// The first changed lines, `+`/`-` prefixed; empty when the thing exists on one side only.
    pub excerpt: Vec<String>,
}

/// How many changed lines a difference shows.
const EXCERPT_LINES: usize = 8;

static NORMALISE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        // An image's tag: docker.io/istio/proxyv2:1.31-dev.eed52ebb
        (r"(image:\s*['\x22]?[\w./-]+):[\w.-]+", "$1:<tag>"),
        (r"([\w.-]+/[\w.-]+):\d[\w.-]*", "$1:<tag>"),
        (
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
            "<time>",
        ),
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "<uid>",
        ),
        // Names Kubernetes generates: a Pod's after its template hash (web-5f7b556567-sghpc),
        // a projected token volume's (kube-api-access-s8f6j).
        (
            r"(-[0-9a-f]{8,10}|kube-api-access)-[bcdfghjklmnpqrstvwxz2456789]{5}\b",
            "$1-<id>",
        ),
        // YAML (`resourceVersion: "279"`) and JSON (`"resourceVersion": "279"`).
        (r#"(resourceVersion['"]?:\s*['"]?)\d+"#, "$1<rv>"),
        // Istio and Kubernetes versions: 1.31, v1.35.4, 1.31-dev.eed52ebb, 1.30.8
        (
            r"\bv?1\.\d{2}(\.\d+)?(-[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?\b",
            "<version>",
        ),
    ]
    .into_iter()
    .filter_map(|(re, with)| Regex::new(re).ok().map(|r| (r, with)))
    .collect()
});

/// `text` with what always differs between versions replaced by placeholders.
pub fn normalise(text: &str) -> String {
    NORMALISE.iter().fold(text.to_owned(), |t, (re, with)| {
        re.replace_all(&t, *with).into_owned()
    })
}

/// Everything that differs between the versions of each lab's main cells.
pub fn differences(record: &Record) -> Vec<Difference> {
    let mut labs: BTreeMap<&std::path::Path, Vec<&CellRecord>> = BTreeMap::new();
    for c in record.cells.values().filter(|c| c.id.mistake.is_none()) {
        labs.entry(&c.lab.path).or_default().push(c);
    }
    let mut out = Vec::new();
    for cells in labs.values() {
        let mut cells = cells.clone();
        // Newest first, as the report's columns.
        cells.sort_by(|a, b| b.id.label.cmp(&a.id.label));
        let Some((base, others)) = cells.split_first() else {
            continue;
        };
        for other in others {
            compare(base, other, &mut out);
        }
    }
    out
}

fn compare(a: &CellRecord, b: &CellRecord, out: &mut Vec<Difference>) {
    for sa in &a.steps {
        let Some(sb) = b.steps.iter().find(|s| s.step.line == sa.step.line) else {
            continue;
        };
        let mut things: BTreeMap<String, (Option<&str>, Option<&str>)> = BTreeMap::new();
        for art in &sa.artifacts {
            things.entry(art.path.display().to_string()).or_default().0 = Some(&art.text);
        }
        for art in &sb.artifacts {
            things.entry(art.path.display().to_string()).or_default().1 = Some(&art.text);
        }
        let commands: BTreeSet<usize> =
            (0..sa.transcripts.len().max(sb.transcripts.len())).collect();
        for i in commands {
            things.insert(
                format!("output of command {}", i + 1),
                (
                    sa.transcripts.get(i).map(|t| t.stdout.as_str()),
                    sb.transcripts.get(i).map(|t| t.stdout.as_str()),
                ),
            );
        }
        for (what, sides) in things {
            if let Some(d) = differ(sides) {
                out.push(Difference {
                    lab: a.lab.name.clone(),
                    step: format!("{}. {}", sa.step.index, sa.step.name),
                    what,
                    from: a.id.label.clone(),
                    to: b.id.label.clone(),
                    ..d
                });
            }
        }
    }
}

/// The difference between two sides, or `None` when they are equal once normalised.
fn differ(sides: (Option<&str>, Option<&str>)) -> Option<Difference> {
    let blank = |added, removed, excerpt| Difference {
        lab: String::new(),
        step: String::new(),
        what: String::new(),
        from: String::new(),
        to: String::new(),
        added,
        removed,
        excerpt,
    };
    match sides {
        (Some(a), Some(b)) => {
            let (a, b) = (normalise(a), normalise(b));
            if a == b {
                return None;
            }
            let diff = similar::TextDiff::from_lines(&a, &b);
            let (mut added, mut removed, mut excerpt) = (0, 0, Vec::new());
            for change in diff.iter_all_changes() {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => continue,
                    similar::ChangeTag::Insert => {
                        added += 1;
                        '+'
                    }
                    similar::ChangeTag::Delete => {
                        removed += 1;
                        '-'
                    }
                };
                if excerpt.len() < EXCERPT_LINES {
                    excerpt.push(format!("{sign}{}", change.value().trim_end_matches('\n')));
                }
            }
            Some(blank(added, removed, excerpt))
        }
        (Some(a), None) => Some(blank(0, a.lines().count(), Vec::new())),
        (None, Some(b)) => Some(blank(b.lines().count(), 0, Vec::new())),
        (None, None) => None,
    }
}

const TITLE: &str = "What differs between Istio versions";
const NOTHING: &str = "Nothing: every step left the same files and printed the same output on \
                       every version (versions, image tags, timestamps and object ids aside).";

/// The differences as a Markdown section (empty when no lab ran on two versions).
pub fn markdown(record: &Record) -> String {
    if !ran_on_several_versions(record) {
        return String::new();
    }
    let diffs = differences(record);
    let mut out = format!("\n## {TITLE}\n\n");
    if diffs.is_empty() {
        out.push_str(&format!("{NOTHING}\n"));
        return out;
    }
    for d in &diffs {
        out.push_str(&format!(
            "- {} › {} — `{}`: {} → {}: {}\n",
            d.lab,
            d.step,
            d.what,
            d.from,
            d.to,
            counts(d)
        ));
        if !d.excerpt.is_empty() {
            out.push_str("  ```diff\n");
            for l in &d.excerpt {
                out.push_str(&format!("  {l}\n"));
            }
            out.push_str("  ```\n");
        }
    }
    out
}

/// The differences as an HTML section, each folded open to its changed lines (empty when no lab
/// ran on two versions).
pub fn html(record: &Record) -> String {
    if !ran_on_several_versions(record) {
        return String::new();
    }
    let diffs = differences(record);
    let mut out = format!("<h2>{TITLE}</h2>");
    if diffs.is_empty() {
        out.push_str(&format!("<p>{NOTHING}</p>"));
        return out;
    }
    for d in &diffs {
        out.push_str(&format!(
            "<details><summary>{} › {} — <code>{}</code>: {} → {}: {}</summary><pre>{}</pre></details>",
            esc(&d.lab),
            esc(&d.step),
            esc(&d.what),
            esc(&d.from),
            esc(&d.to),
            esc(&counts(d)),
            esc(&d.excerpt.join("\n"))
        ));
    }
    out
}

/// `+N −M lines`, or on which side the thing is missing.
pub fn counts(d: &Difference) -> String {
    match (d.added, d.removed, d.excerpt.is_empty()) {
        (n, 0, true) => format!("only in {} ({n} lines)", d.to),
        (0, n, true) => format!("only in {} ({n} lines)", d.from),
        (a, r, _) => format!("+{a} −{r} lines"),
    }
}

/// Whether some lab ran on more than one version.
pub fn ran_on_several_versions(record: &Record) -> bool {
    let mut labels: BTreeMap<&std::path::Path, BTreeSet<&str>> = BTreeMap::new();
    for c in record.cells.values() {
        labels.entry(&c.lab.path).or_default().insert(&c.id.label);
    }
    labels.values().any(|l| l.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_tags_and_times_are_not_differences() {
        let a = "client version: 1.31-dev.eed52ebb\nimage: docker.io/istio/proxyv2:1.31-dev.eed52ebb\ncreationTimestamp: \"2026-12-02T10:00:00Z\"\n";
        let b = "client version: 1.30-dev.9739e10e\nimage: docker.io/istio/proxyv2:1.30-dev.9739e10e\ncreationTimestamp: \"2026-12-02T11:30:05Z\"\n";
        assert_eq!(normalise(a), normalise(b));
        assert!(differ((Some(a), Some(b))).is_none());
    }

    #[test]
    fn generated_names_are_not_differences() {
        let a = "name: web-5f7b556567-sghpc\nvolume: kube-api-access-s8f6j\n";
        let b = "name: web-5f7b556567-2jmpq\nvolume: kube-api-access-wbwxd\n";
        assert_eq!(normalise(a), normalise(b));
        assert_ne!(
            normalise("name: web-5f7b556567-sghpc"),
            normalise("name: api-6c8d9f7b45-sghpc")
        );
    }

    #[test]
    fn a_different_count_is_a_difference_with_its_lines() {
        let d = differ((
            Some("     15 kind: CustomResourceDefinition\n      3 kind: ConfigMap\n"),
            Some("     14 kind: CustomResourceDefinition\n      3 kind: ConfigMap\n"),
        ))
        .expect("a difference");
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(
            d.excerpt,
            vec![
                "-     15 kind: CustomResourceDefinition",
                "+     14 kind: CustomResourceDefinition"
            ]
        );
        let only = differ((Some("a\nb\n"), None)).expect("missing on one side");
        assert_eq!((only.added, only.removed), (0, 2));
    }
}
