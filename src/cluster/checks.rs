//! Cluster checks through kube-rs, discovery-based so any resource type works (by kind, plural
//! or `plural.group`, as kubectl accepts): a resource exists, a CRD is Established, a jq query
//! over a list of resources (shaped like `kubectl get … -o json`), namespace labels, and a query
//! on a learner's file compared with a query over the cluster.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::{ApiResource, Discovery, Scope};
use serde_json::Value;

pub use crate::checks::Expect;
use crate::checks::documents::{query, same, single};
use crate::checks::{Env, Failure};
use crate::model::Lang;

#[derive(Clone, Debug)]
pub enum ClusterCheck {
    Exists {
        resource: String,
        name: String,
        namespace: Option<String>,
    },
    CrdEstablished(String),
    Query {
        resource: String,
        query: String,
        expect: Expect,
    },
    NamespaceLabel {
        namespace: String,
        label: String,
        value: Option<String>,
    },
    FileEqualsCluster {
        file: PathBuf,
        query: String,
        resource: String,
        cluster_query: String,
    },
}

fn api_failure(lang: Lang, e: impl std::fmt::Display) -> Failure {
    Failure::new(
        lang.pick("an answer from the API server", "API サーバーの応答"),
        e.to_string(),
    )
}

/// Finds a resource type by kind, plural or `plural.group`. A kind or plural that more than one
/// API group serves (Istio's and the Gateway API's `Gateway`) must be written `plural.group`.
async fn resolve(
    client: &kube::Client,
    name: &str,
    lang: Lang,
) -> Result<(ApiResource, bool), Failure> {
    let discovery = Discovery::new(client.clone())
        .run()
        .await
        .map_err(|e| api_failure(lang, e))?;
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
        0 => Err(Failure::new(
            format!("{} {name}", lang.pick("a resource type", "リソースの種類")),
            lang.pick(
                "the cluster does not serve it",
                "クラスターに登録されていない",
            ),
        )),
        _ => Err(Failure::new(
            format!(
                "{} {name}",
                lang.pick("one resource type named", "一意に決まるリソースの種類")
            ),
            format!(
                "{}: {}",
                lang.pick(
                    "served by several API groups; write one of",
                    "複数の API グループにある。次のどれかで書く"
                ),
                found
                    .iter()
                    .map(|(ar, _)| format!("{}.{}", ar.plural, ar.group))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The resources of a type, as `kubectl get <type> -A -o json` shows them.
pub async fn list(client: &kube::Client, resource: &str, lang: Lang) -> Result<Value, Failure> {
    let (ar, _) = resolve(client, resource, lang).await?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| api_failure(lang, e))?;
    let items: Vec<Value> = list
        .items
        .into_iter()
        .map(|o| {
            let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("apiVersion".into(), Value::from(ar.api_version.clone()));
                m.insert("kind".into(), Value::from(ar.kind.clone()));
            }
            v
        })
        .collect();
    Ok(serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items }))
}

fn query_list(list: &Value, code: &str, lang: Lang) -> Result<Vec<Value>, Failure> {
    query(std::slice::from_ref(list), code)
        .map_err(|e| Failure::new(lang.pick("a query that runs", "実行できるクエリ"), e))
}

impl ClusterCheck {
    pub async fn evaluate(
        &self,
        client: &kube::Client,
        env: &Env<'_>,
        lang: Lang,
    ) -> Result<(), Failure> {
        match self {
            ClusterCheck::Exists {
                resource,
                name,
                namespace,
            } => {
                let (ar, namespaced) = resolve(client, resource, lang).await?;
                let api: Api<DynamicObject> = match (namespace, namespaced) {
                    (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &ar),
                    _ => Api::all_with(client.clone(), &ar),
                };
                let found = if namespace.is_some() || !namespaced {
                    api.get_opt(name)
                        .await
                        .map_err(|e| api_failure(lang, e))?
                        .is_some()
                } else {
                    let all = api
                        .list(&ListParams::default())
                        .await
                        .map_err(|e| api_failure(lang, e))?;
                    all.items
                        .iter()
                        .any(|o| o.metadata.name.as_deref() == Some(name.as_str()))
                };
                if found {
                    return Ok(());
                }
                let place = namespace
                    .as_ref()
                    .map(|ns| format!(" (namespace {ns})"))
                    .unwrap_or_default();
                Err(Failure::new(
                    format!("{} {name}{place}", ar.kind),
                    lang.pick("not found in the cluster", "クラスターに存在しない"),
                ))
            }
            ClusterCheck::CrdEstablished(name) => {
                let api: Api<CustomResourceDefinition> = Api::all(client.clone());
                let crd = api.get_opt(name).await.map_err(|e| api_failure(lang, e))?;
                let Some(crd) = crd else {
                    return Err(Failure::new(
                        format!("CRD {name}"),
                        lang.pick("not found in the cluster", "クラスターに存在しない"),
                    ));
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
                    Err(Failure::new(
                        format!("CRD {name} Established=True"),
                        seen.join(", "),
                    ))
                }
            }
            ClusterCheck::Query {
                resource,
                query: code,
                expect,
            } => {
                let list = list(client, resource, lang).await?;
                let results = query_list(&list, code, lang)?;
                crate::checks::documents::expect(
                    results,
                    expect,
                    std::path::Path::new(resource),
                    code,
                    lang,
                )
            }
            ClusterCheck::NamespaceLabel {
                namespace,
                label,
                value,
            } => {
                let api: Api<Namespace> = Api::all(client.clone());
                let ns = api
                    .get_opt(namespace)
                    .await
                    .map_err(|e| api_failure(lang, e))?;
                let Some(ns) = ns else {
                    return Err(Failure::new(
                        format!(
                            "{} {namespace}",
                            lang.pick("the namespace", "ネームスペース")
                        ),
                        lang.pick("not found in the cluster", "クラスターに存在しない"),
                    ));
                };
                let labels = ns.metadata.labels.unwrap_or_default();
                let found = labels.get(label);
                match (value, found) {
                    (Some(want), Some(got)) if want == got => Ok(()),
                    (None, None) => Ok(()),
                    (Some(want), got) => Err(Failure::new(
                        format!("{label}={want}"),
                        got.map(|g| format!("{label}={g}"))
                            .unwrap_or_else(|| lang.pick("no such label", "ラベルなし").to_owned()),
                    )),
                    (None, Some(got)) => Err(Failure::new(
                        format!("{} {label}", lang.pick("no label", "ラベルなし:")),
                        format!("{label}={got}"),
                    )),
                }
            }
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
                let list = list(client, resource, lang).await?;
                let right = single(
                    query_list(&list, cluster_query, lang)?,
                    std::path::Path::new(resource),
                    cluster_query,
                    lang,
                )?;
                same(&left, &right, || {
                    format!("{} {code} = {resource}: {cluster_query}", file.display())
                })
            }
        }
    }
}
