"""How a semaphore chooses its slot, without servers: a permit is one slot granted by a
majority (a grant of another slot is a refusal), the second round asks for the slot most
servers had free, and whatever else the attempt was granted is taken back."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import ConfigurationError, NodeOutcome, RedlockConfig, Reply
from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.flows import Fanout, Op, Round
from quorumlock._algorithm.outcomes import Verdict
from quorumlock._algorithm.semaphore import (
    MAX_PERMITS,
    SemaphoreResult,
    _best_granted,
    _for_slot,
    _most_free,
    _order,
    _strays,
    check_permits,
    semaphore_acquire_flow,
)
from tests.core.scripted import drive, everywhere, in_turn

G, X, Q, TO = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.TIMEOUT


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
