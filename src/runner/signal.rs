//! Signals: SIGINT, SIGTERM and SIGHUP stop a run (or a tool build) at once; what was started
//! is ended by its guards, and the exit code is 128 + the signal. [`listen`] catches them from
//! the process's start, so one that comes before the run waits for it (while tools resolve, a
//! lab is planned or checkpoints are checked) is kept for it, not lost.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signal caught and not yet taken (0: none), and who waits for one.
struct Caught {
    signal: AtomicI32,
    notify: tokio::sync::Notify,
}

static CAUGHT: OnceLock<Caught> = OnceLock::new();

/// Catches SIGINT, SIGTERM and SIGHUP from now on, for the life of the process (call it once,
/// early, inside the runtime). Without it, [`shutdown_signal`] sees only the signals that come
/// while it waits.
pub fn listen() {
    let Ok(streams) = streams() else {
        return;
    };
    let caught = CAUGHT.get_or_init(|| Caught {
        signal: AtomicI32::new(0),
        notify: tokio::sync::Notify::new(),
    });
    tokio::spawn(async move {
        let (mut int, mut term, mut hup) = streams;
        loop {
            let signal = tokio::select! {
                _ = int.recv() => libc::SIGINT,
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
            };
            caught.signal.store(signal, Ordering::SeqCst);
            caught.notify.notify_waiters();
        }
    });
}

fn streams() -> std::io::Result<(Signal, Signal, Signal)> {
    Ok((
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
        signal(SignalKind::hangup())?,
    ))
}

/// Runs `work` unless SIGINT, SIGTERM or SIGHUP comes first: then `work` is dropped (what it
/// started is killed by its guards) and the signal is returned.
pub async fn interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T, i32> {
    tokio::select! {
        done = work => Ok(done),
        signal = shutdown_signal() => Err(signal),
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP and returns which; one caught since the last call (with
/// [`listen`]) is returned at once, and taken.
pub async fn shutdown_signal() -> i32 {
    let Some(caught) = CAUGHT.get() else {
        let Ok((mut int, mut term, mut hup)) = streams() else {
            return std::future::pending().await;
        };
        return tokio::select! {
            _ = int.recv() => libc::SIGINT,
            _ = term.recv() => libc::SIGTERM,
            _ = hup.recv() => libc::SIGHUP,
        };
    };
    loop {
        let notified = caught.notify.notified();
        tokio::pin!(notified);
        // Registered before the check: a signal caught in between still wakes it.
        notified.as_mut().enable();
        let signal = caught.signal.swap(0, Ordering::SeqCst);
        if signal != 0 {
            return signal;
        }
        notified.await;
    }
}
