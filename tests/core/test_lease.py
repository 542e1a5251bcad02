"""The lease schedule: pure, no servers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import ConfigurationError
from quorumlock._algorithm.arithmetic import deadline, drift
from quorumlock._algorithm.lease import LeasePolicy, Plan, bound_reached, plan

FACTOR = 0.01


def policy(**options: object) -> LeasePolicy:
    options.setdefault("auto_extend", True)
    options.setdefault("max_extensions", None)
    options.setdefault("max_hold", None)
    return LeasePolicy.build(**options)  # type: ignore[arg-type]


def test_auto_extend_needs_a_bound() -> None:
    with pytest.raises(ConfigurationError, match="bound"):
        policy()
    assert policy(max_hold=math.inf).max_hold == math.inf
    assert policy(max_extensions=3).max_extensions == 3
    assert not LeasePolicy.build(auto_extend=False, max_extensions=None, max_hold=None).auto_extend


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"max_extensions": -1}, ConfigurationError),
        ({"max_extensions": 1.5}, TypeError),
        ({"max_hold": 0}, ConfigurationError),
        ({"max_hold": -math.inf}, ConfigurationError),
        ({"auto_extend": 1, "max_hold": 5}, TypeError),
    ],
)
def test_bad_lease_options(options: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        policy(**options)


def test_without_auto_extend_the_plan_watches_the_deadline() -> None:
    p = plan(
        policy=LeasePolicy(),
        ttl_ms=3000,
        deadline=12.0,
        acquired_at=9.0,
        extensions=0,
        now=9.0,
        clock_drift_factor=FACTOR,
    )
    assert (p.at, p.extend_ms) == (12.0, None)


def test_renewal_is_due_after_a_third_of_the_ttl() -> None:
    held_until = deadline(0.0, 3000, FACTOR)
    p = plan(
        policy=policy(max_hold=math.inf),
        ttl_ms=3000,
        deadline=held_until,
        acquired_at=0.0,
        extensions=0,
        now=0.0,
        clock_drift_factor=FACTOR,
    )
    assert p.at == pytest.approx(held_until - 2.0)
    assert p.extend_ms == 3000


def after_a_failed_renewal(*, deadline: float, now: float) -> Plan:
    """The plan at ``now`` after a renewal failed without losing a 3 s lock held until
    ``deadline`` (no bound on the hold)."""
    return plan(
        policy=policy(max_hold=math.inf),
        ttl_ms=3000,
        deadline=deadline,
        acquired_at=0.0,
        extensions=1,
        now=now,
        clock_drift_factor=FACTOR,
        failed=True,
    )


def test_a_failed_renewal_is_retried_soon_within_the_validity() -> None:
    p = after_a_failed_renewal(deadline=2.0, now=1.0)
    assert 1.0 < p.at <= 1.25


@pytest.mark.parametrize(
    ("deadline_at", "retry_at"),
    [
        (2.6, 1.25),  # a twelfth of the ttl
        (1.4, 1.1),  # nearer the deadline: a quarter of the time left, for more tries
    ],
)
def test_a_failed_renewal_is_retried_after_a_twelfth_of_the_ttl_or_a_quarter_of_what_is_left(
    deadline_at: float, retry_at: float
) -> None:
    p = after_a_failed_renewal(deadline=deadline_at, now=1.0)
    assert p.at == pytest.approx(retry_at)
    assert p.extend_ms == 3000


def test_a_failed_renewal_at_the_deadline_is_not_retried() -> None:
    """No time left: the plan watches the deadline (the lock is lost there) instead of
    sending an extension at the deadline. Catches ``>`` for ``>=``."""
    p = after_a_failed_renewal(deadline=2.0, now=2.0)
    assert (p.at, p.extend_ms) == (2.0, None)


def test_max_extensions_stops_renewals() -> None:
    p = plan(
        policy=policy(max_extensions=2),
        ttl_ms=3000,
        deadline=5.0,
        acquired_at=0.0,
        extensions=2,
        now=3.0,
        clock_drift_factor=FACTOR,
    )
    assert (p.at, p.extend_ms) == (5.0, None)


def test_timeline_of_the_docstring() -> None:
    # ttl 3 s, max_hold 5 s: three extensions, the last one shortened to end the hold.
    lease = policy(max_hold=5.0)
    held_until, t, sizes = deadline(0.0, 3000, FACTOR), 0.0, []
    for extensions in range(10):
        p = plan(
            policy=lease,
            ttl_ms=3000,
            deadline=held_until,
            acquired_at=0.0,
            extensions=extensions,
            now=t,
            clock_drift_factor=FACTOR,
        )
        if p.extend_ms is None:
            break
        t = p.at
        sizes.append((round(t, 3), p.extend_ms))
        held_until = deadline(t, p.extend_ms, FACTOR)
    assert sizes == [(0.968, 3000), (1.936, 3000), (2.904, 2096)]
    assert held_until == pytest.approx(4.977, abs=1e-3)


@given(
    ttl_ms=st.integers(min_value=50, max_value=60_000),
    hold=st.floats(min_value=0.05, max_value=600.0),
    late=st.floats(min_value=0.0, max_value=0.5),
)
def test_a_lease_never_outlives_max_hold(ttl_ms: int, hold: float, late: float) -> None:
    lease = policy(max_hold=hold)
    held_until, t = deadline(0.0, ttl_ms, FACTOR), 0.0
    for extensions in range(1000):
        p = plan(
            policy=lease,
            ttl_ms=ttl_ms,
            deadline=held_until,
            acquired_at=0.0,
            extensions=extensions,
            now=t,
            clock_drift_factor=FACTOR,
        )
        if p.extend_ms is None:
            break
        t = p.at + late * (held_until - p.at)  # the keeper may wake late...
        if t >= held_until:
            break
        # ...and plans again on waking, as both front ends do.
        p = plan(
            policy=lease,
            ttl_ms=ttl_ms,
            deadline=held_until,
            acquired_at=0.0,
            extensions=extensions,
            now=t,
            clock_drift_factor=FACTOR,
        )
        if p.extend_ms is None:
            break
        held_until = deadline(t, p.extend_ms, FACTOR)
        assert held_until <= max(hold, deadline(0.0, ttl_ms, FACTOR)) + 1e-9


@pytest.mark.parametrize(("hold_end", "extend_ms"), [(1.0041, None), (1.0046, 5)])
def test_a_last_extension_of_4_ms_or_less_is_not_made(
    hold_end: float, extend_ms: int | None
) -> None:
    """A ttl of 0.1 s (a drift of 3 ms) held until 1.0, renewed at 0.9995: what is left
    of the hold is a whole 4 ms (two drift floors), too little to be worth a round, or 5
    ms, extended by exactly that."""
    p = plan(
        policy=policy(max_hold=hold_end),
        ttl_ms=100,
        deadline=1.0,
        acquired_at=0.0,
        extensions=5,
        now=0.9995,
        clock_drift_factor=FACTOR,
    )
    assert (p.at, p.extend_ms) == ((1.0, None) if extend_ms is None else (0.9995, extend_ms))


def test_the_hold_is_over_when_one_drift_and_a_ms_of_max_hold_are_left() -> None:
    """After the last, shortened extension the deadline sits one drift before the end of
    the hold: with that (and a millisecond of rounding) or less left, nothing is."""
    edge = drift(3000, FACTOR) + 0.001
    for left, reached in ((edge - 0.0005, True), (edge, True), (math.nextafter(edge, 1), False)):
        assert (
            bound_reached(
                policy=policy(max_hold=left),
                ttl_ms=3000,
                deadline=0.0,
                acquired_at=0.0,
                extensions=0,
                clock_drift_factor=FACTOR,
            )
            is reached
        ), left
