# language: ja
機能: 壊れたラボ: ファイルがない
  シナリオ: 別の場所に書いてしまう
    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/labcheck-broken
      echo ok > /root/labcheck-broken/wrong-name.txt
      """
    ならば ファイル "/root/labcheck-broken/report.txt" が存在する
