@mesh
Feature: Self-test: the image table's sample images run Istio's own samples unchanged
  Istio's samples of the cell's version, applied as an unpacked release has them, on the images
  the table builds: helloworld v1 and v2 answer with their version through their Service's
  ClusterIP, httpbin answers, fortio loads it from its Pod, and tcp-echo echoes a line with its
  prefix through its Service. No Istio is installed: the images are what this lab proves. A
  Service answers once kube-proxy has its endpoints, a moment after the rollout, so its checks
  ask again for up to 30 s. The mistake applies helloworld's v1 alone.

  Background:
    Given the lab directory "/root/samples"
    And Istio's release is unpacked at "/root/istio"

  Scenario: helloworld v1 and v2, httpbin, fortio and tcp-echo run from the release's samples
    When the learner runs:
      """
      kubectl apply -f /root/istio/samples/helloworld/helloworld.yaml
      kubectl apply -f /root/istio/samples/httpbin/httpbin.yaml
      kubectl apply -f /root/istio/samples/httpbin/sample-client/fortio-deploy.yaml
      kubectl apply -f /root/istio/samples/tcp-echo/tcp-echo.yaml
      for d in helloworld-v1 helloworld-v2 httpbin fortio-deploy tcp-echo; do
        kubectl rollout status deployment/$d --timeout=120s
      done
      """
    Then the last command should succeed
    And the output of "for i in $(seq 20); do curl -s --max-time 2 http://$(kubectl get service helloworld -o jsonpath='{.spec.clusterIP}'):5000/hello; done" should contain "Hello version: v1, instance: helloworld-v1-" within 30 seconds
    # check: v2-answers
    And the output of "for i in $(seq 20); do curl -s --max-time 2 http://$(kubectl get service helloworld -o jsonpath='{.spec.clusterIP}'):5000/hello; done" should contain "Hello version: v2, instance: helloworld-v2-" within 30 seconds
    And the output of "kubectl exec deploy/fortio-deploy -- fortio load -c 2 -qps 0 -n 10 -loglevel Warning http://httpbin:8000/get 2>&1" should contain "Code 200 : 10 (100.0 %)" within 30 seconds
    And the output of "exec 3<>/dev/tcp/$(kubectl get service tcp-echo -o jsonpath='{.spec.clusterIP}')/9001 && echo world >&3 && timeout 5 head -n 1 <&3" should contain "hello world" within 30 seconds

  @mistake
  Scenario: Only helloworld's v1
    When the learner runs:
      """
      kubectl apply -f /root/istio/samples/helloworld/helloworld.yaml -l version=v1
      kubectl apply -f /root/istio/samples/helloworld/helloworld.yaml -l service=helloworld
      kubectl apply -f /root/istio/samples/httpbin/httpbin.yaml
      kubectl apply -f /root/istio/samples/httpbin/sample-client/fortio-deploy.yaml
      kubectl apply -f /root/istio/samples/tcp-echo/tcp-echo.yaml
      for d in helloworld-v1 httpbin fortio-deploy tcp-echo; do
        kubectl rollout status deployment/$d --timeout=120s
      done
      """
    Then these checks should reject it:
      """
      check "v2-answers"
      """
