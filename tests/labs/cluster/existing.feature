@kubernetes
Feature: A lab on an existing cluster
  Scenario: Create a labelled namespace
    When the learner runs:
      """
      kubectl create namespace existing-lab
      kubectl label namespace existing-lab purpose=test
      """
    Then the last command should succeed
    And the namespace "existing-lab" should have the label "purpose" set to "test"
