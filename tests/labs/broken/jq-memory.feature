Feature: Broken: a jq query past its bounds (memory)
  The query runs in a worker of its own: past its stack, memory or time it is a check error
  naming the bound, and the harness goes on.

  Scenario: Query past the bounds
    When the learner runs:
      """
      mkdir -p /root/labcheck-jq
      echo '{"a": 1}' > /root/labcheck-jq/a.json
      """
    Then the query '[range(1000000000)] | length' on "/root/labcheck-jq/a.json" should yield at least 1 result
