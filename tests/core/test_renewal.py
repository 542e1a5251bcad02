"""Where a lease renewal gives up, exactly at the boundaries (docs/algorithm.md, leases);
and the same boundaries of an extension and of an acquire.

A renewal (``extend_flow(final=False)``) that fails keeps the lock, to be tried again,
only while a retry can still succeed: the round ended before the deadline, and fewer
servers than could block a majority said "not held". At either boundary it gives up:
the key is released everywhere and the lock is lost. Driven with rounds of exact times,
so that ``<`` against ``<=`` and ``>`` against ``>=`` each decide a test.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from quorumlock import Reply
from quorumlock._algorithm.arithmetic import deadline
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import (
    AcquireResult,
    ExtendResult,
    Fanout,
    Op,
    acquire_flow,
    extend_flow,
)
from quorumlock._algorithm.outcomes import NodeOutcome, Verdict
from tests.core.scripted import answered, drive, everywhere

HELD_UNTIL = 1010.0
D, NH, TO, G = Reply.DONE, Reply.NOT_HELD, Reply.TIMEOUT, Reply.GRANTED


def renew(
    replies: Sequence[Reply], *, now: float, finished: float
) -> tuple[ExtendResult, list[Op]]:
    """One renewal whose extend round starts at ``now`` and ends at ``finished``."""
    flow = extend_flow(
        key="orders:42",
        token="t",
        ttl_ms=10_000,
        config=RedlockConfig(),
        held_until=HELD_UNTIL,
        now=now,
        final=False,
    )

    def respond(step: Fanout) -> tuple[NodeOutcome, ...]:
        if step.op is Op.EXTEND:
            return answered(*replies)
        return everywhere(D, len(replies))

    def took(step: Fanout) -> float:
        return finished - now if step.op is Op.EXTEND else 0.0

    driven = drive(flow, respond, now=now, took=took)
    return driven.result, [step.op for step in driven.rounds]


@pytest.mark.parametrize(
    ("replies", "lost"),
    [
        ((NH, NH, TO, TO, TO), False),  # 2 of 5 not held: the other 3 may still confirm
        ((NH, NH, NH, TO, TO), True),  # 3 of 5: no majority can confirm any more
        ((NH, TO, TO), False),  # 1 of 3
        ((NH, NH, TO), True),  # 2 of 3
    ],
)
def test_a_renewal_gives_up_when_not_held_could_block_every_majority(
    replies: tuple[Reply, ...], lost: bool
) -> None:
    result, ops = renew(replies, now=1000.0, finished=1000.01)
    assert result.deadline is None
    assert result.lost is lost
    # Lost or not, nothing is released before the deadline: the holder may still be
    # working on the validity it was promised (the keys it has keep that promise).
    assert ops == [Op.EXTEND]


@pytest.mark.parametrize(
    ("finished", "lost"),
    [(HELD_UNTIL - 0.001, False), (HELD_UNTIL, True), (HELD_UNTIL + 0.001, True)],
)
def test_a_renewal_gives_up_when_its_round_ends_at_the_deadline(
    finished: float, lost: bool
) -> None:
    result, ops = renew((TO, TO, TO, TO, TO), now=1000.0, finished=finished)
    assert result.deadline is None
    assert result.lost is lost
    assert ops == ([Op.EXTEND, Op.RELEASE] if lost else [Op.EXTEND])


@pytest.mark.parametrize(("now", "sent"), [(HELD_UNTIL - 0.001, True), (HELD_UNTIL, False)])
def test_a_renewal_at_the_deadline_is_never_sent(now: float, sent: bool) -> None:
    result, ops = renew((D, D, D), now=now, finished=now)
    assert (Op.EXTEND in ops) is sent
    if not sent:
        assert result.lost
        assert result.reason == "its validity had already run out"


def test_a_majority_confirming_exactly_at_the_deadline_is_too_late() -> None:
    result, _ = renew((D, D, D), now=1000.0, finished=HELD_UNTIL)
    assert result.deadline is None
    assert result.lost
    assert result.reason == "the majority confirmed it too late"
    early, _ = renew((D, D, D), now=1009.0, finished=HELD_UNTIL - 0.001)
    assert early.deadline is not None


def test_a_majority_confirming_after_the_new_deadline_is_too_late() -> None:
    """The new deadline (start + ttl - drift = 1009.898) can come before the old one: a
    confirmation after it extended nothing that is still valid."""
    result, _ = renew((D, D, D), now=1000.0, finished=1009.95)
    assert result.deadline is None
    assert result.reason == "the majority confirmed it too late"


@pytest.mark.parametrize(("confirmed", "extended"), [(2, False), (3, True)])
def test_an_extension_needs_a_majority_of_confirmations(confirmed: int, extended: bool) -> None:
    replies = (D,) * confirmed + (TO,) * (5 - confirmed)
    result, _ = renew(replies, now=1000.0, finished=1000.01)
    assert (result.deadline is not None) is extended
    if not extended:
        assert result.reason == "only 2 of 5 servers confirmed it"


def acquire_once(finished: float) -> AcquireResult:
    """One non-blocking acquire, all five servers granting, its round ending at ``finished``."""
    flow = acquire_flow(
        key="orders:42",
        token="t",
        ttl_ms=10_000,
        config=RedlockConfig(max_ttl=None),
        blocking=False,
        timeout=None,
        now=1000.0,
        uniform=lambda: 0.5,
    )

    def took(step: Fanout) -> float:
        return finished - 1000.0 if step.op is Op.ACQUIRE else 0.0

    def respond(step: Fanout) -> tuple[NodeOutcome, ...]:
        return everywhere(G if step.op is Op.ACQUIRE else D, 5)

    return drive(flow, respond, now=1000.0, took=took).result


def test_an_acquire_whose_round_ends_at_its_deadline_does_not_count() -> None:
    """R6: the lock is ours only if the round ended before start + ttl - drift."""
    holds_until = deadline(1000.0, 10_000, RedlockConfig().clock_drift_factor)
    assert acquire_once(holds_until - 0.001).verdict is Verdict.ACQUIRED
    assert acquire_once(holds_until).verdict is Verdict.EXPIRED


@pytest.mark.parametrize("late", [False, True])
def test_an_extension_reports_the_answers_that_decided_it(late: bool) -> None:
    """The extend round's answers when one was sent (a success is not a loss), else the
    release's: an extension asked for after the deadline sends only the release."""
    flow = extend_flow(
        key="orders:42", token="t", ttl_ms=10_000, config=RedlockConfig(),
        held_until=HELD_UNTIL, now=HELD_UNTIL if late else 1000.0,
    )  # fmt: skip
    released = everywhere(NH)
    driven = drive(flow, lambda step: everywhere(D) if step.op is Op.EXTEND else released)
    result: ExtendResult = driven.result
    if late:
        assert [s.op for s in driven.rounds] == [Op.RELEASE]
        assert (result.deadline, result.lost, result.outcomes) == (None, True, released)
        assert result.reason == "its validity had already run out"
    else:
        assert [s.op for s in driven.rounds] == [Op.EXTEND]
        assert (result.lost, result.outcomes) == (False, everywhere(D))
