"""The checker of multi-resource locks, on hand-made histories: no servers, no clock.

Two holders of overlapping sets must never overlap in time; disjoint sets may.
"""

from __future__ import annotations

from quorumlock.testing import SetHold, overlapping_set_pairs


def hold(worker: int, start: float, end: float, *names: str) -> SetHold:
    return SetHold(worker=worker, start=start, end=end, names=frozenset(names))


def test_disjoint_sets_may_overlap_in_time() -> None:
    holds = [hold(0, 0.0, 2.0, "a", "b"), hold(1, 1.0, 3.0, "c", "d")]
    assert list(overlapping_set_pairs(holds)) == []


def test_sets_sharing_a_name_that_overlap_in_time_are_caught_once() -> None:
    holds = [
        hold(0, 0.0, 2.0, "a", "b"),
        hold(1, 1.0, 3.0, "b", "a"),  # shares two names: one pair, not two
        hold(2, 2.5, 4.0, "c"),
        hold(3, 3.5, 5.0, "c", "x"),
    ]
    assert list(overlapping_set_pairs(holds)) == [(holds[0], holds[1]), (holds[2], holds[3])]


def test_touching_empty_and_same_worker_holds_are_not_overlaps() -> None:
    holds = [
        hold(0, 0.0, 1.0, "a"),
        hold(1, 1.0, 2.0, "a", "b"),  # half-open: touching is not overlapping
        hold(2, 1.5, 1.5, "b"),  # empty: the holder saw no validity left
        hold(1, 1.8, 2.5, "b"),  # the same worker (a new acquisition of its own)
    ]
    assert list(overlapping_set_pairs(holds)) == []


def test_a_chain_of_overlapping_sets_is_not_transitive() -> None:
    """{a,b} and {b,c} conflict, {b,c} and {c,d} conflict, {a,b} and {c,d} do not."""
    holds = [hold(0, 0.0, 3.0, "a", "b"), hold(1, 1.0, 4.0, "b", "c"), hold(2, 2.0, 5.0, "c", "d")]
    assert list(overlapping_set_pairs(holds)) == [(holds[0], holds[1]), (holds[1], holds[2])]
