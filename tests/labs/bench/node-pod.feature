@kubernetes @node
Feature: Bench: a Pod of nginx on a real node
  The cell's node is Ready when the cell is; the step is the Pod's image pulled from the cell's
  registry, its sandbox and container started, its readiness seen.

  Scenario: One Pod becomes ready
    When the learner runs:
      """
      kubectl run web --image=nginx
      kubectl wait --for=condition=Ready pod/web --timeout=120s
      """
    Then the last command should succeed
    And the query '.status.phase' on the cluster's "Pod" "web" in namespace "default" should equal "Running"
