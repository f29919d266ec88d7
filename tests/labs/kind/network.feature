@kubernetes @node
Feature: Kind: the learner's shell reaches the cluster's node and Services, and nothing on the node reaches the machine
  The learner's commands keep the cell's own network, joined to the kind node only: they reach a
  ClusterIP and a NodePort as a kind user does from the machine, not the machine's own address on
  the cell's Docker network. Nor does a learner's Pod in the node's network (`hostNetwork: true`),
  and such a Pod gets no NET_ADMIN to change the node's filter. The test listens on the machine's
  port 18080 while the lab runs, and checks nothing connected.

  Background:
    Given the lab directory "/root/labcheck-kind"

  Scenario: nginx by its ClusterIP and by the node's NodePort; the machine out of reach
    When the learner runs:
      """
      kubectl create deployment web --image=nginx
      kubectl rollout status deployment/web --timeout=120s
      kubectl expose deployment web --port=80 --type=NodePort
      node=$(kubectl get nodes -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')
      port=$(kubectl get service web -o jsonpath='{.spec.ports[0].nodePort}')
      curl -s --max-time 3 --retry 10 --retry-all-errors --retry-delay 1 "http://$node:$port/" > /root/labcheck-kind/nodeport.html
      curl -s --max-time 3 "http://${node%.*}.1:18080/" > /root/labcheck-kind/machine.txt 2>&1; echo "exit $?" >> /root/labcheck-kind/machine.txt
      """
    Then the file "/root/labcheck-kind/nodeport.html" should contain "Welcome to nginx!"
    And the file "/root/labcheck-kind/machine.txt" should contain "exit 7"
    And the output of "curl -s --max-time 2 http://$(kubectl get service web -o jsonpath='{.spec.clusterIP}')/" should contain "Welcome to nginx!" within 30 seconds

  Scenario: A Pod in the node's network does not reach the machine, and gets no NET_ADMIN
    When the learner runs:
      """
      node=$(kubectl get nodes -o jsonpath='{.items[0].status.addresses[?(@.type=="InternalIP")].address}')
      kubectl run probe --image=busybox:1.36 --restart=Never --overrides='{"spec":{"hostNetwork":true}}' --command -- sh -c "wget -T 3 -q -O- http://${node%.*}.1:18080/; echo exit \$?"
      kubectl run admin --image=busybox:1.36 --overrides='{"spec":{"hostNetwork":true,"containers":[{"name":"admin","image":"busybox:1.36","command":["sleep","3600"],"securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}]}}'
      kubectl wait --for=jsonpath='{.status.phase}'=Succeeded pod/probe --timeout=90s
      kubectl logs probe > /root/labcheck-kind/probe.log
      """
    Then the file "/root/labcheck-kind/probe.log" should contain "exit 1"
    And the output of "kubectl get events --field-selector involvedObject.name=admin -o jsonpath='{.items[*].message}'" should contain "runs without NET_ADMIN" within 60 seconds
    And the query '.status.containerStatuses[0].state | has("running")' on the cluster's "Pod" "admin" in namespace "default" should equal false
