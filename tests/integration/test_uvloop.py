"""The asyncio API on uvloop's event loop (uvicorn runs on it when uvicorn[standard] is
installed): tasks taking turns on one name with wake-ups, a lease, and acquires cut
short by a timeout, on real servers. (tests/web/test_fastapi.py runs the FastAPI example's
uvicorn workers on uvloop too.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from quorumlock.asyncio import Redlock
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, settled

uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed (the test extra has it)")

#: The longest any test waits (a loaded machine).
WAIT = 30.0


def on_uvloop(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``body`` on a uvloop event loop, within :data:`WAIT` seconds."""

    async def bounded() -> None:
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        async with asyncio.timeout(WAIT):
            await body()

    uvloop.run(bounded())


def test_tasks_take_turns_on_one_name(servers: LocalServerGroup, lock_name: str) -> None:
    """Six tasks, ten blocking acquires each on one name (three of them through
    reentrant locks), each hold yielding to the others: every hold is made, never two
    at once."""
    inside = most = made = 0

    async def body() -> None:
        async with Redlock(servers.urls) as rl:

            async def work(n: int) -> None:
                nonlocal inside, most, made
                for _ in range(10):
                    kind = rl.rlock if n % 2 else rl.lock
                    async with kind(lock_name, ttl=5, timeout=WAIT):
                        inside += 1
                        most = max(most, inside)
                        await asyncio.sleep(0.002)
                        inside -= 1
                        made += 1

            await asyncio.gather(*(work(n) for n in range(6)))

    on_uvloop(body)
    assert (made, most) == (60, 1)


def test_the_lease_renews_on_uvloop(servers: LocalServerGroup, lock_name: str) -> None:
    """A lock of 1 s ttl with auto_extend, held through 2.5 s of sleep, is still owned at
    the end."""

    async def body() -> None:
        rl = Redlock(servers.urls)
        async with rl, rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=WAIT) as lock:
            await asyncio.sleep(2.5)
            assert not lock.lost.is_set()
            assert await lock.owned()

    on_uvloop(body)


def test_a_timeout_mid_round_leaves_no_key(servers: LocalServerGroup, lock_name: str) -> None:
    """Acquires and releases cut short by ``asyncio.timeout`` at every point of their
    rounds (the task is cancelled) leave no key on any server."""
    cut = 0
    prefix = f"{lock_name}:cut:"

    async def body() -> None:
        nonlocal cut
        async with Redlock(servers.urls) as rl:
            for i in range(200):
                lock = rl.lock(f"{prefix}{i}", ttl=30)
                try:
                    async with asyncio.timeout(0.00005 * (i % 20)):
                        if await lock.acquire(blocking=False):
                            await lock.release()
                except TimeoutError:
                    cut += 1

    on_uvloop(body)
    assert cut > 20  # the timeouts did cut rounds short

    def left() -> list[int]:
        counts = []
        for server in servers:
            client = client_of(server)
            counts.append(len(list(client.scan_iter(f"{prefix}*"))))
            client.close()
        return counts

    # a cancelled acquire's clean-up may still be on its way to a slow server
    assert settled(left, [0] * len(servers)) == [0] * len(servers)
