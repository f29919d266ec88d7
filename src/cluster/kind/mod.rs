//! The `kind` backend: a uniquely named kind cluster per cell, on a Docker network of its own.
//! With labcheck's node image (built offline, [`crate::images`]), the cell also runs a registry
//! of the image table's images on that network's gateway, which the node's containerd pulls
//! every image from, and the node runs every container through the runtime's policy (labcheck,
//! mounted into the node). Everything goes with the cell: the cluster, the registry, the
//! network — also when the cell is dropped (an interrupted run).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use crate::toolchain::kind::KindRecord;

use super::ClusterError;
use super::docker::{self, Network};
use super::processes::Processes;

mod backend;
pub mod link;

pub(super) use backend::Guard;
pub use backend::{Kind, KindNode};

/// The port of a cell's registry on its network's gateway.
pub const REGISTRY_PORT: u16 = 5000;
/// How long the registry may take to answer.
const REGISTRY_READY: Duration = Duration::from_secs(20);

/// kind limits cluster names (they become container names and hostnames).
pub fn cluster_name(cell: &str) -> String {
    let mut name: String = format!("labcheck-{cell}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if name.len() <= 40 {
        return name.trim_end_matches('-').to_owned();
    }
    // Too long: a prefix and a hash of the whole name, so long names stay distinct.
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    name.truncate(31);
    format!("{}-{hash}", name.trim_end_matches('-'))
}

/// Where a cell's kind node finds what labcheck gives it: the registry hosts configuration
/// (every registry is the cell's registry), labcheck itself, as the node's runc, and kubeadm's
/// patches of the control plane's static Pods.
#[derive(Clone, Debug)]
pub struct NodeMounts {
    /// A directory holding `_default/hosts.toml`.
    pub registry_hosts: PathBuf,
    /// labcheck's executable, run by the node's containerd as its runc (the runtime's policy).
    pub policy: PathBuf,
    /// A directory of kubeadm patches ([`write_kubeadm_patches`]).
    pub kubeadm_patches: PathBuf,
}

/// Where the node sees labcheck's executable: by the name the runtime's policy answers to.
pub const NODE_POLICY: &str = "/kind/labcheck/runc";
/// Where the node sees kubeadm's patches.
const NODE_PATCHES: &str = "/kind/labcheck/patches";

/// The control plane's static Pods, which kubeadm gives CPU requests (650m in all). The local
/// backend runs them as processes, outside the node's allocatable CPU; on kind they request
/// none either, so a lab's Pods have the same room on both: on a 2-core machine kubeadm's
/// requests leave none for a second istiod (an upgrade lab's canary stays Pending).
const CONTROL_PLANE: [&str; 4] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
];

/// Writes into `dir` a strategic merge patch per static Pod of [`CONTROL_PLANE`] that takes
/// its CPU request to zero (kubeadm's patch files: `<target>+strategic.json`).
fn write_kubeadm_patches(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for component in CONTROL_PLANE {
        let patch = serde_json::json!({
            "spec": {"containers": [{"name": component, "resources": {"requests": {"cpu": "0"}}}]}
        });
        std::fs::write(
            dir.join(format!("{component}+strategic.json")),
            patch.to_string(),
        )?;
    }
    Ok(())
}

