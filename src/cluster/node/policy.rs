//! The runtime's policy: what a cell's node runs as containerd's `runc`. Before the real runc
//! creates a container (or runs a process in one), it reads the OCI spec the kubelet and
//! containerd made from the learner's Pod and refuses what would give the container more power
//! on the machine than a learner's command has — every capability beyond a container's default
//! set and `istio-init`'s two, the host's devices, `/proc` unmasked, no seccomp filter, the
//! node's PID or IPC namespace, a bind of the node's own directories (`/run`, `/proc`, the
//! kubelet's and the runtime's state). The learner cannot change it: it is the node's program,
//! not an object of the cluster. Refused, the container does not start and the Pod's events
//! carry the reason (runc's log, which containerd reports).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The capabilities a container may have: Docker's default set (what a container gets unless
/// its Pod adds or drops some), and `NET_ADMIN` and `NET_RAW`, which Istio's `istio-init` adds.
const ALLOWED_CAPABILITIES: &[&str] = &[
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
    "CAP_NET_ADMIN",
];

/// The node's own directories: a container may bind none of them, nor anything holding them
/// (`hostPath: /`), but for what the kubelet and containerd themselves give it ([`GIVEN`]).
const PRIVATE: &[&str] = &[
    "/run",
    "/proc",
    "/sys",
    "/dev",
    "/var/lib/kubelet",
    "/var/lib/cni",
    "/var/log",
];

/// Where the binds the kubelet and containerd make for a Pod come from: its volumes, its
/// `/etc/hosts` and termination log, its sandbox's `/etc/resolv.conf`, `/etc/hostname` and
/// `/dev/shm`.
const GIVEN: &[&str] = &[
    "/var/lib/kubelet/pods",
    "/run/labcheck/node/containerd/io.containerd.grpc.v1.cri/sandboxes",
    "/run/containerd/io.containerd.grpc.v1.cri/sandboxes",
];

/// The paths every container's `/proc` masks unless its Pod asks for `procMount: Unmasked`.
const MASKED: &[&str] = &["/proc/kcore", "/proc/keys", "/proc/timer_list"];

/// When this process was started as containerd's runc (by the name [`super::paths::RUNC_POLICY`]),
/// runs the policy and returns the exit code; `None` otherwise.
pub fn as_runc() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let name = Path::new(args.first()?).file_name()?;
    (name == super::paths::RUNC_POLICY).then(|| main(args))
}

/// Runs as containerd's runc: checks a `create`/`run` bundle's spec or an `exec`'s process,
/// then becomes the real runc with the same arguments. Returns the exit code when it refuses or
/// cannot run runc.
fn main(args: Vec<OsString>) -> i32 {
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Err(refusal) = check(&text) {
        let message = format!("labcheck: {refusal}");
        eprintln!("{message}");
        if let Some(log) = flag(&text, &["--log"]) {
            let line = serde_json::json!({"level": "error", "msg": message});
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(log)
                .and_then(|mut f| {
                    use std::io::Write as _;
                    writeln!(f, "{line}")
                });
        }
        return 1;
    }
    use std::os::unix::process::CommandExt as _;
    let err = std::process::Command::new(super::paths::RUNC)
        .arg0("runc")
        .args(args.iter().skip(1))
        .exec();
    eprintln!("labcheck: cannot run {}: {err}", super::paths::RUNC);
    127
}

/// The value of the first of `names` given as `--name value` or `--name=value`.
fn flag<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, a)| {
        names.iter().find_map(|n| {
            if a == n {
                args.get(i + 1).map(String::as_str)
            } else {
                a.strip_prefix(n)?.strip_prefix('=')
            }
        })
    })
}

