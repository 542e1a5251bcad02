"""Fencing tokens against real servers: monotonic across holders, threads,
tasks, processes and restarts; the commit round only when the token sits on a minority;
a stale holder's write refused by :class:`RedisFence` and by the documented SQL pattern.

The commit round is measured on the servers: ``COMMIT_FENCE`` is the only script that
runs ``HGET`` (the acquire script uses ``HMGET``), so ``cmdstat_hget`` in
``INFO commandstats`` counts commit rounds exactly. The counters themselves are read from
each server's incarnation marker. Each test says which removal it catches.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import pickle
import random
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
import redis
import redis.asyncio
import redis.asyncio.retry
import redis.retry
from redis.backoff import NoBackoff

import quorumlock.asyncio
from quorumlock import FenceError, RedisFence, Redlock, Reply, StaleFencingToken
from quorumlock._algorithm.scripts import MARKER_KEY, SCRIPTS
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.conftest import ServerFactory, client_of, command_calls
from tests.integration.apis import AnyLock, Api, call

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

G, X, Q, E = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.ERROR
Record = tuple[float, int]  # (monotonic time just after the acquire returned, token)

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def counters(group: LocalServerGroup | Sequence[LocalServer]) -> list[int | None]:
    """Each server's fencing counter, from its marker (None where it has none). Read
    with HGETALL: an HGET would count as a commit round in :func:`commits`."""
    result: list[int | None] = []
    for server in group:
        client = client_of(server)
        raw = client.hgetall(MARKER_KEY)
        client.close()
        fence = raw.get(b"fence")
        result.append(None if fence is None else int(fence))
    return result


def commits(group: LocalServerGroup | Sequence[LocalServer]) -> list[int]:
    """How many COMMIT_FENCE scripts each server has run (its HGET calls)."""
    return [command_calls(server, "hget") for server in group]


def server_clock_us(server: LocalServer) -> int:
    client = client_of(server)
    seconds, micros = client.time()
    client.close()
    return int(seconds) * 1_000_000 + int(micros)


def assert_strictly_increasing(records: Sequence[Record]) -> None:
    ordered = sorted(records)
    tokens = [token for _, token in ordered]
    assert len(set(tokens)) == len(tokens), "a token was handed out twice"
    backwards = [(a, b) for a, b in itertools.pairwise(ordered) if b[1] <= a[1]]
    assert backwards == [], f"a later holder got a smaller token: {backwards[:3]}"


async def take(lock: AnyLock, *, timeout: float | None = None) -> int:
    """Acquire (non-blocking unless ``timeout``) and return the fencing token."""
    if timeout is None:
        assert await call(lock.acquire(blocking=False))
    else:
        assert await call(lock.acquire(timeout=timeout))
    token = lock.fencing_token
    assert isinstance(token, int)
    return token


# --------------------------------------------------------------------------------------
# monotonic across holders
# --------------------------------------------------------------------------------------


@asynccontextmanager
async def fence_of(
    api: Api, resource: LocalServer, key: str, *, no_retries: bool = False
) -> AsyncIterator[RedisFence | quorumlock.asyncio.RedisFence]:
    """A fence of ``api``'s kind on ``key`` of ``resource``, its client closed after;
    ``no_retries``: a client without redis-py's own retries (its default backs off for
    seconds), and a 2 s connect timeout."""
    options: dict[str, Any] = {}
    if api.flavour == "sync":
        if no_retries:
            options = {"socket_connect_timeout": 2, "retry": redis.retry.Retry(NoBackoff(), 0)}
        sync_client = redis.Redis(host=resource.host, port=resource.port, **options)
        try:
            yield RedisFence(sync_client, key)
        finally:
            sync_client.close()
    else:
        if no_retries:
            options = {
                "socket_connect_timeout": 2,
                "retry": redis.asyncio.retry.Retry(NoBackoff(), 0),
            }
        async_client = redis.asyncio.Redis(host=resource.host, port=resource.port, **options)
        try:
            yield quorumlock.asyncio.RedisFence(async_client, key)
        finally:
            await async_client.aclose()


def test_tokens_strictly_increase_across_sequential_holders(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Two clients take turns: tokens are 1, 2, 3... (counters in step on new servers,
    +1 per attempt) and every server's counter ends at the last token. Catches: fencing
    removed (no token), a token that does not grow, counters not kept on the servers."""

    async def body() -> None:
        clients = [api.redlock(servers.urls, fencing=True, instance_timeout=1.0) for _ in range(2)]
        before = commits(servers)  # the servers are shared: earlier tests' calls count
        tokens = []
        for i in range(12):
            lock = clients[i % 2].lock(lock_name, ttl=2)
            assert lock.fencing_token is None
            tokens.append(await take(lock))
            assert await call(lock.release())
            assert lock.fencing_token == tokens[-1]  # still says which acquisition it was
        assert tokens == list(range(1, 13))
        assert counters(servers) == [12] * len(servers)
        assert commits(servers) == before  # in step: never a commit round

    api.run(body)


