Feature: Self-test: files, documents and notes
  A lab that needs no cluster: it copies a fixture, derives artifacts from it with standard
  tools and writes a note. It exercises every file, document and note check in English.

  Background:
    Given the lab directory "/root/labcheck-selftest"
    And the fixture "fixtures/selftest" is placed at "/opt/lab/fixtures/selftest"

  Scenario: Copy the manifest and list its kinds
    When the learner runs:
      """
      mkdir -p /root/labcheck-selftest/out
      cp /opt/lab/fixtures/selftest/app.yaml /root/labcheck-selftest/app.yaml
      grep '^kind:' /root/labcheck-selftest/app.yaml | sort | uniq -c > /root/labcheck-selftest/out/kinds.txt
      cat /root/labcheck-selftest/out/kinds.txt
      """
    Then the last command should succeed
    And its output should contain "Deployment"
    And the file "/root/labcheck-selftest/app.yaml" should exist
    And the file "/root/labcheck-selftest/out/kinds.txt" should not be empty
    And the file "/root/labcheck-selftest/out/kinds.txt" should have exactly 2 lines
    And the file "/root/labcheck-selftest/out/kinds.txt" should equal the output of "grep '^kind:' /opt/lab/fixtures/selftest/app.yaml | sort | uniq -c"
    And the file "/root/labcheck-selftest/app.yaml" should contain every line of the output of "cat /opt/lab/fixtures/selftest/app.yaml"
    And the file "/root/labcheck-selftest/app.yaml" should have at least 2 lines matching "^kind:"
    And the query 'select(.kind == "Deployment") | .spec.replicas' on "/root/labcheck-selftest/app.yaml" should equal 2

  Scenario: Summarise the workload as JSON
    When the learner runs:
      """
      cd /root/labcheck-selftest
      image=$(awk '/- name: shop/{getline; print $2}' app.yaml)
      printf '{"containers": ["shop", "log-shipper"], "container_count": 2, "image": "%s"}\n' "$image" > out/summary.json
      """
    Then the last command should succeed
    # message: Write the names of the Deployment's containers, as a list, to out/summary.json.
    And the query ".containers" on "/root/labcheck-selftest/out/summary.json" should include "shop", "log-shipper"
    And the query ".containers" on "/root/labcheck-selftest/out/summary.json" should yield at least 2 results
    And the query ".container_count" on "/root/labcheck-selftest/out/summary.json" should be a number
    And the query ".container_count" on "/root/labcheck-selftest/out/summary.json" should equal the query '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[]] | length' on the output of "cat /opt/lab/fixtures/selftest/app.yaml"
    And the query ".image" on "/root/labcheck-selftest/out/summary.json" should equal the query 'select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "shop") | .image' on "/root/labcheck-selftest/app.yaml"

  Scenario: Explain what a label does
    When the learner runs:
      """
      cat > /root/labcheck-selftest/out/note.txt <<'NOTE'
      A label changes nothing by itself: existing Pods stay as they are until a Rollout recreates them.
      NOTE
      """
    Then the notes "/root/labcheck-selftest/out/note.txt" should mention all of "rollout", "pods"
    And the notes "/root/labcheck-selftest/out/note.txt" should mention any of "recreate", "restart"
    And the file "/root/labcheck-selftest/out/note.txt" should contain "label"
    And the file "/root/labcheck-selftest/out/note.txt" should not contain "sidecar is injected immediately"
    And the file "/root/labcheck-selftest/out/note.txt" should match "(?i)until a rollout"

  @timeout=20
  Scenario: A search that finds nothing fails
    When the learner runs:
      """
      grep -c 'kind: Gateway' /root/labcheck-selftest/app.yaml
      """
    Then the last command should exit with 1
    And its output should match "^0$"
