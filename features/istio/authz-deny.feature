# language: ja
@メッシュ
機能: 明示的な拒否: DENY の AuthorizationPolicy で httpbin への GET を止め、条件と ALLOW で絞る
  istio.io のタスク「Explicit Deny」を、ドキュメントのコマンドのまま順に実行します。ネームスペース foo に
  サイドカー付きの httpbin と curl を置き、httpbin に AuthorizationPolicy を適用して、curl からの
  リクエストが拒否される(HTTP 403)かどうかを確かめます。DENY のポリシーは、ルールに一致したリクエストを
  拒否します。when の条件を足すと、その条件も満たしたリクエストだけが拒否されます。ALLOW のポリシーが
  一つでもあるワークロードでは、どの ALLOW のルールにも一致しないリクエストはすべて拒否されます。

  ポリシーはすぐには効きません。istiod が変更をプロキシに送るまでの 1〜2 秒は、前のポリシーのまま
  答えが返ります。ドキュメントのとおり、期待した答えになるまでリクエストを送り直してください。採点も
  同じように、リクエストのコマンドを(30 秒まで、1 秒おきに)繰り返し実行し、チェックがすべて通った
  ところで採点します。何回目で通ったかは報告に残ります。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、containerd
  と runc、CNI、kube-proxy、CoreDNS)。Istio のリリースは /root/istio に展開してあり、samples/ はセルの
  Istio バージョンのものです。httpbin のイメージは go-httpbin を Go モジュールからビルドしたもの、curl の
  イメージは Debian の curl 7.88 です。サイドカーの Envoy はアップストリーム版で、認可は Envoy の RBAC
  フィルターが行います。採点は、あなたのコマンドの出力と、クラスターのポリシーと、採点側が同じ
  リクエストをそのときに送った結果で行います。

  背景:
    前提 Istio のリリースを "/root/istio" に展開する

  シナリオ: Istio を入れ、foo にサイドカー付きの httpbin と curl を置く
    ゲートウェイの要らない minimal プロファイルで Istio をインストールしてください
    (istioctl install -y --set profile=minimal)。Istio のリリースのディレクトリ /root/istio に移り、
    ネームスペース foo を作って、samples/httpbin/httpbin.yaml と samples/curl/curl.yaml を、istioctl
    kube-inject でサイドカーを入れてから適用します。2 つの Deployment のロールアウトが終わるまで待って
    ください。

    もし 学習者が次のコマンドを実行する
      """
      istioctl install -y --set profile=minimal
      cd /root/istio
      kubectl create ns foo
      kubectl apply -f <(istioctl kube-inject -f samples/httpbin/httpbin.yaml) -n foo
      kubectl apply -f <(istioctl kube-inject -f samples/curl/curl.yaml) -n foo
      kubectl -n foo rollout status deploy/httpbin --timeout=90s
      kubectl -n foo rollout status deploy/curl --timeout=90s
      """
    ならば 最後のコマンドが成功する
    # チェック: workloads
    # メッセージ: foo の httpbin と curl は、どちらもサイドカー付きで Ready である必要があります。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "foo" and .status.phase == "Running") | {app: .metadata.labels.app, proxies: ([((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.app)' の値が [{"app": "curl", "proxies": 1, "ready": true}, {"app": "httpbin", "proxies": 1, "ready": true}] と等しい
    # チェック: get-allowed
    # メッセージ: foo の curl から httpbin.foo:8000 への GET が 200 になりません。サイドカーが Ready かを確かめてください。
    かつ 60 秒以内に コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'GET %{http_code}' http://httpbin.foo:8000/get" の出力に "GET 200" が含まれる
    かつ クラスターの "authorizationpolicies" に対するクエリ '.items | length' の値が 0 と等しい

  シナリオ: DENY のポリシーで httpbin への GET を拒否し、POST は通す
    ネームスペース foo に、app: httpbin を選ぶ名前 deny-method-get の AuthorizationPolicy
    (security.istio.io/v1、action: DENY、ルールは GET のメソッドへの操作)を適用してください。
    それから foo の curl から、http://httpbin.foo:8000/get への GET と http://httpbin.foo:8000/post への
    POST を送り、それぞれのステータスコードを「GET 403」「POST 200」の形で出力します。GET が 403 に
    なるまで送り直してください。

    ヒント: curl の -X でメソッドを、-w "GET %{http_code}\n" でこの形の行を出せます。DENY のルールは、
    一致したリクエストだけを拒否します。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: AuthorizationPolicy
      metadata:
        name: deny-method-get
        namespace: foo
      spec:
        selector:
          matchLabels:
            app: httpbin
        action: DENY
        rules:
        - to:
          - operation:
              methods: ["GET"]
      EOF
      """
    かつ 学習者がチェックに合格するまで最大 30 秒、次のコマンドを繰り返し実行する
      """
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -sS -o /dev/null -w "GET %{http_code}\n"
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/post" -X POST -sS -o /dev/null -w "POST %{http_code}\n"
      """
    # チェック: deny-get-policy
    # メッセージ: foo に、app: httpbin を選び GET を拒否する DENY の AuthorizationPolicy deny-method-get がありません。メソッドは大文字の "GET" で書きます。
    ならば クラスターのネームスペース "foo" の "AuthorizationPolicy" "deny-method-get" に対するクエリ '{selector: .spec.selector, action: .spec.action, rules: .spec.rules}' の値が {"selector": {"matchLabels": {"app": "httpbin"}}, "action": "DENY", "rules": [{"to": [{"operation": {"methods": ["GET"]}}]}]} と等しい
    # チェック: get-denied
    # メッセージ: GET が拒否されていません(403 ではありません)。ポリシーがプロキシに届くまで送り直したかを確かめてください。
    かつ 出力に "GET 403" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'GET %{http_code}' http://httpbin.foo:8000/get" の出力に "GET 403" が含まれる
    # チェック: post-allowed
    # メッセージ: POST まで拒否されています。DENY のルールを GET のメソッドだけにしてください。
    かつ 出力に "POST 200" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'POST %{http_code}' -X POST http://httpbin.foo:8000/post" の出力に "POST 200" が含まれる

  @間違い
  シナリオ: よくある間違い1: メソッドを小文字の "get" で書く
    ステップ2で、methods に "get" と書くこと。メソッドの比較は大文字と小文字を区別するので、GET の
    リクエストはルールに一致せず、拒否されません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: AuthorizationPolicy
      metadata:
        name: deny-method-get
        namespace: foo
      spec:
        selector:
          matchLabels:
            app: httpbin
        action: DENY
        rules:
        - to:
          - operation:
              methods: ["get"]
      EOF
      sleep 5
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -sS -o /dev/null -w "GET %{http_code}\n"
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/post" -X POST -sS -o /dev/null -w "POST %{http_code}\n"
      """
    ならば 次のチェックで不合格になる
      """
      チェック "deny-get-policy"
      チェック "get-denied"
      """

  シナリオ: when の条件で、x-token が admin でない GET だけを拒否する
    deny-method-get のルールに、リクエストのヘッダー x-token の値が admin でないときだけ、という条件
    (when の key: request.headers[x-token]、notValues: ["admin"])を足して適用し直してください。それから
    foo の curl から http://httpbin.foo:8000/get へ、ヘッダー x-token: admin を付けた GET と x-token: guest を
    付けた GET を送り、「admin 200」「guest 403」の形で出力します。答えがそうなるまで送り直してください。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: AuthorizationPolicy
      metadata:
        name: deny-method-get
        namespace: foo
      spec:
        selector:
          matchLabels:
            app: httpbin
        action: DENY
        rules:
        - to:
          - operation:
              methods: ["GET"]
          when:
          - key: request.headers[x-token]
            notValues: ["admin"]
      EOF
      """
    かつ 学習者がチェックに合格するまで最大 30 秒、次のコマンドを繰り返し実行する
      """
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -H "x-token: admin" -sS -o /dev/null -w "admin %{http_code}\n"
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -H "x-token: guest" -sS -o /dev/null -w "guest %{http_code}\n"
      """
    # チェック: token-policy
    # メッセージ: deny-method-get に、app: httpbin を選んだまま、x-token が admin でないとき(notValues: ["admin"])という条件がありません。
    ならば クラスターのネームスペース "foo" の "AuthorizationPolicy" "deny-method-get" に対するクエリ '{selector: .spec.selector, action: .spec.action, rules: .spec.rules}' の値が {"selector": {"matchLabels": {"app": "httpbin"}}, "action": "DENY", "rules": [{"to": [{"operation": {"methods": ["GET"]}}], "when": [{"key": "request.headers[x-token]", "notValues": ["admin"]}]}]} と等しい
    # チェック: admin-allowed
    # メッセージ: x-token: admin の GET が拒否されています。条件は values ではなく notValues で書きます。
    かつ 出力に "admin 200" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'admin %{http_code}' -H 'x-token: admin' http://httpbin.foo:8000/get" の出力に "admin 200" が含まれる
    # チェック: guest-denied
    # メッセージ: x-token: guest の GET が拒否されていません。
    かつ 出力に "guest 403" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'guest %{http_code}' -H 'x-token: guest' http://httpbin.foo:8000/get" の出力に "guest 403" が含まれる

  @間違い
  シナリオ: よくある間違い2: 条件を notValues ではなく values で書く
    ステップ3で、when に values: ["admin"] と書くこと。拒否されるのが admin の GET になり、guest の GET は
    通ります。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: AuthorizationPolicy
      metadata:
        name: deny-method-get
        namespace: foo
      spec:
        selector:
          matchLabels:
            app: httpbin
        action: DENY
        rules:
        - to:
          - operation:
              methods: ["GET"]
          when:
          - key: request.headers[x-token]
            values: ["admin"]
      EOF
      sleep 5
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -H "x-token: admin" -sS -o /dev/null -w "admin %{http_code}\n"
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -H "x-token: guest" -sS -o /dev/null -w "guest %{http_code}\n"
      """
    ならば 次のチェックで不合格になる
      """
      チェック "token-policy"
      チェック "admin-allowed"
      チェック "guest-denied"
      """

  シナリオ: ALLOW のポリシーを足すと、どの ALLOW にも一致しないリクエストは拒否される
    foo に、app: httpbin を選ぶ名前 allow-path-ip の AuthorizationPolicy(action: ALLOW、ルールはパス
    /ip への操作)を適用してください。それから foo の curl から、x-token: admin を付けて /ip と /get へ
    GET を送り、「ip 200」「get 403」の形で出力します。答えがそうなるまで送り直してください。

    ヒント: ALLOW のポリシーが一つでもあるワークロードでは、どの ALLOW のルールにも一致しないリクエストは
    拒否されます。/get は DENY には一致しなくても(x-token が admin)、ALLOW に一致しません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: security.istio.io/v1
      kind: AuthorizationPolicy
      metadata:
        name: allow-path-ip
        namespace: foo
      spec:
        selector:
          matchLabels:
            app: httpbin
        action: ALLOW
        rules:
        - to:
          - operation:
              paths: ["/ip"]
      EOF
      """
    かつ 学習者がチェックに合格するまで最大 30 秒、次のコマンドを繰り返し実行する
      """
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/ip" -X GET -H "x-token: admin" -sS -o /dev/null -w "ip %{http_code}\n"
      kubectl exec "$(kubectl get pod -l app=curl -n foo -o jsonpath={.items..metadata.name})" -c curl -n foo -- curl "http://httpbin.foo:8000/get" -X GET -H "x-token: admin" -sS -o /dev/null -w "get %{http_code}\n"
      """
    # チェック: allow-policy
    # メッセージ: foo に、app: httpbin を選びパス /ip を許す ALLOW の AuthorizationPolicy allow-path-ip がありません。
    ならば クラスターのネームスペース "foo" の "AuthorizationPolicy" "allow-path-ip" に対するクエリ '{selector: .spec.selector, action: .spec.action, rules: .spec.rules}' の値が {"selector": {"matchLabels": {"app": "httpbin"}}, "action": "ALLOW", "rules": [{"to": [{"operation": {"paths": ["/ip"]}}]}]} と等しい
    # チェック: ip-allowed
    かつ 出力に "ip 200" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'ip %{http_code}' -H 'x-token: admin' http://httpbin.foo:8000/ip" の出力に "ip 200" が含まれる
    # チェック: get-not-allowed
    # メッセージ: /get への GET が拒否されていません。ALLOW のポリシーが効いているかを確かめてください。
    かつ 出力に "get 403" が含まれる
    かつ コマンド "kubectl exec -n foo deploy/curl -c curl -- curl -sS -o /dev/null -w 'get %{http_code}' -H 'x-token: admin' http://httpbin.foo:8000/get" の出力に "get 403" が含まれる
    かつ クラスターのネームスペース "foo" の "AuthorizationPolicy" "deny-method-get" に対するクエリ '.spec.action' の値が "DENY" と等しい
