"""The reentrant lock (``Redlock.rlock``) on real servers, through both APIs.

The hold count lives on the client, keyed by the owning thread (sync) or task
(asyncio): a re-entry makes no round trip and keeps the token and the fencing token;
only the outermost release goes to the servers; another thread or task waits as any
other client does (docs/algorithm.md, "Reentrant lock").
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import textwrap
import time

import pytest

import quorumlock
import quorumlock.asyncio
from quorumlock import (
    LockLost,
    LockNotHeld,
    LockNotReentrant,
    LockObserver,
    QuorumUnavailable,
    Reply,
    RoundEvent,
)
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, decided, settled_values, values
from tests.integration.apis import Api, call, holding


class Rounds(LockObserver):
    """Counts the rounds (one command to every server) the Redlock makes."""

    def __init__(self) -> None:
        self.ops: list[str] = []

    def on_round(self, event: RoundEvent) -> None:
        self.ops.append(event.op)


def test_reentry_makes_no_round_and_keeps_the_tokens(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Nested ``with`` blocks of the owner: one acquire round, one release round, the
    same token and fencing token inside; the keys stay until the outermost block ends.
    Catches a re-entry that acquires again (a round, or LockNotReentrant) and an inner
    exit that releases."""
    rounds = Rounds()

    async def body() -> None:
        rl = api.redlock(servers.urls[:3], fencing=True, observer=rounds)
        lock = rl.rlock(lock_name, ttl=10)
        async with holding(lock):
            token, fence = lock.token, lock.fencing_token
            assert token is not None
            assert fence is not None
            before = list(rounds.ops)
            async with holding(lock):
                assert await call(lock.acquire())  # a third hold, by acquire()
                assert isinstance(lock, quorumlock.RLock | quorumlock.asyncio.RLock)
                assert lock.depth == 3
                assert (lock.token, lock.fencing_token) == (token, fence)
                assert await call(lock.release())  # an inner hold: no round
                assert rounds.ops == before  # no round trip for re-entries and inner exits
            assert values(list(servers)[:3], lock_name) == [token] * 3  # inner exit kept it
            assert lock.check() > 0
            assert lock.depth == 1
        assert values(list(servers)[:3], lock_name) == [None] * 3
        assert rounds.ops.count("release") == 1
        assert lock.depth == 0

    api.run(body)


def test_another_thread_or_task_waits_for_the_outermost_release(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A shared rlock object entered by another thread (sync) or task (asyncio) waits
    like any other client: not while the owner is only inside an inner block, but until
    the owner's outermost release. Catches reentrancy keyed by the object instead of
    the owner (the other thread would walk in)."""

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=10)
        order: list[str] = []

        async def other() -> None:
            assert not await call(lock.acquire(blocking=False))  # held by the owner
            async with holding(lock):
                order.append("other in")
                assert lock.depth == 1

        async with holding(lock):
            async with holding(lock):
                if api.flavour == "sync":
                    waiter = asyncio.get_running_loop().run_in_executor(
                        None, lambda: asyncio.run(other())
                    )
                else:
                    waiter = asyncio.ensure_future(other())
                await asyncio.sleep(0.3)
                assert order == []  # still waiting while the owner holds it (twice)
            await asyncio.sleep(0.2)
            assert order == []  # the inner exit released nothing
            order.append("owner out")
        await asyncio.wait_for(waiter, 10)
        assert order == ["owner out", "other in"]

    api.run(body)


def test_only_the_owner_may_release(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """A release from another thread or task raises LockNotHeld and keeps the lock."""

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=10)
        assert await call(lock.acquire())
        with pytest.raises(LockNotHeld, match="held by another"):
            await api.elsewhere(lock.release)
        assert lock.held
        assert await call(lock.release())
        assert values(list(servers)[:3], lock_name) == [None] * 3

    api.run(body)


def test_export_of_a_reentered_lock_is_refused(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """export() at depth 2 raises LockNotReentrant and changes nothing; at depth 1 it
    hands the lock over as a plain lock's export does."""

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=10)
        assert await call(lock.acquire())
        assert await call(lock.acquire())
        with pytest.raises(LockNotReentrant, match="re-entered"):
            await call(lock.export())
        assert lock.depth == 2
        assert lock.held
        assert await call(lock.release())
        handle = await call(lock.export())
        assert handle.token == lock.token
        assert lock.depth == 0
        adopted = rl.adopt(handle)
        assert await call(adopted.release())
        assert values(list(servers)[:3], lock_name) == [None] * 3

    api.run(body)


def test_the_lease_and_check_cover_the_whole_hold(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """With auto_extend, an rlock re-entered and held for several ttls stays held:
    check() passes in the innermost block, and the lease renewed it on a majority.
    Catches a re-entry or an inner exit that stops the lease."""

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)
        async with holding(lock):
            async with holding(lock):
                await asyncio.sleep(0.7)
            async with holding(lock):
                await asyncio.sleep(0.7)
                assert lock.check() > 0
            assert lock.extensions >= 2
            # A majority: a renewal that timed out on one server under load leaves the
            # key to expire there (an extension never re-creates a key), and the lock
            # is still held.
            assert values(list(servers)[:3], lock_name).count(lock.token) >= 2

    api.run(body)


