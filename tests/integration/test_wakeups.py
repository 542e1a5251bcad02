"""Waiters woken by the release (issue 6), on real servers, both APIs.

Every waiter here polls with ``retry_delay=60``: its fallback pause is 30 to 60 s, so a
waiter that gets the lock within the tests' bounds (seconds) was woken by a release
announcement, not by polling. Without the feature these tests fail by their bounds.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest
import redis

from quorumlock import Redlock
from quorumlock import asyncio as aio
from quorumlock._algorithm.rwlock import rw_key
from quorumlock._algorithm.scripts import RELEASED_PREFIX
from quorumlock._algorithm.semaphore import SEMAPHORE_PREFIX
from quorumlock._io import async_wakeups, wakeups
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, held_on_every_server, values
from tests.integration.apis import PATIENT
from tests.integration.test_quarantine import as_user, command

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

SLOW_POLL = 60.0  # a waiter's fallback pause is 30 to 60 s: longer than any bound here
Interval = tuple[float, float]


def subscribers(servers: LocalServerGroup, name: str) -> list[int]:
    """How many connections listen to ``name``'s release channel, per server."""
    counts = []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            ((_, count),) = client.pubsub_numsub(RELEASED_PREFIX + name)
            counts.append(int(count))
        finally:
            client.close()
    return counts


def wait_for_subscribers(
    servers: LocalServerGroup, name: str, at_least: int, limit: float = 10.0
) -> None:
    give_up = time.monotonic() + limit
    while min(subscribers(servers, name)) < at_least:
        assert time.monotonic() < give_up, subscribers(servers, name)
        time.sleep(0.01)


def wait_for_no_subscribers(servers: LocalServerGroup, name: str, limit: float = 10.0) -> None:
    give_up = time.monotonic() + limit
    while any(subscribers(servers, name)):
        assert time.monotonic() < give_up, subscribers(servers, name)
        time.sleep(0.01)


def test_a_waiter_is_woken_by_the_release(servers: LocalServerGroup, lock_name: str) -> None:
    holder = Redlock(servers.urls).lock(lock_name, ttl=55)
    waiter = Redlock(servers.urls, retry_delay=SLOW_POLL).lock(lock_name, ttl=55)
    assert holder.acquire(blocking=False)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire(timeout=55)), daemon=True)
    thread.start()
    wait_for_subscribers(servers, lock_name, 1)
    assert holder.release()
    thread.join(timeout=15)
    assert got == [True]  # polling alone would have taken 30 s or more
    assert waiter.held
    wait_for_no_subscribers(servers, lock_name)  # the subscription ends with the acquire
    assert waiter.release()


def test_without_wake_on_release_a_waiter_only_polls(
    servers: LocalServerGroup, lock_name: str
) -> None:
    holder = Redlock(servers.urls).lock(lock_name, ttl=10)
    waiter = Redlock(servers.urls, retry_delay=SLOW_POLL, wake_on_release=False)
    assert holder.acquire(blocking=False)
    lock = waiter.lock(lock_name, ttl=10)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(lock.acquire(timeout=3)), daemon=True)
    thread.start()
    time.sleep(0.3)
    assert subscribers(servers, lock_name) == [0] * len(servers)
    assert holder.release()
    thread.join(timeout=15)
    # Its one pause was cut at the timeout (3 s), and the attempt then succeeded.
    assert got == [True]
    assert lock.release()


