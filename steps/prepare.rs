//! The Background's preparations, carried out in a cell: a lab directory (created, and the first
//! one is where commands start), a fixture copied from the repository, and the cell's Istio
//! version unpacked as a release. Each is done once per cell, however many scenarios repeat the
//! Background.

use std::path::Path;

use super::action::Release;
use crate::cell::Cell;
use crate::model::Lang;
use crate::model::StepFault;
use crate::sandbox;

/// A lab directory: it exists (empty) in the sandbox, and commands start in the first one.
pub fn lab_directory(cell: &Cell, lang: Lang, dir: &Path) -> Result<(), StepFault> {
    cell.sandbox
        .contains(dir)
        .map_err(|e| step(e.to_string()))?;
    if cell.first_time(&format!("dir:{}", dir.display())) {
        let d = dir.to_owned();
        cell.sandbox
            .inside(move || std::fs::create_dir_all(&d))
            .map_err(|e| {
                step(format!(
                    "{} {}: {e}",
                    lang.pick("cannot create", "作成できない:"),
                    dir.display()
                ))
            })?;
        if cell.first_time("workdir") {
            cell.sandbox.set_workdir(dir);
        }
    }
    Ok(())
}

/// A fixture: a copy of the repository's `src` appears at `dst`.
pub fn fixture(cell: &Cell, lang: Lang, src: &Path, dst: &Path) -> Result<(), StepFault> {
    cell.sandbox
        .contains(dst)
        .map_err(|e| step(e.to_string()))?;
    if !cell.first_time(&format!("fixture:{}", dst.display())) {
        return Ok(());
    }
    let from = cell.fixture_source(src).ok_or_else(|| {
        step(format!(
            "{} {} ({} {})",
            lang.pick("fixture not found:", "フィクスチャが見つからない:"),
            src.display(),
            lang.pick("searched from", "探した場所:"),
            cell.lab.path.display()
        ))
    })?;
    // Read on the host side: the repository may lie where the cell sees something else (/tmp).
    let entries = sandbox::tree::read(&from).map_err(|e| {
        step(format!(
            "{} {}: {e}",
            lang.pick("cannot read fixture", "フィクスチャを読めない:"),
            from.display()
        ))
    })?;
    let to = dst.to_owned();
    cell.sandbox
        .inside(move || sandbox::tree::write(&entries, &to))
        .map_err(|e| {
            step(format!(
                "{} {}: {e}",
                lang.pick("cannot place fixture at", "フィクスチャを置けない:"),
                dst.display()
            ))
        })
}

/// One of the cell's Istio versions at `dst` as a learner's unpacked release has it:
/// `samples/` and `manifests/` of its module (files 0644, executables 0755, as the release
/// tarball has them) and `bin/istioctl`, a symlink to that version's istioctl.
pub fn istio_release(cell: &Cell, lang: Lang, which: Release, dst: &Path) -> Result<(), StepFault> {
    cell.sandbox
        .contains(dst)
        .map_err(|e| step(e.to_string()))?;
    // A learner's environment being graded has the release the learner unpacked.
    if cell.grading || !cell.first_time(&format!("release:{}", dst.display())) {
        return Ok(());
    }
    let upgrade = cell.istio_releases.len() > 1;
    let release = match (which, upgrade) {
        (Release::Cell, false) | (Release::From, true) => cell.istio_releases.first(),
        (Release::To, true) => cell.istio_releases.get(1),
        (Release::Cell, true) | (Release::From | Release::To, false) => {
            return Err(step(
                lang.pick(
                    "an upgrade lab (@upgrade) unpacks the release to upgrade from and the one \
                     to upgrade to; a lab of one Istio version unpacks the cell's release",
                    "アップグレードのラボ(@アップグレード)はアップグレード元とアップグレード先の\
                     リリースを展開し、Istio のバージョンが 1 つのラボはセルのリリースを展開する",
                )
                .to_owned(),
            ));
        }
    };
    let release = release.and_then(|r| Some((r.dir.clone()?, r.istioctl.clone())));
    let (from, name) = release.ok_or_else(|| {
        step(
            lang.pick(
                "no Istio release for this cell: the lab is not tagged @istio or @mesh, or its \
                 Istio version's istioctl was downloaded alone (samples/ and manifests/ come \
                 with a version built from its module: an [[istio]] entry with `module` in \
                 istio-versions.toml)",
                "このセルには Istio のリリースがない: ラボに @istio か @メッシュ のタグがないか、\
                 その Istio バージョンの istioctl を単体でダウンロードした(samples/ と \
                 manifests/ は、モジュールからビルドするバージョンにだけある: \
                 istio-versions.toml の [[istio]] に module を書く)",
            )
            .to_owned(),
        )
    })?;
    let mut entries = Vec::new();
    for dir in crate::toolchain::ISTIO_RELEASE {
        let tree = sandbox::tree::read(&from.join(dir)).map_err(|e| {
            step(format!(
                "{} {}: {e}",
                lang.pick("cannot read Istio's", "Istio の次を読めない:"),
                from.join(dir).display()
            ))
        })?;
        entries.extend(tree.into_iter().map(|e| release_entry(e, dir)));
    }
    let to = dst.to_owned();
    let istioctl = format!("{}/bin/{name}", sandbox::SHARE);
    cell.sandbox
        .inside(move || {
            sandbox::tree::write(&entries, &to)?;
            std::fs::create_dir_all(to.join("bin"))?;
            std::os::unix::fs::symlink(istioctl, to.join("bin/istioctl"))
        })
        .map_err(|e| {
            step(format!(
                "{} {}: {e}",
                lang.pick(
                    "cannot unpack Istio's release at",
                    "Istio のリリースを展開できない:"
                ),
                dst.display()
            ))
        })
}

/// An entry of a module's directory `dir`, under `dir/` and with a release's file modes.
fn release_entry(entry: sandbox::tree::Entry, dir: &str) -> sandbox::tree::Entry {
    use sandbox::tree::Entry;
    match entry {
        Entry::Dir(path) => Entry::Dir(Path::new(dir).join(path)),
        Entry::File { path, bytes, mode } => Entry::File {
            path: Path::new(dir).join(path),
            bytes,
            mode: if mode & 0o111 != 0 { 0o755 } else { 0o644 },
        },
        Entry::Symlink { path, target } => Entry::Symlink {
            path: Path::new(dir).join(path),
            target,
        },
    }
}

/// A preparation that cannot be done, in the lab's language.
fn step(text: String) -> StepFault {
    StepFault::Step { text }
}
