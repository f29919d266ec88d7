# language: ja
@istio
機能: VirtualService・DestinationRule・Gateway・ServiceEntry・PeerAuthentication を静的解析で確かめる
  「どこへ送るか」を決める VirtualService と、「送った後でどう扱うか」を決める DestinationRule を書き、
  Gateway・ServiceEntry・PeerAuthentication を足しながら、そのつど istioctl analyze が何を報告するかを
  ファイルに残す。採点は、クラスターに入った設定リソースと、analyze の結果(テキストと JSON)を見る。
  このラボ環境は API サーバーだけのクラスターで、istiod も、動いているサイドカー(Envoy)もない。
  そのため、ページにある istioctl proxy-status と istioctl proxy-config(routes・cluster・endpoint)の部分は
  動いているプロキシを必要とするので、このラボでは採点しない。
  コントローラーもノードもないので Deployment は Pod を作らない。analyze がサブセットと Gateway の
  selector を Pod で解決できるように、フィクスチャが同じラベルの代役 Pod(Pending のまま)を置く。

  背景:
    前提 ラボのディレクトリ "/root/routing" を使う
    かつ フィクスチャ "fixtures/istio" を "/opt/lab/fixtures/istio" に置く

  シナリオ: メッシュ API タイプと shop アプリの準備
    作業ディレクトリ /root/routing と出力用の /root/routing/out を作り、istioctl manifest generate の結果を
    /root/routing/manifest.yaml に保存してクラスターに適用してください(先に istio-system ネームスペースを作る)。
    virtualservices・destinationrules・gateways・serviceentries(networking.istio.io)と
    peerauthentications(security.istio.io)の CRD が Established になるまで待ちます。
    ネームスペース shop-lab を作ってラベル istio-injection=enabled を付け、/opt/lab/fixtures/istio/shop-app.yaml を適用してください
    (Service shop、Deployment shop-v1 と shop-v2)。最後に istioctl analyze -n shop-lab の結果を標準エラー出力も含めて
    /root/routing/out/analyze-start.txt に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/routing/out
      cd /root/routing
      istioctl manifest generate > manifest.yaml
      kubectl create namespace istio-system
      kubectl apply -f manifest.yaml > /dev/null
      kubectl wait --for condition=established --timeout=60s \
        crd/virtualservices.networking.istio.io crd/destinationrules.networking.istio.io \
        crd/gateways.networking.istio.io crd/serviceentries.networking.istio.io \
        crd/peerauthentications.security.istio.io
      kubectl create namespace shop-lab
      kubectl label namespace shop-lab istio-injection=enabled
      kubectl apply -f /opt/lab/fixtures/istio/shop-app.yaml
      istioctl analyze -n shop-lab > out/analyze-start.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    かつ CRD "virtualservices.networking.istio.io" が Established である
    かつ CRD "destinationrules.networking.istio.io" が Established である
    かつ CRD "gateways.networking.istio.io" が Established である
    かつ CRD "serviceentries.networking.istio.io" が Established である
    かつ CRD "peerauthentications.security.istio.io" が Established である
    かつ ネームスペース "shop-lab" のラベル "istio-injection" が "enabled" である
    かつ クラスターのネームスペース "shop-lab" に "Service" "shop" が存在する
    かつ クラスターのネームスペース "shop-lab" に "Deployment" "shop-v1" が存在する
    かつ クラスターのネームスペース "shop-lab" に "Deployment" "shop-v2" が存在する
    かつ ファイル "/root/routing/out/analyze-start.txt" に "No validation issues found when analyzing namespace: shop-lab" が含まれる

  シナリオ: VirtualService だけのカナリアは、analyze がサブセットの不在を報告する
    shop-lab に VirtualService shop を作ってください(ファイル /root/routing/vs-shop.yaml)。hosts は shop、
    http の最初のルートで、サブセット v1 へ重み 90、サブセット v2 へ重み 10 を送るカナリアです。
    まだ DestinationRule がないので、analyze はサブセットが見つからないという Error(IST0101)を報告し、終了コード 79 で終わります。
    istioctl analyze -n shop-lab の結果を JSON(-o json)で /root/routing/out/analyze-canary.json に、
    テキストで(標準エラー出力も含めて)/root/routing/out/analyze-canary.txt に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-shop.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop
        namespace: shop-lab
      spec:
        hosts:
        - shop
        http:
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
      kubectl apply -f vs-shop.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-canary.json
      istioctl analyze -n shop-lab > out/analyze-canary.txt 2>&1
      """
    ならば 最後のコマンドの終了コードが 79 である
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.http[0].route[]?.weight' の結果に 90, 10 がすべて含まれる
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | [.spec.http[0].route[]? | {host: .destination.host, subset: .destination.subset, weight}] | sort_by(.subset)' の値が [{"host": "shop", "subset": "v1", "weight": 90}, {"host": "shop", "subset": "v2", "weight": 10}] と等しい
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.hosts' の値が ["shop"] と等しい
    かつ ファイル "/root/routing/out/analyze-canary.txt" に "IST0101" が含まれる
    かつ ファイル "/root/routing/out/analyze-canary.txt" に "Analyzers found issues when analyzing namespace: shop-lab" が含まれる
    かつ "/root/routing/out/analyze-canary.json" のクエリ '[.[] | select(.code == "IST0101" and .level == "Error") | .message]' の結果に 'Referenced host+subset in destinationrule not found: "shop+v1"', 'Referenced host+subset in destinationrule not found: "shop+v2"' がすべて含まれる

  シナリオ: DestinationRule でサブセットを定義すると、analyze のエラーが消える
    shop-lab に DestinationRule shop を作ってください(ファイル /root/routing/dr-shop.yaml)。host は shop、
    サブセット v1 はラベル version: v1 の Pod、サブセット v2 はラベル version: v2 の Pod を指します。
    これで VirtualService shop のサブセットが解決され、analyze の Error は消えます。
    istioctl analyze -n shop-lab の結果を /root/routing/out/analyze-dr.json(-o json)と
    /root/routing/out/analyze-dr.txt(テキスト、標準エラー出力も含めて)に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > dr-shop.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: shop
        namespace: shop-lab
      spec:
        host: shop
        subsets:
        - name: v1
          labels:
            version: v1
        - name: v2
          labels:
            version: v2
      EOF
      kubectl apply -f dr-shop.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-dr.json
      istioctl analyze -n shop-lab > out/analyze-dr.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    # チェック: dr-exists
    かつ クラスターのネームスペース "shop-lab" に "DestinationRule" "shop" が存在する
    かつ クラスターの "destinationrules.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.subsets[]?.name' の結果に "v1", "v2" がすべて含まれる
    # チェック: dr-subsets
    かつ クラスターの "destinationrules.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.subsets[]?.labels.version' の結果に "v1", "v2" がすべて含まれる
    かつ クラスターの "destinationrules.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | {host: .spec.host, subsets: ([.spec.subsets[]? | {name, labels}] | sort_by(.name))}' の値が {"host": "shop", "subsets": [{"name": "v1", "labels": {"version": "v1"}}, {"name": "v2", "labels": {"version": "v2"}}]} と等しい
    # チェック: analyze-dr-no-ist0101
    かつ ファイル "/root/routing/out/analyze-dr.txt" に "IST0101" が含まれない
    かつ ファイル "/root/routing/out/analyze-dr.txt" に "No validation issues found when analyzing namespace: shop-lab" が含まれる
    # チェック: analyze-dr-no-errors
    かつ "/root/routing/out/analyze-dr.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい

  @間違い
  シナリオ: よくある間違い: DestinationRule を書かずに VirtualService のサブセットだけで済ませる
    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      istioctl analyze -n shop-lab -o json > out/analyze-dr.json
      istioctl analyze -n shop-lab > out/analyze-dr.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "dr-exists"
      チェック "analyze-dr-no-ist0101"
      チェック "analyze-dr-no-errors"
      """

  @間違い
  シナリオ: よくある間違い: どのワークロードのラベルとも合わないサブセット
    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > dr-shop.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: shop
        namespace: shop-lab
      spec:
        host: shop
        subsets:
        - name: v1
          labels:
            version: v1
        - name: v2
          labels:
            version: v3
      EOF
      kubectl apply -f dr-shop.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-dr.json
      istioctl analyze -n shop-lab > out/analyze-dr.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "dr-subsets"
      チェック "analyze-dr-no-errors"
      """

  シナリオ: Gateway だけでは何も流れない: 同じネームスペースと istio-system に Gateway を置く
    ファイル /root/routing/gateways.yaml に Gateway を 2 つ書いて適用してください。shop-lab の shop-gateway は
    ホスト shop.example.com、istio-system の public-gateway はホスト shop.example.org で、どちらも
    selector istio: ingressgateway、ポート 80(名前 http、プロトコル HTTP)です。Gateway はポートを開けるだけで、
    どこへ送るかは決めません。istioctl analyze -n shop-lab -o json の結果を /root/routing/out/analyze-gateway-alone.json に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > gateways.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: Gateway
      metadata:
        name: shop-gateway
        namespace: shop-lab
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
      kind: Gateway
      metadata:
        name: public-gateway
        namespace: istio-system
      spec:
        selector:
          istio: ingressgateway
        servers:
        - port:
            number: 80
            name: http
            protocol: HTTP
          hosts:
          - shop.example.org
      EOF
      kubectl apply -f gateways.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-gateway-alone.json
      """
    ならば クラスターのネームスペース "shop-lab" に "Gateway" "shop-gateway" が存在する
    かつ クラスターのネームスペース "istio-system" に "Gateway" "public-gateway" が存在する
    かつ "/root/routing/out/analyze-gateway-alone.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい
    かつ クラスターの "gateways.networking.istio.io" に対するクエリ '[.items[]? | select(.metadata.name == "shop-gateway" or .metadata.name == "public-gateway") | {ns: .metadata.namespace, name: .metadata.name, hosts: [.spec.servers[]?.hosts[]?], port: .spec.servers[0].port, selector: .spec.selector}] | sort_by(.name)' の値が [{"ns": "istio-system", "name": "public-gateway", "hosts": ["shop.example.org"], "port": {"number": 80, "name": "http", "protocol": "HTTP"}, "selector": {"istio": "ingressgateway"}}, {"ns": "shop-lab", "name": "shop-gateway", "hosts": ["shop.example.com"], "port": {"number": 80, "name": "http", "protocol": "HTTP"}, "selector": {"istio": "ingressgateway"}}] と等しい

  シナリオ: VirtualService の gateways: で Gateway に結び付ける(別ネームスペースは namespace/name)
    ファイル /root/routing/vs-ingress.yaml に、shop-lab の VirtualService を 2 つ書いて適用してください。
    shop-ingress は hosts が shop.example.com(shop-gateway と同じホスト)で gateways: に shop-gateway、
    shop-public は hosts が shop.example.org(public-gateway と同じホスト)で、別ネームスペースの Gateway なので
    gateways: に istio-system/public-gateway と namespace/name で書きます。どちらも host shop のポート 8080 へ送ります。
    istioctl analyze -n shop-lab の結果を /root/routing/out/analyze-gateway.json(-o json)と
    /root/routing/out/analyze-gateway.txt に保存してください。Error はありませんが、analyze は 2 つの
    VirtualService について IST0140(Warning)を報告します。これは「ゲートウェイから入るリクエストには、
    VirtualService shop のサブセット(カナリアの重み)が効かない」という意味で、Warning なので終了コードは 0 です。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-ingress
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.com
        gateways:
        - shop-gateway
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-public
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.org
        gateways:
        - istio-system/public-gateway
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      EOF
      kubectl apply -f vs-ingress.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-gateway.json
      istioctl analyze -n shop-lab > out/analyze-gateway.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    # チェック: ingress-gateways
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop-ingress") | .spec.gateways[]?' の結果に "shop-gateway" がすべて含まれる
    # チェック: public-gateways
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop-public") | .spec.gateways[]?' の結果に "istio-system/public-gateway" がすべて含まれる
    # チェック: analyze-gateway-no-errors
    かつ "/root/routing/out/analyze-gateway.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい
    # チェック: ist0140-origins
    かつ "/root/routing/out/analyze-gateway.json" のクエリ '[.[] | select(.code == "IST0140") | .origin]' の結果に "VirtualService shop-lab/shop-ingress", "VirtualService shop-lab/shop-public" がすべて含まれる
    かつ ファイル "/root/routing/out/analyze-gateway.txt" に "Warning [IST0140] (VirtualService shop-lab/shop-public)" が含まれる
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '[.items[]? | select(.metadata.namespace == "shop-lab" and (.metadata.name == "shop-ingress" or .metadata.name == "shop-public")) | {name: .metadata.name, hosts: .spec.hosts, gateways: .spec.gateways, to: [.spec.http[]?.route[]?.destination | {host, port: .port.number}]}] | sort_by(.name)' の値が [{"name": "shop-ingress", "hosts": ["shop.example.com"], "gateways": ["shop-gateway"], "to": [{"host": "shop", "port": 8080}]}, {"name": "shop-public", "hosts": ["shop.example.org"], "gateways": ["istio-system/public-gateway"], "to": [{"host": "shop", "port": 8080}]}] と等しい

  @間違い
  シナリオ: よくある間違い: gateways: を書かず、Gateway に結び付かない VirtualService
    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-ingress
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.com
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-public
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.org
        gateways:
        - istio-system/public-gateway
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      EOF
      kubectl apply -f vs-ingress.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-gateway.json
      istioctl analyze -n shop-lab > out/analyze-gateway.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "ingress-gateways"
      チェック "ist0140-origins"
      """

  @間違い
  シナリオ: よくある間違い: 別ネームスペースの Gateway を名前だけで書く
    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-ingress.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-ingress
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.com
        gateways:
        - shop-gateway
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-public
        namespace: shop-lab
      spec:
        hosts:
        - shop.example.org
        gateways:
        - public-gateway
        http:
        - route:
          - destination:
              host: shop
              port:
                number: 8080
      EOF
      kubectl apply -f vs-ingress.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-gateway.json
      istioctl analyze -n shop-lab > out/analyze-gateway.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "public-gateways"
      チェック "analyze-gateway-no-errors"
      """

  シナリオ: ServiceEntry でメッシュの外の API を登録する
    ファイル /root/routing/se-example-api.yaml に、shop-lab の ServiceEntry example-api を書いて適用してください。
    ホスト api.example.com、location は MESH_EXTERNAL、ポート 443(名前 tls、プロトコル TLS)、resolution は DNS です。
    istioctl analyze -n shop-lab -o json の結果を /root/routing/out/analyze-se.json に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > se-example-api.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: ServiceEntry
      metadata:
        name: example-api
        namespace: shop-lab
      spec:
        hosts:
        - api.example.com
        location: MESH_EXTERNAL
        ports:
        - number: 443
          name: tls
          protocol: TLS
        resolution: DNS
      EOF
      kubectl apply -f se-example-api.yaml
      istioctl analyze -n shop-lab -o json > out/analyze-se.json
      """
    ならば クラスターのネームスペース "shop-lab" に "ServiceEntry" "example-api" が存在する
    かつ クラスターの "serviceentries.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "example-api") | .spec.hosts[]?' の結果に "api.example.com" がすべて含まれる
    かつ クラスターの "serviceentries.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "example-api") | .spec.location' の値が "MESH_EXTERNAL" と等しい
    かつ クラスターの "serviceentries.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "example-api") | .spec.resolution' の値が "DNS" と等しい
    かつ クラスターの "serviceentries.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "example-api") | .spec.ports[]?.number' の結果に 443 がすべて含まれる
    かつ クラスターの "serviceentries.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "example-api") | .spec.ports' の値が [{"number": 443, "name": "tls", "protocol": "TLS"}] と等しい
    かつ "/root/routing/out/analyze-se.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい
    かつ "/root/routing/out/analyze-se.json" のクエリ '[.[] | select(.code == "IST0140") | .origin]' の結果に "VirtualService shop-lab/shop-ingress", "VirtualService shop-lab/shop-public" がすべて含まれる

  シナリオ: PeerAuthentication: 何もなければ PERMISSIVE、ネームスペース単位で STRICT にする
    まず shop-lab と istio-system の PeerAuthentication の mTLS モードをクラスターから読んでください。どちらにも
    PeerAuthentication がなければ、既定は PERMISSIVE です。次にファイル /root/routing/pa-strict.yaml で、
    shop-lab 全体(selector なし)の PeerAuthentication default を mtls.mode STRICT で作って適用し、適用後のモードも
    クラスターから読みます。/root/routing/out/mtls.json に before(適用前のモード)と after(適用後のモード)を書き、
    istioctl analyze -n shop-lab -o json の結果を /root/routing/out/analyze-mtls.json に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      before=$(kubectl get peerauthentication -n shop-lab -o jsonpath='{.items[*].spec.mtls.mode}')
      mesh=$(kubectl get peerauthentication -n istio-system -o jsonpath='{.items[*].spec.mtls.mode}')
      echo "shop-lab: '${before}' istio-system: '${mesh}' -> PeerAuthentication がないので既定の PERMISSIVE"
      cat > pa-strict.yaml <<'EOF'
      apiVersion: security.istio.io/v1
      kind: PeerAuthentication
      metadata:
        name: default
        namespace: shop-lab
      spec:
        mtls:
          mode: STRICT
      EOF
      kubectl apply -f pa-strict.yaml
      after=$(kubectl get peerauthentication -n shop-lab -o jsonpath='{.items[*].spec.mtls.mode}')
      jq -n --arg before "${before:-${mesh:-PERMISSIVE}}" --arg after "$after" '{before: $before, after: $after}' > out/mtls.json
      cat out/mtls.json
      istioctl analyze -n shop-lab -o json > out/analyze-mtls.json
      """
    ならば "/root/routing/out/mtls.json" のクエリ ".before" の値が "PERMISSIVE" と等しい
    かつ クラスターのネームスペース "shop-lab" に "PeerAuthentication" "default" が存在する
    かつ クラスターの "peerauthentications.security.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .spec.selector == null) | .spec.mtls.mode' の値が "STRICT" と等しい
    かつ "/root/routing/out/mtls.json" のクエリ ".after" の値が クラスターの "peerauthentications.security.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .spec.selector == null) | .spec.mtls.mode' の値と等しい
    かつ "/root/routing/out/analyze-mtls.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい
    かつ "/root/routing/out/analyze-mtls.json" のクエリ '[.[] | select(.code == "IST0140") | .origin]' の結果に "VirtualService shop-lab/shop-ingress", "VirtualService shop-lab/shop-public" がすべて含まれる

  シナリオ: 同じホストに VirtualService が 2 つあると、analyze が衝突を報告する
    ファイル /root/routing/vs-shop-retries.yaml に、同じホスト shop への 2 つ目の VirtualService shop-retries
    (retries: attempts 3、perTryTimeout 2s)を書いて適用してください。shop-lab の VirtualService の一覧を
    kubectl get virtualservices -n shop-lab -o json で /root/routing/out/vs-conflict.json に保存し、
    istioctl analyze -n shop-lab の結果を /root/routing/out/analyze-conflict.json(-o json)と
    /root/routing/out/analyze-conflict.txt に保存してください。1 つのホストに VirtualService は 1 つ、が原則で、
    analyze は IST0109(Error)を報告し、終了コード 79 で終わります。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-shop-retries.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop-retries
        namespace: shop-lab
      spec:
        hosts:
        - shop
        http:
        - route:
          - destination:
              host: shop
          retries:
            attempts: 3
            perTryTimeout: 2s
      EOF
      kubectl apply -f vs-shop-retries.yaml
      kubectl get virtualservices -n shop-lab -o json > out/vs-conflict.json
      istioctl analyze -n shop-lab -o json > out/analyze-conflict.json
      istioctl analyze -n shop-lab > out/analyze-conflict.txt 2>&1
      """
    ならば 最後のコマンドの終了コードが 79 である
    かつ "/root/routing/out/vs-conflict.json" のクエリ '[.items[]? | select(any(.spec.hosts[]?; . == "shop")) | .metadata.name]' の結果に "shop", "shop-retries" がすべて含まれる
    かつ ファイル "/root/routing/out/analyze-conflict.txt" に "IST0109" が含まれる
    かつ ファイル "/root/routing/out/analyze-conflict.txt" に "Analyzers found issues when analyzing namespace: shop-lab" が含まれる
    かつ "/root/routing/out/vs-conflict.json" のクエリ '[.items[] | select(.metadata.name == "shop-retries") | {hosts: .spec.hosts, to: [.spec.http[]?.route[]?.destination.host], retries: .spec.http[0].retries}]' の値が [{"hosts": ["shop"], "to": ["shop"], "retries": {"attempts": 3, "perTryTimeout": "2s"}}] と等しい
    かつ "/root/routing/out/analyze-conflict.json" のクエリ '[.[] | select(.code == "IST0109" and .level == "Error") | .origin]' の結果に "VirtualService shop-lab/shop", "VirtualService shop-lab/shop-retries" がすべて含まれる

  シナリオ: 1 つの VirtualService にまとめて衝突を解く
    VirtualService shop(/root/routing/vs-shop.yaml)に retries(attempts 3、perTryTimeout 2s)を足して
    カナリア(v1 へ 90、v2 へ 10)と 1 つにまとめ、VirtualService shop-retries を削除してください。
    istioctl analyze -n shop-lab の結果を /root/routing/out/analyze-merged.json(-o json)と
    /root/routing/out/analyze-merged.txt に保存してください。衝突(IST0109)も Error もなくなります。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/routing
      cat > vs-shop.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: shop
        namespace: shop-lab
      spec:
        hosts:
        - shop
        http:
        - route:
          - destination:
              host: shop
              subset: v1
            weight: 90
          - destination:
              host: shop
              subset: v2
            weight: 10
          retries:
            attempts: 3
            perTryTimeout: 2s
      EOF
      kubectl apply -f vs-shop.yaml
      kubectl delete virtualservice shop-retries -n shop-lab
      istioctl analyze -n shop-lab -o json > out/analyze-merged.json
      istioctl analyze -n shop-lab > out/analyze-merged.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '[.items[]? | select(.metadata.namespace == "shop-lab" and any(.spec.hosts[]?; . == "shop"))] | length' の値が 1 と等しい
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.http[0].retries.attempts' の値が 3 と等しい
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | .spec.http[0].route[]?.weight' の結果に 90, 10 がすべて含まれる
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "shop-lab" and .metadata.name == "shop") | {route: ([.spec.http[0].route[]? | {host: .destination.host, subset: .destination.subset, weight}] | sort_by(.subset)), retries: .spec.http[0].retries}' の値が {"route": [{"host": "shop", "subset": "v1", "weight": 90}, {"host": "shop", "subset": "v2", "weight": 10}], "retries": {"attempts": 3, "perTryTimeout": "2s"}} と等しい
    かつ ファイル "/root/routing/out/analyze-merged.txt" に "IST0109" が含まれない
    かつ "/root/routing/out/analyze-merged.json" のクエリ '[.[] | select(.level == "Error")] | length' の値が 0 と等しい
    かつ "/root/routing/out/analyze-merged.json" のクエリ '[.[] | select(.code == "IST0140") | .origin]' の結果に "VirtualService shop-lab/shop-ingress", "VirtualService shop-lab/shop-public" がすべて含まれる
    かつ ファイル "/root/routing/out/analyze-merged.txt" に "Warning [IST0140] (VirtualService shop-lab/shop-ingress)" が含まれる
