@mesh
Feature: Self-test: sidecars that run
  Istio is installed with an unmodified `istioctl install -y`: istiod and the ingress gateway run
  as Pods of the cell's node, from the images labcheck builds for the cell's Istio version. A
  Deployment of Istio's echo image in a namespace labelled for injection runs with the injector's
  `istio-init` (Istio's iptables rules, in the Pod) and `istio-proxy` (pilot-agent and upstream
  Envoy), so `istioctl proxy-status` lists it SYNCED, and `istioctl proxy-config` reads that
  Envoy's admin through the kubelet's port-forwarding: the clusters of a DestinationRule's
  subsets, a VirtualService's 90/10 weights, the Pod's endpoint. An nginx Pod beside it runs
  too, without a sidecar once its namespace is not labelled.

  Background:
    Given the lab directory "/root/labcheck-mesh"

  Scenario: Install Istio with istioctl
    When the learner runs:
      """
      istioctl install -y > /root/labcheck-mesh/install.txt 2>&1
      """
    Then the last command should succeed
    And the query '.items[] | select(.metadata.namespace == "istio-system" and .status.phase == "Running") | .metadata.labels.app' over the cluster's "pods" should include "istiod" within 60 seconds

  Scenario: A Deployment of the echo image runs with its sidecar, and nginx without one
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl label namespace shop istio-injection=enabled
      kubectl -n shop create deployment web --image=gcr.io/istio-testing/app:latest --port=8080 -- /usr/local/bin/server --port=8080 --version=v1
      kubectl -n shop expose deployment web --port=80 --target-port=8080 --name=web
      kubectl -n shop rollout status deployment/web --timeout=90s
      kubectl create namespace plain
      kubectl -n plain run nginx --image=nginx
      kubectl -n plain wait pod/nginx --for=condition=Ready --timeout=60s
      """
    Then the last command should succeed
    And the query '.items[] | select(.metadata.namespace == "shop" and .status.phase == "Running") | ((.spec.initContainers // []) + .spec.containers)[] | .name' over the cluster's "pods" should include "istio-init", "istio-proxy"
    # istio-init ran Istio's iptables rules in the Pod and ended well.
    And the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.labels.app == "web") | .status.initContainerStatuses[] | select(.name == "istio-init") | .state.terminated.exitCode]' over the cluster's "pods" should equal [0]
    And the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.labels.app == "web") | .status.containerStatuses[] | select(.name == "app") | [.ready, (.state | keys[0])]]' over the cluster's "pods" should equal [[true, "running"]]
    And the query '[.items[] | select(.metadata.namespace == "plain" and .metadata.name == "nginx") | .status.containerStatuses[] | [.name, .ready]]' over the cluster's "pods" should equal [["nginx", true]]
    And the output of "kubectl -n shop logs deploy/web -c istio-init" should contain "iptables"

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

  Scenario: istioctl proxy-config reads the Pod's Envoy through the API server's port-forward
    When the learner runs:
      """
      kubectl apply -f - <<'YAML'
      apiVersion: networking.istio.io/v1
      kind: DestinationRule
      metadata: {name: web, namespace: shop}
      spec:
        host: web
        subsets:
        - {name: v1, labels: {version: v1}}
        - {name: v2, labels: {version: v2}}
      ---
      apiVersion: networking.istio.io/v1
      kind: VirtualService
      metadata: {name: web, namespace: shop}
      spec:
        hosts: [web]
        http:
        - route:
          - {destination: {host: web, subset: v1}, weight: 90}
          - {destination: {host: web, subset: v2}, weight: 10}
      YAML
      cd /root/labcheck-mesh
      for i in $(seq 60); do
        istioctl proxy-config routes deploy/web -n shop -o json > routes.json && grep -q '"weight": 90' routes.json && break
        sleep 1
      done
      istioctl proxy-config cluster deploy/web -n shop -o json > clusters.json
      istioctl proxy-config endpoint deploy/web -n shop --cluster 'outbound|80||web.shop.svc.cluster.local' -o json > endpoints.json
      istioctl proxy-config listener "$(kubectl get pod -n shop -l app=web -o name)" -n shop -o json > listeners.json
      """
    Then the last command should succeed
    And the query '[.[].name]' on "/root/labcheck-mesh/clusters.json" should include "outbound|80||web.shop.svc.cluster.local", "outbound|80|v1|web.shop.svc.cluster.local", "outbound|80|v2|web.shop.svc.cluster.local"
    And the query '[.[] | select(.name == "80") | .virtualHosts[] | select(.name == "web.shop.svc.cluster.local:80") | .routes[0].route.weightedClusters.clusters[] | .weight]' on "/root/labcheck-mesh/routes.json" should equal [90, 10]
    And the query '[.[].hostStatuses[].address.socketAddress.address]' on "/root/labcheck-mesh/endpoints.json" should equal the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.labels.app == "web") | .status.podIP]' over the cluster's "pods"
    And the query '[.[].name]' on "/root/labcheck-mesh/listeners.json" should include "virtualOutbound", "virtualInbound", "0.0.0.0_80"
