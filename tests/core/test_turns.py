"""Taking a lock back: when a release of this process may leave the next waiter asleep,
and the wake-ups it then owes (``quorumlock._io.wakeups.Turns``, docs/algorithm.md,
"Waiting", step 10). Pure: every time is given."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock._algorithm.arithmetic import (
    KEPT_LOOK,
    KEPT_WAKE,
    TAKE_BACK_HOLD,
    TAKE_BACK_HOLDS,
    TAKE_BACK_TURN,
)
from quorumlock._io.wakeups import Turns

ROUND = 0.0001  # how long a release round takes here
AT_ONCE = ROUND / 10  # an acquire this long after a release came at once


def cycle(turns: Turns, now: float, key: str = "k", *, kept: bool = False) -> float:
    """A release of ``key`` (``kept``: it kept the turn), then an acquire at once whose
    attempt was granted: the hold that follows may be taken back. Returns the time."""
    turns.released(key, now, now + ROUND, kept=kept)
    now += ROUND + AT_ONCE
    turns.asked(key, now)
    turns.held(key, now + ROUND)
    return now + ROUND


def looping(turns: Turns, now: float, key: str = "k") -> float:
    """A release that woke the line, then a hold asked for at once (see ``cycle``)."""
    return cycle(turns, now, key)


def take_back(turns: Turns, now: float) -> float:
    """A release that kept the turn, then a hold taken back (see ``cycle``)."""
    return cycle(turns, now, kept=True)


def test_a_name_never_released_here_wakes_the_line() -> None:
    turns = Turns()
    turns.asked("k", 1.0)
    turns.held("k", 1.0)
    assert not turns.keep("k", 1.0)


def test_a_short_hold_asked_for_at_once_is_taken_back() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    assert turns.keep("k", now + AT_ONCE)
    assert not turns.keep("other", now + AT_ONCE)


def test_an_acquire_that_came_later_than_a_release_round_does_not_take_back() -> None:
    turns = Turns()
    turns.released("k", 1.0, 1.0 + ROUND, kept=False)
    turns.asked("k", 1.0 + 2 * ROUND + AT_ONCE)  # something in between took a round trip
    turns.held("k", 1.0 + 3 * ROUND)
    assert not turns.keep("k", 1.0 + 3 * ROUND)


def test_a_hold_whose_grant_is_unknown_does_not_take_back() -> None:
    """An acquire that was no waiter's attempt (nothing told when its hold began)."""
    turns = Turns()
    turns.released("k", 1.0, 1.0 + ROUND, kept=False)
    turns.asked("k", 1.0 + ROUND + AT_ONCE)
    assert not turns.keep("k", 1.0 + 2 * ROUND)


def test_a_long_hold_wakes_the_line() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    assert turns.keep("k", now + TAKE_BACK_HOLD - ROUND)
    assert not turns.keep("k", now + TAKE_BACK_HOLD + ROUND)


def test_holds_taken_back_with_a_plain_attempt_are_timed_from_their_acquire() -> None:
    """A hold taken back is granted to a plain attempt, which tells nobody when the hold
    began: its length counts from its acquire's start."""
    turns = Turns()
    now = looping(turns, 1.0)
    for _ in range(3):
        assert turns.keep("k", now)
        turns.released("k", now, now + ROUND, kept=True)
        now += ROUND + AT_ONCE
        assert turns.asked("k", now)  # no grant is told: no held()
        now += ROUND
    assert turns.keep("k", now + TAKE_BACK_HOLD - 2 * ROUND)
    assert not turns.keep("k", now + TAKE_BACK_HOLD)


def test_an_acquire_at_once_then_a_wait_in_line_keeps_a_short_hold_only() -> None:
    """A process that asked again soon after a release that woke the line (sooner than
    that release's round took: "at once") stood in line and got the lock much later.
    A short hold then starts its turn (a loop of short holds whose turn came round
    again); a long one is not a loop's: its release wakes the line."""
    for hold, kept in ((TAKE_BACK_HOLD / 2, True), (5 * TAKE_BACK_HOLD, False)):
        turns = Turns()
        turns.released("k", 1.0, 1.0 + 10 * ROUND, kept=False)
        turns.asked("k", 1.0 + 10 * ROUND + 5 * ROUND)  # at once, by the round's length
        granted = 1.5  # after the others' turns
        turns.held("k", granted)
        assert turns.keep("k", granted + hold) is kept


def test_holds_in_a_row_end_at_the_most_then_start_afresh() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    kept = 0
    while turns.keep("k", now):
        now = take_back(turns, now)
        kept += 1
        assert kept <= TAKE_BACK_HOLDS
    assert kept == TAKE_BACK_HOLDS  # each cycle is short: the count ends it, not the time
    assert now - 1.0 < TAKE_BACK_TURN
    now = looping(turns, now)  # the release that woke the line, and a hold at once after
    assert turns.keep("k", now)


