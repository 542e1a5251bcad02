"""The lean read and write of a round (``_read_ready`` and ``_write`` in
``quorumlock._io.fanout``), against a real server: short replies are read without
redis-py's ``read_response``, commands written without its ``send_packed_command``;
everything else (a reply longer than one read, an error reply, a RESP3 push, a closed
connection, a command larger than the socket's buffer) comes out as redis-py would
give it. And the look at idle connections before a round (``_drop_closed``)."""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.connection import AbstractConnection

from quorumlock import Redlock
from quorumlock._algorithm.outcomes import Reply
from quorumlock._io import fanout
from quorumlock._io import servers as servers_module
from quorumlock._io.servers import FRESH, read_reply
from quorumlock.asyncio import Redlock as AsyncRedlock
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, load_scripts, slack
from tests.integration.apis import PATIENT


@pytest.fixture(params=[None, 5.0], ids=["blocking", "with-a-timeout"])
def conn(servers: LocalServerGroup, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A bare RESP3 connection (redis-py's Connection is untyped: Any here): a blocking
    socket, and one with a timeout as quorumlock's own connections have (non-blocking
    underneath, which the lean read and write use)."""
    server = servers.servers[0]
    make: Any = redis.Connection
    connection = make(host=server.host, port=server.port, protocol=3, socket_timeout=request.param)
    connection.connect()
    yield connection
    connection.disconnect()


@pytest.fixture
def warm(servers: LocalServerGroup, lock_name: str) -> Iterator[tuple[Redlock, Any]]:
    """A Redlock on the five servers and a lock of it, acquired and released once: its
    connections are open and its scripts loaded, so the next rounds take the usual path
    (every command written before anything else). It waits for every server's reply
    (the default's 50 ms, on a loaded host, times one out: its connection is made anew
    by the next round, through redis-py)."""
    load_scripts(servers)
    redlock = Redlock(servers.urls, instance_timeout=PATIENT)
    try:
        lock = redlock.lock(lock_name, ttl=10.0)
        assert lock.acquire()
        assert lock.release()
        assert [outcome.reply for outcome in lock.outcomes] == [Reply.DONE] * 5
        yield redlock, lock
    finally:
        redlock.close()


def _reply(connection: Any) -> Any:
    """The next reply, read the way a round reads it: once the socket is readable."""
    sock = connection._sock
    assert sock is not None
    readable, _, _ = select.select([sock], [], [], 5.0)
    assert readable, "no reply within 5 s"
    return fanout._read_ready(connection, time.monotonic() + 5.0)


def _closed_by_the_server(connection: Any, servers: LocalServerGroup) -> None:
    """The server closes ``connection`` (``CLIENT KILL`` of its own id)."""
    connection.send_command("CLIENT", "ID")
    own_id = _reply(connection)
    assert client_of(servers.servers[0]).client_kill_filter(_id=own_id) == 1


def _until_readable(fd: Any, what: str) -> None:
    """Wait (5 s at most) until ``fd`` is readable: ``what`` is on its way."""
    deadline = time.monotonic() + 5.0
    while not select.select([fd], [], [], 0.05)[0]:
        assert time.monotonic() < deadline, f"{what} did not arrive within 5 s"


def test_rounds_write_and_read_without_send_packed_command_or_read_response(
    warm: tuple[Redlock, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, lock = warm
    calls: list[str] = []

    def counted(name: str) -> Any:
        original = getattr(AbstractConnection, name)

        def call(self: AbstractConnection, *args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(self, *args, **kwargs)

        return call

    for name in ("read_response", "send_packed_command"):
        monkeypatch.setattr(AbstractConnection, name, counted(name))
    for _ in range(3):
        assert lock.acquire()
        assert lock.release()
    assert calls == []


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
    _until_readable(conn._sock, "the invalidation push")
    conn.send_command("ECHO", "after")
    assert _reply(conn) == b"after"
    assert len(pushes) == 1


def test_a_connection_the_server_closed_raises_a_connection_error(
    conn: Any, servers: LocalServerGroup
) -> None:
    _closed_by_the_server(conn, servers)
    with pytest.raises(redis.ConnectionError):
        _reply(conn)


def test_nothing_to_read_is_found_without_waiting(conn: Any) -> None:
    # On the socket with a timeout, a read that waited would time out (5 s) and come
    # back as a failed stream, not as "nothing yet".
    assert fanout._read_at_once(conn, look=True) is vars(fanout)["_PARTIAL"]
    conn.send_command("ECHO", "after")
    assert _reply(conn) == b"after"


def test_a_command_larger_than_the_socket_buffer_is_written_whole(
    conn: Any, servers: LocalServerGroup, lock_name: str
) -> None:
    value = b"y" * (8 * 1024 * 1024)  # more than one write takes on a loopback socket
    fanout._write(conn, b"".join(conn.pack_command("SET", lock_name, value)))
    assert _reply(conn) in (b"OK", "OK")
    assert client_of(servers.servers[0]).get(lock_name) == value


def test_a_write_on_a_connection_the_server_closed_fails_as_redis_py_fails(
    conn: Any, servers: LocalServerGroup
) -> None:
    _closed_by_the_server(conn, servers)

    def write_until_it_fails() -> None:
        # The first write after the close may still go out (the peer answers it with a
        # reset); a later one fails. Bounded: a few writes.
        for _ in range(50):
            fanout._write(conn, conn.pack_command("PING")[0])
            time.sleep(0.01)

    with pytest.raises(redis.ConnectionError):
        write_until_it_fails()
    assert conn._sock is None  # closed, as send_packed_command closes it


def test_idle_connections_are_looked_at_unless_just_used(
    conn: Any, servers: LocalServerGroup
) -> None:
    _closed_by_the_server(conn, servers)
    sock = conn._sock
    _until_readable(sock, "the close")
    now = time.monotonic()
    # Given back just now: used as it is (a server cannot have restarted since).
    assert fanout._drop_closed([(conn, now)]) == [conn]
    assert conn._sock is sock
    # Idle for longer: found closed before the round writes to it.
    assert fanout._drop_closed([(conn, now - 2 * FRESH)]) == [None]
    assert conn._sock is None


def test_a_write_that_fails_is_that_servers_error_and_the_round_goes_on(
    warm: tuple[Redlock, Any], servers: LocalServerGroup, monkeypatch: pytest.MonkeyPatch
) -> None:
    redlock, lock = warm
    broken = redlock._fanout.nodes[0]  # type: ignore[index]
    taken: list[Any] = []  # the connections of the first server, as rounds take them
    take_idle, write = broken.take_idle, fanout._write

    def take() -> Any:
        item = take_idle()
        if item is not None:
            taken.append(item[0])
        return item

    def failing_write(conn: Any, data: bytes) -> None:
        if conn in taken:
            conn.disconnect()  # as send_packed_command does when it raises
            raise redis.ConnectionError("Error 32 while writing to socket. Broken pipe.")
        write(conn, data)

    monkeypatch.setattr(broken, "take_idle", take)
    monkeypatch.setattr(fanout, "_write", failing_write)
    assert lock.acquire()
    first = lock.outcomes[0]
    assert first.reply.value == "error"
    assert "Broken pipe" in first.detail
    others = [o.reply.value for o in lock.outcomes[1:]]
    # (an acquire ends at the majority that decides it: the rest are read later)
    assert set(others) <= {"granted", "not read"}
    assert others.count("granted") >= 3
    assert lock.release()
    assert client_of(servers.servers[1]).exists(lock.name) == 0


def test_asyncio_a_connection_idle_for_a_while_is_looked_at_before_a_round(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def scenario() -> list[Reply]:
        redlock = AsyncRedlock(servers.urls, instance_timeout=PATIENT)  # (as ``warm``)
        try:
            lock = redlock.lock(lock_name, ttl=10.0)
            assert await lock.acquire()
            pipe = redlock._fanout.nodes[0]._pipe  # type: ignore[index]
            assert pipe is not None
            sock = pipe._writer.transport.get_extra_info("socket")
            killer = client_of(servers.servers[0])
            assert killer.client_kill_filter(_type="normal", skipme=True) >= 1
            killer.close()
            # Blocking, so that the event loop does not run: the connection's reader
            # task has not seen the close when the release takes the connection, idle
            # for longer than FRESH by then.
            _until_readable(sock.fileno(), "the close")
            time.sleep(2 * FRESH)
            assert await lock.release()
            return [outcome.reply for outcome in lock.outcomes]
        finally:
            await redlock.close()

    # A release reads every server's reply: the closed connection was replaced first.
    load_scripts(servers)
    assert asyncio.run(scenario()) == [Reply.DONE] * 5


@pytest.mark.parametrize("takes_timeout", [True, False], ids=["redis-py-8", "before-8"])
def test_a_read_is_bounded_by_its_own_timeout_with_every_redis_py(
    make_servers: ServerFactory, monkeypatch: pytest.MonkeyPatch, takes_timeout: bool
) -> None:
    """``read_reply`` reads within the timeout it is given, whatever the socket's own:
    with redis-py 8's ``read_response(timeout=)``, and before 8 (no such argument) by
    setting the socket's timeout for the read and putting it back after. A server that
    does not answer (SIGSTOP) ends the read at that timeout with redis-py's
    TimeoutError and the connection closed, not at the socket's 5 s."""
    if takes_timeout and not servers_module._READ_TAKES_TIMEOUT:
        pytest.skip(f"redis-py {redis.__version__}'s read_response takes no timeout")
    monkeypatch.setattr(servers_module, "_READ_TAKES_TIMEOUT", takes_timeout)
    server = make_servers(1)[0]
    margin = slack(server)  # (measured before the server is paused)
    make: Any = redis.Connection
    connection = make(host=server.host, port=server.port, socket_timeout=5.0)
    connection.connect()
    try:
        connection.send_command("PING")
        assert read_reply(connection, 1.0) in (b"PONG", "PONG")
        assert connection._sock.gettimeout() == 5.0  # as it was
        server.pause()
        try:
            connection.send_command("PING")
            started = time.monotonic()
            with pytest.raises(redis.TimeoutError):
                read_reply(connection, 0.2)
            assert time.monotonic() - started <= 0.2 + margin < 5.0
            assert connection._sock is None  # closed, as redis-py closes it
        finally:
            server.resume()
    finally:
        connection.disconnect()
