# language: ja
@kubernetes
機能: セルフテスト: クラスターに何かがないことを確かめる
  ConfigMap を作ってから消し、消えたこと、数が増えていないこと、名前がないことを確かめる。

  シナリオ: ConfigMap を作る
    もし 学習者が次のコマンドを実行する
      """
      kubectl -n default create configmap stale --from-literal=a=1
      """
    ならば クラスターのネームスペース "default" に "ConfigMap" "stale" が存在する

  シナリオ: ConfigMap を消す
    もし 学習者が次のコマンドを実行する
      """
      kubectl -n default delete configmap stale
      """
    ならば クラスターのネームスペース "default" に "ConfigMap" "stale" が存在しない
    かつ クラスターに "Namespace" "stale" が存在しない
    かつ クラスターの "configmaps" に対するクエリ '[.items[] | select(.metadata.namespace == "default") | .metadata.name]' の値が ["stale"] と等しくない
    かつ クラスターの "configmaps" に対するクエリ '.items[] | select(.metadata.namespace == "default") | .metadata.name' の結果に "stale" のどれも含まれない
    かつ クラスターの "configmaps" に対するクエリ '.items[] | select(.metadata.namespace == "default")' の結果が 1 個以下である
