@mesh
Feature: Self-test: injection happens on rollout
  A namespace labelled after its Deployment keeps its Pod without a sidecar until a rollout
  re-creates it; a mistake that labels without the rollout is rejected. Its cell starts from the
  checkpoint of the installed mesh: its own node, whose kubelet runs istiod's Pod again.

  Background:
    Given the lab directory "/root/labcheck-rollout"

  Scenario: Install Istio and run a Deployment in an unlabelled namespace
    When the learner runs:
      """
      kubectl create namespace istio-system
      istioctl manifest generate | kubectl apply -f - > /root/labcheck-rollout/apply.txt
      kubectl -n istio-system rollout status deployment istiod --timeout=60s
      kubectl create namespace legacy
      kubectl -n legacy create deployment web --image=gcr.io/istio-testing/app:latest
      kubectl -n legacy rollout status deployment web --timeout=60s
      """
    Then the last command should succeed
    And the query '[.items[] | select(.metadata.namespace == "legacy" and .status.phase == "Running")] | length' over the cluster's "pods" should equal 1 within 60 seconds
    And the query '[.items[] | select(.metadata.namespace == "legacy") | .spec.containers[].name]' over the cluster's "pods" should equal ["app"]

  Scenario: Label the namespace and roll the Deployment out again
    When the learner runs:
      """
      kubectl label namespace legacy istio-injection=enabled
      kubectl -n legacy rollout restart deployment web
      kubectl -n legacy rollout status deployment web --timeout=60s
      """
    Then the namespace "legacy" should have the label "istio-injection" set to "enabled"
    And the query '.items[] | select(.metadata.namespace == "legacy" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | .name' over the cluster's "pods" should include "app", "istio-proxy" within 10 seconds

  @mistake
  Scenario: Label without a rollout
    When the learner runs:
      """
      kubectl label namespace legacy istio-injection=enabled
      """
    Then these checks should reject it:
      """
      the query '.items[] | select(.metadata.namespace == "legacy" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | .name' over the cluster's "pods" should include "app", "istio-proxy" within 10 seconds
      """