def test_reentry_into_a_lost_hold_raises(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A re-entry after the outer hold ran out raises LockLost instead of running the
    inner block without the lock; the outermost release still cleans up."""

    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=0.3)
        assert await call(lock.acquire())
        deadline = time.monotonic() + 10
        while lock.validity > 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        with pytest.raises(LockLost):
            await call(lock.acquire())
        assert lock.depth == 1
        assert not await call(lock.release())
        assert lock.depth == 0

    api.run(body)


def test_rlock_options_are_checked_before_any_call(api: Api, servers: LocalServerGroup) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls[:3], max_ttl=5)
        with pytest.raises(quorumlock.ConfigurationError, match="max_ttl"):
            rl.rlock("test:x", ttl=6)
        with pytest.raises(TypeError):
            rl.rlock(7, ttl=1)  # type: ignore[arg-type]

    api.run(body)


def test_a_reentry_checks_its_arguments(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls[:3])
        lock = rl.rlock(lock_name, ttl=10)
        assert await call(lock.acquire())
        with pytest.raises(quorumlock.ConfigurationError, match="blocking=False"):
            await call(lock.acquire(blocking=False, timeout=1))
        assert lock.depth == 1
        assert "RLock" in repr(lock)
        assert await call(lock.release())

    api.run(body)


OTHER = "another-clients-token"


@pytest.mark.parametrize("n", [3, 5])
def test_every_subset_of_granting_servers(
    api: Api, servers: LocalServerGroup, lock_name: str, n: int
) -> None:
    """The outermost acquire is the lock's: for every subset of N servers that grant
    (the others hold the key for another client), acquired exactly when the subset is a
    majority, with no key of ours left after a failure; once held, a re-entry makes no
    round whatever the subset, and the outermost release removes the key from the
    subset."""
    group = list(servers)[:n]
    rounds = Rounds()

    async def body() -> None:
        rl = api.redlock([s.url for s in group], instance_timeout=0.5, observer=rounds)
        for size in range(n + 1):
            for granting in itertools.combinations(range(n), size):
                refusing = [group[i] for i in range(n) if i not in granting]
                for server in refusing:
                    client = client_of(server)
                    client.set(lock_name, OTHER, px=20_000)
                    client.close()
                lock = rl.rlock(lock_name, ttl=10)
                acquired = await call(lock.acquire(blocking=False))
                assert acquired == (size >= n // 2 + 1), (granting, lock.outcomes)
                if acquired:
                    expected = [Reply.GRANTED if i in granting else Reply.TAKEN for i in range(n)]
                    assert decided([o.reply for o in lock.outcomes], expected), lock.outcomes
                    before = len(rounds.ops)
                    assert await call(lock.acquire(blocking=False))  # re-entry
                    assert await call(lock.release())
                    assert len(rounds.ops) == before  # neither made a round
                    held = [lock.token if i in granting else OTHER for i in range(n)]
                    assert settled_values(group, lock_name, held) == held
                    assert await call(lock.release())
                # Released, or a failure undone: only the other client's keys are left.
                left = [None if i in granting else OTHER for i in range(n)]
                assert values(group, lock_name) == left, granting
                for server in group:
                    client = client_of(server)
                    client.delete(lock_name)
                    client.close()

    api.run(body)


def test_a_reentry_needs_no_server(api: Api, make_servers: ServerFactory, lock_name: str) -> None:
    """N = 5 with one server dead: acquired by the four others. Then every live server
    frozen (SIGSTOP): a re-entry still succeeds at once, with the same tokens, since it
    makes no round trip. Servers back: the outermost release removes the key. Three
    dead: the outermost acquire fails with QuorumUnavailable and leaves no key."""
    group = make_servers(5)

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.3, fencing=True)
        group[0].kill()
        lock = rl.rlock(lock_name, ttl=10)
        async with holding(lock):
            token, fence = lock.token, lock.fencing_token
            for server in list(group)[1:]:
                server.pause()
            try:
                started = time.monotonic()
                async with holding(lock):
                    assert (lock.token, lock.fencing_token) == (token, fence)
                    assert lock.depth == 2
                assert time.monotonic() - started < 0.3  # not even one instance timeout
            finally:
                for server in list(group)[1:]:
                    server.resume()
            assert values(list(group)[1:], lock_name) == [token] * 4
        assert values(list(group)[1:], lock_name) == [None] * 4
        group[1].kill()
        group[2].kill()
        with pytest.raises(QuorumUnavailable):
            await call(rl.rlock(lock_name, ttl=10).acquire(blocking=False))
        assert values(list(group)[3:], lock_name) == [None] * 2

    api.run(body)


def test_another_process_waits_for_the_outermost_release(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Another process's rlock of the same name is another client: refused while this
    process holds it, re-entered or not, and granted after the outermost release."""
    urls = servers.urls[:3]
    script = textwrap.dedent(
        f"""
        import quorumlock
        rl = quorumlock.Redlock({urls!r}, instance_timeout=0.5)
        print(rl.rlock({lock_name!r}, ttl=10).acquire(blocking=False))
        rl.close()
        """
    )

    def other_process() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    async def body() -> None:
        rl = api.redlock(urls)
        lock = rl.rlock(lock_name, ttl=10)
        async with holding(lock):
            async with holding(lock):
                assert other_process() == "False"
            assert other_process() == "False"  # the inner exit released nothing
        assert other_process() == "True"

    api.run(body)
