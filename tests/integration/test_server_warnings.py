"""Servers that will never answer right are reported, never silently tolerated.

Each on real servers and through both APIs: a server that fails fatally on every round
while the locks succeed on the others (a wrong password); every server unreachable; a
server without EVAL/EVALSHA under ``max_ttl=None`` (the plain ``SET`` path, which such a
server would grant and never release); a release whose replies timed out (not a loss);
a server with ``maxmemory`` and an evicting policy.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import time
from collections.abc import Iterator

import pytest

from quorumlock import LockLost, LockObserver, LostEvent, QuorumUnavailable, Reply, _observe
from quorumlock._algorithm.outcomes import MARKER_OF_ANOTHER_TYPE
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._observe import _WARNED, WARN_EVERY
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.conftest import ServerFactory, client_of
from tests.integration.apis import Api, call, holding


class Recorder(LockObserver):
    def __init__(self) -> None:
        self.lost: list[LostEvent] = []

    def on_lost(self, event: LostEvent) -> None:
        self.lost.append(event)


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    """Rate-limited warnings start afresh (the other API's run must not hide them)."""
    _WARNED.clear()
    yield
    _WARNED.clear()


def at_most_every(found: list[str], seconds: float) -> bool:
    """Rate-limited: at least one warning, and no more than one per WARN_EVERY seconds."""
    return 1 <= len(found) <= 1 + int(seconds // WARN_EVERY)


def warnings_with(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "quorumlock" and text in r.getMessage()
    ]


def closed_ports(count: int) -> list[int]:
    """Loopback ports nothing listens on (connections are refused at once)."""
    socks = [socket.socket() for _ in range(count)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [int(sock.getsockname()[1]) for sock in socks]
    for sock in socks:
        sock.close()
    return ports


def key_exists(server: LocalServer, key: str) -> bool:
    client = client_of(server)
    try:
        return bool(client.exists(key))
    finally:
        client.close()


@pytest.fixture(scope="module")
def protected() -> Iterator[LocalServer]:
    """A server with a password the client does not have."""
    with LocalServer(extra_args=("--requirepass", "the-right-password")) as server:
        yield server


def test_a_server_failing_fatally_is_reported_while_locks_succeed(
    api: Api,
    protected: LocalServer,
    servers: LocalServerGroup,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N = 3, one server with a wrong password: every lock still succeeds on the other
    two, so nothing fails, but the Redlock now tolerates no failure. A WARNING names the
    server and its error (never the password), once per 10 s however many locks."""
    bad = f"redis://:wrong-password@{protected.host}:{protected.port}"

    async def body() -> None:
        rl = api.redlock([bad, *servers.urls[:2]])
        fatal = 0
        for i in range(100):  # bounded: the first rounds may end before it refuses us
            lock = rl.lock(f"{lock_name}:{i}", ttl=5)
            assert await call(lock.acquire(blocking=False))
            assert lock.outcomes[0].reply in (Reply.FATAL, Reply.TIMEOUT)
            fatal += lock.outcomes[0].reply is Reply.FATAL
            assert await call(lock.release())
            if fatal == 3:
                break
            await asyncio.sleep(0.02)
        assert fatal == 3

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        api.run(body)
    found = warnings_with(caplog, "no retry can fix")
    assert at_most_every(found, time.monotonic() - started), found
    assert found[0].startswith(f"redis://{protected.host}:{protected.port}"), found
    assert "3 servers now tolerate 0 failures, not 1" in found[0]
    assert "wrong-password" not in caplog.text


def test_a_name_that_is_another_kind_of_key_on_a_server_is_no_server_failure(
    api: Api, servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An application's hash under the lock's name on one server: that name cannot be
    locked there, every other name can. The WARNING said the server failed "with an
    error no retry can fix" and that 3 servers now tolerate 0 failures; it names the
    key and the name instead, and the outcome says what is wrong."""
    seed = client_of(servers[0])
    seed.hset(lock_name, "field", "value")
    seed.close()

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert lock.outcomes[0].reply is Reply.FATAL
        assert lock.outcomes[0].detail.startswith("WRONGTYPE: the lock's key holds another")
        assert "@user_script" not in lock.outcomes[0].detail
        assert await call(lock.release())
        other = rl.lock(f"{lock_name}:other", ttl=5)
        assert await call(other.acquire(blocking=False))
        assert Reply.FATAL not in [o.reply for o in other.outcomes]  # (one may be unread)
        assert await call(other.release())

    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        api.run(body)
    assert warnings_with(caplog, "no retry can fix") == []
    found = warnings_with(caplog, "holds another kind of value")
    assert len(found) == 1, found
    assert found[0].startswith(f"{servers.urls[0]}: the key of lock '{lock_name}'"), found


def test_a_marker_of_another_type_is_named_and_not_the_lock_key(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """An application's list under quorumlock:incarnation on one server: every lock with
    the restart quarantine fails there (its scripts read the marker first), and the
    outcome said that the lock's key held another kind of value, sending the user to
    the wrong key. It names the marker; with the quarantine and fencing off, the plain
    SET does not read the marker, and takes the lock there."""
    seed = client_of(servers[0])
    seed.delete(MARKER_KEY)
    seed.rpush(MARKER_KEY, "an application's")
    seed.close()

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert lock.outcomes[0].reply is Reply.FATAL
        assert lock.outcomes[0].detail == MARKER_OF_ANOTHER_TYPE
        assert not key_exists(servers[0], lock_name)
        assert await call(lock.release())
        plain = api.redlock(servers.urls[:3], max_ttl=None)
        other = plain.lock(lock_name, ttl=5)
        assert await call(other.acquire(blocking=False))
        assert other.outcomes[0].reply is not Reply.FATAL  # granted, or not read in time
        assert await call(other.release())

    api.run(body)


def refused_or_connecting(url: str, text: str) -> bool:
    """``text`` names the server at ``url`` and why it did not answer: the refused
    connection (redis-py: "Error 111 connecting to ..."), or, where the round's deadline
    came first (a loaded machine starts the attempt late), "still connecting" (with the
    refusal of the attempt before, if one ended)."""
    refused = f"{url}: error (Error 111 connecting to {url.removeprefix('redis://')}"
    return refused in text or f"{url}: timeout (still connecting" in text


def test_no_server_answering_is_reported(
    api: Api, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every server refuses connections: a blocking acquire retries (forever with
    timeout=None) and a WARNING says so once that lasted UNREACHABLE_AFTER (5 s; 0.3 s
    here, to keep the test short), naming each server and why, rate-limited."""
    monkeypatch.setattr(_observe, "UNREACHABLE_AFTER", 0.3)
    _observe._UNANSWERED.clear()
    urls = [f"redis://127.0.0.1:{port}" for port in closed_ports(3)]

    async def body() -> None:
        rl = api.redlock(urls, connect_timeout=0.5, retry_delay=0.05)
        lock = rl.lock("unreachable", ttl=5)
        with pytest.raises(QuorumUnavailable):
            await call(lock.acquire(timeout=1.0))
        assert lock._state.attempts > 1  # it did retry

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        api.run(body)
    found = warnings_with(caplog, "(the last: lock 'unreachable')")
    assert at_most_every(found, time.monotonic() - started), found
    for url in urls:  # each server, and why (redis-py: "Error 111 connecting to ...")
        assert refused_or_connecting(url, found[0]), found[0]
    assert "timeout=None" in found[0]


def test_a_majority_not_answering_is_reported(
    api: Api,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    servers: LocalServerGroup,
    lock_name: str,
) -> None:
    """Two of three servers refuse connections, the third grants every attempt: no
    acquire can succeed, and a blocking acquire with no timeout would wait for ever. The
    WARNING comes as when none answers (it did not: one answer was enough to keep it
    away), saying how many answered of how many needed, and naming each server."""
    monkeypatch.setattr(_observe, "UNREACHABLE_AFTER", 0.3)
    _observe._UNANSWERED.clear()
    urls = [f"redis://127.0.0.1:{port}" for port in closed_ports(2)]
    urls.append(servers.urls[0])

    async def body() -> None:
        # (0.3 s for the answering server's reply: on a loaded machine it missed the
        # default 25 ms in every attempt, and the warning said no server answered)
        rl = api.redlock(urls, connect_timeout=0.5, retry_delay=0.05, instance_timeout=0.3)
        lock = rl.lock(lock_name, ttl=5)
        with pytest.raises(QuorumUnavailable):
            await call(lock.acquire(timeout=1.0))
        assert lock._state.attempts > 1  # it did retry

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        api.run(body)
    found = warnings_with(caplog, f"(the last: lock '{lock_name}')")
    assert at_most_every(found, time.monotonic() - started), found
    assert found[0].startswith("only 1 of 3 servers answered acquires for ")
    assert f", 2 needed (the last: lock '{lock_name}'): " in found[0]
    for url in urls[:2]:
        assert refused_or_connecting(url, found[0]), found[0]
    assert f"{servers.urls[0]}: granted" in found[0]
    assert not key_exists(servers[0], lock_name)  # every attempt's grant was undone


def test_failed_lease_renewals_are_warned_of_once_per_run(
    api: Api, caplog: pytest.LogCaptureFixture, make_servers: ServerFactory, lock_name: str
) -> None:
    """A majority killed under a renewed lease: the renewal is retried sooner and sooner
    until the validity runs out, a dozen attempts and more within one ttl. One WARNING
    says the renewal failed and how much validity is left (at most one every WARN_EVERY
    s per lock), then one says the lock was lost, and why (it was a WARNING per attempt:
    21 of them for one outage of a 3 s lease)."""
    group = make_servers(3)

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.05)
        lock = rl.lock(lock_name, ttl=1.5, auto_extend=True, max_hold=60)
        started = time.monotonic()

        async def hold_through_the_kill() -> None:
            async with holding(lock):
                group[0].kill()
                group[1].kill()
                await asyncio.sleep(3.0)  # cancelled at the loss (asyncio)

        with pytest.raises(LockLost):
            await hold_through_the_kill()
        assert lock.lost.is_set()
        attempts = sum(1 for r in caplog.records if r.getMessage().startswith("extend "))
        elapsed = time.monotonic() - started
        failed = warnings_with(caplog, f"lease renewal of '{lock_name}' failed")
        assert at_most_every(failed, elapsed), failed
        lost = warnings_with(caplog, f"lock '{lock_name}' could not be extended")
        lost += warnings_with(caplog, f"lock '{lock_name}' expired")
        assert len(lost) == 1, lost
        # Why, as it happened: the renewals failed, each server's answer (the loss seen
        # at the deadline said "the process was stopped, or too busy to renew").
        assert "was stopped" not in lost[0]
        # (the surviving server confirmed it, unless the last renewal also timed out
        # there on a loaded machine: 50 ms per server)
        assert re.search(r"only [01] of 3 servers confirmed it", lost[0]), lost[0]
        assert group.urls[0] in lost[0]
        assert attempts > len(failed)  # retried more often than warned of

    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        api.run(body)


@pytest.fixture(scope="module")
def scriptless() -> Iterator[LocalServer]:
    """A server with EVAL and EVALSHA disabled."""
    args = ("--rename-command", "EVAL", "", "--rename-command", "EVALSHA", "")
    with LocalServer(extra_args=args) as server:
        yield server


def test_a_server_without_eval_is_refused_at_acquire(
    api: Api, scriptless: LocalServer, servers: LocalServerGroup, lock_name: str
) -> None:
    """With the restart quarantine and fencing off, an acquire is a plain SET, which a
    server without EVAL would grant, and no release could ever delete. It is refused,
    naming the command, and no key is set there: alone (QuorumUnavailable) or among
    others (fatal there, granted by the majority)."""

    async def body() -> None:
        alone = api.redlock([scriptless.url], max_ttl=None)
        lock = alone.lock(lock_name, ttl=5)
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(blocking=False))
        assert "unknown command 'EVAL'" in str(info.value)
        assert not key_exists(scriptless, lock_name)

        rl = api.redlock([scriptless.url, *servers.urls[:2]], max_ttl=None)
        other = rl.lock(lock_name, ttl=5)
        assert await call(other.acquire(blocking=False))
        assert [o.reply for o in other.outcomes] == [Reply.FATAL, Reply.GRANTED, Reply.GRANTED]
        assert "unknown command 'EVAL'" in other.outcomes[0].detail
        assert not key_exists(scriptless, lock_name)
        assert await call(other.release())

    api.run(body)


def test_a_release_that_timed_out_is_not_a_loss(
    api: Api, make_servers: ServerFactory, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The only server is frozen (SIGSTOP) when the lock is released: ``release()``
    returns False and says it could not confirm the release; no loss is reported (no
    LostEvent, no "no longer held"), through ``release()`` and the end of ``with``."""
    group = make_servers(1)
    server = group[0]
    recorder = Recorder()

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.5, observer=recorder)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire(blocking=False))
        server.pause()
        try:
            assert await call(lock.release()) is False
        finally:
            server.resume()
        assert [o.reply for o in lock.outcomes] == [Reply.TIMEOUT]
        other = rl.lock(lock_name + ":with", ttl=10)
        async with holding(other):
            server.pause()
        server.resume()

    try:
        with caplog.at_level(logging.WARNING, logger="quorumlock"):
            api.run(body)
    finally:
        server.resume()
    assert recorder.lost == []
    assert len(warnings_with(caplog, "could not confirm the release of lock")) == 2
    assert not warnings_with(caplog, "no longer held")


def test_an_unconfirmed_release_shortens_a_long_name(
    api: Api, make_servers: ServerFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning of a release too few servers answered shows a long name shortened, as
    every other message does (it carried all 3000 characters of it)."""
    group = make_servers(1)
    server = group[0]
    name = "n" * 3000

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.2)
        lock = rl.lock(name, ttl=10)
        assert await call(lock.acquire(blocking=False))
        server.pause()
        try:
            assert await call(lock.release()) is False
        finally:
            server.resume()

    try:
        with caplog.at_level(logging.WARNING, logger="quorumlock"):
            api.run(body)
    finally:
        server.resume()
    [found] = warnings_with(caplog, "could not confirm the release of lock")
    assert "(3000 characters)" in found
    assert len(found) < 500, len(found)


@pytest.fixture(scope="module", params=["allkeys-lru", "volatile-ttl"])
def evicting(request: pytest.FixtureRequest) -> Iterator[tuple[LocalServer, str]]:
    """A server with a maxmemory and a policy that may evict lock keys."""
    policy = str(request.param)
    args = ("--maxmemory", "100mb", "--maxmemory-policy", policy)
    with LocalServer(extra_args=args) as server:
        yield server, policy


def test_an_evicting_server_is_warned_of_once(
    api: Api,
    evicting: tuple[LocalServer, str],
    servers: LocalServerGroup,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A WARNING when the Redlock connects, naming the server and its policy, once
    however many locks; none for the servers with noeviction."""
    server, policy = evicting
    labels: list[str] = []

    async def body() -> None:
        rl = api.redlock([server.url, *servers.urls[:2]])
        labels.extend(rl.servers)
        for i in range(3):
            lock = rl.lock(f"{lock_name}:{i}", ttl=5)
            assert await call(lock.acquire(blocking=False))
            assert await call(lock.release())

    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        api.run(body)
    found = warnings_with(caplog, "may evict keys")
    assert len(found) == 1, found
    assert found[0].startswith(f"{labels[0]} may evict"), found
    assert f"maxmemory-policy {policy} with maxmemory 104857600" in found[0]
    assert ("incarnation marker" in found[0]) == policy.startswith("allkeys-")
