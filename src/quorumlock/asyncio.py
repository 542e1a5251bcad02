"""The asyncio API: the same names and semantics as the sync API, with awaits.

::

    from quorumlock.asyncio import Redlock

    rl = Redlock(["redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"])
    async with rl.lock("orders:42", ttl=10.0, timeout=5.0) as lock:
        ...

It drives the very same sans-I/O flows as the sync API (``quorumlock._algorithm``); only
the I/O differs: one task per server and round, on redis-py's asyncio connections. The
event loop is never blocked.

Cancellation is safe at every await: a cancelled acquire deletes whatever keys it may
have set before it re-raises, and a release (or the end of an ``async with``), an
extension or a read-write lock's downgrade completes even when the task awaiting it is
cancelled. When a lock is lost inside ``async with`` (an extension failed, or the
validity ran out), the block is cancelled and :class:`LockLost` is raised from the
``async with`` statement.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import functools
import inspect
import logging
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, NamedTuple, ParamSpec, Self, TypeVar, cast

from quorumlock._algorithm.config import Duration, LockOptions, check_wait, shown
from quorumlock._algorithm.election import Leader
from quorumlock._algorithm.flows import (
    Fanout,
    Flow,
    Op,
    Round,
    Sleep,
    Watch,
    Woken,
    as_cleanup,
    woke_the_line,
)
from quorumlock._algorithm.handoff import LockHandle
from quorumlock._algorithm.lockstate import LockState, Wake
from quorumlock._election import CampaignBase, ElectionBase, Term
from quorumlock._exceptions import LockLost, LockNotHeld, QuorumLockError
from quorumlock._family import Family, MultiLockMixin, ReentrantMixin
from quorumlock._fence import AsyncRedisFence as RedisFence
from quorumlock._frontend import (
    AsyncDecorator,
    LockBase,
    RedlockBase,
    freed_nothing,
    is_async_callable,
    kept_turn,
    leave_step,
    pass_step,
    prepared,
    stood_behind,
    wake_step,
)
from quorumlock._io.async_fanout import AsyncFanout
from quorumlock._io.async_wakeups import AsyncWaiter, AsyncWakeups
from quorumlock._io.servers import AsyncServerArg, Flavour
from quorumlock._observe import log_round, round_hook
from quorumlock._permit import PermitMixin
from quorumlock._rwfront import ReadWriteLockBase, RWHoldBase

__all__ = [
    "Campaign",
    "Election",
    "Lock",
    "MultiLock",
    "Permit",
    "RLock",
    "ReadWriteHold",
    "ReadWriteLock",
    "RedisFence",
    "Redlock",
]

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
logger = logging.getLogger("quorumlock")


class Redlock(
    RedlockBase["Lock", AsyncDecorator, "ReadWriteLock", "ReadWriteHold", AsyncServerArg],
    Family["RLock", "MultiLock"],
):
    """The asyncio twin of :class:`quorumlock.Redlock`: same arguments and options.

    ``servers`` are URLs, ``redis.asyncio.Redis`` clients, or
    ``redis.asyncio.cluster.RedisCluster`` clients (a whole cluster is one instance, see
    ``docs/cluster.md``). ``busy_poll`` is accepted for symmetry and ignored: the event
    loop does the waiting. The ``observer`` is called on the event loop. ``adopt()``
    makes no network call and is not awaited; with ``auto_extend`` or ``on_lost`` it
    must be called while the event loop runs.

    One Redlock serves any number of event loops, one after another (``asyncio.run``
    again) or at once in threads of their own: each loop has connections and
    subscriptions of its own, and those of a loop that was closed serve the next one.
    """

    _flavour: Flavour = "async"

    def _setup(self) -> None:
        first = _LoopIO(self)
        self._ios = [first]
        self._ios_mutex = threading.Lock()
        # The first event loop's (and those of the loops after it, one at a time).
        self._fanout, self._wakeups = first.fanout, first.wakeups
        self._lock_class = Lock
        self._rlock_class = RLock
        self._multi_class = MultiLock
        self._rwlock_class = ReadWriteLock
        self._after_round = round_hook(log_round, self._observer)

    def semaphore(
        self,
        name: str,
        *,
        permits: int,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[Permit], object] | None = None,
    ) -> Permit:
        """A permit of the counting semaphore ``name``: at most ``permits`` holders at
        once, over all clients (docs/algorithm.md, "Semaphores"). Not acquired yet.

        The permit is a lock object (:meth:`lock`'s options, acquire, extend, release,
        ``validity``, leases, ``async with``); ``permit.slot`` says which of the permits it
        holds and ``permit.fencing_token`` its fencing token (with ``fencing=True``); it has
        no ``locked()`` nor ``export()`` (``TypeError``: ``owned()`` says whether it is
        held). A crashed holder's permit frees itself at the ttl; only the holder's token
        releases it. Clients of one name may use different ``permits``: a client never
        takes a slot at or above its own ``permits``, so at most the largest ``permits``
        in use are held at once (lowering it takes effect as the higher slots are
        released or expire). Raises ``TypeError`` or :class:`ConfigurationError` for bad
        input, before any network call.
        """
        options, count = self._semaphore_options(
            name,
            permits,
            ttl=ttl,
            timeout=timeout,
            blocking=blocking,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
        )
        return Permit(self, options, count)

    def _decorator(self, options: LockOptions) -> AsyncDecorator:
        def decorate(func: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
            if inspect.isasyncgenfunction(func):
                raise TypeError(
                    f"{func!r} is an async generator function: the lock would be released "
                    "before its body runs"
                )
            if not is_async_callable(func):
                raise TypeError(
                    f"{func!r} is not a coroutine function (async def): decorate plain "
                    "functions with quorumlock.Redlock.synchronized"
                )

            @functools.wraps(func)
            async def locked(*args: P.args, **kwargs: P.kwargs) -> R:
                async with Lock(self, options):
                    return await func(*args, **kwargs)

            return locked

        return decorate

    def election(
        self,
        name: str,
        *,
        ttl: Duration,
        identity: str | None = None,
        on_lost: Callable[[Term[Lock]], object] | None = None,
    ) -> Election:
        """A leader election on ``name``: see :meth:`quorumlock.Redlock.election`, same
        contract; ``async with election.campaign() as term:``. When leadership is lost
        the block is cancelled and :class:`LockLost` raised from the ``async with``;
        ``on_lost(term)`` is called on the event loop."""
        return Election(self, name, ttl=ttl, identity=identity, on_lost=on_lost)

    async def close(self) -> None:
        """Close the idle connections of the running event loop (another loop's are its
        own), each once the answers of releases it owes have come or after
        ``connect_timeout``. The Redlock reconnects if it is used again. See
        :meth:`quorumlock.Redlock.close`."""
        io = self._io()
        member, stood = io.wakeups.stood()
        if stood:
            await asyncio.gather(*(self._leave_queue(key, member) for key in stood))
        owed = [wake_step(self.config, key) for key in io.wakeups.owed()]
        if owed:
            await asyncio.gather(*(io.fanout.run(step) for step in owed), return_exceptions=True)
        await io.fanout.close()
        io.wakeups.close()

    def _io(self) -> _LoopIO:
        """The running event loop's connections and subscriptions."""
        loop = asyncio.get_running_loop()
        for io in self._ios:
            if io.loop is loop:
                return io
        with self._ios_mutex:
            for io in self._ios:
                if io.loop is None or io.loop.is_closed():
                    # A closed loop's: they start afresh on this one (they notice).
                    io.loop = loop
                    return io
                continue
            io = _LoopIO(self)
            io.loop = loop
            self._ios = [*self._ios, io]
            return io

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _run(self, flow: Flow[T]) -> T:
        """Drive a sans-I/O flow: the whole asyncio I/O policy is these lines."""
        waiter: AsyncWaiter | None = None
        watched = ""
        io = self._io()
        wakeups = io.wakeups
        result: object = None
        try:
            step = next(flow)
            while True:
                if isinstance(step, Fanout):
                    step = flow.send(await self._round(step, waiter, io))
                elif isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    step = flow.send(time.monotonic())
                elif isinstance(step, Watch) and step.already:
                    watched = step.key  # (first: an interrupt may come as it returns)
                    waiter, woke, place = wakeups.listen(step.key)
                    listening = waiter is not None
                    heard = Woken(
                        time.monotonic(), False, listening=listening, woke=woke, place=place
                    )
                    step = flow.send(heard)
                elif isinstance(step, Watch):
                    waiter, missed = await wakeups.watch(step)
                    watched = step.key
                    step = flow.send(Woken(time.monotonic(), missed))
                elif waiter is None:  # a flow waits only after it watched
                    await asyncio.sleep(step.seconds)
                    step = flow.send(Woken(time.monotonic(), False))
                else:
                    notified = await waiter.wait(step.seconds, step.longer)
                    woken = Woken(time.monotonic(), notified, waiter.alone, waiter.requeue)
                    step = flow.send(woken)
        except StopIteration as stop:
            result = stop.value
            return cast("T", result)
        finally:
            # (only an acquire's flow waits: True, it got the lock)
            acquired = result is True
            if waiter is not None and (
                entry := wakeups.unwatch(waiter, kept=self.config.fair, acquired=acquired)
            ):
                task = asyncio.current_task()
                if self.config.fair and task is not None and not task.cancelling():
                    # a fair holder's entry heads the queue until it is gone: before
                    # the caller can release, so that the release names the next
                    await self._leave_queue(watched, entry, passing=not acquired)
                else:
                    # in a task of its own: this one may be cancelled, and its caller
                    # is not kept waiting for an entry that would expire anyway
                    leaving = asyncio.ensure_future(
                        self._leave_queue(watched, entry, passing=not acquired)
                    )
                    _LEAVING.add(leaving)
                    leaving.add_done_callback(_LEAVING.discard)
            if watched and not acquired:  # maybe taking the lock back, cut short
                wakeups.gave_up(watched)

    async def _leave_queue(self, key: str, member: str, *, passing: bool = False) -> None:
        """See :meth:`quorumlock.Redlock._leave_queue`."""
        step = leave_step(self.config, key, member, passing=passing)
        with contextlib.suppress(Exception):
            await self._io().fanout.run(step)

    async def _round(self, step: Fanout, waiter: AsyncWaiter | None, io: _LoopIO) -> Round:
        wakeups = io.wakeups
        sent = prepared(step, waiter, wakeups)
        if sent is None:  # a join of an entry in line already: nothing to send
            now = time.monotonic()
            return Round(now, now, ())
        kept = kept_turn(step, sent)
        step = sent
        round_ = await io.fanout.run(step)
        if waiter is not None and step.op is Op.QUEUE:
            waiter.entry.answered(round_.outcomes)
        elif waiter is not None and step.member and step.joins:
            wakeups.attempted(waiter, round_.outcomes, fair=step.fair)
        elif step.notify and step.op is Op.RELEASE and woke_the_line(round_.outcomes):
            wakeups.woke(
                step.key, stood_behind(step, round_), started=round_.started, token=step.token
            )
        if kept is not None and not freed_nothing(round_):
            wakeups.released(step.key, round_.started, round_.finished, kept=kept)
        self._after_round(step, round_)
        return round_


