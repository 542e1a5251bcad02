"""The synchronous API: :class:`Redlock` and its :class:`Lock` objects.

A thin shell: the protocol lives in ``quorumlock._algorithm`` as sans-I/O flows, which
this module drives with blocking, multiplexed I/O (``quorumlock._io.fanout``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
import warnings
from collections.abc import Sequence
from types import TracebackType
from typing import TypeVar

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import Duration, RedlockConfig, to_ttl_ms, validate_name
from quorumlock._algorithm.flows import Fanout, Flow, Round
from quorumlock._algorithm.lockstate import LockState
from quorumlock._algorithm.outcomes import NodeOutcome, render_outcomes
from quorumlock._io.fanout import SyncFanout
from quorumlock._io.servers import ServerArg, parse_servers

__all__ = ["Lock", "QuorumLockWarning", "Redlock"]

T = TypeVar("T")
logger = logging.getLogger("quorumlock")


class QuorumLockWarning(UserWarning):
    """A configuration that works but gives up fault tolerance (an even N, for one)."""


class Redlock:
    """A lock manager over N independent Redis or Valkey masters (SPEC R5 to R10).

    ``servers`` are URLs (``redis://``, ``rediss://`` for TLS, ``unix://``) or
    ``redis.Redis`` client objects (a Sentinel ``master_for(...)`` client works too);
    quorumlock opens its own connections to each. N = 1 is the correct single-instance
    lock, but it is **not fault tolerant**: if that server loses its data, the lock is
    gone. Use 3 or 5 independent masters for that (an even N tolerates no more failures
    than N - 1 and warns).

    Keyword-only options, with their defaults (see :class:`RedlockConfig`):
    ``clock_drift_factor=0.01``, ``retry_delay=0.2``, ``retry_count=None``,
    ``instance_timeout=None`` (derived from each lock's ttl), ``connect_timeout=1.0``,
    ``busy_poll=0.0002``.

    Raises ``TypeError`` or :class:`ConfigurationError` for bad arguments, before any
    network call. Thread safe: one ``Redlock`` serves a whole process.
    """

    def __init__(
        self,
        servers: ServerArg | Sequence[ServerArg],
        *,
        clock_drift_factor: float = 0.01,
        retry_delay: float = 0.2,
        retry_count: int | None = None,
        instance_timeout: float | None = None,
        connect_timeout: float = 1.0,
        busy_poll: float = 0.0002,
    ) -> None:
        specs = parse_servers(servers)
        self.config = RedlockConfig(
            clock_drift_factor=clock_drift_factor,
            retry_delay=retry_delay,
            retry_count=retry_count,
            instance_timeout=instance_timeout,
            connect_timeout=connect_timeout,
            busy_poll=busy_poll,
        )
        n = len(specs)
        if n % 2 == 0:
            warnings.warn(
                f"{n} servers tolerate no more failures than {n - 1}: a majority of {n} is "
                f"{quorum(n)}. Use an odd number of independent servers (3 or 5).",
                QuorumLockWarning,
                stacklevel=2,
            )
        self._fanout = SyncFanout(specs, self.config)
        self._random = random.SystemRandom()

    @property
    def servers(self) -> list[str]:
        """The servers, as labels without credentials, in the order given."""
        return self._fanout.labels

    @property
    def quorum(self) -> int:
        """How many servers must agree: ``N // 2 + 1``."""
        return quorum(len(self._fanout.nodes))

    def lock(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
    ) -> Lock:
        """A lock on ``name`` (the key on every server), not acquired yet.

        ``ttl`` (seconds or timedelta) is both the auto-release time and the time the
        holder has to do its work (R4). ``blocking`` and ``timeout`` apply when the lock
        is used as a context manager: wait up to ``timeout`` seconds (None: no limit).
        Raises ``TypeError`` or :class:`ConfigurationError` for bad input.
        """
        return Lock(self, name, ttl=ttl, timeout=timeout, blocking=blocking)

    def close(self) -> None:
        """Close the idle connections. The Redlock reconnects if it is used again."""
        self._fanout.close()

    def __enter__(self) -> Redlock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Redlock({self.servers!r})"

    def _run(self, flow: Flow[T]) -> T:
        """Drive a sans-I/O flow: the whole sync I/O policy is these lines."""
        try:
            step = next(flow)
            while True:
                if isinstance(step, Fanout):
                    round_ = self._fanout.run(step)
                    _log_round(step, round_)
                    step = flow.send(round_)
                else:
                    time.sleep(step.seconds)
                    step = flow.send(time.monotonic())
        except StopIteration as stop:
            result: T = stop.value
            return result


def _log_round(step: Fanout, round_: Round) -> None:
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "%s %r token=%s… in %.2f ms: %s",
            step.op.value,
            step.key,
            step.token[:8],
            (round_.finished - round_.started) * 1000,
            render_outcomes(round_.outcomes),
        )


class Lock:
    """One lock on one name, owned by this object (not by a thread).

    Use it as a context manager, or call :meth:`acquire` and :meth:`release`.
    ``validity``, ``token`` and ``outcomes`` read local state, with no round trip.
    """

    def __init__(
        self,
        redlock: Redlock,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
    ) -> None:
        self._redlock = redlock
        self._state = LockState(
            name=validate_name(name),
            ttl_ms=to_ttl_ms(ttl, redlock.config.clock_drift_factor),
            servers=len(redlock.servers),
            config=redlock.config,
            uniform=redlock._random.random,
        )
        self._timeout = timeout
        self._blocking = blocking
        self._mutex = threading.RLock()

    @property
    def name(self) -> str:
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
    def outcomes(self) -> tuple[NodeOutcome, ...]:
        """What each server answered in the last round (acquire, extend or release)."""
        return self._state.outcomes

    def acquire(self, blocking: bool = True, timeout: Duration | None = None) -> bool:
        """Acquire the lock on a majority of the servers (R6, R8).

        ``blocking=False`` makes one attempt. Otherwise attempts repeat, with a random
        pause, until one succeeds or ``timeout`` seconds passed (None: no limit, or the
        Redlock's ``retry_count``). Returns True when acquired, False when others held
        it. Raises :class:`QuorumUnavailable` when too few servers could be used (see
        there), ``RuntimeError`` if this object already holds the lock, and
        :class:`ConfigurationError` for a timeout with ``blocking=False``.
        """
        with self._mutex:
            return self._acquire(blocking, timeout, raise_on_failure=False)

    def _acquire(self, blocking: bool, timeout: Duration | None, *, raise_on_failure: bool) -> bool:
        flow = self._state.acquire(
            blocking=blocking,
            timeout=timeout,
            now=time.monotonic(),
            raise_on_failure=raise_on_failure,
        )
        try:
            return self._redlock._run(flow)
        except BaseException as exc:
            if not isinstance(exc, Exception):
                # Interrupted mid-acquire (KeyboardInterrupt, SystemExit): some servers
                # may have granted the lock already. Delete our keys before leaving.
                self._cleanup()
            raise

    def extend(self, ttl: Duration | None = None) -> float:
        """Reset the lock's ttl on a majority (R10); returns the new validity in seconds.

        ``ttl`` defaults to the lock's own. Raises :class:`LockLost` when a majority did
        not confirm in time (the lock is then released and no longer held) and
        ``RuntimeError`` if this object does not hold the lock.
        """
        with self._mutex:
            return self._redlock._run(self._state.extend(ttl=ttl, now=time.monotonic()))

    def release(self) -> bool:
        """Release the lock on all servers (R9).

        Returns True if a majority still held our key, False if it had already expired
        there (not an error). Raises ``RuntimeError`` if this object does not hold the
        lock. Never raises for unreachable servers: their keys expire with the ttl.
        """
        with self._mutex:
            released = self._redlock._run(self._state.release())
            if not released:
                logger.warning(
                    "lock %r was no longer held by a majority at release: %s",
                    self.name,
                    render_outcomes(self.outcomes),
                )
            return released

    def _cleanup(self) -> None:
        try:
            self._redlock._run(self._state.abandon())
        except BaseException:  # best effort: the keys expire with the ttl anyway
            logger.warning("could not clean up lock %r after an interruption", self.name)

    def __enter__(self) -> Lock:
        with self._mutex:
            self._acquire(self._blocking, self._timeout, raise_on_failure=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._mutex:
            if self._state.held or self._state.lost:
                self.release()

    def __repr__(self) -> str:
        state = f"held for {self.validity:.3f}s" if self.held else "not held"
        return f"<quorumlock.Lock {self.name!r} ttl={self.ttl:g}s {state}>"
