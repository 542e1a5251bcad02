"""Observability against real servers: the observer's events, both APIs, and
the ``quorumlock`` logger (a debug line per round, warnings; no password, no token)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import quorumlock
from quorumlock import (
    AcquireEvent,
    ExtendEvent,
    LockLost,
    LockObserver,
    LostEvent,
    QuorumUnavailable,
    ReleaseEvent,
    Reply,
    RoundEvent,
)
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.conftest import ServerFactory, client_of, decided, refused_ports, values
from tests.integration.apis import Api, call, holding
from tests.integration.test_both_apis import wait_for

Event = AcquireEvent | ExtendEvent | ReleaseEvent | LostEvent | RoundEvent


class Recorder(LockObserver):
    """Keeps every event, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def on_acquire(self, event: AcquireEvent) -> None:
        self.events.append(event)

    def on_extend(self, event: ExtendEvent) -> None:
        self.events.append(event)

    def on_release(self, event: ReleaseEvent) -> None:
        self.events.append(event)

    def on_lost(self, event: LostEvent) -> None:
        self.events.append(event)

    def on_round(self, event: RoundEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        """The events as short strings: ``round:acquire``, ``acquire``, ``lost``..."""
        return [
            f"round:{e.op}" if isinstance(e, RoundEvent) else type(e).__name__[:-5].lower()
            for e in self.events
        ]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def take(self) -> list[str]:
        kinds = self.kinds()
        self.events.clear()
        return kinds


def delete_everywhere(servers: LocalServerGroup, key: str) -> None:
    for server in servers:
        client = client_of(server)
        client.delete(key)
        client.close()


# --------------------------------------------------------------------------------------
# events
# --------------------------------------------------------------------------------------


def test_events_of_acquire_extend_release(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rec = Recorder()
        rl = api.redlock(servers.urls, observer=rec, fencing=True, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        assert rec.kinds() == ["round:acquire", "acquire"]
        round_, acquired = rec.events
        assert isinstance(round_, RoundEvent)
        assert round_.name == lock_name
        assert [o.server for o in round_.outcomes] == rl.servers
        assert [o.reply for o in round_.outcomes] == [Reply.GRANTED] * 5
        assert all(
            o.latency is not None and 0 < o.latency <= round_.seconds for o in round_.outcomes
        )
        assert isinstance(acquired, AcquireEvent)
        assert (acquired.name, acquired.acquired, acquired.result) == (lock_name, True, "acquired")
        assert acquired.attempts == 1
        assert acquired.seconds >= round_.seconds > 0
        assert acquired.fencing_token == lock.fencing_token is not None
        assert acquired.outcomes == round_.outcomes
        rec.events.clear()

        await call(lock.extend())
        assert rec.kinds() == ["round:extend", "extend"]
        extended = rec.events[1]
        assert isinstance(extended, ExtendEvent)
        assert extended.extended
        assert not extended.renewal
        assert 9 < extended.validity <= 10
        assert extended.reason == ""
        # decided by a majority: a server may be left unread
        assert decided([o.reply for o in extended.outcomes], [Reply.DONE] * 5)
        rec.events.clear()

        assert await call(lock.release())
        assert rec.kinds() == ["round:release", "release"]
        released = rec.events[1]
        assert isinstance(released, ReleaseEvent)
        assert released.released
        assert released.seconds > 0
        assert lock.token is not None
        assert lock.token not in repr(rec.events)  # events never carry the token

    api.run(body)


def test_events_of_contention_and_unavailability(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rec = Recorder()
        rl = api.redlock(servers.urls, observer=rec, retry_delay=0.05, instance_timeout=1.0)
        holder = api.redlock(servers.urls, instance_timeout=1.0).lock(lock_name, ttl=10)
        assert await call(holder.acquire())
        lock = rl.lock(lock_name, ttl=10)
        assert not await call(lock.acquire(timeout=0.3))
        (contended,) = rec.of(AcquireEvent)
        assert (contended.acquired, contended.result) == (False, "contended")
        assert contended.attempts >= 2
        assert contended.fencing_token is None
        assert contended.seconds >= 0.3
        ops = [r.op for r in rec.of(RoundEvent)]
        # Every attempt, and no undo: every server refused it for the holder (R6 step 5);
        # between two attempts, at most one join of the queue of waiters (the first after
        # the second attempt, then only to renew it: docs/algorithm.md, "Waiting")
        assert [op for op in ops if op != "queue"] == ["acquire"] * contended.attempts
        assert ops[:2] == ["acquire", "acquire"]
        assert ops.count("queue") <= contended.attempts - 1
        assert "queue queue" not in " ".join(ops)
        rounds = rec.of(RoundEvent)
        assert [o.reply for o in rounds[0].outcomes] == [Reply.TAKEN] * 5
        rec.events.clear()

        assert await call(holder.release())
        with refused_ports(1) as (port,):  # (held: a parallel test's server cannot take it)
            down = api.redlock([f"redis://127.0.0.1:{port}"], observer=rec)
            with pytest.raises(QuorumUnavailable):
                await call(down.lock(lock_name, ttl=10).acquire(blocking=False))
        (unavailable,) = rec.of(AcquireEvent)
        assert (unavailable.acquired, unavailable.result) == (False, "unavailable")
        assert [o.reply for o in unavailable.outcomes] == [Reply.ERROR]

    api.run(body)


def test_events_of_losses(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """Each way of losing a lock is reported once, with its reason."""

    async def body() -> None:
        rec = Recorder()
        rl = api.redlock(servers.urls, observer=rec, instance_timeout=1.0)

        # An extension that fails: LockLost, then a release that finds nothing.
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        delete_everywhere(servers, lock_name)
        rec.events.clear()
        with pytest.raises(LockLost):
            await call(lock.extend())
        with pytest.raises(LockLost):
            await call(lock.extend())  # lost already: no second LostEvent
        assert await call(lock.release()) is False
        assert rec.take() == [
            "round:extend",
            "round:release",  # a failed extension releases everywhere
            "extend",
            "lost",
            "extend",
            "round:release",
            "release",
        ]
        # (the events were taken: look at the lock's own outcomes instead)
        assert [o.reply for o in lock.outcomes] == [Reply.NOT_HELD] * 5

        # A renewal that fails on the lease thread/task.
        lock = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)
        assert await call(lock.acquire())
        delete_everywhere(servers, lock_name)
        assert await wait_for(lambda: bool(rec.of(LostEvent)), 5)
        (renewal,) = [e for e in rec.of(ExtendEvent) if not e.extended]
        assert renewal.renewal
        assert renewal.reason == "only 0 of 5 servers confirmed it"
        (lost,) = rec.of(LostEvent)
        assert (lost.name, lost.reason) == (lock_name, "extension failed")
        await call(lock.release())
        assert len(rec.of(LostEvent)) == 1  # once per acquisition
        rec.events.clear()

        # A validity that ran out, noticed by check().
        lock = rl.lock(lock_name, ttl=0.3)
        assert await call(lock.acquire())
        await asyncio.sleep(0.4)
        with pytest.raises(LockLost):
            lock.check()
        (lost,) = rec.of(LostEvent)
        assert lost.reason == "validity ran out"
        await call(lock.release())
        assert len(rec.of(LostEvent)) == 1
        rec.events.clear()

        # Keys gone inside a with block: the release and the end of the block both
        # notice; one LostEvent.
        with pytest.raises(LockLost):
            async with holding(rl.lock(lock_name, ttl=10)):
                delete_everywhere(servers, lock_name)
        (lost,) = rec.of(LostEvent)
        assert lost.reason == "not held at release"
        rec.events.clear()

        # A with block that outlived its validity: the release finds the keys expired,
        # and says why.
        with pytest.raises(LockLost):
            async with holding(rl.lock(lock_name, ttl=0.3)):
                await asyncio.sleep(0.4)
        (lost,) = rec.of(LostEvent)
        assert lost.reason == "validity ran out"
        rec.events.clear()

        # A release that finds the key gone from a majority.
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        delete_everywhere(servers, lock_name)
        assert await call(lock.release()) is False
        assert rec.kinds()[-2:] == ["release", "lost"]
        (lost,) = rec.of(LostEvent)
        assert lost.reason == "not held at release"

    api.run(body)


def test_lease_renewals_are_reported(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rec = Recorder()
        rl = api.redlock(servers.urls, observer=rec, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)
        assert await call(lock.acquire())
        assert await wait_for(lambda: lock.extensions >= 2, 5)
        renewals = [e for e in rec.of(ExtendEvent) if e.renewal]
        assert len(renewals) >= 2
        assert all(e.extended and 0 < e.validity <= 0.6 for e in renewals)
        await call(lock.release())

    api.run(body)


def test_an_observer_that_raises_never_breaks_locking(
    api: Api, servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Recorder):
        def on_round(self, event: RoundEvent) -> None:
            raise RuntimeError("broken round hook")

        def on_acquire(self, event: AcquireEvent) -> None:
            raise RuntimeError("broken acquire hook")

        def on_release(self, event: ReleaseEvent) -> None:
            raise ZeroDivisionError

    async def body() -> None:
        broken = Broken()
        rl = api.redlock(servers.urls, observer=broken, instance_timeout=1.0)
        with caplog.at_level(logging.ERROR, logger="quorumlock"):
            async with holding(rl.lock(lock_name, ttl=10)) as lock:
                assert values(servers, lock_name) == [lock.token] * 5
                await call(lock.extend())
        assert values(servers, lock_name) == [None] * 5
        assert broken.kinds() == ["extend"]  # the hooks that work still run
        messages = [r.getMessage() for r in caplog.records]
        assert any("raised in on_round" in m for m in messages)
        assert any("raised in on_acquire" in m for m in messages)
        assert any("raised in on_release" in m for m in messages)

    api.run(body)


def test_observer_must_implement_the_protocol(servers: LocalServerGroup) -> None:
    class NotAnObserver:
        def on_acquire(self, event: AcquireEvent) -> None:
            pass

    with pytest.raises(TypeError, match="LockObserver"):
        quorumlock.Redlock(servers.urls, observer=NotAnObserver())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LockObserver"):
        quorumlock.asyncio.Redlock(servers.urls, observer=42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# the quorumlock logger
# --------------------------------------------------------------------------------------

PASSWORD = "s3cret-Pw-4b1d"


def add_user(server: LocalServer) -> str:
    """An ACL user ``locker`` with ``PASSWORD`` on ``server``; its URL."""
    client = client_of(server)
    client.acl_setuser(
        "locker",
        enabled=True,
        reset=True,
        passwords=[f"+{PASSWORD}"],
        keys=["*"],
        commands=["+@all"],
    )
    client.close()
    return server.url.replace("redis://", f"redis://locker:{PASSWORD}@")


def test_logs_name_every_round_never_a_password_or_a_token(
    api: Api, make_servers: ServerFactory, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One debug line per round of every kind (acquire, extend, release, commit fence),
    with each server's answer and the round's time; warnings for losses. Over ACL users
    with a password in the URL, and a server refusing a wrong one: no log line contains
    a password or a whole token."""
    group = make_servers(3)
    urls = [add_user(server) for server in group]
    # Counters out of step (one server far ahead): the next acquisition's fencing token
    # sits on a minority, so it needs a commit round.
    client = client_of(group[0])
    client.hset(MARKER_KEY, "fence", 100)
    client.close()
    tokens: list[str] = []

    async def body() -> None:
        rl = api.redlock(urls, fencing=True, instance_timeout=1.0, retry_delay=0.05)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        assert lock.fencing_token == 101
        other = rl.lock(lock_name, ttl=10)
        assert not await call(other.acquire(timeout=0.1))  # contention: release rounds
        await call(lock.extend())
        assert await call(lock.release())
        leased = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)
        assert await call(leased.acquire())
        assert await wait_for(lambda: leased.extensions >= 1, 5)
        for server in group:  # the lease is lost: a warning
            c = client_of(server)
            c.delete(lock_name)  # as the default user
            c.close()
        assert await wait_for(leased.lost.is_set, 5)
        await call(leased.release())
        wrong = api.redlock([u.replace(PASSWORD, "not-" + PASSWORD) for u in urls])
        with pytest.raises(QuorumUnavailable) as info:
            await call(wrong.lock(lock_name, ttl=10).acquire(blocking=False))
        assert PASSWORD not in str(info.value)
        tokens.extend(t for t in (lock.token, other.token, leased.token) if t is not None)

    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        api.run(body)
    messages = [record.getMessage() for record in caplog.records]
    assert len(tokens) == 3
    for message in messages:
        assert PASSWORD not in message
        for token in tokens:
            assert token not in message
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    for op in ("acquire", "extend", "release", "commit fence"):
        lines = [m for m in debug if m.startswith(f"{op} {lock_name!r} token=")]
        assert lines, f"no debug line for {op}"
        assert all(" ms: redis://locker@127.0.0.1:" in m for m in lines)
    assert any(tokens[0][:8] + "…" in m for m in debug)  # a prefix identifies the holder
    assert any("invalid username-password pair" in m for m in debug)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("could not be extended" in m for m in warnings)
