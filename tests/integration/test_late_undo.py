"""An undo that comes late: the undo of a failed attempt, written on a connection that is
then given up before its reply, must never delete what a later attempt of the same
acquire was granted on that server (docs/algorithm.md, "An undo that comes late").

Five real servers; the fifth is reached through a :class:`LatencyProxy` (for the sync
API, over TLS: a TLS connection cannot owe a reply, so the sync transport closes it when
a round ends without one; a plain one owes it, and the next attempt follows the undo on
it). The proxy holds the undo back for 2 s while the acquire tries again, on a new
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis

from quorumlock import LockObserver, Redlock, RoundEvent
from quorumlock import asyncio as aio
from quorumlock._algorithm.round import WITHHELD
from quorumlock.testing import LatencyProxy, LocalServer, LocalServerGroup
from tests.integration.tls import make_certificates, tls_endpoint

pytestmark = pytest.mark.slow

HELD_BACK = 2.0  # how long the proxy holds the undo back
OTHER = "token-of-another-client"


class _HoldBack(LockObserver):
    """From the end of the first acquire round of ``name`` on, the fifth server's traffic
    is held back (the undo that follows that round); notes what every acquire round of
    ``name`` got from the fifth server: its outcome's detail."""

    def __init__(self, proxy: LatencyProxy, name: str) -> None:
        self._proxy, self._name = proxy, name
        self.fifth: list[str] = []

    def on_round(self, event: RoundEvent) -> None:
        if event.op == "acquire" and event.name == self._name:
            if not self.fifth:
                self._proxy.set_delay(HELD_BACK)
            self.fifth.append(event.outcomes[4].detail)


class _Borrow(_HoldBack):
    """Also, after the first undo's round, another round (as it were) takes the fifth
    server's connection from the pool, until the undo has come."""

    def __init__(self, proxy: LatencyProxy, name: str) -> None:
        super().__init__(proxy, name)
        self.node: Any = None
        self.borrowed: Any = None

    def on_round(self, event: RoundEvent) -> None:
        super().on_round(event)
        if event.op == "release" and event.name == self._name and self.borrowed is None:
            node = self.node
            self.borrowed = conn = node.take()
            threading.Timer(HELD_BACK + 0.5, lambda: node.give(conn)).start()


@contextlib.contextmanager
def _fifth(
    servers: LocalServerGroup, tls: Path | None
) -> Iterator[tuple[str, LocalServer, LatencyProxy]]:
    """The fifth server's URL for the acquire, through a proxy (over TLS, certificates
    made in ``tls``), the server itself, and the proxy."""
    if tls is None:
        server = servers[4]
        with LatencyProxy(server.host, server.port) as proxy:
            yield proxy.url, server, proxy
        return
    certs = make_certificates(tls)
    with tls_endpoint(certs) as endpoint, LatencyProxy("127.0.0.1", endpoint.port) as proxy:
        yield f"rediss://127.0.0.1:{proxy.port}?ssl_ca_certs={certs.ca}", endpoint.server, proxy


def _put(clients: list[redis.Redis], name: str, other: list[bool]) -> None:
    """Another client's key on the servers marked in ``other``; taken off the others."""
    for client, mine in zip(clients, other, strict=True):
        if mine:
            client.set(name, OTHER, px=60_000)
        elif client.get(name) == OTHER.encode():
            client.delete(name)


