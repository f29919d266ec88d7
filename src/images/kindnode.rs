//! The kind node image, built offline as kind's own recipe builds it: `images/base` of kind's
//! module (its Debian packages, its files, the systemd setup of its Dockerfile) on a Debian
//! minbase, then what `kind build node-image` adds — the node's binaries, `/kind/version`, the
//! containerd runtime spec — and what labcheck adds: the Pod network's configuration for one
//! node (kindnetd's image has no recipe) and the kernel knobs the kubelet wants, shown to it
//! inside the node so the machine's stay as they are.

use std::path::{Path, PathBuf};

use crate::toolchain::Tool;

/// kind's base image's packages (its Dockerfile's `clean-install` list) that bookworm has,
/// without the storage ones a one-node lab cluster does not use (NFS, iSCSI, e2fsprogs).
pub const PACKAGES: &[&str] = &[
    "systemd",
    "conntrack",
    "iptables",
    "nftables",
    "iproute2",
    "ethtool",
    "util-linux",
    "mount",
    "kmod",
    "libseccomp2",
    "pigz",
    "fuse-overlayfs",
    "bash",
    "ca-certificates",
    "curl",
    "jq",
    "procps",
];

/// Stands for the directory of kind's base files in [`HOOK`].
pub const BASE_FILES: &str = "{kind_files}";

