//! Waiting for a part of a cluster to answer: the one poll loop behind every wait of the
//! backends (an API server's readiness, containerd, a node's Ready, a registry, a kind cluster's
//! accounts and DNS). Each caller says how often to ask and turns the last answer into its error.

use std::future::Future;
use std::time::{Duration, Instant};

/// Asks `probe` every `every` until it answers `Ok`; after `timeout`, its last answer.
pub async fn until<T, F, Fut>(timeout: Duration, every: Duration, mut probe: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let last = match probe().await {
            Ok(value) => return Ok(value),
            Err(why) => why,
        };
        if started.elapsed() >= timeout {
            return Err(last);
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn asks_until_answered_and_says_the_last_answer_when_never() {
        let mut asked = 0;
        let answer = until(Duration::from_secs(5), Duration::from_millis(1), || {
            asked += 1;
            let now = asked;
            async move {
                if now < 3 {
                    Err(format!("no {now}"))
                } else {
                    Ok(now)
                }
            }
        })
        .await;
        assert_eq!(answer, Ok(3));
        let never = until(
            Duration::from_millis(30),
            Duration::from_millis(5),
            || async { Err::<(), _>("still no".to_owned()) },
        )
        .await;
        assert_eq!(never, Err("still no".to_owned()));
    }
}