def test_a_waiter_still_polls_for_a_lock_that_expires(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """No release, no announcement: the lock expires and the R8 pause finds it free."""
    holder = Redlock(servers.urls).lock(lock_name, ttl=0.5)
    waiter = Redlock(servers.urls, retry_delay=0.2).lock(lock_name, ttl=5)
    assert holder.acquire(blocking=False)
    assert waiter.acquire(timeout=10)
    assert waiter.release()


def test_a_lost_subscription_falls_back_to_the_other_servers(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A server that dropped our subscriber connection does not keep a waiter waiting:
    the others announce the release too (every server of a majority deletes the key)."""
    holder = Redlock(servers.urls).lock(lock_name, ttl=55)
    waiter = Redlock(servers.urls, retry_delay=SLOW_POLL).lock(lock_name, ttl=55)
    assert holder.acquire(blocking=False)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire(timeout=55)), daemon=True)
    thread.start()
    wait_for_subscribers(servers, lock_name, 1)
    client = redis.Redis.from_url(servers.urls[0])
    try:
        assert client.client_kill_filter(_type="pubsub") >= 1
    finally:
        client.close()
    assert holder.release()
    thread.join(timeout=15)
    assert got == [True]
    assert waiter.release()


def test_a_frozen_server_delays_no_other_servers_subscription(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """One thread owns the subscriber connections of a ``Redlock``; connecting to a
    server that accepts the connection and then never answers (paused) must not hold it
    up: the other four subscribe and the release wakes the waiter at once, long before
    the 30 s connection timeout or the poll."""
    holder = Redlock(servers.urls).lock(lock_name, ttl=55)
    assert holder.acquire(blocking=False)
    waiter = Redlock(servers.urls, retry_delay=SLOW_POLL, connect_timeout=30).lock(
        lock_name, ttl=55
    )
    frozen, others = servers[0], [s.url for s in list(servers)[1:]]
    frozen.pause()
    try:
        got: list[bool] = []
        thread = threading.Thread(
            target=lambda: got.append(waiter.acquire(timeout=50)), daemon=True
        )
        thread.start()
        give_up = time.monotonic() + 15
        while min(_numsub(url, lock_name) for url in others) < 1:
            assert time.monotonic() < give_up, "the waiter never subscribed on the others"
            time.sleep(0.01)
        assert holder.release()
        thread.join(timeout=15)
        assert got == [True]
    finally:
        frozen.resume()
    assert waiter.release()


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_an_asyncio_subscriber_to_a_server_that_is_down_waits_between_attempts(
    make_servers: ServerFactory, lock_name: str, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server down when a task starts waiting: its subscriber connection is tried again
    after a pause, not in a loop. Over a unix socket that is gone the connect fails
    without yielding, and the loop blocked the event loop for good (the waiter's own
    timeout never fired); over TCP it spun the CPU, also after the waiter had left."""
    group = make_servers(3, unixsocket=True)
    group[2].kill()
    urls = [s.unix_url for s in group] if transport == "unix" else group.urls
    attempts = 0
    session = async_wakeups._AsyncListener._session

    async def counted(listener: async_wakeups._AsyncListener) -> str:
        nonlocal attempts
        attempts += 1
        return await session(listener)

    monkeypatch.setattr(async_wakeups._AsyncListener, "_session", counted)

    async def body() -> None:
        rl = aio.Redlock(urls)
        holder = rl.lock(lock_name, ttl=30)
        assert await holder.acquire(blocking=False)
        began = time.monotonic()
        assert not await asyncio.wait_for(rl.lock(lock_name, ttl=30).acquire(timeout=1.5), 10)
        assert time.monotonic() - began < 5  # its own timeout, in a loop that ran
        await asyncio.sleep(1.0)  # the waiter gone: no more attempts
        await holder.release()
        await rl.close()

    asyncio.run(body())
    # 2 live listeners' sessions, and the dead one's every RECONNECT_PAUSE (0.5 s) while
    # the waiter waited: a few, not thousands.
    assert attempts <= 2 + 2.5 / wakeups.RECONNECT_PAUSE + 2, attempts


def test_many_waiters_in_one_process_take_turns(servers: LocalServerGroup, lock_name: str) -> None:
    rl = Redlock(servers.urls, retry_delay=SLOW_POLL)
    holder = rl.lock(lock_name, ttl=55)
    assert holder.acquire(blocking=False)
    order: list[int] = []
    inside = threading.Lock()
    errors: list[str] = []

    def wait_then_hold(index: int) -> None:
        lock = rl.lock(lock_name, ttl=55)
        try:
            assert lock.acquire(timeout=50)
            assert inside.acquire(blocking=False), "two holders at once"
            order.append(index)
            time.sleep(0.005)
            inside.release()
            assert lock.release()
        except AssertionError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=wait_then_hold, args=(i,), daemon=True) for i in range(8)]
    for thread in threads:
        thread.start()
    wait_for_subscribers(servers, lock_name, 1)
    time.sleep(0.2)  # let every thread reach its wait
    assert holder.release()
    give_up = time.monotonic() + 20
    for thread in threads:
        thread.join(timeout=max(0.1, give_up - time.monotonic()))
    assert errors == []
    assert sorted(order) == list(range(8))


