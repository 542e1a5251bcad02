"""What a semaphore's permit adds to a lock object, for both front ends.

``quorumlock.Permit`` and ``quorumlock.asyncio.Permit`` are their front end's ``Lock``
with this mixed in: the state is a :class:`SemaphoreState` (the permit is a lock on one
of the semaphore's slots, chosen by the acquire), so acquire, extend, release, leases,
``lost``, ``on_lost``, ``with``/``async with`` are the lock's own, driven the same way.
"""

from __future__ import annotations

from typing import Any, NoReturn

from quorumlock._algorithm.config import LockOptions, shown
from quorumlock._algorithm.semaphore import SemaphoreState
from quorumlock._frontend import LockBase, RedlockBase, named_as

__all__ = ["PermitMixin"]


@named_as("Permit")
class PermitMixin(LockBase):
    """One permit of a counting semaphore (``Redlock.semaphore()``), not acquired yet."""

    _nests = False  # a thread or task may hold several permits of one semaphore
    _exportable = False
    _state: SemaphoreState

    def __init__(
        self, redlock: RedlockBase[Any, Any, Any, Any, Any], options: LockOptions, permits: int
    ) -> None:
        super().__init__(redlock, options)
        self._state = SemaphoreState(
            permits=permits,
            name=options.name,
            ttl_ms=options.ttl_ms,
            servers=len(redlock._labels),
            config=redlock.config,
            lease=options.lease,
            uniform=redlock._random.random,
        )

    @property
    def permits(self) -> int:
        """How many permits the semaphore has (as this object was made with)."""
        return self._state.permits

    @property
    def slot(self) -> int | None:
        """Which permit this object holds, from 0 to ``permits - 1``; None when it holds
        none. Two holders at the same moment never have the same slot."""
        return self._state.slot if self._state.held else None

    def _export(self, keep: bool) -> NoReturn:
        # A handle names a lock's key; a permit's key is its slot's, which adopt() would
        # not find: refused rather than handing over a lock that would be lost at once.
        raise TypeError(
            f"a permit of semaphore {shown(self.name)} cannot be exported (yet): hold it "
            "in the process that acquired it"
        )

    def __repr__(self) -> str:
        state = f"slot {self.slot} held for {self.validity:.3f}s" if self.held else "not held"
        return (
            f"<{type(self).__module__.split('._')[0]}.Permit of {shown(self.name)} "
            f"permits={self.permits} ttl={self.ttl:g}s {state}>"
        )
