//! Evaluating [`ClusterCheck`]s (data in [`crate::checks::cluster`]) through kube-rs, discovery-based so any resource type works (by kind, plural
//! or `plural.group`, as kubectl accepts): a resource exists, a CRD is Established, a jq query
//! over a list of resources (shaped like `kubectl get … -o json`), namespace labels, and a query
//! on a learner's file compared with a query over the cluster.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::{ApiResource, Discovery, Scope};
use serde_json::Value;

use crate::checks::documents::{query, same, single};
use crate::checks::{CheckError, Env, Failure, Fault};
pub use crate::checks::{ClusterCheck, Expect};
use crate::model::Lang;

fn api_error(e: kube::Error) -> CheckError {
    CheckError::Api(std::sync::Arc::new(e))
}

/// Finds a resource type by kind, plural or `plural.group`. A kind or plural that more than one
/// API group serves (Istio's and the Gateway API's `Gateway`) must be written `plural.group`.
async fn resolve(client: &kube::Client, name: &str) -> Result<(ApiResource, bool), CheckError> {
    let discovery = Discovery::new(client.clone())
        .run()
        .await
        .map_err(api_error)?;
    let wanted = name.to_ascii_lowercase();
    let mut found: Vec<(ApiResource, bool)> = Vec::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            let dotted = format!("{}.{}", ar.plural, ar.group);
            if dotted == wanted {
                return Ok((ar, caps.scope == Scope::Namespaced));
            }
            if [ar.kind.to_ascii_lowercase(), ar.plural.clone()].contains(&wanted) {
                found.push((ar, caps.scope == Scope::Namespaced));
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CheckError::UnknownResource(name.to_owned())),
        _ => Err(CheckError::AmbiguousResource {
            name: name.to_owned(),
            choices: found
                .iter()
                .map(|(ar, _)| format!("{}.{}", ar.plural, ar.group))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The resources of a type, as `kubectl get <type> -A -o json` shows them.
pub async fn list(client: &kube::Client, resource: &str) -> Result<Value, CheckError> {
    let (ar, _) = resolve(client, resource).await?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let list = api.list(&ListParams::default()).await.map_err(api_error)?;
    let items: Vec<Value> = list.items.into_iter().map(|o| as_json(o, &ar)).collect();
    Ok(serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items }))
}

/// An object as kubectl shows it: its API version and kind filled in.
fn as_json(object: DynamicObject, ar: &ApiResource) -> Value {
    let mut v = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), Value::from(ar.api_version.clone()));
        m.insert("kind".into(), Value::from(ar.kind.clone()));
    }
    v
}

/// The failure of a check that looked for an object the cluster does not have.
fn not_found(kind: &str, name: &str, namespace: Option<&str>, lang: Lang) -> Fault {
    let place = namespace
        .map(|ns| format!(" (namespace {ns})"))
        .unwrap_or_default();
    Fault::Failed(Failure::new(
        format!("{kind} {name}{place}"),
        lang.pick("not found in the cluster", "クラスターに存在しない"),
    ))
}

fn query_list(list: &Value, code: &str) -> Result<Vec<Value>, CheckError> {
    query(std::slice::from_ref(list), code)
}

/// The one value a query over the cluster's resources of a type gives.
async fn cluster_value(
    client: &kube::Client,
    resource: &str,
    code: &str,
    lang: Lang,
) -> Result<Value, Fault> {
    let list = list(client, resource).await?;
    Ok(single(
        query_list(&list, code)?,
        std::path::Path::new(resource),
        code,
        lang,
    )?)
}

impl ClusterCheck {
    pub async fn evaluate(
        &self,
        client: &kube::Client,
        env: &Env<'_>,
        lang: Lang,
    ) -> Result<(), Fault> {
        match self {
            ClusterCheck::Exists {
                resource,
                name,
                namespace,
            } => exists(client, resource, name, namespace.as_deref(), lang).await,
            ClusterCheck::Absent {
                resource,
                name,
                namespace,
            } => absent(client, resource, name, namespace.as_deref(), lang).await,
            ClusterCheck::CrdEstablished(name) => crd_established(client, name, lang).await,
            ClusterCheck::Query {
                resource,
                query: code,
                expect,
            } => {
                let list = list(client, resource).await?;
                let results = query_list(&list, code)?;
                Ok(crate::checks::documents::expect(
                    results,
                    expect,
                    std::path::Path::new(resource),
                    code,
                    lang,
                )?)
            }
            ClusterCheck::NamespaceLabel {
                namespace,
                label,
                value,
            } => namespace_label(client, namespace, label, value.as_deref(), lang).await,
            ClusterCheck::FileEqualsCluster {
                file,
                query: code,
                resource,
                cluster_query,
            } => {
                let left = single(
                    crate::checks::documents::run(env, file, code, lang)?,
                    file,
                    code,
                    lang,
                )?;
                let right = cluster_value(client, resource, cluster_query, lang).await?;
                Ok(same(&left, &right, || {
                    format!("{} {code} = {resource}: {cluster_query}", file.display())
                })?)
            }
            ClusterCheck::ObjectQuery {
                resource,
                name,
                namespace,
                query: code,
                expect,
            } => {
                let at = (resource.as_str(), name.as_str(), namespace.as_deref());
                object_query(client, at, code, expect, lang).await
            }
            ClusterCheck::ClusterEqualsCluster {
                resource,
                query: code,
                other_resource,
                other_query,
            } => {
                let left = cluster_value(client, resource, code, lang).await?;
                let right = cluster_value(client, other_resource, other_query, lang).await?;
                Ok(same(&left, &right, || {
                    format!("{resource}: {code} = {other_resource}: {other_query}")
                })?)
            }
        }
    }
}