/// What runc is asked to do, checked.
fn check(args: &[String]) -> Result<(), String> {
    let command = args.iter().skip(1).find(|a| {
        matches!(
            a.as_str(),
            "create" | "run" | "exec" | "start" | "kill" | "delete" | "state" | "ps" | "features"
        )
    });
    match command.map(String::as_str) {
        Some("create" | "run") => {
            let bundle = flag(args, &["--bundle", "-b"]).unwrap_or(".");
            let path = Path::new(bundle).join("config.json");
            let spec = read_json(&path)?;
            spec_allowed(&spec)
        }
        Some("exec") => match flag(args, &["--process", "-p"]) {
            Some(process) => process_allowed(&read_json(Path::new(process))?),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is no JSON: {e}", path.display()))
}

/// Whether a container's spec stays within what a learner's command may do.
pub fn spec_allowed(spec: &Value) -> Result<(), String> {
    process_allowed(&spec["process"])?;
    let linux = &spec["linux"];
    if linux["devices"].as_array().is_some_and(|d| !d.is_empty()) {
        return Err(
            "a container of this cell gets no device of the machine (privileged: true, \
                    or devices given to it)"
                .into(),
        );
    }
    let masked: Vec<&str> = strings(&linux["maskedPaths"]);
    if MASKED.iter().any(|m| !masked.contains(m)) {
        return Err(
            "a container of this cell has /proc masked (procMount: Unmasked is not \
                    run here)"
                .into(),
        );
    }
    if linux["seccomp"].is_null() {
        return Err("a container of this cell runs under a seccomp filter \
                    (seccompProfile: Unconfined, or privileged: true, is not run here)"
            .into());
    }
    let namespaces: Vec<&str> = linux["namespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["type"].as_str())
        .collect();
    for (kind, field) in [("pid", "hostPID"), ("ipc", "hostIPC"), ("mount", "a mount")] {
        if !namespaces.contains(&kind) {
            return Err(format!(
                "a container of this cell has a {kind} namespace of its own ({field}: true would \
                 share the node's, where its runtime runs)"
            ));
        }
    }
    // A Pod of `hostNetwork: true` shares the node's network: on a kind node, that network
    // reaches the machine's bridge, which the node's own filter keeps it from; with NET_ADMIN
    // the container could lift that filter.
    let bounding = strings(&spec["process"]["capabilities"]["bounding"]);
    if shares_node_network(linux) && bounding.contains(&"CAP_NET_ADMIN") {
        return Err(
            "a container of this cell that shares its node's network (hostNetwork: \
                    true) runs without NET_ADMIN: the node's network is not the Pod's to change"
                .into(),
        );
    }
    for (key, _) in linux["sysctl"].as_object().into_iter().flatten() {
        if !namespaced_sysctl(key) {
            return Err(format!(
                "sysctl {key} is the machine's, not the Pod's: no container of this cell sets it"
            ));
        }
    }
    for mount in spec["mounts"].as_array().into_iter().flatten() {
        let options = strings(&mount["options"]);
        let is_bind = mount["type"].as_str() == Some("bind")
            || options.iter().any(|o| matches!(*o, "bind" | "rbind"));
        if let (true, Some(source)) = (is_bind, mount["source"].as_str()) {
            bind_allowed(Path::new(source))?;
        }
    }
    Ok(())
}

/// Whether a container is in the node's network: its spec names no network namespace (a
/// sandbox of `hostNetwork: true`), or the one it joins (its sandbox's) is the node's, where
/// this policy runs.
fn shares_node_network(linux: &Value) -> bool {
    use std::os::unix::fs::MetadataExt;
    let network = linux["namespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["type"] == "network");
    let Some(network) = network else {
        return true;
    };
    let Some(path) = network["path"].as_str() else {
        return false;
    };
    let id = |p: &str| std::fs::metadata(p).map(|m| (m.dev(), m.ino()));
    matches!((id(path), id("/proc/self/ns/net")), (Ok(a), Ok(b)) if a == b)
}

/// Whether a process (a container's, or one `kubectl exec` starts) keeps within the allowed
/// capabilities.
fn process_allowed(process: &Value) -> Result<(), String> {
    let caps = &process["capabilities"];
    for set in [
        "bounding",
        "effective",
        "permitted",
        "inheritable",
        "ambient",
    ] {
        for cap in strings(&caps[set]) {
            if !ALLOWED_CAPABILITIES.contains(&cap) {
                let name = cap.trim_start_matches("CAP_");
                return Err(format!(
                    "no container of this cell runs with {name}: a Pod may add NET_ADMIN and \
                     NET_RAW to a container's default capabilities, nothing more \
                     (privileged: true would add them all)"
                ));
            }
        }
    }
    Ok(())
}

/// A bind's source, resolved as runc will resolve it, must neither be nor hold a directory of
/// the node's own, but for what the kubelet and containerd give a Pod.
fn bind_allowed(source: &Path) -> Result<(), String> {
    let resolved = std::fs::canonicalize(source).unwrap_or_else(|_| lexical(source));
    let given = GIVEN.iter().any(|g| resolved.starts_with(g));
    let private = PRIVATE
        .iter()
        .map(Path::new)
        .any(|p| p.starts_with(&resolved) || (resolved.starts_with(p) && !given));
    if private {
        return Err(format!(
            "a container of this cell binds none of its node's own directories: {} is {} \
             (a hostPath there is not run here)",
            source.display(),
            if resolved == source {
                "one of them".to_owned()
            } else {
                format!("{}, one of them", resolved.display())
            }
        ));
    }
    Ok(())
}

/// `path` with `.` and `..` resolved without the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The sysctls a Pod's namespaces own (Kubernetes' "namespaced" ones).
fn namespaced_sysctl(key: &str) -> bool {
    key.starts_with("net.")
        || key.starts_with("kernel.shm")
        || key.starts_with("kernel.msg")
        || key == "kernel.sem"
        || key.starts_with("fs.mqueue.")
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Value {
        json!({
            "process": {"capabilities": {"bounding": ["CAP_CHOWN", "CAP_KILL"],
                                         "effective": ["CAP_CHOWN"]}},
            "linux": {
                "maskedPaths": ["/proc/kcore", "/proc/keys", "/proc/timer_list"],
                "seccomp": {"defaultAction": "SCMP_ACT_ERRNO"},
                "namespaces": [{"type": "pid"}, {"type": "ipc", "path": "/proc/1/ns/ipc"},
                               {"type": "mount"},
                               {"type": "network", "path": "/nonexistent/ns/net"}],
            },
            "mounts": [{"destination": "/data", "type": "bind",
                        "source": "/var/lib/kubelet/pods/u/volumes/kubernetes.io~empty-dir/d",
                        "options": ["rbind"]}],
        })
    }

    #[test]
    fn a_default_container_runs() {
        assert_eq!(spec_allowed(&spec()), Ok(()));
    }

    #[test]
    fn what_reaches_beyond_the_cell_is_refused() {
        // (what the refusal says, where in the spec, what is put there)
        let cases = [
            (
                "SYS_ADMIN",
                "/process/capabilities/bounding",
                json!(["CAP_SYS_ADMIN"]),
            ),
            ("device", "/linux/devices", json!([{"path": "/dev/vda"}])),
            ("procMount", "/linux/maskedPaths", json!([])),
            ("Unconfined", "/linux/seccomp", Value::Null),
            (
                "hostPID",
                "/linux/namespaces",
                json!([{"type": "ipc"}, {"type": "mount"}]),
            ),
            (
                "hostIPC",
                "/linux/namespaces",
                json!([{"type": "pid"}, {"type": "mount"}]),
            ),
            (
                "kernel.panic",
                "/linux/sysctl",
                json!({"kernel.panic": "0"}),
            ),
            ("binds none", "/mounts/0/source", json!("/")),
            ("binds none", "/mounts/0/source", json!("/run/containerd/s")),
            (
                "binds none",
                "/mounts/0/source",
                json!("/var/lib/kubelet/../../../proc"),
            ),
        ];
        for (expected, at, value) in cases {
            let mut s = spec();
            let (parent, key) = at.rsplit_once('/').expect("a pointer");
            match s.pointer_mut(parent).expect(at) {
                Value::Object(map) => {
                    map.insert(key.to_owned(), value);
                }
                Value::Array(items) => items[key.parse::<usize>().expect(at)] = value,
                _ => panic!("{at}"),
            }
            let err = spec_allowed(&s).expect_err(expected);
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }

    #[test]
    fn net_admin_is_refused_only_in_the_nodes_network() {
        let mut s = spec();
        s["process"]["capabilities"]["bounding"] = json!(["CAP_CHOWN", "CAP_NET_ADMIN"]);
        assert_eq!(spec_allowed(&s), Ok(()), "istio-init in its Pod's network");
        let network = s["linux"]["namespaces"].as_array_mut().expect("namespaces");
        network.retain(|n| n["type"] != "network");
        let err = spec_allowed(&s).expect_err("hostNetwork with NET_ADMIN");
        assert!(err.contains("hostNetwork"), "{err}");
        // A container joins its sandbox's network: the node's, for `hostNetwork: true`.
        s["linux"]["namespaces"]
            .as_array_mut()
            .expect("namespaces")
            .push(json!({"type": "network", "path": "/proc/self/ns/net"}));
        let err = spec_allowed(&s).expect_err("joining the node's network with NET_ADMIN");
        assert!(err.contains("hostNetwork"), "{err}");
        s["process"]["capabilities"]["bounding"] = json!(["CAP_CHOWN"]);
        assert_eq!(spec_allowed(&s), Ok(()), "hostNetwork without NET_ADMIN");
    }

    #[test]
    fn flags_are_read_in_both_forms() {
        let args: Vec<String> = ["runc", "--log", "/l", "create", "--bundle=/b", "id"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(flag(&args, &["--log"]), Some("/l"));
        assert_eq!(flag(&args, &["--bundle", "-b"]), Some("/b"));
    }
}
