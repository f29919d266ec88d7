@kubernetes
Feature: Kind: a lab whose check fails

  Scenario: A namespace that is not made
    When the learner runs:
      """
      kubectl get namespaces
      """
    Then the cluster should have a "Namespace" named "never-made"