/// No object of that name: its being there is the failure.
async fn absent(
    client: &kube::Client,
    resource: &str,
    name: &str,
    namespace: Option<&str>,
    lang: Lang,
) -> Result<(), Fault> {
    match exists(client, resource, name, namespace, lang).await {
        Err(Fault::Failed(_)) => Ok(()),
        Err(e) => Err(e),
        Ok(()) => {
            let place = namespace
                .map(|ns| format!(" (namespace {ns})"))
                .unwrap_or_default();
            Err(Fault::Failed(Failure::new(
                format!("{} {resource} {name}{place}", lang.pick("no", "なし:")),
                lang.pick("it is in the cluster", "クラスターに存在する"),
            )))
        }
    }
}

/// A query on one object (resource, name, namespace) against what is expected of its results.
async fn object_query(
    client: &kube::Client,
    (resource, name, namespace): (&str, &str, Option<&str>),
    code: &str,
    expect: &crate::checks::documents::Expect,
    lang: Lang,
) -> Result<(), Fault> {
    let object = object(client, resource, name, namespace, lang).await?;
    let results = query(std::slice::from_ref(&object), code)?;
    let place = match namespace {
        Some(ns) => format!("{resource} {ns}/{name}"),
        None => format!("{resource} {name}"),
    };
    Ok(crate::checks::documents::expect(
        results,
        expect,
        std::path::Path::new(&place),
        code,
        lang,
    )?)
}

/// One object, as `kubectl get <resource> <name> -o json` shows it; not being there is a
/// failure of the check.
async fn object(
    client: &kube::Client,
    resource: &str,
    name: &str,
    namespace: Option<&str>,
    lang: Lang,
) -> Result<Value, Fault> {
    let (ar, namespaced) = resolve(client, resource).await?;
    let api: Api<DynamicObject> = match (namespace, namespaced) {
        (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &ar),
        (None, true) => Api::default_namespaced_with(client.clone(), &ar),
        _ => Api::all_with(client.clone(), &ar),
    };
    match api.get_opt(name).await.map_err(api_error)? {
        Some(found) => Ok(as_json(found, &ar)),
        None => Err(not_found(&ar.kind, name, namespace, lang)),
    }
}

/// A resource of any type exists (in a namespace, when one is given).
async fn exists(
    client: &kube::Client,
    resource: &str,
    name: &str,
    namespace: Option<&str>,
    lang: Lang,
) -> Result<(), Fault> {
    let (ar, namespaced) = resolve(client, resource).await?;
    let api: Api<DynamicObject> = match (namespace, namespaced) {
        (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &ar),
        _ => Api::all_with(client.clone(), &ar),
    };
    let found = if namespace.is_some() || !namespaced {
        api.get_opt(name).await.map_err(api_error)?.is_some()
    } else {
        let all = api.list(&ListParams::default()).await.map_err(api_error)?;
        all.items
            .iter()
            .any(|o| o.metadata.name.as_deref() == Some(name))
    };
    if found {
        return Ok(());
    }
    Err(not_found(&ar.kind, name, namespace, lang))
}

/// A CRD has the condition Established=True.
async fn crd_established(client: &kube::Client, name: &str, lang: Lang) -> Result<(), Fault> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = api.get_opt(name).await.map_err(api_error)?;
    let Some(crd) = crd else {
        return Err(Fault::Failed(Failure::new(
            format!("CRD {name}"),
            lang.pick("not found in the cluster", "クラスターに存在しない"),
        )));
    };
    let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
    let established = conditions
        .iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    if established {
        Ok(())
    } else {
        let seen: Vec<String> = conditions
            .iter()
            .map(|c| format!("{}={}", c.type_, c.status))
            .collect();
        Err(Fault::Failed(Failure::new(
            format!("CRD {name} Established=True"),
            seen.join(", "),
        )))
    }
}

/// A namespace's label has a value, or is absent (`value` None).
async fn namespace_label(
    client: &kube::Client,
    namespace: &str,
    label: &str,
    value: Option<&str>,
    lang: Lang,
) -> Result<(), Fault> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = api.get_opt(namespace).await.map_err(api_error)?;
    let Some(ns) = ns else {
        return Err(Fault::Failed(Failure::new(
            format!(
                "{} {namespace}",
                lang.pick("the namespace", "ネームスペース")
            ),
            lang.pick("not found in the cluster", "クラスターに存在しない"),
        )));
    };
    let labels = ns.metadata.labels.unwrap_or_default();
    let found = labels.get(label);
    match (value, found) {
        (Some(want), Some(got)) if want == got => Ok(()),
        (None, None) => Ok(()),
        (Some(want), got) => Err(Fault::Failed(Failure::new(
            format!("{label}={want}"),
            got.map(|g| format!("{label}={g}"))
                .unwrap_or_else(|| lang.pick("no such label", "ラベルなし").to_owned()),
        ))),
        (None, Some(got)) => Err(Fault::Failed(Failure::new(
            format!("{} {label}", lang.pick("no label", "ラベルなし:")),
            format!("{label}={got}"),
        ))),
    }
}
