"""Taking the lock back (docs/algorithm.md, "Waiting", step 10), on real servers, both
APIs: a process that asks for a name again at once after releasing it keeps it for a few
short holds in a row without waking the next waiter, then wakes it; a release that left
the waiter asleep wakes it soon after when the process does not come back, and at the
latest when its Redlock is closed.

Every waiter polls with ``retry_delay=60`` (a fallback pause of 30 to 60 s), and an
acquire with an 8 s timeout makes its last attempt at 8 s: a waiter that gets the lock
sooner was woken by a release or by a wake-up owed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from quorumlock import LockObserver, RoundEvent
from quorumlock._algorithm.arithmetic import TAKE_BACK_HOLDS
from quorumlock._io.wakeups import Turns
from quorumlock.testing import LocalServerGroup
from tests.integration.apis import AnyLock, AnyRedlock, Api, call
from tests.integration.test_wake_one import SLOW_POLL, _listen_and_hold

#: How many times the waiter comes for the lock while the worker loops.
VISITS = 8


class InLine(LockObserver):
    """Calls ``note()`` when a majority put the waiter in line: an attempt refused and
    put in line there, or a join."""

    def __init__(self, note: Callable[[], object]) -> None:
        self._note = note

    def on_round(self, event: RoundEvent) -> None:
        needed = len(event.outcomes) // 2 + 1
        placed = sum(1 for o in event.outcomes if o.place) >= needed
        if event.op in ("acquire", "queue") and placed:
            self._note()


def holds_in_a_row(events: list[str]) -> list[int]:
    """For each visit of the waiter: the worker's holds from the waiter's first time in
    line to its hold."""
    counts: list[int] = []
    waiting: int | None = None
    for event in events:
        if event == "in line" and waiting is None:
            waiting = 0
        elif event == "worker" and waiting is not None:
            waiting += 1
        elif event == "waiter":
            counts.append(waiting or 0)
            waiting = None
    return counts


def kept_releases(redlock: AnyRedlock) -> list[bool]:
    """Records, for each release of ``redlock``'s process, whether it kept the turn."""
    turns: Turns = redlock._wakeups._turns
    record: list[bool] = []
    released = turns.released

    def spy(key: str, started: float, finished: float, *, kept: bool) -> None:
        record.append(kept)
        released(key, started, finished, kept=kept)

    turns.released = spy  # type: ignore[method-assign]
    return record


async def loop_and_visit(
    api: Api,
    name: str,
    worker: AnyRedlock,
    other: AnyRedlock,
    held: AnyLock,
    *,
    hold: float,
    note: Callable[[str], object],
) -> None:
    """``worker`` loops on ``name`` from ``held`` (release, acquire at once, hold for
    ``hold`` seconds) while ``other`` comes for it :data:`VISITS` times, 20 ms apart, and
    until it has. ``note`` gets "worker" after each of the worker's acquires and
    "waiter" after each of the other's."""
    visits: list[bool] = []

    async def loop() -> None:
        lock = held
        give_up = time.monotonic() + 12
        while len(visits) < VISITS and time.monotonic() < give_up:
            assert await call(lock.release())
            lock = worker.lock(name, ttl=30)
            assert await call(lock.acquire(timeout=8))
            note("worker")
            await asyncio.sleep(hold)
        assert await call(lock.release())

    async def visit() -> None:
        for _ in range(VISITS):
            await asyncio.sleep(0.02)
            lock = other.lock(name, ttl=30)
            assert await call(lock.acquire(timeout=8))
            note("waiter")
            assert await call(lock.release())
            visits.append(True)

    await api.concurrently([loop, visit], limit=90)


