"""A Sentinel-managed master as one of N instances, through a real failover.

A master, its replica and 1 (or 3) sentinels run on loopback ports; the Redlock is
``[Sentinel(...).master_for("mymaster"), plain, plain]``. The master is killed; the
sentinels promote the replica; quorumlock's next connection for that instance asks the
sentinels and reaches the promoted replica, which is quarantined for ``max_ttl`` (it may
lack the old master's last lock keys: replication is asynchronous). Meanwhile the two
plain servers keep granting locks (2 of 3).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest
import redis.asyncio.sentinel
import redis.sentinel
from redis.backoff import NoBackoff
from redis.retry import Retry

from quorumlock import ConfigurationError, NodeOutcome, Redlock, Reply
from quorumlock.testing import LocalSentinel, LocalServer, find_server_binary
from tests.conftest import ServerFactory, client_of, decided, values
from tests.integration.apis import AnyRedlock, Api, AsyncApi, SyncApi, call
from tests.integration.test_promotion import replica_of
from tests.integration.test_quarantine import marker, run_id, seconds_left
from tests.integration.test_quorum import frozen

G, Q, X = Reply.GRANTED, Reply.QUARANTINED, Reply.TAKEN
SentinelFactory = Callable[..., list[LocalSentinel]]


@pytest.fixture
def make_sentinels() -> Iterator[SentinelFactory]:
    """Sentinels of a master, started and closed by the test."""
    started: list[LocalSentinel] = []

    def make(master: LocalServer, count: int, **options: Any) -> list[LocalSentinel]:
        for _ in range(count):
            sentinel = LocalSentinel(master.host, master.port, binary=master.binary, **options)
            started.append(sentinel)
            sentinel.start()
        return started[-count:]

    yield make
    for sentinel in started:
        sentinel.close()


def master_for(api: Api, sentinels: list[LocalSentinel]) -> Any:
    """``Sentinel([...]).master_for("mymaster")`` of the API's flavour."""
    addresses = [(s.host, s.port) for s in sentinels]
    if isinstance(api, AsyncApi):
        return redis.asyncio.sentinel.Sentinel(addresses).master_for("mymaster")  # type: ignore[no-untyped-call, unused-ignore]
    sentinel = redis.sentinel.Sentinel(addresses)  # type: ignore[no-untyped-call, unused-ignore]
    return sentinel.master_for("mymaster")  # type: ignore[no-untyped-call, unused-ignore]


async def attempt(rl: AnyRedlock, name: str) -> tuple[bool, tuple[NodeOutcome, ...]]:
    """One non-blocking acquire (released if it succeeded): (acquired, outcomes)."""
    lock = rl.lock(name, ttl=5)
    got = await call(lock.acquire(blocking=False))
    outcomes = lock.outcomes
    if got:
        await call(lock.release())
    return got, outcomes


async def until_the_instance_answers(
    rl: AnyRedlock, *, limit: float
) -> list[tuple[bool, tuple[NodeOutcome, ...]]]:
    """Attempts every 0.1 s until the Sentinel instance answers (not an error or a
    timeout: the failover is over and its connection reached the new master; nor "not
    read": the two others decided the round first)."""
    history: list[tuple[bool, tuple[NodeOutcome, ...]]] = []
    deadline = time.monotonic() + limit
    while True:
        history.append(await attempt(rl, f"locks:after-{len(history)}"))
        if history[-1][1][0].reply not in (Reply.ERROR, Reply.TIMEOUT, Reply.UNREAD):
            return history
        assert time.monotonic() < deadline, f"no answer from the new master: {history[-1]}"
        await asyncio.sleep(0.1)


