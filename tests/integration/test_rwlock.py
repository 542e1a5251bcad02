"""Read-write locks (``rl.rwlock``) on real servers, through both APIs.

Readers share, a writer excludes everyone, on a majority of servers; every subset of
servers granting is tried for N = 3 and 5; dead and frozen servers, a dead reader whose
hold expires on its own, a waiting writer that keeps new readers out, downgrade, the
refused upgrade, leases, wake-ups and the restart quarantine. Time bounds are
structural (a retry pause far longer than the test's timeout), never a speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TypeVar

import pytest
import redis

import quorumlock
from quorumlock import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    LockUpgradeRefused,
    QuorumUnavailable,
    Reply,
)
from quorumlock._algorithm.rwlock import rw_expiry, rw_key, rw_score
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, ServerKind, binary_of, client_of, settled
from tests.integration.apis import AnyLock, AnyRedlock, Api, call, holding
from tests.integration.test_quorum import frozen, replies

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

T = TypeVar("T")


def server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def plant(client: redis.Redis, name: str, member: str, ms: int = 60_000) -> None:
    """Another client's hold (``"r"``/``"w"``/``"i"`` + token) on this server, for ``ms``;
    the key's time to live is made at least that, never shorter (as the scripts do)."""
    key = rw_key(name)
    client.zadd(key, {member: rw_score(member, server_ms(client) + ms)})
    if client.pttl(key) < ms:
        client.pexpire(key, ms)


def holds(group: LocalServerGroup | Sequence[redis.Redis], name: str) -> list[list[str]]:
    """The live members of ``name``'s read-write set on every server (mode + token)."""
    result: list[list[str]] = []
    clients = [client_of(s) for s in group] if isinstance(group, LocalServerGroup) else group
    for client in clients:
        now = server_ms(client)
        raw: list[tuple[bytes, float]] = client.zrange(rw_key(name), 0, -1, withscores=True)  # type: ignore[assignment]
        live = (m.decode() for m, score in raw if rw_expiry(m.decode(), score) > now)
        result.append(sorted(live))
        if isinstance(group, LocalServerGroup):
            client.close()
    return result


def kinds(group: LocalServerGroup, name: str) -> list[str]:
    """The mode letters held on every server, e.g. ``["rr", "rr", ""]``."""
    return ["".join(sorted(m[0] for m in server)) for server in holds(group, name)]


def settled_kinds(group: LocalServerGroup, name: str, expected: list[str]) -> list[str]:
    """:func:`kinds`, read again until they are ``expected`` (see ``settled``: an acquire
    returns once a majority granted it)."""
    return settled(lambda: kinds(group, name), expected)


async def warm(api: Api, urls: Sequence[str], **options: object) -> AnyRedlock:
    """A Redlock that has reached every server (a first contact may end a round once a
    majority answered) and loaded the read-write scripts. Its per-server timeout is 1 s
    unless given: the machine may be loaded, and no test here is about the timeout."""
    options.setdefault("instance_timeout", 1.0)
    rl = api.redlock(urls, **options)
    for _ in range(50):
        hold = rl.rwlock("test:warm-up", ttl=10).read()
        try:
            await call(hold.acquire(blocking=False))
        except QuorumUnavailable:
            continue
        await call(hold.release())
        if replies(hold.outcomes) == [Reply.DONE] * len(urls):
            return rl
    raise AssertionError("some servers never answered the warm-up")


def in_background(api: Api, work: Callable[[], Awaitable[T] | T]) -> asyncio.Future[T]:
    """Start ``work()`` in a thread (sync API) or a task (asyncio API); await the result."""
    if api.flavour == "async":
        return asyncio.ensure_future(call(work()))
    return asyncio.get_running_loop().run_in_executor(None, work)  # type: ignore[arg-type]


async def wait_until(predicate: object, limit: float = 10.0) -> None:
    """Poll ``predicate()`` (a callable) every 10 ms for at most ``limit`` seconds."""
    assert callable(predicate)
    give_up = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < give_up, "the condition did not come true in time"
        await asyncio.sleep(0.01)


# --------------------------------------------------------------------------------------
# readers share, writers exclude
# --------------------------------------------------------------------------------------


