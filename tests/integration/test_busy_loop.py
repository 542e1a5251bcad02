"""An event loop too busy to read: the servers answered in time, and their replies wait
unread in the socket while the loop runs other tasks. A round past its deadline reads
them before it gives its verdict (``quorumlock._io.async_fanout.unread_grace``), so
that the loop's own lateness never counts live servers as dead: an acquire is not
failed for want of a quorum, and a release is confirmed, not left to the ttl. Likewise
a command written late (held to the end of the loop's busy turn) gives its server its
timeout from the write, and a connection begun late its grace from the attempt's start.
"""

from __future__ import annotations

import asyncio
import collections
import time

import redis

from quorumlock import QuorumUnavailable
from quorumlock import asyncio as aio
from quorumlock.testing import LocalServerGroup


async def _take_and_release(rl: aio.Redlock, name: str) -> object:
    """True if taken (at once) and released, False if refused, or what it raised."""
    lock = rl.lock(name, ttl=60)
    try:
        return await lock.acquire(blocking=False) and await lock.release()
    except Exception as exc:
        return exc


async def _hold_the_turn(seconds: float) -> object:
    """A task whose first step holds its turn of the loop: the turn's own work."""
    time.sleep(seconds)  # on the loop's thread
    return "busy"


async def _warm(rl: aio.Redlock, name: str) -> None:
    """Connections open and scripts loaded (first contact has a grace of its own)."""
    lock = rl.lock(name, ttl=10)
    assert await lock.acquire(timeout=10)
    assert await lock.release()


def test_a_thousand_tasks_locking_at_once_are_not_failed_by_their_own_loop(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """1,000 tasks each lock a name of their own at once, with a per-server timeout (20
    ms) far shorter than the loop takes to read the 5,000 replies of a round: every
    acquire succeeds and every release is confirmed (before, most acquires failed with
    too few servers answering, and releases went unconfirmed)."""

    async def body() -> collections.Counter[str]:
        rl = aio.Redlock(servers.urls, instance_timeout=0.02)
        await _warm(rl, lock_name + ":warm")

        async def one(i: int) -> str:
            lock = rl.lock(f"{lock_name}:{i}", ttl=60)  # unread replies: up to 3 s more
            try:
                if not await lock.acquire(blocking=False):
                    return "refused"
                return "released" if await lock.release() else "unconfirmed"
            except Exception as exc:
                return type(exc).__name__

        results = await asyncio.gather(*(one(i) for i in range(1000)))
        await rl.close()
        return collections.Counter(results)

    assert asyncio.run(asyncio.wait_for(body(), 120)) == {"released": 1000}


def test_a_command_written_late_gives_its_server_its_timeout_from_the_write(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The servers pause (``CLIENT PAUSE``, 0.8 s). Two tasks then start their acquires
    in one turn of the loop, and a third holds that turn for 0.6 s: the first task's
    commands are written at once, the second's wait to the end of the turn (written
    together with others of the turn), after both deadlines (timeout 0.4 s). The second
    is granted (and released): its servers answer within their timeout from the write
    (before, its round ended as the turn did, no reply in time from any). The first is
    not: its servers had their timeout, and a slow server gets no more."""

    async def body() -> list[object]:
        rl = aio.Redlock(servers.urls, instance_timeout=0.4)
        await _warm(rl, lock_name + ":warm")

        for server in servers:
            with redis.Redis(host=server.host, port=server.port) as client:
                client.execute_command("CLIENT", "PAUSE", 800, "ALL")
        tasks = [
            asyncio.create_task(_take_and_release(rl, lock_name + ":first")),
            asyncio.create_task(_take_and_release(rl, lock_name + ":second")),
            asyncio.create_task(_hold_the_turn(0.6)),
        ]
        results = await asyncio.gather(*tasks)
        await rl.close()
        return results

    first, second, busy = asyncio.run(asyncio.wait_for(body(), 60))
    assert isinstance(first, QuorumUnavailable), first
    assert "no reply in time" in str(first)
    assert (second, busy) == (True, "busy")


def test_a_connection_begun_late_gets_its_time_from_its_start(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A new ``Redlock``'s first acquire starts in a turn of the loop that another task
    holds for 0.6 s: the connections it needs begin to open only after its first
    contact's grace (the connect timeout, 0.3 s) has passed. It is granted: the grace
    counts from the start of the attempt to connect (before, the round ended as the
    turn did, every server still connecting)."""

    async def body() -> list[object]:
        rl = aio.Redlock(servers.urls, connect_timeout=0.3)
        results = await asyncio.gather(
            asyncio.create_task(_take_and_release(rl, lock_name)),
            asyncio.create_task(_hold_the_turn(0.6)),
        )
        await rl.close()
        return list(results)

    assert asyncio.run(asyncio.wait_for(body(), 60)) == [True, "busy"]
