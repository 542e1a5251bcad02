"""A Redis/Valkey Cluster as ONE Redlock instance, against real cluster processes.

The cluster is a real 3-master ``LocalCluster`` (``--cluster-enabled`` valkey-server or
redis-server processes); the other instances are plain servers of the ``servers``
fixture. Each lock key goes to the master that owns its slot; the restart quarantine and
the fencing counter live in one marker per slot, in that slot (docs/cluster.md).

Tests that kill, restart or move slots use a private cluster (``make_cluster``); the
others share one cluster and must not break it. Each test says which removal it
catches.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis
import redis.asyncio.cluster
import redis.cluster

import quorumlock
import quorumlock.asyncio
from quorumlock import ConfigurationError, NodeOutcome, QuorumUnavailable, Reply
from quorumlock._algorithm.cluster import key_slot, slot_marker
from quorumlock.testing import LocalCluster, LocalServer, LocalServerGroup, _cluster, _servers
from tests.cli.conftest import run_cli
from tests.conftest import decided, settled
from tests.integration.apis import UNHURRIED, AnyLock, AnyRedlock, Api, call

G, X, Q, E, T = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.ERROR, Reply.TIMEOUT
# Per-instance timeout of the tests' Redlocks: the tests assert single attempts, which a
# 25 ms default (ttl 5 s) can miss on a loaded 2-core machine. A dead node is refused at
# once and costs nothing; only the pause test waits on a timeout (its own, shorter).
PATIENT = 0.5
ClusterFactory = Callable[..., LocalCluster]


# --------------------------------------------------------------------------------------
# fixtures and helpers
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_cluster() -> Iterator[LocalCluster]:
    """One 3-master cluster for the tests that do not break it."""
    with LocalCluster(3) as cluster:
        yield cluster


@pytest.fixture
def make_cluster() -> Iterator[ClusterFactory]:
    """A factory of private clusters, for tests that kill, restart or move slots."""
    clusters: list[LocalCluster] = []

    def make(masters: int = 3, **options: Any) -> LocalCluster:
        cluster = LocalCluster(masters, **options)
        clusters.append(cluster)
        cluster.start()
        return cluster

    yield make
    for cluster in clusters:
        cluster.close()


def test_a_bus_port_taken_before_the_start_is_picked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A node's cluster bus port is picked when the cluster is made, and the kernel can
    hand that port to another socket before the node starts (it did, in CI): the start
    picks another bus port instead of failing."""
    intruder = socket.socket()
    intruder.bind(("127.0.0.1", 0))
    intruder.listen()
    busy = intruder.getsockname()[1]
    real = _servers._pick_free_port
    picked: list[int] = []

    def pick(host: str) -> int:
        picked.append(busy if not picked else real(host))
        return picked[-1]

    monkeypatch.setattr(_cluster, "_pick_free_port", pick)
    try:
        with LocalCluster(1) as cluster:
            assert picked[0] == busy
            assert len(picked) == 2  # the node's, and the one picked again
            client = cluster.client()
            try:
                assert client.set("k", "v")
            finally:
                client.close()
    finally:
        intruder.close()


@asynccontextmanager
async def cluster_client(api: Api, cluster: LocalCluster) -> AsyncIterator[Any]:
    """A ``RedisCluster`` client of the API's flavour (sync or asyncio)."""
    if api.flavour == "sync":
        sync_client = cluster.client()
        try:
            yield sync_client
        finally:
            sync_client.close()
    else:
        async_client = cluster.async_client()
        try:
            yield async_client
        finally:
            await async_client.aclose()


def names_by_master(
    cluster: LocalCluster, per_master: int, prefix: str = ""
) -> dict[int, list[str]]:
    """Lock names, ``per_master`` for each master (by port), spread over the slots: no
    two in one slot (names that differ in their last characters only share slots more
    often than chance would have it: CRC16 is linear)."""
    owners = cluster.slot_map()
    prefix = prefix or f"test:{uuid.uuid4().hex[:8]}"
    names: dict[int, list[str]] = {node.port: [] for node in set(owners.values())}
    taken: set[int] = set()
    i = 0
    while any(len(v) < per_master for v in names.values()):
        name = f"{prefix}:{i}"
        slot = key_slot(name)
        port = owners[slot].port
        if len(names[port]) < per_master and slot not in taken:
            names[port].append(name)
            taken.add(slot)
        i += 1
    return names


def name_on(cluster: LocalCluster, node: LocalServer) -> str:
    """A lock name whose slot ``node`` serves."""
    return names_by_master(cluster, 1)[node.port][0]