class _LoopIO:
    """One event loop's connections (its fan-out) and subscriptions: connections and
    tasks belong to the loop that made them, and two loops running at once in two
    threads would otherwise take each other's away in the middle of their rounds."""

    __slots__ = ("fanout", "loop", "wakeups")

    def __init__(self, redlock: Redlock) -> None:
        self.fanout = AsyncFanout(redlock._specs, redlock.config)
        self.wakeups = AsyncWakeups(redlock._specs, redlock.config.connect_timeout)
        self.wakeups.on_pass = functools.partial(_pass_turn, weakref.ref(redlock))
        self.wakeups.on_wake = functools.partial(_wake_next, weakref.ref(redlock))
        self.loop: asyncio.AbstractEventLoop | None = None  # None: no loop yet


#: Tasks taking entries off queues of waiters, kept here so that they are not collected.
_LEAVING: set[asyncio.Task[None]] = set()


def _pass_turn(ref: weakref.ref[Redlock], key: str, member: str) -> None:
    """See :func:`quorumlock._sync._pass_turn`: the same, in a task of its own."""
    redlock = ref()
    if redlock is not None:
        _aside(redlock, pass_step(redlock.config, key, member))


def _wake_next(ref: weakref.ref[Redlock], key: str) -> None:
    """See :func:`quorumlock._sync._wake_next`: the same, in a task of its own."""
    redlock = ref()
    if redlock is not None:
        _aside(redlock, wake_step(redlock.config, key))


