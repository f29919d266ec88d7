# language: ja
@istio
機能: メッシュ導入マニフェストとサイドカーの解剖
  メッシュをインストールするときに実際に何がクラスターに入るのかを確認し、サイドカーが注入されたPodが
  元のPodとどう違うのかを、構造として説明できるようになります。

  メッシュ導入の失敗の多くは、「何がインストールされたのかわからない状態」から始まります。
  istioctl installの1行で終わるように見えますが、その裏ではCRDが数十個、Webhook設定、ConfigMap、
  コントロールプレーンのワークロードが一度に入ります。そのため実務では、インストール前に
  manifest generateでまず目で見てからリポジトリにコミットする方式を取ります。そうすればアップグレードの
  ときにdiffを見られます。注入も同じです。注入はPodが作成されるときにWebhookがスペックを書き換える
  処理なので、ラベルだけ付けてロールアウトを実行しなければ、何も起こりません。この事実を手で確認して
  おけば、「ラベルを付けたのにメッシュに入らない」という質問に数秒で答えられます。

  このラボ環境では本物のEnvoyがトラフィックを流しません。そのため採点はマニフェストと静的解析を
  見ます。その代わり、注入結果のマニフェストを解剖する訓練は、実際の環境でもそのまま役立ちます。

  この環境について: API サーバーだけのクラスターで、istiod の Pod も本物の Envoy もありません。
  kube-inject には istiod がないので、ステップ 3 で適用した ConfigMap から注入設定を取り出して渡します。
  元の課題は「3 つすべて(--injectConfigFile、--meshConfigFile、--valuesFile)を渡す必要がある」としますが、
  この環境で測ると、--injectConfigFile さえあれば --meshConfigFile や --valuesFile を省いても出力は
  3 つ渡したときとバイト単位で同じになります(Istio 1.31 と 1.30 で測定)。--injectConfigFile がないときだけ
  istiod を探して失敗します。そのため採点は、渡したファイルの数ではなく、injected.yaml が採点側で同じ
  ConfigMap から作った kube-inject の出力と一致するかを見ます。

  背景:
    前提 ラボのディレクトリ "/root/istio" を使う
    かつ フィクスチャ "fixtures/istio" を "/opt/lab/fixtures/istio" に置く

  シナリオ: istioctl のバージョンとインストール前の点検
    istioctl versionの出力を/root/istio/out/version.txtに保存してください(バージョン番号が含まれている必要があります)。
    続けて、インストール前の点検(istioctl x precheck)を標準エラー出力も含めて/root/istio/out/precheck.txtに保存してください。

    ヒント: istioctl versionはクライアントのバージョンを先に出力します。インストール前の点検はexperimentalの
    サブコマンドにあり、エラーメッセージも結果なので、標準エラー出力まで一緒に保存してください。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/istio/out
      istioctl version > /root/istio/out/version.txt
      istioctl x precheck > /root/istio/out/precheck.txt 2>&1
      """
    ならば ファイル "/root/istio/out/version.txt" が "\d+\.\d+" にマッチする
    かつ ファイル "/root/istio/out/version.txt" に コマンド "istioctl version" の出力のすべての行が含まれる
    かつ ファイル "/root/istio/out/precheck.txt" が空でない
    かつ ファイル "/root/istio/out/precheck.txt" に コマンド "istioctl x precheck 2>&1" の出力のすべての行が含まれる

  シナリオ: インストール用マニフェストの生成と内容の集計
    istioctl manifest generateの結果を/root/istio/manifest.yamlとして保存してください。
    CustomResourceDefinitionとistiodが含まれていて、kind:で始まる行が10行以上ある必要があります。
    そのあと、種類別の個数の集計を/root/istio/out/manifest-kinds.txtに保存してください
    (集計にCustomResourceDefinitionが表示されている必要があります)。

    ヒント: istioctl manifest generateはクラスターに何も作らず、YAMLだけを出力します。何がいくつあるかは、
    kind:で始まる行を数えればわかります。

    もし 学習者が次のコマンドを実行する
      """
      istioctl manifest generate > /root/istio/manifest.yaml
      grep '^kind:' /root/istio/manifest.yaml | sort | uniq -c | sort -rn > /root/istio/out/manifest-kinds.txt
      cat /root/istio/out/manifest-kinds.txt
      """
    ならば ファイル "/root/istio/manifest.yaml" が コマンド "istioctl manifest generate" の出力と等しい
    かつ "/root/istio/manifest.yaml" のクエリ ".kind" の結果に "CustomResourceDefinition" がすべて含まれる
    かつ "/root/istio/manifest.yaml" のクエリ 'select(.kind == "Deployment") | .metadata.name' の結果に "istiod" がすべて含まれる
    かつ ファイル "/root/istio/manifest.yaml" に "^kind:" にマッチする行が 10 行以上ある
    かつ ファイル "/root/istio/out/manifest-kinds.txt" に "CustomResourceDefinition" が含まれる
    かつ ファイル "/root/istio/out/manifest-kinds.txt" に コマンド "istioctl manifest generate | grep '^kind:' | sort | uniq -c" の出力のすべての行が含まれる

  シナリオ: メッシュ API タイプのクラスターへの登録
    マニフェストをクラスターに適用して、メッシュAPIタイプを登録してください。
    virtualservices.networking.istio.io、destinationrules.networking.istio.io、gateways.networking.istio.io、
    peerauthentications.security.istio.io、authorizationpolicies.security.istio.ioの5つがすべて存在し、
    istio.ioグループのCRDが5個以上ある必要があります。

    ヒント: VirtualServiceのようなタイプは、CRDとして登録されて初めてkubectlが認識します。マニフェスト全体を
    適用するか、CustomResourceDefinitionだけを選んで適用してください。Established条件はAPIサーバーが付けてくれます。

    ヒント: yq 'select(.kind == "CustomResourceDefinition")' /root/istio/manifest.yaml | kubectl apply -f -で
    CRDだけを先に適用することもできます。ただし、マニフェストの全体を適用しておくほうが楽です。ステップ5で使う
    注入設定が、istio-systemのConfigMap2つ(istio-sidecar-injector、istio)に入っているためです。
    先にkubectl create ns istio-systemを実行してください。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace istio-system
      kubectl apply -f /root/istio/manifest.yaml
      kubectl wait --for condition=established --timeout=60s \
        crd/virtualservices.networking.istio.io crd/destinationrules.networking.istio.io \
        crd/gateways.networking.istio.io crd/peerauthentications.security.istio.io \
        crd/authorizationpolicies.security.istio.io
      """
    ならば CRD "virtualservices.networking.istio.io" が Established である
    かつ CRD "destinationrules.networking.istio.io" が Established である
    かつ CRD "gateways.networking.istio.io" が Established である
    かつ CRD "peerauthentications.security.istio.io" が Established である
    かつ CRD "authorizationpolicies.security.istio.io" が Established である
    かつ クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))]' の結果が 5 個以上ある

  シナリオ: 注入対象ネームスペースと対照群の作成
    ネームスペースmesh-labを作成し、ラベルistio-injection=enabledを付けてください。
    ネームスペースlegacyも作成しますが、注入ラベルは付けないでください(istio-injection も istio.io/rev も)。
    そして/root/istio/out/injection-note.txtに、「ラベルを付けても既存のPodはそのままで、
    ロールアウトで再作成されて初めてサイドカーが入る」という内容を書いてください。

    ヒント: ラベルの名前と値が正確でないと、WebhookのnamespaceSelectorに引っかかりません。対照群にはラベルを
    付けないでください。そして、ラベルがいつ効力を持つのかをメモに書いてください。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace mesh-lab
      kubectl label namespace mesh-lab istio-injection=enabled
      kubectl create namespace legacy
      cat > /root/istio/out/injection-note.txt <<'NOTE'
      ラベルを付けても既存のPodはそのままで、ロールアウトで再作成されて初めてサイドカーが入る。
      注入は Pod の作成時に Webhook がスペックを書き換える処理なので、kubectl rollout restart で作り直す。
      NOTE
      """
    ならば ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である
    # チェック: legacy-namespace
    かつ クラスターに "Namespace" "legacy" が存在する
    かつ ネームスペース "legacy" にラベル "istio-injection" がない
    かつ ネームスペース "legacy" にラベル "istio.io/rev" がない
    かつ メモ "/root/istio/out/injection-note.txt" が "既存", "existing" のいずれかに触れている
    かつ メモ "/root/istio/out/injection-note.txt" が "ロールアウト", "rollout", "再作成", "recreate" のいずれかに触れている

  @間違い
  シナリオ: よくある間違い2: 対照群の legacy ネームスペースを作らない
    ステップ4でlegacyネームスペースをそもそも作らないこと。注入されない対照群があって初めて、
    ラベルの意味が証明されます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace mesh-lab
      kubectl label namespace mesh-lab istio-injection=enabled
      echo "ラベルを付けても既存のPodはそのままで、ロールアウトで再作成されて初めてサイドカーが入る" > /root/istio/out/injection-note.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "legacy-namespace"
      """

  シナリオ: フィクスチャのワークロードへのサイドカー注入
    /opt/lab/fixtures/istio/inject-target.yamlに対してistioctl kube-injectを実行し、結果を/root/istio/injected.yamlとして保存してください。
    Deploymentのコンテナにpaymentsとistio-proxyが両方あり、初期化コンテナ(istio-initまたはistio-validation)があり、
    Podテンプレートにsidecar.istio.io/statusアノテーションがある必要があります。
    istiod がないので、istio-system の ConfigMap(istio-sidecar-injector の .data.config と .data.values、istio の .data.mesh)を
    ファイルに取り出し、--injectConfigFile、--meshConfigFile、--valuesFile で渡してください。

    ヒント: istioctl kube-injectはファイルを入力として受け取り、注入されたマニフェストを出力します。元のコンテナが
    消えてはいけませんし、初期化コンテナが1つ増えていれば正常です。

    ヒント: このラボ環境には本物のistiodのPodがありません。そのためkube-injectをそのまま実行すると、
    istiodへのport-forwardを試みて失敗します。ステップ3で適用したConfigMapから、注入テンプレート(.data.config)・
    メッシュ設定(.data.mesh)・値(.data.values)をそれぞれファイルに取り出して渡してください
    (istioctl kube-inject --helpの例に、この方法がそのまま載っています)。

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
    かつ "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.metadata.annotations | has("sidecar.istio.io/status")' の値が true と等しい
    かつ ファイル "/root/istio/injected.yaml" が コマンド "d=$(mktemp -d) && kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.config}' > $d/config && kubectl -n istio-system get configmap istio-sidecar-injector -o jsonpath='{.data.values}' > $d/values && kubectl -n istio-system get configmap istio -o jsonpath='{.data.mesh}' > $d/mesh && istioctl kube-inject -f /opt/lab/fixtures/istio/inject-target.yaml --injectConfigFile $d/config --meshConfigFile $d/mesh --valuesFile $d/values" の出力と等しい

  シナリオ: 設定の静的分析
    istioctl analyze -n mesh-labの結果を/root/istio/out/analyze.txtに保存してください(Error [が残っていてはいけません)。
    そして/root/istio/out/analyze-note.txtに、analyzeはトラフィックではなく設定を適用の前後に静的に検査する、という内容を2行で書いてください。

    ヒント: analyzeはクラスターの設定リソースを読み、互いに食い違っている箇所を探します。トラフィックを送るわけでは
    ないという点が核心で、結果にErrorが残っていてはいけません。

    もし 学習者が次のコマンドを実行する
      """
      istioctl analyze -n mesh-lab > /root/istio/out/analyze.txt 2>&1
      cat /root/istio/out/analyze.txt
      cat > /root/istio/out/analyze-note.txt <<'NOTE'
      istioctl analyze はトラフィックを流さず、設定リソースを読んで互いの食い違いを静的に検査する。
      適用の前(ファイル)にも後(クラスター)にも使える。
      NOTE
      """
    ならば ファイル "/root/istio/out/analyze.txt" が空でない
    かつ ファイル "/root/istio/out/analyze.txt" に コマンド "istioctl analyze -n mesh-lab 2>&1" の出力のすべての行が含まれる
    かつ ファイル "/root/istio/out/analyze.txt" に "Error [" が含まれない
    かつ ファイル "/root/istio/out/analyze-note.txt" がちょうど 2 行である
    かつ メモ "/root/istio/out/analyze-note.txt" が "静的", "static" のいずれかに触れている
    かつ メモ "/root/istio/out/analyze-note.txt" が "トラフィック", "traffic" のいずれかに触れている
    かつ メモ "/root/istio/out/analyze-note.txt" が "適用の前", "適用前", "前後", "before" のいずれかに触れている

  シナリオ: 注入結果の JSON による解剖
    /root/istio/out/sidecar.jsonを作成してください。キーは、containers(コンテナ名の配列、istio-proxyを含む)、
    init_containers(1個以上の配列)、container_count(注入後のコンテナ数)、
    proxy_image(injected.yamlのistio-proxyコンテナのイメージと文字列が完全に一致している必要があります)、
    interception(トラフィックをどのように横取りするかを1文で。iptablesという単語が入っている必要があります)の5つです。
    containers と init_containers は injected.yaml の Deployment にある名前をすべて、その順に並べてください。

    ヒント: 目で数えず、注入されたファイルから値を取り出して書いてください。イメージの文字列は、1文字違うだけでも
    実際の値と異なります。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/istio
      kubectl create --dry-run=client -o json -f injected.yaml | jq '.spec.template.spec | {
        containers: [.containers[].name],
        init_containers: [.initContainers[].name],
        container_count: (.containers | length),
        proxy_image: (.containers[] | select(.name == "istio-proxy") | .image),
        interception: "初期化コンテナが iptables のルールを入れて、Pod の送受信トラフィックを istio-proxy に転送する。"
      }' > /root/istio/out/sidecar.json
      cat /root/istio/out/sidecar.json
      """
    ならば "/root/istio/out/sidecar.json" のクエリ ".containers" の値が 配列 である
    かつ "/root/istio/out/sidecar.json" のクエリ ".containers" の結果に "istio-proxy" がすべて含まれる
    かつ "/root/istio/out/sidecar.json" のクエリ ".containers" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | [.spec.template.spec.containers[].name]' の値と等しい
    かつ "/root/istio/out/sidecar.json" のクエリ ".init_containers" の値が 配列 である
    かつ "/root/istio/out/sidecar.json" のクエリ ".init_containers" の結果が 1 個以上ある
    かつ "/root/istio/out/sidecar.json" のクエリ ".init_containers" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | [.spec.template.spec.initContainers[].name]' の値と等しい
    かつ "/root/istio/out/sidecar.json" のクエリ ".container_count" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers | length' の値と等しい
    # チェック: proxy-image
    かつ "/root/istio/out/sidecar.json" のクエリ ".proxy_image" の値が "/root/istio/injected.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "istio-proxy") | .image' の値と等しい
    かつ "/root/istio/out/sidecar.json" のクエリ '(.interception // "") | test("iptables")' の値が true と等しい
    # メッセージ: このステップではクラスターに何も作りません。kubectl create には --dry-run=client を付けて、injected.yaml を読むだけにしてください。
    かつ クラスターのネームスペース "mesh-lab" に "Deployment" "payments" が存在しない

  @間違い
  シナリオ: よくある間違い1: proxy_image を記憶で書く
    ステップ7のproxy_imageを記憶で書くこと。必ずinjected.yamlから取り出して入れてください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/istio
      cat > /root/istio/out/sidecar.json <<'JSON'
      {
        "containers": ["payments", "istio-proxy"],
        "init_containers": ["istio-init"],
        "container_count": 2,
        "proxy_image": "istio/proxyv2:1.31.0",
        "interception": "初期化コンテナが iptables のルールを入れて、Pod の送受信トラフィックを istio-proxy に転送する。"
      }
      JSON
      """
    ならば 次のチェックで不合格になる
      """
      チェック "proxy-image"
      """

  シナリオ: メッシュ準備状態の要約作成
    /root/istio/out/mesh-readiness.jsonを作成してください。istio_crds(クラスターのistio.ioグループCRDの実際の個数)、
    injection_namespaces(注入ラベルが付いたネームスペースの配列。mesh-labはあり、legacyはない必要があります)、
    analyze_errors(0)の3つのキーです。
    また、istioctl validate -f /root/istio/injected.yamlの結果を/root/istio/out/validate.txtに保存してください。

    ヒント: 前のステップで作ったものを1つのファイルにまとめます。数値はクラスターで数え直して入れ、注入されない
    ネームスペースが一覧に入ってはいけません。

    ヒント: CRD数は、手で数えず、kubectl get crd -o json | jq '[.items[] | select(.spec.group | test("istio.io"))] | length'
    で取り出してください。istioctl validateは、通過したときに出力が短かったり空だったりすることがあります。
    空の場合は、結果を表す1行を追記して、ファイルが空にならないようにしてください。

    もし 学習者が次のコマンドを実行する
      """
      crds=$(kubectl get crd -o json | jq '[.items[] | select(.spec.group | test("istio.io"))] | length')
      kubectl get namespace -l istio-injection=enabled -o json | jq --argjson crds "$crds" \
        '{istio_crds: $crds, injection_namespaces: [.items[].metadata.name], analyze_errors: 0}' \
        > /root/istio/out/mesh-readiness.json
      cat /root/istio/out/mesh-readiness.json
      istioctl validate -f /root/istio/injected.yaml > /root/istio/out/validate.txt 2>&1
      [ -s /root/istio/out/validate.txt ] || echo "検証通過" >> /root/istio/out/validate.txt
      cat /root/istio/out/validate.txt
      """
    ならば "/root/istio/out/mesh-readiness.json" のクエリ ".istio_crds" の値が クラスターの "customresourcedefinitions" に対するクエリ '[.items[] | select(.spec.group | test("istio.io"))] | length' の値と等しい
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".injection_namespaces" の値が 配列 である
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".injection_namespaces" の結果に "mesh-lab" がすべて含まれる
    かつ "/root/istio/out/mesh-readiness.json" のクエリ '[.injection_namespaces[] | select(. == "legacy")] | length' の値が 0 と等しい
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".injection_namespaces | sort" の値が クラスターの "namespaces" に対するクエリ '[.items[] | select(.metadata.labels["istio-injection"] == "enabled") | .metadata.name] | sort' の値と等しい
    かつ "/root/istio/out/mesh-readiness.json" のクエリ ".analyze_errors" の値が 0 と等しい
    かつ ファイル "/root/istio/out/validate.txt" が空でない
    かつ ファイル "/root/istio/out/validate.txt" に コマンド "istioctl validate -f /root/istio/injected.yaml 2>&1" の出力のすべての行が含まれる