def hand_over(
    urls: list[str],
    name: str,
    start_at: float,
    rounds: int,
    results: Queue[tuple[int, str, list[Interval]]],
) -> None:
    """Worker: take the lock ``rounds`` times, waking only on announcements."""
    intervals: list[Interval] = []
    error = ""
    try:
        rl = Redlock(urls, retry_delay=SLOW_POLL, instance_timeout=0.5)
        while time.monotonic() < start_at:
            time.sleep(0.005)
        for _ in range(rounds):
            lock = rl.lock(name, ttl=30)
            if not lock.acquire(timeout=25):
                error = "timed out"
                break
            begin = time.monotonic()
            time.sleep(0.002)
            end = time.monotonic()
            lock.release()
            intervals.append((begin, end))
        rl.close()
    except Exception as exc:
        error = repr(exc)
    results.put((os.getpid(), error, intervals))


@pytest.mark.slow
def test_waiters_in_many_processes_hand_the_lock_over_on_announcements_alone(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Six processes hand the lock over again and again, woken only by announcements
    (their polling pause is 30 s or more): every one gets its turns, none overlap."""
    ctx = multiprocessing.get_context("spawn")
    results: Queue[tuple[int, str, list[Interval]]] = ctx.Queue()
    start_at = time.monotonic() + 2.0
    workers = [
        ctx.Process(target=hand_over, args=(servers.urls, lock_name, start_at, 10, results))
        for _ in range(6)
    ]
    collected = []
    try:
        for worker in workers:
            worker.start()
        for _ in workers:
            collected.append(results.get(timeout=max(1.0, start_at + 25 - time.monotonic())))
    finally:
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=5)
    assert [error for _, error, _ in collected if error] == []
    holds = sorted(interval for _, _, intervals in collected for interval in intervals)
    assert len(holds) == 60
    assert [(a, b) for a, b in itertools.pairwise(holds) if b[0] < a[1]] == []


def test_asyncio_waiter_is_woken_by_the_release(servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        holder_rl = aio.Redlock(servers.urls)
        waiter_rl = aio.Redlock(servers.urls, retry_delay=SLOW_POLL)
        holder = holder_rl.lock(lock_name, ttl=55)
        waiter = waiter_rl.lock(lock_name, ttl=55)
        assert await holder.acquire(blocking=False)
        task = asyncio.create_task(waiter.acquire(timeout=55))
        give_up = time.monotonic() + 10
        while min(subscribers(servers, lock_name)) < 1:
            assert time.monotonic() < give_up
            await asyncio.sleep(0.01)
        assert await holder.release()
        async with asyncio.timeout(15):  # polling alone would take 30 s or more
            assert await task
        assert waiter.held
        give_up = time.monotonic() + 10
        while any(subscribers(servers, lock_name)):  # unsubscribed when the acquire ended
            assert time.monotonic() < give_up
            await asyncio.sleep(0.01)
        assert await waiter.release()
        await holder_rl.close()
        await waiter_rl.close()

    asyncio.run(body())


def test_asyncio_many_waiting_tasks_take_turns(servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = aio.Redlock(servers.urls, retry_delay=SLOW_POLL)
        holder = rl.lock(lock_name, ttl=55)
        assert await holder.acquire(blocking=False)
        inside = 0
        order: list[int] = []

        async def wait_then_hold(index: int) -> None:
            nonlocal inside
            lock = rl.lock(lock_name, ttl=55)
            assert await lock.acquire(timeout=50)
            inside += 1
            assert inside == 1
            order.append(index)
            await asyncio.sleep(0.005)
            inside -= 1
            assert await lock.release()

        tasks = [asyncio.create_task(wait_then_hold(i)) for i in range(8)]
        await asyncio.sleep(0.3)
        assert await holder.release()
        async with asyncio.timeout(20):
            await asyncio.gather(*tasks)
        assert sorted(order) == list(range(8))
        await rl.close()

    asyncio.run(body())


def test_a_cancelled_asyncio_waiter_unsubscribes(servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = aio.Redlock(servers.urls, retry_delay=SLOW_POLL)
        holder = rl.lock(lock_name, ttl=55)
        assert await holder.acquire(blocking=False)
        task = asyncio.create_task(rl.lock(lock_name, ttl=55).acquire(timeout=50))
        give_up = time.monotonic() + 10
        while min(subscribers(servers, lock_name)) < 1:
            assert time.monotonic() < give_up
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        give_up = time.monotonic() + 10
        while any(subscribers(servers, lock_name)):
            assert time.monotonic() < give_up
            await asyncio.sleep(0.01)
        assert await holder.release()
        await rl.close()

    asyncio.run(body())


def test_closing_an_asyncio_redlock_that_listened_leaves_no_task_pending(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """``close()`` stops the subscriber tasks of a Redlock that waited for a lock; asyncio
    logs no "Task was destroyed but it is pending!" (one per server was logged when the
    closed Redlock was collected: each subscriber task left a task of its own waiting)."""
    reported: list[str] = []

    async def body() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, context: reported.append(context["message"])
        )
        holder = aio.Redlock(servers.urls)
        rl = aio.Redlock(servers.urls)
        taken = holder.lock(lock_name, ttl=10)
        assert await taken.acquire(blocking=False)
        assert not await rl.lock(lock_name, ttl=10).acquire(timeout=0.2)  # it listened
        await rl.close()
        del rl
        await asyncio.sleep(0.1)
        gc.collect()
        await asyncio.sleep(0)
        assert await taken.release()
        await holder.close()

    asyncio.run(body())
    assert reported == []


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer")
def test_a_sync_waiter_interrupted_while_subscribing_unsubscribes(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """sync: a signal handler's KeyboardInterrupt (a Celery soft time limit's exception
    comes the same way) while the watch waits for a majority to confirm the subscription
    (three of five servers paused). Once they are back, no subscription is left on any
    server, and no waiter of the name is left in the process, where it would take every
    wake-up meant for the process's later waiters of the name."""
    paused = [servers[i] for i in (2, 3, 4)]

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    rl = Redlock(servers.urls, retry_delay=SLOW_POLL, connect_timeout=20)
    try:
        holder = rl.lock(lock_name, ttl=55)
        assert holder.acquire(blocking=False)
        for server in paused:
            server.pause()
        try:
            signal.setitimer(signal.ITIMER_REAL, 1.0)  # the watch waits 20 s at most
            with pytest.raises(KeyboardInterrupt):
                rl.lock(lock_name, ttl=55).acquire(timeout=50)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            for server in paused:
                server.resume()
        with rl._wakeups._lock:
            assert rl._wakeups._waiters == {}, "a waiter of the interrupted acquire is left"
        time.sleep(0.5)  # the resumed servers read what was sent meanwhile
        give_up = time.monotonic() + 10
        while any(subscribers(servers, lock_name)):
            assert time.monotonic() < give_up, subscribers(servers, lock_name)
            time.sleep(0.01)
        assert holder.release()
    finally:
        signal.signal(signal.SIGALRM, previous)
        rl.close()


