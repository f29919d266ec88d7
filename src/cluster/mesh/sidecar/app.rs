//! The application containers a cell runs: a container of Istio's echo image (`istio/app`,
//! `docker.io/istio/app`, `gcr.io/istio-testing/app`, any tag, run with its own entrypoint) runs
//! as the cell's build of Istio's echo server (`pkg/test/echo/cmd/server`, the image's
//! `/usr/local/bin/server`) of the cell's Istio version, whatever the tag says. Its arguments
//! are the container's, expanded as a kubelet expands them; a container with none gets what
//! Istio's echo deployments give it: a flag per declared port (`--grpc` for a port named
//! `grpc…`, `--tcp` for `tcp…`, `--port` for the rest) and `--version` from the Pod's `version`
//! label. Its environment is the container's, with `NAMESPACE` and `INSTANCE_IPS` from the Pod
//! as those deployments set them. No container of any other image runs (kwok reports it
//! waiting, `ImageNotRunnable`: see `kwok-stages.yaml`).

use k8s_openapi::api::core::v1::{Container, Pod};

/// The echo image's entrypoint: a `command` naming anything else is not the echo server.
const ENTRYPOINT: &str = "/usr/local/bin/server";
/// The repositories of Istio's echo image.
const REPOSITORIES: [&str; 3] = [
    "istio/app",
    "docker.io/istio/app",
    "gcr.io/istio-testing/app",
];

/// Whether the cell runs `container`: an echo image with its own entrypoint.
pub fn runs(container: &Container) -> bool {
    let image = container.image.as_deref().unwrap_or_default();
    // `repository[:tag][@digest]`: the tag's colon comes after the last slash.
    let without_digest = image.split('@').next().unwrap_or_default();
    let repository = match without_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => without_digest,
    };
    let entrypoint = container
        .command
        .as_ref()
        .is_none_or(|c| c.first().is_none_or(|c| c == ENTRYPOINT));
    REPOSITORIES.contains(&repository) && entrypoint
}

/// The Pod's application containers the cell runs.
pub fn containers(pod: &Pod) -> Vec<&Container> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .filter(|c| runs(c))
        .collect()
}

/// The echo server's arguments: the container's (expanded with its environment `vars`), or
/// those Istio's echo deployments give it.
pub fn args(pod: &Pod, container: &Container, vars: &[(String, String)]) -> Vec<String> {
    let given: Vec<String> = container
        .command
        .iter()
        .flatten()
        .skip(1)
        .chain(container.args.iter().flatten())
        .map(|a| super::env::expand(a, vars))
        .collect();
    if !given.is_empty() {
        return given;
    }
    let mut args = Vec::new();
    let declared: Vec<(String, i32)> = container
        .ports
        .iter()
        .flatten()
        .filter(|p| p.protocol.as_deref().is_none_or(|p| p == "TCP"))
        .map(|p| (p.name.clone().unwrap_or_default(), p.container_port))
        .collect();
    let taken = |port: i32| declared.iter().any(|(_, p)| *p == port);
    let of = |prefix: &str| -> Vec<String> {
        declared
            .iter()
            .filter(|(n, _)| n.starts_with(prefix))
            .map(|(_, p)| p.to_string())
            .collect()
    };
    let (grpc, tcp) = (of("grpc"), of("tcp"));
    let http: Vec<String> = declared
        .iter()
        .filter(|(n, _)| !n.starts_with("grpc") && !n.starts_with("tcp"))
        .map(|(_, p)| p.to_string())
        .collect();
    // The server's own defaults (HTTP 8080, gRPC 7070, TCP 9090) stay unless a declared port
    // takes their number.
    let flag = |name: &str, ports: Vec<String>, default: i32, spare: i32| {
        if !ports.is_empty() {
            Some(format!("--{name}={}", ports.join(",")))
        } else if taken(default) {
            Some(format!("--{name}={spare}"))
        } else {
            None
        }
    };
    args.extend(flag("port", http, 8080, 18080));
    args.extend(flag("grpc", grpc, 7070, 17070));
    args.extend(flag("tcp", tcp, 9090, 19090));
    if let Some(version) = pod.metadata.labels.as_ref().and_then(|l| l.get("version")) {
        args.push(format!("--version={version}"));
    }
    args
}

/// The echo server's environment: the container's, with `NAMESPACE` and `INSTANCE_IPS` from the
/// Pod unless it sets them.
pub fn env(pod: &Pod, container: &Container) -> Vec<(String, String)> {
    let mut vars = super::env::resolve(pod, container);
    let mut default = |name: &str, value: Option<String>| {
        if !vars.iter().any(|(n, _)| n == name)
            && let Some(value) = value
        {
            vars.push((name.to_owned(), value));
        }
    };
    default("NAMESPACE", pod.metadata.namespace.clone());
    let ips = pod.status.as_ref().and_then(|s| {
        let ips: Vec<String> = s.pod_ips.iter().flatten().map(|i| i.ip.clone()).collect();
        (!ips.is_empty())
            .then(|| ips.join(","))
            .or_else(|| s.pod_ip.clone())
    });
    default("INSTANCE_IPS", ips);
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(value: serde_json::Value) -> Container {
        serde_json::from_value(value).expect("a container")
    }

    #[test]
    fn only_the_echo_image_with_its_own_entrypoint_runs() {
        let image = |i: &str| container(serde_json::json!({"name": "app", "image": i}));
        assert!(runs(&image("gcr.io/istio-testing/app:latest")));
        assert!(runs(&image("docker.io/istio/app:1.31.0")));
        assert!(runs(&image("istio/app")));
        assert!(runs(&image("istio/app@sha256:0123")));
        assert!(!runs(&image("nginx:1.27")));
        assert!(!runs(&image("docker.io/istio/proxyv2:1.31.0")));
        assert!(!runs(&image("example.com/istio/app:1")));
        assert!(!runs(&image("gcr.io/istio-testing/app-sidecar:latest")));
        let sleeping = container(serde_json::json!({
            "name": "app", "image": "istio/app", "command": ["sleep", "3600"],
        }));
        assert!(!runs(&sleeping));
    }

    #[test]
    fn without_arguments_the_ports_and_version_label_become_flags() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "labels": {"version": "v2"}},
            "status": {"podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}]},
        }))
        .expect("pod");
        let c = container(serde_json::json!({
            "name": "web", "image": "istio/app",
            "ports": [{"containerPort": 8080}, {"name": "grpc", "containerPort": 7070},
                      {"containerPort": 9090}],
        }));
        assert_eq!(
            args(&pod, &c, &[]),
            [
                "--port=8080,9090",
                "--grpc=7070",
                "--tcp=19090",
                "--version=v2"
            ]
        );
        let bare = container(serde_json::json!({"name": "web", "image": "istio/app"}));
        assert_eq!(args(&pod, &bare, &[]), ["--version=v2"]);
        let given = container(serde_json::json!({
            "name": "web", "image": "istio/app", "args": ["--port=$(P)", "--version=v9"],
        }));
        let vars = [("P".to_string(), "8000".to_string())];
        assert_eq!(args(&pod, &given, &vars), ["--port=8000", "--version=v9"]);
        let vars = env(&pod, &bare);
        assert!(vars.contains(&("NAMESPACE".into(), "shop".into())));
        assert!(vars.contains(&("INSTANCE_IPS".into(), "10.244.0.5".into())));
    }
}
