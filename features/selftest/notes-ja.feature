# language: ja
機能: セルフテスト: 日本語のラボ
  クラスターを使わない日本語のラボ。フィクスチャからマニフェストを作り、JSON にまとめ、
  メモを書く。日本語のフレーズとメッセージを一通り使う。

  背景:
    前提 ラボのディレクトリ "/root/labcheck-ja" を使う
    かつ フィクスチャ "fixtures/selftest" を "/opt/lab/fixtures/selftest" に置く

  シナリオ: マニフェストをコピーして種類を数える
    もし 学習者が次のコマンドを実行する
      """
      mkdir -p /root/labcheck-ja/out
      cp /opt/lab/fixtures/selftest/app.yaml /root/labcheck-ja/app.yaml
      grep -c '^kind:' /root/labcheck-ja/app.yaml | tee /root/labcheck-ja/out/count.txt
      """
    ならば 最後のコマンドが成功する
    かつ 出力に "2" が含まれる
    かつ ファイル "/root/labcheck-ja/app.yaml" が存在する
    かつ ファイル "/root/labcheck-ja/out/count.txt" が空でない
    かつ ファイル "/root/labcheck-ja/out/count.txt" がちょうど 1 行である
    かつ ファイル "/root/labcheck-ja/out/count.txt" が コマンド "grep -c '^kind:' /opt/lab/fixtures/selftest/app.yaml" の出力と等しい
    かつ ファイル "/root/labcheck-ja/app.yaml" に "^kind:" にマッチする行が 2 行以上ある
    かつ "/root/labcheck-ja/app.yaml" のクエリ 'select(.kind == "Service") | .spec.ports[0].port' の値が 8080 と等しい

  シナリオ: ワークロードを JSON にまとめる
    もし 学習者が次のコマンドを実行する
      """
      cd /root/labcheck-ja
      image=$(awk '/- name: shop/{getline; print $2}' app.yaml)
      printf '{"containers": ["shop", "log-shipper"], "image": "%s", "labels": {"version": "v1"}}\n' "$image" > out/summary.json
      """
    ならば "/root/labcheck-ja/out/summary.json" のクエリ ".containers" の結果に "shop", "log-shipper" がすべて含まれる
    かつ "/root/labcheck-ja/out/summary.json" のクエリ ".containers" の結果が 2 個以上ある
    かつ "/root/labcheck-ja/out/summary.json" のクエリ ".labels" の値が オブジェクト である
    かつ "/root/labcheck-ja/out/summary.json" のクエリ ".containers" の値が コマンド "cat /opt/lab/fixtures/selftest/app.yaml" の出力のクエリ '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[].name]' の値と等しい
    かつ "/root/labcheck-ja/out/summary.json" のクエリ ".image" の値が "/root/labcheck-ja/app.yaml" のクエリ 'select(.kind == "Deployment") | .spec.template.spec.containers[0].image' の値と等しい

  シナリオ: ラベルの効き目をメモに書く
    もし 学習者が次のコマンドを実行する
      """
      echo "ラベルを付けても既存のPodはそのままで、ロールアウトで再作成されて初めてサイドカーが入る" > /root/labcheck-ja/out/note.txt
      """
    ならば メモ "/root/labcheck-ja/out/note.txt" が "ロールアウト", "再作成" のすべてに触れている
    かつ メモ "/root/labcheck-ja/out/note.txt" が "rollout", "ロールアウト" のいずれかに触れている
    かつ ファイル "/root/labcheck-ja/out/note.txt" に "既存のPod" が含まれる
    かつ ファイル "/root/labcheck-ja/out/note.txt" に "すぐに" が含まれない
    かつ ファイル "/root/labcheck-ja/out/note.txt" が "サイドカー" にマッチする
