"""The synchronous API: :class:`Redlock` and its :class:`Lock` objects.

A thin shell: the protocol lives in ``quorumlock._algorithm`` as sans-I/O flows, which
this module drives with blocking, multiplexed I/O (``quorumlock._io.fanout``). Leases are
kept by one daemon thread per ``Redlock`` (:class:`_LeaseKeeper`), never one per lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import heapq
import inspect
import itertools
import logging
import operator
import os
import queue
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import NamedTuple, ParamSpec, Protocol, Self, TypeVar, cast

from quorumlock._algorithm.config import Duration, LockOptions, check_wait, shown
from quorumlock._algorithm.election import Leader
from quorumlock._algorithm.flows import (
    Fanout,
    Flow,
    Op,
    Round,
    Sleep,
    Wait,
    Watch,
    Woken,
    as_cleanup,
    woke_the_line,
)
from quorumlock._algorithm.handoff import LockHandle
from quorumlock._algorithm.lockstate import Wake
from quorumlock._election import CampaignBase, ElectionBase, Term
from quorumlock._exceptions import LockLost, LockNotHeld, QuorumLockError
from quorumlock._family import Family, MultiLockMixin, ReentrantMixin
from quorumlock._frontend import (
    LockBase,
    RedlockBase,
    SyncDecorator,
    freed_nothing,
    is_async_callable,
    kept_turn,
    leave_step,
    pass_step,
    prepared,
    stood_behind,
    wake_step,
)
from quorumlock._io.fanout import SyncFanout
from quorumlock._io.flag import Flag
from quorumlock._io.servers import ServerArg
from quorumlock._io.wakeups import SyncWakeups, Waiter
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
    "Redlock",
]

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
logger = logging.getLogger("quorumlock")


class Redlock(
    RedlockBase["Lock", SyncDecorator, "ReadWriteLock", "ReadWriteHold", ServerArg],
    Family["RLock", "MultiLock"],
):
    """A lock manager over N independent Redis or Valkey masters.

    ``servers`` are URLs (``redis://``, ``rediss://`` for TLS, ``unix://``) or
    ``redis.Redis`` client objects (a Sentinel ``master_for(...)`` client works too), or
    ``redis.cluster.RedisCluster`` clients: a whole cluster is one instance, each name
    served by the master that owns its slot (``docs/cluster.md``). quorumlock opens its
    own connections to each. N = 1 is the correct single-instance
    lock, but it is **not fault tolerant**: if that server loses its data, the lock is
    gone. Use 3 or 5 independent masters for that (an even N tolerates no more failures
    than N - 1 and warns with :class:`QuorumLockWarning`).

    Keyword-only options, with their defaults (see :class:`RedlockConfig`):
    ``clock_drift_factor=0.01``, ``retry_delay=0.2``, ``retry_count=None``,
    ``instance_timeout=None`` (derived from each lock's ttl), ``connect_timeout=1.0``,
    ``busy_poll=0.0002``, ``max_ttl=60.0`` (the longest ttl, and the length of the
    restart quarantine; None turns it off), ``fencing=False``, ``wake_on_release=True``
    (a blocking acquire is woken by the release it waits for, not by its next poll),
    ``fair=False`` (True: first come, first served, in the order of the name's queue of
    waiters), ``observer=None`` (a :class:`LockObserver` told of every acquire, extend,
    release, loss and round).

    Raises ``TypeError`` or :class:`ConfigurationError` for bad arguments, before any
    network call. Thread safe: one ``Redlock`` serves a whole process.
    """

    def _setup(self) -> None:
        self._fanout = SyncFanout(self._specs, self.config)
        self._wakeups = SyncWakeups(self._specs, self.config.connect_timeout)
        self._wakeups.on_pass = functools.partial(_pass_turn, weakref.ref(self))
        self._wakeups.on_wake = functools.partial(_wake_next, weakref.ref(self))
        self._keeper = _LeaseKeeper()
        self._lock_class = Lock
        self._rlock_class = RLock
        self._multi_class = MultiLock
        self._rwlock_class = ReadWriteLock
        self._after_round = round_hook(log_round, self._observer)
        _REDLOCKS.add(self)

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
        ``validity``, leases, ``with``); ``permit.slot`` says which of the permits it
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

    def _decorator(self, options: LockOptions) -> SyncDecorator:
        def decorate(func: Callable[P, R]) -> Callable[P, R]:
            if not callable(func):
                raise TypeError(f"synchronized decorates a function, not {func!r}")
            if is_async_callable(func):
                raise TypeError(
                    f"{func!r} is a coroutine function: decorate it with "
                    "quorumlock.asyncio.Redlock.synchronized"
                )
            if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
                raise TypeError(
                    f"{func!r} is a generator function: the lock would be released "
                    "before its body runs"
                )

            @functools.wraps(func)
            def locked(*args: P.args, **kwargs: P.kwargs) -> R:
                with Lock(self, options):
                    return func(*args, **kwargs)

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
        """A leader election on ``name``: at most one leader at a time among the
        processes that campaign, its term numbers strictly increasing (docs/election.md).

        ``with election.campaign(timeout=None) as term:`` blocks until this process
        leads; leadership is renewed while the block runs and resigned when it ends (the
        next candidate is woken at once, unless this Redlock was made with
        ``wake_on_release=False``: then at its next poll). ``identity`` (default
        ``"<host>:<pid>"``) is what :meth:`Election.leader` reports to anyone;
        ``on_lost(term)`` is called (on a thread of its own, as a lock's is) if
        leadership is lost while the block runs (``term.lost`` is set, and leaving the
        block raises :class:`LockLost`). The election is the lock ``name``, taken with
        fencing on whatever this Redlock's ``fencing``. Raises ``TypeError`` or
        :class:`ConfigurationError` for bad input, before any round.
        """
        return Election(self, name, ttl=ttl, identity=identity, on_lost=on_lost)

    def _after_fork(self) -> None:
        """In a forked child: no thread of the child is acquiring or holding, and a
        thread of the parent may have held any of this Redlock's inner locks at the fork
        (it does not exist here to let them go): they are made anew."""
        self._occupied_mutex = threading.Lock()
        self._occupied.clear()
        self._fanout.after_fork()
        self._wakeups.after_fork()
        self._keeper = _LeaseKeeper()  # the parent's lease thread is the parent's

    def close(self) -> None:
        """Close the idle connections. The Redlock reconnects if it is used again, and
        its next round waits for the new connections as a new Redlock's first round does.

        A connection that still owes the answer of a release (whose round ended before
        a slow server answered) is closed once it came, or after ``connect_timeout``: a
        release that such a server answered NOSCRIPT to (its script cache was emptied)
        is sent again first, so that its key does not stay there until its ttl.

        Entries this process's releases put in line behind the waiters they woke, and
        that no acquire took up, are taken off the queues first, and the waiters that its
        releases left asleep to take the lock back, and that no acquire followed, are
        woken (one round)."""
        member, stood = self._wakeups.stood()
        steps = [leave_step(self.config, key, member) for key in stood]
        steps += [wake_step(self.config, key) for key in self._wakeups.owed()]
        if steps:
            with contextlib.suppress(Exception):
                self._fanout.run_batch(steps)
        self._fanout.close()
        self._wakeups.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self, flow: Flow[T], let_go: threading.RLock | None = None) -> T:
        """Drive a sans-I/O flow: the whole sync I/O policy is these lines. ``let_go``:
        a lock object's mutex, which this thread holds and lets go of while the flow
        waits (a pause between attempts, or for a release to be announced)."""
        waiter: Waiter | None = None
        watched = ""
        result: object = None
        try:
            step = next(flow)
            while True:
                if isinstance(step, Fanout):
                    step = flow.send(self._round(step, waiter))
                elif isinstance(step, Sleep):
                    step = flow.send(_without(let_go, functools.partial(_sleep, step.seconds)))
                elif isinstance(step, Watch) and step.already:
                    watched = step.key  # (first: an interrupt may come as it returns)
                    waiter, woke, place = self._wakeups.listen(step.key)
                    listening = waiter is not None
                    heard = Woken(
                        time.monotonic(), False, listening=listening, woke=woke, place=place
                    )
                    step = flow.send(heard)
                elif isinstance(step, Watch):
                    waiter, missed = self._wakeups.watch(step)
                    watched = step.key
                    step = flow.send(Woken(time.monotonic(), missed))
                else:
                    step = flow.send(_wait(waiter, step, let_go))
        except StopIteration as stop:
            result = stop.value
            return cast("T", result)
        finally:
            # (only an acquire's flow waits: True, it got the lock)
            acquired = result is True
            if waiter is not None and (
                entry := self._wakeups.unwatch(waiter, kept=self.config.fair, acquired=acquired)
            ):
                # interrupted (KeyboardInterrupt, a SIGTERM handler's SystemExit, a
                # soft time limit), maybe mid-round: a clean-up (Fanout.cleanup), as in
                # acquire() and release()
                raised = sys.exc_info()[1]
                cleanup = raised is not None and _cut_short(raised)
                self._leave_queue(watched, entry, cleanup=cleanup, passing=not acquired)
            if watched and not acquired:  # maybe taking the lock back, cut short
                self._wakeups.gave_up(watched)

    def _leave_queue(
        self, key: str, member: str, *, cleanup: bool = False, passing: bool = False
    ) -> None:
        """Take this process's entry off ``key``'s queue of waiters (its last waiter gave
        up, or acquired without being woken by name); left to expire where it fails.
        ``cleanup``: the waiter was interrupted (``Fanout.cleanup``). ``passing``: it
        gave up, and where the lock is free the next waiter is woken (a release may
        have named the entry, as the waiter left: nobody else would be woken)."""
        step = leave_step(self.config, key, member, passing=passing)
        if cleanup:
            step = dataclasses.replace(step, cleanup=True)
        with contextlib.suppress(Exception):
            self._fanout.run(step)

    def _round(self, step: Fanout, waiter: Waiter | None) -> Round:
        sent = prepared(step, waiter, self._wakeups)
        if sent is None:  # a join of an entry in line already: nothing to send
            now = time.monotonic()
            return Round(now, now, ())
        kept = kept_turn(step, sent)
        step = sent
        round_ = self._fanout.run(step)
        if waiter is not None and step.op is Op.QUEUE:
            waiter.entry.answered(round_.outcomes)
        elif waiter is not None and step.member and step.joins:
            self._wakeups.attempted(waiter, round_.outcomes, fair=step.fair)
        elif step.notify and step.op is Op.RELEASE and woke_the_line(round_.outcomes):
            self._wakeups.woke(
                step.key, stood_behind(step, round_), started=round_.started, token=step.token
            )
        if kept is not None and not freed_nothing(round_):
            self._wakeups.released(step.key, round_.started, round_.finished, kept=kept)
        self._after_round(step, round_)
        return round_

    def _run_many(self, flows: Sequence[Flow[T]]) -> list[T | Exception]:
        """Drive flows that only fan out (lease renewals) together: the steps they are at
        go out as one batch (:meth:`SyncFanout.run_batch`). Each flow's result, or the
        exception it raised."""
        results: dict[int, T | Exception] = {}
        pending: dict[int, Fanout] = {}
        answers: dict[int, Round | None] = dict.fromkeys(range(len(flows)))
        while answers:
            for i, answer in answers.items():
                outcome = _advance(flows[i], answer)
                if isinstance(outcome, Fanout):
                    pending[i] = outcome
                else:
                    results[i] = outcome
            answers = {}
            if pending:
                batch = list(pending.items())
                pending.clear()
                rounds = self._fanout.run_batch([step for _, step in batch])
                for (i, step), round_ in zip(batch, rounds, strict=True):
                    self._after_round(step, round_)
                    answers[i] = round_
        return [results[i] for i in range(len(flows))]


def _pass_turn(ref: weakref.ref[Redlock], key: str, member: str) -> None:
    """The subscriber thread heard a release name this process's entry of ``key``, which
    a release of this process put in line and no acquire took up: pass the turn on
    (:meth:`~quorumlock._io.wakeups.Woke.passing`), in a thread of its own, so that the
    subscriber thread goes on reading."""
    redlock = ref()
    if redlock is not None:
        _aside(redlock, pass_step(redlock.config, key, member))


def _wake_next(ref: weakref.ref[Redlock], key: str) -> None:
    """A release of ``key`` by this process left the next waiter asleep, to take the lock
    back, and no acquire followed in time (:class:`~quorumlock._io.wakeups.Turns`): wake
    it, in a thread of its own."""
    redlock = ref()
    if redlock is not None:
        _aside(redlock, wake_step(redlock.config, key))


def _aside(redlock: Redlock, step: Fanout) -> None:
    """Send ``step`` in a thread of its own, its failure ignored (the waiters' polls
    cover it)."""

    def run() -> None:
        with contextlib.suppress(Exception):
            redlock._fanout.run(step)

    threading.Thread(target=run, name="quorumlock-pass", daemon=True).start()


def _advance(flow: Flow[T], answer: Round | None) -> Fanout | T | Exception:
    """One step of a flow that only fans out: its next Fanout, its result, or what it
    raised."""
    try:
        step = next(flow) if answer is None else flow.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result
    except Exception as exc:
        return exc
    if not isinstance(step, Fanout):
        flow.close()
        return TypeError(f"a flow run together with others may only fan out, not {step!r}")
    return step


class _Mutex(Protocol):
    """What a ``threading.RLock`` has for ``threading.Condition.wait``: it lets the lock
    go however deep the calling thread holds it, and takes it back as it was."""

    def _release_save(self) -> object: ...
    def _acquire_restore(self, saved: object, /) -> None: ...


def _without(mutex: threading.RLock | None, wait: Callable[[], T]) -> T:
    """``wait()``, with ``mutex`` (a lock object's, which this thread holds) let go
    meanwhile and then taken back, as a condition's wait lets its lock go."""
    if mutex is None:
        return wait()
    held = cast("_Mutex", mutex)
    # Looked up first: no call before the restore in ``finally``, after which a signal
    # handler's exception could skip it. (CPython runs a signal handler as a call
    # returns.) The mutex is let go by a call that C makes (``map``'s) and whose result
    # ``saved`` has before control comes back: an exception as ``extend`` returns finds
    # it there, inside the ``try``. ``saved = release_save()`` would let go of the mutex
    # for good on one raised as ``release_save`` returns, before ``saved`` is set.
    release_save, acquire_restore = held._release_save, held._acquire_restore
    saved: list[object] = []
    try:
        saved.extend(map(operator.call, (release_save,)))
        return wait()
    finally:
        if saved:
            acquire_restore(saved[0])


def _sleep(seconds: float) -> float:
    """A :class:`Sleep`: the time it ended."""
    time.sleep(seconds)
    return time.monotonic()


def _wait(waiter: Waiter | None, step: Wait, let_go: threading.RLock | None = None) -> Woken:
    """A :class:`Wait`: until a release is announced or the time is up (with ``let_go``
    let go meanwhile, see :func:`_without`)."""
    if waiter is None:  # a flow waits only after it watched: keep the pause anyway
        return Woken(_without(let_go, functools.partial(_sleep, step.seconds)), False)
    notified = _without(let_go, functools.partial(waiter.wait, step.seconds, step.longer))
    return Woken(time.monotonic(), notified, waiter.alone, waiter.requeue)


class Lock(LockBase):
    """One lock on one name, owned by this object (not by a thread).

    Use it as a context manager, or call :meth:`acquire` and :meth:`release`.
    ``validity``, ``token`` and ``outcomes`` read local state, with no round trip;
    :meth:`locked` and :meth:`owned` ask the servers.
    ``lost`` is a ``threading.Event`` set when the lock is lost while held (an extension
    failed, or the validity ran out while the lease thread watched it); :meth:`check`
    raises :class:`LockLost` then, and so does leaving the ``with`` block.

    Threads may share one object, as they share a ``threading.Lock``: an acquire waits
    while another thread's acquisition of this object is in progress or held, until that
    one is released (even once lost or expired: by ``release()``, the end of its ``with``
    block or ``export()``). Any thread may release it, but not while another thread's
    acquire of it waits for the lock: that release (or extend, or export) raises
    :class:`LockNotHeld` and leaves the acquire alone. The thread that holds it gets
    :class:`LockNotReentrant` from a second acquire instead of waiting for itself.
    """

    _redlock: Redlock

    def __init__(self, redlock: Redlock, options: LockOptions) -> None:
        super().__init__(redlock, options)
        self._mutex = threading.RLock()
        # Threads sharing this object take turns on it, from the start of an acquire
        # until the release (``_occupied``): the next one waits here, letting ``_mutex``
        # go meanwhile. The turn is taken and its owner noted under ``_mutex`` at once,
        # so that an interrupt cannot leave the object taken by nobody.
        self._turn = threading.Condition(self._mutex)
        # An acquire lets ``_mutex`` go while it waits (between attempts, or for a
        # release to be announced): other threads may then look at the object, and find
        # it taken; a release, extend or export of theirs is refused meanwhile.
        self._acquiring = False
        self._entered: dict[threading.Thread, str | None] = {}  # token of each with block
        self._generation = 0  # bumped by acquire and release: stale lease work is skipped
        self._lost: threading.Event | None = None  # made when first asked for

    @property
    def lost(self) -> threading.Event:
        """Set when the lock is lost while held (see the class)."""
        event = self._lost
        if event is None:
            # Made on first use: most lock objects are made, used once and dropped, and
            # an Event (a Condition and its lock) is a tenth of what making one costs.
            with _LOST_MUTEX:
                if self._lost is None:
                    self._lost = threading.Event()
                event = self._lost
        return event

    def acquire(self, blocking: bool = True, timeout: Duration | None = None) -> bool:
        """Acquire the lock on a majority of the servers (R6, R8).

        ``blocking=False`` makes one attempt. Otherwise attempts repeat, with a random
        pause, until one succeeds or ``timeout`` seconds passed (None: no limit, or the
        Redlock's ``retry_count``: it waits forever, also while too few servers answer,
        which is logged as a warning). Returns True when acquired, False when others held
        it. ``timeout=math.inf`` is no limit, as None is. The ``blocking`` and
        ``timeout`` given to ``Redlock.lock()`` are for ``with``: this call takes its
        own, with the defaults above (``lock.acquire(timeout=5)``, not ``lock()``'s).
        Raises :class:`QuorumUnavailable` when too few servers could be used (see
        there), :class:`LockNotReentrant` if this thread already holds the lock (with
        this object, or with another object of the same Redlock and no timeout), and
        :class:`ConfigurationError` for a timeout with ``blocking=False``.

        While another thread holds this object (or is acquiring it), the call waits for
        that thread's release, within the same ``timeout``; ``blocking=False`` returns
        False at once. An exception that a signal handler raises (``KeyboardInterrupt``,
        ``SystemExit``, a Celery soft time limit) and interrupts the call, even as it
        returns with the lock taken, deletes the keys it set before it goes on: the
        object then holds nothing.
        """
        mark = self._mark()
        try:
            return self._acquire(blocking, timeout, raise_on_failure=False)
        except BaseException:
            self._undo_since(mark)
            raise

    def _mark(self) -> _Mark:
        """Where the object stands before an acquire (see :meth:`_undo_since`)."""
        mine = self._occupied and self._occupant is threading.current_thread()
        return _Mark(self._generation, 0, mine)

    def _undo_since(self, mark: _Mark) -> None:
        """An exception came out of an acquire, or of entering ``with``, after the hold
        was made (a signal handler's ``KeyboardInterrupt`` or ``SystemExit``, or a Celery
        soft time limit, raised as the call returned): its caller cannot know that it
        holds the lock, and would leave it held until the ttl (under a lease, until
        ``max_hold``). The hold this call made is undone: the keys are deleted, and the
        object is free. So is a turn on the object that the call took before it was
        interrupted, with no hold made."""
        me = threading.current_thread()
        with self._mutex:
            if self._generation != mark.generation and self._state.held:
                if self._occupant is not me:
                    return
                self._entered.pop(me, None)
                self._drop_hold()
            elif (
                not mark.mine
                and self._occupied
                and self._occupant in (me, None)  # None: interrupted as it took the turn
                and not self._state.held
            ):
                self._vacate()

    def _drop_hold(self) -> None:
        """With ``_mutex`` held: stop holding the lock at once, for a call that was
        interrupted: the lease thread forgets it, the keys are deleted (best effort), and
        the object is free."""
        self._generation += 1
        _HELD.discard(self)
        self._cleanup()
        self._vacate()

    def _acquire(self, blocking: bool, timeout: Duration | None, *, raise_on_failure: bool) -> bool:
        started = time.monotonic()
        wait = check_wait(blocking, timeout)
        me = threading.current_thread()
        with self._mutex:
            if self._occupied and self._occupant is me:
                # Still ours (maybe expired or lost, not released): acquire again in place.
                self._reenter(started)
                return self._acquire_occupied(blocking, wait, started, raise_on_failure)
        self._redlock._check_nesting(self, me, blocking and wait is None)
        with self._mutex:
            if not self._take_turn(blocking, wait, started):
                return self._busy(raise_on_failure)
            self._occupy(me)
            _BUSY.add(self)
            left = None if wait is None else max(0.0, wait - (time.monotonic() - started))
            return self._acquire_occupied(blocking, left, started, raise_on_failure)

    def _acquire_occupied(
        self, blocking: bool, wait: float | None, started: float, raise_on_failure: bool
    ) -> bool:
        """The acquire proper, with the object occupied and ``_mutex`` held; a failure
        frees the object for the next thread."""
        flow = self._state.acquire(
            blocking=blocking,
            timeout=wait,
            now=time.monotonic(),  # the wait for the object was taken off ``timeout``
            raise_on_failure=raise_on_failure,
            held_by=self._known_holder,
        )
        acquired = False
        self._acquiring = True
        try:
            acquired = self._redlock._run(flow, self._mutex)
            self._acquiring = False
            return self._acquire_ended(acquired, started)
        except BaseException as exc:
            self._acquiring = False
            if acquired:  # raised as it began to hold the lock: it does not hold it
                self._generation += 1  # the lease thread forgets it
                _HELD.discard(self)
            self._acquire_failed(exc, started)
            if acquired or _cut_short(exc):
                # Interrupted mid-acquire (KeyboardInterrupt, SystemExit, a soft time
                # limit, or the RuntimeError that CPython's threading may raise in its
                # place when one comes as a connection's thread starts), or after the
                # round: some servers may have granted the lock already. Delete our
                # keys before leaving. (quorumlock's own errors come once the attempt
                # was undone.)
                self._cleanup()
            self._vacate()
            raise

    def _take_turn(self, blocking: bool, wait: float | None, started: float) -> bool:
        """With ``_mutex`` held: whether the object is free, or becomes free within
        ``wait`` seconds of ``started`` (None: no limit; not ``blocking``: no wait)."""
        if not self._occupied:
            return True
        if not blocking:
            return False
        try:
            while True:
                if not self._occupied:
                    break
                if wait is None:
                    self._turn.wait()
                else:
                    left = started + wait - time.monotonic()
                    if left <= 0:
                        return False
                    self._turn.wait(min(left, _WAIT_MAX))
        except BaseException:
            # A release wakes one waiting thread: this one may have been woken just as
            # it was interrupted. The next one looks at the object in its place.
            if not self._occupied:
                self._turn.notify()
            raise
        return True

    def _open_gate(self) -> None:
        _BUSY.discard(self)
        self._turn.notify()

    def _occupy_adopted(self) -> None:
        with self._mutex:
            if self._occupied:  # a fresh object: never taken
                raise RuntimeError("an adopted lock object was already taken")
            self._occupy(threading.current_thread())
            _BUSY.add(self)

    def _start_holding(self) -> None:
        self._generation += 1
        lost = self._lost
        if lost is not None and lost.is_set():
            # Only then: a clear takes the Event's lock, which an exception that a signal
            # handler raises in this thread as it is taken could leave taken for good,
            # and the lease thread would hang on it at its next loss (``is_set`` takes
            # nothing). See quorumlock._io.flag.
            lost.clear()
        _HELD.add(self)
        if self._needs_keeper:
            first = self._state.next_step(time.monotonic())
            self._schedule(None if first is None else first.at)

    def locked(self) -> bool:
        """Whether anyone holds the lock: a majority of the servers has the key now.

        One round trip to every server (a ``GET``), not a promise: the answer may change
        as soon as it is returned. Raises :class:`QuorumUnavailable` when too few servers
        answered to tell.
        """
        return self._redlock._run(self._state.probe(mine=False))

    def owned(self) -> bool:
        """Whether this object still holds the lock, checked on the servers.

        True when the local validity has not run out and a majority of the servers still
        has this object's token; False otherwise (no round trip when the local validity
        is over). Raises :class:`QuorumUnavailable` when too few servers answered to
        tell.
        """
        return self._redlock._run(self._owning())

    def extend(self, ttl: Duration | None = None) -> float:
        """Reset the lock's ttl on a majority (R10); returns the new validity in seconds.

        ``ttl`` defaults to the lock's own; it is the new ttl from now, not time added
        to what is left (unlike redis-py's ``Lock.extend``, which adds unless
        ``replace_ttl=True``). Raises :class:`LockLost` when a majority did not confirm
        in time (the lock is then released and no longer held) and
        :class:`LockNotHeld` if this object does not hold the lock.
        """
        with self._mutex:
            self._refuse_while_acquiring("extend")
            return self._redlock._run(self._extending(ttl))

    def release(self) -> bool:
        """Release the lock on all servers (R9).

        Returns True if a majority still held our key, False if it had already expired
        there or was lost (not an error), and False too when too few servers answered to
        confirm the release (timeouts, errors): that is logged as "could not confirm the
        release" and is no loss (no ``LostEvent``). Raises :class:`LockNotHeld` if this
        object does not hold the lock (a second release among them). Never raises for
        unreachable servers: their keys expire with the ttl. Waits for a lease extension
        in flight, and none happens after it. Any thread may release: the next thread
        waiting to acquire this object goes on. A signal handler's exception during the
        release deletes the keys and frees the object before it goes on, as during an
        acquire.
        """
        with self._mutex:
            try:
                return self._release()
            except BaseException as exc:
                if _cut_short(exc):
                    self._finish_interrupted_release()
                raise

    def _refuse_while_acquiring(self, what: str) -> None:
        """With ``_mutex`` held: ``what`` (a release, an extension, a hand-over) comes
        while another thread's acquire of this object waits between its attempts,
        ``_mutex`` let go. It is refused, and the acquire left alone, as it is when the
        object holds nothing."""
        if self._acquiring:
            raise LockNotHeld(
                f"cannot {what} lock {shown(self.name)}: another thread is acquiring it "
                "with this Lock object",
                name=self.name,
            )

    def _release(self) -> bool:
        """:meth:`release`, with ``_mutex`` held."""
        self._refuse_while_acquiring("release")
        try:
            started = time.monotonic() if self._observer is not None else 0.0
            self._generation += 1
            self._enter_held = False
            _HELD.discard(self)
            was_lost, ran_out = self._release_begins()
            released = self._redlock._run(self._state.release())
        except BaseException as exc:
            if _cut_short(exc):
                # Interrupted (a SIGTERM handler's SystemExit, a KeyboardInterrupt, a
                # soft time limit) before every server had the release: delete our
                # keys before leaving, as an interrupted acquire does, rather than
                # leave them to the ttl with the object no longer able to release them.
                self._cleanup()
            raise
        finally:
            self._vacate()
        self._release_ended(released, was_lost, ran_out, started)
        return released

    def _finish_interrupted_release(self) -> None:
        """With ``_mutex`` held: an interrupt (a signal handler's exception) cut short a
        release, or a ``with`` block's exit, of this object. What the release had not
        done yet is done before the interrupt goes on: the keys are deleted if it came
        before the release's round (which deletes them itself when interrupted), and
        the object is freed if it came as the release freed it (the next thread would
        wait for it for ever)."""
        if self._acquiring:
            return  # refused: another thread's acquire, not this release's
        if self._holds:
            self._drop_hold()
        elif self._occupied:
            self._vacate()

    def export(self, *, keep: bool = False) -> LockHandle:
        """Hand the held lock over: a :class:`LockHandle` for ``Redlock.adopt()``.

        The handle is small and serialisable (JSON, pickle), to be adopted by another
        process, maybe on another machine. By default this object stops holding the
        lock, without releasing it: it no longer extends, renews or releases it, and
        leaving its ``with`` block does nothing. ``keep=True`` keeps it held here too
        (two owners: either may extend or release it, and a release ends it for both).

        Raises :class:`LockNotHeld` if this object does not hold the lock and
        :class:`LockLost` if it was lost or its validity ran out (the object stays
        occupied until it is released); ``TypeError`` for a multi-resource lock, a
        semaphore's permit or a read-write lock's hold, which cannot be handed over.
        Waits for a lease renewal in flight, and none happens after a hand-over. Unless
        ``keep``, other threads may acquire this object again once it is handed over. A
        signal handler's exception that interrupts a hand-over once the object let the
        lock go deletes the keys before it goes on: the handle never reached its caller,
        and nobody else could release them.
        """
        with self._mutex:
            self._refuse_while_acquiring("export")
            held = self._state.held
            try:
                handle = self._export(keep)
                if not keep:
                    self._generation += 1  # the lease thread forgets this lock
                    self._enter_held = False
                    _HELD.discard(self)
                    self._vacate()
                return handle
            except BaseException as exc:
                if _cut_short(exc) and held and not keep and not self._state.held:
                    self._drop_hold()
                raise

    def _cleanup(self) -> None:
        try:
            self._redlock._run(as_cleanup(self._state.abandon()))
        except BaseException:  # best effort: the keys expire with the ttl anyway
            logger.warning("could not clean up lock %s after an interruption", shown(self.name))

    # Lease keeping, on the Redlock's lease thread (:class:`_LeaseKeeper`).

    def _schedule(self, at: float | None, *, early: bool = True) -> None:
        """Have the lease thread look at this lock at ``at``, or with other locks' due
        renewals up to ``LockState.early`` sooner (unless not ``early``)."""
        if at is not None:
            soonest = at - self._state.early if early else at
            self._redlock._keeper.watch(self, at, self._generation, soonest)

    def _due_renewal(self, generation: int) -> tuple[float, Flow[bool]] | None:
        """On the lease thread, with the mutex held: the renewal to run now (its start
        time and flow), or None when there is none (rescheduled, lost, or stale work)."""
        if generation != self._generation or self._acquiring:
            return None  # released or re-acquired since this was scheduled, or acquiring
        now = time.monotonic()
        step = self._due(now)
        if isinstance(step, Wake):
            # Not due, even early (or only watched): looked at again at ``at`` only, when
            # it is due, so that it cannot come round again before.
            self._schedule(step.at, early=False)
            return None
        if step is None:
            return None
        return now, self._state.renew(ttl_ms=step.ttl_ms, now=now)

    def _renewed(self, started: float, result: bool | Exception) -> None:
        """The end of a renewal started at ``started`` (with the mutex held)."""
        self._schedule(self._after_renewal(started, result))

    def _stop_lease(self, error: LockLost) -> None:
        _HELD.discard(self)
        self._generation += 1

    def _call_on_lost(self) -> None:
        if threading.current_thread() is self._redlock._keeper._thread:
            # Found by the lease thread, with this lock's mutex held: the callback runs on
            # a thread of its own, so that a slow one (an alert sent over the network)
            # holds up neither the renewals of the other locks nor a release of this one.
            _CALLBACKS.put(super()._call_on_lost)
        else:
            super()._call_on_lost()

    def _after_fork(self) -> None:
        """In a forked child: the parent's acquisition is not the child's, and a parent
        thread may have held the mutex (it does not exist here), or waited for a turn."""
        self._state.forget()
        self._generation += 1
        self._mutex = threading.RLock()
        self._turn = threading.Condition(self._mutex)
        self._acquiring = False
        self._occupied = False
        self._occupant = None

    def __enter__(self) -> Self:
        me = threading.current_thread()
        with self._mutex:
            if self._enter_held:  # adopted: held already
                self._enter_held = False
                self.check()
                self._entered[me] = self._state.token
                return self
        mark = self._mark()
        try:
            self._acquire(self._options.blocking, self._options.timeout, raise_on_failure=True)
            with self._mutex:
                self._entered[me] = self._state.token
            return self
        except BaseException:
            self._undo_since(mark)
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        me = threading.current_thread()
        with self._mutex:
            try:
                token = self._entered.pop(me, None)
                if not self._holds or (token != self._state.token and self._occupant is not me):
                    # Released inside the block (and maybe acquired by another thread
                    # since: that acquisition is not this block's to release). One this
                    # thread made in the block is, as a threading.Lock's block ends it.
                    return
                was_lost = self._lost_now
                released = self.release()
            except BaseException as interrupt:
                if _cut_short(interrupt) and self._occupant is me:
                    # Interrupted before the release began (it finishes itself once it
                    # has): the block's end releases all the same.
                    self._finish_interrupted_release()
                raise
            # Decided before the mutex is let go: the next thread's acquire of this
            # object changes its outcomes.
            self._check_exit(exc_type, was_lost, released, "with")


class RLock(ReentrantMixin, Lock):
    """A reentrant :class:`Lock` (``Redlock.rlock()``): the thread that holds it may
    acquire it again, with no round trip; only its outermost release releases it.
    ``depth`` is how many times the owner holds it. Other threads wait, as for a Lock."""

    def _acquire(self, blocking: bool, timeout: Duration | None, *, raise_on_failure: bool) -> bool:
        check_wait(blocking, timeout)  # a re-entry refuses bad arguments as an acquire does
        with self._mutex:
            if self._enter_again(threading.current_thread()):
                return True
        acquired = super()._acquire(blocking, timeout, raise_on_failure=raise_on_failure)
        if acquired:
            with self._mutex:
                self._held_once()
        return acquired

    def _mark(self) -> _Mark:
        return super()._mark()._replace(depth=self._depth)

    def _undo_since(self, mark: _Mark) -> None:
        with self._mutex:
            depth = mark.depth
            if depth and self._depth > depth and self._occupant is threading.current_thread():
                self._depth = depth  # a re-entry: undone, the outer hold stays
                return
        super()._undo_since(mark)

    def release(self) -> bool:
        """Release one hold: an inner one costs no round trip and returns True; the
        outermost one is :meth:`Lock.release`. Only the owning thread may release. A
        signal handler's exception during the call releases that one hold all the same
        before it goes on."""
        me, depth = threading.current_thread(), self._depth  # the owner's own to change
        with self._mutex:
            try:
                if self._leave_inner(me):
                    return True
                return super().release()
            except BaseException as exc:
                self._leave_interrupted(exc, depth, me)
                raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        me, depth = threading.current_thread(), self._depth  # the owner's own to change
        with self._mutex:
            try:
                if depth > 1 and self._occupant is me:
                    self._depth -= 1
                    self._check_exit(exc_type, self._lost_now, True, "with")
                    return
                super().__exit__(exc_type, exc, tb)
            except BaseException as interrupt:
                self._leave_interrupted(interrupt, depth, me)
                raise

    def _leave_interrupted(self, error: BaseException, depth: int, me: threading.Thread) -> None:
        """With ``_mutex`` held: ``error`` came out of a release or a ``with`` block's
        exit that began at ``depth``. An interrupt (a signal handler's exception) that
        came before the call left its hold leaves it all the same: an inner hold ends
        (the outer one's release would otherwise be a level short, and leave the lock
        held), the outermost one is released as :meth:`Lock.release` finishes an
        interrupted release. A release's own errors change nothing."""
        if not _cut_short(error) or self._occupant is not me or self._depth != depth:
            return  # not an interrupt, not the owner's, or the hold was left already
        if depth > 1:
            self._depth = depth - 1
        elif depth == 1:
            self._entered.pop(me, None)
            self._finish_interrupted_release()

    def _after_fork(self) -> None:
        self._depth = 0  # the parent's holds are the parent's
        super()._after_fork()


class MultiLock(MultiLockMixin, Lock):
    """A lock on a set of names at once (``Redlock.lock_many()``): a :class:`Lock` whose
    every round covers the whole set; ``names`` is the set, sorted."""


class Election(ElectionBase[Lock]):
    """A leader election on one name: :meth:`Redlock.election` makes it."""

    _redlock: Redlock

    def campaign(self, timeout: Duration | None = None) -> Campaign:
        """Campaign for leadership: ``with election.campaign() as term:`` blocks until
        this process leads (up to ``timeout`` seconds, None: no limit; then
        :class:`LockNotAcquired`), keeps leading while the block runs, and resigns at
        its end. Raises :class:`LockLost` at the end of a block whose leadership was
        lost (``term.lost`` is set as soon as it is)."""
        return Campaign(self, timeout)

    def leader(self) -> Leader | None:
        """``(identity, term, validity)`` of the current leader, read from a majority of
        the servers, or None when nobody leads (or no majority agrees). One round trip;
        never a leader whose validity has run out. Raises :class:`QuorumUnavailable`
        when the servers that did not answer could have named one."""
        return self._redlock._run(self._leader())


class Campaign(CampaignBase[Lock]):
    """``with`` it to lead: see :meth:`Election.campaign`."""

    def __enter__(self) -> Term[Lock]:
        lock = self._entering()
        # Entered again by the thread that leads through it: the lock's refusal
        # (LockNotReentrant) must not resign the leadership the outer block runs on.
        leading, entered = lock._mark().mine, False
        try:  # the lock's own enter too: an interrupt as it returns is undone here
            lock.__enter__()
            entered = True
            return lock._redlock._run(self._claiming())
        except BaseException as exc:
            if entered or not leading:
                lock.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        lock = self._lock
        try:
            lock.__exit__(exc_type, exc, tb)
        except BaseException as error:
            with lock._mutex:
                if _cut_short(error) and lock._occupant is threading.current_thread():
                    # Interrupted as the lock's exit began, before its own guard: the
                    # campaign ends all the same.
                    lock._finish_interrupted_release()
            raise


class ReadWriteHold(RWHoldBase, Lock):
    """A reader or the writer of a read-write lock (``rw.read()``, ``rw.write()``): a
    :class:`Lock` in every other respect (acquire, release, extend, leases, ``with``)."""

    def downgrade(self) -> None:
        """Turn the held write lock into a read lock, atomically (no writer can come in
        between; the validity is unchanged). Raises :class:`LockNotHeld` unless this hold
        holds the write lock, and :class:`LockLost` if a majority did not confirm it in
        time (the lock is then released everywhere)."""
        with self._mutex:
            self._refuse_while_acquiring("downgrade")
            self._redlock._run(self._downgrading())


class ReadWriteLock(ReadWriteLockBase[ReadWriteHold]):
    """What ``Redlock.rwlock()`` returns: ``read()`` and ``write()`` make holds."""

    _hold_class = ReadWriteHold


class Permit(PermitMixin, Lock):
    """One permit of a counting semaphore: see :meth:`Redlock.semaphore`."""


class _LeaseKeeper:
    """One daemon thread that renews auto-extending locks and reports losses.

    A heap of (time, lock, generation); weak references, so a forgotten Lock object is
    not kept alive by its lease. Started on first use (and again in a forked child).
    """

    def __init__(self) -> None:
        # (due, seq, lock, generation, soonest): in order of due time; the thread wakes
        # at the first one's, and takes with it every lock whose soonest time has come.
        self._heap: list[tuple[float, int, weakref.ref[Lock], int, float]] = []
        # A bare lock and a flag, not a threading.Condition: ``watch`` runs in the
        # caller's thread, where a signal handler's exception could cut a Condition's
        # Python code in two and leave its lock taken, the lease thread stuck on it and
        # every lease it keeps let expire (see quorumlock._io.flag).
        self._mutex = threading.Lock()
        self._sooner = Flag()  # raised when the first entry changes: the thread looks again
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def watch(self, lock: Lock, at: float, generation: int, soonest: float | None = None) -> None:
        with self._mutex:
            if self._thread is None or self._pid != os.getpid():
                self._heap.clear()
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._loop, name="quorumlock-lease", daemon=True
                )
                self._thread.start()
            soonest = at if soonest is None else min(at, soonest)
            entry = (at, next(self._seq), weakref.ref(lock), generation, soonest)
            heapq.heappush(self._heap, entry)
            if self._heap[0][0] == at:
                self._sooner.set()

    def _loop(self) -> None:
        while True:
            self._sooner.clear()  # before looking: an entry due sooner raises it again
            with self._mutex:
                now = time.monotonic()
                wait = self._heap[0][0] - now if self._heap else _WAIT_MAX
                due = self._take_due(now) if wait <= 0 else []
            if wait > 0:
                self._sooner.wait(wait)  # (bounded by the flag: no OverflowError)
                continue
            try:
                _tend_together(due)
            except Exception:  # never let one lock stop the others' leases
                logger.exception("lease keeping failed")

    def _take_due(self, now: float) -> list[tuple[Lock, int]]:
        """With ``_mutex`` held, once the first entry is due: the locks whose soonest
        renewal time has come at ``now``, in order and at most ``_BATCH``, taken off the
        heap."""
        due: list[tuple[Lock, int]] = []
        while self._heap and self._heap[0][4] <= now and len(due) < _BATCH:
            _, _, ref, generation, _ = heapq.heappop(self._heap)
            if (lock := ref()) is not None:
                due.append((lock, generation))
        return due


class _Callbacks:
    """One daemon thread that runs the ``on_lost`` callbacks of the losses the lease
    threads find, one after another (started on first use, and again in a forked
    child)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def put(self, call: Callable[[], None]) -> None:
        with self._mutex:
            if self._thread is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._loop, name="quorumlock-on-lost", daemon=True
                )
                self._thread.start()
        self._queue.put(call)

    def _loop(self) -> None:
        while True:
            call = self._queue.get()
            try:
                call()  # (logs what the callback raises)
            except Exception:
                logger.exception("on_lost callback failed")

    def after_fork(self) -> None:
        """In a forked child: the parent's thread and its callbacks are the parent's."""
        self._mutex = threading.Lock()
        self._queue = queue.SimpleQueue()
        self._thread = None


_CALLBACKS = _Callbacks()


#: The longest wait ``threading.Condition.wait`` takes (a longer one is about 292 years).
_WAIT_MAX = threading.TIMEOUT_MAX


def _cut_short(error: BaseException) -> bool:
    """Whether ``error`` cut a lock object's call short from outside: an exception that
    a signal handler raised (``KeyboardInterrupt``, ``SystemExit``, Celery's
    ``SoftTimeLimitExceeded``, an ``Exception``), a gevent timeout, or the
    ``RuntimeError`` that CPython's threading raises in place of one. quorumlock's own
    errors come with nothing of the call left to undo."""
    return not isinstance(error, QuorumLockError)


class _Mark(NamedTuple):
    """Where a lock object stood as an acquire began (:meth:`Lock._mark`)."""

    generation: int
    depth: int  # a reentrant lock's
    mine: bool  # taken by the calling thread already


#: At most this many renewals share one batch of round trips.
_BATCH = 256
#: How soon the lease thread looks again at a lock another thread was using.
_BUSY_PAUSE = 0.005


def _tend_together(due: list[tuple[Lock, int]]) -> None:
    """Renew the locks that are due at the same time in one batch of round trips
    (:meth:`SyncFanout.run_batch`): a process holding thousands of auto-extended locks
    renews them in a few round trips, not one round trip each.

    The lease thread never waits for a lock whose mutex another thread holds (an extend
    or a release in progress): that lock is looked at again a moment later, and the
    others are not held up.
    """
    renewals: list[tuple[Lock, float, Flow[bool]]] = []
    held: list[Lock] = []
    try:
        for lock, generation in due:
            if not lock._mutex.acquire(blocking=False):
                lock._redlock._keeper.watch(lock, time.monotonic() + _BUSY_PAUSE, generation)
                continue
            held.append(lock)
            try:
                renewal = lock._due_renewal(generation)
            except Exception as exc:  # a bug in one lock's step: its renewal failed
                lock._renewed(time.monotonic(), exc)
                continue
            if renewal is None:
                continue
            renewals.append((lock, *renewal))
        if renewals:
            redlock = renewals[0][0]._redlock
            results: list[bool | Exception]
            try:
                results = redlock._run_many([flow for _, _, flow in renewals])
            except Exception as exc:
                # The batch failed as a whole (not a server's answer): each renewal in it
                # failed, and is retried as one is, or its loss told; never dropped.
                results = [exc] * len(renewals)
            for (lock, started, _), result in zip(renewals, results, strict=True):
                lock._renewed(started, result)
    finally:
        for lock in held:
            lock._mutex.release()


#: Makes a lock object's ``lost`` event, once (``Lock.lost``).
_LOST_MUTEX = threading.Lock()
# Every Redlock of this process, so that a forked child can make their inner locks anew.
_REDLOCKS: weakref.WeakSet[Redlock] = weakref.WeakSet()
# Locks this process holds, so that a forked child can forget them.
_HELD: weakref.WeakSet[Lock] = weakref.WeakSet()
# Lock objects acquiring or holding (occupied), so that a forked child can free them.
_BUSY: weakref.WeakSet[Lock] = weakref.WeakSet()


def _forget_after_fork() -> None:
    """In a forked child: the parent's locks are the parent's. The child holds none, and
    no thread of the child is acquiring: every object is free to acquire. A lock of this
    module or of a Redlock that a parent thread held at the fork would stay held for
    ever: each is made anew."""
    global _LOST_MUTEX
    _LOST_MUTEX = threading.Lock()
    _CALLBACKS.after_fork()
    for lock in {*_HELD, *_BUSY}:
        lock._after_fork()
    for redlock in _REDLOCKS:
        redlock._after_fork()
    _HELD.clear()
    _BUSY.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
