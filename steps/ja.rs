//! The Japanese phrases (`# language: ja`): the same handlers as the English ones.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};

use super::LabWorld;
use super::handlers as h;
use super::params::{JsonValue, JsonValues, TypeName};
use crate::checks::Exit;
use crate::cluster::checks::Expect;
use crate::model::Lang::Ja;

#[given(expr = "ラボのディレクトリ {string} を使う")]
fn lab_directory(w: &mut LabWorld, dir: String) -> Result<(), String> {
    h::lab_directory(w, Ja, &dir)
}

#[given(expr = "フィクスチャ {string} を {string} に置く")]
fn fixture(w: &mut LabWorld, src: String, dst: String) -> Result<(), String> {
    h::fixture(w, Ja, &src, &dst)
}

#[when("学習者が次のコマンドを実行する")]
async fn learner_runs(w: &mut LabWorld, step: &Step) -> Result<(), String> {
    h::learner_runs(w, Ja, step).await
}

#[then("次のチェックで不合格になる")]
async fn checks_reject(w: &mut LabWorld, step: &Step) -> Result<(), String> {
    h::checks_reject(w, Ja, step).await
}

#[then("最後のコマンドが成功する")]
fn succeeds(w: &mut LabWorld) -> Result<(), String> {
    h::last_exit(w, Ja, Exit::Success)
}

#[then("最後のコマンドが失敗する")]
fn fails(w: &mut LabWorld) -> Result<(), String> {
    h::last_exit(w, Ja, Exit::Failure)
}

#[then(expr = "最後のコマンドの終了コードが {int} である")]
fn exits_with(w: &mut LabWorld, code: i32) -> Result<(), String> {
    h::last_exit(w, Ja, Exit::Code(code))
}

#[then(expr = "出力に {string} が含まれる")]
fn output_contains(w: &mut LabWorld, text: String) -> Result<(), String> {
    h::output_contains(w, Ja, &text)
}

#[then(expr = "出力が {string} にマッチする")]
fn output_matches(w: &mut LabWorld, re: String) -> Result<(), String> {
    h::output_matches(w, Ja, &re)
}

#[then(expr = "ファイル {string} が存在する")]
fn file_exists(w: &mut LabWorld, p: String) -> Result<(), String> {
    h::file_exists(w, Ja, &p)
}

#[then(expr = "ファイル {string} が空でない")]
fn file_non_empty(w: &mut LabWorld, p: String) -> Result<(), String> {
    h::file_non_empty(w, Ja, &p)
}

#[then(expr = "ファイル {string} に {string} が含まれる")]
fn file_contains(w: &mut LabWorld, p: String, text: String) -> Result<(), String> {
    h::file_contains(w, Ja, &p, &text)
}

#[then(expr = "ファイル {string} に {string} が含まれない")]
fn file_lacks(w: &mut LabWorld, p: String, text: String) -> Result<(), String> {
    h::file_lacks(w, Ja, &p, &text)
}

#[then(expr = "ファイル {string} が {string} にマッチする")]
fn file_matches(w: &mut LabWorld, p: String, re: String) -> Result<(), String> {
    h::file_matches(w, Ja, &p, &re)
}

#[then(expr = "ファイル {string} に {string} にマッチする行が {int} 行以上ある")]
fn lines_matching(w: &mut LabWorld, p: String, re: String, n: usize) -> Result<(), String> {
    h::lines_matching(w, Ja, &p, n, &re)
}

#[then(expr = "ファイル {string} がちょうど {int} 行である")]
fn line_count(w: &mut LabWorld, p: String, n: usize) -> Result<(), String> {
    h::line_count(w, Ja, &p, n)
}

#[then(expr = "{string} のクエリ {string} の値が {value} と等しい")]
fn query_equals(w: &mut LabWorld, f: String, q: String, v: JsonValue) -> Result<(), String> {
    h::query(w, Ja, &f, &q, Expect::Equals(v.0))
}

#[then(expr = "{string} のクエリ {string} の結果に {values} がすべて含まれる")]
fn query_includes(w: &mut LabWorld, f: String, q: String, v: JsonValues) -> Result<(), String> {
    h::query(w, Ja, &f, &q, Expect::Includes(v.0))
}

#[then(expr = "{string} のクエリ {string} の結果が {int} 個以上ある")]
fn query_count(w: &mut LabWorld, f: String, q: String, n: usize) -> Result<(), String> {
    h::query(w, Ja, &f, &q, Expect::CountAtLeast(n))
}

