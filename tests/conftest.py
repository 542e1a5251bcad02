"""Fixtures shared by the real-server tests: servers are real processes on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from quorumlock.testing import LocalServer, LocalServerGroup

ServerFactory = Callable[..., LocalServerGroup]


@pytest.fixture(scope="session")
def shared_servers() -> Iterator[LocalServerGroup]:
    """Five healthy servers for the whole session. Tests must not break them."""
    with LocalServerGroup(5) as group:
        yield group


@pytest.fixture
def servers(shared_servers: LocalServerGroup) -> LocalServerGroup:
    """The shared five servers, emptied before the test."""
    for server in shared_servers:
        if not server.running:  # a test broke the rule: bring it back
            server.start()
        server.reset()  # empty, and marked new: no restart quarantine follows the flush
        client = redis.Redis(host=server.host, port=server.port)
        client.script_flush()
        client.close()
    return shared_servers


@pytest.fixture
def make_servers() -> Iterator[ServerFactory]:
    """A factory of private server groups for tests that kill, pause or restart them."""
    groups: list[LocalServerGroup] = []

    def make(count: int, **options: Any) -> LocalServerGroup:
        group = LocalServerGroup(count, **options)
        groups.append(group)
        group.start()
        return group

    yield make
    for group in groups:
        group.close()


@pytest.fixture
def lock_name() -> str:
    return f"test:{uuid.uuid4().hex[:12]}"


def client_of(server: LocalServer) -> redis.Redis:
    return redis.Redis(host=server.host, port=server.port, socket_timeout=2)


def values(group: LocalServerGroup | list[LocalServer], key: str) -> list[str | None]:
    """The value of ``key`` on every server of ``group`` (None where absent)."""
    result: list[str | None] = []
    for server in group:
        client = client_of(server)
        raw = client.get(key)
        client.close()
        assert raw is None or isinstance(raw, bytes)
        result.append(None if raw is None else raw.decode())
    return result
