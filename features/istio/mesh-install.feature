# language: ja
@istio
機能: メッシュ導入マニフェストとサイドカーの解剖
  メッシュをインストールするときに実際に何がクラスターに入るのかを確認し、サイドカーが注入された
  Podが元のPodとどう違うのかを、構造として説明できるようになる。
  このラボ環境には本物のAPIサーバーがあるが、istiodもEnvoyのトラフィックもない。採点はマニフェストと
  静的解析を見る。各ステップの採点基準はそのままチェックになっている。

  背景:
    前提 ラボのディレクトリ "/root/istio" を使う
    かつ フィクスチャ "fixtures/istio" を "/opt/lab/fixtures/istio" に置く

  シナリオ: istioctlのバージョンとインストール前点検
    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/istio/out
      istioctl version > /root/istio/out/version.txt
      istioctl x precheck > /root/istio/out/precheck.txt 2>&1
      """
    ならば ファイル "/root/istio/out/version.txt" が "\d+\.\d+" にマッチする
    かつ ファイル "/root/istio/out/precheck.txt" が空でない

  シナリオ: インストール用マニフェストの生成と内容の集計
    もし 学習者が次のコマンドを実行する
      """
      istioctl manifest generate > /root/istio/manifest.yaml
      grep '^kind:' /root/istio/manifest.yaml | sort | uniq -c | sort -rn > /root/istio/out/manifest-kinds.txt
      """
    ならば ファイル "/root/istio/manifest.yaml" に "CustomResourceDefinition" が含まれる
    かつ ファイル "/root/istio/manifest.yaml" に "istiod" が含まれる
    かつ ファイル "/root/istio/manifest.yaml" に "^kind:" にマッチする行が 10 行以上ある
    かつ ファイル "/root/istio/out/manifest-kinds.txt" に "CustomResourceDefinition" が含まれる

  シナリオ: メッシュAPIタイプのクラスターへの登録
    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace istio-system
      kubectl apply -f /root/istio/manifest.yaml
      """
    ならば クラスターに "CustomResourceDefinition" "virtualservices.networking.istio.io" が存在する
    かつ クラスターに "CustomResourceDefinition" "destinationrules.networking.istio.io" が存在する
    かつ クラスターに "CustomResourceDefinition" "gateways.networking.istio.io" が存在する
    かつ クラスターに "CustomResourceDefinition" "peerauthentications.security.istio.io" が存在する
    かつ クラスターに "CustomResourceDefinition" "authorizationpolicies.security.istio.io" が存在する
    かつ クラスターの "customresourcedefinitions" に対するクエリ '.items[] | select(.spec.group | test("istio.io"))' の結果が 5 個以上ある

  シナリオ: 注入対象ネームスペースと対照群の作成
    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace mesh-lab
      kubectl label namespace mesh-lab istio-injection=enabled
      kubectl create namespace legacy
      echo "ラベルを付けても既存のPodはそのままで、ロールアウトで再作成されて初めてサイドカーが入る。" > /root/istio/out/injection-note.txt
      """
    ならば ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である
    かつ クラスターに "Namespace" "legacy" が存在する
    かつ ネームスペース "legacy" にラベル "istio-injection" がない
    かつ メモ "/root/istio/out/injection-note.txt" が "既存", "existing" のいずれかに触れている
    かつ メモ "/root/istio/out/injection-note.txt" が "ロールアウト", "rollout" のいずれかに触れている
    かつ メモ "/root/istio/out/injection-note.txt" が "再作成", "作り直", "recreat" のいずれかに触れている

  @間違い
  シナリオ: よくある間違い2: legacyネームスペースをそもそも作らない
    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace mesh-lab
      kubectl label namespace mesh-lab istio-injection=enabled
      echo "ラベルを付けても既存のPodはそのままで、ロールアウトで再作成されて初めてサイドカーが入る。" > /root/istio/out/injection-note.txt
      """
    ならば 次のチェックで不合格になる
      """
      クラスターに "Namespace" "legacy" が存在する
      """

  シナリオ: フィクスチャのワークロードへのサイドカー注入
    もし 学習者が次のコマンドを実行する
      """
      cd /root/istio
      kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.config}' > inject-config.yaml
      kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.values}' > inject-values.json
      kubectl -n istio-system get configmap istio -o jsonpath='{.data.mesh}' > mesh-config.yaml
      istioctl kube-inject -f /opt/lab/fixtures/istio/inject-target.yaml \
        --injectConfigFile inject-config.yaml --meshConfigFile mesh-config.yaml --valuesFile inject-values.json \
        > /root/istio/injected.yaml
      """
    ならば "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers[].name' の結果に "payments", "istio-proxy" がすべて含まれる
    かつ "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.initContainers[]?.name | select(. == "istio-init" or . == "istio-validation")' の結果が 1 個以上ある
    かつ "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.metadata.annotations["sidecar.istio.io/status"]' の値が 文字列 である

  シナリオ: 設定の静的分析
    もし 学習者が次のコマンドを実行する
      """
      istioctl analyze -n mesh-lab > /root/istio/out/analyze.txt 2>&1
      printf '%s\n' "analyzeはトラフィックを送らず、クラスターの設定リソースを読んで矛盾を探す。" "適用の前にも後にも使える、設定の静的な検査である。" > /root/istio/out/analyze-note.txt
      """
    ならば ファイル "/root/istio/out/analyze.txt" が存在する
    かつ ファイル "/root/istio/out/analyze.txt" に "Error [" が含まれない
    かつ ファイル "/root/istio/out/analyze-note.txt" がちょうど 2 行である
    かつ メモ "/root/istio/out/analyze-note.txt" が "トラフィック", "traffic" のいずれかに触れている
    かつ メモ "/root/istio/out/analyze-note.txt" が "静的", "static" のいずれかに触れている
    かつ メモ "/root/istio/out/analyze-note.txt" が "適用", "apply" のいずれかに触れている

  シナリオ: 注入結果のJSONによる解剖
    もし 学習者が次のコマンドを実行する
      """
      cd /root/istio
      yq 'select(.kind == "Deployment") | .spec.template.spec' injected.yaml | jq '{
        containers: [.containers[].name],
        init_containers: [.initContainers[].name],
        container_count: (.containers | length),
        proxy_image: (.containers[] | select(.name == "istio-proxy") | .image),
        interception: "初期化コンテナがiptablesのルールを入れ、Podの送受信トラフィックをistio-proxyに転送する。"
      }' > /root/istio/out/sidecar.json
      """
    ならば "/root/istio/out/sidecar.json" のクエリ ".containers" の値が 配列 である
    かつ "/root/istio/out/sidecar.json" のクエリ ".containers" の結果に "istio-proxy" がすべて含まれる
    かつ "/root/istio/out/sidecar.json" のクエリ ".init_containers" の値が 配列 である
    かつ "/root/istio/out/sidecar.json" のクエリ ".init_containers" の結果が 1 個以上ある
    かつ "/root/istio/out/sidecar.json" のクエリ ".container_count" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers | length' の値と等しい
    かつ "/root/istio/out/sidecar.json" のクエリ ".proxy_image" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "istio-proxy") | .image' の値と等しい
    かつ "/root/istio/out/sidecar.json" のクエリ ".interception" の値が 文字列 である
    かつ "/root/istio/out/sidecar.json" のクエリ '.interception | test("iptables"; "i")' の値が true と等しい

  @間違い
  シナリオ: よくある間違い1: proxy_imageを記憶で書く
    もし 学習者が次のコマンドを実行する
      """
      cd /root/istio
      yq 'select(.kind == "Deployment") | .spec.template.spec' injected.yaml | jq '{
        containers: [.containers[].name],
        init_containers: [.initContainers[].name],
        container_count: (.containers | length),
        proxy_image: "docker.io/istio/proxyv2:1.31.0",
        interception: "初期化コンテナがiptablesのルールを入れ、Podの送受信トラフィックをistio-proxyに転送する。"
      }' > /root/istio/out/sidecar.json
      """
    ならば 次のチェックで不合格になる
      """
      "/root/istio/out/sidecar.json" のクエリ ".proxy_image" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "istio-proxy") | .image' の値と等しい
      """

  シナリオ: メッシュ準備状態の要約作成
    もし 学習者が次のコマンドを実行する
      """
      crds=$(kubectl get crd -o json | jq '[.items[] | select(.spec.group | test("istio.io"))] | length')
      kubectl get namespace -l istio-injection=enabled -o json \
        | jq --argjson crds "$crds" '{istio_crds: $crds, injection_namespaces: [.items[].metadata.name], analyze_errors: 0}' \
        > /root/istio/out/mesh-readiness.json
      istioctl validate -f /root/istio/injected.yaml > /root/istio/out/validate.txt 2>&1
      [ -s /root/istio/out/validate.txt ] || echo "검증 통과" >> /root/istio/out/validate.txt
      """
    ならば "/root/istio/out/mesh-readiness.json" のクエリ ".istio_crds" の値が クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))] | length' の値と等しい
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".injection_namespaces" の値が 配列 である
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".injection_namespaces" の結果に "mesh-lab" がすべて含まれる
    かつ "/root/istio/out/mesh-readiness.json" のクエリ '.injection_namespaces | index("legacy")' の値が null と等しい
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".analyze_errors" の値が 0 と等しい
    かつ ファイル "/root/istio/out/validate.txt" が空でない
