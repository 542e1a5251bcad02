"""``LockState``'s own decisions, without servers: the three ends of a lease renewal, the
count of extensions that bounds a lease, what ``locked()`` and ``owned()`` conclude from
a probe round and what a release answers, exhaustively for N = 1 to 5."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TypeVar

import pytest

from quorumlock import LockLost, LockNotAcquired, LockNotHeld, LockNotReentrant, QuorumUnavailable
from quorumlock._algorithm.arithmetic import deadline, quorum
from quorumlock._algorithm.config import LeasePolicy, RedlockConfig
from quorumlock._algorithm.flows import Flow, Op
from quorumlock._algorithm.lockstate import LockState, Renew, Wake
from quorumlock._algorithm.outcomes import HOLDER_PREFIX, NodeOutcome, Reply
from tests.core.scripted import answered, drive

T = TypeVar("T")
TOKEN = "0123456789abcdef" * 2 + "01234567"
OTHER = "fedcba9876543210" * 2 + "76543210"
DONE, NOT_HELD, TIMEOUT, TAKEN = Reply.DONE, Reply.NOT_HELD, Reply.TIMEOUT, Reply.TAKEN


def held(servers: int = 3, **lease: object) -> LockState:
    state = LockState(
        name="orders:42",
        ttl_ms=3000,
        servers=servers,
        config=RedlockConfig(),
        lease=LeasePolicy(auto_extend=True, **lease),  # type: ignore[arg-type]
        uniform=lambda: 0.5,
    )
    state.adopt(token=TOKEN, fence=None, validity=2.968, now=0.0)
    return state


def run(flow: Flow[T], answer: Sequence[NodeOutcome], *, at: float = 1.0) -> T:
    """Answer every round of ``flow`` with ``answer`` (the release that may follow a
    failed extension with "not held" everywhere), each taking 4 ms from ``at``."""
    not_held = [NodeOutcome(o.server, NOT_HELD) for o in answer]
    return drive(flow, lambda step: not_held if step.op is Op.RELEASE else answer, now=at).result


def outs(*replies: Reply) -> list[NodeOutcome]:
    return list(answered(*replies))


# --------------------------------------------------------------------------------------
# a lease renewal: extended, failed but still valid, or lost
# --------------------------------------------------------------------------------------


def test_a_renewal_confirmed_by_a_majority_moves_the_deadline_and_counts() -> None:
    state = held(max_hold=math.inf)
    assert run(state.renew(ttl_ms=3000, now=1.0), outs(DONE, DONE, TIMEOUT)) is True
    assert state.deadline == pytest.approx(deadline(1.0, 3000, RedlockConfig().clock_drift_factor))
    assert state.extensions == 1
    assert run(state.renew(ttl_ms=3000, now=2.0), outs(DONE, DONE, DONE), at=2.0) is True
    assert state.extensions == 2


def test_a_renewal_that_fails_but_may_be_retried_keeps_the_deadline() -> None:
    """Servers that did not answer: nothing is lost yet, the caller tries again soon."""
    state = held(max_hold=math.inf)
    assert run(state.renew(ttl_ms=3000, now=1.0), outs(DONE, TIMEOUT, TIMEOUT)) is False
    assert state.deadline == 2.968
    assert state.extensions == 0
    assert not state.lost
    assert state.reason == "only 1 of 3 servers confirmed it"


def test_a_renewal_that_finds_the_lock_gone_raises_lock_lost() -> None:
    state = held(max_hold=math.inf)
    with pytest.raises(LockLost, match="could not be extended"):
        run(state.renew(ttl_ms=3000, now=1.0), outs(NOT_HELD, NOT_HELD, DONE))
    assert state.lost
    assert state.deadline is None
    assert state.extensions == 0


def test_an_extension_of_a_lost_lock_says_how_it_was_lost() -> None:
    """Once a loss is known (``check()`` saw the validity run out, a renewal failed),
    an extension is refused with the loss's own cause, not another one."""
    expired = held()
    assert expired.expire(3.0) is not None  # what check() does past the deadline
    with pytest.raises(LockLost) as refused:
        run(expired.extend(ttl=None, now=3.1), outs(DONE, DONE, DONE))
    assert str(refused.value) == (
        "cannot extend lock 'orders:42': it was lost (expired: its validity ran out after 0 "
        "extensions (no renewal in time: the process was stopped, or too busy to renew))"
    )

    failed = held()
    with pytest.raises(LockLost):
        run(failed.renew(ttl_ms=3000, now=1.0), outs(NOT_HELD, NOT_HELD, DONE))
    with pytest.raises(LockLost) as refused:
        run(failed.extend(ttl=None, now=1.1), outs(DONE, DONE, DONE))
    assert str(refused.value).startswith(
        "cannot extend lock 'orders:42': it was lost (could not be extended: only 1 of 3 "
        "servers confirmed it. "
    )


