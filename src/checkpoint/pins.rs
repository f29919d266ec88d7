//! Which runs use which checkpoints: a run that will restore a checkpoint (or wrote one its other
//! cells wait for) pins it — an empty file `<checkpoints>/.pins/<key>-<pid>` — and no run's
//! pruning removes a checkpoint a live run has pinned. Pins of a process that is gone count for
//! nothing and are reaped. This is how runs sharing one state directory never take a checkpoint
//! from under each other.

use std::path::{Path, PathBuf};

use super::Key;

fn dir(root: &Path) -> PathBuf {
    root.join(".pins")
}

fn name(key: &Key, pid: u32) -> String {
    format!("{key}-{pid}")
}

/// Pins `key` for this process.
pub fn pin(root: &Path, key: &Key) -> std::io::Result<()> {
    let dir = dir(root);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(name(key, std::process::id())), b"")
}

/// Unpins `key` for this process.
pub fn unpin(root: &Path, key: &Key) {
    let _ = std::fs::remove_file(dir(root).join(name(key, std::process::id())));
}

/// Removes this process's pins (its run ended).
pub fn release(root: &Path) {
    let me = format!("-{}", std::process::id());
    for e in std::fs::read_dir(dir(root)).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().ends_with(&me) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Removes the pins of processes that are gone.
pub fn release_gone(root: &Path) {
    for e in std::fs::read_dir(dir(root)).into_iter().flatten().flatten() {
        if crate::sandbox::left_by_a_gone_run(&e.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a live process (this one included) has pinned `key`.
pub fn pinned(root: &Path, key: &str) -> bool {
    let prefix = format!("{key}-");
    std::fs::read_dir(dir(root))
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(&prefix)
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| pid == std::process::id() || crate::sandbox::runs(pid as i32))
        })
}
