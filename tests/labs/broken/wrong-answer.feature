Feature: Broken: a wrong answer
  Scenario: Write the greeting
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      echo "good bye" > /root/labcheck-broken/greeting.txt
      """
    Then the file "/root/labcheck-broken/greeting.txt" should contain "hello"

  Scenario: Never reached
    When the learner runs:
      """
      echo later > /root/labcheck-broken/later.txt
      """
    Then the file "/root/labcheck-broken/later.txt" should exist
