Feature: Broken: answers that are links into the kernel's files
  A check reads what the learner's files are, never the kernel's: a link to the kernel's log
  (which blocks when read, and which the learner may not read) or to a device is a check
  error, at once.

  Scenario: Link the answer to the kernel's log
    When the learner runs:
      """
      mkdir -p /root/labcheck-kmsg
      ln -s /proc/kmsg /root/labcheck-kmsg/answer.txt
      """
    Then the file "/root/labcheck-kmsg/answer.txt" should contain "ready"