def dead_url() -> str:
    """The URL of a loopback port nobody listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}"


def value_on(cluster: LocalCluster, node: LocalServer, key: str) -> str | None:
    client = cluster.node_client(node)
    try:
        raw = client.get(key)
    finally:
        client.close()
    assert raw is None or isinstance(raw, bytes)
    return None if raw is None else raw.decode()


def marker_on(cluster: LocalCluster, node: LocalServer, slot: int) -> dict[str, str]:
    client = cluster.node_client(node)
    try:
        raw = client.hgetall(slot_marker(slot))
    finally:
        client.close()
    return {_text(k): _text(v) for k, v in raw.items()}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def attempt(
    rl: AnyRedlock, name: str, ttl: float = 1.0
) -> tuple[bool, tuple[NodeOutcome, ...]]:
    """One non-blocking acquire, released again if it was acquired: whether it was, and
    the acquire's outcomes."""
    lock = rl.lock(name, ttl=ttl)
    acquired = await call(lock.acquire(blocking=False))
    outcomes = lock.outcomes
    if acquired:
        await call(lock.release())
    return acquired, outcomes


async def cluster_answer(
    rl: AnyRedlock, name: str, until: Callable[[NodeOutcome], bool], limit: float = 15.0
) -> tuple[bool, NodeOutcome]:
    """Acquire and release ``name`` until the cluster's outcome (the first instance)
    satisfies ``until`` (bounded by ``limit`` seconds): new connections, a node that
    rejoins, a background map reload take a round or two."""
    give_up = time.monotonic() + limit
    while True:
        acquired, outcomes = await attempt(rl, name)
        outcome = outcomes[0]
        if outcome.reply is Reply.UNREAD and time.monotonic() < give_up:
            continue  # the others decided the round first: not the cluster's answer
        if until(outcome) or time.monotonic() > give_up:
            return acquired, outcome
        await asyncio.sleep(0.05)


def wait_uptime(cluster: LocalCluster, node: LocalServer, seconds: int) -> None:
    """Wait (bounded) until ``node`` has run for ``seconds``: a restart that long ago is
    out of any quarantine the plain acquire script would count from the start."""
    give_up = time.monotonic() + seconds + 5
    while time.monotonic() < give_up:
        client = cluster.node_client(node)
        try:
            uptime = int(client.info("server")["uptime_in_seconds"])
        finally:
            client.close()
        if uptime >= seconds:
            return
        time.sleep(0.1)
    raise AssertionError(f"{node.url} has not been up for {seconds} s")


def answered(outcome: NodeOutcome) -> bool:
    return outcome.reply not in (E, T)


async def warm_up(rl: AnyRedlock, names: dict[int, list[str]]) -> None:
    """One acquire per master, so that every master has a connection (first contact)."""
    for per_master in names.values():
        _, outcome = await cluster_answer(rl, per_master[0], answered)
        assert outcome.reply is G, outcome


# --------------------------------------------------------------------------------------
# one instance of the N: routing, both APIs
# --------------------------------------------------------------------------------------


