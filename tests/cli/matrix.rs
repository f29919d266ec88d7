//! The Istio matrix: a broken copy of a seed lab step fails on every version, and the HTML
//! report shows the failing check with its line in each version's column.

use assert_cmd::Command;

#[test]
fn broken_step_fails_on_every_version_with_its_line_in_the_html_report() {
    let reports = tempfile::tempdir().expect("reports");
    let lab = "tests/labs/broken/mesh-install-broken.feature";
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["run", lab, "--report-dir"])
        .arg(reports.path())
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("labcheck runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(reports.path().join("report.html")).expect("report.html");
    let line = std::fs::read_to_string(lab)
        .expect("lab")
        .lines()
        .position(|l| l.contains("manifest-kinds.txt\" に \"CustomResourceDefinition\""))
        .map(|i| i + 1)
        .expect("the broken step's check");
    let location = format!("{lab}:{line}");
    assert_eq!(
        html.matches(&location).count(),
        2,
        "one failing entry per Istio version: {location}"
    );
    assert!(
        html.contains("istio 1.31") && html.contains("istio 1.30"),
        "columns per version"
    );
    assert!(
        html.contains("期待: 次を含むこと: &quot;CustomResourceDefinition&quot;"),
        "the failing check's message"
    );
    let junit = std::fs::read_to_string(reports.path().join("junit.xml")).expect("junit.xml");
    assert!(junit.contains("[istio 1.31]") && junit.contains("[istio 1.30]"));
}