def _aside(redlock: Redlock, step: Fanout) -> None:
    """Send ``step`` in a task of its own, its failure ignored."""

    async def run() -> None:
        with contextlib.suppress(Exception):
            await redlock._io().fanout.run(step)

    passing = asyncio.ensure_future(run())
    _LEAVING.add(passing)
    passing.add_done_callback(_LEAVING.discard)


def _bound_elsewhere(event: asyncio.Event) -> bool:
    """Whether ``event`` was used on an event loop other than the running one (asyncio
    binds an event to the first loop that waits on it)."""
    bound = getattr(event, "_loop", None)
    if bound is None:
        return False
    try:
        return bound is not asyncio.get_running_loop()
    except RuntimeError:  # no running event loop (adopt() may be called outside one)
        return False


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running event loop (adopt() may be called outside one)
        return None


class _Mark(NamedTuple):
    """Where a lock object stood as an acquire began (:meth:`Lock._mark`)."""

    token: str | None  # the token it held, if any
    depth: int  # a reentrant lock's hold count
    mine: bool  # taken by the calling task already


class _Gate:
    """Taken from the start of an acquire until the release: tasks that share one lock
    object take turns, first come first served, as on an ``asyncio.Lock``. Unlike one,
    it can be taken without awaiting (by ``adopt()``), and is handed straight to the
    next waiter on release, so that no task can slip in between."""

    def __init__(self) -> None:
        self.taken = False
        self.holder: object = None  # the task it was taken for, or that woke with it
        self._waiters: collections.deque[tuple[asyncio.Future[None], object]] = collections.deque()

    def try_take(self, holder: object = None) -> bool:
        if self.taken:
            return False
        self.taken, self.holder = True, holder
        return True

    async def take(self, timeout: float | None, holder: object = None) -> bool:
        """Wait up to ``timeout`` (None: no bound) for the gate; False when the time is
        up. A cancelled waiter leaves the queue and never holds the gate."""
        if not self.taken and not self._waiters:
            self.taken, self.holder = True, holder
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (waiter, holder)
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(timeout):
                await waiter
            self.holder = holder
        except BaseException as exc:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed to us as we gave up: pass it on
            if isinstance(exc, TimeoutError):
                return False
            raise
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)
        return True  # handed over by give(): ``taken`` stayed True

    def give(self) -> None:
        """Release: hand the gate to the first waiter still waiting (its entry stays
        until it wakes, and takes the gate), or free it."""
        while self._waiters:
            waiter, _ = self._waiters[0]
            if not waiter.done():
                waiter.set_result(None)  # the one step that hands it over
                return
            self._waiters.popleft()
        self.taken, self.holder = False, None

    def held_by(self, holder: object) -> bool:
        """Whether the gate is taken for ``holder`` still: not freed, and not handed to
        a waiter, even one that has not woken yet."""
        handed = any(waiter.done() and not waiter.cancelled() for waiter, _ in self._waiters)
        return self.taken and self.holder is holder and not handed


