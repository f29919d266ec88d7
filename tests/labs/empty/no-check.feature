Feature: Empty: a step with no check

  Scenario: Commands only
    When the learner runs:
      """
      true
      """