def test_the_extensions_counted_end_the_lease_at_max_extensions() -> None:
    state = held(max_extensions=2)
    for k, now in enumerate((1.0, 2.0), 1):
        assert run(state.renew(ttl_ms=3000, now=now), outs(DONE, DONE, DONE), at=now) is True
        assert state.extensions == k
    step = state.next_step(2.1)
    assert step is not None
    assert step.extend_ms is None  # only watched from now on: no third extension


# --------------------------------------------------------------------------------------
# locked() and owned(): a majority of the servers, or the answers that are missing
# --------------------------------------------------------------------------------------

# what one server can answer to a probe: our token in the key, another's, no key, nothing
PROBE = {
    "ours": (Reply.TAKEN, TOKEN[:HOLDER_PREFIX]),
    "other": (Reply.TAKEN, OTHER[:HOLDER_PREFIX]),
    "free": (NOT_HELD, None),
    "silent": (TIMEOUT, None),
}


def probe(state: LockState, answers: Sequence[str], *, mine: bool) -> bool:
    outcomes = [
        NodeOutcome(f"s{i}", PROBE[a][0], holder=PROBE[a][1]) for i, a in enumerate(answers)
    ]
    return run(state.probe(mine=mine), outcomes)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_locked_and_owned_need_a_majority_and_say_so_when_the_silent_could_tip_it(
    n: int,
) -> None:
    for answers in itertools.product(PROBE, repeat=n):
        silent = answers.count("silent")
        for mine, counted in ((True, ("ours",)), (False, ("ours", "other"))):
            hits = sum(1 for a in answers if a in counted)
            if hits >= quorum(n):
                expected: bool | None = True
            elif hits + silent < quorum(n):
                expected = False
            else:
                expected = None  # the servers that did not answer decide it
            state = held(servers=n, max_hold=math.inf)
            if expected is None:
                with pytest.raises(QuorumUnavailable, match=f"{silent} of {n} servers"):
                    probe(state, answers, mine=mine)
            else:
                assert probe(state, answers, mine=mine) is expected, (answers, mine)


# --------------------------------------------------------------------------------------
# release(): whether a majority still held the lock
# --------------------------------------------------------------------------------------


def release(state: LockState, replies: Sequence[Reply]) -> tuple[bool, list[Op]]:
    driven = drive(state.release(), lambda step: outs(*replies), now=1.0)
    return driven.result, [step.op for step in driven.rounds]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_release_is_true_iff_a_majority_still_held_the_key(n: int) -> None:
    for replies in itertools.product((DONE, NOT_HELD, TIMEOUT), repeat=n):
        state = held(servers=n, max_hold=math.inf)
        still_held, ops = release(state, replies)
        assert ops == [Op.RELEASE]
        assert still_held is (replies.count(DONE) >= quorum(n)), replies
        assert not state.held


def test_a_lost_lock_is_still_released_everywhere_once() -> None:
    """A minority may still hold the key of a lock found lost: its release deletes it
    (R9) and answers False; a second release is a usage error."""
    state = held(max_hold=math.inf)
    with pytest.raises(LockLost):
        run(state.renew(ttl_ms=3000, now=1.0), outs(NOT_HELD, NOT_HELD, DONE))
    state.check_release()  # no error: the release is due
    assert release(state, (DONE, NOT_HELD, NOT_HELD)) == (False, [Op.RELEASE])
    with pytest.raises(LockNotHeld):
        state.check_release()
    with pytest.raises(LockNotHeld):
        release(state, (NOT_HELD,) * 3)


def test_a_lock_acquired_again_starts_its_lease_afresh() -> None:
    """The extensions of the last hold do not count against the next one."""
    state = held(max_extensions=2)
    for now in (1.0, 2.0):
        assert run(state.renew(ttl_ms=3000, now=now), outs(DONE, DONE, DONE), at=now) is True
    assert release(state, (DONE,) * 3) == (True, [Op.RELEASE])
    assert state.validity(2.5) == 0.0
    granted = outs(*(Reply.GRANTED,) * 3)
    assert run(state.acquire(blocking=False, timeout=None, now=3.0), granted, at=3.0)
    assert state.extensions == 0
    assert state.validity(3.0) > 2.9
    step = state.next_step(3.0)
    assert step is not None
    assert step.extend_ms == 3000  # renewals allowed again


# --------------------------------------------------------------------------------------
# what a fresh, an acquired, an adopted and a forgotten state hold
# --------------------------------------------------------------------------------------


