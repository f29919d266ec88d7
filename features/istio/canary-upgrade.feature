# language: ja
@アップグレード
機能: カナリアアップグレード: 新しい Istio をリビジョンとして横に入れ、ネームスペースごとにプロキシを移す
  Istio のアップグレードで本番を壊さないやり方が、カナリアアップグレードです。古いコントロールプレーン
  (istiod)を動かしたまま、新しいバージョンの istiod を別のリビジョン(ここでは canary)として横に入れ、
  ネームスペースを 1 つずつ新しいリビジョンへ移し、最後に古いリビジョンを消します。リビジョンを移すのは
  ネームスペースのラベルですが、サイドカーは Pod が作られるときに Webhook が入れるものなので、ラベルを
  変えただけでは何も起こりません。ロールアウトで Pod を作り直して初めて、新しい istiod から新しい
  バージョンのサイドカーが入ります。だから移ったかどうかは、ラベルではなくプロキシに尋ねて確かめます
  (istioctl proxy-status と istioctl version)。

  インストールの前に istioctl manifest generate の出力を保存しておくのは、アップグレードのときに差分を
  読むためでした。このラボでは、両方のバージョンのマニフェストを保存して、その差分を読みます。

  ネームスペースの移し方は 2 つあります。istio.io/rev=canary のようにリビジョンの名前を直接書く方法と、
  リビジョンタグ(istioctl tag set prod --revision …)を書いておき、タグの指す先を変える方法です。タグを
  使えば、ネームスペースのラベルを書き換えずに、タグを付け替えてロールアウトするだけで移せます。
  istio-injection=enabled のラベルは istio.io/rev より優先されるので、istio.io/rev を付けるときは
  istio-injection を外します。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、containerd
  と runc、CNI、kube-proxy、CoreDNS)。セルには 2 つの Istio バージョンがあり、アップグレード元の
  リリースは /root/istio-old に、アップグレード先のリリースは /root/istio-new に展開してあります。PATH の
  istioctl はアップグレード元のものです。アップグレード先の istioctl は /root/istio-new/bin/istioctl で
  実行します。イメージはすべてこの環境でオフラインで作ったもので、サイドカーの Envoy はアップストリーム版
  です。採点は、あなたのコマンドが保存したファイルを、採点側が同じコマンドをそのときに実行した結果と、
  クラスターの状態と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/upgrade" を使う
    かつ アップグレード元の Istio のリリースを "/root/istio-old" に展開する
    かつ アップグレード先の Istio のリリースを "/root/istio-new" に展開する

  シナリオ: アップグレード元の Istio を入れ、shop に httpbin を、blog に curl をサイドカー付きで動かす
    出力用のディレクトリ /root/upgrade/out を作り、PATH の istioctl(アップグレード元)で、minimal
    プロファイルの Istio をリビジョンなしでインストールしてください。リビジョンタグ prod を作って
    このリビジョン(default)を指させます。ネームスペース shop を作ってラベル istio-injection=enabled を、
    ネームスペース blog を作ってラベル istio.io/rev=prod を付け、/root/istio-old の samples/httpbin/httpbin.yaml
    を shop に、samples/curl/curl.yaml を blog に適用して、2 つのロールアウトが終わるまで待ちます。

    ヒント: リビジョンなしでインストールしたコントロールプレーンのリビジョンの名前は default です。
    istioctl tag set prod --revision default でタグを作れます。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/upgrade/out
      istioctl install -y --set profile=minimal
      istioctl tag set prod --revision default
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl create namespace blog
      kubectl label namespace blog istio.io/rev=prod
      kubectl apply -n shop -f /root/istio-old/samples/httpbin/httpbin.yaml
      kubectl apply -n blog -f /root/istio-old/samples/curl/curl.yaml
      kubectl -n shop rollout status deploy/httpbin --timeout=90s
      kubectl -n blog rollout status deploy/curl --timeout=90s
      """
    ならば 最後のコマンドが成功する
    # チェック: workloads
    # メッセージ: shop の httpbin と blog の curl は、どちらもリビジョン default のサイドカー付きで Ready である必要があります。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("shop", "blog") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, revision: (.metadata.annotations["sidecar.istio.io/status"] // "{}" | fromjson | .revision), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns)' の値が [{"ns": "blog", "app": "curl", "revision": "default", "ready": true}, {"ns": "shop", "app": "httpbin", "revision": "default", "ready": true}] と等しい
    かつ ネームスペース "blog" のラベル "istio.io/rev" が "prod" である
    かつ コマンド "istioctl tag list" の出力が '^prod +default\b' にマッチする

  シナリオ: 両方のバージョンのマニフェストを保存し、アップグレードで変わるものを差分で読む
    アップグレードの前に、何が変わるのかを読みます。PATH の istioctl(アップグレード元)で minimal
    プロファイルのマニフェストを /root/upgrade/out/manifest-old.yaml に、/root/istio-new/bin/istioctl
    (アップグレード先)で minimal プロファイルのリビジョン canary のマニフェストを
    /root/upgrade/out/manifest-new.yaml に生成して保存し、2 つのファイルの diff(オプションなし)を
    /root/upgrade/out/manifest.diff に保存してください。

    ヒント: diff は差分があると終了コード 1 で終わります。差分があるのは正しい結果です。

    もし 学習者が次のコマンドを実行する
      """
      istioctl manifest generate --set profile=minimal > /root/upgrade/out/manifest-old.yaml
      /root/istio-new/bin/istioctl manifest generate --set profile=minimal --revision canary > /root/upgrade/out/manifest-new.yaml
      diff /root/upgrade/out/manifest-old.yaml /root/upgrade/out/manifest-new.yaml > /root/upgrade/out/manifest.diff
      """
    ならば 最後のコマンドの終了コードが 1 である
    # チェック: manifests
    # メッセージ: 2 つのマニフェストは、それぞれのバージョンの istioctl が生成したものと同じである必要があります。アップグレード先はリビジョン canary で生成します。
    かつ ファイル "/root/upgrade/out/manifest-old.yaml" が コマンド "istioctl manifest generate --set profile=minimal" の出力と等しい
    かつ ファイル "/root/upgrade/out/manifest-new.yaml" が コマンド "/root/istio-new/bin/istioctl manifest generate --set profile=minimal --revision canary" の出力と等しい
    # チェック: manifest-diff
    かつ ファイル "/root/upgrade/out/manifest.diff" が コマンド "diff <(istioctl manifest generate --set profile=minimal) <(/root/istio-new/bin/istioctl manifest generate --set profile=minimal --revision canary)" の出力と等しい
    かつ ファイル "/root/upgrade/out/manifest.diff" が '^<   name: istiod$' にマッチする
    かつ ファイル "/root/upgrade/out/manifest.diff" が '^>   name: istiod-canary$' にマッチする

  シナリオ: アップグレード先の istiod をリビジョン canary として横に入れる
    /root/istio-new/bin/istioctl(アップグレード先)で、minimal プロファイルの Istio をリビジョン canary として
    インストールし、istio-system の Deployment istiod-canary のロールアウトが終わるまで待ってください。
    そのあと、アップグレード先の istioctl で、リビジョン canary のコントロールプレーンに
    istioctl version -o json を尋ね、その出力を /root/upgrade/out/canary-version.json に保存します。

    ヒント: リビジョンを付けてインストールすると、istiod の Deployment と Service、サイドカー注入の Webhook が
    リビジョンの名前付きで作られ、古い istiod はそのまま動き続けます。istioctl version は既定では
    リビジョン default の istiod に尋ねます。ほかのリビジョンには --revision で尋ねます。

    もし 学習者が次のコマンドを実行する
      """
      /root/istio-new/bin/istioctl install -y --set profile=minimal --revision canary
      kubectl -n istio-system rollout status deploy/istiod-canary --timeout=90s
      /root/istio-new/bin/istioctl version --revision canary -o json > /root/upgrade/out/canary-version.json
      """
    ならば 最後のコマンドが成功する
    # チェック: both-control-planes
    # メッセージ: 古い istiod(リビジョン default)を残したまま、istiod-canary を横に入れる必要があります。
    かつ クラスターのネームスペース "istio-system" に "deployments" "istiod-canary" が存在する
    かつ クラスターのネームスペース "istio-system" に "deployments" "istiod" が存在する
    # チェック: canary-version
    # メッセージ: リビジョン canary の istiod は、アップグレード先のバージョンで動いている必要があります。
    かつ "/root/upgrade/out/canary-version.json" のクエリ '[.meshVersion[] | {revision: .Revision, version: .Info.version}]' の値が コマンド "/root/istio-new/bin/istioctl version --remote=false -o json" の出力のクエリ '[{revision: "canary", version: .clientVersion.version}]' の値と等しい
    かつ "/root/upgrade/out/canary-version.json" のクエリ '[.dataPlaneVersion[]? | .ID | split(".") | last | select(. == "shop" or . == "blog")] | length' の値が 0 と等しい
    # チェック: proxies-untouched
    # メッセージ: 新しい istiod を入れただけでは、既存のサイドカーは何も変わりません。
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("shop", "blog") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, revision: (.metadata.annotations["sidecar.istio.io/status"] // "{}" | fromjson | .revision), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns)' の値が [{"ns": "blog", "app": "curl", "revision": "default", "ready": true}, {"ns": "shop", "app": "httpbin", "revision": "default", "ready": true}] と等しい

  シナリオ: shop をリビジョンのラベルで canary に移し、ロールアウトでサイドカーを入れ替える
    ネームスペース shop のラベル istio-injection を外して istio.io/rev=canary を付け、shop の Deployment
    httpbin をロールアウトし直して、終わるまで待ってください。そのあと、blog の curl から
    http://httpbin.shop:8000/get へリクエストを送り、HTTP のステータスコードだけ(curl の -s -o /dev/null
    -w '%{http_code}\n')を /root/upgrade/out/across.txt に保存します。最後に、アップグレード先の istioctl で
    リビジョン canary の proxy-status を /root/upgrade/out/canary-proxies.txt に、同じくリビジョン canary の
    istioctl version -o json を /root/upgrade/out/canary-data-plane.json に、PATH の istioctl で既定の
    リビジョンの proxy-status を /root/upgrade/out/default-proxies.txt に保存してください。

    ヒント: kubectl label namespace shop istio-injection- istio.io/rev=canary で、外すのと付けるのを 1 回で
    できます。istioctl proxy-status --revision canary は、canary の istiod につながっているプロキシだけを
    一覧にします。古いサイドカー(blog の curl)と新しいサイドカー(shop の httpbin)は同じルート CA の
    証明書を使うので、移行中も mTLS でつながります。

    もし 学習者が次のコマンドを実行する
      """
      kubectl label namespace shop istio-injection- istio.io/rev=canary
      kubectl -n shop rollout restart deploy/httpbin
      kubectl -n shop rollout status deploy/httpbin --timeout=90s
      kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get > /root/upgrade/out/across.txt
      /root/istio-new/bin/istioctl proxy-status --revision canary > /root/upgrade/out/canary-proxies.txt
      /root/istio-new/bin/istioctl version --revision canary -o json > /root/upgrade/out/canary-data-plane.json
      istioctl proxy-status > /root/upgrade/out/default-proxies.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: one-label
    # メッセージ: istio-injection=enabled は istio.io/rev より優先されます。shop から istio-injection を外す必要があります。
    かつ ネームスペース "shop" にラベル "istio-injection" がない
    かつ ネームスペース "shop" のラベル "istio.io/rev" が "canary" である
    # チェック: shop-moved
    # メッセージ: shop の httpbin のサイドカーが canary の istiod につながっていません。ラベルを変えただけでは何も起こらず、ロールアウトで Pod を作り直して初めて新しいサイドカーが入ります。
    かつ ファイル "/root/upgrade/out/canary-proxies.txt" が '^httpbin-\S+\.shop +Kubernetes +istiod-canary-\S+ ' にマッチする
    かつ ファイル "/root/upgrade/out/canary-proxies.txt" が コマンド "/root/istio-new/bin/istioctl proxy-status --revision canary" の出力と等しい
    かつ ファイル "/root/upgrade/out/canary-proxies.txt" がちょうど 2 行である
    かつ "/root/upgrade/out/canary-data-plane.json" のクエリ '[.dataPlaneVersion[]? | {ns: (.ID | split(".") | last), version: .IstioVersion} | select(.ns == "shop" or .ns == "blog")]' の値が コマンド "/root/istio-new/bin/istioctl version --remote=false -o json" の出力のクエリ '[{ns: "shop", version: .clientVersion.version}]' の値と等しい
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("shop", "blog") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, revision: (.metadata.annotations["sidecar.istio.io/status"] // "{}" | fromjson | .revision), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns)' の値が [{"ns": "blog", "app": "curl", "revision": "default", "ready": true}, {"ns": "shop", "app": "httpbin", "revision": "canary", "ready": true}] と等しい
    # チェック: blog-stays
    # メッセージ: blog の curl は、まだ古い istiod(リビジョン default)につながっている必要があります。
    かつ ファイル "/root/upgrade/out/default-proxies.txt" が コマンド "istioctl proxy-status" の出力と等しい
    かつ ファイル "/root/upgrade/out/default-proxies.txt" が '^curl-\S+\.blog +Kubernetes +istiod-[0-9a-f]+-\S+ ' にマッチする
    かつ ファイル "/root/upgrade/out/default-proxies.txt" に ".shop " が含まれない
    # チェック: across
    # メッセージ: 古いサイドカーの curl から新しいサイドカーの httpbin へのリクエストは、移行中も 200 で通る必要があります。
    かつ ファイル "/root/upgrade/out/across.txt" が コマンド "kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get" の出力と等しい
    かつ ファイル "/root/upgrade/out/across.txt" がちょうど 1 行である
    かつ ファイル "/root/upgrade/out/across.txt" に "200" が含まれる

  @間違い
  シナリオ: よくある間違い1: ラベルを変えただけで、ロールアウトしない
    ステップ4で、shop のラベルを istio.io/rev=canary に変えただけで、httpbin をロールアウトし直さないこと。
    サイドカーは Pod が作られるときに Webhook が入れるものなので、既存の Pod は古い istiod につながった
    古いサイドカーのままです。

    もし 学習者が次のコマンドを実行する
      """
      kubectl label namespace shop istio-injection- istio.io/rev=canary
      kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get > /root/upgrade/out/across.txt
      /root/istio-new/bin/istioctl proxy-status --revision canary > /root/upgrade/out/canary-proxies.txt
      /root/istio-new/bin/istioctl version --revision canary -o json > /root/upgrade/out/canary-data-plane.json
      istioctl proxy-status > /root/upgrade/out/default-proxies.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "shop-moved"
      """

  @間違い
  シナリオ: よくある間違い2: istio-injection を残したまま istio.io/rev を付ける
    ステップ4で、shop に istio.io/rev=canary を付けるが、istio-injection=enabled を外さないこと。
    istio-injection のほうが優先されるので、ロールアウトしても、新しい Pod には古い istiod(リビジョン
    default)がサイドカーを入れます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl label namespace shop istio.io/rev=canary
      kubectl -n shop rollout restart deploy/httpbin
      kubectl -n shop rollout status deploy/httpbin --timeout=90s
      kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get > /root/upgrade/out/across.txt
      /root/istio-new/bin/istioctl proxy-status --revision canary > /root/upgrade/out/canary-proxies.txt
      /root/istio-new/bin/istioctl version --revision canary -o json > /root/upgrade/out/canary-data-plane.json
      istioctl proxy-status > /root/upgrade/out/default-proxies.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "one-label"
      チェック "shop-moved"
      """

  シナリオ: リビジョンタグ prod を canary に付け替え、blog をラベルを変えずに移す
    アップグレード先の istioctl で、リビジョンタグ prod の指す先を canary に付け替え(--overwrite)、blog の
    Deployment curl をロールアウトし直して、終わるまで待ってください。blog のラベル(istio.io/rev=prod)は
    変えません。そのあと、アップグレード先の istioctl で、istioctl tag list の出力を
    /root/upgrade/out/tags.txt に、リビジョン canary の proxy-status を /root/upgrade/out/canary-proxies-all.txt
    に保存してください。

    ヒント: タグは、istio.io/rev=prod のネームスペースを、タグの指すリビジョンの istiod に注入させる Webhook
    です。付け替えても既存の Pod は変わらないので、ここでもロールアウトが要ります。

    もし 学習者が次のコマンドを実行する
      """
      /root/istio-new/bin/istioctl tag set prod --revision canary --overwrite
      kubectl -n blog rollout restart deploy/curl
      kubectl -n blog rollout status deploy/curl --timeout=90s
      /root/istio-new/bin/istioctl tag list > /root/upgrade/out/tags.txt
      /root/istio-new/bin/istioctl proxy-status --revision canary > /root/upgrade/out/canary-proxies-all.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: tag-moved
    # メッセージ: タグ prod は canary を指し、blog のラベルは istio.io/rev=prod のままである必要があります。
    かつ ネームスペース "blog" のラベル "istio.io/rev" が "prod" である
    かつ ファイル "/root/upgrade/out/tags.txt" が コマンド "/root/istio-new/bin/istioctl tag list" の出力と等しい
    かつ ファイル "/root/upgrade/out/tags.txt" が '^prod +canary +blog$' にマッチする
    # チェック: all-moved
    # メッセージ: blog の curl も、ロールアウトで canary の istiod につながる必要があります。
    かつ ファイル "/root/upgrade/out/canary-proxies-all.txt" が コマンド "/root/istio-new/bin/istioctl proxy-status --revision canary" の出力と等しい
    かつ ファイル "/root/upgrade/out/canary-proxies-all.txt" が '^curl-\S+\.blog +Kubernetes +istiod-canary-\S+ ' にマッチする
    かつ ファイル "/root/upgrade/out/canary-proxies-all.txt" が '^httpbin-\S+\.shop +Kubernetes +istiod-canary-\S+ ' にマッチする
    かつ ファイル "/root/upgrade/out/canary-proxies-all.txt" がちょうど 3 行である
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("shop", "blog") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, revision: (.metadata.annotations["sidecar.istio.io/status"] // "{}" | fromjson | .revision), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns)' の値が [{"ns": "blog", "app": "curl", "revision": "canary", "ready": true}, {"ns": "shop", "app": "httpbin", "revision": "canary", "ready": true}] と等しい

  シナリオ: 古いリビジョン default を消し、何も残っていないことを確かめる
    アップグレード先の istioctl で、リビジョン default のコントロールプレーンをアンインストールし(-y)、
    古い istiod の Pod(ラベル app=istiod と istio.io/rev=default)が消えるまで待ってください。そのあと、
    アップグレード先の istioctl で istioctl tag list の出力を /root/upgrade/out/tags-after.txt に、blog の
    curl から http://httpbin.shop:8000/get へのステータスコードを /root/upgrade/out/after.txt に保存します。

    ヒント: istioctl uninstall --revision default は、リビジョン default の istiod、その Service と Webhook を
    消します。CRD とほかのリビジョンは残ります。kubectl wait --for=delete で、Pod が消えるまで待てます。

    もし 学習者が次のコマンドを実行する
      """
      /root/istio-new/bin/istioctl uninstall --revision default -y
      kubectl -n istio-system wait --for=delete pod -l app=istiod,istio.io/rev=default --timeout=90s
      /root/istio-new/bin/istioctl tag list > /root/upgrade/out/tags-after.txt
      kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get > /root/upgrade/out/after.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: old-gone
    # メッセージ: リビジョン default の istiod と、その注入の Webhook が残っています。
    かつ 60 秒以内に クラスターのネームスペース "istio-system" に "deployments" "istiod" が存在しない
    かつ クラスターに "mutatingwebhookconfigurations" "istio-sidecar-injector" が存在しない
    かつ クラスターに "mutatingwebhookconfigurations" "istio-revision-tag-default" が存在しない
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "istio-system") | .metadata.labels["istio.io/rev"]] | unique' の値が ["canary"] と等しい
    # チェック: canary-stays
    # メッセージ: canary の istiod とタグ prod は残り、リクエストは通り続ける必要があります。
    かつ クラスターのネームスペース "istio-system" に "deployments" "istiod-canary" が存在する
    かつ ファイル "/root/upgrade/out/tags-after.txt" が コマンド "/root/istio-new/bin/istioctl tag list" の出力と等しい
    かつ ファイル "/root/upgrade/out/tags-after.txt" がちょうど 2 行である
    かつ ファイル "/root/upgrade/out/after.txt" が コマンド "kubectl -n blog exec deploy/curl -c curl -- curl -s -o /dev/null -w '%{http_code}\n' http://httpbin.shop:8000/get" の出力と等しい
    かつ ファイル "/root/upgrade/out/after.txt" に "200" が含まれる
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == ("shop", "blog") and .status.phase == "Running") | {ns: .metadata.namespace, app: .metadata.labels.app, revision: (.metadata.annotations["sidecar.istio.io/status"] // "{}" | fromjson | .revision), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.ns)' の値が [{"ns": "blog", "app": "curl", "revision": "canary", "ready": true}, {"ns": "shop", "app": "httpbin", "revision": "canary", "ready": true}] と等しい
