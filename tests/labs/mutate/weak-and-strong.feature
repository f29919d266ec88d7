Feature: Mutation self-test: one weak check, one strong check
  The learner writes a small manifest. The replica count is graded weakly (any number passes),
  the name strongly (it must be the one the task names): `labcheck mutate` reports the replica
  mutants as missed and the name mutants as caught.

  Background:
    Given the lab directory "/root/labcheck-mutate"
    And the fixture "fixtures/selftest" is placed at "/opt/lab/fixtures/selftest"

  Scenario: Write the manifest
    When the learner runs:
      """
      cat > /root/labcheck-mutate/app.yaml <<'EOF'
      name: shop
      replicas: 3
      EOF
      """
    Then the file "/root/labcheck-mutate/app.yaml" should match "replicas: \d+"
    And the query ".name" on "/root/labcheck-mutate/app.yaml" should equal "shop"
