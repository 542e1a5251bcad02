"""Leader election, shared by both front ends: ``Redlock.election(name, ...)``.

A campaign is a blocking acquire of the lock ``name`` with fencing and leases on; the
front ends' ``Campaign`` only enter and leave that lock (``with`` or ``async with``) and
drive the two flows of ``quorumlock._algorithm.election``: the term record written
once the lock is held, and ``leader()``. Everything else (renewal, loss, resign) is the
lock's own machinery. Semantics and the safety argument: docs/election.md.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import socket
import weakref
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import Duration, LockOptions, check_callback, shown
from quorumlock._algorithm.election import (
    Leader,
    check_election_name,
    check_identity,
    claim_flow,
    election_token,
    identity_of,
    leader_flow,
)
from quorumlock._algorithm.flows import Flow
from quorumlock._algorithm.lockstate import new_token
from quorumlock._algorithm.outcomes import Reply, render_outcomes
from quorumlock._frontend import LockBase, RedlockBase, _Flag, named_as

__all__ = ["CampaignBase", "ElectionBase", "Leader", "Term", "default_identity"]

logger = logging.getLogger("quorumlock")

LockT = TypeVar("LockT", bound=LockBase)
EventT = TypeVar("EventT", bound=_Flag)
EventT_co = TypeVar("EventT_co", covariant=True)


class _TermLock(Protocol[EventT_co]):
    """What a term reads of its lock; ``lost`` is the front end's event."""

    @property
    def name(self) -> str: ...
    @property
    def lost(self) -> EventT_co: ...
    @property
    def validity(self) -> float: ...
    @property
    def held(self) -> bool: ...
    def check(self) -> float: ...


#: A term's lock. Covariant: a term is read, never given another lock, so a
#: ``Term[RLock]`` is a ``Term[Lock]``, and ``Term.lost`` is typed from it.
TermLockT_co = TypeVar("TermLockT_co", bound=_TermLock[_Flag], covariant=True)


def default_identity() -> str:
    """``<host name>:<process id>``: who this process is, when no identity is given."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Term(Generic[TermLockT_co]):
    """One term of leadership: what ``with election.campaign() as term`` gives.

    ``number`` is the term number, the fencing token of the leader's acquisition: it
    strictly increases across the leaders of one election, so pass it to
    :class:`quorumlock.RedisFence` (``fence.execute(term.number, "SET", key, value)``) and a deposed
    leader's late writes are refused. ``lost`` is set when leadership is lost while the
    block runs (a ``threading.Event``, or an ``asyncio.Event`` in the asyncio API, where
    the block is also cancelled). ``lock`` is the lock that the leadership is.
    """

    def __init__(self, lock: TermLockT_co, number: int, identity: str) -> None:
        self.lock = lock
        self.number = number
        self.identity = identity

    @property
    def name(self) -> str:
        """The election's name."""
        return self.lock.name

    @property
    def lost(self: Term[_TermLock[EventT]]) -> EventT:
        """The lock's ``lost``: a ``threading.Event``, or an ``asyncio.Event`` in the
        asyncio API."""
        return self.lock.lost

    @property
    def fencing_token(self) -> int:
        """The same as ``number``."""
        return self.number

    @property
    def validity(self) -> float:
        """Seconds this process still leads, from the local clock (0.0 once lost)."""
        return self.lock.validity

    @property
    def leading(self) -> bool:
        """True while this term's leadership holds (validity left, not lost)."""
        return self.lock.held and not self.lost.is_set()

    def check(self) -> float:
        """Raise :class:`LockLost` unless this process still leads; the validity left.
        Call it before an action only the leader may take. Once the term has ended (its
        block left, leadership resigned) it raises :class:`LockNotHeld`."""
        return self.lock.check()

    def __repr__(self) -> str:
        state = f"leading for {self.validity:.3f}s" if self.leading else "over"
        return f"<quorumlock.Term {shown(self.name)} #{self.number} {self.identity!r} {state}>"


