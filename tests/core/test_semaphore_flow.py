"""How a semaphore chooses its slot, without servers: a permit is one slot granted by a
majority (a grant of another slot is a refusal), the second round asks for the slot most
servers had free, and whatever else the attempt was granted is taken back."""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import (
    ConfigurationError,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    NodeOutcome,
    QuorumUnavailable,
    RedlockConfig,
    Reply,
)
from quorumlock._algorithm.arithmetic import deadline, quorum, wake_stagger
from quorumlock._algorithm.flows import Fanout, Flow, Op, Round, Sleep, Wait, Watch
from quorumlock._algorithm.outcomes import HOLDER_PREFIX, Verdict
from quorumlock._algorithm.semaphore import (
    MAX_PERMITS,
    SemaphoreResult,
    SemaphoreState,
    _best_granted,
    _for_slot,
    _most_free,
    _order,
    _strays,
    check_permits,
    semaphore_acquire_flow,
    semaphore_base,
)
from quorumlock._algorithm.wire import notice
from tests.core.scripted import Driven, answered, drive, everywhere, in_turn

G, X, Q, TO = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.TIMEOUT


def fenced(reply: Reply, fence: int, index: int) -> NodeOutcome:
    """A server's answer granting slot 0 (all four free), with its fencing counter."""
    return NodeOutcome(f"s{index}", reply, holder="0:1111", fence=fence)


def said(reply: Reply, slot: int | None = None, free: str = "", index: int = 0) -> NodeOutcome:
    """A server's answer to SEMAPHORE_ACQUIRE: ``slot`` the slot it tried (granted, if
    ``reply`` is a grant), ``free`` which slots were free there ("1")."""
    holder = None if slot is None else f"{slot}:{free}"
    return NodeOutcome(f"s{index}", reply, holder=holder)


def test_permits_are_checked() -> None:
    assert check_permits(1) == 1
    assert check_permits(MAX_PERMITS) == MAX_PERMITS
    for bad in (0, MAX_PERMITS + 1, -1):
        with pytest.raises(ConfigurationError, match="permits must be from 1"):
            check_permits(bad)
    for wrong in (True, 2.0, "3"):
        with pytest.raises(TypeError, match="permits must be an int"):
            check_permits(wrong)


# --------------------------------------------------------------------------------------
# one slot, judged as a lock
# --------------------------------------------------------------------------------------

answers = st.tuples(st.sampled_from([G, X, Q, TO]), st.one_of(st.none(), st.integers(0, 3))).map(
    lambda pair: said(pair[0], pair[1], "0000")
)


@given(st.lists(answers, min_size=1, max_size=7), st.integers(0, 3))
def test_only_the_grants_of_the_slot_itself_count_for_it(
    outcomes: list[NodeOutcome], slot: int
) -> None:
    """Two holders of one slot would be two holders of one lock; grants of different
    slots must never add up to a majority for any one of them."""
    judged = _for_slot(outcomes, slot)
    for before, after in zip(outcomes, judged, strict=True):
        granted_here = before.reply is G and before.holder == f"{slot}:0000"
        if before.reply is G:
            assert after.reply is (G if granted_here else X)
        else:
            assert after == before


def test_the_slot_granted_by_most_servers_and_the_lowest_of_a_tie() -> None:
    assert _best_granted([said(X, 0), said(TO)]) is None
    assert _best_granted([said(G, 2), said(G, 1), said(G, 2), said(X, 1)]) == 2
    assert _best_granted([said(G, 3), said(G, 1), said(X, 0)]) == 1
    assert _best_granted([said(G, None), said(G, 0)]) == 0


