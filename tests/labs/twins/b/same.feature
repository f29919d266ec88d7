Feature: Twin b: a lab with the same file name as another

  Background:
    Given the lab directory "/root/labcheck-twins"

  Scenario: Write my own answer to the shared path
    When the learner runs:
      """
      echo "answer of twin b" > /root/labcheck-twins/answer.txt
      sleep 1
      """
    Then the file "/root/labcheck-twins/answer.txt" should contain "answer of twin b"