/// The kind cluster's configuration for a cell. One control-plane node:
/// - no default CNI (kind's `kindnetd` image has no recipe here): the node image holds the Pod
///   network's configuration kindnetd would write for one node (`ptp`, `host-local`);
/// - containerd pulls from the cell's registry, refuses a negative `oom_score_adj` it may lack
///   the capability for, and runs every container through the runtime's policy;
/// - no kube-proxy DaemonSet (a privileged Pod, which the policy refuses): the node runs it as
///   a service ([`crate::images`]' kind node);
/// - the kubelet takes cgroup v1 (`failCgroupV1: false`) and confines every Pod by the
///   runtime's default seccomp profile unless it asks otherwise (which the policy refuses);
///   kubeadm runs CoreDNS and etcd at the tags the image table builds, and the control plane's
///   static Pods without CPU requests ([`CONTROL_PLANE`]).
pub fn config(mounts: &NodeMounts, tags: &ImageTags) -> String {
    format!(
        r#"{networking}  disableDefaultCNI: true
  kubeProxyMode: none
nodes:
- role: control-plane
  extraMounts:
  - hostPath: {hosts}
    containerPath: /etc/containerd/certs.d
    readOnly: true
  - hostPath: {policy}
    containerPath: {node_policy}
    readOnly: true
  - hostPath: {patches}
    containerPath: {node_patches}
    readOnly: true
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
  [plugins."io.containerd.grpc.v1.cri"]
    restrict_oom_score_adj = true
    sandbox_image = "{pause}"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    BinaryName = "{node_policy}"
kubeadmConfigPatches:
- |
  kind: InitConfiguration
  patches:
    directory: {node_patches}
- |
  kind: ClusterConfiguration
  dns:
    imageTag: {coredns_tag}
  etcd:
    local:
      imageTag: {etcd_tag}
- |
  kind: KubeletConfiguration
  failCgroupV1: false
  seccompDefault: true
"#,
        hosts = mounts.registry_hosts.display(),
        policy = mounts.policy.display(),
        node_policy = NODE_POLICY,
        patches = mounts.kubeadm_patches.display(),
        node_patches = NODE_PATCHES,
        pause = tags.pause,
        coredns_tag = tags.coredns,
        etcd_tag = tags.etcd,
        networking = named_config(),
    )
}

/// The configuration of a cluster on a node image the user named: only the address ranges
/// (the local backend's Services' range, so a Service's address and the cluster's DNS server
/// are the same on both backends).
pub fn named_config() -> String {
    format!(
        "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n  podSubnet: {}\n  serviceSubnet: {}\n",
        link::POD_SUBNET,
        link::SERVICE_SUBNET
    )
}

/// The images kubeadm and containerd are told to run, as the image table builds them.
pub struct ImageTags {
    pub pause: &'static str,
    pub coredns: &'static str,
    pub etcd: &'static str,
}

/// The kind commands for one cluster.
#[derive(Clone, Debug)]
pub struct KindCommand {
    pub kind: PathBuf,
    pub name: String,
    pub node_image: Option<String>,
    pub kubeconfig: PathBuf,
    /// The cluster's configuration file, if any.
    pub config: Option<PathBuf>,
    /// The Docker network the node joins (kind's own `kind` network when none).
    pub network: Option<String>,
    /// The Docker client kind runs, first on its PATH.
    pub docker: Option<PathBuf>,
}

impl KindCommand {
    /// The arguments of `kind create cluster`.
    pub fn create_args(&self) -> Vec<String> {
        let mut args = vec![
            "create".into(),
            "cluster".into(),
            "--name".into(),
            self.name.clone(),
        ];
        if let Some(image) = &self.node_image {
            args.extend(["--image".into(), image.clone()]);
        }
        if let Some(config) = &self.config {
            args.extend(["--config".into(), config.display().to_string()]);
        }
        args.extend([
            "--kubeconfig".into(),
            self.kubeconfig.display().to_string(),
            "--wait".into(),
            "120s".into(),
        ]);
        args
    }

    /// The node's container (kind names it after the cluster).
    pub fn node_container(&self) -> String {
        format!("{}-control-plane", self.name)
    }

    /// The arguments of `kind delete cluster`.
    pub fn delete_args(&self) -> Vec<String> {
        vec![
            "delete".into(),
            "cluster".into(),
            "--name".into(),
            self.name.clone(),
        ]
    }

    /// kind with the cell's network and Docker client.
    fn command(&self) -> std::process::Command {
        self.record().command()
    }

    async fn exec(&self, args: Vec<String>) -> Result<(), ClusterError> {
        let what = format!("{} {}", self.kind.display(), args.join(" "));
        let mut command = tokio::process::Command::from(self.command());
        command.args(&args).kill_on_drop(true);
        super::processes::run(command, what).await
    }

    pub async fn create(&self) -> Result<(), ClusterError> {
        self.exec(self.create_args()).await
    }

    pub async fn delete(&self) -> Result<(), ClusterError> {
        self.exec(self.delete_args()).await
    }
}

