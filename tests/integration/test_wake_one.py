"""Wake one waiter, in arrival order (issue 15), on real servers, both APIs.

Waiters stand in a queue of waiters per name on every server (``quorumlock:queue:<name>``)
and a release wakes the head of the queue only. Every waiter polls with
``retry_delay=60`` (a fallback pause of 30 to 60 s), so a waiter that gets the lock
within the bounds here was woken by name, and a waiter that tries at all after its
first two attempts was woken.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest
import redis

from quorumlock import AcquireEvent, ConfigurationError, Lock, LockObserver, Redlock, RoundEvent
from quorumlock import asyncio as aio
from quorumlock._algorithm.flows import Fanout, Op
from quorumlock._algorithm.outcomes import Reply
from quorumlock._algorithm.scripts import (
    FAIR_ACQUIRE,
    MARKER_KEY,
    QUEUE,
    QUEUE_EXPIRY_PREFIX,
    QUEUE_PREFIX,
    QUEUED_ACQUIRE,
    RELEASED_PREFIX,
    WAKE_PREFIX,
)
from quorumlock._io.async_wakeups import AsyncWaiter, AsyncWakeups
from quorumlock._io.wakeups import Waiter
from quorumlock.testing import LatencyProxy, LocalServerGroup
from tests.conftest import client_of, decided, settled_values
from tests.integration.apis import AnyLock, AnyRedlock, Api, Body, call

SLOW_POLL = 60.0


def queue_sizes(servers: LocalServerGroup, name: str) -> list[int]:
    sizes = []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            sizes.append(int(client.zcard(QUEUE_PREFIX + name)))
        finally:
            client.close()
    return sizes


def _members(servers: LocalServerGroup, name: str) -> list[list[str]]:
    """Each server's queue of ``name``, in order."""
    lines = []
    for url in servers.urls:
        client = redis.Redis.from_url(url, decode_responses=True)
        try:
            lines.append([str(member) for member in client.zrange(QUEUE_PREFIX + name, 0, -1)])
        finally:
            client.close()
    return lines


async def until(check: object, limit: float, what: str) -> None:
    """Wait (bounded) until ``check()`` is true."""
    assert callable(check)
    give_up = time.monotonic() + limit
    while not check():
        assert time.monotonic() < give_up, f"{what} not within {limit} s"
        await asyncio.sleep(0.005)


class Rounds(LockObserver):
    """An observer that records which waiter sent each acquire round, once armed (and
    counts every acquire round of each waiter in ``sent``, armed or not)."""

    def __init__(
        self,
        log: list[int],
        index: int,
        armed: threading.Event,
        sent: dict[int, int] | None = None,
    ) -> None:
        self._log, self._index, self._armed = log, index, armed
        self._sent = {} if sent is None else sent

    def on_round(self, event: RoundEvent) -> None:
        if event.op == "acquire":
            self._sent[self._index] = self._sent.get(self._index, 0) + 1
            if self._armed.is_set():
                self._log.append(self._index)


def test_waiters_are_woken_one_per_release_in_arrival_order(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Five waiters (five Redlocks: five entries) arrive one after the other; the holder
    releases and each, once it holds, releases in turn. They get the lock in arrival
    order, and after the queue is complete only the waiter whose turn it is ever sends
    an acquire round: one woken per release (with every waiter woken by each release,
    as before, later waiters would try at every hand-over)."""
    count = 5
    order: list[int] = []
    tries: list[int] = []
    sent: dict[int, int] = {}
    armed = threading.Event()

    async def body() -> None:
        holder = api.redlock(servers.urls).lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))

        def waiter(index: int) -> Body:
            async def run() -> None:
                rounds = Rounds(tries, index, armed, sent)
                rl = api.redlock(servers.urls, retry_delay=SLOW_POLL, observer=rounds)
                await until(lambda: min(queue_sizes(servers, lock_name)) >= index, 20, "the queue")
                lock: AnyLock = rl.lock(lock_name, ttl=30)
                assert await call(lock.acquire(timeout=40))
                order.append(index)
                await asyncio.sleep(0.01)
                assert await call(lock.release())

            return run

        async def release_when_all_queued() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= count, 20, "the queue")
            # and each waiter has made the attempt it makes at once after joining (on a
            # loaded machine the last one's may come after the whole queue is in place)
            await until(lambda: len(sent) == count and min(sent.values()) >= 2, 20, "the attempts")
            armed.set()
            assert await call(holder.release())

        bodies = [waiter(i) for i in range(count)]
        await api.concurrently([*bodies, release_when_all_queued], limit=60)

    api.run(body)
    assert order == list(range(count))
    assert tries == sorted(tries), tries  # nobody tried out of turn
    assert set(tries) == set(range(count))
    assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)


def test_threads_of_one_process_share_one_entry(servers: LocalServerGroup, lock_name: str) -> None:
    """Four threads of one Redlock wait on one name: one entry per server, and each
    release wakes one of them (the lock is handed over four times, by name alone)."""
    holder_rl = Redlock(servers.urls)
    rl = Redlock(servers.urls, retry_delay=SLOW_POLL)
    holder = holder_rl.lock(lock_name, ttl=30)
    assert holder.acquire(blocking=False)
    got: list[int] = []

    def wait_then_hold(index: int) -> None:
        lock = rl.lock(lock_name, ttl=30)
        if lock.acquire(timeout=40):
            got.append(index)
            time.sleep(0.01)
            lock.release()

    threads = [threading.Thread(target=wait_then_hold, args=(i,), daemon=True) for i in range(4)]
    try:
        for thread in threads:
            thread.start()
        give_up = time.monotonic() + 20
        while min(queue_sizes(servers, lock_name)) < 1:
            assert time.monotonic() < give_up
            time.sleep(0.005)
        time.sleep(0.3)  # every thread reaches its wait
        assert queue_sizes(servers, lock_name) == [1] * len(servers.urls)
        assert holder.release()
        for thread in threads:
            thread.join(timeout=max(0.1, give_up + 20 - time.monotonic()))
    finally:
        rl.close()
        holder_rl.close()
    assert sorted(got) == [0, 1, 2, 3]


def _server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def put_first_in_line(servers: LocalServerGroup, name: str, member: str, lease_ms: int) -> None:
    """On every server, ``member`` arrived first (score 0) in ``name``'s queue, and its
    lease ends ``lease_ms`` from now on the server's clock (negative: it has ended)."""
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            client.zadd(QUEUE_PREFIX + name, {member: 0})
            client.zadd(QUEUE_EXPIRY_PREFIX + name, {member: _server_ms(client) + lease_ms})
        finally:
            client.close()


def _clear_queue(servers: LocalServerGroup, name: str) -> None:
    """Delete ``name``'s queue of waiters and its expiries on every server."""
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            client.delete(QUEUE_PREFIX + name, QUEUE_EXPIRY_PREFIX + name)
        finally:
            client.close()


def _announcements(pubsubs: list[redis.client.PubSub]) -> list[tuple[bytes, bytes]]:
    """Every message the subscriptions got within about 0.3 s (bounded)."""
    got = []
    give_up = time.monotonic() + 0.3
    while time.monotonic() < give_up:
        for pubsub in pubsubs:
            message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.01)
            if message is not None:
                got.append((message["channel"], message["data"]))
    return got


