@mesh
Feature: Self-test: a live mesh whose check fails
  Istio is installed and istiod runs, but the Deployment is in a namespace nobody labelled for
  injection: the check that wants its sidecar fails, and the cell ends with everything it ran
  (its report keeps the logs, istiod's and the echo app's containers' included).

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: A Deployment outside any injected namespace gets no sidecar
    When the learner runs:
      """
      kubectl create namespace istio-system
      istioctl manifest generate | kubectl apply -f - > /root/labcheck-mesh/apply.txt
      kubectl -n istio-system rollout status deployment istiod --timeout=60s
      kubectl create namespace plain
      kubectl -n plain create deployment web --image=gcr.io/istio-testing/app:latest
      kubectl -n plain rollout status deployment web --timeout=60s
      """
    Then the query '.items[] | select(.metadata.namespace == "plain") | .spec.containers[].name' over the cluster's "pods" should include "istio-proxy" within 5 seconds
