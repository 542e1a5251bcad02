"""User code as a typed application writes it, checked by ``mypy --strict``.

Never run: ``tests/core/test_api_surface.py`` type-checks this file on its own (and
the project's mypy run checks it with the rest of ``tests/``). Each ``assert_type`` states
the type a user gets; each ``type: ignore[...]`` a mistake that must stay an error (with
``--warn-unused-ignores``, an ignore that is no longer needed fails the check too).
"""

from __future__ import annotations

import asyncio
import threading
from typing import assert_type

import redis
import redis.asyncio

import quorumlock
import quorumlock.asyncio
from quorumlock.testing import (
    LatencyProxy,
    LocalCluster,
    LocalSentinel,
    LocalServer,
    LocalServerGroup,
)


def sync_usage(rl: quorumlock.Redlock, fence: quorumlock.RedisFence) -> None:
    with rl.lock("orders:42", ttl=10) as lock:
        assert_type(lock, quorumlock.Lock)
        fence.execute(lock.fencing_token, "HINCRBY", "stock:42", "count", -1)
    with rl.rlock("orders:42", ttl=10) as rlock:
        assert_type(rlock, quorumlock.RLock)
        assert_type(rlock.depth, int)
    with rl.lock_many(["acct:1", "acct:2"], ttl=10) as many:
        assert_type(many, quorumlock.MultiLock)
        assert_type(many.names, tuple[str, ...])
    with rl.semaphore("exports", permits=4, ttl=30) as permit:
        assert_type(permit, quorumlock.Permit)
        assert_type(permit.slot, int | None)
    with rl.rwlock("doc:7", ttl=10).write() as writer:
        assert_type(writer, quorumlock.ReadWriteHold)
        writer.downgrade()
    rl.rwlock("doc:7", ttl=10, on_lost=lambda hold: print(hold.mode))
    rl.rwlock("doc:7", ttl=10, on_lost=lambda hold: print(hold.slot))  # type: ignore[attr-defined]
    with rl.election("scheduler", ttl=10).campaign() as term:
        assert_type(term, quorumlock.Term[quorumlock.Lock])
        assert_type(term.number, int)
        assert_type(term.lost, threading.Event)
    with quorumlock.Redlock(["redis://127.0.0.1:6379"]) as own:
        assert_type(own, quorumlock.Redlock)
    quorumlock.Redlock([redis.Redis(), "redis://127.0.0.1:6380"])
    quorumlock.Redlock(redis.Redis())
    quorumlock.Redlock([redis.asyncio.Redis()])  # type: ignore[list-item]
    quorumlock.Redlock(redis.asyncio.Redis())  # type: ignore[arg-type]
    print(lock.slot)  # type: ignore[attr-defined]


async def async_usage(rl: quorumlock.asyncio.Redlock, fence: quorumlock.asyncio.RedisFence) -> None:
    async with rl.lock("orders:42", ttl=10) as lock:
        assert_type(lock, quorumlock.asyncio.Lock)
        await fence.execute(lock.fencing_token, "HINCRBY", "stock:42", "count", -1)
    async with rl.rlock("orders:42", ttl=10) as rlock:
        assert_type(rlock, quorumlock.asyncio.RLock)
    async with rl.lock_many(["acct:1", "acct:2"], ttl=10) as many:
        assert_type(many, quorumlock.asyncio.MultiLock)
        assert_type(many.names, tuple[str, ...])
    async with rl.semaphore("exports", permits=4, ttl=30) as permit:
        assert_type(permit, quorumlock.asyncio.Permit)
        assert_type(permit.slot, int | None)
    async with rl.rwlock("doc:7", ttl=10).write() as writer:
        assert_type(writer, quorumlock.asyncio.ReadWriteHold)
        await writer.downgrade()
    rl.rwlock("doc:7", ttl=10, on_lost=lambda hold: print(hold.mode))
    rl.rwlock("doc:7", ttl=10, on_lost=lambda hold: print(hold.slot))  # type: ignore[attr-defined]
    async with rl.election("scheduler", ttl=10).campaign() as term:
        assert_type(term, quorumlock.Term[quorumlock.asyncio.Lock])
        assert_type(term.lost, asyncio.Event)
    async with quorumlock.asyncio.Redlock(["redis://127.0.0.1:6379"]) as own:
        assert_type(own, quorumlock.asyncio.Redlock)
    quorumlock.asyncio.Redlock([redis.asyncio.Redis(), "redis://127.0.0.1:6380"])
    quorumlock.asyncio.Redlock([redis.Redis()])  # type: ignore[list-item]


def testing_kit_usage(group: LocalServerGroup) -> None:
    assert_type(group[0], LocalServer)
    assert_type(group[-1], LocalServer)
    assert_type(group[:2], tuple[LocalServer, ...])
    for server in group[1:]:
        server.kill()
    assert_type(quorumlock.provision(group.urls), list[quorumlock.Provisioned])
    quorumlock.provision(group.urls[0])
    quorumlock.provision(group)  # type: ignore[arg-type]


def testing_kit_paths(directory: str, binary: str) -> None:
    """Paths as str, as a test's configuration holds them (a path object works too)."""
    LocalServer(directory=directory, binary=binary)
    LocalServerGroup(3, directory=directory, binary=binary)
    LocalCluster(3, directory=directory, binary=binary)
    LocalSentinel("127.0.0.1", 6379, directory=directory, binary=binary)


def testing_kit_context_managers(server: LocalServer) -> None:
    with LocalSentinel(server.host, server.port) as sentinel:
        assert_type(sentinel, LocalSentinel)
        sentinel.failover()
    with LocalServerGroup(3) as group:
        assert_type(group, LocalServerGroup)
    with LocalCluster(3) as cluster:
        assert_type(cluster, LocalCluster)
    with LatencyProxy(server.host, server.port) as proxy:
        assert_type(proxy, LatencyProxy)
