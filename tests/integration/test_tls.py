"""``rediss://``: TLS with certificate verification on by default, CA files and client
certificates, from URLs and from ``redis.Redis(ssl=True, ...)`` clients, both APIs.

The servers are real; TLS is served by the server itself when the binary has TLS, else by
a :class:`quorumlock.testing.TlsProxy` in front of it (see ``tests/integration/tls.py``;
the ``how`` fixture names which one ran, and the test ids show it).
"""

from __future__ import annotations

import os
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio

import quorumlock.asyncio
from quorumlock import ConfigurationError, QuorumUnavailable, Redlock, Reply
from quorumlock._algorithm.scripts import QUEUE_PREFIX
from tests.conftest import client_of, values
from tests.integration.apis import UNHURRIED, Api, AsyncApi, call, holding
from tests.integration.test_wake_one import until
from tests.integration.tls import (
    ENV_REQUIRE_TLS_SERVER,
    ENV_TLS_SERVER,
    TLS_ENV,
    Certificates,
    TlsEndpoint,
    make_certificates,
    native_tls_binary,
    real_tls_server,
    tls_binary,
    tls_endpoint,
)

G, F = Reply.GRANTED, Reply.FATAL


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def endpoints(certs: Certificates) -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def start(stack: ExitStack, certs: Certificates, **options: Any) -> TlsEndpoint:
    return stack.enter_context(tls_endpoint(certs, **options))


def trusting(endpoint: TlsEndpoint, certs: Certificates, *, client: bool = False) -> str:
    """The endpoint's URL with our CA (and our client certificate)."""
    url = f"{endpoint.url}?ssl_ca_certs={certs.ca}"
    if client:
        url += f"&ssl_certfile={certs.client_cert}&ssl_keyfile={certs.client_key}"
    return url


def test_lock_acquire_extend_release_over_tls(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """The whole life of a lock over TLS, with the restart quarantine and fencing on (the
    session probe runs over TLS too). The key is on the server behind TLS. Catches a
    rediss:// URL silently served in plain text (the endpoint speaks TLS only)."""
    endpoint = start(endpoints, certs)

    async def body() -> None:
        rl = api.redlock([trusting(endpoint, certs)], fencing=True)
        assert rl.servers == [endpoint.url]
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False)), lock.outcomes
        assert [o.reply for o in lock.outcomes] == [G]
        assert lock.fencing_token is not None
        assert values([endpoint.server], lock_name) == [lock.token]
        assert await call(lock.extend()) > 4.0
        assert await call(lock.release())
        assert values([endpoint.server], lock_name) == [None]

    api.run(body)
    if endpoint.proxy is not None:
        assert endpoint.proxy.accepted >= 1


def test_a_valkeys_url_is_a_rediss_one(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """valkey-py's valkeys:// scheme, with the same query options, is rediss://: the
    lock is taken over TLS (the endpoint speaks TLS only) and the server is shown as
    rediss://."""
    endpoint = start(endpoints, certs)
    url = trusting(endpoint, certs).replace("rediss://", "valkeys://", 1)

    async def body() -> None:
        rl = api.redlock([url])
        assert rl.servers == [endpoint.url]
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False)), lock.outcomes
        assert values([endpoint.server], lock_name) == [lock.token]
        assert await call(lock.release())

    api.run(body)