def test_the_second_round_asks_for_a_slot_free_on_a_majority_of_all_servers() -> None:
    # slot 2 free on 3 of 5 servers (one more said so but did not answer in time)
    outcomes = [
        said(G, 0, "0011"),
        said(G, 1, "0110"),
        said(X, 3, "0011"),
        said(X, 0, "0000"),
        said(TO, 0, "0010"),
    ]
    assert _most_free(outcomes, 4, 0.0) == 2
    # free on 2 of 5 at most: no slot can be had
    assert _most_free(outcomes[:2] + [said(X, 0, "0000")] * 3, 4, 0.0) is None
    # a tie between slots 1 and 2 (each free on 3 of 3): broken by the draw
    tie = [said(X, 0, "0110")] * 3
    assert [_most_free(tie, 4, pick) for pick in (0.0, 0.49, 0.5, 0.999)] == [1, 1, 2, 2]
    # a server that did not answer never counts, whatever it said before
    silent = [said(X, 0, "1000")] * 2 + [said(TO, 0, "1000")] + [said(X, 0, "0000")] * 2
    assert _most_free(silent, 4, 0.0) is None
    # bits past the permits are not slots
    assert _most_free([said(X, 0, "00011")] * 3, 4, 0.0) == 3


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_most_free_needs_a_majority_of_all_servers(n: int) -> None:
    for frees in itertools.product((True, False, None), repeat=n):  # None: no answer
        outcomes = [
            said(TO) if free is None else said(X, 0, "1" if free else "0") for free in frees
        ]
        expected = 0 if frees.count(True) >= quorum(n) else None
        assert _most_free(outcomes, 1, 0.5) == expected, frees


def test_what_an_attempt_may_have_left_on_another_slot() -> None:
    """A server is clean after "taken", or a grant (or quarantined answer) of the slot
    kept; a grant of another slot, or no answer, may have left our token."""
    assert not _strays(Round(0.0, 0.001, (said(X, 1), said(G, 2), said(Q, 2))), 2)
    assert _strays(Round(0.0, 0.001, (said(X, 1), said(G, 1))), 2)
    assert _strays(Round(0.0, 0.001, (said(X, 1), said(TO))), 2)
    assert _strays(Round(0.0, 0.001, (said(G, 2),)), None)
    assert not _strays(Round(0.0, 0.001, (said(X, 1), said(X, 3))), None)


@given(st.integers(1, 40), st.lists(st.floats(0.0, 0.9999), min_size=40, max_size=40))
def test_the_order_of_the_slots_is_a_permutation(permits: int, draws: list[float]) -> None:
    it = iter(draws)
    assert sorted(_order(permits, lambda: next(it))) == list(range(permits))


def test_every_order_of_the_slots_can_be_drawn() -> None:
    """Contenders draw different orders so that they rarely go for the same slot."""
    grid = [0.0, 0.25, 0.5, 0.75, 0.9999]
    orders = set()
    for draws in itertools.product(grid, repeat=3):
        orders.add(_order(4, functools.partial(next, iter(draws))))
    assert orders == set(itertools.permutations(range(4)))


# --------------------------------------------------------------------------------------
# the acquire flow
# --------------------------------------------------------------------------------------


def acquire(
    rounds: Sequence[Sequence[NodeOutcome]], *, fencing: bool = False
) -> tuple[SemaphoreResult, list[Fanout]]:
    """A non-blocking acquire of one of 4 permits, its rounds answered in turn (the
    release rounds with "done"), each 4 ms long."""
    flow = semaphore_acquire_flow(
        base="jobs", permits=4, token="t" * 40, ttl_ms=10_000,
        config=RedlockConfig(fencing=fencing), blocking=False, timeout=None, now=0.0,
        uniform=lambda: 0.0,
    )  # fmt: skip
    answers = in_turn(*rounds)

    def respond(step: Fanout) -> Sequence[NodeOutcome]:
        return answers(step) if step.op is Op.SEMAPHORE_ACQUIRE else everywhere(Reply.DONE)

    driven = drive(flow, respond)
    return driven.result, driven.rounds


def test_one_slot_on_a_majority_is_held_in_one_round() -> None:
    result, sent = acquire([[said(G, 0, "1111"), said(G, 0, "1111"), said(X, 2, "0000")]])
    assert (result.verdict, result.slot, result.attempts) == (Verdict.ACQUIRED, 0, 1)
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE]
    assert sorted(sent[0].slots) == [0, 1, 2, 3]  # every slot, in a random order