@contextlib.contextmanager
def _overheard(
    servers: LocalServerGroup, name: str
) -> Iterator[tuple[list[redis.Redis], list[redis.client.PubSub]]]:
    """A client per server, each subscribed to ``name``'s channel and to every process's
    own channel, the confirmations read: what the releases announce can be read there."""
    clients = [redis.Redis.from_url(url) for url in servers.urls]
    pubsubs = [client.pubsub() for client in clients]  # type: ignore[no-untyped-call, unused-ignore]
    try:
        for pubsub in pubsubs:
            pubsub.subscribe(RELEASED_PREFIX + name)
            pubsub.psubscribe(WAKE_PREFIX + "*")
        _announcements(pubsubs)  # the confirmations
        yield clients, pubsubs
    finally:
        for pubsub in pubsubs:
            pubsub.close()
        for client in clients:
            client.close()


def test_a_release_that_names_the_head_goes_to_its_process_only(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """With a waiter in line, the release is published on that process's own channel
    (``quorumlock:wake:<its id>``) and not on the name's, which every process waiting on
    the name or having waited on it lately listens to; with the queue empty it goes to
    the name's channel, where every listening process hears it."""
    member = "5f2a9c0e11d3b7a4"
    rl = Redlock(servers.urls)
    with _overheard(servers, lock_name) as (_, pubsubs):
        lock = rl.lock(lock_name, ttl=30)
        assert lock.acquire(blocking=False)
        put_first_in_line(servers, lock_name, member, lease_ms=30_000)
        assert lock.release()
        named = _announcements(pubsubs)
        key = lock_name.encode()
        assert len(named) == len(servers.urls)
        for channel, data in named:
            assert channel == (WAKE_PREFIX + member).encode()
            size, _, rest = data.partition(b" ")
            assert rest[: int(size)] == key  # which of the process's names
        assert lock.acquire(blocking=False)  # the queue is empty now
        assert lock.release()
        unnamed = _announcements(pubsubs)
        assert len(unnamed) == len(servers.urls)
        assert {channel for channel, _ in unnamed} == {(RELEASED_PREFIX + lock_name).encode()}
        assert all(data.startswith(b" ") for _, data in unnamed)  # names nobody
    rl.close()


def test_a_pass_wakes_the_next_waiter_only_where_the_lock_is_free(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A process passes the turn of an entry its release put in line (it did not come
    back for the lock): the entry leaves the queue, and where the lock is free the next
    waiter is woken as a release wakes it (named on its process's channel, and taken off
    the line); where the lock is held, nobody is: the holder's release will wake them."""
    rl = Redlock(servers.urls)
    timeout = rl.config.timeout_for(0)

    def pass_turn(notice: str) -> None:
        rl._fanout.run(Fanout(Op.QUEUE, lock_name, "passer", 0, timeout, arrival=f"pass {notice}"))

    with _overheard(servers, lock_name) as (clients, pubsubs):
        put_first_in_line(servers, lock_name, "passer", 30_000)
        for client in clients:
            client.zadd(QUEUE_PREFIX + lock_name, {"next": 1})
            client.zadd(QUEUE_EXPIRY_PREFIX + lock_name, {"next": _server_ms(client) + 30_000})
        holder = rl.lock(lock_name, ttl=30)
        assert holder.acquire(blocking=False)
        pass_turn("n1")
        assert _announcements(pubsubs) == []
        assert _members(servers, lock_name) == [["next"]] * len(servers.urls)
        for client in clients:
            client.delete(lock_name)  # the lock is free now, the holder gone
        put_first_in_line(servers, lock_name, "passer", 30_000)
        pass_turn("n2")
        woken = _announcements(pubsubs)
        assert len(woken) == len(servers.urls)
        for channel, data in woken:
            assert channel == (WAKE_PREFIX + "next").encode()
            assert data == f"{len(lock_name)} {lock_name}n2".encode()
        assert _members(servers, lock_name) == [[]] * len(servers.urls)
    rl.close()


@pytest.mark.parametrize("queue", ["none", "a dead entry", "a stray expiry"])
def test_a_release_with_no_live_waiter_announces_on_the_names_channel(
    servers: LocalServerGroup, lock_name: str, queue: str
) -> None:
    """With nobody alive in line the release goes to the name's channel, naming nobody,
    whatever is left of the queue's keys: none (the usual release), a dead waiter's
    entry (dropped), or an expired entry of the expiry set alone, as a user may leave
    it (dropped too: the release skips the queue's part only when neither key exists)."""
    rl = Redlock(servers.urls)
    with _overheard(servers, lock_name) as (clients, pubsubs):
        lock = rl.lock(lock_name, ttl=30)
        assert lock.acquire(blocking=False)
        if queue == "a dead entry":
            put_first_in_line(servers, lock_name, "dead-waiter", lease_ms=-1)
        elif queue == "a stray expiry":
            for client in clients:
                client.zadd(QUEUE_EXPIRY_PREFIX + lock_name, {"gone": _server_ms(client) - 1})
        assert lock.release()
        announced = _announcements(pubsubs)
        assert len(announced) == len(servers.urls)
        assert {channel for channel, _ in announced} == {(RELEASED_PREFIX + lock_name).encode()}
        assert all(data.startswith(b" ") for _, data in announced)  # names nobody
        for client in clients:
            assert not client.exists(QUEUE_PREFIX + lock_name, QUEUE_EXPIRY_PREFIX + lock_name)
    rl.close()


@pytest.mark.parametrize("dead_entry_expired", [True, False])
def test_a_dead_waiters_entry_does_not_block_the_line(
    api: Api, servers: LocalServerGroup, lock_name: str, dead_entry_expired: bool
) -> None:
    """A waiter that died stays at the head of every queue. Expired, it is dropped by
    the release, which wakes the live waiter behind it. Not yet expired, it costs one
    wake-up: the release that names it takes it off, and the next wakes the live one."""

    async def body() -> None:
        holder_rl = api.redlock(servers.urls)
        holder = holder_rl.lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))
        waiter = api.redlock(servers.urls, retry_delay=SLOW_POLL).lock(lock_name, ttl=30)
        got: list[bool] = []

        async def wait() -> None:
            # Shorter than its first poll pause (30 s or more): a wake-up gets it in
            # well under a second, a last try at the timeout only after 10 s or more.
            got.append(await call(waiter.acquire(timeout=12)))
            released.append(time.monotonic())

        await api.concurrently([wait, lambda: release(holder)], limit=45)
        assert got == [True]
        assert released[1] - released[0] < 5  # woken, not polled
        assert await call(waiter.release())

    async def release(holder: AnyLock) -> None:
        await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
        # arrived first; its lease ran out a moment ago, or has 60 s left
        put_first_in_line(servers, lock_name, "dead-waiter", -1 if dead_entry_expired else 60_000)
        if dead_entry_expired:
            assert await call(holder.release())
            released.append(time.monotonic())
            return
        assert await call(holder.release())  # names the dead waiter: nobody wakes
        assert await call(holder.acquire(blocking=False))
        assert await call(holder.release())  # names the live one
        released.append(time.monotonic())

    released: list[float] = []
    api.run(body)
    assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)


