//! The Docker engine the kind backend drives, through its client (`docker`): whether an engine
//! answers, a cell's own network (made before kind starts the node on it, removed after kind
//! deletes the cluster), and a node image loaded into the engine once.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::ClusterError;

/// How long a question to the engine may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(30);
/// How long loading a node image may take (a few hundred MB from the cache).
const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the client with `args`; its stdout, or what it said on failure.
async fn docker(
    client: &Path,
    args: &[&str],
    stdin: Option<&Path>,
    timeout: Duration,
) -> Result<String, ClusterError> {
    let what = format!("{} {}", client.display(), args.join(" "));
    let mut command = tokio::process::Command::new(client);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match stdin {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|source| ClusterError::Spawn {
                what: format!("{what} < {}", path.display()),
                source,
            })?;
            command.stdin(file);
        }
        None => {
            command.stdin(Stdio::null());
        }
    }
    let output = tokio::time::timeout(timeout, command.output())
        .await
        .map_err(|_| ClusterError::Command {
            command: what.clone(),
            message: format!("no answer within {} s", timeout.as_secs()),
        })?
        .map_err(|source| ClusterError::Spawn {
            what: what.clone(),
            source,
        })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(ClusterError::Command {
            command: what,
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// The version of the engine the client reaches, or why none answers.
pub async fn engine_version(client: &Path) -> Result<String, ClusterError> {
    docker(
        client,
        &["version", "--format", "{{.Server.Version}}"],
        None,
        ASK_TIMEOUT,
    )
    .await
}

/// Whether the engine holds an image by this reference.
pub async fn has_image(client: &Path, reference: &str) -> Result<bool, ClusterError> {
    let listed = docker(
        client,
        &["image", "ls", "--quiet", reference],
        None,
        ASK_TIMEOUT,
    )
    .await?;
    Ok(!listed.is_empty())
}

/// Loads an image archive (`docker save`'s format) into the engine.
pub async fn load(client: &Path, archive: &Path) -> Result<(), ClusterError> {
    docker(client, &["load", "--quiet"], Some(archive), LOAD_TIMEOUT)
        .await
        .map(drop)
}

/// A network of one cell: its kind node's, and where the cell's registry listens for it.
#[derive(Clone, Debug)]
pub struct Network {
    pub client: PathBuf,
    pub name: String,
}

impl Network {
    /// Makes the network (the engine picks a free subnet) and returns its gateway: the
    /// machine's address on it, which the node reaches.
    pub async fn create(&self) -> Result<Ipv4Addr, ClusterError> {
        docker(
            &self.client,
            &[
                "network",
                "create",
                "--driver",
                "bridge",
                "--label",
                LABEL,
                "--opt",
                "com.docker.network.driver.mtu=1500",
                &self.name,
            ],
            None,
            ASK_TIMEOUT,
        )
        .await?;
        let gateway = docker(
            &self.client,
            &[
                "network",
                "inspect",
                "--format",
                "{{range .IPAM.Config}}{{.Gateway}} {{end}}",
                &self.name,
            ],
            None,
            ASK_TIMEOUT,
        )
        .await?;
        gateway
            .split_whitespace()
            .find_map(|g| g.parse::<Ipv4Addr>().ok())
            .ok_or_else(|| ClusterError::Command {
                command: format!("docker network inspect {}", self.name),
                message: format!("no IPv4 gateway in {gateway:?}"),
            })
    }

    /// Removes the network; one that is gone already is no error.
    pub async fn remove(&self) -> Result<(), ClusterError> {
        match docker(
            &self.client,
            &["network", "rm", &self.name],
            None,
            ASK_TIMEOUT,
        )
        .await
        {
            Err(ClusterError::Command { message, .. }) if message.contains("not found") => Ok(()),
            other => other.map(drop),
        }
    }
}

/// The label on what labcheck makes in the engine.
pub const LABEL: &str = "io.labcheck.cell=true";

/// A running container: its process and where it is on a network.
#[derive(Clone, Copy, Debug)]
pub struct Container {
    pub pid: u32,
    pub address: Ipv4Addr,
    /// The network's gateway: the machine's address on it.
    pub gateway: Ipv4Addr,
}

/// A running container's process and its place on `network` (its first one when `None`).
pub async fn container_on(
    client: &Path,
    container: &str,
    network: Option<&str>,
) -> Result<Container, ClusterError> {
    let format = "{{.State.Pid}}{{range $n, $e := .NetworkSettings.Networks}} {{$n}}={{$e.IPAddress}}={{$e.Gateway}}{{end}}";
    let text = docker(
        client,
        &["container", "inspect", "--format", format, container],
        None,
        ASK_TIMEOUT,
    )
    .await?;
    let bad = |message: String| ClusterError::Command {
        command: format!("docker container inspect {container}"),
        message,
    };
    let mut words = text.split_whitespace();
    let pid = words
        .next()
        .and_then(|p| p.parse::<u32>().ok())
        .filter(|p| *p > 0)
        .ok_or_else(|| bad(format!("no running process in {text:?}")))?;
    let (address, gateway) = words
        .filter_map(|w| {
            let mut parts = w.split('=');
            Some((parts.next()?, parts.next()?, parts.next()?))
        })
        .find(|(name, _, _)| network.is_none_or(|n| n == *name))
        .and_then(|(_, ip, gw)| Some((ip.parse().ok()?, gw.parse().ok()?)))
        .ok_or_else(|| bad(format!("no IPv4 address on {network:?} in {text:?}")))?;
    Ok(Container {
        pid,
        address,
        gateway,
    })
}

/// Runs `args` in a running container.
pub async fn exec(client: &Path, container: &str, args: &[&str]) -> Result<(), ClusterError> {
    let mut all = vec!["exec", container];
    all.extend_from_slice(args);
    docker(client, &all, None, ASK_TIMEOUT).await.map(drop)
}
