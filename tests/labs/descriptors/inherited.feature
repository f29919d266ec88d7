Feature: Descriptors labcheck inherited
  Whatever labcheck's own caller left open must not reach a learner command or a kept cell.

  Background:
    Given the lab directory "/root/labcheck-fds"

  Scenario: List the command's own descriptors
    When the learner runs:
      """
      ls /proc/self/fd > /root/labcheck-fds/fds.txt
      """
    Then the file "/root/labcheck-fds/fds.txt" should not contain "9"
    And the file "/root/labcheck-fds/fds.txt" should contain "2"
