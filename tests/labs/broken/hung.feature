Feature: Broken: a command that hangs
  @timeout=2
  Scenario: Wait forever
    When the learner runs:
      """
      mkdir -p /root/labcheck-hung
      echo started
      (exec -a labcheck-hung-marker sleep 1000) &
      exec -a labcheck-hung-marker sleep 1000
      """
    Then the file "/root/labcheck-hung/never" should exist
