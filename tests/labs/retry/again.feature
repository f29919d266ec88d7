Feature: A learner runs a step's commands again until its checks pass
  Each try of the second step appends a line to a file and prints how many lines it holds; its
  checks hold from the third try on, as a proxy answers differently once a policy has reached it.
  The shell carries from one try to the next (the count the first try set is still there). The
  last step's checks never hold: it tries until its time is up and fails with the last try's
  output, each try in the report.

  Background:
    Given the lab directory "/root/retry"

  Scenario: Start counting
    When the learner runs:
      """
      : > /root/retry/tries.txt
      FIRST=yes
      """
    Then the file "/root/retry/tries.txt" should exist

  Scenario: Try until the third try
    When the learner runs, until the checks pass or 20 seconds are up:
      """
      echo try >> /root/retry/tries.txt
      echo "tries=$(wc -l < /root/retry/tries.txt) first=$FIRST"
      """
    Then its output should contain "tries=3 first=yes"
    And the file "/root/retry/tries.txt" should have exactly 3 lines
