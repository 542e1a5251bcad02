"""The restart quarantine against real servers killed with -9 and restarted.

A server that lost its memory (restart without persistence, restart from a snapshot or an
AOF not fsynced on every write, FLUSHALL) counts toward no quorum until ``max_ttl`` has
passed since it lost it; its grants are still recorded and released. Durable servers
(``appendonly yes`` + ``appendfsync always``) are not quarantined. See docs/safety.md.

Every server here is a private process (``make_servers``): these tests kill, restart and
flush them. ``max_ttl`` is short (1 to 2 s) where a test waits a quarantine out. Each test
says which removal it catches: with the quarantine gone, every QUARANTINED below would be
GRANTED and the refused acquisitions would succeed.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import Any

import pytest

from quorumlock import ConfigurationError, NodeOutcome, QuorumUnavailable, Reply
from quorumlock._algorithm.cluster import slot_marker
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._io.incarnation import read_server_state, stamp_fresh, stamp_fresh_slots
from quorumlock.testing import LocalServer
from tests.conftest import (
    ServerFactory,
    client_of,
    command_calls,
    refused_ports,
    script_calls,
    values,
)
from tests.integration.apis import Api, SyncApi, call

G, X, Q, F = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.FATAL
DETAIL = re.compile(r"^restart quarantine: [^;]+; (\d+\.\d) s left; (granted|taken) here$")

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def replies(outcomes: Sequence[NodeOutcome]) -> list[Reply]:
    return [o.reply for o in outcomes]


def seconds_left(outcome: NodeOutcome, recorded: str = "granted") -> float:
    """The quarantine left that a QUARANTINED outcome reports, checking its wording."""
    assert outcome.reply is Q, outcome
    match = DETAIL.match(outcome.detail)
    assert match is not None, outcome.detail
    assert match.group(2) == recorded, outcome.detail
    return float(match.group(1))


def marker(server: LocalServer) -> dict[str, str]:
    client = client_of(server)
    try:
        raw = client.hgetall(MARKER_KEY)
    finally:
        client.close()
    return {_text(k): _text(v) for k, v in raw.items()}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def run_id(server: LocalServer) -> str:
    client = client_of(server)
    try:
        return str(client.info("server")["run_id"])
    finally:
        client.close()


def command(server: LocalServer, *args: str) -> object:
    client = client_of(server)
    try:
        return client.execute_command(*args)  # type: ignore[no-untyped-call]
    finally:
        client.close()


def as_user(server: LocalServer, user: str, password: str) -> str:
    return server.url.replace("redis://", f"redis://{user}:{password}@")


def add_user(server: LocalServer, user: str, *rules: str) -> None:
    """An ACL user with password "pw" on ``server`` (ACLs are not persisted: call it
    after every restart)."""
    command(server, "ACL", "SETUSER", user, "reset", "on", ">pw", "~*", "+@all", *rules)


async def restart(*servers: LocalServer) -> None:
    """kill -9 and start again at once; then let the event loop see the old connections
    close (the body blocks the loop while the servers restart, which a real asyncio
    application would not)."""
    for server in servers:
        server.restart()
    await asyncio.sleep(0.05)


async def try_lock(
    api: Api, urls: Sequence[str], name: str, **options: object
) -> tuple[bool | None, tuple[NodeOutcome, ...]]:
    """One non-blocking attempt with a fresh Redlock: (acquired, outcomes), and released.

    ``acquired`` is None when the attempt raised :class:`QuorumUnavailable`.
    """
    options.setdefault("instance_timeout", 1.0)
    rl = api.redlock(urls, **options)
    lock = rl.lock(name, ttl=1)
    try:
        got: bool | None = await call(lock.acquire(blocking=False))
    except QuorumUnavailable as exc:
        return None, exc.outcomes
    outcomes = lock.outcomes
    if got:
        assert await call(lock.release())
    return got, outcomes


def try_sync(
    urls: Sequence[str], name: str, **options: object
) -> tuple[bool | None, tuple[NodeOutcome, ...]]:
    """:func:`try_lock` with the sync API, for tests whose subject is the script alone."""
    api = SyncApi()
    result: list[tuple[bool | None, tuple[NodeOutcome, ...]]] = []

    async def body() -> None:
        result.append(await try_lock(api, urls, name, **options))

    api.run(body)
    return result[0]


# --------------------------------------------------------------------------------------
# kill -9 and an immediate restart without persistence
# --------------------------------------------------------------------------------------


def test_restarted_server_is_quarantined_records_its_grants_and_releases_them(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """kill -9 + immediate restart: the marker is lost, the server answers QUARANTINED
    ("N s left; granted here" or "taken here") and its grant does not count, but the key
    is written there and release() deletes it. Catches: the quarantine removed (z would
    be GRANTED), a quarantined server skipped by the SET or by the release."""
    group = make_servers(3)

    async def body() -> None:
        rl = api.redlock(group.urls, max_ttl=30, instance_timeout=1.0)
        warm = rl.lock(lock_name + ":warm", ttl=5)
        assert await call(warm.acquire(blocking=False))
        assert replies(warm.outcomes) == [G, G, G]
        assert await call(warm.release())

        await restart(group[2])  # kill -9, start at once: empty dataset, marker gone
        assert marker(group[2]) == {}

        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False))  # x and y are a majority
        assert replies(lock.outcomes) == [G, G, Q]
        assert 29.0 < seconds_left(lock.outcomes[2], "granted") <= 30.0
        assert values(group, lock_name) == [lock.token] * 3  # recorded on z too
        assert await call(lock.release())
        assert values(group, lock_name) == [None] * 3

        # Another client's key on the quarantined server: "taken here", still no count.
        client = client_of(group[2])
        client.set(lock_name, "someone-else", px=5000)
        client.close()
        for _ in range(100):  # until a round reads z's answer (x and y may decide first)
            lock = rl.lock(lock_name, ttl=5)
            assert await call(lock.acquire(blocking=False))
            if replies(lock.outcomes)[2] is not Reply.UNREAD:
                break
            assert await call(lock.release())
        assert replies(lock.outcomes) == [G, G, Q]
        assert 28.0 < seconds_left(lock.outcomes[2], "taken") <= 30.0
        assert values(group, lock_name) == [lock.token, lock.token, "someone-else"]
        assert await call(lock.release())
        assert values(group, lock_name) == [None, None, "someone-else"]

    api.run(body)


def test_restarted_majority_refuses_then_a_blocking_acquire_waits_out_max_ttl(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """Two of three restarted: acquire raises QuorumUnavailable ("too few servers out of
    restart quarantine", each server with its time left) and leaves no key; a blocking
    acquire succeeds after about max_ttl (1.5 s), not before. Catches: the quarantine
    removed (the first attempt would succeed), a quarantine that never ends, one reported
    as contention (False instead of QuorumUnavailable)."""
    group = make_servers(3)
    max_ttl = 1.5

    async def body() -> None:
        rl = api.redlock(group.urls, max_ttl=max_ttl, retry_delay=0.05, instance_timeout=1.0)
        warm = rl.lock(lock_name, ttl=1)
        assert await call(warm.acquire(blocking=False))
        assert await call(warm.release())
        await restart(group[0], group[1])

        lock = rl.lock(lock_name, ttl=1)
        first_touch = time.monotonic()
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(blocking=False))
        message = str(info.value)
        assert "too few servers out of restart quarantine" in message
        assert "2 of 3 needed" in message
        assert replies(info.value.outcomes) == [Q, Q, G]
        for outcome in info.value.outcomes[:2]:
            assert outcome.server in message
            assert 1.3 <= seconds_left(outcome) <= max_ttl
        assert values(group, lock_name) == [None] * 3  # R6 step 5, quarantined ones too
        assert not lock.held

        # Not before: well inside the quarantine, a blocking acquire with a short
        # timeout still fails, with the same verdict.
        with pytest.raises(QuorumUnavailable, match="restart quarantine"):
            await call(lock.acquire(timeout=0.3))

        assert await call(lock.acquire(timeout=5.0))
        waited = time.monotonic() - first_touch
        assert max_ttl - 0.05 <= waited < max_ttl + 1.5, waited
        # The two restarts are a few milliseconds apart, so one of them may still be
        # in quarantine when the other's ends: two grants are a quorum already.
        # (decided by two grants, it may leave the third unread)
        granted = replies(lock.outcomes)
        assert granted.count(G) >= 2, granted
        assert set(granted) <= {G, Q, Reply.UNREAD}, granted
        assert await call(lock.release())

    api.run(body)


@pytest.mark.parametrize("quarantine", [True, False], ids=["quarantine", "no-quarantine"])
def test_the_quarantine_is_what_keeps_a_second_holder_out(
    api: Api, make_servers: ServerFactory, lock_name: str, quarantine: bool
) -> None:
    """docs/safety.md's timeline: A holds "job" on x, y, z; y and z are killed -9 and
    restarted at once (they forgot A's key); B tries. With the quarantine B gets nothing;
    with max_ttl=None B gets the lock while A still holds it: two holders. The pair shows
    that the quarantine, and nothing else, protects A."""
    group = make_servers(3)

    async def body() -> None:
        rl_a = api.redlock(group.urls, max_ttl=10, instance_timeout=1.0)
        a = rl_a.lock(lock_name, ttl=10)
        assert await call(a.acquire(blocking=False))
        assert replies(a.outcomes) == [G, G, G]
        await restart(group[1], group[2])
        assert values(group, lock_name) == [a.token, None, None]

        rl_b = api.redlock(group.urls, max_ttl=10 if quarantine else None, instance_timeout=1.0)
        b = rl_b.lock(lock_name, ttl=10)
        if quarantine:
            with pytest.raises(QuorumUnavailable, match="restart quarantine"):
                await call(b.acquire(blocking=False))
            assert replies(b.outcomes) == [X, Q, Q]
            assert not b.held
            assert values(group, lock_name) == [a.token, None, None]
        else:
            assert await call(b.acquire(blocking=False))  # the unsafe outcome
            assert replies(b.outcomes) == [X, G, G]
            assert values(group, lock_name) == [a.token, b.token, b.token]
            assert b.held
            assert await call(b.release())
        assert a.held  # A's validity is 10 s: it still holds the lock
        assert await call(a.release()) is False  # only x remembered it

    api.run(body)


# --------------------------------------------------------------------------------------
# what a lost memory looks like: flush, snapshot, AOF, durable AOF
# --------------------------------------------------------------------------------------


def test_flushall_without_a_restart_starts_a_quarantine_from_now(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Same process, same run_id, but the marker is gone: the data was lost at an unknown
    moment, so the quarantine runs max_ttl from the first acquire that sees it. Catches a
    check of the run_id alone (a flush would go unnoticed)."""
    group = make_servers(1)

    api = SyncApi()  # the acquire script's logic: the same for both APIs

    async def body() -> None:
        rl = api.redlock(group.urls, max_ttl=1.0, retry_delay=0.05, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=1)
        assert await call(lock.acquire(blocking=False))
        assert await call(lock.release())
        before = run_id(group[0])
        command(group[0], "FLUSHALL")
        time.sleep(0.4)  # the quarantine counts from the detection, not from the flush

        with pytest.raises(QuorumUnavailable, match="restart quarantine"):
            await call(lock.acquire(blocking=False))
        assert seconds_left(lock.outcomes[0]) == 1.0
        assert run_id(group[0]) == before
        assert marker(group[0])["run_id"] == before
        assert await call(lock.acquire(timeout=3.0))
        assert await call(lock.release())

    api.run(body)


def snapshot(server: LocalServer) -> None:
    assert command(server, "SAVE") in (b"OK", "OK", True)


PERSISTENCE: dict[str, dict[str, Any]] = {
    "none": {},
    "rdb": {"save": True},
    "aof-everysec": {"appendonly": True, "appendfsync": "everysec"},
}


def test_restart_that_reloads_a_non_durable_dataset_is_quarantined_from_its_start(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Restarted from an RDB snapshot (SAVE before the kill) or an AOF fsynced every
    second, the marker comes back naming the old process: the last writes may be lost,
    so the server is quarantined from its start. First touched right after the restart,
    every kind is quarantined; first touched once max_ttl (plus the 1 s granularity of
    the server's uptime) has passed since the start, none is (its quarantine is over):
    one without persistence comes back without a marker, but shows no sign of a loss
    since its start (no flush, no eviction), so whatever it lost, it lost at its start.
    Catches: a reloaded marker taken at its word (no quarantine at all), and a
    quarantine counted from the first touch. Sync only: this is the acquire script's
    logic, the same for both APIs."""
    max_ttl = 1.0
    groups = {mode: make_servers(2, **options) for mode, options in PERSISTENCE.items()}

    def restart_from_disk(mode: str, server: LocalServer) -> None:
        got, _ = try_sync([server.url], lock_name, max_ttl=max_ttl)
        assert got, mode  # declares max_ttl in the marker
        if mode == "rdb":
            snapshot(server)
        old = run_id(server)
        server.restart()
        restored = marker(server)
        if mode == "none":
            assert restored == {}, mode
        else:
            assert restored["run_id"] == old != run_id(server), mode
            assert restored["max_ttl"] == "1000", mode

    # Server 1 of each group: restarted now, first touched only after the wait below.
    for mode, group in groups.items():
        restart_from_disk(mode, group[1])
    touch_at = time.monotonic() + max_ttl + 2.2

    # Server 0 of each group: first touched at once (by a client with max_ttl 5 s, so
    # that the server's whole-second uptime cannot end the quarantine under our feet).
    for mode, group in groups.items():
        restart_from_disk(mode, group[0])
        client = client_of(group[0])
        try:  # what quorumlock status says first: the quarantine the acquire will start
            predicted = read_server_state(client, 5)
        finally:
            client.close()
        assert predicted.lost == ("start" if mode == "none" else "restart"), mode
        assert 3.5 < predicted.quarantined_for <= 6.0, (mode, predicted)
        got, outcomes = try_sync([group[0].url], lock_name, max_ttl=5)
        assert got is None, mode
        assert 3.5 < seconds_left(outcomes[0]) <= 6.0, mode

    time.sleep(max(0.0, touch_at - time.monotonic()))
    for mode, group in groups.items():
        got, outcomes = try_sync([group[1].url], lock_name, max_ttl=max_ttl)
        assert got, (mode, outcomes)
        assert replies(outcomes) == [G], mode
        assert marker(group[1])["run_id"] == run_id(group[1]), mode


def uptime(server: LocalServer) -> int:
    client = client_of(server)
    try:
        return int(client.info("server")["uptime_in_seconds"])
    finally:
        client.close()


def test_quarantine_of_a_reloaded_server_is_never_shorter_than_max_ttl_from_its_start(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """The restart is begun mid-second, so that the server's uptime turns 1 about half a
    second after its start; touched then, the server must still have max_ttl minus the
    time it has run (at most ``ran``) of quarantine left (it once had max_ttl - 1 s)."""
    group = make_servers(1, save=True)
    server = group[0]
    max_ttl = 2.0
    got, _ = try_sync(group.urls, lock_name, max_ttl=max_ttl)
    assert got
    snapshot(server)
    give_up = time.monotonic() + 2.0
    while not 0.3 <= time.time() % 1 < 0.5:
        assert time.monotonic() < give_up
        time.sleep(0.002)
    begun = time.monotonic()
    server.restart()
    while uptime(server) < 1:
        assert time.monotonic() < begun + 2.0, "uptime never turned 1"
        time.sleep(0.002)
    client = client_of(server)
    try:  # what quorumlock status says, counted as the acquire script counts
        predicted = read_server_state(client, max_ttl)
    finally:
        client.close()
    ran = time.monotonic() - begun  # the server process has run at most this long
    assert predicted.lost == "restart"
    assert predicted.quarantined_for >= max_ttl - ran - 0.1, (ran, predicted)
    got, outcomes = try_sync(group.urls, lock_name, max_ttl=max_ttl)
    assert got is None
    ran = time.monotonic() - begun
    assert seconds_left(outcomes[0]) >= max_ttl - ran - 0.1, (ran, outcomes[0].detail)


@pytest.mark.parametrize("user", ["default", "no-config"])
def test_durable_server_is_not_quarantined_unless_config_is_refused(
    api: Api, make_servers: ServerFactory, lock_name: str, user: str
) -> None:
    """appendonly yes + appendfsync always: every acknowledged write is on disk, so a
    kill -9 and restart loses nothing and is not quarantined (durability is detected with
    CONFIG GET). An ACL user that may not run CONFIG cannot tell: the server is taken as
    not durable and quarantined. Catches: durable servers quarantined (needless
    unavailability), and a refused CONFIG read as durable (unsafe)."""
    group = make_servers(1, appendonly=True, appendfsync="always")
    server = group[0]

    async def body() -> None:
        got, _ = await try_lock(api, group.urls, lock_name, max_ttl=30)
        assert got
        old = run_id(server)
        await restart(server)
        assert marker(server)["run_id"] == old  # restored from the AOF
        add_user(server, "locker", "-config")
        url = server.url if user == "default" else as_user(server, "locker", "pw")
        got, outcomes = await try_lock(api, [url], lock_name, max_ttl=30)
        if user == "default":
            assert got
            assert replies(outcomes) == [G]
            assert marker(server)["since"] == "0"  # never lost anything
        else:
            assert got is None
            # From the server's start (its uptime is in whole seconds).
            assert 28.0 <= seconds_left(outcomes[0]) <= 31.0
        assert marker(server)["run_id"] == run_id(server)

    api.run(body)


def test_user_without_info_gets_fatal_for_that_server(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """The run_id comes from INFO: a server whose ACL refuses INFO cannot be checked, so
    the connection fails with NOPERM, a fatal outcome for that server (no retry); a
    majority of them raises QuorumUnavailable at once. Without the quarantine and
    fencing, no INFO is sent and the same user gets the lock. Catches a session that
    silently skips the check (an unchecked server would count after a restart)."""
    group = make_servers(3)
    for server in group:
        add_user(server, "noinfo", "-info")
    restricted = [as_user(server, "noinfo", "pw") for server in group]

    async def body() -> None:
        got, outcomes = await try_lock(api, [*group.urls[:2], restricted[2]], lock_name)
        assert got
        assert replies(outcomes) == [G, G, F]
        assert "info" in outcomes[2].detail.lower()

        rl = api.redlock([group.urls[0], *restricted[1:]], instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=1)
        started = time.monotonic()
        with pytest.raises(QuorumUnavailable, match="too few usable servers"):
            await call(lock.acquire(timeout=5.0))
        assert time.monotonic() - started < 2.0  # fatal: not retried for 5 s
        assert replies(lock.outcomes) == [G, F, F]
        assert values(group, lock_name) == [None] * 3

        got, outcomes = await try_lock(api, restricted, lock_name, max_ttl=None)
        assert got
        assert replies(outcomes) == [G, G, G]

    api.run(body)


def test_quarantine_lasts_the_largest_max_ttl_declared(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Client B (max_ttl 1 s) and client A (3 s) share a server that was flushed. A's
    larger max_ttl, recorded in the marker, holds B out too: after B's own second has
    passed, B is still quarantined. Catches a quarantine of the client's own max_ttl only
    (B would count the server while A's longer locks may still be forgotten)."""
    group = make_servers(1)
    urls = group.urls

    api = SyncApi()  # the acquire script's logic: the same for both APIs

    async def body() -> None:
        command(group[0], "FLUSHALL")
        got, outcomes = await try_lock(api, urls, lock_name, max_ttl=1.0)  # B first
        assert got is None
        assert seconds_left(outcomes[0]) == 1.0
        assert marker(group[0])["max_ttl"] == "1000"
        got, outcomes = await try_lock(api, urls, lock_name, max_ttl=3.0)  # then A
        assert got is None
        assert 2.5 < seconds_left(outcomes[0]) <= 3.0
        assert marker(group[0])["max_ttl"] == "3000"

        time.sleep(1.2)  # B's own quarantine would be over
        got, outcomes = await try_lock(api, urls, lock_name, max_ttl=1.0)
        assert got is None
        assert 1.0 < seconds_left(outcomes[0]) < 2.0
        assert marker(group[0])["max_ttl"] == "3000"  # never lowered

    api.run(body)


def clock_reads(server: LocalServer) -> int:
    """How many times the server ran TIME."""
    return command_calls(server, "time")


def test_a_quarantine_seen_over_is_not_checked_again(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A server restarted 10 s ago (its marker says so): the first acquire with max_ttl
    2 s reads the server's clock, finds the quarantine over and records when it ended
    (``over``); later acquires with that max_ttl or a shorter one read no clock. A
    quarantine that ends later is checked all the same: after a restart that reloads
    the marker, record included, from a snapshot; after a restart that a client of an
    earlier version noticed (it rewrites ``since`` and knows nothing of the record);
    for a client with a longer max_ttl (30 s: 20 s left). Catches: the clock read by
    every acquire (the cost this record saves), and a record trusted for a quarantine
    that ends after it (a running quarantine skipped)."""
    group = make_servers(1, fresh=False, **PERSISTENCE["rdb"])
    server = group[0]

    def restarted_ago(seconds: int) -> int:
        """The marker of a restart ``seconds`` ago, as every version writes it (any
        record left as it is): its ``since``."""
        client = client_of(server)
        try:
            now, micros = client.time()
            since = now * 1000 + micros // 1000 - seconds * 1000
            client.hset(MARKER_KEY, mapping={"run_id": run_id(server), "since": since})
        finally:
            client.close()
        return int(since)

    api = SyncApi()  # the acquire script's logic: the same for both APIs

    async def body() -> None:
        since = restarted_ago(10)
        before = clock_reads(server)
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=2.0)
        assert got, outcomes
        assert clock_reads(server) == before + 1
        assert marker(server)["over"] == str(since + 2000)
        for max_ttl in (2.0, 1.0, 2.0):
            got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=max_ttl)
            assert got, outcomes
        assert clock_reads(server) == before + 1  # none since it was seen over

        snapshot(server)
        server.restart()  # kill -9, start at once: the marker, record included, reloaded
        assert marker(server)["over"] == str(since + 2000)
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=2.0)
        assert got is None
        assert 0.0 < seconds_left(outcomes[0]) <= 2.0

        restarted_ago(1)  # as a client of an earlier version writes it: the record stays
        assert marker(server)["over"] == str(since + 2000)
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=2.0)
        assert got is None
        assert 0.0 < seconds_left(outcomes[0]) <= 1.0

        since = restarted_ago(10)
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=2.0)
        assert got, outcomes
        assert marker(server)["over"] == str(since + 2000)
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=30.0)
        assert got is None
        assert 19.0 < seconds_left(outcomes[0]) <= 20.0

    api.run(body)


# --------------------------------------------------------------------------------------
# max_ttl caps every ttl, before any network call
# --------------------------------------------------------------------------------------


def test_ttl_or_extension_beyond_max_ttl_is_refused_before_any_network_call(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """A lock that outlives the quarantine would not be covered by it. Catches a ttl or
    an extension above max_ttl that reaches the servers (or a check made after sending)."""
    group = make_servers(3)

    async def body() -> None:
        rl = api.redlock(nowhere, max_ttl=2)
        with pytest.raises(ConfigurationError, match="exceeds max_ttl"):
            rl.lock(lock_name, ttl=2.5)
        rl.lock(lock_name, ttl=2)  # the bound itself is fine
        api.redlock(nowhere, max_ttl=None).lock(lock_name, ttl=3600)

        rl = api.redlock(group.urls, max_ttl=2, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=1)
        assert await call(lock.acquire(blocking=False))
        before = [script_calls(server) for server in group]
        with pytest.raises(ConfigurationError, match="exceeds max_ttl"):
            await call(lock.extend(ttl=2.5))
        assert [script_calls(server) for server in group] == before
        assert lock.held
        assert await call(lock.extend(ttl=2)) > 1.5
        assert await call(lock.release())

    with refused_ports(3) as ports:
        nowhere = [f"redis://127.0.0.1:{port}" for port in ports]
        api.run(body)


# --------------------------------------------------------------------------------------
# the test kit: brand-new servers are stamped, reset() is not a loss
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "unstamped"])
def test_unstamped_new_server_is_quarantined_at_first_use(
    api: Api, make_servers: ServerFactory, lock_name: str, fresh: bool
) -> None:
    """A server without a marker looks exactly like one that lost its data. The kit
    stamps brand-new servers (fresh=True); fresh=False leaves them unmarked. Catches a
    kit that stops stamping (every test's first acquire would be quarantined) and a
    missing marker not treated as a loss."""
    group = make_servers(1, fresh=fresh)

    async def body() -> None:
        assert bool(marker(group[0])) is fresh
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=30)
        if fresh:
            assert got
        else:
            assert got is None
            assert 29.0 < seconds_left(outcomes[0]) <= 30.0

    api.run(body)


def test_reset_empties_the_server_without_a_quarantine(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """LocalServer.reset() flushes and stamps the server new, as a provisioning step
    would; it even ends a quarantine in progress. Catches a reset that leaves the marker
    out (the shared-servers fixture would quarantine every test)."""
    group = make_servers(1)

    async def body() -> None:
        command(group[0], "FLUSHALL")
        got, _ = await try_lock(api, group.urls, lock_name, max_ttl=30)
        assert got is None
        group[0].reset()
        assert marker(group[0]) == {"run_id": run_id(group[0]), "since": "0"}
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=30)
        assert got
        assert replies(outcomes) == [G]

    api.run(body)


def test_durable_restart_keeps_a_quarantine_in_progress(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A durable server flushed (quarantine from then) and restarted: nothing more was
    lost, but the quarantine already running goes on. Catches a durable restart that
    resets ``since``."""
    group = make_servers(1, appendonly=True, appendfsync="always")

    api = SyncApi()  # the acquire script's logic: the same for both APIs

    async def body() -> None:
        command(group[0], "FLUSHALL")
        got, _ = await try_lock(api, group.urls, lock_name, max_ttl=30)
        assert got is None
        since = marker(group[0])["since"]
        time.sleep(0.5)
        await restart(group[0])
        got, outcomes = await try_lock(api, group.urls, lock_name, max_ttl=30)
        assert got is None
        assert 28.0 < seconds_left(outcomes[0]) <= 29.6
        assert marker(group[0])["since"] == since

    api.run(body)


@pytest.mark.parametrize("slots", [(), (0, 5461)], ids=["server", "cluster-slots"])
def test_only_an_empty_server_is_stamped_as_new(
    make_servers: ServerFactory, slots: tuple[int, ...]
) -> None:
    """Stamping a server as new (``servers start``, the test servers, a new cluster
    master's slots) writes the marker that spares it the quarantine of a first start:
    refused on a server that holds any key, whose data may be a lock's lost state, and
    nothing is written then."""
    server = make_servers(1)[0]
    keys = [MARKER_KEY] if not slots else [slot_marker(slot) for slot in slots]
    client = client_of(server)

    def stamp() -> None:
        if slots:
            stamp_fresh_slots(client, slots)
        else:
            stamp_fresh(client)

    try:
        client.delete(*keys)
        client.set("orders:42", "a token")
        with pytest.raises(RuntimeError, match="only an empty, freshly started server"):
            stamp()
        assert client.exists(*keys) == 0
        client.flushall()
        stamp()
        run_id = client.info("server")["run_id"]
        for key in keys:
            assert client.hgetall(key) == {b"run_id": run_id.encode(), b"since": b"0"}
    finally:
        client.close()
