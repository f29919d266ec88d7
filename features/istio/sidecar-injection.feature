# language: ja
@メッシュ
機能: サイドカー注入はロールアウトで起きる: 生きたメッシュで確かめる
  ネームスペースに注入ラベルを付けたとき、いつ・どの Pod にサイドカーが入るのかを、動いている istiod の上で
  自分の手で確かめます。あわせて、istiod の検証 Webhook が何を拒否するのか、istioctl analyze がサブセットと
  Pod の食い違いをどう報告するのか、istioctl proxy-status が何を見せるのかを確認します。

  注入は Pod が作成されるときに Webhook がスペックを書き換える処理なので、ラベルだけ付けてロールアウトを
  実行しなければ、何も起こりません。「ラベルを付けたのにメッシュに入らない」という質問の答えはここにあります。
  DestinationRule のサブセットは、ラベルであって、デプロイではありません。subset: v2 は、その名前のラベルを
  持つ Pod を指すだけです。そのラベルを持つ Pod がなければ、サブセットは空の宛先になり、リクエストは 503 に
  落ちます。そして、設定が実際にプロキシに届いたかは、プロキシ側(istiod)に尋ねます。

  この環境について: 各セルには本物のコントロールプレーン(kube-controller-manager、kube-scheduler)と、
  本物のノードが 1 つあります(kubelet、containerd と runc、CNI、kube-proxy、CoreDNS)。Istio をインストール
  すると、istiod とイングレスゲートウェイがそのノードの Pod として動き、注入 Webhook と検証 Webhook に本物の
  istiod が応答します。イメージはすべてこの環境でオフラインで作ったもので、Istio の pilot と proxyv2 は
  セルの Istio バージョンのビルド(プロキシの Envoy はアップストリーム版)、アプリのコンテナには Istio の
  echo アプリ(イメージ gcr.io/istio-testing/app)を使います。注入された Pod では istio-init が Pod の中に
  iptables のルールを入れ、istio-proxy(pilot-agent と Envoy)が動くので、istioctl proxy-status には各プロキシが
  並び、istioctl proxy-config(cluster・listener・routes・endpoint)でその Envoy の設定を直接読むことも
  できます。
  採点は、クラスターの状態(Pod のスペック、uid、ラベル)と、保存したファイルを採点側が同じコマンドを
  実行した結果と比べて行います。

  この環境で測ったこと(Istio 1.31 と 1.30 で同じ): istioctl install -y は、ラベルのないオブジェクトも
  検証する既定の検証 Webhook(istiod-default-validator)を入れます。manifest generate を kubectl apply
  しただけでは、検証されるのは istio.io/rev=default ラベルの付いたオブジェクトだけです。ルートの重み
  weight: -1 は CRD のスキーマだけなら受け付けられます(Webhook のないクラスターでは作成されます)が、
  istiod は「weight -1 < 0」として拒否します。hosts を書かない VirtualService は istiod も受け付ける
  (委譲用の VirtualService になる)ので、無効な例にはなりません。どの Pod も選ばないサブセットを
  istioctl analyze は IST0173 の Error として報告し、終了コード 79 で終わります。

  背景:
    前提 ラボのディレクトリ "/root/injection" を使う
    かつ フィクスチャ "fixtures/injection" を "/opt/lab/fixtures/injection" に置く

  シナリオ: istioctl install で Istio を入れ、istiod が動くのを確かめる
    出力用のディレクトリ /root/injection/out を作り、istioctl install -y で Istio をインストールしてください。
    そのあと、istio-system の istiod の Pod(ラベル app=istiod)を kubectl get -o json で
    /root/injection/out/istiod-pods.json に保存してください。istiod の Pod が Running である必要があります。

    ヒント: istioctl install は、istiod の Deployment が準備できるまで待ってから終わります。manifest generate を
    kubectl apply する方法でも istiod は動きますが、その場合ラベルのないオブジェクトを検証する既定の検証 Webhook
    (istiod-default-validator)が入らず、ステップ 4 の VirtualService が拒否されません。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/injection/out
      istioctl install -y
      kubectl -n istio-system get pods -l app=istiod -o json > /root/injection/out/istiod-pods.json
      """
    ならば 60 秒以内に クラスターの "pods" に対するクエリ '.items[] | select(.metadata.namespace == "istio-system" and .metadata.labels.app == "istiod" and .status.phase == "Running")' の結果が 1 個以上ある
    かつ クラスターに "ValidatingWebhookConfiguration" "istiod-default-validator" が存在する
    かつ 60 秒以内に クラスターの "mutatingwebhookconfigurations" に対するクエリ '[.items[] | select(.metadata.name == "istio-sidecar-injector") | .webhooks[] | .clientConfig.caBundle // "" | length > 0] | (length > 0 and all)' の値が true と等しい
    かつ "/root/injection/out/istiod-pods.json" のクエリ '[.items[]? | select(.status.phase == "Running") | .metadata.name]' の値が クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system" and .metadata.labels.app == "istiod" and .status.phase == "Running") | .metadata.name]' の値と等しい

  シナリオ: 注入ラベルのあるネームスペースの Pod にだけサイドカーが入る
    ネームスペース mesh-lab を作成し、ラベル istio-injection=enabled を付けてください。ネームスペース legacy と
    control も作成しますが、こちらには注入ラベルを付けないでください。
    そのあと、3 つのネームスペースそれぞれに /opt/lab/fixtures/injection/web.yaml(Service web と Deployment web)を
    kubectl -n で適用してください。mesh-lab の Pod は Running になり、istio-proxy がネイティブサイドカー
    (restartPolicy: Always の初期化コンテナ)として入り、アプリのコンテナは web だけである必要があります。
    legacy と control の Pod は Running で、コンテナは web だけ(サイドカーなし)である必要があります。

    ヒント: 注入ラベルは Deployment を適用する前に付けてください。Webhook は Pod が作成されるその瞬間に
    ネームスペースのラベルを見ます。kubectl get pods -A -o wide で、ノードと IP、READY の数(2/2 と 1/1)を見比べられます。

    ヒント: ノードの kubelet が 1.33 以降なら、istiod は istio-proxy を containers ではなく initContainers に
    restartPolicy: Always で入れます(ネイティブサイドカー)。kubectl get pod -o yaml で確かめてください。

    もし 学習者が次のコマンドを実行する
      """
      kubectl create namespace mesh-lab
      kubectl label namespace mesh-lab istio-injection=enabled
      kubectl create namespace legacy
      kubectl create namespace control
      kubectl -n mesh-lab apply -f /opt/lab/fixtures/injection/web.yaml
      kubectl -n legacy apply -f /opt/lab/fixtures/injection/web.yaml
      kubectl -n control apply -f /opt/lab/fixtures/injection/web.yaml
      """
    ならば ネームスペース "mesh-lab" のラベル "istio-injection" が "enabled" である
    かつ ネームスペース "legacy" にラベル "istio-injection" がない
    かつ ネームスペース "control" にラベル "istio-injection" がない
    かつ クラスターのネームスペース "mesh-lab" に "Deployment" "web" が存在する
    かつ クラスターのネームスペース "legacy" に "Deployment" "web" が存在する
    かつ クラスターのネームスペース "control" に "Deployment" "web" が存在する
    かつ 20 秒以内に クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "mesh-lab" and .status.phase == "Running") | {containers: [.spec.containers[].name], sidecar: [.spec.initContainers[]? | select(.name == "istio-proxy") | .restartPolicy]}]' の値が [{"containers": ["web"], "sidecar": ["Always"]}] と等しい
    かつ 20 秒以内に クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "legacy" or .metadata.namespace == "control") | select(.status.phase == "Running") | {ns: .metadata.namespace, names: [((.spec.initContainers // []) + .spec.containers)[].name]}] | sort_by(.ns)' の値が [{"ns": "control", "names": ["web"]}, {"ns": "legacy", "names": ["web"]}] と等しい

  シナリオ: ラベルを後から付けても既存の Pod は変わらず、ロールアウトで初めてサイドカーが入る
    まず、legacy と control の Pod の一覧を kubectl get pods -o json で /root/injection/out/legacy-before.json と
    /root/injection/out/control-before.json に保存してください。
    次に legacy にラベル istio-injection=enabled を付け、すぐに legacy の Pod の一覧を
    /root/injection/out/legacy-labelled.json に保存してください(既存の Pod は同じ uid のまま、サイドカーなしのはずです)。
    最後に kubectl rollout restart で legacy の Deployment web を再作成し、kubectl -n legacy rollout status deployment/web の
    出力を /root/injection/out/rollout-status.txt に保存してください。legacy の新しい Pod は Running で、ネイティブサイドカーの
    istio-proxy が入っている必要があります。control にはラベルを付けず、その Pod は同じもの(同じ uid)のままである必要があります。

    ヒント: ラベルはネームスペースの属性にすぎず、Webhook が呼ばれるのは Pod が作成されるときだけです。
    ラベルを付けた直後の Pod の uid と、付ける前の uid を比べてみてください。

    ヒント: rollout restart は Pod テンプレートにアノテーションを付けるだけで、実際の Pod の入れ替えは
    コントローラーがあとから行います。rollout status は入れ替えが終わるまで待ちます。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/injection
      kubectl -n legacy get pods -o json > out/legacy-before.json
      kubectl -n control get pods -o json > out/control-before.json
      kubectl label namespace legacy istio-injection=enabled
      kubectl -n legacy get pods -o json > out/legacy-labelled.json
      kubectl -n legacy rollout restart deployment/web
      kubectl -n legacy rollout status deployment/web --timeout=60s > out/rollout-status.txt
      """
    ならば ネームスペース "legacy" のラベル "istio-injection" が "enabled" である
    かつ ネームスペース "control" にラベル "istio-injection" がない
    かつ "/root/injection/out/legacy-before.json" のクエリ '[.items[]? | select(.status.phase == "Running")]' の結果が 1 個以上ある
    かつ "/root/injection/out/legacy-labelled.json" のクエリ '[.items[]? | .metadata.uid] | sort' の値が "/root/injection/out/legacy-before.json" のクエリ '[.items[]? | .metadata.uid] | sort' の値と等しい
    かつ "/root/injection/out/legacy-labelled.json" のクエリ '[.items[]? | ((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length' の値が 0 と等しい
    # チェック: legacy-sidecar
    かつ 20 秒以内に クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "legacy" and .status.phase == "Running") | {containers: [.spec.containers[].name], sidecar: [.spec.initContainers[]? | select(.name == "istio-proxy") | .restartPolicy]}]' の値が [{"containers": ["web"], "sidecar": ["Always"]}] と等しい
    かつ ファイル "/root/injection/out/rollout-status.txt" に コマンド "kubectl -n legacy rollout status deployment/web --timeout=60s" の出力のすべての行が含まれる
    かつ "/root/injection/out/control-before.json" のクエリ '[.items[]? | select(.status.phase == "Running")]' の結果が 1 個以上ある
    かつ "/root/injection/out/control-before.json" のクエリ '[.items[]? | .metadata.uid] | sort' の値が クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "control") | .metadata.uid] | sort' の値と等しい

  @間違い
  シナリオ: よくある間違い1: ラベルを付けただけでロールアウトしない
    ステップ3でラベルだけ付けて、rollout restart を実行しないこと。ラベルは既存の Pod を変えません。
    新しい Pod が作られない限り、legacy の Pod にサイドカーは入りません。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/injection
      kubectl -n legacy get pods -o json > out/legacy-before.json
      kubectl -n control get pods -o json > out/control-before.json
      kubectl label namespace legacy istio-injection=enabled
      kubectl -n legacy get pods -o json > out/legacy-labelled.json
      kubectl -n legacy rollout status deployment/web --timeout=60s > out/rollout-status.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "legacy-sidecar"
      """

  シナリオ: CRD のスキーマは通るが、istiod の検証 Webhook が拒否する VirtualService
    /root/injection/vs-bad.yaml に、mesh-lab の VirtualService web-bad を書いてください。hosts は web、
    http の最初のルートの宛先は host web で、重み(weight)を -1 にします。
    kubectl apply -f /root/injection/vs-bad.yaml で適用し、その標準エラー出力を /root/injection/out/vs-denied.txt に
    保存してください。適用は失敗し、メッセージは istiod の検証 Webhook(admission webhook)による拒否で、
    mesh-lab に VirtualService は 1 つもできていない必要があります。

    ヒント: 負の重みは、CRD の OpenAPI スキーマでは整数として通ります。それを意味のうえで拒否するのは
    istiod の検証です。拒否のメッセージに、どの Webhook が何を理由に拒否したのかが書かれています。

    もし 学習者が次のコマンドを実行する
      """
      cat > /root/injection/vs-bad.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata:
        name: web-bad
        namespace: mesh-lab
      spec:
        hosts:
        - web
        http:
        - route:
          - destination:
              host: web
            weight: -1
      EOF
      kubectl apply -f /root/injection/vs-bad.yaml 2> /root/injection/out/vs-denied.txt
      """
    ならば 最後のコマンドが失敗する
    かつ クラスターの "virtualservices.networking.istio.io" に対するクエリ '[.items[]? | select(.metadata.namespace == "mesh-lab")] | length' の値が 0 と等しい
    かつ "/root/injection/vs-bad.yaml" のクエリ '[.spec.http[]?.route[]? | select(.weight < 0)]' の結果が 1 個以上ある
    かつ ファイル "/root/injection/out/vs-denied.txt" に "admission webhook" が含まれる
    かつ ファイル "/root/injection/out/vs-denied.txt" に コマンド "kubectl apply --dry-run=server -f /root/injection/vs-bad.yaml 2>&1" の出力のすべての行が含まれる

  シナリオ: どの Pod も選ばないサブセットを、istioctl analyze が報告する
    /root/injection/dr-web.yaml に、mesh-lab の DestinationRule web を書いて適用してください。host は web、
    サブセット v1 はラベル version: v1 の Pod、サブセット v2 はラベル version: v2 の Pod を指します。
    いまある Pod(Deployment web)は version: v1 だけなので、サブセット v2 はどの Pod も選びません。
    istioctl analyze -n mesh-lab の結果を JSON(-o json)で /root/injection/out/analyze-before.json に、
    テキストで(標準エラー出力も含めて)/root/injection/out/analyze-before.txt に保存してください。

    ヒント: analyze はクラスターの設定リソースと Pod を読み、DestinationRule のサブセットのラベルを持つ Pod が
    あるかどうかを確かめます。テキストの analyze は Error を報告すると終了コード 79 で終わります。-o json は
    いつも 0 で終わります。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/injection
      cat > dr-web.yaml <<'EOF'
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata:
        name: web
        namespace: mesh-lab
      spec:
        host: web
        subsets:
        - name: v1
          labels:
            version: v1
        - name: v2
          labels:
            version: v2
      EOF
      kubectl apply -f dr-web.yaml
      istioctl analyze -n mesh-lab -o json > out/analyze-before.json
      istioctl analyze -n mesh-lab > out/analyze-before.txt 2>&1
      """
    ならば 最後のコマンドの終了コードが 79 である
    かつ クラスターの "destinationrules.networking.istio.io" に対するクエリ '.items[]? | select(.metadata.namespace == "mesh-lab" and .metadata.name == "web") | {host: .spec.host, subsets: ([.spec.subsets[]? | {name, labels}] | sort_by(.name))}' の値が {"host": "web", "subsets": [{"name": "v1", "labels": {"version": "v1"}}, {"name": "v2", "labels": {"version": "v2"}}]} と等しい
    かつ "/root/injection/out/analyze-before.json" のクエリ '[.[] | select(.origin == "DestinationRule mesh-lab/web")]' の結果が 1 個以上ある
    かつ "/root/injection/out/analyze-before.json" のクエリ '.' の値が コマンド "istioctl analyze -n mesh-lab -o json" の出力のクエリ '.' の値と等しい
    かつ ファイル "/root/injection/out/analyze-before.txt" に コマンド "istioctl analyze -n mesh-lab 2>&1" の出力のすべての行が含まれる

  シナリオ: サブセットのラベルを持つ Deployment を足すと、analyze の報告が消える
    mesh-lab に /opt/lab/fixtures/injection/web-v2.yaml(Deployment web-v2、Pod のラベル version: v2)を適用し、
    rollout status で Pod ができるのを待ってください。そのあと、もう一度 istioctl analyze -n mesh-lab の結果を
    /root/injection/out/analyze-after.json(-o json)と /root/injection/out/analyze-after.txt(テキスト、標準エラー出力も
    含めて)に保存してください。DestinationRule web のすべてのサブセットが Running の Pod を選び、
    前の analyze にあった DestinationRule web についての報告が消えている必要があります。

    ヒント: サブセットはデプロイではなく、ラベルの選択です。Deployment の Pod テンプレートに、
    サブセットと同じラベルが付いているかを確かめてください。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/injection
      kubectl -n mesh-lab apply -f /opt/lab/fixtures/injection/web-v2.yaml
      kubectl -n mesh-lab rollout status deployment/web-v2 --timeout=60s
      istioctl analyze -n mesh-lab -o json > out/analyze-after.json
      istioctl analyze -n mesh-lab > out/analyze-after.txt 2>&1
      """
    ならば 最後のコマンドが成功する
    # チェック: subsets-match-pods
    かつ 20 秒以内に "/root/injection/dr-web.yaml" のクエリ '[.spec.subsets[]?.labels.version] | sort' の値が クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "mesh-lab" and .status.phase == "Running") | .metadata.labels.version // empty] | unique' の値と等しい
    # チェック: dr-analyze-clean
    かつ "/root/injection/out/analyze-after.json" のクエリ '[.[] | select(.origin == "DestinationRule mesh-lab/web")] | length' の値が 0 と等しい
    かつ "/root/injection/out/analyze-after.json" のクエリ '[.[] | .code] | sort' の値が "/root/injection/out/analyze-before.json" のクエリ '[.[] | select(.origin != "DestinationRule mesh-lab/web") | .code] | sort' の値と等しい
    かつ "/root/injection/out/analyze-after.json" のクエリ '.' の値が コマンド "istioctl analyze -n mesh-lab -o json" の出力のクエリ '.' の値と等しい
    かつ ファイル "/root/injection/out/analyze-after.txt" に コマンド "istioctl analyze -n mesh-lab 2>&1" の出力のすべての行が含まれる

  @間違い
  シナリオ: よくある間違い2: サブセットのラベルを持たない Pod をデプロイする
    ステップ6で、version: v2 のラベルを付けずに Deployment を作ること(kubectl create deployment は app=名前の
    ラベルしか付けません)。Pod は Running になっても、サブセット v2 は空の宛先のままで、analyze の報告も消えません。

    もし 学習者が次のコマンドを実行する
      """
      cd /root/injection
      kubectl -n mesh-lab create deployment web-v2 --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n mesh-lab rollout status deployment/web-v2 --timeout=60s
      istioctl analyze -n mesh-lab -o json > out/analyze-after.json
      istioctl analyze -n mesh-lab > out/analyze-after.txt 2>&1
      """
    ならば 次のチェックで不合格になる
      """
      チェック "subsets-match-pods"
      チェック "dr-analyze-clean"
      """

  シナリオ: istioctl proxy-status と istioctl version で istiod に尋ねる
    istioctl proxy-status の出力を /root/injection/out/proxy-status.txt に、istioctl version の出力を
    /root/injection/out/version.txt に保存してください。istioctl は istiod の Pod へのポートフォワードで、
    このセルの istiod に直接尋ねます。version.txt には、istiod が答えたコントロールプレーンのバージョンの行が
    含まれている必要があります。

    ヒント: proxy-status は、istiod に接続している各プロキシと、それが購読している設定の種類を一覧にします
    (-v 1 を付けると、種類ごとに SYNCED か STALE かが見えます)。この環境では、サイドカーを注入された Pod と
    イングレスゲートウェイの Envoy が istiod に接続しています。

    ヒント: istioctl version の「control plane version」は istiod が答えた行です。「data plane version」の行は、
    この環境では istioctl 自身の接続を数えるので、実行するたびに数が変わります。採点はその行を見ません。

    もし 学習者が次のコマンドを実行する
      """
      istioctl proxy-status > /root/injection/out/proxy-status.txt
      istioctl version > /root/injection/out/version.txt
      """
    ならば 最後のコマンドが成功する
    かつ ファイル "/root/injection/out/proxy-status.txt" が空でない
    かつ ファイル "/root/injection/out/proxy-status.txt" が コマンド "istioctl proxy-status" の出力と等しい
    かつ ファイル "/root/injection/out/version.txt" に コマンド "istioctl version 2>&1 | grep -v '^data plane version'" の出力のすべての行が含まれる
