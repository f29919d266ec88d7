//! A Pod's processes that exit are started again, as a kubelet restarts the containers of a Pod
//! whose `restartPolicy` is `Always` (a Deployment's): after 10 s, doubling at each exit up to
//! 5 minutes, back to 10 s for a container that ran 10 minutes. Each exit and restart is a line
//! in `sidecars.log`; the Pod's status does not count them (kwok writes it).

use std::time::{Duration, Instant};

use super::process::{spawn_agent, spawn_app};
use super::{PROXY_CONTAINER, Proxy, Watch, app, app_log, note, proxy_log};

/// The first wait before a restart, and the longest.
const FIRST: Duration = Duration::from_secs(10);
const LONGEST: Duration = Duration::from_secs(300);
/// How long a container runs before its next exit waits [`FIRST`] again.
const RESET: Duration = Duration::from_secs(600);

/// One container's exits.
#[derive(Debug)]
pub(super) struct Backoff {
    exits: u32,
    /// When it starts again, after an exit.
    due: Option<Instant>,
    started: Instant,
}

impl Backoff {
    pub(super) fn new() -> Backoff {
        Backoff {
            exits: 0,
            due: None,
            started: Instant::now(),
        }
    }
}

/// The wait before the restart that follows exit number `exits` (1 for the first).
pub(super) fn delay(exits: u32) -> Duration {
    let doubled = FIRST.saturating_mul(1u32 << exits.saturating_sub(1).min(8));
    doubled.min(LONGEST)
}

/// Notes the Pod's processes that exited and starts again those whose wait is over.
pub(super) fn check(w: &Watch, proxy: &mut Proxy) {
    let pod = proxy.pod.clone();
    let name = format!("{}/{}", proxy.namespace, proxy.name);
    let pgid = proxy.agent_pgid;
    let mut new_pgid = None;
    if let (Some(child), Some(spec)) = (proxy.child.as_mut(), proxy.agent.as_ref()) {
        let b = proxy
            .backoff
            .entry(PROXY_CONTAINER.to_owned())
            .or_insert_with(Backoff::new);
        // Its Envoy goes with it at once, as the whole container would.
        let end_envoy = || {
            if let Some(pgid) = pgid {
                crate::sandbox::unix::kill_group(pgid, libc::SIGKILL);
            }
        };
        if exited(child, b, w, &name, PROXY_CONTAINER, end_envoy) {
            let started = super::process::append_log(w, &proxy_log(&proxy.namespace, &proxy.name))
                .and_then(|log| {
                    spawn_agent(
                        w,
                        &proxy.net.commands,
                        &proxy.workdir,
                        spec.args.clone(),
                        spec.vars.clone(),
                        spec.group,
                        log,
                    )
                });
            new_pgid = started.as_ref().ok().and_then(|c| c.id()).map(|p| p as i32);
            restarted(started, child, b, w, &name, PROXY_CONTAINER);
        }
    }
    if new_pgid.is_some() {
        proxy.agent_pgid = new_pgid;
    }
    for (container, child) in app::containers(&pod).into_iter().zip(proxy.apps.iter_mut()) {
        let b = proxy
            .backoff
            .entry(container.name.clone())
            .or_insert_with(Backoff::new);
        if exited(child, b, w, &name, &container.name, || {}) {
            let started = super::process::append_log(
                w,
                &app_log(&proxy.namespace, &proxy.name, &container.name),
            )
            .and_then(|log| {
                spawn_app(w, &proxy.net.commands, &pod, container, &proxy.workdir, log)
            });
            restarted(started, child, b, w, &name, &container.name);
        }
    }
}

/// Whether `child` has exited and its wait is over (at a new exit: `on_exit`, and a note of it
/// and of the wait).
fn exited(
    child: &mut tokio::process::Child,
    b: &mut Backoff,
    w: &Watch,
    pod: &str,
    container: &str,
    on_exit: impl FnOnce(),
) -> bool {
    let Ok(Some(status)) = child.try_wait() else {
        return false;
    };
    let due = match b.due {
        Some(due) => due,
        None => {
            on_exit();
            if b.started.elapsed() >= RESET {
                b.exits = 0;
            }
            b.exits += 1;
            let wait = delay(b.exits);
            note(
                &w.dir,
                &format!(
                    "container {container} of the Pod {pod} exited ({status}); it starts again in {} s",
                    wait.as_secs()
                ),
            );
            let due = Instant::now() + wait;
            b.due = Some(due);
            due
        }
    };
    Instant::now() >= due
}

/// Puts the restarted process in place, or notes why it did not start (and tries again later).
fn restarted(
    started: Result<tokio::process::Child, String>,
    child: &mut tokio::process::Child,
    b: &mut Backoff,
    w: &Watch,
    pod: &str,
    container: &str,
) {
    match started {
        Ok(new) => {
            *child = new;
            b.due = None;
            b.started = Instant::now();
            note(
                &w.dir,
                &format!("container {container} of the Pod {pod} starts again"),
            );
        }
        Err(e) => {
            b.exits += 1;
            b.due = Some(Instant::now() + delay(b.exits));
            note(
                &w.dir,
                &format!("container {container} of the Pod {pod} cannot start again: {e}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_ten_seconds_up_to_five_minutes() {
        let secs: Vec<u64> = (1..=7).map(|n| delay(n).as_secs()).collect();
        assert_eq!(secs, [10, 20, 40, 80, 160, 300, 300]);
        assert_eq!(delay(40), LONGEST);
    }
}
