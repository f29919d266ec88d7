//! Problems of a lab's shape: a lab or step that grades nothing, outlines, mistakes naming checks
//! the lab does not make by then, limit tags that are no number, Feature tags on a Scenario,
//! profiles that cannot go together.

use std::path::Path;

use cucumber::gherkin::{self, StepType};

use super::{Problem, tags};
use crate::steps::action::{Action, Commands, Release};
use crate::steps::lab::CompiledLab;
use crate::steps::names::reference;
use crate::steps::phrases::REJECTION;

/// The limits of a lab's cells: the defaults, raised by the Feature's tags; or the tags whose
/// values are no number (tag, value, an example).
pub(super) fn limits(
    feature: &gherkin::Feature,
) -> Result<crate::sandbox::Limits, Vec<(&'static str, &str, &'static str)>> {
    let mut limits = crate::sandbox::Limits::default();
    let mut bad = Vec::new();
    if let Some(v) = tags::value(&feature.tags, tags::MEMORY) {
        match crate::sandbox::cgroup::parse_size(v) {
            Some(m) => limits.memory = m,
            None => bad.push(("memory", v, "@memory=8GiB")),
        }
    }
    if let Some(v) = tags::value(&feature.tags, tags::PIDS) {
        match v.parse() {
            Ok(p) => limits.pids = p,
            Err(_) => bad.push(("pids", v, "@pids=8192")),
        }
    }
    if let Some(v) = tags::value(&feature.tags, tags::CPUS) {
        match crate::sandbox::cgroup::parse_cpus(v) {
            Some(c) => limits.millicpus = c,
            None => bad.push(("cpus", v, "@cpus=1.5")),
        }
    }
    if bad.is_empty() { Ok(limits) } else { Err(bad) }
}

/// The scenarios of a feature (rules included), in file order.
/// The steps of the Background and of every Scenario that unpack Istio's release.
fn release_steps<'a>(
    feature: &'a gherkin::Feature,
    compiled: &'a CompiledLab,
) -> impl Iterator<Item = (&'a gherkin::Step, Release)> {
    let background = feature.background.iter().flat_map(|b| b.steps.iter());
    let scenarios = feature.scenarios.iter().flat_map(|s| s.steps.iter());
    let rules = feature.rules.iter().flat_map(|r| {
        r.background
            .iter()
            .flat_map(|b| b.steps.iter())
            .chain(r.scenarios.iter().flat_map(|s| s.steps.iter()))
    });
    background.chain(scenarios).chain(rules).filter_map(|step| {
        match compiled.action(step.position.line) {
            Some(Action::IstioRelease(which, _)) => Some((step, *which)),
            _ => None,
        }
    })
}

pub fn scenarios_in_order(feature: &gherkin::Feature) -> Vec<&gherkin::Scenario> {
    let mut scenarios: Vec<&gherkin::Scenario> = feature
        .scenarios
        .iter()
        .chain(feature.rules.iter().flat_map(|r| &r.scenarios))
        .collect();
    scenarios.sort_by_key(|s| s.position.line);
    scenarios
}

/// The problems found so far in one feature file.
struct Found<'a> {
    path: &'a Path,
    problems: Vec<Problem>,
}

impl Found<'_> {
    fn problem(&mut self, line: usize, col: usize, message: String, hint: &str) {
        self.problems.push(Problem {
            path: self.path.to_owned(),
            line,
            col,
            message,
            hint: (!hint.is_empty()).then(|| hint.to_owned()),
            grades_nothing: false,
        });
    }

    /// A problem that makes the lab, or a step of it, grade nothing.
    fn nothing(&mut self, line: usize, col: usize, message: String, hint: &str) {
        self.problem(line, col, message, hint);
        if let Some(p) = self.problems.last_mut() {
            p.grades_nothing = true;
        }
    }
}

/// Problems of shape: a lab that grades nothing, a step that checks nothing, outlines, and
/// mistakes naming checks the main lab does not make by then.
pub(super) fn structure(
    path: &Path,
    feature: &gherkin::Feature,
    compiled: &CompiledLab,
) -> Vec<Problem> {
    let mut found = Found {
        path,
        problems: Vec::new(),
    };
    feature_tags(&mut found, feature, compiled);
    let scenarios = scenarios_in_order(feature);
    if scenarios.is_empty() {
        found.nothing(
            feature.position.line,
            feature.position.col,
            "the Feature has no Scenario: the lab grades nothing".to_owned(),
            "each lab step is a Scenario",
        );
    }
    // The checks the main lab has made up to each step, by their text and by their names.
    let mut made = Made::default();
    for sc in scenarios {
        let Some(checks) = scenario_shape(&mut found, sc, compiled) else {
            continue;
        };
        if !tags::has(&sc.tags, tags::MISTAKE) {
            made.texts
                .extend(checks.iter().map(|s| s.value.trim().to_owned()));
            made.names.extend(checks.iter().flat_map(|s| {
                compiled
                    .names()
                    .names_of(s.position.line)
                    .map(str::to_owned)
            }));
            continue;
        }
        mistake_references(&mut found, sc, compiled, &made);
    }
    let backgrounds = feature
        .background
        .iter()
        .chain(feature.rules.iter().filter_map(|r| r.background.as_ref()));
    for step in backgrounds.flat_map(|b| &b.steps) {
        if retried(step, compiled) {
            found.problem(
                step.position.line,
                step.position.col,
                "a Background's commands run once: it has no checks to run them again for"
                    .to_owned(),
                "run again until the checks pass in the Scenario whose checks they wait for",
            );
        }
    }
    found.problems
}

