@kubernetes
Feature: Kind: a cell to keep

  Scenario: A namespace
    When the learner runs:
      """
      kubectl create namespace kept
      """
    Then the cluster should have a "Namespace" named "kept"
