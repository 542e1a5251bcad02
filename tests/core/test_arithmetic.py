"""The Redlock arithmetic: pure, no servers, exhaustive where it can be."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock._algorithm.arithmetic import (
    DRIFT_FLOOR,
    QUEUE_BACKOFF_MAX,
    QUEUE_LEASE_MIN_MS,
    deadline,
    default_instance_timeout,
    drift,
    queue_lease_ms,
    quorum,
    retry_delay,
    validity,
    wake_stagger,
)

ttls_ms = st.integers(min_value=1, max_value=10**9)
factors = st.floats(min_value=0.0, max_value=0.99)
times = st.floats(min_value=0.0, max_value=1e7, allow_nan=False)
elapsed = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4), (8, 5), (9, 5)],
)
def test_quorum_is_a_strict_majority(n: int, expected: int) -> None:
    assert quorum(n) == expected


@given(st.integers(min_value=1, max_value=10_000))
def test_two_quorums_always_intersect(n: int) -> None:
    # Mutual exclusion rests on this: two majorities of the same N share a server.
    q = quorum(n)
    assert 2 * q > n
    assert 2 * (q - 1) <= n  # and it is the smallest such number


@pytest.mark.parametrize("n", [0, -1])
def test_quorum_of_no_server_is_an_error(n: int) -> None:
    with pytest.raises(ValueError, match="at least one"):
        quorum(n)


def test_spec_example_values() -> None:
    # drift = ttl * 0.01 + 2 ms; a 10 s ttl acquired in 6 ms holds 9.892 s.
    assert drift(10_000, 0.01) == pytest.approx(0.102)
    assert validity(10_000, 0.006, 0.01) == pytest.approx(9.892)
    assert deadline(100.0, 10_000, 0.01) == pytest.approx(109.898)


def test_regression_drift_is_subtracted_not_added() -> None:
    # A Redlock port once added the drift to the validity, overstating how long the
    # lock holds. The validity must be strictly below ttl - elapsed.
    assert validity(10_000, 0.0, 0.01) < 10.0
    assert validity(10_000, 0.0, 0.01) == pytest.approx(10.0 - 0.102)


def test_regression_drift_floor_counted_once() -> None:
    # A stray extra +2 ms (the floor added twice, or to the elapsed time as well).
    assert drift(1000, 0.0) == DRIFT_FLOOR == 0.002
    assert validity(1000, 0.0, 0.0) == pytest.approx(0.998)


@given(ttls_ms, elapsed, factors)
def test_validity_formula(ttl_ms: int, spent: float, factor: float) -> None:
    expected = ttl_ms / 1000 - spent - (ttl_ms / 1000 * factor + 0.002)
    assert math.isclose(validity(ttl_ms, spent, factor), expected, abs_tol=1e-9)


@given(times, elapsed, ttls_ms, factors)
def test_deadline_is_end_plus_validity_whatever_the_elapsed_time(
    start: float, spent: float, ttl_ms: int, factor: float
) -> None:
    end = start + spent
    assert math.isclose(
        deadline(start, ttl_ms, factor),
        end + validity(ttl_ms, spent, factor),
        rel_tol=1e-12,
        abs_tol=1e-6,
    )


@given(times, ttls_ms, factors)
def test_regression_deadline_depends_only_on_monotonic_inputs(
    start: float, ttl_ms: int, factor: float
) -> None:
    # Validity computed with the wall clock broke when NTP stepped the clock. Here the
    # deadline is a pure function of the monotonic start time: shifting the start
    # shifts the deadline by exactly as much.
    shifted = deadline(start + 1000.0, ttl_ms, factor) - deadline(start, ttl_ms, factor)
    assert math.isclose(shifted, 1000.0, rel_tol=1e-9, abs_tol=1e-6)


@given(ttls_ms, factors, st.floats(min_value=0.0, max_value=1e4))
def test_validity_decreases_with_elapsed_time_and_drift(
    ttl_ms: int, factor: float, spent: float
) -> None:
    assert validity(ttl_ms, spent, factor) <= validity(ttl_ms, 0.0, factor)
    assert validity(ttl_ms, spent, factor) <= validity(ttl_ms, spent, 0.0)
    assert validity(ttl_ms, spent, factor) < ttl_ms / 1000


@given(ttls_ms)
def test_default_instance_timeout_is_small_against_the_ttl(ttl_ms: int) -> None:
    timeout = default_instance_timeout(ttl_ms)
    assert 0.020 <= timeout <= 0.250
    if ttl_ms >= 4000:  # R6: small compared with the ttl
        assert timeout <= ttl_ms / 1000 * 0.005 + 1e-12


def test_default_instance_timeout_examples() -> None:
    assert default_instance_timeout(10_000) == pytest.approx(0.050)  # "tens of ms"
    assert default_instance_timeout(1_000) == pytest.approx(0.020)
    assert default_instance_timeout(600_000) == pytest.approx(0.250)


@given(st.floats(min_value=1e-6, max_value=1e4), st.floats(min_value=0.0, max_value=1.0))
def test_retry_delay_is_within_half_and_full_base(base: float, u: float) -> None:
    delay = retry_delay(base, u)
    assert base / 2 - 1e-12 <= delay <= base + 1e-12


def test_retry_delay_spreads_over_its_range() -> None:
    assert retry_delay(0.2, 0.0) == pytest.approx(0.1)
    assert retry_delay(0.2, 0.5) == pytest.approx(0.15)
    assert retry_delay(0.2, 1.0) == pytest.approx(0.2)


@pytest.mark.parametrize("u", [-0.1, 1.1, math.nan])
def test_retry_delay_rejects_a_bad_random_draw(u: float) -> None:
    with pytest.raises(ValueError, match="uniform"):
        retry_delay(0.2, u)


@given(
    st.floats(min_value=0.0, max_value=10.0, allow_nan=False),
    st.integers(min_value=0, max_value=50),
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(min_value=0.001, max_value=100.0),
)
def test_wake_stagger_is_uniform_over_a_spread_that_doubles_with_misses_up_to_the_ceiling(
    round_seconds: float, misses: int, uniform: float, ceiling: float
) -> None:
    base = max(0.001, 2 * round_seconds)
    spread = base
    for _ in range(misses):
        if spread >= ceiling:
            break
        spread *= 2
    spread = min(spread, ceiling)
    assert wake_stagger(round_seconds, misses, uniform, ceiling) == pytest.approx(spread * uniform)
    assert wake_stagger(round_seconds, misses, uniform, ceiling) <= max(ceiling, 0.001)


def test_wake_stagger_examples() -> None:
    assert wake_stagger(0.0002, 0, 1.0, 0.2) == pytest.approx(0.001)  # fast rounds: 1 ms
    assert wake_stagger(0.004, 0, 0.5, 0.2) == pytest.approx(0.004)
    assert wake_stagger(0.004, 2, 0.5, 0.2) == pytest.approx(0.016)
    assert wake_stagger(0.004, 9, 1.0, 0.2) == pytest.approx(0.2)  # never beyond retry_delay
    assert wake_stagger(0.004, 3, 1.0, 10.0) == pytest.approx(0.064)


@pytest.mark.parametrize(("misses", "uniform"), [(-1, 0.5), (0, 1.5), (0, -0.1)])
def test_wake_stagger_rejects_bad_draws(misses: int, uniform: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        wake_stagger(0.001, misses, uniform, 0.2)


def test_queue_lease_examples() -> None:
    """Six R8 pauses, at least a second. Catches a lease cut to the minimum (``min`` for
    ``max``) or counted in other units."""
    assert queue_lease_ms(0.2) == 1200  # the default retry_delay
    assert queue_lease_ms(1.0) == 6000
    assert queue_lease_ms(0.1) == 1000
    assert queue_lease_ms(0.0) == QUEUE_LEASE_MIN_MS


@given(st.floats(min_value=0.0, max_value=600.0))
def test_a_queue_lease_outlasts_a_live_waiters_longest_gap(retry_delay_s: float) -> None:
    """A live waiter far back in line polls every QUEUE_BACKOFF_MAX pauses at most; its
    entry must outlive that gap with room for a round and a stagger (three more pauses),
    and a dead one's must not stay much longer."""
    lease_ms = queue_lease_ms(retry_delay_s)
    pauses_ms = (QUEUE_BACKOFF_MAX + 3) * retry_delay_s * 1000
    assert lease_ms >= QUEUE_LEASE_MIN_MS
    assert lease_ms >= pauses_ms - 0.5
    assert lease_ms <= max(QUEUE_LEASE_MIN_MS, pauses_ms + 0.5)