def test_servers_that_lost_their_queues_still_wake_a_waiter(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Every server lost the queue (a restart, a flush): a release there finds it empty
    and wakes one waiter in every listening process."""

    async def body() -> None:
        holder = api.redlock(servers.urls).lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))
        waiter = api.redlock(servers.urls, retry_delay=SLOW_POLL).lock(lock_name, ttl=30)
        got: list[bool] = []

        times: list[float] = []

        async def wait() -> None:
            got.append(await call(waiter.acquire(timeout=40)))
            times.append(time.monotonic())

        async def release() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
            _clear_queue(servers, lock_name)
            assert await call(holder.release())
            times.insert(0, time.monotonic())

        await api.concurrently([wait, release], limit=45)
        assert got == [True]
        # woken, not polled: its poll would come 30 s or more after the release
        assert times[1] - times[0] < 15
        assert await call(waiter.release())

    api.run(body)


def test_a_waiter_that_times_out_leaves_no_entry(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        holder = api.redlock(servers.urls).lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))
        # its entry's lease is 300 s: an empty queue is its leaving, not its expiry (and a
        # leave that times out on a loaded machine leaves it to expire: a generous timeout)
        waiter = api.redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=1.0).lock(
            lock_name, ttl=30
        )
        got: list[bool] = []

        async def wait() -> None:
            got.append(await call(waiter.acquire(timeout=2.0)))

        async def watch() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")

        await api.concurrently([wait, watch], limit=30)
        assert got == [False]
        await until(lambda: max(queue_sizes(servers, lock_name)) == 0, 10, "an empty queue")
        assert await call(holder.release())

    api.run(body)


async def _cancel_a_waiter(
    servers: LocalServerGroup, lock_name: str, urls: list[str], **options: object
) -> None:
    """A holder on ``servers``; an asyncio waiter (on ``urls``) that stands in line is
    cancelled: its entry leaves every queue."""
    holder_rl = aio.Redlock(servers.urls)
    rl = aio.Redlock(urls, retry_delay=SLOW_POLL, **options)  # type: ignore[arg-type]
    holder = holder_rl.lock(lock_name, ttl=30)
    assert await holder.acquire(blocking=False)
    task = asyncio.create_task(rl.lock(lock_name, ttl=30).acquire(timeout=40))
    await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: max(queue_sizes(servers, lock_name)) == 0, 10, "an empty queue")
    assert await holder.release()
    await rl.close()
    await holder_rl.close()


def test_a_cancelled_asyncio_waiter_leaves_no_entry(
    servers: LocalServerGroup, lock_name: str
) -> None:
    # (a generous timeout: a leave that times out on a loaded machine leaves its entry to
    # expire, six minutes later)
    asyncio.run(_cancel_a_waiter(servers, lock_name, servers.urls, instance_timeout=1.0))


def test_an_asyncio_waiter_cancelled_while_its_attempt_stands_in_line_leaves_no_entry(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A waiter's attempt puts its entry in line where it is refused. One server is 0.5 s
    away each way: the attempt has put the entry there, and its answer has not come back,
    when the task is cancelled. The entry is taken off every queue all the same (its
    lease would keep it there for six minutes, each release naming a waiter that is
    gone)."""
    first, *others = servers.servers

    async def body() -> None:
        with LatencyProxy(first.host, first.port, delay=0.5) as far:
            urls = [far.url, *(s.url for s in others)]
            await _cancel_a_waiter(servers, lock_name, urls, instance_timeout=3, connect_timeout=10)

    asyncio.run(body())


def test_a_join_renews_the_entry_with_the_servers_clock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The queue script: an entry expires a lease after its last join, on the server's
    clock, and both keys vanish once the last entry could have expired."""
    client = redis.Redis.from_url(servers.urls[0])
    try:
        keys = (QUEUE_PREFIX + lock_name, QUEUE_EXPIRY_PREFIX + lock_name)
        before = _server_ms(client)
        assert client.eval(QUEUE.source, 2, *keys, "w1", "12.5", 5000) == 1
        after = _server_ms(client)
        assert client.zscore(keys[0], "w1") == 12.5
        expiry = client.zscore(keys[1], "w1")
        assert expiry is not None
        assert before + 5000 <= expiry <= after + 5000
        assert 0 < client.pttl(keys[0]) <= 5000
        assert 0 < client.pttl(keys[1]) <= 5000
        assert client.eval(QUEUE.source, 2, *keys, "w1", "-", 0) == 1
        assert client.zcard(keys[0]) == 0
        assert client.zcard(keys[1]) == 0
    finally:
        client.close()


def test_fair_locks_hand_over_in_arrival_order_and_refuse_barging(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """``fair=True``: four waiters arrive in a known order and poll as usual (0.1 to
    0.2 s); each, right after its release, tries to take the lock straight back (a
    barge). Every hand-over keeps arrival order and every barge is refused while
    someone waits. A barge races the woken head, so a fair check that let anyone in
    could still lose every race here: the next test pins that check down."""
    count = 4
    order: list[int] = []
    barges: list[bool] = []

    async def body() -> None:
        holder_rl = api.redlock(servers.urls, fair=True)
        holder = holder_rl.lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))

        def waiter(index: int) -> Body:
            async def run() -> None:
                rl = api.redlock(servers.urls, fair=True)
                await until(lambda: min(queue_sizes(servers, lock_name)) >= index, 20, "the queue")
                lock: AnyLock = rl.lock(lock_name, ttl=30)
                assert await call(lock.acquire(timeout=40))
                order.append(index)
                await asyncio.sleep(0.01)
                assert await call(lock.release())
                again = rl.lock(lock_name, ttl=30)
                took = await call(again.acquire(blocking=False))
                barges.append(took)
                if took:
                    assert await call(again.release())

            return run

        async def release_when_all_queued() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= count, 20, "the queue")
            assert await call(holder.release())
            barge = holder_rl.lock(lock_name, ttl=30)
            assert not await call(barge.acquire(blocking=False))

        await api.concurrently(
            [*[waiter(i) for i in range(count)], release_when_all_queued], limit=60
        )

    api.run(body)
    assert order == list(range(count))
    assert barges[: count - 1] == [False] * (count - 1)  # the last found nobody waiting
    assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)


def _server_counts(servers: LocalServerGroup, name: str) -> tuple[int, int]:
    """SUBSCRIBE commands run on all servers so far, and the fewest connections any
    server has listening to ``name``'s release announcements."""
    subscribes, listening = 0, []
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            stats = client.info("commandstats").get("cmdstat_subscribe", {})
            subscribes += int(stats.get("calls", 0))
            ((_, count),) = client.pubsub_numsub(RELEASED_PREFIX + name)
            listening.append(int(count))
        finally:
            client.close()
    return subscribes, min(listening)


class Ops(LockObserver):
    """An observer that records the op of every round."""

    def __init__(self, log: list[str], detail: list[tuple[str, bool, bool]] | None = None):
        self._log = log
        self._detail = detail

    def on_round(self, event: RoundEvent) -> None:
        self._log.append(event.op)
        if self._detail is not None:
            # whether a majority took it (granted, done) and a majority put it in line
            needed = len(event.outcomes) // 2 + 1
            ok = sum(1 for o in event.outcomes if o.reply.ok) >= needed
            placed = sum(1 for o in event.outcomes if o.place) >= needed
            self._detail.append((event.op, ok, placed))


def test_a_process_that_waits_again_soon_keeps_listening(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A waiter got the lock, and its process waits on the name again within seconds
    (the workers of a busy name take turns): the subscription lingered, so no SUBSCRIBE
    is sent; and since the process listens already, its first attempt stands in line
    where it is refused, in the same round: no other attempt nor join follows at once,
    and the release wakes it (its poll would come 30 s or more later)."""
    ops: list[str] = []
    detail: list[tuple[str, bool, bool]] = []
    counts: list[tuple[int, int]] = []

    async def body() -> None:
        holder = api.redlock(servers.urls).lock(lock_name, ttl=30)
        # instance_timeout: as in the fair waiter's order test below
        rl = api.redlock(
            servers.urls, retry_delay=SLOW_POLL, instance_timeout=2.0, observer=Ops(ops, detail)
        )

        async def wait() -> None:
            lock = rl.lock(lock_name, ttl=30)
            assert await call(lock.acquire(timeout=20))
            assert await call(lock.release())

        async def release() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
            assert await call(holder.release())

        for _ in range(2):
            assert await call(holder.acquire(blocking=False))
            counts.append(_server_counts(servers, lock_name))
            ops.clear()
            detail.clear()
            await api.concurrently([wait, release], limit=30)
        counts.append(_server_counts(servers, lock_name))

    api.run(body)
    (before, none), (between, kept), (after, still) = counts
    assert none == 0
    assert between > before  # the first wait subscribed
    assert min(kept, still) >= 1  # lingering after each wait
    assert after == between  # the second wait subscribed nowhere
    # The first attempt was refused and put the entry in line on a majority; no join
    # followed it. (A woken attempt can still race the holder's release round on a
    # loaded machine and fail: it stands in line again in that round, or after its undo.)
    assert detail[0] == ("acquire", False, True)
    assert ops[1] != "queue"
    assert detail[-2:] == [("acquire", True, False), ("release", True, False)]


def test_a_fair_acquire_waits_for_the_head_of_the_line(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A waiter stands at the head of the line on every server (its entry has 60 s
    left) and has not come for the free lock yet: a fair acquire by anyone else is
    refused, and a default acquire, which does not look at the line, takes the lock.
    The barges of the hand-over test race the woken head; this one cannot."""
    put_first_in_line(servers, lock_name, "slow-waiter", 60_000)

    async def body() -> None:
        fair = api.redlock(servers.urls, fair=True).lock(lock_name, ttl=30)
        assert not await call(fair.acquire(blocking=False))
        default = api.redlock(servers.urls).lock(lock_name, ttl=30)
        assert await call(default.acquire(blocking=False))
        assert await call(default.release())

    try:
        api.run(body)
    finally:
        _clear_queue(servers, lock_name)


def test_a_fair_waiter_that_arrived_before_the_head_of_the_line_goes_first(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The two waiters in line on every server arrived after the waiter that comes for
    the free lock now (their arrivals: a minute from now), and that waiter is not in
    line (its entry left, or never came): its attempt as a waiter is its turn, granted.
    Refused as a newcomer instead, it would join ahead of the head, which the servers
    then refuse too, and both would wait for a poll (30 s or more here). (Its first
    attempt, a newcomer's, is refused with the lock free: it wakes the head, which
    leaves the line, one queue round; the other is the head then.)"""
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            late = _server_ms(client) + 60_000
            for waiter, arrival in (("later-waiter", late), ("latest-waiter", late + 1)):
                client.zadd(QUEUE_PREFIX + lock_name, {waiter: arrival})
                client.zadd(QUEUE_EXPIRY_PREFIX + lock_name, {waiter: late})
        finally:
            client.close()
    ops: list[str] = []

    async def body() -> None:
        # instance_timeout: a reply later than the default 150 ms (a loaded host, the
        # first round's connections) would add an undo of the refused attempt (a release)
        rl = api.redlock(
            servers.urls, fair=True, retry_delay=SLOW_POLL, instance_timeout=2.0, observer=Ops(ops)
        )
        lock = rl.lock(lock_name, ttl=30)
        # a newcomer's attempt is refused, then its first attempt as a waiter is granted
        assert await call(lock.acquire(timeout=10))
        assert await call(lock.release())

    try:
        api.run(body)
    finally:
        _clear_queue(servers, lock_name)
    assert ops[:4] == ["acquire", "queue", "acquire", "release"], ops


def test_a_fair_waiter_refused_while_the_lock_is_free_wakes_the_head(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The lock is free and a waiter that is not coming for it heads the line on every
    server (it became the head with no release to name it: a process whose waiters come
    and go moves its entry; or it died, its lease still running). A fair acquire is
    refused with nobody holding the lock: it wakes the head, as a release would, which
    takes it off the line, and gets the lock at its next attempt, not at a poll (30 s
    or more here) nor once the head's lease has run out."""
    put_first_in_line(servers, lock_name, "asleep-waiter", 60_000)

    async def body() -> None:
        rl = api.redlock(servers.urls, fair=True, retry_delay=SLOW_POLL)
        lock = rl.lock(lock_name, ttl=30)
        with _overheard(servers, lock_name) as (_, pubsubs):
            assert await call(lock.acquire(timeout=10))
            named = _announcements(pubsubs)
        assert (WAKE_PREFIX + "asleep-waiter").encode() in {channel for channel, _ in named}
        assert all("asleep-waiter" not in line for line in _members(servers, lock_name))
        assert await call(lock.release())

    try:
        api.run(body)
    finally:
        _clear_queue(servers, lock_name)


def test_fair_needs_the_queue(servers: LocalServerGroup) -> None:
    with pytest.raises(ConfigurationError, match="wake_on_release"):
        Redlock(servers.urls, fair=True, wake_on_release=False)


def test_waiters_far_back_in_line_poll_less_often(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Four waiters (four Redlocks: four entries, ``retry_delay=0.2``) stand in line
    while the lock stays held for 3 s: the fourth, whom every server puts fourth, polls
    about a third as often as the head (three R8 pauses between its polls), and at most
    half as often here. Catches waiters that all poll at the R8 rate whatever their
    place, which with many waiters is most of the servers' and the clients' work."""
    count = 4
    tries: list[int] = []
    armed = threading.Event()

    async def body() -> None:
        holder = api.redlock(servers.urls).lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))

        def waiter(index: int) -> Body:
            async def run() -> None:
                rl = api.redlock(
                    servers.urls, retry_delay=0.2, observer=Rounds(tries, index, armed)
                )
                await until(lambda: min(queue_sizes(servers, lock_name)) >= index, 20, "the queue")
                lock: AnyLock = rl.lock(lock_name, ttl=30)
                assert await call(lock.acquire(timeout=40))
                assert await call(lock.release())

            return run

        async def hold_then_release() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= count, 20, "the queue")
            armed.set()
            await asyncio.sleep(3.0)
            armed.clear()
            assert await call(holder.release())

        bodies = [waiter(i) for i in range(count)]
        await api.concurrently([*bodies, hold_then_release], limit=60)

    api.run(body)
    head, last = tries.count(0), tries.count(count - 1)
    assert head >= 4, tries  # the head polled all along
    assert last * 2 <= head, (head, last)


class _Counted(LockObserver):
    """Counts acquire rounds of any kind: all of them, and those while ``armed``."""

    def __init__(self) -> None:
        self.armed = False
        self.rounds = self.total = 0

    def on_round(self, event: RoundEvent) -> None:
        if "acquire" in event.op:
            self.total += 1
            self.rounds += self.armed


def _hold(rl: AnyRedlock, kind: str, name: str) -> Any:
    """A hold of ``name`` of that kind, not acquired yet."""
    if kind == "lock":
        return rl.lock(name, ttl=30)
    if kind == "semaphore":
        return rl.semaphore(name, permits=1, ttl=30)
    return rl.rwlock(name, ttl=30).write()


def _in_turn(
    api: Api,
    servers: LocalServerGroup,
    name: str,
    kind: str,
    *,
    count: int,
    retry_delay: float,
    counted: _Counted,
    beside: Callable[[Any], Any],
) -> list[int]:
    """``count`` waiters of one Redlock (``retry_delay``, observed by ``counted``) wait for
    a hold of ``name`` of that kind, held by another Redlock; each, once it has it,
    releases it at once. ``beside(holder)`` runs meanwhile, and releases the holder.
    Returns the waiters, in the order they got the hold."""
    got: list[int] = []

    async def body() -> None:
        holder = _hold(api.redlock(servers.urls), kind, name)
        assert await call(holder.acquire(blocking=False))
        rl = api.redlock(servers.urls, retry_delay=retry_delay, observer=counted)

        def waiter(index: int) -> Body:
            async def run() -> None:
                hold = _hold(rl, kind, name)
                assert await call(hold.acquire(timeout=40))
                got.append(index)
                assert await call(hold.release())

            return run

        async def aside() -> None:
            await beside(holder)

        await api.concurrently([*(waiter(i) for i in range(count)), aside], limit=60)

    api.run(body)
    return got


@pytest.mark.parametrize("kind", ["lock", "semaphore", "rwlock"])
def test_one_waiter_of_a_process_polls_for_all_of_its_waiters_of_the_name(
    api: Api, servers: LocalServerGroup, lock_name: str, kind: str
) -> None:
    """Eight waiters of one Redlock (threads or tasks, ``retry_delay=0.2``: a poll every
    0.1 to 0.2 s) wait while a lock, a semaphore of one permit or a read-write lock's
    write hold stays held for 3 s: only the oldest polls, the others wait on behind it
    (their polls would ask the same servers the same thing), so the process sends at
    most a poll per 0.1 s, not eight (1,000 asyncio tasks on one name, each polling,
    took 77 attempts per acquisition). Then each gets it in turn."""
    count = 8
    counted = _Counted()

    async def hold_then_release(holder: Any) -> None:
        await until(lambda: counted.total >= count, 20, "the waiters' first attempts")
        await asyncio.sleep(1.0)  # every waiter made its first attempts
        counted.armed = True
        await asyncio.sleep(3.0)
        counted.armed = False
        assert await call(holder.release())

    got = _in_turn(
        api, servers, lock_name, kind,
        count=count, retry_delay=0.2, counted=counted, beside=hold_then_release,
    )  # fmt: skip
    assert sorted(got) == list(range(count))
    # one poller: 3 s / 0.1 s at most, and a few rounds that end as the count begins;
    # eight pollers: about 8 x 3 s / 0.15 s, 160
    assert 5 <= counted.rounds <= 40, counted.rounds


@pytest.mark.parametrize("kind", ["semaphore", "rwlock"])
def test_a_release_without_a_queue_wakes_one_waiter_of_a_process_not_one_per_server(
    api: Api, servers: LocalServerGroup, lock_name: str, kind: str
) -> None:
    """Six waiters of one Redlock (``retry_delay=60``: only wake-ups make them try) on a
    semaphore of one permit or a read-write lock's write hold, which another Redlock
    holds, then releases; each waiter, once it has the lock, releases it at once. Such
    a release names no head, and each of the five servers announces it: the five
    announcements of one release wake one waiter (and again once it has tried), so the
    six hand-overs take about one attempt each. Woken one per announcement, the next
    four waiters each tried at every release, and failed (a read-write lock's writers
    made 6.4 attempts per hold)."""
    count = 6
    counted = _Counted()

    async def release(holder: Any) -> None:
        await until(lambda: counted.total >= count, 20, "the waiters' first attempts")
        await asyncio.sleep(0.5)  # (no poll comes: SLOW_POLL)
        counted.armed = True
        assert await call(holder.release())

    got = _in_turn(
        api, servers, lock_name, kind,
        count=count, retry_delay=SLOW_POLL, counted=counted, beside=release,
    )  # fmt: skip
    assert sorted(got) == list(range(count))
    # six hand-overs, each an attempt (now and then a second one, sent before the release
    # reached a majority); 6 in every run here, and 7 to 15 with a waiter woken per server
    assert count <= counted.rounds <= count + 3, counted.rounds


def test_the_next_waiter_of_a_process_polls_once_the_one_that_polled_gives_up(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Two waiters of one Redlock wait on a lock that another client holds for 2 s and
    never releases: no announcement comes, only a poll finds it free. The first gives up
    at 0.5 s; the second, which waited behind it, polls from then on and takes the lock
    as it expires, not only at the end of its own 20 s timeout."""
    for url in servers.urls:
        client = redis.Redis.from_url(url)
        try:
            client.set(lock_name, "another-client", px=2000)
        finally:
            client.close()
    took: list[float] = []

    async def body() -> None:
        rl = api.redlock(servers.urls, retry_delay=0.2)
        start = time.monotonic()

        async def first() -> None:
            assert not await call(rl.lock(lock_name, ttl=30).acquire(timeout=0.5))

        async def second() -> None:
            await asyncio.sleep(0.1)  # behind the first
            lock: AnyLock = rl.lock(lock_name, ttl=30)
            assert await call(lock.acquire(timeout=20))
            took.append(time.monotonic() - start)
            assert await call(lock.release())

        await api.concurrently([first, second], limit=40)

    api.run(body)
    assert len(took) == 1
    assert 1.5 < took[0] < 8.0, took


def test_a_fair_attempt_stands_in_line_where_it_is_refused(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The fair acquire script on a real server: refused (not the head, or the lock is
    taken), the caller stands in line in that step, at its arrival, and the answer ends
    with its place; granted to the head, the entry stays until its holder leaves."""
    client = client_of(servers[0])
    queue, expiry = QUEUE_PREFIX + lock_name, QUEUE_EXPIRY_PREFIX + lock_name
    run_id = str(client.info("server")["run_id"])

    def attempt(token: str, member: str, arrival: str) -> list[object]:
        keys = (lock_name, MARKER_KEY, queue, expiry)
        args = (token, 30_000, 60_000, "0", run_id, "0", member, arrival, 30_000)
        reply = client.evalsha(FAIR_ACQUIRE.sha, 4, *keys, *args)
        assert isinstance(reply, list)
        return reply

    try:
        for script in (QUEUE, FAIR_ACQUIRE):
            client.script_load(script.source)
        client.evalsha(QUEUE.sha, 2, queue, expiry, "w1", 1.5, 30_000)
        late = attempt("t2", "w2", "2.5")
        assert late[0] == 0  # not the head: refused, the lock free
        assert late[-1] == 2  # and in line, second
        client.set(lock_name, "the holder")
        assert attempt("t1", "w1", "1.5")[-1] == 1  # the head, refused by the holder
        client.delete(lock_name)
        granted = attempt("t1", "w1", "1.5")
        assert granted[0] == 1
        assert granted[-1] == 0
        assert client.zrange(queue, 0, -1) == [b"w1", b"w2"]
    finally:
        client.close()


def test_the_queued_acquire_takes_the_entry_off_only_where_it_writes_the_lock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The acquire script of a waiter in line (on a real server): refused by another
    holder's key, the entry stays in line; granted, it leaves the queue and its
    expiries, and nobody else's entry does."""
    client = client_of(servers[0])
    queue, expiry = QUEUE_PREFIX + lock_name, QUEUE_EXPIRY_PREFIX + lock_name

    def attempt(token: str, member: str, arrival: str = "", lease: int = 0) -> Any:
        args = (lock_name, MARKER_KEY, token, 30_000, 60_000, "0")
        run_id = str(client.info("server")["run_id"])
        entry = (queue, expiry, member, arrival, lease)
        reply = client.evalsha(QUEUED_ACQUIRE.sha, 2, *args, run_id, "0", *entry)
        assert isinstance(reply, list) or reply == 1
        return reply

    try:
        for script in (QUEUE, QUEUED_ACQUIRE):
            client.script_load(script.source)
        for member, arrival in (("w1", 1.5), ("w2", 2.5)):
            client.evalsha(QUEUE.sha, 2, queue, expiry, member, arrival, 30_000)
        client.set(lock_name, "the holder")
        refused = attempt("t1", "w1")
        assert refused[0] == 0
        assert refused[-1] == 0  # no arrival: not (re)joined
        assert client.zrange(queue, 0, -1) == [b"w1", b"w2"]  # refused: still in line
        # refused with its arrival and lease: it stands in line in that step, at its
        # place, and the answer ends with that place
        assert client.zscore(queue, "w3") is None
        assert attempt("t3", "w3", "3.5", 30_000)[-1] == 3
        assert client.zrange(queue, 0, -1) == [b"w1", b"w2", b"w3"]
        assert attempt("t2", "w2", "2.5", 30_000)[-1] == 2  # again: the same place
        client.delete(lock_name)
        # it wrote the lock, so it left and did not join: the usual grant answers 1 alone
        assert attempt("t1", "w1", "1.5", 30_000) == 1
        assert client.get(lock_name) == b"t1"
        assert client.zrange(queue, 0, -1) == [b"w2", b"w3"]
        assert sorted(client.zrange(expiry, 0, -1)) == [b"w2", b"w3"]  # by when they expire
    finally:
        client.close()


def test_the_queues_agree_after_a_release_that_was_late_on_one_server(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The holder's release reaches the fifth server late (a delay on its connection);
    the first waiter, woken by the other four, takes the lock there and is refused on
    the fifth, where the late release then takes it off the queue. Its own release does
    nothing on the fifth server (it never held there), so the next waiter is not taken
    off the fifth queue by a release: its own acquire takes it off. While it holds, every
    server's queue holds the third waiter alone; in the end every queue is empty. (Were
    the second waiter left in the fifth queue, every later release there would name a
    process that already has the lock, and such servers could add up to a majority.)"""
    results: dict[str, list[object]] = {"w1": [], "w2": []}
    released = threading.Event()

    class Outcomes(LockObserver):
        def __init__(self, name: str) -> None:
            self._name = name

        def on_acquire(self, event: AcquireEvent) -> None:
            if event.acquired:
                results[self._name] = [o.reply for o in event.outcomes]

    with LatencyProxy(servers[4].host, servers[4].port) as proxy:

        async def body() -> None:
            urls = [*servers.urls[:4], proxy.url]
            holder = api.redlock(urls, instance_timeout=5.0).lock(lock_name, ttl=30)
            assert await call(holder.acquire(blocking=False))
            sizes: list[list[int]] = []

            def waiter(index: int) -> Body:
                async def run() -> None:
                    name = f"w{index}"
                    rl = api.redlock(servers.urls, retry_delay=SLOW_POLL, observer=Outcomes(name))
                    await until(lambda: min(queue_sizes(servers, lock_name)) >= index - 1, 20, "q")
                    lock: AnyLock = rl.lock(lock_name, ttl=30)
                    assert await call(lock.acquire(timeout=40))
                    if index == 1:
                        await until(released.is_set, 20, "the holder's late release")
                    if index == 2:
                        sizes.append(queue_sizes(servers, lock_name))
                    assert await call(lock.release())

                return run

            async def release_late() -> None:
                await until(lambda: min(queue_sizes(servers, lock_name)) >= 3, 20, "the queue")
                proxy.set_delay(1.5)  # each way: longer than a stall of a busy CI machine
                assert await call(holder.release())
                released.set()

            await api.concurrently([waiter(1), waiter(2), waiter(3), release_late], limit=60)
            assert sizes == [[1] * 5]

        api.run(body)
    # The first waiter was refused by the holder's key on the fifth server (and, on a busy
    # machine, maybe on one more, whose part of the release came after its attempt).
    # (Decided by the four others, its attempt may have left the fifth's answer unread.)
    first = results["w1"]
    assert first[4] in (Reply.TAKEN, Reply.UNREAD)
    assert first.count(Reply.GRANTED) >= 3
    # The second was granted on the fifth server, where the first never held. (Woken by
    # the first servers that the first waiter's release reached, its attempt may come
    # before that release on others, on a busy machine, and be refused there.)
    second = results["w2"]
    assert second[4] in (Reply.GRANTED, Reply.UNREAD)
    assert second.count(Reply.GRANTED) >= 3
    assert set(second) <= {Reply.GRANTED, Reply.TAKEN, Reply.UNREAD}
    assert queue_sizes(servers, lock_name) == [0] * 5


async def _take_turns_once(
    api: Api, servers: LocalServerGroup, name: str, first: AnyLock, second: AnyLock
) -> None:
    """``first`` holds ``name``, ``second`` waits for it and gets it: ``second``'s
    process has listened to the name since, as a worker of a busy name has."""
    assert await call(first.acquire(blocking=False))

    async def release() -> None:
        await until(lambda: min(queue_sizes(servers, name)) >= 1, 20, "the queue")
        assert await call(first.release())

    async def wait() -> None:
        assert await call(second.acquire(timeout=20))

    await api.concurrently([wait, release], limit=30)


async def _listen_and_hold(
    api: Api, servers: LocalServerGroup, name: str, worker: AnyRedlock, other: AnyRedlock
) -> AnyLock:
    """``worker``'s process has waited for ``name`` (it listens to the name, as a worker
    of a busy name does) and now holds it on every server (the acquire that waited may
    have met a release in flight on one of them: it is released, and taken anew)."""
    waited = worker.lock(name, ttl=30)
    await _take_turns_once(api, servers, name, other.lock(name, ttl=30), waited)
    assert await call(waited.release())  # nobody waits: it puts the worker in no line
    held = worker.lock(name, ttl=30)
    assert await call(held.acquire(blocking=False))
    n = len(servers.urls)
    assert decided([o.reply for o in held.outcomes], [Reply.GRANTED] * n), held.outcomes
    assert settled_values(servers, name, [held.token] * n) == [held.token] * n
    return held


def test_a_process_that_releases_and_acquires_again_stands_behind_the_waiter_it_woke(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A worker releases the name it works on and at once wants it again, while another
    process waits in line: its release woke that waiter and put the worker in line
    behind it, in the same round, so its acquire sends nothing until it is woken (no
    join round, no attempt) instead of racing the waiter. The waiter here is slow (20 ms
    each way to every server): an attempt by the worker would win every time, and take
    the lock back under the waiter's nose."""
    order: list[str] = []
    ops: list[str] = []
    took: list[str] = []  # the worker's rounds from its release to its acquire's return
    proxies = [LatencyProxy(s.host, s.port, delay=0.02) for s in servers.servers]
    for proxy in proxies:
        proxy.start()

    async def body() -> None:
        # instance_timeout: as in the fair waiter's order test above
        worker = api.redlock(servers.urls, instance_timeout=2.0, observer=Ops(ops))
        slow = api.redlock([p.url for p in proxies], retry_delay=SLOW_POLL, instance_timeout=1)
        held = worker.lock(lock_name, ttl=30)
        await _take_turns_once(api, servers, lock_name, slow.lock(lock_name, ttl=30), held)
        other = slow.lock(lock_name, ttl=30)

        async def waiter() -> None:
            assert await call(other.acquire(timeout=20))
            order.append("waiter")
            await asyncio.sleep(0.05)
            assert await call(other.release())

        async def again() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
            ops.clear()
            assert await call(held.release())
            lock = worker.lock(lock_name, ttl=30)
            assert await call(lock.acquire(timeout=20))
            took.extend(ops)
            order.append("worker")
            assert await call(lock.release())

        await api.concurrently([waiter, again], limit=60)

    try:
        api.run(body)
    finally:
        for proxy in proxies:
            proxy.close()
    assert order == ["waiter", "worker"]
    # its release (which put it in line), then nothing before its first attempt, once
    # woken (which may fail where it meets servers the waiter's release has not reached
    # yet, and be followed by an undo, a join and another attempt: step 5)
    assert took[:2] == ["release", "acquire"], took


def _member_of(redlock: object) -> str:
    """A Redlock's id in the queues."""
    member = getattr(getattr(redlock, "_wakeups"), "_member")  # noqa: B009
    assert isinstance(member, str)
    return member


def test_a_fair_process_whose_release_woke_the_head_takes_the_lock_the_head_is_done_with(
    api: Api, servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``fair=True``, a worker's release names the waiter first in line, which takes
    the lock and releases it (nobody in line then) before the worker wants the name
    again. The worker's acquire tries at once and gets the free lock: a fair attempt
    races nobody, as the servers refuse it to all but the head. Joining instead, to
    stand behind the waiter its release woke, it would head an empty line with the
    lock free, and wait for its poll (30 s or more here; the acquire's 5 s timeout)."""
    # the worker wants the name again however long the waiter's turn takes here
    monkeypatch.setattr("quorumlock._algorithm.flows.HAND_OVER", 60.0)
    ops: list[str] = []
    took: list[str] = []  # the worker's rounds in its second acquire

    async def body() -> None:
        # instance_timeout: as in the fair waiter's order test above
        worker = api.redlock(
            servers.urls, fair=True, retry_delay=SLOW_POLL, instance_timeout=2.0, observer=Ops(ops)
        )
        other = api.redlock(servers.urls, fair=True, retry_delay=SLOW_POLL)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        turn = other.lock(lock_name, ttl=30)
        done: list[bool] = []

        async def wait() -> None:
            assert await call(turn.acquire(timeout=20))
            assert await call(turn.release())
            done.append(True)

        async def release_and_again() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
            assert await call(held.release())  # names the waiter, first in line
            await until(lambda: bool(done), 20, "the waiter's turn")
            ops.clear()
            again = worker.lock(lock_name, ttl=30)
            assert await call(again.acquire(timeout=5))
            took.extend(ops)
            assert await call(again.release())

        await api.concurrently([wait, release_and_again], limit=60)

    api.run(body)
    assert took == ["acquire"], took


def test_a_process_put_in_line_by_its_release_that_does_not_come_back_passes_its_turn(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A worker's release named the waiter first in line (one that is gone, so that no
    attempt races the release) and put the worker behind it; the worker never acquires
    again. Another process takes the free lock, and a third queues behind the worker's
    entry. The lock's release names the worker, whose process has nobody waiting: it
    passes the turn on, and the third process is woken at once (its own poll would come
    30 to 60 s later). The worker's entry lasts 4.8 s (six retry delays)."""

    async def body() -> None:
        worker = api.redlock(servers.urls, retry_delay=0.8)
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        third = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        put_first_in_line(servers, lock_name, "gone-waiter", 60_000)
        assert await call(held.release())  # names the gone waiter, and stands in line
        assert _members(servers, lock_name) == [[_member_of(worker)]] * len(servers.urls)
        taken = other.lock(lock_name, ttl=30)
        assert await call(taken.acquire(blocking=False))  # free: the fast path
        late = third.lock(lock_name, ttl=30)

        async def wait() -> None:
            # within its timeout, a waiter that is not woken takes the free lock at the
            # end of its timeout only (its poll pause is cut there)
            assert await call(late.acquire(timeout=8))
            assert time.monotonic() - released[0] < 4
            assert await call(late.release())

        released: list[float] = []

        async def release() -> None:
            await until(lambda: min(queue_sizes(servers, lock_name)) >= 2, 10, "the third")
            lined = [_member_of(worker), _member_of(third)]
            assert _members(servers, lock_name) == [lined] * len(servers.urls)
            released.append(time.monotonic())
            assert await call(taken.release())  # names the worker, who is not waiting

        await api.concurrently([wait, release], limit=30)

    api.run(body)
    assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)


def test_closing_a_redlock_takes_its_entries_put_in_line_by_releases_off(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A release put the worker in line behind the waiter it named (one that is gone),
    and the worker closes its Redlock instead of acquiring again: its entry leaves every
    queue."""

    async def body() -> None:
        worker = api.redlock(servers.urls)
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        held = await _listen_and_hold(api, servers, lock_name, worker, other)
        put_first_in_line(servers, lock_name, "gone-waiter", 60_000)
        assert await call(held.release())
        assert _members(servers, lock_name) == [[_member_of(worker)]] * len(servers.urls)
        await call(worker.close())
        assert queue_sizes(servers, lock_name) == [0] * len(servers.urls)

    api.run(body)


def test_a_process_that_stands_behind_a_dead_waiter_gets_the_lock_by_its_poll(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The waiter its release woke is gone (its entry outlives it by its lease): the
    process standing behind it is woken by nobody, and takes the free lock at its next
    poll (retry_delay 0.2 s: a pause of 0.1 to 0.2 s), well within the timeout."""

    async def body() -> None:
        worker = api.redlock(servers.urls)
        other = api.redlock(servers.urls, retry_delay=SLOW_POLL)
        held = worker.lock(lock_name, ttl=30)
        await _take_turns_once(api, servers, lock_name, other.lock(lock_name, ttl=30), held)
        put_first_in_line(servers, lock_name, "gone-waiter", 60_000)
        assert await call(held.release())  # names the gone waiter, and wakes nobody
        again = worker.lock(lock_name, ttl=30)
        assert await call(again.acquire(timeout=2))
        assert await call(again.release())

    api.run(body)


async def _cancel_as_woken(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch, *, local: bool
) -> None:
    """A holder releases while one process waits in two tasks (``local``) or one, and a
    third task, of another process, waits behind them. The release names the first
    process, whose first task is cancelled as it is woken.

    The cancelled task leaves only once the release's announcements from every server
    have come in: one that came after it left would pass the turn on by itself, and the
    test would not tell whether leaving passes it (as it must when none comes later)."""
    victim: list[asyncio.Task[Any]] = []
    cancelled: list[bool] = []
    named_first: list[bytes] = []  # the announcements the first process read
    notify = AsyncWaiter.notify
    wait_ = AsyncWaiter.wait
    deliver = AsyncWakeups.deliver
    in_wait = asyncio.Event()

    def notify_and_cancel(self: AsyncWaiter, *, alone: bool = False, requeue: bool = False) -> None:
        notify(self, alone=alone, requeue=requeue)
        if alone and not cancelled:  # the first wake-up by name: the first task's
            cancelled.append(victim[0].cancel())

    async def wait_to_leave(self: AsyncWaiter, seconds: float, longer: float = 0.0) -> bool:
        if asyncio.current_task() is not victim[0]:
            return await wait_(self, seconds, longer)
        in_wait.set()
        try:
            return await wait_(self, seconds, longer)
        except asyncio.CancelledError:
            every = len(servers.urls)
            await until(lambda: len(named_first) >= every, 10, "every server's announcement")
            raise

    def count(self: AsyncWakeups, channel: bytes, payload: bytes) -> None:
        if channel.startswith(WAKE_PREFIX.encode()) and self is first._io().wakeups:
            named_first.append(payload)
        deliver(self, channel, payload)

    monkeypatch.setattr(AsyncWaiter, "notify", notify_and_cancel)
    monkeypatch.setattr(AsyncWaiter, "wait", wait_to_leave)
    monkeypatch.setattr(AsyncWakeups, "deliver", count)
    holder_rl = aio.Redlock(servers.urls)
    first = aio.Redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=2.0)
    other = aio.Redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=2.0)
    holder = holder_rl.lock(lock_name, ttl=30)
    assert await holder.acquire(blocking=False)
    got: dict[str, float] = {}

    async def wait(rl: aio.Redlock, who: str) -> None:
        lock = rl.lock(lock_name, ttl=30)
        if await lock.acquire(timeout=8):
            got[who] = time.monotonic()
            await lock.release()

    def waiting(rl: aio.Redlock) -> int:
        return sum(len(entry.waiters) for entry in rl._io().wakeups._waiters.values())

    victim.append(asyncio.create_task(wait(first, "victim")))
    await until(lambda: min(queue_sizes(servers, lock_name)) >= 1, 20, "the queue")
    await asyncio.wait_for(in_wait.wait(), 20)
    tasks = [victim[0]]
    if local:  # a second task of the same process: the same entry
        tasks.append(asyncio.create_task(wait(first, "local")))
        await until(lambda: waiting(first) == 2, 20, "the second task's wait")
    tasks.append(asyncio.create_task(wait(other, "behind")))
    await until(lambda: min(queue_sizes(servers, lock_name)) >= 2, 20, "the queue")
    released = time.monotonic()
    assert await holder.release()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert cancelled == [True], "the first task was not woken by name"
    assert isinstance(results[0], asyncio.CancelledError), results
    assert "victim" not in got
    nxt = "local" if local else "behind"
    assert nxt in got, f"nobody took the free lock in the cancelled task's place: {got}"
    assert got[nxt] - released < 4, f"{nxt} waited for its poll"
    for rl in (first, other, holder_rl):
        await rl.close()


@pytest.mark.parametrize("local", [True, False], ids=["local", "another-process"])
def test_an_asyncio_waiter_cancelled_as_it_is_woken_passes_the_wake_up_on(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch, local: bool
) -> None:
    """A task woken by a release that named its process, cancelled before it tried (a
    request whose client went away): the next waiter, another task of its process
    (``local``) or the process behind it, is woken in its place, and takes the free
    lock. It used to sleep until its poll (30 to 60 s on here), or to the end of its
    timeout (8 s)."""
    asyncio.run(_cancel_as_woken(servers, lock_name, monkeypatch, local=local))


@contextlib.contextmanager
def _held_before_two_processes(
    servers: LocalServerGroup, lock_name: str
) -> Iterator[tuple[Lock, Redlock, Redlock]]:
    """A holder of ``lock_name``, and the Redlocks of two more processes (each its own
    entry in the queues), which poll only every 30 to 60 s."""
    with (
        Redlock(servers.urls) as holder_rl,
        Redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=2.0) as first,
        Redlock(servers.urls, retry_delay=SLOW_POLL, instance_timeout=2.0) as other,
    ):
        holder = holder_rl.lock(lock_name, ttl=30)
        assert holder.acquire(blocking=False)
        yield holder, first, other


def _started(
    target: Callable[[], object], until: Callable[[], bool], what: str
) -> threading.Thread:
    """A thread running ``target``, once ``until()`` holds (bounded: 20 s)."""
    thread = threading.Thread(target=target)
    thread.start()
    deadline = time.monotonic() + 20
    while not until() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert until(), f"{what} not within 20 s"
    return thread


class _InterruptAsWoken:
    """A trace function that raises KeyboardInterrupt in the thread it traces as a wait
    for a release's announcement returns woken: where a signal handler's exception
    comes once the wait's call returns."""

    def __init__(self) -> None:
        self.fired = False

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        return self.local if frame.f_code is Waiter.wait.__code__ else None

    def local(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "return" and arg is True and not self.fired:
            self.fired = True
            sys.settrace(None)
            raise KeyboardInterrupt
        return self.local


@pytest.mark.parametrize("local", [True, False], ids=["local", "another-process"])
def test_a_thread_interrupted_as_it_is_woken_passes_the_wake_up_on(
    servers: LocalServerGroup, lock_name: str, local: bool
) -> None:
    """sync: as for a cancelled task above, a thread interrupted as a release that named
    its process woke it (a signal handler's exception)."""
    tracer = _InterruptAsWoken()
    interrupted: list[BaseException] = []
    got: dict[str, float] = {}
    with _held_before_two_processes(servers, lock_name) as (holder, first, other):

        def wait(rl: Redlock, who: str) -> None:
            if who == "victim":
                sys.settrace(tracer)
            lock = rl.lock(lock_name, ttl=30)
            try:
                if lock.acquire(timeout=8):
                    got[who] = time.monotonic()
                    lock.release()
            except KeyboardInterrupt as exc:
                interrupted.append(exc)
            finally:
                sys.settrace(None)

        def waiting(rl: Redlock) -> int:
            wakeups = rl._wakeups
            with wakeups._lock:
                return sum(len(entry.waiters) for entry in wakeups._waiters.values())

        victim = functools.partial(wait, first, "victim")
        threads = [_started(victim, lambda: waiting(first) == 1, "the first wait")]
        if local:
            second = functools.partial(wait, first, "local")
            threads.append(_started(second, lambda: waiting(first) == 2, "the second wait"))
        behind = functools.partial(wait, other, "behind")
        threads.append(
            _started(behind, lambda: min(queue_sizes(servers, lock_name)) >= 2, "the queue")
        )
        released = time.monotonic()
        assert holder.release()
        for thread in threads:
            thread.join(timeout=30)
    assert tracer.fired, "the first thread was not woken"
    assert interrupted, "the first thread was not interrupted"
    assert "victim" not in got
    nxt = "local" if local else "behind"
    assert nxt in got, f"nobody took the free lock in the interrupted thread's place: {got}"
    assert got[nxt] - released < 4, f"{nxt} waited for its poll"


def test_a_waiter_that_gives_up_as_a_release_names_its_process_passes_the_turn_on(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync: a process's only waiter gives up (its timeout) with the lock held, and the
    holder's release names its entry, at the head of the line, on every server before
    its leave gets there (the release comes between the two, here on purpose). The
    waiter behind it, in another process, is woken all the same: the entry leaves the
    line by a pass, which wakes the next where the lock is free. A plain leave woke
    nobody, and that waiter slept until its poll (30 to 60 s on here), or to the end of
    its timeout (8 s)."""
    got: list[float] = []
    released: list[float] = []
    with _held_before_two_processes(servers, lock_name) as (holder, first, other):
        leave = first._leave_queue

        def release_then_leave(key: str, member: str, **kwargs: Any) -> None:
            released.append(time.monotonic())
            assert holder.release()  # names the giving-up waiter's entry everywhere
            leave(key, member, **kwargs)

        monkeypatch.setattr(first, "_leave_queue", release_then_leave)

        def wait_behind() -> None:
            lock = other.lock(lock_name, ttl=30)
            if lock.acquire(timeout=8):
                got.append(time.monotonic())
                lock.release()

        giving_up = first.lock(lock_name, ttl=30)
        # its timeout ends once the second waiter stands behind it
        gives_up = _started(
            functools.partial(giving_up.acquire, timeout=3),
            lambda: min(queue_sizes(servers, lock_name)) >= 1,
            "the first waiter in line",
        )
        behind = _started(
            wait_behind, lambda: min(queue_sizes(servers, lock_name)) >= 2, "the queue"
        )
        gives_up.join(timeout=20)
        behind.join(timeout=30)
    assert released, "the first waiter did not leave the line"
    assert not giving_up.held
    assert got, "the waiter behind never took the free lock"
    assert got[0] - released[0] < 4, "the waiter behind waited for its poll"
