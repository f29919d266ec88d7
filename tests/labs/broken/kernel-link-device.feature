Feature: Broken: an answer that is a link to a device
  A link to /dev/zero would never end when read: a check error, at once.

  Scenario: Link the answer to /dev/zero
    When the learner runs:
      """
      mkdir -p /root/labcheck-zero
      ln -s /dev/zero /root/labcheck-zero/answer.txt
      """
    Then the file "/root/labcheck-zero/answer.txt" should contain "ready"
