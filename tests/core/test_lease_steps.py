"""The lease keeper's reaction, one pure step used by both front ends: ``LockState.tend``
(what to do at a time) and ``LockState.renewed`` (what to do after a renewal ended).

Timeline (ttl 3 s, drift 0.032 s, adopted at t = 0 with 2.968 s of validity): the
renewal is due at 2.968 - 2 = 0.968; a failed one is retried min(3 / 12, left / 4) later.
"""

from __future__ import annotations

import math

import pytest

from quorumlock import LockLost
from quorumlock._algorithm.config import NO_LEASE, LeasePolicy, LockOptions, RedlockConfig
from quorumlock._algorithm.lockstate import LockState, Lost, Renew, Wake
from quorumlock._algorithm.outcomes import NodeOutcome, Reply

DEADLINE = 2.968
DUE = DEADLINE - 2.0


def held(*, auto_extend: bool = True) -> LockState:
    lease = LeasePolicy(auto_extend=True, max_hold=math.inf) if auto_extend else NO_LEASE
    state = LockState(
        name="orders:42",
        ttl_ms=3000,
        servers=3,
        config=RedlockConfig(),
        lease=lease,
        uniform=lambda: 0.5,
    )
    state.adopt(token="t" * 40, fence=None, validity=DEADLINE, now=0.0)
    return state


def test_a_lock_not_held_has_no_lease_step() -> None:
    state = held()
    state.forget()
    assert state.tend(0.0) is None


def test_a_lock_without_renewal_is_watched_until_its_deadline_then_lost() -> None:
    state = held(auto_extend=False)
    assert state.tend(1.0) == Wake(DEADLINE)
    step = state.tend(DEADLINE)
    assert isinstance(step, Lost)
    assert step.reason == "validity ran out"
    assert "expired" in str(step.error)
    assert state.lost
    assert state.tend(DEADLINE) is None


def test_a_renewed_lock_that_ran_out_says_why() -> None:
    """A lease past its bound ran out for that reason; one woken past its deadline with
    renewals still allowed (its process stopped, or starved) did not reach any bound."""
    late = held()  # max_hold=inf: no bound
    step = late.tend(DEADLINE + 1.0)
    assert isinstance(step, Lost)
    assert "no renewal in time: the process was stopped" in str(step.error)
    assert "bound" not in str(step.error)

    bounded = LockState(
        name="orders:42",
        ttl_ms=3000,
        servers=3,
        config=RedlockConfig(),
        lease=LeasePolicy(auto_extend=True, max_extensions=0),
        uniform=lambda: 0.5,
    )
    bounded.adopt(token="t" * 40, fence=None, validity=DEADLINE, now=0.0)
    assert bounded.tend(1.0) == Wake(DEADLINE)  # no extension allowed: watched
    step = bounded.tend(DEADLINE)
    assert isinstance(step, Lost)
    assert "after 0 extensions (the lease bound was reached)" in str(step.error)


def test_a_lease_whose_renewals_failed_until_it_ran_out_says_so() -> None:
    """Renewals made and failed (a majority down) until the deadline: the loss says so,
    with the last one's reason and answers, not that the process was stopped."""
    state = held()
    state.reason = "only 1 of 3 servers confirmed it"
    state.outcomes = (NodeOutcome("redis://a:1", Reply.TIMEOUT, "no reply in time"),)
    state.renewed(False, DUE)
    step = state.tend(DEADLINE + 0.001)
    assert isinstance(step, Lost)
    text = str(step.error)
    assert "after 0 extensions (the renewals failed: only 1 of 3 servers confirmed it. " in text
    assert "redis://a:1: timeout (no reply in time)" in text
    assert "stopped" not in text


