"""The legacy SETNX lock of the verify kit (``quorumlock.testing._legacy``), on a real
server: it does what the old recipe says, so that what the checker finds against it is
the recipe's fault and not the test kit's."""

from __future__ import annotations

import time

import redis

from quorumlock.testing import LocalServerGroup
from quorumlock.testing._legacy import LegacyLocks


def test_the_recipe(servers: LocalServerGroup) -> None:
    server = next(iter(servers))
    url = f"redis://{server.host}:{server.port}/0"
    a = LegacyLocks(url, timeout=2.0, retry_delay=0.01, seed=1)
    b = LegacyLocks(url, timeout=2.0, retry_delay=0.01, seed=2)
    raw = redis.Redis(host=server.host, port=server.port)
    try:
        first = a.lock("legacy:test", ttl=1.0)
        assert first.acquire(blocking=False)
        assert first.fencing_token is None
        assert first.validity <= 1.001
        stamp = int(raw.get("legacy:test") or 0)
        assert stamp > time.time() * 1000 - 1000  # a timestamp, in ms
        assert raw.pttl("legacy:test") == -1  # the key never expires: its value does

        second = b.lock("legacy:test", ttl=1.0)
        assert not second.acquire(blocking=False)  # SETNX 0, GET: not past yet
        # Once the timestamp is past, a waiter takes over with GETSET.
        assert second.acquire(blocking=True, timeout=5.0)
        taken_over = int(raw.get("legacy:test") or 0)
        assert taken_over > stamp
        # The first holder's own time is past: its release leaves the key alone.
        first.release()
        assert int(raw.get("legacy:test") or 0) == taken_over
        # The second one's is not: DEL.
        second.release()
        assert raw.get("legacy:test") is None
    finally:
        raw.close()
        a.close()
        b.close()


def test_a_dead_server_is_a_failed_try(servers: LocalServerGroup) -> None:
    server = next(iter(servers))
    # a port nothing listens on: the connection is refused at once
    lock = LegacyLocks(f"redis://{server.host}:1/0", timeout=0.2, retry_delay=0.01, seed=1).lock(
        "legacy:test", ttl=1.0
    )
    began = time.monotonic()
    assert not lock.acquire(blocking=True, timeout=0.3)
    assert time.monotonic() - began < 30  # bounded by the timeout, not by an error
    lock.release()  # nothing held: nothing to do
