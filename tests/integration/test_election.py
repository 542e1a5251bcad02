"""Leader election (``rl.election``) on real servers, through both APIs.

One leader at a time among many candidates, term numbers strictly increasing (they are
fencing tokens), ``leader()`` read from a majority and never past its validity, a
SIGKILLed leader replaced once its keys expire, a frozen server, a resign that wakes the
next candidate at once, and a lost leadership that is never silent.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis
import redis.asyncio

import quorumlock
import quorumlock.asyncio
from quorumlock import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    StaleFencingToken,
)
from quorumlock._election import Term
from quorumlock.testing import LocalCluster, LocalServerGroup
from tests.conftest import ServerFactory, client_of, exists_on, slack
from tests.integration.apis import Api, Body, call
from tests.integration.test_cluster import PATIENT, cluster_client, names_by_master
from tests.integration.test_lock_objects import (
    InterruptAt,
    interrupted_at,
    interrupted_in_a_loop,
    sweep_points,
    traced,
)

AnyElection = quorumlock.Election | quorumlock.asyncio.Election
AnyTerm = Term[Any]


@asynccontextmanager
async def leading(election: AnyElection, timeout: float | None = None) -> AsyncIterator[AnyTerm]:
    """``with election.campaign()`` (sync) or ``async with`` (asyncio)."""
    if isinstance(election, quorumlock.asyncio.Election):
        async with election.campaign(timeout) as term:
            yield term
    else:
        with election.campaign(timeout) as term:
            yield term


async def in_background(api: Api, body: Body) -> Callable[[], Awaitable[None]]:
    """Start ``body`` in a thread (sync API: a blocking campaign must not hold up this
    event loop) or a task (asyncio API); the returned function awaits its end (30 s)."""
    if api.flavour == "async":
        task = asyncio.get_running_loop().create_task(body())

        async def join_task() -> None:
            await asyncio.wait_for(task, 30)

        return join_task
    errors: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(body())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    async def join_thread() -> None:
        limit = time.monotonic() + 30
        while thread.is_alive() and time.monotonic() < limit:
            await asyncio.sleep(0.01)
        assert not thread.is_alive(), "the background work did not end within 30 s"
        if errors:
            raise errors[0]

    return join_thread


def test_one_leader_at_a_time_and_terms_increase(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Four candidates campaign three times each: never two in their blocks at once,
    the terms strictly increase in the order the terms began, and ``leader()`` read by
    the leader names it, with its term."""
    inside: list[str] = []
    overlaps: list[str] = []
    terms: list[int] = []
    seen: list[tuple[str, int, str, int]] = []

    async def candidate(index: int) -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT, retry_delay=0.05)
        election = rl.election(lock_name, ttl=5, identity=f"cand-{index}")
        for _ in range(3):
            async with leading(election, timeout=30) as term:
                if inside:
                    overlaps.append(f"{term.identity} entered while {inside} led")
                inside.append(term.identity)
                terms.append(term.number)
                leader = await call(election.leader())
                assert leader is not None
                seen.append((leader.identity, leader.term, term.identity, term.number))
                assert 0 < leader.validity <= 5
                await asyncio.sleep(0.01)
                inside.remove(term.identity)

    async def body() -> None:
        await api.concurrently([lambda i=i: candidate(i) for i in range(4)], limit=60)  # type: ignore[misc]
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        assert await call(rl.election(lock_name, ttl=5).leader()) is None

    api.run(body)
    assert not overlaps
    assert len(terms) == 12
    assert terms == sorted(terms), terms
    assert len(set(terms)) == 12, terms
    for leader_identity, leader_term, identity, number in seen:
        assert (leader_identity, leader_term) == (identity, number)
    assert exists_on(servers, lock_name) == [0] * 5


