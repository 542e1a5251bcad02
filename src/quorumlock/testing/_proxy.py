"""A loopback TCP proxy that delays traffic: the ``latency`` nemesis of the verify suite.

:class:`LatencyProxy` listens on a free loopback port and forwards every connection to one
upstream server, holding each chunk of bytes back for a one-way delay (a fixed part plus a
uniform random jitter, both changeable while traffic flows). One background thread runs a
:mod:`selectors` loop over every socket; nothing else is threaded.

Invariants the loop keeps:

* per connection and per direction, bytes leave in the order they arrived: a chunk's due
  time is never earlier than the due time of the chunk before it, even when the delay is
  lowered;
* when either side of a connection closes or fails, the proxy delivers what that side sent
  before closing, then closes *both* sides. A server killed behind the proxy is therefore
  seen by its clients as a dropped connection, as without the proxy;
* every wait is bounded: the loop wakes at least every 0.25 s and stops on :meth:`close`.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import ipaddress
import random
import selectors
import socket
import threading
import time
from types import TracebackType
from typing import Final, Self

__all__ = ["LatencyProxy"]

_CHUNK: Final = 65536
_MAX_BUFFERED: Final = 1 << 20  # per direction: stop reading a side that is this far ahead
_MAX_WAIT: Final = 0.25  # the loop wakes at least this often
_JOIN_TIMEOUT: Final = 5.0


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _check_delay(delay: float, jitter: float) -> tuple[float, float]:
    for what, value in (("delay", delay), ("jitter", jitter)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{what} must be a number of seconds, not {value!r}")
        if not 0.0 <= value < float("inf"):
            raise ValueError(f"{what} must be finite and >= 0, not {value!r}")
    return float(delay), float(jitter)


class _Direction:
    """Bytes travelling from ``src`` to ``dst``, each chunk held until its due time."""

    __slots__ = ("dst", "eof", "last_due", "outgoing", "queue", "queued", "src")

    def __init__(self, src: socket.socket, dst: socket.socket) -> None:
        self.src = src
        self.dst = dst
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.outgoing = bytearray()  # due, not yet accepted by the kernel
        self.queued = 0  # bytes in queue + outgoing
        self.last_due = 0.0
        self.eof = False  # src will send no more

    @property
    def idle(self) -> bool:
        return self.queued == 0

    def next_due(self) -> float | None:
        return self.queue[0][0] if self.queue else None


class _Connection:
    """One proxied connection: a client socket and its upstream socket."""

    __slots__ = ("client", "connect_deadline", "connected", "down", "masks", "up", "upstream")

    def __init__(self, client: socket.socket, upstream: socket.socket, deadline: float) -> None:
        self.client = client
        self.upstream = upstream
        self.connected = False
        self.connect_deadline = deadline
        self.up = _Direction(client, upstream)  # client -> server
        self.down = _Direction(upstream, client)  # server -> client
        self.masks: dict[socket.socket, int] = {client: 0, upstream: 0}

    def directions(self) -> tuple[_Direction, _Direction]:
        return self.up, self.down


class Endpoint:
    """A loopback listening address in front of one server: what :class:`LatencyProxy`
    and :class:`quorumlock.testing.TlsProxy` share (their checks, address and URL)."""

    _scheme = "redis"

    def __init__(
        self, upstream_host: str, upstream_port: int, host: str, connect_timeout: float
    ) -> None:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"host must be a loopback IP literal, not {host!r}")
        if isinstance(upstream_port, bool) or not isinstance(upstream_port, int):
            raise TypeError(f"upstream_port must be an int, not {upstream_port!r}")
        if not 0 < upstream_port < 65536:
            raise ValueError(f"upstream_port must be in 1..65535, not {upstream_port}")
        if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, int | float):
            raise TypeError(f"connect_timeout must be a number of seconds, not {connect_timeout!r}")
        if not 0 < connect_timeout < float("inf"):
            raise ValueError(f"connect_timeout must be > 0 and finite, not {connect_timeout}")
        self._upstream = (upstream_host, upstream_port)
        self._host = host
        self._connect_timeout = float(connect_timeout)
        self._port: int | None = None

    @property
    def host(self) -> str:
        """The loopback address clients connect to."""
        return self._host

    @property
    def port(self) -> int:
        """The port clients connect to.

        Raises:
            RuntimeError: the proxy was never started.
        """
        if self._port is None:
            raise RuntimeError("the proxy is not started")
        return self._port

    @property
    def url(self) -> str:
        """``redis://HOST:PORT`` (``rediss://`` for TLS) of the proxy (IPv6 hosts in brackets).

        Raises:
            RuntimeError: the proxy was never started.
        """
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{self._scheme}://{host}:{self.port}"

    @property
    def upstream(self) -> tuple[str, int]:
        """``(host, port)`` of the server behind the proxy."""
        return self._upstream


class LatencyProxy(Endpoint):
    """A TCP proxy on a loopback port that adds a one-way delay to an upstream server.

    Every chunk read from either side is forwarded after ``delay + uniform(0, jitter)``
    seconds, so a request/reply round trip costs about twice the delay. Change the delay
    at any time with :meth:`set_delay`; it applies to bytes read from then on.

    ::

        with LocalServer() as server, LatencyProxy(server.host, server.port) as proxy:
            proxy.set_delay(0.05, jitter=0.02)
            client = redis.Redis.from_url(proxy.url)  # ~100-140 ms per command

    Use it as a context manager, or call :meth:`start` and :meth:`close`.

    Args:
        upstream_host: address of the server to forward to.
        upstream_port: its TCP port.
        delay: fixed one-way delay in seconds (default 0).
        jitter: extra uniform random delay in ``[0, jitter]`` seconds (default 0).
        host: loopback address to listen on (default ``"127.0.0.1"``).
        connect_timeout: bound on connecting to the upstream for each new client; a client
            whose upstream cannot be reached in time (or refuses) is disconnected.
        seed: seed of the jitter's random generator (None: unpredictable).

    Raises:
        ValueError: ``host`` is not a loopback IP literal, ``upstream_port`` is out of
            range, or ``delay``/``jitter``/``connect_timeout`` is negative or not finite.
        TypeError: ``upstream_port`` is not an int, or ``delay``, ``jitter`` or
            ``connect_timeout`` is not a number.
    """

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        delay: float = 0.0,
        jitter: float = 0.0,
        host: str = "127.0.0.1",
        connect_timeout: float = 1.0,
        seed: int | None = None,
    ) -> None:
        super().__init__(upstream_host, upstream_port, host, connect_timeout)
        self._delay, self._jitter = _check_delay(delay, jitter)
        self._random = random.Random(seed)
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._drop_requested = threading.Event()
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._connections: set[_Connection] = set()
        self._accepted = 0
        self._error: BaseException | None = None
        self._lifecycle = threading.Lock()

    # ---- properties -----------------------------------------------------------------

    @property
    def delay(self) -> float:
        """The fixed part of the one-way delay, in seconds."""
        return self._delay

    @property
    def jitter(self) -> float:
        """The width of the random part of the one-way delay, in seconds."""
        return self._jitter

    @property
    def connections(self) -> int:
        """How many client connections are open through the proxy right now."""
        return len(self._connections)

    @property
    def accepted(self) -> int:
        """How many client connections the proxy accepted since it started."""
        return self._accepted

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`close`."""
        return self._thread is not None and self._thread.is_alive()

    # ---- control --------------------------------------------------------------------

    def set_delay(self, delay: float, jitter: float = 0.0) -> None:
        """Set the one-way delay to ``delay + uniform(0, jitter)`` seconds, from now on.

        Bytes already held back keep their due time; order is preserved either way.

        Raises:
            TypeError: ``delay`` or ``jitter`` is not a number.
            ValueError: ``delay`` or ``jitter`` is negative or not finite.
        """
        delay, jitter = _check_delay(delay, jitter)
        # Two plain attribute stores: the loop reads them once per chunk, and a chunk
        # that sees the new delay with the old jitter is harmless.
        self._delay, self._jitter = delay, jitter

    def drop_connections(self) -> None:
        """Close every connection open right now, both sides (like a network partition
        that resets connections). New connections are accepted as before. Returns at once;
        the loop closes them within a moment."""
        self._drop_requested.set()
        self._wake()

    def start(self) -> None:
        """Bind the listening socket and start the forwarding thread.

        Raises:
            RuntimeError: the proxy is already started, or was closed.
            OSError: the listening socket could not be bound.
        """
        with self._lifecycle:
            if self._thread is not None or self._stopping.is_set():
                raise RuntimeError("a LatencyProxy can be started only once")
            listener = socket.socket(_family(self._host), socket.SOCK_STREAM)
            try:
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((self._host, 0))
                listener.listen(128)
                listener.setblocking(False)
                wake_r, wake_w = socket.socketpair()
            except BaseException:
                listener.close()
                raise
            wake_r.setblocking(False)
            wake_w.setblocking(False)
            self._listener = listener
            self._port = listener.getsockname()[1]
            self._wake_r, self._wake_w = wake_r, wake_w
            self._thread = threading.Thread(
                target=self._run, name=f"quorumlock-latency-proxy-{self._port}", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Stop the thread and close every socket (idempotent).

        Raises:
            TimeoutError: the forwarding thread did not stop within 5 s.
            RuntimeError: the forwarding thread had failed with an unexpected error (it
                is chained as the cause).
        """
        with self._lifecycle:
            thread = self._thread
            self._stopping.set()
            self._wake()
            if thread is not None:
                thread.join(_JOIN_TIMEOUT)
                if thread.is_alive():
                    raise TimeoutError(f"the proxy thread on port {self._port} did not stop")
            for sock in (self._wake_r, self._wake_w):
                if sock is not None:
                    sock.close()
                continue
            error, self._error = self._error, None
        if error is not None:
            raise RuntimeError(f"the proxy on port {self._port} failed: {error!r}") from error

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        host, port = self._upstream
        return (
            f"<LatencyProxy {self._host}:{self._port} -> {host}:{port} "
            f"delay={self._delay:g}+U(0,{self._jitter:g}) connections={self.connections}>"
        )

    # ---- the loop -------------------------------------------------------------------

    def _wake(self) -> None:
        sock = self._wake_w
        if sock is not None:
            with contextlib.suppress(OSError):  # full (already woken) or closed
                sock.send(b"\0")

    def _run(self) -> None:
        listener, wake_r = self._listener, self._wake_r
        assert listener is not None
        assert wake_r is not None
        selector = selectors.DefaultSelector()
        try:
            selector.register(listener, selectors.EVENT_READ, None)
            selector.register(wake_r, selectors.EVENT_READ, None)
            while True:
                if self._stopping.is_set():
                    break
                now = time.monotonic()
                events = selector.select(self._wait_time(now))
                for key, _ in events:
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if sock is wake_r:
                        with contextlib.suppress(OSError):
                            wake_r.recv(4096)
                    elif sock is listener:
                        self._accept(listener)
                    continue
                if self._drop_requested.is_set():
                    self._drop_requested.clear()
                    for conn in list(self._connections):
                        self._close(selector, conn)
                ready: set[object] = {key.fileobj for key, _ in events}
                for conn in list(self._connections):
                    self._service(selector, conn, ready)
        except BaseException as exc:  # reported by close()
            self._error = exc
        finally:
            for conn in list(self._connections):
                self._close(selector, conn)
            selector.close()
            listener.close()

    def _wait_time(self, now: float) -> float:
        wait = _MAX_WAIT
        for conn in self._connections:
            if not conn.connected:
                # Nothing is forwarded before the upstream connection is up.
                wait = min(wait, conn.connect_deadline - now)
                continue
            for direction in conn.directions():
                due = direction.next_due()
                if due is not None:
                    wait = min(wait, due - now)
        return max(0.0, wait)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    return  # out of resources: try again on the next wake-up
                raise
            self._accepted += 1
            client.setblocking(False)
            host, port = self._upstream
            upstream = socket.socket(_family(host), socket.SOCK_STREAM)
            upstream.setblocking(False)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            deadline = time.monotonic() + self._connect_timeout
            conn = _Connection(client, upstream, deadline)
            self._connections.add(conn)
            code = upstream.connect_ex((host, port))
            if code == 0:
                conn.connected = True
            elif code not in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
                conn.connect_deadline = 0.0  # refused at once: closed by _service

    def _service(
        self, selector: selectors.BaseSelector, conn: _Connection, ready: set[object]
    ) -> None:
        """Advance one connection: finish connecting, read, forward what is due, close."""
        now = time.monotonic()
        if not conn.connected:
            if conn.upstream in ready:
                if conn.upstream.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    self._close(selector, conn)
                    return
                conn.connected = True
            elif now >= conn.connect_deadline:
                self._close(selector, conn)
                return
        try:
            for direction in conn.directions():
                if (
                    direction.src in ready
                    and not direction.eof
                    and (conn.connected or direction.src is conn.client)
                ):
                    self._read(direction, now)
                continue
            if conn.connected:
                for direction in conn.directions():
                    self._send_due(direction, now)
        except OSError:  # reset, broken pipe...: the connection is gone on one side
            self._close(selector, conn)
            return
        if any(d.eof and d.idle for d in conn.directions()):
            # One side closed and everything it sent was delivered: close both sides.
            self._close(selector, conn)
            return
        self._register(selector, conn)

    def _read(self, direction: _Direction, now: float) -> None:
        try:
            data = direction.src.recv(_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            direction.eof = True
            return
        delay = self._delay + (self._random.uniform(0.0, self._jitter) if self._jitter else 0.0)
        # Never due before the previous chunk: keeps the byte order under jitter.
        due = max(now + delay, direction.last_due)
        direction.last_due = due
        direction.queue.append((due, data))
        direction.queued += len(data)

    @staticmethod
    def _send_due(direction: _Direction, now: float) -> None:
        while direction.queue and direction.queue[0][0] <= now:
            direction.outgoing += direction.queue.popleft()[1]
        if direction.outgoing:
            try:
                sent = direction.dst.send(direction.outgoing)
            except (BlockingIOError, InterruptedError):
                return
            del direction.outgoing[:sent]
            direction.queued -= sent

    def _register(self, selector: selectors.BaseSelector, conn: _Connection) -> None:
        wanted: dict[socket.socket, int] = {conn.client: 0, conn.upstream: 0}
        for direction in conn.directions():
            readable = conn.connected or direction.src is conn.client
            if readable and not direction.eof and direction.queued < _MAX_BUFFERED:
                wanted[direction.src] |= selectors.EVENT_READ
            if direction.outgoing and conn.connected:
                wanted[direction.dst] |= selectors.EVENT_WRITE
        if not conn.connected:
            wanted[conn.upstream] |= selectors.EVENT_WRITE  # connect completion
        for sock, mask in wanted.items():
            old = conn.masks[sock]
            if mask == old:
                continue
            if old == 0:
                selector.register(sock, mask, conn)
            elif mask == 0:
                selector.unregister(sock)
            else:
                selector.modify(sock, mask, conn)
            conn.masks[sock] = mask

    def _close(self, selector: selectors.BaseSelector, conn: _Connection) -> None:
        self._connections.discard(conn)
        for sock in (conn.client, conn.upstream):
            if conn.masks.get(sock):
                with contextlib.suppress(KeyError, ValueError, OSError):
                    selector.unregister(sock)
                conn.masks[sock] = 0
            with contextlib.suppress(OSError):
                sock.close()
