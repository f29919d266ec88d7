//! The learner's terminal session: what a shell keeps from one command to the next — shell
//! variables (exported or not), functions, aliases and the working directory — carried from
//! each step's commands to the next step's, as a learner's terminal carries them.
//!
//! The session lives in the cell, at [`SESSION`]: bash writes it when the learner's commands
//! end (an `EXIT` trap; only what differs from the cell's own environment) and reads it before
//! the next step's commands. Being a file of the cell, it is in every checkpoint, so `run --step
//! N`, mistakes and mutants from a checkpoint see the same session. Not kept: background jobs
//! (they end with their command), shell options (`set -e`, `shopt`), traps, the directory stack
//! and history; a learner's own `trap … EXIT` replaces the one that saves the session.

use std::time::Duration;

use super::Sandbox;
use crate::model::Transcript;

/// Where the session is kept in the cell.
pub const SESSION: &str = "/var/lib/labcheck-shell/session.sh";

/// Whether a step's commands continue the learner's session or start a new shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// The session of the steps before (none before the first).
    Continued,
    /// A new terminal: nothing of the steps before; what it leaves is the session from then on.
    New,
}

/// Bash's variables that belong to the shell itself, never to a session.
const OWN_VARIABLES: &str = "__labcheck_*|BASH|BASH_*|BASHOPTS|BASHPID|COLUMNS|COMP_*|DIRSTACK|\
EPOCHREALTIME|EPOCHSECONDS|EUID|FUNCNAME|GROUPS|HISTCMD|HOSTNAME|HOSTTYPE|LINENO|LINES|MACHTYPE|\
OLDPWD|OPTERR|OPTIND|OSTYPE|PIPESTATUS|PPID|PWD|RANDOM|SECONDS|SHELLOPTS|SHLVL|SRANDOM|UID|_";

/// The script bash runs: notes the cell's environment, restores the session (unless `shell` is
/// [`Shell::New`]), saves it on exit, then sources the learner's script from `learner` (a
/// `/dev/fd/N` path), so that its line numbers, `exit` and exit code are the script's own.
fn wrapper(learner: &str, shell: Shell) -> String {
    let restore = match shell {
        Shell::Continued => format!("if [ -r {SESSION} ]; then . {SESSION}; fi\n"),
        Shell::New => String::new(),
    };
    format!(
        r#"__labcheck_session={SESSION}
declare -A __labcheck_before=()
mapfile -t __labcheck_names < <(compgen -v)
for __labcheck_n in "${{__labcheck_names[@]}}"; do
  declare -n __labcheck_r="$__labcheck_n"
  __labcheck_before[$__labcheck_n]="${{__labcheck_r[@]@A}}"
  unset -n __labcheck_r
done
__labcheck_start=$PWD
shopt -s expand_aliases
{restore}__labcheck_save() {{
  local __labcheck_n __labcheck_d __labcheck_names __labcheck_functions
  mapfile -t __labcheck_names < <(compgen -v)
  mapfile -t __labcheck_functions < <(compgen -A function)
  [ -d "${{__labcheck_session%/*}}" ] || mkdir -p "${{__labcheck_session%/*}}" 2>/dev/null
  {{
    for __labcheck_n in "${{__labcheck_names[@]}}"; do
      case $__labcheck_n in {OWN_VARIABLES}) continue ;; esac
      declare -n __labcheck_r="$__labcheck_n"
      __labcheck_d="${{__labcheck_r[@]@A}}"
      unset -n __labcheck_r
      [ "${{__labcheck_before[$__labcheck_n]-}}" = "$__labcheck_d" ] || printf '%s\n' "$__labcheck_d"
    done
    for __labcheck_n in "${{!__labcheck_before[@]}}"; do
      case $__labcheck_n in {OWN_VARIABLES}) continue ;; esac
      declare -p "$__labcheck_n" >/dev/null 2>&1 || printf 'unset %s\n' "$__labcheck_n"
    done
    for __labcheck_n in "${{__labcheck_functions[@]}}"; do
      case $__labcheck_n in __labcheck_*) continue ;; esac
      declare -f "$__labcheck_n"
    done
    alias -p
    [ "$PWD" = "$__labcheck_start" ] || printf 'cd -- %q 2>/dev/null || true\n' "$PWD"
  }} > "$__labcheck_session.new" 2>/dev/null && mv -f "$__labcheck_session.new" "$__labcheck_session" 2>/dev/null
}}
trap __labcheck_save EXIT
. {learner}
"#
    )
}

/// Runs the learner's `script` in the cell as the next command of their session (or of a new
/// shell). The transcript names the learner's script, not the wrapper.
pub async fn run_learner(
    sandbox: &Sandbox,
    script: &str,
    shell: Shell,
    timeout: Duration,
) -> std::io::Result<Transcript> {
    use super::exec::{fill, memfd, run_with};
    use std::os::fd::AsRawFd;
    let (mut main, mut learner) = (memfd()?, memfd()?);
    let (m, l) = (main.as_raw_fd(), learner.as_raw_fd());
    // The script's first line first closes both files (bash has read them): nothing the
    // learner runs inherits them. Its line numbers stay the script's own.
    fill(&mut learner, &format!("exec {m}<&- {l}<&-; {script}"))?;
    fill(&mut main, &wrapper(&format!("/dev/fd/{l}"), shell))?;
    run_with(sandbox, main, script, timeout, &[&learner]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapper, run by the host's bash over a step's script twice in a row, with the
    /// session file moved to a scratch path.
    fn step(session: &std::path::Path, script: &str, shell: Shell) -> std::process::Output {
        let dir = tempfile::tempdir().expect("tempdir");
        let learner = dir.path().join("learner.sh");
        std::fs::write(&learner, script).expect("write");
        let wrapper =
            wrapper(&learner.to_string_lossy(), shell).replace(SESSION, &session.to_string_lossy());
        std::process::Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &wrapper])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("KEEP", "harness")
            .current_dir(dir.path())
            .output()
            .expect("bash")
    }

    #[test]
    fn variables_functions_aliases_and_the_directory_carry_to_the_next_step() {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = dir.path().join("s/session.sh");
        let first = step(
            &session,
            "export INGRESS='10.0.0.1 x'\nPLAIN=$'two\\nlines'\ndeclare -a LIST=(a 'b c')\n\
             greet() { echo \"hi $1\"; }\nalias k=echo\nunset KEEP\ncd /tmp\nexit 3\n",
            Shell::Continued,
        );
        assert_eq!(first.status.code(), Some(3), "the script's own exit code");
        let second = step(
            &session,
            "echo \"$INGRESS|$PLAIN|${LIST[1]}|${KEEP-unset}|$(pwd)\"\n\
             greet you\nk aliased\nbash -c 'echo child:$INGRESS'\n",
            Shell::Continued,
        );
        let out = String::from_utf8_lossy(&second.stdout);
        assert_eq!(
            out,
            "10.0.0.1 x|two\nlines|b c|unset|/tmp\nhi you\naliased\nchild:10.0.0.1 x\n",
            "stderr: {}",
            String::from_utf8_lossy(&second.stderr)
        );
        assert!(second.status.success());
        let fresh = step(&session, "echo \"${INGRESS-none}\"\n", Shell::New);
        assert_eq!(String::from_utf8_lossy(&fresh.stdout), "none\n");
    }

    #[test]
    fn errors_name_the_learners_script_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = step(
            &dir.path().join("session.sh"),
            "true\nno-such-command-here\n",
            Shell::Continued,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("learner.sh: line 2: no-such-command-here: command not found"),
            "{err}"
        );
        assert_eq!(out.status.code(), Some(127));
    }
}
