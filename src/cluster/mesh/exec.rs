//! `kubectl exec` into a live mesh's Pod, as a container runtime runs a command in a running
//! container. The API server sends `pods/exec` to kwok, the node's kubelet, which follows a rule
//! per Pod: a kwok `Exec` (its CRD installed by the cell) named as the Pod, owned by it, with a
//! target per container the cell runs. kwok runs the command by name from its PATH, a directory
//! of the cluster's (`exec-bin/`) where every name a command may have — those on the learner's
//! PATH and the images' own programs — is labcheck itself ([`shim`]). Run so, labcheck hands
//! its standard input, output and error over a socket beside that directory to the harness
//! ([`Server`]), with the Pod, the container and the command, and exits as the command does.
//!
//! The harness runs the command only for a container the cell runs, as a learner command: every
//! namespace of the cell but the network, which is the Pod's; a container's capabilities; the
//! container's environment and working directory; the image's programs first on its PATH
//! (`SHARE/pod/<image>/`: the echo image's `client` and `server`, the proxy's `pilot-agent` and
//! `envoy`). So `kubectl exec deploy/X -- curl …` sends a request from the Pod's address through
//! its sidecar, and nothing run so reaches further than a learner's own command.

mod shim;

pub use shim::shim;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{UnixListener, UnixStream};

use super::MeshTools;
use crate::sandbox::{LearnerCommands, Network, SHARE};

/// The variable in kwok's environment naming the directory of the socket.
const SOCKET_DIR: &str = "LABCHECK_POD_EXEC_DIR";
/// The socket's name in that directory.
const SOCKET: &str = "exec.sock";
/// The variables an `Exec` target sets: the Pod's uid and the container's name.
const POD: &str = "LABCHECK_POD";
const CONTAINER: &str = "LABCHECK_CONTAINER";
/// The directory of the cluster's that kwok finds commands in.
const BIN: &str = "exec-bin";
/// How long an exec waits for its container's processes to start.
const STARTING: std::time::Duration = std::time::Duration::from_secs(30);
/// A request's most bytes (the command's arguments).
const MAX_REQUEST: usize = 1 << 20;

/// What kwok's exec asks the harness: a command in a container of a Pod.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    pod: String,
    container: String,
    /// The command, its name first, as bytes.
    argv: Vec<Vec<u8>>,
}

/// A container the cell runs, as `kubectl exec` enters it.
#[derive(Clone, Debug)]
pub struct Target {
    /// The image's programs: a directory under `SHARE/pod` ([`pod_tools`]).
    pub image: &'static str,
    /// The container's environment, resolved.
    pub env: Vec<(String, String)>,
    /// The container's working directory (`/` when it names none).
    pub workdir: String,
}

/// The image directory of the echo app's containers.
pub const APP_IMAGE: &str = "app";
/// The image directory of the proxy's container.
pub const PROXY_IMAGE: &str = "istio-proxy";

/// The images' programs a cell shows under `SHARE/pod`, by `<image>/<name>`.
pub fn pod_tools(tools: &MeshTools) -> Vec<(String, PathBuf)> {
    [
        (APP_IMAGE, "client", &tools.echo_client),
        (APP_IMAGE, "server", &tools.echo_server),
        (PROXY_IMAGE, "pilot-agent", &tools.pilot_agent),
        (PROXY_IMAGE, "envoy", &tools.envoy),
    ]
    .into_iter()
    .map(|(image, name, path)| (format!("{image}/{name}"), path.clone()))
    .collect()
}

/// Makes `dir/exec-bin` with every name of `dirs` and of the images' programs (`pod_tools`, as
/// [`pod_tools`] gives them) linked to `helper` ([`helper`], as kwok sees it); returns kwok's
/// environment: that directory as its PATH, the socket's directory — both as kwok sees `dir`,
/// at `view`.
pub fn prepare(
    dir: &Path,
    view: &Path,
    dirs: &[PathBuf],
    pod_tools: &[(String, PathBuf)],
    helper: &Path,
) -> io::Result<Vec<(String, OsString)>> {
    let bin = dir.join(BIN);
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin)?;
    let programs = pod_tools
        .iter()
        .filter_map(|(name, _)| Path::new(name).file_name().map(OsString::from));
    let in_dirs = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.file_name());
    let names: std::collections::BTreeSet<OsString> = programs.chain(in_dirs).collect();
    for name in names {
        std::os::unix::fs::symlink(helper, bin.join(name))?;
    }
    Ok(vec![
        ("PATH".into(), view.join(BIN).into_os_string()),
        (SOCKET_DIR.into(), view.as_os_str().to_owned()),
    ])
}