def test_leader_is_read_from_a_majority_and_resign_ends_it(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """``leader()`` names the leader for a validity within its ttl; None before the
    first campaign and after the resign; the identity defaults to host:pid."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        election = rl.election(lock_name, ttl=3)
        assert election.identity.endswith(f":{os.getpid()}")
        assert await call(election.leader()) is None
        async with leading(election) as term:
            leader = await call(election.leader())
            assert leader is not None
            assert leader == (election.identity, term.number, leader.validity)
            assert 0 < leader.validity <= 3
            assert term.leading
            assert term.validity > 0
            assert term.fencing_token == term.number
            assert not term.lost.is_set()
            identity, number, validity = leader  # a plain tuple too
            assert (identity, number) == (election.identity, term.number)
            assert validity > 0
        assert await call(election.leader()) is None
        assert not term.leading

    api.run(body)


def test_leadership_is_renewed_past_the_ttl(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A term outlives its ttl while the block runs: the lease renews it, and
    ``leader()`` keeps naming the same term."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        election = rl.election(lock_name, ttl=0.6, identity="renewed")
        async with leading(election) as term:
            await asyncio.sleep(1.5)
            assert term.leading
            assert not term.lost.is_set()
            leader = await call(election.leader())
            assert leader is not None
            assert leader.term == term.number
            assert term.lock.extensions >= 1

    api.run(body)


def test_resign_wakes_the_next_candidate_at_once(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """With a retry pause of 4 to 8 s, the waiting candidate leads within a few round
    trips of the leader's resign: it was woken by the release, not by its poll."""
    margin = slack(servers[0], rounds=4)
    assert margin < 2, "the machine is too loaded to tell a wake-up from a poll"

    async def body() -> None:
        first = api.redlock(servers.urls, instance_timeout=PATIENT, retry_delay=8)
        second = api.redlock(servers.urls, instance_timeout=PATIENT, retry_delay=8)
        a = first.election(lock_name, ttl=10, identity="a")
        b = second.election(lock_name, ttl=10, identity="b")
        resigned: list[float] = []
        led: list[tuple[float, int]] = []

        async def follower() -> None:
            async with leading(b, timeout=20) as term:
                led.append((time.monotonic(), term.number))

        async with leading(a) as first_term:
            join = await in_background(api, follower)
            await asyncio.sleep(0.5)  # b has tried, failed and watches the release
            assert not led
        resigned.append(time.monotonic())
        await join()
        assert led[0][1] > first_term.number
        assert led[0][0] - resigned[0] < margin

    api.run(body)


def test_timeout_raises_lock_not_acquired(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        a = rl.election(lock_name, ttl=5, identity="a")
        b = rl.election(lock_name, ttl=5, identity="b")
        async with leading(a) as term:
            with pytest.raises(LockNotAcquired):
                async with leading(b, timeout=0.3):
                    pytest.fail("two leaders")
            assert term.leading
            leader = await call(b.leader())
            assert leader is not None
            assert leader.identity == "a"

    api.run(body)


def test_entering_a_leading_campaign_again_keeps_the_lead(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Entering the campaign object again inside its own block is refused
    (``LockNotReentrant``), and the refusal does not resign: the outer block still
    leads, ``leader()`` still names it, and another candidate cannot lead meanwhile."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        election = rl.election(lock_name, ttl=5, identity="a")
        campaign = election.campaign()
        enter: Any
        leave: Any
        if isinstance(campaign, quorumlock.asyncio.Campaign):
            enter, leave = campaign.__aenter__, campaign.__aexit__
        else:
            enter, leave = campaign.__enter__, campaign.__exit__
        term: Term[Any] = await call(enter())
        with pytest.raises(LockNotReentrant):
            await call(enter())
        assert term.leading
        term.check()
        leader = await call(election.leader())
        assert leader is not None
        assert (leader.identity, leader.term) == ("a", term.number)
        other = rl.election(lock_name, ttl=5, identity="b")
        with pytest.raises(LockNotAcquired):
            async with leading(other, timeout=0.3):
                pytest.fail("two leaders")
        await call(leave(None, None, None))
        assert not term.leading
        assert await call(election.leader()) is None

    api.run(body)


def test_a_campaign_entered_again_after_its_term_leaves_that_term_over(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A campaign object entered again once its block ended: the new term leads, and
    the old one stays over (not leading, ``check()`` raising). Both shared the one lock
    of the campaign: the old term read the new one's hold and led again."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        campaign: Any = rl.election(lock_name, ttl=5, identity="a").campaign()
        enter = getattr(campaign, "__aenter__", None) or campaign.__enter__
        leave = getattr(campaign, "__aexit__", None) or campaign.__exit__
        old: Term[Any] = await call(enter())
        await call(leave(None, None, None))
        new: Term[Any] = await call(enter())
        try:
            assert new.number > old.number
            assert new.leading
            assert new.check() > 0
            assert not old.leading
            with pytest.raises(LockNotHeld):
                old.check()
        finally:
            await call(leave(None, None, None))
        assert not new.leading

    api.run(body)


def test_a_late_loss_of_an_ended_term_is_told_with_that_term(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """``on_lost`` of the sync API runs on a thread of its own, maybe once the campaign
    was entered again: the loss of the ended term's lock is told with that term, not
    the new one (nor dropped, as it was once the new term had a lock of its own)."""
    told: list[Term[Any]] = []
    with quorumlock.Redlock(servers.urls, instance_timeout=PATIENT) as rl:
        campaign = rl.election(lock_name, ttl=5, on_lost=told.append).campaign()
        with campaign as old:
            pass
        with campaign as new:
            campaign._report_lost(old.lock)  # the old term's callback, run late
            assert told == [old]
            assert new.leading


def test_terms_fence_a_deposed_leader(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """A leader whose term ended cannot write to a RedisFence-guarded resource once the
    next leader wrote: the term number is the fencing token. The Redlock's own
    ``fencing`` is off: an election draws tokens all the same."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        assert rl.config.fencing is False
        election = rl.election(lock_name, ttl=5, identity="x")
        client: Any
        if api.flavour == "sync":
            client = client_of(servers[0])
            fence: Any = quorumlock.RedisFence(client, lock_name + ":resource")
        else:
            client = redis.asyncio.Redis(host=servers[0].host, port=servers[0].port)
            fence = quorumlock.asyncio.RedisFence(client, lock_name + ":resource")
        async with leading(election) as old:
            await call(fence.execute(old.number, "SET", lock_name + ":data", "old"))
        async with leading(election) as new:
            assert new.number > old.number
            await call(fence.execute(new.number, "SET", lock_name + ":data", "new"))
        with pytest.raises(StaleFencingToken):
            await call(fence.execute(old.number, "SET", lock_name + ":data", "late"))
        await call(client.aclose() if api.flavour == "async" else client.close())

    api.run(body)


def test_lost_leadership_is_never_silent(api: Api, make_servers: ServerFactory) -> None:
    """Two of three servers die while a term runs: ``term.lost`` is set, ``on_lost``
    gets the term, and the block ends with :class:`LockLost` (the asyncio block is
    cancelled first)."""
    group = make_servers(3)
    name = "election:lost"
    lost_terms: list[AnyTerm] = []

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.25, connect_timeout=0.5)
        election = rl.election(name, ttl=1, identity="doomed", on_lost=lost_terms.append)
        reached_end = False
        ended: list[BaseException] = []
        try:
            async with leading(election) as term:
                group[0].kill()
                group[1].kill()
                limit = time.monotonic() + 10
                while not term.lost.is_set() and time.monotonic() < limit:
                    await asyncio.sleep(0.05)
                assert term.lost.is_set()
                assert not term.leading
                with pytest.raises(LockLost):
                    term.check()
                await asyncio.sleep(0.5)  # the asyncio block is cancelled here
                reached_end = True
        except LockLost as exc:
            ended.append(exc)
        assert len(ended) == 1
        assert reached_end == (api.flavour == "sync")
        assert [t.number for t in lost_terms] == [term.number]

    api.run(body)


def test_a_frozen_server_does_not_stop_the_election(api: Api, make_servers: ServerFactory) -> None:
    """One of three servers frozen (SIGSTOP): campaigns, renewals, ``leader()`` and
    resigns go on with the two others; terms still increase."""
    group = make_servers(3)
    name = "election:frozen"

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.1)
        election = rl.election(name, ttl=1, identity="cold")
        async with leading(election) as before:
            pass
        group[2].pause()
        try:
            numbers = []
            for _ in range(2):
                async with leading(election, timeout=10) as term:
                    await asyncio.sleep(0.8)  # at least one renewal with the frozen server
                    leader = await call(election.leader())
                    assert leader is not None
                    assert leader.term == term.number
                    assert term.leading
                    numbers.append(term.number)
            assert before.number < numbers[0] < numbers[1]
        finally:
            group[2].resume()

    api.run(body)


# A candidate in another process: campaigns, prints its term, then sleeps until killed.
_CANDIDATE = """
import json, sys, time
import quorumlock
servers, name, identity = json.loads(sys.argv[1])
rl = quorumlock.Redlock(servers)
with rl.election(name, ttl=2, identity=identity).campaign(timeout=20) as term:
    print(json.dumps({"term": term.number}), flush=True)
    time.sleep(60)
"""


def test_a_killed_leader_is_replaced_once_its_keys_expire(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A leader in another process is SIGKILLed: the next candidate leads once its keys
    expired (never before the validity ``leader()`` reported), within the ttl and some
    rounds, with a greater term; ``leader()`` said None in between at no point while the
    dead leader was still valid."""
    argument = json.dumps([servers.urls, lock_name, "victim"])
    child = subprocess.Popen(
        [sys.executable, "-c", _CANDIDATE, argument], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        dead_term = json.loads(line)["term"]

        async def body() -> None:
            rl = api.redlock(servers.urls, retry_delay=0.05, connect_timeout=5)
            election = rl.election(lock_name, ttl=2, identity="heir")
            read_at = time.monotonic()  # before the read: its validity counts from later
            leader = await call(election.leader())
            assert leader is not None
            assert (leader.identity, leader.term) == ("victim", dead_term)
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=10)
            async with leading(election, timeout=20) as term:
                took = time.monotonic() - read_at
                assert term.number > dead_term
                assert took >= leader.validity  # the dead leader's term ran out first
                assert took < 2 + 2 * slack(servers[0])
                now = await call(election.leader())
                assert now is not None
                assert now.identity == "heir"

        api.run(body)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=10)


def test_leader_returns_none_once_validity_has_passed(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A leader that stops renewing (here: its process is frozen by SIGSTOP) is reported
    only with a validity that ends before its keys leave a majority, and no more once
    they have. (A read may say None a little before: one slow enough to see the
    validity run out within it. A quicker read after it may still see a sliver.)"""
    argument = json.dumps([servers.urls, lock_name, "frozen"])
    child = subprocess.Popen(
        [sys.executable, "-c", _CANDIDATE, argument], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        json.loads(child.stdout.readline())
        os.kill(child.pid, signal.SIGSTOP)

        async def body() -> None:
            rl = api.redlock(servers.urls, connect_timeout=5)
            election = rl.election(lock_name, ttl=2, identity="reader")
            await asyncio.sleep(0.2)  # a renewal sent just before the stop has landed
            first = await call(election.leader())  # connects: its round is slow
            assert first is not None
            assert first.identity == "frozen"
            reads: list[tuple[float, float]] = []  # (start of the call, validity)
            limit = time.monotonic() + 10
            while time.monotonic() < limit:
                began = time.monotonic()
                leader = await call(election.leader())
                if leader is None:
                    break
                assert leader.identity == "frozen"
                assert leader.term == first.term
                reads.append((began, leader.validity))
                await asyncio.sleep(0.02)
            assert reads
            assert time.monotonic() < limit
            # When the keys had left a majority, to a poll's time (a blocking call in
            # the loop: a test's shortcut): that read's None may have come before.
            clients = [client_of(server) for server in servers]
            while sum(client.exists(lock_name) for client in clients) >= 3:
                assert time.monotonic() < limit, "the frozen leader's keys did not expire"
                time.sleep(0.001)
            gone = time.monotonic()
            for client in clients:
                client.close()
            for began, validity in reads:
                # Each validity ended before the keys left a majority of the servers
                # (``gone``: then, or a poll's time after), to the millisecond (the
                # servers count a key's time to live in whole ms).
                assert began + validity <= gone + 0.001
            assert await call(election.leader()) is None

        api.run(body)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)


def test_bad_input_is_refused_before_any_round(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=PATIENT)
        with pytest.raises(TypeError, match="identity"):
            rl.election(lock_name, ttl=5, identity=42)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="identity"):
            rl.election(lock_name, ttl=5, identity="")
        with pytest.raises(ConfigurationError, match="identity"):
            rl.election(lock_name, ttl=5, identity="x" * 2000)
        with pytest.raises(ConfigurationError, match="hash tag"):
            rl.election("a}b", ttl=5)
        with pytest.raises(ConfigurationError, match="max_ttl"):
            rl.election(lock_name, ttl=600)
        with pytest.raises(TypeError, match="on_lost"):
            rl.election(lock_name, ttl=5, on_lost=3)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError):
            rl.election(lock_name, ttl=5).campaign(timeout=-1)
        # Names with a hash tag keep their slot: the record sits next to the key.
        election = rl.election("{jobs}:scheduler", ttl=5, identity="tagged")
        async with leading(election) as term:
            leader = await call(election.leader())
            assert leader is not None
            assert leader.term == term.number

    api.run(body)
    assert exists_on(servers, lock_name) == [0] * 5


@pytest.mark.parametrize("count", [3, 5])
def test_processes_never_lead_together(count: int, make_servers: ServerFactory) -> None:
    """Three processes campaign in turn over N = 3 and 5 servers: the terms they report
    strictly increase in the order of the servers' record, and their blocks never
    overlap (each writes its term into a list under a fence that refuses a smaller
    one)."""
    group = make_servers(count)
    name = f"election:procs:{count}"
    worker = """
import json, sys, time
import quorumlock, redis
servers, name, identity, host, port = json.loads(sys.argv[1])
rl = quorumlock.Redlock(servers, retry_delay=0.05)
client = redis.Redis(host=host, port=port)
fence = quorumlock.RedisFence(client, name + ":fence")
election = rl.election(name, ttl=2, identity=identity)
for _ in range(3):
    with election.campaign(timeout=30) as term:
        if client.incr(name + ":inside") != 1:
            print("overlap", flush=True)
        fence.execute(term.number, "RPUSH", name + ":terms", term.number)
        time.sleep(0.02)
        client.decr(name + ":inside")
print("done", flush=True)
"""
    server = group[0]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                worker,
                json.dumps([group.urls, name, f"p{i}", server.host, server.port]),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    try:
        outputs = [child.communicate(timeout=90)[0] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait(timeout=10)
    assert all(out.strip() == "done" for out in outputs), outputs
    client = client_of(server)
    terms = [int(t) for t in client.lrange(name + ":terms", 0, -1)]
    client.close()
    assert len(terms) == 9, terms
    assert terms == sorted(terms), terms
    assert len(set(terms)) == 9, terms


@pytest.fixture(scope="module")
def election_cluster() -> Iterator[LocalCluster]:
    with LocalCluster(3) as cluster:
        yield cluster


def test_an_election_through_a_cluster_instance(
    api: Api, election_cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    """[cluster, server, server]: names served by every master, with and without a hash
    tag: the term record is written and read in the name's slot (a record in another
    slot would be refused with CROSSSLOT, and the cluster would never agree)."""
    cluster = election_cluster
    names = names_by_master(cluster, 1, prefix=f"el:{os.getpid()}")
    tagged = ["{orders}:scheduler", "a{b"]

    async def body() -> None:
        async with cluster_client(api, cluster) as client:
            rl = api.redlock([client, *servers.urls[:2]], instance_timeout=PATIENT)
            for name in [*(n for group in names.values() for n in group), *tagged]:
                election = rl.election(name, ttl=5, identity="clustered")
                async with leading(election, timeout=10) as term:
                    leader = await call(election.leader())
                    assert leader is not None, name
                    assert leader.term == term.number
                    # Two plain servers alone agree: take one away to need the cluster.
                    plain = client_of(servers[0])
                    plain.delete(name)
                    plain.close()
                    leader = await call(election.leader())
                    assert leader is not None, name
                    assert leader.identity == "clustered"

    api.run(body)


def test_a_restarted_server_keeps_terms_increasing(api: Api, make_servers: ServerFactory) -> None:
    """N = 3, one server restarted without its data while a term runs: the term goes on
    (two servers renew it), and later terms still increase, in the restart quarantine
    and after it (the restarted server's fencing counter starts again from its clock)."""
    group = make_servers(3)
    name = "election:restart"

    async def body() -> None:
        rl = api.redlock(group.urls, max_ttl=2, instance_timeout=0.2)
        election = rl.election(name, ttl=1, identity="survivor")
        numbers = []
        async with leading(election) as term:
            group[0].restart()
            await asyncio.sleep(1.2)  # renewed past the ttl with the two others
            assert term.leading
            numbers.append(term.number)
        async with leading(election, timeout=10) as term:  # in quarantine
            numbers.append(term.number)
            leader = await call(election.leader())
            assert leader is not None
            assert leader.term == term.number
        await asyncio.sleep(2.2)  # the quarantine is over
        async with leading(election, timeout=10) as term:
            numbers.append(term.number)
            leader = await call(election.leader())
            assert leader is not None
            assert leader.term == term.number
        assert numbers[0] < numbers[1] < numbers[2], numbers

    api.run(body)


def assert_no_leader(campaign: Any, other: quorumlock.Redlock, name: str, where: str) -> None:
    """After an interrupted campaign on ``name``: its lock holds nothing, ``leader()``
    names nobody, and another process's campaign leads at once."""
    assert not campaign._lock.held, where
    assert other.election(name, ttl=10).leader() is None, where
    with other.election(name, ttl=10).campaign(timeout=0) as term:
        assert term.number >= 1, where


@pytest.mark.parametrize("how", ["enter", "exit"])
def test_an_interrupt_anywhere_in_a_campaign_leaves_no_leader(
    servers: LocalServerGroup, lock_name: str, how: str
) -> None:
    """sync: a KeyboardInterrupt at every point of entering a campaign (acquire, then
    claim the term) or of leaving it, one point per run: the call raises it, and no
    leader is left: the lock object holds nothing, ``leader()`` names nobody, and
    another process's campaign leads at once. It used to come as the lock's own enter
    returned, or as its exit began, before their guards: the leadership stayed, under
    its lease."""
    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    other = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            campaign = rl.election(name, ttl=10).campaign(timeout=1)
            if how == "exit":
                campaign.__enter__()
            call = functools.partial(campaign.__exit__, None, None, None)
            where, _ = interrupted_at(at, campaign.__enter__ if how == "enter" else call)
            if not where and how == "enter":  # led to its end: it resigns
                campaign.__exit__(None, None, None)
            assert_no_leader(campaign, other, name, where)
            if not where:
                break
        assert at > 50, at
    finally:
        rl.close()
        other.close()


@pytest.mark.parametrize("how", ["enter", "exit"])
def test_asyncio_an_interrupt_anywhere_in_a_campaign_leaves_no_leader(
    servers: LocalServerGroup, lock_name: str, how: str
) -> None:
    """asyncio: a signal handler's SystemExit at every point of entering a campaign or
    of leaving it, one point per ``asyncio.run`` (raised in the task, or in a task of
    the release or of the lease, which ends the event loop): no leader is left. The lock
    object holds nothing, ``leader()`` names nobody, and another process's campaign
    leads at once. It used to come as the lock's own enter returned, or as its exit
    began, before their guards: the leadership stayed, under its lease, or its keys
    stayed to the ttl."""
    rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0)
    other = quorumlock.Redlock(servers.urls, instance_timeout=1.0)

    async def interrupted(campaign: Any, tracer: InterruptAt) -> None:
        if how == "exit":
            await campaign.__aenter__()
        call = campaign.__aenter__() if how == "enter" else campaign.__aexit__(None, None, None)
        await traced(tracer, call)
        if not tracer.where and how == "enter":  # led to its end: it resigns
            await campaign.__aexit__(None, None, None)

    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            campaign = rl.election(name, ttl=10).campaign(timeout=1)
            where = interrupted_in_a_loop(at, functools.partial(interrupted, campaign))
            assert_no_leader(campaign, other, name, where)
            if not where:
                break
        assert at > 50, at
    finally:
        asyncio.run(rl.close())
        other.close()
