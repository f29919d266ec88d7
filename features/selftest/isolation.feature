@kubernetes @local
Feature: Self-test: a local cell sends nothing off the machine
  The cell's etcd, API server and learner commands live in a network namespace of their own with
  only loopback: no other interface, no route. Read from /proc, so no packet is sent to find out.
  Tagged @local: it is the local backend's own property (a kind cell's learner has one more
  interface, its link to the kind node, and routes to the node's ranges through it).

  Background:
    Given the lab directory "/root/labcheck-net"

  Scenario: Look at the cell's network
    When the learner runs:
      """
      tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' > /root/labcheck-net/interfaces.txt
      tail -n +2 /proc/net/route > /root/labcheck-net/routes.txt
      tail -n +2 /proc/net/ipv6_route > /root/labcheck-net/routes6.txt 2>/dev/null || true
      kubectl get --raw /readyz > /root/labcheck-net/readyz.txt
      """
    Then the file "/root/labcheck-net/interfaces.txt" should have exactly 1 line
    And the file "/root/labcheck-net/interfaces.txt" should contain "lo"
    And the file "/root/labcheck-net/routes.txt" should have exactly 0 lines
    And the file "/root/labcheck-net/routes6.txt" should not contain "eth"
    And the file "/root/labcheck-net/readyz.txt" should contain "ok"
    And the cluster should have a "Namespace" named "default"
