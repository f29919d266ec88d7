Feature: A retried step settles only on checks that pass twice in a row
  The grader's command answers "ok" on its first evaluation, not on its second and third, and
  "ok" again from the fourth on: as a proxy that took a new policy answers one request on a new
  connection and the next on one it accepted before. The first try's one passing evaluation does
  not end the tries; the third try's two do, and the step's own check then passes too.

  Background:
    Given the lab directory "/root/flicker"

  @no-discrimination
  Scenario: Try until the grader's answer holds
    When the learner runs, until the checks pass or 20 seconds are up:
      """
      echo try
      """
    Then the output of "n=$(( $(cat /root/flicker/asked 2>/dev/null || echo 0) + 1 )); echo $n > /root/flicker/asked; if [ $n -eq 1 ] || [ $n -ge 4 ]; then echo ok; else echo not yet; fi" should contain "ok"