impl KindCommand {
    /// What a kept cell records of this cluster.
    pub fn record(&self) -> KindRecord {
        KindRecord {
            kind: self.kind.clone(),
            docker: self.docker.clone(),
            name: self.name.clone(),
            network: self.network.clone(),
        }
    }
}

/// What a cell's kind cluster runs beside the node: its network and its registry.
#[derive(Debug)]
pub struct Beside {
    pub network: Network,
    pub registry: Processes,
}

impl Beside {
    /// Makes the cell's network and starts its registry of `images` on the gateway; writes
    /// what the node mounts under `dir`. Returns them with the node's mounts.
    pub async fn start(
        docker: &Path,
        name: &str,
        dir: &Path,
        images: &[PathBuf],
        keep: bool,
    ) -> Result<(Beside, NodeMounts), ClusterError> {
        let network = Network {
            client: docker.to_owned(),
            name: name.to_owned(),
        };
        // A network of the same name is a leftover of this cell's name: kind would reuse it.
        network.remove().await?;
        let gateway = network.create().await?;
        let mut beside = Beside {
            network,
            registry: Processes::new(dir, keep),
        };
        match beside.serve(gateway, dir, images).await {
            Ok(mounts) => Ok((beside, mounts)),
            Err(e) => {
                beside.stop().await;
                Err(e)
            }
        }
    }

    async fn serve(
        &mut self,
        gateway: Ipv4Addr,
        dir: &Path,
        images: &[PathBuf],
    ) -> Result<NodeMounts, ClusterError> {
        let address = SocketAddr::from((gateway, REGISTRY_PORT));
        let helper = super::processes::helper()
            .map_err(|e| ClusterError::Io(format!("labcheck's executable: {e}")))?;
        let mut args = vec![
            "registry".to_owned(),
            format!("--listen={address}"),
            format!("--log={}", dir.join("registry.log").display()),
        ];
        args.extend(images.iter().map(|i| i.display().to_string()));
        let mut command = tokio::process::Command::new(&helper);
        // A group of its own, which the list kills when dropped.
        command.process_group(0);
        self.registry
            .spawn(command, "registry-server", &helper, &args)?;
        wait_registry(address).await?;
        let hosts = dir.join("certs.d");
        let file = hosts.join("_default").join("hosts.toml");
        std::fs::create_dir_all(hosts.join("_default"))
            .and_then(|()| {
                std::fs::write(
                    &file,
                    crate::images::registry::hosts_toml(&address.to_string()),
                )
            })
            .map_err(|e| ClusterError::Io(format!("cannot write {}: {e}", file.display())))?;
        let kubeadm_patches = dir.join("kubeadm-patches");
        write_kubeadm_patches(&kubeadm_patches).map_err(|e| {
            ClusterError::Io(format!("cannot write {}: {e}", kubeadm_patches.display()))
        })?;
        Ok(NodeMounts {
            registry_hosts: hosts,
            policy: helper,
            kubeadm_patches,
        })
    }

    /// Stops the registry and removes the network (after the cluster is gone).
    pub async fn stop(&mut self) {
        self.registry.stop().await;
        let _ = self.network.remove().await;
    }
}

/// Waits until the registry at `address` answers `/v2/`.
async fn wait_registry(address: SocketAddr) -> Result<(), ClusterError> {
    let answered =
        crate::cluster::poll::until(REGISTRY_READY, Duration::from_millis(100), || async {
            match ask(address).await {
                Ok(status) if status.contains(" 200 ") => Ok(()),
                Ok(status) => Err(status),
                Err(e) => Err(e.to_string()),
            }
        })
        .await;
    answered.map_err(|detail| ClusterError::NotReady {
        what: format!("the cell's registry at {address}"),
        waited: REGISTRY_READY.as_secs(),
        detail,
    })
}