def test_an_asyncio_waiter_cancelled_while_subscribing_unsubscribes(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Cancelled while its watch waits for a majority to confirm the subscription (three
    of five servers paused, so only two can): once they are back, no subscription is
    left on any server. Catches a watch whose cancellation leaves its waiter registered,
    which nothing can unwatch then (its channel stays subscribed for good)."""
    paused = [servers[i] for i in (2, 3, 4)]

    def live_subscribers() -> list[int]:
        return [_numsub(servers[i].url, lock_name) for i in (0, 1)]

    async def body() -> None:
        rl = aio.Redlock(servers.urls, retry_delay=SLOW_POLL, connect_timeout=20)
        holder = rl.lock(lock_name, ttl=55)
        assert await holder.acquire(blocking=False)
        for server in paused:
            server.pause()
        try:
            task = asyncio.create_task(rl.lock(lock_name, ttl=55).acquire(timeout=50))
            give_up = time.monotonic() + 15
            while min(live_subscribers()) < 1:
                assert time.monotonic() < give_up, "the waiter never subscribed"
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            assert not task.done()  # still waiting for a majority to confirm
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            for server in paused:
                server.resume()
        await asyncio.sleep(0.5)  # the resumed servers read what was sent meanwhile
        give_up = time.monotonic() + 10
        while any(subscribers(servers, lock_name)):
            assert time.monotonic() < give_up, subscribers(servers, lock_name)
            await asyncio.sleep(0.01)
        assert await holder.release()
        await rl.close()

    asyncio.run(body())


def _numsub(url: str, name: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        ((_, count),) = client.pubsub_numsub(RELEASED_PREFIX + name)
        return int(count)
    finally:
        client.close()


def publishes(
    servers: LocalServerGroup, index: int, name: str, action: Callable[[], object]
) -> int:
    """How many release announcements for ``name`` server ``index`` made during ``action``."""
    client = redis.Redis.from_url(servers.urls[index])
    pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call, unused-ignore]
    try:
        pubsub.subscribe(RELEASED_PREFIX + name)
        assert pubsub.get_message(timeout=5) is None  # the confirmation, swallowed
        action()
        count = 0
        give_up = time.monotonic() + 0.5
        while time.monotonic() < give_up:
            if pubsub.get_message(timeout=0.05) is not None:
                count += 1
        return count
    finally:
        pubsub.close()
        client.close()


def plant(servers: LocalServerGroup, name: str, holders: str) -> None:
    """Put the key on each server: ``a``/``b``... a foreign holder's token, ``-`` none."""
    for url, holder in zip(servers.urls, holders, strict=True):
        client = redis.Redis.from_url(url)
        try:
            if holder == "-":
                client.delete(name)
            else:
                client.set(name, f"token-of-{holder}-" + "0" * 24, px=30_000)
        finally:
            client.close()


@pytest.mark.parametrize(
    ("holders", "announced"),
    [
        ("aabb-", 1),  # a split: nobody has a majority; our undo on server 5 announces
        ("aab--", 1),  # 2-1 and our 2: a split too
        ("aaab-", 0),  # a holds a majority: waking the waiters would be useless
        ("aaa--", 0),
    ],
)
def test_the_undo_of_a_split_vote_announces_the_free_lock(
    servers: LocalServerGroup, lock_name: str, holders: str, announced: int
) -> None:
    plant(servers, lock_name, holders)
    # Every server must answer (the undo announces only then): a generous instance
    # timeout, as a first contact on a loaded machine can miss the default 50 ms.
    rl = Redlock(servers.urls, instance_timeout=1.0)
    lock = rl.lock(lock_name, ttl=10)
    count = publishes(servers, 4, lock_name, lambda: lock.acquire(blocking=False))
    assert count == announced


def test_a_user_without_channel_permissions_releases_and_its_waiters_poll(
    servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``resetchannels`` (the default for new ACL users since Redis 7): the release still
    deletes the key (its announcement is skipped), and a waiter that cannot subscribe
    falls back to polling, with one warning per server, instead of failing."""
    for server in servers:
        command(server, "ACL", "SETUSER", "nochan", "reset", "on", ">pw", "~*", "+@all")
        command(server, "ACL", "SETUSER", "nochan", "resetchannels")
    restricted = [as_user(server, "nochan", "pw") for server in servers]
    holder = Redlock(restricted).lock(lock_name, ttl=10)
    waiter = Redlock(restricted, retry_delay=0.2, connect_timeout=5.0).lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire(timeout=20)), daemon=True)
    thread.start()
    time.sleep(0.5)
    assert holder.release()  # the publish is refused, the delete is not
    thread.join(timeout=25)
    assert got == [True]
    assert waiter.release()
    refusals = [r.message for r in caplog.records if "refuses the release" in r.message]
    assert sorted(m.split(" ")[0] for m in refusals) == sorted(Redlock(restricted).servers)
    assert not any("pw" in m for m in refusals)


def test_a_release_announces_only_where_it_deleted_the_key(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Server 2 holds someone else's token by the time we release, server 3 lost the key:
    the compare-and-delete deletes on 0, 1 and 4 only, and only those announce (an
    announcement where the key is still held would wake waiters for nothing, and one
    where it is held by another would tell them a taken lock is free)."""
    rl = Redlock(servers.urls, instance_timeout=PATIENT)
    lock = held_on_every_server(servers, lambda: rl.lock(lock_name, ttl=10))
    other = "token-of-b-" + "0" * 24
    clients = [redis.Redis.from_url(url) for url in servers.urls]
    clients[2].set(lock_name, other, px=30_000)
    clients[3].delete(lock_name)
    subscriptions = [
        client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call, unused-ignore]
        for client in clients
    ]
    try:
        for sub in subscriptions:
            sub.subscribe(RELEASED_PREFIX + lock_name)
            assert sub.get_message(timeout=5) is None  # the confirmation, swallowed
        assert lock.release()
        counts = [0] * len(subscriptions)
        give_up = time.monotonic() + 0.5
        while time.monotonic() < give_up:
            for index, sub in enumerate(subscriptions):
                if sub.get_message(timeout=0.01) is not None:
                    counts[index] += 1
    finally:
        for sub in subscriptions:
            sub.close()
        for client in clients:
            client.close()
    assert counts == [1, 1, 0, 0, 1]
    assert values(servers, lock_name) == [None, None, other, None, None]
    rl.close()


def _announced(servers: LocalServerGroup, channel: str, act: Callable[[], object]) -> list[bytes]:
    """What every server announced on ``channel`` while ``act()`` ran, and just after."""
    clients = [redis.Redis.from_url(url) for url in servers.urls]
    subscriptions = [
        client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call, unused-ignore]
        for client in clients
    ]
    heard: list[bytes] = []
    try:
        for sub in subscriptions:
            sub.subscribe(channel)
            assert sub.get_message(timeout=5) is None  # the confirmation, swallowed
        act()
        give_up = time.monotonic() + 0.5
        while time.monotonic() < give_up:
            for sub in subscriptions:
                message = sub.get_message(timeout=0.01)
                if message is not None:
                    heard.append(message["data"])
    finally:
        for sub in subscriptions:
            sub.close()
        for client in clients:
            client.close()
    return heard


