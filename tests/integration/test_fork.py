"""After ``os.fork()`` the child does not hold the parent's locks (Linux).

The child reports what it saw through its exit code (one bit per failed check) and
leaves with ``os._exit``, so that no atexit hook, buffered output or pytest machinery of
the parent runs twice.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable

import pytest

import quorumlock._sync
import quorumlock.asyncio
from quorumlock import Lock, Redlock
from quorumlock._io import forks
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, held_on_every_server, values

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not hasattr(os, "fork"), reason="os.fork on Linux"
)


def fork(child: Callable[[], int]) -> int:
    """Run ``child()`` in a forked process; return the child's pid (parent only)."""
    with warnings.catch_warnings():
        # Python 3.12+ warns that the process has threads (our lease thread, at least).
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 255
        try:
            code = child()
        except BaseException:
            # os._exit below would swallow it: on stderr, pytest shows it with the failure
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(code)
    return pid


def wait_child(pid: int, limit: float) -> int:
    """The exit code of child ``pid``; SIGKILL it (and fail) after ``limit`` seconds."""
    give_up = time.monotonic() + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > give_up:
            os.kill(pid, signal.SIGKILL)  # our own child, by pid
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child did not finish within {limit} s (deadlock?)")
        time.sleep(0.02)


def child_checks(rl: Redlock, lock: Lock, name: str, lost_calls: list[Lock]) -> int:
    """What the child must see of the parent's lock; a bit per failed check."""
    failed = 0
    if lock.held or lock.validity != 0.0:
        failed |= 1
    try:
        lock.release()
        failed |= 2
    except RuntimeError:
        pass
    except BaseException:
        failed |= 2
    try:
        lock.check()
        failed |= 4
    except RuntimeError:
        pass
    except BaseException:  # LockLost would say the child had held it
        failed |= 4
    extensions = lock.extensions
    time.sleep(1.2)  # more than a renewal period: the child must not renew
    if lock.extensions != extensions or lock.held or lock.lost.is_set():
        failed |= 8
    if lost_calls:
        failed |= 16
    # The child can use the Redlock: the parent's lock is taken, other names are free.
    try:
        if rl.lock(name, ttl=1).acquire(blocking=False):
            failed |= 32
        other = rl.lock(name + ":child", ttl=1)
        if not (other.acquire(blocking=False) and other.release()):
            failed |= 64
    except BaseException:
        failed |= 32 | 64
    return failed


def test_the_child_does_not_hold_the_parents_lock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    lost_calls: list[Lock] = []
    rl = Redlock(servers.urls, instance_timeout=0.5)
    try:
        lock = rl.lock(
            lock_name, ttl=1, auto_extend=True, max_hold=math.inf, on_lost=lost_calls.append
        )
        assert lock.acquire()
        token = lock.token
        forked_at = time.monotonic()
        pid = fork(lambda: child_checks(rl, lock, lock_name, lost_calls))
        extensions_at_fork = lock.extensions
        code = wait_child(pid, 20)
        assert code == 0, f"failed checks in the child: {code:#04x} (see child_checks)"
        # The parent still holds its lock 2.5 s later: renewal ran on in the parent only.
        time.sleep(max(0.0, forked_at + 2.5 - time.monotonic()))
        assert lock.held
        assert not lock.lost.is_set()
        assert lost_calls == []
        assert lock.extensions >= extensions_at_fork + 4
        assert values(servers, lock_name) == [token] * 5
        assert lock.release()
        assert values(servers, lock_name) == [None] * 5
    finally:
        rl.close()


@pytest.mark.slow
def test_fork_during_a_renewal_round(make_servers: ServerFactory, lock_name: str) -> None:
    """Forked while the lease thread is mid-round (holding the lock's mutex): the child
    must not inherit that mutex locked, nor the round."""
    group = make_servers(3)
    lost_calls: list[Lock] = []
    rl = Redlock(group.urls, instance_timeout=0.5, connect_timeout=5.0)
    try:
        warm_up = rl.lock(lock_name + ":warm-up", ttl=3)
        assert warm_up.acquire()
        assert warm_up.extend()
        assert warm_up.release()
        group[2].pause()  # every round now waits 0.5 s for it
        lock = rl.lock(
            lock_name, ttl=3, auto_extend=True, max_hold=math.inf, on_lost=lost_calls.append
        )
        assert lock.acquire()
        token = lock.token
        # Wait until a renewal reached the live servers (their pttl jumps back up) while
        # its round still waits for the frozen one.
        probe = client_of(group[0])
        previous = int(probe.pttl(lock_name))
        give_up = time.monotonic() + 3.0
        while True:
            time.sleep(0.005)
            current = int(probe.pttl(lock_name))
            if current > previous + 100:
                break
            previous = current
            assert time.monotonic() < give_up, "no renewal started"
        probe.close()
        assert lock.extensions == 0, "the renewal round ended before the fork"
        pid = fork(lambda: child_checks(rl, lock, lock_name, lost_calls))
        code = wait_child(pid, 20)
        assert code == 0, f"failed checks in the child: {code:#04x} (see child_checks)"
        assert lock.held
        assert lock.extensions >= 1
        assert values(list(group)[:2], lock_name) == [token] * 2
        assert lock.release()
        assert values(list(group)[:2], lock_name) == [None] * 2
    finally:
        rl.close()
        if group[2].paused:
            group[2].resume()


