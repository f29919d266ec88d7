@mesh
Feature: Self-test: a live mesh in the cell
  The cell's cluster has controllers and a real node; once the lab has installed Istio, istiod
  of the cell's version runs as its Pod: a Deployment in a namespace labelled for injection gets a
  Running Pod on the node with the istio-proxy sidecar, and istioctl proxy-status reaches istiod
  unmodified.

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: Install Istio from its manifest; istiod's Pod runs and istiod patches its webhook
    When the learner runs:
      """
      kubectl create namespace istio-system
      istioctl manifest generate > /root/labcheck-mesh/manifest.yaml
      kubectl apply -f /root/labcheck-mesh/manifest.yaml > /root/labcheck-mesh/apply.txt
      """
    Then the last command should succeed
    And the query '.items[] | select(.metadata.namespace == "istio-system" and .status.phase == "Running") | .metadata.labels.app' over the cluster's "pods" should include "istiod" within 60 seconds
    And the query '[.items[] | select(.metadata.name == "istio-sidecar-injector") | .webhooks[].clientConfig.caBundle // "" | length > 0] | all' over the cluster's "mutatingwebhookconfigurations" should equal true within 60 seconds

  Scenario: A Deployment in a namespace labelled for injection runs with the sidecar
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=nginx --port=80
      """
    Then the namespace "shop" should have the label "istio-injection" set to "enabled"
    And the query '.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | .name' over the cluster's "pods" should include "nginx", "istio-proxy" within 60 seconds
    And the query '.items[] | select(.metadata.namespace == "shop") | .spec.nodeName' over the cluster's "pods" should include "labcheck-node"

  Scenario: istioctl proxy-status reaches the cell's istiod
    The Pod's proxy and the ingress gateway's connect to istiod within a second of their Pods
    running; the learner asks until both have subscribed, then keeps that answer.

    When the learner runs:
      """
      for i in $(seq 60); do
        istioctl proxy-status > /root/labcheck-mesh/proxy-status.txt 2>&1
        grep -q '^web-.* 4 (CDS,LDS,EDS,RDS)' /root/labcheck-mesh/proxy-status.txt &&
          grep -q '^istio-ingressgateway-.* 3 (CDS,LDS,EDS)' /root/labcheck-mesh/proxy-status.txt && break
        sleep 1
      done
      """
    Then the last command should succeed
    And the file "/root/labcheck-mesh/proxy-status.txt" should contain "NAME"
    And the file "/root/labcheck-mesh/proxy-status.txt" should equal the output of "istioctl proxy-status 2>&1"
