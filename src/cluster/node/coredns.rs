//! CoreDNS as a cluster has it: a Deployment of its image in `kube-system` behind the `kube-dns`
//! Service at the cluster's DNS address, with the RBAC its `kubernetes` plugin needs; and whether
//! a cluster's DNS serves (a real node's or kind's).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, PostParams};
use serde::de::DeserializeOwned;

use super::CLUSTER_DNS;
use crate::cluster::ClusterError;

/// The objects, in the order they are made.
const MANIFEST: &str = r#"
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        cache 30
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      priorityClassName: system-cluster-critical
      containers:
      - name: coredns
        image: IMAGE
        imagePullPolicy: IfNotPresent
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
      volumes:
      - name: config
        configMap: {name: coredns, items: [{key: Corefile, path: Corefile}]}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: CLUSTER_DNS
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
"#;

/// Makes CoreDNS's objects (those that exist already, in a cell from a checkpoint, stay).
pub async fn install(client: &kube::Client) -> Result<(), ClusterError> {
    let text = MANIFEST
        .replace("IMAGE", super::COREDNS)
        .replace("CLUSTER_DNS", CLUSTER_DNS);
    let docs: Vec<&str> = text.split("\n---\n").collect();
    let [sa, role, binding, config, deployment, service] = docs[..] else {
        return Err(ClusterError::Io(
            "CoreDNS's manifest has six objects".into(),
        ));
    };
    let ns = |c: &kube::Client| c.clone();
    post(
        Api::<ServiceAccount>::namespaced(ns(client), "kube-system"),
        sa,
    )
    .await?;
    post(Api::<ClusterRole>::all(ns(client)), role).await?;
    post(Api::<ClusterRoleBinding>::all(ns(client)), binding).await?;
    post(
        Api::<ConfigMap>::namespaced(ns(client), "kube-system"),
        config,
    )
    .await?;
    post(
        Api::<Deployment>::namespaced(ns(client), "kube-system"),
        deployment,
    )
    .await?;
    post(
        Api::<Service>::namespaced(ns(client), "kube-system"),
        service,
    )
    .await
}

/// Whether the cluster's DNS serves: the `kube-dns` Service of `kube-system` has a ready
/// endpoint. Until then a Pod's lookup of a Service's name is refused (`connection refused` from
/// the Service's address), which a learner's first command may meet.
pub async fn serves(client: &kube::Client) -> Result<(), String> {
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "kube-system");
    let of_dns = kube::api::ListParams::default().labels("kubernetes.io/service-name=kube-dns");
    let listed = slices.list(&of_dns).await.map_err(|e| e.to_string())?;
    let ready = listed
        .items
        .iter()
        .flat_map(|s| s.endpoints.iter().flatten())
        .any(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true));
    if ready {
        Ok(())
    } else {
        Err("no ready endpoint of the kube-dns Service yet".to_owned())
    }
}

async fn post<K>(api: Api<K>, yaml: &str) -> Result<(), ClusterError>
where
    K: kube::Resource<DynamicType = ()>
        + DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug,
{
    let object: K = serde_saphyr::from_str(yaml)
        .map_err(|e| ClusterError::Io(format!("CoreDNS's {}: {e}", K::kind(&()))))?;
    // A Service with a fixed address is refused for its address before its name is looked at.
    let name = object.meta().name.clone().unwrap_or_default();
    if let Ok(Some(_)) = api.get_opt(&name).await {
        return Ok(());
    }
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(ClusterError::Io(format!(
            "cannot create CoreDNS's {}: {e}",
            K::kind(&())
        ))),
    }
}