def test_acquire_extend_release_on_every_master(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """[cluster, server, server]: names spread over the slots of all three masters are
    acquired, extended and released on the master that owns each slot. Catches a
    command sent to the wrong node (MOVED: an error outcome) and a cluster that is not
    asked at all (no key on its owner)."""
    cluster = shared_cluster
    names = names_by_master(cluster, 12)
    owners = cluster.slot_map()
    assert len(names) == 3
    assert len({key_slot(n) for group in names.values() for n in group}) == 36

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock([client, *servers.urls[:2]], instance_timeout=PATIENT)
            assert rl.servers[0].startswith("redis+cluster://127.0.0.1:")
            await warm_up(rl, names)
            for group in names.values():
                for name in group:
                    lock = rl.lock(name, ttl=5)
                    assert await call(lock.acquire(blocking=False))
                    # decided by a majority: the last to answer may be left unread
                    assert decided([o.reply for o in lock.outcomes], [G, G, G]), lock.outcomes
                    owner = owners[key_slot(name)]
                    found = settled(functools.partial(value_on, cluster, owner, name), lock.token)
                    assert found == lock.token
                    assert await call(lock.extend())
                    assert await call(lock.release())
                    released = [o.reply for o in lock.outcomes]
                    assert decided(released, [Reply.DONE] * 3), released
                    gone = settled(functools.partial(value_on, cluster, owner, name), None)
                    assert gone is None

    api.run(body)


def test_a_fair_lock_queues_on_the_owner_of_the_slot(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """``fair=True`` with a cluster among the instances: the fair acquire script, with
    the queue's keys in the name's slot (a cross-slot script would be refused), runs on
    the master that owns the slot and grants the lock there."""
    cluster = shared_cluster
    (name, *_), *_ = names_by_master(cluster, 1).values()
    owner = cluster.slot_map()[key_slot(name)]

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock([client, *servers.urls[:2]], instance_timeout=PATIENT, fair=True)
            lock = rl.lock(name, ttl=5)
            assert await call(lock.acquire(blocking=False)), lock.outcomes
            assert value_on(cluster, owner, name) == lock.token
            assert await call(lock.release())
            assert value_on(cluster, owner, name) is None

    api.run(body)


def test_locked_and_owned_read_the_owner_of_the_slot(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """[cluster, server, server]: ``locked()`` and ``owned()`` read each name on the
    master that owns its slot. With the key gone from one plain server, only the
    cluster's answer makes the majority."""
    cluster = shared_cluster
    names = names_by_master(cluster, 1)

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock([client, *servers.urls[:2]], instance_timeout=PATIENT)
            await warm_up(rl, names)
            for (name,) in names.values():
                lock = rl.lock(name, ttl=5)
                assert await call(lock.locked()) is False
                assert await call(lock.acquire(blocking=False))
                plain = redis.Redis(host=servers[0].host, port=servers[0].port)
                plain.delete(name)
                plain.close()
                assert await call(lock.owned()) is True
                assert await call(lock.locked()) is True
                # probes change nothing (the acquire's: a majority decided it)
                assert decided([o.reply for o in lock.outcomes], [G, G, G]), lock.outcomes
                assert await call(lock.release())

    api.run(body)


def test_a_cluster_and_four_plain_servers(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """N = 5 with the cluster as one instance: with two plain servers held by someone
    else, the cluster's grant makes the majority (3 of 5); with its slot's master held
    too, there is none. Catches a cluster whose answer does not count, or counts twice."""
    cluster = shared_cluster
    names = names_by_master(cluster, 1)
    name = next(iter(names.values()))[0]
    owner = cluster.owner_of(name)

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock([client, *servers.urls[:4]], instance_timeout=PATIENT)
            assert rl.quorum == 3
            await warm_up(rl, names)
            for server in servers.servers[:2]:
                other = redis.Redis(host=server.host, port=server.port)
                other.set(name, "someone-else", px=10_000)
                other.close()
            lock = rl.lock(name, ttl=5)
            assert await call(lock.acquire(blocking=False))
            assert decided([o.reply for o in lock.outcomes], [G, X, X, G, G]), lock.outcomes
            assert await call(lock.release())
            node = cluster.node_client(owner)
            node.set(name, "someone-else", px=10_000)
            node.close()
            assert not await call(lock.acquire(blocking=False))
            assert [o.reply for o in lock.outcomes] == [X, X, X, G, G]
            node = cluster.node_client(owner)
            node.delete(name)
            node.close()

    api.run(body)


def test_mutual_exclusion_through_the_cluster(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """Two Redlocks over [cluster, server, dead server]: every majority needs the
    cluster, so exclusion rests on it. Workers of both increment a counter under the
    lock, reading and writing in two steps: any overlap loses an increment. Catches a
    cluster that grants the same name twice (a key routed to two different nodes)."""
    cluster = shared_cluster
    names = names_by_master(cluster, 1)
    name = next(iter(names.values()))[-1]
    per_worker = 5
    workers = 4

    async def body() -> None:
        async with (
            cluster_client(api, cluster) as a_client,
            cluster_client(api, cluster) as b_client,
        ):
            down = dead_url()
            a = api.redlock(
                [a_client, servers.urls[0], down], retry_delay=0.02, instance_timeout=PATIENT
            )
            b = api.redlock(
                [b_client, servers.urls[0], down], retry_delay=0.02, instance_timeout=PATIENT
            )
            await warm_up(a, names)
            await warm_up(b, names)
            holder = a.lock(name, ttl=5)
            assert await call(holder.acquire(blocking=False))
            refused = b.lock(name, ttl=5)
            assert not await call(refused.acquire(blocking=False))
            assert [o.reply for o in refused.outcomes][:2] == [X, X]
            assert await call(holder.release())
            counter = {"value": 0, "holders": 0, "overlaps": 0}

            def worker(rl: AnyRedlock) -> Callable[[], Any]:
                async def run() -> None:
                    for _ in range(per_worker):
                        async with _held(rl.lock(name, ttl=5, timeout=20)):
                            counter["holders"] += 1
                            if counter["holders"] > 1:
                                counter["overlaps"] += 1
                            seen = counter["value"]
                            await asyncio.sleep(0.002)
                            counter["value"] = seen + 1
                            counter["holders"] -= 1

                return run

            bodies = [worker(a if i % 2 else b) for i in range(workers)]
            await api.concurrently(bodies, limit=60)
            assert counter["overlaps"] == 0
            assert counter["value"] == per_worker * workers

    api.run(body)


@asynccontextmanager
async def _held(lock: AnyLock) -> AsyncIterator[None]:
    assert await call(lock.acquire())
    try:
        yield
    finally:
        await call(lock.release())


def test_fencing_counter_per_slot(
    api: Api, shared_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """Fencing with [cluster, server, dead server]: every token is drawn on the cluster
    too, from the marker of the name's slot on its owner, and tokens strictly increase
    across two Redlocks. Catches a counter not kept per slot (or not on the owner)."""
    cluster = shared_cluster
    names = names_by_master(cluster, 2)
    name = next(iter(names.values()))[1]
    slot = key_slot(name)
    owner = cluster.owner(slot)

    async def body() -> None:
        async with (
            cluster_client(api, cluster) as a_client,
            cluster_client(api, cluster) as b_client,
        ):
            down = dead_url()
            a = api.redlock(
                [a_client, servers.urls[0], down], fencing=True, instance_timeout=PATIENT
            )
            b = api.redlock(
                [b_client, servers.urls[0], down], fencing=True, instance_timeout=PATIENT
            )
            await warm_up(a, names)
            await warm_up(b, names)
            tokens: list[int] = []
            for i in range(6):
                lock = (a if i % 2 else b).lock(name, ttl=5)
                assert await call(lock.acquire(blocking=False))
                on_cluster = lock.outcomes[0]
                assert on_cluster.reply is G
                assert on_cluster.fence is not None
                assert lock.fencing_token is not None
                assert lock.fencing_token >= on_cluster.fence
                # The token sticks on the slot's marker (drawn there, or raised by the
                # commit round when the instances' counters differed).
                assert int(marker_on(cluster, owner, slot)["fence"]) == lock.fencing_token
                tokens.append(lock.fencing_token)
                assert await call(lock.release())
            assert tokens == sorted(set(tokens)), tokens

    api.run(body)


# --------------------------------------------------------------------------------------
# node failures, restarts, slot moves (private clusters)
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_kill_and_restart_of_the_node_owning_the_slot(
    api: Api, make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """kill -9 of the master that owns a name's slot: the cluster instance reports an
    error for that name (naming the node) and the lock works through the two plain
    servers; names on the other masters are still granted by the cluster. Restarted
    without persistence, the node's slots are quarantined (their markers are gone) while
    the other masters' are not, and come back after max_ttl with a fencing counter
    raised to the node's clock. Catches a missing per-slot quarantine (the restarted
    node would grant at once) and a node failure that takes the whole instance out."""
    cluster = make_cluster(3)
    victim = cluster.masters()[0]
    survivor = cluster.masters()[1]
    names = names_by_master(cluster, 1)
    lost, kept = names[victim.port][0], names[survivor.port][0]

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock(
                [client, *servers.urls[:2]], max_ttl=1.0, fencing=True, instance_timeout=PATIENT
            )
            await warm_up(rl, names)

            cluster.kill(victim)
            acquired, outcome = await cluster_answer(rl, lost, lambda o: o.reply is E)
            assert acquired
            assert outcome.reply is E
            assert f"127.0.0.1:{victim.port}" in outcome.detail
            acquired, outcome = await cluster_answer(rl, kept, answered)
            assert acquired
            assert outcome.reply is G, outcome

            cluster.restart(victim)
            acquired, outcome = await cluster_answer(rl, lost, answered)
            assert acquired
            assert outcome.reply is Q, outcome
            assert outcome.detail.endswith("granted here"), outcome.detail
            acquired, outcome = await cluster_answer(rl, kept, answered)
            assert acquired
            assert outcome.reply is G, outcome

            # The quarantine ends max_ttl after the first acquire found the marker gone.
            acquired, outcome = await cluster_answer(rl, lost, lambda o: o.reply is G)
            assert acquired
            assert outcome.reply is G, outcome
            assert outcome.fence is not None
            assert outcome.fence > 10**15

    api.run(body)


def test_a_paused_node_costs_its_slots_a_timeout(
    make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """SIGSTOP of one master: the rounds of its slots are decided by the two plain
    servers without it (not read) or, where they were not, time out within the instance
    timeout; the other masters' slots are granted. Catches a round that waits on a node
    it does not need."""
    cluster = make_cluster(3)
    frozen = cluster.masters()[2]
    names = names_by_master(cluster, 1)
    client = cluster.client()
    rl = quorumlock.Redlock([client, *servers.urls[:2]], instance_timeout=0.2)
    try:

        async def body() -> None:
            await warm_up(rl, names)
            cluster.pause(frozen)
            try:
                acquired, outcomes = await attempt(rl, names[frozen.port][0])
                assert acquired
                assert outcomes[0].reply in (T, Reply.UNREAD), outcomes
                assert f"127.0.0.1:{frozen.port}" in outcomes[0].detail
                for port, group in names.items():
                    if port != frozen.port:
                        acquired, outcomes = await attempt(rl, group[0])
                        assert acquired
                        assert outcomes[0].reply in (G, Reply.UNREAD), outcomes
            finally:
                cluster.resume(frozen)

        asyncio.run(body())
    finally:
        rl.close()
        client.close()


def test_moved_is_followed_within_the_round(
    api: Api, make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """A slot moved to another master after quorumlock learnt the map: the old owner
    answers MOVED, and the command goes to the new owner in the same round. With the
    plain SET the new owner grants it; with the quarantine on, the slot's marker moved
    with the slot and names the old owner's process, so the new owner starts a
    quarantine (a move adds quarantine, never removes one). The third instance is dead:
    no majority without the cluster's answer, which every round then reads. Catches a
    MOVED reported as an error instead of followed, and a migrated marker taken at its
    word."""
    cluster = make_cluster(3)
    source, target = cluster.masters()[0], cluster.masters()[1]
    names = names_by_master(cluster, 2)
    name = names[source.port][1]
    slot = key_slot(name)

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            # a dead third instance: no majority without the cluster's answer, which every
            # round then reads
            down = dead_url()
            plain = api.redlock(
                [client, servers.urls[0], down], max_ttl=None, instance_timeout=PATIENT
            )
            guarded = api.redlock(
                [client, servers.urls[0], down], max_ttl=1.0, instance_timeout=PATIENT
            )
            await warm_up(plain, names)
            await warm_up(guarded, names)
            assert (await attempt(guarded, name))[1][0].reply is G
            # Taken at its word, the migrated marker (another process's) would count a
            # quarantine from the target's start: over by now.
            wait_uptime(cluster, target, 3)

            cluster.move_slot(slot, target)
            assert marker_on(cluster, target, slot)  # the marker moved with the slot

            lock = plain.lock(name, ttl=5)
            assert await call(lock.acquire(blocking=False))
            assert lock.outcomes[0].reply is G, lock.outcomes
            assert value_on(cluster, target, name) == lock.token
            assert await call(lock.release())

            lock = guarded.lock(name, ttl=1)  # the cluster's grant does not count: refused
            with pytest.raises(QuorumUnavailable) as refused:
                await call(lock.acquire(blocking=False))
            assert refused.value.outcomes[0].reply is Q, refused.value.outcomes
            assert refused.value.outcomes[0].detail.endswith("granted here")

    api.run(body)


def test_a_held_lock_moves_with_its_slot(
    api: Api, make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """A lock held while its slot moves: the key migrates with its ttl, so the new
    owner refuses a second client (and counts for nobody while in quarantine). Catches
    a migration that would let the cluster grant a held name."""
    cluster = make_cluster(3)
    source, target = cluster.masters()[1], cluster.masters()[2]
    names = names_by_master(cluster, 1)
    name = names[source.port][0]

    async def body() -> None:
        async with (
            cluster_client(api, cluster) as a_client,
            cluster_client(api, cluster) as b_client,
        ):
            a = api.redlock([a_client, *servers.urls[:2]], instance_timeout=PATIENT)
            b = api.redlock([b_client, *servers.urls[:2]], instance_timeout=PATIENT)
            await warm_up(a, names)
            await warm_up(b, names)
            holder = a.lock(name, ttl=10)
            assert await call(holder.acquire(blocking=False))
            cluster.move_slot(key_slot(name), target)
            assert value_on(cluster, target, name) == holder.token
            other = b.lock(name, ttl=10)
            assert not await call(other.acquire(blocking=False))
            on_cluster = other.outcomes[0]
            assert on_cluster.reply is Q, on_cluster
            assert on_cluster.detail.endswith("taken here"), on_cluster
            assert await call(holder.release())
            assert value_on(cluster, target, name) is None

    api.run(body)


def test_a_half_migrated_slot_is_an_error_for_its_names(
    make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """While a slot migrates, its marker may already be on the target while a lock key is
    still on the source: the acquire script, which needs both, is refused on the source
    (TRYAGAIN, or ASK when it has neither) and the cluster instance reports an error
    rather than pairing a key with a marker (fencing counter) left behind. This is the
    server behaviour docs/cluster.md's fencing argument relies on, checked; it would
    catch a marker outside the lock key's slot (a per-node marker is not refused) and
    an ASK followed to a target that lacks the key."""
    cluster = make_cluster(3)
    source, target = cluster.masters()[0], cluster.masters()[1]
    names = names_by_master(cluster, 1)
    held = names[source.port][0]
    free = "{" + held + "}:free"  # same slot
    slot = key_slot(held)
    assert key_slot(free) == slot
    client = cluster.client()
    rl = quorumlock.Redlock([client, *servers.urls[:2]], instance_timeout=PATIENT)
    try:

        async def body() -> None:
            await warm_up(rl, names)
            holder = rl.lock(held, ttl=10)
            assert holder.acquire(blocking=False)
            # held on the source (maybe not read: the plain servers may decide first)
            found = settled(functools.partial(value_on, cluster, source, held), holder.token)
            assert found == holder.token
            src, dst = cluster.node_client(source), cluster.node_client(target)
            try:
                dst.execute_command(
                    "CLUSTER", "SETSLOT", slot, "IMPORTING", cluster.node_id(source)
                )  # type: ignore[no-untyped-call]
                src.execute_command(
                    "CLUSTER", "SETSLOT", slot, "MIGRATING", cluster.node_id(target)
                )  # type: ignore[no-untyped-call]
                src.execute_command(
                    "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", slot_marker(slot)
                )  # type: ignore[no-untyped-call]
            finally:
                src.close()
                dst.close()
            for name in (held, free):
                # (until a round reads the cluster's answer: the plain servers decide)
                acquired, outcome = await cluster_answer(rl, name, lambda _: True)
                assert acquired is (name == free)
                assert outcome.reply is E, outcome
                assert outcome.detail.startswith(f"127.0.0.1:{source.port}: ")
                assert outcome.fence is None
            assert value_on(cluster, source, held) == holder.token
            assert holder.release()

        asyncio.run(body())
    finally:
        rl.close()
        client.close()


@pytest.mark.slow
def test_failover_to_a_replica_is_quarantined(
    make_cluster: ClusterFactory, servers: LocalServerGroup
) -> None:
    """kill -9 of a master with a replica: the cluster promotes the replica, quorumlock
    reloads its slot map in the background and finds the new master; the promoted
    replica's markers name the old master's process (replication is asynchronous: it
    may lack the last grants), so its slots are quarantined. Catches a failover taken
    as a healthy master, and a slot map never reloaded after a node failure."""
    cluster = make_cluster(3, replicas=1, node_timeout=1000)
    victim = cluster.masters()[0]
    names = names_by_master(cluster, 1)
    name = names[victim.port][0]
    client = cluster.client()
    rl = quorumlock.Redlock([client, *servers.urls[:2]], max_ttl=1.0, instance_timeout=PATIENT)
    replica = cluster.nodes[3]  # the replica of master 0
    try:

        async def body() -> None:
            await warm_up(rl, names)
            # Taken at its word, the replicated marker (the old master's process) would
            # count a quarantine from the replica's start: over by now.
            wait_uptime(cluster, replica, 3)
            cluster.kill(victim)
            _, outcome = await cluster_answer(rl, name, answered, limit=30)
            assert outcome.reply is Q, outcome
            assert f"127.0.0.1:{victim.port}" not in outcome.detail
            assert cluster.owner_of(name) is replica

        asyncio.run(body())
    finally:
        rl.close()
        client.close()


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------


def test_a_cluster_client_given_to_the_wrong_api(shared_cluster: LocalCluster) -> None:
    """A RedisCluster of the other flavour is a TypeError that says where it goes, and
    the same cluster listed twice is refused, before any network call of quorumlock."""
    sync_client = shared_cluster.client()
    async_client = shared_cluster.async_client()
    try:
        with pytest.raises(TypeError, match=r"asyncio clients go to quorumlock\.asyncio"):
            quorumlock.Redlock([async_client])  # type: ignore[list-item]
        with pytest.raises(TypeError, match=r"sync clients go to quorumlock\.Redlock"):
            quorumlock.asyncio.Redlock([sync_client])  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match="listed twice"):
            quorumlock.Redlock([sync_client, shared_cluster.client()])
        node = shared_cluster.nodes[0]
        with pytest.raises(ConfigurationError, match="listed twice"):
            quorumlock.Redlock([sync_client, node.url])
    finally:
        sync_client.close()
        asyncio.run(async_client.aclose())


def test_one_cluster_given_from_two_of_its_nodes_is_refused(
    api: Api, shared_cluster: LocalCluster, make_servers: Any, lock_name: str
) -> None:
    """Two clients of one cluster, started from two of its nodes, and a plain server that
    is down: the cluster's masters count twice toward a majority unless the check that
    two entries are not one server (each master's run_id) covers them. It did not: an
    asyncio acquire was granted by that one cluster alone."""
    first, second = shared_cluster.nodes[0], shared_cluster.nodes[1]
    plain = make_servers(1)
    plain[0].kill()

    async def body() -> None:
        if api.flavour == "async":
            a: Any = redis.asyncio.cluster.RedisCluster(host=first.host, port=first.port)
            b: Any = redis.asyncio.cluster.RedisCluster(host=second.host, port=second.port)
        else:
            a = redis.cluster.RedisCluster(host=first.host, port=first.port)
            b = redis.cluster.RedisCluster(host=second.host, port=second.port)

        async def attempt() -> None:  # refused where it is made, or at its first acquire
            rl = api.redlock([a, b, plain.urls[0]], instance_timeout=0.5)
            await call(rl.lock(lock_name, ttl=5).acquire(blocking=False))

        try:
            with pytest.raises(ConfigurationError, match=r"listed twice|are the same server"):
                await attempt()
        finally:
            for client in (a, b):
                await call(client.aclose() if api.flavour == "async" else client.close())

    api.run(body)


def test_semaphores_are_refused_over_a_cluster(shared_cluster: LocalCluster) -> None:
    """As docs/cluster.md says: a ConfigurationError when the semaphore is made."""
    client = shared_cluster.client()
    rl = quorumlock.Redlock([client])
    try:
        with pytest.raises(ConfigurationError, match="not supported over a Redis Cluster"):
            rl.semaphore("locks:sem", permits=2, ttl=5)
    finally:
        rl.close()
        client.close()


def test_cluster_nodes_listed_as_plain_servers_fail_at_once(
    shared_cluster: LocalCluster, lock_name: str
) -> None:
    """A cluster's nodes as plain URLs: the acquire script's two keys are in different
    slots there (CROSSSLOT), which no retry fixes: one attempt, a fatal outcome per node
    that says to give the cluster as one client, and no key left behind."""
    # (an unhurried instance timeout: a loaded machine's node answered after 25 ms, and
    # a first attempt timed out would be counted)
    rl = quorumlock.Redlock([node.url for node in shared_cluster.nodes], instance_timeout=UNHURRIED)
    try:
        with pytest.raises(QuorumUnavailable, match=r"\(1 attempt\)") as info:
            rl.lock(lock_name, ttl=5).acquire(timeout=10)
        replies = [o.reply for o in info.value.outcomes]
        # two fatal answers decide it: a third, slower one may go unread
        assert replies.count(Reply.FATAL) >= 2, info.value.outcomes
        assert set(replies) <= {Reply.FATAL, Reply.UNREAD}, info.value.outcomes
        fatal = [o for o in info.value.outcomes if o.reply is Reply.FATAL]
        assert all("one RedisCluster client" in o.detail for o in fatal)
    finally:
        rl.close()
    client = shared_cluster.client()
    try:
        assert client.get(lock_name) is None
    finally:
        client.close()


def test_servers_init_refuses_every_node_of_a_cluster(make_cluster: ClusterFactory) -> None:
    """Catches ``quorumlock servers init`` of a cluster node's URL, which docs/cluster.md
    says is refused: the node that owns the plain marker's slot was "marked as new" (a
    marker no cluster acquire reads: the first use still starts a quarantine) and the
    others failed with redis-py's MovedError. Every node is refused with the reason, as a
    RedisCluster client is, and nothing is written."""
    cluster = make_cluster(3, fresh=False)
    urls = [node.url for node in cluster.nodes]
    result = run_cli("servers", "init", *urls)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout
    for url, line in zip(urls, lines, strict=True):
        assert line.startswith(f"{url}: refused: a cluster node"), line
        assert "docs/cluster.md" in line
    assert "MovedError" not in result.stdout + result.stderr
    with pytest.raises(ConfigurationError, match="3 of 3"):
        quorumlock.provision(urls)
    for node in cluster.nodes:
        client = cluster.node_client(node)
        try:
            assert client.dbsize() == 0
        finally:
            client.close()


@pytest.mark.parametrize("wake_on_release", [True, False])
def test_cluster_nodes_listed_as_plain_servers_fail_at_once_without_the_quarantine(
    shared_cluster: LocalCluster, lock_name: str, wake_on_release: bool
) -> None:
    """With the quarantine and fencing off, a lock is one key: the node that owns its
    slot grants it, the others answer MOVED, which no retry fixes either (it was an
    error, retried until the timeout, for ever without one): one attempt, a fatal
    outcome that says to give the cluster as one client, and no key left behind."""
    rl = quorumlock.Redlock(
        [node.url for node in shared_cluster.nodes],
        max_ttl=None,
        wake_on_release=wake_on_release,
        instance_timeout=UNHURRIED,
    )
    try:
        with pytest.raises(QuorumUnavailable, match=r"\(1 attempt\)") as info:
            rl.lock(lock_name, ttl=5).acquire(timeout=10)
        refused = [o for o in info.value.outcomes if o.reply is not Reply.GRANTED]
        assert [o.reply for o in refused] == [Reply.FATAL] * 2, info.value.outcomes
        assert all("one RedisCluster client" in o.detail for o in refused)
        assert all(o.detail.startswith("MOVED ") for o in refused)
    finally:
        rl.close()
    client = shared_cluster.client()
    try:
        assert client.get(lock_name) is None
    finally:
        client.close()


def test_the_cluster_label_has_no_password(make_cluster: ClusterFactory) -> None:
    """An ACL user's password never reaches the label; the options (credentials
    included) do reach quorumlock's own connections. Catches a cluster spec that drops
    the credentials (NOAUTH: a fatal outcome) or shows them."""
    cluster = make_cluster(3, extra_args=("--requirepass", "s3cret", "--masterauth", "s3cret"))
    client = cluster.client(password="s3cret")
    rl = quorumlock.Redlock([client], max_ttl=None, instance_timeout=PATIENT)
    try:
        assert "s3cret" not in rl.servers[0]
        lock = rl.lock("label-test", ttl=2)
        give_up = time.monotonic() + 10
        while not lock.acquire(blocking=False) and time.monotonic() < give_up:
            time.sleep(0.05)
        assert lock.outcomes[0].reply is G, lock.outcomes
        assert lock.release()
    finally:
        rl.close()
        client.close()


def test_waiters_are_woken_by_releases_on_any_master(shared_cluster: LocalCluster) -> None:
    """A cluster passes every PUBLISH on to all its nodes: a waiter subscribed through a
    startup node is woken by the release of a name served by any master. The waiter
    polls every 30 s or more: getting each lock within the bound needs the wake-up."""
    cluster = shared_cluster
    names = [found[0] for found in names_by_master(cluster, 1).values()]
    holder_client, waiter_client = cluster.client(), cluster.client()
    try:
        holder_rl = quorumlock.Redlock(holder_client, instance_timeout=PATIENT)
        waiter_rl = quorumlock.Redlock(waiter_client, retry_delay=60.0, instance_timeout=PATIENT)
        for name in names:
            holder = holder_rl.lock(name, ttl=50)
            assert holder.acquire(blocking=False)
            got: list[bool] = []
            waiter = waiter_rl.lock(name, ttl=50)
            thread = threading.Thread(
                target=lambda w=waiter, g=got: g.append(w.acquire(timeout=50))
            )
            thread.start()
            time.sleep(0.5)  # the waiter failed once, subscribed, and waits
            assert holder.release()
            thread.join(timeout=15)
            assert got == [True], name
            assert waiter.release()
    finally:
        holder_client.close()
        waiter_client.close()


def test_asyncio_waiters_are_woken_through_a_cluster(shared_cluster: LocalCluster) -> None:
    cluster = shared_cluster
    names = [found[0] for found in names_by_master(cluster, 1).values()]

    async def body() -> None:
        holder_client, waiter_client = cluster.async_client(), cluster.async_client()
        try:
            holder_rl = quorumlock.asyncio.Redlock(holder_client, instance_timeout=PATIENT)
            waiter_rl = quorumlock.asyncio.Redlock(
                waiter_client, retry_delay=60.0, instance_timeout=PATIENT
            )
            for name in names:
                holder = holder_rl.lock(name, ttl=50)
                assert await holder.acquire(blocking=False)
                waiter = waiter_rl.lock(name, ttl=50)
                task = asyncio.create_task(waiter.acquire(timeout=50))
                await asyncio.sleep(0.5)
                assert await holder.release()
                async with asyncio.timeout(15):
                    assert await task, name
                assert await waiter.release()
            await holder_rl.close()
            await waiter_rl.close()
        finally:
            await holder_client.aclose()
            await waiter_client.aclose()

    asyncio.run(body())
