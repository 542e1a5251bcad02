"""One asyncio ``Redlock`` and several event loops: one after another (``asyncio.run``
again), or at once, each in a thread of its own (a module-level ``Redlock`` used from
``asgiref.async_to_sync`` in threads, or from a thread pool's ``asyncio.run``).

Each event loop gets connections and subscriptions of its own; no loop's rounds touch
another loop's connections.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import warnings

import pytest

from quorumlock.asyncio import Redlock
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, values
from tests.integration.test_wake_one import until


def test_event_loops_running_at_once_in_threads_share_a_redlock(
    make_servers: ServerFactory, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Two threads, each running an event loop, lock and release names of their own
    through one Redlock: every acquire and every release succeeds at once (a loop took
    the other's connections away mid-round: releases went unconfirmed, their keys left
    to expire with the ttl and their names' next acquires waited for that), and each
    loop closes its own connections. (Servers of its own: another test's connections
    to shared ones may still be open.)"""
    servers = make_servers(3)
    caplog.set_level(logging.WARNING, logger="quorumlock")
    redlock = Redlock(servers.urls)
    failures: list[str] = []
    start = threading.Barrier(2)

    def worker(index: int) -> None:
        name = f"{lock_name}:{index}"

        async def cycles() -> None:
            start.wait(5)
            for cycle in range(100):
                lock = redlock.lock(name, ttl=10)
                if not await lock.acquire(blocking=False):
                    failures.append(f"{name}: acquire {cycle} refused")
                elif not await lock.release():
                    failures.append(f"{name}: release {cycle} not confirmed {lock.outcomes}")
                await asyncio.sleep(0)
            await redlock.close()

        try:
            asyncio.run(cycles())
        except BaseException as exc:  # reported in the main thread
            failures.append(f"{name}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    for index in range(2):
        assert values(servers, f"{lock_name}:{index}") == [None] * len(servers)
    for server in servers:
        client = client_of(server)
        assert len(client.client_list()) == 1  # this one: each loop closed its own
        client.close()


def test_close_after_the_event_loop_that_used_the_redlock_ended(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """``asyncio.run(redlock.close())`` once the loop that used it is gone (a fixture's
    teardown, a script's last line): it closes, and the Redlock works again after (it
    raised RuntimeError: Event loop is closed, from the old loop's connections)."""
    redlock = Redlock(servers.urls)

    async def use() -> None:
        async with redlock.lock(lock_name, ttl=10):
            pass
        held = redlock.lock(lock_name, ttl=10)
        assert await held.acquire(blocking=False)
        waiter = redlock.lock(lock_name, ttl=10)  # subscribes, stands in line
        assert not await waiter.acquire(timeout=0.2)
        assert await held.release()

    asyncio.run(use())
    asyncio.run(redlock.close())

    async def again() -> None:
        lock = redlock.lock(lock_name, ttl=10)
        async with lock:
            # a majority: the round ends there, the other servers may not have run it yet
            assert values(servers, lock_name).count(lock.token) >= 3
        await redlock.close()

    asyncio.run(again())
    assert values(servers, lock_name) == [None] * len(servers)


def test_a_lease_taken_on_an_event_loop_that_ended_is_released_on_the_next(
    servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An auto-extended lock acquired by ``asyncio.run(lock.acquire())``: its lease task
    ended with that loop. Its release on the next loop releases it, and the object can be
    acquired again (the release raised RuntimeError: Event loop is closed, and the object
    stayed held: LockNotReentrant until its validity ran out). The lease's end is said
    at once (it ended in silence: check() later blamed a stopped or busy process); a
    lease stopped by a release, or by the end of an ``async with`` block, says nothing."""
    caplog.set_level(logging.WARNING, logger="quorumlock")
    # Patient: on a loaded host, a round whose replies came late (a single attempt, a
    # release that returned False) is not what this test is about.
    redlock = Redlock(servers.urls, instance_timeout=0.5)
    lock = redlock.lock(lock_name, ttl=10, auto_extend=True, max_hold=60)

    async def acquire() -> None:
        assert await lock.acquire(blocking=False)

    async def release() -> None:
        assert await lock.release()
        # A server slower than the release's round (a loaded host) answers after it,
        # maybe NOSCRIPT (the fixture flushed the scripts): the release goes again there.
        gone = [None] * len(servers)
        await until(lambda: values(servers, lock_name) == gone, 5.0, "the release everywhere")
        assert values(servers, lock_name) == gone
        async with lock:
            assert lock.held
        await redlock.close()

    asyncio.run(acquire())
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1, warned
    assert f"the lease of lock '{lock_name}' was cancelled while the lock is held" in warned[0]
    assert "no longer renewed" in warned[0]
    caplog.clear()
    asyncio.run(release())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert values(servers, lock_name) == [None] * len(servers)


def test_the_lost_event_of_a_lock_and_of_a_term_serves_every_event_loop(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A lock object or an election made once (at module level) and used by one
    ``asyncio.run`` after another, each waiting on ``lost`` while it holds: the wait
    times out as it should (it raised RuntimeError: the event was bound to the first
    loop)."""
    redlock = Redlock(servers.urls)
    lock = redlock.lock(lock_name, ttl=10)
    election = redlock.election(lock_name + ":election", ttl=10)

    async def hold() -> None:
        async with lock:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(lock.lost.wait(), 0.05)
        async with election.campaign() as term:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(term.lost.wait(), 0.05)
        await redlock.close()

    for _ in range(2):
        asyncio.run(hold())
    assert values(servers, lock_name) == [None] * len(servers)


def test_locks_held_by_tasks_when_asyncio_run_ends_are_released(
    servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``asyncio.run`` ends while tasks are inside ``async with`` (one with a lease) or
    waiting for a taken lock: it cancels every task, and each releases what it holds or
    took before it ends (the connections' reader tasks were cancelled with them: the
    releases went unanswered, 'could not confirm the release', and the keys stayed until
    their ttl)."""
    caplog.set_level(logging.WARNING, logger="quorumlock")
    redlock = Redlock(servers.urls)
    names = [f"{lock_name}:{index}" for index in range(2)]
    entered: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    async def hold(name: str, **options: object) -> None:
        async with redlock.lock(name, ttl=30, **options):  # type: ignore[arg-type]
            entered.append(name)
            await asyncio.sleep(60)

    async def main() -> None:
        tasks.append(asyncio.create_task(hold(names[0])))
        tasks.append(asyncio.create_task(hold(names[1], auto_extend=True, max_hold=60)))
        await asyncio.sleep(0.2)
        tasks.append(asyncio.create_task(hold(names[0])))  # waits for the first
        await asyncio.sleep(0.2)

    asyncio.run(main())
    assert entered == names
    assert all(task.cancelled() for task in tasks)
    for name in names:
        assert values(servers, name) == [None] * len(servers)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_close_leaves_no_connection_for_the_garbage_collector_to_close(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """After ``await rl.close()`` every connection is closed: redis-py's connections
    warned ``ResourceWarning: unclosed Connection`` when collected (an error under
    ``-W error``, "Exception ignored" in their ``__del__``), one per server, because the
    closed connection's stream pair was left set on them. (Servers of its own, and only
    their connections counted: other tests' garbage may be collected meanwhile.)"""
    group = make_servers(3)
    ports = [f"port={server.port}," for server in group.servers]
    gc.collect()

    async def cycle() -> None:
        redlock = Redlock(group.urls)
        async with redlock.lock(lock_name, ttl=5):
            pass
        await redlock.close()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        asyncio.run(cycle())
        gc.collect()
    unclosed = [
        str(w.message)
        for w in caught
        if issubclass(w.category, ResourceWarning) and any(p in str(w.message) for p in ports)
    ]
    assert unclosed == []
