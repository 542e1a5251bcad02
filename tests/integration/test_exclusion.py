"""Mutual exclusion against real servers.

Threads and processes contend on one lock and check that no two holds overlap; stale
holders (expired, or whose key was lost) never touch the key of the current holder; a
blocking acquire honours its timeout and spreads its retries with jitter.
"""

from __future__ import annotations

import itertools
import logging
import math
import multiprocessing
import os
import random
import threading
import time
from typing import TYPE_CHECKING

import pytest

from quorumlock import LockLost, LockNotAcquired, QuorumUnavailable, Redlock, Reply
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, pttls, reports_of, slack, values

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

Interval = tuple[float, float]
WorkerResult = tuple[int, list[Interval], str]


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def wait_until_gone(group: LocalServerGroup, key: str, limit: float = 3.0) -> None:
    """Poll until ``key`` has expired on every server (bounded by ``limit`` seconds)."""
    give_up = time.monotonic() + limit
    while values(group, key) != [None] * len(group):
        assert time.monotonic() < give_up, f"{key} did not expire within {limit} s"
        time.sleep(0.02)


def delete_everywhere(group: LocalServerGroup, key: str) -> None:
    for server in group:
        client = client_of(server)
        client.delete(key)
        client.close()


def contend(
    urls: list[str], name: str, start_at: float, stop_at: float, results: Queue[WorkerResult]
) -> None:
    """Worker of the multi-process test (module level, so "spawn" can import it).

    Takes the lock again and again from ``start_at`` until ``stop_at`` (and until it got
    it once, bounded by ``stop_at + 5``), recording each hold as (just after acquire
    returned, just before release). ``time.monotonic()`` is CLOCK_MONOTONIC, one clock
    for every process on Linux, so the intervals of all workers can be compared.
    """
    intervals: list[Interval] = []
    error = ""
    try:
        rl = Redlock(urls, retry_delay=0.05, instance_timeout=0.5)
        rng = random.Random()
        while time.monotonic() < start_at:
            time.sleep(0.005)
        hard_stop = stop_at + 5.0
        while True:
            now = time.monotonic()
            if now >= hard_stop or (now >= stop_at and intervals):
                break
            lock = rl.lock(name, ttl=5)
            if not lock.acquire(timeout=1.0):
                continue
            begin = time.monotonic()
            time.sleep(0.003)
            end = time.monotonic()
            lock.release()
            intervals.append((begin, end))
            time.sleep(rng.uniform(0.01, 0.03))  # let the others in
        rl.close()
    except Exception as exc:
        error = repr(exc)
    results.put((os.getpid(), intervals, error))


# --------------------------------------------------------------------------------------
# contention
# --------------------------------------------------------------------------------------


def test_threads_sharing_one_redlock_never_hold_together(
    servers: LocalServerGroup, lock_name: str
) -> None:
    # A generous instance timeout: on a busy 2-core machine a thread may wait tens of ms
    # for the CPU, and this test is about exclusion, not latency.
    rl = Redlock(servers.urls, retry_delay=0.05, instance_timeout=1.0)
    guard = threading.Lock()
    counter = 0
    holders = 0
    sections = 0
    timeouts = 0
    violations: list[str] = []
    errors: list[BaseException] = []
    stop_at = time.monotonic() + 2.0

    def work() -> None:
        nonlocal counter, holders, sections, timeouts
        try:
            while time.monotonic() < stop_at:
                try:
                    with rl.lock(lock_name, ttl=5, timeout=3):
                        with guard:
                            holders += 1
                            if holders > 1:
                                violations.append(f"{holders} holders at {time.monotonic()}")
                        seen = counter  # read, pause, write: a second holder loses updates
                        time.sleep(0.001)
                        counter = seen + 1
                        with guard:
                            holders -= 1
                            sections += 1
                except QuorumUnavailable:
                    raise
                except LockNotAcquired:
                    with guard:
                        timeouts += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, name=f"contender-{i}") for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, stop_at + 3 + 10 - time.monotonic()))
    assert not [thread.name for thread in threads if thread.is_alive()]
    rl.close()
    assert errors == []
    assert violations == []
    assert sections > 0
    assert counter == sections  # no lost update