def test_a_waiter_is_woken_by_the_release_over_tls(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """The subscriber connections speak TLS too, on three TLS servers: a blocking
    acquire subscribes over TLS and the release wakes it (its poll would come 30 s or
    more later, and its last attempt at its 20 s timeout). Catches a subscriber
    connection that cannot read a TLS socket's announcements (the release comes once
    the waiter is in line, after it subscribed)."""
    points = [start(endpoints, certs) for _ in range(3)]
    urls = [trusting(point, certs) for point in points]

    def in_line() -> int:
        """The fewest waiters in the name's queue on any server (asked in plain text:
        each server also listens on a plain port)."""
        counts = []
        for point in points:
            client = client_of(point.server)
            try:
                counts.append(int(client.zcard(QUEUE_PREFIX + lock_name)))
            finally:
                client.close()
        return min(counts)

    async def body() -> None:
        holder = api.redlock(urls).lock(lock_name, ttl=30)
        waiter = api.redlock(urls, retry_delay=60).lock(lock_name, ttl=30)
        assert await call(holder.acquire(blocking=False))

        async def wait() -> None:
            started = time.monotonic()
            assert await call(waiter.acquire(timeout=20))
            # not the last attempt a blocking acquire makes at its timeout
            assert time.monotonic() - started < 15
            assert await call(waiter.release())

        async def release() -> None:
            await until(lambda: in_line() >= 1, 15, "the waiter in line")
            assert await call(holder.release())

        await api.concurrently([wait, release], limit=30)

    api.run(body)


def test_plain_text_to_a_tls_port_does_not_pass(
    certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """The control for the test above: redis:// to the TLS port gets no lock."""
    endpoint = start(endpoints, certs)
    rl = Redlock(endpoint.url.replace("rediss://", "redis://"), connect_timeout=0.5)
    with pytest.raises(QuorumUnavailable):
        rl.lock(lock_name, ttl=5).acquire(blocking=False)
    rl.close()


@pytest.mark.parametrize("scheme", ["rediss", "redis"])
def test_a_url_whose_scheme_does_not_match_the_server_says_so(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str, scheme: str
) -> None:
    """rediss:// to a plain server, which never answers the TLS handshake (it waits for
    the end of a command line), and redis:// to a TLS port, which ends the connection
    under our first command: the outcome names the likely cause, also in the rounds
    that end before the attempt under way fails (they said "still connecting", and
    nothing else, until the acquire's timeout). Retried: a frozen server, or one going
    away, may fail the same way."""
    endpoint = start(endpoints, certs)
    if scheme == "rediss":
        url = f"rediss://127.0.0.1:{endpoint.server.port}"  # its plain port
        hint = "TLS: the server did not answer the handshake (is it TLS-enabled? use redis://"
    else:
        url = endpoint.url.replace("rediss://", "redis://")
        hint = "without a reply (going away, or a TLS port? use rediss:// for TLS)"

    async def body() -> None:
        lock = api.redlock([url], connect_timeout=0.3).lock(lock_name, ttl=5)
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(timeout=1.0))
        assert "attempts)" in str(info.value)  # retried
        (outcome,) = info.value.outcomes
        assert outcome.reply in (Reply.TIMEOUT, Reply.ERROR), outcome
        assert hint in outcome.detail, outcome

    api.run(body)


@pytest.mark.parametrize("ca", ["system", "other"])
def test_a_server_certificate_we_do_not_trust_is_refused_at_once(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str, ca: str
) -> None:
    """Verification is on by default: without ssl_ca_certs the system's CAs decide (they
    never signed a test CA), and a CA file that did not sign the server's certificate is
    refused too. One clear line naming the server; fatal, so a blocking acquire with a
    timeout makes one attempt. Catches: verification off by default, a retry loop on a
    certificate error, a traceback instead of an error."""
    endpoint = start(endpoints, certs)
    url = endpoint.url if ca == "system" else f"{endpoint.url}?ssl_ca_certs={certs.other_ca}"

    async def body() -> None:
        rl = api.redlock([url], instance_timeout=UNHURRIED)
        lock = rl.lock(lock_name, ttl=5)
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(timeout=5.0))
        message = str(info.value)
        assert "(1 attempt)" in message
        assert f"{endpoint.url}: fatal (TLS: the server's certificate is not trusted (" in message
        assert "\n" not in message
        assert [o.reply for o in info.value.outcomes] == [F]

    api.run(body)
    assert values([endpoint.server], lock_name) == [None]


