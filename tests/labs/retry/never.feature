Feature: A step whose checks never pass tries until its time is up, then fails
  Each try prints how many tries there were; the check wants a count no try reaches.

  Background:
    Given the lab directory "/root/retry"

  Scenario: Never enough
    When the learner runs, until the checks pass or 3 seconds are up:
      """
      echo try >> /root/retry/tries.txt
      echo "tries=$(wc -l < /root/retry/tries.txt)"
      """
    Then its output should contain "tries=100"
