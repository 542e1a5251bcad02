"""LatencyProxy against a real server: delay, byte order, dropped connections, bounds."""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from quorumlock.testing import LatencyProxy, LocalServer

PING = b"*1\r\n$4\r\nPING\r\n"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def proxy(server: LocalServer) -> Iterator[LatencyProxy]:
    with LatencyProxy(server.host, server.port, seed=1) as prx:
        yield prx


def client(proxy: LatencyProxy) -> redis.Redis:
    """A client that fails instead of retrying, with bounded waits."""
    return redis.Redis(
        host=proxy.host, port=proxy.port, socket_timeout=2.0, retry=Retry(NoBackoff(), 0)
    )


def round_trip(sock: socket.socket) -> float:
    began = time.monotonic()
    sock.sendall(PING)
    assert sock.recv(64) == b"+PONG\r\n"
    return time.monotonic() - began


def test_forwards_without_delay_by_default(proxy: LatencyProxy) -> None:
    c = client(proxy)
    assert c.set("k", "v")
    assert c.get("k") == b"v"
    assert proxy.url == f"redis://127.0.0.1:{proxy.port}"
    assert proxy.connections == 1
    c.close()


def test_the_delay_is_added_each_way_and_can_change(proxy: LatencyProxy) -> None:
    with socket.create_connection((proxy.host, proxy.port), timeout=2.0) as sock:
        round_trip(sock)  # connected
        fast = statistics.median(round_trip(sock) for _ in range(5))
        proxy.set_delay(0.05)
        slow = [round_trip(sock) for _ in range(5)]
        proxy.set_delay(0.01, jitter=0.04)
        jittered = [round_trip(sock) for _ in range(20)]
        proxy.set_delay(0.0)
        back = statistics.median(round_trip(sock) for _ in range(5))
    # Lower bounds are the delays themselves (sleeping never takes less); upper bounds
    # add the measured undelayed round trip with a wide margin, never a speed.
    margin = max(0.05, 20 * fast)
    assert min(slow) >= 0.1  # two one-way delays of 50 ms
    assert statistics.median(slow) < 0.1 + margin
    assert min(jittered) >= 0.02
    assert max(jittered) < 0.1 + margin  # at most 10 + 40 ms each way
    assert max(jittered) - min(jittered) > 0.005  # the jitter is random
    assert back < min(slow)  # the delay is gone (a median of 5, against the 0.1 s floor)
    assert (proxy.delay, proxy.jitter) == (0.0, 0.0)


def test_byte_order_is_kept_under_jitter(proxy: LatencyProxy) -> None:
    proxy.set_delay(0.0, jitter=0.01)
    c = client(proxy)
    pipe = c.pipeline(transaction=False)
    for i in range(3000):
        pipe.rpush("order", i)
    replies = pipe.execute()
    assert replies == list(range(1, 3001))
    assert [int(x) for x in c.lrange("order", 0, -1)] == list(range(3000))
    big = bytes(range(256)) * 20000  # 5 MB: exercises partial sends and the read cap
    assert c.set("big", big)
    assert c.get("big") == big
    c.close()


def test_a_server_restart_drops_the_clients_connections(
    server: LocalServer, proxy: LatencyProxy
) -> None:
    proxy.set_delay(0.01)
    with socket.create_connection((proxy.host, proxy.port), timeout=2.0) as sock:
        round_trip(sock)
        server.restart()
        assert sock.recv(64) == b""  # the proxy closed the client's side too
    c = client(proxy)
    assert c.ping()  # new connections reach the restarted server
    server.kill()
    with pytest.raises(redis.ConnectionError):
        c.ping()
    with pytest.raises(redis.ConnectionError):  # upstream refuses: the client is cut off
        client(proxy).ping()
    server.start()
    assert client(proxy).ping()


def test_a_client_closing_closes_the_server_side(server: LocalServer, proxy: LatencyProxy) -> None:
    direct = redis.Redis(host=server.host, port=server.port, socket_timeout=2.0)
    baseline = int(direct.info("clients")["connected_clients"])
    with socket.create_connection((proxy.host, proxy.port), timeout=2.0) as sock:
        round_trip(sock)
        assert int(direct.info("clients")["connected_clients"]) == baseline + 1
    deadline = time.monotonic() + 2.0
    while direct.info("clients")["connected_clients"] != baseline:
        assert time.monotonic() < deadline, "the server side stayed open"
        time.sleep(0.01)
    assert proxy.connections == 0
    direct.close()


def test_drop_connections(proxy: LatencyProxy) -> None:
    with socket.create_connection((proxy.host, proxy.port), timeout=2.0) as sock:
        round_trip(sock)
        proxy.drop_connections()
        assert sock.recv(64) == b""
    assert client(proxy).ping()


def test_close_is_prompt_and_idempotent(server: LocalServer) -> None:
    prx = LatencyProxy(server.host, server.port, delay=0.2)
    prx.start()
    sock = socket.create_connection((prx.host, prx.port), timeout=2.0)
    sock.sendall(PING)  # in flight, held back for 0.2 s
    began = time.monotonic()
    prx.close()
    assert time.monotonic() - began < 1.0
    assert not prx.running
    try:
        closed = sock.recv(64) == b""  # the client sees the proxy go away...
    except ConnectionResetError:
        closed = True  # ...as a reset when the PING was still unread in the proxy
    assert closed
    sock.close()
    prx.close()
    with pytest.raises(RuntimeError, match="only once"):
        prx.start()


def test_bad_arguments(server: LocalServer) -> None:
    with pytest.raises(ValueError, match="loopback"):
        LatencyProxy(server.host, server.port, host="0.0.0.0")
    with pytest.raises(ValueError, match="upstream_port"):
        LatencyProxy(server.host, 0)
    with pytest.raises(TypeError, match=r"^upstream_port must be an int, not '6379'$"):
        LatencyProxy(server.host, "6379")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^connect_timeout must be a number of seconds, not '1'$"):
        LatencyProxy(server.host, server.port, connect_timeout="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delay"):
        LatencyProxy(server.host, server.port, delay=-1.0)
    prx = LatencyProxy(server.host, server.port)
    with pytest.raises(RuntimeError, match="not started"):
        _ = prx.url
    with pytest.raises(ValueError, match="jitter"):
        prx.set_delay(0.1, jitter=float("nan"))
    with pytest.raises(TypeError, match="delay"):
        prx.set_delay("1")  # type: ignore[arg-type]
