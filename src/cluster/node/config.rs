//! The configuration files of a cell's real node, as text: containerd's, the CNI network's, the
//! kubelet's and kube-proxy's, and the `resolv.conf` Pods with `dnsPolicy: Default` inherit.
//! Every path in them is a path in the node's mount namespace ([`super::paths`]).

use super::paths::{self, Paths};
use super::{CLUSTER_DNS, NODE_NAME, POD_CIDR};

/// containerd 2's configuration (`version = 3`). Every registry is the cell's
/// ([`crate::images::registry`], `certs.d/_default/hosts.toml`). `restrict_oom_score_adj`: root here may lack
/// `CAP_SYS_RESOURCE`, which a negative `oom_score_adj` (every sandbox's -998) needs. The Pods'
/// network namespaces live under containerd's state, not the host's `/var/run/netns`. runc is
/// labcheck's policy in front of the real one ([`super::policy`]). A layer's blob leaves the
/// content store once unpacked (`discard_unpacked_layers`): the table's layers are uncompressed
/// tar, so keeping the blob would hold each image twice in the cell's memory (page cache) and
/// disk; a pull of an image whose layers are unpacked fetches none of them again.
pub fn containerd(p: &Paths, pause: &str) -> String {
    let head = crate::images::preload::containerd_toml(
        paths::CONTAINERD_ROOT,
        paths::CONTAINERD_STATE,
        paths::CONTAINERD_SOCKET,
        "imports = []",
    );
    format!(
        r#"{head}[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  discard_unpacked_layers = true
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "{pause}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "{hosts}"
[plugins."io.containerd.cri.v1.runtime"]
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  cdi_spec_dirs = []
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "{runc}"
        Root = "{state}/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["{cni_bin}"]
    conf_dir = "{cni_conf}"
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
"#,
        state = paths::CONTAINERD_STATE,
        runc = paths::program(paths::RUNC_POLICY).display(),
        cni_bin = paths::CNI_BIN,
        cni_conf = p.cni_conf(),
        hosts = p.in_node("certs.d").display(),
    )
}

/// The Pod network: one bridge, addresses from [`POD_CIDR`] (host-local, its data in the node's
/// state), a default route through the bridge, and `hostPort` mappings.
pub fn cni() -> String {
    serde_json::json!({
        "cniVersion": "1.0.0",
        "name": "labcheck",
        "plugins": [
            {
                "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
                "hairpinMode": true,
                "ipam": {
                    "type": "host-local", "dataDir": paths::CNI_IPAM,
                    "ranges": [[{"subnet": POD_CIDR}]], "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": true}},
        ],
    })
    .to_string()
}

/// What Pods with `dnsPolicy: Default` inherit: nothing outside the cell answers.
pub const RESOLV_CONF: &str = "nameserver 127.0.0.1\n";

/// The kubelet's configuration: the cgroupfs driver under the cell's group (the node's cgroup
/// namespace is rooted there), cgroup v1 allowed, x509 clients of the cluster's CA, the
/// cluster's DNS, eviction only when the shared disk is nearly full, and every Pod confined by
/// the runtime's default seccomp profile unless it asks otherwise (which the runtime refuses).
/// Containers' CPU limits are not made CFS quotas (`cpuCFSQuota: false`): the cell's group has
/// a quota of its own, and cgroup v1 refuses a group a quota above an ancestor's, so the
/// ingress gateway's proxy (limited to 2 CPUs) could not start in a cell of 1.5; the cell's
/// quota bounds every container together.
pub fn kubelet(p: &Paths) -> String {
    format!(
        "apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /
cpuCFSQuota: false
containerRuntimeEndpoint: unix://{socket}
failSwapOn: false
address: 0.0.0.0
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: {cert}
tlsPrivateKeyFile: {key}
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: false}}
  x509: {{clientCAFile: {ca}}}
authorization: {{mode: AlwaysAllow}}
clusterDomain: cluster.local
clusterDNS: [{dns}]
resolvConf: {resolv}
seccompDefault: true
evictionHard: {{memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
rotateCertificates: false
nodeStatusReportFrequency: 10s
",
        socket = paths::CONTAINERD_SOCKET,
        cert = p.in_node("kubelet.crt").display(),
        key = p.in_node("kubelet.key").display(),
        ca = p.in_node("ca.crt").display(),
        dns = CLUSTER_DNS,
        resolv = p.in_node("resolv.conf").display(),
    )
}

/// kube-proxy's configuration: iptables mode in the cell's network namespace, no conntrack
/// sysctl set (they are the machine's, not the cell's).
pub fn kube_proxy(p: &Paths) -> String {
    format!(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {{kubeconfig: {kubeconfig}}}
mode: iptables
hostnameOverride: {node}
clusterCIDR: {cidr}
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {{maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}}
",
        kubeconfig = p.in_node("kubeconfig").display(),
        node = NODE_NAME,
        cidr = POD_CIDR,
    )
}
