"""Judging a round of answers, exhaustively for N = 1 to 5."""

from __future__ import annotations

import itertools

import pytest

from quorumlock import NodeOutcome, Reply
from quorumlock._algorithm.outcomes import (
    NEW_SERVER,
    Verdict,
    judge_acquire,
    quarantine_advice,
    quarantine_cause,
    render_outcomes,
)
from quorumlock._algorithm.scripts import LOSS_COMMANDS

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


# --------------------------------------------------------------------------------------
# why a server is quarantined, in words
# --------------------------------------------------------------------------------------

# each cause the acquire script can record in a server's marker, and what its message says
CAUSES = {
    "start": f"no quorumlock marker on a server that started at 2026-11-30 12:00:00 UTC: "
    f"{NEW_SERVER}",
    "restart": "restarted at 2026-11-30 12:00:00 UTC (its last writes",
    "promotion": "a replica promoted to master",
    "eviction": "evicted keys (maxmemory)",
    "flushall": "emptied (FLUSHALL since it started)",
    "flushdb": "emptied (FLUSHDB since it started)",
    "swapdb": "emptied (SWAPDB since it started)",
    "debug": "DEBUG ran since it started",
    "replicaof": "REPLICAOF ran since it started",
    "slaveof": "SLAVEOF ran since it started",
    "failover": "FAILOVER ran since it started",
    "config|resetstat": "statistics were reset (CONFIG RESETSTAT)",
    "cluster": "a cluster node without this slot's marker",
}
NOON_MS = 1_796_040_000_000  # 2026-11-30 12:00:00 UTC


def test_every_cause_the_acquire_script_records_has_its_own_message() -> None:
    """Catches a sign of data loss added to the script without a message (the user would
    read only "it lost its memory")."""
    assert set(CAUSES) == {*LOSS_COMMANDS, "start", "restart", "promotion", "eviction", "cluster"}
    for lost, says in CAUSES.items():
        assert says in quarantine_cause(lost, NOON_MS), lost
    assert quarantine_cause("unknown", None) == "it lost its memory"
    assert quarantine_cause("restart", None) == (
        "restarted (its last writes before the restart may be lost)"
    )


def test_the_advice_names_the_init_command_only_for_a_server_that_may_be_new() -> None:
    def quarantined(lost: str) -> NodeOutcome:
        return NodeOutcome("s0", Reply.QUARANTINED, quarantine_cause(lost, NOON_MS))

    assert quarantine_advice([NodeOutcome("s0", Reply.GRANTED)]) == ""
    restarted = quarantine_advice([NodeOutcome("s1", Reply.GRANTED), quarantined("restart")])
    assert restarted.startswith("Wait: the quarantine ends by itself")
    assert "servers init" not in restarted
    assert restarted.endswith("See docs/safety.md (B1).")
    new = quarantine_advice([quarantined("restart"), quarantined("start")])
    assert "mark it as new with 'quorumlock servers init URL'" in new