def test_a_sentinel_master_follows_a_failover_and_the_promoted_replica_is_quarantined(
    api: Api, make_servers: ServerFactory, make_sentinels: SentinelFactory
) -> None:
    """Before: the Sentinel instance grants like any master. The master is killed -9:
    while the sentinel fails over, that instance errs and the two plain servers carry
    every lock; then its first answer comes from the promoted replica, and it is
    "quarantined" (30 s: max_ttl from when quorumlock first saw the promotion), not
    "granted", although the replica is durable. Catches: a promoted replica counted at
    once (it may lack the lock keys its old master granted just before the crash), and
    an instance that does not follow the failover."""
    master = make_servers(1)[0]
    # Durable (every write fsynced): a restart of it would need no quarantine, and its
    # promotion still does.
    replica = replica_of(make_servers, master, appendonly=True, appendfsync="always")
    (sentinel,) = make_sentinels(master, 1, down_after=0.5)
    sentinel.wait_for_replicas(1)
    plain = make_servers(2)

    async def body() -> None:
        # (a generous instance timeout: on a loaded machine a plain server may take more
        # than the 25 ms of a 5 s lock to answer, and the first round expects every grant)
        rl = api.redlock(
            [master_for(api, [sentinel]), *plain.urls], max_ttl=30, instance_timeout=0.5
        )
        assert rl.servers[0] == f"sentinel://{sentinel.host}:{sentinel.port}/mymaster"
        # (Until it answers: on a loaded machine, the plain two may end the first round
        # before the connection through the sentinel is up.)
        got, outcomes = (await until_the_instance_answers(rl, limit=10.0))[-1]
        assert got
        # (the round may end at the majority, one plain server's grant not read yet)
        assert decided([o.reply for o in outcomes], [G, G, G]), outcomes

        killed = time.monotonic()
        master.kill()
        history = await until_the_instance_answers(rl, limit=20.0)
        since_kill = time.monotonic() - killed
        assert all(got for got, _ in history)  # 2 of 3 all along
        first = history[-1][1][0]
        assert first.reply is Q, history
        # the whole quarantine from the promotion, which came after the kill (on a loaded
        # machine the failover and the first answer after it may take seconds)
        assert 30.0 - since_kill - 0.1 <= seconds_left(first) <= 30.0, since_kill
        assert sentinel.master_address() == (replica.host, replica.port)
        assert marker(replica)["run_id"] == run_id(replica)
        assert (
            marker(replica)["promotion"] == client_of(replica).info("replication")["master_replid"]
        )

        # The same quarantine goes on. Another holder on a plain server: without the
        # instance's grant, which does not count, there is no majority, and the round
        # reads its answer (a round that succeeds may be decided without it).
        taken = client_of(plain[0])
        taken.set("locks:later", "another-holder", px=5_000)
        taken.close()
        refused = rl.lock("locks:later", ttl=5)
        assert not await call(refused.acquire(blocking=False))  # held by another, as it says
        outcomes = refused.outcomes
        assert [o.reply for o in outcomes] == [Q, X, G], outcomes
        assert seconds_left(outcomes[0]) <= seconds_left(first)

    api.run(body)


@pytest.mark.slow
def test_three_sentinels_agree_on_the_failover(
    make_servers: ServerFactory, make_sentinels: SentinelFactory
) -> None:
    """The same with 3 sentinels and a quorum of 2 (they must find each other and elect
    a leader before failing over: several seconds). Sync API."""
    master = make_servers(1)[0]
    replica = replica_of(make_servers, master)
    sentinels = make_sentinels(master, 3, quorum=2, down_after=0.5)
    for sentinel in sentinels:
        sentinel.wait_for_replicas(1)
    deadline = time.monotonic() + 15
    while any(len(_sentinels_known(s)) < 2 for s in sentinels):
        assert time.monotonic() < deadline, "the sentinels did not find each other"
        time.sleep(0.1)
    plain = make_servers(2)
    api = SyncApi()

    async def body() -> None:
        # (a generous instance timeout: on a loaded machine the plain two may take more
        # than the 25 ms of a 5 s lock to answer, and every attempt needs them both)
        rl = api.redlock(
            [master_for(api, sentinels), *plain.urls], max_ttl=30, instance_timeout=0.5
        )
        assert (await attempt(rl, "locks:before"))[0]
        master.kill()
        history = await until_the_instance_answers(rl, limit=30.0)
        assert history[-1][1][0].reply is Q, history
        # The sentinel that led the failover tells the others by gossip: they follow
        # within a few of its hello periods (2 s each), later on a loaded machine.
        agreed = time.monotonic() + 15
        while not all(s.master_address() == (replica.host, replica.port) for s in sentinels):
            assert time.monotonic() < agreed, [s.master_address() for s in sentinels]
            time.sleep(0.1)

    api.run(body)


def test_a_sentinel_master_listed_again_by_its_url_is_refused(
    api: Api, make_servers: ServerFactory, make_sentinels: SentinelFactory
) -> None:
    """The Sentinel instance and its master's own URL are one server: refused at the
    first acquire (same run_id), with no lock left."""
    master = make_servers(1)[0]
    (sentinel,) = make_sentinels(master, 1)
    plain = make_servers(1)

    async def body() -> None:
        # Replies get 2 s: the conflict shows once the Sentinel-resolved connection has
        # its session, and under load its discovery outlasted the default 25 ms while
        # the two other servers granted (the acquire then succeeded unchecked).
        rl = api.redlock(
            [master_for(api, [sentinel]), master.url, plain.urls[0]], instance_timeout=2.0
        )
        with pytest.raises(ConfigurationError, match="are the same server"):
            await call(rl.lock("locks:x", ttl=5).acquire(blocking=False))

    api.run(body)
    assert values([master, plain[0]], "locks:x") == [None, None]


def _sentinels_known(sentinel: LocalSentinel) -> list[object]:
    client = sentinel.client()
    try:
        reply: list[object] = client.execute_command("SENTINEL", "SENTINELS", "mymaster")  # type: ignore[no-untyped-call]
        return reply
    finally:
        client.close()