async fn ask(address: SocketAddr) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    stream
        .write_all(b"GET /v2/ HTTP/1.0\r\nHost: registry\r\n\r\n")
        .await?;
    let mut head = vec![0; 64];
    let n = stream.read(&mut head).await?;
    Ok(String::from_utf8_lossy(&head[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned())
}

/// Loads labcheck's node image into the engine unless it holds it already.
pub async fn ensure_node_image(
    docker: &Path,
    reference: &str,
    archive: &Path,
) -> Result<(), ClusterError> {
    if !docker::has_image(docker, reference).await? {
        docker::load(docker, archive).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(image: Option<&str>) -> KindCommand {
        KindCommand {
            kind: "kind".into(),
            name: cluster_name("Mesh_Install.1.31"),
            node_image: image.map(str::to_owned),
            kubeconfig: "/cells/a/kubeconfig".into(),
            config: None,
            network: None,
            docker: None,
        }
    }

    #[test]
    fn names_are_valid_and_unique_per_cell() {
        assert_eq!(
            cluster_name("Mesh_Install.1.31"),
            "labcheck-mesh-install-1-31"
        );
        assert_ne!(cluster_name("lab-1-31"), cluster_name("lab-1-30"));
        assert!(cluster_name(&"x".repeat(100)).len() <= 40);
        let (a, b) = (
            cluster_name("traffic-routing-1-31-mistake-l120-4242"),
            cluster_name("traffic-routing-1-31-mistake-l140-4242"),
        );
        assert!(a.len() <= 40 && b.len() <= 40);
        assert_ne!(a, b);
    }

    #[test]
    fn create_selects_the_node_image_and_writes_the_cells_kubeconfig() {
        let args = command(Some("kindest/node:v1.35.4")).create_args();
        assert_eq!(
            args.join(" "),
            "create cluster --name labcheck-mesh-install-1-31 --image kindest/node:v1.35.4 --kubeconfig /cells/a/kubeconfig --wait 120s"
        );
        assert!(!command(None).create_args().contains(&"--image".to_owned()));
    }

    #[test]
    fn the_config_sends_every_pull_to_the_cells_registry_and_every_container_to_the_policy() {
        let mounts = NodeMounts {
            registry_hosts: "/cells/a/cluster/certs.d".into(),
            policy: "/usr/bin/labcheck".into(),
            kubeadm_patches: "/cells/a/cluster/kubeadm-patches".into(),
        };
        let tags = ImageTags {
            pause: "registry.k8s.io/pause:3.10.1",
            coredns: "v1.15.0",
            etcd: "3.6.16-0",
        };
        let text = config(&mounts, &tags);
        for wanted in [
            "hostPath: /cells/a/cluster/certs.d\n    containerPath: /etc/containerd/certs.d",
            "hostPath: /usr/bin/labcheck\n    containerPath: /kind/labcheck/runc",
            "config_path = \"/etc/containerd/certs.d\"",
            "BinaryName = \"/kind/labcheck/runc\"",
            "sandbox_image = \"registry.k8s.io/pause:3.10.1\"",
            "kubeProxyMode: none",
            "podSubnet: 10.244.0.0/16",
            "serviceSubnet: 10.0.0.0/24",
            "seccompDefault: true",
            "imageTag: v1.15.0",
            "imageTag: 3.6.16-0",
            "hostPath: /cells/a/cluster/kubeadm-patches\n    containerPath: /kind/labcheck/patches",
            "kind: InitConfiguration\n  patches:\n    directory: /kind/labcheck/patches",
        ] {
            assert!(text.contains(wanted), "{wanted} in\n{text}");
        }
    }

    #[test]
    fn every_static_pod_of_the_control_plane_requests_no_cpu() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        write_kubeadm_patches(dir.path()).expect("the patches are written");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("the directory is read")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "etcd+strategic.json",
                "kube-apiserver+strategic.json",
                "kube-controller-manager+strategic.json",
                "kube-scheduler+strategic.json"
            ]
        );
        for name in names {
            let text = std::fs::read_to_string(dir.path().join(&name)).expect("a patch");
            let patch: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let container = &patch["spec"]["containers"][0];
            assert_eq!(
                Some(container["name"].as_str().unwrap_or_default()),
                name.split('+').next()
            );
            assert_eq!(container["resources"]["requests"]["cpu"], "0");
        }
    }

    #[test]
    fn delete_names_the_same_cluster() {
        assert_eq!(
            command(None).delete_args().join(" "),
            "delete cluster --name labcheck-mesh-install-1-31"
        );
    }
}
