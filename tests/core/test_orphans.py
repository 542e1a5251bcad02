"""The releases cut off on their way to a server, and the acquires that must not follow
them there (quorumlock._io.orphans), without servers."""

from __future__ import annotations

from dataclasses import dataclass

from quorumlock._algorithm.flows import Fanout, Op
from quorumlock._io.orphans import Orphans, withheld


def step(op: Op, token: str) -> Fanout:
    return Fanout(op, "k", token, 10_000, 0.05)


@dataclass
class Node:
    orphans: Orphans | None


def test_only_releases_are_kept() -> None:
    orphans = Orphans()
    assert not orphans.tokens
    orphans.add([step(Op.ACQUIRE, "a"), step(Op.EXTEND, "b"), step(Op.PROBE, "c")])
    assert not orphans.tokens
    orphans.add([step(Op.RELEASE, "d"), step(Op.RW_RELEASE, "e"), step(Op.SEMAPHORE_RELEASE, "f")])
    assert [t in orphans for t in "abcdef"] == [False, False, False, True, True, True]


def test_the_oldest_token_goes_first() -> None:
    orphans = Orphans(most=2)
    for token in ("a", "b", "a", "c"):  # "a" again: the newest of the three
        orphans.add([step(Op.RELEASE, token)])
    assert [t in orphans for t in "abc"] == [True, False, True]


def test_an_acquire_of_an_orphaned_token_is_withheld_there_only() -> None:
    kept = Orphans()
    kept.add([step(Op.RELEASE, "t")])
    nodes = [Node(Orphans()), Node(kept), Node(None), Node(kept)]  # None: a route, unmapped
    for op in (Op.ACQUIRE, Op.RW_WRITE, Op.RW_READ, Op.SEMAPHORE_ACQUIRE):
        assert withheld(step(op, "t"), nodes) == {1, 3}
        assert withheld(step(op, "u"), nodes) == frozenset()
    for op in (Op.RELEASE, Op.EXTEND, Op.RW_RELEASE):  # a release may always go
        assert withheld(step(op, "t"), nodes) == frozenset()
