# language: ja
@メッシュ
機能: カナリアはプロキシで確かめる: Gateway・VirtualService・DestinationRule・PeerAuthentication を生きたメッシュで
  「どこへ送るか」を決める VirtualService と、「送った後でどう扱うか」を決める DestinationRule でカナリア
  (v1 へ 90、v2 へ 10)を作り、Gateway から入るリクエストに効かせます。そして、設定が実際にプロキシに
  届いたかを、YAML ではなくプロキシに尋ねて確かめます。istioctl proxy-status で各プロキシが最新の設定と
  同期している(SYNCED)こと、istioctl proxy-config routes で重みが 90/10 になっていること、
  istioctl proxy-config endpoint でサブセット v2 にアドレスが 1 つもない(空の宛先)こと、そしてそこへ
  送ったリクエストが 503 になることを見ます。v2 のラベルを持つ Pod を足したら、リクエストが両方の
  サブセットに届くことを数えて確かめ、最後に STRICT の PeerAuthentication が、サイドカーのない Pod からの
  平文のリクエストを拒否し、メッシュの中の Pod からのリクエスト(サイドカーどうしの mTLS)は通すことを、
  Pod の中から kubectl exec で送って確かめます。

  Istio で最もよくあるのは、YAML は適用されたのに動作が変わらない状況です。コントロールプレーンが
  受け入れたものと、サイドカーが持っているものは、違うことがあります。DestinationRule のサブセットは
  ラベルであって、デプロイではありません。subset: v2 は、その名前のラベルを持つ Pod を指すだけなので、
  そのラベルの Pod がなければ、サブセットは空の宛先になり、リクエストは 503 に落ちます。Gateway は
  入口を開くだけで、その Gateway を gateways: で参照する VirtualService があって初めてルーティングが
  生まれます。PeerAuthentication の既定は PERMISSIVE で、STRICT に変えるまでは平文もそのまま通ります。

  この環境について: 各セルには本物のコントロールプレーン(kube-controller-manager、kube-scheduler)と、
  本物のノードが 1 つあります(kubelet、containerd と runc、CNI、kube-proxy、CoreDNS)。istioctl install -y
  で Istio を入れると、istiod とイングレスゲートウェイがそのノードの Pod として動きます。イメージはすべて
  この環境でオフラインで作ったもので、Istio の pilot と proxyv2 はセルの Istio バージョンのビルド
  (プロキシの Envoy はアップストリーム版)です。アプリのコンテナは Istio の echo アプリ(イメージ
  gcr.io/istio-testing/app)で、受け取ったリクエストの内容と、引数 --version の値(Pod の version ラベルと
  同じ)を ServiceVersion= の行で答えます。この環境には LoadBalancer がないので、メッシュの外にある
  あなたのシェルから、イングレスゲートウェイの Pod の IP のポート 8080 へ直接 curl します(Service
  istio-ingressgateway のポート 80 の targetPort で、ゲートウェイの Envoy はこのポートで待ち受けます。
  NodePort や kubectl port-forward svc/istio-ingressgateway を使っても同じ Envoy に届きます)。kubectl exec
  のコマンドはそのコンテナの中で動き、Pod の中から ClusterIP へ送ったリクエストは、その Pod のサイドカーが
  受け取って送り先を決めます。

  この環境で測ったこと(Istio 1.31 と 1.30 で同じ): istioctl proxy-status は -v 1 を付けたときだけ、
  種類ごと(CDS・LDS・EDS・RDS)に SYNCED か STALE かを表示します。istiod は変更を短い間まとめてから
  (デバウンス)プロキシへ送るので、kubectl apply の直後には、まだ古い設定で動いています。どの Pod も
  持たないサブセットのクラスター(outbound|80|v2|shop.shop.svc.cluster.local)は proxy-config cluster に
  現れますが、proxy-config endpoint にはその行がなく、そこへ送ったリクエストにはゲートウェイの Envoy が
  「503 Service Unavailable」「no healthy upstream」と答えます。STRICT にしたあとの平文のリクエストは、
  Pod の Envoy が接続を切るので、curl は「(56) Recv failure: Connection reset by peer」で終わります。
  採点は、あなたのコマンドが保存したファイルを、採点側が同じコマンドをそのときに実行した結果と、
  クラスターの状態と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/mesh-routing" を使う
    かつ フィクスチャ "fixtures/mesh-routing" を "/opt/lab/fixtures/mesh-routing" に置く

  シナリオ: Istio を入れ、shop の v1 をサイドカー付きで動かす
    出力用のディレクトリ /root/mesh-routing/out を作り、istioctl install -y で Istio をインストールしてください。
    ネームスペース shop を作ってラベル istio-injection=enabled を付け、/opt/lab/fixtures/mesh-routing/shop.yaml
    (Service shop と Deployment shop-v1、Pod のラベル version: v1)を kubectl -n shop で適用します。
    shop-v1 のロールアウトが終わるまで待ってください(istioctl install -y は、istiod とイングレスゲートウェイ
    (istio-system の Deployment istio-ingressgateway)の準備ができるまで待ってから終わります)。
    shop の Pod は Running で、istio-proxy が入り、アプリのコンテナ shop が Ready である必要があります。

    ヒント: 注入ラベルは Deployment を適用する前に付けてください。Webhook は Pod が作成されるその瞬間に
    ネームスペースのラベルを見ます。kubectl get pods -A -o wide で、READY の数(2/2)と IP を確かめられます。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/mesh-routing/out
      istioctl install -y
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop apply -f /opt/lab/fixtures/mesh-routing/shop.yaml
      kubectl -n shop rollout status deployment/shop-v1 --timeout=60s
      """
    ならば 最後のコマンドが成功する
    かつ ネームスペース "shop" のラベル "istio-injection" が "enabled" である
    かつ クラスターのネームスペース "shop" に "Service" "shop" が存在する
    # チェック: shop-v1-sidecar
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | {version: .metadata.labels.version, proxies: [((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length, ready: [.status.containerStatuses[]? | select(.name == "shop") | .ready]}]' の値が [{"version": "v1", "proxies": 1, "ready": [true]}] と等しい
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system" and .metadata.labels.istio == "ingressgateway" and .status.phase == "Running")] | length' の値が 1 と等しい

  シナリオ: Gateway・DestinationRule・VirtualService で 90/10 のカナリアを作り、プロキシに届いたかを確かめる
    /root/mesh-routing/shop-routing.yaml に 3 つのリソースを書き、kubectl apply -f で適用してください。
    - Gateway shop-gateway(ネームスペース shop): selector istio: ingressgateway、ポート 80(名前 http、
      プロトコル HTTP)、hosts は shop.example.com。
    - DestinationRule shop(ネームスペース shop): host は shop、サブセット v1 はラベル version: v1、
      サブセット v2 はラベル version: v2。
    - VirtualService shop(ネームスペース shop): hosts は shop.example.com、gateways に shop-gateway。
      http の最初のルールは、ヘッダー x-canary が true と完全一致するリクエストをサブセット v2 へ送ります。
      2 番目のルールは、サブセット v1 へ重み 90、サブセット v2 へ重み 10 を送るカナリアです。
    適用したら、まず istioctl analyze -n shop の結果を(標準エラー出力も含めて)/root/mesh-routing/out/analyze.txt に
    保存してください。まだ version: v2 の Pod がないので、analyze はサブセット v2 がどの Pod も選ばない
    (IST0173)と報告します。次に、イングレスゲートウェイの Envoy が実際に受け取ったルートを
    istioctl proxy-config routes deploy/istio-ingressgateway -n istio-system -o json で
    /root/mesh-routing/out/gw-routes.json に保存してください。最後に istioctl proxy-status -v 1 の出力を
    /root/mesh-routing/out/proxy-status.txt に保存します。ゲートウェイと shop-v1 の 2 つのプロキシが並び、
    どちらも CDS・EDS・LDS・RDS が SYNCED である必要があります。

    ヒント: istiod は変更を短い間まとめてからプロキシへ送るので、適用の直後に尋ねると、まだ古いルートが
    返ってくることがあります。proxy-config routes の結果に shop.example.com が現れるまで、1 秒おきに
    何度か(10 回まで)尋ね直してください。届いたかどうかは YAML ではなく、プロキシに尋ねます。

    ヒント: Gateway はポートを開けるだけです。VirtualService の gateways: に shop-gateway を書かないと、
    そのルールはメッシュの内側(サイドカー)にだけ適用され、ゲートウェイの Envoy には shop.example.com の
    ルートが届きません。

    ヒント: routes の JSON では、VirtualService の各ルールが virtualHosts[].routes[] の 1 つになります。
    重みは route.weightedClusters.clusters[] に、サブセットはクラスター名(outbound|80|v1|shop.shop.svc.cluster.local)
    になって現れます。

    もし 学習者が次のコマンドを実行する
      """
      cat > shop-routing.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: shop-gateway
        namespace: shop
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - shop.example.com
      ---
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: shop
        namespace: shop
      spec:
        host: shop
        subsets:
        - name: v1
          labels:
            version: v1
        - name: v2
          labels:
            version: v2
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop
        namespace: shop
      spec:
        hosts:
        - shop.example.com
        gateways:
        - shop-gateway
        http:
        - match:
          - headers:
              x-canary:
                exact: "true"
          route:
          - destination:
              host: shop
              subset: v2
        - route:
          - destination:
              host: shop
              subset: v1
            weight: 90
          - destination:
              host: shop
              subset: v2
            weight: 10
      EOF
      kubectl apply -f shop-routing.yaml
      istioctl analyze -n shop > out/analyze.txt 2>&1
      for i in $(seq 10); do
        istioctl proxy-config routes deploy/istio-ingressgateway -n istio-system -o json > out/gw-routes.json
        grep -q shop.example.com out/gw-routes.json && break
        sleep 1
      done
      istioctl proxy-status -v 1 > out/proxy-status.txt
      """
    ならば 最後のコマンドが成功する
    かつ クラスターのネームスペース "shop" の "Gateway" "shop-gateway" に対するクエリ '{selector: .spec.selector, servers: [.spec.servers[]? | {port: .port, hosts: .hosts}]}' の値が {"selector": {"istio": "ingressgateway"}, "servers": [{"port": {"number": 80, "name": "http", "protocol": "HTTP"}, "hosts": ["shop.example.com"]}]} と等しい
    かつ クラスターのネームスペース "shop" の "DestinationRule" "shop" に対するクエリ '{host: .spec.host, subsets: ([.spec.subsets[]? | {name, labels}] | sort_by(.name))}' の値が {"host": "shop", "subsets": [{"name": "v1", "labels": {"version": "v1"}}, {"name": "v2", "labels": {"version": "v2"}}]} と等しい
    かつ クラスターのネームスペース "shop" の "VirtualService" "shop" に対するクエリ '{hosts: .spec.hosts, gateways: .spec.gateways}' の値が {"hosts": ["shop.example.com"], "gateways": ["shop-gateway"]} と等しい
    # チェック: analyze-empty-subset
    かつ ファイル "/root/mesh-routing/out/analyze.txt" に "IST0173" が含まれる
    かつ ファイル "/root/mesh-routing/out/analyze.txt" に コマンド "istioctl analyze -n shop 2>&1" の出力のすべての行が含まれる
    # チェック: gw-weights
    # メッセージ: ゲートウェイの Envoy のルートに、サブセット v1 へ 90、v2 へ 10 の重みがありません。VirtualService に gateways: shop-gateway があるか、重みとサブセットが正しいかを確かめてください。
    かつ "/root/mesh-routing/out/gw-routes.json" のクエリ '[.[]? | .virtualHosts[]? | select(any(.domains[]?; . == "shop.example.com")) | .routes[]? | .route.weightedClusters.clusters[]? | {name, weight}]' の値が [{"name": "outbound|80|v1|shop.shop.svc.cluster.local", "weight": 90}, {"name": "outbound|80|v2|shop.shop.svc.cluster.local", "weight": 10}] と等しい
    # チェック: gw-canary-route
    かつ "/root/mesh-routing/out/gw-routes.json" のクエリ '[.[]? | .virtualHosts[]? | select(any(.domains[]?; . == "shop.example.com")) | .routes[]? | select(.match.headers) | {headers: [.match.headers[] | {name, exact: .stringMatch.exact}], cluster: .route.cluster}]' の値が [{"headers": [{"name": "x-canary", "exact": "true"}], "cluster": "outbound|80|v2|shop.shop.svc.cluster.local"}] と等しい
    かつ "/root/mesh-routing/out/gw-routes.json" のクエリ '[.[]? | .virtualHosts[]? | select(any(.domains[]?; . == "shop.example.com"))]' の値が コマンド "istioctl proxy-config routes deploy/istio-ingressgateway -n istio-system -o json" の出力のクエリ '[.[]? | .virtualHosts[]? | select(any(.domains[]?; . == "shop.example.com"))]' の値と等しい
    # チェック: proxies-synced
    かつ ファイル "/root/mesh-routing/out/proxy-status.txt" が "^istio-ingressgateway-[a-z0-9]+-[a-z0-9]+\.istio-system +Kubernetes +SYNCED \([^)]*\) +IGNORED +SYNCED \([^)]*\) +SYNCED \([^)]*\) +SYNCED \([^)]*\) +istiod-" にマッチする
    かつ ファイル "/root/mesh-routing/out/proxy-status.txt" が "^shop-v1-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED \([^)]*\) +IGNORED +SYNCED \([^)]*\) +SYNCED \([^)]*\) +SYNCED \([^)]*\) +istiod-" にマッチする
    かつ ファイル "/root/mesh-routing/out/proxy-status.txt" がちょうど 3 行である
    かつ ファイル "/root/mesh-routing/out/proxy-status.txt" に "STALE" が含まれない

  @間違い
  シナリオ: よくある間違い1: VirtualService に gateways を書かない
    ステップ2で、VirtualService に gateways: shop-gateway を書かないこと。そのルールはメッシュの内側にだけ
    適用され、ゲートウェイの Envoy には shop.example.com のルートが届きません(Gateway は入口を開けるだけです)。

    もし 学習者が次のコマンドを実行する
      """
      cat > shop-routing.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: shop-gateway
        namespace: shop
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - shop.example.com
      ---
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: shop
        namespace: shop
      spec:
        host: shop
        subsets:
        - name: v1
          labels:
            version: v1
        - name: v2
          labels:
            version: v2
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop
        namespace: shop
      spec:
        hosts:
        - shop.example.com
        http:
        - match:
          - headers:
              x-canary:
                exact: "true"
          route:
          - destination:
              host: shop
              subset: v2
        - route:
          - destination:
              host: shop
              subset: v1
            weight: 90
          - destination:
              host: shop
              subset: v2
            weight: 10
      EOF
      kubectl apply -f shop-routing.yaml
      istioctl analyze -n shop > out/analyze.txt 2>&1
      for i in $(seq 3); do
        istioctl proxy-config routes deploy/istio-ingressgateway -n istio-system -o json > out/gw-routes.json
        grep -q shop.example.com out/gw-routes.json && break
        sleep 1
      done
      istioctl proxy-status -v 1 > out/proxy-status.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "gw-weights"
      チェック "gw-canary-route"
      """

  シナリオ: どの Pod も持たないサブセットは空の宛先になり、そこへのリクエストは 503 になる
    イングレスゲートウェイの Envoy が shop について持っているものを読みます。
    istioctl proxy-config cluster deploy/istio-ingressgateway -n istio-system --fqdn shop.shop.svc.cluster.local の
    出力を /root/mesh-routing/out/clusters.txt に、istioctl proxy-config endpoint deploy/istio-ingressgateway
    -n istio-system の出力のうち shop を含む行(grep shop)を /root/mesh-routing/out/endpoints.txt に保存してください。
    サブセット v2 のクラスターはありますが、そのエンドポイント(アドレス)は 1 つもありません。
    次に、ゲートウェイの Pod の IP を kubectl で調べ、ヘッダー Host: shop.example.com と x-canary: true を付けて
    http://<ゲートウェイの IP>:8080/ へリクエストを 1 つ送り、応答をヘッダーごと(curl -i)
    /root/mesh-routing/out/canary.txt に保存してください。ゲートウェイの Envoy が 503 で答えます。

    ヒント: サブセットは DestinationRule が作るクラスターで、中身(エンドポイント)はそのラベルを持つ Pod です。
    クラスターがあってもアドレスがなければ、Envoy には送り先がありません。proxy-config endpoint で
    アドレスの数を数えるのが最も早い確認です。

    ヒント: ゲートウェイの Pod の IP は kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}'
    で取れます。curl の -H でヘッダーを足せます。

    もし 学習者が次のコマンドを実行する
      """
      istioctl proxy-config cluster deploy/istio-ingressgateway -n istio-system --fqdn shop.shop.svc.cluster.local > out/clusters.txt
      istioctl proxy-config endpoint deploy/istio-ingressgateway -n istio-system | grep shop > out/endpoints.txt
      GATEWAY=$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}')
      curl -s -i -H 'Host: shop.example.com' -H 'x-canary: true' http://$GATEWAY:8080/ > out/canary.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: subset-clusters
    かつ ファイル "/root/mesh-routing/out/clusters.txt" が "^shop\.shop\.svc\.cluster\.local +80 +v2 +outbound +EDS +shop\.shop *$" にマッチする
    かつ ファイル "/root/mesh-routing/out/clusters.txt" が "^shop\.shop\.svc\.cluster\.local +80 +v1 +outbound +EDS +shop\.shop *$" にマッチする
    かつ ファイル "/root/mesh-routing/out/clusters.txt" に コマンド "istioctl proxy-config cluster deploy/istio-ingressgateway -n istio-system --fqdn shop.shop.svc.cluster.local" の出力のすべての行が含まれる
    # チェック: v2-no-endpoint
    かつ ファイル "/root/mesh-routing/out/endpoints.txt" が "\|v1\|shop\.shop\.svc\.cluster\.local *$" にマッチする
    かつ ファイル "/root/mesh-routing/out/endpoints.txt" に "|v2|" が含まれない
    かつ ファイル "/root/mesh-routing/out/endpoints.txt" がちょうど 2 行である
    かつ ファイル "/root/mesh-routing/out/endpoints.txt" に コマンド "istioctl proxy-config endpoint deploy/istio-ingressgateway -n istio-system | grep shop" の出力のすべての行が含まれる
    # チェック: canary-503
    かつ ファイル "/root/mesh-routing/out/canary.txt" が "^HTTP/1\.1 503 Service Unavailable" にマッチする
    かつ ファイル "/root/mesh-routing/out/canary.txt" に "no healthy upstream" が含まれる
    かつ ファイル "/root/mesh-routing/out/canary.txt" に コマンド "curl -s -i -H 'Host: shop.example.com' -H 'x-canary: true' http://$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}'):8080/ | grep -iv '^date:'" の出力のすべての行が含まれる

  シナリオ: version: v2 の Pod を足すと、サブセット v2 にアドレスが入り、リクエストが両方のサブセットに届く
    /opt/lab/fixtures/mesh-routing/shop-v2.yaml(Deployment shop-v2、Pod のラベル version: v2)を kubectl -n shop で
    適用し、ロールアウトが終わるまで待ってください。そのあと、ステップ3と同じ x-canary: true のリクエストを送り、
    応答(本文)を /root/mesh-routing/out/canary-v2.txt に保存します。v2 の Pod が ServiceVersion=v2 と答える
    必要があります。続けて、ステップ3と同じ grep shop の proxy-config endpoint を
    /root/mesh-routing/out/endpoints-after.txt に保存してください。サブセット v2 にアドレスが入っています。
    最後に、x-canary を付けないリクエストを 200 回送り、応答の ServiceVersion= の行だけを 1 回 1 行で
    /root/mesh-routing/out/versions.txt に保存してください。200 行すべてが v1 か v2 で、両方が含まれている
    必要があります(重みは 90/10 なので、v2 は 200 回のうち 20 回前後です)。

    ヒント: Pod が Running になってから、その Envoy とアプリが応答するまで、少し時間がかかります。
    x-canary: true のリクエストが ServiceVersion=v2 と答えるまで、1 秒おきに何度か(10 回まで)
    送り直してから数え始めてください。

    ヒント: echo アプリは応答の本文に ServiceVersion=v1 のような行を書きます。curl -s の出力を
    grep '^ServiceVersion=' に通せば 1 回 1 行になります。

    もし 学習者が次のコマンドを実行する
      """
      kubectl -n shop apply -f /opt/lab/fixtures/mesh-routing/shop-v2.yaml
      kubectl -n shop rollout status deployment/shop-v2 --timeout=60s
      GATEWAY=$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}')
      for i in $(seq 10); do
        curl -s -H 'Host: shop.example.com' -H 'x-canary: true' http://$GATEWAY:8080/ > out/canary-v2.txt
        grep -q '^ServiceVersion=v2' out/canary-v2.txt && break
        sleep 1
      done
      istioctl proxy-config endpoint deploy/istio-ingressgateway -n istio-system | grep shop > out/endpoints-after.txt
      for i in $(seq 200); do
        curl -s -H 'Host: shop.example.com' http://$GATEWAY:8080/ | grep '^ServiceVersion='
      done > out/versions.txt
      """
    ならば クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | .metadata.labels.version] | sort' の値が ["v1", "v2"] と等しい
    # チェック: canary-v2
    かつ ファイル "/root/mesh-routing/out/canary-v2.txt" が "^ServiceVersion=v2$" にマッチする
    かつ コマンド "curl -s -H 'Host: shop.example.com' -H 'x-canary: true' http://$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}'):8080/" の出力が "^ServiceVersion=v2$" にマッチする
    # チェック: v2-endpoint
    かつ ファイル "/root/mesh-routing/out/endpoints-after.txt" が "\|v2\|shop\.shop\.svc\.cluster\.local *$" にマッチする
    かつ ファイル "/root/mesh-routing/out/endpoints-after.txt" が "\|v1\|shop\.shop\.svc\.cluster\.local *$" にマッチする
    かつ ファイル "/root/mesh-routing/out/endpoints-after.txt" がちょうど 4 行である
    かつ ファイル "/root/mesh-routing/out/endpoints-after.txt" に コマンド "istioctl proxy-config endpoint deploy/istio-ingressgateway -n istio-system | grep shop" の出力のすべての行が含まれる
    # チェック: both-subsets
    かつ ファイル "/root/mesh-routing/out/versions.txt" がちょうど 200 行である
    かつ ファイル "/root/mesh-routing/out/versions.txt" に "^ServiceVersion=v[12]$" にマッチする行が 200 行以上ある
    かつ ファイル "/root/mesh-routing/out/versions.txt" に "^ServiceVersion=v2$" にマッチする行が 1 行以上ある
    かつ ファイル "/root/mesh-routing/out/versions.txt" に "^ServiceVersion=v1$" にマッチする行が 140 行以上ある

  @間違い
  シナリオ: よくある間違い2: サブセットのラベルを付けずに v2 をデプロイする
    ステップ4で、version: v2 のラベルを付けずに Deployment を作ること(kubectl create deployment は app=名前の
    ラベルしか付けません)。Pod は Running になっても、サブセット v2 は空の宛先のままで、x-canary の
    リクエストは 503 のまま、重み 10 のリクエストも 503 になって ServiceVersion の行を返しません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl -n shop create deployment shop-v2 --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n shop rollout status deployment/shop-v2 --timeout=60s
      GATEWAY=$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.podIP}')
      for i in $(seq 3); do
        curl -s -H 'Host: shop.example.com' -H 'x-canary: true' http://$GATEWAY:8080/ > out/canary-v2.txt
        grep -q '^ServiceVersion=v2' out/canary-v2.txt && break
        sleep 1
      done
      istioctl proxy-config endpoint deploy/istio-ingressgateway -n istio-system | grep shop > out/endpoints-after.txt
      for i in $(seq 200); do
        curl -s -H 'Host: shop.example.com' http://$GATEWAY:8080/ | grep '^ServiceVersion='
      done > out/versions.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "canary-v2"
      チェック "v2-endpoint"
      チェック "both-subsets"
      """

  シナリオ: STRICT の PeerAuthentication は、サイドカーのない Pod からの平文のリクエストを拒否する
    メッシュの外のクライアントを用意します。ネームスペース legacy を作り(istio-injection のラベルは
    付けません)、echo アプリ(gcr.io/istio-testing/app:latest)の Deployment legacy を作って、
    ロールアウトが終わるまで待ってください。この Pod にはサイドカーがありません。
    shop-v1 の Pod の IP を kubectl で調べ、legacy の Pod の中から kubectl exec で
    http://<Pod の IP>:8080/ へ平文のリクエストを 1 つ送り、curl -sS の出力(標準エラー出力も含めて)を
    /root/mesh-routing/out/plain-before.txt に保存してください。既定の PERMISSIVE では、平文もそのまま通ります。
    次に、/root/mesh-routing/peer-auth.yaml に、ネームスペース shop の PeerAuthentication default を
    mtls.mode: STRICT で書いて適用してください。そのあと同じ平文のリクエストを legacy の Pod から送り、
    出力を /root/mesh-routing/out/plain-strict.txt に保存します。shop の Pod の Envoy が接続を切り、
    curl は失敗します。
    最後に、メッシュの中からのリクエストを確かめます。shop-v1 の Pod の中から kubectl exec で、Service shop の
    ClusterIP のポート 80 へリクエストを 1 つ送り、応答(本文)を /root/mesh-routing/out/in-mesh.txt に保存して
    ください。送る側のサイドカーがリクエストを受け取り、mTLS で shop の Pod へ送るので、STRICT でも届きます。

    ヒント: STRICT もプロキシへ届くまで少し時間がかかります。平文のリクエストが失敗するまで、1 秒おきに
    何度か(10 回まで)送り直してください(Pod の中のコマンドが失敗すると kubectl exec も 0 以外で
    終わるので、|| break で抜けられます)。

    ヒント: PeerAuthentication は、置いたネームスペースのワークロードに効きます(istio-system に置くと
    メッシュ全体)。metadata.namespace を書かずに kubectl apply すると default ネームスペースに入り、shop には
    効きません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace legacy
      kubectl -n legacy create deployment legacy --image=gcr.io/istio-testing/app:latest
      kubectl -n legacy rollout status deployment/legacy --timeout=60s
      POD=$(kubectl -n shop get pod -l version=v1 -o jsonpath='{.items[0].status.podIP}')
      kubectl -n legacy exec deploy/legacy -- curl -sS -m 5 http://$POD:8080/ > out/plain-before.txt 2>&1
      cat > peer-auth.yaml <<'EOF'
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: default
        namespace: shop
      spec:
        mtls:
          mode: STRICT
      EOF
      kubectl apply -f peer-auth.yaml
      for i in $(seq 10); do
        kubectl -n legacy exec deploy/legacy -- curl -sS -m 5 http://$POD:8080/ > out/plain-strict.txt 2>&1 || break
        sleep 1
      done
      SVC=$(kubectl -n shop get service shop -o jsonpath='{.spec.clusterIP}')
      kubectl -n shop exec deploy/shop-v1 -- curl -sS -m 5 http://$SVC/ > out/in-mesh.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: legacy-outside-mesh
    # メッセージ: legacy の Pod にサイドカーが入っています。ネームスペース legacy に istio-injection のラベルを付けていないかを確かめてください。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "legacy" and .status.phase == "Running") | [.spec.initContainers[]?, .spec.containers[]] | map(.name)]' の値が [["app"]] と等しい
    かつ ファイル "/root/mesh-routing/out/plain-before.txt" が "^ServiceVersion=v1$" にマッチする
    # メッセージ: plain-before.txt に curl の進捗表示が入っています。curl -sS で送ってください。
    かつ ファイル "/root/mesh-routing/out/plain-before.txt" に "% Total" が含まれない
    かつ クラスターのネームスペース "shop" の "PeerAuthentication" "default" に対するクエリ '.spec.mtls.mode' の値が "STRICT" と等しい
    # チェック: plaintext-refused
    # メッセージ: STRICT にしたあとも、サイドカーのない Pod からの平文のリクエストが shop-v1 に届いています。PeerAuthentication が shop ネームスペースにあり、mode が STRICT かを確かめてください。
    かつ ファイル "/root/mesh-routing/out/plain-strict.txt" が "^curl: \(56\) Recv failure: Connection reset by peer$" にマッチする
    かつ ファイル "/root/mesh-routing/out/plain-strict.txt" が コマンド "kubectl -n legacy exec deploy/legacy -- curl -sS -m 5 http://$(kubectl -n shop get pod -l version=v1 -o jsonpath='{.items[0].status.podIP}'):8080/ 2>&1" の出力と等しい
    # チェック: in-mesh-mtls
    # メッセージ: メッシュの中の shop-v1 から Service shop へのリクエストが届いていません。送り先が Service shop の ClusterIP のポート 80 かを確かめてください。
    かつ ファイル "/root/mesh-routing/out/in-mesh.txt" が "^ServiceVersion=v[12]$" にマッチする
    かつ ファイル "/root/mesh-routing/out/in-mesh.txt" が "^RequestHeader=X-Forwarded-Client-Cert:.*spiffe://cluster.local/ns/shop/sa/default" にマッチする

  @間違い
  シナリオ: よくある間違い3: PeerAuthentication のネームスペースを書かずに適用する
    ステップ5で、metadata.namespace を書かずに PeerAuthentication を適用すること。kubectl の既定の
    ネームスペース default に入り、shop のワークロードには効かないので、平文のリクエストは通り続けます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace legacy
      kubectl -n legacy create deployment legacy --image=gcr.io/istio-testing/app:latest
      kubectl -n legacy rollout status deployment/legacy --timeout=60s
      POD=$(kubectl -n shop get pod -l version=v1 -o jsonpath='{.items[0].status.podIP}')
      kubectl -n legacy exec deploy/legacy -- curl -sS -m 5 http://$POD:8080/ > out/plain-before.txt 2>&1
      cat > peer-auth.yaml <<'EOF'
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: default
      spec:
        mtls:
          mode: STRICT
      EOF
      kubectl apply -f peer-auth.yaml
      for i in $(seq 3); do
        kubectl -n legacy exec deploy/legacy -- curl -sS -m 5 http://$POD:8080/ > out/plain-strict.txt 2>&1 || break
        sleep 1
      done
      SVC=$(kubectl -n shop get service shop -o jsonpath='{.spec.clusterIP}')
      kubectl -n shop exec deploy/shop-v1 -- curl -sS -m 5 http://$SVC/ > out/in-mesh.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "plaintext-refused"
      """
