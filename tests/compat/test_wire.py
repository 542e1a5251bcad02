"""quorumlock and node-redlock on the same keys, one step at a time.

Each test runs against every node-redlock version (``node_redlock``) and every quorumlock
setup (``setup``: the page's Redlock alone, the defaults with the restart quarantine, and
with fencing tokens too), over N = 3 real servers. Losing a lock without its holder
knowing (an expiry, a lost key) is simulated by deleting the key on every server, so
that the foreign release and extend scripts meet a key that holds someone else's token.
"""

from __future__ import annotations

import pytest

from quorumlock import LockLost
from quorumlock._algorithm.scripts import EXTEND, MARKER_KEY, RELEASE
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.compat.conftest import Setup
from tests.compat.nodekit import NodeRedlock, NodeSession
from tests.conftest import client_of, pttls, values

TTL_MS = 10_000


def first_three(servers: LocalServerGroup) -> list[LocalServer]:
    return list(servers)[:3]


def markers(group: list[LocalServer]) -> list[dict[bytes | str, bytes | str]]:
    result = []
    for server in group:
        client = client_of(server)
        result.append(client.hgetall(MARKER_KEY))
        client.close()
    return result


def delete_everywhere(group: list[LocalServer], key: str) -> None:
    """The holder's key is gone (as after an expiry), and the holder does not know."""
    for server in group:
        client = client_of(server)
        client.delete(key)
        client.close()


def test_node_redlock_is_refused_while_quorumlock_holds(
    node_redlock: NodeRedlock, setup: Setup, servers: LocalServerGroup, lock_name: str
) -> None:
    group = first_three(servers)
    rl = setup.redlock([s.url for s in group])
    lock = rl.lock(lock_name, ttl=TTL_MS / 1000)
    assert lock.acquire(blocking=False)
    assert lock.token is not None
    with NodeSession(node_redlock, [s.url for s in group]) as node:
        assert node.acquire("n", lock_name, TTL_MS) is None
        # its failed attempt's cleanup (compare-and-delete) left our key alone
        assert values(group, lock_name) == [lock.token] * 3
        assert lock.release()
        value = node.acquire("n", lock_name, TTL_MS)
        assert value is not None
        assert values(group, lock_name) == [value] * 3
        assert node.release("n")
    assert values(group, lock_name) == [None] * 3
    rl.close()


def test_quorumlock_is_refused_while_node_redlock_holds(
    node_redlock: NodeRedlock, setup: Setup, servers: LocalServerGroup, lock_name: str
) -> None:
    group = first_three(servers)
    rl = setup.redlock([s.url for s in group])
    before = markers(group)
    with NodeSession(node_redlock, [s.url for s in group]) as node:
        value = node.acquire("n", lock_name, TTL_MS)
        assert value is not None
        assert markers(group) == before  # node-redlock never touches quorumlock's marker
        lock = rl.lock(lock_name, ttl=TTL_MS / 1000)
        assert not lock.acquire(blocking=False)
        assert not lock.held
        # our failed attempt's cleanup (compare-and-delete on all) left node-redlock's key
        assert values(group, lock_name) == [value] * 3
        assert node.release("n")
        assert values(group, lock_name) == [None] * 3
        assert lock.acquire(blocking=False)
        assert lock.release()
    rl.close()


def test_node_redlock_extend_and_release_leave_quorumlock_key_alone(
    node_redlock: NodeRedlock, setup: Setup, servers: LocalServerGroup, lock_name: str
) -> None:
    group = first_three(servers)
    rl = setup.redlock([s.url for s in group])
    with NodeSession(node_redlock, [s.url for s in group]) as node:
        assert node.acquire("n", lock_name, TTL_MS) is not None
        delete_everywhere(group, lock_name)  # node-redlock's lock is gone; it does not know
        lock = rl.lock(lock_name, ttl=TTL_MS / 1000)
        assert lock.acquire(blocking=False)
        assert not node.extend("n", 6 * TTL_MS)  # its compare-and-set finds our token
        assert values(group, lock_name) == [lock.token] * 3
        assert all(0 < pttl <= TTL_MS for pttl in pttls(group, lock_name)), "ttl was reset"
        assert not node.release("n")  # its compare-and-delete finds our token
        assert values(group, lock_name) == [lock.token] * 3
        assert lock.release()
    rl.close()


def test_quorumlock_extend_and_release_leave_node_redlock_key_alone(
    node_redlock: NodeRedlock, setup: Setup, servers: LocalServerGroup, lock_name: str
) -> None:
    group = first_three(servers)
    rl = setup.redlock([s.url for s in group])
    with NodeSession(node_redlock, [s.url for s in group]) as node:
        # release: a stale quorumlock holder after node-redlock took the name
        stale = rl.lock(lock_name, ttl=TTL_MS / 1000)
        assert stale.acquire(blocking=False)
        delete_everywhere(group, lock_name)
        value = node.acquire("n1", lock_name, TTL_MS)
        assert value is not None
        assert stale.release() is False
        assert values(group, lock_name) == [value] * 3
        assert node.release("n1")

        # extend: the same, and the LockLost path's own release leaves the key too
        stale = rl.lock(lock_name, ttl=TTL_MS / 1000)
        assert stale.acquire(blocking=False)
        delete_everywhere(group, lock_name)
        value = node.acquire("n2", lock_name, TTL_MS)
        assert value is not None
        with pytest.raises(LockLost):
            stale.extend(ttl=6 * TTL_MS / 1000)  # 60 s: within max_ttl
        assert values(group, lock_name) == [value] * 3
        assert all(0 < pttl <= TTL_MS for pttl in pttls(group, lock_name)), "ttl was reset"
        assert node.release("n2")  # node-redlock still held all three
    rl.close()


def test_values_are_plain_strings_and_scripts_compare_them(
    node_redlock: NodeRedlock, setup: Setup, servers: LocalServerGroup, lock_name: str
) -> None:
    """GET on a quorumlock lock returns our token, as text; quorumlock's compare-and-delete
    and compare-and-pexpire take node-redlock's value, and only the right one."""
    group = first_three(servers)
    rl = setup.redlock([s.url for s in group])
    lock = rl.lock(lock_name, ttl=TTL_MS / 1000)
    assert lock.acquire(blocking=False)
    token = lock.token
    assert token is not None
    assert token.isascii()
    assert token.isprintable()
    for server in group:
        client = client_of(server)
        assert client.type(lock_name) == b"string"
        assert client.get(lock_name) == token.encode()
        client.close()
    assert lock.release()

    with NodeSession(node_redlock, [s.url for s in group]) as node:
        value = node.acquire("n", lock_name, TTL_MS)
        assert value is not None
        for server in group:
            client = client_of(server)
            assert client.eval(RELEASE.source, 1, lock_name, value + "x") == 0
            assert client.eval(EXTEND.source, 1, lock_name, value[:-1], 6 * TTL_MS) == 0
            assert client.get(lock_name) == value.encode()
            assert client.pttl(lock_name) <= TTL_MS
            assert client.eval(EXTEND.source, 1, lock_name, value, 6 * TTL_MS) == 1
            assert client.pttl(lock_name) > TTL_MS
            assert client.eval(RELEASE.source, 1, lock_name, value) == 1
            assert client.exists(lock_name) == 0
            client.close()
    rl.close()
