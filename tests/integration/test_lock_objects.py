"""Lock objects under misuse and sharing, each body run against both APIs.

A lock object shared by threads (sync) or tasks (asyncio) serialises its acquires; the
same thread or task acquiring a name it holds is refused at once; copies, pickles, long
names, bad options and inconsistent handles are refused before any network call;
``locked()`` and ``owned()`` ask the servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import dis
import functools
import gc
import itertools
import linecache
import logging
import math
import os
import pickle
import random
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from types import FrameType
from typing import Any, ClassVar, Final

import pytest
from billiard.exceptions import SoftTimeLimitExceeded

import quorumlock
import quorumlock.asyncio
from quorumlock import (
    ConfigurationError,
    LockHandle,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    QuorumLockError,
    QuorumUnavailable,
    _sync,
)
from quorumlock._algorithm.flows import Fanout, Op
from quorumlock._io import fanout
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, values
from tests.core.test_mutex_let_go import InterruptAsCallReturns
from tests.integration.apis import AnyLock, Api, call, holding


def majority_value(servers: LocalServerGroup, key: str) -> str | None:
    """The value a majority of the servers holds for ``key`` (None if no majority)."""
    found = values(servers, key)
    for value in set(found):
        if value is not None and found.count(value) > len(found) // 2:
            return value
    return None


# --------------------------------------------------------------------------------------
# a shared object takes turns
# --------------------------------------------------------------------------------------


def test_shared_object_serialises_its_holders(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Two threads/tasks entering one module-level lock object hold it in turns, each with
    its own token on the servers, none losing it, and leave no key behind."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        shared = rl.lock(lock_name, ttl=5)
        spans: list[tuple[float, float]] = []
        tokens: list[str] = []

        async def worker() -> None:
            for _ in range(3):
                async with holding(shared) as lock:
                    start = time.monotonic()
                    assert lock.token is not None
                    assert majority_value(servers, lock_name) == lock.token
                    tokens.append(lock.token)
                    await asyncio.sleep(0.05)
                    assert majority_value(servers, lock_name) == lock.token
                    spans.append((start, time.monotonic()))

        await api.concurrently([worker, worker], limit=60)
        assert len(spans) == 6
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, "two holders of one object at once"
        assert len(set(tokens)) == 6, "an acquisition reused another's token"
        assert values(servers, lock_name) == [None] * len(servers)
        assert not shared.held

    api.run(body)


def test_concurrent_acquires_of_one_object(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """``gather(lk.acquire(timeout=1), lk.acquire(timeout=1))``: one acquires, the other
    waits its own timeout for the object and gets False; the token on the servers is the
    holder's, and its release leaves no key behind."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lk = rl.lock(lock_name, ttl=10)
        results: list[bool] = []

        async def attempt() -> None:
            results.append(await call(lk.acquire(timeout=1)))

        await api.concurrently([attempt, attempt], limit=30)
        assert sorted(results) == [False, True]
        assert lk.held
        assert majority_value(servers, lock_name) == lk.token
        assert await call(lk.release()) is True
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


