"""No lost wake-up: a waiter never sleeps through a free lock.

A blocking acquire that finds the lock taken waits to be woken by the release that frees
it (docs/algorithm.md, "Waiting"); the poll every ``retry_delay`` is only the fallback.
Here several processes take one name again and again with short holds and pauses, each
with several threads (or asyncio tasks) sharing one ``Redlock``, or with threads that
have a ``Redlock`` each and replace it now and then. Their polls are set far apart
(``retry_delay`` 30 s: 15 to 30 s), longer than any acquire's timeout, so a wake-up lost
shows as the lock left free while somebody waits: every hold of every process is
recorded, and the lock may not stay free for long while a blocking acquire waits.

It was written after two lost wake-ups in how one process's waiters share its entry in
the line: a waiter woken only to put the entry back in line that then never tried, and,
with ``fair=True``, a new head of the line asleep while the lock was free. On the code
before their fixes it fails: the second every time, the first on a loaded host.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from quorumlock import Redlock
from quorumlock.asyncio import Redlock as AsyncRedlock
from quorumlock.testing import LocalServerGroup
from tests.conftest import reports_of, values

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

Interval = tuple[float, float]
#: A worker's report: its pid, its holds, its blocking acquires' waits, an error or "",
#: and for each wait whether it got the lock.
Report = tuple[int, list[Interval], list[Interval], str, list[bool]]

PROCESSES = 4
WAITERS = 3  # threads or tasks per process
SECONDS = 8.0
TTL = 30.0
RETRY_DELAY = 30.0  # polls 15 to 30 s apart: only a wake-up gets a waiter in
TIMEOUT = 5.0  # a blocking acquire's; shorter than any poll
#: The longest the lock may be free while a blocking acquire waits across it. A
#: hand-over takes a millisecond or so; a lost wake-up leaves it free until a timeout.
LONGEST_FREE = 2.0
HOLDS = (0.0, 0.0, 0.0005, 0.002, 0.01, 0.02)
PAUSES = (0.0005, 0.005, 0.05)


@dataclass(frozen=True)
class Churn:
    """What one worker process does: its waiters take ``name`` from ``start_at`` for
    :data:`SECONDS`, a tenth of their acquires not blocking."""

    urls: list[str]
    name: str
    fair: bool
    flavour: str  # "threads", "tasks" (asyncio), "own-redlocks" (threads, one each)
    start_at: float
    seed: int

    def choices(self, waiter: int) -> random.Random:
        return random.Random(self.seed * 31 + waiter)

    def running(self) -> bool:
        return time.monotonic() < self.start_at + SECONDS


@dataclass
class Record:
    """A worker's holds, as (acquire returned, release returned), and its blocking
    acquires' waits, as (called, returned). ``time.monotonic`` is one clock for every
    process on Linux, so the records of all workers can be compared."""

    holds: list[Interval] = field(default_factory=list)
    waits: list[Interval] = field(default_factory=list)
    got: list[bool] = field(default_factory=list)  # each wait's: did it get the lock

    def acquired(self, blocking: bool, called: float, got: bool) -> float:
        now = time.monotonic()
        if blocking:
            self.waits.append((called, now))
            self.got.append(got)
        return now

    def released(self, acquired: float, released: bool) -> None:
        # A release that was not confirmed may have left the key on a majority: count
        # the lock held until its ttl ran out, so that a wait behind it is no stall.
        self.holds.append((acquired, time.monotonic() if released else acquired + TTL))


def churn(plan: Churn, results: Queue[Report]) -> None:
    """Worker process (module level, so that "spawn" can import it)."""
    record = Record()
    error = ""
    try:
        if plan.flavour == "tasks":
            asyncio.run(_churn_tasks(plan, record))
        else:
            _churn_threads(plan, record)
    except Exception as exc:
        error = repr(exc)
    results.put((os.getpid(), record.holds, record.waits, error, record.got))


def _churn_threads(plan: Churn, record: Record) -> None:
    def client() -> Redlock:
        return Redlock(plan.urls, retry_delay=RETRY_DELAY, fair=plan.fair)

    own = plan.flavour == "own-redlocks"
    shared = None if own else client()
    errors: list[BaseException] = []

    def one(rng: random.Random) -> None:
        redlock = shared or client()
        try:
            while plan.running():
                lock = redlock.lock(plan.name, ttl=TTL)
                blocking = rng.random() >= 0.1
                called = time.monotonic()
                got = lock.acquire(timeout=TIMEOUT) if blocking else lock.acquire(False)
                acquired = record.acquired(blocking, called, got)
                if got:
                    time.sleep(rng.choice(HOLDS))
                    record.released(acquired, lock.release())
                if rng.random() < 0.2:
                    time.sleep(rng.choice(PAUSES))
                if own and rng.random() < 0.05:  # closing takes the entry off the line
                    redlock.close()
                    redlock = client()
        except BaseException as exc:
            errors.append(exc)
        finally:
            if own:
                redlock.close()

    threads = [threading.Thread(target=one, args=(plan.choices(k),)) for k in range(WAITERS)]
    time.sleep(max(0.0, plan.start_at - time.monotonic()))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(SECONDS + TIMEOUT + 30)
    if shared is not None:
        shared.close()
    if errors:
        raise errors[0]
    if any(thread.is_alive() for thread in threads):
        raise RuntimeError("a waiter thread did not finish")


async def _churn_tasks(plan: Churn, record: Record) -> None:
    redlock = AsyncRedlock(plan.urls, retry_delay=RETRY_DELAY, fair=plan.fair)

    async def one(rng: random.Random) -> None:
        while plan.running():
            lock = redlock.lock(plan.name, ttl=TTL)
            blocking = rng.random() >= 0.1
            called = time.monotonic()
            got = await (lock.acquire(timeout=TIMEOUT) if blocking else lock.acquire(False))
            acquired = record.acquired(blocking, called, got)
            if got:
                await asyncio.sleep(rng.choice(HOLDS))
                record.released(acquired, await lock.release())
            if rng.random() < 0.2:
                await asyncio.sleep(rng.choice(PAUSES))

    await asyncio.sleep(max(0.0, plan.start_at - time.monotonic()))
    try:
        async with asyncio.timeout(SECONDS + TIMEOUT + 30):
            await asyncio.gather(*(one(plan.choices(k)) for k in range(WAITERS)))
    finally:
        await redlock.close()


def free_gaps(holds: list[Interval]) -> list[Interval]:
    """The times nobody held the lock, as far as the holds recorded tell: the gaps
    between them, and before the first and after the last (open-ended)."""
    gaps = []
    covered = -math.inf
    for begin, end in sorted(holds):
        if begin > covered:
            gaps.append((covered, begin))
        covered = max(covered, end)
    gaps.append((covered, math.inf))
    return gaps


def stalls(holds: list[Interval], waits: list[Interval]) -> list[tuple[float, Interval]]:
    """The blocking acquires that waited while the lock was free, without a hold in
    between, for more than :data:`LONGEST_FREE`: (how long, the wait)."""
    found = []
    for begin, end in free_gaps(holds):
        for called, returned in waits:
            free = min(end, returned) - max(begin, called)
            if free > LONGEST_FREE:
                found.append((round(free, 3), (called, returned)))
    return found


def explained(found: list[tuple[float, Interval]], reports: list[Report], zero: float) -> str:
    """What a failure shows of each stall (times in seconds from ``zero``): the wait,
    its process and whether it got the lock, and the last two holds that ended before
    the wait did and the first two that began after it was called, with their
    processes."""

    def at(t: float) -> str:
        return f"{t - zero:+.3f}"

    holds = sorted((hold, pid) for pid, process_holds, *_ in reports for hold in process_holds)
    lines = []
    for free, (called, returned) in found:
        pid, got = next(
            (pid, got[k])
            for pid, _, waits, _, got in reports
            for k, wait in enumerate(waits)
            if wait == (called, returned)
        )
        waited = f"{at(called)}..{at(returned)}, {'got the lock' if got else 'timed out'}"
        lines.append(f"free {free} s while process {pid} waited ({waited})")
        before = [(h, p) for h, p in holds if called - TIMEOUT <= h[1] <= returned][-2:]
        after = [(h, p) for h, p in holds if h[0] >= called][:2]
        for (begin, end), holder in sorted(dict.fromkeys([*before, *after])):
            lines.append(f"  hold by process {holder}: {at(begin)}..{at(end)}")
    return "\n".join(lines)


def test_free_gaps_and_stalls_are_measured_across_every_process() -> None:
    holds = [(5.0, 6.0), (0.0, 1.0), (0.5, 2.0), (6.001, 7.0), (10.0, 11.0)]
    assert free_gaps(holds) == [
        (-math.inf, 0.0), (2.0, 5.0), (6.0, 6.001), (7.0, 10.0), (11.0, math.inf)
    ]  # fmt: skip
    waits = [(1.5, 5.0), (6.5, 9.5), (3.1, 3.2), (6.9, 8.0), (10.5, 14.0), (-3.0, 0.0)]
    assert stalls(holds, waits) == [
        (3.0, (-3.0, 0.0)),
        (3.0, (1.5, 5.0)),
        (2.5, (6.5, 9.5)),
        (3.0, (10.5, 14.0)),
    ]
    assert stalls(holds, [(3.0, 5.0), (0.0, 1.0), (6.0, 9.0), (-2.0, 0.0)]) == []


def test_a_stall_is_explained_by_its_wait_and_the_holds_around_it() -> None:
    reports: list[Report] = [
        (11, [(100.0, 101.0), (110.0, 110.5)], [(100.5, 110.0)], "", [True]),
        (12, [(99.0, 99.5)], [(102.0, 107.0)], "", [False]),
    ]
    holds = [hold for _, process_holds, *_ in reports for hold in process_holds]
    waits = [wait for _, _, process_waits, *_ in reports for wait in process_waits]
    found = stalls(holds, waits)
    assert found == [(9.0, (100.5, 110.0)), (5.0, (102.0, 107.0))]
    assert explained(found, reports, 100.0).splitlines() == [
        "free 9.0 s while process 11 waited (+0.500..+10.000, got the lock)",
        "  hold by process 12: -1.000..-0.500",
        "  hold by process 11: +0.000..+1.000",
        "  hold by process 11: +10.000..+10.500",
        "free 5.0 s while process 12 waited (+2.000..+7.000, timed out)",
        "  hold by process 12: -1.000..-0.500",
        "  hold by process 11: +0.000..+1.000",
        "  hold by process 11: +10.000..+10.500",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
@pytest.mark.parametrize("flavour", ["threads", "tasks", "own-redlocks"])
def test_no_waiter_sleeps_through_a_free_lock(
    servers: LocalServerGroup, lock_name: str, fair: bool, flavour: str
) -> None:
    ctx = multiprocessing.get_context("spawn")
    results: Queue[Report] = ctx.Queue()
    start_at = time.monotonic() + 2.0  # time for the interpreters to start and import
    workers = [
        ctx.Process(
            target=churn,
            args=(Churn(servers.urls, lock_name, fair, flavour, start_at, i), results),
            name=f"churn-{i}",
        )
        for i in range(PROCESSES)
    ]
    reports = reports_of(workers, results, until=start_at + SECONDS + TIMEOUT + 40)
    assert [error for *_, error, _ in reports if error] == []
    holds = [hold for _, process_holds, *_ in reports for hold in process_holds]
    waits = [wait for _, _, process_waits, *_ in reports for wait in process_waits]
    for pid, process_holds, *_ in reports:
        assert process_holds, f"process {pid} never got the lock"
    found = stalls(holds, waits)
    assert found == [], explained(found, reports, start_at)
    # enough waits to have exercised the wake-ups (a loaded machine's run: 106 in its 8 s)
    assert len(waits) > 5 * PROCESSES * WAITERS
    assert values(servers, lock_name) == [None] * len(servers)
