//! The subcommands on kept cells: `ps` lists them, `shell` opens the learner's shell in one,
//! `down` tears one or all down, and `clean` also removes checkpoints, templates and kept mutant
//! outcomes.

use crate::kept;
use crate::runner;

pub fn ps() -> i32 {
    let cells = kept::list(&runner::default_state_dir());
    if cells.is_empty() {
        crate::outln!("no kept cells");
        return 0;
    }
    crate::outln!("{:<40} {:<8} {:<8} LAB", "CELL", "STATE", "CLUSTER");
    for c in cells {
        let state = if c.alive() { "running" } else { "stopped" };
        let cluster = if c.has_cluster { "local" } else { "-" };
        crate::outln!("{:<40} {state:<8} {cluster:<8} {}", c.name, c.lab.display());
    }
    0
}

pub async fn shell(name: &str) -> i32 {
    let cell = match kept::find(&runner::default_state_dir(), name)
        .and_then(|c| c.sandbox().map(|s| (c, s)))
    {
        Ok(found) => found,
        Err(e) => {
            crate::errln!("labcheck shell: {e}");
            return 2;
        }
    };
    let (kept, sandbox) = cell;
    crate::errln!(
        "labcheck: shell in {} ({}); exit to leave, the cell keeps running",
        kept.name,
        kept.id
    );
    let mut cmd = sandbox.interactive_command("bash");
    // The learner's session (variables, functions, aliases, directory) of the cell's last step.
    cmd.args(["--rcfile", crate::sandbox::SESSION])
        .env("PS1", format!("[{}] \\w# ", kept.name));
    match cmd.status().await {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            crate::errln!("labcheck shell: cannot start bash in {}: {e}", kept.name);
            2
        }
    }
}

/// Tears down one kept cell, or every one (`--all`): says which it removed, how many, and which
/// it left because another user's labcheck made them (unless `everyone`).
pub async fn down(name: Option<&str>, all: bool, everyone: bool) -> i32 {
    let state = runner::default_state_dir();
    let cells = if all {
        kept::list(&state)
    } else {
        match kept::find(&state, name.unwrap_or_default()) {
            Ok(c) => vec![c],
            Err(e) => {
                crate::errln!("labcheck down: {e}");
                return 2;
            }
        }
    };
    let me = nix::unistd::geteuid().as_raw();
    let mut code = 0;
    let (mut removed, mut skipped) = (Vec::new(), Vec::new());
    for c in cells {
        if let Some(owner) = c.owner().filter(|o| *o != me && !everyone) {
            crate::errln!(
                "labcheck down: {}: left, it belongs to user {owner} (--everyone removes it)",
                c.name
            );
            skipped.push(c.name);
            if !all {
                code = 2;
            }
            continue;
        }
        match c.down().await {
            Ok(()) => {
                crate::outln!("down: {}", c.name);
                removed.push(c.name);
            }
            Err(e) => {
                crate::errln!("labcheck down: {}: {e}", c.name);
                code = 2;
            }
        }
    }
    if all {
        crate::outln!(
            "removed {} kept cell(s){}{}",
            removed.len(),
            if removed.is_empty() {
                String::new()
            } else {
                format!(": {}", removed.join(", "))
            },
            if skipped.is_empty() {
                String::new()
            } else {
                format!(
                    "; left {} of other users: {}",
                    skipped.len(),
                    skipped.join(", ")
                )
            }
        );
    }
    code
}

/// `labcheck clean`: every kept cell down, then the checkpoints, the templates and the kept
/// mutant outcomes removed.
pub async fn clean(everyone: bool) -> i32 {
    let code = down(None, true, everyone).await;
    let state = runner::default_state_dir();
    let store = crate::checkpoint::Store::new(&state);
    crate::outln!("removed {} checkpoint(s)", store.clear());
    let _ = std::fs::remove_dir_all(crate::state::Area::Templates.dir(&state));
    let outcomes = crate::state::Area::Outcomes.dir(&state);
    let kept = std::fs::read_dir(&outcomes).map_or(0, |d| d.count());
    let _ = std::fs::remove_dir_all(&outcomes);
    crate::outln!("removed {kept} kept mutant outcome(s)");
    code
}
