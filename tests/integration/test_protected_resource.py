"""A resource protected by the lock stays consistent while servers crash.

Two workers (threads with the sync API, tasks with the asyncio API: one body for both)
do read-modify-write on a counter under ``rl.lock(..., auto_extend=True)``, with a pause
between the read and the write. Meanwhile a chaos thread kills -9 one of five servers
every second, round-robin, and restarts it (empty: no persistence) after a delay longer
than the ttl (R11, "delayed restart"). No two workers may ever be inside at once, and no
write may be lost: the counter equals the number of completed sections. A short
``max_ttl`` makes a restarted server rejoin the quorums during the run, after its
restart quarantine: the run covers crash, restart, quarantine and rejoin.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections import Counter

import pytest

from quorumlock import LockLost, LockNotAcquired, Reply
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory
from tests.integration.apis import AnyRedlock, Api, holding

TTL = 1.0
MAX_TTL = 1.0  # the restart quarantine: a restarted server rejoins 1 s after its start
WORK = 5.0
KILL_EVERY = 1.0
DOWN_FOR = 1.5  # > TTL: R11's delayed restart
assert DOWN_FOR > TTL


class Resource:
    """The protected resource, and the bookkeeping that detects a broken exclusion."""

    def __init__(self) -> None:
        self.counter = 0
        self.sections = 0  # sections that wrote
        self.by_worker: Counter[int] = Counter()
        self.inside = 0
        self.overlaps = 0
        self.errors: Counter[str] = Counter()
        self._books = threading.Lock()  # for the bookkeeping only, never held across I/O

    def enter(self) -> None:
        with self._books:
            self.inside += 1
            if self.inside > 1:
                self.overlaps += 1

    def leave(self) -> None:
        with self._books:
            self.inside -= 1

    def failed(self, exc: BaseException) -> None:
        with self._books:
            self.errors[type(exc).__name__] += 1


class Chaos(threading.Thread):
    """Kill -9 server ``k % N`` at ``k * KILL_EVERY`` s, restart it ``DOWN_FOR`` s later."""

    def __init__(self, group: LocalServerGroup) -> None:
        super().__init__(name="chaos", daemon=True)
        self.group = group
        self.stop = threading.Event()
        self.kills = 0
        self.restarts = 0
        self.restarted_at: dict[str, list[float]] = {}  # url -> monotonic restart times
        self.error: BaseException | None = None

    def run(self) -> None:
        start = time.monotonic()
        down: list[tuple[float, int]] = []  # (restart at, server index)
        k = 0
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                while down and down[0][0] <= now:
                    _, index = down.pop(0)
                    self.group[index].start()
                    self.restarts += 1
                    url = self.group.urls[index]
                    self.restarted_at.setdefault(url, []).append(time.monotonic())
                next_kill = start + 0.3 + k * KILL_EVERY
                if next_kill <= now:
                    index = k % len(self.group)
                    self.group[index].kill()
                    self.kills += 1
                    down.append((time.monotonic() + DOWN_FOR, index))
                    k += 1
                    continue
                upcoming = min([next_kill] + [at for at, _ in down])
                self.stop.wait(max(0.0, upcoming - time.monotonic()))
        except BaseException as exc:
            self.error = exc
        finally:
            for _, index in down:  # leave every server running
                if not self.group[index].running:
                    self.group[index].start()


@pytest.mark.slow
def test_counter_stays_exact_while_servers_crash(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(5)
    resource = Resource()
    granted: list[tuple[float, str]] = []  # (when, url): the servers of each acquire
    replies: Counter[Reply] = Counter()

    async def worker(rl: AnyRedlock, me: int) -> None:
        rng = random.Random()
        end = time.monotonic() + WORK
        while time.monotonic() < end:
            lock = rl.lock(lock_name, ttl=TTL, auto_extend=True, max_hold=math.inf, timeout=2)
            try:
                async with holding(lock):
                    now = time.monotonic()
                    for outcome in lock.outcomes:
                        replies[outcome.reply] += 1
                        if outcome.reply is Reply.GRANTED:
                            granted.append((now, outcome.server))
                    resource.enter()
                    try:
                        value = resource.counter
                        await asyncio.sleep(0.01)
                        lock.check()  # a lost lock must not write
                        resource.counter = value + 1
                        resource.sections += 1
                        resource.by_worker[me] += 1
                    finally:
                        resource.leave()
            except (LockLost, LockNotAcquired) as exc:  # QuorumUnavailable included
                resource.failed(exc)
            await asyncio.sleep(rng.uniform(0.0, 0.02))  # let the other worker in

    chaos_box: list[Chaos] = []

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.1, retry_delay=0.05, max_ttl=MAX_TTL)
        chaos = Chaos(group)
        chaos_box.append(chaos)
        chaos.start()
        try:
            await api.concurrently([lambda: worker(rl, 0), lambda: worker(rl, 1)], limit=WORK + 20)
        finally:
            chaos.stop.set()
            chaos.join(timeout=30)
        assert not chaos.is_alive()
        assert chaos.error is None, chaos.error
        assert chaos.kills >= 3, chaos.kills

    api.run(body)
    summary = (
        f"{resource.sections} sections {dict(resource.by_worker)}, errors {dict(resource.errors)}"
    )
    assert resource.overlaps == 0, summary
    assert resource.inside == 0, summary
    assert resource.counter == resource.sections, summary
    assert resource.sections >= 20, summary
    assert min(resource.by_worker[0], resource.by_worker[1]) >= 1, summary  # they took turns
    # crash, restart, quarantine, rejoin: a restarted server was refused while in its
    # quarantine, and granted a lock after it
    assert replies[Reply.QUARANTINED] >= 1, (summary, replies)
    chaos_restarts = chaos_box[0].restarted_at
    rejoined = [
        url
        for when, url in granted
        if any(when > at + MAX_TTL for at in chaos_restarts.get(url, []))
    ]
    assert rejoined, (summary, replies, chaos_restarts)
