# language: ja
@メッシュ
機能: イングレスゲートウェイ: Gateway と VirtualService で httpbin を外へ出し、NodePort から呼ぶ
  メッシュの外(あなたのシェル)から、イングレスゲートウェイを通ってメッシュの中の httpbin に届くまでを
  作ります。Gateway はゲートウェイの Envoy にポートとホスト名を開けるだけで、どこへ送るかは、その Gateway を
  gateways: で参照する VirtualService が決めます。この環境には LoadBalancer がないので(Service
  istio-ingressgateway の EXTERNAL-IP は <pending> のまま)、ノードの IP と Service の NodePort で
  ゲートウェイに入ります。

  Gateway の hosts と VirtualService の hosts に書いたホスト名は、リクエストの Host ヘッダーと照らし合わされ
  ます。IP アドレスとポートで呼ぶときは、curl の -H "Host: httpbin.example.com" でホスト名を渡します。
  VirtualService の match に書いたパス(/status と /delay)以外のリクエストには、ゲートウェイの Envoy が
  404 で答えます。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、containerd
  と runc、CNI、kube-proxy、CoreDNS)。kube-proxy が、ノードの IP の NodePort をイングレスゲートウェイの
  Pod へ転送します。Istio のリリースは /root/istio に展開してあり、samples/ はセルの Istio バージョンの
  ものです。イメージはすべてこの環境でオフラインで作ったもので、httpbin のイメージ(mccutchen/go-httpbin)は
  go-httpbin を Go モジュールからビルドしたものです。ゲートウェイとサイドカーの Envoy はアップストリーム版です。

  この環境で測ったこと(Istio 1.31 と 1.30 で同じ): ゲートウェイの Pod の status.hostIP はノードの IP で、
  Service istio-ingressgateway のポート http2(80)には 30000〜32767 の NodePort が付きます。ゲートウェイを
  通った応答には server: istio-envoy が付きます。採点は、あなたのコマンドが保存したファイルを、
  クラスターの状態と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/ingress" を使う
    かつ Istio のリリースを "/root/istio" に展開する

  シナリオ: Istio を入れ、サイドカー付きの httpbin を動かす
    出力用のディレクトリ /root/ingress/out を作り、istioctl install -y で(既定のプロファイルで、
    イングレスゲートウェイごと)Istio をインストールしてください。ネームスペース default にラベル
    istio-injection=enabled を付け、/root/istio/samples/httpbin/httpbin.yaml を適用して、httpbin の
    ロールアウトが終わるまで待ちます。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/ingress/out
      istioctl install -y
      kubectl label namespace default istio-injection=enabled
      kubectl apply -f /root/istio/samples/httpbin/httpbin.yaml
      kubectl rollout status deploy/httpbin --timeout=90s
      """
    ならば 最後のコマンドが成功する
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "default" and .status.phase == "Running") | {app: .metadata.labels.app, proxies: ([((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length)}]' の値が [{"app": "httpbin", "proxies": 1}] と等しい
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system" and .metadata.labels.istio == "ingressgateway" and .status.phase == "Running")] | length' の値が 1 と等しい

  シナリオ: Gateway と VirtualService を作り、ノードの IP と NodePort からゲートウェイを通して httpbin を呼ぶ
    /root/ingress/httpbin-ingress.yaml に 2 つのリソースを書き、kubectl apply -f で適用してください。
    - Gateway httpbin-gateway(ネームスペース default): selector istio: ingressgateway、ポート 80(名前 http、
      プロトコル HTTP)、hosts は httpbin.example.com。
    - VirtualService httpbin(ネームスペース default): hosts は httpbin.example.com、gateways に
      httpbin-gateway、http のルールは、パスが /status か /delay で始まる(prefix)リクエストを httpbin の
      ポート 8000 へ送ります。
    次に、ゲートウェイの Pod の status.hostIP を INGRESS_HOST に、Service istio-ingressgateway のポート http2 の
    nodePort を INGRESS_PORT に入れ、"$INGRESS_HOST:$INGRESS_PORT" を /root/ingress/out/ingress.txt に
    保存します。ゲートウェイにルートが届くまで待ってから(/status/200 が 200 になるまで 1 秒おきに 10 回まで)、
    Host ヘッダー httpbin.example.com を付けて、http://$INGRESS_HOST:$INGRESS_PORT/status/200 の応答ヘッダー
    (curl -s -I)を /root/ingress/out/status-200.txt に、/headers の応答ヘッダーを
    /root/ingress/out/headers.txt に保存してください。

    ヒント: ポートの番号は kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name=="http2")].nodePort}'
    で、ノードの IP は kubectl get po -l istio=ingressgateway -n istio-system -o jsonpath='{.items[0].status.hostIP}'
    で取れます。port(80)はクラスターの中のポートで、ノードの外から入るポートは nodePort です。

    もし 学習者が次のコマンドを実行する
      """
      cat > httpbin-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: httpbin-gateway
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - "httpbin.example.com"
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: httpbin
      spec:
        hosts:
        - "httpbin.example.com"
        gateways:
        - httpbin-gateway
        http:
        - match:
          - uri:
              prefix: /status
          - uri:
              prefix: /delay
          route:
          - destination:
              port:
                number: 8000
              host: httpbin
      EOF
      kubectl apply -f httpbin-ingress.yaml
      export INGRESS_PORT=$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name=="http2")].nodePort}')
      export INGRESS_HOST=$(kubectl get po -l istio=ingressgateway -n istio-system -o jsonpath='{.items[0].status.hostIP}')
      echo "$INGRESS_HOST:$INGRESS_PORT" > out/ingress.txt
      for i in $(seq 10); do
        curl -s -o /dev/null -w "%{http_code}" -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" | grep -q 200 && break
        sleep 1
      done
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" > out/status-200.txt
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/headers" > out/headers.txt
      """
    ならば 最後のコマンドが成功する
    かつ クラスターのネームスペース "default" の "Gateway" "httpbin-gateway" に対するクエリ '{selector: .spec.selector, servers: [.spec.servers[]? | {port: .port, hosts: .hosts}]}' の値が {"selector": {"istio": "ingressgateway"}, "servers": [{"port": {"number": 80, "name": "http", "protocol": "HTTP"}, "hosts": ["httpbin.example.com"]}]} と等しい
    # チェック: vs-routes
    かつ クラスターのネームスペース "default" の "VirtualService" "httpbin" に対するクエリ '{hosts: .spec.hosts, gateways: .spec.gateways, prefixes: [.spec.http[]?.match[]?.uri.prefix] | sort, to: [.spec.http[]?.route[]?.destination | {host, port: .port.number}]}' の値が {"hosts": ["httpbin.example.com"], "gateways": ["httpbin-gateway"], "prefixes": ["/delay", "/status"], "to": [{"host": "httpbin", "port": 8000}]} と等しい
    # チェック: nodeport
    # メッセージ: /root/ingress/out/ingress.txt が、ゲートウェイの Pod の hostIP と、ポート http2 の nodePort になっていません。port(80)ではなく nodePort を使います。
    かつ "/root/ingress/out/ingress.txt" のクエリ 'split(":") | .[1] | tonumber' の値が クラスターの "services" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system" and .metadata.name == "istio-ingressgateway") | .spec.ports[] | select(.name == "http2") | .nodePort] | first' の値と等しい
    かつ "/root/ingress/out/ingress.txt" のクエリ 'split(":") | .[0]' の値が クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system" and .metadata.labels.istio == "ingressgateway") | .status.hostIP] | first' の値と等しい
    # チェック: status-200
    # メッセージ: ゲートウェイを通った /status/200 が 200 になっていません。Host ヘッダー、VirtualService の gateways:、NodePort を確かめてください。
    かつ ファイル "/root/ingress/out/status-200.txt" が "^HTTP/1\.1 200 OK\r?$" にマッチする
    かつ ファイル "/root/ingress/out/status-200.txt" が "^server: istio-envoy\r?$" にマッチする
    かつ コマンド "curl -s -I -HHost:httpbin.example.com http://$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.hostIP}'):$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name==\"http2\")].nodePort}')/status/200" の出力が "^HTTP/1\.1 200 OK\r?$" にマッチする
    # チェック: unmatched-404
    かつ ファイル "/root/ingress/out/headers.txt" が "^HTTP/1\.1 404 Not Found\r?$" にマッチする
    かつ ファイル "/root/ingress/out/headers.txt" が "^server: istio-envoy\r?$" にマッチする
    かつ コマンド "curl -s -I -HHost:httpbin.example.com http://$(kubectl -n istio-system get pod -l istio=ingressgateway -o jsonpath='{.items[0].status.hostIP}'):$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name==\"http2\")].nodePort}')/headers" の出力が "^HTTP/1\.1 404 Not Found\r?$" にマッチする

  @間違い
  シナリオ: よくある間違い1: VirtualService に gateways を書かない
    ステップ2で、VirtualService に gateways: httpbin-gateway を書かないこと。そのルールはメッシュの内側
    (サイドカー)にだけ適用され、ゲートウェイの Envoy には httpbin.example.com のルートが届かないので、
    /status/200 にも 404 が返ります。

    もし 学習者が次のコマンドを実行する
      """
      cat > httpbin-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: httpbin-gateway
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - "httpbin.example.com"
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: httpbin
      spec:
        hosts:
        - "httpbin.example.com"
        http:
        - match:
          - uri:
              prefix: /status
          - uri:
              prefix: /delay
          route:
          - destination:
              port:
                number: 8000
              host: httpbin
      EOF
      kubectl apply -f httpbin-ingress.yaml
      export INGRESS_PORT=$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name=="http2")].nodePort}')
      export INGRESS_HOST=$(kubectl get po -l istio=ingressgateway -n istio-system -o jsonpath='{.items[0].status.hostIP}')
      echo "$INGRESS_HOST:$INGRESS_PORT" > out/ingress.txt
      for i in $(seq 5); do
        curl -s -o /dev/null -w "%{http_code}" -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" | grep -q 200 && break
        sleep 1
      done
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" > out/status-200.txt
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/headers" > out/headers.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "vs-routes"
      チェック "status-200"
      """

  @間違い
  シナリオ: よくある間違い2: NodePort ではなく Service のポート 80 を使う
    ステップ2で、INGRESS_PORT に nodePort ではなく port(80)を入れること。ノードの IP のポート 80 では
    だれも待ち受けていないので、接続が拒否されます。

    もし 学習者が次のコマンドを実行する
      """
      cat > httpbin-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: httpbin-gateway
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - "httpbin.example.com"
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: httpbin
      spec:
        hosts:
        - "httpbin.example.com"
        gateways:
        - httpbin-gateway
        http:
        - match:
          - uri:
              prefix: /status
          - uri:
              prefix: /delay
          route:
          - destination:
              port:
                number: 8000
              host: httpbin
      EOF
      kubectl apply -f httpbin-ingress.yaml
      export INGRESS_PORT=$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name=="http2")].port}')
      export INGRESS_HOST=$(kubectl get po -l istio=ingressgateway -n istio-system -o jsonpath='{.items[0].status.hostIP}')
      echo "$INGRESS_HOST:$INGRESS_PORT" > out/ingress.txt
      for i in $(seq 5); do
        curl -s -o /dev/null -w "%{http_code}" -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" | grep -q 200 && break
        sleep 1
      done
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/status/200" > out/status-200.txt
      curl -s -I -HHost:httpbin.example.com "http://$INGRESS_HOST:$INGRESS_PORT/headers" > out/headers.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "nodeport"
      チェック "status-200"
      """

  @間違い
  シナリオ: よくある間違い3: Host ヘッダーを付けずに呼ぶ
    ステップ2で、curl に -HHost:httpbin.example.com を付けないこと。Host は「ノードの IP:ポート」になり、
    Gateway の hosts(httpbin.example.com)に合わないので、ゲートウェイの Envoy は 404 で答えます。

    もし 学習者が次のコマンドを実行する
      """
      cat > httpbin-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: httpbin-gateway
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - "httpbin.example.com"
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: httpbin
      spec:
        hosts:
        - "httpbin.example.com"
        gateways:
        - httpbin-gateway
        http:
        - match:
          - uri:
              prefix: /status
          - uri:
              prefix: /delay
          route:
          - destination:
              port:
                number: 8000
              host: httpbin
      EOF
      kubectl apply -f httpbin-ingress.yaml
      export INGRESS_PORT=$(kubectl -n istio-system get service istio-ingressgateway -o jsonpath='{.spec.ports[?(@.name=="http2")].nodePort}')
      export INGRESS_HOST=$(kubectl get po -l istio=ingressgateway -n istio-system -o jsonpath='{.items[0].status.hostIP}')
      echo "$INGRESS_HOST:$INGRESS_PORT" > out/ingress.txt
      for i in $(seq 5); do
        curl -s -o /dev/null -w "%{http_code}" "http://$INGRESS_HOST:$INGRESS_PORT/status/200" | grep -q 200 && break
        sleep 1
      done
      curl -s -I "http://$INGRESS_HOST:$INGRESS_PORT/status/200" > out/status-200.txt
      curl -s -I "http://$INGRESS_HOST:$INGRESS_PORT/headers" > out/headers.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "status-200"
      """