@pytest.mark.parametrize("kind", ["set", "semaphore", "rwlock"])
def test_the_servers_announce_a_release_without_a_queue_under_one_notice(
    servers: LocalServerGroup, lock_name: str, kind: str
) -> None:
    """The kinds of lock without a queue announce their releases naming no head, but
    with the release's notice: the same on every server, so that a process counts one
    release's five announcements once (it woke a waiter for each), and another for the
    next release of the same token (a read-write lock's downgrade, then its release: the
    release's announcements must wake a waiter again)."""
    rl = Redlock(servers.urls, instance_timeout=PATIENT)
    if kind == "set":
        hold: Any = rl.lock_many([lock_name, lock_name + ":b"], ttl=10)
        channel = RELEASED_PREFIX + lock_name
    elif kind == "semaphore":
        hold = rl.semaphore(lock_name, permits=2, ttl=10)
        channel = RELEASED_PREFIX + SEMAPHORE_PREFIX + lock_name
    else:
        hold = rl.rwlock(lock_name, ttl=10).write()
        channel = RELEASED_PREFIX + rw_key(lock_name)
    assert hold.acquire(blocking=False)
    token = hold._state.token.encode()
    if kind == "rwlock":
        downgraded = _announced(servers, channel, hold.downgrade)
        assert downgraded == [downgraded[0]] * 5
        assert downgraded[0].partition(b" ")[::2] == (b"", token + b":downgrade")
    released = _announced(servers, channel, hold.release)
    assert released == [b" " + token] * 5
    rl.close()
