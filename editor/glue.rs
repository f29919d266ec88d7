//! Step definitions for editors, generated from steps/phrases.rs by
//! `labcheck vocabulary --glue > editor/glue.rs`; do not edit (a test keeps it current).
//! labcheck does not compile this file: the Cucumber Language Server reads it to know
//! labcheck's steps (README, "Editor support").

#[derive(Parameter)]
#[param(name = "value", regex = "\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|-?\\d+(?:\\.\\d+)?|true|false|null|\\[.*\\]|\\{.*\\}")]
struct Value;

#[derive(Parameter)]
#[param(name = "values", regex = "(?:\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|-?\\d+(?:\\.\\d+)?|true|false|null)(?:\\s*[,、]\\s*(?:\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|-?\\d+(?:\\.\\d+)?|true|false|null))*")]
struct Values;

#[derive(Parameter)]
#[param(name = "jsontype", regex = "string|number|array|object|boolean|null|文字列|数値|配列|オブジェクト|真偽値")]
struct Jsontype;

// a lab directory: exists in the sandbox; commands start in the first one
#[given(expr = r#"the lab directory {string}"#)]
fn phrase_0_en() {}
#[given(expr = r#"ラボのディレクトリ {string} を使う"#)]
fn phrase_0_ja() {}

// a fixture from the repository copied into the sandbox
#[given(expr = r#"the fixture {string} is placed at {string}"#)]
fn phrase_1_en() {}
#[given(expr = r#"フィクスチャ {string} を {string} に置く"#)]
fn phrase_1_ja() {}

// the cell's Istio version unpacked as a release: samples/, manifests/, bin/istioctl
#[given(expr = r#"Istio's release is unpacked at {string}"#)]
fn phrase_2_en() {}
#[given(expr = r#"Istio のリリースを {string} に展開する"#)]
fn phrase_2_ja() {}

// an upgrade cell's older Istio version unpacked as a release: samples/, manifests/, bin/istioctl
#[given(expr = r#"Istio's release to upgrade from is unpacked at {string}"#)]
fn phrase_3_en() {}
#[given(expr = r#"アップグレード元の Istio のリリースを {string} に展開する"#)]
fn phrase_3_ja() {}

// an upgrade cell's newer Istio version unpacked as a release: samples/, manifests/, bin/istioctl
#[given(expr = r#"Istio's release to upgrade to is unpacked at {string}"#)]
fn phrase_4_en() {}
#[given(expr = r#"アップグレード先の Istio のリリースを {string} に展開する"#)]
fn phrase_4_ja() {}

// the learner's commands (docstring), run by bash in the cell
#[when(expr = r#"the learner runs:"#)]
fn phrase_5_en() {}
#[when(expr = r#"学習者が次のコマンドを実行する"#)]
fn phrase_5_ja() {}

// the learner's commands in a new terminal: nothing of the earlier steps' shell
#[when(expr = r#"the learner runs in a new shell:"#)]
fn phrase_6_en() {}
#[when(expr = r#"学習者が新しいシェルで次のコマンドを実行する"#)]
fn phrase_6_ja() {}

// the learner's commands, run again (in the same shell, a second apart) until the scenario's checks pass or the time is up, as a learner re-sends a request
#[when(expr = r#"the learner runs, until the checks pass or {int} seconds are up:"#)]
fn phrase_7_en() {}
#[when(expr = r#"学習者がチェックに合格するまで最大 {int} 秒、次のコマンドを繰り返し実行する"#)]
fn phrase_7_ja() {}

// mistake scenario: each listed check (docstring) must fail
#[then(expr = r#"these checks should reject it:"#)]
fn phrase_8_en() {}
#[then(expr = r#"次のチェックで不合格になる"#)]
fn phrase_8_ja() {}

// the last command exited 0
#[then(expr = r#"the last command should succeed"#)]
fn phrase_9_en() {}
#[then(expr = r#"最後のコマンドが成功する"#)]
fn phrase_9_ja() {}

// the last command exited non-zero
#[then(expr = r#"the last command should fail"#)]
fn phrase_10_en() {}
#[then(expr = r#"最後のコマンドが失敗する"#)]
fn phrase_10_ja() {}