/// The checks the main lab has made by a step: their texts and their names.
#[derive(Default)]
struct Made {
    texts: Vec<String>,
    names: std::collections::BTreeSet<String>,
}

/// The Feature's tags against each other and against its steps: `@node` with an Istio matrix,
/// Istio's release unpacked in a lab of no Istio version.
fn feature_tags(found: &mut Found<'_>, feature: &gherkin::Feature, compiled: &CompiledLab) {
    let node = tags::has(&feature.tags, tags::NODE);
    let upgrade = tags::has(&feature.tags, tags::UPGRADE);
    let istio =
        tags::has(&feature.tags, tags::ISTIO) || tags::has(&feature.tags, tags::MESH) || upgrade;
    if node && istio {
        found.problem(
            feature.position.line,
            feature.position.col,
            "@node cannot be given with @istio or @mesh: @node runs no Istio matrix, and @mesh \
             is the real node with Istio's images of every version of the matrix"
                .to_owned(),
            "tag the Feature @node for Kubernetes content on a real node, or @mesh for a live \
             mesh on every Istio version",
        );
    }
    for (step, which) in release_steps(feature, compiled) {
        let not_istio = (!istio).then_some((
            "Istio's release is unpacked only in a lab of an Istio version: the Feature is not \
             tagged @istio or @mesh",
            "tag the Feature @istio (or @mesh for a live mesh): each Istio version's cell then \
             gets that version's samples/, manifests/ and bin/istioctl",
        ));
        let wrong_release = match which {
            Release::Cell if upgrade => Some((
                "an upgrade cell holds two Istio versions: say which release is unpacked",
                "unpack the release to upgrade from (`Istio's release to upgrade from is \
                 unpacked at …`) and the one to upgrade to (`… to upgrade to …`)",
            )),
            Release::From | Release::To if !upgrade => Some((
                "a release to upgrade from or to is unpacked only in an upgrade lab: the \
                 Feature is not tagged @upgrade",
                "tag the Feature @upgrade (each adjacent pair of the matrix then gets a cell \
                 with both versions), or unpack the cell's release (`Istio's release is \
                 unpacked at …`)",
            )),
            _ => None,
        };
        for (message, hint) in wrong_release.into_iter().chain(not_istio) {
            found.problem(
                step.position.line,
                step.position.col,
                message.to_owned(),
                hint,
            );
        }
    }
}

/// A Scenario's own shape: Feature tags on it, an outline, no steps, no check, commands run
/// again with nothing to run them for. Its checks (Then steps), unless it has no steps.
fn scenario_shape<'a>(
    found: &mut Found<'_>,
    sc: &'a gherkin::Scenario,
    compiled: &CompiledLab,
) -> Option<Vec<&'a gherkin::Step>> {
    let at = (sc.position.line, sc.position.col);
    for (names, what) in [(tags::MESH, "a live mesh"), (tags::NODE, "a real node")] {
        if tags::has(&sc.tags, names) {
            found.problem(
                at.0,
                at.1,
                format!(
                    "@{} is a Feature tag: the Scenario {:?} shares its lab's cell and cluster",
                    names[0], sc.name
                ),
                &format!(
                    "tag the Feature @{} (or @{}): every step of the lab then runs on {what}",
                    names[0], names[1]
                ),
            );
        }
    }
    if !sc.examples.is_empty() {
        found.problem(
            at.0,
            at.1,
            "Scenario Outlines are not supported: a lab step runs once, in order".to_owned(),
            "write one Scenario per step",
        );
    }
    if sc.steps.is_empty() {
        found.nothing(
            at.0,
            at.1,
            format!("the Scenario {:?} has no steps: it grades nothing", sc.name),
            "",
        );
        return None;
    }
    let mistake = tags::has(&sc.tags, tags::MISTAKE);
    for (step, message, hint) in retries_without_meaning(&sc.steps, mistake, compiled) {
        found.problem(step.position.line, step.position.col, message, hint);
    }
    let checks: Vec<&gherkin::Step> = sc.steps.iter().filter(|s| s.ty == StepType::Then).collect();
    if checks.is_empty() {
        found.nothing(
            at.0,
            at.1,
            format!("the Scenario {:?} grades nothing: it has no check", sc.name),
            "add Then steps that grade what the step makes",
        );
    }
    Some(checks)
}

