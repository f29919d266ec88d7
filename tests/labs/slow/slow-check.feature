Feature: A check that takes long
  The grader's command of an oracle check runs for a minute: an interrupt ends the run at once.

  Scenario: The grader's command sleeps
    When the learner runs:
      """
      mkdir -p /root/labcheck-slow-check && echo hi > /root/labcheck-slow-check/a.txt
      """
    Then the file "/root/labcheck-slow-check/a.txt" should equal the output of "sleep 60; echo hi"