// the last command exited with N
#[then(expr = r#"the last command should exit with {int}"#)]
fn phrase_11_en() {}
#[then(expr = r#"最後のコマンドの終了コードが {int} である"#)]
fn phrase_11_ja() {}

// stdout or stderr of the last command contains a text
#[then(expr = r#"its output should contain {string}"#)]
fn phrase_12_en() {}
#[then(expr = r#"出力に {string} が含まれる"#)]
fn phrase_12_ja() {}

// stdout or stderr of the last command matches a regex
#[then(expr = r#"its output should match {string}"#)]
fn phrase_13_en() {}
#[then(expr = r#"出力が {string} にマッチする"#)]
fn phrase_13_ja() {}

// stdout or stderr of the last command does not contain a text
#[then(expr = r#"its output should not contain {string}"#)]
fn phrase_14_en() {}
#[then(expr = r#"出力に {string} が含まれない"#)]
fn phrase_14_ja() {}

// stdout or stderr of the last command does not match a regex
#[then(expr = r#"its output should not match {string}"#)]
fn phrase_15_en() {}
#[then(expr = r#"出力が {string} にマッチしない"#)]
fn phrase_15_ja() {}

// a file exists
#[then(expr = r#"the file {string} should exist"#)]
fn phrase_16_en() {}
#[then(expr = r#"the file {string} should exist within {int} second(s)"#)]
fn phrase_16_en_within() {}
#[then(expr = r#"ファイル {string} が存在する"#)]
fn phrase_16_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} が存在する"#)]
fn phrase_16_ja_within() {}

// a file does not exist
#[then(expr = r#"the file {string} should not exist"#)]
fn phrase_17_en() {}
#[then(expr = r#"the file {string} should not exist within {int} second(s)"#)]
fn phrase_17_en_within() {}
#[then(expr = r#"ファイル {string} が存在しない"#)]
fn phrase_17_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} が存在しない"#)]
fn phrase_17_ja_within() {}

// a file has non-blank content
#[then(expr = r#"the file {string} should not be empty"#)]
fn phrase_18_en() {}
#[then(expr = r#"the file {string} should not be empty within {int} second(s)"#)]
fn phrase_18_en_within() {}
#[then(expr = r#"ファイル {string} が空でない"#)]
fn phrase_18_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} が空でない"#)]
fn phrase_18_ja_within() {}

// a file contains a text
#[then(expr = r#"the file {string} should contain {string}"#)]
fn phrase_19_en() {}
#[then(expr = r#"the file {string} should contain {string} within {int} second(s)"#)]
fn phrase_19_en_within() {}
#[then(expr = r#"ファイル {string} に {string} が含まれる"#)]
fn phrase_19_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} に {string} が含まれる"#)]
fn phrase_19_ja_within() {}

// a file does not contain a text
#[then(expr = r#"the file {string} should not contain {string}"#)]
fn phrase_20_en() {}
#[then(expr = r#"the file {string} should not contain {string} within {int} second(s)"#)]
fn phrase_20_en_within() {}
#[then(expr = r#"ファイル {string} に {string} が含まれない"#)]
fn phrase_20_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} に {string} が含まれない"#)]
fn phrase_20_ja_within() {}

// a file matches a regex
#[then(expr = r#"the file {string} should match {string}"#)]
fn phrase_21_en() {}
#[then(expr = r#"the file {string} should match {string} within {int} second(s)"#)]
fn phrase_21_en_within() {}
#[then(expr = r#"ファイル {string} が {string} にマッチする"#)]
fn phrase_21_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} が {string} にマッチする"#)]
fn phrase_21_ja_within() {}

// at least N lines match a regex
#[then(expr = r#"the file {string} should have at least {int} lines matching {string}"#)]
fn phrase_22_en() {}
#[then(expr = r#"the file {string} should have at least {int} lines matching {string} within {int} second(s)"#)]
fn phrase_22_en_within() {}
#[then(expr = r#"ファイル {string} に {string} にマッチする行が {int} 行以上ある"#)]
fn phrase_22_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} に {string} にマッチする行が {int} 行以上ある"#)]
fn phrase_22_ja_within() {}