def test_fencing_token_is_none_with_fencing_off_and_before_acquire(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Catches a token handed out (or a counter drawn) when fencing is off."""

    async def body() -> None:
        for fencing in (False, True):
            rl = api.redlock(servers.urls, fencing=fencing, instance_timeout=1.0)
            lock = rl.lock(lock_name, ttl=2)
            assert lock.fencing_token is None
            assert await call(lock.acquire(blocking=False))
            assert (lock.fencing_token is not None) is fencing
            assert await call(lock.release())
            assert counters(servers) == [1 if fencing else None] * len(servers)

    api.run(body)


def test_tokens_strictly_increase_across_contending_workers(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Four threads (sync) or tasks (asyncio), each its own client, contend for 1.5 s:
    sorted by acquisition time, the tokens strictly increase and none repeats. Catches
    a token taken from one server's counter or from the client (contenders that miss
    each other's attempts would get equal or smaller tokens)."""
    records: list[Record] = []
    per_worker: list[int] = []

    async def worker() -> None:
        rl = api.redlock(servers.urls, fencing=True, retry_delay=0.02, instance_timeout=0.5)
        rng = random.Random()
        got = 0
        # 1.5 s, and then until the workers have 20 tokens between them (a loaded
        # machine's 1.5 s gave 16) or 10 s have passed
        end, give_up = time.monotonic() + 1.5, time.monotonic() + 10.0
        while time.monotonic() < end or (len(records) < 20 and time.monotonic() < give_up):
            lock = rl.lock(lock_name, ttl=2)
            if not await call(lock.acquire(timeout=1.0)):
                continue
            at = time.monotonic()  # inside the hold: holds never overlap
            token = lock.fencing_token
            assert isinstance(token, int)
            records.append((at, token))
            got += 1
            await asyncio.sleep(0.002)
            assert await call(lock.release())
            await asyncio.sleep(rng.uniform(0.001, 0.01))
        per_worker.append(got)

    async def body() -> None:
        await api.concurrently([worker] * 4, limit=20)

    api.run(body)
    assert len(per_worker) == 4
    assert min(per_worker) > 0, per_worker
    assert len(records) >= 20, len(records)
    assert_strictly_increasing(records)


def contend(
    urls: list[str],
    name: str,
    start_at: float,
    stop_at: float,
    results: Queue[tuple[int, list[Record], str]],
) -> None:
    """Worker of the multi-process test (module level, so "spawn" can import it).

    ``time.monotonic()`` is CLOCK_MONOTONIC, one clock for every process on Linux, so
    the acquisition times of all workers can be compared.
    """
    records: list[Record] = []
    error = ""
    try:
        rl = Redlock(urls, fencing=True, retry_delay=0.02, instance_timeout=0.5)
        rng = random.Random()
        while time.monotonic() < start_at:
            time.sleep(0.005)
        while time.monotonic() < stop_at or not records:
            if time.monotonic() > stop_at + 5:
                break
            lock = rl.lock(name, ttl=2)
            if not lock.acquire(timeout=1.0):
                continue
            at = time.monotonic()
            assert lock.fencing_token is not None
            records.append((at, lock.fencing_token))
            time.sleep(0.002)
            lock.release()
            time.sleep(rng.uniform(0.002, 0.01))
        rl.close()
    except Exception as exc:
        error = repr(exc)
    results.put((os.getpid(), records, error))


def test_tokens_strictly_increase_across_contending_processes(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Three processes, each its own client, contend for 1.5 s. Catches tokens that are
    only monotonic within one process (a client-side counter, say)."""
    ctx = multiprocessing.get_context("spawn")
    results: Queue[tuple[int, list[Record], str]] = ctx.Queue()
    start_at = time.monotonic() + 2.0  # time for the interpreters to start and import
    stop_at = start_at + 1.5
    workers = [
        ctx.Process(target=contend, args=(servers.urls, lock_name, start_at, stop_at, results))
        for _ in range(3)
    ]
    collected = []
    try:
        for worker in workers:
            worker.start()
        for _ in workers:
            collected.append(results.get(timeout=max(1.0, stop_at + 20 - time.monotonic())))
        for worker in workers:
            worker.join(timeout=5)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()  # only our own children, by their handle
                worker.join(timeout=5)
    assert [error for _, _, error in collected if error] == []
    assert all(records for _, records, _ in collected), "a process never got the lock"
    records = [record for _, worker_records, _ in collected for record in worker_records]
    assert_strictly_increasing(records)


# --------------------------------------------------------------------------------------
# across restarts, and the commit round
# --------------------------------------------------------------------------------------


def test_tokens_keep_increasing_across_restarts_and_jump_to_the_server_clock(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """z restarts without persistence (its counter is lost): while quarantined it does
    not count and x, y carry on (4); its first count after the quarantine raises its
    counter to its clock in microseconds, the token jumps there, and since only z is at
    that value the commit round lifts x and y to it. Then all three restart at once: the
    next token, after the quarantine, is larger still. Catches: the jump removed (z's
    counter would restart at 1 and a later majority {y, z} could hand out a token below
    one already issued once y is lost too), the commit round removed (x and y would stay
    behind), a quarantined server's counter used as the token."""
    group = make_servers(3)
    max_ttl = 1.0

    async def body() -> None:
        rl = api.redlock(
            group.urls, fencing=True, max_ttl=max_ttl, retry_delay=0.05, instance_timeout=1.0
        )
        tokens = []
        for _ in range(3):
            lock = rl.lock(lock_name, ttl=1)
            tokens.append(await take(lock))
            assert await call(lock.release())
        assert tokens == [1, 2, 3]

        group[2].restart()
        await asyncio.sleep(0.05)  # let the event loop see the old connection close
        lock = rl.lock(lock_name, ttl=1)
        tokens.append(await take(lock))
        assert [o.reply for o in lock.outcomes] == [G, G, Q]
        assert tokens[-1] == 4
        assert await call(lock.release())
        assert commits(group) == [0, 0, 0]

        await asyncio.sleep(max_ttl + 0.05)  # z's quarantine is over
        before = server_clock_us(group[2])
        lock = rl.lock(lock_name, ttl=1)
        tokens.append(await take(lock))
        after = server_clock_us(group[2])
        assert before <= tokens[-1] <= after  # z's clock, in microseconds
        assert [o.fence for o in lock.outcomes] == [5, 5, tokens[-1]]
        assert commits(group) == [1, 1, 1]
        assert counters(group) == [tokens[-1]] * 3
        assert await call(lock.release())

        lock = rl.lock(lock_name, ttl=1)
        tokens.append(await take(lock))
        assert tokens[-1] == tokens[-2] + 1  # in step again: no commit
        assert commits(group) == [1, 1, 1]
        assert await call(lock.release())

        for server in group:
            server.restart()
        await asyncio.sleep(0.05)
        lock = rl.lock(lock_name, ttl=1)
        started = time.monotonic()
        tokens.append(await take(lock, timeout=5.0))
        assert time.monotonic() - started >= max_ttl - 0.05
        assert counters(group) == [tokens[-1]] * 3
        assert await call(lock.release())

        assert tokens == sorted(set(tokens)), tokens
        assert tokens[-1] > 1_000_000_000_000_000  # a microsecond timestamp (~1.8e15)

    api.run(body)


def test_commit_round_only_when_the_token_sits_on_a_minority(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """Durable servers (appendonly always: a restart keeps the counter and is not
    quarantined) are killed to make their counters diverge naturally. A lagging server
    alone needs no commit round (the token is on a majority already); when the token
    is on one server only, the next acquisition commits it, and the servers that took
    part end at the token. Catches: a commit on every acquire or on every disagreement
    (wasted round trips), and no commit when it is needed (the token would not be on a
    majority: a later holder could get a smaller one)."""
    group = make_servers(3, appendonly=True, appendfsync="always")
    x, y, z = group

    async def body() -> None:
        rl = api.redlock(group.urls, fencing=True, instance_timeout=1.0)

        async def acquire_once() -> int:
            lock = rl.lock(lock_name, ttl=1)
            token = await take(lock)
            assert await call(lock.release())
            return token

        async def restart(server: LocalServer) -> None:
            server.start()
            await asyncio.sleep(0.05)  # the event loop sees the old connection close

        assert [await acquire_once() for _ in range(3)] == [1, 2, 3]
        assert commits(group) == [0, 0, 0]

        z.kill()  # z misses two attempts
        await asyncio.sleep(0.05)
        assert [await acquire_once() for _ in range(2)] == [4, 5]
        await restart(z)
        assert counters(group) == [5, 5, 3]

        # Counters disagree, but x and y (a majority) draw the token: no commit.
        assert await acquire_once() == 6
        assert counters(group) == [6, 6, 4]
        assert commits(group) == [0, 0, 0]

        y.kill()  # now only x is at the top: x draws 7, z draws 5
        await asyncio.sleep(0.05)
        assert await acquire_once() == 7
        assert commits([x, z]) == [1, 1]  # the commit round ran on x and z (y is down)
        await restart(y)
        assert counters(group) == [7, 6, 7]

        assert await acquire_once() == 8  # x and z at 8 again: no commit
        assert commits(group) == [1, 0, 1]
        assert counters(group) == [8, 7, 8]

    api.run(body)


# --------------------------------------------------------------------------------------
# the protected resource refuses a stale holder
# --------------------------------------------------------------------------------------


def test_paused_holder_gets_stale_fencing_token_and_its_write_is_not_applied(
    api: Api, servers: LocalServerGroup, make_servers: ServerFactory, lock_name: str
) -> None:
    """docs/safety.md's timeline: A holds with token a and writes; A pauses past its ttl;
    B acquires (b > a) and writes; A wakes and writes: StaleFencingToken (token a,
    highest b), and the resource still holds B's value. The exception pickles. Runs with
    RedisFence (sync) and quorumlock.asyncio.RedisFence. Catches the guard removed (A's
    late write would overwrite B's) and tokens that do not increase across holders."""
    resource = make_servers(1)[0]

    async def body() -> None:
        rl_a = api.redlock(servers.urls, fencing=True, instance_timeout=1.0)
        rl_b = api.redlock(servers.urls, fencing=True, instance_timeout=1.0)
        async with fence_of(api, resource, "stock:42") as fence:
            a = rl_a.lock(lock_name, ttl=0.3)
            token_a = await take(a)
            assert await call(fence.execute(token_a, "HSET", "stock:42", "count", "10"))
            await asyncio.sleep(0.4)  # A is paused (GC, a stopped VM) past its ttl
            assert not a.held

            b = rl_b.lock(lock_name, ttl=5)
            token_b = await take(b)
            assert token_b > token_a
            await call(fence.execute(token_b, "HSET", "stock:42", "count", "7"))
            await call(fence.execute(token_b, "HINCRBY", "stock:42", "count", "-1"))  # same: fine

            with pytest.raises(StaleFencingToken) as info:
                await call(fence.execute(token_a, "HSET", "stock:42", "count", "9"))
            assert (info.value.token, info.value.highest) == (token_a, token_b)
            assert "stock:42" in str(info.value)
            assert await call(fence.highest()) == token_b

            copy = pickle.loads(pickle.dumps(info.value))
            assert isinstance(copy, StaleFencingToken)
            assert (copy.token, copy.highest, str(copy)) == (token_a, token_b, str(info.value))

            assert await call(b.release())

    api.run(body)
    client = client_of(resource)
    assert client.hget("stock:42", "count") == b"6"
    client.close()


def test_redis_fence_checks_its_arguments_before_any_write(make_servers: ServerFactory) -> None:
    """Catches a token that is not an int >= 0 reaching the guard (Lua's tonumber would
    turn "5" or 1.5 into a number, and a bool into nil: no check at all)."""
    resource = make_servers(1)[0]
    client = client_of(resource)
    fence = RedisFence(client, "stock:1")
    for bad in (True, "5", 1.5):
        with pytest.raises(TypeError):
            fence.execute(bad, "SET", "stock:1", "x")  # type: ignore[arg-type]
    # The fencing token of a lock made without fencing=True, or never acquired: typed
    # int | None, as lock.fencing_token is, and refused with the reason.
    with pytest.raises(TypeError, match=r"None.*fencing=True"):
        fence.execute(None, "SET", "stock:1", "x")
    with pytest.raises(ValueError, match=">= 0"):
        fence.execute(-1, "SET", "stock:1", "x")
    with pytest.raises(ValueError, match=r"at most 2\*\*53 - 1"):  # beyond, 2**53 + 1 == 2**53
        fence.execute(2**53, "SET", "stock:1", "x")
    with pytest.raises(ValueError, match="no command"):
        fence.execute(3)
    assert fence.highest() is None
    assert client.get("stock:1") is None
    assert fence.execute(5, "SET", "stock:1", "five")
    with pytest.raises(StaleFencingToken):
        fence.execute(4, "SET", "stock:1", "four")
    assert client.get("stock:1") == b"five"
    client.close()


def test_redis_fence_refuses_a_command_argument_it_cannot_send(
    api: Api, make_servers: ServerFactory
) -> None:
    """Catches an argument redis-py cannot encode (None, a bool, a dict, a function)
    reported as FenceError "no reply from the server": the command was never sent, yet
    the message said its write may have been applied. It is a TypeError that names the
    argument, before anything is sent, in both APIs."""
    resource = make_servers(1)[0]

    async def body() -> None:
        async with fence_of(api, resource, "stock:3") as fence:
            for bad in (None, True, {"count": 1}, print, ["a"]):
                with pytest.raises(TypeError, match=r"command argument 3 .* str, bytes, int or"):
                    await call(fence.execute(5, "HSET", "stock:3", bad))  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="command argument 1"):
                await call(fence.execute(5, None))  # type: ignore[arg-type]
            assert await call(fence.highest()) is None  # nothing was sent
            assert await call(fence.execute(5, b"SET", "stock:3", b"m")) == b"OK"
            assert await call(fence.execute(6, "HSET", "stock:4", "n", 1.5)) == 1

    api.run(body)


def test_redis_fence_refuses_a_url_or_a_client_of_the_other_api(
    make_servers: ServerFactory,
) -> None:
    """A fence takes a client of its own API. A URL failed at the first write with
    AttributeError; an asyncio client in the sync fence made execute() return a coroutine
    never awaited (nothing written, no error), and a sync client in the asyncio fence
    wrote, then raised TypeError. Each is refused when the fence is made, as a fence key
    that is not a non-empty str is."""
    resource = make_servers(1)[0]
    sync_client = client_of(resource)
    async_client = redis.asyncio.Redis(host=resource.host, port=resource.port)
    with pytest.raises(TypeError, match=r"quorumlock\.asyncio\.RedisFence"):
        RedisFence(async_client, "stock:1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"quorumlock\.RedisFence"):
        quorumlock.asyncio.RedisFence(sync_client, "stock:1")  # type: ignore[arg-type]
    for fence_class in (RedisFence, quorumlock.asyncio.RedisFence):
        with pytest.raises(TypeError, match="redis://"):
            fence_class(resource.url, "stock:1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fence_key"):
        RedisFence(sync_client, "stock:1", fence_key=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fence_key"):
        RedisFence(sync_client, "stock:1", fence_key="")
    assert sync_client.exists("stock:1", "quorumlock:fence:stock:1") == 0
    sync_client.close()


def test_redis_fence_refuses_a_stale_token_after_the_script_cache_was_flushed(
    api: Api, make_servers: ServerFactory
) -> None:
    """The first write after the resource server lost its script cache (a restart, SCRIPT
    FLUSH) goes through the EVAL fallback; a stale token must still raise
    StaleFencingToken, as the docs promise, not a redis-py error."""
    resource = make_servers(1)[0]

    async def body() -> None:
        async with fence_of(api, resource, "stock:1") as fence:
            assert await call(fence.execute(5, "SET", "stock:1", "five"))
            client = client_of(resource)
            client.script_flush()
            with pytest.raises(StaleFencingToken):
                await call(fence.execute(4, "SET", "stock:1", "four"))
            assert client.get("stock:1") == b"five"
            client.close()

    api.run(body)


def test_redis_fence_raises_only_quorumlock_errors(api: Api, make_servers: ServerFactory) -> None:
    """Catches a redis-py exception escaping a fence (the exceptions module promises none
    does): a command the resource server refuses and a server that is gone both raise
    FenceError, naming the resource, in both APIs."""
    resource = make_servers(1)[0]
    seed = client_of(resource)
    seed.set("stock:2", "a string, not a hash")
    seed.close()

    async def body() -> None:
        async with fence_of(api, resource, "stock:2", no_retries=True) as fence:
            with pytest.raises(FenceError, match="refused") as refused:
                await call(fence.execute(5, "HSET", "stock:2", "count", "1"))
            assert refused.value.resource == "stock:2"
            assert "WRONGTYPE" in str(refused.value)
            copy = pickle.loads(pickle.dumps(refused.value))
            assert (type(copy), copy.resource, str(copy)) == (
                FenceError,
                "stock:2",
                str(refused.value),
            )
            resource.stop()
            with pytest.raises(FenceError, match="no reply") as gone:
                await call(fence.execute(6, "SET", "stock:2", "x"))
            assert not isinstance(gone.value, redis.RedisError)
            with pytest.raises(FenceError, match="stock:2"):
                await call(fence.highest())

    api.run(body)


@pytest.mark.parametrize("value", ["5.5", "1e3", "abc", "", "nan", "-inf", "-5"])
def test_a_fence_key_that_another_program_wrote_raises_fence_error(
    api: Api, make_servers: ServerFactory, value: str
) -> None:
    """Catches a builtin ValueError escaping (the server refused the write as stale
    against "5.5", and int() could not read it): what no fence wrote is a FenceError,
    for a write and for highest(), in both APIs, and the write's says so (for "abc" it
    gave the guard script's Lua error, and "nan" and "-inf" were written over)."""
    resource = make_servers(1)[0]
    seed = client_of(resource)
    seed.set("quorumlock:fence:stock:3", value)

    async def body() -> None:
        async with fence_of(api, resource, "stock:3", no_retries=True) as fence:
            with pytest.raises(FenceError, match="not a fencing token") as wrote:
                await call(fence.execute(4, "SET", "stock:3", "x"))
            assert not isinstance(wrote.value, StaleFencingToken)
            assert "stock:3" in str(wrote.value)
            with pytest.raises(FenceError, match="not a fencing token"):
                await call(fence.highest())

    try:
        api.run(body)
        assert seed.get("stock:3") is None  # the write was refused
    finally:
        seed.close()


def test_sql_pattern_refuses_the_stale_holders_update(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """docs/safety.md's SQL: ``UPDATE ... WHERE id = :id AND fence <= :token`` on stdlib
    sqlite3. The paused holder's UPDATE matches 0 rows; the newer holder's value stays.
    Catches tokens that do not increase (B's update would match 0 rows, or A's 1)."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE stock (id INTEGER PRIMARY KEY, count INTEGER NOT NULL,"
        " fence BIGINT NOT NULL DEFAULT 0)"
    )
    db.execute("INSERT INTO stock (id, count) VALUES (42, 100)")
    update = "UPDATE stock SET count = :count, fence = :token WHERE id = :id AND fence <= :token"

    def write(token: int, count: int) -> int:
        with db:
            return db.execute(update, {"count": count, "token": token, "id": 42}).rowcount

    rl = Redlock(servers.urls, fencing=True, instance_timeout=1.0)
    a = rl.lock(lock_name, ttl=0.3)
    assert a.acquire(blocking=False)
    assert a.fencing_token is not None
    assert write(a.fencing_token, 99) == 1
    time.sleep(0.4)  # A pauses past its ttl

    b = rl.lock(lock_name, ttl=5)
    assert b.acquire(blocking=False)
    assert b.fencing_token is not None
    assert write(b.fencing_token, 98) == 1
    assert write(b.fencing_token, 97) == 1  # the same holder may write again

    assert write(a.fencing_token, 42) == 0  # A wakes up: refused, roll back and stop
    assert db.execute("SELECT count, fence FROM stock WHERE id = 42").fetchone() == (
        97,
        b.fencing_token,
    )
    assert b.release()
    rl.close()
    db.close()


# --------------------------------------------------------------------------------------
# the scripts
# --------------------------------------------------------------------------------------


def test_every_script_digest_matches_script_load(servers: LocalServerGroup) -> None:
    """EVALSHA sends the digest computed in scripts.py: a wrong one would fall back to
    EVAL on every call (or run nothing). Catches a script missing from SCRIPTS too."""
    assert set(SCRIPTS) == {
        "acquire",
        "acquire_cluster",
        "acquire_fair",
        "acquire_fair_cluster",
        "acquire_many",
        "acquire_many_cluster",
        "acquire_queued",
        "acquire_queued_cluster",
        "claim_term",
        "commit_fence",
        "extend",
        "extend_each",
        "extend_many",
        "fence_guard",
        "probe_many",
        "provision",
        "queue",
        "read_leader",
        "release",
        "release_many",
        "rw_acquire",
        "rw_acquire_cluster",
        "rw_commit_fence",
        "rw_downgrade",
        "rw_extend",
        "rw_probe",
        "rw_release",
        "semaphore_acquire",
        "semaphore_release",
    }
    client = client_of(servers[0])
    for script in SCRIPTS.values():
        assert client.script_load(script.source) == script.sha, script.name
    client.close()