def test_holds_in_a_row_end_when_the_turn_is_over() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    first = now - ROUND  # when the first hold began
    kept = 0
    while turns.keep("k", now):
        now = take_back(turns, now + TAKE_BACK_HOLD / 2)  # short holds, but many
        kept += 1
    assert 1 <= kept < TAKE_BACK_HOLDS
    assert now - first >= TAKE_BACK_TURN


def test_a_kept_release_owes_a_wake_up_unless_the_process_asks_again() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=True)
    due = now + ROUND + KEPT_WAKE
    assert turns.next_due() == pytest.approx(due)
    assert turns.due(due - AT_ONCE) == []
    assert turns.due(due) == ["k"]
    assert turns.next_due() is None
    assert turns.due(due + 1) == []  # once


def test_a_wake_up_called_off_stays_on_the_schedule_while_the_holds_may_go_on() -> None:
    """Whoever sends the wake-ups looks again one ``KEPT_LOOK`` later, not at every
    release; the schedule ends with the holds in a row."""
    turns = Turns()
    now = looping(turns, 1.0)
    now = take_back(turns, now)  # kept, and asked for again: nothing owed
    due = turns.next_due()
    assert due is not None
    assert turns.due(due) == []
    assert turns.next_due() == pytest.approx(due + KEPT_LOOK)
    assert turns.due(due + TAKE_BACK_TURN) == []  # the turn is over: off the schedule
    assert turns.next_due() is None


def test_a_later_release_leaves_the_look_on_the_schedule_where_it_is() -> None:
    turns = Turns()
    now = take_back(turns, looping(turns, 1.0))
    look = turns.next_due()
    for _ in range(5):
        now = take_back(turns, now)
        assert turns.next_due() == look


def test_a_look_before_the_last_release_is_old_enough_waits_for_it() -> None:
    """The look comes sooner than ``KEPT_WAKE`` after the last release: the process may
    still come back (and takes the lock back if it does); the wake-up is sent once the
    release is that old."""
    turns = Turns()
    take_back(turns, looping(turns, 1.0))
    look = turns.next_due()
    assert look is not None
    last = look - ROUND - AT_ONCE  # the last release returns just before the look
    turns.released("k", last - ROUND, last, kept=True)
    assert turns.due(look) == []
    assert turns.next_due() == pytest.approx(last + KEPT_WAKE)
    assert turns.due(last + KEPT_WAKE) == ["k"]
    assert turns.next_due() is None

    turns = Turns()
    take_back(turns, looping(turns, 1.0))
    look = turns.next_due()
    assert look is not None
    last = look - ROUND - AT_ONCE
    turns.released("k", last - ROUND, last, kept=True)
    assert turns.due(look) == []
    assert turns.asked("k", last + KEPT_WAKE - AT_ONCE)  # came back in time: takes it back


@given(
    gaps=st.lists(st.floats(0, KEPT_WAKE * 0.9), min_size=1, max_size=8),
    hold=st.floats(0, KEPT_WAKE),
)
def test_a_loop_that_stops_is_woken_after_between_kept_wake_and_kept_look(
    gaps: list[float], hold: float
) -> None:
    """Whatever the pauses of a loop of holds taken back (each shorter than
    ``KEPT_WAKE``, so that none owes its wake-up) and whenever whoever sends the
    wake-ups looks as the schedule says: nothing is sent while the loop goes on, and
    after the loop's last release (it kept the turn) the wake-up is sent no sooner than
    ``KEPT_WAKE`` and no later than ``KEPT_LOOK`` after it."""
    turns = Turns()
    now = looping(turns, 1.0)
    sent: list[float] = []

    def look_until(at: float) -> None:
        while (due := turns.next_due()) is not None and due <= at:
            sent.extend(due for _ in turns.due(due))

    for gap in gaps:
        now += hold
        assert turns.keep("k", now)  # the holds in a row fit in a turn
        turns.released("k", now, now + ROUND, kept=True)
        now += ROUND
        look_until(now + gap)
        now += gap
        assert turns.asked("k", now)
        turns.held("k", now + ROUND)
        now += ROUND
        look_until(now)
    assert sent == []
    now += hold
    assert turns.keep("k", now)
    turns.released("k", now, now + ROUND, kept=True)
    last = now + ROUND
    look_until(last + 1.0)
    assert len(sent) == 1
    assert last + KEPT_WAKE <= sent[0] <= last + max(KEPT_WAKE, KEPT_LOOK)


