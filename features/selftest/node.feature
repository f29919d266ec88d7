@kubernetes @node
Feature: Self-test: a real node runs what a Kubernetes course does
  The first commands of most Kubernetes courses, unchanged: the cell's first Pod looks up a
  Service's name, a Deployment of nginx becomes ready, its log, a command in its container and
  its exit code, a Service reached by name from another Pod and by its ClusterIP from the
  learner's shell, and a NodePort at the node's address. The mistakes expose the Deployment on a
  port nothing listens on, and name the Service wrongly.

  Background:
    Given the lab directory "/root/labcheck-node"

  Scenario: The cell's first Pod resolves a Service's name
    When the learner runs:
      """
      kubectl run lookup --image=busybox:1.36 --restart=Never -- nslookup -type=a kubernetes.default.svc.cluster.local
      kubectl wait --for=jsonpath='{.status.phase}'=Succeeded pod/lookup --timeout=60s
      kubectl logs lookup > /root/labcheck-node/lookup.txt
      """
    Then the last command should succeed
    And the file "/root/labcheck-node/lookup.txt" should match "^Name:\s+kubernetes\.default\.svc\.cluster\.local$"
    And the file "/root/labcheck-node/lookup.txt" should match "^Address:\s+10\.0\.0\.1$"

  Scenario: A Deployment of nginx becomes ready and serves
    When the learner runs:
      """
      kubectl create deployment web --image=nginx
      kubectl rollout status deployment/web --timeout=120s
      kubectl expose deployment web --port=80
      """
    Then the last command should succeed
    And the query '.status.readyReplicas' on the cluster's "Deployment" "web" in namespace "default" should equal 1
    And the output of "curl -s --max-time 2 http://$(kubectl get service web -o jsonpath='{.spec.clusterIP}')/" should contain "Welcome to nginx!" within 30 seconds

  @mistake
  Scenario: The Service on a port nothing listens on
    When the learner runs:
      """
      kubectl create deployment web --image=nginx
      kubectl rollout status deployment/web --timeout=120s
      kubectl expose deployment web --port=80 --target-port=8080
      """
    Then these checks should reject it:
      """
      the output of "curl -s --max-time 2 http://$(kubectl get service web -o jsonpath='{.spec.clusterIP}')/" should contain "Welcome to nginx!" within 30 seconds
      """

  Scenario: Its log, a command in its container and that command's exit code
    When the learner runs:
      """
      kubectl logs deployment/web > /root/labcheck-node/web.log
      kubectl exec deployment/web -- sh -c 'exit 3'
      """
    Then the last command should exit with 3
    And its output should contain "command terminated with exit code 3"
    And the file "/root/labcheck-node/web.log" should contain "GET / HTTP/1.1"

  Scenario: Another Pod reaches the Service by its name
    When the learner runs:
      """
      kubectl run client --image=curlimages/curl:8.16.0 --restart=Never --command -- sleep 3600
      kubectl wait --for=condition=Ready pod/client --timeout=120s
      kubectl exec client -- curl -s --max-time 2 --retry 10 --retry-all-errors --retry-delay 1 http://web.default/ > /root/labcheck-node/by-name.html
      """
    Then the file "/root/labcheck-node/by-name.html" should contain "Welcome to nginx!"
    And the output of "kubectl exec client -- cat /etc/resolv.conf" should contain "nameserver 10.0.0.10"

  @mistake
  Scenario: A name nothing resolves
    When the learner runs:
      """
      kubectl run client --image=curlimages/curl:8.16.0 --restart=Never --command -- sleep 3600
      kubectl wait --for=condition=Ready pod/client --timeout=120s
      kubectl exec client -- curl -s --max-time 2 http://webb.default/ > /root/labcheck-node/by-name.html
      """
    Then these checks should reject it:
      """
      the file "/root/labcheck-node/by-name.html" should contain "Welcome to nginx!"
      """

  Scenario: The Deployment on a NodePort, reached at the node's address from the shell
    When the learner runs:
      """
      kubectl expose deployment web --name=web-np --type=NodePort --port=80
      NODE_IP=$(kubectl get nodes -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')
      NODE_PORT=$(kubectl get service web-np -o jsonpath='{.spec.ports[0].nodePort}')
      curl -s --max-time 2 --retry 10 --retry-all-errors --retry-delay 1 "http://$NODE_IP:$NODE_PORT/" > /root/labcheck-node/node-port.html
      """
    Then the file "/root/labcheck-node/node-port.html" should contain "Welcome to nginx!"
    And the query '.spec.type' on the cluster's "Service" "web-np" in namespace "default" should equal "NodePort"