def test_a_loss_seen_while_the_next_renewal_is_in_flight_says_why_the_last_failed() -> None:
    """The validity runs out (seen by ``check()``, ``expire``) while a renewal round is
    still waiting for its answers: the loss names the failure before it, not the empty
    reason of the round under way."""
    state = held()
    state.reason = "only 1 of 3 servers confirmed it"
    state.outcomes = (NodeOutcome("redis://a:1", Reply.TIMEOUT, "no reply in time"),)
    state.renewed(False, DUE)
    state.reason = ""  # the next renewal has begun (LockState.renew)
    error = state.expire(DEADLINE + 0.001)
    assert error is not None
    text = str(error)
    assert "(the renewals failed: only 1 of 3 servers confirmed it. " in text
    assert "redis://a:1: timeout (no reply in time)" in text

    bug = held()
    bug.renewed(RuntimeError("bug"), DUE)
    error = bug.expire(DEADLINE + 0.001)
    assert error is not None
    assert "(the renewals failed: RuntimeError('bug'))" in str(error)


def test_a_renewal_is_due_a_third_of_the_ttl_in_and_an_early_wake_waits() -> None:
    state = held()
    early = state.tend(0.5)
    assert isinstance(early, Wake)
    assert early.at == pytest.approx(DUE)
    assert state.tend(DUE) == Renew(3000)


def test_a_renewal_may_run_a_thirtieth_of_the_ttl_early_and_no_sooner() -> None:
    """So that renewals due within 0.1 s of each other (ttl 3 s) go out in one batch.
    Catches the early margin dropped (each lock its own small batch) or unbounded."""
    state = held()
    assert state.early == pytest.approx(0.1)
    assert isinstance(state.tend(DUE - 0.101), Wake)
    assert state.tend(DUE - 0.099) == Renew(3000)


def test_a_lock_only_watched_is_never_taken_early() -> None:
    state = held(auto_extend=False)
    assert state.tend(DEADLINE - 0.05) == Wake(DEADLINE)


def test_a_successful_renewal_looks_again_at_the_next_due_time() -> None:
    state = held()
    step = state.renewed(True, DUE)
    assert step.extended
    assert (step.lost, step.failure, step.left) == (None, None, None)
    assert step.at == pytest.approx(DUE)  # the deadline itself moves in renew()
    assert not state.renew_failed


def test_a_failed_renewal_that_leaves_validity_warns_and_retries_soon() -> None:
    """Catches a failed renewal postponed to the next regular time (a third of the ttl
    later), and one reported without the validity left."""
    state = held()
    step = state.renewed(False, 1.0)
    assert not step.extended
    assert step.lost is None
    assert step.left == pytest.approx(DEADLINE - 1.0)
    assert step.at == pytest.approx(1.0 + min(3.0 / 12, (DEADLINE - 1.0) / 4))
    assert state.renew_failed
    assert step.at is not None
    assert state.tend(step.at) == Renew(3000)


def test_a_lost_renewal_is_reported_and_ends_the_keeping() -> None:
    state = held()
    error = LockLost("gone", name="orders:42")
    step = state.renewed(error, 1.0)
    assert (step.extended, step.lost, step.at) == (False, error, None)


def test_an_unexpected_exception_counts_as_a_failed_renewal() -> None:
    """A bug in a renewal must not end the lease keeping: it is logged (``failure``)
    and retried as a failed renewal, in both front ends."""
    state = held()
    bug = RuntimeError("bug")
    step = state.renewed(bug, 1.0)
    assert (step.extended, step.failure, step.lost) == (False, bug, None)
    assert step.left == pytest.approx(DEADLINE - 1.0)
    assert step.at is not None


def test_lock_options_are_checked_once_and_share_the_default_lease() -> None:
    config = RedlockConfig()
    options = LockOptions.build(
        config,
        "orders:42",
        ttl=2.5,
        timeout=None,
        blocking=True,
        auto_extend=False,
        max_extensions=None,
        max_hold=None,
        on_lost=None,
    )
    assert (options.name, options.ttl_ms, options.lease) == ("orders:42", 2500, NO_LEASE)
    assert options.lease is NO_LEASE
    with pytest.raises(AttributeError):
        options.ttl_ms = 1  # type: ignore[misc]
