@kubernetes
Feature: Mutation self-test: mutants on clusters lent one after another
  The second step makes a namespace and a ConfigMap in it. A mutant that leaves out the namespace,
  or puts the ConfigMap elsewhere, is caught only on a cluster that holds what the first step left
  and nothing more: on a cluster that kept an earlier mutant's namespace or ConfigMap, its checks
  would pass. Mutants of the first step start from a fresh cluster.

  Scenario: A namespace to begin with
    When the learner runs:
      """
      kubectl create namespace base
      """
    Then the query '.metadata.name' on the cluster's "Namespace" "base" should equal "base"

  Scenario: The shop's settings
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl -n shop create configmap settings --from-literal=port=8080
      """
    Then the query '.data.port' on the cluster's "ConfigMap" "settings" in namespace "shop" should equal "8080"
    And the query '.metadata.name' on the cluster's "Namespace" "base" should equal "base"