def _rival_takes(
    clients: list[redis.Redis], plain: Sequence[LocalServer], name: str, started: float
) -> bool:
    """Once the undo held back has come, and the other client has let go: whether a new
    client takes the lock (closes ``clients``)."""
    time.sleep(max(0.0, started + HELD_BACK + 0.8 - time.monotonic()))
    _put(clients, name, [False] * 5)
    rival = Redlock([s.url for s in plain])
    try:
        return rival.lock(name, ttl=30).acquire(blocking=False)
    finally:
        rival.close()
        for client in clients:
            client.close()


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_late_undo_never_deletes_a_grant_of_a_later_attempt(
    api: str, servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """Attempt 1 is refused by servers 1-3 (another client) and granted by 4 and 5; its
    undo to the fifth is held back 2 s. Meanwhile the other client moves (it holds 2 and
    4 now) and the acquire tries again: the fifth, reached on a new connection, still
    has attempt 1's grant (refused: the next undo takes it back), then grants attempt 3,
    with 1 and 3: a majority. Then the first undo comes, and deletes the fifth's grant:
    the acquire holds the lock as far as it knows, on two servers, and another client
    takes it on 2, 4 and 5. An acquire whose undo was cut off on its way to a server
    sends no more attempts there: it gets the lock elsewhere or not at all."""
    with _fifth(servers, tmp_path if api == "sync" else None) as (url, fifth, proxy):
        plain = [*servers.servers[:4], fifth]
        clients = [redis.Redis(host=s.host, port=s.port) for s in plain]
        hold_back = _HoldBack(proxy, lock_name)
        options = {
            "connect_timeout": 0.2,  # an asyncio connection owing a reply longer: dropped
            "instance_timeout": 0.1,
            "retry_delay": 0.4,  # a pause of 0.2 to 0.4 s between attempts
            "wake_on_release": False,
            "observer": hold_back,
        }
        urls = [s.url for s in servers.servers[:4]] + [url]
        _put(clients, lock_name, [True, True, True, False, False])
        started = time.monotonic()
        got: list[bool] = []

        def meanwhile() -> None:
            time.sleep(0.3)  # attempt 1 and its undo are sent
            _put(clients, lock_name, [False, True, False, True, False])
            proxy.set_delay(0.0)

        if api == "sync":
            rl = Redlock(urls, **options)  # type: ignore[arg-type]
            warm = rl.lock(lock_name + ":warm", ttl=10)  # every connection made
            assert warm.acquire(blocking=False)
            warm.release()
            lock = rl.lock(lock_name, ttl=30)
            mover = threading.Thread(target=meanwhile)
            mover.start()
            got.append(lock.acquire(timeout=1.8))
            mover.join(5)
        else:

            async def acquire() -> aio.Lock:
                arl = aio.Redlock(urls, **options)  # type: ignore[arg-type]
                warm = arl.lock(lock_name + ":warm", ttl=10)
                assert await warm.acquire(blocking=False)
                await warm.release()
                lock = arl.lock(lock_name, ttl=30)
                mover = threading.Thread(target=meanwhile)
                mover.start()
                got.append(await lock.acquire(timeout=1.8))
                await asyncio.to_thread(mover.join, 5)
                return lock

            lock = asyncio.run(acquire())  # type: ignore[assignment]
        taken = _rival_takes(clients, plain, lock_name, started)
    assert hold_back.fifth, "no acquire round"
    assert not (got[0] and lock.validity > 0 and taken), "two holders of one lock"
    # the attempts after the undo was cut off were not sent to the fifth server
    assert WITHHELD in hold_back.fifth[1:], hold_back.fifth


def test_an_asyncio_connection_whose_server_answers_a_busy_loop_is_kept(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The event loop is busy for longer than ``connect_timeout`` (blocked 0.5 s) while a
    round's replies come: the next round keeps the connections, whose servers answered
    (the loop did not read). Dropped as frozen, each took the requests in flight with it,
    releases among them, and the acquires of their tokens were sent nowhere after that:
    a thousand tasks at once made every connection look frozen."""

    async def body() -> None:
        rl = aio.Redlock(servers.urls, connect_timeout=0.2, instance_timeout=0.05)
        warm = rl.lock(lock_name + ":warm", ttl=10)
        assert await warm.acquire(blocking=False)
        await warm.release()
        nodes = rl._fanout.nodes
        assert nodes is not None
        pipes = [node.live_pipe for node in nodes]
        assert None not in pipes
        lock = rl.lock(lock_name, ttl=10)
        attempt = asyncio.ensure_future(lock.acquire(blocking=False))
        for _ in range(3):
            await asyncio.sleep(0)  # the round's commands are written
        assert all(pipe is not None and pipe.queue for pipe in pipes)
        time.sleep(0.5)  # the loop is busy; the replies come, unread
        assert [node.pipe() for node in nodes] == pipes
        if await attempt:
            await lock.release()
        await rl.close()

    asyncio.run(body())


def test_a_sync_attempt_follows_its_undo_on_the_connection_that_owes_its_reply(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Sync, plain connections: the undo's reply to the fifth server is owed by its
    connection, which goes back to the pool, and another thread's round has it when the
    acquire tries again. On a new connection the attempt could run before the undo
    (held back 2 s in the network), and the undo delete its grant: the attempt goes on
    the connection that owes the undo's reply, or not to that server at all."""
    with LatencyProxy(servers[4].host, servers[4].port) as proxy:
        plain = servers.servers
        clients = [redis.Redis(host=s.host, port=s.port) for s in plain]
        hold_back = _Borrow(proxy, lock_name)
        urls = [s.url for s in plain[:4]] + [proxy.url]
        rl = Redlock(
            urls, connect_timeout=0.2, instance_timeout=0.1, retry_delay=0.4,
            wake_on_release=False, observer=hold_back,
        )  # fmt: skip
        warm = rl.lock(lock_name + ":warm", ttl=10)
        assert warm.acquire(blocking=False)
        warm.release()
        assert rl._fanout.nodes is not None
        hold_back.node = rl._fanout.nodes[4]
        _put(clients, lock_name, [True, True, True, False, False])
        started = time.monotonic()

        def meanwhile() -> None:
            time.sleep(0.3)
            _put(clients, lock_name, [False, True, False, True, False])
            proxy.set_delay(0.0)

        mover = threading.Thread(target=meanwhile)
        mover.start()
        lock = rl.lock(lock_name, ttl=30)
        got = lock.acquire(timeout=1.8)
        mover.join(5)
        taken = _rival_takes(clients, plain, lock_name, started)
        rl.close()
    assert hold_back.borrowed is not None
    assert not (got and lock.validity > 0 and taken), "two holders of one lock"
    assert WITHHELD in hold_back.fifth[1:], hold_back.fifth
