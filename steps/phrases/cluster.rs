//! The phrases of checks on the cluster: resources and queries over them, waiting or not.

use super::*;

pub(super) const PHRASES: &[Phrase] = &[
    Phrase {
        ty: Then,
        what: "cluster: a resource of any type (kind, plural or plural.group) exists",
        en: Sentence {
            expr: r#"the cluster should have a(n) {string} named {string}"#,
            example: r#"the cluster should have a "Namespace" named "mesh-lab""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"クラスターに {string} {string} が存在する"#,
            example: r#"クラスターに "Namespace" "mesh-lab" が存在する"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Exists {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespaced resource exists",
        en: Sentence {
            expr: r#"the cluster should have a(n) {string} named {string} in namespace {string}"#,
            example: r#"the cluster should have a "ConfigMap" named "istio" in namespace "istio-system""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} に {string} {string} が存在する"#,
            example: r#"クラスターのネームスペース "istio-system" に "ConfigMap" "istio" が存在する"#,
            order: &[2, 0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Exists {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: no resource of a type has the name",
        en: Sentence {
            expr: r#"the cluster should not have a(n) {string} named {string}"#,
            example: r#"the cluster should not have a "Namespace" named "legacy""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"クラスターに {string} {string} が存在しない"#,
            example: r#"クラスターに "Namespace" "legacy" が存在しない"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Absent {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: no namespaced resource has the name",
        en: Sentence {
            expr: r#"the cluster should not have a(n) {string} named {string} in namespace {string}"#,
            example: r#"the cluster should not have a "Pod" named "web" in namespace "legacy""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} に {string} {string} が存在しない"#,
            example: r#"クラスターのネームスペース "legacy" に "Pod" "web" が存在しない"#,
            order: &[2, 0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::Absent {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a CRD has condition Established=True",
        en: Sentence {
            expr: r#"the CRD {string} should be established"#,
            example: r#"the CRD "virtualservices.networking.istio.io" should be established"#,
            order: &[0],
        },
        ja: Sentence {
            expr: r#"CRD {string} が Established である"#,
            example: r#"CRD "virtualservices.networking.istio.io" が Established である"#,
            order: &[0],
        },
        build: |a| cluster(ClusterCheck::CrdEstablished(a.text(0))),
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query over a list of resources (`kubectl get -A -o json` shape) equals a value",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should equal {value}"#,
            example: r#"the query '.items | length' over the cluster's "namespaces" should equal 5"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items | length' の値が 5 と等しい"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Equals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query's results include values",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should include {values}"#,
            example: r#"the query '.items[].metadata.name' over the cluster's "namespaces" should include "mesh-lab""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果に {values} がすべて含まれる"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items[].metadata.name' の結果に "mesh-lab" がすべて含まれる"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Includes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query gives at least N results",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should yield at least {int} result(s)"#,
            example: r#"the query '.items[]' over the cluster's "customresourcedefinitions" should yield at least 5 results"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以上ある"#,
            example: r#"クラスターの "customresourcedefinitions" に対するクエリ '.items[]' の結果が 5 個以上ある"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::CountAtLeast(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query does not give exactly this value",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should not equal {value}"#,
            example: r#"the query '.items | length' over the cluster's "pods" should not equal 0"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しくない"#,
            example: r#"クラスターの "pods" に対するクエリ '.items | length' の値が 0 と等しくない"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::NotEquals(a.value(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query's results include none of the values",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should include none of {values}"#,
            example: r#"the query '.items[].metadata.name' over the cluster's "namespaces" should include none of "legacy""#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果に {values} のどれも含まれない"#,
            example: r#"クラスターの "namespaces" に対するクエリ '.items[].metadata.name' の結果に "legacy" のどれも含まれない"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::Excludes(a.values(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: such a query gives at most N results",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should yield at most {int} result(s)"#,
            example: r#"the query '.items[]' over the cluster's "pods" should yield at most 2 results"#,
            order: &[1, 0, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以下である"#,
            example: r#"クラスターの "pods" に対するクエリ '.items[]' の結果が 2 個以下である"#,
            order: &[0, 1, 2],
        },
        build: |a| cluster_query(a, Expect::CountAtMost(a.int(2)?)),
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespace label has a value",
        en: Sentence {
            expr: r#"the namespace {string} should have the label {string} set to {string}"#,
            example: r#"the namespace "mesh-lab" should have the label "istio-injection" set to "enabled""#,
            order: &[0, 1, 2],
        },
        ja: Sentence {
            expr: r#"ネームスペース {string} のラベル {string} が {string} である"#,
            example: r#"ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である"#,
            order: &[0, 1, 2],
        },
        build: |a| {
            cluster(ClusterCheck::NamespaceLabel {
                namespace: a.text(0),
                label: a.text(1),
                value: Some(a.text(2)),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a namespace lacks a label",
        en: Sentence {
            expr: r#"the namespace {string} should not have the label {string}"#,
            example: r#"the namespace "legacy" should not have the label "istio-injection""#,
            order: &[0, 1],
        },
        ja: Sentence {
            expr: r#"ネームスペース {string} にラベル {string} がない"#,
            example: r#"ネームスペース "legacy" にラベル "istio-injection" がない"#,
            order: &[0, 1],
        },
        build: |a| {
            cluster(ClusterCheck::NamespaceLabel {
                namespace: a.text(0),
                label: a.text(1),
                value: None,
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query on one object of a namespace (`kubectl get -n NS TYPE NAME -o json`) equals a value; an object that is not there fails",
        en: Sentence {
            expr: r#"the query {string} on the cluster's {string} {string} in namespace {string} should equal {value}"#,
            example: r#"the query '[.spec.subsets[].name]' on the cluster's "DestinationRule" "shop" in namespace "shop-lab" should equal ["v1", "v2"]"#,
            order: &[3, 0, 1, 2, 4],
        },
        ja: Sentence {
            expr: r#"クラスターのネームスペース {string} の {string} {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターのネームスペース "shop-lab" の "DestinationRule" "shop" に対するクエリ '[.spec.subsets[].name]' の値が ["v1", "v2"] と等しい"#,
            order: &[2, 0, 1, 3, 4],
        },
        build: |a| {
            cluster(ClusterCheck::ObjectQuery {
                resource: a.text(0),
                name: a.text(1),
                namespace: Some(a.text(2)),
                query: a.text(3),
                expect: Expect::Equals(a.value(4)?),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a jq query on one object without a namespace (a Namespace, a CRD, a webhook configuration) equals a value",
        en: Sentence {
            expr: r#"the query {string} on the cluster's {string} {string} should equal {value}"#,
            example: r#"the query '.metadata.labels["istio-injection"]' on the cluster's "Namespace" "mesh-lab" should equal "enabled""#,
            order: &[2, 0, 1, 3],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} {string} に対するクエリ {string} の値が {value} と等しい"#,
            example: r#"クラスターの "Namespace" "mesh-lab" に対するクエリ '.metadata.labels["istio-injection"]' の値が "enabled" と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::ObjectQuery {
                resource: a.text(0),
                name: a.text(1),
                namespace: None,
                query: a.text(2),
                expect: Expect::Equals(a.value(3)?),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cluster: a query over the cluster equals another query over the cluster",
        en: Sentence {
            expr: r#"the query {string} over the cluster's {string} should equal the query {string} over the cluster's {string}"#,
            example: r#"the query '[.items[] | select(.metadata.name == "web") | .spec.ports[0].targetPort]' over the cluster's "services" should equal the query '[.items[] | .spec.portLevelMtls | keys[] | tonumber]' over the cluster's "peerauthentications""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"クラスターの {string} に対するクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#,
            example: r#"クラスターの "services" に対するクエリ '[.items[] | select(.metadata.name == "web") | .spec.ports[0].targetPort]' の値が クラスターの "peerauthentications" に対するクエリ '[.items[] | .spec.portLevelMtls | keys[] | tonumber]' の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::ClusterEqualsCluster {
                resource: a.text(0),
                query: a.text(1),
                other_resource: a.text(2),
                other_query: a.text(3),
            })
        },
    },
    Phrase {
        ty: Then,
        what: "cross-artifact: a query on a file equals a query over the cluster",
        en: Sentence {
            expr: r#"the query {string} on {string} should equal the query {string} over the cluster's {string}"#,
            example: r#"the query ".istio_crds" on "/root/lab/r.json" should equal the query '[.items[] | select(.spec.group | test("istio.io"))] | length' over the cluster's "customresourcedefinitions""#,
            order: &[1, 0, 3, 2],
        },
        ja: Sentence {
            expr: r#"{string} のクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#,
            example: r#""/root/lab/r.json" のクエリ ".istio_crds" の値が クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))] | length' の値と等しい"#,
            order: &[0, 1, 2, 3],
        },
        build: |a| {
            cluster(ClusterCheck::FileEqualsCluster {
                file: a.path(0),
                query: a.text(1),
                resource: a.text(2),
                cluster_query: a.text(3),
            })
        },
    },
];
