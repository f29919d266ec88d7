Feature: Broken for grading: a step graded only on its command

  Scenario: Make the directory
    When the learner runs:
      """
      mkdir -p /root/labcheck-graded
      echo done > /root/labcheck-graded/done.txt
      """
    Then the file "/root/labcheck-graded/done.txt" should contain "done"

  Scenario: Say hello
    When the learner runs:
      """
      echo hello
      """
    Then its output should contain "hello"