// exactly N lines
#[then(expr = r#"the file {string} should have exactly {int} line(s)"#)]
fn phrase_23_en() {}
#[then(expr = r#"the file {string} should have exactly {int} line(s) within {int} second(s)"#)]
fn phrase_23_en_within() {}
#[then(expr = r#"ファイル {string} がちょうど {int} 行である"#)]
fn phrase_23_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} がちょうど {int} 行である"#)]
fn phrase_23_ja_within() {}

// a jq query on a YAML/JSON file gives one value equal to a JSON literal
#[then(expr = r#"the query {string} on {string} should equal {value}"#)]
fn phrase_24_en() {}
#[then(expr = r#"the query {string} on {string} should equal {value} within {int} second(s)"#)]
fn phrase_24_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が {value} と等しい"#)]
fn phrase_24_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が {value} と等しい"#)]
fn phrase_24_ja_within() {}

// a query's results include all listed values
#[then(expr = r#"the query {string} on {string} should include {values}"#)]
fn phrase_25_en() {}
#[then(expr = r#"the query {string} on {string} should include {values} within {int} second(s)"#)]
fn phrase_25_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の結果に {values} がすべて含まれる"#)]
fn phrase_25_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の結果に {values} がすべて含まれる"#)]
fn phrase_25_ja_within() {}

// a query gives at least N results (an array counts its elements)
#[then(expr = r#"the query {string} on {string} should yield at least {int} result(s)"#)]
fn phrase_26_en() {}
#[then(expr = r#"the query {string} on {string} should yield at least {int} result(s) within {int} second(s)"#)]
fn phrase_26_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の結果が {int} 個以上ある"#)]
fn phrase_26_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の結果が {int} 個以上ある"#)]
fn phrase_26_ja_within() {}

// a query does not give exactly this value
#[then(expr = r#"the query {string} on {string} should not equal {value}"#)]
fn phrase_27_en() {}
#[then(expr = r#"the query {string} on {string} should not equal {value} within {int} second(s)"#)]
fn phrase_27_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が {value} と等しくない"#)]
fn phrase_27_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が {value} と等しくない"#)]
fn phrase_27_ja_within() {}

// a query's results include none of the listed values
#[then(expr = r#"the query {string} on {string} should include none of {values}"#)]
fn phrase_28_en() {}
#[then(expr = r#"the query {string} on {string} should include none of {values} within {int} second(s)"#)]
fn phrase_28_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の結果に {values} のどれも含まれない"#)]
fn phrase_28_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の結果に {values} のどれも含まれない"#)]
fn phrase_28_ja_within() {}

// a query gives at most N results
#[then(expr = r#"the query {string} on {string} should yield at most {int} result(s)"#)]
fn phrase_29_en() {}
#[then(expr = r#"the query {string} on {string} should yield at most {int} result(s) within {int} second(s)"#)]
fn phrase_29_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の結果が {int} 個以下である"#)]
fn phrase_29_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の結果が {int} 個以下である"#)]
fn phrase_29_ja_within() {}

// a key is present with a JSON type
#[then(expr = r#"the query {string} on {string} should be a(n) {jsontype}"#)]
fn phrase_30_en() {}
#[then(expr = r#"the query {string} on {string} should be a(n) {jsontype} within {int} second(s)"#)]
fn phrase_30_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が {jsontype} である"#)]
fn phrase_30_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が {jsontype} である"#)]
fn phrase_30_ja_within() {}

// cross-artifact: a query on one file equals a query on another
#[then(expr = r#"the query {string} on {string} should equal the query {string} on {string}"#)]
fn phrase_31_en() {}
#[then(expr = r#"the query {string} on {string} should equal the query {string} on {string} within {int} second(s)"#)]
fn phrase_31_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が {string} のクエリ {string} の値と等しい"#)]
fn phrase_31_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が {string} のクエリ {string} の値と等しい"#)]
fn phrase_31_ja_within() {}

// a note mentions any of the words (case-insensitive)
#[then(expr = r#"the notes {string} should mention any of {values}"#)]
fn phrase_32_en() {}
#[then(expr = r#"the notes {string} should mention any of {values} within {int} second(s)"#)]
fn phrase_32_en_within() {}
#[then(expr = r#"メモ {string} が {values} のいずれかに触れている"#)]
fn phrase_32_ja() {}
#[then(expr = r#"{int} 秒以内に メモ {string} が {values} のいずれかに触れている"#)]
fn phrase_32_ja_within() {}