#[then(expr = "{string} のクエリ {string} の値が {jsontype} である")]
fn query_type(w: &mut LabWorld, f: String, q: String, t: TypeName) -> Result<(), String> {
    h::query_type(w, Ja, &f, &q, t.0)
}

#[then(expr = "{string} のクエリ {string} の値が {string} のクエリ {string} の値と等しい")]
fn query_equals_query(
    w: &mut LabWorld,
    f: String,
    q: String,
    f2: String,
    q2: String,
) -> Result<(), String> {
    h::query_equals_query(w, Ja, (&f, &q), (&f2, &q2))
}

#[then(expr = "メモ {string} が {values} のいずれかに触れている")]
fn mentions_any(w: &mut LabWorld, p: String, v: JsonValues) -> Result<(), String> {
    h::mentions(w, Ja, &p, v.0, false)
}

#[then(expr = "メモ {string} が {values} のすべてに触れている")]
fn mentions_all(w: &mut LabWorld, p: String, v: JsonValues) -> Result<(), String> {
    h::mentions(w, Ja, &p, v.0, true)
}

#[then(expr = "クラスターに {string} {string} が存在する")]
async fn resource_exists(w: &mut LabWorld, kind: String, name: String) -> Result<(), String> {
    h::resource_exists(w, Ja, &kind, &name, None).await
}

#[then(expr = "クラスターのネームスペース {string} に {string} {string} が存在する")]
async fn resource_exists_in(
    w: &mut LabWorld,
    ns: String,
    kind: String,
    name: String,
) -> Result<(), String> {
    h::resource_exists(w, Ja, &kind, &name, Some(&ns)).await
}

#[then(expr = "CRD {string} が Established である")]
async fn crd_established(w: &mut LabWorld, name: String) -> Result<(), String> {
    h::crd_established(w, Ja, &name).await
}

#[then(expr = "クラスターの {string} に対するクエリ {string} の値が {value} と等しい")]
async fn cluster_query_equals(
    w: &mut LabWorld,
    r: String,
    q: String,
    v: JsonValue,
) -> Result<(), String> {
    h::cluster_query(w, Ja, &r, &q, Expect::Equals(v.0)).await
}

#[then(expr = "クラスターの {string} に対するクエリ {string} の結果に {values} がすべて含まれる")]
async fn cluster_query_includes(
    w: &mut LabWorld,
    r: String,
    q: String,
    v: JsonValues,
) -> Result<(), String> {
    h::cluster_query(w, Ja, &r, &q, Expect::Includes(v.0)).await
}

#[then(expr = "クラスターの {string} に対するクエリ {string} の結果が {int} 個以上ある")]
async fn cluster_query_count(
    w: &mut LabWorld,
    r: String,
    q: String,
    n: usize,
) -> Result<(), String> {
    h::cluster_query(w, Ja, &r, &q, Expect::CountAtLeast(n)).await
}

#[then(expr = "ネームスペース {string} のラベル {string} が {string} である")]
async fn namespace_label(
    w: &mut LabWorld,
    ns: String,
    label: String,
    value: String,
) -> Result<(), String> {
    h::namespace_label(w, Ja, &ns, &label, Some(&value)).await
}

#[then(expr = "ネームスペース {string} にラベル {string} がない")]
async fn namespace_no_label(w: &mut LabWorld, ns: String, label: String) -> Result<(), String> {
    h::namespace_label(w, Ja, &ns, &label, None).await
}

#[then(
    expr = "{string} のクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"
)]
async fn file_equals_cluster(
    w: &mut LabWorld,
    f: String,
    q: String,
    r: String,
    q2: String,
) -> Result<(), String> {
    h::file_equals_cluster(w, Ja, (&f, &q), (&r, &q2)).await
}

#[then(expr = "ファイル {string} が コマンド {string} の出力と等しい")]
async fn file_equals_output(w: &mut LabWorld, f: String, c: String) -> Result<(), String> {
    h::file_equals_output(w, Ja, &f, &c).await
}

#[then(expr = "ファイル {string} に コマンド {string} の出力のすべての行が含まれる")]
async fn file_has_output_lines(w: &mut LabWorld, f: String, c: String) -> Result<(), String> {
    h::file_has_output_lines(w, Ja, &f, &c).await
}

#[then(
    expr = "{string} のクエリ {string} の値が コマンド {string} の出力のクエリ {string} の値と等しい"
)]
async fn query_equals_output(
    w: &mut LabWorld,
    f: String,
    q: String,
    c: String,
    q2: String,
) -> Result<(), String> {
    h::query_equals_output(w, Ja, (&f, &q), (&c, &q2)).await
}
