"""The multi-resource lock (``Redlock.lock_many``) on real servers, through both APIs.

Each server takes every key of the set or none, in one script; the set is held when a
majority granted all of it; release and extend cover the set; a failed attempt leaves
nothing of ours on any server (docs/algorithm.md, "Multi-resource lock").
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from quorumlock import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotReentrant,
    QuorumUnavailable,
    Reply,
)
from quorumlock._algorithm.cluster import key_slot
from quorumlock.testing import (
    LocalCluster,
    LocalServer,
    LocalServerGroup,
    SetHold,
    overlapping_set_pairs,
)
from tests.conftest import ServerFactory, client_of, decided, settled_values, values
from tests.integration.apis import Api, call, holding

OTHER = "another-clients-token"
# Per-instance timeout of the tests' Redlocks: they assert single attempts, which the
# default for a short ttl (a few ms) can miss on a loaded 2-core machine.
PATIENT = 0.5


def hold_elsewhere(servers: Sequence[LocalServer], key: str, ttl_ms: int = 20_000) -> None:
    """Another client's key on ``servers``: they must refuse any set that contains it."""
    for server in servers:
        client = client_of(server)
        client.set(key, OTHER, px=ttl_ms)
        client.close()


def forget(servers: Sequence[LocalServer], keys: Sequence[str]) -> None:
    for server in servers:
        client = client_of(server)
        client.delete(*keys)
        client.close()


@pytest.mark.parametrize("n", [3, 5])
def test_every_subset_of_granting_servers(
    api: Api, servers: LocalServerGroup, lock_name: str, n: int
) -> None:
    """For every subset of N servers that grant (the others hold a conflicting key, one
    of the set's, a different one from subset to subset): acquired exactly when the
    subset is a majority; a server holding one key of the set took none of the others;
    a failed attempt left no key of ours anywhere; a release removes the whole set.
    Catches a script that sets keys one by one (a partial set on a refusing server), a
    wrong quorum, and a failed attempt that is not undone."""
    group = list(servers)[:n]
    names = [f"{lock_name}:c", f"{lock_name}:a", f"{lock_name}:b"]
    quorum = n // 2 + 1

    async def body() -> None:
        rl = api.redlock([s.url for s in group], instance_timeout=PATIENT)
        for size in range(n + 1):
            for granting in itertools.combinations(range(n), size):
                refusing = [group[i] for i in range(n) if i not in granting]
                blocked = names[(size + len(refusing)) % len(names)]
                hold_elsewhere(refusing, blocked)
                lock = rl.lock_many(names, ttl=10, blocking=False)
                acquired = await call(lock.acquire(blocking=False))
                assert acquired == (size >= quorum), (granting, lock.outcomes)
                for i, server in enumerate(group):
                    for name in names:
                        if i in granting and acquired:  # maybe not read yet: settled_values
                            assert settled_values([server], name, [lock.token]) == [lock.token]
                            continue
                        (value,) = values([server], name)
                        if name == blocked and i not in granting:
                            assert value == OTHER
                        else:  # all or none: nothing else, and nothing of a failure
                            assert value is None, (granting, i, name, value)
                if acquired:
                    expected = [Reply.GRANTED if i in granting else Reply.TAKEN for i in range(n)]
                    assert decided([o.reply for o in lock.outcomes], expected), lock.outcomes
                    assert await call(lock.release())
                    assert [o.reply for o in lock.outcomes].count(Reply.DONE) == size
                    for name in names:
                        assert OTHER not in values([group[i] for i in granting], name)
                        assert values([group[i] for i in granting], name) == [None] * size
                forget(group, names)

    api.run(body)


