"""Two instances that are one server are refused.

``parse_servers`` refuses a host and port listed twice before any network call; these are
the cases it cannot see: other names for one server (127.0.0.1 and localhost, a unix
socket and a TCP port, a proxy in front of it). The sessions of the new connections name
the server process (``run_id``), and the acquire raises ``ConfigurationError`` naming
both instances, after releasing whatever it was granted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quorumlock import ConfigurationError
from quorumlock.testing import LatencyProxy, LocalServer
from tests.conftest import ServerFactory, client_of, values
from tests.integration.apis import Api, call


@pytest.fixture
def proxies() -> Iterator[list[LatencyProxy]]:
    """Proxies a test starts, closed after it."""
    started: list[LatencyProxy] = []
    yield started
    for proxy in started:
        proxy.close()


def other_names(server: LocalServer, how: str, started: list[LatencyProxy]) -> str:
    """Another URL that reaches ``server``."""
    if how == "localhost":
        return f"redis://localhost:{server.port}"
    if how == "unix":
        return server.unix_url
    proxy = LatencyProxy(server.host, server.port)
    proxy.start()
    started.append(proxy)
    return proxy.url


@pytest.mark.parametrize("max_ttl", [30.0, None])
@pytest.mark.parametrize("how", ["localhost", "unix", "proxy"])
def test_one_server_under_two_names_is_refused_and_leaves_no_lock(
    api: Api,
    make_servers: ServerFactory,
    proxies: list[LatencyProxy],
    how: str,
    max_ttl: float | None,
) -> None:
    """Servers a, a' (= a under another name), b: a and b grant, so without the check the
    lock would be acquired on a "majority" that is one real server and b. The acquire
    raises instead, and no key is left on either server; the next acquire raises at
    once. Works with the quarantine off too (max_ttl=None: the session is then read only
    for this check). Catches: a duplicate counted as an independent instance."""
    group = make_servers(2, unixsocket=True)
    a, b = group[0], group[1]
    twin = other_names(a, how, proxies)
    urls = [a.url, twin, b.url]

    lock_name = "test:same-server"

    async def body() -> None:
        rl = api.redlock(urls, max_ttl=max_ttl, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=5)
        with pytest.raises(ConfigurationError) as info:
            await call(lock.acquire(blocking=False))
        message = str(info.value)
        assert f"{a.url} and {rl.servers[1]} are the same server (run_id " in message
        assert message.endswith("Redlock needs independent servers")
        assert "\n" not in message
        assert not lock.held
        assert values(group, lock_name) == [None, None]
        with pytest.raises(ConfigurationError, match="same server"):
            await call(rl.lock(lock_name, ttl=5).acquire(timeout=1.0))
        assert values(group, lock_name) == [None, None]

    api.run(body)


def test_a_read_of_one_server_under_two_names_is_refused(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """Servers a, a' (= a under another name), b, and the name held on a alone: read
    without the check, ``locked()`` would count a twice and say that a majority holds
    it. The reads of who holds and who leads raise as an acquire does, on a fresh
    Redlock (the check comes after the round that connects) and on the next read."""
    group = make_servers(2)
    a, b = group[0], group[1]
    urls = [a.url, f"redis://localhost:{a.port}", b.url]
    setter = client_of(a)
    setter.set(lock_name, "0123456789abcdef0123", px=30_000)
    setter.close()

    async def body() -> None:
        rl = api.redlock(urls, instance_timeout=1.0)
        with pytest.raises(ConfigurationError, match="same server"):
            await call(rl.lock(lock_name, ttl=5).locked())
        with pytest.raises(ConfigurationError, match="same server"):
            await call(rl.election(lock_name, ttl=5).leader())
        fresh = api.redlock(urls, instance_timeout=1.0)
        with pytest.raises(ConfigurationError, match="same server"):
            await call(fresh.election(lock_name, ttl=5).leader())

    api.run(body)


def test_independent_servers_behind_proxies_are_accepted(
    api: Api, make_servers: ServerFactory, proxies: list[LatencyProxy], lock_name: str
) -> None:
    """The check compares server processes, not addresses: three servers, each behind a
    proxy on the same loopback host, are three instances."""
    group = make_servers(3)
    urls = [other_names(server, "proxy", proxies) for server in group]

    async def body() -> None:
        rl = api.redlock(urls, max_ttl=None, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert await call(lock.release())

    api.run(body)
