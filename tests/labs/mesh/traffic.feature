@mesh
Feature: Self-test: from one injected Pod of the echo app, kubectl exec sends a request through both sidecars
  Istio is installed with `istioctl install -y`; in a namespace labelled for injection, a
  Deployment `web` of Istio's echo app behind a Service, and a Deployment `client` of the same
  app. Each Pod runs `istio-init`'s capture, its proxy and its echo server; both proxies are
  SYNCED and the client's Envoy knows the web Pod as the Service's endpoint. `kubectl exec` into
  the client Pod runs the echo image's `client` there: its request to the Service's ClusterIP goes
  through both Envoys. What `kubectl exec` runs is a command in the container: it writes in the
  container's own files (tests/cli/mesh.rs finds nothing on the host), it cannot change the
  Pod's network or its traffic capture, and kubectl exits with the command's code.

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

  Scenario: kubectl exec into the client Pod sends a request through both sidecars, as a learner's command
    When the learner runs:
      """
      cd /root/labcheck-traffic
      IP=$(kubectl -n shop get service web -o jsonpath='{.spec.clusterIP}')
      kubectl -n shop exec deploy/client -- client --timeout 5s http://$IP:80/through-the-mesh > answer.txt 2>&1
      kubectl -n shop exec deploy/client -c istio-proxy -- pilot-agent request GET clusters > clusters.txt
      kubectl -n shop exec deploy/client -- sh -c 'ip -4 -o addr show eth0 | grep -o "inet [0-9.]*" | cut -d" " -f2' > pod-ip.txt
      kubectl -n shop exec deploy/client -- sh -c 'mkdir -p /root/labcheck-traffic && echo "$HOSTNAME" > /root/labcheck-traffic/from-the-pod.txt'
      kubectl -n shop exec deploy/client -- cat /root/labcheck-traffic/from-the-pod.txt > from-the-pod.txt
      kubectl -n shop exec deploy/client -- sh -c 'exit 3' > exit.txt 2>&1; echo "exit=$?" >> exit.txt
      kubectl -n shop exec deploy/client -c istio-proxy -- iptables -t nat -F > flush.txt 2>&1 || true
      kubectl -n shop exec deploy/client -- ip link add probe0 type dummy > link.txt 2>&1 || true
      kubectl -n shop exec deploy/client -- no-such-command > missing.txt 2>&1 || true
      """
    Then the last command should succeed
    And the file "/root/labcheck-traffic/answer.txt" should contain "StatusCode=200"
    And the file "/root/labcheck-traffic/answer.txt" should contain "ResponseHeader=Server:envoy"
    And the file "/root/labcheck-traffic/answer.txt" should contain "ResponseHeader=X-Envoy-Upstream-Service-Time:"
    And the file "/root/labcheck-traffic/answer.txt" should contain "[0 body] IP=127.0.0.6"
    And the file "/root/labcheck-traffic/answer.txt" should contain "URL=/through-the-mesh"
    And the file "/root/labcheck-traffic/clusters.txt" should match "^outbound\|80\|\|web\.shop\.svc\.cluster\.local::[0-9.:]+::rq_success::[1-9]"
    And the file "/root/labcheck-traffic/pod-ip.txt" should contain every line of the output of "kubectl -n shop get pod -l app=client -o jsonpath='{.items[0].status.podIP}'"
    And the file "/root/labcheck-traffic/from-the-pod.txt" should contain every line of the output of "kubectl -n shop get pod -l app=client -o jsonpath='{.items[0].metadata.name}'"
    And the file "/root/labcheck-traffic/flush.txt" should contain "Permission denied"
    And the file "/root/labcheck-traffic/link.txt" should contain "Operation not permitted"
    And the file "/root/labcheck-traffic/missing.txt" should contain "executable file not found in $PATH"
    And the file "/root/labcheck-traffic/exit.txt" should contain "command terminated with exit code 3"
    And the file "/root/labcheck-traffic/exit.txt" should contain "exit=3"