def test_waiter_on_a_held_object(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """While one thread/task holds the object: a non-blocking acquire elsewhere returns
    False at once, a bounded one gives up after its timeout, neither touches the holder's
    acquisition; a blocking one gets the object once it is released (from yet another
    thread/task: the object is the owner) and holds its own acquisition."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lk = rl.lock(lock_name, ttl=10)
        assert await call(lk.acquire())
        first = lk.token
        assert await api.elsewhere(lambda: lk.acquire(blocking=False)) is False
        started = time.monotonic()
        assert await api.elsewhere(lambda: lk.acquire(timeout=0.3)) is False
        assert time.monotonic() - started >= 0.3
        assert lk.token == first
        assert majority_value(servers, lock_name) == first

        got: list[bool] = []
        if api.flavour == "sync":
            assert isinstance(lk, quorumlock.Lock)
            sync_lk = lk
            waiter = threading.Thread(target=lambda: got.append(sync_lk.acquire(timeout=20)))
            waiter.start()
            time.sleep(0.2)
            assert not got  # still waiting for the object
            assert await api.elsewhere(sync_lk.release) is True
            waiter.join(timeout=25)
            assert not waiter.is_alive()
        else:
            assert isinstance(lk, quorumlock.asyncio.Lock)
            async_lk = lk
            task = asyncio.create_task(async_lk.acquire(timeout=20))
            await asyncio.sleep(0.2)
            assert not task.done()
            assert await asyncio.create_task(async_lk.release()) is True  # another task
            got.append(await asyncio.wait_for(task, 25))
        assert got == [True]
        assert lk.token != first
        assert majority_value(servers, lock_name) == lk.token
        assert await call(lk.release()) is True
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


def test_with_block_ends_only_its_own_acquisition(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Released inside a ``with`` block, then acquired by another thread/task: leaving
    the block does not release the other one's acquisition."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lk = rl.lock(lock_name, ttl=10)
        async with holding(lk):
            first = lk.token
            assert await call(lk.release()) is True
            assert await api.elsewhere(lambda: lk.acquire(timeout=5)) is True
            assert lk.token != first
        assert lk.held
        assert majority_value(servers, lock_name) == lk.token
        assert await call(lk.release()) is True
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


def test_with_block_ends_the_acquisition_its_own_thread_made_in_it(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Released inside a ``with`` block, then acquired again by the same thread/task:
    leaving the block releases it, as a ``threading.Lock``'s block does. (It stayed
    held, and with ``max_hold=math.inf`` its lease renewed it for ever.)"""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lk = rl.lock(lock_name, ttl=2, auto_extend=True, max_hold=math.inf)
        async with holding(lk):
            first = lk.token
            assert await call(lk.release()) is True
            assert await call(lk.acquire(timeout=5)) is True
            assert lk.token != first
        assert not lk.held
        assert values(servers, lock_name) == [None] * len(servers)
        other = rl.lock(lock_name, ttl=2)
        assert await call(other.acquire(blocking=False)) is True
        assert await call(other.release()) is True

    api.run(body)


def test_cancelled_waiter_leaves_no_key(servers: LocalServerGroup, lock_name: str) -> None:
    """asyncio: a task cancelled while it waits for a shared object sends nothing; the
    holder's release removes its key and the object can be acquired again."""

    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            lk = rl.lock(lock_name, ttl=10)
            assert await lk.acquire()
            holder = lk.token
            waiters = [asyncio.create_task(lk.acquire()) for _ in range(2)]
            waiters.append(asyncio.create_task(lk.acquire(timeout=30)))
            await asyncio.sleep(0.2)
            for task in waiters:
                task.cancel()
            for task in waiters:
                with pytest.raises(asyncio.CancelledError):
                    await task
            assert lk.token == holder
            assert await lk.release() is True
            assert values(servers, lock_name) == [None] * len(servers)
            assert await lk.acquire(blocking=False)
            assert await lk.release() is True

    asyncio.run(body())


def test_a_release_leaves_another_tasks_acquire_alone(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """asyncio: a release of a shared object while another task's acquire of it waits for
    the name raises LockNotHeld and frees nothing: a third task still finds the object
    taken, and the acquire goes on to hold the lock with its own token."""

    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            other = rl.lock(lock_name, ttl=10)
            assert await other.acquire()
            lk = rl.lock(lock_name, ttl=10)
            acquiring = asyncio.create_task(lk.acquire(timeout=20))
            await asyncio.sleep(0.2)
            assert not acquiring.done()
            with pytest.raises(LockNotHeld):
                await asyncio.create_task(lk.release())
            assert await asyncio.create_task(lk.acquire(blocking=False)) is False
            assert await other.release() is True
            assert await asyncio.wait_for(acquiring, 25) is True
            assert majority_value(servers, lock_name) == lk.token
            assert await lk.release() is True
            assert values(servers, lock_name) == [None] * len(servers)

    asyncio.run(body())


def test_an_interrupt_as_the_acquire_ends_leaves_no_key(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync: a KeyboardInterrupt that comes after the acquire's round, as the object
    begins to hold the lock (its lease scheduled), deletes the keys the round set: the
    object holds nothing, is free for the next acquire, and no key is left."""
    begin_holding = quorumlock.Lock._start_holding

    def interrupted(lock: quorumlock.Lock) -> None:
        begin_holding(lock)
        raise KeyboardInterrupt

    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        lk = rl.lock(lock_name, ttl=10, auto_extend=True, max_hold=30)
        monkeypatch.setattr(quorumlock.Lock, "_start_holding", interrupted)
        with pytest.raises(KeyboardInterrupt):
            lk.acquire()
        monkeypatch.undo()
        assert not lk.held
        assert values(servers, lock_name) == [None] * len(servers)
        taken: list[bool] = []
        other = threading.Thread(target=lambda: taken.append(lk.acquire(timeout=5)))
        other.start()
        other.join(timeout=10)
        assert taken == [True]
        assert majority_value(servers, lock_name) == lk.token
        assert lk.release() is True
        assert values(servers, lock_name) == [None] * len(servers)
    finally:
        rl.close()


@pytest.mark.parametrize("how", ["release", "with"])
def test_an_interrupt_as_the_release_begins_leaves_no_key(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """sync: a SIGTERM handler that raises SystemExit (or a KeyboardInterrupt) just
    before the release's round goes out: the release deletes the keys all the same
    before the exception goes on (they stayed to the ttl, and a second release raised
    LockNotHeld), and the object is free."""
    send_round = quorumlock.Redlock._round
    interrupts: list[Op] = []

    def interrupted(rl: quorumlock.Redlock, step: Fanout, waiter: object) -> object:
        if step.op is Op.RELEASE and not interrupts:
            interrupts.append(step.op)
            raise SystemExit(143)
        return send_round(rl, step, waiter)  # type: ignore[arg-type]

    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        lk = rl.lock(lock_name, ttl=30, auto_extend=True, max_hold=60)

        def hold_and_release() -> None:
            if how == "release":
                assert lk.acquire(blocking=False)
                assert majority_value(servers, lock_name) == lk.token
                monkeypatch.setattr(quorumlock.Redlock, "_round", interrupted)
                lk.release()
            else:
                with lk:
                    assert majority_value(servers, lock_name) == lk.token
                    monkeypatch.setattr(quorumlock.Redlock, "_round", interrupted)

        with pytest.raises(SystemExit):
            hold_and_release()
        monkeypatch.undo()
        assert interrupts == [Op.RELEASE]
        assert not lk.held
        assert values(servers, lock_name) == [None] * len(servers)
        assert lk.acquire(blocking=False)
        assert lk.release() is True
    finally:
        rl.close()


def assert_freed(lk: quorumlock.Lock, servers: LocalServerGroup, name: str) -> None:
    """After an interrupted call: ``lk`` holds nothing, no server has its key, and the
    object can be acquired again."""
    assert not lk.held
    assert values(servers, name) == [None] * len(servers)
    assert lk.acquire(blocking=False)
    assert lk.release()


class _InterruptOnce:
    """Stands for the module's set of held locks: its first ``discard`` raises
    KeyboardInterrupt, as a signal handler's exception does at any call."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.fired = False

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.real, attr)

    def discard(self, item: Any) -> None:
        if not self.fired:
            self.fired = True
            raise KeyboardInterrupt
        self.real.discard(item)


@pytest.mark.parametrize("where", ["release begins", "with ends"])
def test_an_interrupt_before_the_release_round_still_releases(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """sync: a KeyboardInterrupt that comes as ``release()`` begins, before its round
    (the lease already told to stop), or at the end of a ``with`` block before the
    release is called: the keys are deleted all the same before it goes on (they stayed
    held, and the lease stopped), and the object is free."""

    def interrupted(lock: quorumlock.Lock) -> bool:
        monkeypatch.undo()
        raise KeyboardInterrupt

    def hold_and_release() -> None:
        if where == "release begins":
            assert lk.acquire(blocking=False)
            monkeypatch.setattr(_sync, "_HELD", _InterruptOnce(_sync._HELD))
            lk.release()
        else:
            with lk:
                monkeypatch.setattr(quorumlock.Lock, "release", interrupted)

    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        lk = rl.lock(lock_name, ttl=30, auto_extend=True, max_hold=60)
        with pytest.raises(KeyboardInterrupt):
            hold_and_release()
        monkeypatch.undo()
        assert_freed(lk, servers, lock_name)
    finally:
        rl.close()


@pytest.mark.parametrize("interrupt", [SystemExit, KeyboardInterrupt, SoftTimeLimitExceeded])
def test_asyncio_an_interrupt_after_the_acquire_round_deletes_the_keys(
    servers: LocalServerGroup, lock_name: str, interrupt: type[BaseException]
) -> None:
    """asyncio: a signal handler's exception (a SIGTERM handler's SystemExit, a
    KeyboardInterrupt where the event loop does not turn SIGINT into a cancellation,
    Celery's soft time limit) raised in the task as the acquire's round ended, every
    server having granted it: the keys are deleted before it goes on (they stayed to
    the ttl: only a cancellation cleaned up), and it comes out of the event loop."""
    rounds: list[Op] = []

    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            hook = rl._after_round

            def interrupted(step: Fanout, round_: Any) -> None:
                hook(step, round_)
                rounds.append(step.op)
                if step.op is Op.ACQUIRE:
                    raise interrupt

            rl._after_round = interrupted
            await rl.lock(lock_name, ttl=30).acquire()

    with pytest.raises(interrupt):
        asyncio.run(body())
    assert rounds[0] is Op.ACQUIRE
    assert Op.RELEASE in rounds  # the clean-up, in the same task
    assert values(servers, lock_name) == [None] * len(servers)


def test_asyncio_an_acquire_closed_unfinished_closes_cleanly(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """asyncio: an acquire's coroutine closed at its first await (GeneratorExit: a task
    collected unfinished, a coroutine driven by hand) ends at once; the clean-up an
    interrupt gets would await, and Python would raise "coroutine ignored
    GeneratorExit"."""

    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            lk = rl.lock(lock_name, ttl=10)
            attempt = lk.acquire()
            attempt.send(None)  # to its first await
            attempt.close()
            assert not lk.held
            assert await lk.acquire(blocking=False), "the object stayed taken"
            assert await lk.release()

    asyncio.run(body())


def test_an_unexpected_error_in_the_acquire_round_deletes_the_keys(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync: an error that is not quorumlock's own comes out of the acquire's round after
    every server granted it (CPython's threading raises ``RuntimeError: release unlocked
    lock`` in place of a KeyboardInterrupt that comes as a connection's thread starts):
    the keys are deleted before it goes on (they stayed to the ttl), and the object is
    free."""
    collect = fanout._PollRound._collect
    raised: list[str] = []

    def failing(round_: Any) -> None:
        collect(round_)
        if round_.step.op is Op.ACQUIRE and not raised:
            raised.append(lock_name)
            raise RuntimeError("release unlocked lock")

    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        lk = rl.lock(lock_name, ttl=30)
        assert not lk.locked()  # connections made
        monkeypatch.setattr(fanout._PollRound, "_collect", failing)
        with pytest.raises(RuntimeError, match="release unlocked lock"):
            lk.acquire()
        monkeypatch.undo()
        assert raised == [lock_name]
        assert_freed(lk, servers, lock_name)
    finally:
        rl.close()


#: Where a coroutine's "return" event says it suspends at an await: at the yield up to
#: CPython 3.12, at the RESUME that follows it from 3.13 on.
SUSPENSIONS: Final = ("YIELD_VALUE", "SEND", "RESUME")

#: From CPython 3.13 on, a trace function's exception at a loop's jump back (a "line"
#: event there) skips the handlers that cover the loop, a ``with`` block's exit among
#: them, where a signal handler's exception at that jump is caught: the sweeps leave
#: these points out there (the package's loops are checked for the jumps where a
#: signal's exception escapes too, by tests/core/test_loops_in_handlers.py).
TRACED_JUMPS_ESCAPE: Final = sys.version_info >= (3, 13)


class InterruptAt:
    """A trace function that raises ``error`` (a KeyboardInterrupt unless told) at the
    ``at``-th point of the lock objects' own code (``FRONT``, and ``front``): a line, or
    a function's return to its caller within quorumlock, as a signal handler's exception
    can come at any call. Some points are
    left out. A ``with`` statement's own line (its ``__exit__`` call is traced there,
    and an exception in its place would skip it), and a line that begins with a no-op
    (``try:``, or a ``return`` of a constant inside ``with``, whose no-op no exception
    handler covers): no signal handler runs there. The first line and the return of the
    call the test made: an interrupt there comes before any of the call's code runs, or
    after all of it, in the caller. A ``__del__`` run by the collector meanwhile: an
    exception there is printed and goes no further. A coroutine suspending at an await
    (a "return" that is no return): no signal handler runs there, and an exception in
    its place would leave the coroutine it awaits unfinished and untold. From 3.13 on, a
    loop's jump back (:data:`TRACED_JUMPS_ESCAPE`)."""

    FRONT: ClassVar = frozenset(
        {"_sync.py", "_frontend.py", "_family.py", "_permit.py", "_rwfront.py", "_election.py"}
    )

    def __init__(
        self,
        at: int,
        error: type[BaseException] = KeyboardInterrupt,
        front: frozenset[str] = frozenset(),
    ) -> None:
        self.at = at
        self.error = error
        self.front = self.FRONT | front
        self.seen = 0
        self.where = ""
        self.package = os.path.dirname(quorumlock.__file__)
        self.begun = False

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        if not frame.f_code.co_filename.startswith(self.package):
            return None
        return self.point

    def point(self, frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        if (
            event not in ("line", "return")
            or os.path.basename(code.co_filename) not in self.front
            or code.co_name == "__del__"
        ):
            return self.point
        outermost = not (
            frame.f_back is not None and frame.f_back.f_code.co_filename.startswith(self.package)
        )
        if event == "return" and (
            outermost or dis.opname[code.co_code[frame.f_lasti]] in SUSPENSIONS
        ):
            return self.point
        if event == "line" and outermost and not self.begun:
            self.begun = True
            return self.point
        text = linecache.getline(code.co_filename, frame.f_lineno).strip()
        if event == "line" and (
            text.startswith("with ")
            or code.co_code[frame.f_lasti] == dis.opmap["NOP"]
            or (TRACED_JUMPS_ESCAPE and code.co_code[frame.f_lasti] == dis.opmap["JUMP_BACKWARD"])
        ):
            return self.point
        self.seen += 1
        if self.seen == self.at:
            sys.settrace(None)
            self.where = f"{event} at {os.path.basename(code.co_filename)}:{frame.f_lineno}"
            raise self.error
        return self.point


def sweep_points(limit: int = 1000) -> Iterator[int]:
    """1, 2, ...: the points of an interrupt sweep, which ends (a call runs to its end)
    before ``limit``."""
    yield from range(1, limit)
    raise AssertionError("the sweep does not end")


def interrupted_at(
    at: int,
    call: Callable[[], object],
    interrupt: type[BaseException] = KeyboardInterrupt,
    front: frozenset[str] = frozenset(),
) -> tuple[str, object]:
    """Run ``call`` with ``interrupt`` raised at its ``at``-th point (see
    :class:`InterruptAt`; ``front``: more of quorumlock's files to sweep): where it was
    raised, "" when the call ran to its end (every point was swept), and what the call
    returned (None when interrupted)."""
    assert sys.gettrace() is None, "another tracer runs: the sweep would disturb it"
    tracer = InterruptAt(at, interrupt, front)
    result = None
    sys.settrace(tracer)
    try:
        result = call()
    except interrupt:
        pass
    finally:
        sys.settrace(None)
    where = f"interrupted at point {at}, the {tracer.where}" if tracer.where else ""
    return where, result


def make_lock(kind: str, rl: quorumlock.Redlock | quorumlock.asyncio.Redlock, name: str) -> Any:
    """A lock object of ``kind`` on ``name``, for the interrupt sweeps."""
    if kind in ("rlock", "re-entry"):
        return rl.rlock(name, ttl=10, auto_extend=True, max_hold=30)
    if kind == "lock_many":
        return rl.lock_many([name, f"{name}:b"], ttl=10, auto_extend=True, max_hold=30)
    if kind == "write":
        return rl.rwlock(name, ttl=10).write()
    if kind == "permit":
        return rl.semaphore(name, permits=1, ttl=10)
    return rl.lock(name, ttl=10, auto_extend=True, max_hold=30)


def taken_by_another_thread(lk: quorumlock.Lock) -> bool:
    """Whether another thread can acquire ``lk`` at once (and then releases it)."""
    taken: list[bool] = []

    def take() -> None:
        got = lk.acquire(blocking=False)
        taken.append(got)
        if got:
            lk.release()

    other = threading.Thread(target=take)
    other.start()
    other.join(timeout=10)
    return taken == [True]


async def taken_by_another_task(lk: Any) -> bool:
    """asyncio: whether another task can acquire ``lk`` at once (and then releases it)."""

    async def take() -> bool:
        got = bool(await lk.acquire(blocking=False))
        if got:
            await lk.release()
        return got

    return await asyncio.create_task(take())


async def traced(tracer: InterruptAt, call: Awaitable[Any]) -> Any:
    """asyncio: await ``call`` under ``tracer``: what it returned, None when interrupted
    in this task."""
    sys.settrace(tracer)
    try:
        return await call
    except SystemExit:
        return None
    finally:
        sys.settrace(None)


async def the_waiting_task_holds_it(lk: Any, waiter: Awaitable[bool], where: str) -> None:
    """asyncio: ``waiter`` (another task's acquire of ``lk``) got the lock, and its hold
    is whole: the object is taken and the servers have its token. Then it is released."""
    assert await waiter, f"{where}: the waiting task did not get the lock"
    assert lk._gate.taken, f"{where}: the object was freed under its holder"
    assert await lk.owned(), f"{where}: the waiting task's hold was broken"
    assert await lk.release()


def _a_loop_in_a_with(mutex: threading.Lock, table: dict[str, list[int]]) -> set[int]:
    with mutex:
        return {other for key in table for other in table[key]}


def test_the_sweeps_leave_out_a_loops_jump_back_where_a_traced_exception_escapes() -> None:
    """:data:`TRACED_JUMPS_ESCAPE` says what the running CPython does: a trace function
    raises at each "line" event of a comprehension's jump back inside a ``with`` block
    in turn, and the block's exit is skipped (its lock left taken) on 3.13 and later,
    never before (where such events come at other instructions, if at all). Catches the
    sweeps leaving those points out where they need not (a CPython that mends it), or
    sweeping them where the escape would be reported as the package's fault."""
    mutex = threading.Lock()
    table = {"a": [1, 2], "b": [3]}
    jump = dis.opmap["JUMP_BACKWARD"]
    escaped: list[bool] = []

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        return point if frame.f_code is _a_loop_in_a_with.__code__ else None

    def point(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line" and frame.f_code.co_code[frame.f_lasti] == jump:
            seen.append(frame.f_lasti)
            if len(seen) == at:
                raise KeyboardInterrupt
        return point

    for at in range(1, 100):
        seen: list[int] = []
        sys.settrace(tracer)
        try:
            assert _a_loop_in_a_with(mutex, table) == {1, 2, 3}
        except KeyboardInterrupt:
            escaped.append(mutex.locked())
        finally:
            sys.settrace(None)
        if mutex.locked():
            mutex.release()
        if len(seen) < at:  # ran to its end: every jump back was tried
            break
    assert len(escaped) == at - 1
    if TRACED_JUMPS_ESCAPE:
        assert escaped, "no line event at a jump back: the sweeps need not leave any out"
        assert all(escaped), escaped
    else:
        assert not any(escaped), escaped


def interrupted_in_a_loop(at: int, body: Callable[[InterruptAt], Coroutine[Any, Any, Any]]) -> str:
    """asyncio: ``asyncio.run(body(tracer))``, with a SystemExit at the ``at``-th point
    of what the body awaits under ``tracer`` (see :func:`traced`), in any task: raised
    in another task than the body's, it ends the event loop, and ``asyncio.run`` cancels
    the body. Where it was raised, "" when the call ran to its end. (The task it ended,
    a lease's say, is not reported as a task whose exception nobody retrieved: that
    report came whenever the task was collected, at times in another test's output.)"""
    assert sys.gettrace() is None, "another tracer runs: the sweep would disturb it"
    tracer = InterruptAt(at, SystemExit, frozenset({"asyncio.py"}))

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), SystemExit):
            loop.default_exception_handler(context)

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(report)
        await body(tracer)

    with contextlib.suppress(SystemExit):  # out of the event loop
        asyncio.run(main())
    sys.settrace(None)
    return f"interrupted at point {at}, the {tracer.where}" if tracer.where else ""


def sweeps(
    kinds: list[str],
    hows: list[str],
    soft: list[tuple[str, str]],
    more: Sequence[tuple[str, str]] = (),
) -> list[Any]:
    """The cases of an interrupt sweep: each kind and way with a KeyboardInterrupt
    (``more`` too), and ``soft`` with Celery's soft time limit, which its signal handler
    raises, though it is an ``Exception``."""
    return [
        *(pytest.param(k, h, KeyboardInterrupt, id=f"{k}-{h}") for k in kinds for h in hows),
        *(pytest.param(k, h, KeyboardInterrupt, id=f"{k}-{h}") for k, h in more),
        *(pytest.param(k, h, SoftTimeLimitExceeded, id=f"{k}-{h}-soft-limit") for k, h in soft),
    ]


@pytest.mark.parametrize(
    ("kind", "how", "interrupt"),
    sweeps(
        ["lock", "rlock", "re-entry", "lock_many", "write", "permit"],
        ["acquire", "with"],
        soft=[("lock", "acquire"), ("lock", "with"), ("re-entry", "with")],
    ),
)
def test_an_interrupt_anywhere_in_an_acquire_leaves_nothing_held(
    servers: LocalServerGroup,
    lock_name: str,
    kind: str,
    how: str,
    interrupt: type[BaseException],
) -> None:
    """sync: a KeyboardInterrupt (or Celery's soft time limit) at every point of an
    acquire (or of entering ``with``), one point per run, the last ones after the hold
    was made, as the call returns: the call raises it, and nothing is held that its
    caller cannot know of. The object does not hold the lock (a re-entry: the outer hold
    stays, at its depth), no key or hold is left on the servers (another Redlock gets
    the lock at once), and the object can be acquired again. Such an interrupt used to
    leave the lock held, under its lease, by an object whose caller never learnt it; or,
    as the call took its turn on the object, the object taken for ever."""

    def probe(rl: quorumlock.Redlock, name: str) -> bool:
        other = rl.rlock(name, ttl=1) if kind == "re-entry" else make_lock(kind, rl, name)
        taken = bool(other.acquire(blocking=False))
        if taken:
            other.release()
        return taken

    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    prober = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            lk = make_lock(kind, rl, name)
            if kind == "re-entry":
                assert lk.acquire(blocking=False)
            call = (
                functools.partial(lk.acquire, blocking=False) if how == "acquire" else lk.__enter__
            )
            where, result = interrupted_at(at, call, interrupt)
            if not where:  # the call ran to its end: every point was swept
                assert result is (True if how == "acquire" else lk)
                break
            if kind == "re-entry":
                assert lk.held, where
                assert lk.depth == 1, where
                assert lk.release(), where
            assert not lk.held, where
            assert probe(prober, name), f"{where}: the lock stayed taken"
            assert lk.acquire(blocking=False), f"{where}: the object stayed taken"
            assert lk.release(), where
            if kind in ("lock", "rlock", "re-entry"):
                assert values(servers, name) == [None] * len(servers), where
        # ``at`` - 1 points, the last of them after the hold was made
        assert at > 20, at
        if how == "with":  # the run that went to its end, closed as its caller would
            lk.__exit__(None, None, None)
        else:
            assert lk.release()
        if kind == "re-entry":
            assert lk.depth == 1
            assert lk.release()
        assert probe(prober, name)
    finally:
        rl.close()
        prober.close()


@pytest.mark.parametrize("how", ["acquire", "with"])
@pytest.mark.parametrize("kind", ["lock", "rlock", "re-entry"])
def test_asyncio_an_interrupt_anywhere_in_an_acquire_leaves_nothing_held(
    servers: LocalServerGroup, lock_name: str, kind: str, how: str
) -> None:
    """asyncio: a signal handler's SystemExit raised in the task at every point of an
    acquire (or of entering ``async with``), one point per run, the last ones after the
    hold was made, as the call returns: nothing is held that its caller cannot know of.
    The object does not hold the lock (a re-entry: the outer hold stays), another
    Redlock and another task get it at once, and no key is left. Such an interrupt used
    to leave the lock held, its keys set and its lease renewing them."""

    def make(rl: quorumlock.asyncio.Redlock, name: str) -> Any:
        if kind == "lock":
            return rl.lock(name, ttl=10, auto_extend=True, max_hold=30)
        return rl.rlock(name, ttl=10, auto_extend=True, max_hold=30)

    async def body() -> int:
        async with (
            quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl,
            quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as prober,
        ):
            for at in sweep_points():
                name = f"{lock_name}:{at}"
                lk = make(rl, name)
                if kind == "re-entry":
                    assert await lk.acquire(blocking=False)
                assert sys.gettrace() is None, "another tracer runs"
                tracer = InterruptAt(at, SystemExit, frozenset({"asyncio.py"}))
                sys.settrace(tracer)
                try:
                    await (lk.acquire(blocking=False) if how == "acquire" else lk.__aenter__())
                except SystemExit:
                    pass
                finally:
                    sys.settrace(None)
                where = f"interrupted at point {at}, the {tracer.where}"
                if not tracer.where:  # the call ran to its end: every point was swept
                    return at
                if kind == "re-entry":
                    assert lk.held, where
                    assert lk.depth == 1, where
                    assert await lk.release(), where
                assert not lk.held, where
                other = make(prober, name)
                assert await other.acquire(blocking=False), f"{where}: the lock stayed taken"
                assert await other.release()
                assert await taken_by_another_task(lk), f"{where}: the object stayed taken"
                assert values(servers, name) == [None] * len(servers), where
        raise AssertionError("unreachable")

    assert asyncio.run(body()) > 20


@pytest.mark.parametrize("outcome", ["granted", "refused"])
def test_asyncio_an_interrupt_anywhere_in_an_acquire_with_a_task_waiting_passes_the_object_on(
    servers: LocalServerGroup, lock_name: str, outcome: str
) -> None:
    """asyncio: a signal handler's SystemExit at every point of an acquire while another
    task waits for the same object, one point per ``asyncio.run``. The acquire is
    granted, or refused (another process holds the lock, and lets it go once the
    acquire is over). Wherever the interrupt comes, the waiting task gets the object
    and the lock, and its hold is whole: an undo does not free the object again once
    the refused acquire passed it on, nor delete the next hold's keys. If the interrupt
    ends the event loop, no key and no hold is left, and the object is free."""
    rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0)
    prober = quorumlock.Redlock(servers.urls, instance_timeout=1.0)

    async def interrupted(lk: Any, elsewhere: quorumlock.Lock, tracer: InterruptAt) -> None:
        first = asyncio.create_task(traced(tracer, lk.acquire(blocking=False)))
        await asyncio.sleep(0)  # it takes the object
        waiter = asyncio.create_task(lk.acquire(timeout=5))
        await asyncio.sleep(0)  # it waits for the object
        got = await first
        assert got in ((True, None) if outcome == "granted" else (False, None)), got
        if got:
            assert await lk.release()
        if elsewhere.held:
            assert elsewhere.release()  # a blocking call in the loop: a test's shortcut
        await the_waiting_task_holds_it(lk, waiter, tracer.where)

    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            lk = make_lock("lock", rl, name)
            elsewhere = prober.lock(name, ttl=10)
            if outcome == "refused":
                assert elsewhere.acquire(blocking=False)
            where = interrupted_in_a_loop(at, functools.partial(interrupted, lk, elsewhere))
            if elsewhere.held:  # the event loop ended before the other process let go
                assert elsewhere.release(), where
            assert not lk.held, where
            assert values(servers, name) == [None] * len(servers), where
            assert asyncio.run(taken_by_another_task(lk)), f"{where}: the object stayed taken"
            if not where:  # the call ran to its end: every point was swept
                break
        assert at > 100, at  # points swept
    finally:
        asyncio.run(rl.close())
        prober.close()


@pytest.mark.parametrize(
    ("kind", "how", "interrupt"),
    sweeps(
        ["lock", "rlock", "inner", "lock_many", "write", "permit"],
        ["release", "with"],
        more=[("lock", "export"), ("rlock", "export")],
        soft=[("lock", "release"), ("lock", "with"), ("inner", "with"), ("lock", "export")],
    ),
)
def test_an_interrupt_anywhere_in_a_release_leaves_nothing_held(
    servers: LocalServerGroup,
    lock_name: str,
    kind: str,
    how: str,
    interrupt: type[BaseException],
) -> None:
    """sync: a KeyboardInterrupt (or Celery's soft time limit) at every point of a
    release (or of a ``with`` block's exit), one point per run: the call raises it, and
    the release is done all the same. No key or hold is left on the servers, and the
    object is free, for another thread too. An inner hold of a reentrant lock is left
    all the same, so that the outer hold's release (or exit) releases the lock. Such an
    interrupt used to leave the object taken for ever by the interrupted thread (as the
    release freed it), the lock held under its lease (as the call began), or the outer
    hold one level short. A hand-over (``export()``) lets the lock go too: interrupted
    once the object let it go, its handle never reaches the caller, and its keys are
    deleted (they stayed to the ttl, and the object stayed taken)."""
    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    prober = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    made = "rlock" if kind == "inner" else kind
    leave = {"release": "release", "with": "__exit__", "export": "export"}[how]
    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            lk = make_lock(made, rl, name)
            for _hold in range(2 if kind == "inner" else 1):
                if how == "with":
                    lk.__enter__()
                else:
                    assert lk.acquire(blocking=False)
            args = (None, None, None) if how == "with" else ()
            where, handle = interrupted_at(
                at, functools.partial(getattr(lk, leave), *args), interrupt
            )
            if isinstance(handle, LockHandle):  # handed over: its adopter releases it
                assert rl.adopt(handle).release(), where
            elif how == "export" and lk.held:  # interrupted before it let the lock go
                assert lk.release(), where
            if kind == "inner":  # the outer hold ends, as its caller's code goes on
                assert lk.depth == 1, where
                if how == "with":
                    lk.__exit__(interrupt, interrupt(), None)
                else:
                    assert lk.release(), where
            assert not lk.held, where
            other = make_lock(made, prober, name)
            assert other.acquire(blocking=False), f"{where}: the lock stayed taken"
            other.release()
            assert taken_by_another_thread(lk), f"{where}: the object stayed taken"
            assert lk.acquire(blocking=False), where
            assert lk.release(), where
            if kind in ("lock", "rlock", "inner"):
                assert values(servers, name) == [None] * len(servers), where
            if not where:  # the call ran to its end: every point was swept
                break
        assert at > (5 if kind == "inner" and how == "release" else 20), at  # points swept
    finally:
        rl.close()
        prober.close()


@pytest.mark.parametrize(
    ("kind", "how"),
    [
        *((k, h) for k in ("lock", "rlock", "inner") for h in ("release", "with")),
        ("lock", "export"),
        ("rlock", "export"),
        ("lock", "release-waited"),
        ("lock", "export-waited"),
    ],
)
def test_asyncio_an_interrupt_anywhere_in_a_release_leaves_nothing_held(
    servers: LocalServerGroup, lock_name: str, kind: str, how: str
) -> None:
    """asyncio: a signal handler's SystemExit at every point of a release (or of an
    ``async with`` block's exit, or of a hand-over), one point per ``asyncio.run``. It
    is raised in the task, or in the task the release runs in, or in the lease task:
    those end the event loop, and ``asyncio.run`` cancels the caller. The release is
    done all the same: no key is left, the object is free for another task, and an inner
    hold ends, so that the outer hold's exit releases the lock. A hand-over interrupted
    once the object let the lock go deletes the keys. Such an interrupt used to leave
    the keys to the ttl (at most points of a release), or the object taken.

    "-waited": another task waits for the object meanwhile. It gets it, and its hold is
    whole: the keys of the hold that was let go are deleted, not the next one's (the
    object may pass to the waiter before the clean-up is done)."""
    made = "rlock" if kind == "inner" else kind
    way, _, waited = how.partition("-")
    leave = {"release": "release", "with": "__aexit__", "export": "export"}[way]
    rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0)

    async def interrupted(lk: Any, tracer: InterruptAt) -> None:
        for _hold in range(2 if kind == "inner" else 1):
            assert await (lk.__aenter__() if way == "with" else lk.acquire(blocking=False))
        token = lk._state.token
        waiter = asyncio.create_task(lk.acquire(timeout=5)) if waited else None
        await asyncio.sleep(0)  # it waits for the object
        args = (None, None, None) if way == "with" else ()
        handle = await traced(tracer, getattr(lk, leave)(*args))
        if isinstance(handle, LockHandle):  # handed over: its adopter releases it
            assert await rl.adopt(handle).release()
        elif way == "export" and lk.held and lk._state.token == token:  # not let go
            assert await lk.release()
        if kind == "inner":  # the outer hold ends, as its caller's code goes on
            assert lk.depth == 1, tracer.where
            if way == "with":
                await lk.__aexit__(None, None, None)
            else:
                assert await lk.release()
        if waiter is not None:
            await the_waiting_task_holds_it(lk, waiter, tracer.where)

    try:
        for at in sweep_points():
            name = f"{lock_name}:{at}"
            lk = make_lock(made, rl, name)
            where = interrupted_in_a_loop(at, functools.partial(interrupted, lk))
            assert not lk.held, where
            assert values(servers, name) == [None] * len(servers), where
            assert asyncio.run(taken_by_another_task(lk)), f"{where}: the object stayed taken"
            if not where:  # the call ran to its end: every point was swept
                break
        assert at > (5 if kind == "inner" else 40), at  # points swept
    finally:
        asyncio.run(rl.close())


@pytest.mark.parametrize("auto_extend", [False, True], ids=["plain", "lease"])
def test_two_releases_at_once_free_the_object_once(
    servers: LocalServerGroup, lock_name: str, auto_extend: bool
) -> None:
    """asyncio: two tasks release one held object at once: one releases, the other gets
    LockNotHeld (also while the first stops the lock's lease task, before its round).
    The object is freed once: of two tasks acquiring it next, one holds it and the
    other finds it taken."""

    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            lk = rl.lock(
                lock_name, ttl=10, auto_extend=auto_extend, max_hold=30 if auto_extend else None
            )
            assert await lk.acquire()
            first = asyncio.create_task(lk.release())
            second = asyncio.create_task(lk.release())
            results = await asyncio.gather(first, second, return_exceptions=True)
            assert results[0] is True
            assert isinstance(results[1], LockNotHeld)
            assert values(servers, lock_name) == [None] * len(servers)
            taker = asyncio.create_task(lk.acquire(timeout=5))
            await asyncio.sleep(0)  # the taker occupies the object
            assert await asyncio.create_task(lk.acquire(blocking=False)) is False
            assert await taker is True
            assert majority_value(servers, lock_name) == lk.token
            assert await lk.release() is True
            assert values(servers, lock_name) == [None] * len(servers)

    asyncio.run(body())


@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
@pytest.mark.parametrize("kind", ["lock", "rlock", "lock_many", "write", "permit"])
def test_a_thread_waiting_for_the_lock_does_not_hold_up_the_objects_other_threads(
    servers: LocalServerGroup, lock_name: str, kind: str, fair: bool
) -> None:
    """sync: while one thread's acquire of a shared object waits for the lock (another
    process holds it), another thread's ``acquire(blocking=False)`` returns False at
    once and a timed acquire returns False within its timeout, as on a shared
    ``threading.Lock``; its release, extend and export raise LockNotHeld. The waiting
    acquire goes on, unharmed, and takes the lock once it is let go. Such calls used to
    wait for the whole of the other thread's acquire (for ever, with no timeout)."""
    with (
        quorumlock.Redlock(servers.urls, instance_timeout=1.0, fair=fair) as rl,
        quorumlock.Redlock(servers.urls, instance_timeout=1.0) as elsewhere,
    ):
        lk = make_lock(kind, rl, lock_name)
        other = make_lock(kind, elsewhere, lock_name)
        assert other.acquire(blocking=False)
        got: list[bool] = []
        checked = threading.Event()

        def wait_for_it() -> None:
            got.append(lk.acquire(timeout=10))
            checked.wait(30)  # its hold is looked at meanwhile
            if got[-1]:
                lk.release()

        waiting = threading.Thread(target=wait_for_it)
        waiting.start()
        try:
            deadline = time.monotonic() + 10
            while not lk._acquiring and time.monotonic() < deadline:
                time.sleep(0.01)
            assert lk._acquiring, "the waiting thread's acquire did not start"
            assert lk.acquire(blocking=False) is False
            assert not got, "the call waited for the other thread's acquire"
            assert lk.acquire(timeout=0.2) is False
            assert not got, "the call waited for the other thread's acquire"
            for call in (lk.extend, lk.export):
                with pytest.raises(LockNotHeld, match="another thread is acquiring it"):
                    call()
            # a reentrant lock's release is refused first as not its owner's
            released_by = None if kind == "rlock" else "another thread is acquiring it"
            with pytest.raises(LockNotHeld, match=released_by):
                lk.release()
            assert not got, "the waiting acquire ended"
            assert lk.acquire(blocking=False) is False, "a refused call freed the object"
        finally:
            assert other.release()
            deadline = time.monotonic() + 30
            while not got and time.monotonic() < deadline:
                time.sleep(0.01)
            try:
                assert got == [True]
                assert lk.held
                if kind in ("lock", "rlock"):
                    assert majority_value(servers, lock_name) == lk.token
                assert lk._turn.acquire(blocking=False), "the object's mutex stayed taken"
                lk._turn.release()
            finally:
                checked.set()
                waiting.join(timeout=30)
        assert not lk.held
        assert other.acquire(blocking=False)
        assert other.release()


class InterruptAfterTurn:
    """A trace function that raises KeyboardInterrupt in the thread it traces as soon as
    a wait for its lock object's turn returns (the thread was woken: the object is
    free), where a signal handler's exception comes once the wait's call returns."""

    def __init__(self) -> None:
        self.woken = False
        self.fired = False

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        if code is threading.Condition.wait.__code__ or code.co_name == "_take_turn":
            return self.local
        return None

    def local(self, frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code is threading.Condition.wait.__code__:
            self.woken = self.woken or event == "return"
        elif event == "line" and self.woken and not self.fired:
            self.fired = True
            sys.settrace(None)
            raise KeyboardInterrupt
        return self.local


@pytest.mark.parametrize("kind", ["lock", "rlock", "lock_many", "write", "permit"])
def test_a_thread_interrupted_as_it_is_woken_for_its_turn_passes_the_object_on(
    servers: LocalServerGroup, lock_name: str, kind: str
) -> None:
    """sync: two threads wait for a shared object another thread holds. Its release
    wakes the first one only (one thread per release), which is interrupted as it wakes:
    the second one is woken in its place and takes the object, at once. It used to wait
    for the end of its own timeout (for ever, with no timeout)."""
    with quorumlock.Redlock(servers.urls, instance_timeout=1.0) as rl:
        lk = make_lock(kind, rl, lock_name)
        assert lk.acquire(blocking=False)
        tracer = InterruptAfterTurn()
        interrupted: list[BaseException] = []
        got: list[float] = []

        def first() -> None:
            sys.settrace(tracer)
            try:
                lk.acquire()
            except KeyboardInterrupt as exc:
                interrupted.append(exc)
            else:  # not interrupted: let the second one have it
                lk.release()
            finally:
                sys.settrace(None)

        def second() -> None:
            if lk.acquire(timeout=8):
                got.append(time.monotonic())
                lk.release()

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for waiting, thread in enumerate(threads, 1):
            thread.start()
            deadline = time.monotonic() + 10
            while len(lk._turn._waiters) < waiting and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(lk._turn._waiters) == waiting, "a thread did not wait for its turn"
        released = time.monotonic()
        assert lk.release()
        for thread in threads:
            thread.join(timeout=30)
        assert tracer.fired, "the first thread was never woken"
        assert interrupted, "the first thread was not interrupted as it woke"
        assert got, "the second thread never took the object"
        # woken in the interrupted thread's place, not by its own timeout 8 s on
        assert got[0] - released < 4, f"the second thread waited {got[0] - released:.1f} s"
        assert not lk.held
        assert values(servers, lock_name) == [None] * len(servers)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer")
@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
def test_a_signal_while_an_acquire_waits_for_the_lock_leaves_the_object_free(
    servers: LocalServerGroup, lock_name: str, fair: bool
) -> None:
    """sync, a real signal: SIGALRM's handler raises KeyboardInterrupt at a random
    moment of an acquire that waits for the lock (another process holds it), its
    object's mutex let go meanwhile; 30 times. Each time the acquire raises it, and the
    object is free and its mutex not held (another thread takes both at once); no key
    of its own is left, and the holder's stays."""
    armed = False

    def interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal armed
        if armed:
            armed = False
            raise KeyboardInterrupt

    def free_for_another_thread(lk: quorumlock.Lock) -> bool:
        free: list[bool] = []

        def look() -> None:
            if lk._mutex.acquire(blocking=False):
                free.append(not lk._occupied)
                lk._mutex.release()

        other = threading.Thread(target=look)
        other.start()
        other.join(timeout=10)
        return free == [True]

    previous = signal.signal(signal.SIGALRM, interrupt)
    rng = random.Random(lock_name)
    try:
        with (
            quorumlock.Redlock(servers.urls, instance_timeout=1.0, fair=fair) as rl,
            quorumlock.Redlock(servers.urls, instance_timeout=1.0) as elsewhere,
        ):
            holder = elsewhere.lock(lock_name, ttl=30)
            assert holder.acquire(blocking=False)
            lk = rl.lock(lock_name, ttl=10)
            for run in range(30):
                armed = True
                signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.001, 0.3))
                try:
                    lk.acquire(timeout=5)
                except KeyboardInterrupt:
                    pass
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                assert not armed, f"run {run}: the acquire returned before the signal"
                assert not lk.held, run
                assert free_for_another_thread(lk), f"run {run}: the object stayed taken"
                assert values(servers, lock_name) == [holder.token] * len(servers), run
            assert holder.release()
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_an_acquire_takes_no_lock_of_a_lost_event_that_was_not_set(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """sync: ``lost`` (a ``threading.Event``) is set by the lease thread; an acquire
    clears it only if it was set. Its clear takes the Event's lock, which an exception
    raised in the acquiring thread as the lock is taken (a signal handler's, here as
    the Condition's ``__enter__`` returns) leaves taken: the lease thread's next ``set``
    would hang on it, and every lease it keeps with it."""
    with quorumlock.Redlock(servers.urls, instance_timeout=1.0) as rl:
        lk = rl.lock(lock_name, ttl=10)
        assert not lk.lost.is_set()  # made now: a lost event that was never set
        tracer = InterruptAsCallReturns(threading.Event.clear.__code__, 1)
        sys.setprofile(tracer)
        try:
            acquired = lk.acquire(blocking=False)
        except KeyboardInterrupt:
            acquired = False
        finally:
            sys.setprofile(None)
        assert tracer.seen == 0, f"the acquire cleared lost ({tracer.where})"
        assert acquired
        setter = threading.Thread(target=lk.lost.set, daemon=True)
        setter.start()
        setter.join(timeout=10)
        assert not setter.is_alive(), "a set of lost hangs on the Event's lock"
        lk.lost.clear()  # set above by hand: the lock is still held
        assert lk.release()
        # set: the next acquire clears it
        lk.lost.set()
        assert lk.acquire(blocking=False)
        assert not lk.lost.is_set()
        assert lk.release()


def test_shared_object_with_lease(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """An auto-extended shared object: each holder keeps it past the ttl through its own
    lease, and the next holder's lease is its own."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        shared = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)

        async def worker() -> None:
            async with holding(shared) as lock:
                await asyncio.sleep(1.0)  # longer than the ttl: renewed meanwhile
                assert lock.extensions >= 1
                assert majority_value(servers, lock_name) == lock.token

        await api.concurrently([worker, worker], limit=60)
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


@pytest.mark.skipif(sys.platform != "linux" or not hasattr(os, "fork"), reason="os.fork")
def test_forked_child_may_acquire_a_shared_object(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A child forked while a parent thread held the object is not blocked by the
    parent's turn: it acquires once the parent released the name on the servers."""
    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    lk = rl.lock(lock_name, ttl=10)
    # Held by another thread than the one that forks: in the child, that thread is gone.
    holder = threading.Thread(target=lk.acquire)
    holder.start()
    holder.join(timeout=10)
    assert lk.held
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 1
        try:
            code = 0 if lk.acquire(timeout=8) and lk.release() else 2
        finally:
            os._exit(code)
    time.sleep(0.3)
    assert lk.release() is True
    give_up = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > give_up:
            os.kill(pid, 9)  # our own child, by pid
            os.waitpid(pid, 0)
            pytest.fail("the forked child did not finish")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 0
    rl.close()


# --------------------------------------------------------------------------------------
# not reentrant
# --------------------------------------------------------------------------------------


def test_nested_acquire_of_a_held_name_raises(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """``with rl.lock(n)`` inside ``with rl.lock(n)``: refused at once, the outer lock
    is intact. Another thread/task still waits as a contender, and a nested acquire with
    a timeout is a bounded contender too."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        async with holding(rl.lock(lock_name, ttl=3)) as outer:
            started = time.monotonic()
            with pytest.raises(LockNotReentrant, match="not reentrant") as caught:
                async with holding(rl.lock(lock_name, ttl=3)):
                    pytest.fail("entered a lock held by its own thread/task")
            assert isinstance(caught.value, QuorumLockError)
            assert isinstance(caught.value, RuntimeError)
            assert caught.value.name == lock_name
            assert time.monotonic() - started < outer.ttl  # not after the outer expired
            with pytest.raises(LockNotReentrant):
                await call(rl.lock(lock_name, ttl=3).acquire())
            with pytest.raises(LockNotReentrant):
                await call(outer.acquire())  # the same object
            assert await call(rl.lock(lock_name, ttl=3).acquire(blocking=False)) is False
            assert await call(rl.lock(lock_name, ttl=3).acquire(timeout=0.1)) is False
            elsewhere = rl.lock(lock_name, ttl=3)
            assert await api.elsewhere(lambda: elsewhere.acquire(timeout=0.3)) is False
            assert outer.check() > 0
            assert majority_value(servers, lock_name) == outer.token
        assert values(servers, lock_name) == [None] * len(servers)
        # Released: the same thread/task may take the name again.
        async with holding(rl.lock(lock_name, ttl=3)):
            pass

    api.run(body)


def test_a_nested_acquire_after_the_outer_lock_ran_out_is_a_contender(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The refusal is for an acquire that could only wait for its own caller: once the
    outer acquisition expired or was lost (not released yet), a blocking acquire with no
    timeout of the name through another object is an ordinary contender, and takes the
    free name (it was refused, saying it "would wait until its own outer lock expired")."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        expired = rl.lock(lock_name, ttl=0.2)
        assert await call(expired.acquire())
        await asyncio.sleep(0.3)
        assert not expired.held
        inner = rl.lock(lock_name, ttl=3)
        assert await call(inner.acquire())
        assert majority_value(servers, lock_name) == inner.token
        assert await call(inner.release())
        assert await call(expired.release()) is False
        lost = rl.lock(lock_name + ":lost", ttl=0.3, auto_extend=True, max_extensions=0)
        assert await call(lost.acquire())
        for _ in range(100):
            if lost.lost.is_set():
                break
            await asyncio.sleep(0.02)
        assert lost.lost.is_set()
        again = rl.lock(lock_name + ":lost", ttl=3)
        assert await call(again.acquire())
        assert await call(again.release())
        assert await call(lost.release()) is False

    api.run(body)


def test_a_nested_acquire_with_a_timeout_names_its_own_holder(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A nested acquire with a timeout waits as a contender, and the ``LockNotAcquired``
    it ends with says that the name is held by this very thread/task through another
    object, not by another client; a name another thread/task holds is another client's
    still."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        who = "task" if api.flavour == "async" else "thread"
        async with holding(rl.lock(lock_name, ttl=5)) as outer:
            with pytest.raises(LockNotAcquired) as caught:
                async with holding(rl.lock(lock_name, ttl=5, timeout=0.2)):
                    pytest.fail("entered a lock held by its own thread/task")
            message = str(caught.value)
            assert f"held by this {who} through another Lock object of this Redlock" in message
            assert "another client" not in message
            assert outer.check() > 0
        elsewhere = rl.lock(lock_name, ttl=5)
        assert await api.elsewhere(lambda: elsewhere.acquire(blocking=False))
        with pytest.raises(LockNotAcquired, match="held by another client"):
            async with holding(rl.lock(lock_name, ttl=5, timeout=0.2)):
                pytest.fail("entered a lock held by another thread/task")
        assert await call(elsewhere.release())

    api.run(body)


# --------------------------------------------------------------------------------------
# adopt
# --------------------------------------------------------------------------------------


def test_adopt_refuses_inconsistent_handles(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, max_ttl=30)
        good = LockHandle(
            name=lock_name,
            token="ab" * 20,
            ttl=5,
            fencing_token=None,
            validity=4.0,
            exported_at=time.time(),
            servers=tuple(rl.servers),
        )
        too_long = LockHandle(
            name=lock_name,
            token="ab" * 20,
            ttl=5,
            fencing_token=None,
            validity=1e7,
            exported_at=time.time(),
            servers=tuple(rl.servers),
        )
        with pytest.raises(ConfigurationError, match="max_ttl"):
            rl.adopt(too_long)
        # with the quarantine off, no more than any ttl may be (1e20 s of validity killed
        # the sync lease thread: its wait overflowed)
        unbounded = api.redlock(servers.urls, max_ttl=None)
        beyond = dataclasses.replace(too_long, validity=1e20)
        with pytest.raises(ConfigurationError, match="more than any ttl may be"):
            unbounded.adopt(beyond)
        for bad in (math.nan, -1.0, math.inf):
            forged = copy.copy(good)
            object.__setattr__(forged, "validity", bad)
            with pytest.raises(ConfigurationError, match="validity"):
                rl.adopt(forged)
        over_ttl = LockHandle(
            name=lock_name,
            token="ab" * 20,
            ttl=60,
            fencing_token=None,
            validity=4.0,
            exported_at=time.time(),
            servers=tuple(rl.servers),
        )
        with pytest.raises(ConfigurationError, match="max_ttl"):
            rl.adopt(over_ttl)
        adopted = rl.adopt(good)
        assert 0 < adopted.validity <= 4.0
        assert values(servers, lock_name) == [None] * len(servers)  # no network call

    api.run(body)


# --------------------------------------------------------------------------------------
# copies and pickles
# --------------------------------------------------------------------------------------


def test_lock_objects_refuse_copy_and_pickle(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=5)
        for state in ("free", "held"):
            if state == "held":
                assert await call(lock.acquire())
            with pytest.raises(TypeError, match=r"export\(\)"):
                pickle.dumps(lock)
            with pytest.raises(TypeError, match=r"export\(\)"):
                copy.copy(lock)
            with pytest.raises(TypeError, match=r"export\(\)"):
                copy.deepcopy(lock)
        assert majority_value(servers, lock_name) == lock.token
        assert await call(lock.release()) is True
        # The kinds that cannot be exported do not point to export() either.
        for other in (
            rl.lock_many([lock_name + ":a", lock_name + ":b"], ttl=5),
            rl.semaphore(lock_name + ":s", permits=2, ttl=5),
            rl.rwlock(lock_name + ":rw", ttl=5).read(),
        ):
            with pytest.raises(TypeError, match="cannot be handed to another process") as info:
                pickle.dumps(other)
            assert "export" not in str(info.value)

    api.run(body)


def test_a_redlock_refuses_pickle_and_deepcopy(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A Redlock owns this process's connections and threads: handed to a spawned or
    forkserver process (which pickles it), it is refused with a TypeError that says
    what to do, as are the objects that carry one (it was NotImplementedError, about
    the system's entropy source)."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        with pytest.raises(TypeError, match="make one in each process"):
            copy.copy(rl)
        for what in (
            rl,
            rl.rwlock(lock_name + ":rw", ttl=5),
            rl.election(lock_name + ":e", ttl=5),
        ):
            with pytest.raises(TypeError, match="make one in each process") as info:
                pickle.dumps(what)
            assert "Redlock cannot be pickled" in str(info.value)
            with pytest.raises(TypeError, match="make one in each process"):
                copy.deepcopy(what)
        lock = rl.lock(lock_name, ttl=5)  # still usable
        assert await call(lock.acquire(blocking=False))
        assert await call(lock.release()) is True

    api.run(body)


def drop(objects: list[object]) -> None:
    """Let go of ``objects`` and collect them."""
    objects.clear()
    gc.collect()


def test_a_held_lock_collected_with_no_release_warns(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """A held lock object that nothing refers to any more is collected with a
    ResourceWarning naming it, as an unclosed file is: nothing releases it from the
    collector, and its keys stay until the ttl. A released, exported or never acquired
    object, or one that exported with keep=True (the adopter holds the lock), is
    collected in silence."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire(blocking=False))
        token = lock.token
        held: list[object] = [lock]
        del lock
        with pytest.warns(ResourceWarning, match="garbage collected while held") as caught:
            drop(held)
        assert any(lock_name in str(w.message) for w in caught)
        assert values(servers, lock_name) == [token] * len(servers)
        for server in servers:
            client_of(server).delete(lock_name)

        async def quiet(keep: bool | None) -> None:
            lock = rl.lock(lock_name, ttl=10)
            assert await call(lock.acquire(blocking=False))
            if keep is None:
                assert await call(lock.release())
            else:
                handle = await call(lock.export(keep=keep))
                assert await call(rl.adopt(handle).release())
            with warnings.catch_warnings():
                warnings.simplefilter("error", ResourceWarning)
                del lock
                gc.collect()

        for keep in (None, False, True):
            await quiet(keep)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            rl.lock(lock_name, ttl=10)
            gc.collect()

    api.run(body)


# --------------------------------------------------------------------------------------
# names
# --------------------------------------------------------------------------------------


def test_names_are_capped_and_shortened(
    api: Api, servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0, retry_delay=0.05)
        for name in ("x" * 4097, "é" * 2049, "x" * 10_000_000, "a\udc80b"):
            with pytest.raises(ConfigurationError, match="lock name") as caught:
                rl.lock(name, ttl=5)
            assert len(str(caught.value)) < 300
        # The longest name is usable, and shortened wherever it is shown.
        long_name = lock_name + ":" + "é" * ((4096 - len(lock_name) - 1) // 2)
        assert len(long_name.encode()) <= 4096
        with caplog.at_level(logging.DEBUG, logger="quorumlock"):
            holder = rl.lock(long_name, ttl=5)
            assert await call(holder.acquire())
            assert len(repr(holder)) < 300
            other = rl.lock(long_name, ttl=5)
            assert await call(other.acquire(timeout=0.1)) is False
            with pytest.raises(LockNotAcquired) as caught_busy:
                async with holding(rl.lock(long_name, ttl=5, timeout=0.1)):
                    pass
            assert await call(holder.release()) is True
        assert len(str(caught_busy.value)) < 2000
        assert caught_busy.value.name == long_name  # the attribute keeps the whole name
        assert caplog.records
        for record in caplog.records:
            assert len(record.getMessage()) < 2000, record.getMessage()[:200]
        assert values(servers, long_name) == [None] * len(servers)

    api.run(body)


# --------------------------------------------------------------------------------------
# options checked at creation
# --------------------------------------------------------------------------------------


def test_options_checked_by_lock_and_synchronized(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        for options, error in (
            ({"timeout": -1}, ConfigurationError),
            ({"timeout": math.nan}, ConfigurationError),
            ({"timeout": -math.inf}, ConfigurationError),
            ({"timeout": "5"}, TypeError),
            ({"timeout": 5, "blocking": False}, ConfigurationError),
        ):
            with pytest.raises(error):
                rl.lock(lock_name, ttl=5, **options)
            with pytest.raises(error):
                rl.synchronized(lock_name, ttl=5, **options)
        # math.inf is "no limit", as None is, and as max_hold=math.inf is.
        lock = rl.lock(lock_name, ttl=5, timeout=math.inf)
        async with holding(lock):
            assert lock.held
        assert await call(lock.acquire(timeout=math.inf))
        assert await call(lock.release())
        assert await call(lock.acquire(timeout=1e12))  # longer than any thread wait
        assert await call(lock.release())
        rl.synchronized(lock_name, ttl=5, timeout=math.inf)
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


def test_async_callbacks_are_refused(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """``on_lost`` and the observer's methods are called, never awaited: an ``async def``
    one would never run, and the loss it was to report would go unreported (a
    RuntimeWarning at most). Refused with TypeError when the lock, the election or the
    Redlock is made, before any network call."""

    async def on_lost(lock: object) -> None:
        raise AssertionError("never called")

    class Callback:
        async def __call__(self, lock: object) -> None:
            raise AssertionError("never called")

    class Observer(quorumlock.LockObserver):
        async def on_lost(self, event: quorumlock.LostEvent) -> None:  # type: ignore[override]
            raise AssertionError("never called")

    async def body() -> None:
        rl = api.redlock(servers.urls)
        makers: list[Callable[[Any], object]] = [
            lambda callback: rl.lock(lock_name, ttl=5, on_lost=callback),
            lambda callback: rl.rlock(lock_name, ttl=5, on_lost=callback),
            lambda callback: rl.lock_many([lock_name], ttl=5, on_lost=callback),
            lambda callback: rl.semaphore(lock_name, permits=2, ttl=5, on_lost=callback),
            lambda callback: rl.rwlock(lock_name, ttl=5, on_lost=callback),
            lambda callback: rl.synchronized(lock_name, ttl=5, on_lost=callback),
            lambda callback: rl.election(lock_name, ttl=5, on_lost=callback),
        ]
        for callback in (on_lost, functools.partial(on_lost), Callback()):
            for make in makers:
                with pytest.raises(TypeError, match=r"on_lost .*async def"):
                    make(callback)
        with pytest.raises(TypeError, match=r"on_lost .*async def"):
            api.redlock(servers.urls, observer=Observer())
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)


# --------------------------------------------------------------------------------------
# locked(), owned(), double release
# --------------------------------------------------------------------------------------


def test_locked_owned_and_double_release(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        mine = rl.lock(lock_name, ttl=10)
        theirs = api.redlock(servers.urls, instance_timeout=1.0).lock(lock_name, ttl=10)
        assert await call(mine.locked()) is False
        assert await call(mine.owned()) is False
        assert await call(mine.acquire())
        assert await call(mine.locked()) is True
        assert await call(theirs.locked()) is True
        assert await call(mine.owned()) is True
        assert await call(theirs.owned()) is False
        # Gone from a majority behind our back: the local validity still says held,
        # the servers do not.
        for server in list(servers)[: len(servers) // 2 + 1]:
            client = client_of(server)
            client.delete(lock_name)
            client.close()
        assert mine.held
        assert await call(mine.owned()) is False
        assert await call(mine.locked()) is False
        await call(mine.release())
        with pytest.raises(LockNotHeld, match="does not hold") as caught:
            await call(mine.release())
        assert isinstance(caught.value, QuorumLockError)
        assert isinstance(caught.value, RuntimeError)
        assert caught.value.name == lock_name
        with pytest.raises(LockNotHeld):
            await call(mine.extend())

    api.run(body)


def test_locked_needs_a_majority_of_answers(api: Api, servers: LocalServerGroup) -> None:
    """With two of three servers unreachable, nobody can tell: QuorumUnavailable."""

    async def body() -> None:
        dead = [f"redis://127.0.0.1:{port}" for port in (_closed_port(), _closed_port())]
        rl = api.redlock([servers.urls[0], *dead], instance_timeout=0.3, connect_timeout=0.3)
        with pytest.raises(QuorumUnavailable):
            await call(rl.lock("locks:probe", ttl=5).locked())

    api.run(body)


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed, by us)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_lost_is_still_reported(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """A shared object's with block still reports a loss of its own acquisition."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock: AnyLock = rl.lock(lock_name, ttl=0.3)
        with pytest.raises(LockLost):
            async with holding(lock):
                await asyncio.sleep(0.6)
        assert values(servers, lock_name) == [None] * len(servers)

    api.run(body)