/// A mistake's list: it has one, and each check it names (by its text or its name) is one the
/// main lab has made by then.
fn mistake_references(
    found: &mut Found<'_>,
    sc: &gherkin::Scenario,
    compiled: &CompiledLab,
    made: &Made,
) {
    let rejection = sc
        .steps
        .iter()
        .find(|s| [REJECTION.0, REJECTION.1].contains(&s.value.as_str()));
    let Some(rejection) = rejection else {
        found.problem(
            sc.position.line,
            sc.position.col,
            format!("the mistake {:?} names no check that rejects it", sc.name),
            &format!("add \"{}\" with the checks, one a line", REJECTION.0),
        );
        return;
    };
    for (line, l) in crate::steps::action::listed_with_lines(rejection) {
        let col = rejection.position.col + 2;
        if let Some(r) = reference(&l) {
            if made.names.contains(r.name) {
                continue;
            }
            let (message, hint) = match compiled.names().resolve(&l) {
                Err(unknown) => (
                    unknown.render(crate::model::Lang::En),
                    "name the check with `# check: NAME` right above it, or fix the name",
                ),
                Ok(_) => (
                    format!(
                        "the mistake names a check the lab does not make by this step: {}",
                        r.name
                    ),
                    "name checks of the step the mistake gets wrong (or of an earlier step)",
                ),
            };
            found.problem(line, col, message, hint);
            continue;
        }
        if made.texts.contains(&l) {
            continue;
        }
        found.problem(
            line,
            col,
            format!("the mistake names a check the lab does not make by this step: {l}"),
            "name checks of the step the mistake gets wrong (or of an earlier step), word for word",
        );
    }
}

/// Whether a step runs its commands again until the checks pass.
fn retried(step: &gherkin::Step, compiled: &CompiledLab) -> bool {
    matches!(
        compiled.action(step.position.line),
        Some(Action::Run(Commands { until: Some(_), .. }))
    )
}

