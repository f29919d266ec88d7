Feature: Broken: a jq query past its bounds (memory)
  The query runs in a worker of its own: past its stack, memory or time it is a check error
  naming the bound, and the harness goes on. The query asks for a string of 2 GB at once: past
  the 1 GiB bound at its first allocation, whatever the machine's load (an array grown element by
  element could meet the time bound first on a busy machine).

  Scenario: Query past the bounds
    When the learner runs:
      """
      mkdir -p /root/labcheck-jq
      echo '{"a": 1}' > /root/labcheck-jq/a.json
      """
    Then the query '"x" * 2000000000 | length' on "/root/labcheck-jq/a.json" should yield at least 1 result
