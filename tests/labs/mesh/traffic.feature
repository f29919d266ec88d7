@mesh
Feature: Self-test: two injected Pods of the echo app, ready for a request through both sidecars
  Istio is installed with `istioctl install -y`; in a namespace labelled for injection, a
  Deployment `web` of Istio's echo app behind a Service, and a Deployment `client` of the same
  app. The cell runs each Pod's traffic capture, proxy and echo server; both proxies are SYNCED
  and the client's Envoy knows the web Pod as the Service's endpoint. tests/cli/mesh.rs keeps
  the cell and sends a request from the client Pod's app to the Service, through both Envoys.

  Background:
    Given the lab directory "/root/labcheck-traffic"

  Scenario: Install Istio and run two injected Deployments of the echo app
    When the learner runs:
      """
      istioctl install -y > /root/labcheck-traffic/install.txt 2>&1
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=8080
      kubectl -n shop expose deployment web --port=80 --target-port=8080 --name=web
      kubectl -n shop create deployment client --image=gcr.io/istio-testing/app:latest
      kubectl -n shop rollout status deployment/web --timeout=60s
      kubectl -n shop rollout status deployment/client --timeout=60s
      """
    Then the last command should succeed
    And the query '[.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | .status.containerStatuses[] | select(.name == "app") | .ready] | length' over the cluster's "pods" should equal 2

  Scenario: Both proxies are SYNCED and the client's Envoy has the web Pod as the Service's endpoint
    When the learner runs:
      """
      cd /root/labcheck-traffic
      for i in $(seq 60); do
        istioctl proxy-status -v 1 > proxy-status.txt 2>&1
        [ "$(grep -Ec '^(web|client)-.*\.shop .*SYNCED.*SYNCED.*SYNCED' proxy-status.txt)" = 2 ] && break
        sleep 1
      done
      istioctl proxy-config endpoint deploy/client -n shop --cluster 'outbound|80||web.shop.svc.cluster.local' -o json > endpoints.json
      """
    Then the last command should succeed
    And the file "/root/labcheck-traffic/proxy-status.txt" should match "web-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED"
    And the file "/root/labcheck-traffic/proxy-status.txt" should match "client-[a-z0-9]+-[a-z0-9]+\.shop +Kubernetes +SYNCED"
    And the query '[.[].hostStatuses[].address.socketAddress | "\(.address):\(.portValue)"]' on "/root/labcheck-traffic/endpoints.json" should equal the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.labels.app == "web") | "\(.status.podIP):8080"]' over the cluster's "pods"
