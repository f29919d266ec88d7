Feature: Slow: a step that takes its time, to be interrupted

  @timeout=60
  Scenario: Wait
    When the learner runs:
      """
      mkdir -p /root/labcheck-slow
      echo started
      sleep 30
      """
    Then the file "/root/labcheck-slow/never.txt" should exist
