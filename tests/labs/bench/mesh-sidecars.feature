@mesh
Feature: Bench: two injected Pods of the echo app, serving through their sidecars
  bench/run item 9 runs this lab beside mesh-no-sidecars.feature, which deploys the same Pods in a
  namespace without the injection label. Istio's minimal profile (istiod only, no gateway), so
  the only proxies are the two Pods' sidecars.

  Background:
    Given the lab directory "/root/labcheck-bench"

  Scenario: Install Istio and run two injected Deployments of the echo app
    When the learner runs:
      """
      istioctl install -y --set profile=minimal > /root/labcheck-bench/install.txt 2>&1
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n shop expose deployment web --port=80 --target-port=8080 --name=web
      kubectl -n shop create deployment client --image=gcr.io/istio-testing/app:latest
      kubectl -n shop rollout status deployment/web --timeout=60s
      kubectl -n shop rollout status deployment/client --timeout=60s
      """
    Then the last command should succeed
    And the query '[.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | select(.name == "istio-proxy")] | length' over the cluster's "pods" should equal 2

  Scenario: Both proxies are SYNCED and the web Pod answers through its sidecar
    When the learner runs:
      """
      cd /root/labcheck-bench
      for i in $(seq 60); do
        istioctl proxy-status -v 1 > proxy-status.txt 2>&1
        [ "$(grep -Ec '^(web|client)-.*\.shop .*SYNCED.*SYNCED.*SYNCED' proxy-status.txt)" = 2 ] && break
        sleep 0.2
      done
      web=$(kubectl -n shop get pod -l app=web -o jsonpath='{.items[0].status.podIP}')
      for i in $(seq 60); do
        curl -s -m 2 "http://$web:8080/" > answer.txt && grep -q '^ServiceVersion=' answer.txt && break
        sleep 0.2
      done
      """
    Then the file "/root/labcheck-bench/proxy-status.txt" should match "^web-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED"
    And the file "/root/labcheck-bench/proxy-status.txt" should match "^client-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED"
    And the file "/root/labcheck-bench/answer.txt" should match "^Hostname="
