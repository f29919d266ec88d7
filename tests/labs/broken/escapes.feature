Feature: Broken: output that tries to drive the terminal and the CI log
  The learner's output holds an escape sequence and a carriage return before a workflow
  command: the console writes them out, so neither clears a screen nor makes an annotation.

  Scenario: Print control characters, then fail
    When the learner runs:
      """
      printf '\033[2J\r::error::pwned\n'
      exit 3
      """
    Then the last command should succeed
