Feature: A check that waits for what never comes
  The file never appears: the check polls for its whole wait, then fails saying how long it
  waited.

  Background:
    Given the lab directory "/root/labcheck-wait"

  Scenario: Wait for a file nobody writes
    When the learner runs:
      """
      echo started > /root/labcheck-wait/started.txt
      """
    Then the file "/root/labcheck-wait/started.txt" should exist
    And the file "/root/labcheck-wait/never.txt" should exist within 2 seconds
