@kubernetes
Feature: A lab interrupted while its command runs
  Scenario: Create a namespace, then wait a long time
    When the learner runs:
      """
      kubectl create namespace slow
      exec -a labcheck-sigint-marker sleep 300
      """
    Then the cluster should have a "Namespace" named "slow"