// a note mentions all of the words (case-insensitive)
#[then(expr = r#"the notes {string} should mention all of {values}"#)]
fn phrase_33_en() {}
#[then(expr = r#"the notes {string} should mention all of {values} within {int} second(s)"#)]
fn phrase_33_en_within() {}
#[then(expr = r#"メモ {string} が {values} のすべてに触れている"#)]
fn phrase_33_ja() {}
#[then(expr = r#"{int} 秒以内に メモ {string} が {values} のすべてに触れている"#)]
fn phrase_33_ja_within() {}

// cluster: a resource of any type (kind, plural or plural.group) exists
#[then(expr = r#"the cluster should have a(n) {string} named {string}"#)]
fn phrase_34_en() {}
#[then(expr = r#"the cluster should have a(n) {string} named {string} within {int} second(s)"#)]
fn phrase_34_en_within() {}
#[then(expr = r#"クラスターに {string} {string} が存在する"#)]
fn phrase_34_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターに {string} {string} が存在する"#)]
fn phrase_34_ja_within() {}

// cluster: a namespaced resource exists
#[then(expr = r#"the cluster should have a(n) {string} named {string} in namespace {string}"#)]
fn phrase_35_en() {}
#[then(expr = r#"the cluster should have a(n) {string} named {string} in namespace {string} within {int} second(s)"#)]
fn phrase_35_en_within() {}
#[then(expr = r#"クラスターのネームスペース {string} に {string} {string} が存在する"#)]
fn phrase_35_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターのネームスペース {string} に {string} {string} が存在する"#)]
fn phrase_35_ja_within() {}

// cluster: no resource of a type has the name
#[then(expr = r#"the cluster should not have a(n) {string} named {string}"#)]
fn phrase_36_en() {}
#[then(expr = r#"the cluster should not have a(n) {string} named {string} within {int} second(s)"#)]
fn phrase_36_en_within() {}
#[then(expr = r#"クラスターに {string} {string} が存在しない"#)]
fn phrase_36_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターに {string} {string} が存在しない"#)]
fn phrase_36_ja_within() {}

// cluster: no namespaced resource has the name
#[then(expr = r#"the cluster should not have a(n) {string} named {string} in namespace {string}"#)]
fn phrase_37_en() {}
#[then(expr = r#"the cluster should not have a(n) {string} named {string} in namespace {string} within {int} second(s)"#)]
fn phrase_37_en_within() {}
#[then(expr = r#"クラスターのネームスペース {string} に {string} {string} が存在しない"#)]
fn phrase_37_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターのネームスペース {string} に {string} {string} が存在しない"#)]
fn phrase_37_ja_within() {}

// cluster: a CRD has condition Established=True
#[then(expr = r#"the CRD {string} should be established"#)]
fn phrase_38_en() {}
#[then(expr = r#"the CRD {string} should be established within {int} second(s)"#)]
fn phrase_38_en_within() {}
#[then(expr = r#"CRD {string} が Established である"#)]
fn phrase_38_ja() {}
#[then(expr = r#"{int} 秒以内に CRD {string} が Established である"#)]
fn phrase_38_ja_within() {}

// cluster: a jq query over a list of resources (`kubectl get -A -o json` shape) equals a value
#[then(expr = r#"the query {string} over the cluster's {string} should equal {value}"#)]
fn phrase_39_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should equal {value} within {int} second(s)"#)]
fn phrase_39_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_39_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_39_ja_within() {}

// cluster: such a query's results include values
#[then(expr = r#"the query {string} over the cluster's {string} should include {values}"#)]
fn phrase_40_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should include {values} within {int} second(s)"#)]
fn phrase_40_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の結果に {values} がすべて含まれる"#)]
fn phrase_40_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の結果に {values} がすべて含まれる"#)]
fn phrase_40_ja_within() {}

// cluster: such a query gives at least N results
#[then(expr = r#"the query {string} over the cluster's {string} should yield at least {int} result(s)"#)]
fn phrase_41_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should yield at least {int} result(s) within {int} second(s)"#)]
fn phrase_41_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以上ある"#)]
fn phrase_41_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の結果が {int} 個以上ある"#)]
fn phrase_41_ja_within() {}

