"""The lean read of a round's replies (``_read_ready`` in ``quorumlock._io.fanout``),
against a real server: short replies are read without redis-py's ``read_response``;
everything else (a reply longer than one read, an error reply, a RESP3 push, a closed
connection) comes out as redis-py would give it."""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.connection import AbstractConnection

from quorumlock import Redlock
from quorumlock._io import fanout
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of


@pytest.fixture
def conn(servers: LocalServerGroup) -> Iterator[Any]:
    """A bare RESP3 connection (redis-py's Connection is untyped: Any here)."""
    server = servers.servers[0]
    make: Any = redis.Connection
    connection = make(host=server.host, port=server.port, protocol=3)
    connection.connect()
    yield connection
    connection.disconnect()


def _reply(connection: Any) -> Any:
    """The next reply, read the way a round reads it: once the socket is readable."""
    sock = connection._sock
    assert sock is not None
    readable, _, _ = select.select([sock], [], [], 5.0)
    assert readable, "no reply within 5 s"
    return fanout._read_ready(connection, time.monotonic() + 5.0)


def test_rounds_read_their_replies_without_read_response(
    servers: LocalServerGroup, monkeypatch: pytest.MonkeyPatch, lock_name: str
) -> None:
    redlock = Redlock(servers.urls)
    try:
        lock = redlock.lock(lock_name, ttl=10.0)
        assert lock.acquire()  # connections opened, scripts loaded
        lock.release()
        calls: list[object] = []
        original = AbstractConnection.read_response

        def counted(self: AbstractConnection, *args: Any, **kwargs: Any) -> Any:
            calls.append(self)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(AbstractConnection, "read_response", counted)
        for _ in range(3):
            assert lock.acquire()
            assert lock.release()
        assert calls == []
    finally:
        redlock.close()


def test_a_reply_longer_than_one_read_comes_whole(
    conn: Any, servers: LocalServerGroup, lock_name: str
) -> None:
    value = b"x" * (3 * 1024 * 1024)  # far more than the reader's buffer
    client_of(servers.servers[0]).set(lock_name, value)
    conn.send_command("GET", lock_name)
    assert _reply(conn) == value
    conn.send_command("PING")
    assert _reply(conn) in (b"PONG", "PONG")


def test_an_error_reply_is_raised_and_the_stream_stays_in_step(conn: Any) -> None:
    conn.send_command("NO-SUCH-COMMAND")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        _reply(conn)
    conn.send_command("ECHO", "after")
    assert _reply(conn) == b"after"


def test_a_push_before_a_reply_is_handed_to_redis_py(
    conn: Any, servers: LocalServerGroup, lock_name: str
) -> None:
    pushes: list[object] = []
    conn._parser.set_invalidation_push_handler(pushes.append)
    conn.send_command("CLIENT", "TRACKING", "ON")
    assert _reply(conn) in (b"OK", "OK")
    conn.send_command("GET", lock_name)
    assert _reply(conn) is None
    client_of(servers.servers[0]).set(lock_name, "changed")  # the server pushes "invalidate"
    deadline = time.monotonic() + 5.0
    sock = conn._sock
    assert sock is not None
    while not select.select([sock], [], [], 0.05)[0]:  # bounded: the push is on its way
        assert time.monotonic() < deadline, "no invalidation pushed within 5 s"
    conn.send_command("ECHO", "after")
    assert _reply(conn) == b"after"
    assert len(pushes) == 1


def test_a_connection_the_server_closed_raises_a_connection_error(
    conn: Any, servers: LocalServerGroup
) -> None:
    conn.send_command("CLIENT", "ID")
    own_id = _reply(conn)
    assert client_of(servers.servers[0]).client_kill_filter(_id=own_id) == 1
    with pytest.raises(redis.ConnectionError):
        _reply(conn)
