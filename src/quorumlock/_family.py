"""The lock family's front-end logic, shared by the sync and asyncio APIs: the reentrant
lock (``Redlock.rlock``) and the multi-resource lock (``Redlock.lock_many``).

Neither has a protocol of its own to drive:

- a reentrant lock is a lock whose hold count lives on the client, keyed by the owning
  thread (sync) or task (asyncio): a re-entry by the owner makes no round trip and
  keeps the token, the fencing token and the lease of the outermost acquisition; only
  the outermost release goes to the servers (docs/algorithm.md, "Reentrant lock");
- a multi-resource lock is a lock whose :class:`~quorumlock._algorithm.lockstate.LockState`
  carries a set of keys: the flows send the ``*_MANY`` scripts, each server takes every
  key of the set or none (docs/algorithm.md, "Multi-resource lock").

The front ends add only their own locking discipline (a mutex, or none on the event loop)
around :class:`ReentrantMixin`'s bookkeeping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from quorumlock._algorithm.cluster import key_slot
from quorumlock._algorithm.config import (
    Duration,
    LockOptions,
    RedlockConfig,
    shown,
    validate_name,
)
from quorumlock._algorithm.handoff import LockHandle
from quorumlock._exceptions import ConfigurationError, LockNotHeld, LockNotReentrant
from quorumlock._frontend import LockBase, named_as
from quorumlock._io.servers import ServerSpec

__all__ = ["Family", "MultiLockMixin", "ReentrantMixin", "many_options"]

RLockT = TypeVar("RLockT", bound=LockBase)
MultiT = TypeVar("MultiT", bound=LockBase)


@named_as("RLock")
class ReentrantMixin(LockBase):
    """The hold count of a reentrant lock; put in front of the front end's ``Lock``.

    ``_depth`` counts the holds of the owner (``_occupant``: the thread or task that
    acquired the object): 0 when the object is free or being acquired, 1 after the
    outermost acquire, +1 per re-entry. The sync front end calls these with the
    object's mutex held; the asyncio one on the event loop, with no await in between.
    """

    _depth = 0

    def _enter_again(self, owner: object) -> bool:
        """A re-entry by ``owner``, without a round trip: True if it was one (the hold
        count went up), False if ``owner`` must acquire as anyone else does.

        Raises :class:`LockLost` when the outer hold was lost or ran out: an inner block
        must not run without the lock the outer one believes it has.
        """
        if self._depth == 0 or owner is None or self._occupant is not owner:
            return False
        self.check()
        self._depth += 1
        return True

    def _leave_inner(self, owner: object) -> bool:
        """A release by ``owner``: True if it ended an inner hold (no round trip), False
        if it is the outermost one, which releases on the servers. Raises
        :class:`LockNotHeld` for a release by another thread or task than the owner."""
        if self._depth == 0:
            return False  # not held through this object: the release itself says so
        if self._occupant is not owner:
            raise LockNotHeld(
                f"cannot release reentrant lock {shown(self.name)}: it is held by another "
                f"{self._who}; only its owner may release it",
                name=self.name,
            )
        if self._depth == 1:
            return False
        self._depth -= 1
        return True

    def _held_once(self) -> None:
        """The outermost acquire succeeded."""
        self._depth = 1

    def _vacate(self) -> None:
        try:
            super()._vacate()
        finally:  # an interrupt in between must not leave a depth to a freed object
            self._depth = 0

    def _export(self, keep: bool) -> LockHandle:
        if self._depth > 1:
            raise LockNotReentrant(
                f"cannot export reentrant lock {shown(self.name)}: it is re-entered (held "
                f"{self._depth} times by its {self._who}), and a handle hands over the "
                "whole hold while the inner blocks still count on it; export it from the "
                "outermost hold",
                name=self.name,
            )
        return super()._export(keep)

    @property
    def _who(self) -> str:
        return "task" if self._redlock._flavour == "async" else "thread"

    @property
    def depth(self) -> int:
        """How many times the owner holds the lock now: 0 when the object is free, 1 after
        the outermost acquire, one more per re-entry. A hold lost or run out keeps its
        depth until it is released."""
        return self._depth


@named_as("MultiLock")
class MultiLockMixin(LockBase):
    """A lock on a set of names; put in front of the front end's ``Lock``."""

    _exportable = False

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the set, sorted (the order the servers take them in)."""
        return self._state.keys

    @property
    def _occupancy_keys(self) -> tuple[str, ...]:
        # Each name of the set: a plain lock of one of them, or another set sharing
        # one, held by the same thread or task, is the same lock to the nesting check.
        return self._state.keys

    def _export(self, keep: bool) -> LockHandle:
        raise TypeError(
            f"a multi-resource lock ({shown(self.name)}) cannot be exported: a handle "
            "carries one name; hold the set in the process that acquired it"
        )


#: The most names one set may have. Each round runs one script over the whole set on
#: every server: at N = 5 on a 2-core host a round of 1,000 names took 40-100 ms, one of
#: 10,000 longer than the 250 ms a server's reply is waited for by default (its release
#: then goes unconfirmed, and a larger set is never acquired at all).
MAX_NAMES = 1000


def _name_list(names: object) -> tuple[str, ...]:
    """The names of a set, checked (``TypeError`` or :class:`ConfigurationError`)."""
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise TypeError(
            f"lock_many takes a list of names (str), not {type(names).__name__}"
            + (": wrap a single name in a list" if isinstance(names, str) else "")
        )
    checked = tuple(validate_name(name) for name in names)
    if not checked:
        raise ConfigurationError("lock_many needs at least one name: the list is empty")
    if len(checked) > MAX_NAMES:
        raise ConfigurationError(
            f"lock_many takes at most {MAX_NAMES:,} names, not {len(checked):,}: each "
            "server takes the whole set in one step, and one that large does not answer "
            "in time; lock a name that stands for the whole group instead"
        )
    seen: set[str] = set()
    for name in checked:
        if name in seen:
            raise ConfigurationError(f"lock_many was given the name {shown(name)} twice")
        seen.add(name)
    return tuple(sorted(checked))


def many_options(
    config: RedlockConfig,
    specs: list[ServerSpec],
    names: object,
    *,
    ttl: Duration,
    timeout: Duration | None,
    blocking: bool,
    auto_extend: bool,
    max_extensions: int | None,
    max_hold: Duration | None,
    on_lost: Callable[[Any], object] | None,
) -> LockOptions:
    """The options of a multi-resource lock, every check made before any network call."""
    keys = _name_list(names)
    options = LockOptions.build(
        config,
        keys[0],
        ttl=ttl,
        timeout=timeout,
        blocking=blocking,
        auto_extend=auto_extend,
        max_extensions=max_extensions,
        max_hold=max_hold,
        on_lost=on_lost,
    )
    if any(spec.cluster is not None for spec in specs):
        slots = {key_slot(key) for key in keys}
        if len(slots) > 1:
            # One script touches one slot: a set across slots cannot be taken atomically
            # on a cluster node (docs/cluster.md).
            raise ConfigurationError(
                f"lock_many over a cluster needs names in one hash slot, and these are in "
                f"{len(slots)} slots: {', '.join(shown(k) for k in keys)}; give them a common "
                "hash tag, such as '{acct}:1' and '{acct}:2'"
            )
    return dataclasses.replace(options, name=", ".join(keys), keys=keys)


@named_as("Redlock")
class Family(Generic[RLockT, MultiT]):
    """``rlock()`` and ``lock_many()`` of a ``Redlock`` (both front ends)."""

    config: RedlockConfig
    _specs: list[ServerSpec]
    # The front end's classes, called with (the Redlock, the options).
    _rlock_class: Callable[[Any, LockOptions], RLockT]
    _multi_class: Callable[[Any, LockOptions], MultiT]

    def rlock(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[RLockT], object] | None = None,
    ) -> RLockT:
        """A reentrant lock on ``name``, not acquired yet; options as for :meth:`lock`.

        The thread (sync) or task (asyncio) that holds it may acquire it again, or enter
        its ``with`` block again, without a round trip: the token, the fencing token
        and the lease stay those of the outermost acquisition, and only the outermost
        release (the end of the outermost block) releases it on the servers. Another
        thread or task that acquires the same object waits for that release, as any
        other client does. Only the owner may release it (:class:`LockNotHeld`
        otherwise); ``export()`` of a re-entered lock raises :class:`LockNotReentrant`.
        A re-entry raises :class:`LockLost` if the outer hold was lost.
        See docs/algorithm.md, "Reentrant lock".
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
        return self._rlock_class(self, options)

    def lock_many(
        self,
        names: Iterable[str],
        *,
        ttl: Duration,
        timeout: Duration | None = None,
        blocking: bool = True,
        auto_extend: bool = False,
        max_extensions: int | None = None,
        max_hold: Duration | None = None,
        on_lost: Callable[[MultiT], object] | None = None,
    ) -> MultiT:
        """One lock on every name of ``names`` at once: all of them or none.

        Each server takes the whole set or nothing in one atomic script, the names in
        sorted order; the lock is acquired when a majority granted the whole set, and
        ``extend()``, ``release()`` and the lease cover the whole set. Two sets that
        overlap exclude each other, and cannot deadlock. Options as for :meth:`lock`;
        ``lock.names`` is the sorted set, ``lock.name`` the names joined for messages.

        Raises ``TypeError`` for a names argument that is not an iterable of ``str`` (a
        list, a tuple, a set; a single ``str`` is refused), and
        :class:`ConfigurationError` for no name, more than 1,000 names, a name given
        twice, a bad name, a bad option, or, on a cluster instance, names in more than
        one hash slot; all before any network call. A multi-resource lock cannot be exported. See
        docs/algorithm.md, "Multi-resource lock".
        """
        options = many_options(
            self.config,
            self._specs,
            names,
            ttl=ttl,
            timeout=timeout,
            blocking=blocking,
            auto_extend=auto_extend,
            max_extensions=max_extensions,
            max_hold=max_hold,
            on_lost=on_lost,
        )
        return self._multi_class(self, options)
