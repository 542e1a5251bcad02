"""First contact: servers a user started by hand, the sharper marker rule, provisioning.

A server without the incarnation marker that shows no sign of a loss since it started
(no FLUSHALL/FLUSHDB/SWAPDB/DEBUG/REPLICAOF/FAILOVER/CONFIG RESETSTAT in INFO
commandstats, no evicted key, not a cluster node) is quarantined only until its start +
max_ttl; with such a sign, max_ttl from now (docs/safety.md, B1). Every server here is
a private, unmarked process (``fresh=False``), as one started by hand; both Valkey and
Redis where the behaviour is the same on both.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

import quorumlock
from quorumlock import ConfigurationError, QuorumUnavailable, Redlock, Reply, _observe
from quorumlock._algorithm.outcomes import MARKER_OF_ANOTHER_TYPE
from quorumlock._algorithm.scripts import ACQUIRE, LOSS_COMMANDS, MARKER_KEY
from quorumlock._io.incarnation import read_server_state
from quorumlock._provision import provision_each
from quorumlock.testing import LocalServer, ServerBinaryNotFound, find_server_binary
from tests.cli.conftest import run_cli
from tests.conftest import client_of
from tests.integration.test_acl import add_user, as_user, rule_for
from tests.integration.test_quarantine import marker

G, Q = Reply.GRANTED, Reply.QUARANTINED
MAX_TTL = 1.0


def _binary(kind: str) -> Path:
    try:
        return find_server_binary(kind)  # type: ignore[arg-type]
    except ServerBinaryNotFound:
        pytest.skip(f"no {kind} server binary here")


@pytest.fixture(params=["valkey", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def by_hand(kind: str) -> Iterator[LocalServer]:
    """One server started as a user would: no marker."""
    with LocalServer(binary=_binary(kind), fresh=False) as server:
        yield server


#: How many servers of each kind the module starts at once to age together: as many as
#: its tests take of one kind (more are started as needed, and age on their own).
AGED_BATCH = 8


@pytest.fixture(scope="module")
def aged_pool() -> Iterator[Callable[[str], LocalServer]]:
    """Unmarked servers started together, so that their ageing past max_ttl is waited
    for once per kind, not once per test. Each is used by one test only (they flush it,
    evict from it): a test takes one, and it is closed after the test."""
    pools: dict[str, list[LocalServer]] = {}
    started: list[LocalServer] = []

    def take(kind: str) -> LocalServer:
        pool = pools.setdefault(kind, [])
        if not pool:
            for _ in range(AGED_BATCH):
                server = LocalServer(binary=_binary(kind), fresh=False)
                started.append(server)
                server.start()
                pool.append(server)
        return pool.pop(0)

    try:
        yield take
    finally:
        for server in started:
            server.close()


@pytest.fixture
def aged(kind: str, aged_pool: Callable[[str], LocalServer]) -> Iterator[LocalServer]:
    """One server started as a user would (no marker), up longer than max_ttl."""
    server = aged_pool(kind)
    try:
        up_longer_than_max_ttl(server)
        yield server
    finally:
        server.close()


def wait_uptime(server: LocalServer, seconds: int) -> None:
    """Until the server's uptime_in_seconds reaches ``seconds`` (bounded)."""
    client = client_of(server)
    give_up = time.monotonic() + seconds + 10.0
    try:
        while int(client.info("server")["uptime_in_seconds"]) < seconds:
            assert time.monotonic() < give_up, "uptime never reached the mark"
            time.sleep(0.1)
    finally:
        client.close()


def attempt(server: LocalServer, name: str, max_ttl: float = MAX_TTL) -> tuple[bool | None, str]:
    """One non-blocking acquire: (acquired or None if QuorumUnavailable, the detail)."""
    rl = Redlock([server.url], max_ttl=max_ttl, instance_timeout=1.0)
    lock = rl.lock(name, ttl=1)
    try:
        got = lock.acquire(blocking=False)
    except QuorumUnavailable as exc:
        if exc.outcomes[0].reply is not Q:
            raise
        return None, f"{exc.outcomes[0].detail} || {exc}"
    finally:
        rl.close()
    if got:
        lock.release()
    return got, ""