def test_extend_covers_the_whole_set_and_locked_owned(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """extend() resets the ttl of every key of the set; owned() and locked() read the
    set; a set of which one key expired on a majority cannot be extended."""
    names = [f"{lock_name}:{i}" for i in range(4)]
    group = list(servers)[:3]

    async def body() -> None:
        rl = api.redlock([s.url for s in group], instance_timeout=PATIENT)
        lock = rl.lock_many(names, ttl=2)
        async with holding(lock):
            assert lock.names == tuple(sorted(names))
            assert await call(lock.owned())
            assert await call(lock.locked())
            assert await call(lock.extend(20)) > 15
            # on the servers that confirmed it: the round ends at the majority that
            # decides it, and a server left unread (slow on a loaded machine) may run it
            # later
            confirmed = [
                s for s, o in zip(group, lock.outcomes, strict=True) if o.reply is Reply.DONE
            ]
            assert len(confirmed) >= 2
            for server in confirmed:
                client = client_of(server)
                ttls = [client.pttl(name) for name in names]
                client.close()
                assert all(15_000 < t <= 20_000 for t in ttls), ttls
            other = rl.lock_many([names[2], f"{lock_name}:x"], ttl=5)
            assert await call(other.locked())  # one key of its set is held
            assert not await call(other.owned())
        assert not await call(lock.locked())
        assert values(group, names[0]) == [None] * 3
        held = rl.lock_many(names, ttl=5)
        assert await call(held.acquire())
        forget(group[:2], [names[3]])  # one key gone on a majority
        with pytest.raises(LockLost, match="could not be extended"):
            await call(held.extend())
        # The failed extension released what was left of the set everywhere.
        assert all(v is None for name in names for v in values(group, name))

    api.run(body)


def test_fencing_tokens_increase_across_sets_and_plain_locks(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """With fencing=True a set gets a fencing token, larger than that of any earlier
    acquisition of an overlapping set or of a plain lock on one of its names."""
    a, b, c = (f"{lock_name}:{x}" for x in "abc")

    async def body() -> None:
        rl = api.redlock(servers.urls[:3], fencing=True, instance_timeout=PATIENT)
        tokens: list[int] = []
        for lock in (rl.lock_many([a, b], ttl=5), rl.lock(b, ttl=5), rl.lock_many([b, c], ttl=5)):
            async with holding(lock):
                assert lock.fencing_token is not None
                tokens.append(lock.fencing_token)
        assert tokens == sorted(tokens)
        assert len(set(tokens)) == 3

    api.run(body)


def test_overlapping_sets_exclude_each_other_and_do_not_deadlock(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Workers on overlapping sets ({a, b}, {b, c}, {c, a}, given in opposite orders)
    loop acquire / work / release: no name ever has two holders at once, and every
    worker gets its turns (no deadlock). Catches a per-key quorum (two sets each win a
    majority of a shared key on different servers) and an unsorted order."""
    a, b, c = (f"{lock_name}:{x}" for x in "abc")
    sets = [[a, b], [c, b], [c, a], [b, a]]
    inside: dict[str, int] = {a: 0, b: 0, c: 0}
    overlaps: list[str] = []
    done: list[int] = []
    holds: list[SetHold] = []  # for the fault-injection kit's checker of sets

    async def worker(names: list[str]) -> None:
        rl = api.redlock(servers.urls[:5], retry_delay=0.02)
        turns = 0
        give_up = time.monotonic() + 30
        while turns < 6 and time.monotonic() < give_up:
            async with holding(rl.lock_many(names, ttl=10, timeout=20)) as lock:
                start = time.monotonic()
                for name in names:
                    inside[name] += 1
                    if inside[name] > 1:
                        overlaps.append(name)
                await asyncio.sleep(0.005)
                for name in names:
                    inside[name] -= 1
                end = min(time.monotonic(), start + lock.validity)
                holds.append(
                    SetHold(worker=sets.index(names), start=start, end=end, names=frozenset(names))
                )
            turns += 1
        done.append(turns)

    async def body() -> None:
        await api.concurrently([lambda s=s: worker(s) for s in sets], limit=60)  # type: ignore[misc]

    api.run(body)
    assert overlaps == []
    assert list(overlapping_set_pairs(holds)) == []
    assert len(holds) == 6 * len(sets)
    assert done == [6] * len(sets)


def test_a_waiter_is_woken_by_the_release_of_any_key_of_its_set(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A blocking lock_many waits for a plain lock on one of its names; the release of
    that lock wakes it long before its polling pause (retry_delay 10 s: at least 5 s).
    Catches a waiter that listens only to the first key of its set."""
    a, z = f"{lock_name}:a", f"{lock_name}:z"  # z: not the first key of the set

    async def body() -> None:
        rl = api.redlock(servers.urls[:3], retry_delay=10, instance_timeout=PATIENT)
        holder = rl.lock(z, ttl=20)
        assert await call(holder.acquire())

        async def release_soon() -> None:
            await asyncio.sleep(0.5)
            assert await call(holder.release())

        releaser = asyncio.ensure_future(release_soon())
        waiter = rl.lock_many([a, z], ttl=5)
        started = time.monotonic()
        if api.flavour == "sync":
            acquired = await asyncio.to_thread(waiter.acquire, timeout=30)
        else:
            acquired = await call(waiter.acquire(timeout=30))
        waited = time.monotonic() - started
        await releaser
        assert acquired
        assert waited < 4.0, waited  # the pause alone is >= 5 s: woken, not polled
        assert await call(waiter.release())

    api.run(body)


def test_dead_and_frozen_servers(api: Api, make_servers: ServerFactory, lock_name: str) -> None:
    """N = 5: one dead server, then also one frozen: the set is still acquired (by the
    three or four others) and released. Three dead: QuorumUnavailable, and the two live
    servers keep no key of the failed attempt."""
    group = make_servers(5)
    names = [f"{lock_name}:{i}" for i in range(3)]

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.3)
        group[0].kill()
        async with holding(rl.lock_many(names, ttl=5)) as lock:
            assert [o.reply for o in lock.outcomes][1:] == [Reply.GRANTED] * 4
        assert all(values(list(group)[1:], name) == [None] * 4 for name in names)
        group[1].pause()
        try:
            async with holding(rl.lock_many(names, ttl=5)) as lock:
                assert [o.reply for o in lock.outcomes][2:] == [Reply.GRANTED] * 3
                assert values(list(group)[2:], names[1]) == [lock.token] * 3
            assert all(values(list(group)[2:], name) == [None] * 3 for name in names)
        finally:
            group[1].resume()
        group[1].kill()
        group[2].kill()
        with pytest.raises(QuorumUnavailable):
            await call(rl.lock_many(names, ttl=5).acquire(blocking=False))
        assert all(values(list(group)[3:], name) == [None] * 2 for name in names)

    api.run(body)


def test_a_taken_set_is_refused_within_the_timeout(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls[:3], retry_delay=0.05, instance_timeout=PATIENT)
        hold_elsewhere(list(servers)[:3], f"{lock_name}:b")
        with pytest.raises(LockNotAcquired):
            async with holding(
                rl.lock_many([f"{lock_name}:a", f"{lock_name}:b"], ttl=5, timeout=0.3)
            ):
                pass
        assert values(list(servers)[:3], f"{lock_name}:a") == [None] * 3

    api.run(body)


def test_a_set_and_a_lock_sharing_a_name_do_not_nest(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A thread or task that holds a name, through a plain lock or a set, and asks with
    no time limit for a set (or a lock) that contains it would wait for itself until its
    own hold expired: refused at once, as a plain lock's nesting is. With a time limit
    it is a bounded contender; a disjoint set is taken as usual."""
    a, b, c, d = (f"{lock_name}:{x}" for x in "abcd")

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        async with holding(rl.lock(a, ttl=5)) as outer:
            started = time.monotonic()
            with pytest.raises(LockNotReentrant, match="not reentrant") as caught:
                await call(rl.lock_many([b, a], ttl=5).acquire())
            assert time.monotonic() - started < outer.ttl  # at once, not at expiry
            assert caught.value.name == f"{a}, {b}"
            assert str(caught.value).startswith(f"{a!r}, of lock {a + ', ' + b!r}, is already")
            assert await call(rl.lock_many([a, b], ttl=5).acquire(timeout=0.1)) is False
            assert values(servers, b) == [None] * len(servers)  # the refusal left nothing
        async with holding(rl.lock_many([a, b], ttl=5)):
            with pytest.raises(LockNotReentrant):
                await call(rl.lock(b, ttl=5).acquire())
            with pytest.raises(LockNotReentrant):
                await call(rl.lock_many([b, c], ttl=5).acquire())
            async with holding(rl.lock_many([c, d], ttl=5)) as disjoint:
                assert disjoint.validity > 0
        async with holding(rl.lock(b, ttl=5)):  # released: the names are free again
            pass

    api.run(body)


@pytest.mark.parametrize(
    ("names", "error", "match"),
    [
        ([], ConfigurationError, "empty"),
        (["a", "b", "a"], ConfigurationError, "twice"),
        (["a", 7], TypeError, "must be a str"),
        ("ab", TypeError, "list of names"),
        (None, TypeError, "list of names"),
        (["a", ""], ConfigurationError, "empty"),
        (["a", "quorumlock:incarnation"], ConfigurationError, "quorumlock:incarnation"),
        ([f"n{i}" for i in range(1001)], ConfigurationError, "at most 1,000 names, not 1,001"),
    ],
)
def test_bad_input_is_refused_before_any_call(
    api: Api, names: object, error: type[Exception], match: str
) -> None:
    """No server listens at the URL: a check that made a network call would fail there
    with another error, or hang."""

    async def body() -> None:
        rl = api.redlock(["redis://127.0.0.1:1"], max_ttl=5)
        with pytest.raises(error, match=match):
            rl.lock_many(names, ttl=1)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="max_ttl"):
            rl.lock_many(["a", "b"], ttl=6)
        assert len(rl.lock_many([f"n{i}" for i in range(1000)], ttl=1).names) == 1000

    api.run(body)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(3) as local:
        yield local


def test_a_cluster_instance_needs_one_slot(
    api: Api, cluster: LocalCluster, servers: LocalServerGroup, lock_name: str
) -> None:
    """[cluster, server, server]: names in two slots are refused before any call; names
    with a common hash tag are taken all together on the master of their slot (the
    cluster variant of the set's acquire script, with the restart quarantine and
    fencing on), extended and released."""
    spread = [f"{lock_name}:1", f"{lock_name}:2"]
    assert key_slot(spread[0]) != key_slot(spread[1])
    tagged = [f"{{{lock_name}}}:1", f"{{{lock_name}}}:2", f"{{{lock_name}}}:3"]

    async def body() -> None:
        client: Any = cluster.client() if api.flavour == "sync" else cluster.async_client()
        try:
            rl = api.redlock([client, *servers.urls[:2]], fencing=True, instance_timeout=0.5)
            with pytest.raises(ConfigurationError, match="hash slot") as refused:
                rl.lock_many(spread, ttl=5)
            # the names as a message lists them elsewhere: each quoted once
            assert f"2 slots: {spread[0]!r}, {spread[1]!r}; " in str(refused.value)
            lock = rl.lock_many(tagged, ttl=5)
            async with holding(lock):
                assert [o.reply for o in lock.outcomes] == [Reply.GRANTED] * 3
                assert lock.fencing_token is not None
                owner = cluster.slot_map()[key_slot(tagged[0])]
                node = cluster.node_client(owner)
                assert [node.get(k) for k in tagged] == [str(lock.token).encode()] * 3
                assert await call(lock.extend())
            assert [node.get(k) for k in tagged] == [None] * 3
            node.close()
        finally:
            if api.flavour == "sync":
                client.close()
            else:
                await client.aclose()

    api.run(body)