def test_a_child_can_lock_with_the_asyncio_api(servers: LocalServerGroup, lock_name: str) -> None:
    """The asyncio Redlock of the parent works in a child's own event loop."""
    parent_rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=0.5)

    async def use_once(name: str) -> bool:
        lock = parent_rl.lock(name, ttl=2)
        return await lock.acquire(blocking=False) and await lock.release()

    assert asyncio.run(use_once(lock_name + ":parent"))

    def child() -> int:
        try:
            return 0 if asyncio.run(use_once(lock_name + ":child")) else 1
        except BaseException:
            return 2

    code = wait_child(fork(child), 20)
    assert code == 0
    assert values(servers, lock_name + ":child") == [None] * 5

    async def use_and_close() -> bool:
        try:
            return await use_once(lock_name + ":parent")
        finally:
            await parent_rl.close()

    assert asyncio.run(use_and_close())


def test_a_child_opens_connections_of_its_own(servers: LocalServerGroup, lock_name: str) -> None:
    """The pools know a forked child by its process id (kept without a system call per
    use, set anew at the fork): the child's first cycle opens a connection to every
    server instead of speaking on the parent's idle ones, which the parent still owns."""
    rl = Redlock(servers.urls, instance_timeout=2.0)  # patient: the child connects anew
    lock = rl.lock(lock_name, ttl=5)
    assert lock.acquire(blocking=False)
    assert lock.release()  # its connections are idle in the pools now

    def child() -> int:
        failed = 0 if os.getpid() == forks.PID else 1
        clients = [client_of(server) for server in servers]
        before = [len(c.client_list()) for c in clients]
        mine = rl.lock(lock_name + ":child", ttl=5)
        if not (mine.acquire(blocking=False) and mine.release()):
            failed |= 2
        after = [len(c.client_list()) for c in clients]
        if after != [n + 1 for n in before]:
            failed |= 4
        return failed

    assert wait_child(fork(child), 30) == 0
    assert lock.acquire(blocking=False)  # the parent's pools still work
    assert lock.release()
    rl.close()


def test_a_child_that_closes_leaves_its_parents_entries_in_line(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The parent's release put its process in line behind the waiter it named (one
    that is gone); a forked child that closes the Redlock it inherited takes nothing off
    the queues: that entry is the parent's, which closes it later."""
    queue = "quorumlock:queue:" + lock_name
    rl = Redlock(servers.urls)
    other = Redlock(servers.urls)
    first, second = other.lock(lock_name, ttl=5), rl.lock(lock_name, ttl=5)
    assert first.acquire(blocking=False)
    released = []

    def release_later() -> None:
        give_up = time.monotonic() + 10
        while min(int(client_of(s).zcard(queue)) for s in servers) < 1:
            assert time.monotonic() < give_up
            time.sleep(0.005)
        released.append(first.release())

    thread = threading.Thread(target=release_later, daemon=True)
    thread.start()
    assert second.acquire(timeout=10)  # the parent waited: it listens to the name now
    thread.join(10)
    assert released == [True]
    # held anew, on every server (the acquire that waited may have met a release in
    # flight on one of them); nobody in line: this release puts the parent nowhere
    assert second.release()
    second = held_on_every_server(servers, lambda: rl.lock(lock_name, ttl=5))
    for server in servers:
        client_of(server).zadd(queue, {"gone-waiter": 0})
        expiry = "quorumlock:queue-expiry:" + lock_name
        seconds, _ = client_of(server).time()
        client_of(server).zadd(expiry, {"gone-waiter": (int(seconds) + 60) * 1000})
    assert second.release()  # names the gone waiter, and puts the parent in line
    lines = [client_of(s).zrange(queue, 0, -1) for s in servers]
    assert len({tuple(line) for line in lines}) == 1
    assert len(lines[0]) == 1

    def child() -> int:
        rl.close()
        return 0 if [client_of(s).zrange(queue, 0, -1) for s in servers] == lines else 1

    assert wait_child(fork(child), 30) == 0
    assert [client_of(s).zrange(queue, 0, -1) for s in servers] == lines
    rl.close()  # the parent's own close takes it off
    assert [client_of(s).zcard(queue) for s in servers] == [0] * len(servers.urls)
    other.close()


