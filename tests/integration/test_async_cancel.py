"""Cancellation of the asyncio API at every await.

Whatever await a cancellation hits (acquire, extend, release, the end of ``async with``),
no key is left behind on any server, nothing deadlocks, and ``CancelledError`` reaches
the canceller. The sweeps cancel after every number of event-loop steps and after small
delays, so that each await inside the fan-out is hit at least once.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import math
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from quorumlock import LockHandle, LockLost, QuorumUnavailable
from quorumlock._algorithm.scripts import RELEASE
from quorumlock.asyncio import Lock, Redlock
from quorumlock.testing import LatencyProxy, LocalServer, LocalServerGroup
from tests.conftest import ServerFactory, client_of, values
from tests.integration.test_rwlock import holds

Body = Callable[[], Coroutine[Any, Any, None]]


def run(body: Body, *, limit: float = 60.0) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(limit):
            await body()

    asyncio.run(bounded())


async def steps(count: int) -> None:
    """Let the event loop run ``count`` times."""
    for _ in range(count):
        await asyncio.sleep(0)


def no_key(group: LocalServerGroup | list[LocalServer], name: str) -> bool:
    return values(group, name) == [None] * len(group)


async def cancel_after(
    make: Callable[[], Coroutine[Any, Any, Any]], *, loop_steps: int = 0, delay: float = 0.0
) -> tuple[bool, object]:
    """Start ``make()`` as a task, let it run a little, cancel it, await it.

    Returns (cancelled, result): whether ``CancelledError`` came out of the task, and
    what it returned otherwise (it may have finished before the cancellation).
    """
    task = asyncio.get_running_loop().create_task(make())
    await steps(loop_steps)
    if delay:
        await asyncio.sleep(delay)
    task.cancel()
    try:
        result = await asyncio.wait_for(asyncio.shield(task), 10)
    except asyncio.CancelledError:
        assert task.cancelled()
        return True, None
    return False, result


# --------------------------------------------------------------------------------------
# acquire
# --------------------------------------------------------------------------------------


def test_cancelling_acquire_at_any_point_leaves_no_key(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        points = [(n, 0.0) for n in range(40)] + [(1, i * 50e-6) for i in range(41)]
        cancelled = finished = 0
        try:
            for loop_steps, delay in points:
                lock = rl.lock(lock_name, ttl=10)
                was_cancelled, result = await cancel_after(
                    lock.acquire, loop_steps=loop_steps, delay=delay
                )
                where = f"after {loop_steps} steps + {delay * 1e6:.0f} us"
                if was_cancelled:
                    cancelled += 1
                    assert not lock.held, where
                else:
                    finished += 1
                    assert result is True, where
                    assert await lock.release(), where
                assert no_key(servers, lock_name), f"a key was left behind {where}"
                fresh = rl.lock(lock_name, ttl=10)
                assert await fresh.acquire(blocking=False), where
                assert await fresh.release(), where
        finally:
            await rl.close()
        # The sweep did hit the acquire (it takes only a few loop steps: a round is one
        # write per server and one wait), and went all the way past its end.
        assert cancelled >= 3, (cancelled, finished)
        assert finished >= 1, (cancelled, finished)

    start = time.monotonic()
    run(body, limit=20)
    assert time.monotonic() - start < 20


def test_cancelling_the_first_acquire_while_connecting_leaves_no_key(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A new Redlock each time: the cancellation can land while connections open."""

    async def body() -> None:
        cancelled = 0
        for loop_steps in range(0, 40, 2):
            rl = Redlock(servers.urls, instance_timeout=1.0)
            try:
                lock = rl.lock(lock_name, ttl=10)
                was_cancelled, result = await cancel_after(lock.acquire, loop_steps=loop_steps)
                if was_cancelled:
                    cancelled += 1
                else:
                    assert result is True
                    assert await lock.release()
                assert no_key(servers, lock_name), f"key left after {loop_steps} steps"
                fresh = rl.lock(lock_name, ttl=10)
                assert await fresh.acquire(blocking=False)
                assert await fresh.release()
            finally:
                await rl.close()
        assert cancelled >= 3

    run(body, limit=20)


