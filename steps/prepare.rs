//! The Background's preparations, carried out in a cell: a lab directory (created, and the first
//! one is where commands start) and a fixture copied from the repository. Each is done once per
//! cell, however many scenarios repeat the Background.

use std::path::Path;

use super::world::StepFailure;
use crate::cell::Cell;
use crate::model::Lang;
use crate::sandbox;

/// A lab directory: it exists (empty) in the sandbox, and commands start in the first one.
pub fn lab_directory(cell: &Cell, lang: Lang, dir: &Path) -> Result<(), StepFailure> {
    cell.sandbox
        .contains(dir)
        .map_err(|e| StepFailure::Step(e.to_string()))?;
    if cell.first_time(&format!("dir:{}", dir.display())) {
        let d = dir.to_owned();
        cell.sandbox
            .inside(move || std::fs::create_dir_all(&d))
            .map_err(|e| {
                StepFailure::Step(format!(
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
pub fn fixture(cell: &Cell, lang: Lang, src: &Path, dst: &Path) -> Result<(), StepFailure> {
    cell.sandbox
        .contains(dst)
        .map_err(|e| StepFailure::Step(e.to_string()))?;
    if !cell.first_time(&format!("fixture:{}", dst.display())) {
        return Ok(());
    }
    let from = cell.fixture_source(src).ok_or_else(|| {
        StepFailure::Step(format!(
            "{} {} ({} {})",
            lang.pick("fixture not found:", "フィクスチャが見つからない:"),
            src.display(),
            lang.pick("searched from", "探した場所:"),
            cell.lab.path.display()
        ))
    })?;
    // Read on the host side: the repository may lie where the cell sees something else (/tmp).
    let entries = sandbox::tree::read(&from).map_err(|e| {
        StepFailure::Step(format!(
            "{} {}: {e}",
            lang.pick("cannot read fixture", "フィクスチャを読めない:"),
            from.display()
        ))
    })?;
    let to = dst.to_owned();
    cell.sandbox
        .inside(move || sandbox::tree::write(&entries, &to))
        .map_err(|e| {
            StepFailure::Step(format!(
                "{} {}: {e}",
                lang.pick("cannot place fixture at", "フィクスチャを置けない:"),
                dst.display()
            ))
        })
}