/// kind's Dockerfile's steps on the rootfs (`$1`): its files copied in with its modes, the
/// services it removes, enables and masks, `/sbin/init`.
pub const HOOK: &str = r#"set -e
files={kind_files}
mkdir -p "$1/kind" "$1/LICENSES" "$1/etc/kubernetes/manifests"
cp -r "$files/usr/local/bin/." "$1/usr/local/bin/"
cp -r "$files/kind/." "$1/kind/"
cp -r "$files/etc/." "$1/etc/"
cp -r "$files/LICENSES/." "$1/LICENSES/"
find "$1/kind" "$1/etc/containerd" "$1/etc/default" "$1/etc/sysctl.d" "$1/etc/systemd/system" "$1/LICENSES" -type f -exec chmod 0644 {} +
chmod 0644 "$1/etc/crictl.yaml"
chmod 0755 "$1/kind" "$1/kind/bin" "$1"/kind/bin/* "$1"/usr/local/bin/*
find "$1/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
rm -f "$1"/lib/systemd/system/multi-user.target.wants/* "$1"/etc/systemd/system/*.wants/* \
  "$1"/lib/systemd/system/local-fs.target.wants/* "$1"/lib/systemd/system/sockets.target.wants/*udev* \
  "$1"/lib/systemd/system/sockets.target.wants/*initctl* "$1"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> "$1/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$1/sbin/init"
chroot "$1" systemctl enable kubelet.service containerd.service undo-mount-hacks.service
chroot "$1" systemctl mask systemd-binfmt.service"#;

/// The node's binaries, by tool, and where the node has them.
pub const BINARIES: [(Tool, &str); 13] = [
    (Tool::Kubeadm, "usr/bin/kubeadm"),
    (Tool::Kubelet, "usr/bin/kubelet"),
    (Tool::Kubectl, "usr/bin/kubectl"),
    (Tool::KubeProxy, "usr/bin/kube-proxy"),
    (Tool::Containerd, "usr/local/bin/containerd"),
    (
        Tool::ContainerdShim,
        "usr/local/bin/containerd-shim-runc-v2",
    ),
    (Tool::Ctr, "usr/local/bin/ctr"),
    (Tool::Crictl, "usr/local/bin/crictl"),
    (Tool::Runc, "usr/local/sbin/runc"),
    (Tool::CniHostLocal, "opt/cni/bin/host-local"),
    (Tool::CniLoopback, "opt/cni/bin/loopback"),
    (Tool::CniPtp, "opt/cni/bin/ptp"),
    (Tool::CniPortmap, "opt/cni/bin/portmap"),
];

/// What a kind node image is built from.
#[derive(Debug, Clone)]
pub struct KindNodeSources {
    /// The Kubernetes version (`/kind/version`).
    pub kubernetes: String,
    /// `images/base/files` of kind's module, installed beside the kind binary.
    pub base_files: PathBuf,
    /// (path in the node, the binary) for each of [`BINARIES`].
    pub binaries: Vec<(&'static str, PathBuf)>,
}

impl KindNodeSources {
    /// The sources of the toolchain, each where `path` finds its tool.
    pub fn of(kubernetes: &str, path: impl Fn(Tool) -> PathBuf) -> KindNodeSources {
        KindNodeSources {
            kubernetes: kubernetes.to_owned(),
            base_files: path(Tool::Kind).with_file_name(crate::toolchain::KIND_BASE_FILES),
            binaries: BINARIES
                .iter()
                .map(|(tool, inside)| (*inside, path(*tool)))
                .collect(),
        }
    }
}

/// The Pod network of a one-node cluster, as kindnetd writes it: `ptp` with addresses from the
/// node's Pod CIDR (kind's first node gets `10.244.0.0/24`), and `hostPort` mappings.
pub const CNI: &str = r#"{"cniVersion":"0.4.0","name":"kindnet","plugins":[{"type":"ptp","ipMasq":false,"ipam":{"type":"host-local","dataDir":"/run/cni-ipam-state","routes":[{"dst":"0.0.0.0/0"}],"ranges":[[{"subnet":"10.244.0.0/24"}]]},"mtu":1500},{"type":"portmap","capabilities":{"portMappings":true}}]}
"#;

/// Run before the kubelet: it sets six global kernel knobs at its start (and fails if it
/// cannot); the node shows it the values it wants, read-only, in its own mount namespace.
pub const KERNEL_KNOBS: &str = r#"#!/bin/bash
set -e
dir=/run/labcheck/knobs
mkdir -p "$dir"
while read -r knob value; do
  mountpoint -q "/proc/sys/$knob" && continue
  file="$dir/${knob//\//.}"
  echo "$value" > "$file"
  mount --bind "$file" "/proc/sys/$knob"
  mount -o remount,bind,ro "/proc/sys/$knob"
done <<'EOF'
vm/overcommit_memory 1
vm/panic_on_oom 0
kernel/panic 10
kernel/panic_on_oops 1
kernel/keys/root_maxkeys 1000000
kernel/keys/root_maxbytes 25000000
EOF
"#;

/// Run before containerd: the runtime's policy (labcheck, mounted by the cell as the node's
/// runc) finds the real runc where it looks for it.
pub const REAL_RUNC: &str = "#!/bin/sh\nset -e\nmkdir -p /run/labcheck/runtime\nln -sf /usr/local/sbin/runc /run/labcheck/runtime/runc\n";

/// kube-proxy as a service of the node, as a real node of the local backend runs it: its
/// DaemonSet (kind's `kubeProxyMode` is `none` here) would be a privileged Pod, which the
/// runtime's policy refuses to any Pod. It starts once kubeadm has written the cluster's
/// credentials.
pub const KUBE_PROXY_UNIT: &str = "[Unit]
Description=kube-proxy of the node
After=kubelet.service

[Service]
ExecStartPre=/bin/sh -c 'until [ -s /etc/kubernetes/admin.conf ]; do sleep 1; done'
ExecStart=/usr/bin/kube-proxy --config=/kind/labcheck/kube-proxy.yaml
Restart=always
RestartSec=1
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
";

/// kube-proxy's configuration: iptables mode over kind's Pod CIDR, no conntrack sysctl set
/// (they are the machine's).
pub const KUBE_PROXY_CONFIG: &str = "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /etc/kubernetes/admin.conf}
mode: iptables
clusterCIDR: 10.244.0.0/16
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
";

/// Where systemd finds the kube-proxy service enabled.
pub const KUBE_PROXY_WANTED: (&str, &str) = (
    "etc/systemd/system/multi-user.target.wants/labcheck-kube-proxy.service",
    "/etc/systemd/system/labcheck-kube-proxy.service",
);

/// The files labcheck's layer adds: (path in the node, mode, content).
pub fn files(kubernetes: &str, cri_base: &str) -> Vec<(&'static str, u32, String)> {
    vec![
        ("kind/version", 0o644, kubernetes.to_owned()),
        ("etc/containerd/cri-base.json", 0o644, cri_base.to_owned()),
        ("etc/cni/net.d/10-kindnet.conflist", 0o644, CNI.to_owned()),
        (
            "kind/bin/labcheck-kernel-knobs.sh",
            0o755,
            KERNEL_KNOBS.into(),
        ),
        ("kind/bin/labcheck-real-runc.sh", 0o755, REAL_RUNC.into()),
        (
            "etc/systemd/system/labcheck-kube-proxy.service",
            0o644,
            KUBE_PROXY_UNIT.into(),
        ),
        (
            "kind/labcheck/kube-proxy.yaml",
            0o644,
            KUBE_PROXY_CONFIG.into(),
        ),
        (
            "etc/systemd/system/kubelet.service.d/12-labcheck.conf",
            0o644,
            "[Service]\nExecStartPre=/kind/bin/labcheck-kernel-knobs.sh\n".into(),
        ),
        (
            "etc/systemd/system/containerd.service.d/12-labcheck.conf",
            0o644,
            "[Service]\nExecStartPre=/kind/bin/labcheck-real-runc.sh\n".into(),
        ),
    ]
}

/// kind's containerd runtime spec: `ctr oci spec`'s default with kind's hook that mounts the
/// node's product files, and no rlimits (what kind's Dockerfile makes with jq).
pub fn cri_base(default_spec: &str) -> Result<String, String> {
    let mut spec: serde_json::Value =
        serde_json::from_str(default_spec).map_err(|e| format!("`ctr oci spec`: {e}"))?;
    let hook = serde_json::json!({"path": "/kind/bin/mount-product-files.sh"});
    match spec.pointer_mut("/hooks/createContainer") {
        Some(serde_json::Value::Array(hooks)) => hooks.push(hook),
        _ => {
            let hooks = spec
                .as_object_mut()
                .ok_or("`ctr oci spec` is no object")?
                .entry("hooks")
                .or_insert_with(|| serde_json::json!({}));
            hooks
                .as_object_mut()
                .ok_or("`ctr oci spec`'s hooks are no object")?
                .insert("createContainer".into(), serde_json::json!([hook]));
        }
    }
    if let Some(process) = spec.get_mut("process").and_then(|p| p.as_object_mut()) {
        process.remove("rlimits");
    }
    serde_json::to_string_pretty(&spec).map_err(|e| e.to_string())
}

/// The hook with the base files' directory in place.
pub fn hook(base_files: &Path) -> String {
    HOOK.replace(
        BASE_FILES,
        &super::run::quote(&base_files.to_string_lossy()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_spec_gets_kinds_hook_and_loses_its_rlimits() {
        let spec = r#"{"process":{"rlimits":[{"type":"RLIMIT_NOFILE"}],"cwd":"/"},"hooks":{}}"#;
        let out: serde_json::Value =
            serde_json::from_str(&cri_base(spec).expect("a spec")).expect("JSON");
        assert_eq!(
            out["hooks"]["createContainer"][0]["path"],
            "/kind/bin/mount-product-files.sh"
        );
        assert!(out["process"].get("rlimits").is_none());
        assert_eq!(out["process"]["cwd"], "/");
        assert!(cri_base("not json").is_err());
    }
}
