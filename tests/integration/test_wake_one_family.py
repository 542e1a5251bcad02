"""The queue of waiters and the lock family, on real servers, both APIs.

Only the single lock's waiters (lock, rlock, an election's campaign) stand in a name's
queue of waiters; a multi-resource lock's set, a read-write lock and a semaphore watch
without joining, and their releases name no head: every waiter of the name is woken
(docs/algorithm.md, "Waiting: woken by the release", "The lock family"). Every waiter
here polls with ``retry_delay=60`` (pauses of 30 to 60 s), so a waiter that gets the
lock within the bounds below was woken by an announcement, never by its poll.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
import redis

from quorumlock._algorithm.scripts import QUEUE_PREFIX, RELEASED_PREFIX
from quorumlock.testing import LocalServerGroup
from tests.integration.apis import AnyLock, Api, Body, call
from tests.integration.test_election import in_background as election_background
from tests.integration.test_election import leading

T = TypeVar("T")

SLOW_POLL = 60.0
#: Far less than the shortest poll (SLOW_POLL / 2): an acquire within it was woken.
WOKEN_WITHIN = 8.0


def queue_keys_on(servers: LocalServerGroup) -> list[list[str]]:
    """The queue keys (``quorumlock:queue*``) on every server."""
    found = []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            found.append(sorted(k.decode() for k in client.scan_iter("quorumlock:queue*")))
        finally:
            client.close()
    return found


def queue_sizes(servers: LocalServerGroup, key: str) -> list[int]:
    sizes = []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            sizes.append(int(client.zcard(QUEUE_PREFIX + key)))
        finally:
            client.close()
    return sizes


def subscribers(servers: LocalServerGroup, key: str) -> list[int]:
    """How many connections listen to ``key``'s release announcements, per server."""
    counts = []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            [(_, count)] = client.pubsub_numsub(RELEASED_PREFIX + key)
            counts.append(int(count))
        finally:
            client.close()
    return counts


async def wait_until(predicate: Callable[[], bool], what: str, limit: float = 20.0) -> None:
    give_up = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < give_up, f"{what}: not within {limit} s"
        await asyncio.sleep(0.01)


def in_background(api: Api, work: Callable[[], Awaitable[T] | T]) -> asyncio.Future[T]:
    """Start ``work()`` in a thread (sync API) or a task (asyncio API)."""
    if api.flavour == "async":
        return asyncio.ensure_future(call(work()))
    return asyncio.get_running_loop().run_in_executor(None, work)  # type: ignore[arg-type]


def acquirer(lock: AnyLock) -> Callable[[], Awaitable[bool] | bool]:
    """What acquires ``lock`` (blocking, within :data:`WOKEN_WITHIN`) when called."""
    return lambda: lock.acquire(timeout=WOKEN_WITHIN)


@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
@pytest.mark.parametrize("kind", ["lock_many", "rwlock", "semaphore"])
def test_family_waiters_join_no_queue_and_are_woken_by_the_release(
    api: Api, servers: LocalServerGroup, lock_name: str, kind: str, fair: bool
) -> None:
    """A waiting set, writer or semaphore subscribes but never joins a queue of waiters
    (their releases would never name it: a join would only cost round trips and slow
    its polls), and the holder's release wakes it long before its poll. Catches a
    family waiter that joins the queue of its key (the single lock's flow, run for a
    set or rewritten for a read-write lock). The same with ``fair=True``, which orders
    the single lock only: these kinds are taken as without it."""

    async def body() -> None:
        holder_rl = api.redlock(servers.urls, instance_timeout=1.0, fair=fair)
        waiter_rl = api.redlock(
            servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0, fair=fair
        )
        holder: AnyLock
        waiter: AnyLock
        if kind == "lock_many":
            names = [f"{lock_name}:a", f"{lock_name}:b"]
            channel = names[0]
            holder = holder_rl.lock_many(names, ttl=30)
            waiter = waiter_rl.lock_many(names, ttl=30)
        elif kind == "rwlock":
            channel = f"quorumlock:rw:{{{lock_name}}}"
            holder = holder_rl.rwlock(lock_name, ttl=30).read()
            waiter = waiter_rl.rwlock(lock_name, ttl=30).write()
        else:
            channel = f"quorumlock:semaphore:{lock_name}"
            holder = holder_rl.semaphore(lock_name, permits=1, ttl=30)
            waiter = waiter_rl.semaphore(lock_name, permits=1, ttl=30)
        assert await call(holder.acquire(blocking=False))
        waiting = in_background(api, lambda: waiter.acquire(timeout=WOKEN_WITHIN))
        await wait_until(lambda: min(subscribers(servers, channel)) >= 1, "the subscription")
        # the waiter's second attempt (right after the subscription) and what would be
        # its join have gone out by now; it is in its long pause
        await asyncio.sleep(0.5)
        assert queue_keys_on(servers) == [[]] * len(servers.urls)
        started = time.monotonic()
        assert await call(holder.release())
        assert await waiting
        assert time.monotonic() - started < WOKEN_WITHIN
        assert await call(waiter.release())
        assert queue_keys_on(servers) == [[]] * len(servers.urls)

    api.run(body)


