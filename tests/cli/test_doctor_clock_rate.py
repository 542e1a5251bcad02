"""doctor's clock-rate judgement (docs/cli.md, ``quorumlock doctor``): a server whose clock
runs faster or slower than the others' median by more than the drift allowance (1 %)
fails, by more than a quarter of it warns, and the uncertainty of the readings (half
round trips) is not held against it. No real server can be made to run a fast clock,
so the readings are given to the judge directly."""

from __future__ import annotations

import pytest
import redis

from quorumlock.cli._doctor import _judge_clocks, _Probe


def probe(label: str, rate: float, half_rtt: float = 0.0) -> _Probe:
    """A server whose clock advanced ``rate`` seconds per second over a 10 s sample."""
    found = _Probe(label, redis.Redis())  # never connects: the readings are given
    found.clock = [(100.0, 5000.0, half_rtt), (110.0, 5000.0 + 10.0 * rate, half_rtt)]
    return found


@pytest.mark.parametrize(
    ("rate", "result"),
    [
        (1.0, "pass"),
        (1.0 + 0.002, "pass"),  # 0.2 %: under a quarter of the allowance
        (1.0 + 0.004, "warn"),  # 0.4 %: over a quarter
        (1.0 + 0.009, "warn"),
        (1.0 + 0.011, "fail"),  # 1.1 %: over the allowance
        (1.0 - 0.02, "fail"),  # slow counts as much as fast
    ],
)
def test_a_clock_off_the_median_warns_then_fails(rate: float, result: str) -> None:
    checks = _judge_clocks([probe("a", 1.0), probe("b", 1.0), probe("odd", rate)])
    verdicts = {check.server: check.result for check in checks}
    assert verdicts == {"a": "pass", "b": "pass", "odd": result}
    (odd,) = [check for check in checks if check.server == "odd"]
    assert "vs the servers' median" in odd.detail


def test_the_uncertainty_of_the_readings_is_not_held_against_a_server() -> None:
    """1.5 % off, but each reading is uncertain by 50 ms over 10 s (1 % in all): only
    0.5 % is beyond doubt, a warning, not a failure."""
    checks = _judge_clocks([probe("a", 1.0), probe("b", 1.0), probe("odd", 1.015, 0.05)])
    assert {check.server: check.result for check in checks}["odd"] == "warn"


def test_the_uncertainty_of_the_median_is_not_held_against_a_server() -> None:
    """Two servers whose replies were slow (50 ms each way over 10 s: 1 % uncertain),
    one of them the median, and a third read precisely, 0.5 % off that median: all of it
    within the median's own doubt. On a loaded machine this warned of a sound clock."""
    checks = _judge_clocks(
        [probe("slow", 0.99, 0.05), probe("median", 1.0, 0.05), probe("precise", 1.005)]
    )
    assert {check.server: check.result for check in checks} == {
        "slow": "pass",
        "median": "pass",
        "precise": "pass",
    }


def test_a_clock_off_every_range_still_fails() -> None:
    """The median's doubt is not a blank cheque: 3 % off, with the others 1 % uncertain,
    is 2 % beyond any doubt."""
    checks = _judge_clocks([probe("a", 1.0, 0.05), probe("b", 1.0, 0.05), probe("fast", 1.03)])
    assert {check.server: check.result for check in checks}["fast"] == "fail"