// cluster: such a query does not give exactly this value
#[then(expr = r#"the query {string} over the cluster's {string} should not equal {value}"#)]
fn phrase_42_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should not equal {value} within {int} second(s)"#)]
fn phrase_42_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の値が {value} と等しくない"#)]
fn phrase_42_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の値が {value} と等しくない"#)]
fn phrase_42_ja_within() {}

// cluster: such a query's results include none of the values
#[then(expr = r#"the query {string} over the cluster's {string} should include none of {values}"#)]
fn phrase_43_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should include none of {values} within {int} second(s)"#)]
fn phrase_43_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の結果に {values} のどれも含まれない"#)]
fn phrase_43_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の結果に {values} のどれも含まれない"#)]
fn phrase_43_ja_within() {}

// cluster: such a query gives at most N results
#[then(expr = r#"the query {string} over the cluster's {string} should yield at most {int} result(s)"#)]
fn phrase_44_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should yield at most {int} result(s) within {int} second(s)"#)]
fn phrase_44_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の結果が {int} 個以下である"#)]
fn phrase_44_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の結果が {int} 個以下である"#)]
fn phrase_44_ja_within() {}

// cluster: a namespace label has a value
#[then(expr = r#"the namespace {string} should have the label {string} set to {string}"#)]
fn phrase_45_en() {}
#[then(expr = r#"the namespace {string} should have the label {string} set to {string} within {int} second(s)"#)]
fn phrase_45_en_within() {}
#[then(expr = r#"ネームスペース {string} のラベル {string} が {string} である"#)]
fn phrase_45_ja() {}
#[then(expr = r#"{int} 秒以内に ネームスペース {string} のラベル {string} が {string} である"#)]
fn phrase_45_ja_within() {}

// cluster: a namespace lacks a label
#[then(expr = r#"the namespace {string} should not have the label {string}"#)]
fn phrase_46_en() {}
#[then(expr = r#"the namespace {string} should not have the label {string} within {int} second(s)"#)]
fn phrase_46_en_within() {}
#[then(expr = r#"ネームスペース {string} にラベル {string} がない"#)]
fn phrase_46_ja() {}
#[then(expr = r#"{int} 秒以内に ネームスペース {string} にラベル {string} がない"#)]
fn phrase_46_ja_within() {}

// cluster: a jq query on one object of a namespace (`kubectl get -n NS TYPE NAME -o json`) equals a value; an object that is not there fails
#[then(expr = r#"the query {string} on the cluster's {string} {string} in namespace {string} should equal {value}"#)]
fn phrase_47_en() {}
#[then(expr = r#"the query {string} on the cluster's {string} {string} in namespace {string} should equal {value} within {int} second(s)"#)]
fn phrase_47_en_within() {}
#[then(expr = r#"クラスターのネームスペース {string} の {string} {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_47_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターのネームスペース {string} の {string} {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_47_ja_within() {}

// cluster: a jq query on one object without a namespace (a Namespace, a CRD, a webhook configuration) equals a value
#[then(expr = r#"the query {string} on the cluster's {string} {string} should equal {value}"#)]
fn phrase_48_en() {}
#[then(expr = r#"the query {string} on the cluster's {string} {string} should equal {value} within {int} second(s)"#)]
fn phrase_48_en_within() {}
#[then(expr = r#"クラスターの {string} {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_48_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} {string} に対するクエリ {string} の値が {value} と等しい"#)]
fn phrase_48_ja_within() {}

// cluster: a query over the cluster equals another query over the cluster
#[then(expr = r#"the query {string} over the cluster's {string} should equal the query {string} over the cluster's {string}"#)]
fn phrase_49_en() {}
#[then(expr = r#"the query {string} over the cluster's {string} should equal the query {string} over the cluster's {string} within {int} second(s)"#)]
fn phrase_49_en_within() {}
#[then(expr = r#"クラスターの {string} に対するクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#)]
fn phrase_49_ja() {}
#[then(expr = r#"{int} 秒以内に クラスターの {string} に対するクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#)]
fn phrase_49_ja_within() {}

