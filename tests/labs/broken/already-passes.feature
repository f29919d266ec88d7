Feature: Broken: a check that already passes before its step
  Scenario: Check something that was always there
    When the learner runs:
      """
      true
      """
    Then the file "/etc/hostname" should exist
