Feature: Self-test: checks that something is not so
  A file that must be gone, a value that must have changed, values that must be absent, a count
  that must not grow, a command's output without a text or a pattern.

  Background:
    Given the lab directory "/root/labcheck-negatives"

  Scenario: Write a file and a summary
    When the learner runs:
      """
      echo stale > old.txt
      echo '{"names": ["a", "b"], "count": 2}' > summary.json
      """
    Then the file "/root/labcheck-negatives/old.txt" should exist
    And the query ".count" on "/root/labcheck-negatives/summary.json" should equal 2

  Scenario: Remove the file and shrink the summary
    When the learner runs:
      """
      rm old.txt
      echo '{"names": ["a"], "count": 1}' > summary.json
      """
    Then the file "/root/labcheck-negatives/old.txt" should not exist
    And the query ".count" on "/root/labcheck-negatives/summary.json" should not equal 2
    And the query ".names" on "/root/labcheck-negatives/summary.json" should include none of "b", "c"
    And the query ".names" on "/root/labcheck-negatives/summary.json" should yield at most 1 result

  Scenario: List what is left, with nothing of the old file in the listing
    When the learner runs:
      """
      ls | tee listing.txt
      """
    Then the file "/root/labcheck-negatives/listing.txt" should contain "summary.json"
    And its output should not contain "old.txt"
    And its output should not match "(?i)no such file|error"

  @mistake
  Scenario: The old file is made again before the listing
    When the learner runs:
      """
      touch old.txt
      ls | tee listing.txt
      """
    Then these checks should reject it:
      """
      its output should not contain "old.txt"
      """