@named_as("Election")
class ElectionBase(Generic[LockT]):
    """An election on ``name``: see ``Redlock.election``. Holds no state on the servers
    until a campaign; any number of campaigns (one at a time per object is usual)."""

    def __init__(
        self,
        redlock: RedlockBase[LockT, Any, Any, Any, Any],
        name: str,
        *,
        ttl: Duration,
        identity: str | None,
        on_lost: Callable[[Term[LockT]], object] | None,
    ) -> None:
        check_callback(on_lost, "on_lost")
        self._redlock = redlock
        self.identity = check_identity(default_identity() if identity is None else identity)
        # Checked as a lock's options are (name, ttl against max_ttl), before any round.
        options = LockOptions.build(
            redlock.config,
            name,
            ttl=ttl,
            timeout=None,
            blocking=True,
            auto_extend=True,
            max_extensions=None,
            max_hold=math.inf,
            on_lost=None,
        )
        self._options = options
        self.name = check_election_name(options.name)
        self._on_lost = on_lost
        # The term is the fencing token: drawn whatever the Redlock's own ``fencing``.
        self._config = dataclasses.replace(redlock.config, fencing=True)

    @property
    def ttl(self) -> float:
        """The ttl of the leadership lock, in seconds; it is renewed while a term runs."""
        return self._options.ttl_ms / 1000

    def _new_lock(self, timeout: Duration | None, on_lost: Callable[[Any], object]) -> LockT:
        """The lock a campaign acquires: this election's name and ttl, fencing on, renewed
        without end while held, its token naming this candidate."""
        options = LockOptions.build(
            self._redlock.config,
            self.name,
            ttl=self.ttl,
            timeout=timeout,
            blocking=True,
            auto_extend=True,
            max_extensions=None,
            max_hold=math.inf,
            on_lost=on_lost,
        )
        lock: LockT = self._redlock._lock_class(self._redlock, options)
        state = lock._state
        state.config = self._config
        identity = self.identity
        state._token_factory = lambda: election_token(new_token(), identity)
        return lock

    def _leader(self) -> Flow[Leader | None]:
        return leader_flow(key=self.name, ttl_ms=self._options.ttl_ms, config=self._config)

    def __repr__(self) -> str:
        flavour = type(self).__module__.split("._")[0]
        return f"<{flavour}.Election {shown(self.name)} identity={self.identity!r}>"


@named_as("Campaign")
class CampaignBase(Generic[LockT]):
    """One campaign: enter it to lead (blocks until this process leads or the timeout),
    leave it to resign. The front ends add ``with`` or ``async with``."""

    def __init__(self, election: ElectionBase[LockT], timeout: Duration | None) -> None:
        self._election = election
        self.term: Term[LockT] | None = None
        # each lock's term: a loss is told to ``on_lost`` with the term of the lock lost
        # (its callback may run after the campaign was entered again, on a new lock)
        self._terms: weakref.WeakKeyDictionary[LockT, Term[LockT]] = weakref.WeakKeyDictionary()
        self._timeout = timeout
        self._lock: LockT = election._new_lock(timeout, self._report_lost)

    def _entering(self) -> LockT:
        """The lock an entry takes: a new one once a term of this campaign has ended, so
        that the ended term keeps its own (``lost`` set, ``check()`` raising) instead of
        reading the next term's."""
        lock = self._lock
        if self.term is not None and self.term.lock is lock and not lock._occupied:
            self._lock = lock = self._election._new_lock(self._timeout, self._report_lost)
        return lock

    def _report_lost(self, lock: LockT) -> None:
        """The lock's ``on_lost``: the election's ``on_lost`` gets the term."""
        on_lost = self._election._on_lost
        term = self._terms.get(lock)
        if on_lost is not None and term is not None:
            on_lost(term)

    def _claiming(self) -> Flow[Term[LockT]]:
        """Once the lock is held: write the term record; the term."""
        lock = self._lock
        state = lock._state
        token, number = state.token, state.fence
        if token is None or number is None:  # an acquire with fencing on draws one
            raise RuntimeError("a campaign's lock was acquired without a fencing token")
        config = self._election._config
        claimed = yield from claim_flow(
            key=lock.name, token=token, term=number, ttl_ms=state.ttl_ms, config=config
        )
        confirmed = claimed.count(Reply.DONE)
        if confirmed < quorum(state.servers):
            logger.warning(
                "election %s: term %d was recorded on %d servers only; leader() may not "
                "name this leader: %s",
                shown(lock.name),
                number,
                confirmed,
                render_outcomes(claimed.outcomes),
            )
        self.term = self._terms[lock] = Term(lock, number, identity_of(token))
        return self.term

    def __repr__(self) -> str:
        flavour = type(self).__module__.split("._")[0]
        election = self._election
        if self.term is not None:
            state = f"term {self.term.number} {'leading' if self.term.leading else 'over'}"
        else:
            state = "not leading"
        return (
            f"<{flavour}.Campaign of election {shown(election.name)} "
            f"identity={election.identity!r} {state}>"
        )
