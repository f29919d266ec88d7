@mesh
Feature: Self-test: a live mesh with running proxies interrupted
  Istio is installed and an injected Deployment runs, so its Pod's proxy (pilot-agent and Envoy)
  runs beside the ingress gateway's, and a command runs in its app container through
  `kubectl exec`; then the learner's command waits: a test ends the run with SIGTERM while the
  proxies and the exec run.

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: Install Istio, run an injected Deployment, then wait
    When the learner runs:
      """
      istioctl install -y > /root/labcheck-mesh/install.txt 2>&1
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=80
      kubectl -n shop rollout status deployment/web --timeout=60s
      kubectl -n shop exec deploy/web -- sleep 300 &
      sleep 100
      """
    Then the last command should succeed
