@kubernetes
Feature: Self-test: before its step, a check the grader cannot evaluate yet does not hold yet
  The grader's command names a namespace the second step creates. Before that step it fails
  (the namespace is not there), which discrimination counts as the check not holding yet; after
  the step the same check passes. Then a grader's command whose output is judged, tried again
  with a wait until it holds, as a learner sends a request again.

  Background:
    Given the lab directory "/root/labcheck-not-yet"

  Scenario: Start an empty answer
    When the learner runs:
      """
      touch /root/labcheck-not-yet/shop.txt
      """
    Then the file "/root/labcheck-not-yet/shop.txt" should exist

  Scenario: Create the namespace and write its name
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl get namespace shop -o name > /root/labcheck-not-yet/shop.txt
      """
    Then the file "/root/labcheck-not-yet/shop.txt" should equal the output of "kubectl get namespace shop -o name"

  Scenario: Note the time; the grader tries its command again until two seconds have passed
    When the learner runs:
      """
      date +%s > /root/labcheck-not-yet/started.txt
      """
    Then the output of "test $(( $(date +%s) - $(cat /root/labcheck-not-yet/started.txt) )) -ge 2 && echo ready" should contain "ready" within 10 seconds
    And the output of "kubectl get namespace shop -o name" should match "(?m)^namespace/shop$"
    And the output of "kubectl get namespaces -o name" should not contain "namespace/legacy"
