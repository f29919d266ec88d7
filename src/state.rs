//! The state directory (`LABCHECK_STATE_DIR`, default `/var/tmp/labcheck`) and its layout, in
//! one place: every cell, checkpoint, cluster template and mutant labcheck keeps while it works
//! lives in one of its areas. Also what identifies a cell's environment for what is stored there
//! by content (checkpoints, cluster templates).

use std::path::{Path, PathBuf};

/// The environment variable that moves the state directory.
pub const STATE_DIR_ENV: &str = "LABCHECK_STATE_DIR";

/// `LABCHECK_STATE_DIR` or `/var/tmp/labcheck`: outside every directory the sandbox overlays.
pub fn default_state_dir() -> PathBuf {
    std::env::var_os(STATE_DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/labcheck"))
}

/// Why the state directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot create the state directory {}: {source}", .dir.display())]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the state directory {} belongs to user {owner}, not to you: labcheck would run, keep and \
         remove cells another user made; set LABCHECK_STATE_DIR to a directory of your own",
        .dir.display()
    )]
    NotOwned { dir: PathBuf, owner: u32 },
}

/// Makes the state directory ready: created if missing, only its owner's (mode 0700), and
/// refused when another user owns it (its cells and records would be trusted).
pub fn prepare(dir: &Path) -> Result<(), StateError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let create = |source| StateError::Create {
        dir: dir.to_owned(),
        source,
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(create)?;
    }
    let meta = std::fs::metadata(dir).map_err(create)?;
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(StateError::NotOwned {
            dir: dir.to_owned(),
            owner: meta.uid(),
        });
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(create)?;
    }
    for area in Area::ALL {
        std::fs::create_dir_all(area.dir(dir)).map_err(create)?;
    }
    if me == 0 && register(dir) {
        // Cells that run already (of other runs, other state directories) hide it from now on.
        if let Ok(real) = std::fs::canonicalize(dir) {
            for area in Area::ALL {
                crate::sandbox::hide_in_running_cells(&area.dir(&real));
            }
        }
    }
    Ok(())
}

/// Where every state directory root's labcheck has used is listed (one absolute path a line),
/// so that every cell of every run hides them all, whichever state directory it lives in.
pub const REGISTRY: &str = "/var/lib/labcheck/state-dirs";

/// Lists `dir` in the [`REGISTRY`] (and drops the directories that are gone); whether it was
/// not listed before.
fn register(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let Ok(real) = std::fs::canonicalize(dir) else {
        return false;
    };
    let registry = Path::new(REGISTRY);
    let Some(parent) = registry.parent() else {
        return false;
    };
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent);
    // One registration at a time: each rewrites the list.
    let Ok(lock) = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(parent.join("state-dirs.lock"))
    else {
        return false;
    };
    let Ok(_lock) = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive) else {
        return false;
    };
    let mut listed = registered();
    if listed.contains(&real) {
        return false;
    }
    listed.push(real);
    let text: String = listed
        .iter()
        .map(|d| format!("{}\n", d.display()))
        .collect();
    let aside = parent.join(format!("state-dirs.{}", std::process::id()));
    std::fs::File::options()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&aside)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .and_then(|()| std::fs::rename(&aside, registry))
        .is_ok()
}

/// The state directories the [`REGISTRY`] lists that still exist. A registry another user
/// could have written is not read: it could make cells hide any directory.
fn registered() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let trusted = |p: &Path| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.uid() == me && m.mode() & 0o022 == 0)
    };
    let registry = Path::new(REGISTRY);
    if !(registry.parent().is_some_and(trusted) && trusted(registry)) {
        return Vec::new();
    }
    let text = std::fs::read_to_string(registry).unwrap_or_default();
    text.lines()
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .collect()
}

/// What every cell hides besides its own state directory: the default state directory
/// (`/var/tmp/labcheck`, all of it) and the areas (`cells/`, `checkpoints/`, …) of every
/// state directory labcheck has used — never more of those, so a state directory set to
/// `/root` hides no lab's path.
pub fn hidden_everywhere() -> Vec<PathBuf> {
    // The registry's own directory too: its list names every state directory on the machine.
    let registry = Path::new(REGISTRY).parent().map(Path::to_owned);
    let mut dirs: Vec<PathBuf> = std::iter::once(PathBuf::from("/var/tmp/labcheck"))
        .chain(registry)
        .collect();
    for dir in registered() {
        dirs.extend(Area::ALL.iter().map(|a| a.dir(&dir)));
    }
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    dirs.dedup();
    dirs
}

/// One area of the state directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    /// Cells of runs, kept or running (`<lab>-<label>-<pid>`; a kept one holds `cell.json`).
    Cells,
    /// Cells `labcheck grade` makes to look at a learner's environment.
    Grade,
    /// Mutated copies of a lab while `labcheck mutate` runs them.
    Mutants,
    /// Checkpoints, content-addressed.
    Checkpoints,
    /// Mutant outcomes, content-addressed (`labcheck mutate`'s cache).
    Outcomes,
    /// Bootstrapped etcd data per pair of cluster binaries.
    Templates,
}

impl Area {
    /// The areas whose entries belong to one labcheck process (named `…-<pid>`), which a run
    /// that was killed outright leaves behind.
    pub const PER_RUN: [Area; 3] = [Area::Cells, Area::Grade, Area::Mutants];

    /// Every area.
    pub const ALL: [Area; 5] = [
        Area::Cells,
        Area::Grade,
        Area::Mutants,
        Area::Checkpoints,
        Area::Templates,
    ];

    fn name(self) -> &'static str {
        match self {
            Area::Cells => "cells",
            Area::Grade => "grade",
            Area::Mutants => "mutants",
            Area::Checkpoints => "checkpoints",
            Area::Outcomes => "mutant-outcomes",
            Area::Templates => "templates",
        }
    }

    /// The area's directory under `state_dir`.
    pub fn dir(self, state_dir: &Path) -> PathBuf {
        state_dir.join(self.name())
    }
}

/// What identifies a cell's environment: labcheck itself, the matrix label and each binary the
/// cell runs (its path, size and modification time: a rebuilt tool is another environment).
pub fn identity(label: &str, binaries: &[&Path]) -> String {
    let mut out = format!("label={label}\n");
    let me = std::env::current_exe().unwrap_or_default();
    for path in std::iter::once(me.as_path()).chain(binaries.iter().copied()) {
        let stamp = std::fs::metadata(path)
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                format!("{} {}.{}", m.len(), m.mtime(), m.mtime_nsec())
            })
            .unwrap_or_else(|_| "missing".to_owned());
        out.push_str(&format!("{} {stamp}\n", path.display()));
    }
    out
}