def test_two_sentinel_deployments_whose_masters_share_a_name_are_two_servers(
    api: Api, make_servers: ServerFactory, make_sentinels: SentinelFactory
) -> None:
    """Both deployments call their master "mymaster" (refused as one server listed
    twice when the name alone made the identity); one master reached through two sets
    of its sentinels is still one server, refused at the first acquire by its run_id."""
    masters = make_servers(2)
    (first,) = make_sentinels(masters[0], 1)
    (second,) = make_sentinels(masters[1], 1)
    also_first = make_sentinels(masters[0], 1)
    plain = make_servers(1)

    async def body() -> None:
        rl = api.redlock(
            [master_for(api, [first]), master_for(api, [second]), plain.urls[0]],
            instance_timeout=2.0,
        )
        assert rl.servers[:2] == [
            f"sentinel://{first.host}:{first.port}/mymaster",
            f"sentinel://{second.host}:{second.port}/mymaster",
        ]
        # (until both answer: on a loaded machine, a round may end before a connection
        # through a sentinel is up)
        deadline = time.monotonic() + 10.0
        while True:
            got, outcomes = await attempt(rl, "locks:y")
            if got and [o.reply for o in outcomes] == [Reply.GRANTED] * 3:
                break
            assert time.monotonic() < deadline, outcomes
            await asyncio.sleep(0.1)
        with pytest.raises(ConfigurationError, match="listed twice"):
            api.redlock([master_for(api, [first]), master_for(api, [first]), plain.urls[0]])
        one = api.redlock(
            [master_for(api, [first]), master_for(api, also_first), plain.urls[0]],
            instance_timeout=2.0,
        )
        with pytest.raises(ConfigurationError, match="are the same server"):
            await call(one.lock("locks:y", ttl=5).acquire(blocking=False))

    api.run(body)
    assert values([*masters, plain[0]], "locks:y") == [None] * 3


@pytest.mark.parametrize("server", ["valkey", "redis"])
def test_a_sentinel_listed_as_a_server_is_named_as_such(
    api: Api,
    make_servers: ServerFactory,
    make_sentinels: SentinelFactory,
    server: Literal["valkey", "redis"],
) -> None:
    """Its port given where a master's belongs: the outcome says it is a Sentinel (not
    "EVAL renamed or disabled", which its unknown-command answer looked like). Valkey's
    and Redis's sentinels say so under different names."""
    group = make_servers(3, binary=find_server_binary(server))
    (sentinel,) = make_sentinels(group[0], 1)

    async def body() -> None:
        rl = api.redlock([f"redis://{sentinel.host}:{sentinel.port}", *group.urls[1:]])
        lock = rl.lock("locks:z", ttl=5)
        assert await call(lock.acquire(blocking=False))
        first = lock.outcomes[0]
        assert first.reply is Reply.FATAL
        assert "this is a Sentinel" in first.detail
        assert "master_for" in first.detail
        assert await call(lock.release())

    api.run(body)


def test_with_timeouts_for_its_sentinels_a_frozen_sentinel_costs_an_instance_nothing(
    make_servers: ServerFactory, make_sentinels: SentinelFactory
) -> None:
    """The set-up docs/deployment.md shows: ``sentinel_kwargs`` gives the Sentinel
    object's own clients a timeout and one try each. The first sentinel asked is frozen
    (SIGSTOP: its port still accepts connections); master discovery moves on to the
    second at once, and the instance answers. (With the timeouts alone, redis-py's
    default retries took 6.5 s per discovery; with neither, the instance was out of every
    round for a minute.)"""
    master = make_servers(1)[0]
    frozen_one, live_one = make_sentinels(master, 2)
    plain = make_servers(2)
    sentinel = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call, unused-ignore]
        [(frozen_one.host, frozen_one.port), (live_one.host, live_one.port)],
        sentinel_kwargs={
            "socket_timeout": 0.2,
            "socket_connect_timeout": 0.2,
            "retry": Retry(NoBackoff(), 0),
        },
    )
    with frozen([frozen_one]):
        rl = Redlock([sentinel.master_for("mymaster"), *plain.urls])  # type: ignore[no-untyped-call, unused-ignore]
        try:
            # (a round may end on the two plain servers' grants before the instance's
            # first connection is up, or its reply is read: attempts until it grants)
            deadline = time.monotonic() + 5.0
            while True:
                lock = rl.lock("locks:w", ttl=5)
                assert lock.acquire(blocking=False)
                granted = lock.outcomes
                assert lock.release()
                if granted[0].reply is Reply.GRANTED:
                    break
                assert time.monotonic() < deadline, granted
                time.sleep(0.1)
        finally:
            rl.close()
