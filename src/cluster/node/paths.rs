//! Where a cell's real node keeps what: the node's directory in the cluster's directory on the
//! host, and what the node's mount namespace shows where. The paths containerd and the kubelet
//! hard-code (`/run/containerd`, `/var/lib/kubelet`, `/var/log/pods`, `/var/lib/cni`) are the
//! node's own there: its `/run` is a tmpfs of its own, the others are directories of the node's
//! directory attached over the cell's view ([`attachments`]).

use std::path::{Path, PathBuf};

use super::NodeTools;
use crate::sandbox::Attachment;

/// Where the node shows its directory (configuration, certificates, containerd's root).
pub const NODE_DIR: &str = "/run/labcheck/node";
/// Where the node shows the programs it runs, by name.
pub const BIN: &str = "/run/labcheck/bin";
/// The CNI plugins, by name.
pub const CNI_BIN: &str = "/run/labcheck/cni";
/// containerd's root: a real directory (its overlayfs snapshotter cannot stack on an overlay).
pub const CONTAINERD_ROOT: &str = "/run/labcheck/node/containerd";
/// containerd's state, on the node's own `/run` (where its shims' sockets are whatever it says).
pub const CONTAINERD_STATE: &str = "/run/containerd";
pub const CONTAINERD_SOCKET: &str = "/run/containerd/containerd.sock";
/// host-local's leases.
pub const CNI_IPAM: &str = "/var/lib/cni/networks";
/// The name the runtime policy is run by: containerd's runc.
pub const RUNC_POLICY: &str = "runc";
/// Where the policy finds the real runc: in a directory of its own, attached whole — runc seals
/// itself with an overlay of the directory it is in, which would see under a file attached alone.
pub const RUNC_DIR: &str = "/run/labcheck/runtime";
pub const RUNC: &str = "/run/labcheck/runtime/runc";

/// The node's directories over the cell's view, relative to the node's directory on the host.
const PRIVATE: [(&str, &str); 3] = [
    ("kubelet", "/var/lib/kubelet"),
    ("log", "/var/log"),
    ("cni", "/var/lib/cni"),
];

/// A program of the node, by its name there.
pub fn program(name: &str) -> PathBuf {
    Path::new(BIN).join(name)
}

/// The node's directory on the host and its view of it.
#[derive(Clone, Debug)]
pub struct Paths {
    /// `<cluster dir>/node`.
    pub host: PathBuf,
}

impl Paths {
    pub fn new(cluster_dir: &Path) -> Paths {
        Paths {
            host: cluster_dir.join("node"),
        }
    }

    /// A file of the node's directory, as the node shows it.
    pub fn in_node(&self, name: &str) -> PathBuf {
        Path::new(NODE_DIR).join(name)
    }

    /// The same file on the host.
    pub fn on_host(&self, name: &str) -> PathBuf {
        self.host.join(name)
    }

    /// The CNI configuration's directory, as the node shows it.
    pub fn cni_conf(&self) -> String {
        self.in_node("net.d").display().to_string()
    }

    /// Makes the node's directories on the host.
    pub fn create(&self) -> std::io::Result<()> {
        for dir in ["net.d", "containerd", "certs.d/_default"]
            .into_iter()
            .chain(PRIVATE.iter().map(|(d, _)| *d))
        {
            std::fs::create_dir_all(self.host.join(dir))?;
        }
        Ok(())
    }

    /// The directories whose contents a failed cell's report keeps: the Pods' logs.
    pub fn pod_logs(&self) -> PathBuf {
        self.host.join("log/pods")
    }
}

/// What the node shows: its directory (writable), its private directories over the cell's view,
/// its programs, the CNI plugins, and the real runc where the policy finds it.
pub fn attachments(p: &Paths, tools: &NodeTools, helper: &Path) -> Vec<Attachment> {
    let mut all = vec![Attachment {
        host: p.host.clone(),
        at: NODE_DIR.into(),
        writable: true,
    }];
    all.extend(PRIVATE.iter().map(|(dir, at)| Attachment {
        host: p.host.join(dir),
        at: PathBuf::from(at),
        writable: true,
    }));
    let programs = [
        ("kubelet", &tools.kubelet),
        ("kube-proxy", &tools.kube_proxy),
        ("containerd", &tools.containerd),
        ("containerd-shim-runc-v2", &tools.containerd_shim),
        ("ctr", &tools.ctr),
    ];
    all.extend(programs.iter().map(|(name, host)| Attachment {
        host: (*host).clone(),
        at: program(name),
        writable: false,
    }));
    all.push(Attachment {
        host: helper.to_owned(),
        at: program(RUNC_POLICY),
        writable: false,
    });
    all.push(Attachment {
        host: tools.runc.parent().unwrap_or(Path::new("/")).to_owned(),
        at: RUNC_DIR.into(),
        writable: false,
    });
    all.extend(tools.cni.iter().map(|host| Attachment {
        host: host.clone(),
        at: Path::new(CNI_BIN).join(host.file_name().unwrap_or_default()),
        writable: false,
    }));
    all
}
