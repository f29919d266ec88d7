//! An exclusive lock on a file, shared by labcheck processes (two runs installing one tool or
//! building one image do it once): taken by polling from async code, so that waiting holds no
//! runtime thread, and said once while another process holds it.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// The lock file could not be opened, or locking failed otherwise.
    Io {
        action: &'static str,
        source: io::Error,
    },
    /// Another process held it for longer than the wait allowed.
    Timeout,
}

/// Takes the exclusive lock of `path` (made when missing), waiting up to `timeout`; while it
/// waits, says once that another labcheck is `doing` (e.g. "building nginx"). Released when the
/// returned value drops.
pub async fn exclusive(
    path: &Path,
    doing: &str,
    timeout: Duration,
) -> Result<Flock<File>, LockError> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| LockError::Io {
            action: "cannot open the lock",
            source,
        })?;
    let started = Instant::now();
    let mut announced = false;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((f, errno)) if errno == Errno::EWOULDBLOCK || errno == Errno::EINTR => {
                file = f;
                if !announced {
                    crate::errln!(
                        "labcheck: waiting for another labcheck to finish {doing} (lock {})",
                        path.display()
                    );
                    announced = true;
                }
                if started.elapsed() > timeout {
                    return Err(LockError::Timeout);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err((_, errno)) => {
                return Err(LockError::Io {
                    action: "cannot lock",
                    source: io::Error::from(errno),
                });
            }
        }
    }
}