@pytest.mark.parametrize("shown", ["ours", "none", "rogue"])
def test_a_server_that_requires_client_certificates(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str, shown: str
) -> None:
    """Client certificates from the URL (ssl_certfile, ssl_keyfile): the one the server's
    CA signed is accepted; none, or one signed by another CA, is refused with a fatal
    outcome saying so, and nothing is written."""
    endpoint = start(endpoints, certs, client_certs=True)
    url = trusting(endpoint, certs, client=shown == "ours")
    if shown == "rogue":
        url += f"&ssl_certfile={certs.rogue_cert}&ssl_keyfile={certs.rogue_key}"

    async def body() -> None:
        rl = api.redlock([url])
        lock = rl.lock(lock_name, ttl=5)
        if shown == "ours":
            assert await call(lock.acquire(blocking=False))
            assert await call(lock.release())
            return
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(timeout=5.0))
        (outcome,) = info.value.outcomes
        assert outcome.reply is F, outcome
        if shown == "none":
            assert outcome.detail.startswith(
                "TLS: the server requires a client certificate (ssl_certfile, ssl_keyfile)"
            )
        else:
            assert outcome.detail.startswith("TLS: the server refused our client certificate")

    api.run(body)
    assert values([endpoint.server], lock_name) == [None]


def test_a_redlock_of_three_tls_servers_with_client_objects(
    api: Api, certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """N = 3 TLS servers that require client certificates: one given as a URL, two as
    redis-py client objects built with ssl=True (sync or asyncio, as the API wants)."""
    servers = [start(endpoints, certs, client_certs=True) for _ in range(3)]
    options: dict[str, Any] = {
        "ssl": True,
        "ssl_ca_certs": str(certs.ca),
        "ssl_certfile": str(certs.client_cert),
        "ssl_keyfile": str(certs.client_key),
    }
    factory = redis.asyncio.Redis if isinstance(api, AsyncApi) else redis.Redis
    clients = [factory(host="127.0.0.1", port=s.port, **options) for s in servers[1:]]

    async def body() -> None:
        # Replies get 2 s: the release must reach the server whose handshake was still
        # going on at the acquire (under load it outlasted the default 25 ms, and the key
        # stayed there until its ttl).
        rl = api.redlock([trusting(servers[0], certs, client=True), *clients], instance_timeout=2.0)
        assert rl.servers == [s.url for s in servers]
        lock = rl.lock(lock_name, ttl=5, auto_extend=True, max_extensions=3)
        async with holding(lock):
            # At first contact a round ends once a majority granted: the last server
            # may still be connecting, or its reply late (the TLS handshakes are slow).
            granted = [o.reply is G for o in lock.outcomes]
            assert sum(granted) >= 2, lock.outcomes
            held = values([s.server for s in servers], lock_name)
            assert all(value == lock.token for value, g in zip(held, granted, strict=True) if g)
        assert values([s.server for s in servers], lock_name) == [None] * 3

    api.run(body)


def test_a_tls_redlock_with_one_server_down(
    certs: Certificates, endpoints: ExitStack, lock_name: str
) -> None:
    """A majority is enough: with one of three TLS servers gone, locks are acquired and
    released (sync API; the asyncio twin is below)."""
    servers = [start(endpoints, certs) for _ in range(3)]
    # 0.5 s per server: a TLS handshake on a loaded machine can outlast the 25 ms default
    # of a 5 s ttl, and this test is about the majority, not the first contact's speed.
    rl = Redlock([trusting(s, certs) for s in servers], instance_timeout=0.5)
    servers[2].server.kill()
    for _ in range(3):
        lock = rl.lock(lock_name, ttl=5)
        assert lock.acquire(blocking=False)
        assert [o.reply for o in lock.outcomes][:2] == [G, G]
        assert lock.release()
    rl.close()


def test_asyncio_rounds_are_not_stalled_by_a_tls_server_that_is_down(
    certs: Certificates, endpoints: ExitStack, lock_name: str, tmp_path: Path
) -> None:
    """The asyncio twin of the test above. To make the stall certain rather than likely,
    the CA file is our CA followed by the system's CA bundle five times (loading it takes
    hundreds of ms, as a large corporate bundle would); the sync API is not affected (its
    connections are set up on helper threads, and OpenSSL loads files without the GIL)."""
    bundle = tmp_path / "bundle.pem"
    system = Path(ssl.get_default_verify_paths().cafile or certs.ca).read_text()
    bundle.write_text(certs.ca.read_text() + system * 5)
    servers = [start(endpoints, certs) for _ in range(3)]
    urls = [f"{s.url}?ssl_ca_certs={bundle}" for s in servers]
    api = AsyncApi()

    async def body() -> None:
        # 0.1 s per reply: a loaded host may take more than the default 25 ms (seen with
        # 4 test processes on 2 CPUs), and loading the bundle on the loop takes longer
        rl = api.redlock(urls, instance_timeout=0.1)
        assert isinstance(rl, quorumlock.asyncio.Redlock)
        # All connected (the first contact may retry: loading the bundle takes a while).
        assert await rl.lock(lock_name, ttl=5).acquire(timeout=30)
        servers[2].server.kill()
        if servers[2].proxy is not None:  # native TLS: the server's port itself is closed
            servers[2].proxy.close()  # connection refused: only the context costs time
        for _ in range(3):
            lock = rl.lock(lock_name + ":2", ttl=5)
            assert await lock.acquire(blocking=False), lock.outcomes
            assert await lock.release(), lock.outcomes

    api.run(body)


@pytest.mark.parametrize(
    ("query", "match"),
    [
        ("?ssl_ca_certs=/nonexistent/ca.pem", "ssl_ca_certs '/nonexistent/ca.pem' does not exist"),
        ("?ssl_certfile=/nonexistent/c.pem", "ssl_certfile '/nonexistent/c.pem' does not exist"),
        ("?ssl_cert_reqs=sometimes", "malformed server URL"),
    ],
)
def test_bad_tls_options_are_refused_before_any_network_call(
    query: str, match: str, listener_port: int
) -> None:
    with pytest.raises(ConfigurationError, match=match):
        Redlock(f"rediss://user:hunter2@127.0.0.1:{listener_port}{query}")


def test_tls_options_on_a_plain_url_are_refused(listener_port: int, certs: Certificates) -> None:
    with pytest.raises(ConfigurationError, match="malformed server URL"):
        Redlock(f"redis://127.0.0.1:{listener_port}?ssl_ca_certs={certs.ca}")


def test_a_client_object_with_a_missing_tls_file_is_refused() -> None:
    client = redis.Redis(ssl=True, ssl_ca_certs="/nonexistent/ca.pem")
    with pytest.raises(ConfigurationError, match=r"ssl_ca_certs '/nonexistent/ca\.pem'"):
        Redlock(client)


@pytest.mark.parametrize(
    "url",
    [
        "rediss://user:hunter2@127.0.0.1:{port}",
        "rediss://127.0.0.1:{port}?password=hunter2",
        "rediss://127.0.0.1:{port}?ssl_password=hunter2&ssl_ca_certs=/nonexistent",
        "rediss://:hunter2@127.0.0.1:{port}/x",
    ],
)
def test_passwords_never_show(url: str, listener_port: int) -> None:
    """Labels, errors (configuration and connection) never carry a password, whether
    it is in the user part or in the query."""
    url = url.format(port=listener_port)
    error: Exception
    try:
        rl = Redlock(url, connect_timeout=0.2)
    except ConfigurationError as exc:
        error = exc
    else:
        assert "hunter2" not in repr(rl.servers)
        with pytest.raises(QuorumUnavailable) as info:
            rl.lock("x", ttl=1).acquire(blocking=False)
        error = info.value
        rl.close()
    assert "hunter2" not in str(error)


@pytest.fixture
def listener_port() -> Iterator[int]:
    """A port that accepts connections and never answers (nothing reaches a server)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield int(sock.getsockname()[1])
    sock.close()


def test_the_tls_server_kind_is_what_the_server_says(
    certs: Certificates, endpoints: ExitStack
) -> None:
    """The endpoint's "native" or "proxy" label, checked against the server: a native
    server listens for TLS on the endpoint's port itself (``CONFIG GET tls-port``), a
    proxied one has no TLS port and the proxy accepts the connection. With
    ``QUORUMLOCK_TEST_TLS=native`` (CI's run with a server built with TLS) a proxy fails:
    the real-TLS tests cannot quietly run through the proxy."""
    endpoint = start(endpoints, certs)
    client = redis.Redis.from_url(trusting(endpoint, certs), socket_timeout=5)
    assert client.ping()
    client.close()
    backend = redis.Redis(host=endpoint.server.host, port=endpoint.server.port, socket_timeout=5)
    tls_port = backend.config_get("tls-port").get("tls-port")
    backend.close()
    if endpoint.how == "native":
        assert endpoint.proxy is None
        assert tls_port == str(endpoint.port)
    else:
        assert endpoint.how == "proxy"
        assert tls_port in (None, "0")
        assert endpoint.proxy is not None
        assert endpoint.proxy.accepted >= 1
    if os.environ.get(TLS_ENV) == "native":
        assert endpoint.how == "native", f"{TLS_ENV}=native, but {tls_binary()} has no TLS"


# ---- a real TLS server (redis-server or valkey-server built with TLS) ------------------


@pytest.fixture(scope="module")
def native_binary(certs: Certificates) -> Path:
    binary = native_tls_binary(certs)
    if binary is None:
        reason = (
            f"no TLS-capable server: set {ENV_TLS_SERVER} to a redis-server/valkey-server "
            "built with TLS, or put one on PATH"
        )
        if os.environ.get(ENV_REQUIRE_TLS_SERVER) == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


@pytest.mark.parametrize("protocols", ["TLSv1.2", "TLSv1.3"])
def test_a_real_tls_server_refusing_a_client_without_certificate_is_fatal_at_once(
    api: Api, certs: Certificates, native_binary: Path, lock_name: str, protocols: str
) -> None:
    """A real server with tls-auth-clients yes, a client with no certificate. Over TLS
    1.2 the server's "handshake failure" alert ends the handshake; over TLS 1.3 the
    refusal comes after it, as a "certificate required" alert or an EOF under the first
    command. Each time (several tries: the TLS 1.3 form varies), one attempt and the
    fatal outcome saying the server requires a client certificate, naming the server.
    Catches: the refusal retried for the whole timeout, shown as "timeout (still
    connecting)" or "EOF occurred in violation of protocol"."""
    with real_tls_server(certs, native_binary, protocols=protocols, client_certs=True) as endpoint:

        async def body() -> None:
            for _ in range(4):
                rl = api.redlock([trusting(endpoint, certs)], instance_timeout=UNHURRIED)
                lock = rl.lock(lock_name, ttl=5)
                with pytest.raises(QuorumUnavailable) as info:
                    await call(lock.acquire(timeout=10.0))
                message = str(info.value)
                assert "(1 attempt)" in message, message
                expected = "TLS: the server requires a client certificate (ssl_certfile"
                assert f"{endpoint.url}: fatal ({expected}" in message, message
                await call(rl.close())

        api.run(body)
        assert values([endpoint.server], lock_name) == [None]


@pytest.mark.parametrize("protocols", ["TLSv1.2", "TLSv1.3"])
def test_lock_extend_release_over_a_real_tls_server(
    api: Api, certs: Certificates, native_binary: Path, lock_name: str, protocols: str
) -> None:
    """The normal path over a real TLS server that requires client certificates, for
    each TLS version: acquire (quarantine and fencing on), extend, release."""
    with real_tls_server(certs, native_binary, protocols=protocols, client_certs=True) as endpoint:

        async def body() -> None:
            rl = api.redlock([trusting(endpoint, certs, client=True)], fencing=True)
            lock = rl.lock(lock_name, ttl=5)
            assert await call(lock.acquire(blocking=False)), lock.outcomes
            assert lock.fencing_token is not None
            assert values([endpoint.server], lock_name) == [lock.token]
            assert await call(lock.extend()) > 4.0
            assert await call(lock.release())
            assert values([endpoint.server], lock_name) == [None]
            await call(rl.close())

        api.run(body)
