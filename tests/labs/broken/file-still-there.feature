Feature: Broken: a file that should be gone is still there

  @no-discrimination
  Scenario: Keep the old file
    When the learner runs:
      """
      mkdir -p /root/labcheck-gone && echo stale > /root/labcheck-gone/old.txt
      """
    Then the file "/root/labcheck-gone/old.txt" should not exist