def up_longer_than_max_ttl(server: LocalServer) -> None:
    # start counts as uptime - 1 s ago at the earliest: uptime 3 puts it > max_ttl back
    wait_uptime(server, int(MAX_TTL) + 2)


# --------------------------------------------------------------------------------------
# the sharper marker rule
# --------------------------------------------------------------------------------------


def test_server_up_longer_than_max_ttl_is_used_at_once_without_a_warning(
    aged: LocalServer, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Catches a missing marker always counted from now (the 60 s lockout of a server
    started by hand)."""
    client = client_of(aged)
    state = read_server_state(client, MAX_TTL)
    client.close()
    assert (state.lost, state.quarantined_for) == ("start", 0.0)
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        got, detail = attempt(aged, lock_name)
    assert got, detail
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    stamped = marker(aged)
    assert stamped["lost"] == "start"
    assert int(stamped["since"]) > 0


def test_server_started_a_moment_ago_is_quarantined_until_its_start_plus_max_ttl(
    by_hand: LocalServer, lock_name: str
) -> None:
    """A new server (or one back without its data) just started: quarantined, and the
    message says what it may be and what to do. Catches a missing marker with no sign
    taken as 'never lost anything'."""
    got, detail = attempt(by_hand, lock_name, max_ttl=30)
    assert got is None
    assert "a new server, or one that came back without its data" in detail
    assert "quorumlock servers init" in detail
    assert "docs/safety.md" in detail
    assert 28.0 <= seconds_left_in(detail) <= 30.0


def seconds_left_in(detail: str) -> float:
    return float(detail.split(" s left", maxsplit=1)[0].rsplit(" ", 1)[1])


@pytest.mark.parametrize(
    "args",
    [("FLUSHALL",), ("FLUSHALL", "ASYNC"), ("FLUSHDB",), ("SWAPDB", "0", "1")],
    ids=["flushall", "flushall-async", "flushdb", "swapdb"],
)
def test_a_flush_since_the_start_quarantines_from_now(
    aged: LocalServer, lock_name: str, args: tuple[str, ...]
) -> None:
    """Up longer than max_ttl, but emptied since its start: the marker may have been lost
    at any moment, so max_ttl from now. Catches the sign not read (or one command of
    LOSS_COMMANDS missing from the script)."""
    client = client_of(aged)
    client.execute_command(*args)  # type: ignore[no-untyped-call]
    state = read_server_state(client, MAX_TTL)  # what quorumlock status shows
    client.close()
    assert (state.lost, state.quarantined_for) == (args[0].lower(), MAX_TTL)
    got, detail = attempt(aged, lock_name)
    assert got is None, detail
    assert seconds_left_in(detail) == MAX_TTL
    assert args[0] in detail
    assert "servers init" not in detail  # not a new server: waiting is the way


def test_a_flush_after_the_marker_was_written_quarantines_from_now(
    aged: LocalServer, lock_name: str
) -> None:
    """The marker stamped (server in use), then FLUSHALL: max_ttl from now as before.
    Catches a flushed marker taken for a fresh start."""
    assert attempt(aged, lock_name)[0]
    client = client_of(aged)
    client.flushall()
    client.close()
    got, detail = attempt(aged, lock_name)
    assert got is None
    assert seconds_left_in(detail) == MAX_TTL
    assert "FLUSHALL" in detail


def test_evicted_keys_since_the_start_quarantine_from_now(
    aged: LocalServer, lock_name: str
) -> None:
    """maxmemory with an allkeys policy evicts any key, the marker included. Catches
    evicted_keys not read."""
    client = client_of(aged)
    used = int(client.info("memory")["used_memory"])
    client.config_set("maxmemory-policy", "allkeys-lru")
    client.config_set("maxmemory", str(used + 2_000_000))
    give_up = time.monotonic() + 20
    index = 0
    while int(client.info("stats")["evicted_keys"]) == 0:
        assert time.monotonic() < give_up, "nothing was evicted"
        pipe = client.pipeline(transaction=False)
        for _ in range(200):
            pipe.set(f"filler:{index}", "x" * 1000)
            index += 1
        pipe.execute()
    client.config_set("maxmemory", "0")
    client.config_set("maxmemory-policy", "noeviction")
    state = read_server_state(client, MAX_TTL)  # what quorumlock status shows
    client.close()
    assert (state.lost, state.quarantined_for) == ("eviction", MAX_TTL)
    got, detail = attempt(aged, lock_name)
    assert got is None, detail
    assert seconds_left_in(detail) == MAX_TTL
    assert "evicted" in detail


def test_kill_and_restart_is_quarantined(by_hand: LocalServer, lock_name: str) -> None:
    """kill -9 and an immediate restart without persistence: started a moment ago, so
    quarantined for about max_ttl, as before."""
    quorumlock.provision(by_hand.url)
    assert attempt(by_hand, lock_name, max_ttl=30)[0]
    by_hand.restart()
    got, detail = attempt(by_hand, lock_name, max_ttl=30)
    assert got is None
    assert 28.0 <= seconds_left_in(detail) <= 30.0


def test_config_resetstat_is_a_sign_where_the_server_names_the_subcommand(
    aged_pool: Callable[[str], LocalServer], lock_name: str
) -> None:
    """Valkey (and Redis 7+) count CONFIG RESETSTAT as ``config|resetstat``: a reset
    of the very statistics the rule reads is itself a sign. (Redis 6.2 counts every
    CONFIG call as ``config``: there it is an assumption, docs/safety.md.)"""
    server = aged_pool("valkey")
    try:
        up_longer_than_max_ttl(server)
        client = client_of(server)
        client.flushall()
        client.config_resetstat()  # hides the FLUSHALL
        client.close()
        got, detail = attempt(server, lock_name)
        assert got is None, detail
        assert "CONFIG RESETSTAT" in detail
    finally:
        server.close()


def test_every_loss_command_is_in_the_acquire_script() -> None:
    for name in LOSS_COMMANDS:
        assert f'"{name}"' in ACQUIRE.source or f"{name} = true" in ACQUIRE.source, name


# --------------------------------------------------------------------------------------
# the warning: says why, how long, what to do; at most every 10 s per server
# --------------------------------------------------------------------------------------


def test_quarantine_warning_is_emitted_once_per_interval_and_leads_somewhere(
    by_hand: LocalServer, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Two attempts within the 10 s interval: one warning naming the server, the
    reason, the time left and the way out. Catches the warning removed (none) and its
    rate limit removed (two)."""
    _observe._WARNED.clear()
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        assert attempt(by_hand, lock_name, max_ttl=30)[0] is None
        assert attempt(by_hand, lock_name, max_ttl=30)[0] is None
    warnings = [r.getMessage() for r in caplog.records if "restart quarantine" in r.getMessage()]
    assert len(warnings) == 1, warnings
    (text,) = warnings
    assert by_hand.url in text
    assert "a new server" in text
    assert " s left" in text
    assert "quorumlock servers init" in text
    assert "docs/safety.md" in text


# --------------------------------------------------------------------------------------
# provisioning on purpose
# --------------------------------------------------------------------------------------


def test_provision_makes_a_server_started_a_second_ago_usable_at_once(
    by_hand: LocalServer, lock_name: str
) -> None:
    """Catches provision() not stamping the marker (the acquire would be quarantined)."""
    results = quorumlock.provision([by_hand.url])
    assert [r.status for r in results] == ["marked"]
    assert "marked as new" in results[0].message
    got, detail = attempt(by_hand, lock_name, max_ttl=30)
    assert got, detail


def test_provision_refuses_a_server_with_keys_and_leaves_a_used_one_alone(
    kind: str, lock_name: str
) -> None:
    binary = _binary(kind)
    with (
        LocalServer(binary=binary, fresh=False) as empty,
        LocalServer(binary=binary, fresh=False) as full,
        LocalServer(binary=binary) as used,
    ):
        client = client_of(full)
        client.set("orders:1", "x")
        client.close()
        used_client = client_of(used)
        used_client.hset(MARKER_KEY, "fence", 41)
        before = used_client.hgetall(MARKER_KEY)
        with pytest.raises(ConfigurationError) as caught:
            quorumlock.provision([empty.url, full.url, redis.Redis.from_url(used.url)])
        message = str(caught.value)
        assert "1 of 3" in message
        assert f"{full.url}: refused: it holds 1 key(s) ('orders:1')" in message
        assert f"{empty.url}: marked as new" in message
        assert f"{used.url}: already used by quorumlock" in message
        assert used_client.hgetall(MARKER_KEY) == before  # the fence counter kept
        used_client.close()
        assert marker(empty)["since"] == "0"
        assert marker(full) == {}


def test_provision_names_a_marker_of_another_type(kind: str) -> None:
    """An application's list under quorumlock:incarnation: provisioning refuses the
    server, naming that key (its refusal blamed a lock's key, of which it has none)."""
    with LocalServer(binary=_binary(kind), fresh=False) as server:
        client = client_of(server)
        client.rpush(MARKER_KEY, "an application's")
        client.close()
        (result,) = provision_each([server.url])
        assert result.status == "refused"
        assert result.message == f"{server.url}: refused: {MARKER_OF_ANOTHER_TYPE}"


def test_provision_says_refused_and_why_where_the_server_answered(kind: str) -> None:
    """A server that answered with an error no retry changes is refused with its reason,
    not called unreachable: a read-only replica, quorumlock's user with the documented
    ACL rule (no DBSIZE: init is an administrator's step), a password required and none
    given (in plain words, not redis-py's text about HELLO's AUTH option). A server
    that is down stays unreachable."""
    binary = _binary(kind)
    with (
        LocalServer(binary=binary, fresh=False) as primary,
        LocalServer(binary=binary, fresh=False) as acl,
        LocalServer(binary=binary, fresh=False, extra_args=("--requirepass", "pw-1234")) as pw,
        LocalServer(binary=binary, fresh=False) as down,
        LocalServer(
            binary=binary, fresh=False, extra_args=("--replicaof", primary.host, str(primary.port))
        ) as replica,
    ):
        add_user(acl, rule_for(acl))
        down.kill()
        results = provision_each([replica.url, as_user(acl), pw.url, down.url])
        assert [r.status for r in results] == ["refused", "refused", "refused", "unreachable"]
        assert results[0].message.startswith(f"{replica.url}: refused: ")
        assert "You can't write against a read only replica." in results[0].message
        user_label = as_user(acl).replace(":pw@", "@")
        assert results[1].message.startswith(f"{user_label}: refused: ")
        assert "dbsize" in results[1].message
        assert results[2].message == (
            f"{pw.url}: refused: the server requires a password, and none was given"
        )
        assert results[3].message.startswith(f"{down.url}: not provisioned: ConnectionError")
        init = run_cli("servers", "init", pw.url)
        assert init.returncode == 1
        assert init.stdout == results[2].message + "\n"
        doctor = run_cli("doctor", servers=[pw.url])
        assert "refused: the server requires a password, and none was given" in doctor.stdout
        assert "HELLO" not in doctor.stdout


def test_cli_servers_init(kind: str) -> None:
    binary = _binary(kind)
    with (
        LocalServer(binary=binary, fresh=False) as one,
        LocalServer(binary=binary, fresh=False) as two,
    ):
        result = run_cli("servers", "init", one.url, two.url)
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("marked as new") == 2
        again = run_cli("servers", "init", one.url)
        assert again.returncode == 0
        assert "already used by quorumlock" in again.stdout
        client = client_of(two)
        client.set("k", "v")
        client.delete(MARKER_KEY)
        client.close()
        refused = run_cli("servers", "init", two.url)
        assert refused.returncode == 1
        assert "refused: it holds 1 key(s) ('k')" in refused.stdout
        assert "not provisioned" in refused.stderr
        assert "Traceback" not in refused.stderr
        nothing = run_cli("servers", "init")
        assert nothing.returncode == 2
        assert "no servers given" in nothing.stderr


def test_status_reports_free_but_unavailable(kind: str, lock_name: str) -> None:
    """Catches 'free' printed while no acquire can succeed."""
    binary = _binary(kind)
    with LocalServer(binary=binary, fresh=False) as a, LocalServer(binary=binary) as b:
        urls = [a.url, b.url]
        result = run_cli("status", lock_name, "--max-ttl", "30", servers=urls)
        assert result.returncode == 0, result.stderr
        assert "free but unavailable" in result.stdout
        assert "quorumlock servers init" in result.stdout
        assert "yes, " in result.stdout
        assert "a new server" in result.stdout
        quorumlock.provision([a.url])
        result = run_cli("status", lock_name, "--max-ttl", "30", servers=urls)
        assert f"{lock_name!r} is free" in result.stdout
        assert "unavailable" not in result.stdout
