# language: ja
@メッシュ
機能: サーキットブレーカー: DestinationRule の接続プールを fortio の負荷で開かせる
  DestinationRule の trafficPolicy には、宛先へのリクエストの「扱い方」として接続プールの上限
  (connectionPool)と外れ値の検出(outlierDetection)を書けます。上限を超えたリクエストは、宛先へ
  送られる前に、クライアント側のサイドカーの Envoy が 503 で断ります。これがサーキットブレーカーです。
  Istio のリリースに入っているサンプルの httpbin に上限 1 の接続プールを設定し、同じくサンプルの
  負荷ツール fortio から同時に何本もリクエストを送って、ブレーカーが開くこと、そしてそれを数えたのが
  クライアントのサイドカーだということを、プロキシの統計で確かめます。

  サーキットブレーカーはクライアント側で働きます。上限は、リクエストを送る側のサイドカーが持つ、宛先
  クラスターの設定です。だから設定が届いたかは送る側のプロキシ(istioctl proxy-config cluster)に尋ね、
  断った数も送る側のプロキシの統計(upstream_rq_pending_overflow)に数えられます。DestinationRule の
  host に短い名前(httpbin)を書くと、それは DestinationRule を置いたネームスペースの中の名前として
  解決されます。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、containerd
  と runc、CNI、kube-proxy、CoreDNS)。Istio のリリースは /root/istio に展開してあり、samples/ は
  セルの Istio バージョンのものです。イメージはすべてこの環境でオフラインで作ったもので、httpbin の
  イメージ(mccutchen/go-httpbin)は go-httpbin を、fortio のイメージ(fortio/fortio:latest_release)は
  fortio 1.68 を Go モジュールからビルドしたものです。サイドカーの Envoy はアップストリーム版です。

  この環境で測ったこと(Istio 1.31 と 1.30 で同じ): fortio は結果の表(Code 200 : 16 (80.0 %) など)を
  標準エラー出力に書きます。-c 3 -n 30 の負荷では 30 本のうち 8〜14 本が 503 になり、-c 1 では
  1 本も 503 になりませんでした。アップストリーム版の Envoy の統計の名前は、クラスター名のあとに「;.」が
  付きます(cluster.outbound|8000||httpbin.default.svc.cluster.local;.upstream_rq_pending_overflow)。
  採点は、あなたのコマンドが保存したファイルを、採点側が同じコマンドをそのときに実行した結果と、
  クラスターの状態と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/circuit-breaking" を使う
    かつ Istio のリリースを "/root/istio" に展開する

  シナリオ: Istio を入れ、サイドカー付きの httpbin と fortio を動かす
    出力用のディレクトリ /root/circuit-breaking/out を作り、minimal プロファイルで Istio をインストール
    してください。ネームスペース default にラベル istio-injection=enabled を付け、/root/istio の
    samples/httpbin/httpbin.yaml と samples/httpbin/sample-client/fortio-deploy.yaml を適用して、
    2 つの Deployment(httpbin と fortio-deploy)のロールアウトが終わるまで待ちます。最後に fortio の Pod から
    fortio curl -quiet http://httpbin:8000/get を実行し、その出力を(標準エラー出力も含めて)
    /root/circuit-breaking/out/curl.txt に保存してください。

    ヒント: fortio の Pod の名前は kubectl get pods -l app=fortio -o 'jsonpath={.items[0].metadata.name}' で
    取れます。fortio の実行ファイルは /usr/bin/fortio です。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/circuit-breaking/out
      istioctl install -y --set profile=minimal
      kubectl label namespace default istio-injection=enabled
      kubectl apply -f /root/istio/samples/httpbin/httpbin.yaml
      kubectl apply -f /root/istio/samples/httpbin/sample-client/fortio-deploy.yaml
      kubectl rollout status deploy/httpbin --timeout=90s
      kubectl rollout status deploy/fortio-deploy --timeout=90s
      export FORTIO_POD=$(kubectl get pods -l app=fortio -o 'jsonpath={.items[0].metadata.name}')
      kubectl exec "$FORTIO_POD" -c fortio -- /usr/bin/fortio curl -quiet http://httpbin:8000/get > /root/circuit-breaking/out/curl.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    かつ ネームスペース "default" のラベル "istio-injection" が "enabled" である
    # チェック: both-in-mesh
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "default" and .status.phase == "Running") | {app: .metadata.labels.app, proxies: ([((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.app)' の値が [{"app": "fortio", "proxies": 1, "ready": true}, {"app": "httpbin", "proxies": 1, "ready": true}] と等しい
    かつ ファイル "/root/circuit-breaking/out/curl.txt" に "HTTP/1.1 200 OK" が含まれる
    かつ ファイル "/root/circuit-breaking/out/curl.txt" に "\"url\": \"http://httpbin:8000/get\"" が含まれる

  シナリオ: 接続プールの上限を 1 にした DestinationRule を適用し、送る側のプロキシに届いたかを確かめる
    ネームスペース default に DestinationRule httpbin を適用してください。host は httpbin、trafficPolicy は
    次のとおりです。
    - connectionPool: tcp.maxConnections 1、http.http1MaxPendingRequests 1、http.maxRequestsPerConnection 1
    - outlierDetection: consecutive5xxErrors 1、interval 1s、baseEjectionTime 3m、maxEjectionPercent 100
    適用したら、fortio のサイドカーが持つ httpbin のクラスターを
    istioctl proxy-config cluster deploy/fortio-deploy --fqdn httpbin.default.svc.cluster.local -o json で
    /root/circuit-breaking/out/cluster.json に保存します。設定が届くまで(maxPendingRequests が 1 になるまで)
    1 秒おきに(30 回まで)尋ね直してください。

    ヒント: 上限を持つのは、リクエストを送る側(fortio)のサイドカーです。受け取る側の httpbin ではなく、
    fortio のプロキシに尋ねます。JSON では、上限は circuitBreakers.thresholds[] に、
    maxRequestsPerConnection は typedExtensionProtocolOptions の中に現れます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f - <<EOF
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: httpbin
      spec:
        host: httpbin
        trafficPolicy:
          connectionPool:
            tcp:
              maxConnections: 1
            http:
              http1MaxPendingRequests: 1
              maxRequestsPerConnection: 1
          outlierDetection:
            consecutive5xxErrors: 1
            interval: 1s
            baseEjectionTime: 3m
            maxEjectionPercent: 100
      EOF
      for i in $(seq 30); do
        istioctl proxy-config cluster deploy/fortio-deploy --fqdn httpbin.default.svc.cluster.local -o json > /root/circuit-breaking/out/cluster.json
        grep -q '"maxPendingRequests": 1,' /root/circuit-breaking/out/cluster.json && break
        sleep 1
      done
      """
    # チェック: dr-pool
    ならば クラスターのネームスペース "default" の "DestinationRule" "httpbin" に対するクエリ '{host: .spec.host, pool: .spec.trafficPolicy.connectionPool, outlier: .spec.trafficPolicy.outlierDetection}' の値が {"host": "httpbin", "pool": {"tcp": {"maxConnections": 1}, "http": {"http1MaxPendingRequests": 1, "maxRequestsPerConnection": 1}}, "outlier": {"consecutive5xxErrors": 1, "interval": "1s", "baseEjectionTime": "3m", "maxEjectionPercent": 100}} と等しい
    # チェック: proxy-thresholds
    # メッセージ: fortio のサイドカーの httpbin のクラスターに、上限 1 の circuitBreakers がありません。DestinationRule の host が default の httpbin を指しているか、設定が届くまで尋ね直したかを確かめてください。
    かつ "/root/circuit-breaking/out/cluster.json" のクエリ '[.[] | select(.name == "outbound|8000||httpbin.default.svc.cluster.local") | .circuitBreakers.thresholds[]? | {maxConnections, maxPendingRequests}]' の値が [{"maxConnections": 1, "maxPendingRequests": 1}] と等しい
    かつ "/root/circuit-breaking/out/cluster.json" のクエリ '[.[] | select(.name == "outbound|8000||httpbin.default.svc.cluster.local") | .typedExtensionProtocolOptions[]?.commonHttpProtocolOptions.maxRequestsPerConnection]' の値が [1] と等しい
    かつ "/root/circuit-breaking/out/cluster.json" のクエリ '[.[] | select(.name == "outbound|8000||httpbin.default.svc.cluster.local") | .outlierDetection | {consecutive5xx, interval, baseEjectionTime, maxEjectionPercent}]' の値が [{"consecutive5xx": 1, "interval": "1s", "baseEjectionTime": "180s", "maxEjectionPercent": 100}] と等しい
    かつ "/root/circuit-breaking/out/cluster.json" のクエリ '[.[] | .circuitBreakers]' の値が コマンド "istioctl proxy-config cluster deploy/fortio-deploy --fqdn httpbin.default.svc.cluster.local -o json" の出力のクエリ '[.[] | .circuitBreakers]' の値と等しい

  @間違い
  シナリオ: よくある間違い1: DestinationRule を istio-system に置く
    ステップ2で、同じ DestinationRule を -n istio-system で適用すること。短い host の httpbin は
    istio-system の httpbin(存在しない)として解決されるので、default の httpbin のクラスターには上限が
    付きません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -n istio-system -f - <<EOF
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: httpbin
      spec:
        host: httpbin
        trafficPolicy:
          connectionPool:
            tcp:
              maxConnections: 1
            http:
              http1MaxPendingRequests: 1
              maxRequestsPerConnection: 1
          outlierDetection:
            consecutive5xxErrors: 1
            interval: 1s
            baseEjectionTime: 3m
            maxEjectionPercent: 100
      EOF
      for i in $(seq 5); do
        istioctl proxy-config cluster deploy/fortio-deploy --fqdn httpbin.default.svc.cluster.local -o json > /root/circuit-breaking/out/cluster.json
        grep -q '"maxPendingRequests": 1,' /root/circuit-breaking/out/cluster.json && break
        sleep 1
      done
      """
    ならば 次のチェックで不合格になる
      """
      チェック "dr-pool"
      チェック "proxy-thresholds"
      """

  シナリオ: 3 本同時の負荷でブレーカーが開き、送る側のプロキシが断った数を数えている
    fortio の Pod から、同時接続 3(-c 3)、待ち時間なし(-qps 0)で 30 本(-n 30)のリクエストを
    http://httpbin:8000/get へ送る負荷(fortio load、-loglevel Warning)をかけ、その出力を
    (標準エラー出力も含めて)/root/circuit-breaking/out/load.txt に保存してください。続けて、fortio の
    サイドカーの統計のうち httpbin の pending を含む行を
    kubectl exec "$FORTIO_POD" -c istio-proxy -- pilot-agent request GET stats | grep httpbin | grep pending で
    /root/circuit-breaking/out/stats.txt に保存します。

    ヒント: 上限を超えたリクエストは Code 503 として数えられます。統計の upstream_rq_pending_overflow が、
    ブレーカーが断ったリクエストの数です。

    もし 学習者が次のコマンドを実行する
      """
      export FORTIO_POD=$(kubectl get pods -l app=fortio -o 'jsonpath={.items[0].metadata.name}')
      kubectl exec "$FORTIO_POD" -c fortio -- /usr/bin/fortio load -c 3 -qps 0 -n 30 -loglevel Warning http://httpbin:8000/get > /root/circuit-breaking/out/load.txt 2>&1
      kubectl exec "$FORTIO_POD" -c istio-proxy -- pilot-agent request GET stats | grep httpbin | grep pending > /root/circuit-breaking/out/stats.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: the-load
    # メッセージ: 負荷が、待ち時間なし(-qps 0)・同時接続 3(-c 3)・30 本(-n 30)になっていません。
    かつ ファイル "/root/circuit-breaking/out/load.txt" が "^Starting at max qps with 3 thread\(s\) \[gomax [0-9]+\] for exactly 30 calls " にマッチする
    かつ ファイル "/root/circuit-breaking/out/load.txt" に "All done 30 calls" が含まれる
    # チェック: tripped
    # メッセージ: 503 になったリクエストがありません。同時接続(-c)が上限の 1 と待ち行列の 1 を超える数になっているかを確かめてください。
    かつ ファイル "/root/circuit-breaking/out/load.txt" が "Code 503 : [1-9][0-9]* " にマッチする
    かつ ファイル "/root/circuit-breaking/out/load.txt" が "Code 200 : [1-9][0-9]* " にマッチする
    # チェック: overflow-counted
    かつ ファイル "/root/circuit-breaking/out/stats.txt" が "^cluster\.outbound\|8000\|\|httpbin\.default\.svc\.cluster\.local;?\.upstream_rq_pending_overflow: [1-9][0-9]*$" にマッチする
    かつ ファイル "/root/circuit-breaking/out/stats.txt" が コマンド "kubectl exec deploy/fortio-deploy -c istio-proxy -- pilot-agent request GET stats | grep httpbin | grep pending" の出力と等しい

  @間違い
  シナリオ: よくある間違い2: 同時接続 1 で負荷をかける
    ステップ3で、-c 1 で負荷をかけること。リクエストは 1 本ずつ送られ、接続の上限 1 を超えないので、
    ブレーカーは開かず、503 は 1 本も出ません。

    もし 学習者が次のコマンドを実行する
      """
      export FORTIO_POD=$(kubectl get pods -l app=fortio -o 'jsonpath={.items[0].metadata.name}')
      kubectl exec "$FORTIO_POD" -c fortio -- /usr/bin/fortio load -c 1 -qps 0 -n 30 -loglevel Warning http://httpbin:8000/get > /root/circuit-breaking/out/load.txt 2>&1
      kubectl exec "$FORTIO_POD" -c istio-proxy -- pilot-agent request GET stats | grep httpbin | grep pending > /root/circuit-breaking/out/stats.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "tripped"
      チェック "overflow-counted"
      """