/// The `Exec` rule kwok follows for `pod`: named as it, owned by it, a target per container.
pub fn rule(pod: &Pod, containers: &[String]) -> serde_json::Value {
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let execs: Vec<serde_json::Value> = containers
        .iter()
        .map(|c| {
            serde_json::json!({
                "containers": [c],
                "local": {"envs": [
                    {"name": POD, "value": uid},
                    {"name": CONTAINER, "value": c},
                ]},
            })
        })
        .collect();
    super::kwok::rule(
        pod,
        "Exec",
        "kwok (the simulated node's kubelet) runs a command in this Pod's containers through \
         labcheck, as a container runtime runs one in a container",
        serde_json::json!({"execs": execs}),
    )
}

/// Looks a running container up: its Pod's network namespace and the container.
pub type Lookup = Arc<dyn Fn(&str, &str) -> Option<(Network, Target)> + Send + Sync>;

/// The harness's end of the socket: runs what kwok's exec asks.
#[derive(Debug)]
pub struct Server {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Listens on the socket in `dir` (made through a descriptor of `dir`, so its path's length
    /// does not matter) for the execs of the cell's kwok, process `kwok`: a request from any
    /// other process (another cell's kwok, told of this socket by a rule of its learner's) is
    /// refused.
    pub fn listen(
        dir: &Path,
        learner: LearnerCommands,
        lookup: Lookup,
        kwok: u32,
    ) -> io::Result<Server> {
        let dir_fd = std::fs::File::open(dir)?;
        let at = PathBuf::from(format!("/proc/self/fd/{}/{SOCKET}", dir_fd.as_raw_fd()));
        let _ = std::fs::remove_file(&at);
        let listener = UnixListener::bind(&at)?;
        let learner = Arc::new(learner);
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) if from_child_of(&stream, kwok) => {
                        tokio::spawn(serve(stream, learner.clone(), lookup.clone()));
                    }
                    Ok(_) => {}
                    // Out of descriptors, say: the next exec may find some.
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                }
            }
        });
        Ok(Server { task })
    }
}

/// Whether the peer of `stream` is a child of process `parent`.
fn from_child_of(stream: &UnixStream, parent: u32) -> bool {
    let Some(pid) = stream.peer_cred().ok().and_then(|c| c.pid()) else {
        return false;
    };
    crate::sandbox::parent_of(pid) == Some(parent)
}

/// Serves one exec: reads the request and its descriptors, runs the command, answers its exit
/// status. A command whose caller goes (kwok ended the exec) is killed.
async fn serve(mut stream: UnixStream, learner: Arc<LearnerCommands>, lookup: Lookup) {
    let Ok((request, fds)) = receive(&mut stream).await else {
        return;
    };
    let [stdin, stdout, stderr] = fds;
    // kwok reports a container running as its Pod starts; its processes follow within moments.
    let started = std::time::Instant::now();
    let mut found = lookup(&request.pod, &request.container);
    while found.is_none() && started.elapsed() < STARTING {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        found = lookup(&request.pod, &request.container);
    }
    let status = match start(&learner, found, &request, stdin, stdout, &stderr) {
        Ok(mut child) => {
            let mut probe = [0u8; 1];
            tokio::select! {
                status = child.wait() => status.map_or(1, code),
                _ = stream.read(&mut probe) => {
                    if let Some(pid) = child.id() {
                        crate::sandbox::unix::kill_group(pid as i32, libc::SIGKILL);
                    }
                    let _ = child.wait().await;
                    return;
                }
            }
        }
        Err((code, message)) => {
            let mut err = std::fs::File::from(stderr);
            let _ = std::io::Write::write_all(&mut err, format!("{message}\n").as_bytes());
            code
        }
    };
    let _ = stream.write_all(&status.to_le_bytes()).await;
}

/// An exit status as a shell gives it: the code, or 128 and the signal.
fn code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// Starts the command in the container; a refusal is an exit code and what to print.
fn start(
    learner: &LearnerCommands,
    found: Option<(Network, Target)>,
    request: &Request,
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: &OwnedFd,
) -> Result<tokio::process::Child, (i32, String)> {
    let (network, target) = found.ok_or_else(|| {
        (
            126,
            format!(
                "labcheck: container {:?} of this Pod is not running (it did not start within {} s)",
                request.container,
                STARTING.as_secs()
            ),
        )
    })?;
    let Some((program, args)) = request.argv.split_first() else {
        return Err((126, "no command".to_owned()));
    };
    let program = OsString::from_vec(program.clone());
    let mut env = learner.env().clone();
    env.remove("KUBECONFIG");
    let mut path = OsString::from(format!("{SHARE}/pod/{}:", target.image));
    path.push(env.get("PATH").cloned().unwrap_or_default());
    env.insert("PATH".to_owned(), path);
    for (k, v) in &target.env {
        env.insert(k.clone(), v.into());
    }
    let err = stderr
        .try_clone()
        .map_err(|e| (126, format!("cannot pass the error output on: {e}")))?;
    let mut command = learner.command(&network, Path::new(&target.workdir), &program);
    command
        .envs(env)
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    command.spawn().map_err(|e| {
        let name = program.to_string_lossy();
        match e.kind() {
            io::ErrorKind::NotFound => (
                127,
                format!("exec: {name:?}: executable file not found in $PATH"),
            ),
            _ => (126, format!("exec: {name:?}: {e}")),
        }
    })
}

