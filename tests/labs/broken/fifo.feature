Feature: Broken: a FIFO where a file should be
  Reading it would block: the check cannot be evaluated, which is a harness error.

  Scenario: Make a pipe instead of a file
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      mkfifo /root/labcheck-broken/answer.txt
      """
    Then the file "/root/labcheck-broken/answer.txt" should contain "42"
