@mesh
Feature: Self-test: a Pod's processes that exit are started again
  Istio is installed (minimal profile: istiod only) and an injected Deployment of the echo app
  runs; once both answer (`answering.txt`), tests/cli/mesh.rs kills the Pod's echo server and
  its pilot-agent while the learner's command asks once a second. The kubelet counts a restart of
  each container (a down state is not what proves it: the kubelet may start a container again
  between two asks), both answer again, and the proxy is LIVE and SYNCED again.

  Background:
    Given the lab directory "/root/labcheck-restart"

  Scenario: Install Istio and run an injected Deployment of the echo app
    When the learner runs:
      """
      istioctl install --set profile=minimal -y > /root/labcheck-restart/install.txt 2>&1
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n shop rollout status deployment/web --timeout=60s
      """
    Then the last command should succeed

  Scenario: The app and the proxy, killed, answer again
    When the learner runs:
      """
      cd /root/labcheck-restart
      ask() {
        app=down; proxy=down
        kubectl -n shop exec deploy/web -- curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/ 2>/dev/null | grep -q 200 && app=up
        kubectl -n shop exec deploy/web -c istio-proxy -- pilot-agent request GET server_info 2>/dev/null | grep -q '"state": "LIVE"' && proxy=up
      }
      for i in $(seq 60); do ask; [ "$app $proxy" = "up up" ] && break; sleep 1; done
      # Both answer: the test kills them once it sees this file.
      echo "$app $proxy" > answering.txt
      # Each container's restarts, as the kubelet counts them (the proxy is a native sidecar).
      restarts() {
        kubectl -n shop get pods -l app=web -o jsonpath='{range .items[*].status.containerStatuses[*]}{.name}={.restartCount} {end}{range .items[*].status.initContainerStatuses[*]}{.name}={.restartCount} {end}'
      }
      for i in $(seq 120); do
        restarts > restarts.txt
        ask
        echo "$app $proxy" > states.txt
        grep -Eq '(^| )app=[1-9]' restarts.txt && grep -Eq '(^| )istio-proxy=[1-9]' restarts.txt && [ "$app $proxy" = "up up" ] && break
        sleep 1
      done
      for i in $(seq 30); do
        istioctl proxy-status -v 1 > proxy-status.txt 2>&1
        grep -Eq '^web-.*\.shop .*SYNCED.*SYNCED.*SYNCED' proxy-status.txt && break
        sleep 1
      done
      """
    Then the last command should succeed
    And the file "/root/labcheck-restart/answering.txt" should match "^up up$"
    # The kubelet started each container again, and both answer.
    And the file "/root/labcheck-restart/restarts.txt" should match "(^| )app=[1-9]"
    And the file "/root/labcheck-restart/restarts.txt" should match "(^| )istio-proxy=[1-9]"
    And the file "/root/labcheck-restart/states.txt" should match "^up up$"
    And the file "/root/labcheck-restart/proxy-status.txt" should match "^web-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED"