// cross-artifact: a query on a file equals a query over the cluster
#[then(expr = r#"the query {string} on {string} should equal the query {string} over the cluster's {string}"#)]
fn phrase_50_en() {}
#[then(expr = r#"the query {string} on {string} should equal the query {string} over the cluster's {string} within {int} second(s)"#)]
fn phrase_50_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#)]
fn phrase_50_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が クラスターの {string} に対するクエリ {string} の値と等しい"#)]
fn phrase_50_ja_within() {}

// oracle: a file equals the stdout of a command the grader runs in the cell at check time (trailing whitespace ignored)
#[then(expr = r#"the file {string} should equal the output of {string}"#)]
fn phrase_51_en() {}
#[then(expr = r#"the file {string} should equal the output of {string} within {int} second(s)"#)]
fn phrase_51_en_within() {}
#[then(expr = r#"ファイル {string} が コマンド {string} の出力と等しい"#)]
fn phrase_51_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} が コマンド {string} の出力と等しい"#)]
fn phrase_51_ja_within() {}

// oracle: a file holds every line of the grader's command's output
#[then(expr = r#"the file {string} should contain every line of the output of {string}"#)]
fn phrase_52_en() {}
#[then(expr = r#"the file {string} should contain every line of the output of {string} within {int} second(s)"#)]
fn phrase_52_en_within() {}
#[then(expr = r#"ファイル {string} に コマンド {string} の出力のすべての行が含まれる"#)]
fn phrase_52_ja() {}
#[then(expr = r#"{int} 秒以内に ファイル {string} に コマンド {string} の出力のすべての行が含まれる"#)]
fn phrase_52_ja_within() {}

// oracle: the output (stdout, then stderr) of a command the grader runs in the cell contains a text, whatever its exit code; with a wait, run again until it does
#[then(expr = r#"the output of {string} should contain {string}"#)]
fn phrase_53_en() {}
#[then(expr = r#"the output of {string} should contain {string} within {int} second(s)"#)]
fn phrase_53_en_within() {}
#[then(expr = r#"コマンド {string} の出力に {string} が含まれる"#)]
fn phrase_53_ja() {}
#[then(expr = r#"{int} 秒以内に コマンド {string} の出力に {string} が含まれる"#)]
fn phrase_53_ja_within() {}

// oracle: the output of a command the grader runs in the cell matches a regex
#[then(expr = r#"the output of {string} should match {string}"#)]
fn phrase_54_en() {}
#[then(expr = r#"the output of {string} should match {string} within {int} second(s)"#)]
fn phrase_54_en_within() {}
#[then(expr = r#"コマンド {string} の出力が {string} にマッチする"#)]
fn phrase_54_ja() {}
#[then(expr = r#"{int} 秒以内に コマンド {string} の出力が {string} にマッチする"#)]
fn phrase_54_ja_within() {}

// oracle: the output of a command the grader runs in the cell does not contain a text (never on cut output)
#[then(expr = r#"the output of {string} should not contain {string}"#)]
fn phrase_55_en() {}
#[then(expr = r#"the output of {string} should not contain {string} within {int} second(s)"#)]
fn phrase_55_en_within() {}
#[then(expr = r#"コマンド {string} の出力に {string} が含まれない"#)]
fn phrase_55_ja() {}
#[then(expr = r#"{int} 秒以内に コマンド {string} の出力に {string} が含まれない"#)]
fn phrase_55_ja_within() {}

// oracle: a query on a file equals a query on the grader's command's output (YAML or JSON)
#[then(expr = r#"the query {string} on {string} should equal the query {string} on the output of {string}"#)]
fn phrase_56_en() {}
#[then(expr = r#"the query {string} on {string} should equal the query {string} on the output of {string} within {int} second(s)"#)]
fn phrase_56_en_within() {}
#[then(expr = r#"{string} のクエリ {string} の値が コマンド {string} の出力のクエリ {string} の値と等しい"#)]
fn phrase_56_ja() {}
#[then(expr = r#"{int} 秒以内に {string} のクエリ {string} の値が コマンド {string} の出力のクエリ {string} の値と等しい"#)]
fn phrase_56_ja_within() {}
