"""What a refused acquire costs on real servers: one round, and an undo only where a
grant of ours may have been written (docs/algorithm.md, "N servers", R6 step 5).

The servers count what they run: every quorumlock command here is a script (the
acquire script with the restart quarantine on, the default; the release script), so the
scripts each server ran during an attempt (``INFO commandstats``: EVALSHA calls that
did not fail, plus EVAL calls) are exactly its rounds.
"""

from __future__ import annotations

from collections.abc import Sequence

from quorumlock import Reply
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.conftest import client_of, values
from tests.integration.apis import Api, call


def scripts_run(group: Sequence[LocalServer]) -> list[int]:
    """How many scripts each server has run so far."""
    result = []
    for server in group:
        client = client_of(server)
        stats = client.info("commandstats")
        client.close()
        evalsha = stats.get("cmdstat_evalsha", {})
        ran = int(evalsha.get("calls", 0)) - int(evalsha.get("failed_calls", 0))
        result.append(ran + int(stats.get("cmdstat_eval", {}).get("calls", 0)))
    return result


def test_a_refusal_by_another_holder_costs_one_script_per_server_and_no_undo(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    group = list(servers)

    async def body() -> None:
        holder_rl = api.redlock(servers.urls, instance_timeout=1.0)
        contender_rl = api.redlock(servers.urls, instance_timeout=1.0)
        holder = holder_rl.lock(lock_name, ttl=10)
        contender = contender_rl.lock(lock_name, ttl=10)
        # Both scripts cached and both clients connected before counting.
        warm = contender_rl.lock(lock_name + ":warm", ttl=10)
        assert await call(warm.acquire(blocking=False))
        assert await call(warm.release())
        assert await call(holder.acquire(blocking=False))
        before = scripts_run(group)
        assert not await call(contender.acquire(blocking=False))
        after = scripts_run(group)
        assert [o.reply for o in contender.outcomes] == [Reply.TAKEN] * len(group)
        # The acquire script only: no release round followed the refusal.
        assert [b - a for a, b in zip(before, after, strict=True)] == [1] * len(group)
        assert values(group, lock_name) == [holder.token] * len(group)
        assert await call(holder.release())
        await call(holder_rl.close())
        await call(contender_rl.close())

    api.run(body)


def test_a_split_attempt_is_undone_where_it_was_granted_only(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    group = list(servers)
    rest = group[2:]

    async def body() -> None:
        holder_rl = api.redlock([s.url for s in rest], instance_timeout=1.0)
        contender_rl = api.redlock(servers.urls, instance_timeout=1.0)
        holder = holder_rl.lock(lock_name, ttl=10)  # on 3 of the 5 servers only
        contender = contender_rl.lock(lock_name, ttl=10)
        warm = contender_rl.lock(lock_name + ":warm", ttl=10)
        assert await call(warm.acquire(blocking=False))
        assert await call(warm.release())
        assert await call(holder.acquire(blocking=False))
        before = scripts_run(group)
        assert not await call(contender.acquire(blocking=False))
        after = scripts_run(group)
        replies = [o.reply for o in contender.outcomes]
        assert replies == [Reply.GRANTED] * 2 + [Reply.TAKEN] * 3
        # Acquire then undo where granted; the acquire alone where the holder refused it.
        ran = [b - a for a, b in zip(before, after, strict=True)]
        assert ran == [2, 2, 1, 1, 1]
        # The grants were taken back; the holder's keys were not touched.
        assert values(group, lock_name) == [None, None] + [holder.token] * 3
        assert await call(holder.release())
        await call(holder_rl.close())
        await call(contender_rl.close())

    api.run(body)
