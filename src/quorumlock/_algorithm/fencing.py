"""Fencing tokens across the quorum: which token an acquisition gets, and when
it is safe to hand out.

Pure. Each server keeps one fencing counter (in its incarnation marker) that the acquire
script raises by one on every attempt. An acquisition's token is the largest counter
among the servers whose grant counted. A token is *stuck* once a majority of servers
that granted the lock hold a counter >= the token while they still hold our key.

Why tokens strictly increase, across all holders over time. Say holder A got token
``a``, stuck on a majority S_A, and holder B acquires the same lock later. B's counted
grants form a majority M_B, so S_A and M_B share a server s. On s, B's grant came after
A's key was gone (it expired or was released), and A's key was still there when s's
counter reached ``a``; the counter only grows, so B's attempt raised it above ``a``, and
B's token, the largest among M_B, is > ``a``. Timeline (N = 3, servers x, y, z)::

    t=0    A: counters x=7 y=7 z=6 (z missed an attempt); A's grants x, y, z -> token 7
           stuck on x and y (a majority at 7): no commit round needed
    t=5    A pauses (GC) past its ttl; its keys expire
    t=12   B: grants on y, z -> counters y=8 z=7 -> token 8 > 7: A's late write, fenced
           at 7, is refused by a resource that has seen 8

When the counters disagree so that fewer than a majority of granting servers are at the
token, one more round (COMMIT_FENCE) raises them and checks our key is still there.

A server that loses its memory loses its counter too; it is then in restart quarantine
(no grant of it counts), and its first count after the quarantine raises the counter to
its clock in microseconds, which is above every token issued before the loss provided
the servers' clocks agree within ``max_ttl / 2`` (docs/safety.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.outcomes import NodeOutcome, Reply

__all__ = ["draw_fence", "fence_committed"]


def draw_fence(outcomes: Sequence[NodeOutcome]) -> tuple[int, bool]:
    """``(token, stuck)`` for a successful acquire round with fencing on.

    ``token`` is the largest counter among the counted grants; ``stuck`` says whether a
    majority of all servers granted the lock with their counter already at the token
    (no commit round needed). Raises ``ValueError`` if no counted grant carries a counter.
    """
    counters = [o.fence for o in outcomes if o.reply is Reply.GRANTED and o.fence is not None]
    if not counters:
        raise ValueError("no granted server returned a fencing counter")
    token = max(counters)
    return token, counters.count(token) >= quorum(len(outcomes))


def fence_committed(
    acquired: Sequence[NodeOutcome], committed: Sequence[NodeOutcome], token: int | None = None
) -> bool:
    """Whether the token is stuck after a commit round.

    A server counts if its grant counted and either its counter already was the token or
    it confirmed the commit (counter raised, our key still there). ``acquired`` and
    ``committed`` are in server order.
    """
    if len(acquired) != len(committed):
        raise ValueError("the two rounds must list the same servers")
    if token is None:
        token, _ = draw_fence(acquired)
    stuck = sum(
        1
        for got, commit in zip(acquired, committed, strict=True)
        if got.reply is Reply.GRANTED and (got.fence == token or commit.reply is Reply.DONE)
    )
    return stuck >= quorum(len(acquired))
