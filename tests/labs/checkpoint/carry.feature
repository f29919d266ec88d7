Feature: Checkpoint: what a step leaves is what the next one finds
  Each step leaves something a restored cell must find as it was: files in the lab directory,
  a file in /tmp, a host file deleted (an overlay whiteout), a host directory replaced (an opaque
  directory) and a symlink. The mistake of step 3 starts from the checkpoint of step 2.

  Background:
    Given the lab directory "/root/carry"

  Scenario: Leave files behind
    When the learner runs:
      """
      echo one > notes.txt
      mkdir -p sub && printf 'a\nb\n' > sub/list.txt
      echo scratch > /tmp/carry-scratch.txt
      ln -s /root/carry/notes.txt /root/carry/link.txt
      """
    Then the file "/root/carry/notes.txt" should contain "one"
    And the file "/tmp/carry-scratch.txt" should contain "scratch"

  Scenario: Delete and replace what the host has
    When the learner runs:
      """
      rm -f /etc/debian_version
      rm -rf /usr/share/doc/bash && mkdir -p /usr/share/doc/bash && echo mine > /usr/share/doc/bash/only.txt
      echo two >> notes.txt
      """
    Then the file "/root/carry/notes.txt" should contain "two"
    And the file "/usr/share/doc/bash/only.txt" should contain "mine"

  Scenario: Count what is there
    When the learner runs:
      """
      {
        cat notes.txt
        cat /tmp/carry-scratch.txt
        readlink link.txt
        test -e /etc/debian_version && echo "debian_version back" || echo "debian_version gone"
        ls /usr/share/doc/bash
        pwd
      } > report.txt
      """
    # check: seven-lines
    Then the file "/root/carry/report.txt" should have exactly 7 lines
    And the file "/root/carry/report.txt" should contain "debian_version gone"
    And the file "/root/carry/report.txt" should not contain "README"

  @mistake
  Scenario: Report written before the notes were complete
    When the learner runs:
      """
      {
        cat notes.txt
        cat /tmp/carry-scratch.txt
        readlink link.txt
        test -e /etc/debian_version && echo "debian_version back" || echo "debian_version gone"
        ls /usr/share/doc/bash
      } > report.txt
      """
    Then these checks should reject it:
      """
      check "seven-lines"
      the file "/root/carry/report.txt" should have exactly 7 lines
      """
