"""What the sync and asyncio read-write locks share: the lock object ``rl.rwlock()``
returns, and everything a hold (a reader or the writer) adds to a plain lock object.

A hold is a lock object of the front end (``quorumlock.Lock``, ``quorumlock.asyncio.Lock``)
driving a :class:`~quorumlock._algorithm.rwlock.RWState` instead of the mutex's state:
acquire, release, extend, leases, ``check()``, the observer and the ``with`` blocks are
the plain lock's, unchanged. The front ends only add the blocking or awaiting form of
``downgrade()`` (see ``ReadWriteHold`` in ``quorumlock._sync`` and ``quorumlock.asyncio``).
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, NoReturn, TypeVar

from quorumlock._algorithm.config import Duration, LockOptions, check_wait, shown
from quorumlock._algorithm.flows import Flow
from quorumlock._algorithm.lockstate import LockState
from quorumlock._algorithm.rwlock import Mode, RWState
from quorumlock._exceptions import LockLost, LockUpgradeRefused
from quorumlock._frontend import LockBase, RedlockBase, named_as

__all__ = ["UNSET", "RWHoldBase", "ReadWriteLockBase"]


class _Unset(enum.Enum):
    UNSET = "unset"


#: ``read()`` and ``write()`` without a ``timeout`` or ``blocking``: the rwlock's own.
UNSET = _Unset.UNSET


@named_as("ReadWriteHold")
class RWHoldBase(LockBase):
    """One hold of a read-write lock: what it adds to the front end's lock object."""

    _exportable = False
    _state: RWState

    def __init__(
        self, redlock: RedlockBase[Any, Any, Any, Any, Any], options: LockOptions, mode: Mode
    ):
        self._rw_mode = mode
        super().__init__(redlock, options)

    def _make_state(self, **state: Any) -> LockState:
        return RWState(mode=self._rw_mode, **state)

    @property
    def _occupancy_keys(self) -> tuple[str, ...]:
        return (self._state.key,)

    def _refuse_nesting(self, mine: Sequence[LockBase]) -> None:
        if self._rw_mode is Mode.WRITE and any(
            isinstance(other, RWHoldBase) and other._state.mode is Mode.READ for other in mine
        ):
            who = "task" if self._redlock._flavour == "async" else "thread"
            raise self._upgrade_refused(f"this {who} holds it for reading")

    @property
    def mode(self) -> str:
        """``"read"`` or ``"write"``: how this hold holds (or will hold) the lock; a
        downgraded writer reads until it is released, and writes again if acquired
        again."""
        state = self._state
        return (state.mode if state.deadline is not None else state.initial_mode).value

    def upgrade(self) -> NoReturn:
        """Always raises :class:`LockUpgradeRefused`: a reader never becomes the writer
        in place (two readers upgrading at once would wait for each other forever).
        Release the read hold and acquire ``write()``, or write first and
        ``downgrade()``."""
        state = self._state
        if state.deadline is None:
            why = f"this {self.mode} hold holds nothing"
        elif state.mode is Mode.WRITE:
            why = "this hold is the writer already"
        else:
            why = "this hold is a read hold"
        raise self._upgrade_refused(why)

    def _upgrade_refused(self, why: str) -> LockUpgradeRefused:
        return LockUpgradeRefused(
            f"cannot write read-write lock {shown(self.name)}: {why}, and a reader is never "
            "upgraded (two upgrading readers would wait for each other forever). Release "
            "the read hold first, or take the write lock and downgrade() it",
            name=self.name,
        )

    def _downgrading(self) -> Flow[None]:
        """``downgrade()``: write to read, atomically; a failure loses the lock and is
        reported as any loss is."""
        try:
            yield from self._state.downgrade(now=time.monotonic())
        except LockLost as exc:
            self._report_lost(exc, "downgrade failed")
            raise

    def __repr__(self) -> str:
        state = f"held for {self.validity:.3f}s" if self.held else "not held"
        flavour = type(self).__module__.split("._")[0]
        return f"<{flavour}.ReadWriteHold {self.mode} {shown(self.name)} ttl={self.ttl:g}s {state}>"


HoldT = TypeVar("HoldT", bound=RWHoldBase)


@named_as("ReadWriteLock")
class ReadWriteLockBase(Generic[HoldT]):
    """A read-write lock on one name: it makes holds, and holds nothing itself.

    ``read()`` and ``write()`` return a new hold each time, with the options given to
    ``Redlock.rwlock()``; ``timeout`` and ``blocking`` may be given again for that hold.
    """

    _hold_class: Callable[[Any, LockOptions, Mode], HoldT]

    def __init__(self, redlock: RedlockBase[Any, Any, Any, Any, Any], options: LockOptions) -> None:
        self._redlock = redlock
        self._options = options

    @property
    def name(self) -> str:
        """The read-write lock's name (its key on the servers is ``quorumlock:rw:{<name>}``)."""
        return self._options.name

    @property
    def ttl(self) -> float:
        """The ttl of every hold, in seconds (whole milliseconds)."""
        return self._options.ttl_ms / 1000

    def read(
        self,
        *,
        timeout: Duration | _Unset | None = UNSET,
        blocking: bool | _Unset = UNSET,
    ) -> HoldT:
        """A read hold, shared with other readers, not acquired yet (enter it with
        ``with``, or call ``acquire()``). ``timeout`` and ``blocking`` (default: the
        rwlock's) apply to ``with``, as for ``Redlock.lock()``: ``acquire()`` takes its own.
        Raises ``TypeError`` or :class:`ConfigurationError` for bad options, before any
        network call."""
        return self._hold(Mode.READ, timeout, blocking)

    def write(
        self,
        *,
        timeout: Duration | _Unset | None = UNSET,
        blocking: bool | _Unset = UNSET,
    ) -> HoldT:
        """A write hold, exclusive of readers and of other writers, not acquired yet.
        Its ``fencing_token`` is set once held when the Redlock has ``fencing=True``.
        While it waits, no new reader gets in. ``timeout`` and ``blocking`` apply to
        ``with``, as for :meth:`read`. Raises ``TypeError`` or
        :class:`ConfigurationError` for bad options, before any network call."""
        return self._hold(Mode.WRITE, timeout, blocking)

    def _hold(
        self, mode: Mode, timeout: Duration | _Unset | None, blocking: bool | _Unset
    ) -> HoldT:
        options = self._options
        if not isinstance(timeout, _Unset) or not isinstance(blocking, _Unset):
            wait = options.timeout if isinstance(timeout, _Unset) else timeout
            block = options.blocking if isinstance(blocking, _Unset) else blocking
            check_wait(block, wait)
            options = dataclasses.replace(options, timeout=wait, blocking=block)
        return self._hold_class(self._redlock, options, mode)

    def __repr__(self) -> str:
        flavour = type(self).__module__.split("._")[0]
        return f"<{flavour}.ReadWriteLock {shown(self.name)} ttl={self.ttl:g}s>"
