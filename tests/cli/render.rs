//! `labcheck render`: the seed lab as a learner reads it — tasks and hints in the seed's words,
//! the reference commands only when asked for, Markdown or self-contained HTML.

use assert_cmd::Command;
use predicates::prelude::*;

const LAB: &str = "features/istio/mesh-install.feature";

fn render(args: &[&str]) -> String {
    let out = Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["render", LAB])
        .args(args)
        .output()
        .expect("labcheck runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn the_seed_lab_reads_like_its_seed_without_the_solution() {
    let page = render(&[]);
    for text in [
        "# メッシュ導入マニフェストとサイドカーの解剖",
        "## 準備",
        "## ステップ 1: istioctl のバージョンとインストール前の点検",
        "istioctl versionの出力を/root/istio/out/version.txtに保存してください(バージョン番号が含まれている必要があります)。",
        "## ステップ 8: メッシュ準備状態の要約作成",
        "> **ヒント:** istioctl manifest generateはクラスターに何も作らず",
        "## よくある間違い",
        "ステップ7のproxy_imageを記憶で書くこと。",
    ] {
        assert!(page.contains(text), "missing {text:?} in:\n{page}");
    }
    for solution in ["```bash", "mkdir -p /root/istio/out", "作成者向け"] {
        assert!(
            !page.contains(solution),
            "{solution:?} shown to the learner"
        );
    }
    let steps = page.matches("\n## ステップ ").count();
    assert_eq!(steps, 8, "one section per step, mistakes apart");
}

#[test]
fn with_the_solution_and_as_html() {
    let page = render(&["--with-solution"]);
    assert!(
        page.contains("**模範解答:**\n\n```bash\nmkdir -p /root/istio/out"),
        "{page}"
    );
    assert!(page.contains("**間違った解答:**"), "{page}");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lab.html");
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["render", LAB, "--format", "html", "-o"])
        .arg(&file)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&file).expect("html written");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h2>ステップ 3: メッシュ API タイプのクラスターへの登録</h2>"));
    assert!(html.contains("<details><summary>ヒント</summary>"));
    assert!(
        !html.contains("<script") && !html.contains("http"),
        "self-contained, no network"
    );
}

#[test]
fn a_lab_with_problems_is_not_rendered() {
    Command::cargo_bin("labcheck")
        .expect("binary")
        .args(["render", "tests/labs/broken/fullwidth-colon.feature"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("fullwidth-colon.feature:"));
}
