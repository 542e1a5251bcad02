"""Validated options, gathered in one frozen config, and validation of user input.

Pure. Every check here runs before any network call, so bad input never leaves a key
behind: a ``TypeError`` for a wrong type, a :class:`ConfigurationError` for a bad value.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from quorumlock._algorithm.arithmetic import DRIFT_FLOOR, default_instance_timeout
from quorumlock._exceptions import ConfigurationError

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_TIMEOUT_SECONDS",
    "MAX_TTL_SECONDS",
    "NO_LEASE",
    "Duration",
    "LeasePolicy",
    "LockOptions",
    "RedlockConfig",
    "bounded_timeout",
    "bounded_ttl",
    "check_callback",
    "check_wait",
    "is_async_callable",
    "seconds",
    "shown",
    "shown_number",
    "to_ttl_ms",
    "validate_name",
    "wait_seconds",
]

#: What quorumlock accepts wherever it takes a duration: seconds, or a timedelta.
Duration = float | int | timedelta


def seconds(value: object, what: str, *, allow_zero: bool = False) -> float:
    """``value`` as float seconds: a finite, positive int, float or timedelta.

    Raises ``TypeError`` for other types (``bool`` included: ``True`` is not a duration)
    and :class:`ConfigurationError` for NaN, infinities and values <= 0 (< 0 with
    ``allow_zero``).
    """
    if isinstance(value, timedelta):
        result = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            result = float(value)
        except OverflowError:  # an int beyond any float: as infinite as a duration gets
            raise ConfigurationError(f"{what} must be finite, not {shown_number(value)}") from None
    else:
        raise TypeError(f"{what} must be a number of seconds or a timedelta, not {value!r}")
    if not math.isfinite(result):
        raise ConfigurationError(f"{what} must be finite, not {value!r}")
    if result < 0 or (result == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ConfigurationError(f"{what} must be {bound}, not {value!r}")
    return result


def shown_number(value: object) -> str:
    """A number for a message: whole, unless it has more digits than anyone reads."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}…({len(text)} digits)"


def wait_seconds(value: object, what: str = "timeout") -> float | None:
    """A wait bound: None or ``math.inf`` for no bound, else seconds >= 0.

    ``math.inf`` means "wait forever" here, as it does for ``max_hold``. Raises
    ``TypeError`` for other types and :class:`ConfigurationError` for NaN and negatives.
    """
    if value is None:
        return None
    if isinstance(value, float) and value == math.inf:
        return None
    if isinstance(value, timedelta):
        negative = value < timedelta(0)
    else:
        negative = isinstance(value, int | float) and not isinstance(value, bool) and value < 0
    if negative:
        # threading's acquire(timeout=-1) waits with no limit: say what does here.
        raise ConfigurationError(
            f"{what} must be >= 0, not {value!r}: None (or math.inf) waits with no limit"
        )
    return seconds(value, what, allow_zero=True)


#: The longest ttl and ``max_ttl``, in seconds (about 31 years). Far longer ones fail
#: later and worse: a wait of the lease thread can be no longer than
#: ``threading.TIMEOUT_MAX`` (292 years on 64-bit Linux and macOS), and the servers
#: refuse a ``PX`` whose expiry would overflow a 64-bit count of milliseconds.
MAX_TTL_SECONDS = 1e9


#: The longest per-instance timeout, connect timeout, retry delay and busy poll, in
#: seconds. Longer ones are typos, and much longer ones fail later and worse: the sync
#: fan-out's poll takes a C int of milliseconds (24 days), a socket's timeout a time_t.
MAX_TIMEOUT_SECONDS = 3600.0


def bounded_timeout(value: object, what: str, *, allow_zero: bool = False) -> float:
    """A timeout as seconds (:func:`seconds`), at most :data:`MAX_TIMEOUT_SECONDS`."""
    result = seconds(value, what, allow_zero=allow_zero)
    if result > MAX_TIMEOUT_SECONDS:
        raise ConfigurationError(f"{what} must be at most {MAX_TIMEOUT_SECONDS:g} s, not {value!r}")
    return result


def bounded_ttl(value: object, what: str) -> float:
    """A ttl or ``max_ttl`` as seconds (:func:`seconds`), at most :data:`MAX_TTL_SECONDS`."""
    result = seconds(value, what)
    if result > MAX_TTL_SECONDS:
        raise ConfigurationError(
            f"{what} must be at most {MAX_TTL_SECONDS:g} s (about 31 years), not {value!r}"
        )
    return result


