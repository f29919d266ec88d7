@mesh
Feature: Bench: the Pods of mesh-sidecars.feature without sidecars
  The same Istio (minimal profile: istiod only) and the same two Deployments of the echo app, in
  a namespace without the injection label: the cell runs the Pods' apps in their network
  namespaces and no proxy. bench/run item 9 compares it with mesh-sidecars.feature.

  Background:
    Given the lab directory "/root/labcheck-bench"

  Scenario: Install Istio and run two Deployments of the echo app without sidecars
    When the learner runs:
      """
      istioctl install -y --set profile=minimal > /root/labcheck-bench/install.txt 2>&1
      kubectl create namespace shop
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n shop expose deployment web --port=80 --target-port=8080 --name=web
      kubectl -n shop create deployment client --image=gcr.io/istio-testing/app:latest
      kubectl -n shop rollout status deployment/web --timeout=60s
      kubectl -n shop rollout status deployment/client --timeout=60s
      """
    Then the last command should succeed
    And the query '[.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running")] | length' over the cluster's "pods" should equal 2
    And the query '[.items[] | select(.metadata.namespace == "shop") | ((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length' over the cluster's "pods" should equal 0

  Scenario: The web Pod's app answers, with no proxy in the way
    When the learner runs:
      """
      cd /root/labcheck-bench
      istioctl proxy-status > proxy-status.txt 2>&1
      web=$(kubectl -n shop get pod -l app=web -o jsonpath='{.items[0].status.podIP}')
      for i in $(seq 60); do
        curl -s -m 2 "http://$web:8080/" > answer.txt && grep -q '^ServiceVersion=' answer.txt && break
        sleep 0.2
      done
      """
    Then the file "/root/labcheck-bench/proxy-status.txt" should not contain ".shop "
    And the file "/root/labcheck-bench/answer.txt" should match "^Hostname="
