"""Release announcements for the sync API: waiters woken when a lock is released.

The release script publishes on ``quorumlock:released:<key>`` on each server where it
deleted the key (``_algorithm/scripts.py``). A blocking acquire that found the lock taken
subscribes to that channel on every server (:meth:`SyncWakeups.watch`) and waits on a
:class:`Waiter` instead of sleeping: the next attempt starts about one round trip after
the release. Polling with the R8 pause stays as the fallback, so a lost announcement, a
server we cannot subscribe on, or a lock that expires instead of being released only
costs the time it cost before.

One subscriber connection per server and ``Redlock``, shared by every waiting thread and
every name, and one daemon thread per ``Redlock`` that owns them all (:class:`_Mux`): it
alone reads and writes those sockets (a TLS socket must not be used by two threads at
once), a release announced by five servers wakes that one thread rather than five, and
the waiting threads hand it their subscriptions through a wake-up pipe. A short-lived
helper thread opens each connection, so that a server slow to answer delays no other.
The thread stops after a while without waiters, and a forked child starts its own.

Wake one (``docs/algorithm.md``, "Waiting: woken by the release"): the waiters of one
name in this process stand in the name's queue on the servers as ONE entry
(:class:`Entry`: the process's id, the same for every name, and the arrival of its
oldest waiter). A release that names the head of the queue goes to the head's own
channel, ``quorumlock:wake:<id>``, which only that process listens to
(:func:`wake_channel`): it wakes one of its waiters of that name, the oldest, and the
others wait on; no other process reads it. An announcement on the name's channel that
names nobody (an empty queue: a server that restarted, or a release by an older
quorumlock) wakes, in every process, the oldest waiter of each sort with no wake-up yet
and every set's waiter (:meth:`Entry.deliver`). The announcements of one release by
several servers count once (they carry its notice). The kinds of lock without a queue
(a multi-resource lock's set, the read-write lock, the semaphore) never join one, and
their releases announce no head at all: they wake waiters of the name that way.

A channel whose last waiter left stays subscribed for :data:`LINGER` seconds
(:class:`Lingering`): the workers of a busy name take turns, and one that waits again
soon finds its process listening. It then needs no new subscription, and when a majority
of the servers had confirmed it before the failed attempt was sent and no announcement
came since, no attempt at once either (see :meth:`SyncWakeups.watch`).

A process that loops on a name takes the lock back for a few short holds (``docs/
algorithm.md``, "Waiting", step 10): those releases announce nothing, and each owes the
wake-up it did not send unless the process asks for the name again within
:data:`~quorumlock._algorithm.arithmetic.KEPT_WAKE` (:class:`Turns`). The subscriber
thread sends the wake-ups that come due, each in a thread of its own.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import random
import secrets
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import hiredis

from quorumlock._algorithm.arithmetic import (
    KEPT_LOOK,
    KEPT_WAKE,
    TAKE_BACK_HOLD,
    TAKE_BACK_HOLDS,
    TAKE_BACK_TURN,
    quorum,
)
from quorumlock._algorithm.flows import Watch
from quorumlock._algorithm.outcomes import NodeOutcome, Reply, Verdict, judge_acquire
from quorumlock._algorithm.scripts import RELEASED_PREFIX, WAKE_PREFIX
from quorumlock._io import polling
from quorumlock._io.flag import Flag
from quorumlock._io.packing import pack
from quorumlock._io.servers import RedisConnection, ServerSpec

__all__ = [
    "LINGER",
    "Entry",
    "Lingering",
    "Notice",
    "Subscriber",
    "SyncWakeups",
    "Turns",
    "Waiter",
    "Woke",
    "dismiss",
    "enlist",
    "enough",
    "heard_everything",
    "listening",
    "may_keep",
    "new_member",
    "note_woke",
    "parse",
    "release_channel",
    "route",
    "subscriber_spec",
    "wake_channel",
    "wakes_a_newcomer",
    "wanted_channels",
    "warn_refused",
]

logger = logging.getLogger("quorumlock")

#: How many announcements a process remembers, to count each release once.
SEEN = 64
#: A subscriber thread with no channel to listen to stops after this long.
IDLE_STOP = 10.0
#: Pause between connection attempts to a server that is down.
RECONNECT_PAUSE = 0.5
#: A channel nobody waits on any more stays subscribed this long (seconds).
LINGER = 5.0
#: At most this many channels linger per ``Redlock``; the one left longest ago goes first.
LINGER_MOST = 256
#: At most this many announcements naming a name nobody waits on are kept per name
#: (:meth:`Woke.passing`); the oldest goes first.
NAMED_MOST = 32
#: A waiter that waits on behind another of its process (:meth:`Waiter.wait`) looks
#: whether it is the first at least this often, should a wake-up go astray (seconds).
PARKED_LOOK = 1.0


class Lingering:
    """The channels nobody waits on that stay subscribed for a while, each with when it
    was left and when an announcement that could wake a newcomer last came on it since
    (:func:`wakes_a_newcomer`: one that named the head of a queue woke a waiter in line
    before it). Pure: the caller passes the monotonic time."""

    def __init__(self, seconds: float | None = None, most: int = LINGER_MOST) -> None:
        self._seconds = LINGER if seconds is None else seconds
        self._most = most
        self._left: dict[bytes, float] = {}  # in the order they were left
        # the releases announced on each since it was left: when, and their notices
        self._heard: dict[bytes, list[tuple[float, bytes]]] = {}

    def leave(self, channels: Sequence[bytes], now: float) -> None:
        """Nobody waits on ``channels`` any more."""
        for channel in channels:
            self._left.pop(channel, None)
            self._left[channel] = now
            self._heard.pop(channel, None)
        while len(self._left) > self._most:
            self._forget(next(iter(self._left)))

    def keep(self, channel: bytes, now: float) -> None:
        """``channel`` lingers from ``now`` on, with what was heard on it kept."""
        left = self._left.pop(channel, None)
        if left is not None:
            self._left[channel] = max(left, now)

    def take(self, channel: bytes) -> float | None:
        """Someone waits on ``channel`` again: it stops lingering. Returns when an
        announcement last came on it while it lingered (-inf: none came), or None when
        it was not lingering (left too long ago, or never)."""
        heard = self._heard.pop(channel, None)
        if self._left.pop(channel, None) is None:
            return None
        return heard[-1][0] if heard else -math.inf

    def heard(self, channel: bytes, now: float, notice: bytes = b"") -> None:
        """An announcement came on ``channel``, which nobody waits on: of the release
        ``notice``."""
        if channel in self._left:
            heard = self._heard.setdefault(channel, [])
            heard.append((now, notice))
            del heard[:-NAMED_MOST]

    def announced(self, channel: bytes, since: float, *, other_than: bytes) -> bool:
        """Whether a release whose notice does not begin with ``other_than`` (a release's
        token) was announced on ``channel`` from ``since`` on, while it lingered."""
        return any(
            at >= since and not notice.startswith(other_than)
            for at, notice in self._heard.get(channel, ())
        )

    def channels(self, now: float) -> set[bytes]:
        """The channels lingering at ``now``; those left longer ago are forgotten."""
        while self._left:
            channel, left = next(iter(self._left.items()))
            if now - left < self._seconds:
                break
            self._forget(channel)
        return set(self._left)

    def clear(self) -> None:
        self._left.clear()
        self._heard.clear()

    def _forget(self, channel: bytes) -> None:
        del self._left[channel]
        self._heard.pop(channel, None)


@dataclass(frozen=True, slots=True)
class Stood:
    """The entry a release by this process put in line behind the waiter it woke
    (``docs/algorithm.md``, "Waiting", step 9): its arrival (as every server has it),
    when the release was sent (monotonic), and its place in line where a majority put
    it there (:func:`~quorumlock._algorithm.flows.line_place`; None: fewer did)."""

    arrival: str
    at: float
    place: int | None


class Woke:
    """When a release of each name by this process last woke the head of the name's
    queue of waiters (monotonic), for this process's next acquire of the name, which
    stands in line behind that waiter rather than race it
    (:data:`~quorumlock._algorithm.arithmetic.HAND_OVER`), and the entry that release
    put in line behind it, if it did (:class:`Stood`). At most :data:`LINGER_MOST`
    names, the one noted longest ago forgotten first. Pure: the caller passes the
    time."""

    def __init__(self, most: int = LINGER_MOST) -> None:
        self._most = most
        # in the order they were noted
        self._at: dict[str, tuple[float, Stood | None]] = {}
        # the announcements that named this process's entry of each name while none of
        # its waiters waited and no release of it was noted (:meth:`passing`): when,
        # and the release's notice
        self._named: dict[str, list[tuple[float, bytes]]] = {}

    def note(
        self,
        key: str,
        now: float,
        stood: Stood | None = None,
        *,
        needed: int = 1,
        gone: bool = False,
    ) -> None:
        """A release of ``key`` by this process woke the head of the line at ``now``, and
        put the process in line behind it (``stood``), if it did. Not noted where a later
        release, announced by ``needed`` servers (a majority), named that entry already,
        before this release returned (a slow server kept it): the waiter it woke came
        and went, and the entry is off the line there, so the next acquire tries at
        once instead of waiting to be woken by nobody. (Named by fewer, where the
        servers' queues disagree, the entry is still in line on a majority.) Nor where
        the caller saw that waiter come and go otherwise (``gone``: a later release
        announced to everyone, the process not in line)."""
        named = self._named.pop(key, [])
        self._at.pop(key, None)
        if gone:
            return
        if stood is not None:
            since = collections.Counter(notice for at, notice in named if at >= stood.at)
            if since and max(since.values()) >= needed:
                return
        self._at[key] = (now, stood)
        while len(self._at) > self._most:
            del self._at[next(iter(self._at))]

    def since(self, key: str, now: float) -> tuple[float | None, Stood | None]:
        """Seconds since the last release of ``key`` noted (None: none was), and the
        entry it put in line; forgotten: only the next acquire stands behind the waiter
        it woke, in that entry."""
        at = self._at.pop(key, None)
        return (None, None) if at is None else (now - at[0], at[1])

    def passing(self, key: str, notice: bytes, now: float) -> bool:
        """A release (``notice``) named this process's entry of ``key`` at ``now`` while
        none of its waiters waited: whether the entry was one a release of this process
        put in line (then forgotten), whose turn the process passes on (``Op.QUEUE``,
        "pass"): the process let the lock go and did not come back for it, and the
        waiters behind its entry would otherwise wait for their next poll. Otherwise the
        announcement is kept for :meth:`note`: the release that put the entry in line
        may not have returned yet."""
        at = self._at.get(key)
        if at is None or at[1] is None:
            named = self._named.pop(key, [])
            named.append((now, notice))
            self._named[key] = named[-NAMED_MOST:]
            while len(self._named) > self._most:
                del self._named[next(iter(self._named))]
            return False
        del self._at[key]
        return True

    def stood(self, now: float) -> list[str]:
        """The names whose entries a release put in line, no acquire took up and no
        pass took off, and whose lease (at most :data:`LINGER`) may not be over yet."""
        return [
            key
            for key, (_, stood) in self._at.items()
            if stood is not None and now - stood.at < LINGER
        ]

    def clear(self) -> None:
        self._at.clear()
        self._named.clear()


@dataclass(slots=True)
class _Turn:
    """One name's recent holds by this process (see :class:`Turns`)."""

    released: float = -math.inf  # when its last release returned
    took: float = 0.0  # how long that release's round took
    looping: bool = False  # the acquire since came at once
    asked: float = -math.inf  # when that acquire began
    held: float = -math.inf  # when the current hold began (an attempt granted)
    kept: int = 0  # releases in a row that did not wake the line
    since: float = 0.0  # when the first of their holds began
    back: bool = False  # an acquire came after the last release: no wake-up owed

    @property
    def wake_at(self) -> float:
        """When a wake-up the last release owes is due (:data:`~quorumlock._algorithm.
        arithmetic.KEPT_WAKE` after it returned)."""
        return self.released + KEPT_WAKE


class Turns:
    """Whether a release of a name by this process may leave the next waiter asleep,
    the process being about to take the lock back (:data:`~quorumlock._algorithm.
    arithmetic.TAKE_BACK_HOLDS`), and the wake-ups owed by the releases that did, each
    due :data:`~quorumlock._algorithm.arithmetic.KEPT_WAKE` after its release unless the
    process asked for the name again by then. At most :data:`LINGER_MOST` names, the one
    released longest ago forgotten first. Pure: the caller passes the time.

    The schedule (:meth:`next_due`) holds one look per name, which a later release
    leaves where it is: in a loop of holds taken back, whoever sends the wake-ups looks
    once per :data:`~quorumlock._algorithm.arithmetic.KEPT_LOOK`, not once per release.
    At a look, a wake-up called off by an acquire is put off by another ``KEPT_LOOK``
    while the holds in a row may go on, and one whose release is not ``KEPT_WAKE`` old
    yet is put off until it is."""

    def __init__(self, most: int = LINGER_MOST) -> None:
        self._most = most
        self._turns: dict[str, _Turn] = {}  # in the order of their last release
        self._due: dict[str, float] = {}  # name -> when to look whether a wake-up is owed

    def asked(self, key: str, now: float) -> bool:
        """An acquire of ``key`` by this process starts at ``now``: it came at once after
        the last release, or not, and a wake-up owed for that release is off. Whether it
        takes the lock back: a release that kept the turn owes a wake-up still, and the
        acquire came at once or before that wake-up was due (its attempt need not stand
        in line: the lock is free, but for a newcomer). After such a release, coming before
        the wake-up is due counts as at once too: nobody else was told the lock is free,
        whatever delayed the process (another thread, say, or the scheduler of a busy
        host)."""
        turn = self._turns.get(key)
        if turn is None:
            return False
        at_once = now - turn.released < turn.took
        owed = not turn.back and key in self._due and (at_once or now < turn.wake_at)
        turn.looping = at_once or owed
        turn.back, turn.asked = True, now
        return owed

    def gave_up(self, key: str, now: float) -> bool:
        """An acquire of ``key`` by this process ended at ``now`` without the lock. Where
        it came after a release that kept the turn (:meth:`asked`) and nothing held the
        name since (it was cut short before its attempt went out, say), the wake-up
        that release owes is owed again, when it was due (at once, that time past);
        whether it is. Else the next waiter would sleep until its poll with the lock
        free."""
        turn = self._turns.get(key)
        if turn is None or not turn.back or not turn.kept or turn.held >= turn.asked:
            return False
        turn.back = False
        self._due[key] = min(self._due.get(key, now), now)
        return True

    def held(self, key: str, now: float) -> None:
        """An attempt of this process was granted ``key`` at ``now``."""
        turn = self._turns.get(key)
        if turn is not None:
            turn.held = now

    def keep(self, key: str, now: float) -> bool:
        """Whether the release of ``key`` starting at ``now`` may leave the next waiter
        asleep: the hold's acquire came at once after the process's last release of it,
        the hold was short (:data:`~quorumlock._algorithm.arithmetic.TAKE_BACK_HOLD`,
        from when it was granted, or from its acquire's start where no waiter's attempt
        was granted it), and the holds in a row so far are fewer than the most and
        began less than the turn ago."""
        turn = self._turns.get(key)
        if turn is None or not turn.looping:
            return False
        if now - max(turn.held, turn.asked) >= TAKE_BACK_HOLD:
            return False
        began = turn.since if turn.kept else turn.held
        return turn.kept < TAKE_BACK_HOLDS and now - began < TAKE_BACK_TURN

    def released(self, key: str, started: float, finished: float, *, kept: bool) -> None:
        """A release of ``key`` by this process ran from ``started`` to ``finished``;
        ``kept``: it left the next waiter asleep, and owes a wake-up unless the process
        asks for the name again soon."""
        turn = self._turns.pop(key, None) or _Turn()
        self._turns[key] = turn
        while len(self._turns) > self._most:
            del self._turns[next(iter(self._turns))]
        if kept:
            if not turn.kept:
                turn.since = turn.held
            turn.kept += 1
            self._due.setdefault(key, finished + KEPT_WAKE)  # a look on the schedule stays
        else:
            turn.kept = 0
            self._due.pop(key, None)
        turn.released, turn.took = finished, finished - started
        turn.looping, turn.held, turn.back = False, -math.inf, False
        turn.asked = -math.inf

    def next_due(self) -> float | None:
        """When the earliest look on the schedule is due; None when none is."""
        return min(self._due.values()) if self._due else None

    def due(self, now: float | None = None) -> list[str]:
        """The names whose wake-ups are due at ``now`` (all of them: None) and still
        owed, taken off the schedule; the looks due at ``now`` that found none put off
        (see above)."""
        keys = [k for k, at in self._due.items() if now is None or at <= now]
        owed = []
        for key in keys:
            del self._due[key]
            turn = self._turns.get(key)
            if turn is None:
                owed.append(key)
            elif not turn.back:
                if now is not None and now < turn.wake_at:
                    self._due[key] = turn.wake_at  # the process may still come back for it
                else:
                    owed.append(key)
            elif now is not None and turn.kept and now - turn.since < TAKE_BACK_TURN:
                self._due[key] = now + KEPT_LOOK  # the next release may owe one
        return owed

    def clear(self) -> None:
        self._turns.clear()
        self._due.clear()


def stand_in(entry: Entry[W], waiter: W, stood: Stood) -> None:
    """A new waiter, the only one of its name in this process, takes up the entry its
    process's release put in line (``stood``): same place, and in line as after a join
    sent when that release was (on a minority only: somewhere, see :meth:`Entry.leave`)."""
    waiter.arrival = float(stood.arrival)
    entry.ever = True
    if stood.place is not None:
        waiter.popped = False
        entry.joined = True
        entry.joined_at = stood.at
    else:
        entry.placed = True


def wakes_a_newcomer(payload: bytes) -> bool:
    """Whether an announcement would wake a waiter that is not in line yet: one that
    names nobody (an empty queue, or a kind of lock without a queue) wakes a waiter in
    every process; one that names the head of a queue wakes that waiter's process only."""
    head, space, _ = payload.partition(b" ")
    return not space or not head


def heard_everything(
    listeners: Sequence[Subscriber],
    heard: Sequence[float | None],
    channels: Sequence[bytes],
    since: float,
    wake: bytes,
) -> bool:
    """Whether no announcement on ``channels`` can have been missed since ``since``: each
    was lingering (``heard``: what :meth:`Lingering.take` answered for it), nothing came
    on it from ``since`` on, and a majority of the servers had confirmed it by then (a
    connection that dropped since confirms it anew, later); and the process's own
    channel ``wake`` was confirmed by then on a majority too (what came there for a name
    nobody waited on woke nobody, a newcomer included)."""
    needed = quorum(len(listeners))
    if sum(1 for li in listeners if li.confirmed.get(wake, math.inf) <= since) < needed:
        return False
    for channel, last in zip(channels, heard, strict=True):
        if last is None or last >= since:
            return False
        early = sum(1 for li in listeners if li.confirmed.get(channel, math.inf) <= since)
        if early < needed:
            return False
    return True


def subscriber_spec(spec: ServerSpec, failures: int) -> ServerSpec:
    """Where to subscribe for ``spec``'s announcements: the server itself, or for a
    cluster instance one of its startup nodes (another after each failure): a cluster
    passes every PUBLISH on to all its nodes."""
    if spec.cluster is None or not spec.cluster.startup:
        return spec
    startup = spec.cluster.startup
    return spec.at(startup[failures % len(startup)])


def parse(message: object, label: str) -> tuple[str, bytes, bytes]:
    """What a subscriber connection read: ("message", channel, payload) for an
    announcement, ("subscribed", channel, b"") for a confirmation, ("refused", b"", b"")
    for an error reply (the ACL denies the channel: warned about once per server),
    ("other", b"", b"") otherwise."""
    if isinstance(message, Exception):
        warn_refused(label, message)
        return "refused", b"", b""
    if isinstance(message, list) and len(message) >= 3 and isinstance(message[1], bytes):
        if message[0] == b"message":
            payload = message[2] if isinstance(message[2], bytes) else b""
            return "message", message[1], payload
        if message[0] == b"subscribe":
            return "subscribed", message[1], b""
    return "other", b"", b""


class Notice(Protocol):
    """What an :class:`Entry` does to one of its waiters (sync or asyncio)."""

    arrival: float
    alone: bool
    popped: bool
    queued: bool
    kind: str
    requeue: bool
    channel: bytes
    channels: tuple[bytes, ...]

    def notify(self, *, alone: bool = False, requeue: bool = False) -> None: ...

    def notified(self) -> bool: ...

    def promote(self) -> None: ...


def _untold(waiter: Notice) -> bool:
    """Whether ``waiter`` has no wake-up to try pending: none at all, or one that only
    asks it to put the process's entry back in line (``requeue``). A release that names
    the process, told to such a waiter, must make it try: it joins again otherwise, and
    the process's entry heads the line with nobody trying, until a poll."""
    return not waiter.notified() or waiter.requeue


def arrival() -> float:
    """A new waiter's place in line: this machine's clock in ms (to the microsecond),
    plus a random fraction of a microsecond, below what the clock tells apart, so that
    two waiters of this machine keep the order they came in, and two of different
    machines that read the same microsecond are still ordered (by the fraction; on equal
    scores a server orders by id), the same way on every server. A fraction of a whole
    millisecond, as before, put a waiter that came up to a millisecond later ahead about
    half the time: with ``fair=True``, one that joined while the head was being woken
    then headed the line, refused the head, and waited for a poll."""
    return time.time() * 1000 + random.random() / 1000


W = TypeVar("W", bound=Notice)


def _sort(waiter: Notice) -> str | None:
    """Which waiters poll for each other (see :meth:`Entry.poller`): those that queue (a
    lock's); those of one name that do not and ask for the same (a semaphore's of the
    same ``permits``; a read-write lock's readers, its writers); None for a set's waiter
    (several names)."""
    if waiter.queued:
        return "queued"
    return f"one name: {waiter.kind}" if len(waiter.channels) == 1 else None


class Entry(Generic[W]):
    """The waiters of one name in this process, and their one entry in its queue."""

    __slots__ = (
        "ever", "joined", "joined_at", "member", "placed", "refused", "seen", "waiters",
    )  # fmt: skip

    def __init__(self, member: str) -> None:
        self.member = member  # the process's id in every queue (see :func:`new_member`)
        self.waiters: list[W] = []  # in arrival order
        self.joined = False  # a join was sent since the last announcement named us
        self.ever = False  # a join was ever sent
        self.joined_at = 0.0  # monotonic, when the last join was sent
        # an attempt that stands in line where refused is under way, or the last one put
        # the entry in line somewhere or left some server's answer unknown
        self.placed = False
        # every server that answered refused the queue (an ACL rule without its keys):
        # no more joins; releases then wake one waiter in every process, as they did
        self.refused = False
        # the last announcements (by their notice) and whom each woke
        self.seen: collections.OrderedDict[bytes, list[W]] = collections.OrderedDict()

    def place(self) -> str:
        """The entry's arrival, as the queue script takes it: that of its oldest waiter
        still in line (a waiter woken by name left the line until it joins again)."""
        queued = [w for w in self.waiters if w.queued] or self.waiters
        waiting = [w.arrival for w in queued if not w.popped]
        return f"{min(waiting or [w.arrival for w in queued]):.4f}"

    def poller(self, waiter: W) -> W | None:
        """The waiter whose polls stand for ``waiter``'s: the entry's oldest of its sort.
        A lock's waiters (queued) poll through the oldest of them; those of a name that
        never queue (a semaphore's, a read-write lock's) through the oldest of theirs; a
        set's waiter, on several names, polls for itself. The others' polls would only
        repeat the poller's (the same name, asked by the same process): they wait on
        past their pause until it leaves (:func:`dismiss` tells the next one) or a
        release wakes them. None when no waiter of the entry is of that sort."""
        sort = _sort(waiter)
        if sort is None:
            return waiter
        for other in self.waiters:
            if _sort(other) == sort:
                return other
        return None

    def polled_for(self, waiter: W) -> bool:
        """Whether another waiter polls for ``waiter`` (:meth:`poller`)."""
        return self.poller(waiter) is not waiter

    def leave(self, *, kept: bool) -> str | None:
        """A queued waiter left: the entry's id to take off the queue when no queued
        waiter is left and the entry may still be in line (``kept``: see
        :meth:`SyncWakeups.unwatch`), else None. Waiters that never join (a set's, on
        one of its keys) stay, woken by the announcements that name nobody."""
        if any(w.queued for w in self.waiters):
            return None
        lined = self.joined or self.placed or (kept and self.ever and not self.refused)
        self.joined = self.ever = self.placed = False
        return self.member if lined else None

    def join(self, waiter: W, lease_ms: int, now: float) -> tuple[str, str] | None:
        """See :meth:`SyncWakeups.join`."""
        if self.refused:
            return None
        if self.joined and not waiter.popped and now - self.joined_at < lease_ms / 3000:
            return None
        waiter.popped = False
        self.joined = self.ever = True
        self.joined_at = now
        return self.member, self.place()

    def member_for(self, waiter: W) -> str:
        """The entry's id for an attempt of ``waiter`` (not ``fair``): the acquire script
        then takes the entry off the queue where it writes the lock, and puts it in line
        where it is refused; "" when the servers refused the queue or ``waiter`` does not
        stand in it."""
        return self.member if waiter.queued and not self.refused else ""

    def attempt(self, waiter: W, *, fair: bool = False) -> str:
        """The entry's id for an attempt of ``waiter`` (:meth:`member_for`; a fair attempt
        always names it), which stands in line where it is refused: until its answer
        says where (:meth:`attempted`), the entry may be in line anywhere, and a waiter
        that leaves meanwhile (a cancelled task, an interrupted thread) takes it off
        (:meth:`leave`)."""
        member = self.member if fair else self.member_for(waiter)
        if member:
            self.placed = True
        return member

    def attempted(
        self, waiter: W, outcomes: Sequence[NodeOutcome], now: float, *, fair: bool = False
    ) -> None:
        """What the servers answered to an attempt that named the entry. Refused by every
        server, and put in line by a majority (``NodeOutcome.place``), the entry is in
        line as after a join sent at ``now``: no join follows. Wherever the lock may have
        been written (every answer but TAKEN: a grant, or no answer), the entry left the
        queue (not ``fair``: a fair entry leaves once its holder is done, see
        :meth:`leave`). ``waiter``, if it failed, joins again after it; the process's
        other queued waiters stood in line by that entry too, and the next of them puts
        it back in line at once."""
        # in line somewhere, or unknown where: a waiter that leaves takes it off
        self.placed = any(o.place or not o.reply.answered for o in outcomes)
        if any(o.place for o in outcomes):
            self.ever = True
        if all(o.reply is Reply.TAKEN for o in outcomes):
            if sum(1 for o in outcomes if o.place) >= quorum(len(outcomes)):
                waiter.popped = False
                self.joined = True
                self.joined_at = now
            return
        if fair:
            return
        waiter.popped = True
        others = [w for w in self.waiters if w is not waiter and w.queued and not w.notified()]
        if others:
            self.joined = False
            others[0].notify(requeue=True)

    def answered(self, outcomes: Sequence[NodeOutcome]) -> None:
        """What the servers answered to a join: refused by every server that answered
        (``NOPERM``: an ACL rule that predates the queues, docs/deployment.md) and
        accepted by none, the entry stops joining and is not in line anywhere."""
        if any(o.reply is Reply.DONE for o in outcomes):
            return
        if any(o.reply is Reply.FATAL for o in outcomes):
            self.refused = True
            self.joined = False

    def deliver(self, payload: bytes) -> None:
        """An announcement: wake whom it is for (see the module's docstring)."""
        head, space, notice = payload.partition(b" ")
        named = bool(head)
        if named and head.decode(errors="replace") != self.member:
            return  # (another server's queue may name us for the same release)
        if space and notice in self.seen:
            # The same release, announced by another server. The servers release one
            # after the other: a waiter woken by the first may have tried before the
            # others had, and failed. Wake the same waiters again; nobody else.
            for again in self.seen[notice]:
                if again in self.waiters and _untold(again):
                    again.notify(alone=named)
            return
        chosen = self._for_head() if named else self._for_everyone()
        if space:  # (an empty message, a family release by an older quorumlock, has none)
            self.seen[notice] = chosen
            while len(self.seen) > SEEN:
                self.seen.popitem(last=False)

    def _for_head(self) -> list[W]:
        """A release named the process's entry: wake its oldest queued waiter."""
        waiting = [w for w in self.waiters if _untold(w)]
        # the place in line is the queued waiters': one of them takes the wake-up
        # (others, a set's waiters on this key, only if none is left)
        waiting = [w for w in waiting if w.queued] or waiting
        # Whom this release is for. Every waiter woken already (by an earlier release,
        # and about to try: a stagger's pause, say): the one this release would have
        # woken takes it all the same, so that its later announcements wake that waiter
        # again once it has tried (an attempt sent before this release reached every
        # server may fail); else they would wake nobody, and the lock wait for a poll.
        chosen = waiting or [w for w in self.waiters if w.queued] or self.waiters
        self.joined = False  # the server took the entry off its queue
        if waiting:
            waiting[0].notify(alone=True)
        if len(waiting) > 1 and waiting[1].queued:
            # the others have no entry now: the next of them puts it back in line
            waiting[1].notify(requeue=True)
        return chosen[:1]

    def _for_everyone(self) -> list[W]:
        """A release named no head (an empty queue; a kind of lock without a queue: a
        set, a read-write lock, a semaphore): wake the first waiter of each sort that
        has no wake-up yet, and every set's waiter (see :meth:`poller`); the oldest of a
        sort, leaving, tells the next to poll. Waking them all made a thousand tasks try
        at every release. A sort whose waiters are all woken already keeps the release
        for its first, as :meth:`_for_head` does."""
        chosen: dict[object, W] = {}  # by sort (a set's waiter: by itself)
        for waiter in self.waiters:
            sort = _sort(waiter)
            key = waiter if sort is None else sort
            mine = chosen.get(key)
            if mine is None or (not _untold(mine) and _untold(waiter)):
                chosen[key] = waiter
        for waiter in chosen.values():
            if _untold(waiter):
                waiter.notify()
        return list(chosen.values())


def enlist(entries: dict[bytes, Entry[W]], waiter: W, member: str) -> list[bytes]:
    """Put ``waiter`` among the waiters of each of its channels (``entries`` holds the
    entry of its first channel already; a new one gets the process's id ``member``);
    the channels nobody listened to before."""
    new = []
    for channel in waiter.channels:
        entry = entries.setdefault(channel, Entry(member))
        entry.waiters.append(waiter)
        if len(entry.waiters) == 1:
            new.append(channel)
    return new


def dismiss(
    entries: dict[bytes, Entry[W]], waiter: W, *, kept: bool = False
) -> tuple[str | None, list[bytes]]:
    """Take ``waiter`` out of the entries of its channels. Returns the id of the entry to
    take off the queue (see :meth:`SyncWakeups.unwatch`), or None, and the channels that
    nobody listens to any more. The entry's next poller, if ``waiter`` was its poller,
    polls from now on (:meth:`Entry.poller`)."""
    member = None
    dropped = []
    for channel in waiter.channels:
        entry = entries.get(channel)
        if entry is None or waiter not in entry.waiters:
            continue
        polled = entry.poller(waiter) is waiter
        entry.waiters.remove(waiter)
        nxt = entry.poller(waiter) if polled else None
        if nxt is not None and nxt is not waiter:
            nxt.promote()
        if channel == waiter.channel and waiter.queued:
            member = entry.leave(kept=kept)
        if not entry.waiters:
            del entries[channel]
            dropped.append(channel)
    return member, dropped


def owed(waiter: Notice, *, acquired: bool) -> bool:
    """Whether ``waiter``, leaving, takes with it a wake-up it never tried: a release
    woke it (not only to put the entry back in line), and its acquire did not get the
    lock (one that did may have been woken again by the same release's other servers).
    An announcement wakes one waiter: the one that was interrupted, cancelled, or out of
    time as it came."""
    return not acquired and waiter.notified() and not waiter.requeue


def hand_on(entries: dict[bytes, Entry[W]], waiter: W) -> bool:
    """``waiter`` left (:func:`dismiss`) with a wake-up it never tried (:func:`owed`):
    the next of the process's waiters of its name that has none is woken in its place,
    as the announcement would have woken it. Whether a queued waiter of the name is left
    to try; where none is, and the announcement named the process (``waiter.alone``),
    the process's entry passes its turn on (``Op.QUEUE``, "pass"), or the waiters
    behind it would sleep until their next poll with the lock free. The releases that
    woke ``waiter`` are the next waiter's now: their later announcements (the other
    servers') wake it again once it has tried, as they would have woken ``waiter``."""
    entry = entries.get(waiter.channel)
    if entry is None:
        return False
    untold = [w for w in entry.waiters if _untold(w)]
    sort = _sort(waiter)
    # the next of its sort (a lock's: the next queued waiter), else any
    same = [w for w in untold if (_sort(w) == sort if sort is not None else w.queued)]
    for nxt in same[:1] or untold[:1]:
        nxt.notify(alone=waiter.alone)
        for woken in entry.seen.values():
            woken[:] = [nxt if w is waiter else w for w in woken]
    return any(w.queued for w in entry.waiters)


def withdraw(
    entries: dict[bytes, Entry[W]], waiter: W, own: str, *, kept: bool, acquired: bool
) -> tuple[str | None, list[bytes]]:
    """:func:`dismiss` ``waiter`` (``acquired``: its acquire got the lock). A wake-up it
    never tried goes to the next waiter (:func:`hand_on`); where none is left and it
    named the process, the process's own id ``own`` is returned all the same, for the
    round that passes the turn on."""
    woken = owed(waiter, acquired=acquired)
    member, dropped = dismiss(entries, waiter, kept=kept)
    if woken and not hand_on(entries, waiter) and waiter.alone:
        member = own
    return member, dropped


def release_channel(key: str) -> bytes:
    """The pub/sub channel on which the release of ``key`` is announced."""
    return (RELEASED_PREFIX + key).encode()


def channel_key(channel: bytes) -> str:
    """The key whose releases are announced on ``channel`` (:func:`release_channel`)."""
    return channel[len(RELEASED_PREFIX) :].decode()


def new_member() -> str:
    """A process's id in the queues, the same for every name it waits on: a release
    that names it goes to the one channel this process listens on for that
    (:func:`wake_channel`), so that no other process reads it."""
    return secrets.token_hex(8)


def wake_channel(member: str) -> bytes:
    """The channel of the process whose id in the queues is ``member``."""
    return (WAKE_PREFIX + member).encode()


def wanted_channels(
    entries: dict[bytes, Entry[W]], lingering: set[bytes], wake: bytes
) -> set[bytes]:
    """The channels a subscriber connection listens to: those of the names waited on
    or lingering, and the process's own, while there is any of those."""
    channels = set(entries) | lingering
    if channels:
        channels.add(wake)
    return channels


def split_wake(payload: bytes) -> tuple[bytes, bytes] | None:
    """The key and the release's notice of an announcement on a process's own channel
    (``<length of the key> <key><notice>``); None when it is malformed."""
    size, space, rest = payload.partition(b" ")
    if not space or not size.isdigit() or int(size) > len(rest):
        return None
    return rest[: int(size)], rest[int(size) :]


def route(
    entries: dict[bytes, Entry[W]],
    lingering: Lingering,
    wake: bytes,
    *,
    channel: bytes,
    payload: bytes,
    now: float,
) -> tuple[str, bytes] | None:
    """An announcement read on ``channel``: hand it to the entry it is for. Returns the
    key an announcement on the process's own channel named when none of its waiters
    waits on it, and the release's notice (see :meth:`Woke.passing`), else None.

    On the process's own channel the payload is ``<length of the key> <key><notice>``
    and names this process's entry of that key; on a name's channel it is ``<head>
    <notice>`` (the head empty, or another process's id in a release by an older
    quorumlock)."""
    if channel == wake:
        named = split_wake(payload)
        if named is None:
            return None
        key, notice = named
        entry = entries.get(RELEASED_PREFIX.encode() + key)
        if entry is None or not entry.waiters:
            return key.decode(errors="replace"), notice
        entry.deliver(entry.member.encode() + b" " + notice)
        return None
    entry = entries.get(channel)
    if entry is not None:
        entry.deliver(payload)
    elif wakes_a_newcomer(payload):
        lingering.heard(channel, now, payload.partition(b" ")[2])
    return None


def note_woke(
    woke: Woke,
    lingering: Lingering,
    key: str,
    stood: Stood | None,
    *,
    started: float,
    token: str,
    servers: int,
) -> None:
    """Note that a release of ``key`` by this process (its lock's ``token``, its round
    begun at ``started``) woke the head of the line (:meth:`Woke.note`), unless that
    waiter came and went already: the release put the process in no line, and another
    release of the name, announced to everyone, came while the round was reading its
    replies (its servers answer one after another). The next acquire would stand behind
    a waiter that is gone, and nobody would wake it: it tries at once instead."""
    gone = stood is None and lingering.announced(
        release_channel(key), started, other_than=token.encode()
    )
    woke.note(key, time.monotonic(), stood, needed=quorum(servers), gone=gone)


def listen_in(
    entries: dict[bytes, Entry[W]],
    lingering: Lingering,
    listeners: Sequence[Subscriber],
    channel: bytes,
    wake: bytes,
    *,
    member: str,
    stood: Stood | None,
    new_waiter: Callable[[bytes, Entry[W]], W],
    now: float,
) -> tuple[W | None, int | None]:
    """A new waiter on ``channel`` when the process listens to it already
    (:func:`listening`), else None; and its place in line where the process's release
    put its entry in line on a majority (``stood``, which the waiter takes up when it is
    the name's only one in the process: :func:`stand_in`), else None."""
    if not listening(entries, lingering, listeners, channel, wake, now=now):
        return None, None
    lingering.take(channel)
    entry = entries.setdefault(channel, Entry(member))
    waiter = new_waiter(channel, entry)
    place = None
    if stood is not None and not entry.waiters:
        stand_in(entry, waiter, stood)
        place = stood.place
    enlist(entries, waiter, member)
    return waiter, place


def may_keep(
    turns: Turns,
    entries: dict[bytes, Entry[W]],
    lingering: Lingering,
    listeners: Sequence[Subscriber],
    key: str,
    *,
    wake: bytes,
    now: float,
) -> bool:
    """Whether a release of ``key`` by this process at ``now`` may leave the next waiter
    asleep (:meth:`Turns.keep`), the process listening to the key (:func:`listening`)
    and none of its waiters waiting on it."""
    channel = release_channel(key)
    if channel in entries or not turns.keep(key, now):
        return False
    return listening(entries, lingering, listeners, channel, wake, now=now)


def spot_behind(
    entries: dict[bytes, Entry[W]],
    lingering: Lingering,
    listeners: Sequence[Subscriber],
    channel: bytes,
    wake: bytes,
    *,
    member: str,
    lease_ms: int,
    now: float,
) -> tuple[str, str] | None:
    """The process's id (``member``) and a new arrival, for a release of ``channel``'s
    key by this process that puts the process in line behind the waiter it wakes; None
    when it may not. It may when the process listens to the key (:func:`listening`), so
    that the release that names its entry later reaches it, and will for the entry's
    whole lease (the channel lingers from now on, at least as long as the lease); and
    when none of its waiters waits on the key, whose entry stands in line already."""
    if channel in entries or lease_ms > LINGER * 1000:
        return None
    if not listening(entries, lingering, listeners, channel, wake, now=now):
        return None
    lingering.keep(channel, now)
    return member, f"{arrival():.4f}"


class Waiter:
    """One blocking acquire's view of the announcements for its key (for a
    multi-resource lock, for any key of its set: ``channels``)."""

    __slots__ = (
        "_told", "_turn", "alone", "arrival", "channel", "channels", "entry", "kind",
        "popped", "queued", "requeue",
    )  # fmt: skip

    def __init__(
        self,
        channel: bytes,
        entry: Entry[Waiter],
        others: tuple[bytes, ...] = (),
        *,
        queued: bool = True,
        kind: str = "",
    ) -> None:
        self.channel = channel
        self.channels = (channel, *(c for c in others if c != channel))
        self.entry = entry  # of ``channel``: the one this waiter may join the queue of
        self.queued = queued  # it joins the queue (a single lock's waiter)
        self.kind = kind  # what it asks for, if not queued (see Watch.kind)
        self.arrival = arrival()
        self.popped = False  # woken by name: out of line until this waiter joins again
        self.alone = False  # the last wake-up named this process: nobody else was woken
        self.requeue = False  # woken only to put the process's entry back in line
        self._told = Flag()  # not a threading.Event: see quorumlock._io.flag
        self._turn: Flag | None = None  # while it waits on behind the entry's poller

    def settle(self) -> None:
        """Forget a wake-up that only asked to put the entry back in line."""
        if self.requeue:
            self.requeue = False
            self._told.clear()

    def rearm(self) -> None:
        """Forget earlier announcements: call it just before sending an attempt."""
        self.alone = self.requeue = False
        self._told.clear()

    def wait(self, seconds: float, longer: float = 0.0) -> bool:
        """Wait up to ``seconds``; True if a release was announced since :meth:`rearm`.
        Then, while another waiter of the entry polls for it (:meth:`Entry.poller`), up
        to ``longer`` more, until this one is the poller or an announcement comes."""
        if self._told.wait(seconds) or longer <= 0 or not self.entry.polled_for(self):
            return self._told.is_set()
        turn = self._turn = Flag()
        give_up = time.monotonic() + longer
        try:
            # (raised by notify and promote; looked at again every PARKED_LOOK, should
            # a signal handler's exception have cut one of them short)
            while True:
                left = give_up - time.monotonic()
                if self._told.is_set() or not self.entry.polled_for(self) or left <= 0:
                    break
                turn.wait(min(left, PARKED_LOOK))
                turn.clear()
        finally:
            self._turn = None
        return self._told.is_set()

    def notified(self) -> bool:
        return self._told.is_set()

    def notify(self, *, alone: bool = False, requeue: bool = False) -> None:
        if alone:
            self.alone = self.popped = True
        self.requeue = requeue
        self._told.set()
        self.promote()

    def promote(self) -> None:
        """End a wait past the pause (:meth:`wait`): this waiter polls now, or is told."""
        turn = self._turn
        if turn is not None:
            turn.set()


class SyncWakeups:
    """The subscriptions of one ``Redlock``: which waiters listen to which channel."""

    def __init__(self, specs: Sequence[ServerSpec], connect_timeout: float) -> None:
        self._specs = list(specs)
        self._connect_timeout = connect_timeout
        # A bare lock, not a threading.Condition: the ``with`` of a Condition, and its
        # wait, are Python code that a signal handler's exception can cut in two (see
        # quorumlock._io.flag); the threads in :meth:`watch` wait on flags instead.
        self._lock = threading.Lock()
        self._confirming: set[Flag] = set()  # raised as a server confirms a subscription
        self._waiters: dict[bytes, Entry[Waiter]] = {}
        self._lingering = Lingering()
        self._listeners: list[_Listener] = []
        self._mux: _Mux | None = None
        self._pid = os.getpid()
        self._member = new_member()
        self._wake = wake_channel(self._member)
        self._woke = Woke()
        self._turns = Turns()
        #: passes the turn of this process's entry of a key on (key, id): see
        #: :meth:`Woke.passing`; set by the ``Redlock``
        self.on_pass: Callable[[str, str], None] | None = None
        #: wakes the next waiter of a key whose release left it asleep (key): see
        #: :class:`Turns`; set by the ``Redlock``, called on the subscriber thread
        self.on_wake: Callable[[str], None] | None = None

    def watch(self, step: Watch) -> tuple[Waiter, bool]:
        """Listen to the announcements for ``step.key`` (and every one of ``step.keys``,
        a multi-resource lock's set); wait up to ``step.timeout`` until a majority of
        the servers confirmed the subscription of ``step.key`` (a release elsewhere may
        go unheard: the R8 pause covers it). ``step.queued``: the waiter will join the
        key's queue; ``step.kind``: see ``Watch.kind``. Always pair with
        :meth:`unwatch`.

        Returns the waiter, and whether an announcement may have been missed since
        ``step.since`` (when the failed attempt was sent): False only when this process
        listened on every channel all along (:func:`heard_everything`)."""
        timeout, queued, since, kind = step.timeout, step.queued, step.since, step.kind
        channel = release_channel(step.key)
        others = tuple(release_channel(k) for k in step.keys)
        confirmed = Flag()
        waiter: Waiter | None = None
        try:
            with self._lock:
                if self._pid != os.getpid():  # a forked child: the parent's thread is gone
                    self._forget_parent()
                if self._mux is None:
                    started = _Mux(self, self._specs, self._connect_timeout)
                    self._listeners = started.listeners  # first: never without them
                    self._mux = started
                mux, listeners = self._mux, self._listeners
                self._confirming.add(confirmed)
                entry = self._waiters.setdefault(channel, Entry(self._member))
                waiter = Waiter(channel, entry, others, queued=queued, kind=kind)
                heard = [self._lingering.take(c) for c in waiter.channels]
                missed = not heard_everything(listeners, heard, waiter.channels, since, self._wake)
                if enlist(self._waiters, waiter, self._member):
                    mux.poke(hurry=True)
            give_up = time.monotonic() + timeout
            while True:
                confirmed.clear()  # before looking: a confirmation after it raises it
                if enough(listeners, waiter.channel, self._wake):
                    break
                left = give_up - time.monotonic()
                if left <= 0:
                    break
                confirmed.wait(left)
        except BaseException:
            # interrupted while the subscriptions were being confirmed (a signal
            # handler's exception): the caller never gets the waiter to unwatch, and
            # it would take the process's wake-ups of the name for good
            with self._lock:
                dropped: list[bytes] = []
                if waiter is not None:
                    _, dropped = dismiss(self._waiters, waiter)
                if channel in self._waiters and not self._waiters[channel].waiters:
                    del self._waiters[channel]  # made for this waiter, never enlisted
                self._lingering.leave(dropped, time.monotonic())
            raise
        finally:
            with self._lock:
                self._confirming.discard(confirmed)
        return waiter, missed

    def woke(self, key: str, stood: Stood | None, *, started: float, token: str) -> None:
        """A release of ``key`` by this process (its lock's ``token``, its round begun at
        ``started``) woke the head of its queue of waiters, and put the process's entry
        in line behind it (``stood``), if it did (:func:`note_woke`)."""
        with self._lock:
            note_woke(
                self._woke, self._lingering, key, stood, started=started, token=token,
                servers=len(self._specs),
            )  # fmt: skip

    def stand_behind(self, key: str, lease_ms: int) -> tuple[str, str] | None:
        """The process's id and a new arrival, for a release of ``key`` that puts the
        process in line behind the waiter it wakes; None when it may not
        (:func:`spot_behind`)."""
        if self._mux is None:  # listens to nothing (most releases): no need to lock
            return None
        with self._lock:
            if self._mux is None or self._pid != os.getpid():
                return None
            return spot_behind(
                self._waiters, self._lingering, self._listeners, release_channel(key),
                self._wake, member=self._member, lease_ms=lease_ms, now=time.monotonic(),
            )  # fmt: skip

    def listen(self, key: str) -> tuple[Waiter | None, float | None, int | None]:
        """A waiter for ``key`` when this process listens to its releases already
        (:func:`listening`), made without subscribing to anything or waiting; None
        otherwise, and when the acquire takes the lock back (:meth:`Turns.asked`: its
        first attempt is a plain one). Pair a waiter with :meth:`unwatch`. And how long
        ago a release of ``key`` by this process woke the head of its queue, if one did
        lately (asked once: :class:`Woke`), and the waiter's place in line where that
        release put the process's entry in line on a majority (:class:`Stood`; None
        otherwise)."""
        channel = release_channel(key)
        with self._lock:
            now = time.monotonic()
            since, stood = self._woke.since(key, now)
            if self._mux is None or self._pid != os.getpid():
                return None, since, None
            if self._turns.asked(key, now):
                return None, since, None  # taking the lock back: a plain attempt first
            waiter, place = listen_in(
                self._waiters, self._lingering, self._listeners, channel, self._wake,
                member=self._member, stood=stood, new_waiter=Waiter, now=now,
            )  # fmt: skip
            return waiter, since, place

    def join(self, waiter: Waiter, lease_ms: int) -> tuple[str, str] | None:
        """The entry's id and arrival, for the queue script: ``waiter`` (re)joins the
        queue on the process's behalf. None when there is no need: the entry joined
        less than a third of its lease ago, and no announcement took it off since."""
        with self._lock:
            waiter.settle()
            return waiter.entry.join(waiter, lease_ms, time.monotonic())

    def attempted(
        self, waiter: Waiter, outcomes: Sequence[NodeOutcome], *, fair: bool = False
    ) -> None:
        """See :meth:`Entry.attempted`; a grant begins a hold (:meth:`Turns.held`)."""
        with self._lock:
            now = time.monotonic()
            waiter.entry.attempted(waiter, outcomes, now, fair=fair)
            if judge_acquire(outcomes, in_time=True) is Verdict.ACQUIRED:  # a hold begins
                self._turns.held(channel_key(waiter.channel), now)

    def keep_turn(self, key: str) -> bool:
        """Whether a release of ``key`` starting now may leave the next waiter asleep
        (:meth:`Turns.keep`): also only while this process listens to the key and none of
        its waiters waits on it."""
        if self._mux is None:  # listens to nothing (most releases): no need to lock
            return False
        with self._lock:
            if self._mux is None or self._pid != os.getpid():
                return False
            return may_keep(
                self._turns, self._waiters, self._lingering, self._listeners, key,
                wake=self._wake, now=time.monotonic(),
            )  # fmt: skip

    def released(self, key: str, started: float, finished: float, *, kept: bool) -> None:
        """A release of ``key`` by this process ran from ``started`` to ``finished``;
        ``kept``: it left the next waiter asleep (:meth:`keep_turn`), and the subscriber
        thread wakes it (``on_wake``) unless this process asks for the key again soon."""
        mux = self._mux
        if mux is None:
            return
        with self._lock:
            if mux is not self._mux:
                return
            self._turns.released(key, started, finished, kept=kept)
            # the thread waits until then at most: look again only if that is too late
            late = kept and mux.until > (self._turns.next_due() or math.inf)
        if late:
            mux.poke()

    def gave_up(self, key: str) -> None:
        """An acquire of ``key`` ended without the lock: a wake-up it called off is owed
        again (:meth:`Turns.gave_up`), and the subscriber thread sends it when due."""
        mux = self._mux
        if mux is None:
            return
        with self._lock:
            if mux is not self._mux or not self._turns.gave_up(key, time.monotonic()):
                return
        mux.poke()

    def owed(self) -> list[str]:
        """The keys whose releases left the next waiter asleep and no acquire followed
        (``Redlock.close`` wakes them), no longer owed."""
        with self._lock:
            if self._pid != os.getpid():
                return []
            return self._turns.due()

    def unwatch(self, waiter: Waiter, *, kept: bool = False, acquired: bool = False) -> str | None:
        """``waiter`` stops waiting. Returns the id of the entry to take off the queue
        when it was the process's last queued waiter of the name and the entry may still
        be in line; None otherwise. ``kept``: releases name the head without taking it
        off the queue (``fair=True``), so an entry that ever joined may still be there.
        ``acquired``: its acquire got the lock (else the caller's round passes the
        entry's turn on as it takes it off). A wake-up it never tried goes to the next
        waiter (:func:`hand_on`); where none is left and it named the process, the id
        is returned all the same, for that pass."""
        with self._lock:
            if self._pid != os.getpid():
                return None
            member, dropped = withdraw(
                self._waiters, waiter, self._member, kept=kept, acquired=acquired
            )
            # still subscribed for a while; the subscriber thread looks again within a second
            self._lingering.leave(dropped, time.monotonic())
            return member

    def after_fork(self) -> None:
        """In a forked child: a parent thread (the subscriber thread, a waiter) may have
        held the condition's lock, or the subscriber thread's, at the fork; the parent's
        waiters, thread and entries are its own."""
        self._lock = threading.Lock()
        self._confirming = set()
        self._forget_parent()

    def _forget_parent(self) -> None:
        self._waiters.clear()
        self._lingering.clear()
        self._woke.clear()
        self._turns.clear()
        self._listeners = []
        self._mux = None  # its thread, its pipe and its connections are the parent's
        self._pid = os.getpid()
        self._member = new_member()  # the parent's stays the parent's
        self._wake = wake_channel(self._member)

    def close(self) -> None:
        """Stop the subscriber thread (waiters still waiting fall back to polling)."""
        with self._lock:
            mux, self._mux = self._mux, None
            self._listeners = []
            self._waiters.clear()
            self._lingering.clear()
            self._turns.clear()
        if mux is not None:
            mux.poke()  # it finds itself replaced and ends

    # Called by the subscriber thread.

    def wanted(self, mux: _Mux) -> set[bytes] | None:
        """The channels the servers should be subscribed to; None once ``mux`` was
        replaced (the hub closed, or a forked child started its own)."""
        with self._lock:
            if mux is not self._mux:
                return None
            lingering = self._lingering.channels(time.monotonic())
            return wanted_channels(self._waiters, lingering, self._wake)

    def plan(self, mux: _Mux, until: float) -> float:
        """Until when the subscriber thread waits: ``until``, or sooner when a wake-up
        it owes (:class:`Turns`) is due sooner."""
        with self._lock:
            due = self._turns.next_due()
            mux.until = until if due is None else min(until, due)
            return mux.until

    def wake_due(self) -> None:
        """Wake the next waiter of every key whose wake-up is due (``on_wake``)."""
        with self._lock:
            keys = self._turns.due(time.monotonic())
            on_wake = self.on_wake
        if on_wake is not None:
            for key in keys:
                on_wake(key)

    def retire(self, mux: _Mux) -> bool:
        """Whether an idle subscriber thread may stop: yes if no channel is wanted.

        A later :meth:`watch` starts a new one.
        """
        with self._lock:
            if mux is not self._mux:
                return True
            if self._waiters or self._lingering.channels(time.monotonic()):
                return False
            if self._turns.next_due() is not None:
                return False
            self._mux = None
            return True

    def confirmed(self) -> None:
        with self._lock:
            for flag in self._confirming:
                flag.set()

    def deliver(self, channel: bytes, payload: bytes) -> None:
        with self._lock:
            now = time.monotonic()
            unheard = route(
                self._waiters, self._lingering, self._wake, channel=channel, payload=payload,
                now=now,
            )  # fmt: skip
            passing = unheard is not None and self._woke.passing(*unheard, now)
            member, on_pass = self._member, self.on_pass
        if passing and unheard is not None and on_pass is not None:
            on_pass(unheard[0], member)

    def stood(self) -> tuple[str, list[str]]:
        """This process's id, and the names whose entries its releases put in line and no
        acquire took up yet (``Redlock.close`` takes them off the queues); none in a
        forked child (they are its parent's)."""
        with self._lock:
            if self._pid != os.getpid():
                return self._member, []
            return self._member, self._woke.stood(time.monotonic())


def listening(
    entries: dict[bytes, Entry[W]],
    lingering: Lingering,
    listeners: Sequence[Subscriber],
    channel: bytes,
    wake: bytes,
    *,
    now: float,
) -> bool:
    """Whether this process listens to ``channel`` already: another of its waiters
    waits on it, or one left it less than :data:`LINGER` seconds ago, and a majority of
    the servers confirmed it and the process's own ``wake``. A new waiter of the name
    may then stand in line with its first attempt: every release from then on reaches
    it."""
    if channel not in entries and channel not in lingering.channels(now):
        return False
    confirmed = sum(1 for li in listeners if channel in li.confirmed and wake in li.confirmed)
    return confirmed >= quorum(len(listeners))


def enough(listeners: Sequence[Subscriber], channel: bytes, wake: bytes) -> bool:
    """A majority confirmed the subscriptions to ``channel`` and to the process's own
    ``wake``, or too few can for waiting to help."""
    confirmed = sum(1 for li in listeners if channel in li.confirmed and wake in li.confirmed)
    refused = sum(1 for li in listeners if li.refused)
    needed = quorum(len(listeners))
    return confirmed >= needed or len(listeners) - refused < needed


class Subscriber(Protocol):
    """What :func:`enough` reads of a subscriber connection (sync or asyncio):
    ``confirmed``, each channel the server confirmed and when (monotonic)."""

    confirmed: dict[bytes, float]
    refused: bool


def warn_refused(label: str, error: object) -> None:
    """Log once per server that it refuses our subscriptions (an ACL without channels)."""
    if label not in _REFUSED_WARNED:
        _REFUSED_WARNED.add(label)
        logger.warning(
            "%s refuses the release announcements (%s): waiters there poll instead; "
            "allow the channels &quorumlock:* to this user",
            label,
            error,
        )


_REFUSED_WARNED: set[str] = set()


class _Listener:
    """One server's subscriber connection. Only the subscriber thread (:class:`_Mux`)
    reads and writes it; a helper thread opens it, so that a server slow to answer
    delays no other."""

    def __init__(self, spec: ServerSpec, mux: _Mux, connect_timeout: float) -> None:
        self._spec = spec
        self._mux = mux
        self._connect_timeout = connect_timeout
        # channels the server confirmed, and when (the subscriber thread writes a new dict)
        self.confirmed: dict[bytes, float] = {}
        self.refused = False  # the server answered a SUBSCRIBE with an error (NOPERM)
        self.conn: RedisConnection | None = None
        self.sock: Any = None
        self._reader = hiredis.Reader()
        self._subscribed: set[bytes] = set()
        self._opening = False  # a helper thread is opening a connection
        self._opened: RedisConnection | BaseException | None = None  # what it got
        self._handoff = threading.Lock()
        self._failures = 0
        self.retry_at = 0.0  # monotonic: no connection attempt before then

    def attend(self, wanted: set[bytes], now: float) -> None:
        """Bring the connection in line with ``wanted``: have it opened, take what the
        helper opened, (un)subscribe."""
        if self.conn is None:
            self.pick_up()
        if self.conn is None:
            if wanted and not self._opening and now >= self.retry_at:
                self._opening = True
                threading.Thread(
                    target=self._open,
                    name=f"quorumlock-wakeups connect {self._spec.label}",
                    daemon=True,
                ).start()
            return
        try:
            if added := wanted - self._subscribed:
                self.sock.sendall(pack(("SUBSCRIBE", *added)))
                self._subscribed |= added
            if removed := self._subscribed - wanted:
                self.sock.sendall(pack(("UNSUBSCRIBE", *removed)))
                self._subscribed -= removed
                self.confirmed = {c: self.confirmed[c] for c in self.confirmed.keys() & wanted}
        except Exception:
            self.fail()

    def due(self, now: float) -> float | None:
        """Seconds until a connection attempt may start, for a server with none (None:
        connected, or an attempt under way)."""
        if self.conn is not None or self._opening:
            return None
        return max(0.0, self.retry_at - now)

    def _open(self) -> None:
        """The helper thread: open a connection and hand it to the subscriber thread (or
        close it when that thread has ended)."""
        conn: RedisConnection | None = None
        try:
            spec = subscriber_spec(self._spec, self._failures)
            conn = spec.connection(connect_timeout=self._connect_timeout)
            conn.connect()
            opened: RedisConnection | BaseException = conn
        except Exception as exc:
            opened = exc
            if conn is not None:
                conn.disconnect()
        with self._handoff:
            self._opened = opened
        if not self._mux.poke():  # ended: nobody will take it
            self.pick_up()
            self.close()

    def pick_up(self) -> None:
        """Take what the helper thread opened, if it is done."""
        with self._handoff:
            opened, self._opened = self._opened, None
        if opened is None:
            return
        self._opening = False
        if isinstance(opened, BaseException):
            self._failures += 1
            self.retry_at = time.monotonic() + RECONNECT_PAUSE
            return
        self.conn, self.sock = opened, getattr(opened, "_sock")  # noqa: B009 (private)
        self._reader = hiredis.Reader()
        self._subscribed = set()

    def pending(self) -> bool:
        """Whether bytes already read from the socket wait to be decrypted (TLS)."""
        pending = getattr(self.sock, "pending", None)
        return pending is not None and bool(pending())

    def read(self, hub: SyncWakeups) -> None:
        """What the server sent, handed to ``hub``; on an error the connection closes."""
        try:
            try:
                data = self.sock.recv(65536)
            except ssl.SSLWantReadError:
                return  # part of a TLS record: the rest is still on its way
            if not data:
                raise ConnectionError("the server closed the connection")
            self._reader.feed(data)
            while True:
                message = self._reader.gets()
                if message is False:
                    break
                self._handle(hub, message)
        except Exception:
            self.fail()

    def _handle(self, hub: SyncWakeups, message: object) -> None:
        kind, channel, payload = parse(message, self._spec.label)
        if kind == "message":
            hub.deliver(channel, payload)
        elif kind != "other":
            self.refused = kind == "refused"
            if kind == "subscribed":
                self.confirmed = {**self.confirmed, channel: time.monotonic()}
            hub.confirmed()

    def fail(self) -> None:
        """The connection failed: close it; the next attempt comes after a pause."""
        self._failures += 1
        self.retry_at = time.monotonic() + RECONNECT_PAUSE
        self.close()

    def close(self) -> None:
        self.confirmed = {}
        conn, self.conn, self.sock = self.conn, None, None
        if conn is not None:
            conn.disconnect()


def _drain(sock: socket.socket) -> None:
    """Read what a non-blocking ``sock`` holds (raises BlockingIOError once it is empty)."""
    while sock.recv(4096):
        pass


class _Mux:
    """The subscriber thread of one :class:`SyncWakeups` and its connections, one per
    server: it alone reads and writes them (a TLS socket must not be used by two threads
    at once), and a release announced by several servers wakes this one thread, not
    one per server. Waiting threads and connection helpers poke it through a pipe."""

    def __init__(self, hub: SyncWakeups, specs: Sequence[ServerSpec], connect_timeout: float):
        self._hub = hub
        self.listeners = [_Listener(spec, self, connect_timeout) for spec in specs]
        self._poke_r, self._poke_w = socket.socketpair()
        self._poke_r.setblocking(False)
        self._poke_w.setblocking(False)
        self._hurry = False
        self._done = False
        self.until = 0.0  # monotonic: the end of the current wait (:meth:`SyncWakeups.plan`)
        self._ending = threading.Lock()  # poke() against the pipe's closing
        threading.Thread(target=self._run, name="quorumlock-wakeups", daemon=True).start()

    def poke(self, *, hurry: bool = False) -> bool:
        """Make the thread look again (``hurry``: a channel was added, so a server that
        is down is tried again at once). False once the thread has ended."""
        if hurry:
            self._hurry = True
        with self._ending:
            if self._done:
                return False
            with contextlib.suppress(OSError):  # a full pipe already says "look again"
                self._poke_w.send(b"x")
            return True

    def _run(self) -> None:
        idle_since: float | None = None
        try:
            while True:
                wanted = self._hub.wanted(self)
                if wanted is None:
                    break
                now = time.monotonic()
                if not wanted:
                    idle_since = idle_since or now
                    if now - idle_since >= IDLE_STOP and self._hub.retire(self):
                        return
                else:
                    idle_since = None
                if self._hurry:
                    self._hurry = False
                    for listener in self.listeners:
                        listener.retry_at = 0.0
                for listener in self.listeners:
                    listener.attend(wanted, now)
                self._hub.wake_due()
                self._wait(bool(wanted))
        finally:
            with self._ending:
                self._done = True
                self._poke_r.close()
                self._poke_w.close()
            for listener in self.listeners:
                listener.pick_up()
                listener.close()

    def _wait(self, wanted: bool) -> None:
        """Wait up to a second (less when a server is due to be tried again, or a wake-up
        is owed: :meth:`SyncWakeups.plan`) for a poke
        or a server's message, and read what came. Announcements alone change nothing
        the loop attends to: they are read as they come, with no return to it until a
        poke, a connection's failure or the time is up (the servers of one release
        announce it within microseconds of each other, and each return costs more than
        reading one announcement)."""
        live = {li.sock.fileno(): li for li in self.listeners if li.sock is not None}
        timeout, now = 1.0, time.monotonic()
        if wanted:
            for li in self.listeners:
                if (due := li.due(now)) is not None:
                    timeout = min(timeout, due)
        until = self._hub.plan(self, now + timeout)
        waiter: polling.Poller | None = None
        while True:
            ready = [fd for fd, li in live.items() if li.pending()]
            if not ready:
                if waiter is None:
                    waiter = polling.poller()
                    waiter.register(self._poke_r, select.POLLIN)
                    for fd in live:
                        waiter.register(fd, select.POLLIN)
                left = until - time.monotonic()
                ready = [fd for fd, _ in waiter.poll(max(0, int(left * 1000)) + 1)]
                if not ready:
                    return  # the time is up
            look_again = False
            for fd in ready:
                listener = live.get(fd)
                if listener is None:  # the pipe: somebody wants the loop to look again
                    look_again = True
                    with contextlib.suppress(OSError):
                        _drain(self._poke_r)
                    continue
                if listener.sock is not None:
                    listener.read(self._hub)
                if listener.sock is None:
                    look_again = True  # it failed: the loop tries it again
            if look_again or time.monotonic() >= until:
                return  # (announcements that never stop still let the loop look)