def to_ttl_ms(value: object, clock_drift_factor: float) -> int:
    """A ttl as whole milliseconds (the unit of ``PX``), checked to leave some validity.

    A ttl no longer than its own drift (``ttl * factor + 2 ms``) could never be acquired,
    and one longer than :data:`MAX_TTL_SECONDS` could not be kept: each is a
    :class:`ConfigurationError` rather than a lock that always fails.
    """
    ttl_ms = round(bounded_ttl(value, "ttl") * 1000)
    if ttl_ms / 1000 * (1 - clock_drift_factor) <= DRIFT_FLOOR:
        raise ConfigurationError(
            f"ttl {value!r} is too short: it must exceed its clock drift allowance "
            f"(ttl * clock_drift_factor + {DRIFT_FLOOR * 1000:g} ms)"
        )
    return ttl_ms


#: quorumlock's own keys on the servers (the incarnation markers) start with this: no lock
#: name may (``scripts.MARKER_KEY``; the purity rule keeps config from importing it).
RESERVED_PREFIX = "quorumlock:incarnation"

#: The queues of waiters (``scripts.QUEUE_PREFIX``, ``scripts.QUEUE_EXPIRY_PREFIX``)
#: start with this.
QUEUE_RESERVED_PREFIX = "quorumlock:queue"

#: Every prefix of quorumlock's own keys, with what is kept there: no lock name may start
#: with one, or a lock would write over (or be refused by the type of) one of them. The
#: modules that build these keys import nothing from here (the purity rule), so
#: tests/core/test_config.py checks that each of their prefixes is listed.
RESERVED_PREFIXES: Mapping[str, str] = {
    RESERVED_PREFIX: "the servers' incarnation markers",
    "quorumlock:rw:": "the holders of the read-write locks",
    "quorumlock:semaphore:": "the slots of the semaphores",
    "quorumlock:term:": "the term records of the elections",
    "quorumlock:fence:": "the default keys of RedisFence",
    QUEUE_RESERVED_PREFIX: "the queues of waiters",
}


_RESERVED = tuple(RESERVED_PREFIXES)


#: The longest lock name, in bytes of UTF-8: the key is sent in every command, logged and
#: shown in messages; a name this long is already a bug in the caller.
MAX_NAME_BYTES = 4096

#: Names longer than this many characters are shortened in messages, logs and reprs.
_SHOWN_CHARS = 100


def shown(name: str) -> str:
    """``repr(name)``, shortened for messages and logs when the name is long."""
    if len(name) <= _SHOWN_CHARS:
        return repr(name)
    return f"{name[: _SHOWN_CHARS - 20]!r}…({len(name)} characters)"


def validate_name(name: object) -> str:
    """A lock name: a non-empty ``str`` of at most :data:`MAX_NAME_BYTES` bytes of UTF-8,
    used as the key on every server as it is.

    Names starting with a prefix of :data:`RESERVED_PREFIXES` (``quorumlock:incarnation``,
    ``quorumlock:rw:`` and the others of quorumlock's own keys) are refused.
    """
    if not isinstance(name, str):
        raise TypeError(f"a lock name must be a str, not {type(name).__name__}")
    if not name:
        raise ConfigurationError("a lock name must not be empty")
    if len(name) > MAX_NAME_BYTES:  # cheap bound first: a character is at least a byte
        raise ConfigurationError(
            f"lock name {shown(name)} is longer than {MAX_NAME_BYTES} bytes of UTF-8"
        )
    try:
        size = len(name.encode())
    except UnicodeEncodeError:
        # A lone surrogate: the client could not send it as a key.
        raise ConfigurationError(f"lock name {shown(name)} cannot be encoded as UTF-8") from None
    if size > MAX_NAME_BYTES:
        raise ConfigurationError(
            f"lock name {shown(name)} is {size} bytes of UTF-8, more than {MAX_NAME_BYTES}"
        )
    if "\x00" in name:
        # Legal for Redis, but a NUL in a name is nearly always a bug in the caller.
        raise ConfigurationError(f"a lock name must not contain NUL characters: {shown(name)}")
    if not name.startswith(_RESERVED):  # one test for all; which prefix, only on a hit
        return name
    for prefix, kept in RESERVED_PREFIXES.items():
        if name.startswith(prefix):
            raise ConfigurationError(
                f"lock name {shown(name)} starts with {prefix!r}, which quorumlock keeps for "
                f"its own keys ({kept}): choose another name"
            )
    return name


@dataclass(frozen=True, slots=True, kw_only=True)
class RedlockConfig:
    """The options of a :class:`quorumlock.Redlock`, each with its default.

    - ``clock_drift_factor`` (0.01): share of the ttl given up for clock drift (R6 step 4).
    - ``retry_delay`` (0.2 s): base of the random pause between attempts; each pause is
      uniform in ``[retry_delay / 2, retry_delay]`` (R8), up to three of them for a waiter
      that stands third or further back in the name's line of waiters. With
      ``wake_on_release``, a release that wakes the waiter cuts its pause short.
    - ``retry_count`` (None): at most this many retries after the first attempt of a
      blocking acquire; None means bounded only by the acquire timeout.
    - ``instance_timeout`` (None): how long to wait for each server's reply; None derives
      it from the ttl (0.5 % of it, within [20, 250] ms), small compared with the ttl (R6).
    - ``connect_timeout`` (1.0 s): bound on establishing one connection. A round waits
      for a connection no longer than its own instance timeout, unless it is the first to
      reach that server (first contact: then up to ``connect_timeout`` from its start,
      while that server could still decide it); a connection that takes longer keeps
      being established in the background for the next round.
    - ``instance_timeout``, ``connect_timeout``, ``retry_delay`` and ``busy_poll`` are at
      most :data:`MAX_TIMEOUT_SECONDS` (3600 s).
    - ``busy_poll`` (0.0002 s): the sync client polls its sockets this long before sleeping
      in the kernel while it waits for replies. On loopback and fast LANs this halves the
      latency of a round (waking a sleeping thread costs more than the round trip); 0
      turns it off. It never burns more than this much CPU per round, and spins only
      while that pays: while the last rounds waited for their replies at most this long
      on average. Once the replies come later (cores busy with many contending
      processes, a slower network), rounds sleep at once until they come sooner again.
      The rounds of a waiter, and a release that puts the process in line behind the
      waiter it wakes, never spin.
    - ``max_ttl`` (60.0 s): the longest ttl any lock may have, extensions included, and
      the length of the restart quarantine: a server that restarted or lost its
      data counts toward no quorum until ``max_ttl`` has passed since. At most
      :data:`MAX_TTL_SECONDS` (1e9 s), as is every ttl. Every client of
      the same servers should use the same value. None turns the quarantine off: unsafe
      after a restart unless the servers fsync every write (docs/safety.md).
    - ``fencing`` (False): draw a fencing token with every acquisition,
      ``Lock.fencing_token``, strictly increasing across all holders over time.
    - ``wake_on_release`` (True): a blocking acquire that finds the lock taken subscribes
      to the lock's release announcements on the servers and joins the lock's queue of
      waiters there; a release wakes the head of the queue only, which retries at once
      instead of after its ``retry_delay`` pause, which stays as the fallback for a lost
      announcement and for a lock that expires (docs/algorithm.md).
    - ``fair`` (False): strict first come, first served: the acquire script refuses a
      client that is not at the head of the lock's queue of waiters on that server
      (when the queue is not empty), so a majority's queue order decides. Needs
      ``wake_on_release``; costs a script on every acquire and a round trip more per
      hand-over (docs/algorithm.md, "Fair locks"). It orders the single lock (lock,
      rlock, election); sets, read-write locks and semaphores have no queue.
    """

    clock_drift_factor: float = 0.01
    retry_delay: float = 0.2
    retry_count: int | None = None
    instance_timeout: float | None = None
    connect_timeout: float = 1.0
    busy_poll: float = 0.0002
    max_ttl: float | None = 60.0
    fencing: bool = False
    wake_on_release: bool = True
    fair: bool = False

    def __post_init__(self) -> None:
        factor = self.clock_drift_factor
        if not isinstance(factor, int | float) or isinstance(factor, bool):
            raise TypeError(f"clock_drift_factor must be a number, not {factor!r}")
        if not 0.0 <= factor < 1.0:
            raise ConfigurationError(f"clock_drift_factor must be in [0, 1), not {factor!r}")
        object.__setattr__(self, "clock_drift_factor", float(factor))
        delay = bounded_timeout(self.retry_delay, "retry_delay")
        object.__setattr__(self, "retry_delay", delay)
        count = self.retry_count
        if count is not None:
            if not isinstance(count, int) or isinstance(count, bool):
                raise TypeError(f"retry_count must be an int or None, not {count!r}")
            if count < 0:
                raise ConfigurationError(f"retry_count must be >= 0, not {count}")
        if self.instance_timeout is not None:
            timeout = bounded_timeout(self.instance_timeout, "instance_timeout")
            object.__setattr__(self, "instance_timeout", timeout)
        timeout = bounded_timeout(self.connect_timeout, "connect_timeout")
        object.__setattr__(self, "connect_timeout", timeout)
        busy = bounded_timeout(self.busy_poll, "busy_poll", allow_zero=True)
        object.__setattr__(self, "busy_poll", busy)
        if self.max_ttl is not None:
            max_ttl = bounded_ttl(self.max_ttl, "max_ttl")
            try:
                to_ttl_ms(max_ttl, self.clock_drift_factor)
            except ConfigurationError:
                raise ConfigurationError(
                    f"max_ttl={self.max_ttl!r} s admits no lock: every ttl must exceed its "
                    f"clock drift allowance (ttl * clock_drift_factor + {DRIFT_FLOOR * 1000:g} "
                    "ms), and be at most max_ttl"
                ) from None
            object.__setattr__(self, "max_ttl", max_ttl)
        if not isinstance(self.fencing, bool):
            raise TypeError(f"fencing must be True or False, not {self.fencing!r}")
        if not isinstance(self.wake_on_release, bool):
            raise TypeError(f"wake_on_release must be True or False, not {self.wake_on_release!r}")
        if not isinstance(self.fair, bool):
            raise TypeError(f"fair must be True or False, not {self.fair!r}")
        if self.fair and not self.wake_on_release:
            raise ConfigurationError(
                "fair=True needs wake_on_release=True: the order is the queue of waiters"
            )

    @property
    def max_ttl_ms(self) -> int:
        """``max_ttl`` in whole milliseconds (rounded up); 0 when the quarantine is off."""
        return 0 if self.max_ttl is None else math.ceil(self.max_ttl * 1000)

    def ttl_ms(self, value: object) -> int:
        """A lock's ttl in milliseconds (see :func:`to_ttl_ms`), at most ``max_ttl``."""
        ttl_ms = to_ttl_ms(value, self.clock_drift_factor)
        if self.max_ttl is not None and ttl_ms > self.max_ttl_ms:
            raise ConfigurationError(
                f"ttl {value!r} exceeds max_ttl={self.max_ttl:g} s, the longest ttl the "
                "restart quarantine covers; raise max_ttl on every client of these servers"
            )
        return ttl_ms

    def timeout_for(self, ttl_ms: int) -> float:
        """The per-instance timeout of a round for a lock of this ttl."""
        if self.instance_timeout is not None:
            return self.instance_timeout
        return default_instance_timeout(ttl_ms)


def check_wait(blocking: object, timeout: object) -> float | None:
    """The wait bound of an acquire: None for no bound (``timeout`` None or
    ``math.inf``). Raises :class:`ConfigurationError` for a finite timeout with
    ``blocking=False``, and what :func:`wait_seconds` raises."""
    if not isinstance(blocking, bool):
        raise TypeError(f"blocking must be a bool, not {blocking!r}")
    wait = wait_seconds(timeout)
    if wait is not None and not blocking:
        raise ConfigurationError("a timeout cannot be given with blocking=False")
    return wait


@dataclass(frozen=True, slots=True)
class LeasePolicy:
    """Whether and how long a lock is extended automatically."""

    auto_extend: bool = False
    max_extensions: int | None = None
    max_hold: float | None = None

    @classmethod
    def build(
        cls, *, auto_extend: bool, max_extensions: int | None, max_hold: Duration | None
    ) -> LeasePolicy:
        """Validate the lease options of ``Redlock.lock``.

        Raises ``TypeError`` for wrong types and :class:`ConfigurationError` for
        ``auto_extend`` without a bound: renewing forever must be asked for explicitly,
        with ``max_hold=math.inf``.
        """
        if not isinstance(auto_extend, bool):
            raise TypeError(f"auto_extend must be a bool, not {auto_extend!r}")
        if max_extensions is not None:
            if not isinstance(max_extensions, int) or isinstance(max_extensions, bool):
                raise TypeError(f"max_extensions must be an int or None, not {max_extensions!r}")
            if max_extensions < 0:
                raise ConfigurationError(f"max_extensions must be >= 0, not {max_extensions}")
        hold: float | None = None
        if max_hold is not None:
            if isinstance(max_hold, float) and math.isinf(max_hold) and max_hold > 0:
                hold = math.inf
            else:
                hold = seconds(max_hold, "max_hold")
        if auto_extend and max_extensions is None and hold is None:
            raise ConfigurationError(
                "auto_extend needs a bound: give max_extensions=N or "
                "max_hold=SECONDS, or max_hold=math.inf to renew for as long as it runs"
            )
        if not auto_extend:
            if max_extensions is None and hold is None:
                return NO_LEASE  # the common case: no allocation per lock
            given = "max_hold" if hold is not None else "max_extensions"
            raise ConfigurationError(
                f"{given} bounds the renewals of auto_extend=True and does nothing without "
                f"them (the lock lasts its ttl): give auto_extend=True, or leave {given} out"
            )
        return cls(auto_extend, max_extensions, hold)


#: The lease of a lock that is not extended automatically (shared: it is frozen).
NO_LEASE = LeasePolicy()


@dataclass(frozen=True, slots=True, kw_only=True)
class LockOptions:
    """The options of one lock object, validated: what ``Redlock.lock()`` and
    ``synchronized()`` take, built once by :meth:`build` (a ``synchronized`` function
    reuses its options for every call, unchecked).

    - ``name``: the key on every server (:func:`validate_name`).
    - ``ttl_ms``: the ttl in whole milliseconds, at most ``max_ttl``.
    - ``timeout`` and ``blocking``: how a ``with`` block acquires, as given (checked by
      :func:`check_wait`).
    - ``lease``: whether and how long the lock is renewed (:class:`LeasePolicy`).
    - ``on_lost``: called with the lock object when it is lost while held.
    - ``keys``: a multi-resource lock's set of keys, sorted (``name`` is then only the
      name shown); empty for a lock on one name.
    """

    name: str
    ttl_ms: int
    timeout: Duration | None = None
    blocking: bool = True
    lease: LeasePolicy = NO_LEASE
    on_lost: Callable[[Any], object] | None = None
    keys: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        config: RedlockConfig,
        name: object,
        *,
        ttl: object,
        timeout: Duration | None,
        blocking: bool,
        auto_extend: bool,
        max_extensions: int | None,
        max_hold: Duration | None,
        on_lost: Callable[[Any], object] | None,
        adopted: bool = False,
    ) -> LockOptions:
        """Check every option against ``config`` (the Redlock's): ``TypeError`` for a
        wrong type, :class:`ConfigurationError` for a bad value, before any network call.
        A ``max_hold`` shorter than the ttl is one: an acquire holds for its ttl before
        any renewal (not so for an ``adopted`` lock, whose validity left may be shorter:
        its ``max_hold`` counts from the adoption).
        """
        check_wait(blocking, timeout)
        check_callback(on_lost, "on_lost")
        ttl_ms = config.ttl_ms(ttl)
        lease = LeasePolicy.build(
            auto_extend=auto_extend, max_extensions=max_extensions, max_hold=max_hold
        )
        if not adopted and lease.max_hold is not None and lease.max_hold * 1000 < ttl_ms:
            raise ConfigurationError(
                f"max_hold ({lease.max_hold:g} s) is shorter than the ttl ({ttl_ms / 1000:g} "
                "s): a lock holds for its ttl before any renewal; give a max_hold of at "
                "least the ttl"
            )
        return cls(
            name=validate_name(name),
            ttl_ms=ttl_ms,
            timeout=timeout,
            blocking=blocking,
            lease=lease,
            on_lost=on_lost,
        )


def is_async_callable(func: object) -> bool:
    """``func`` is an ``async def`` function, or an object with an ``async def __call__``."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(type(func), "__call__", None)  # noqa: B004 - the method, not a callable test
    )


def check_callback(callback: object, what: str) -> None:
    """Refuse a callback (``on_lost``, an observer's method) that is not a plain callable:
    quorumlock calls it and never awaits what it returns, so an ``async def`` one would
    never run (``TypeError``)."""
    if callback is None:
        return
    if not callable(callback):
        raise TypeError(f"{what} must be callable, not {callback!r}")
    if is_async_callable(callback):
        raise TypeError(
            f"{what} must be a plain function, not an async def one ({callback!r}): it is "
            "called and never awaited, so its body would never run; to run async code, "
            "start a task from a plain function"
        )
