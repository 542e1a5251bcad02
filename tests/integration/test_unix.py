"""``unix://`` sockets: plain, with an ACL user and a database, and as client objects;
both APIs, on Valkey and Redis, with the restart quarantine and fencing on."""

from __future__ import annotations

import pytest
import redis
import redis.asyncio

from quorumlock import Reply
from quorumlock._io.incarnation import stamp_fresh
from quorumlock.testing import LocalServer
from tests.conftest import ServerFactory, ServerKind, binary_of
from tests.integration.apis import Api, AsyncApi, call
from tests.integration.test_acl import add_user, rule_for


@pytest.fixture
def unix_server(kind: ServerKind, make_servers: ServerFactory) -> LocalServer:
    server: LocalServer = make_servers(1, unixsocket=True, binary=binary_of(kind))[0]
    return server


def value_in(server: LocalServer, key: str, db: int) -> bytes | str | None:
    client = redis.Redis(unix_socket_path=str(server.unix_socket_path), db=db)
    try:
        return client.get(key)
    finally:
        client.close()


@pytest.mark.parametrize("user", [False, True])
def test_lock_over_a_unix_socket(api: Api, unix_server: LocalServer, user: bool) -> None:
    """``unix:///path.sock`` and ``unix://user:pw@/path.sock?db=2`` (an ACL user with the
    documented rule, plus SELECT for the database): the key lands in that database."""
    path = unix_server.unix_socket_path
    if user:
        add_user(unix_server, [*rule_for(unix_server), "+select"])
        # The marker lives in the database the URL selects: stamp database 2 as new, as
        # LocalServer stamps database 0 (an unstamped one is quarantined at first use).
        client = redis.Redis(unix_socket_path=str(path), db=2)
        stamp_fresh(client)
        client.close()
        url, label, db = f"unix://quorumlock:pw@{path}?db=2", f"unix://quorumlock@{path}?db=2", 2
    else:
        url, label, db = f"unix://{path}", f"unix://{path}", 0

    async def body() -> None:
        rl = api.redlock([url], fencing=True)
        assert rl.servers == [label]
        lock = rl.lock("locks:unix", ttl=5)
        assert await call(lock.acquire(blocking=False)), lock.outcomes
        assert [o.reply for o in lock.outcomes] == [Reply.GRANTED]
        assert value_in(unix_server, "locks:unix", db) == (lock.token or "").encode()
        assert await call(lock.extend()) > 4.0
        assert await call(lock.release())
        assert value_in(unix_server, "locks:unix", db) is None

    api.run(body)


def test_a_unix_socket_client_object(api: Api, unix_server: LocalServer) -> None:
    path = str(unix_server.unix_socket_path)
    client: redis.Redis | redis.asyncio.Redis
    if isinstance(api, AsyncApi):
        client = redis.asyncio.Redis(unix_socket_path=path)
    else:
        client = redis.Redis(unix_socket_path=path)

    async def body() -> None:
        rl = api.redlock([client])
        assert rl.servers == [f"unix://{path}"]
        lock = rl.lock("locks:unix", ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert await call(lock.release())

    api.run(body)
