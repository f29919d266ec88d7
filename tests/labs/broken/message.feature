Feature: A failed check with a message shows the message, and to the author what it expected
  The learner writes the wrong number. The check's message says what the task asks; the author
  also sees the value the check expected and the one it found.

  Scenario: Write the answer
    When the learner runs:
      """
      echo 41 > /root/answer.txt
      """
    # message: Write the answer to the question, 42, to /root/answer.txt.
    Then the file "/root/answer.txt" should contain "42"
