"""The checker alone, on hand-made histories: no servers, no clock.

Each test builds the records a run would produce and checks that the checker counts
exactly the violations planted in them, and nothing in the clean histories.
"""

from __future__ import annotations

import math

import pytest

from quorumlock.testing import (
    HistoryCheck,
    Hold,
    Write,
    check_election,
    check_history,
    check_k_exclusion,
)


def check(
    holds: list[Hold], writes: list[Write] | None = None, *, end: float = 10.0, rejected: int = 0
) -> HistoryCheck:
    return check_history(holds, writes or [], start=0.0, end=end, stale_writes_rejected=rejected)


def test_a_clean_history_is_safe() -> None:
    holds = [
        Hold(worker=0, start=1.0, end=2.0, token=1),
        Hold(worker=1, start=2.0, end=3.0, token=2),  # touching is not overlapping
        Hold(worker=0, start=3.5, end=4.0, token=5),  # tokens may skip, never go back
    ]
    writes = [
        Write(worker=0, acquired=1.0, token=1),
        Write(worker=1, acquired=2.0, token=2),
        Write(worker=0, acquired=3.5, token=5),
    ]
    result = check(holds, writes, rejected=2)
    assert result.safe
    assert result.overlaps == 0
    assert result.stale_writes_accepted == 0
    assert result.token_order_violations == 0
    assert result.stale_writes_rejected == 2  # copied: the fence at work, not a violation
    assert result.acquisitions == 3
    assert result.writes == 3
    assert result.acquisitions_per_second == pytest.approx(0.3)
    assert result.longest_gap == pytest.approx(6.0)  # 4.0 .. 10.0


def test_overlapping_holds_of_two_workers_are_caught() -> None:
    holds = [
        Hold(worker=0, start=1.0, end=3.0),
        Hold(worker=1, start=2.5, end=4.0),  # inside worker 0's hold
        Hold(worker=2, start=5.0, end=6.0),
    ]
    result = check(holds)
    assert result.overlaps == 1
    assert not result.safe
    assert result.overlap_examples == ((holds[0], holds[1]),)


def test_every_intersecting_pair_counts_once() -> None:
    # One long hold and three short ones inside it, two of which intersect each other.
    holds = [
        Hold(worker=0, start=0.0, end=10.0),
        Hold(worker=1, start=1.0, end=3.0),
        Hold(worker=2, start=2.0, end=4.0),
        Hold(worker=3, start=5.0, end=6.0),
    ]
    assert check(holds).overlaps == 4  # (0,1) (0,2) (0,3) (1,2)


def test_records_in_any_order() -> None:
    holds = [Hold(worker=1, start=2.5, end=4.0), Hold(worker=0, start=1.0, end=3.0)]
    assert check(holds).overlaps == 1


def test_one_workers_own_holds_do_not_count_as_overlaps() -> None:
    holds = [Hold(worker=0, start=1.0, end=3.0), Hold(worker=0, start=2.0, end=4.0)]
    assert check(holds).overlaps == 0


def test_an_empty_hold_overlaps_nothing() -> None:
    # A holder paused right after acquire() sees no validity left: end == start. Its
    # interval is empty, so it cannot be "inside" the next holder's hold.
    holds = [Hold(worker=0, start=2.0, end=2.0, token=1), Hold(worker=1, start=1.5, end=3.0)]
    result = check(holds)
    assert result.overlaps == 0
    assert result.acquisitions == 2


def test_a_stale_write_accepted_is_caught() -> None:
    # Worker 0 acquired at 1.0 and was paused before writing; worker 1 acquired at 2.5
    # and wrote; then worker 0 woke up and wrote: the log is out of acquisition order.
    writes = [
        Write(worker=1, acquired=2.5),
        Write(worker=0, acquired=1.0),
        Write(worker=2, acquired=4.0),
    ]
    holds = [
        Hold(worker=0, start=1.0, end=2.0),
        Hold(worker=1, start=2.5, end=3.0),
        Hold(worker=2, start=4.0, end=4.5),
    ]
    result = check(holds, writes)
    assert result.overlaps == 0  # the hold intervals were fine: only the write was late
    assert result.stale_writes_accepted == 1
    assert result.stale_write_examples == (writes[1],)
    assert not result.safe


def test_every_write_behind_the_newest_is_stale() -> None:
    writes = [
        Write(worker=0, acquired=5.0),
        Write(worker=1, acquired=3.0),
        Write(worker=2, acquired=4.0),  # newer than the stale one, still older than 5.0
        Write(worker=3, acquired=6.0),
    ]
    assert check([], writes).stale_writes_accepted == 2


def test_tokens_must_increase_with_acquisitions() -> None:
    holds = [
        Hold(worker=0, start=1.0, end=2.0, token=7),
        Hold(worker=1, start=3.0, end=4.0, token=7),  # equal: a violation
        Hold(worker=2, start=5.0, end=6.0, token=3),  # lower: a violation
        Hold(worker=3, start=7.0, end=8.0, token=8),
    ]
    result = check(holds)
    assert result.token_order_violations == 2
    assert result.overlaps == 0
    assert not result.safe


def test_holds_without_tokens_are_not_token_checked() -> None:
    holds = [Hold(worker=0, start=1.0, end=2.0), Hold(worker=1, start=3.0, end=4.0, token=1)]
    assert check(holds).token_order_violations == 0


def test_longest_gap() -> None:
    holds = [
        Hold(worker=0, start=1.0, end=2.0),
        Hold(worker=1, start=1.5, end=2.5),  # overlapping holds cover the union
        Hold(worker=2, start=6.0, end=9.5),
        Hold(worker=3, start=7.0, end=7.0),  # empty: covers nothing
    ]
    assert check(holds).longest_gap == pytest.approx(3.5)  # 2.5 .. 6.0
    assert check([]).longest_gap == pytest.approx(10.0)  # nobody ever held it
    assert check([Hold(worker=0, start=-1.0, end=11.0)]).longest_gap == 0.0


