Feature: Named checks that do not resolve, and empty messages, are caught by lint
  A mistake refers to a check by the name a comment gives it. Renaming the check, naming two checks
  alike, naming a line that is no check, or naming a check of a later step: lint says where.

  Background:
    Given the lab directory "/root/named"

  Scenario: Write the answer
    When the learner runs:
      """
      echo 42 > answer.txt
      """
    # check: answer-is-42
    Then the file "/root/named/answer.txt" should contain "42"
    # check: answer-is-42
    And the file "/root/named/answer.txt" should have exactly 1 lines
    # check: not-a-check

  @mistake
  Scenario: The wrong number
    When the learner runs:
      """
      echo 41 > answer.txt
      """
    Then these checks should reject it:
      """
      check "answer-is-fourty-two"
      check "later"
      """

  Scenario: Another step
    When the learner runs:
      """
      echo done > done.txt
      """
    # check: later
    Then the file "/root/named/done.txt" should exist
    # message:
