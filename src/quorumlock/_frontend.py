"""What the sync and asyncio front ends share: arguments, options, read-only state, and
everything they do around their I/O.

``quorumlock.Redlock`` / ``quorumlock.asyncio.Redlock`` and their ``Lock`` classes differ
only in how they drive the flows (blocking calls or awaits), in how threads or tasks take
turns on one lock object, in how leases are kept (one thread per Redlock, or one task per
lock) and in how a lost lease interrupts its holder (an event and a callback, or also the
cancellation of the protected block). Everything else is written once, here: the public
signatures (``lock``, ``synchronized``, ``adopt``), the reaction to a renewal and to a
loss, the observer events, the end of a ``with`` block. Each front end calls these at
the same points; ``tests/core/test_api_surface.py`` keeps the two surfaces the same.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import math
import random
import secrets
import threading
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Generic, NoReturn, ParamSpec, Protocol, SupportsIndex, TypeVar

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import (
    MAX_TTL_SECONDS,
    Duration,
    LockOptions,
    RedlockConfig,
    bounded_timeout,
    is_async_callable,
    shown,
)
from quorumlock._algorithm.flows import Fanout, Flow, Op, Round, line_place, pass_turn
from quorumlock._algorithm.handoff import LockHandle, adopted_validity, clock_disagreement
from quorumlock._algorithm.lockstate import LockState, Lost, Renew, Wake
from quorumlock._algorithm.outcomes import NodeOutcome, Reply, render_outcomes
from quorumlock._algorithm.semaphore import check_permits
from quorumlock._exceptions import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
)
from quorumlock._io.servers import AsyncServerArg, Flavour, ServerArg, ServerSpec, parse_servers
from quorumlock._io.wakeups import Stood
from quorumlock._observe import (
    WARN_EVERY,
    AcquireEvent,
    ExtendEvent,
    LockObserver,
    LostEvent,
    ReleaseEvent,
    check_observer,
    notify,
)

__all__ = [
    "AsyncDecorator",
    "LockBase",
    "QuorumLockWarning",
    "RedlockBase",
    "SyncDecorator",
    "is_async_callable",
    "named_as",
    "rearm_before",
]

logger = logging.getLogger("quorumlock")

ClassT = TypeVar("ClassT", bound=type)


def named_as(public: str) -> Callable[[ClassT], ClassT]:
    """A class decorator: the public methods the class defines take the name of the
    public class both APIs give them (``Redlock.lock``), so that Python's own
    ``TypeError`` for a wrong call (a missing argument, say) names that class, not a
    base class of both that the user never meets."""

    def name(cls: ClassT) -> ClassT:
        for attribute, member in vars(cls).items():
            if not attribute.startswith("_") and inspect.isfunction(member):
                member.__qualname__ = f"{public}.{attribute}"
        return cls

    return name


class _Rearmable(Protocol):
    def rearm(self) -> None: ...


def rearm_before(step: Fanout, waiter: _Rearmable | None) -> None:
    """Before an acquire attempt is sent, the waiter for the lock's release forgets the
    releases announced so far: only one announced after this send may wake the acquire
    (docs/algorithm.md)."""
    if waiter is not None and step.acquires:
        waiter.rearm()


class _Member(Protocol):
    def attempt(self, waiter: Any, *, fair: bool = False) -> str: ...

    def place(self) -> str: ...


class _Queued(_Rearmable, Protocol):
    @property
    def entry(self) -> _Member: ...


class _Joins(Protocol):
    def join(self, waiter: Any, lease_ms: int) -> tuple[str, str] | None: ...

    def stand_behind(self, key: str, lease_ms: int) -> tuple[str, str] | None: ...

    def keep_turn(self, key: str) -> bool: ...


def prepared(step: Fanout, waiter: _Queued | None, wakeups: _Joins) -> Fanout | None:
    """``step`` as a driver sends it for ``waiter`` (the blocking acquire's view of the
    announcements, if any): a join of the queue of waiters names the process's entry and
    its place, or is None when the entry is in line already (nothing to send); a
    waiter's attempt names the entry and its place, where it stands in line if it is
    refused (a fair acquire always names the entry); a user's release announces nothing
    where the process is about to take the lock back (:func:`kept_turn`), and otherwise,
    where it may put the process in line behind the waiter it wakes, names the process's
    entry and a new arrival where the process listens to the key. Rearms the waiter
    before an acquire (:func:`rearm_before`)."""
    rearm_before(step, waiter)
    if waiter is None:
        if step.lease_ms and step.op is Op.RELEASE:
            if wakeups.keep_turn(step.key):
                return dataclasses.replace(step, notify=False, lease_ms=0)
            spot = wakeups.stand_behind(step.key, step.lease_ms)
            if spot is not None:
                return dataclasses.replace(step, member=spot[0], arrival=spot[1])
        return step
    if step.op is Op.QUEUE and not step.arrival:  # a join (not a pass: see acquire_flow)
        place = wakeups.join(waiter, step.ttl_ms)
        if place is None:
            return None
        return dataclasses.replace(step, token=place[0], arrival=place[1])
    if step.op is not Op.ACQUIRE or step.keys:
        return step
    entry = waiter.entry
    member = entry.attempt(waiter, fair=step.fair)
    if not member:
        return step
    return dataclasses.replace(step, member=member, arrival=entry.place())


def leave_step(config: RedlockConfig, key: str, member: str, *, passing: bool = False) -> Fanout:
    """The round that takes this process's entry (``member``) off ``key``'s queue; with
    ``passing``, the one that passes its turn on as it does (:func:`pass_step`)."""
    if passing:
        return pass_step(config, key, member)
    return Fanout(Op.QUEUE, key, member, 0, config.timeout_for(0), arrival="-")


def pass_step(config: RedlockConfig, key: str, member: str) -> Fanout:
    """The round that passes the turn of this process's entry of ``key`` on: the entry
    leaves the queue, and where the lock is free the next waiter is woken
    (:meth:`~quorumlock._io.wakeups.Woke.passing`). Its announcements carry a name of
    their own, the same on every server."""
    return pass_turn(key, member, f"{member}:{secrets.token_hex(4)}", config.timeout_for(0))


def kept_turn(step: Fanout, sent: Fanout) -> bool | None:
    """For a user's release (``step``, as its flow made it; ``sent``, as
    :func:`prepared` made it): whether it left the next waiter asleep, its process about
    to take the lock back (``Turns``, docs/algorithm.md, "Waiting", step 10); None for
    any other round."""
    if step.op is not Op.RELEASE or not step.lease_ms:
        return None
    return not sent.notify


def freed_nothing(round_: Round) -> bool:
    """Whether a release round found the key ours on no server (the clean-up of an
    attempt cut short before it went out, say): it woke nobody and ended no hold, so it
    leaves the name's turn (``Turns``) as it was, and a wake-up owed stays owed."""
    return all(o.reply is Reply.NOT_HELD for o in round_.outcomes)


def wake_step(config: RedlockConfig, key: str) -> Fanout:
    """The round that wakes the next waiter of ``key`` where the lock is free, owed by a
    release of this process that left it asleep and no acquire followed: the queue
    script's pass, of no entry."""
    return pass_step(config, key, "")


def stood_behind(step: Fanout, round_: Round) -> Stood | None:
    """The entry a release (``step``, as :func:`prepared` made it) put in line behind the
    waiter it woke: None where no server did."""
    if not step.member or step.op is not Op.RELEASE:
        return None
    if not any(o.place for o in round_.outcomes):
        return None
    return Stood(step.arrival, round_.started, line_place(round_.outcomes))


class QuorumLockWarning(UserWarning):
    """A configuration that works but gives up fault tolerance (an even N, for one)."""


LockT = TypeVar("LockT", bound="LockBase")
P = ParamSpec("P")
R = TypeVar("R")


class SyncDecorator(Protocol):
    """What ``quorumlock.Redlock.synchronized()`` returns: a decorator of plain functions."""

    def __call__(self, func: Callable[P, R], /) -> Callable[P, R]: ...


class AsyncDecorator(Protocol):
    """What ``quorumlock.asyncio.Redlock.synchronized()`` returns: a decorator of
    ``async def`` functions."""

    def __call__(
        self, func: Callable[P, Awaitable[R]], /
    ) -> Callable[P, Coroutine[Any, Any, R]]: ...


DecoratorT = TypeVar("DecoratorT", SyncDecorator, AsyncDecorator)


#: A front end's read-write lock class (``Redlock.rwlock`` returns one).
RWLockT = TypeVar("RWLockT")
#: A front end's read-write lock hold class (what the rwlock's ``on_lost`` is given).
HoldT = TypeVar("HoldT")
#: What a front end takes for one server: a URL, or a client of its own API (a type
#: checker then refuses an asyncio client given to the sync ``Redlock``, and the reverse).
ServerT = TypeVar("ServerT", ServerArg, AsyncServerArg)


@named_as("Redlock")
class RedlockBase(Generic[LockT, DecoratorT, RWLockT, HoldT, ServerT]):
    """Servers and options, validated before any network call."""

    _flavour: Flavour = "sync"
    _lock_class: type[LockT]
    _rwlock_class: Callable[[Any, LockOptions], RWLockT]

    def __init__(
        self,
        servers: ServerT | Sequence[ServerT],
        *,
        clock_drift_factor: float = 0.01,
        retry_delay: float = 0.2,
        retry_count: int | None = None,
        instance_timeout: float | None = None,
        connect_timeout: float = 1.0,
        busy_poll: float = 0.0002,
        max_ttl: float | None = 60.0,
        fencing: bool = False,
        wake_on_release: bool = True,
        observer: LockObserver | None = None,
        fair: bool = False,
    ) -> None:
        self._observer = check_observer(observer)
        self._specs: list[ServerSpec] = parse_servers(servers, self._flavour)
        self.config = RedlockConfig(
            clock_drift_factor=clock_drift_factor,
            retry_delay=retry_delay,
            retry_count=retry_count,
            instance_timeout=instance_timeout,
            connect_timeout=connect_timeout,
            busy_poll=busy_poll,
            max_ttl=max_ttl,
            fencing=fencing,
            wake_on_release=wake_on_release,
            fair=fair,
        )
        n = len(self._specs)
        if n % 2 == 0:
            warnings.warn(
                f"{n} servers tolerate no more failures than {n - 1}: a majority of {n} is "
                f"{quorum(n)}. Use an odd number of independent servers (3 or 5).",
                QuorumLockWarning,
                stacklevel=2,
            )
        self._random = random.SystemRandom()
        self._labels = tuple(spec.label for spec in self._specs)  # for lock handles
        # The lock objects of this Redlock that are acquiring or holding, by name, each
        # with the thread or task that acquired it: a blocking acquire that could only
        # wait for its own caller is refused at once (not reentrant).
        self._occupied: dict[str, weakref.WeakSet[LockBase]] = {}
        self._occupied_mutex = threading.Lock()
        self._setup()

    def _setup(self) -> None:
        """Create the front end's I/O (its fan-out, its lease keeper) and set ``_lock_class``."""
        raise NotImplementedError

    @property
    def servers(self) -> list[str]:
        """The servers, as labels without credentials, in the order given."""
        return [spec.label for spec in self._specs]

    @property
    def quorum(self) -> int:
        """How many servers must agree: ``N // 2 + 1``."""
        return quorum(len(self._specs))

    def lock(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[LockT], object] | None = None,
    ) -> LockT:
        """A lock on ``name`` (the key on every server), not acquired yet.

        ``ttl`` (seconds or timedelta) is both the auto-release time and the time the
        holder has to do its work (R4). ``blocking`` and ``timeout`` apply when the lock
        is used as a context manager: wait up to ``timeout`` seconds (None: no limit).

        ``auto_extend=True`` keeps the lock while it is held, extending it before its
        validity runs low (R10), until ``max_extensions`` extensions or ``max_hold``
        seconds since the acquire, whichever comes first (one of them is required;
        ``max_hold=math.inf`` renews without end; neither is taken without
        ``auto_extend=True``, nor a ``max_hold`` below the ttl, which the acquire holds
        for anyway). ``on_lost(lock)`` is a plain function
        called when the lock is lost while held: on a thread of its own when the lease
        thread found it (sync: a slow callback holds up no renewal), on the event loop
        (asyncio), or in the call whose ``extend()`` or ``downgrade()`` found it lost;
        it is never awaited, so an ``async def`` one is refused.
        ``timeout=math.inf`` means no limit, as None does. Every option is checked here:
        raises ``TypeError`` or :class:`ConfigurationError` for bad input (a name longer
        than 4096 bytes of UTF-8 among them), before any network call.

        One object may be shared by threads (sync) or tasks (asyncio): their acquires
        are serialised, as on a ``threading.Lock`` or an ``asyncio.Lock``. A second
        acquire waits until the holder releases the object (its wait counts against its
        own ``timeout``; ``blocking=False`` returns False at once), then makes its own
        acquisition. The lock is not reentrant (:class:`LockNotReentrant`).
        """
        options = LockOptions.build(
            self.config,
            name,
            ttl=ttl,
            timeout=timeout,
            blocking=blocking,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
        )
        return self._lock_class(self, options)

    def rwlock(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[HoldT], object] | None = None,
    ) -> RWLockT:
        """A read-write lock on ``name``: ``read()`` makes a hold shared with other
        readers, ``write()`` an exclusive one (docs/algorithm.md, "Read-write locks").

        The options are those of :meth:`lock`, for every hold made from it (``read`` and
        ``write`` may override ``timeout`` and ``blocking``), checked here before any
        network call. Each hold is a lock object of its own (``acquire``, ``release``,
        ``extend``, ``check``, ``validity``, leases, ``with``); a writer's has a
        ``fencing_token`` with ``fencing=True`` and ``downgrade()``. The servers' key is
        ``quorumlock:rw:{<name>}``, not ``name``: a read-write lock and a plain lock of
        the same name are two locks.
        """
        options = LockOptions.build(
            self.config,
            name,
            ttl=ttl,
            timeout=timeout,
            blocking=blocking,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
        )
        return self._rwlock_class(self, options)

    def synchronized(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[LockT], object] | None = None,
    ) -> DecoratorT:
        """A decorator: every call of the function runs under the lock ``name``.

        Each call acquires a fresh :meth:`lock` with these options, exactly as
        ``with rl.lock(name, ...)`` (``async with`` in the asyncio API) does, so it
        raises what that raises: :class:`LockNotAcquired` when the lock stayed taken,
        :class:`LockLost` when the lock was lost before the call returned (in the
        asyncio API the call is cancelled then). The lock is released when the function
        returns or raises. Bad options raise ``TypeError`` or
        :class:`ConfigurationError` here, at decoration time.

        ``quorumlock.Redlock`` decorates plain functions: a coroutine function (use
        :class:`quorumlock.asyncio.Redlock`) or a generator function (the lock would be
        released before the generator runs) raises ``TypeError``.
        ``quorumlock.asyncio.Redlock`` decorates ``async def`` functions only: a plain
        function raises ``TypeError`` (use :class:`quorumlock.Redlock` for those).
        """
        options = LockOptions.build(
            self.config,
            name,
            ttl=ttl,
            timeout=timeout,
            blocking=blocking,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
        )
        return self._decorator(options)

    def _decorator(self, options: LockOptions) -> DecoratorT:
        """The front end's decorator: each call of the function holds a lock made with
        ``options`` (already checked)."""
        raise NotImplementedError

    def adopt(
        self,
        handle: LockHandle,
        *,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[LockT], object] | None = None,
        clock_skew: Duration = 0.0,
        check_servers: bool = True,
    ) -> LockT:
        """A held lock from a handle that ``Lock.export()`` made, maybe in another process.

        The lock can be extended, released, checked and used as a context manager
        (entering it does not acquire again; leaving it releases). Its validity is the
        handle's, minus the time since the export on this machine's wall clock, minus
        ``clock_skew``: the most the exporter's and this machine's wall clocks may differ
        (0 on one machine). Call ``extend()`` at once to measure a fresh validity on this
        machine's own clock. The lease options are those of :meth:`lock`; ``max_hold``
        counts from the adoption. The first round of a Redlock that has not reached the
        servers yet waits for its connections (up to ``connect_timeout``), as an acquire
        does.

        Raises ``TypeError`` if ``handle`` is not a :class:`LockHandle`,
        :class:`ConfigurationError` if it names other servers than this Redlock's (unless
        ``check_servers=False``: the same servers under other names), a ttl or a
        validity above ``max_ttl`` or a validity that is not a finite number >= 0, and
        :class:`LockLost` if its validity has already run out. Makes no network call.
        """
        if not isinstance(handle, LockHandle):
            # Not its repr: a handle's JSON or dict holds the token, and messages end up
            # in logs.
            hint = (
                " (read one with LockHandle.from_json() or LockHandle.from_dict())"
                if isinstance(handle, str | bytes | dict)
                else ""
            )
            raise TypeError(
                f"handle must be a quorumlock.LockHandle, not {type(handle).__name__}{hint}"
            )
        # (a wall clock off by more than an hour is no skew to allow for, but a typo)
        skew = bounded_timeout(clock_skew, "clock_skew", allow_zero=True)
        if not isinstance(check_servers, bool):
            raise TypeError(f"check_servers must be a bool, not {check_servers!r}")
        if check_servers and sorted(handle.servers) != sorted(self.servers):
            raise ConfigurationError(
                f"the handle of lock {shown(handle.name)} was exported by a Redlock over "
                f"{list(handle.servers)}, not {self.servers}; pass check_servers=False if "
                "they are the same servers under other names"
            )
        if len(handle.servers) != len(self.servers):
            raise ConfigurationError(
                f"the handle of lock {shown(handle.name)} was exported by a Redlock over "
                f"{len(handle.servers)} servers, not {len(self.servers)}"
            )
        given = handle.validity
        # Checked again here: a handle's fields can be replaced behind its constructor.
        if not isinstance(given, float | int) or not math.isfinite(given) or given < 0:
            raise ConfigurationError(
                f"the handle of lock {shown(handle.name)} has a validity of {given!r}: "
                "not a finite number of seconds >= 0"
            )
        max_ttl = self.config.max_ttl
        if max_ttl is None and given > MAX_TTL_SECONDS:
            # No lock is held longer than any ttl may be, quarantine or not.
            raise ConfigurationError(
                f"the handle of lock {shown(handle.name)} claims {given:.3f} s of validity, "
                f"more than any ttl may be ({MAX_TTL_SECONDS:g} s): it cannot come from a "
                "lock on these servers"
            )
        if max_ttl is not None and given > max_ttl:
            # No acquire or extension can hold a lock longer than max_ttl: the handle
            # was not made by export() of a Redlock with this max_ttl.
            raise ConfigurationError(
                f"the handle of lock {shown(handle.name)} claims {given:.3f} s of validity, "
                f"more than max_ttl={max_ttl:g} s: it cannot come from a lock on these "
                "servers (every client of them must use the same max_ttl)"
            )
        options = LockOptions.build(
            self.config,
            handle.name,
            ttl=handle.ttl,
            timeout=None,
            blocking=True,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
            adopted=True,
        )
        lock = self._lock_class(self, options)
        now = time.monotonic()  # before the wall clock: the validity is counted from here
        now_wall = time.time()
        ahead = clock_disagreement(handle, now_wall=now_wall, clock_skew=skew)
        if ahead > 0:
            logger.warning(
                "clock anomaly: the handle of lock %s was exported %.3f s in the future "
                "beyond clock_skew=%g s: the wall clocks disagree more than allowed, or one "
                "was stepped; its validity may be overestimated (extend it at once)",
                shown(handle.name),
                ahead,
                skew,
            )
        validity = adopted_validity(handle, now_wall=now_wall, clock_skew=skew)
        if validity <= 0:
            raise LockLost(
                f"the handle of lock {shown(handle.name)} expired {-validity:.3f} s ago: it was "
                f"exported with {handle.validity:.3f} s of validity",
                name=handle.name,
            )
        lock._adopt(handle, validity=validity, now=now)
        return lock

    def __repr__(self) -> str:
        return f"{type(self).__module__.split('._')[0]}.Redlock({self.servers!r})"

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        # multiprocessing's spawn and forkserver pickle what they hand a process
        raise TypeError(
            "a quorumlock Redlock cannot be pickled or copied: its connections and threads "
            "are this process's; make one in each process from the same servers and "
            "options (with spawn or forkserver: at import, or in the worker's initializer)"
        )

    def __deepcopy__(self, memo: object) -> NoReturn:
        self.__reduce_ex__(4)

    def _semaphore_options(
        self, name: object, permits: object, **options: Any
    ) -> tuple[LockOptions, int]:
        """The options of ``semaphore()``: those of ``lock()``, checked the same way, and
        ``permits`` (docs/algorithm.md, "Semaphores")."""
        checked = LockOptions.build(self.config, name, **options)
        count = check_permits(permits)
        if any(spec.cluster is not None for spec in self._specs):
            raise ConfigurationError(
                "semaphores are not supported over a Redis Cluster instance yet: use "
                "independent servers"
            )
        return checked, count

    # Which lock objects are acquiring or holding, and for whom.

    def _check_nesting(self, lock: LockBase, owner: object, unbounded: bool) -> None:
        """Refuse a wait with no bound for a name that ``owner`` (the calling thread or
        task) is acquiring or holding through another object of this Redlock: it could
        only end when the outer lock's ttl runs out. The lock itself may refuse more
        (a read-write lock's write while its reader holds: no upgrade). A semaphore's
        permits may be held several at once (``_nests`` False): never refused."""
        if owner is None or lock._nests is False:
            return
        mine = self._nested(lock, owner)
        lock._refuse_nesting(mine)
        # An outer acquisition that expired or was lost (not released yet) keeps nobody
        # waiting for its own caller: the acquire is an ordinary contender. One under way
        # (nothing held yet) does.
        mine = [other for other in mine if other.held or not other._holds]
        if unbounded and mine:
            keys = lock._occupancy_keys
            shared = [key for key in keys if any(key in o._occupancy_keys for o in mine)]
            what = f"lock {shown(lock.name)}"
            if len(keys) > 1:  # a set: say which of its names
                what = f"{shown(shared[0])}, of lock {shown(lock.name)},"
            raise LockNotReentrant(
                f"{what} is already held by this {self._caller} through another Lock "
                "object of this Redlock: the lock is not reentrant, and a blocking acquire "
                "would wait until its own outer lock expired. Release the outer lock first, "
                "or pass a timeout",
                name=lock.name,
            )

    def _nested(self, lock: LockBase, owner: object) -> list[LockBase]:
        """The other objects of this Redlock through which ``owner`` acquires or holds
        one of ``lock``'s keys."""
        with self._occupied_mutex:
            others = {
                other: None for key in lock._occupancy_keys for other in self._occupied.get(key, ())
            }
        return [other for other in others if other is not lock and other._occupant is owner]

    def _held_by_caller(self, lock: LockBase) -> str | None:
        """Who kept ``lock`` from its acquirer (the thread or task that occupies it),
        where this Redlock knows: the acquirer itself, through another object that holds
        one of its keys and whose validity lasts (a nested acquire with a timeout, which
        waits as a contender). None: another client, as far as it can tell."""
        owner = lock._occupant
        if owner is None or lock._nests is False:
            return None
        holding = [other for other in self._nested(lock, owner) if other.held]
        if not holding:
            return None
        whose = f"held by this {self._caller} through another Lock object of this Redlock"
        keys = lock._occupancy_keys
        if len(keys) > 1:  # a set: say which of its names
            shared = next(key for key in keys if any(key in o._occupancy_keys for o in holding))
            whose = f"{shown(shared)} is {whose}"
        return f"{whose} (the lock is not reentrant)"

    @property
    def _caller(self) -> str:
        """What takes turns on a lock object, and holds it, in this front end."""
        return "task" if self._flavour == "async" else "thread"

    def _occupy(self, lock: LockBase, owner: object) -> None:
        with self._occupied_mutex:
            lock._occupant = owner
            if lock._nests is False:
                return
            for key in lock._occupancy_keys:
                self._occupied.setdefault(key, weakref.WeakSet()).add(lock)

    def _vacate(self, lock: LockBase) -> None:
        with self._occupied_mutex:
            lock._occupant = None
            for key in lock._occupancy_keys:
                others = self._occupied.get(key)
                if others is not None:
                    others.discard(lock)
                    if not others:
                        del self._occupied[key]
                continue


class _Flag(Protocol):
    """``Lock.lost``: a ``threading.Event`` or an ``asyncio.Event``."""

    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...


@named_as("Lock")
class LockBase:
    """One lock on one name, owned by the object (not by a thread or a task).

    Threads or tasks that share the object take turns: an acquire waits until the
    object is released (by any thread or task: the object is the owner, as the token on
    the servers is). Leases, ``on_lost`` and ``lost`` belong to the current acquisition.
    """

    _redlock: RedlockBase[Any, Any, Any, Any, Any]
    #: Whether a thread or task holding this name must not wait for it through another
    #: object (a lock's); a semaphore's permits may be held several at once.
    _nests = True
    #: Whether ``export()`` can hand this kind of lock over (a set, a permit or a
    #: read-write hold cannot: a handle is adopted as a plain lock).
    _exportable = True

    def __init__(self, redlock: RedlockBase[Any, Any, Any, Any, Any], options: LockOptions) -> None:
        self._redlock = redlock
        self._options = options
        self._state = self._make_state(
            name=options.name,
            ttl_ms=options.ttl_ms,
            servers=len(redlock._labels),
            config=redlock.config,
            lease=options.lease,
            uniform=redlock._random.random,
            keys=options.keys,
        )
        self._on_lost = options.on_lost
        self._observer = redlock._observer
        self._servers: tuple[str, ...] = redlock._labels
        self._lost_noted = False  # a LostEvent was sent for the current acquisition
        # When a failed renewal was last warned of (monotonic; -inf: not in this run of
        # failures): retries come sooner and sooner, the warnings at most every WARN_EVERY.
        self._renewal_warned = -math.inf
        self._enter_held = False  # adopted: entering ``with`` must not acquire again
        # The thread or task that acquired this object and has not released it yet
        # (None when the object is free, or adopted outside any task).
        self._occupant: object = None
        self._occupied = False  # acquiring or holding: others wait for the release

    @property
    def lost(self) -> _Flag:
        """Set when the lock is lost while held (the front end's event)."""
        raise NotImplementedError

    def _make_state(self, **state: Any) -> LockState:
        """The state this object drives (a read-write lock's hold makes its own)."""
        return LockState(**state)

    @property
    def _occupancy_keys(self) -> tuple[str, ...]:
        """The keys this object's acquisitions take, within its Redlock: two objects
        that share one are the same lock to the nesting check."""
        return (self._state.name,)

    def _refuse_nesting(self, mine: Sequence[LockBase]) -> None:
        """Raise if this acquire must not start while the caller acquires or holds
        ``mine`` (other objects of this Redlock on the same key); the mutex never does."""

    def _occupy_adopted(self) -> None:
        """An adopted lock occupies its (fresh) object, for the adopting thread/task."""
        raise NotImplementedError

    def _adopt(self, handle: LockHandle, *, validity: float, now: float) -> None:
        """Hold the lock ``handle`` was exported from (this object is fresh, made by
        ``Redlock.adopt()``): entering ``with`` will not acquire it again."""
        self._state.adopt(
            token=handle.token, fence=handle.fencing_token, validity=validity, now=now
        )
        self._occupy_adopted()
        self._enter_held = True
        self._start_holding()

    def _busy(self, raise_on_failure: bool) -> bool:
        """An acquire that gave up waiting for the object itself (another thread or
        task held it): False, or :class:`LockNotAcquired` from a ``with``."""
        if raise_on_failure:
            raise LockNotAcquired(
                f"could not acquire lock {shown(self.name)}: this Lock object was held by "
                "another thread or task (its acquires take turns) for longer than the "
                "wait allowed",
                name=self.name,
            )
        return False

    # A Lock object stands for one acquisition on the servers: a copy would be a second
    # "holder" of the same token, and a pickle cannot carry the connections or the lease.

    def _refuse_copy(self, what: str) -> NoReturn:
        handing = (
            "to hand a held lock to another process, use lock.export() and "
            "Redlock.adopt(handle) there"
            if self._exportable
            else f"a {type(self).__name__} cannot be handed to another process either"
        )
        raise TypeError(
            f"a quorumlock {type(self).__name__} cannot be {what} (a copy would be a second "
            f"holder of one token): {handing}; for another lock on the same name, ask the "
            "Redlock for a new one"
        )

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        self._refuse_copy("pickled")

    def __del__(self) -> None:
        # Collected while it holds the lock: nothing can release it any more. Nothing is
        # sent from here (the collector runs on any thread, or at interpreter exit): the
        # keys stay until their ttl, and the user is told, as of an unclosed file.
        try:
            state = self.__dict__.get("_state")
            if state is None or state.deadline is None or state.deadline <= time.monotonic():
                return
            if state.token == self.__dict__.get("_shared_token"):
                return  # exported with keep=True: the adopter holds it
            warnings.warn(
                f"lock {shown(state.name)} was garbage collected while held (neither "
                "released nor exported): its keys stay on the servers until its ttl",
                ResourceWarning,
                stacklevel=1,  # the collector's: no caller of the user's to point to
                source=self,
            )
        except Exception:  # at interpreter exit the modules may be gone already
            return

    def __copy__(self) -> NoReturn:
        self._refuse_copy("copied")

    def __deepcopy__(self, memo: object) -> NoReturn:
        self._refuse_copy("copied")

    def _start_holding(self) -> None:
        """Start what a held lock needs (lease keeping, loss watching) in the front end."""
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The lock's name, its key on every server (for a multi-resource lock, its names
        joined for messages: see ``names``)."""
        return self._state.name

    @property
    def ttl(self) -> float:
        """The ttl in seconds, as sent to the servers (whole milliseconds)."""
        return self._state.ttl_ms / 1000

    @property
    def token(self) -> str | None:
        """The random value stored on the servers by the last acquire (None before)."""
        return self._state.token

    @property
    def fencing_token(self) -> int | None:
        """The fencing token of the current acquisition, or None.

        An int when the Redlock was made with ``fencing=True`` and this object holds (or
        held) the lock; it strictly increases across all holders of this name over time,
        so a protected resource can refuse a write that carries a smaller one (see
        :class:`quorumlock.RedisFence` and docs/safety.md). None before an acquire and
        with fencing off.
        """
        return self._state.fence

    @property
    def validity(self) -> float:
        """Seconds this object still holds the lock, from the local monotonic clock.

        0.0 when not held. No round trip: it is the deadline computed when the lock was
        acquired or last extended (R6), minus the time since.
        """
        return self._state.validity(time.monotonic())

    @property
    def held(self) -> bool:
        """True while this object holds the lock and its validity has not run out."""
        return self.validity > 0

    @property
    def extensions(self) -> int:
        """How many times the lock was extended since it was acquired."""
        return self._state.extensions

    @property
    def outcomes(self) -> tuple[NodeOutcome, ...]:
        """What each server answered in the last round (acquire, extend or release)."""
        return self._state.outcomes

    def _released(self, released: bool, was_lost: bool, ran_out: bool) -> None:
        """Report what the release round found. ``ran_out``: the validity had run out
        before the round began, which is then why the key was gone."""
        if released or was_lost:  # a loss was reported when it happened
            return
        if self._gone():
            logger.warning(
                "lock %s was no longer held by a majority at release: %s",
                shown(self.name),
                render_outcomes(self.outcomes),
            )
            self._found_lost("validity ran out" if ran_out else "not held at release")
        else:  # too few answers, not a loss: the keys not deleted expire with the ttl
            logger.warning(
                "could not confirm the release of lock %s (too few servers answered; "
                "its keys expire with the ttl): %s",
                shown(self.name),
                render_outcomes(self.outcomes),
            )

    def _gone(self) -> bool:
        """The last round's "not held" answers leave no majority that could hold the key."""
        n = len(self.outcomes)
        return sum(1 for o in self.outcomes if o.reply is Reply.NOT_HELD) > n - quorum(n)

    def _export(self, keep: bool) -> LockHandle:
        """The handle of the held lock; unless ``keep``, this object stops holding it.

        Raises :class:`LockNotHeld` if this object does not hold the lock, and
        :class:`LockLost` if it was lost or its validity ran out.
        """
        if not isinstance(keep, bool):
            raise TypeError(f"keep must be a bool, not {keep!r}")
        exported_at = time.time()  # before the validity is read: the adopter errs short
        try:
            token, validity = self._state.export(now=time.monotonic(), keep=keep)
        except LockLost:
            self._found_lost("validity ran out")
            raise
        if keep:
            self._shared_token = token  # the adopter holds it too: see ``__del__``
        return LockHandle(
            name=self.name,
            token=token,
            ttl=self.ttl,
            fencing_token=self.fencing_token,
            validity=validity,
            exported_at=exported_at,
            servers=self._servers,
        )

    # Observer events. Callers check ``self._observer is not None`` first, so that no
    # event is built (and no clock is read) when there is no observer.

    def _note_acquire(self, acquired: bool, started: float) -> None:
        if self._observer is None:
            return
        state = self._state
        event = AcquireEvent(
            self.name,
            acquired,
            state.verdict.name.lower(),
            state.attempts,
            time.monotonic() - started,
            state.fence if acquired else None,
            state.outcomes,
        )
        notify(self._observer, event)

    def _note_extend(self, started: float, *, renewal: bool, extended: bool) -> None:
        if self._observer is None:
            return
        now = time.monotonic()
        event = ExtendEvent(
            self.name,
            extended,
            renewal,
            now - started,
            self._state.validity(now) if extended else 0.0,
            "" if extended else (self._state.reason or "it had been lost before"),
            self._state.outcomes,
        )
        notify(self._observer, event)

    def _note_release(self, released: bool, started: float) -> None:
        if self._observer is None:
            return
        event = ReleaseEvent(self.name, released, time.monotonic() - started, self.outcomes)
        notify(self._observer, event)

    def _note_lost(self, reason: str) -> None:
        """A loss, told to the observer once per acquisition."""
        if self._lost_noted:
            return
        self._lost_noted = True
        if self._observer is not None:
            notify(self._observer, LostEvent(self.name, reason, self.outcomes))

    def _lost_by_exit(self, was_lost: bool, released: bool) -> bool:
        """Whether leaving a ``with`` block must raise :class:`LockLost`.

        Yes when the loss was known (reported, or the validity ran out) or when a
        majority answered the release with "not held": the key was gone before the end
        of the block. A release that merely got too few answers while the lock was still
        valid is not a loss: the block ran under the lock, the keys expire with the ttl.
        """
        if was_lost:
            return True
        if released:
            return False
        return self._gone()

    # What both front ends do around the I/O of an operation: each is called at the same
    # point of ``acquire``/``extend``/``release``/``with`` in both, and makes no round.

    def _reenter(self, now: float) -> None:
        """An acquire by the thread or task that holds this object: refused while the
        lock is valid (it is not reentrant); once expired or lost, it acquires again."""
        if self._state.validity(now) > 0:
            raise self._state.not_reentrant()

    def _known_holder(self) -> str | None:
        """Who holds the lock an acquire of this object found held, where its Redlock
        knows (the message of :class:`LockNotAcquired` says it)."""
        return self._redlock._held_by_caller(self)

    def _occupy(self, owner: object) -> None:
        """This object is taken (acquiring, then holding) by ``owner``."""
        self._occupied = True
        self._redlock._occupy(self, owner)

    def _acquire_failed(self, exc: BaseException, started: float) -> None:
        """An acquire that raised: the observer hears of a :class:`LockNotAcquired`."""
        if self._observer is not None and isinstance(exc, LockNotAcquired):
            self._note_acquire(False, started)

    def _acquire_ended(self, acquired: bool, started: float) -> bool:
        """An acquire that returned: hold the lock, or free the object for the next."""
        if self._observer is not None:
            self._note_acquire(acquired, started)
        if acquired:
            self._lost_noted = False
            self._renewal_warned = -math.inf
            self._start_holding()
        else:
            self._vacate()
        return acquired

    def _vacate(self) -> None:
        """Free the object for the next thread or task (sync: with ``_mutex`` held)."""
        if self._occupied:
            self._occupied = False
            self._occupant = None
            try:
                self._redlock._vacate(self)
            finally:  # whatever comes, the threads or tasks waiting for the object go on
                self._open_gate()

    def _open_gate(self) -> None:
        """Let the next thread or task that waits for this object in (the front end's)."""
        raise NotImplementedError

    @property
    def _needs_keeper(self) -> bool:
        """A held lock is watched when it is renewed or its loss must be told."""
        return self._state.lease.auto_extend or self._on_lost is not None

    def _extending(self, ttl: Duration | None) -> Flow[float]:
        """``extend()``: the extension, told to the observer; a loss is reported."""
        now = time.monotonic()
        try:
            validity = yield from self._state.extend(ttl=ttl, now=now)
        except LockLost as exc:
            if self._observer is not None:
                self._note_extend(now, renewal=False, extended=False)
            self._report_lost(exc)
            raise
        if self._observer is not None:
            self._note_extend(now, renewal=False, extended=True)
        return validity

    def _owning(self) -> Flow[bool]:
        """``owned()``: no round once the local validity is over; a validity that ran
        out during the round answers False too."""
        if self.validity <= 0:
            return False
        mine = yield from self._state.probe(mine=True)
        return mine and self.validity > 0

    def _release_begins(self) -> tuple[bool, bool]:
        """As a release round begins: whether a loss was reported already, and whether
        the validity has run out (then why a key the round finds gone is gone)."""
        return self._state.lost, self.validity == 0

    def _release_ended(self, released: bool, was_lost: bool, ran_out: bool, started: float) -> None:
        if self._observer is not None:
            self._note_release(released, started)
        self._released(released, was_lost, ran_out)

    def _due(self, now: float) -> Renew | Wake | None:
        """The lease keeper's next step (docs/algorithm.md, leases); a loss found on the
        way is reported here, and ends the keeping (None)."""
        step = self._state.tend(now)
        if isinstance(step, Lost):
            self._report_lost(step.error, step.reason)
            return None
        return step

    def _after_renewal(self, started: float, result: bool | Exception) -> float | None:
        """React to a renewal started at ``started`` that returned or raised ``result``:
        log, tell the observer, report a loss. When to look again (None: stop)."""
        step = self._state.renewed(result, time.monotonic())
        if step.failure is not None:
            logger.error("lease renewal of %s failed", shown(self.name), exc_info=step.failure)
        if self._observer is not None:
            self._note_extend(started, renewal=True, extended=step.extended)
        if step.lost is not None:
            self._report_lost(step.lost)
            return None
        if step.left is None:
            self._renewal_warned = -math.inf  # renewed: a new failure is warned of at once
        elif started - self._renewal_warned >= WARN_EVERY:
            self._renewal_warned = started
            logger.warning(
                "lease renewal of %s failed, %.3f s of validity left: %s (retried until "
                "it succeeds or the validity runs out)",
                shown(self.name),
                step.left,
                render_outcomes(self.outcomes),
            )
        return step.at

    def _report_lost(self, error: LockLost, reason: str = "extension failed") -> None:
        """The lock was lost while held: stop its lease, tell the log, the observer,
        ``lost`` and ``on_lost``, and end the protected block where the front end can."""
        self._stop_lease(error)
        logger.warning("%s", error)
        self._found_lost(reason)

    def _found_lost(self, reason: str) -> None:
        """A loss told to the observer, ``lost`` and ``on_lost``, once per acquisition,
        whoever found it: the lease (:meth:`_report_lost`), or the caller before it
        (``check()``, ``export()``, a release, the end of a block; a lease kept from
        running, as by an event loop that a long computation holds), in its thread."""
        if self._lost_noted:
            return
        self._note_lost(reason)
        self.lost.set()
        if self._on_lost is not None:
            self._call_on_lost()

    def _call_on_lost(self) -> None:
        """Call ``on_lost`` (the front end may call it elsewhere); what it raises is
        logged."""
        on_lost = self._on_lost
        if on_lost is None:
            return
        try:
            on_lost(self)
        except Exception:
            logger.exception("on_lost callback of lock %s raised", shown(self.name))

    def _stop_lease(self, error: LockLost) -> None:
        """The front end's part of a loss (forget the lease, interrupt the holder)."""
        raise NotImplementedError

    @property
    def _holds(self) -> bool:
        """Whether the object holds the lock, or held it until it was lost: a release
        would run its round."""
        return self._state.held or self._state.lost

    @property
    def _lost_now(self) -> bool:
        """Whether the current acquisition is known lost or has run out (at a block's end)."""
        return self._state.lost or self.lost.is_set() or self.validity == 0

    def _check_exit(
        self, exc_type: type[BaseException] | None, was_lost: bool, released: bool, block: str
    ) -> None:
        """The end of a ``block`` (``with`` or ``async with``) that raised ``exc_type``:
        raise :class:`LockLost` if it ran (at least partly) without the lock. Loss is
        never silent; an exception of the block itself is left to propagate."""
        if exc_type is None and self._lost_by_exit(was_lost, released):
            self._found_lost("validity ran out")
            raise LockLost(
                f"lock {shown(self.name)} was lost before the end of the {block} block."
                f"{self._state.lost_because()}",
                name=self.name,
                outcomes=self.outcomes,
            )

    def check(self) -> float:
        """Raise :class:`LockLost` unless the lock is held; return the validity left.

        Call it before a write that must happen under the lock. :class:`LockLost` says
        the lock was lost or its validity ran out; an object that does not hold it
        (never acquired, released, or handed over with ``export()``) raises
        :class:`LockNotHeld` instead.
        """
        validity = self.validity
        if validity > 0:
            return validity
        if self._state.lost:
            raise self._state.lost_error()
        error = self._state.expire(time.monotonic())
        if error is not None:
            self._found_lost("validity ran out")
            raise error
        raise LockNotHeld(
            f"lock {shown(self.name)} is not held by this Lock object", name=self.name
        )

    def __repr__(self) -> str:
        state = f"held for {self.validity:.3f}s" if self.held else "not held"
        return (
            f"<{type(self).__module__.split('._')[0]}.{type(self).__name__} {shown(self.name)} "
            f"ttl={self.ttl:g}s {state}>"
        )
