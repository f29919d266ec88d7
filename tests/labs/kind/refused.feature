@kubernetes
Feature: Kind: a learner's privileged Pod never starts on a kind node
  The node of a kind cell runs every container through the runtime's policy: a Pod that asks for
  `privileged: true` (all of the machine's devices and capabilities) is refused, with the reason in
  its events, and an ordinary Pod of the same image runs.

  Scenario: A privileged Pod and an ordinary one
    When the learner runs:
      """
      kubectl run plain --image=registry.k8s.io/pause:3.10.1
      kubectl run root --image=registry.k8s.io/pause:3.10.1 --overrides='{"spec":{"containers":[{"name":"root","image":"registry.k8s.io/pause:3.10.1","securityContext":{"privileged":true}}]}}'
      kubectl wait --for=condition=Ready pod/plain --timeout=60s
      """
    Then the output of "kubectl get events --field-selector involvedObject.name=root -o jsonpath='{.items[*].message}'" should contain "labcheck:" within 60 seconds
    And the query '.status.phase' on the cluster's "Pod" "plain" in namespace "default" should equal "Running"
    And the query '.status.phase' on the cluster's "Pod" "root" in namespace "default" should equal "Pending"
