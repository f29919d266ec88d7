Feature: The learner's shell: what a terminal keeps from one step to the next
  Step 1 exports a variable, sets a plain one, defines a function and an alias; step 2 changes
  directory; step 3 uses them all, as a learner's terminal would let it. The first mistake
  starts from the checkpoint of step 2 and sees the shell (its shouted variable is what rejects
  it); the second runs in a new terminal, where none of it is there.

  Background:
    Given the lab directory "/root/shell"

  Scenario: Set the terminal up
    When the learner runs:
      """
      export INGRESS_PORT=31080
      GATEWAY_URL="127.0.0.1:$INGRESS_PORT"
      count() { wc -l < "$1"; }
      alias say=echo
      printf 'a\nb\n' > /root/shell/list.txt
      """
    Then the last command should succeed

  Scenario: Go somewhere else
    When the learner runs:
      """
      mkdir -p /root/shell/work && cd /root/shell/work
      """
    Then the last command should succeed

  Scenario: Use what the terminal kept
    When the learner runs:
      """
      pwd
      echo "url=http://$GATEWAY_URL/"
      bash -c 'echo "a child sees port $INGRESS_PORT"'
      say "$(count /root/shell/list.txt) items"
      """
    Then the last command should succeed
    # check: directory
    And its output should contain "/root/shell/work"
    # check: variables
    And its output should contain "url=http://127.0.0.1:31080/"
    And its output should contain "a child sees port 31080"
    # check: function-and-alias
    And its output should contain "2 items"
    # check: not-shouted
    And its output should not contain "URL=HTTP://127.0.0.1:31080/"

  @mistake
  Scenario: The URL shouted
    When the learner runs:
      """
      pwd
      echo "url=http://$GATEWAY_URL/" | tr a-z A-Z
      bash -c 'echo "a child sees port $INGRESS_PORT"'
      say "$(count /root/shell/list.txt) items"
      """
    Then these checks should reject it:
      """
      check "not-shouted"
      """

  @mistake
  Scenario: The same commands in a new terminal
    When the learner runs in a new shell:
      """
      pwd
      echo "url=http://$GATEWAY_URL/"
      bash -c 'echo "a child sees port $INGRESS_PORT"'
      say "$(count /root/shell/list.txt) items"
      """
    Then these checks should reject it:
      """
      check "directory"
      check "variables"
      check "function-and-alias"
      """
