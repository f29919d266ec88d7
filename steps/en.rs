//! The English phrases: one binding per phrase, each handing its language to the shared handler.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};

use super::LabWorld;
use super::handlers as h;
use super::params::{JsonValue, JsonValues, TypeName};
use crate::checks::Exit;
use crate::cluster::checks::Expect;
use crate::model::Lang::En;

#[given(expr = "the lab directory {string}")]
fn lab_directory(w: &mut LabWorld, dir: String) -> Result<(), String> {
    h::lab_directory(w, En, &dir)
}

#[given(expr = "the fixture {string} is placed at {string}")]
fn fixture(w: &mut LabWorld, src: String, dst: String) -> Result<(), String> {
    h::fixture(w, En, &src, &dst)
}

#[when("the learner runs:")]
async fn learner_runs(w: &mut LabWorld, step: &Step) -> Result<(), String> {
    h::learner_runs(w, En, step).await
}

#[then("these checks should reject it:")]
async fn checks_reject(w: &mut LabWorld, step: &Step) -> Result<(), String> {
    h::checks_reject(w, En, step).await
}

#[then("the last command should succeed")]
fn succeeds(w: &mut LabWorld) -> Result<(), String> {
    h::last_exit(w, En, Exit::Success)
}

#[then("the last command should fail")]
fn fails(w: &mut LabWorld) -> Result<(), String> {
    h::last_exit(w, En, Exit::Failure)
}

#[then(expr = "the last command should exit with {int}")]
fn exits_with(w: &mut LabWorld, code: i32) -> Result<(), String> {
    h::last_exit(w, En, Exit::Code(code))
}

#[then(expr = "its output should contain {string}")]
fn output_contains(w: &mut LabWorld, text: String) -> Result<(), String> {
    h::output_contains(w, En, &text)
}

#[then(expr = "its output should match {string}")]
fn output_matches(w: &mut LabWorld, re: String) -> Result<(), String> {
    h::output_matches(w, En, &re)
}

#[then(expr = "the file {string} should exist")]
fn file_exists(w: &mut LabWorld, p: String) -> Result<(), String> {
    h::file_exists(w, En, &p)
}

#[then(expr = "the file {string} should not be empty")]
fn file_non_empty(w: &mut LabWorld, p: String) -> Result<(), String> {
    h::file_non_empty(w, En, &p)
}

#[then(expr = "the file {string} should contain {string}")]
fn file_contains(w: &mut LabWorld, p: String, text: String) -> Result<(), String> {
    h::file_contains(w, En, &p, &text)
}

#[then(expr = "the file {string} should not contain {string}")]
fn file_lacks(w: &mut LabWorld, p: String, text: String) -> Result<(), String> {
    h::file_lacks(w, En, &p, &text)
}

#[then(expr = "the file {string} should match {string}")]
fn file_matches(w: &mut LabWorld, p: String, re: String) -> Result<(), String> {
    h::file_matches(w, En, &p, &re)
}

#[then(expr = "the file {string} should have at least {int} lines matching {string}")]
fn lines_matching(w: &mut LabWorld, p: String, n: usize, re: String) -> Result<(), String> {
    h::lines_matching(w, En, &p, n, &re)
}

#[then(expr = "the file {string} should have exactly {int} line(s)")]
fn line_count(w: &mut LabWorld, p: String, n: usize) -> Result<(), String> {
    h::line_count(w, En, &p, n)
}

#[then(expr = "the query {string} on {string} should equal {value}")]
fn query_equals(w: &mut LabWorld, q: String, f: String, v: JsonValue) -> Result<(), String> {
    h::query(w, En, &f, &q, Expect::Equals(v.0))
}

#[then(expr = "the query {string} on {string} should include {values}")]
fn query_includes(w: &mut LabWorld, q: String, f: String, v: JsonValues) -> Result<(), String> {
    h::query(w, En, &f, &q, Expect::Includes(v.0))
}

#[then(expr = "the query {string} on {string} should yield at least {int} result(s)")]
fn query_count(w: &mut LabWorld, q: String, f: String, n: usize) -> Result<(), String> {
    h::query(w, En, &f, &q, Expect::CountAtLeast(n))
}