def test_concurrent_rounds_on_a_cold_redlock_each_get_a_connection(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Regression (fixed in d8c117f): concurrent rounds shared one connection attempt
    per server, and the one connection it made went to one round only; the others
    reported a healthy server as "timeout (still connecting)". A cold Redlock used by
    several threads thus refused acquires and sent releases nowhere (the key stayed for
    its ttl and the ``with`` block raised LockLost although the lock was held).
    """
    # Connections take a while to establish (here: the servers are frozen for 0.3 s, as
    # a slow TLS handshake would); eight threads start a round meanwhile, on eight
    # different names, so that nothing is contended.
    servers = make_servers(5)  # private: they are frozen for a moment
    rl = Redlock(servers.urls, instance_timeout=2.0)
    barrier = threading.Barrier(8 + 1, timeout=5)
    failures: list[str] = []

    def one(index: int) -> None:
        lock = rl.lock(f"{lock_name}:{index}", ttl=10)
        barrier.wait()
        try:
            if not lock.acquire(blocking=False):
                failures.append(f"{index}: refused")
            elif not lock.release():
                failures.append(f"{index}: release did not reach a majority")
        except Exception as exc:  # QuorumUnavailable, or a broken barrier
            failures.append(f"{index}: {exc!r}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for server in servers:
        server.pause()
    try:
        for thread in threads:
            thread.start()
        barrier.wait()
        time.sleep(0.3)
    finally:
        for server in servers:
            server.resume()
    for thread in threads:
        thread.join(timeout=10)
    assert not [thread for thread in threads if thread.is_alive()]
    rl.close()
    assert failures == []


def test_processes_never_hold_together(servers: LocalServerGroup, lock_name: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    results: Queue[WorkerResult] = ctx.Queue()
    start_at = time.monotonic() + 2.0  # time for the interpreters to start and import
    stop_at = start_at + 3.0
    workers = [
        ctx.Process(
            target=contend,
            args=(servers.urls, lock_name, start_at, stop_at, results),
            name=f"contender-{i}",
        )
        for i in range(4)
    ]
    collected = reports_of(workers, results, until=stop_at + 20)
    assert [error for _, _, error in collected if error] == []
    assert sorted(pid for pid, _, _ in collected) == sorted(w.pid for w in workers if w.pid)
    for pid, intervals, _ in collected:
        assert intervals, f"process {pid} never got the lock"
    holds = sorted((begin, end, pid) for pid, intervals, _ in collected for begin, end in intervals)
    overlaps = [
        (earlier, later) for earlier, later in itertools.pairwise(holds) if later[0] < earlier[1]
    ]
    assert overlaps == []
    assert values(servers, lock_name) == [None] * len(servers)


# --------------------------------------------------------------------------------------
# stale holders never touch the current holder's key
# --------------------------------------------------------------------------------------


def test_expired_holders_never_touch_the_new_holders_key(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, instance_timeout=1.0)
    n = len(servers)
    first = rl.lock(lock_name, ttl=0.3)
    assert first.acquire(blocking=False)
    wait_until_gone(servers, lock_name)
    second = rl.lock(lock_name, ttl=0.3)
    assert second.acquire(blocking=False)
    wait_until_gone(servers, lock_name)
    assert first.validity == 0.0
    assert second.validity == 0.0

    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    before = pttls(servers, lock_name)
    started = time.monotonic()

    # Release with a stale token: the compare-and-delete runs and refuses everywhere.
    assert first.release() is False
    assert [o.reply for o in first.outcomes] == [Reply.NOT_HELD] * n
    # Extend after the validity ran out: refused locally; the cleanup release (with the
    # stale token) refuses everywhere too.
    with pytest.raises(LockLost):
        second.extend()
    assert [o.reply for o in second.outcomes] == [Reply.NOT_HELD] * n
    assert not second.held

    # Neither is considered held afterwards.
    with pytest.raises(RuntimeError, match="does not hold it"):
        first.extend()
    assert second.release() is False  # it was lost with the extension: not an error
    with pytest.raises(RuntimeError, match="does not hold it"):
        second.extend()
    with pytest.raises(RuntimeError, match="does not hold it"):
        first.release()

    assert values(servers, lock_name) == [holder.token] * n
    after = pttls(servers, lock_name)
    waited_ms = (time.monotonic() - started) * 1000
    for was, now in zip(before, after, strict=True):
        assert was - waited_ms - 50 <= now <= was  # counting down, never reset
    assert holder.release()


def test_extend_with_a_lost_key_never_touches_the_new_holder(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, instance_timeout=1.0)
    n = len(servers)
    stale = rl.lock(lock_name, ttl=20)
    assert stale.acquire(blocking=False)
    delete_everywhere(servers, lock_name)  # the key is lost while `stale` is still valid
    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    before = pttls(servers, lock_name)
    started = time.monotonic()

    with pytest.raises(LockLost) as info:
        stale.extend()  # the extend script runs on every server and refuses
    assert [o.reply for o in info.value.outcomes] == [Reply.NOT_HELD] * n
    assert info.value.name == lock_name
    assert not stale.held
    assert stale.release() is False

    assert values(servers, lock_name) == [holder.token] * n
    after = pttls(servers, lock_name)
    waited_ms = (time.monotonic() - started) * 1000
    for was, now in zip(before, after, strict=True):
        assert was - waited_ms - 50 <= now <= was  # not reset to the stale 20 s
    assert holder.release()


def test_a_lease_found_lost_keeps_its_keys_while_the_holder_works(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A renewal that finds a majority "not held" reports the loss at once, but the
    holder was promised the lock until its deadline and may not look before then: the
    keys it still has, with the restart quarantine, keep everyone else out until the
    holder lets go. (Releasing them at the loss let a second leader in during the
    kill-restart nemesis.)"""
    group = make_servers(5)
    held, stale = list(group)[:2], list(group)[3:]
    for server in stale:  # someone else's stale key: the holder gets servers 0-2 only
        client = client_of(server)
        client.set(lock_name, "someone-else", px=300)
        client.close()
    rl = Redlock(group.urls, max_ttl=30.0, instance_timeout=0.5)
    other = Redlock(group.urls, max_ttl=30.0, instance_timeout=0.5)
    lock = rl.lock(lock_name, ttl=3.0, auto_extend=True, max_hold=math.inf)

    def work_through_the_loss() -> None:
        with lock:
            assert [o.reply for o in lock.outcomes] == [Reply.GRANTED] * 3 + [Reply.TAKEN] * 2
            promised = time.monotonic() + lock.validity
            group[2].restart()  # forgets the key, and is quarantined: it counts for nobody
            give_up = time.monotonic() + 2.0
            while values(stale, lock_name) != [None, None]:  # the stale keys expire
                assert time.monotonic() < give_up
                time.sleep(0.02)
            # The renewal, a third of the ttl in: "not held" on 2, 3 and 4.
            assert lock.lost.wait(3.0), "the renewal did not report the loss"
            assert time.monotonic() < promised - 1.0  # long before the deadline
            assert values(held, lock_name) == [lock.token] * 2
            refused = other.lock(lock_name, ttl=1.0)
            assert not refused.acquire(blocking=False)
            assert [o.reply for o in refused.outcomes] == [
                Reply.TAKEN,
                Reply.TAKEN,
                Reply.QUARANTINED,
                Reply.GRANTED,
                Reply.GRANTED,
            ]

    with pytest.raises(LockLost):  # from the end of the block: the loss is never silent
        work_through_the_loss()
    # The end of the block released the keys: the lock is free again at once.
    assert values(held, lock_name) == [None, None]
    assert other.lock(lock_name, ttl=1.0).acquire(blocking=False)
    rl.close()
    other.close()


def test_extend_never_recreates_an_expired_key(servers: LocalServerGroup, lock_name: str) -> None:
    rl = Redlock(servers.urls, instance_timeout=1.0)
    lock = rl.lock(lock_name, ttl=0.2)
    assert lock.acquire(blocking=False)
    time.sleep(0.4)
    with pytest.raises(LockLost):
        lock.extend()
    assert not lock.held
    assert values(servers, lock_name) == [None] * len(servers)

    # The same while the client still believes it holds the lock: the key vanished on
    # the servers; PEXPIRE inside the extend script must not bring it back.
    lock = rl.lock(lock_name, ttl=10)
    assert lock.acquire(blocking=False)
    delete_everywhere(servers, lock_name)
    with pytest.raises(LockLost) as info:
        lock.extend()
    assert [o.reply for o in info.value.outcomes] == [Reply.NOT_HELD] * len(servers)
    assert values(servers, lock_name) == [None] * len(servers)
    assert pttls(servers, lock_name) == [-2] * len(servers)


def test_with_block_that_ended_in_time_does_not_report_a_loss(
    make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)
    rl = Redlock(group.urls, instance_timeout=0.2)
    with rl.lock(lock_name, ttl=10) as lock:
        group[0].kill()
        group[1].kill()
        assert lock.validity > 5  # the whole block runs well inside the validity
    # The release could not reach a majority: the key on the live server is deleted,
    # the dead servers' keys are gone with them. Nothing was lost while the block ran.
    assert values([group[2]], lock_name) == [None]
    rl.close()


def test_with_block_reports_a_key_lost_on_the_servers(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, instance_timeout=1.0)
    with pytest.raises(LockLost), rl.lock(lock_name, ttl=10):
        delete_everywhere(servers, lock_name)  # gone: another client could take it now
    rl.close()


# --------------------------------------------------------------------------------------
# blocking acquire: timeout and retry jitter (R8)
# --------------------------------------------------------------------------------------


def test_blocking_acquire_gives_up_at_its_timeout(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, retry_delay=0.2, instance_timeout=1.0)
    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    waiter = rl.lock(lock_name, ttl=10)
    started = time.monotonic()
    assert waiter.acquire(timeout=0.6) is False
    elapsed = time.monotonic() - started
    assert 0.6 <= elapsed < 0.6 + 0.2 + 0.5
    assert not waiter.held
    assert values(servers, lock_name) == [holder.token] * len(servers)
    assert holder.release()


def test_blocking_acquire_gets_the_lock_once_it_is_released(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, retry_delay=0.2, instance_timeout=1.0)
    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    waiter = rl.lock(lock_name, ttl=10)
    releaser = threading.Timer(0.3, holder.release)
    started = time.monotonic()
    releaser.start()
    try:
        assert waiter.acquire(timeout=2.0)
        elapsed = time.monotonic() - started
    finally:
        releaser.join(timeout=5)
    assert 0.25 <= elapsed < 2.0
    # Held on a majority at least: woken by the first servers the release reached, the
    # waiter's attempt may come before the release on others (a busy machine) and be
    # refused there, where the release then deletes the holder's key.
    found = values(servers, lock_name)
    assert found.count(waiter.token) >= len(servers) // 2 + 1
    assert set(found) <= {waiter.token, None}
    assert waiter.release()


def test_retries_are_spread_by_jitter(
    servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="quorumlock")
    # The R8 pause, without the wake-ups (which retry once at once after subscribing).
    rl = Redlock(servers.urls, retry_delay=0.2, instance_timeout=1.0, wake_on_release=False)
    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire(blocking=False)
    waiter = rl.lock(lock_name, ttl=10)
    assert waiter.acquire(timeout=1.5) is False
    assert waiter.token is not None
    mark = waiter.token[:8]
    attempts = [
        record.created
        for record in caplog.records
        if record.name == "quorumlock"
        and record.getMessage().startswith("acquire")
        and mark in record.getMessage()
    ]
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts)]
    # The last pause is cut short so that the final attempt happens at the timeout.
    *full, last = gaps
    assert len(full) >= 3
    # Each full gap is a pause uniform in [0.1, 0.2] s plus two quick rounds (the
    # cleanup release and the next attempt): their cost is measured, not assumed.
    rounds = slack(servers[0], rounds=2)
    assert all(0.1 <= gap <= 0.2 + rounds for gap in full), [round(gap, 4) for gap in full]
    assert len({round(gap, 3) for gap in full}) >= 3, full
    assert 0 < last <= 0.2 + rounds
    assert holder.release()