def test_readers_share_and_a_writer_excludes_everyone(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls)
        other = await warm(api, servers.urls)  # another client: no nesting rules between them
        rw, rw2 = rl.rwlock(lock_name, ttl=10), other.rwlock(lock_name, ttl=10)
        first, second = rw.read(), rw2.read()
        assert await call(first.acquire(blocking=False))
        assert await call(second.acquire(blocking=False))
        assert settled_kinds(servers, lock_name, ["rr"] * 5) == ["rr"] * 5
        third = await warm(api, servers.urls)
        writer = third.rwlock(lock_name, ttl=10).write()
        assert not await call(writer.acquire(blocking=False))
        assert replies(writer.outcomes) == [Reply.TAKEN] * 5
        # A refused attempt that may not wait leaves no intent behind.
        assert settled_kinds(servers, lock_name, ["rr"] * 5) == ["rr"] * 5
        assert await call(first.release())
        assert not await call(writer.acquire(blocking=False))
        assert await call(second.release())
        assert holds(servers, lock_name) == [[]] * 5
        assert await call(writer.acquire(blocking=False))
        assert settled_kinds(servers, lock_name, ["w"] * 5) == ["w"] * 5
        for hold in (rw.read(), rw2.read(), rw2.write()):
            assert not await call(hold.acquire(blocking=False))
        assert settled_kinds(servers, lock_name, ["w"] * 5) == ["w"] * 5
        assert await call(writer.release())
        assert not any(client_of(s).exists(rw_key(lock_name)) for s in servers)

    api.run(body)