#[then(expr = "the query {string} on {string} should be a(n) {jsontype}")]
fn query_type(w: &mut LabWorld, q: String, f: String, t: TypeName) -> Result<(), String> {
    h::query_type(w, En, &f, &q, t.0)
}

#[then(expr = "the query {string} on {string} should equal the query {string} on {string}")]
fn query_equals_query(
    w: &mut LabWorld,
    q: String,
    f: String,
    q2: String,
    f2: String,
) -> Result<(), String> {
    h::query_equals_query(w, En, (&f, &q), (&f2, &q2))
}

#[then(expr = "the notes {string} should mention any of {values}")]
fn mentions_any(w: &mut LabWorld, p: String, v: JsonValues) -> Result<(), String> {
    h::mentions(w, En, &p, v.0, false)
}

#[then(expr = "the notes {string} should mention all of {values}")]
fn mentions_all(w: &mut LabWorld, p: String, v: JsonValues) -> Result<(), String> {
    h::mentions(w, En, &p, v.0, true)
}

#[then(expr = "the cluster should have a(n) {string} named {string}")]
async fn resource_exists(w: &mut LabWorld, kind: String, name: String) -> Result<(), String> {
    h::resource_exists(w, En, &kind, &name, None).await
}

#[then(expr = "the cluster should have a(n) {string} named {string} in namespace {string}")]
async fn resource_exists_in(
    w: &mut LabWorld,
    kind: String,
    name: String,
    ns: String,
) -> Result<(), String> {
    h::resource_exists(w, En, &kind, &name, Some(&ns)).await
}

#[then(expr = "the CRD {string} should be established")]
async fn crd_established(w: &mut LabWorld, name: String) -> Result<(), String> {
    h::crd_established(w, En, &name).await
}

#[then(expr = "the query {string} over the cluster's {string} should equal {value}")]
async fn cluster_query_equals(
    w: &mut LabWorld,
    q: String,
    r: String,
    v: JsonValue,
) -> Result<(), String> {
    h::cluster_query(w, En, &r, &q, Expect::Equals(v.0)).await
}

#[then(expr = "the query {string} over the cluster's {string} should include {values}")]
async fn cluster_query_includes(
    w: &mut LabWorld,
    q: String,
    r: String,
    v: JsonValues,
) -> Result<(), String> {
    h::cluster_query(w, En, &r, &q, Expect::Includes(v.0)).await
}

#[then(
    expr = "the query {string} over the cluster's {string} should yield at least {int} result(s)"
)]
async fn cluster_query_count(
    w: &mut LabWorld,
    q: String,
    r: String,
    n: usize,
) -> Result<(), String> {
    h::cluster_query(w, En, &r, &q, Expect::CountAtLeast(n)).await
}

#[then(expr = "the namespace {string} should have the label {string} set to {string}")]
async fn namespace_label(
    w: &mut LabWorld,
    ns: String,
    label: String,
    value: String,
) -> Result<(), String> {
    h::namespace_label(w, En, &ns, &label, Some(&value)).await
}

#[then(expr = "the namespace {string} should not have the label {string}")]
async fn namespace_no_label(w: &mut LabWorld, ns: String, label: String) -> Result<(), String> {
    h::namespace_label(w, En, &ns, &label, None).await
}

#[then(
    expr = "the query {string} on {string} should equal the query {string} over the cluster's {string}"
)]
async fn file_equals_cluster(
    w: &mut LabWorld,
    q: String,
    f: String,
    q2: String,
    r: String,
) -> Result<(), String> {
    h::file_equals_cluster(w, En, (&f, &q), (&r, &q2)).await
}

#[then(expr = "the file {string} should equal the output of {string}")]
async fn file_equals_output(w: &mut LabWorld, f: String, c: String) -> Result<(), String> {
    h::file_equals_output(w, En, &f, &c).await
}

#[then(expr = "the file {string} should contain every line of the output of {string}")]
async fn file_has_output_lines(w: &mut LabWorld, f: String, c: String) -> Result<(), String> {
    h::file_has_output_lines(w, En, &f, &c).await
}

#[then(
    expr = "the query {string} on {string} should equal the query {string} on the output of {string}"
)]
async fn query_equals_output(
    w: &mut LabWorld,
    q: String,
    f: String,
    q2: String,
    c: String,
) -> Result<(), String> {
    h::query_equals_output(w, En, (&f, &q), (&c, &q2)).await
}
