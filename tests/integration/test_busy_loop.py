"""An event loop too busy to read: the servers answered in time, and their replies wait
unread in the socket while the loop runs other tasks. A round past its deadline reads
them before it gives its verdict (``quorumlock._io.async_fanout.unread_grace``), so
that the loop's own lateness never counts live servers as dead: an acquire is not
failed for want of a quorum, and a release is confirmed, not left to the ttl.
"""

from __future__ import annotations

import asyncio
import collections

from quorumlock import asyncio as aio
from quorumlock.testing import LocalServerGroup


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