def test_a_worker_asking_again_at_once_takes_the_lock_back_then_wakes_the_waiter(
    api: Api, servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker loops on a name (release, acquire at once, release...) while another
    process comes for it now and then. Once that process is in line, the worker keeps
    the lock for a few more holds (more than one at some visit: the releases leave the
    waiter asleep), never for more than the most in a row, and then its release wakes the
    waiter, which gets the lock while the worker still loops.

    Each of the worker's holds lasts a millisecond or so, and the wake-up owed, the
    holds in a row and a hold that may be taken back get 50 ms, not 1, 20 and 2. On a
    busy host (the whole suite running at once) the worker's next acquire may come
    later than 1 ms after its release (with asyncio, the visitor's rounds run on the
    same event loop in between), and with holds of no length the visitor found the
    lock free at every visit, so it never waited in line."""
    monkeypatch.setattr("quorumlock._io.wakeups.KEPT_WAKE", 0.05)
    monkeypatch.setattr("quorumlock._io.wakeups.TAKE_BACK_TURN", 0.05)
    monkeypatch.setattr("quorumlock._io.wakeups.TAKE_BACK_HOLD", 0.05)
    events: list[str] = []

    async def body() -> None:
        worker = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        in_line = InLine(lambda: events.append("in line"))
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL, observer=in_line)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        await loop_and_visit(api, lock_name, worker, other, held, hold=0.001, note=events.append)

    api.run(body)
    counts = holds_in_a_row(events)
    assert len(counts) == VISITS, events
    assert max(counts) >= 2, counts  # taken back at least once with the waiter in line
    # the holds in a row when it came, then at most the most (and the one in progress)
    assert max(counts) <= TAKE_BACK_HOLDS + 2, counts


def test_a_loop_of_long_holds_wakes_the_line_at_every_release(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A worker loops on a name (release, acquire at once), but holds it 10 ms each time,
    while another process comes for it now and then: no release of those holds keeps
    the turn (a hold that long is not taken back, though shorter than the turn), and
    the other process gets the lock at each visit."""
    kept: list[bool] = []
    events: list[str] = []

    async def body() -> None:
        worker = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        record = kept_releases(worker)
        await loop_and_visit(api, lock_name, worker, other, held, hold=0.01, note=events.append)
        kept.extend(record[1:])  # the first release ends the hold of no length it began

    api.run(body)
    assert events.count("waiter") == VISITS
    assert len(kept) >= VISITS, kept
    assert not any(kept), kept


async def _come_back_cut_short(api: Api, worker: AnyRedlock, name: str) -> None:
    """``worker``'s process comes back for ``name`` after a release that kept the turn,
    and the acquire is cut short as it finds it takes the lock back, before its attempt
    (sync: a KeyboardInterrupt there; asyncio: a cancellation)."""
    turns: Turns = worker._wakeups._turns
    asked = turns.asked
    error = KeyboardInterrupt if api.flavour == "sync" else asyncio.CancelledError

    def cut_short(key: str, now: float) -> bool:
        if asked(key, now):
            raise error
        return False

    turns.asked = cut_short  # type: ignore[method-assign]
    try:
        with pytest.raises(error):
            await call(worker.lock(name, ttl=30).acquire(timeout=8))
    finally:
        turns.asked = asked  # type: ignore[method-assign]


@pytest.mark.parametrize("ending", ["stops", "closes", "cut-short"])
def test_a_release_that_left_the_waiter_asleep_wakes_it_when_the_worker_stops(
    api: Api, servers: LocalServerGroup, lock_name: str, ending: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The worker loops on the name while another process comes for it now and then,
    until a release of the worker leaves that process asleep in line; then the worker
    does not come back. The waiter is woken soon after (``stops``), or, with the wake-up
    put off for longer than the test, when the worker's Redlock is closed (``closes``:
    the waiter is seen asleep for 0.2 s first), or once the worker's acquire that came
    back for the name, and called the wake-up off, is cut short before its attempt
    (``cut-short``: an interrupt, or a cancellation, as the acquire finds it takes the
    lock back, the waiter seen asleep first; the wake-up, put off to 1.5 s after the
    release, goes out then; it used to leave the waiter asleep until its poll). A hold
    may be taken back however long it took: on a busy host an acquire's round alone may
    take milliseconds."""
    monkeypatch.setattr("quorumlock._io.wakeups.TAKE_BACK_HOLD", 3600.0)
    if ending == "closes":
        monkeypatch.setattr("quorumlock._io.wakeups.KEPT_WAKE", 3600.0)
    if ending == "cut-short":  # the worker comes back before the wake-up is due
        monkeypatch.setattr("quorumlock._io.wakeups.KEPT_WAKE", 1.5)
    state: dict[str, bool] = {}
    visits: list[float] = []  # when the waiter got the lock
    got: list[float] = []  # ... once the worker stopped
    stopped: list[float] = []

    async def body() -> None:
        worker = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        in_line = InLine(lambda: state.update({"in line": True}))
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL, observer=in_line)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        kept = kept_releases(worker)

        async def loop() -> None:
            lock = held
            give_up = time.monotonic() + 20
            while time.monotonic() < give_up:
                assert await call(lock.release())
                if kept[-1] and state.get("in line"):
                    if ending == "stops":
                        break  # the waiter is in line, asleep: the worker is done
                    # the wake-up is put off: the waiter sleeps on, unless an attempt
                    # of its was on its way already (then the worker loops on)
                    holds = len(visits)
                    await asyncio.sleep(0.2)
                    if len(visits) == holds:
                        break
                lock = worker.lock(lock_name, ttl=30)
                assert await call(lock.acquire(timeout=8))
            else:
                pytest.fail(f"no release kept the turn with the waiter asleep ({len(kept)})")
            if ending == "cut-short":
                await _come_back_cut_short(api, worker, lock_name)
            stopped.append(time.monotonic())
            if ending == "closes":
                await call(worker.close())

        async def visit() -> None:
            give_up = time.monotonic() + 20
            while not stopped and time.monotonic() < give_up:
                await asyncio.sleep(0.01)
                lock = other.lock(lock_name, ttl=30)
                assert await call(lock.acquire(timeout=8))
                state.pop("in line", None)
                visits.append(time.monotonic())
                if stopped:
                    got.append(time.monotonic())
                assert await call(lock.release())

        await api.concurrently([loop, visit], limit=60)

    api.run(body)
    assert stopped
    assert got
    # woken: not at its poll (30 s or more), nor by its acquire's last attempt (at 8 s)
    assert 0 < got[0] - stopped[0] < 4, got[0] - stopped[0]


def test_a_worker_delayed_before_the_wake_up_it_owes_is_due_still_takes_the_lock_back(
    api: Api, servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that kept the turn owes its wake-up a while later: until then nobody was
    told that the lock is free, so the worker's next acquire takes the lock back however
    long after the release's round it came (on a busy host, the scheduler may run
    something else in between). The wake-up and the holds in a row are put off for
    longer than the test; the worker loops at once a few times, then pauses 50 ms (many
    round trips here) before each acquire: every release of those holds keeps the turn
    (a hold may be taken back however long it took: on a busy host an acquire's round
    alone may take milliseconds)."""
    monkeypatch.setattr("quorumlock._io.wakeups.KEPT_WAKE", 3600.0)
    monkeypatch.setattr("quorumlock._io.wakeups.TAKE_BACK_TURN", 3600.0)
    monkeypatch.setattr("quorumlock._io.wakeups.TAKE_BACK_HOLD", 3600.0)
    at_once, delayed = 6, 4
    assert at_once + delayed < TAKE_BACK_HOLDS

    kept: list[bool] = []

    async def body() -> None:
        worker = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        lock = await _listen_and_hold(api, servers, lock_name, worker, other)
        record = kept_releases(worker)
        for i in range(at_once + delayed):
            assert await call(lock.release())
            if i >= at_once:
                await asyncio.sleep(0.05)
            lock = worker.lock(lock_name, ttl=30)
            assert await call(lock.acquire(timeout=8))
        assert await call(lock.release())
        kept.extend(record)

    api.run(body)
    assert len(kept) == at_once + delayed + 1, kept
    assert any(kept[:at_once]), kept  # the holds at once kept the turn
    assert all(kept[at_once:]), kept  # and so did every hold after a pause
