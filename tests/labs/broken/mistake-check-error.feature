Feature: Broken: a mistake whose named check cannot be evaluated
  A jq runtime error in the check a mistake names is a harness error, never a rejection.

  Scenario: Write the settings
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      echo '{"settings": {"mode": "strict"}}' > /root/labcheck-broken/settings.json
      """
    Then the query '.settings | keys' on "/root/labcheck-broken/settings.json" should include "mode"

  @mistake
  Scenario: Settings written as a string
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      echo '{"settings": "mode=strict"}' > /root/labcheck-broken/settings.json
      """
    Then these checks should reject it:
      """
      the query '.settings | keys' on "/root/labcheck-broken/settings.json" should include "mode"
      """
