//! Signals: SIGINT, SIGTERM and SIGHUP stop a run (or a tool build) at once; what was started
//! is ended by its guards, and the exit code is 128 + the signal.

/// Runs `work` unless SIGINT, SIGTERM or SIGHUP comes first: then `work` is dropped (what it
/// started is killed by its guards) and the signal is returned.
pub async fn interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T, i32> {
    tokio::select! {
        done = work => Ok(done),
        signal = shutdown_signal() => Err(signal),
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP; returns which.
pub async fn shutdown_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => libc::SIGINT,
        _ = term.recv() => libc::SIGTERM,
        _ = hup.recv() => libc::SIGHUP,
    }
}