def test_a_sets_release_wakes_the_waiters_in_line_for_its_keys(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Two single-lock waiters (two Redlocks: two entries) stand in line on a name held
    as part of a set; the set's release (which names no head) wakes both, one takes the
    lock, and its release hands the lock to the other, by name. Catches a set's release
    that wakes nobody in line (every hand-over here would wait 30 s or more)."""
    first_name = f"{lock_name}:a"

    async def body() -> None:
        holder = api.redlock(servers.urls, instance_timeout=1.0).lock_many(
            [first_name, f"{lock_name}:b"], ttl=30
        )
        assert await call(holder.acquire(blocking=False))
        waiters = [
            api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0).lock(
                first_name, ttl=30
            )
            for _ in range(2)
        ]
        order: list[int] = []

        def wait_in_line(index: int) -> Body:
            async def run() -> None:
                await wait_until(
                    lambda: min(queue_sizes(servers, first_name)) >= index, "the queue"
                )
                assert await call(waiters[index].acquire(timeout=2 * WOKEN_WITHIN))
                order.append(index)
                await asyncio.sleep(0.05)
                assert await call(waiters[index].release())

            return run

        async def release_when_queued() -> None:
            await wait_until(lambda: min(queue_sizes(servers, first_name)) >= 2, "the queue")
            assert await call(holder.release())

        started = time.monotonic()
        await api.concurrently(
            [wait_in_line(0), wait_in_line(1), release_when_queued], limit=2 * WOKEN_WITHIN
        )
        assert time.monotonic() - started < 2 * WOKEN_WITHIN
        assert sorted(order) == [0, 1]  # both woken: either may win the first try
        assert queue_sizes(servers, first_name) == [0] * len(servers.urls)

    api.run(body)


def test_a_writers_release_wakes_every_waiting_reader(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Three readers (two in one Redlock, one in another) wait for a writer; its one
    release lets all three in together, each woken (a read-write lock has no queue:
    its release wakes every waiter, a process's waiters included, not one per
    release). Catches readers woken one at a time, the rest left to their poll."""

    async def body() -> None:
        writer = api.redlock(servers.urls, instance_timeout=1.0).rwlock(lock_name, ttl=30)
        hold = writer.write()
        assert await call(hold.acquire(blocking=False))
        shared = api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0)
        alone = api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0)
        readers = [
            shared.rwlock(lock_name, ttl=30).read(),
            shared.rwlock(lock_name, ttl=30).read(),
            alone.rwlock(lock_name, ttl=30).read(),
        ]
        waiting = [in_background(api, acquirer(reader)) for reader in readers]
        channel = f"quorumlock:rw:{{{lock_name}}}"
        await wait_until(lambda: min(subscribers(servers, channel)) >= 2, "the subscriptions")
        await asyncio.sleep(0.5)  # every reader is in its long pause
        started = time.monotonic()
        assert await call(hold.release())
        assert await asyncio.gather(*waiting) == [True, True, True]
        assert time.monotonic() - started < WOKEN_WITHIN
        for reader in readers:
            assert await call(reader.release())

    api.run(body)


@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
def test_an_elections_resign_wakes_the_next_candidate_in_line(
    api: Api, servers: LocalServerGroup, lock_name: str, fair: bool
) -> None:
    """A candidate waits in the queue of waiters of the election's lock (an election is
    a lock on the servers); the leader's resign names it, and it leads long before its
    poll, with ``fair=True`` too (the fair acquire, with the election's fencing).
    Catches a candidate kept out of the queue with the other kinds."""

    async def body() -> None:
        first = api.redlock(servers.urls, instance_timeout=1.0, fair=fair)
        second = api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0, fair=fair)
        a = first.election(lock_name, ttl=30, identity="a")
        b = second.election(lock_name, ttl=30, identity="b")
        led: list[float] = []

        async def follower() -> None:
            async with leading(b, timeout=WOKEN_WITHIN):
                led.append(time.monotonic())

        async with leading(a):
            join = await election_background(api, follower)
            await wait_until(lambda: min(queue_sizes(servers, lock_name)) >= 1, "the join")
            assert not led
            resigned = time.monotonic()
        await join()
        assert led[0] - resigned < WOKEN_WITHIN
        assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)

    api.run(body)


def test_a_release_that_names_a_process_wakes_its_waiter_in_line_not_its_set(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """One Redlock has two waiters on name k: a set {j, k} (first) and a single lock
    (second, in line); j is held by another client throughout. The release of k names
    the Redlock's entry: its waiter in line is woken and takes k, not the set (which
    cannot have j, and would only put the single lock back to its 30 s poll). Then j's
    release wakes the set. Catches a named wake-up given to a waiter that never joins."""
    k, j = f"{lock_name}:k", f"{lock_name}:j"

    async def body() -> None:
        others = api.redlock(servers.urls, instance_timeout=1.0)
        k_holder, j_holder = others.lock(k, ttl=30), others.lock(j, ttl=30)
        assert await call(k_holder.acquire(blocking=False))
        assert await call(j_holder.acquire(blocking=False))
        rl = api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0)
        the_set = rl.lock_many([j, k], ttl=30)
        single = rl.lock(k, ttl=30)
        set_waiting = in_background(api, acquirer(the_set))
        await wait_until(lambda: min(subscribers(servers, k)) >= 1, "the set's subscription")
        await asyncio.sleep(0.3)  # the set is in its long pause
        single_waiting = in_background(api, acquirer(single))
        await wait_until(lambda: min(queue_sizes(servers, k)) >= 1, "the single lock's join")
        started = time.monotonic()
        assert await call(k_holder.release())
        assert await single_waiting
        assert time.monotonic() - started < WOKEN_WITHIN
        assert not set_waiting.done()
        assert await call(single.release())
        assert await call(j_holder.release())
        assert await set_waiting
        assert time.monotonic() - started < WOKEN_WITHIN
        assert await call(the_set.release())

    api.run(body)
