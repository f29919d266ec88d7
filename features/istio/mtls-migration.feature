# language: ja
@メッシュ
機能: mTLS への移行: サイドカーのないネームスペースを残したまま、PERMISSIVE から STRICT へ
  メッシュに入っていないクライアントが残っているうちに、サーバー側を相互 TLS(mTLS)だけに切り替えると何が
  起きるのかを、Istio のリリースに入っているサンプル(httpbin と curl)で確かめます。ネームスペース foo と
  bar にはサイドカー付きの httpbin と curl を、legacy にはサイドカーのない curl を置きます。
  PeerAuthentication の既定は PERMISSIVE で、サーバーのサイドカーは mTLS と平文の両方を受け付けるので、
  最初はどこからのリクエストも通ります。foo に STRICT の PeerAuthentication を置くと、foo のサーバーは
  mTLS しか受け付けなくなり、サイドカーのない legacy からの平文のリクエストだけが拒否されます。最後に、
  ルートネームスペース istio-system に置いた PeerAuthentication がメッシュ全体に効くことを確かめます。

  PeerAuthentication は「受け取る側」のポリシーです。置くのはサーバー(httpbin)のネームスペースで、
  クライアントのネームスペースではありません。メッシュ全体に効かせるものは、ルートネームスペース
  (istio-system)に置いたときだけメッシュ全体のポリシーになります。ほかのネームスペースに置いた名前
  default のポリシーは、そのネームスペースにしか効きません。サイドカーどうしのリクエストは、ポリシーが
  なくても自動で mTLS になります(自動 mTLS)。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、containerd
  と runc、CNI、kube-proxy、CoreDNS)。Istio のリリースは /root/istio に展開してあり、samples/ は
  セルの Istio バージョンのものです。イメージはすべてこの環境でオフラインで作ったもので、httpbin の
  イメージ(mccutchen/go-httpbin)は go-httpbin を Go モジュールからビルドしたもの、curl のイメージ
  (curlimages/curl)は Debian の curl 7.88 です。サイドカーの Envoy はアップストリーム版です。

  この環境で測ったこと(Istio 1.31 と 1.30 で同じ): STRICT にしたあと、サイドカーのない Pod からの
  平文のリクエストは、受け取る側の Envoy が接続を切るので curl が終了コード 56 で終わり、-w の
  %{http_code} は 000 を出し、kubectl exec は「command terminated with exit code 56」と標準エラー出力に
  書いて 56 で終わります。istiod は変更を短い間まとめてからプロキシへ送るので、適用の直後の 1〜2 秒は
  まだ平文が通ることがあります。採点は、あなたのコマンドが保存したファイルを、採点側が同じコマンドを
  そのときに実行した結果と、クラスターの状態と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/mtls-migration" を使う
    かつ Istio のリリースを "/root/istio" に展開する

  シナリオ: Istio を入れ、foo と bar にサイドカー付きの httpbin と curl を、legacy にサイドカーのない curl を置く
    出力用のディレクトリ /root/mtls-migration/out を作り、ゲートウェイの要らない minimal プロファイルで
    Istio をインストールしてください(istioctl install -y --set profile=minimal)。Istio のリリースの
    ディレクトリ /root/istio に移り、ネームスペース foo と bar を作って、それぞれに samples/httpbin/httpbin.yaml
    と samples/curl/curl.yaml を、istioctl kube-inject でサイドカーを入れてから適用します。ネームスペース
    legacy を作り、samples/curl/curl.yaml をそのまま(サイドカーなしで)適用します。5 つの Deployment の
    ロールアウトが終わるまで待ってください。

    ヒント: kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n foo のように、
    kube-inject の出力をそのまま kubectl apply に渡せます。kube-inject はネームスペースのラベルを見ずに、
    渡されたマニフェストの Pod テンプレートにサイドカーを書き込みます。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/mtls-migration/out
      istioctl install -y --set profile=minimal
      cd /root/istio
      kubectl create ns foo
      kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n foo
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n foo
      kubectl create ns bar
      kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n bar
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n bar
      kubectl create ns legacy
      kubectl apply -f samples/curl/curl.yaml -n legacy
      for ns in foo bar; do
        kubectl -n $ns rollout status deploy/httpbin --timeout=90s
        kubectl -n $ns rollout status deploy/curl --timeout=90s
      done
      kubectl -n legacy rollout status deploy/curl --timeout=90s
      """
    ならば 最後のコマンドが成功する
    # チェック: workloads
    # メッセージ: foo と bar の httpbin と curl はサイドカー付き、legacy の curl はサイドカーなしで、どれも Ready である必要があります。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("foo", "bar", "legacy") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, proxies: ([((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns, .app)' の値が [{"ns": "bar", "app": "curl", "proxies": 1, "ready": true}, {"ns": "bar", "app": "httpbin", "proxies": 1, "ready": true}, {"ns": "foo", "app": "curl", "proxies": 1, "ready": true}, {"ns": "foo", "app": "httpbin", "proxies": 1, "ready": true}, {"ns": "legacy", "app": "curl", "proxies": 0, "ready": true}] と等しい
    # チェック: legacy-outside
    # メッセージ: legacy の curl にサイドカーが入っています。legacy はメッシュの外に残すネームスペースなので、curl.yaml は kube-inject を通さずに適用してください。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "legacy") | ((.spec.initContainers // []) + .spec.containers)[] | .name] | sort' の値が ["curl"] と等しい
    かつ クラスターの "peerauthentications" に対するクエリ '.items | length' の値が 0 と等しい

  @間違い
  シナリオ: よくある間違い1: legacy の curl にもサイドカーを入れてしまう
    ステップ1で、legacy の curl.yaml も kube-inject を通して適用すること。legacy の curl もメッシュに入り、
    mTLS で話すので、あとで STRICT にしても「メッシュの外のクライアント」を確かめられません。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/mtls-migration/out
      istioctl install -y --set profile=minimal
      cd /root/istio
      kubectl create ns foo
      kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n foo
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n foo
      kubectl create ns bar
      kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n bar
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n bar
      kubectl create ns legacy
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n legacy
      for ns in foo bar; do
        kubectl -n $ns rollout status deploy/httpbin --timeout=90s
        kubectl -n $ns rollout status deploy/curl --timeout=90s
      done
      kubectl -n legacy rollout status deploy/curl --timeout=90s
      """
    ならば 次のチェックで不合格になる
      """
      チェック "workloads"
      チェック "legacy-outside"
      """

  シナリオ: PERMISSIVE のうちは、サイドカーのない legacy からのリクエストも通る
    foo、bar、legacy の curl から、foo と bar の httpbin へ、Service の名前(httpbin.foo と httpbin.bar)の
    ポート 8000 で /ip を取得してください。6 つのリクエストの結果を、次の形の行で
    /root/mtls-migration/out/permissive.txt に保存します(標準エラー出力も含めて)。

      curl.foo to httpbin.foo: 200

    ヒント: curl の -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n" で、この形の行だけを
    出せます。curl の Pod の名前は kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name}
    で取れます。

    もし 学習者が次のコマンドを実行する
      """
      for from in "foo" "bar" "legacy"; do for to in "foo" "bar"; do kubectl exec "$(kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name})" -c curl -n ${from} -- curl http://httpbin.${to}:8000/ip -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n"; done; done > /root/mtls-migration/out/permissive.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    # チェック: permissive-all
    かつ ファイル "/root/mtls-migration/out/permissive.txt" に "curl.legacy to httpbin.foo: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/permissive.txt" に "curl.legacy to httpbin.bar: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/permissive.txt" に "curl.foo to httpbin.bar: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/permissive.txt" がちょうど 6 行である
    かつ ファイル "/root/mtls-migration/out/permissive.txt" が コマンド 'for from in foo bar legacy; do for to in foo bar; do kubectl exec -n $from deploy/curl -c curl -- curl -s -o /dev/null -w "curl.$from to httpbin.$to: %{http_code}\n" http://httpbin.$to:8000/ip; done; done 2>&1' の出力と等しい

  シナリオ: foo を STRICT にすると、legacy から foo への平文のリクエストだけが拒否される
    ネームスペース foo に、名前 default の PeerAuthentication(security.istio.io/v1、selector なし、
    mtls.mode: STRICT)を適用してください。ポリシーがプロキシに届くまで、legacy の curl から
    httpbin.foo:8000 へのリクエストを 1 秒おきに(20 回まで)送り直し、拒否されたら次へ進みます。
    それから前のステップと同じ 6 つのリクエストを送り、結果を(標準エラー出力も含めて)
    /root/mtls-migration/out/strict-foo.txt に保存してください。

    ヒント: PeerAuthentication は、リクエストを受け取る側のポリシーです。foo の httpbin に効かせるなら、
    foo に置きます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -n foo -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: "default"
      spec:
        mtls:
          mode: STRICT
      EOF
      for i in $(seq 20); do
        kubectl exec -n legacy deploy/curl -c curl -- curl -s -o /dev/null http://httpbin.foo:8000/ip 2>/dev/null || break
        sleep 1
      done
      for from in "foo" "bar" "legacy"; do for to in "foo" "bar"; do kubectl exec "$(kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name})" -c curl -n ${from} -- curl http://httpbin.${to}:8000/ip -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n"; done; done > /root/mtls-migration/out/strict-foo.txt 2>&1
      """
    # チェック: foo-strict
    # メッセージ: ネームスペース foo に、名前 default で mtls.mode が STRICT の PeerAuthentication がありません。PeerAuthentication はリクエストを受け取る側(httpbin)のネームスペースに置きます。
    ならば クラスターのネームスペース "foo" の "PeerAuthentication" "default" に対するクエリ '{selector: .spec.selector, mtls: .spec.mtls}' の値が {"selector": null, "mtls": {"mode": "STRICT"}} と等しい
    # チェック: legacy-refused-by-foo
    # メッセージ: legacy から foo への平文のリクエストが拒否されていません。foo の httpbin が STRICT になっているかを確かめてください。
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" に "curl.legacy to httpbin.foo: 000" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" に "command terminated with exit code 56" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" に "curl.legacy to httpbin.bar: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" に "curl.bar to httpbin.foo: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" がちょうど 7 行である
    かつ ファイル "/root/mtls-migration/out/strict-foo.txt" が コマンド 'for from in foo bar legacy; do for to in foo bar; do kubectl exec -n $from deploy/curl -c curl -- curl -s -o /dev/null -w "curl.$from to httpbin.$to: %{http_code}\n" http://httpbin.$to:8000/ip; done; done 2>&1' の出力と等しい

  @間違い
  シナリオ: よくある間違い2: STRICT の PeerAuthentication をクライアントの legacy に置く
    ステップ3で、PeerAuthentication を legacy に置くこと。legacy の curl にはサイドカーがないので、何も
    受け取らないポリシーになり、foo の httpbin は PERMISSIVE のまま平文を受け付けます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -n legacy -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: "default"
      spec:
        mtls:
          mode: STRICT
      EOF
      for i in $(seq 5); do
        kubectl exec -n legacy deploy/curl -c curl -- curl -s -o /dev/null http://httpbin.foo:8000/ip 2>/dev/null || break
        sleep 1
      done
      for from in "foo" "bar" "legacy"; do for to in "foo" "bar"; do kubectl exec "$(kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name})" -c curl -n ${from} -- curl http://httpbin.${to}:8000/ip -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n"; done; done > /root/mtls-migration/out/strict-foo.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "foo-strict"
      チェック "legacy-refused-by-foo"
      """

  シナリオ: ルートネームスペースの PeerAuthentication で、メッシュ全体を STRICT にする
    ルートネームスペース istio-system に、名前 default の PeerAuthentication(selector なし、
    mtls.mode: STRICT)を適用してください。legacy の curl から httpbin.bar:8000 へのリクエストが拒否される
    まで 1 秒おきに(20 回まで)送り直し、それから同じ 6 つのリクエストの結果を(標準エラー出力も含めて)
    /root/mtls-migration/out/strict-mesh.txt に保存します。legacy からはどちらの httpbin にも届かず、
    サイドカーどうしのリクエストはすべて通る必要があります。

    ヒント: メッシュ全体のポリシーになるのは、ルートネームスペース(既定では istio-system)に置いた、
    selector のない PeerAuthentication だけです。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -n istio-system -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: "default"
      spec:
        mtls:
          mode: STRICT
      EOF
      for i in $(seq 20); do
        kubectl exec -n legacy deploy/curl -c curl -- curl -s -o /dev/null http://httpbin.bar:8000/ip 2>/dev/null || break
        sleep 1
      done
      for from in "foo" "bar" "legacy"; do for to in "foo" "bar"; do kubectl exec "$(kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name})" -c curl -n ${from} -- curl http://httpbin.${to}:8000/ip -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n"; done; done > /root/mtls-migration/out/strict-mesh.txt 2>&1
      """
    # チェック: mesh-strict
    # メッセージ: istio-system に、名前 default で selector がなく mtls.mode が STRICT の PeerAuthentication がありません。メッシュ全体のポリシーはルートネームスペースに置きます。
    ならば クラスターのネームスペース "istio-system" の "PeerAuthentication" "default" に対するクエリ '{selector: .spec.selector, mtls: .spec.mtls}' の値が {"selector": null, "mtls": {"mode": "STRICT"}} と等しい
    # チェック: legacy-refused-by-bar
    # メッセージ: legacy から bar への平文のリクエストが拒否されていません。メッシュ全体の STRICT になっているかを確かめてください。
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" に "curl.legacy to httpbin.bar: 000" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" に "curl.legacy to httpbin.foo: 000" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" に "curl.bar to httpbin.bar: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" に "curl.foo to httpbin.bar: 200" が含まれる
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" がちょうど 8 行である
    かつ ファイル "/root/mtls-migration/out/strict-mesh.txt" が コマンド 'for from in foo bar legacy; do for to in foo bar; do kubectl exec -n $from deploy/curl -c curl -- curl -s -o /dev/null -w "curl.$from to httpbin.$to: %{http_code}\n" http://httpbin.$to:8000/ip; done; done 2>&1' の出力と等しい

  @間違い
  シナリオ: よくある間違い3: メッシュ全体のつもりのポリシーを default ネームスペースに置く
    ステップ4で、PeerAuthentication を istio-system ではなく default に置くこと。default はルート
    ネームスペースではないので、そのポリシーは default の中にしか効かず、bar は PERMISSIVE のままです。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -n default -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: "default"
      spec:
        mtls:
          mode: STRICT
      EOF
      for i in $(seq 5); do
        kubectl exec -n legacy deploy/curl -c curl -- curl -s -o /dev/null http://httpbin.bar:8000/ip 2>/dev/null || break
        sleep 1
      done
      for from in "foo" "bar" "legacy"; do for to in "foo" "bar"; do kubectl exec "$(kubectl get pod -l app=curl -n ${from} -o jsonpath={.items..metadata.name})" -c curl -n ${from} -- curl http://httpbin.${to}:8000/ip -s -o /dev/null -w "curl.${from} to httpbin.${to}: %{http_code}\n"; done; done > /root/mtls-migration/out/strict-mesh.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "mesh-strict"
      チェック "legacy-refused-by-bar"
      """
