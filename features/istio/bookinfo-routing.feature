# language: ja
@メッシュ @メモリ=6GiB
機能: Bookinfo のリクエストルーティングとフォールトインジェクション: ユーザーで reviews の版を選び、jason にだけ遅延と失敗を入れる
  Istio のサンプルアプリ Bookinfo は 4 つのサービスでできています。productpage(Python)が details
  (Ruby)と reviews(Java)を呼び、reviews の v2 と v3 が ratings(Node.js)を呼びます。reviews には
  3 つの版があり、v1 は星を出さず、v2 は黒い星、v3 は赤い星を出します。VirtualService がない間は、
  reviews へのリクエストは 3 つの版に順に振り分けられます。

  版を選ぶには 2 つの資源が要ります。DestinationRule が「どの Pod がどの版か」(サブセット: ラベル
  version で分けた v1、v2、v3)を名付け、VirtualService が「どのリクエストをどのサブセットへ送るか」を
  決めます。サブセットを名付けずに VirtualService からサブセットを指すと、そのサブセットへの経路は
  どこにも繋がらず、リクエストは 503 で失敗します。

  productpage は、ログインしたユーザーの名前を、後ろのサービスへのリクエストに end-user ヘッダーとして
  付けます。VirtualService の match はこのヘッダーで経路を分けられます。同じ VirtualService の fault は、
  選んだリクエストだけに遅延(delay)や失敗(abort)を、サイドカーの Envoy で注入します。アプリの
  コードは変えずに、タイムアウトや障害への振る舞いを試せます。

  この環境について: 各セルには本物のコントロールプレーンと本物のノードが 1 つあります(kubelet、
  containerd と runc、CNI、kube-proxy、CoreDNS)。Istio のリリースは /root/istio に展開してあり、
  samples/ はセルの Istio バージョンのものです。Bookinfo のイメージはすべて、その samples/bookinfo/src
  からこの環境でオフラインで作ったものです。reviews は Open Liberty ではなく Jersey で動きますが、
  エンドポイントのコード(ratings を呼ぶときのタイムアウト: 黒い星は 10 秒、赤い星は 2.5 秒)は
  サンプルのままです。productpage は後ろのサービスを 3 秒で待ちきれなければ 1 回だけやり直します。
  サイドカーの Envoy はアップストリーム版です。

  採点は、あなたのコマンドが保存したファイルを、クラスターの状態と、採点側が同じ問い合わせをそのときに
  実行した結果と比べて行います。

  背景:
    前提 ラボのディレクトリ "/root/bookinfo" を使う
    かつ Istio のリリースを "/root/istio" に展開する

  @タイムアウト=300
  シナリオ: Istio を入れ、サイドカー付きの Bookinfo を動かす
    出力用のディレクトリ /root/bookinfo/out を作り、minimal プロファイルで Istio をインストールして
    ください。ネームスペース default にラベル istio-injection=enabled を付け、/root/istio の
    samples/bookinfo/platform/kube/bookinfo.yaml を適用して、6 つの Deployment(details-v1、ratings-v1、
    reviews-v1、reviews-v2、reviews-v3、productpage-v1)のロールアウトが終わるまで待ちます。最後に
    ratings の Pod から curl で http://productpage:9080/productpage を取得し、ページの <title> の要素を
    /root/bookinfo/out/title.txt に保存してください。

    ヒント: ratings のコンテナーには curl があります(kubectl exec deploy/ratings-v1 -c ratings -- curl …)。
    Bookinfo の Deployment には readinessProbe がないので、ロールアウトが終わっても productpage が
    まだ答えられないことがあります。そのときは、ページが返るまで何秒かおきに取得し直してください。

    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/bookinfo/out
      istioctl install -y --set profile=minimal
      kubectl label namespace default istio-injection=enabled
      kubectl apply -f /root/istio/samples/bookinfo/platform/kube/bookinfo.yaml
      for d in details-v1 ratings-v1 reviews-v1 reviews-v2 reviews-v3 productpage-v1; do
        kubectl rollout status deploy/$d --timeout=300s
      done
      for i in $(seq 30); do
        kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o '<title>.*</title>' > /root/bookinfo/out/title.txt && break
        sleep 2
      done
      """
    ならば 最後のコマンドが成功する
    かつ ネームスペース "default" のラベル "istio-injection" が "enabled" である
    # チェック: all-in-mesh
    かつ クラスターの "pods" に対するクエリ '[.items[] | select(.metadata.namespace == "default" and .status.phase == "Running") | {app: .metadata.labels.app, version: .metadata.labels.version, proxies: ([((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length), ready: ([.status.containerStatuses[]? | .ready] | all)}] | sort_by(.app, .version)' の値が [{"app": "details", "version": "v1", "proxies": 1, "ready": true}, {"app": "productpage", "version": "v1", "proxies": 1, "ready": true}, {"app": "ratings", "version": "v1", "proxies": 1, "ready": true}, {"app": "reviews", "version": "v1", "proxies": 1, "ready": true}, {"app": "reviews", "version": "v2", "proxies": 1, "ready": true}, {"app": "reviews", "version": "v3", "proxies": 1, "ready": true}] と等しい
    # チェック: page-served
    かつ ファイル "/root/bookinfo/out/title.txt" がちょうど 1 行である
    かつ ファイル "/root/bookinfo/out/title.txt" が コマンド "kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o '<title>.*</title>'" の出力と等しい
    かつ ファイル "/root/bookinfo/out/title.txt" に "<title>Simple Bookstore App</title>" が含まれる

  シナリオ: reviews をすべて v1 に送る
    samples/bookinfo/networking の destination-rule-all.yaml(各サービスのサブセット)と
    virtual-service-all-v1.yaml(各サービスを v1 へ)を適用してください。productpage のサイドカーが
    reviews の v1 への経路を持つまで(ポート 9080 の経路に outbound|9080|v1|reviews.default.svc.cluster.local
    が現れるまで)、istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json を 1 秒おきに
    (30 回まで)尋ね直し、最後の答えを /root/bookinfo/out/routes-v1.json に保存します。それから ratings の
    Pod から productpage のページを 10 回取得し、それぞれのページで reviews を返した Pod の版
    (ページの「Reviews served by:」の reviews-v1 などの最初の 1 つ)を 1 行ずつ
    /root/bookinfo/out/served-v1.txt に保存してください。

    ヒント: サブセットを名付けるのは DestinationRule です。VirtualService だけでは、v1 というサブセットの
    中身(version: v1 のラベルを持つ Pod)が決まりません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/destination-rule-all.yaml
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-all-v1.yaml
      for i in $(seq 30); do
        istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json > /root/bookinfo/out/routes-v1.json
        grep -q 'outbound|9080|v1|reviews.default.svc.cluster.local' /root/bookinfo/out/routes-v1.json && break
        sleep 1
      done
      for i in $(seq 10); do
        kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1
      done > /root/bookinfo/out/served-v1.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: subsets-named
    かつ クラスターのネームスペース "default" の "DestinationRule" "reviews" に対するクエリ '[.spec.subsets[] | {name, version: .labels.version}]' の値が [{"name": "v1", "version": "v1"}, {"name": "v2", "version": "v2"}, {"name": "v3", "version": "v3"}] と等しい
    # チェック: all-v1
    かつ クラスターのネームスペース "default" の "VirtualService" "reviews" に対するクエリ '[.spec.http[].route[].destination | {host, subset}]' の値が [{"host": "reviews", "subset": "v1"}] と等しい
    # チェック: proxy-route-v1
    かつ "/root/bookinfo/out/routes-v1.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[].route.cluster]' の値が ["outbound|9080|v1|reviews.default.svc.cluster.local"] と等しい
    かつ "/root/bookinfo/out/routes-v1.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[].route.cluster]' の値が コマンド "istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json" の出力のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[].route.cluster]' の値と等しい
    かつ ファイル "/root/bookinfo/out/served-v1.txt" がちょうど 10 行である
    # チェック: served-by-v1
    # メッセージ: 10 回のうちに reviews-v1 以外が返したページ(または reviews が返らなかったページ)があります。DestinationRule のサブセットが名付けてあるか、設定が届くまで待ったかを確かめてください。
    かつ ファイル "/root/bookinfo/out/served-v1.txt" に "^reviews-v1$" にマッチする行が 10 行以上ある
    かつ コマンド "for i in 1 2 3 4 5; do kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1; done | sort -u" の出力が "^reviews-v1\n$" にマッチする

  @間違い
  シナリオ: よくある間違い1: DestinationRule を適用せずに VirtualService だけを適用する
    ステップ2で、virtual-service-all-v1.yaml だけを適用すること。VirtualService は v1 というサブセットを
    指しますが、それを名付ける DestinationRule がないので、経路は存在しないクラスターに向かい、reviews への
    リクエストは失敗します。ページには reviews が返した Pod が現れません。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-all-v1.yaml
      for i in $(seq 10); do
        istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json > /root/bookinfo/out/routes-v1.json
        grep -q 'outbound|9080|v1|reviews.default.svc.cluster.local' /root/bookinfo/out/routes-v1.json && break
        sleep 1
      done
      for i in $(seq 10); do
        kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1
      done > /root/bookinfo/out/served-v1.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "subsets-named"
      チェック "served-by-v1"
      """

  シナリオ: ログインしたユーザー jason だけを reviews v2 に送る
    samples/bookinfo/networking/virtual-service-reviews-test-v2.yaml を適用してください(end-user ヘッダーが
    jason のリクエストは v2 へ、それ以外は v1 へ)。productpage のサイドカーの経路に jason の match が
    現れるまで、ステップ2と同じように尋ね直し、最後の答えを /root/bookinfo/out/routes-jason.json に
    保存します。それから ratings の Pod の中で、productpage に jason としてログインし(/login に
    username=jason を POST、Cookie を保存)、その Cookie で 10 回ページを取得して、reviews を返した版を
    1 行ずつ /root/bookinfo/out/served-jason.txt に、最後のページ全体を /root/bookinfo/out/jason.html に
    保存してください。最後に、ログインせずに 10 回取得した版を /root/bookinfo/out/served-anonymous.txt に
    保存します。

    ヒント: productpage の /login は、リクエストの Referer に戻る応答を返します(curl の -e)。Cookie は
    curl の -c で保存し、-b で送ります。v2 のページの星は黒(text-black-500)です。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-reviews-test-v2.yaml
      for i in $(seq 30); do
        istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json > /root/bookinfo/out/routes-jason.json
        grep -q '"exact": "jason"' /root/bookinfo/out/routes-jason.json && break
        sleep 1
      done
      kubectl exec deploy/ratings-v1 -c ratings -- sh -c '
        curl -sS -o /dev/null -c /tmp/jason.jar -e http://productpage:9080/productpage -d username=jason -d passwd=jason http://productpage:9080/login
        for i in $(seq 10); do
          curl -sS -b /tmp/jason.jar http://productpage:9080/productpage > /tmp/page.html
          grep -o "reviews-v[123]" /tmp/page.html | head -n 1
        done' > /root/bookinfo/out/served-jason.txt
      kubectl exec deploy/ratings-v1 -c ratings -- cat /tmp/page.html > /root/bookinfo/out/jason.html
      for i in $(seq 10); do
        kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1
      done > /root/bookinfo/out/served-anonymous.txt
      """
    ならば 最後のコマンドが成功する
    # チェック: jason-match
    かつ クラスターのネームスペース "default" の "VirtualService" "reviews" に対するクエリ '[.spec.http[] | {user: (.match // [] | map(.headers["end-user"].exact)), subsets: [.route[].destination.subset]}]' の値が [{"user": ["jason"], "subsets": ["v2"]}, {"user": [], "subsets": ["v1"]}] と等しい
    # チェック: proxy-route-jason
    かつ "/root/bookinfo/out/routes-jason.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], cluster: .route.cluster}]' の値が [{"user": ["jason"], "cluster": "outbound|9080|v2|reviews.default.svc.cluster.local"}, {"user": [], "cluster": "outbound|9080|v1|reviews.default.svc.cluster.local"}] と等しい
    かつ "/root/bookinfo/out/routes-jason.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], cluster: .route.cluster}]' の値が コマンド "istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json" の出力のクエリ '[.[].virtualHosts[] | select(.name | startswith("reviews.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], cluster: .route.cluster}]' の値と等しい
    かつ ファイル "/root/bookinfo/out/served-jason.txt" がちょうど 10 行である
    # チェック: jason-on-v2
    # メッセージ: jason としてのページを v2 以外が返しました。ログインしたユーザー名(大文字と小文字も)と、Cookie を送ったかを確かめてください。
    かつ ファイル "/root/bookinfo/out/served-jason.txt" に "^reviews-v2$" にマッチする行が 10 行以上ある
    かつ コマンド "kubectl exec deploy/ratings-v1 -c ratings -- sh -c 'curl -sS -o /dev/null -c /tmp/grader.jar -e http://productpage:9080/productpage -d username=jason -d passwd=jason http://productpage:9080/login; for i in 1 2 3 4 5; do curl -sS -b /tmp/grader.jar http://productpage:9080/productpage | grep -o reviews-v[123] | head -n 1; done | sort -u'" の出力が "^reviews-v2\n$" にマッチする
    # チェック: black-stars
    かつ ファイル "/root/bookinfo/out/jason.html" に "text-black-500" が含まれる
    かつ ファイル "/root/bookinfo/out/jason.html" に "glyphicon-star" が含まれる
    # チェック: others-on-v1
    かつ ファイル "/root/bookinfo/out/served-anonymous.txt" がちょうど 10 行である
    かつ ファイル "/root/bookinfo/out/served-anonymous.txt" に "^reviews-v1$" にマッチする行が 10 行以上ある
    かつ コマンド "for i in 1 2 3 4 5; do kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1; done | sort -u" の出力が "^reviews-v1\n$" にマッチする

  @間違い
  シナリオ: よくある間違い2: Jason としてログインする
    ステップ3で、username=Jason でログインすること。match の exact は大文字と小文字を区別するので、
    Jason のリクエストは 2 つ目の経路(v1)へ送られます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-reviews-test-v2.yaml
      for i in $(seq 30); do
        istioctl proxy-config routes deploy/productpage-v1 --name 9080 -o json > /root/bookinfo/out/routes-jason.json
        grep -q '"exact": "jason"' /root/bookinfo/out/routes-jason.json && break
        sleep 1
      done
      kubectl exec deploy/ratings-v1 -c ratings -- sh -c '
        curl -sS -o /dev/null -c /tmp/jason.jar -e http://productpage:9080/productpage -d username=Jason -d passwd=jason http://productpage:9080/login
        for i in $(seq 10); do
          curl -sS -b /tmp/jason.jar http://productpage:9080/productpage > /tmp/page.html
          grep -o "reviews-v[123]" /tmp/page.html | head -n 1
        done' > /root/bookinfo/out/served-jason.txt
      kubectl exec deploy/ratings-v1 -c ratings -- cat /tmp/page.html > /root/bookinfo/out/jason.html
      for i in $(seq 10); do
        kubectl exec deploy/ratings-v1 -c ratings -- curl -sS http://productpage:9080/productpage | grep -o 'reviews-v[123]' | head -n 1
      done > /root/bookinfo/out/served-anonymous.txt
      """
    ならば 次のチェックで不合格になる
      """
      チェック "jason-on-v2"
      チェック "black-stars"
      """

  シナリオ: jason から ratings への呼び出しに 7 秒の遅延を入れる
    samples/bookinfo/networking/virtual-service-ratings-test-delay.yaml を適用してください(end-user が
    jason の ratings へのリクエストに 7 秒の遅延)。reviews v2 のサイドカーの経路に 7 秒の遅延が現れるまで、
    istioctl proxy-config routes deploy/reviews-v2 --name 9080 -o json を尋ね直し、最後の答えを
    /root/bookinfo/out/routes-delay.json に保存します。それから ratings の Pod の中で jason として
    ログインしてページを 1 回取得し、かかった秒数(curl の -w '%{time_total}')を
    /root/bookinfo/out/delay-time.txt に、ページを /root/bookinfo/out/delay.html に保存してください。

    ヒント: reviews v2 は ratings を 10 秒まで待ちますが、productpage は reviews を 3 秒しか待たず、
    1 回やり直してあきらめます。だからページは約 6 秒で、reviews がないまま返ってきます。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-ratings-test-delay.yaml
      for i in $(seq 30); do
        istioctl proxy-config routes deploy/reviews-v2 --name 9080 -o json > /root/bookinfo/out/routes-delay.json
        grep -q '"fixedDelay": "7s"' /root/bookinfo/out/routes-delay.json && break
        sleep 1
      done
      kubectl exec deploy/ratings-v1 -c ratings -- sh -c '
        curl -sS -o /dev/null -c /tmp/jason.jar -e http://productpage:9080/productpage -d username=jason -d passwd=jason http://productpage:9080/login
        curl -sS -b /tmp/jason.jar -o /tmp/delay.html -w "%{time_total}\n" http://productpage:9080/productpage' > /root/bookinfo/out/delay-time.txt
      kubectl exec deploy/ratings-v1 -c ratings -- cat /tmp/delay.html > /root/bookinfo/out/delay.html
      """
    ならば 最後のコマンドが成功する
    # チェック: delay-for-jason
    かつ クラスターのネームスペース "default" の "VirtualService" "ratings" に対するクエリ '[.spec.http[] | {user: (.match // [] | map(.headers["end-user"].exact)), delay: .fault.delay.fixedDelay, percent: .fault.delay.percentage.value}]' の値が [{"user": ["jason"], "delay": "7s", "percent": 100}, {"user": [], "delay": null, "percent": null}] と等しい
    # チェック: proxy-delay
    かつ "/root/bookinfo/out/routes-delay.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], delay: .typedPerFilterConfig["envoy.filters.http.fault"].delay.fixedDelay}]' の値が [{"user": ["jason"], "delay": "7s"}, {"user": [], "delay": null}] と等しい
    かつ "/root/bookinfo/out/routes-delay.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], delay: .typedPerFilterConfig["envoy.filters.http.fault"].delay.fixedDelay}]' の値が コマンド "istioctl proxy-config routes deploy/reviews-v2 --name 9080 -o json" の出力のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], delay: .typedPerFilterConfig["envoy.filters.http.fault"].delay.fixedDelay}]' の値と等しい
    # チェック: reviews-gave-up
    # メッセージ: jason のページに reviews があるか、返るのが 6 秒より早すぎます。遅延が jason の ratings への経路に入っているかを確かめてください。
    かつ ファイル "/root/bookinfo/out/delay.html" に "Sorry, product reviews are currently unavailable for this book." が含まれる
    かつ ファイル "/root/bookinfo/out/delay-time.txt" が "^([5-9]|[1-9][0-9])\.[0-9]+$" にマッチする

  シナリオ: jason から ratings への呼び出しを HTTP 500 で失敗させる
    samples/bookinfo/networking/virtual-service-ratings-test-abort.yaml を適用してください(end-user が
    jason の ratings へのリクエストを HTTP 500 で中断)。reviews v2 のサイドカーの経路に中断が現れるまで
    ステップ4と同じように尋ね直し、最後の答えを /root/bookinfo/out/routes-abort.json に保存します。
    それから ratings の Pod の中で jason としてログインしてページを 1 回取得し、
    /root/bookinfo/out/abort.html に保存してください。

    ヒント: 今度は ratings がすぐに 500 を返すので、reviews v2 は星の代わりに「Ratings service is currently
    unavailable」を返し、ページはすぐに返ります。

    もし 学習者が次のコマンドを実行する
      """
      kubectl apply -f /root/istio/samples/bookinfo/networking/virtual-service-ratings-test-abort.yaml
      for i in $(seq 30); do
        istioctl proxy-config routes deploy/reviews-v2 --name 9080 -o json > /root/bookinfo/out/routes-abort.json
        grep -q '"httpStatus": 500' /root/bookinfo/out/routes-abort.json && break
        sleep 1
      done
      kubectl exec deploy/ratings-v1 -c ratings -- sh -c '
        curl -sS -o /dev/null -c /tmp/jason.jar -e http://productpage:9080/productpage -d username=jason -d passwd=jason http://productpage:9080/login
        curl -sS -b /tmp/jason.jar http://productpage:9080/productpage' > /root/bookinfo/out/abort.html
      """
    ならば 最後のコマンドが成功する
    # チェック: abort-for-jason
    かつ クラスターのネームスペース "default" の "VirtualService" "ratings" に対するクエリ '[.spec.http[] | {user: (.match // [] | map(.headers["end-user"].exact)), status: .fault.abort.httpStatus, delay: .fault.delay}]' の値が [{"user": ["jason"], "status": 500, "delay": null}, {"user": [], "status": null, "delay": null}] と等しい
    # チェック: proxy-abort
    かつ "/root/bookinfo/out/routes-abort.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], status: .typedPerFilterConfig["envoy.filters.http.fault"].abort.httpStatus}]' の値が [{"user": ["jason"], "status": 500}, {"user": [], "status": null}] と等しい
    かつ "/root/bookinfo/out/routes-abort.json" のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], status: .typedPerFilterConfig["envoy.filters.http.fault"].abort.httpStatus}]' の値が コマンド "istioctl proxy-config routes deploy/reviews-v2 --name 9080 -o json" の出力のクエリ '[.[].virtualHosts[] | select(.name | startswith("ratings.default.svc.cluster.local")) | .routes[] | {user: [.match.headers[]? | select(.name == "end-user") | .stringMatch.exact], status: .typedPerFilterConfig["envoy.filters.http.fault"].abort.httpStatus}]' の値と等しい
    # チェック: ratings-unavailable
    かつ ファイル "/root/bookinfo/out/abort.html" に "Ratings service is currently unavailable" が含まれる
    かつ ファイル "/root/bookinfo/out/abort.html" に "reviews-v2" が含まれる
    かつ ファイル "/root/bookinfo/out/abort.html" に "glyphicon-star" が含まれない
    かつ コマンド "kubectl exec deploy/ratings-v1 -c ratings -- sh -c 'curl -sS -o /dev/null -c /tmp/grader.jar -e http://productpage:9080/productpage -d username=jason -d passwd=jason http://productpage:9080/login; curl -sS -b /tmp/grader.jar http://productpage:9080/productpage'" の出力に "Ratings service is currently unavailable" が含まれる
