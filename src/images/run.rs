//! Running the external commands image builds use (gcc, apt-get, dpkg-deb, mmdebstrap, tar):
//! each in its own process group with a timeout, its output captured, and a failure reported
//! with the image, the command line and the tail of its stderr.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::ImageError;

/// How long a stopped command gets to clean up (mmdebstrap unmounts its chroot) after SIGTERM.
const GRACE: Duration = Duration::from_secs(15);

/// Lines of stderr an error quotes.
const TAIL_LINES: usize = 25;

/// The command line as a shell would show it.
pub fn describe(cmd: &Command) -> String {
    let std = cmd.as_std();
    std::iter::once(std.get_program())
        .chain(std.get_args())
        .map(|arg| {
            let arg = arg.to_string_lossy();
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "'\"$;&|".contains(c))
            {
                quote(&arg)
            } else {
                arg.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `s` single-quoted for sh.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The last lines of `text`.
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// Runs `cmd` to completion within `timeout` and returns its stdout; a non-zero exit is an
/// error. On timeout the whole process group gets SIGTERM, then SIGKILL after a grace period.
pub async fn run(image: &str, mut cmd: Command, timeout: Duration) -> Result<String, ImageError> {
    let command = describe(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = cmd.spawn().map_err(|source| ImageError::Spawn {
        image: image.to_string(),
        command: command.clone(),
        source,
    })?;
    let stdout = tokio::spawn(read_all(child.stdout.take()));
    let stderr = tokio::spawn(read_all(child.stderr.take()));
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status.map_err(|source| ImageError::Spawn {
            image: image.to_string(),
            command: command.clone(),
            source,
        })?,
        Err(_) => {
            stop(&mut child).await;
            return Err(ImageError::Timeout {
                image: image.to_string(),
                command,
                timeout,
            });
        }
    };
    let stdout = stdout.await.unwrap_or_default();
    let stderr = stderr.await.unwrap_or_default();
    if !status.success() {
        return Err(ImageError::Command {
            image: image.to_string(),
            command,
            status: describe_status(status),
            stderr_tail: tail(&stderr),
        });
    }
    Ok(stdout)
}

async fn read_all(stream: Option<impl AsyncRead + Unpin>) -> String {
    let mut bytes = Vec::new();
    if let Some(mut stream) = stream {
        // A read error leaves what was read so far, which is all an error message needs.
        let _ = stream.read_to_end(&mut bytes).await;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn describe_status(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("was killed ({status})"),
    }
}

/// SIGTERM to the child's process group (it is its leader), SIGKILL if it is still there after
/// [`GRACE`].
async fn stop(child: &mut tokio::process::Child) {
    crate::sandbox::unix::stop_group(child, GRACE).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn failures_name_the_command_and_quote_stderr() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo first >&2; echo last >&2; exit 3"]);
        let err = run("img", cmd, Duration::from_secs(10))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("img"), "{err}");
        assert!(err.contains("sh -c 'echo first"), "{err}");
        assert!(err.contains("exited with status 3"), "{err}");
        assert!(err.contains("first\nlast"), "{err}");
    }

    #[tokio::test]
    async fn a_command_over_its_time_is_stopped() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let started = std::time::Instant::now();
        let result = run("img", cmd, Duration::from_millis(200)).await;
        assert!(matches!(result, Err(ImageError::Timeout { .. })));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(tail("a\nb"), "a\nb");
    }
}
