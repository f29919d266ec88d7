@mesh
Feature: Self-test: sidecars that run
  Istio is installed with an unmodified `istioctl install -y`; a Deployment in a namespace
  labelled for injection runs, and the cell starts its Pod's proxy — pilot-agent and upstream
  Envoy in a network namespace holding the Pod's IP — so `istioctl proxy-status` lists it SYNCED.

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: Install Istio with istioctl
    When the learner runs:
      """
      istioctl install -y > /root/labcheck-mesh/install.txt 2>&1
      """
    Then the last command should succeed
    And the query '.items[] | select(.metadata.namespace == "istio-system" and .status.phase == "Running") | .metadata.labels.app' over the cluster's "pods" should include "istiod" within 60 seconds

  Scenario: A Deployment in a namespace labelled for injection runs with its sidecar
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=nginx --port=80
      kubectl -n shop expose deployment web --port=80 --name=web
      kubectl -n shop rollout status deployment/web --timeout=60s
      """
    Then the last command should succeed
    And the query '.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | .name' over the cluster's "pods" should include "istio-proxy"

  Scenario: istioctl proxy-status lists the Pod's proxy, SYNCED
    When the learner runs:
      """
      for i in $(seq 60); do
        istioctl proxy-status -v 1 > /root/labcheck-mesh/proxy-status.txt 2>&1
        grep -Eq '^web-.*\.shop .*SYNCED.*SYNCED.*SYNCED.*SYNCED' /root/labcheck-mesh/proxy-status.txt && break
        sleep 1
      done
      """
    Then the last command should succeed
    And the file "/root/labcheck-mesh/proxy-status.txt" should match "web-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED \([^)]*\) +IGNORED +SYNCED \([^)]*\) +SYNCED \([^)]*\) +SYNCED \([^)]*\) +istiod-"
    And the file "/root/labcheck-mesh/proxy-status.txt" should not contain "NOT SENT"
