Feature: Broken: a mistake named by a check whose jq does not compile

  Scenario: Write the settings
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      echo '{"mode": "strict"}' > /root/labcheck-broken/settings.json
      """
    Then the query '.mode |' on "/root/labcheck-broken/settings.json" should equal "strict"

  @mistake
  Scenario: The wrong mode
    When the learner runs:
      """
      mkdir -p /root/labcheck-broken
      echo '{"mode": "lax"}' > /root/labcheck-broken/settings.json
      """
    Then these checks should reject it:
      """
      the query '.mode |' on "/root/labcheck-broken/settings.json" should equal "strict"
      """
