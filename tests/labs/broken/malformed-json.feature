Feature: Broken: a malformed JSON artifact
  Scenario: Write a summary with a syntax error
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      printf '{\n  "containers": ["a", "b",\n}\n' > /root/labcheck-broken/summary.json
      """
    Then the query ".containers" on "/root/labcheck-broken/summary.json" should yield at least 2 results
