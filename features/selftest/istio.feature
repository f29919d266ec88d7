@istio
Feature: Self-test: real istioctl and kubectl on the local cluster
  Runs on every Istio version of the matrix: the version's istioctl renders the install manifest,
  kubectl applies it to the cell's API server, the mesh CRDs become Established, and of two
  namespaces only one is labelled for sidecar injection. Uses the English cluster phrases.

  Background:
    Given the lab directory "/root/labcheck-istio"

  Scenario: Render the install manifest with this version's istioctl
    When the learner runs:
      """
      istioctl version > /root/labcheck-istio/version.txt 2>&1
      istioctl manifest generate > /root/labcheck-istio/manifest.yaml
      """
    Then the last command should succeed
    And the file "/root/labcheck-istio/version.txt" should match "client version: \d+\.\d+"
    And the file "/root/labcheck-istio/version.txt" should equal the output of "istioctl version 2>&1"
    And the file "/root/labcheck-istio/manifest.yaml" should equal the output of "istioctl manifest generate"
    And the query 'select(.kind == "Deployment") | .metadata.name' on "/root/labcheck-istio/manifest.yaml" should include "istiod"
    And the query 'select(.kind == "CustomResourceDefinition")' on "/root/labcheck-istio/manifest.yaml" should yield at least 5 results

  Scenario: Apply it; the mesh API types are registered
    When the learner runs:
      """
      kubectl create namespace istio-system
      kubectl apply -f /root/labcheck-istio/manifest.yaml > /root/labcheck-istio/apply.txt
      """
    Then the last command should succeed
    And the CRD "virtualservices.networking.istio.io" should be established
    And the CRD "peerauthentications.security.istio.io" should be established
    And the cluster should have a "ConfigMap" named "istio-sidecar-injector" in namespace "istio-system"
    And the query '.items[] | select(.spec.group | test("istio.io"))' over the cluster's "customresourcedefinitions" should yield at least 5 results

  Scenario: One namespace labelled for injection, one not
    When the learner runs:
      """
      kubectl create namespace injected
      kubectl label namespace injected istio-injection=enabled
      kubectl create namespace plain
      kubectl get namespaces -l istio-injection=enabled -o json > /root/labcheck-istio/labelled.json
      """
    Then the namespace "injected" should have the label "istio-injection" set to "enabled"
    And the namespace "plain" should not have the label "istio-injection"
    And the query '.items[].metadata.name' over the cluster's "namespaces" should include "injected", "plain"
    And the query '[.items[].metadata.name]' on "/root/labcheck-istio/labelled.json" should equal the query '[.items[] | select(.metadata.labels["istio-injection"] == "enabled") | .metadata.name]' over the cluster's "namespaces"