def test_a_cancelled_acquire_answered_noscript_is_not_sent_again(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Servers whose script cache lost the acquire script (not the release script) and
    whose replies take 0.1 s: an acquire cancelled after it was sent is undone by a
    release that runs at once, and the NOSCRIPT answers to the acquire come after that.
    The cancelled acquire is not sent again in its EVAL form: it would run after the
    release, and its key would stay on every server until its ttl."""
    group = list(servers)[:3]
    for server in group:
        client = client_of(server)
        client.script_flush()
        client.script_load(RELEASE.source)
        client.close()
    proxies = [LatencyProxy(server.host, server.port) for server in group]
    for proxy in proxies:
        proxy.start()

    async def body() -> None:
        rl = Redlock([proxy.url for proxy in proxies], instance_timeout=1.0)
        try:
            assert not await rl.lock(lock_name, ttl=10).locked()  # connections open
            for proxy in proxies:
                proxy.set_delay(0.05)
            lock = rl.lock(lock_name, ttl=30)
            was_cancelled, _ = await cancel_after(lock.acquire, delay=0.03)
            assert was_cancelled
            await asyncio.sleep(0.3)  # a NOSCRIPT and a second sending would be over
        finally:
            await rl.close()

    try:
        run(body, limit=20)
    finally:
        for proxy in proxies:
            proxy.close()
    assert no_key(group, lock_name)


@pytest.mark.slow
def test_cancelling_a_slow_acquire_leaves_no_key(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """One of three servers is frozen: every round lasts the whole instance timeout (0.5 s),
    since the connection to the frozen server stays "still connecting" throughout (a long
    connect timeout: one that ran out would end a round early with that server's outcome
    known), and every cancellation lands at least 0.2 s before a round's end."""
    group = make_servers(3)
    live = list(group)[:2]

    async def body() -> None:
        rl = Redlock(group.urls, instance_timeout=0.5, connect_timeout=60)
        try:
            for delay in (0.0, 0.01, 0.05, 0.1, 0.2, 0.3):
                lock = rl.lock(lock_name, ttl=10)
                started = time.monotonic()
                was_cancelled, _ = await cancel_after(lock.acquire, loop_steps=1, delay=delay)
                assert was_cancelled, f"the acquire ended within {delay} s"
                # Cancelled promptly: at most the cleanup round (one instance timeout).
                assert time.monotonic() - started < delay + 1.5
                assert not lock.held
                assert no_key(live, lock_name), f"a key was left behind after {delay} s"
                fresh = rl.lock(lock_name, ttl=10)
                assert await fresh.acquire(blocking=False), f"after {delay} s"
                assert await fresh.release()
        finally:
            await rl.close()

    group[2].pause()
    try:
        start = time.monotonic()
        run(body, limit=30)
        assert time.monotonic() - start < 30
    finally:
        group[2].resume()


def test_cancelling_a_blocking_acquire_in_its_retry_pause(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0, retry_delay=0.5)
        try:
            holder = rl.lock(lock_name, ttl=10)
            assert await holder.acquire()
            waiter = rl.lock(lock_name, ttl=10)
            started = time.monotonic()
            # First attempt and its cleanup take milliseconds; then the waiter pauses for
            # 0.25 s to 0.5 s before its next attempt: the cancellation lands there.
            was_cancelled, _ = await cancel_after(
                lambda: waiter.acquire(timeout=5), loop_steps=1, delay=0.1
            )
            assert was_cancelled
            assert time.monotonic() - started < 0.5
            assert not waiter.held
            # The waiter's cleanup never touches the holder's key.
            assert values(servers, lock_name) == [holder.token] * 5
            assert await holder.release()
            assert no_key(servers, lock_name)
            assert await waiter.acquire(blocking=False)
            assert await waiter.release()
        finally:
            await rl.close()

    run(body)


# --------------------------------------------------------------------------------------
# release
# --------------------------------------------------------------------------------------


def test_cancelling_release_at_any_point_still_releases(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        cancelled = 0
        try:
            # From 1 step: a task cancelled before it ever ran did not start a release.
            for loop_steps in range(1, 30):
                lock = rl.lock(lock_name, ttl=10)
                assert await lock.acquire()
                was_cancelled, result = await cancel_after(lock.release, loop_steps=loop_steps)
                if was_cancelled:
                    cancelled += 1
                else:
                    assert result is True
                assert no_key(servers, lock_name), f"key left after {loop_steps} steps"
                assert not lock.held
                with pytest.raises(RuntimeError):
                    await lock.release()
        finally:
            await rl.close()
        assert cancelled >= 1

    run(body, limit=20)


def test_cancelling_a_slow_release_completes_it_then_propagates(
    make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)
    live, frozen = list(group)[:1], list(group)[1:]

    async def body() -> None:
        rl = Redlock(group.urls, instance_timeout=0.3)
        try:
            lock = rl.lock(lock_name, ttl=10)
            assert await lock.acquire()
            assert values(group, lock_name) == [lock.token] * 3
            for server in frozen:  # no majority can confirm the release: it waits
                server.pause()
            started = time.monotonic()
            was_cancelled, _ = await cancel_after(lock.release, loop_steps=1, delay=0.05)
            assert was_cancelled, "CancelledError did not propagate"
            # It came out once the release round was over (it waits for the frozen
            # servers up to the instance timeout), not as soon as it was cancelled.
            assert time.monotonic() - started >= 0.2
            assert no_key(live, lock_name)
            assert not lock.held
        finally:
            await rl.close()

    try:
        run(body)
    finally:
        for server in frozen:
            server.resume()


def test_cancelling_release_of_an_auto_extended_lock_still_releases(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Regression: release() used to await the lease task's end outside _complete(), so a
    cancellation there left the keys, the lock held, and no lease task."""

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        try:
            lock = rl.lock(lock_name, ttl=10, auto_extend=True, max_hold=math.inf)
            assert await lock.acquire()
            was_cancelled, _ = await cancel_after(lock.release, loop_steps=1)
            assert was_cancelled
            assert not lock.held
            assert no_key(servers, lock_name)
        finally:
            await rl.close()

    run(body)


@pytest.mark.parametrize("auto_extend", [False, True], ids=["plain", "lease"])
def test_cancelling_a_hand_over_at_any_point_leaves_no_key(
    servers: LocalServerGroup, lock_name: str, auto_extend: bool
) -> None:
    """export() cancelled after every number of loop steps: either the handle comes
    back (its adopter releases the lock), or CancelledError does and no key is left.
    Regression: cancelled at its await (where the lease task, if any, is stopped),
    export() let the lock go and lost its handle, and the keys stayed to the ttl with
    nobody to release them."""

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        cancelled = 0
        try:
            for loop_steps in range(1, 6):
                lock = rl.lock(
                    lock_name,
                    ttl=10,
                    auto_extend=auto_extend,
                    max_hold=30 if auto_extend else None,
                )
                assert await lock.acquire()
                was_cancelled, handle = await cancel_after(lock.export, loop_steps=loop_steps)
                if was_cancelled:
                    cancelled += 1
                else:
                    assert isinstance(handle, LockHandle)
                    assert await rl.adopt(handle).release()
                assert not lock.held
                assert no_key(servers, lock_name), f"key left after {loop_steps} steps"
                assert await lock.acquire(blocking=False), "the object stayed taken"
                assert await lock.release()
        finally:
            await rl.close()
        assert cancelled >= 1

    run(body, limit=20)


def test_a_cancellation_during_async_with_exit_still_releases(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A cancellation (asyncio.timeout, a failing TaskGroup sibling) that reaches the task
    as ``async with`` exits. Regression: it interrupted __aexit__ before the release."""

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        try:
            lock = rl.lock(lock_name, ttl=10)

            async def worker() -> None:
                task = asyncio.current_task()
                assert task is not None
                async with lock:
                    # Lands at the first await of __aexit__, the moment the block ends.
                    asyncio.get_running_loop().call_soon(task.cancel)

            task = asyncio.get_running_loop().create_task(worker())
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), 10)
            assert task.cancelled()
            assert not lock.held
            assert no_key(servers, lock_name)
        finally:
            await rl.close()

    run(body)


# --------------------------------------------------------------------------------------
# extend
# --------------------------------------------------------------------------------------


def test_cancelling_extend_at_any_point_does_not_deadlock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        cancelled = 0
        try:
            for loop_steps in range(0, 25):
                lock = rl.lock(lock_name, ttl=10)
                assert await lock.acquire()
                was_cancelled, result = await cancel_after(
                    functools.partial(lock.extend, ttl=20), loop_steps=loop_steps
                )
                if was_cancelled:
                    cancelled += 1
                else:
                    assert isinstance(result, float)
                    assert result > 10
                assert lock.held
                assert values(servers, lock_name) == [lock.token] * 5
                # The lock stays usable: extend again, then release, all bounded.
                assert await asyncio.wait_for(lock.extend(), 5) > 0
                assert await asyncio.wait_for(lock.release(), 5) is True
                assert no_key(servers, lock_name), f"key left after {loop_steps} steps"
        finally:
            await rl.close()
        assert cancelled >= 1

    run(body, limit=20)


def test_a_cancelled_extend_never_leaves_more_validity_than_the_servers_give(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """``extend(ttl=1)`` of a lock acquired for 10 s, cancelled at every point: once the
    servers ran it, the keys expire within 1 s, and ``validity`` may not say more (it
    said the 10 s of the acquire: the holder went on believing it held a lock that anyone
    could take)."""

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        clients = [client_of(server) for server in servers]
        shortened = 0
        try:
            for loop_steps in range(0, 25):
                lock = rl.lock(lock_name, ttl=10)
                assert await lock.acquire()
                await cancel_after(functools.partial(lock.extend, ttl=1), loop_steps=loop_steps)
                validity, read = lock.validity, time.monotonic()
                expiries = [client.pttl(lock_name) / 1000 for client in clients]
                # the keys' ttls as the validity was read: the reads took time meanwhile
                late = time.monotonic() - read
                if max(expiries) <= 1:
                    shortened += 1
                median = sorted(expiries)[len(expiries) // 2]
                assert validity <= median + late, (loop_steps, expiries, late)
                assert await asyncio.wait_for(lock.release(), 5) is True
                assert no_key(servers, lock_name)
        finally:
            for client in clients:
                client.close()
            await rl.close()
        assert shortened >= 3

    run(body, limit=20)


def test_cancelling_a_slow_extend_of_an_auto_extended_lock(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A frozen server: the extend round is slow, and the lease task runs alongside."""
    group = make_servers(3)
    live = list(group)[:2]

    async def body() -> None:
        rl = Redlock(group.urls, instance_timeout=0.3)
        try:
            lock = rl.lock(lock_name, ttl=3, auto_extend=True, max_hold=math.inf)
            assert await lock.acquire()
            started = time.monotonic()
            was_cancelled, _ = await cancel_after(lock.extend, loop_steps=1, delay=0.1)
            assert was_cancelled
            assert time.monotonic() - started < 0.5  # no waiting for anything
            assert lock.held
            assert not lock.lost.is_set()
            assert await asyncio.wait_for(lock.release(), 5) is True
            assert no_key(live, lock_name)
            assert not lock.held
        finally:
            await rl.close()

    group[2].pause()
    try:
        run(body)
    finally:
        group[2].resume()


# --------------------------------------------------------------------------------------
# async with
# --------------------------------------------------------------------------------------


def test_cancelling_the_task_inside_async_with_releases_the_lock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    lost_calls: list[Lock] = []

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        try:
            lock = rl.lock(
                lock_name, ttl=1, auto_extend=True, max_hold=math.inf, on_lost=lost_calls.append
            )
            entered = asyncio.Event()
            leaving: list[BaseException] = []

            async def worker() -> None:
                async with lock:
                    entered.set()
                    try:
                        await asyncio.sleep(30)
                    except BaseException as exc:
                        leaving.append(exc)
                        raise

            task = asyncio.get_running_loop().create_task(worker())
            await asyncio.wait_for(entered.wait(), 5)
            await asyncio.sleep(0.5)  # at least one renewal went by
            assert values(servers, lock_name) == [lock.token] * 5
            task.cancel()
            with pytest.raises(asyncio.CancelledError):  # not LockLost
                await asyncio.wait_for(task, 5)
            assert task.cancelled()
            assert len(leaving) == 1
            assert isinstance(leaving[0], asyncio.CancelledError)
            assert no_key(servers, lock_name)
            assert not lock.held
            assert not lock.lost.is_set()
            await asyncio.sleep(0.5)  # no lease work after the release
            assert lost_calls == []
            assert no_key(servers, lock_name)
        finally:
            await rl.close()

    run(body)


def test_a_block_that_never_awaited_past_its_validity_reports_the_loss_once(
    servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A holder that blocks the event loop (no await) while the validity runs out: its
    lease's task can only run as the release stops it, and reports the loss then. The
    release says nothing more: it said "could not confirm the release (too few servers
    answered ...)", naming the acquire's answers, where every server answered."""

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        try:
            lock = rl.lock(lock_name, ttl=0.3)
            with pytest.raises(LockLost, match="expired"):
                async with lock:
                    time.sleep(0.6)  # no await: the lease's task cannot run meanwhile
        finally:
            await rl.close()
        assert no_key(servers, lock_name)

    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        run(body)
    said = [r.getMessage() for r in caplog.records if r.name == "quorumlock"]
    assert [m for m in said if "expired" in m] != []
    assert [m for m in said if "release" in m] == []


def test_cancelling_a_downgrade_at_any_point_leaves_the_hold_as_the_servers_have_it(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A downgrade is one round that turns the writer into a reader on the servers: once
    sent, it completes even if its task is cancelled, and the hold says what the servers
    hold (a downgrade cancelled after the servers ran it left a writer that the servers
    held as a reader: its next downgrade raised LockLost, reported the lock lost, and
    its release returned False)."""
    lost: list[Lock] = []

    async def body() -> None:
        rl = Redlock(servers.urls, instance_timeout=1.0)
        try:
            rw = rl.rwlock(lock_name, ttl=10, on_lost=lost.append)
            cancelled = 0
            for loop_steps in range(30):
                writer = rw.write()
                assert await writer.acquire(blocking=False)
                was_cancelled, _ = await cancel_after(writer.downgrade, loop_steps=loop_steps)
                cancelled += was_cancelled
                token = writer.token
                assert holds(servers, lock_name) == [[writer.mode[0] + str(token)]] * 5, (
                    f"after {loop_steps} steps"
                )
                if writer.mode == "write":
                    await writer.downgrade()
                assert holds(servers, lock_name) == [["r" + str(token)]] * 5
                assert await writer.release(), f"after {loop_steps} steps"
                assert holds(servers, lock_name) == [[]] * 5
                assert not writer.lost.is_set()
            assert cancelled >= 3
        finally:
            await rl.close()

    run(body)
    assert lost == []


# --------------------------------------------------------------------------------------
# frozen servers
# --------------------------------------------------------------------------------------


def test_connections_failing_to_frozen_servers_log_no_unretrieved_exception(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Two of three servers freeze under a Redlock that reached them: every round after
    that connects to them anew, and each connection fails by its connect timeout after
    the round has ended. asyncio logs a task whose exception nobody read as an error, a
    traceback per server and round ("Task exception was never retrieved"): none may."""
    group = make_servers(3)
    reported: list[dict[str, Any]] = []

    async def body() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(context))
        rl = Redlock(group.urls, instance_timeout=0.05, connect_timeout=0.3)
        try:
            warm = rl.lock(lock_name, ttl=10)
            assert await warm.acquire(blocking=False)
            assert await warm.release()
            group[0].pause()
            group[1].pause()
            for _ in range(3):
                with pytest.raises(QuorumUnavailable):
                    await rl.lock(lock_name, ttl=10).acquire(blocking=False)
                # past the connect timeout: the connections are dropped as stale, and
                # the connections the next round opens have failed by the one after
                await asyncio.sleep(0.5)
        finally:
            await rl.close()
        del rl
        gc.collect()
        await asyncio.sleep(0)

    try:
        run(body, limit=30)
    finally:
        group[0].resume()
        group[1].resume()
    messages = [context["message"] for context in reported]
    assert not any("never retrieved" in message for message in messages), messages