/// Reads a request: its length and its JSON, the three descriptors sent with its first bytes.
async fn receive(stream: &mut UnixStream) -> io::Result<(Request, [OwnedFd; 3])> {
    let mut buf = vec![0u8; 64 * 1024];
    let (n, fds) = loop {
        stream.readable().await?;
        match stream.try_io(Interest::READABLE, || {
            recv_with_fds(stream.as_raw_fd(), &mut buf)
        }) {
            Ok(got) => break got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    let fds: [OwnedFd; 3] = fds
        .try_into()
        .map_err(|_| io::Error::other("a request without its three descriptors"))?;
    let mut got = buf[..n].to_vec();
    let len = got
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| io::Error::other("a request without its length"))?;
    if len > MAX_REQUEST {
        return Err(io::Error::other("a request too long"));
    }
    if got.len() < 4 + len {
        let at = got.len();
        got.resize(4 + len, 0);
        stream.read_exact(&mut got[at..]).await?;
    }
    let request = serde_json::from_slice(&got[4..4 + len])?;
    Ok((request, fds))
}

/// One `recvmsg`: the bytes read and the descriptors that came with them.
fn recv_with_fds(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut iov = [io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut fds = Vec::new();
    for c in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(received) = c {
            // SAFETY: descriptors just received are this process's, owned by no one else.
            fds.extend(
                received
                    .into_iter()
                    .map(|f| unsafe { OwnedFd::from_raw_fd(f) }),
            );
        }
    }
    Ok((msg.bytes, fds))
}

/// The targets of a Pod's running containers, by name, for its rule and [`Lookup`].
pub type Targets = BTreeMap<String, Target>;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_a_child_of_the_cells_kwok_is_served() {
        let (here, _there) = UnixStream::pair().expect("a socket pair");
        // The peer is this process: a child of its parent, not of itself.
        let parent = nix::unistd::getppid().as_raw() as u32;
        assert!(from_child_of(&here, parent));
        assert!(!from_child_of(&here, std::process::id()));
    }

    #[test]
    fn the_rule_has_a_target_per_container_naming_the_pod_and_the_container() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1"},
        }))
        .expect("a Pod");
        let rule = rule(&pod, &["app".to_owned(), "istio-proxy".to_owned()]);
        assert_eq!(rule["kind"], "Exec");
        assert_eq!(rule["metadata"]["ownerReferences"][0]["uid"], "u1");
        let execs = rule["spec"]["execs"].as_array().expect("execs");
        assert_eq!(execs.len(), 2);
        assert_eq!(execs[1]["containers"][0], "istio-proxy");
        let envs = &execs[1]["local"]["envs"];
        assert_eq!(
            (&envs[0]["name"], &envs[0]["value"]),
            (&POD.into(), &"u1".into())
        );
        assert_eq!(envs[1]["value"], "istio-proxy");
    }

    #[test]
    fn kwoks_path_names_every_program_of_the_dirs_and_the_images_as_labcheck() {
        let dir = tempfile::tempdir().expect("dir");
        let tools = dir.path().join("tools");
        std::fs::create_dir(&tools).expect("tools");
        std::fs::write(tools.join("curl"), "").expect("a program");
        let me = dir.path().join("labcheck");
        let dirs = [tools, dir.path().join("absent")];
        let images: Vec<(String, PathBuf)> = [
            "app/client",
            "app/server",
            "istio-proxy/pilot-agent",
            "istio-proxy/envoy",
        ]
        .into_iter()
        .map(|n| (n.to_owned(), PathBuf::from("/cache").join(n)))
        .collect();
        let view = Path::new("/run/labcheck/node");
        let env = prepare(dir.path(), view, &dirs, &images, &me).expect("prepared");
        let bin = dir.path().join(BIN);
        assert_eq!(env[0], ("PATH".to_owned(), view.join(BIN).into_os_string()));
        assert_eq!(env[1], (SOCKET_DIR.to_owned(), view.as_os_str().to_owned()));
        for name in ["curl", "client", "server", "pilot-agent", "envoy"] {
            assert_eq!(std::fs::read_link(bin.join(name)).ok().as_ref(), Some(&me));
        }
    }
}
