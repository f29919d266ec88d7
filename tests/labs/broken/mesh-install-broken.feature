# language: ja
@istio
機能: 壊れたコピー: メッシュ導入マニフェスト(ステップ2の集計が種類ではなくapiVersion)
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
      grep '^apiVersion:' /root/istio/manifest.yaml | sort | uniq -c | sort -rn > /root/istio/out/manifest-kinds.txt
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

