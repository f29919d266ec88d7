@kubernetes
Feature: Self-test: queries on one named object, and one query over the cluster against another
  The learner makes a namespace with a label, a ConfigMap that names a port and a Service on that
  port. The checks read one object by its kind, namespace and name, and compare the Service's
  port with the ConfigMap's over the cluster. The mistake makes no ConfigMap (a named object that is not there fails its
  check), no label, and puts the Service on another port.

  Scenario: A namespace, its settings and its Service
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl label namespace shop team=web
      kubectl -n shop create configmap settings --from-literal=port=8080
      kubectl -n shop create service clusterip web --tcp=8080:8080
      """
    # check: settings-port
    Then the query '.data.port' on the cluster's "ConfigMap" "settings" in namespace "shop" should equal "8080"
    And the query '.metadata.labels.team' on the cluster's "Namespace" "shop" should equal "web"
    # check: service-on-the-settings-port
    And the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.name == "web") | .spec.ports[0].port | tostring]' over the cluster's "services" should equal the query '[.items[] | select(.metadata.namespace == "shop" and .metadata.name == "settings") | .data.port]' over the cluster's "configmaps"

  @mistake
  Scenario: No settings, no label, and the Service on another port
    When the learner runs:
      """
      kubectl create namespace shop
      kubectl -n shop create service clusterip web --tcp=8081:8080
      """
    Then these checks should reject it:
      """
      check "settings-port"
      check "service-on-the-settings-port"
      the query '.metadata.labels.team' on the cluster's "Namespace" "shop" should equal "web"
      """
