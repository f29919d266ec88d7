//! The phrases that shape a scenario: its preparations (lab directory, fixtures, Istio's
//! release), the learner's commands (once, or again until the checks pass), and a mistake's
//! rejection.

use super::*;

pub(super) const PHRASES: &[Phrase] = &[
    Phrase {
        ty: Given,
        what: "a lab directory: exists in the sandbox; commands start in the first one",
        en: Sentence {
            expr: r#"the lab directory {string}"#,
            example: r#"the lab directory "/root/lab""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"ラボのディレクトリ {string} を使う"#,
            example: r#"ラボのディレクトリ "/root/lab" を使う"#,
            order: &[0],
        },
        build: |a| Ok(Action::LabDirectory(a.path(0))),
    },
    Phrase {
        ty: Given,
        what: "a fixture from the repository copied into the sandbox",
        en: Sentence {
            expr: r#"the fixture {string} is placed at {string}"#,
            example: r#"the fixture "fixtures/demo" is placed at "/opt/lab/fixtures/demo""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"フィクスチャ {string} を {string} に置く"#,
            example: r#"フィクスチャ "fixtures/demo" を "/opt/lab/fixtures/demo" に置く"#,
            order: &[0, 1],
        },
        build: |a| {
            Ok(Action::Fixture {
                src: a.path(0),
                dst: a.path(1),
            })
        },
    },
    Phrase {
        ty: Given,
        what: "the cell's Istio version unpacked as a release: samples/, manifests/, bin/istioctl",
        en: Sentence {
            expr: r#"Istio's release is unpacked at {string}"#,
            example: r#"Istio's release is unpacked at "/root/istio""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"Istio のリリースを {string} に展開する"#,
            example: r#"Istio のリリースを "/root/istio" に展開する"#,
            order: &[0],
        },
        build: |a| Ok(Action::IstioRelease(Release::Cell, a.path(0))),
    },
    Phrase {
        ty: Given,
        what: "an upgrade cell's older Istio version unpacked as a release: samples/, \
               manifests/, bin/istioctl",
        en: Sentence {
            expr: r#"Istio's release to upgrade from is unpacked at {string}"#,
            example: r#"Istio's release to upgrade from is unpacked at "/root/istio-old""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"アップグレード元の Istio のリリースを {string} に展開する"#,
            example: r#"アップグレード元の Istio のリリースを "/root/istio-old" に展開する"#,
            order: &[0],
        },
        build: |a| Ok(Action::IstioRelease(Release::From, a.path(0))),
    },
    Phrase {
        ty: Given,
        what: "an upgrade cell's newer Istio version unpacked as a release: samples/, \
               manifests/, bin/istioctl",
        en: Sentence {
            expr: r#"Istio's release to upgrade to is unpacked at {string}"#,
            example: r#"Istio's release to upgrade to is unpacked at "/root/istio-new""#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"アップグレード先の Istio のリリースを {string} に展開する"#,
            example: r#"アップグレード先の Istio のリリースを "/root/istio-new" に展開する"#,
            order: &[0],
        },
        build: |a| Ok(Action::IstioRelease(Release::To, a.path(0))),
    },
    Phrase {
        ty: When,
        what: "the learner's commands (docstring), run by bash in the cell",
        en: Sentence {
            expr: r#"the learner runs:"#,
            example: "the learner runs:",
            order: &[],
        },
        ja: Sentence {
            expr: r#"学習者が次のコマンドを実行する"#,
            example: "学習者が次のコマンドを実行する",
            order: &[],
        },
        build: |a| run(a, Shell::Continued, None),
    },
    Phrase {
        ty: When,
        what: "the learner's commands in a new terminal: nothing of the earlier steps' shell",
        en: Sentence {
            expr: r#"the learner runs in a new shell:"#,
            example: "the learner runs in a new shell:",
            order: &[],
        },
        ja: Sentence {
            expr: r#"学習者が新しいシェルで次のコマンドを実行する"#,
            example: "学習者が新しいシェルで次のコマンドを実行する",
            order: &[],
        },
        build: |a| run(a, Shell::New, None),
    },
    Phrase {
        ty: When,
        what: "the learner's commands, run again (in the same shell, a second apart) until the \
               scenario's checks pass or the time is up, as a learner re-sends a request",
        en: Sentence {
            expr: r#"the learner runs, until the checks pass or {int} seconds are up:"#,
            example: "the learner runs, until the checks pass or 30 seconds are up:",
            order: &[0],
        },
        ja: Sentence {
            expr: r#"学習者がチェックに合格するまで最大 {int} 秒、次のコマンドを繰り返し実行する"#,
            example: "学習者がチェックに合格するまで最大 30 秒、次のコマンドを繰り返し実行する",
            order: &[0],
        },
        build: |a| {
            let seconds = a.int(0)?;
            run(
                a,
                Shell::Continued,
                Some(std::time::Duration::from_secs(seconds)),
            )
        },
    },
    Phrase {
        ty: Then,
        what: "mistake scenario: each listed check (docstring) must fail",
        en: Sentence {
            expr: REJECTION.0,
            example: REJECTION.0,
            order: &[],
        },
        ja: Sentence {
            expr: REJECTION.1,
            example: REJECTION.1,
            order: &[],
        },
        build: |a| Ok(Action::Reject(listed_checks(a.docstring()))),
    },
];