def test_a_release_that_wakes_the_line_owes_nothing() -> None:
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=False)
    assert turns.next_due() is None
    assert turns.due(None) == []


def test_closing_takes_every_wake_up_owed_whenever_due() -> None:
    turns = Turns()
    for key in ("a", "b"):
        now = looping(turns, 1.0, key)
        turns.released(key, now, now + ROUND, kept=True)
    assert sorted(turns.due(None)) == ["a", "b"]
    assert turns.next_due() is None


def test_at_most_so_many_names_are_remembered_the_oldest_released_goes_first() -> None:
    turns = Turns(most=2)
    for i, key in enumerate(("a", "b", "c")):
        looping(turns, 1.0 + i, key)
    assert not turns.keep("a", 5.0)
    now = looping(turns, 10.0, "c")
    assert turns.keep("c", now)


@given(
    st.lists(
        st.tuples(st.sampled_from(["k", "j"]), st.floats(0, TAKE_BACK_TURN / 2)),
        min_size=1,
        max_size=60,
    )
)
def test_no_name_is_taken_back_more_than_the_most_in_a_row(
    cycles: list[tuple[str, float]],
) -> None:
    """Whatever the holds, names and timings: between two releases of a name that woke
    the line, at most ``TAKE_BACK_HOLDS`` kept it, within ``TAKE_BACK_TURN``."""
    turns = Turns()
    now = 1.0
    row: dict[str, list[float]] = {}
    for key, hold in cycles:
        turns.asked(key, now)
        turns.held(key, now)
        began = now
        now += hold
        kept = turns.keep(key, now)
        turns.released(key, now, now + ROUND, kept=kept)
        now += ROUND + AT_ONCE
        if kept:
            row.setdefault(key, []).append(began)
            assert len(row[key]) <= TAKE_BACK_HOLDS
            assert now - ROUND - AT_ONCE - row[key][0] < TAKE_BACK_TURN
        else:
            row.pop(key, None)


def test_an_acquire_at_once_after_a_release_that_kept_the_turn_takes_the_lock_back() -> None:
    """Its first attempt is a plain one; after a release that woke the line, or one whose
    wake-up was sent already, the acquire is a waiter's (it stands behind, or races the
    waiter woken, as any waiter of the process would)."""
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=True)
    assert turns.asked("k", now + ROUND + AT_ONCE)
    turns.held("k", now + 2 * ROUND)
    now += 3 * ROUND
    turns.released("k", now, now + ROUND, kept=False)  # the line woken
    assert not turns.asked("k", now + ROUND + AT_ONCE)
    now = looping(turns, now + 2 * ROUND)
    turns.released("k", now, now + ROUND, kept=True)
    assert turns.due(now + ROUND + KEPT_WAKE) == ["k"]  # sent: the waiter is awake
    assert not turns.asked("k", now + ROUND + KEPT_WAKE + AT_ONCE)
    assert not turns.asked("other", now)


def test_an_acquire_before_the_owed_wake_up_is_due_takes_the_lock_back() -> None:
    """Later than at once, but nobody was told the lock is free: the process was only
    delayed (by the scheduler of a busy host, say), and its holds go on."""
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=True)
    late = now + ROUND + KEPT_WAKE - AT_ONCE
    assert turns.asked("k", late)
    turns.held("k", late + ROUND)
    assert turns.keep("k", late + ROUND)


def test_an_acquire_once_the_owed_wake_up_is_due_does_not_take_the_lock_back() -> None:
    """Not sent yet (whoever sends it is late), but due: the line's turn."""
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=True)
    assert not turns.asked("k", now + ROUND + KEPT_WAKE)
    turns.held("k", now + 2 * ROUND + KEPT_WAKE)
    assert not turns.keep("k", now + 2 * ROUND + KEPT_WAKE)


def test_a_round_longer_than_the_wait_for_the_wake_up_still_takes_the_lock_back_at_once() -> None:
    """A slow network: the release's round took longer than ``KEPT_WAKE``; an acquire at
    once after it takes the lock back while the wake-up is not sent."""
    turns = Turns()
    now = looping(turns, 1.0)
    took = 3 * KEPT_WAKE
    turns.released("k", now, now + took, kept=True)
    assert turns.asked("k", now + took + 2 * KEPT_WAKE)


def test_a_second_acquire_after_one_release_does_not_take_the_lock_back() -> None:
    """The first took the lock back (refused or given up, say): no wake-up is owed any
    more, and the next acquire is a waiter's."""
    turns = Turns()
    now = looping(turns, 1.0)
    turns.released("k", now, now + ROUND, kept=True)
    assert turns.asked("k", now + ROUND + AT_ONCE)
    assert not turns.asked("k", now + ROUND + 2 * AT_ONCE)
