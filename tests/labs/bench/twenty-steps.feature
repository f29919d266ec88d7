Feature: Twenty trivial steps
  Measures the harness's own time per step.

  Background:
    Given the lab directory "/root/labcheck-bench"

  Scenario: Step 1
    When the learner runs:
      """
      echo 1 > /root/labcheck-bench/step-1.txt
      """
    Then the file "/root/labcheck-bench/step-1.txt" should contain "1"

  Scenario: Step 2
    When the learner runs:
      """
      echo 2 > /root/labcheck-bench/step-2.txt
      """
    Then the file "/root/labcheck-bench/step-2.txt" should contain "2"

  Scenario: Step 3
    When the learner runs:
      """
      echo 3 > /root/labcheck-bench/step-3.txt
      """
    Then the file "/root/labcheck-bench/step-3.txt" should contain "3"

  Scenario: Step 4
    When the learner runs:
      """
      echo 4 > /root/labcheck-bench/step-4.txt
      """
    Then the file "/root/labcheck-bench/step-4.txt" should contain "4"

  Scenario: Step 5
    When the learner runs:
      """
      echo 5 > /root/labcheck-bench/step-5.txt
      """
    Then the file "/root/labcheck-bench/step-5.txt" should contain "5"

  Scenario: Step 6
    When the learner runs:
      """
      echo 6 > /root/labcheck-bench/step-6.txt
      """
    Then the file "/root/labcheck-bench/step-6.txt" should contain "6"

  Scenario: Step 7
    When the learner runs:
      """
      echo 7 > /root/labcheck-bench/step-7.txt
      """
    Then the file "/root/labcheck-bench/step-7.txt" should contain "7"

  Scenario: Step 8
    When the learner runs:
      """
      echo 8 > /root/labcheck-bench/step-8.txt
      """
    Then the file "/root/labcheck-bench/step-8.txt" should contain "8"

  Scenario: Step 9
    When the learner runs:
      """
      echo 9 > /root/labcheck-bench/step-9.txt
      """
    Then the file "/root/labcheck-bench/step-9.txt" should contain "9"

  Scenario: Step 10
    When the learner runs:
      """
      echo 10 > /root/labcheck-bench/step-10.txt
      """
    Then the file "/root/labcheck-bench/step-10.txt" should contain "10"

  Scenario: Step 11
    When the learner runs:
      """
      echo 11 > /root/labcheck-bench/step-11.txt
      """
    Then the file "/root/labcheck-bench/step-11.txt" should contain "11"

  Scenario: Step 12
    When the learner runs:
      """
      echo 12 > /root/labcheck-bench/step-12.txt
      """
    Then the file "/root/labcheck-bench/step-12.txt" should contain "12"

  Scenario: Step 13
    When the learner runs:
      """
      echo 13 > /root/labcheck-bench/step-13.txt
      """
    Then the file "/root/labcheck-bench/step-13.txt" should contain "13"

  Scenario: Step 14
    When the learner runs:
      """
      echo 14 > /root/labcheck-bench/step-14.txt
      """
    Then the file "/root/labcheck-bench/step-14.txt" should contain "14"

  Scenario: Step 15
    When the learner runs:
      """
      echo 15 > /root/labcheck-bench/step-15.txt
      """
    Then the file "/root/labcheck-bench/step-15.txt" should contain "15"

  Scenario: Step 16
    When the learner runs:
      """
      echo 16 > /root/labcheck-bench/step-16.txt
      """
    Then the file "/root/labcheck-bench/step-16.txt" should contain "16"

  Scenario: Step 17
    When the learner runs:
      """
      echo 17 > /root/labcheck-bench/step-17.txt
      """
    Then the file "/root/labcheck-bench/step-17.txt" should contain "17"

  Scenario: Step 18
    When the learner runs:
      """
      echo 18 > /root/labcheck-bench/step-18.txt
      """
    Then the file "/root/labcheck-bench/step-18.txt" should contain "18"

  Scenario: Step 19
    When the learner runs:
      """
      echo 19 > /root/labcheck-bench/step-19.txt
      """
    Then the file "/root/labcheck-bench/step-19.txt" should contain "19"

  Scenario: Step 20
    When the learner runs:
      """
      echo 20 > /root/labcheck-bench/step-20.txt
      """
    Then the file "/root/labcheck-bench/step-20.txt" should contain "20"