def test_a_grant_of_another_slot_is_taken_back_once_the_permit_is_held() -> None:
    result, sent = acquire([[said(G, 0, "1111"), said(G, 0, "1111"), said(G, 3, "0001")]])
    assert (result.verdict, result.slot) == (Verdict.ACQUIRED, 0)
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE, Op.SEMAPHORE_RELEASE]
    assert (sent[1].slots, sent[1].notify) == ((0,), True)  # keeps slot 0, wakes waiters
    # announced as the attempt's, apart from the permit's release of the same token
    assert notice(sent[1]) == f"{'t' * 40}:1" != notice(dataclasses.replace(sent[1], arrival=""))


def test_a_split_vote_asks_everyone_for_the_slot_most_had_free() -> None:
    """Three servers granted three different slots: none is a majority's, so one more
    round asks every server for slot 1, free on all three."""
    first = [said(G, 0, "1100"), said(G, 1, "0110"), said(G, 2, "0111")]
    second = [said(G, 1, "0100"), said(G, 1, "0000"), said(G, 1, "0100")]
    result, sent = acquire([first, second])
    assert (result.verdict, result.slot) == (Verdict.ACQUIRED, 1)
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE, Op.SEMAPHORE_ACQUIRE]
    assert sent[1].slots == (1,)  # its script deletes our token from every other slot


def test_a_refusal_everywhere_has_nothing_to_undo_and_a_failed_split_undoes_all() -> None:
    taken = [said(X, 0, "0000")] * 3
    result, sent = acquire([taken])
    assert (result.verdict, result.slot) == (Verdict.CONTENDED, None)
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE]
    # a split with no slot free on a majority: no second round; the grants are undone
    # on every server, waking nobody
    split = [said(G, 0, "1000"), said(G, 1, "0100"), said(X, 2, "0000")]
    result, sent = acquire([split])
    assert result.slot is None
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE, Op.SEMAPHORE_RELEASE]
    assert (sent[1].slots, sent[1].notify) == ((), False)
    assert sent[1].until == 0.0  # an undo waits for no server's first contact


def acquiring(
    *, blocking: bool = True, timeout: float | None = None, **config: object
) -> Flow[SemaphoreResult]:
    """An acquire of one of 4 permits; each random draw is 0.5 (a pause of 3/4 of
    ``retry_delay``, a wake-up stagger of half its spread)."""
    return semaphore_acquire_flow(
        base="jobs", permits=4, token="t" * 40, ttl_ms=10_000,
        config=RedlockConfig(**config),  # type: ignore[arg-type]
        blocking=blocking, timeout=timeout, now=0.0, uniform=lambda: 0.5,
    )  # fmt: skip


def test_a_fencing_token_the_servers_agree_on_needs_no_commit_round() -> None:
    grants = [fenced(G, 7, i) for i in range(3)]
    result, sent = acquire([grants], fencing=True)
    assert (result.verdict, result.slot, result.fence) == (Verdict.ACQUIRED, 0, 7)
    assert [s.op for s in sent] == [Op.SEMAPHORE_ACQUIRE]


@pytest.mark.parametrize(
    ("commit", "verdict", "fence"),
    [(Reply.DONE, Verdict.ACQUIRED, 9), (Reply.NOT_HELD, Verdict.UNFENCED, None)],
)
def test_counters_out_of_step_commit_the_token_on_the_slot_or_undo_the_grant(
    commit: Reply, verdict: Verdict, fence: int | None
) -> None:
    """The token of a permit is the slot's, committed on its key like a lock's; one that
    does not stick leaves no permit, and the grants are taken back."""
    grants = tuple(fenced(G, f, i) for i, f in enumerate((9, 8, 7)))

    def respond(step: Fanout) -> Sequence[NodeOutcome]:
        if step.op is Op.SEMAPHORE_ACQUIRE:
            return grants
        return everywhere(commit if step.op is Op.COMMIT_FENCE else Reply.DONE)

    driven = drive(acquiring(blocking=False, fencing=True), respond)
    assert (driven.result.verdict, driven.result.fence) == (verdict, fence)
    ops = [(s.op, s.key) for s in driven.rounds]
    undo = [(Op.SEMAPHORE_RELEASE, "jobs")] if fence is None else []
    assert ops == [(Op.SEMAPHORE_ACQUIRE, "jobs"), (Op.COMMIT_FENCE, "jobs:0"), *undo]