/// The steps of a scenario that run their commands again until its checks pass where that
/// cannot mean anything: in a mistake (its listed checks must fail, so it would try until the
/// time is up), or with no check after them to pass.
fn retries_without_meaning<'a>(
    steps: &'a [gherkin::Step],
    mistake: bool,
    compiled: &CompiledLab,
) -> Vec<(&'a gherkin::Step, String, &'static str)> {
    let is_check =
        |s: &gherkin::Step| s.ty == StepType::Then && compiled.check(s.position.line).is_some();
    let mut found = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if !retried(step, compiled) {
            continue;
        }
        if mistake {
            found.push((
                step,
                "a mistake's commands run once: its listed checks must fail, so running them \
                 again until the checks pass would only wait out the time"
                    .to_owned(),
                "write the mistake's commands with \"the learner runs:\"",
            ));
        } else if !steps[i + 1..].iter().any(is_check) {
            found.push((
                step,
                "the commands run again until the checks pass, and no check follows them"
                    .to_owned(),
                "add the Then steps the commands are run again for, or run them once",
            ));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn lint(text: &str) -> Vec<super::Problem> {
        let path = Path::new("x.feature");
        crate::lint::lint_text(path, path, text)
            .err()
            .unwrap_or_default()
    }

    const STEP: &str = "    When the learner runs:\n      \"\"\"\n      true\n      \"\"\"\n    \
                        Then the last command should succeed\n";

    #[test]
    fn istios_release_is_unpacked_only_in_a_lab_of_an_istio_version() {
        let background =
            "  Background:\n    Given Istio's release is unpacked at \"/root/istio\"\n";
        for tags in ["@istio", "@mesh", "@メッシュ"] {
            let p = lint(&format!(
                "{tags}\nFeature: x\n{background}  Scenario: y\n{STEP}"
            ));
            assert!(p.is_empty(), "{tags}: {p:?}");
        }
        for tags in ["", "@kubernetes", "@node"] {
            let p = lint(&format!(
                "{tags}\nFeature: x\n{background}  Scenario: y\n{STEP}"
            ));
            assert_eq!(p.len(), 1, "{tags}: {p:?}");
            assert_eq!((p[0].line, p[0].col), (4, 5), "{p:?}");
            assert!(p[0].message.contains("not tagged @istio or @mesh"), "{p:?}");
        }
    }

    #[test]
    fn an_upgrade_lab_unpacks_the_releases_it_upgrades_from_and_to() {
        let from = "    Given Istio's release to upgrade from is unpacked at \"/root/old\"\n";
        let to = "    And Istio's release to upgrade to is unpacked at \"/root/new\"\n";
        let cell = "    Given Istio's release is unpacked at \"/root/istio\"\n";
        let lab = |tags: &str, steps: &str| {
            lint(&format!(
                "{tags}\nFeature: x\n  Background:\n{steps}  Scenario: y\n{STEP}"
            ))
        };
        for tags in ["@upgrade", "@アップグレード", "@upgrade @mesh"] {
            let p = lab(tags, &format!("{from}{to}"));
            assert!(p.is_empty(), "{tags}: {p:?}");
            let p = lab(tags, cell);
            assert_eq!(p.len(), 1, "{tags}: {p:?}");
            assert_eq!(p[0].line, 4, "{p:?}");
            assert!(p[0].message.contains("say which release"), "{p:?}");
        }
        for tags in ["@istio", "@mesh"] {
            let p = lab(tags, &format!("{from}{to}"));
            assert_eq!(p.len(), 2, "{tags}: {p:?}");
            assert!(p.iter().all(|p| p.message.contains("not tagged @upgrade")));
        }
        let p = lint(&format!(
            "@node @upgrade\nFeature: x\n  Scenario: y\n{STEP}"
        ));
        assert!(p[0].message.contains("@node cannot be given"), "{p:?}");
    }

    #[test]
    fn mesh_is_a_feature_tag() {
        assert!(lint(&format!("@mesh\nFeature: x\n  Scenario: y\n{STEP}")).is_empty());
        assert!(lint(&format!("@メッシュ\nFeature: x\n  Scenario: y\n{STEP}")).is_empty());
        let p = lint(&format!("Feature: x\n  @mesh\n  Scenario: y\n{STEP}"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].line, 3);
        assert!(p[0].message.contains("@mesh is a Feature tag"), "{p:?}");
    }

    #[test]
    fn node_is_a_feature_tag_that_goes_with_no_istio_profile() {
        assert!(
            lint(&format!(
                "@kubernetes @node\nFeature: x\n  Scenario: y\n{STEP}"
            ))
            .is_empty()
        );
        assert!(lint(&format!("@ノード\nFeature: x\n  Scenario: y\n{STEP}")).is_empty());
        let p = lint(&format!("Feature: x\n  @node\n  Scenario: y\n{STEP}"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].message.contains("@node is a Feature tag"), "{p:?}");
        for tags in ["@istio @node", "@node @mesh"] {
            let p = lint(&format!("{tags}\nFeature: x\n  Scenario: y\n{STEP}"));
            assert_eq!(p.len(), 1, "{tags}: {p:?}");
            assert_eq!(p[0].line, 2, "{p:?}");
            assert!(
                p[0].message
                    .contains("@node cannot be given with @istio or @mesh:")
            );
        }
    }

    #[test]
    fn running_again_until_the_checks_pass_needs_checks_to_pass() {
        let retried = "    When the learner runs, until the checks pass or 10 seconds are up:\n      \"\"\"\n      true\n      \"\"\"\n";
        let ja = "    もし 学習者がチェックに合格するまで最大 10 秒、次のコマンドを繰り返し実行する\n      \"\"\"\n      true\n      \"\"\"\n";
        let check = "    Then the last command should succeed\n";
        assert!(lint(&format!("Feature: x\n  Scenario: y\n{retried}{check}")).is_empty());
        let jp = lint(&format!(
            "# language: ja\n機能: x\n  シナリオ: y\n{ja}    ならば 最後のコマンドが成功する\n"
        ));
        assert!(jp.is_empty(), "{jp:?}");
        // No check after the commands.
        let p = lint(&format!("Feature: x\n  Scenario: y\n{check}{retried}"));
        assert!(
            p.iter()
                .any(|p| p.line == 4 && p.message.contains("no check follows")),
            "{p:?}"
        );
        // In a mistake.
        let p = lint(&format!(
            "Feature: x\n  Scenario: y\n{STEP}  @mistake\n  Scenario: z\n{retried}    Then these checks should reject it:\n      \"\"\"\n      the last command should succeed\n      \"\"\"\n"
        ));
        assert!(
            p.iter()
                .any(|p| p.line == 10 && p.message.contains("a mistake's commands run once")),
            "{p:?}"
        );
        // In a Background.
        let p = lint(&format!(
            "Feature: x\n  Background:\n{retried}  Scenario: y\n{STEP}"
        ));
        assert!(
            p.iter()
                .any(|p| p.line == 3 && p.message.contains("a Background's commands run once")),
            "{p:?}"
        );
        // Out of range.
        let p = lint(&format!(
            "Feature: x\n  Scenario: y\n{}{check}",
            retried.replace("10 seconds", "0 seconds")
        ));
        assert!(
            p.iter()
                .any(|p| p.message.contains("a wait must be 1 to 600s")),
            "{p:?}"
        );
    }
}