class Lock(LockBase):
    """The asyncio twin of :class:`quorumlock.Lock`.

    ``lost`` is an ``asyncio.Event`` set when the lock is lost while held.

    Tasks may share one object, as they share an ``asyncio.Lock`` (a lock made at
    module level and entered by every handler): an acquire waits while another task's
    acquisition of this object is in progress or held, until that one is released,
    within its own ``timeout`` (``blocking=False`` returns False at once). A task
    cancelled while it waits leaves no key behind. Any task may release it; the task
    that holds it gets :class:`LockNotReentrant` from a second acquire. A release while
    another task's acquire or release of this object is under way raises
    :class:`LockNotHeld` and leaves that acquire or release alone.
    """

    _redlock: Redlock

    def __init__(self, redlock: Redlock, options: LockOptions) -> None:
        super().__init__(redlock, options)
        self._gate = _Gate()
        self._entered: dict[asyncio.Task[Any] | None, str | None] = {}  # token per block
        self._keeper: asyncio.Task[None] | None = None
        self._owner: asyncio.Task[Any] | None = None  # the task inside ``async with``
        self._owner_cancelling = 0
        self._cancelled_owner = False
        self._handed_over = False  # exported inside ``async with``: leaving it does nothing
        self._releasing = False  # a release() of this object is under way
        self._lost = asyncio.Event()

    @property
    def lost(self) -> asyncio.Event:
        """Set when the lock is lost while held (see the class)."""
        return self._lost

    async def acquire(self, blocking: bool = True, timeout: Duration | None = None) -> bool:
        """Acquire the lock: see :meth:`quorumlock.Lock.acquire`, same contract.

        If the task is cancelled meanwhile, keys this attempt may have set are deleted
        before ``CancelledError`` propagates; so they are when a signal handler's
        exception (``SystemExit``, ``KeyboardInterrupt``) is raised in the task, even as
        the call returns with the lock taken.
        """
        mark = self._mark()
        try:
            return await self._acquire(blocking, timeout, raise_on_failure=False)
        except BaseException as exc:
            await self._undo_since(mark, exc)
            raise

    def _mark(self) -> _Mark:
        """Where the object stands before an acquire (see :meth:`_undo_since`)."""
        me = _current_task()
        mine = me is not None and self._occupied and self._occupant is me
        return _Mark(self._state.token if self._state.held else None, 0, mine)

    async def _undo_since(self, mark: _Mark, error: BaseException) -> None:
        """``error`` came out of an acquire, or of entering ``async with``, after the hold
        was made (a signal handler's exception raised in the task as the call
        returned): its caller cannot know that it holds the lock. The hold this call
        made is undone: the keys are deleted, and the object is free. So is the object,
        or its gate, that the call took before it was interrupted, with no hold made."""
        me = _current_task()
        if isinstance(error, GeneratorExit) or me is None:
            return  # a closed coroutine may not await
        if self._state.held:
            if self._state.token == mark.token or self._occupant is not me:
                return  # held before this call, or by another task
            self._entered.pop(me, None)
            try:
                await _complete(self._stop_keeper())
                await self._delete_keys()
            finally:
                self._vacate()
        elif not mark.mine and self._gate.held_by(me):
            self._free_in_full()  # interrupted as it took the gate, or the object

    async def _acquire(
        self, blocking: bool, timeout: Duration | None, *, raise_on_failure: bool
    ) -> bool:
        started = time.monotonic()
        wait = check_wait(blocking, timeout)
        me = _current_task()
        if self._occupied and me is not None and self._occupant is me:
            # Still ours (maybe expired or lost, not released): acquire again in place.
            self._reenter(started)
        else:
            self._redlock._check_nesting(self, me, blocking and wait is None)
            taken = await self._gate.take(wait, me) if blocking else self._gate.try_take(me)
            if not taken:
                return self._busy(raise_on_failure)
            self._occupy(me)
            if wait is not None:  # the wait for the object counts against ``timeout``
                wait = max(0.0, wait - (time.monotonic() - started))
        flow = self._state.acquire(
            blocking=blocking,
            timeout=wait,
            now=time.monotonic(),
            raise_on_failure=raise_on_failure,
            held_by=self._known_holder,
        )
        acquired = False
        try:
            acquired = await self._redlock._run(flow)
            return self._acquire_ended(acquired, started)
        except BaseException as exc:
            # Whatever happens, the object is freed for the next task, unless this call
            # passed it on already (a refusal interrupted once it let the object go):
            # the next task may hold it by the time the keys below are deleted.
            ours = self._gate.held_by(me)
            try:
                self._acquire_failed(exc, started)
                # Cancelled, or interrupted (a signal handler's SystemExit, a
                # KeyboardInterrupt the loop did not turn into a cancellation, a soft
                # time limit), maybe mid-round or after it: some servers may have
                # granted the lock. Delete our keys before leaving. (quorumlock's own
                # errors come once the attempt was undone; a coroutine closed unfinished
                # may not await.)
                if _cut_short(exc):
                    if acquired:  # raised as it began to hold the lock: it does not
                        await _complete(self._stop_keeper())
                    await self._delete_keys()
            finally:
                if ours:
                    self._free_in_full()
            raise

    async def _delete_keys(self, state: LockState | None = None) -> None:
        """Delete the keys of this object's token (or of ``state``'s) on every server,
        after an acquire, a release or a hand-over that was cut short; the clean-up
        completes even if the task is cancelled meanwhile."""
        flow = (state or self._state).abandon()
        await _complete(self._redlock._run(as_cleanup(flow)))

    def _free_in_full(self) -> None:
        """Free the object that the calling task still has (occupied, or only its gate
        taken), whatever part of the freeing an interrupt let run before."""
        self._occupied = True  # so that ``_vacate`` runs in full
        self._vacate()

    def _occupy(self, owner: object) -> None:
        super()._occupy(owner)
        _OCCUPIED.add(self)

    def _open_gate(self) -> None:
        _OCCUPIED.discard(self)
        self._gate.give()

    def _after_fork(self) -> None:
        """In a forked child: the parent's acquisition is not the child's, and the
        parent's tasks (acquiring, waiting for the object, keeping the lease, inside
        ``async with``) run on no loop of the child: the object is free."""
        self._state.forget()
        self._gate = _Gate()
        self._occupied = False
        self._occupant = None
        self._keeper = None
        self._owner = None
        self._entered.clear()
        self._releasing = False
        self._handed_over = False
        self._enter_held = False
        self._lost = asyncio.Event()
        redlock = self._redlock
        redlock._occupied_mutex = threading.Lock()
        redlock._occupied.clear()

    def _adopt(self, handle: LockHandle, *, validity: float, now: float) -> None:
        if self._needs_keeper:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                raise RuntimeError(
                    f"adopting lock {shown(self.name)} with auto_extend or on_lost needs a "
                    "running event loop (its lease is a task of that loop): call adopt() "
                    "from a coroutine"
                ) from None
        super()._adopt(handle, validity=validity, now=now)

    def _occupy_adopted(self) -> None:
        if not self._gate.try_take():  # a fresh object: never taken
            raise RuntimeError("an adopted lock object was already taken")
        self._occupy(_current_task())

    def _start_holding(self) -> None:
        if _bound_elsewhere(self._lost):
            # An event of an earlier event loop (the object outlives ``asyncio.run``):
            # waiting on it here would raise RuntimeError. Not set: nothing is lost.
            self._lost = asyncio.Event()
        self.lost.clear()
        self._handed_over = False
        if self._needs_keeper:
            self._start_keeper()

    async def locked(self) -> bool:
        """Whether anyone holds the lock: see :meth:`quorumlock.Lock.locked`."""
        return await self._redlock._run(self._state.probe(mine=False))

    async def owned(self) -> bool:
        """Whether this object still holds the lock, checked on the servers: see
        :meth:`quorumlock.Lock.owned`."""
        return await self._redlock._run(self._owning())

    async def extend(self, ttl: Duration | None = None) -> float:
        """Extend the lock: see :meth:`quorumlock.Lock.extend`, same contract (a new
        ttl from now, not time added).

        The extension completes even if the awaiting task is cancelled, then
        ``CancelledError`` propagates: the servers may have run it already, and a shorter
        ttl than the one held makes the keys expire sooner than ``validity`` said.
        """
        return cast("float", await _complete(self._redlock._run(self._extending(ttl))))

    async def release(self) -> bool:
        """Release the lock: see :meth:`quorumlock.Lock.release`, same contract.

        A lease extension in flight is stopped first, and none happens after. The release
        completes even if the awaiting task is cancelled. A signal handler's exception
        (``SystemExit``, ``KeyboardInterrupt``) raised in the task, or in the task the
        release runs in (which ends the event loop: ``asyncio.run`` then cancels the
        caller), deletes the keys unless the release's round ran to its end, and frees
        the object, before it goes on.
        """
        holder, work, began = self._gate.holder, None, False
        try:
            # Nothing to release here (never acquired, released already, or another
            # task's release of this object under way): raise before anything changes,
            # and leave the object to the task whose acquire or release it is.
            if self._releasing:
                raise LockNotHeld(
                    f"cannot release lock {shown(self.name)}: another task is releasing "
                    "it with this Lock object",
                    name=self.name,
                )
            self._state.check_release()
            started = time.monotonic() if self._observer is not None else 0.0
            self._enter_held = False
            self._releasing = began = True
            work = asyncio.ensure_future(self._release())
            released: bool
            was_lost: bool
            ran_out: bool
            released, was_lost, ran_out = await _complete(work)
            self._releasing = False
            self._vacate()
        except BaseException as exc:
            if began or (_cut_short(exc) and not self._releasing and self._holds):
                await self._end_release(exc, work, holder)
            raise
        self._release_ended(released, was_lost, ran_out, started)
        return released

    async def _end_release(
        self,
        error: BaseException,
        work: asyncio.Future[tuple[bool, bool, bool]] | None,
        holder: object,
    ) -> None:
        """``error`` came out of a release of this object, or out of a block's exit or a
        hand-over before its round (``work``: the task the round runs in, None when it
        never began). If it cut the call short (a cancellation, or a signal handler's
        exception raised in the task or in ``work``), the keys are deleted unless the
        round ran to its end. Then the object is freed, if the call had not freed it
        yet (``holder``: its gate's holder as the call began)."""
        # Not freed yet, or only in part (its gate not passed on): nobody else can take
        # it meanwhile. Freed (a hand-over cut short as it returned): the next task may
        # take it, with a token and a lease of its own, while the keys are deleted, so
        # they are deleted from a copy of the state, and the object is left alone.
        ours = self._occupied or self._gate.held_by(holder)
        state = None if ours else copy.copy(self._state)
        self._releasing = self._releasing or ours  # no other task's release meanwhile
        try:
            if _cut_short(error) and _current_task() is not None:
                if work is not None and not work.done():
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await _complete(work)  # the round goes on in its own task
                if work is None or work.cancelled() or _cut_short(work.exception()):
                    if ours:
                        await _complete(self._stop_keeper())
                    await self._delete_keys(state)
        finally:
            if ours:
                self._releasing = False
                self._free_in_full()

    async def export(self, *, keep: bool = False) -> LockHandle:
        """Hand the held lock over: see :meth:`quorumlock.Lock.export`, same contract.

        Unless ``keep``, the lease task is stopped before this returns, and leaving an
        ``async with`` block of this lock then does nothing. A cancellation, or a signal
        handler's exception, that comes once the object let the lock go deletes the
        keys before it goes on: the handle never reaches the caller, and nobody else
        could release them.
        """
        held, holder = self._state.held, self._gate.holder
        try:
            handle = self._export(keep)
            if not keep:
                self._enter_held = False
                self._handed_over = True
                await _complete(self._stop_keeper())
                # Only now: the next task's acquisition may start a lease task of its own.
                self._vacate()
            return handle
        except BaseException as exc:
            if held and not keep and not self._state.held:  # let go, handle not returned
                await self._end_release(exc, None, holder)
            raise

    async def _release(self) -> tuple[bool, bool, bool]:
        """Whether the release round found the lock held, whether a loss was reported
        before it (also by the lease's task, which may run only as it is stopped here:
        a holder that never awaited while the validity ran out), and whether the
        validity had run out before it."""
        await self._stop_keeper()
        was_lost, ran_out = self._release_begins()
        return await self._redlock._run(self._state.release()), was_lost, ran_out

    # Lease keeping: one task per held lock that needs it.

    def _start_keeper(self) -> None:
        # The name first: nothing runs between making the coroutine and its task, so
        # that an interrupt cannot leave a coroutine that was never awaited.
        name = f"quorumlock-lease:{self.name[:100]}"
        self._keeper = asyncio.get_running_loop().create_task(self._keep(), name=name)

    async def _stop_keeper(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is None or keeper is asyncio.current_task():
            return
        home = keeper.get_loop()
        if home is not asyncio.get_running_loop():
            # A task of another event loop: ended with it when it closed (the lease
            # stopped there), or stopped on it, where it runs, without waiting for it.
            if not home.is_closed():
                with contextlib.suppress(RuntimeError):  # closed meanwhile
                    home.call_soon_threadsafe(keeper.cancel)
            return
        keeper.cancel()
        await asyncio.wait([keeper])

    async def _keep(self) -> None:
        try:
            while True:
                now = time.monotonic()
                step = self._due(now)
                if step is None:
                    break
                at: float | None
                if isinstance(step, Wake):  # asked again on waking (see LockState.tend)
                    at = step.at
                else:
                    result: bool | Exception
                    try:
                        result = await self._redlock._run(
                            self._state.renew(ttl_ms=step.ttl_ms, now=now)
                        )
                    except Exception as exc:  # LockLost among them: the reaction tells
                        result = exc
                    at = self._after_renewal(now, result)
                    if at is None:
                        return
                await asyncio.sleep(max(0.0, at - time.monotonic()))
        except asyncio.CancelledError:
            owner = self._owner
            if (
                self._keeper is asyncio.current_task()
                and self.held
                and not self._releasing
                and (owner is None or owner.done())
            ):
                # Not stopped by the lock (a release, a hand-over: _stop_keeper), nor by
                # a release under way or the end of an ``async with`` block that will
                # release it (its task was cancelled too): its event loop is ending
                # (asyncio.run() cancels the tasks left), or someone cancelled every
                # task. A lease must not end in silence.
                logger.warning(
                    "the lease of lock %s was cancelled while the lock is held (its event "
                    "loop is ending, or its task was cancelled): it is no longer renewed "
                    "nor watched, and the lock expires in %.3f s; release it before its "
                    "loop ends",
                    shown(self.name),
                    self.validity,
                )
            raise

    def _stop_lease(self, error: LockLost) -> None:
        # The lease task ends by itself; the block the lock protects is cancelled.
        owner = self._owner
        if owner is not None and not owner.done() and owner is not asyncio.current_task():
            self._cancelled_owner = True
            owner.cancel(f"quorumlock: {error}")

    async def __aenter__(self) -> Self:
        if self._enter_held:  # adopted: held already
            self._enter_held = False
            self.check()
            self._entered_now()
            return self
        mark = self._mark()
        try:
            await self._acquire(
                self._options.blocking, self._options.timeout, raise_on_failure=True
            )
            self._entered_now()
            return self
        except BaseException as exc:
            await self._undo_since(mark, exc)
            raise

    def _entered_now(self) -> None:
        """The ``async with`` block of the current task begins, holding the lock."""
        self._entered[_current_task()] = self._state.token
        self._owner = asyncio.current_task()
        self._owner_cancelling = self._owner.cancelling() if self._owner else 0
        self._cancelled_owner = False
        if self._keeper is None:
            self._start_keeper()  # watches the deadline at least: loss cancels the block

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        me = asyncio.current_task()  # a coroutine: runs in a task
        try:
            entered = self._entered.pop(me, None)
            if entered != self._state.token and self._occupant is not me:
                # Released (or handed over) inside the block, and acquired by another task
                # since: that acquisition is not this block's to end. One this task made
                # in the block is, as the sync block ends it.
                return
            owner, self._owner = self._owner, None
            lost_here = self._cancelled_owner
            self._cancelled_owner = False
            if lost_here and owner is not None:
                owner.uncancel()
            if self._handed_over:  # exported in the block: the adopter holds it now
                self._handed_over = False
                return
            was_lost = self._lost_now
            released = True
            if self._holds:
                released = await self.release()
            else:
                await self._stop_keeper()
                if not lost_here:
                    return  # released inside the block, as the sync __exit__ allows
            if lost_here and exc_type is asyncio.CancelledError:
                if owner is not None and owner.cancelling() > self._owner_cancelling:
                    return  # someone else cancelled us too: let CancelledError propagate
                raise LockLost(
                    f"lock {shown(self.name)} was lost: the async with block was cancelled."
                    f"{self._state.lost_because()}",
                    name=self.name,
                    outcomes=self.outcomes,
                ) from exc
            self._check_exit(exc_type, was_lost, released, "async with")
        except BaseException as interrupt:
            await self._finish_interrupted_release(interrupt, me)
            raise

    async def _finish_interrupted_release(
        self, error: BaseException, me: asyncio.Task[Any] | None
    ) -> None:
        """``error`` came out of a release or a block's exit by ``me``. An interrupt (a
        cancellation, a signal handler's exception) that came before the release began
        (it finishes itself once it has) releases all the same."""
        if _cut_short(error) and not self._releasing and self._occupant is me:
            self._entered.pop(me, None)
            if self._holds:
                await self._end_release(error, None, self._gate.holder)


class RLock(ReentrantMixin, Lock):
    """The asyncio twin of :class:`quorumlock.RLock`: reentrant for the task that holds
    it (``asyncio.current_task()``); other tasks wait, as for a Lock."""

    async def _acquire(
        self, blocking: bool, timeout: Duration | None, *, raise_on_failure: bool
    ) -> bool:
        check_wait(blocking, timeout)  # a re-entry refuses bad arguments as an acquire does
        if self._enter_again(_current_task()):
            return True
        acquired = await super()._acquire(blocking, timeout, raise_on_failure=raise_on_failure)
        if acquired:
            self._held_once()
        return acquired

    async def release(self) -> bool:
        """Release one hold: see :meth:`quorumlock.RLock.release`, same contract."""
        me, depth = asyncio.current_task(), self._depth  # the owner's own to change
        try:
            if self._leave_inner(me):
                return True
            return await super().release()
        except BaseException as exc:
            await self._leave_interrupted(exc, depth, me)
            raise

    async def __aenter__(self) -> Self:
        mark = self._mark()
        try:
            if not self._enter_again(_current_task()):
                await super().__aenter__()
            return self
        except BaseException as exc:
            await self._undo_since(mark, exc)
            raise

    def _mark(self) -> _Mark:
        return super()._mark()._replace(depth=self._depth)

    async def _undo_since(self, mark: _Mark, error: BaseException) -> None:
        depth = mark.depth
        if depth and self._depth > depth and self._occupant is _current_task():
            self._depth = depth  # a re-entry: undone, the outer hold stays
            return
        await super()._undo_since(mark, error)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        me, depth = asyncio.current_task(), self._depth  # the owner's own to change
        try:
            if depth > 1 and self._occupant is me:
                self._depth -= 1
                self._check_exit(exc_type, self._lost_now, True, "async with")
                return
            await super().__aexit__(exc_type, exc, tb)
        except BaseException as interrupt:
            await self._leave_interrupted(interrupt, depth, me)
            raise

    async def _leave_interrupted(
        self, error: BaseException, depth: int, me: asyncio.Task[Any] | None
    ) -> None:
        """``error`` came out of a release or a block's exit that began at ``depth``. An
        interrupt (a cancellation, a signal handler's exception) that came before the
        call left its hold leaves it all the same: an inner hold ends (the outer one's
        release would otherwise be a level short, and leave the lock held), the
        outermost one is released as :meth:`Lock.release` ends an interrupted release.
        A release's own errors change nothing."""
        if not _cut_short(error) or self._occupant is not me or self._depth != depth:
            return  # not an interrupt, not the owner's, or the hold was left already
        if depth > 1:
            self._depth = depth - 1
        elif depth == 1:
            await self._finish_interrupted_release(error, me)

    def _after_fork(self) -> None:
        self._depth = 0  # the parent's holds are the parent's
        super()._after_fork()


class MultiLock(MultiLockMixin, Lock):
    """The asyncio twin of :class:`quorumlock.MultiLock`."""


class Election(ElectionBase[Lock]):
    """A leader election on one name: :meth:`Redlock.election` makes it."""

    _redlock: Redlock

    def campaign(self, timeout: Duration | None = None) -> Campaign:
        """Campaign for leadership: ``async with election.campaign() as term:``; see
        :meth:`quorumlock.Election.campaign`, same contract."""
        return Campaign(self, timeout)

    async def leader(self) -> Leader | None:
        """The current leader read from a majority, or None: see
        :meth:`quorumlock.Election.leader`, same contract."""
        return await self._redlock._run(self._leader())


class Campaign(CampaignBase[Lock]):
    """``async with`` it to lead: see :meth:`Election.campaign`."""

    async def __aenter__(self) -> Term[Lock]:
        lock = self._entering()
        # Entered again by the task that leads through it: the lock's refusal
        # (LockNotReentrant) must not resign the leadership the outer block runs on.
        leading, entered = lock._mark().mine, False
        try:  # the lock's own enter too: an interrupt as it returns is undone here
            await lock.__aenter__()
            entered = True
            return await lock._redlock._run(self._claiming())
        except BaseException as exc:
            if entered or not leading:
                await lock.__aexit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        lock = self._lock
        try:
            await lock.__aexit__(exc_type, exc, tb)
        except BaseException as error:
            # Interrupted as the lock's exit began, before its own guard: the campaign
            # ends all the same.
            await lock._finish_interrupted_release(error, _current_task())
            raise


class ReadWriteHold(RWHoldBase, Lock):
    """A reader or the writer of a read-write lock: see :class:`quorumlock.ReadWriteHold`;
    an asyncio :class:`Lock` in every other respect."""

    async def downgrade(self) -> None:
        """Turn the held write lock into a read lock: see
        :meth:`quorumlock.ReadWriteHold.downgrade`, same contract.

        The downgrade completes even if the awaiting task is cancelled (the servers may
        have run it already), then ``CancelledError`` propagates: the hold is a reader.
        """
        await _complete(self._redlock._run(self._downgrading()))


class ReadWriteLock(ReadWriteLockBase[ReadWriteHold]):
    """What ``Redlock.rwlock()`` returns: ``read()`` and ``write()`` make holds."""

    _hold_class = ReadWriteHold


class Permit(PermitMixin, Lock):
    """One permit of a counting semaphore: see :meth:`Redlock.semaphore`."""


def _cut_short(error: BaseException | None) -> bool:
    """Whether ``error`` cut a lock object's call short from outside: a cancellation, or
    an exception that a signal handler raised in the task (``SystemExit``, a
    ``KeyboardInterrupt`` the event loop did not turn into a cancellation). quorumlock's
    own errors come with nothing of the call left to undo, and a coroutine closed
    unfinished (``GeneratorExit``) may not await."""
    return error is not None and not isinstance(error, (QuorumLockError, GeneratorExit))


async def _complete(aw: Any) -> Any:
    """Await ``aw`` to the end even if the awaiting task is cancelled meanwhile.

    The work runs in its own task; a cancellation of the caller is re-raised once the
    work is done, so a release or a cleanup is never cut in half.
    """
    try:
        task = asyncio.ensure_future(aw)
    except BaseException:  # interrupted as it began: the work never runs
        if asyncio.iscoroutine(aw):
            aw.close()  # not "never awaited"
        raise
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return result


# Lock objects acquiring or holding (occupied), so that a forked child can free them.
_OCCUPIED: weakref.WeakSet[Lock] = weakref.WeakSet()


def _forget_after_fork() -> None:
    """In a forked child: the parent's locks are the parent's; the child holds none, and
    none of its tasks is acquiring (its release would have deleted the parent's keys)."""
    for lock in list(_OCCUPIED):
        lock._after_fork()
    _OCCUPIED.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