@pytest.mark.parametrize("second", [False, True])
def test_a_round_that_ends_as_the_validity_does_holds_no_permit(second: bool) -> None:
    """A permit is held only if its round (the first, or the second of a split vote)
    ended before the validity did, as a lock's acquire."""
    config = RedlockConfig()
    holds_until = deadline(0.0, 10_000, config.clock_drift_factor)
    split = [said(G, 0, "1100"), said(G, 1, "0110"), said(G, 2, "0111")]
    granted = [said(G, 1, "0000")] * 3

    def run(took: float) -> SemaphoreResult:
        rounds = [split, granted] if second else [granted]
        answers = in_turn(*rounds)

        def respond(step: Fanout) -> Sequence[NodeOutcome]:
            return answers(step) if step.op is Op.SEMAPHORE_ACQUIRE else everywhere(Reply.DONE)

        def duration(step: Fanout) -> float:
            last = step.op is Op.SEMAPHORE_ACQUIRE and (not second or step.slots == (1,))
            return took if last else 0.0

        return drive(acquiring(blocking=False), respond, took=duration).result

    assert run(holds_until - 0.001).verdict is Verdict.ACQUIRED
    assert run(holds_until).verdict is Verdict.EXPIRED


# --------------------------------------------------------------------------------------
# a blocking acquire: retries, their pauses, and the release announcements
# --------------------------------------------------------------------------------------

FULL = [said(X, 0, "0000")] * 3  # every permit held by others


def refused(step: Fanout) -> Sequence[NodeOutcome]:
    return FULL if step.op is Op.SEMAPHORE_ACQUIRE else everywhere(Reply.DONE)


def kinds(driven: Driven[SemaphoreResult]) -> list[tuple[str, float]]:
    """The steps taken: each round as "round", each pause as its kind and length."""
    return [
        ("round", 0.0) if isinstance(s, Fanout) else (type(s).__name__, s.seconds)
        for s in driven.steps
        if not isinstance(s, Watch)
    ]


def test_a_blocking_acquire_pauses_between_attempts_and_gives_up_at_its_timeout() -> None:
    """Polling (no announcements): a pause of 3/4 of 0.25 s after each refusal, the last
    cut short by the timeout of 1 s, and one attempt as it ends."""
    driven = drive(
        acquiring(timeout=1.0, retry_delay=0.25, wake_on_release=False), refused, took=0.0
    )
    assert (driven.result.verdict, driven.result.slot) == (Verdict.CONTENDED, None)
    assert driven.result.attempts == 7
    pause = [("Sleep", 0.1875), ("round", 0.0)]
    assert kinds(driven) == [("round", 0.0), *pause * 5, ("Sleep", 0.0625), ("round", 0.0)]
    assert driven.now == 1.0


def test_a_blocking_acquire_makes_retry_count_retries() -> None:
    driven = drive(acquiring(retry_count=2, wake_on_release=False), refused)
    assert driven.result.attempts == 3
    assert [type(s) for s in driven.steps].count(Sleep) == 2


@pytest.mark.parametrize("fatal", [False, True])
def test_a_blocking_acquire_stops_at_a_verdict_no_retry_can_change(fatal: bool) -> None:
    """Errors that no retry can fix on a majority end the wait; an outage may pass."""
    reply = Reply.FATAL if fatal else Reply.ERROR
    broken = [NodeOutcome(f"s{i}", reply) for i in range(2)] + [said(X, 0, "0000")]

    def respond(step: Fanout) -> Sequence[NodeOutcome]:
        return broken if step.op is Op.SEMAPHORE_ACQUIRE else everywhere(Reply.DONE)

    driven = drive(acquiring(timeout=1.0, wake_on_release=False), respond)
    verdict = Verdict.FATAL if fatal else Verdict.UNAVAILABLE
    assert driven.result.verdict is verdict
    assert (driven.result.attempts == 1) is fatal


