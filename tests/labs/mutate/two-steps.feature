Feature: Mutation self-test: two steps, for mutants selected by a diff
  Each step writes one file and grades it. A change to the second step's script selects only the
  second step's mutants; a change to its checks selects the mutants of both steps.

  Background:
    Given the lab directory "/root/labcheck-two"

  Scenario: Write the first file
    When the learner runs:
      """
      echo first > /root/labcheck-two/one.txt
      """
    Then the file "/root/labcheck-two/one.txt" should contain "first"

  Scenario: Write the second file
    When the learner runs:
      """
      echo second > /root/labcheck-two/two.txt
      """
    Then the file "/root/labcheck-two/two.txt" should contain "second"
    And the file "/root/labcheck-two/one.txt" should contain "first"