def test_concurrent_readers_overlap_and_never_a_writer(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Readers and writers in threads (sync) or tasks (asyncio), each with a client of its
    own: at every moment either readers only, or one writer alone, hold the lock."""
    inside = {"r": 0, "w": 0}
    mutex = threading.Lock()
    seen = {"max_readers": 0, "writes": 0, "reads": 0}
    violations: list[str] = []

    async def worker(mode: str, rounds: int) -> None:
        rl = await warm(api, servers.urls, retry_delay=0.02)
        rw = rl.rwlock(lock_name, ttl=10)
        for _ in range(rounds):
            hold = rw.read(timeout=20) if mode == "r" else rw.write(timeout=20)
            async with holding(hold):
                with mutex:
                    inside[mode] += 1
                    if inside["w"] > 1 or (inside["w"] and inside["r"]):
                        violations.append(f"{inside}")
                    seen["max_readers"] = max(seen["max_readers"], inside["r"])
                    seen["writes" if mode == "w" else "reads"] += 1
                await asyncio.sleep(0.02)
                with mutex:
                    inside[mode] -= 1

    async def body() -> None:
        modes = ["r"] * 4 + ["w"] * 2
        await api.concurrently(
            [functools.partial(worker, mode, 6 if mode == "r" else 3) for mode in modes],
            limit=120,
        )

    api.run(body)
    assert not violations
    assert seen == {"max_readers": seen["max_readers"], "writes": 6, "reads": 24}
    assert seen["max_readers"] >= 2  # readers did overlap


# --------------------------------------------------------------------------------------
# every subset of servers granting
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 5])
def test_each_mode_is_granted_iff_a_majority_allows_it(
    api: Api, make_servers: ServerFactory, lock_name: str, n: int
) -> None:
    """For every subset of servers where another client holds (a writer, to refuse a
    reader; a reader, to refuse a writer), the hold is granted iff the other servers are a
    majority; a failed attempt leaves only the other client's holds behind."""
    group = make_servers(n)
    clients = [client_of(server) for server in group]

    async def body() -> None:
        rl = await warm(api, group.urls, instance_timeout=1.0)
        rw = rl.rwlock(lock_name, ttl=10)
        for mode, blocker in (("read", "w"), ("write", "r"), ("read", "i")):
            for size in range(n + 1):
                for taken in itertools.combinations(range(n), size):
                    for i in taken:
                        plant(clients[i], lock_name, f"{blocker}other{i}")
                    hold = rw.read() if mode == "read" else rw.write()
                    got = await call(hold.acquire(blocking=False))
                    where = f"{mode} against {blocker} on {taken}"
                    assert got is (n - size >= rl.quorum), where
                    expected = [Reply.TAKEN if i in taken else Reply.GRANTED for i in range(n)]
                    assert replies(hold.outcomes) == expected, where
                    others = [[f"{blocker}other{i}"] if i in taken else [] for i in range(n)]
                    if got:
                        assert hold.held
                        assert await call(hold.release())
                    assert holds(clients, lock_name) == others, where
                    for client in clients:
                        client.delete(rw_key(lock_name))

    api.run(body)
    for client in clients:
        client.close()


# --------------------------------------------------------------------------------------
# dead and frozen servers
# --------------------------------------------------------------------------------------


def test_dead_and_frozen_minorities_cost_nothing_and_majorities_everything(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(5)

    async def body() -> None:
        rl = await warm(api, group.urls, instance_timeout=0.2, retry_count=0)
        other = await warm(api, group.urls, instance_timeout=0.2, retry_count=0)
        rw, rw2 = rl.rwlock(lock_name, ttl=10), other.rwlock(lock_name, ttl=10)
        group[0].kill()
        with frozen([group[1]]):
            reader, writer = rw.read(), rw2.write()
            assert await call(reader.acquire(blocking=False))
            assert [o.reply.answered for o in reader.outcomes] == [False, False, True, True, True]
            assert not await call(writer.acquire(blocking=False))
            assert await call(reader.extend()) > 0
            assert await call(reader.release())
            assert await call(writer.acquire(blocking=False))
            assert writer.fencing_token is None
            assert await call(writer.release())
            with frozen([group[2]]):
                for hold in (rw.read(), rw2.write()):
                    with pytest.raises(QuorumUnavailable):
                        await call(hold.acquire(blocking=False))
        # The frozen servers missed the releases (their holds expire with the ttl).
        assert holds([client_of(s) for s in list(group)[3:]], lock_name) == [[]] * 2

    api.run(body)


# --------------------------------------------------------------------------------------
# expiry, starvation, wake-ups
# --------------------------------------------------------------------------------------


def test_a_dead_readers_hold_expires_on_its_own(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A reader that never releases (its process died) blocks writers only until its own
    ttl runs out; another reader's longer hold is not cut short by it."""

    async def body() -> None:
        dead = await warm(api, servers.urls)
        alive = await warm(api, servers.urls)
        writer_side = await warm(api, servers.urls, retry_delay=0.05)
        gone = dead.rwlock(lock_name, ttl=1).read()
        assert await call(gone.acquire(blocking=False))
        gone._state.forget()  # as if its process died: no release, ever
        staying = alive.rwlock(lock_name, ttl=10).read()
        assert await call(staying.acquire(blocking=False))
        await asyncio.sleep(1.2)
        assert settled_kinds(servers, lock_name, ["r"] * 5) == ["r"] * 5  # the live reader only
        assert holds(servers, lock_name)[0] == ["r" + str(staying.token)]
        writer = writer_side.rwlock(lock_name, ttl=10).write()
        assert not await call(writer.acquire(blocking=False))
        assert await call(staying.release())
        assert await call(writer.acquire(timeout=10))

    api.run(body)


def test_a_dead_writers_intent_lapses_while_a_reader_holds_on(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A writer that died while it waited leaves an intent that lapses on its own; a
    reader that keeps its hold (and so the key) alive does not keep it there."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        other = await warm(api, servers.urls)
        holder = rl.rwlock(lock_name, ttl=10).read()
        assert await call(holder.acquire(blocking=False))
        clients = [client_of(s) for s in servers]
        for client in clients:
            plant(client, lock_name, "idead-writer", ms=300)
        newcomer = other.rwlock(lock_name, ttl=10).read()
        assert not await call(newcomer.acquire(blocking=False))  # the intent counts
        await asyncio.sleep(0.4)
        assert await call(holder.extend())  # the key outlives the intent
        assert await call(newcomer.acquire(blocking=False))
        assert settled_kinds(servers, lock_name, ["rr"] * 5) == ["rr"] * 5
        for client in clients:
            client.close()

    api.run(body)


def plant_many(client: redis.Redis, name: str, members: dict[str, int]) -> None:
    """Other clients' holds on this server, each for its own ms (negative: expired that
    long ago), in one pipeline; the key is kept for a minute."""
    now = server_ms(client)
    pipe = client.pipeline(transaction=False)
    pipe.zadd(rw_key(name), {m: rw_score(m, now + ms) for m, ms in members.items()})
    pipe.pexpire(rw_key(name), 60_000)
    pipe.execute()


def raw_members(group: LocalServerGroup, name: str) -> list[list[str]]:
    """Every member of ``name``'s read-write set on every server, expired ones too."""
    found = []
    for server in group:
        client = client_of(server)
        found.append(sorted(m.decode() for m in client.zrange(rw_key(name), 0, -1)))  # type: ignore[union-attr]
        client.close()
    return found


@contextlib.contextmanager
def clients_of(group: LocalServerGroup) -> Iterator[list[redis.Redis]]:
    """A client of every server, closed after."""
    clients = [client_of(s) for s in group]
    try:
        yield clients
    finally:
        for client in clients:
            client.close()


def test_holds_are_found_by_kind_among_many_others(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The writer that holds is found behind 300 waiting writers' intents that expire
    before and after it, and a writer's intent behind 300 readers: each lock refuses
    whom it should, wherever the hold's expiry puts it among the others."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        other = await warm(api, servers.urls)  # another process's writer
        with clients_of(servers) as clients:
            intents = {f"iwaiter{k}": 20_000 + 100 * k for k in range(300)}
            for client in clients:
                plant_many(client, lock_name, {**intents, "wholder": 35_000})
            assert not await call(rl.rwlock(lock_name, ttl=10).read().acquire(blocking=False))
            assert not await call(rl.rwlock(lock_name, ttl=10).write().acquire(blocking=False))
            readers = {f"rreader{k}": 20_000 + 100 * k for k in range(300)}
            for client in clients:
                client.delete(rw_key(lock_name))
                plant_many(client, lock_name, {**readers, "iwaiter": 35_000})
            assert not await call(rl.rwlock(lock_name, ttl=10).read().acquire(blocking=False))
            writer = other.rwlock(lock_name, ttl=10).write()
            assert not await call(writer.acquire(blocking=False))
            for client in clients:
                client.zrem(rw_key(lock_name), "iwaiter")
            reader = rl.rwlock(lock_name, ttl=10).read()
            assert await call(reader.acquire(blocking=False))
            assert not await call(writer.acquire(blocking=False))
            await call(reader.release())

    api.run(body)


def test_an_acquire_drops_the_expired_holds_of_every_kind(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The next acquire drops every expired hold, also of the kind it does not look at
    (a reader's does not look at readers, a writer's not at intents): a name in constant
    use never gathers the holds of processes that died."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        with clients_of(servers) as clients:
            dead = {"rdead": -1_000, "idead": -1_000, "wdead": -1_000}
            for mode in ("read", "write"):
                for client in clients:
                    plant_many(client, lock_name, dead)
                hold = getattr(rl.rwlock(lock_name, ttl=10), mode)()
                assert await call(hold.acquire(blocking=False))
                mine = [f"{mode[0]}{hold.token}"]
                assert settled(lambda: raw_members(servers, lock_name), [mine] * 5) == [mine] * 5
                assert await call(hold.release())

    api.run(body)


def test_the_key_outlives_every_hold_and_goes_with_the_last(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A shorter hold does not shorten the key's time to live, nor does the release of
    the longer one end it before the shorter hold's; the last release deletes it."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        with clients_of(servers) as clients:
            longer = rl.rwlock(lock_name, ttl=20).read()
            shorter = rl.rwlock(lock_name, ttl=2).read()
            assert await call(longer.acquire(blocking=False))
            assert await call(shorter.acquire(blocking=False))
            assert settled_kinds(servers, lock_name, ["rr"] * 5) == ["rr"] * 5
            assert all(client.pttl(rw_key(lock_name)) > 18_000 for client in clients)
            assert await call(longer.release())
            assert settled_kinds(servers, lock_name, ["r"] * 5) == ["r"] * 5
            assert all(client.pttl(rw_key(lock_name)) > 1_000 for client in clients)
            assert await call(shorter.release())
            gone = settled(lambda: [c.exists(rw_key(lock_name)) for c in clients], [0] * 5)
            assert gone == [0] * 5

    api.run(body)


def test_a_hold_whose_time_ran_out_on_the_servers_is_not_extended(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A hold still in the set but past its expiry (no acquire came since to drop it) is
    no hold: an extension is refused, the release finds nothing to release."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        hold = rl.rwlock(lock_name, ttl=10).write()
        assert await call(hold.acquire(blocking=False))
        assert settled_kinds(servers, lock_name, ["w"] * 5) == ["w"] * 5
        for server in servers:
            client = client_of(server)
            plant_many(client, lock_name, {f"w{hold.token}": -1})
            client.close()
        assert not await call(hold.owned())
        with pytest.raises(LockLost):
            await call(hold.extend())
        assert not hold.held

    api.run(body)


def test_a_waiting_writer_keeps_new_readers_out(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """No writer starvation: once a writer waits, a reader arriving after it is refused
    although only readers hold; the writer gets the lock when the old readers leave, and
    a writer that gives up takes its intent back."""

    async def body() -> None:
        readers = await warm(api, servers.urls)
        writers = await warm(api, servers.urls, retry_delay=0.05)
        late = await warm(api, servers.urls)
        old = readers.rwlock(lock_name, ttl=10).read()
        assert await call(old.acquire(blocking=False))
        writer = writers.rwlock(lock_name, ttl=10).write()
        waiting = in_background(api, lambda: writer.acquire(timeout=20))
        await wait_until(lambda: all("i" in k for k in kinds(servers, lock_name)))
        newcomer = late.rwlock(lock_name, ttl=10).read()
        # Over several of the writer's attempts (every 25 to 50 ms): the intent stays
        # between them, so no try of the newcomer lands in a gap.
        for _ in range(10):
            assert not await call(newcomer.acquire(blocking=False))
            assert replies(newcomer.outcomes) == [Reply.TAKEN] * 5
            await asyncio.sleep(0.03)
        assert await call(old.release())
        assert await waiting
        # The writer holds on a majority at least. Woken by the servers that the old
        # reader's release reached first, its attempt may come before that release on
        # a minority (a busy machine) and be refused there: its intent stays there.
        held = settled_kinds(servers, lock_name, ["w"] * 5)
        assert held.count("w") >= 3, held
        assert set(held) <= {"w", "i"}, held
        assert await call(writer.release())
        assert await call(newcomer.acquire(blocking=False))
        # A writer that gives up leaves nothing: the newcomer's hold only.
        quitter = writers.rwlock(lock_name, ttl=10).write()
        assert not await call(quitter.acquire(timeout=0.3))
        assert settled_kinds(servers, lock_name, ["r"] * 5) == ["r"] * 5
        assert await call(newcomer.release())

    api.run(body)


def test_a_readers_release_wakes_the_waiting_writer(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """With a retry pause of 30 s or more, only the release announcement can bring the
    writer in within its 10 s timeout."""

    async def body() -> None:
        readers = await warm(api, servers.urls)
        writers = await warm(api, servers.urls, retry_delay=60)
        reader = readers.rwlock(lock_name, ttl=10).read()
        assert await call(reader.acquire(blocking=False))
        writer = writers.rwlock(lock_name, ttl=10).write()
        waiting = in_background(api, lambda: writer.acquire(timeout=10))
        await wait_until(lambda: all("i" in k for k in kinds(servers, lock_name)))
        await asyncio.sleep(0.1)  # the writer is in its long pause, subscribed
        assert await call(reader.release())
        assert await waiting
        assert await call(writer.release())

    api.run(body)


# --------------------------------------------------------------------------------------
# downgrade, upgrade, fencing
# --------------------------------------------------------------------------------------


def test_downgrade_turns_the_writer_into_a_reader_atomically(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls, fencing=True)
        other = await warm(api, servers.urls)
        rw, rw2 = rl.rwlock(lock_name, ttl=10), other.rwlock(lock_name, ttl=10)
        async with holding(rw.write(timeout=5)) as writer:
            assert writer.fencing_token is not None
            token = writer.token
            before = holds(servers, lock_name)
            assert before == [["w" + str(token)]] * 5
            await call(writer.downgrade())  # type: ignore[union-attr]
            assert writer.mode == "read"  # type: ignore[union-attr]
            after = holds(servers, lock_name)
            assert after == [["r" + str(token)]] * 5
            assert writer.validity > 0
            reader = rw2.read()
            assert await call(reader.acquire(blocking=False))
            assert await call(reader.release())
            assert not await call(rw2.write().acquire(blocking=False))
            with pytest.raises(LockNotHeld, match="held for reading already"):
                await call(writer.downgrade())  # type: ignore[union-attr]
            # Acquiring the held hold again is refused and leaves it a reader.
            with pytest.raises(LockNotReentrant):
                await call(writer.acquire(blocking=False))
            assert writer.mode == "read"  # type: ignore[union-attr]
            assert holds(servers, lock_name) == [["r" + str(token)]] * 5
        assert holds(servers, lock_name) == [[]] * 5

    api.run(body)


def test_a_downgraded_writer_writes_again_once_released(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A writer downgraded, then released: its ``mode`` says "write" again, what its next
    acquire takes (it said "read"), and ``upgrade()`` says what the hold is in each
    state (it called a released hold a read hold, and the writer a write hold that a
    reader is never upgraded from)."""

    async def body() -> None:
        rl = await warm(api, servers.urls)
        writer = rl.rwlock(lock_name, ttl=10).write()
        with pytest.raises(LockUpgradeRefused, match="this write hold holds nothing"):
            writer.upgrade()
        assert await call(writer.acquire(blocking=False))
        with pytest.raises(LockUpgradeRefused, match="this hold is the writer already"):
            writer.upgrade()
        await call(writer.downgrade())
        assert writer.mode == "read"
        with pytest.raises(LockUpgradeRefused, match="this hold is a read hold"):
            writer.upgrade()
        assert await call(writer.release())
        assert writer.mode == "write"
        assert await call(writer.acquire(blocking=False))
        assert writer.mode == "write"
        assert holds(servers, lock_name)[0][0].startswith("w")
        assert await call(writer.release())

    api.run(body)


def test_upgrade_is_refused_with_a_clear_error(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls)
        rw = rl.rwlock(lock_name, ttl=10)
        async with holding(rw.read(timeout=5)) as reader:
            with pytest.raises(LockUpgradeRefused, match="never upgraded"):
                reader.upgrade()  # type: ignore[union-attr]
            # The same thread or task asking to write while it reads: refused at once,
            # with a timeout as without one, before any round.
            for timeout in (None, 5.0):
                writer = rw.write(timeout=timeout)
                began = time.monotonic()
                with pytest.raises(LockUpgradeRefused, match="holds it for reading"):
                    await call(writer.acquire(timeout=timeout))
                assert writer.outcomes == ()
                assert time.monotonic() - began < 1.0
            assert settled_kinds(servers, lock_name, ["r"] * 5) == ["r"] * 5
        assert holds(servers, lock_name) == [[]] * 5

    api.run(body)


def test_writers_draw_increasing_fencing_tokens_and_readers_none(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls, fencing=True)
        rw = rl.rwlock(lock_name, ttl=10)
        tokens = []
        for _ in range(3):
            async with holding(rw.write(timeout=5)) as writer:
                tokens.append(writer.fencing_token)
            async with holding(rw.read(timeout=5)) as reader:
                assert reader.fencing_token is None
        assert all(isinstance(t, int) for t in tokens)
        assert tokens == sorted(set(tokens))  # type: ignore[type-var]

    api.run(body)


# --------------------------------------------------------------------------------------
# leases, loss, quarantine, bad input
# --------------------------------------------------------------------------------------


def test_auto_extended_reader_outlives_its_ttl_and_a_writer_waits(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls)
        other = await warm(api, servers.urls)
        rw = rl.rwlock(lock_name, ttl=0.5, auto_extend=True, max_hold=math.inf)
        async with holding(rw.read(timeout=5)) as reader:
            await asyncio.sleep(1.5)
            assert reader.extensions >= 1
            assert reader.validity > 0
            assert not await call(other.rwlock(lock_name, ttl=5).write().acquire(blocking=False))
        assert holds(servers, lock_name) == [[]] * 5

    api.run(body)


def test_a_hold_removed_from_the_servers_is_lost_at_extend(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls)
        hold = rl.rwlock(lock_name, ttl=10).read()
        assert await call(hold.acquire(blocking=False))
        for server in servers:
            client_of(server).delete(rw_key(lock_name))
        assert not await call(hold.owned())
        with pytest.raises(LockLost):
            await call(hold.extend())
        assert not hold.held

    api.run(body)


def test_a_restarted_server_is_quarantined_for_readers_and_writers(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)

    async def body() -> None:
        rl = await warm(api, group.urls, max_ttl=30)
        rw = rl.rwlock(lock_name, ttl=5)
        async with holding(rw.read(timeout=5)):
            pass
        group[0].restart()
        for hold in (rw.read(), rw.write()):
            assert await call(hold.acquire(timeout=5))
            assert hold.outcomes[0].reply is Reply.QUARANTINED
            assert await call(hold.release())

    api.run(body)


def test_bad_input_is_refused_before_any_network_call(api: Api, lock_name: str) -> None:
    async def body() -> None:
        rl = api.redlock(["redis://127.0.0.1:1"], max_ttl=10)  # nothing listens there
        with pytest.raises(ConfigurationError, match="exceeds max_ttl"):
            rl.rwlock(lock_name, ttl=11)
        with pytest.raises(TypeError):
            rl.rwlock(42, ttl=1)  # type: ignore[arg-type]
        rw = rl.rwlock(lock_name, ttl=1)
        with pytest.raises(ConfigurationError, match="blocking=False"):
            rw.read(blocking=False, timeout=1)
        with pytest.raises(ConfigurationError):
            rw.write(timeout=-1)
        hold = rw.write()
        with pytest.raises(TypeError, match="cannot be exported"):
            hold._state.export(now=0.0, keep=False)

    api.run(body)


def test_a_with_block_that_fails_leaves_nothing_behind(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        writers = await warm(api, servers.urls)
        readers = await warm(api, servers.urls, retry_delay=0.05)
        writer = writers.rwlock(lock_name, ttl=10).write()
        assert await call(writer.acquire(blocking=False))
        with pytest.raises(LockNotAcquired):
            async with holding(readers.rwlock(lock_name, ttl=10).read(timeout=0.3)):
                pass
        assert settled_kinds(servers, lock_name, ["w"] * 5) == ["w"] * 5
        assert await call(writer.release())

    api.run(body)


def test_rwlock_and_plain_lock_of_a_name_are_separate(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = await warm(api, servers.urls)
        lock: AnyLock = rl.lock(lock_name, ttl=10)
        async with holding(lock), holding(rl.rwlock(lock_name, ttl=10).write(timeout=5)):
            pass

    api.run(body)


def test_names_are_the_hash_tag_of_the_key() -> None:
    assert rw_key("doc:7") == "quorumlock:rw:{doc:7}"
    assert isinstance(
        quorumlock.Redlock(["redis://127.0.0.1:1"]).rwlock("x", ttl=1).read(),
        quorumlock.ReadWriteHold,
    )


def test_readers_writers_and_downgrade_on_each_server_kind(
    api: Api, make_servers: ServerFactory, kind: ServerKind, lock_name: str
) -> None:
    """The scripts on Valkey, Redis 6.2 and the PATH server: the clock read (TIME) comes
    before the writes in every script, which a server must allow."""
    group = make_servers(3, binary=binary_of(kind))

    async def body() -> None:
        rl = await warm(api, group.urls, fencing=True)
        other = await warm(api, group.urls)
        reader = other.rwlock(lock_name, ttl=5).read()
        assert await call(reader.acquire(blocking=False))
        assert await call(reader.extend())
        writer = rl.rwlock(lock_name, ttl=5).write()
        assert not await call(writer.acquire(blocking=False))
        assert await call(reader.release())
        assert await call(writer.acquire(blocking=False))
        assert isinstance(writer.fencing_token, int)
        await call(writer.downgrade())
        assert await call(writer.owned())
        assert await call(writer.release())
        assert holds(group, lock_name) == [[]] * 3

    api.run(body)
