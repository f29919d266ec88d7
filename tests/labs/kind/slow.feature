@kubernetes
Feature: Kind: a step that takes its time, to be interrupted

  @timeout=300
  Scenario: Wait
    When the learner runs:
      """
      kubectl get namespaces
      mkdir -p /root/labcheck-slow
      sleep 240
      """
    Then the file "/root/labcheck-slow/never.txt" should exist