@pytest.mark.parametrize("missed", [True, False])
def test_a_waiter_subscribes_once_and_then_waits_for_an_announcement(missed: bool) -> None:
    """After the first refusal the waiter subscribes to the semaphore's releases (any
    permit's: no queue), for no longer than it has left; it tries again at once if a
    release may have gone unheard meanwhile, and waits for announcements from then on.
    Rounds of 1/16 s, a timeout of 1/2 s."""
    driven = drive(acquiring(timeout=0.5, retry_delay=0.25), refused, took=0.0625, missed=missed)
    (watch,) = [s for s in driven.steps if isinstance(s, Watch)]
    # (waiters of the process with the same permits poll through one)
    assert watch == Watch("jobs", 0.4375, queued=False, since=0.0, kind="4 permits")
    assert driven.steps.index(watch) == 1
    if missed:  # rounds at 0 and at once after the watch, then at 0.3125 and 0.5
        after = [("round", 0.0), ("Wait", 0.1875), ("round", 0.0), ("Wait", 0.125)]
    else:  # rounds at 0.25 and 0.5
        after = [("Wait", 0.1875), ("round", 0.0), ("Wait", 0.1875)]
    assert kinds(driven) == [("round", 0.0), *after, ("round", 0.0)]
    assert driven.now == 0.5625


def test_a_woken_waiter_staggers_its_attempt_more_after_each_miss() -> None:
    """Each announcement that did not bring the permit doubles the spread of the pause
    before the next attempt, which starts at twice the round's duration, up to the
    retry delay."""
    driven = drive(
        acquiring(retry_count=4, retry_delay=0.5),
        refused,
        took=0.0625,
        missed=False,
        announced=lambda wait: 0.125,
    )
    staggers = [s.seconds for s in driven.steps if isinstance(s, Sleep)]
    assert staggers == [wake_stagger(0.0625, misses, 0.5, 0.5) for misses in range(4)]
    assert staggers == [0.0625, 0.125, 0.25, 0.25]  # half of 2 x 1/16 s, doubled, capped
    assert [type(s) for s in driven.steps].count(Wait) == 4


def test_a_woken_waiter_staggers_no_further_than_its_timeout() -> None:
    driven = drive(
        acquiring(timeout=0.25, retry_delay=0.25),
        refused,
        took=0.0625,
        missed=False,
        announced=lambda wait: 0.15625,
    )
    # woken at 0.0625 + 0.15625: a stagger of 0.0625 would overrun the timeout
    assert [s.seconds for s in driven.steps if isinstance(s, Sleep)] == [0.03125]
    assert driven.result.attempts == 2
    assert driven.now == 0.3125  # the last attempt started as the timeout ended


# --------------------------------------------------------------------------------------
# a permit's state: its slot, and what a failed acquire says
# --------------------------------------------------------------------------------------


def permit(**config: object) -> SemaphoreState:
    return SemaphoreState(
        permits=4, name="jobs", ttl_ms=10_000, servers=3,
        config=RedlockConfig(**config),  # type: ignore[arg-type]
        token_factory=lambda: TOKEN, uniform=lambda: 0.5,
    )  # fmt: skip


TOKEN = "0123456789abcdef" * 2 + "01234567"
BASE = semaphore_base("jobs")


def test_an_acquired_permit_holds_its_slot_from_the_round_on() -> None:
    state = permit()
    state.extensions, state.renew_failed, state.lost = 4, True, True  # an earlier hold's
    granted = [said(G, 2, "0010")] * 3
    driven = drive(state.acquire(blocking=False, timeout=None, now=5.0), in_turn(granted), now=5.0)
    assert driven.result is True
    assert (state.slot, state.key, state.acquired_at) == (2, f"{BASE}:2", 5.0)
    held_until = deadline(5.0, 10_000, state.config.clock_drift_factor)
    assert state.deadline == held_until
    assert (state.extensions, state.renew_failed, state.lost) == (0, False, False)
    with pytest.raises(AttributeError, match="key of its slot"):
        state.key = "other"
    with pytest.raises(LockNotReentrant):
        next(state.acquire(blocking=False, timeout=None, now=held_until - 0.001))
    # at its deadline the permit is no longer held: acquiring again is no re-entry
    again = next(state.acquire(blocking=False, timeout=None, now=held_until))
    assert isinstance(again, Fanout)
    assert again.op is Op.SEMAPHORE_ACQUIRE
    assert state.slot is None


