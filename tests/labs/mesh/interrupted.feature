@mesh
Feature: Self-test: a live mesh interrupted
  Istio is installed, then the learner's command waits: a test ends the run with SIGTERM while
  istiod runs.

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: Install Istio, then wait
    When the learner runs:
      """
      kubectl create namespace istio-system
      istioctl manifest generate | kubectl apply -f - > /root/labcheck-mesh/apply.txt
      sleep 100
      """
    Then the last command should succeed
    And the cluster should have a "Namespace" named "istio-system"