def test_holds_past_the_window_are_counted_but_do_not_widen_it() -> None:
    holds = [Hold(worker=0, start=9.5, end=12.0), Hold(worker=1, start=12.0, end=13.0)]
    result = check(holds)
    assert result.acquisitions == 2
    assert result.longest_gap == pytest.approx(9.5)


@pytest.mark.parametrize(
    ("holds", "start", "end"),
    [
        ([], 5.0, 1.0),
        ([], 0.0, math.inf),
        ([Hold(worker=0, start=2.0, end=1.0)], 0.0, 10.0),
        ([Hold(worker=0, start=math.nan, end=1.0)], 0.0, 10.0),
    ],
)
def test_malformed_input_is_refused(holds: list[Hold], start: float, end: float) -> None:
    with pytest.raises(ValueError, match="bad"):
        check_history(holds, [], start=start, end=end)


@pytest.mark.parametrize("acquired", [math.nan, math.inf, -math.inf])
def test_a_write_without_a_finite_time_is_refused(acquired: float) -> None:
    # A NaN between a write and a stale one used to hide the stale one: 0 were counted.
    writes = [Write(worker=0, acquired=2.0), Write(worker=1, acquired=acquired), Write(2, 1.0)]
    with pytest.raises(ValueError, match=r"^bad write time: Write\(worker=1, acquired="):
        check_history([], writes, start=0.0, end=3.0)
    with pytest.raises(ValueError, match=r"^bad write time"):
        check_election([], writes, start=0.0, end=3.0)


def test_negative_rejections_are_refused() -> None:
    with pytest.raises(ValueError, match="stale_writes_rejected"):
        check_history([], [], start=0.0, end=1.0, stale_writes_rejected=-1)


def test_election_terms_are_checked_as_holds() -> None:
    """At most one leader at any moment within validity; terms strictly increase."""
    clean = [
        Hold(worker=0, start=1.0, end=2.0, token=3),
        Hold(worker=1, start=2.0, end=3.0, token=4),
    ]
    assert check_election(clean, [], start=0.0, end=4.0).safe
    two_leaders = [*clean, Hold(worker=2, start=2.5, end=3.5, token=9)]
    result = check_election(two_leaders, [], start=0.0, end=4.0)
    assert result.overlaps == 1
    assert not result.safe
    reused = [*clean, Hold(worker=2, start=3.5, end=3.9, token=4)]  # term 4 again
    result = check_election(reused, [], start=0.0, end=4.0)
    assert result.token_order_violations == 1
    assert not result.safe
    with pytest.raises(ValueError, match="without its number"):
        check_election([Hold(worker=0, start=1.0, end=2.0)], [], start=0.0, end=4.0)


def test_readers_may_overlap_readers_never_a_writer() -> None:
    """The read-write checker: shared holds (readers) overlap each other freely; a reader
    and a writer, or two writers, intersecting is a violation."""
    readers = [
        Hold(worker=0, start=1.0, end=3.0, shared=True),
        Hold(worker=1, start=2.0, end=4.0, shared=True),
        Hold(worker=2, start=2.5, end=3.5, shared=True),
    ]
    assert check(readers).safe
    writer = Hold(worker=3, start=3.8, end=5.0, token=7)  # meets worker 1's read
    result = check([*readers, writer])
    assert result.overlaps == 1
    assert result.overlap_examples == ((readers[1], writer),)
    later = Hold(worker=4, start=4.5, end=6.0, token=8)  # meets the writer
    assert check([*readers, writer, later]).overlaps == 2
    # A shared hold of a worker that held before, alone after the writer: fine.
    after = Hold(worker=0, start=6.0, end=7.0, shared=True)
    assert check([*readers[:1], after]).safe


# --------------------------------------------------------------------------------------
# K-exclusion (counting semaphores)
# --------------------------------------------------------------------------------------


def test_k_exclusion_counts_holders_beyond_k() -> None:
    two = [Hold(worker=0, start=0.0, end=2.0), Hold(worker=1, start=1.0, end=3.0)]
    assert check_k_exclusion(two, 2).safe
    assert check_k_exclusion(two, 2).most_at_once == 2
    third = Hold(worker=2, start=1.5, end=1.6)
    result = check_k_exclusion([*two, third], 2)
    assert not result.safe
    assert result.most_at_once == 3
    assert result.excess == 1
    assert set(result.example) == {*two, third}
    # Half-open: a hold that begins as another ends is not a third at once; empty holds
    # hold nothing.
    touching = Hold(worker=2, start=2.0, end=2.5)
    empty = Hold(worker=3, start=1.2, end=1.2)
    assert check_k_exclusion([*two, touching, empty], 2).safe
    assert check_k_exclusion([*two, touching], 1).excess == 2


@pytest.mark.parametrize("permits", [0, -1, True, 1.5])
def test_k_exclusion_refuses_bad_permits(permits: object) -> None:
    with pytest.raises(ValueError, match="permits"):
        check_k_exclusion([], permits)  # type: ignore[arg-type]


def test_k_exclusion_refuses_bad_holds() -> None:
    with pytest.raises(ValueError, match="bad hold"):
        check_k_exclusion([Hold(worker=0, start=2.0, end=1.0)], 1)
    with pytest.raises(ValueError, match="bad hold"):
        check_k_exclusion([Hold(worker=0, start=0.0, end=math.inf)], 1)
