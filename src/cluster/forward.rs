//! The forward that lets the harness's own kube-rs client reach an API server that listens only
//! inside a cell's network namespace: a listener on the host's loopback whose connections are
//! spliced to the server through sockets made inside the namespace.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

use crate::sandbox::Network;

/// A running forward; stops when dropped.
#[derive(Debug)]
pub struct Forward {
    pub local: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Forward {
    /// Listens on `127.0.0.1:0` and forwards every connection to `target` in `network`.
    pub async fn start(network: Network, target: SocketAddr) -> std::io::Result<Forward> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let local = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let network = network.clone();
                tokio::spawn(async move {
                    let Ok(Ok(std_stream)) =
                        tokio::task::spawn_blocking(move || network.connect(target)).await
                    else {
                        return;
                    };
                    if std_stream.set_nonblocking(true).is_err() {
                        return;
                    }
                    let Ok(mut outbound) = TcpStream::from_std(std_stream) else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
            }
        });
        Ok(Forward { local, task })
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.task.abort();
    }
}
