Feature: Sandbox isolation (alpha)
  Two labs write the same absolute paths in parallel; each must see only its own.

  Background:
    Given the lab directory "/root/labcheck-isolation"

  Scenario: Write the shared path
    When the learner runs:
      """
      echo alpha > /root/labcheck-isolation/who.txt
      mkdir -p /opt/labcheck-isolation && echo alpha > /opt/labcheck-isolation/who.txt
      sleep 2
      """
    Then the file "/root/labcheck-isolation/who.txt" should contain "alpha"
    And the file "/opt/labcheck-isolation/who.txt" should contain "alpha"

  Scenario: Still only this cell's file
    When the learner runs:
      """
      cat /root/labcheck-isolation/who.txt > /root/labcheck-isolation/seen.txt
      ls /root/labcheck-isolation >> /root/labcheck-isolation/seen.txt
      """
    Then the file "/root/labcheck-isolation/seen.txt" should have exactly 3 lines
    And the file "/root/labcheck-isolation/seen.txt" should contain "alpha"
