"""Judging a round of answers, exhaustively for N = 1 to 5."""

from __future__ import annotations

import itertools

import pytest

from quorumlock import NodeOutcome, Reply
from quorumlock._algorithm.outcomes import Verdict, judge_acquire, render_outcomes

ACQUIRE_REPLIES = [Reply.GRANTED, Reply.TAKEN, Reply.ERROR, Reply.FATAL, Reply.TIMEOUT]


def outcomes(*replies: Reply) -> list[NodeOutcome]:
    return [NodeOutcome(f"s{i}", r) for i, r in enumerate(replies)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_every_combination_of_answers(n: int) -> None:
    for combo in itertools.product(ACQUIRE_REPLIES, repeat=n):
        for in_time in (True, False):
            verdict = judge_acquire(outcomes(*combo), in_time=in_time)
            granted = combo.count(Reply.GRANTED)
            answered = granted + combo.count(Reply.TAKEN)
            usable = n - combo.count(Reply.FATAL)
            majority = n // 2 + 1
            if granted >= majority:
                expected = Verdict.ACQUIRED if in_time else Verdict.EXPIRED
            elif usable < majority:
                expected = Verdict.FATAL
            elif answered < majority:
                expected = Verdict.UNAVAILABLE
            else:
                expected = Verdict.CONTENDED
            assert verdict is expected, (combo, in_time)


def test_a_minority_of_grants_is_never_a_lock() -> None:
    assert judge_acquire(
        outcomes(Reply.GRANTED, Reply.GRANTED, *[Reply.TAKEN] * 3), in_time=True
    ) is (Verdict.CONTENDED)


def test_a_majority_too_late_is_not_a_lock() -> None:
    assert judge_acquire(outcomes(Reply.GRANTED, Reply.GRANTED, Reply.TAKEN), in_time=False) is (
        Verdict.EXPIRED
    )


def test_reply_classes() -> None:
    assert {r for r in Reply if r.answered} == {
        Reply.GRANTED,
        Reply.TAKEN,
        Reply.DONE,
        Reply.NOT_HELD,
    }
    assert {r for r in Reply if r.ok} == {Reply.GRANTED, Reply.DONE}


def test_rendering_names_every_server_and_never_more() -> None:
    line = render_outcomes(
        [
            NodeOutcome("redis://a:1", Reply.GRANTED, latency=0.001),
            NodeOutcome("redis://b:2", Reply.ERROR, "Connection refused"),
        ]
    )
    assert line == "redis://a:1: granted; redis://b:2: error (Connection refused)"