def test_a_fresh_state_holds_nothing_and_counts_nothing() -> None:
    state = LockState(
        name="orders:42", ttl_ms=3000, servers=3, config=RedlockConfig(), uniform=lambda: 0.5
    )
    assert (state.token, state.deadline, state.fence, state.lost) == (None, None, None, False)
    assert (state.extensions, state.attempts, state.acquired_at) == (0, 0, 0.0)
    assert not state.renew_failed
    assert state.key == "orders:42"
    (probe,) = drive(
        state.probe(mine=False), lambda step: outs(NOT_HELD, NOT_HELD, NOT_HELD)
    ).rounds
    assert (probe.key, probe.token) == ("orders:42", "")
    many = LockState(
        name="a+b", ttl_ms=3000, servers=3, config=RedlockConfig(), uniform=lambda: 0.5,
        keys=("a", "b"),
    )  # fmt: skip
    assert many.key == "a"  # the first of the sorted set names the lock on the servers


@pytest.mark.parametrize("how", ["acquire", "adopt"])
def test_a_state_held_until_its_deadline_is_not_taken_again_before_it(how: str) -> None:
    """Acquiring (or adopting) again is refused while the hold lasts, and is a new hold
    from its deadline on: the lease starts afresh."""
    state = held(max_hold=math.inf)
    assert state.deadline == 2.968
    state.extensions, state.renew_failed = 4, True

    def again(now: float) -> None:
        if how == "adopt":
            state.adopt(token=OTHER, fence=None, validity=2.0, now=now)
        else:
            run(
                state.acquire(blocking=False, timeout=None, now=now),
                outs(*(Reply.GRANTED,) * 3),
                at=now,
            )

    with pytest.raises(LockNotReentrant):
        again(2.967)
    again(2.968)
    assert (state.extensions, state.renew_failed, state.lost) == (0, False, False)
    assert state.acquired_at == 2.968


@pytest.mark.parametrize(
    ("reply", "attempts", "error", "why"),
    [
        (TAKEN, 1, LockNotAcquired, "held by another client"),
        (TAKEN, 2, LockNotAcquired, "held by another client"),
        (TIMEOUT, 1, QuorumUnavailable, "too few servers answered"),
        (Reply.QUARANTINED, 1, QuorumUnavailable, "too few servers out of restart quarantine"),
    ],
)
def test_a_failed_acquire_says_why(
    reply: Reply, attempts: int, error: type[Exception], why: str
) -> None:
    state = LockState(
        name="orders:42", ttl_ms=3000, servers=3, uniform=lambda: 0.5,
        config=RedlockConfig(retry_count=attempts - 1, wake_on_release=False),
    )  # fmt: skip
    flow = state.acquire(blocking=attempts > 1, timeout=None, now=0.0, raise_on_failure=True)
    with pytest.raises(error) as raised:
        run(flow, outs(reply, reply, reply))
    tried = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    message = str(raised.value)
    assert f"lock 'orders:42' ({tried}): {why}, 2 of 3 needed." in message
    assert ("Wait: the quarantine ends by itself" in message) is (reply is Reply.QUARANTINED)
    assert state.attempts == attempts


@pytest.mark.parametrize(
    ("reply", "known", "why"),
    [
        (TAKEN, "held by this thread", "held by this thread"),
        (TAKEN, None, "held by another client"),  # the holder is not known
        (TIMEOUT, "held by this thread", "too few servers answered"),  # never asked
    ],
)
def test_a_failed_acquire_names_the_holder_it_is_told_of(
    reply: Reply, known: str | None, why: str
) -> None:
    state = LockState(
        name="orders:42", ttl_ms=3000, servers=3, uniform=lambda: 0.5, config=RedlockConfig()
    )
    flow = state.acquire(
        blocking=False, timeout=None, now=0.0, raise_on_failure=True, held_by=lambda: known
    )
    with pytest.raises(LockNotAcquired) as raised:
        run(flow, outs(reply, reply, reply))
    assert f"lock 'orders:42' (1 attempt): {why}, 2 of 3 needed." in str(raised.value)


def test_an_extension_returns_the_validity_it_gave() -> None:
    state = held(max_hold=math.inf)
    validity = run(state.extend(ttl=0.5, now=1.0), outs(DONE, DONE, DONE))
    assert validity == pytest.approx(deadline(1.0, 500, RedlockConfig().clock_drift_factor) - 1.0)
    assert validity < 0.5


def test_a_renewal_is_due_from_as_early_as_the_lease_allows() -> None:
    state = held(max_hold=math.inf)
    step = state.next_step(0.0)
    assert step is not None
    now = step.at - state.early
    assert now + state.early == step.at  # exactly at the edge
    assert state.tend(now) == Renew(3000)
    assert state.tend(math.nextafter(now, 0.0)) == Wake(step.at)


def test_a_forgotten_state_holds_nothing_and_has_nothing_to_release() -> None:
    state = held(max_hold=math.inf)
    with pytest.raises(LockLost):
        run(state.renew(ttl_ms=3000, now=1.0), outs(NOT_HELD, NOT_HELD, DONE))
    assert state.lost
    state.forget()
    assert (state.deadline, state.lost) == (None, False)
    with pytest.raises(LockNotHeld):
        next(state.release())
