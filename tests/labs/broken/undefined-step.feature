Feature: Broken: an undefined step
  Scenario: A typo in a phrase
    When the learner runs:
      """
      touch /root/x
      """
    Then the file "/root/x" should exists
