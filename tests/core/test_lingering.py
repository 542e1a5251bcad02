"""Subscriptions kept after their last waiter left (``Lingering``), when a process that
kept one can vouch that it missed no release (``heard_everything``), and which waiter an
announcement on the process's own channel is for (``route``). Pure code."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._io import wakeups
from quorumlock._io.async_wakeups import AsyncWaiter, AsyncWakeups
from quorumlock._io.wakeups import (
    LINGER,
    Entry,
    Lingering,
    Stood,
    SyncWakeups,
    Turns,
    Waiter,
    Woke,
    arrival,
    dismiss,
    enlist,
    hand_on,
    heard_everything,
    may_keep,
    note_woke,
    owed,
    release_channel,
    route,
    spot_behind,
    stand_in,
    wake_channel,
    wakes_a_newcomer,
)

A, B, C = b"quorumlock:released:a", b"quorumlock:released:b", b"quorumlock:released:c"


def test_a_channel_lingers_for_its_time_then_is_forgotten() -> None:
    lingering = Lingering(seconds=5.0)
    lingering.leave([A], now=10.0)
    lingering.leave([B], now=12.0)
    assert lingering.channels(14.9) == {A, B}
    assert lingering.channels(15.0) == {B}
    assert lingering.take(A) is None  # forgotten: not lingering any more
    assert lingering.channels(17.0) == set()


def test_taking_a_channel_answers_when_it_last_heard_an_announcement() -> None:
    lingering = Lingering(seconds=5.0)
    lingering.leave([A, B], now=10.0)
    lingering.heard(A, 11.0)
    lingering.heard(A, 12.5)
    lingering.heard(C, 12.0)  # not lingering: ignored
    assert lingering.take(A) == 12.5
    assert lingering.take(B) == -math.inf  # nothing came
    assert lingering.take(C) is None
    assert lingering.channels(11.0) == set()  # taken: waited on again, not lingering


def test_leaving_again_starts_the_time_afresh_and_forgets_what_was_heard() -> None:
    lingering = Lingering(seconds=5.0)
    lingering.leave([A], now=10.0)
    lingering.heard(A, 11.0)
    assert lingering.take(A) == 11.0
    lingering.leave([A], now=20.0)
    assert lingering.channels(24.0) == {A}
    assert lingering.take(A) == -math.inf


def test_at_most_so_many_channels_linger_the_oldest_goes_first() -> None:
    lingering = Lingering(seconds=5.0, most=2)
    lingering.leave([A], now=10.0)
    lingering.leave([B], now=11.0)
    lingering.leave([A], now=12.0)  # left again: now the newest
    lingering.leave([C], now=13.0)
    assert lingering.channels(13.0) == {A, C}


@dataclass
class Listener:
    confirmed: dict[bytes, float] = field(default_factory=dict)
    refused: bool = False


#: The process's own channel, on which releases that name it come.
WAKE = b"quorumlock:wake:5f2a9c0e11d3b7a4"


def listeners(*times: float | None) -> list[Listener]:
    """One listener per server; each confirmed channel A and the process's own at that
    time (None: not)."""
    return [Listener({} if t is None else {A: t, WAKE: t}) for t in times]


@pytest.mark.parametrize(
    ("confirmed", "heard", "expected"),
    [
        ((1.0, 1.0, 1.0, None, None), -math.inf, True),  # a majority, confirmed early
        ((1.0, 1.0, None, None, None), -math.inf, False),  # a minority
        ((1.0, 1.0, 6.0, 6.0, 6.0), -math.inf, False),  # re-confirmed after the attempt
        ((1.0, 1.0, 5.0, None, None), -math.inf, True),  # confirmed when it was sent
        ((1.0, 1.0, 1.0, 1.0, 1.0), 4.9, True),  # heard before the attempt was sent
        ((1.0, 1.0, 1.0, 1.0, 1.0), 5.0, False),  # heard from then on: may be missed
        ((1.0, 1.0, 1.0, 1.0, 1.0), None, False),  # not lingering: a new subscription
    ],
)
def test_a_process_vouches_only_for_what_a_majority_listened_to_all_along(
    confirmed: tuple[float | None, ...], heard: float | None, expected: bool
) -> None:
    assert heard_everything(listeners(*confirmed), [heard], [A], since=5.0, wake=WAKE) is expected


def test_the_process_channel_must_have_been_listened_to_as_well() -> None:
    """A release that names the process comes on its own channel: subscribed after the
    attempt was sent (a majority), it may have been missed."""
    late = [Listener({A: 1.0, WAKE: 6.0}) for _ in range(3)]
    assert not heard_everything(late, [-math.inf], [A], since=5.0, wake=WAKE)
    mixed = [Listener({A: 1.0, WAKE: t}) for t in (1.0, 6.0, 6.0)]
    assert not heard_everything(mixed, [-math.inf], [A], since=5.0, wake=WAKE)
    early = [Listener({A: 1.0, WAKE: t}) for t in (1.0, 1.0, 6.0)]
    assert heard_everything(early, [-math.inf], [A], since=5.0, wake=WAKE)


def test_every_channel_of_a_set_must_have_been_listened_to() -> None:
    both = [Listener({A: 1.0, B: 1.0, WAKE: 1.0}) for _ in range(3)]
    assert heard_everything(both, [-math.inf, -math.inf], [A, B], since=5.0, wake=WAKE)
    assert not heard_everything(both, [-math.inf, None], [A, B], since=5.0, wake=WAKE)
    only_a = [Listener({A: 1.0, WAKE: 1.0}) for _ in range(3)]
    assert not heard_everything(only_a, [-math.inf, -math.inf], [A, B], since=5.0, wake=WAKE)


@pytest.mark.parametrize(
    ("payload", "wakes"),
    [
        (b"", True),  # a kind of lock without a queue: wakes every waiter
        (b" 0123abcd", True),  # an empty queue: names nobody, wakes one in every process
        (b"5f2a9c0e11d3b7a4 0123abcd", False),  # names the head: wakes its process only
    ],
)
def test_only_an_announcement_that_names_nobody_could_wake_a_newcomer(
    payload: bytes, wakes: bool
) -> None:
    assert wakes_a_newcomer(payload) is wakes


def _waiting(entries: dict[bytes, Entry[Waiter]], key: str, member: str) -> Waiter:
    channel = release_channel(key)
    entry = entries.setdefault(channel, Entry(member))
    waiter = Waiter(channel, entry)
    entry.waiters.append(waiter)
    return waiter


def test_a_release_on_the_process_channel_wakes_its_waiter_of_that_name_alone() -> None:
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    spaced = _waiting(entries, "acct 1:x", member)  # a name with a space in it
    prefix = _waiting(entries, "acct", member)  # a name that starts the other one
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=wake, payload=b"8 acct 1:xtok-1", now=1.0)
    assert spaced.notified()
    assert spaced.alone  # named: nobody else was woken
    assert not prefix.notified()
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-2", now=1.0)
    assert prefix.notified()


def test_a_release_that_finds_its_waiter_woken_already_wakes_it_again_after_its_attempt() -> None:
    """A waiter woken by one release (its announcement named nobody: a stagger's pause
    follows) hears a second release name it before it has tried. Its attempt then meets
    that release in flight and may fail; the second release's later announcements wake
    it again once the attempt is sent, as they would had they woken it first (else the
    lock, free, would wait for a poll)."""
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", member)
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=release_channel("acct"), payload=b" tok-1", now=1.0)
    assert waiter.notified()
    assert not waiter.alone
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-2", now=1.1)
    waiter.rearm()  # its attempt goes out
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-2", now=1.2)
    assert waiter.notified()
    assert waiter.alone


def test_a_release_that_names_the_process_makes_a_waiter_woken_to_requeue_try() -> None:
    """Two threads of a process wait on one name. The first's attempt takes the lock, so
    the second is woken to put the process's entry back in line (``requeue``). Before it
    has, the first thread's release names the entry: the second must try, not only join
    again (the entry would then head the line with nobody trying, and every process
    wait for a poll)."""
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    first = _waiting(entries, "acct", member)
    second = _waiting(entries, "acct", member)
    granted = [NodeOutcome(f"s{i}", Reply.GRANTED) for i in range(5)]
    first.entry.attempted(first, granted, 0.0)
    assert second.requeue  # the first took the lock: the second puts the entry back
    dismiss(entries, first)  # and stops waiting
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=0.1)
    assert second.notified()
    assert second.alone  # named: it tries, and nobody else was woken
    assert not second.requeue
    second.settle()  # (what its join does first: a wake-up to try stays)
    assert second.notified()


def test_a_later_announcement_makes_its_waiter_try_again_if_it_was_woken_to_requeue() -> None:
    """A release names the entry: its first announcement wakes one waiter, which tries
    and fails (the release had not reached every server yet), and is then woken to put
    the entry back in line by the other waiter's attempt, which took the lock. The
    release's next announcement must wake it to try again, as it would have had it not
    been woken in between."""
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    first = _waiting(entries, "acct", member)
    second = _waiting(entries, "acct", member)
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=1.0)
    assert first.alone
    assert second.requeue
    first.rearm()  # its attempt goes out (and fails)
    second.rearm()  # the second's poll: its attempt goes out, and takes the lock
    granted = [NodeOutcome(f"s{i}", Reply.GRANTED) for i in range(5)]
    second.entry.attempted(second, granted, 1.1)
    assert first.requeue
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=1.2)
    assert first.notified()
    assert first.alone
    assert not first.requeue


@pytest.mark.parametrize(
    "payload",
    [b"", b"acct tok", b"99 acct", b"-4 acct", b"4 gone-tok"],  # the last: nobody waits
)
def test_a_malformed_or_unknown_release_on_the_process_channel_wakes_nobody(
    payload: bytes,
) -> None:
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", member)
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=wake, payload=payload, now=1.0)
    assert not waiter.notified()


def test_a_name_channel_still_carries_the_announcements_that_name_nobody() -> None:
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", member)
    lingering = Lingering(seconds=5.0)
    lingering.leave([A], now=0.0)
    wake = wake_channel(member)
    route(entries, lingering, wake, channel=release_channel("acct"), payload=b" tok", now=1.0)
    assert waiter.notified()
    assert not waiter.alone
    route(entries, lingering, wake, channel=A, payload=b" tok", now=2.0)
    assert lingering.take(A) == 2.0  # heard while it lingered: a newcomer may have missed it


def test_an_attempt_that_named_the_entry_sends_it_back_in_line_where_it_may_have_left() -> None:
    """The queued acquire takes the process's entry off the queue where it writes the
    lock: a failed attempt joins again after it, and another waiter of the process that
    stood in line by the same entry puts it back at once. Refused everywhere (TAKEN),
    nothing was written and nothing changes."""
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    first = _waiting(entries, "acct", member)
    second = _waiting(entries, "acct", member)
    entry = first.entry
    assert entry.member_for(first) == member  # every attempt of a waiter names the entry
    joined = entry.join(first, 3000, now=0.0)
    assert joined is not None
    assert joined[0] == member
    assert entry.member_for(first) == member

    taken = [NodeOutcome(f"s{i}", Reply.TAKEN) for i in range(5)]
    entry.attempted(first, taken, 0.05)
    assert not first.popped
    assert not second.notified()
    assert entry.join(first, 3000, now=0.1) is None  # still in line: nothing to send

    granted = [NodeOutcome("s0", Reply.GRANTED), *taken[1:]]
    entry.attempted(first, granted, 0.15)
    assert first.popped  # left the line on s0: the next join is sent
    assert second.notified()  # the entry was its place in line too
    assert second.requeue
    assert entry.join(first, 3000, now=0.2) is not None

    entry.refused = True
    assert entry.member_for(first) == ""


def test_an_attempt_refused_and_put_in_line_by_a_majority_needs_no_join() -> None:
    """The acquire script of a waiter puts its entry in line where it is refused: put
    there by a majority, the entry is in line as after a join (no join is sent), and its
    lease counts from then; by fewer, the join is sent."""
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", "m")
    entry = waiter.entry

    def refused(*places: int | None) -> list[NodeOutcome]:
        return [NodeOutcome(f"s{i}", Reply.TAKEN, place=p) for i, p in enumerate(places)]

    entry.attempted(waiter, refused(2, 2, None, None, None), 0.0)
    assert entry.ever  # in line on two servers: it may have to leave them
    assert entry.join(waiter, 3000, now=0.01) is not None  # not a majority: joins
    entry.attempted(waiter, refused(2, 2, 2, None, 3), 1.0)
    assert entry.join(waiter, 3000, now=1.5) is None  # in line since 1.0
    assert entry.join(waiter, 3000, now=2.01) is not None  # a third of its lease gone

    # a wake-up by name took it off the queue: the next attempt's refusal puts it back
    entry.deliver(b"m tok")
    assert waiter.popped
    entry.attempted(waiter, refused(1, 1, 1, 1, 1), 3.0)
    assert not waiter.popped
    assert entry.join(waiter, 3000, now=3.1) is None


def test_a_fair_attempt_that_wrote_the_lock_leaves_the_entry_where_it_was() -> None:
    """A fair acquire does not take its entry off the queue (the holder's entry leaves
    when it is done): an attempt that failed on a split vote does not pop it."""
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", "m")
    split = [NodeOutcome("s0", Reply.GRANTED)] + [
        NodeOutcome(f"s{i}", Reply.TAKEN, place=1) for i in range(1, 5)
    ]
    waiter.entry.attempted(waiter, split, 0.0, fair=True)
    assert not waiter.popped


def test_the_process_stands_behind_the_waiter_its_release_woke_once() -> None:
    woke = Woke(most=2)
    assert woke.since("a", 1.0) == (None, None)
    stood = Stood("1700000000000.2500", 1.0, place=2)
    woke.note("a", 1.0, stood)
    since, lined = woke.since("a", 1.02)
    assert since == pytest.approx(0.02)
    assert lined == stood
    assert woke.since("a", 1.03) == (None, None)  # asked once: only the next acquire
    for key in ("a", "b", "c"):
        woke.note(key, 2.0)
    assert woke.since("a", 2.0) == (None, None)  # the one noted longest ago went first
    assert woke.since("c", 2.0) == (0.0, None)


def test_a_process_passes_the_turn_of_an_entry_only_its_release_put_in_line() -> None:
    """A release named the process's entry while none of its waiters waited: its turn
    is passed on once (the announcements of the other servers find nothing to pass),
    and only for an entry a release of the process put in line; once passed (or taken
    up by an acquire) the entry is not one to take off at close any more."""
    woke = Woke()
    woke.note("plain", 1.0)  # woke a waiter, stood nowhere
    woke.note("lined", 1.0, Stood("5.0000", 1.0, place=1))
    woke.note("old", 1.0, Stood("5.0000", 1.0, place=None))
    assert woke.stood(1.0 + LINGER - 0.01) == ["lined", "old"]
    assert woke.stood(1.0 + LINGER) == []  # their leases are over
    assert not woke.passing("plain", b"n1", 1.5)
    assert not woke.passing("nobody", b"n1", 1.5)
    assert woke.passing("lined", b"n1", 1.5)
    assert not woke.passing("lined", b"n1", 1.5)  # once
    assert woke.since("lined", 2.0) == (None, None)  # the next acquire makes an attempt
    assert woke.since("plain", 2.0) == (1.0, None)  # still stands behind its waiter
    assert woke.stood(2.0) == ["old"]


def test_an_entry_named_before_the_release_that_put_it_in_line_returned_is_not_waited_on() -> None:
    """A later release, announced by a majority, named the process's entry while the
    release of the process that put it in line had not returned yet (a slow server kept
    it): the waiter that release woke came and went, and the entry is off the line. That
    release is not noted, so the next acquire tries at once instead of standing behind
    it, to be woken by nobody. Named by fewer servers (their queues disagree: a majority
    keeps the entry in line), or before the release was sent, it stands behind."""
    stood = Stood("5.0000", 1.0, place=1)
    woke = Woke()
    for server in range(3):  # nothing noted yet: each announcement is kept
        assert not woke.passing("a", b"later", 1.5 + server / 100)
    woke.note("a", 1.6, stood, needed=3)
    assert woke.since("a", 1.7) == (None, None)
    assert woke.stood(1.7) == []  # nothing to take off at close either
    for key, named in (
        ("two", [(b"later", 1.5), (b"later", 1.51)]),  # a minority
        ("two releases", [(b"later", 1.5), (b"later", 1.51), (b"other", 1.52)]),
        ("before", [(b"earlier", 0.5), (b"earlier", 0.51), (b"earlier", 0.52)]),
        ("none", []),
    ):
        for notice, at in named:
            assert not woke.passing(key, notice, at)
        woke.note(key, 1.6, stood, needed=3)
        since, lined = woke.since(key, 1.7)
        assert since == pytest.approx(0.1), key
        assert lined == stood


def test_a_lingering_channel_remembers_which_releases_it_heard_and_when() -> None:
    """What ``announced`` answers: a release other than the given token's, from a time
    on; forgotten when the channel is taken up, left again or forgotten."""
    lingering = Lingering(seconds=5.0)
    lingering.heard(A, 1.0, b"tok1")  # not lingering: not kept
    lingering.leave([A], now=1.0)
    lingering.heard(A, 1.5, b"tok1:1700000000000.0001")  # the own release's, with arrival
    lingering.heard(A, 1.6, b"tok2")
    assert lingering.announced(A, 1.0, other_than=b"tok1")
    assert lingering.announced(A, 1.0, other_than=b"tok2")  # tok1's, heard at 1.5
    assert not lingering.announced(A, 1.55, other_than=b"tok2")
    assert not lingering.announced(A, 1.7, other_than=b"tok1")  # nothing from then on
    assert not lingering.announced(B, 0.0, other_than=b"tok1")
    lingering.leave([A], now=2.0)  # left again: what was heard is forgotten
    assert not lingering.announced(A, 0.0, other_than=b"tok1")
    lingering.heard(A, 2.5, b"tok3")
    assert lingering.take(A) == 2.5
    assert not lingering.announced(A, 0.0, other_than=b"tok1")


def test_a_release_that_woke_a_waiter_gone_already_is_not_stood_behind() -> None:
    """The release put the process in no line, and while its round read its replies,
    another release of the name announced to everyone (the waiter it woke came and
    went): the next acquire tries at once, as nobody would wake it. Its own release's
    announcements (a server whose queue was empty), or one before its round began, do
    not count; a release that put the process in line is judged by what named its
    entry (``Woke.note``)."""
    for heard, stands_behind in (
        ([(b"other-token", 1.05)], False),
        ([(b"own-token", 1.05), (b"own-token:5.0000", 1.06)], True),
        ([(b"other-token", 0.95)], True),  # before the release began
        ([], True),
    ):
        lingering = Lingering(seconds=5.0)
        lingering.leave([release_channel("a")], now=0.5)
        for notice, at in heard:
            lingering.heard(release_channel("a"), at, notice)
        woke = Woke()
        note_woke(woke, lingering, "a", None, started=1.0, token="own-token", servers=5)
        since, _ = woke.since("a", time.monotonic())
        assert (since is not None) is stands_behind, heard
    stood = Stood("5.0000", 1.0, place=1)
    lingering = Lingering(seconds=5.0)
    lingering.leave([release_channel("a")], now=0.5)
    lingering.heard(release_channel("a"), 1.05, b"other-token")
    woke = Woke()
    note_woke(woke, lingering, "a", stood, started=1.0, token="own-token", servers=5)
    assert woke.since("a", time.monotonic())[1] == stood


def test_a_waiter_takes_up_the_entry_its_process_release_put_in_line() -> None:
    """Put in line by a majority: in line as after a join sent with the release, at the
    release's arrival (no join round before its lease is a third gone). By a minority:
    somewhere, so that the waiter takes it off if it leaves."""
    for place in (3, None):
        entries: dict[bytes, Entry[Waiter]] = {}
        channel = release_channel("acct")
        entry = entries.setdefault(channel, Entry("m"))
        waiter = Waiter(channel, entry)
        stand_in(entry, waiter, Stood("1700000000000.2500", 3.0, place=place))
        entry.waiters.append(waiter)
        assert waiter.arrival == 1700000000000.25
        assert entry.place() == "1700000000000.2500"
        if place is not None:
            assert entry.join(waiter, 3000, now=3.9) is None
            assert entry.join(waiter, 3000, now=4.0) == ("m", "1700000000000.2500")
        else:
            assert entry.join(waiter, 3000, now=3.1) == ("m", "1700000000000.2500")
            entries[channel].waiters.remove(waiter)
            assert entry.leave(kept=False) == "m"


def test_a_release_puts_the_process_in_line_only_where_it_listens_and_has_no_waiter() -> None:
    confirmed = listeners(1.0, 1.0, 1.0, None, None)
    lingering = Lingering(seconds=LINGER)
    lingering.leave([A], now=0.0)
    entries: dict[bytes, Entry[Waiter]] = {}

    def spot(
        channel: bytes = A, subscribers: list[Listener] = confirmed, lease_ms: int = 1200
    ) -> tuple[str, str] | None:
        return spot_behind(
            entries, lingering, subscribers, channel, WAKE, member="m", lease_ms=lease_ms,
            now=4.0,
        )  # fmt: skip

    found = spot()
    assert found is not None
    assert found[0] == "m"
    assert float(found[1]) == pytest.approx(time.time() * 1000, abs=5_000)  # a new arrival
    assert lingering.channels(LINGER + 3.9) == {A}  # lingers from the release on
    # a lease longer than the channel lingers: the named entry's wake-up would go unheard
    assert spot(lease_ms=int(LINGER * 1000) + 1) is None
    # not listening: a minority confirmed, or the channel is not lingering at all
    assert spot(subscribers=listeners(1.0, 1.0, None, None, None)) is None
    assert spot(channel=B) is None
    # a waiter of the name in the process: its entry stands in line already
    _waiting(entries, "a", "m")
    assert A in entries
    assert spot() is None


def test_a_release_keeps_the_turn_only_where_it_listens_and_has_no_waiter() -> None:
    """As :func:`spot_behind`: a release may leave the next waiter asleep (the process
    takes the lock back) only where the process listens to the name, and has no waiter
    of it in line (which the release would otherwise keep waiting)."""
    confirmed = listeners(1.0, 1.0, 1.0, None, None)
    lingering = Lingering(seconds=LINGER)
    lingering.leave([A], now=0.0)
    entries: dict[bytes, Entry[Waiter]] = {}
    turns = Turns()
    turns.released("a", 3.0, 3.0001, kept=False)
    turns.asked("a", 3.00011)  # at once
    turns.held("a", 3.0002)

    def keep(subscribers: list[Listener] = confirmed) -> bool:
        return may_keep(turns, entries, lingering, subscribers, "a", wake=WAKE, now=3.0003)

    assert keep()
    assert not keep(listeners(1.0, 1.0, None, None, None))  # a minority confirmed
    assert not may_keep(turns, entries, Lingering(), confirmed, "a", wake=WAKE, now=3.0003)
    _waiting(entries, "a", "m")
    assert not keep()


def test_an_announcement_that_names_the_process_for_a_name_nobody_waits_on_is_passed_up() -> None:
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    waiter = _waiting(entries, "acct", member)
    wake = wake_channel(member)
    unheard = route(entries, Lingering(), wake, channel=wake, payload=b"5 othertok-1", now=1.0)
    assert unheard == ("other", b"tok-1")
    assert not waiter.notified()
    assert route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=1.0) is None
    assert waiter.notified()


def test_a_waiter_that_leaves_takes_off_an_entry_its_attempt_may_have_put_in_line() -> None:
    """An attempt that stands in line where refused: while its answer is awaited, and
    after one that put the entry in line somewhere or left a server's answer unknown, a
    waiter that leaves (cancelled, timed out) takes the entry off; after one granted
    everywhere (the entry left every queue with it) there is nothing to take off."""
    entries: dict[bytes, Entry[Waiter]] = {}
    granted = [NodeOutcome(f"s{i}", Reply.GRANTED) for i in range(5)]
    lined = [*granted[:3], *(NodeOutcome(f"s{i}", Reply.TAKEN, place=1) for i in (3, 4))]
    unknown = [*granted[:4], NodeOutcome("s4", Reply.TIMEOUT)]
    for answer, leaves in ((None, True), (granted, False), (lined, True), (unknown, True)):
        waiter = _waiting(entries, "acct", "m")
        entry = waiter.entry
        assert entry.attempt(waiter) == "m"
        if answer is not None:
            entry.attempted(waiter, answer, 0.0)
        entries[waiter.channel].waiters.remove(waiter)
        assert entry.leave(kept=False) == ("m" if leaves else None), answer
        del entries[waiter.channel]


def test_a_waiter_that_leaves_with_a_wake_up_it_never_tried_hands_it_on() -> None:
    """A release names the process: one waiter is woken to try, the next to put the
    entry back in line. The first leaves before it tried (interrupted, cancelled, out
    of time): the second is woken to try in its place, as the announcement would have
    woken it, and by the same release's other announcements too. A wake-up to put the
    entry back in line, or one that an acquire which got the lock took with it (the
    same release's other servers), is no one else's."""
    member = "5f2a9c0e11d3b7a4"
    entries: dict[bytes, Entry[Waiter]] = {}
    first = _waiting(entries, "acct", member)
    second = _waiting(entries, "acct", member)
    third = _waiting(entries, "acct", member)
    wake = wake_channel(member)
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=1.0)
    assert (first.alone, second.requeue, third.notified()) == (True, True, False)
    assert owed(first, acquired=False)
    assert not owed(first, acquired=True)
    assert not owed(second, acquired=False)
    assert not owed(third, acquired=False)
    dismiss(entries, first)
    assert hand_on(entries, first)  # a waiter of the process's entry takes it
    assert second.notified()
    assert second.alone
    assert not second.requeue
    assert not third.notified()  # one wake-up, one waiter
    # its attempt meets the release in flight and fails: the release's next server's
    # announcement wakes it again, as it would have woken the first
    second.rearm()
    route(entries, Lingering(), wake, channel=wake, payload=b"4 accttok-1", now=1.1)
    assert second.notified()
    assert not third.notified()
    dismiss(entries, second)
    assert hand_on(entries, second)
    assert third.alone
    dismiss(entries, third)
    assert not hand_on(entries, third)  # nobody left: the entry passes its turn on


@pytest.mark.parametrize("hub", [SyncWakeups, AsyncWakeups])
def test_the_last_waiter_that_leaves_with_a_wake_up_by_name_has_its_entry_pass_it_on(
    hub: type[SyncWakeups] | type[AsyncWakeups],
) -> None:
    """``unwatch`` of a process's last waiter of a name, woken by a release that named
    the process and not tried: the entry's id, for the round that passes the turn on,
    even where the entry was not known to be in line (the release took it off). Not
    for a waiter that got the lock, nor for one that nobody woke."""
    wakeups: Any = hub([], 1.0)
    make: Any = Waiter if hub is SyncWakeups else AsyncWaiter
    member = wakeups._member
    wake = wake_channel(member)
    cases = ((False, True, True), (True, True, False), (False, False, False))
    for acquired, named, passes in cases:
        waiter = make(release_channel("acct"), Entry(member))
        enlist(wakeups._waiters, waiter, member)
        if named:
            route(wakeups._waiters, Lingering(), wake, channel=wake, payload=b"4 accttok", now=1.0)
            assert waiter.notified()
        left = wakeups.unwatch(waiter, acquired=acquired)
        assert left == (member if passes else None), (acquired, named)


def test_a_wake_up_handed_on_goes_to_a_waiter_that_has_none() -> None:
    """The next waiter is woken already (a wake-up of its own to try, which it will):
    the wake-up handed on goes to the one after it; announcements that named nobody
    (from a server whose line was empty) wake without ``alone``, and so do the waiters
    they are handed on to."""
    entries: dict[bytes, Entry[Waiter]] = {}
    first, second, third = (_waiting(entries, "acct", "m") for _ in range(3))
    route(entries, Lingering(), b"-", channel=release_channel("acct"), payload=b" t", now=1.0)
    assert first.notified()
    assert not first.alone
    second.notify()
    dismiss(entries, first)
    assert hand_on(entries, first)
    assert third.notified()
    assert not third.alone


def test_waiters_of_one_machine_keep_the_order_they_came_in() -> None:
    """An arrival is the clock in ms plus a random fraction of a microsecond: a waiter
    that comes 0.2 ms after another is behind it in every draw (a fraction of a whole
    millisecond put it ahead about a third of the time)."""
    for _ in range(100):
        first = arrival()
        time.sleep(0.0002)
        assert arrival() > first


def _parked_waits(flavour: str) -> list[str]:
    """Waiters of one name in one process, each waiting a 10 ms pause, ready to wait on
    up to 30 s more: three of a lock (queued), two of a semaphore (one name, never
    queued), a set's (several names) and a read-write lock's writer (never queued, but
    asking for another thing than the semaphore's). What ended each wait, in the order
    they ended: the oldest of each sort, the set's and the writer do not wait on (each
    polls for its sort); the second of each waits until the oldest of its sort leaves,
    the third until a release wakes it."""
    channel = release_channel("acct")
    entry: Entry[Any] = Entry("m")
    kind: Any = Waiter if flavour == "sync" else AsyncWaiter
    names = ("1st", "2nd", "3rd", "sem", "sem2", "set", "writer")
    queued = {"1st": True, "2nd": True, "3rd": True, "sem": False, "sem2": False}
    made: dict[str, Any] = {name: kind(channel, entry, queued=q) for name, q in queued.items()}
    made["set"] = kind(channel, entry, (release_channel("other"),), queued=False)
    made["writer"] = kind(channel, entry, queued=False, kind="write")
    entry.waiters.extend(made.values())
    assert [entry.poller(made[n]) for n in names] == [
        made[n] for n in ["1st", "1st", "1st", "sem", "sem", "set", "writer"]
    ]
    ended: list[str] = []
    steps: list[tuple[float, Callable[[], object]]] = [
        (0.3, lambda: dismiss({channel: entry}, made["1st"])),
        (0.3, lambda: dismiss({channel: entry}, made["sem"])),
        (0.3, made["3rd"].notify),
    ]

    if flavour == "sync":

        def wait(name: str) -> None:
            told = made[name].wait(0.01, 30.0)
            ended.append(f"{name} {'told' if told else 'polls'}")

        threads = [threading.Thread(target=wait, args=(name,), daemon=True) for name in names]
        for thread in threads:
            thread.start()
        for pause, act in steps:
            time.sleep(pause)
            act()
        for thread in threads:
            thread.join(5.0)
        return ended

    async def main() -> None:
        async def wait(name: str) -> None:
            told = await made[name].wait(0.01, 30.0)
            ended.append(f"{name} {'told' if told else 'polls'}")

        tasks = [asyncio.ensure_future(wait(name)) for name in names]
        for pause, act in steps:
            await asyncio.sleep(pause)
            act()
        await asyncio.wait(tasks, timeout=5.0)
        for task in tasks:
            task.cancel()

    asyncio.run(main())
    return ended


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves(
    flavour: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's waiters of one name poll through the oldest of their sort: the others
    wait on past their pause, and the next takes over as the oldest leaves (its own
    wait ends, not 30 s later)."""
    monkeypatch.setattr(wakeups, "PARKED_LOOK", 60.0)  # only the wake-ups end the waits
    ended = _parked_waits(flavour)
    assert sorted(ended[:4]) == ["1st polls", "sem polls", "set polls", "writer polls"]
    assert ended[4:] == ["2nd polls", "sem2 polls", "3rd told"]


def test_an_announcement_with_no_head_wakes_the_first_of_each_sort_and_every_set() -> None:
    """A release by an older quorumlock of a kind of lock without a queue (a
    semaphore's, a read-write lock's, a set's) announces an empty message on each
    server. Each wakes, in the process, the first waiter of each sort that has no
    wake-up yet, and every set's waiter (each polls for itself): not every waiter,
    which made a thousand tasks try at every release."""
    channel = release_channel("acct")
    entry: Entry[Waiter] = Entry("m")
    sems = [Waiter(channel, entry, queued=False) for _ in range(3)]
    locks = [Waiter(channel, entry) for _ in range(2)]
    sets = [Waiter(channel, entry, (release_channel(f"k{i}"),), queued=False) for i in range(2)]
    entry.waiters.extend([*sems, *locks, *sets])
    everyone = [*sems, *locks, *sets]
    entry.deliver(b"")
    assert [w.notified() for w in everyone] == [True, False, False, True, False, True, True]
    entry.deliver(b"")  # the same release, from the next server
    assert [w.notified() for w in everyone] == [True, True, False, True, True, True, True]


def test_a_release_with_no_head_announced_by_every_server_wakes_each_sort_once() -> None:
    """A release of a kind of lock without a queue names no head, but carries its notice:
    the announcements of one release by five servers wake the first waiter of each sort
    (and every set's) once, and again once it has tried (an attempt sent before the
    release reached every server may fail), never the next waiter of the sort: each
    server's announcement woke another, and a read-write lock's writers made 6.4
    attempts per hold. A new release (a new notice) wakes the next one."""
    channel = release_channel("acct")
    entry: Entry[Waiter] = Entry("m")
    sems = [Waiter(channel, entry, queued=False) for _ in range(3)]
    sets = [Waiter(channel, entry, (release_channel(f"k{i}"),), queued=False) for i in range(2)]
    entry.waiters.extend([*sems, *sets])
    everyone = [*sems, *sets]
    entry.deliver(b" tok")
    assert [w.notified() for w in everyone] == [True, False, False, True, True]
    for _ in range(4):  # the same release, from the other servers
        entry.deliver(b" tok")
    assert [w.notified() for w in everyone] == [True, False, False, True, True]
    sems[0].rearm()  # its attempt goes out, and fails: the next server's wakes it again
    assert not sems[0].notified()
    entry.deliver(b" tok")
    assert [w.notified() for w in everyone] == [True, False, False, True, True]
    entry.deliver(b" tok:1")  # another release (the undo of an attempt)
    assert [w.notified() for w in everyone] == [True, True, False, True, True]


def test_a_wake_up_handed_on_goes_to_the_next_waiter_of_the_same_sort() -> None:
    """A read-write lock's writer, woken, gives up before it tries: the wake-up goes to
    the next writer of the process, not to a reader between them (the release woke the
    first of each sort: the readers had theirs)."""
    channel = release_channel("doc")
    entries: dict[bytes, Entry[Waiter]] = {}
    first, reader, second = (
        Waiter(channel, entries.setdefault(channel, Entry("m")), queued=False, kind=kind)
        for kind in ("write", "read", "write")
    )
    entries[channel].waiters.extend([first, reader, second])
    first.notify()
    dismiss(entries, first)
    hand_on(entries, first)
    assert (reader.notified(), second.notified()) == (False, True)
