Feature: Mutation self-test: a learner's jq program
  The learner derives the names of the running Pods of one namespace with jq. The check compares
  the learner's answer with the grader's own query over the same data, so every wrong program —
  a stage left out, a select negated or dropped, a key or a literal changed, a flag dropped — is
  caught.

  Background:
    Given the lab directory "/root/labcheck-jq"
    And the fixture "fixtures/selftest" is placed at "/opt/lab/fixtures/selftest"

  Scenario: Name the running Pods of the shop namespace
    When the learner runs:
      """
      jq -c '[.items[] | select(.status.phase == "Running" and .metadata.namespace == "shop") | .metadata.name] | sort' /opt/lab/fixtures/selftest/pods.json > /root/labcheck-jq/running.json
      """
    Then the query "." on "/root/labcheck-jq/running.json" should equal the query '[.items[] | select(.status.phase == "Running" and .metadata.namespace == "shop") | .metadata.name] | sort' on "/opt/lab/fixtures/selftest/pods.json"
    And the file "/root/labcheck-jq/running.json" should have exactly 1 lines