@pytest.mark.parametrize(
    ("reply", "attempts", "error", "why"),
    [
        (X, 1, LockNotAcquired, "held by another client"),
        (X, 2, LockNotAcquired, "held by another client"),
        (TO, 1, QuorumUnavailable, "too few servers answered"),
        (Q, 1, QuorumUnavailable, "too few servers out of restart quarantine"),
    ],
)
def test_a_failed_acquire_says_why(
    reply: Reply, attempts: int, error: type[Exception], why: str
) -> None:
    state = permit(retry_count=attempts - 1, wake_on_release=False)
    answer = [said(reply, 0, "0000")] * 3
    flow = state.acquire(blocking=attempts > 1, timeout=None, now=0.0, raise_on_failure=True)
    with pytest.raises(error) as raised:
        drive(flow, lambda step: answer)
    tried = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    message = str(raised.value)
    assert f"semaphore 'jobs' ({tried}): {why}, 2 of 3 needed for one slot" in message
    assert ("Wait: the quarantine ends by itself" in message) is (reply is Q)
    assert not state.held


@pytest.mark.parametrize("reply", [X, TO])
def test_only_servers_that_kept_the_permits_out_raise_unasked(reply: Reply) -> None:
    """Other holders make a failed acquire answer False; failing servers raise."""
    flow = permit().acquire(blocking=False, timeout=None, now=0.0)
    answer = [said(reply, 0, "0000")] * 3
    if reply is X:
        assert drive(flow, lambda step: answer).result is False
    else:
        with pytest.raises(QuorumUnavailable):
            drive(flow, lambda step: answer)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_a_permit_release_is_true_iff_a_majority_still_held_it(n: int) -> None:
    for replies in itertools.product((Reply.DONE, Reply.NOT_HELD, TO), repeat=n):
        state = permit()
        state.servers, state.token, state.deadline = n, TOKEN, 9.0
        outcomes = answered(*replies)
        driven = drive(state.release(), in_turn(outcomes))
        assert driven.result is (replies.count(Reply.DONE) >= quorum(n)), replies
        (round_,) = driven.rounds
        # our token, deleted from every slot, and the waiters woken
        assert (round_.op, round_.key, round_.token) == (Op.SEMAPHORE_RELEASE, BASE, TOKEN)
        assert (round_.slots, round_.notify, round_.permits) == ((), True, 4)
        assert state.deadline is None


def test_a_lost_permit_is_released_once_and_answers_false() -> None:
    state = permit()
    state.token, state.lost = TOKEN, True
    driven = drive(state.release(), in_turn(everywhere(Reply.DONE)))
    assert driven.result is False
    assert [s.op for s in driven.rounds] == [Op.SEMAPHORE_RELEASE]
    assert not state.lost
    with pytest.raises(LockNotHeld):
        next(state.release())


def test_an_abandoned_permit_is_released_only_if_it_had_a_token() -> None:
    state = permit()
    assert drive(state.abandon(), in_turn()).rounds == []
    state.token, state.deadline = TOKEN, 9.0
    assert [s.op for s in drive(state.abandon(), in_turn(everywhere(Reply.DONE))).rounds] == [
        Op.SEMAPHORE_RELEASE
    ]
    assert state.deadline is None


def test_a_permit_is_probed_on_its_slot_and_has_no_locked() -> None:
    state = permit()
    state.token, state.deadline, state.slot = TOKEN, 9.0, 3
    ours = NodeOutcome("s", Reply.TAKEN, holder=TOKEN[:HOLDER_PREFIX])
    other = NodeOutcome("s", Reply.TAKEN, holder="f" * HOLDER_PREFIX)
    driven = drive(state.probe(mine=True), in_turn((ours, ours, other)))
    assert driven.result is True
    assert [(s.op, s.key) for s in driven.rounds] == [(Op.PROBE, f"{BASE}:3")]
    # held by others on a majority: not this permit's
    assert drive(state.probe(mine=True), in_turn((ours, other, other))).result is False
    with pytest.raises(TypeError, match="use owned"):
        next(state.probe(mine=False))