def _inner_locks(rl: Redlock) -> list[threading.Lock]:
    """The locks a thread of the parent holds for a moment while it uses ``rl`` (its
    wakeups hub, lease thread, connection pools, same-server check), and the module's."""
    fanout = rl._fanout
    mux = rl._wakeups._mux
    assert mux is not None  # a thread of the parent waits: the subscriber thread runs
    return [
        mux._ending,
        rl._wakeups._lock,
        rl._keeper._mutex,
        rl._occupied_mutex,
        fanout.same_server._mutex,
        *(node._mutex for node in fanout._instances),
        quorumlock._sync._LOST_MUTEX,
    ]


def test_a_child_forked_while_parent_threads_use_the_redlock_does_not_hang(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A parent thread waiting for a lock, renewing one or connecting holds the
    Redlock's inner locks for moments; a fork in such a moment (a thread of the parent
    forks while others lock, as with ``multiprocessing``) must not leave them taken in
    the child, where no thread would ever let them go: its first acquire, a waiting
    one and an auto-extended one must work."""
    rl = Redlock(servers.urls, instance_timeout=0.5, connect_timeout=5.0)
    holder = rl.lock(lock_name, ttl=60)
    assert holder.acquire(blocking=False)
    second = rl.lock(lock_name, ttl=5)
    waiter = threading.Thread(target=lambda: second.acquire(timeout=40) and second.release())
    waiter.start()  # the parent's wakeups hub and its subscriber thread are at work
    give_up = time.monotonic() + 10
    while rl._wakeups._mux is None:
        assert time.monotonic() < give_up, "the waiter never listened"
        time.sleep(0.01)
    taken, let_go = threading.Event(), threading.Event()

    def hold_them() -> None:
        locks = _inner_locks(rl)
        for mutex in locks:
            mutex.acquire()
        taken.set()
        let_go.wait(30)
        for mutex in reversed(locks):
            mutex.release()

    thread = threading.Thread(target=hold_them, daemon=True)
    thread.start()
    assert taken.wait(10)

    def child() -> int:
        failed = 0
        rl.close()  # closes nothing of the parent's; the Redlock is usable again
        mine = rl.lock(lock_name + ":child", ttl=5, auto_extend=True, max_hold=math.inf)
        if not (mine.acquire(timeout=5) and mine.release()):
            failed |= 1
        if rl.lock(lock_name, ttl=5).acquire(timeout=0.3):  # the parent holds it
            failed |= 2
        return failed

    try:
        pid = fork(child)
    finally:
        let_go.set()
    try:
        assert wait_child(pid, 20) == 0
    finally:
        thread.join(10)
        assert holder.release()
        waiter.join(15)
        rl.close()


def test_an_asyncio_child_does_not_hold_the_parents_lock(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """asyncio: a lock the parent holds (and one it lost) is not the forked child's: the
    child sees it free, its release raises LockNotHeld instead of deleting the parent's
    keys (the parent went on believing it held a lock gone from the servers), and an
    acquire of it in the child is a contender's."""
    rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=0.5)
    lock = rl.lock(lock_name, ttl=30)
    lost = rl.lock(lock_name + ":lost", ttl=30)

    async def take() -> None:
        assert await lock.acquire(blocking=False)
        assert await lost.acquire(blocking=False)
        lost._state.lost = True  # as a failed renewal leaves it, its keys still there

    asyncio.run(take())
    token = lock.token

    def child() -> int:
        async def check() -> int:
            failed = 0 if not lock.held and lock.validity == 0.0 else 1
            for mine in (lock, lost):
                try:
                    await mine.release()
                    failed |= 2
                except quorumlock.LockNotHeld:
                    pass
            if await lock.acquire(blocking=False):
                failed |= 4
            return failed

        return asyncio.run(check())

    assert wait_child(fork(child), 20) == 0
    assert values(servers, lock_name) == [token] * len(servers)
    assert lock.held

    async def release() -> None:
        assert await lock.release()
        assert await lost.release() is False
        await rl.close()

    asyncio.run(release())
    assert values(servers, lock_name) == [None] * len(servers)
