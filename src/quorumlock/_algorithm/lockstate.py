"""The state of one lock object and the flows that change it, shared by both front ends.

``quorumlock.Lock`` and ``quorumlock.asyncio.Lock`` hold a :class:`LockState` and only
drive its flows, so ownership rules, error messages and the exceptions raised are the
same in both by construction. Pure: times come in as arguments.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import (
    NO_LEASE,
    Duration,
    LeasePolicy,
    RedlockConfig,
    check_wait,
    shown,
)
from quorumlock._algorithm.flows import (
    ExtendResult,
    Flow,
    acquire_flow,
    extend_flow,
    probe_flow,
    release_flow,
)
from quorumlock._algorithm.lease import EARLY, Plan, bound_reached, plan
from quorumlock._algorithm.outcomes import (
    NodeOutcome,
    Reply,
    Verdict,
    quarantine_advice,
    render_outcomes,
)
from quorumlock._algorithm.wire import HOLDER_PREFIX
from quorumlock._exceptions import (
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    QuorumUnavailable,
)

__all__ = ["LockState", "Lost", "Renew", "Renewed", "Wake", "check_wait", "new_token"]

#: R2: 20 bytes from the OS CSPRNG, sent as text (40 hex digits).
TOKEN_BYTES = 20


def new_token() -> str:
    """A token unique across all clients and acquisitions (R2)."""
    return secrets.token_hex(TOKEN_BYTES)


@dataclass(frozen=True, slots=True)
class Renew:
    """A lease step: renew the lock now, to a ttl of ``ttl_ms``."""

    ttl_ms: int


@dataclass(frozen=True, slots=True)
class Wake:
    """A lease step: nothing to do before the monotonic time ``at``; ask again then."""

    at: float


@dataclass(frozen=True, slots=True)
class Lost:
    """A lease step: the lock is lost (``reason`` for the observer); report it and stop."""

    error: LockLost
    reason: str


@dataclass(frozen=True, slots=True)
class Renewed:
    """How a lease keeper reacts to the end of a renewal (:meth:`LockState.renewed`).

    ``extended`` for the observer; ``lost``: report this loss and stop; ``failure``: an
    unexpected exception of the renewal, to be logged (it counts as a failed renewal);
    ``left``: the renewal failed with this much validity left, to be warned of; ``at``:
    when to ask :meth:`LockState.tend` again (None: the lock is no longer held).
    """

    extended: bool
    lost: LockLost | None = None
    failure: Exception | None = None
    left: float | None = None
    at: float | None = None


#: Verdicts that mean the servers, not another client, kept us from the lock.
_UNAVAILABLE = frozenset(
    {Verdict.FATAL, Verdict.UNAVAILABLE, Verdict.QUARANTINED, Verdict.UNFENCED}
)


class LockState:
    """One lock object's view: the token of its acquisition and the deadline it holds to.

    Ownership belongs to this object (not to a thread or task). ``deadline`` is a
    monotonic time; the lock is *held* from a successful acquire until ``release``, a
    failed ``extend``, or a new acquire after the deadline passed.
    """

    #: A blocking acquire stands in the name's queue of waiters (docs/algorithm.md,
    #: "Waiting: woken by the release"): only for a kind of lock whose release wakes
    #: the queue's head (not a multi-resource lock's set, whatever this says).
    queued = True

    #: Undo a failed attempt on every server, also where another holder refused it
    #: (see :func:`~quorumlock._algorithm.flows.undo_targets`).
    undo_everywhere: ClassVar[bool] = False

    def __init__(
        self,
        *,
        name: str,
        ttl_ms: int,
        servers: int,
        config: RedlockConfig,
        lease: LeasePolicy | None = None,
        token_factory: Callable[[], str] = new_token,
        uniform: Callable[[], float],
        keys: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        # A multi-resource lock: its set of keys, sorted; ``name`` is then only shown.
        self.keys = keys
        self._key = keys[0] if keys else name
        self.ttl_ms = ttl_ms
        self.servers = servers
        self.config = config
        self.lease = lease or NO_LEASE
        self.acquired_at = 0.0
        self.extensions = 0
        self.token: str | None = None
        self.fence: int | None = None  # the fencing token of the current acquisition
        self.deadline: float | None = None
        self.outcomes: tuple[NodeOutcome, ...] = ()
        # An extension failed: released everywhere by extend(), kept until the release
        # by a lease renewal that failed before the deadline (docs/algorithm.md, leases).
        self.lost = False
        # How the current acquisition was lost ("could not be extended: ...", "expired:
        # ..."), after the name: check() and the end of a block say it again.
        self.loss = ""
        # The last lease renewal failed but left validity: retry at the retry time,
        # not a third of the ttl later (docs/algorithm.md, leases).
        self.renew_failed = False
        # Why the last failed renewal failed, with its answers: kept for the loss's
        # message when the validity runs out (``reason`` is cleared as the next renewal
        # starts, which may still be in flight then).
        self.renew_failure = ""
        # How the last acquire ended, and why the last extension failed (observers).
        self.verdict = Verdict.CONTENDED
        self.attempts = 0
        self.reason = ""
        self._token_factory = token_factory
        self._uniform = uniform

    @property
    def key(self) -> str:
        """The key this object's acquisition is held on: the name; a multi-resource
        lock's first key; a read-write lock's sorted set; a semaphore's permit: the key
        of its slot."""
        return self._key

    @key.setter
    def key(self, value: str) -> None:
        self._key = value

    @property
    def held(self) -> bool:
        """True from a successful acquire until release or loss (even once expired)."""
        return self.deadline is not None

    def validity(self, now: float) -> float:
        """Seconds the lock still holds at ``now``; 0.0 when not held or expired."""
        if self.deadline is None:
            return 0.0
        return max(0.0, self.deadline - now)

    def acquire(
        self,
        *,
        blocking: bool,
        timeout: Duration | None,
        now: float,
        raise_on_failure: bool = False,
        held_by: Callable[[], str | None] | None = None,
    ) -> Flow[bool]:
        """Acquire with a fresh token. Returns False when others hold the lock.

        Raises :class:`LockNotReentrant` if this object already holds the lock,
        :class:`ConfigurationError` for a timeout with ``blocking=False`` or a negative
        one, :class:`QuorumUnavailable` when too few servers could be used, and
        :class:`LockNotAcquired` instead of returning False if ``raise_on_failure``.
        ``timeout`` None or ``math.inf``: no bound. ``held_by``, asked once the lock was
        found held by others, may say who holds it (the caller itself, through another
        object): the message says that in place of "held by another client".
        """
        if self.deadline is not None and now < self.deadline:
            raise self.not_reentrant()
        wait = check_wait(blocking, timeout)
        self.deadline = None
        self.fence = None
        self.lost = False
        self.loss = ""
        self.token = token = self._token_factory()
        result = yield from acquire_flow(
            key=self.key,
            keys=self.keys,
            token=token,
            ttl_ms=self.ttl_ms,
            config=self.config,
            blocking=blocking,
            timeout=wait,
            now=now,
            uniform=self._uniform,
            queue=self.queued,
            undo_everywhere=self.undo_everywhere,
        )
        self.outcomes = result.outcomes
        self.verdict = result.verdict
        self.attempts = result.attempts
        if result.verdict is Verdict.ACQUIRED:
            self.deadline = result.deadline
            self.fence = result.fence
            self.acquired_at = now
            self.extensions = 0
            self.renew_failed = False
            return True
        if not raise_on_failure and result.verdict not in _UNAVAILABLE:
            return False  # (a refusal's message is built only to be raised)
        tried = f"{result.attempts} attempt" + ("s" if result.attempts > 1 else "")
        why = result.verdict.value
        if result.verdict is Verdict.CONTENDED and held_by is not None:
            why = held_by() or why
        detail = (
            f"could not acquire lock {shown(self.name)} ({tried}): {why}, "
            f"{quorum(self.servers)} of {self.servers} needed. {render_outcomes(self.outcomes)}"
        )
        if advice := quarantine_advice(self.outcomes):
            detail = f"{detail}. {advice}"
        if result.verdict in _UNAVAILABLE:
            raise QuorumUnavailable(detail, name=self.name, outcomes=self.outcomes)
        raise LockNotAcquired(detail, name=self.name, outcomes=self.outcomes)

    def extend(self, *, ttl: Duration | None, now: float) -> Flow[float]:
        """Extend to a new ttl (default: the lock's) on a majority (R10).

        Returns the new validity in seconds. Raises :class:`LockNotHeld` if the lock is not
        held by this object and :class:`LockLost` when the extension failed (the lock is
        then released everywhere and no longer held).
        """
        self.reason = ""
        token, held_until = self._require_held("extend")
        ttl_ms = self.ttl_ms if ttl is None else self.config.ttl_ms(ttl)
        result = yield from extend_flow(
            key=self.key,
            keys=self.keys,
            token=token,
            ttl_ms=ttl_ms,
            config=self.config,
            held_until=held_until,
            now=now,
        )
        return self._extended(result, now)

    def renew(self, *, ttl_ms: int, now: float) -> Flow[bool]:
        """One lease renewal (R10): True if extended, False if it failed but the lock is
        still valid (try again soon). Raises :class:`LockLost` when the lock is lost.
        Raises :class:`LockNotHeld` if the lock is no longer held (released meanwhile).
        """
        self.reason = ""
        token, held_until = self._require_held("renew")
        result = yield from extend_flow(
            key=self.key,
            keys=self.keys,
            token=token,
            ttl_ms=ttl_ms,
            config=self.config,
            held_until=held_until,
            now=now,
            final=False,
        )
        if result.deadline is None and not result.lost:
            self.outcomes = result.outcomes
            self.reason = result.reason
            return False
        self._extended(result, now)
        return True

    def _extended(self, result: ExtendResult, now: float) -> float:
        self.outcomes = result.outcomes
        self.reason = result.reason
        if result.deadline is None:
            self.deadline = None
            self.lost = True
            self.loss = (
                f"could not be extended: {result.reason}. {render_outcomes(result.outcomes)}"
            )
            raise LockLost(
                f"lock {shown(self.name)} {self.loss}", name=self.name, outcomes=result.outcomes
            )
        self.deadline = result.deadline
        self.extensions += 1
        return max(0.0, result.deadline - now)

    def next_step(self, now: float, *, failed: bool = False) -> Plan | None:
        """What the lease keeper should do next; None when the lock is not held."""
        if self.deadline is None:
            return None
        return plan(
            policy=self.lease,
            ttl_ms=self.ttl_ms,
            deadline=self.deadline,
            acquired_at=self.acquired_at,
            extensions=self.extensions,
            now=now,
            clock_drift_factor=self.config.clock_drift_factor,
            failed=failed,
        )

    def tend(self, now: float) -> Renew | Wake | Lost | None:
        """The lease keeper's step at ``now`` (both front ends): renew, wait, or report
        the loss of a lock whose validity ran out; None once the lock is not held."""
        step = self.next_step(now)
        if step is None:
            return None
        if step.extend_ms is None:  # no more extensions: watch the deadline
            error = self.expire(now)
            if error is not None:
                return Lost(error, "validity ran out")
            return Wake(step.at)
        if step.at > now + self.early and not self.renew_failed:
            # Woke early (or a retry is not due yet). A late wake-up is planned again
            # too: an extension sized for an earlier time could outlive max_hold (one
            # run up to ``early`` sooner ends sooner, within it).
            return Wake(step.at)
        return Renew(step.extend_ms)

    @property
    def early(self) -> float:
        """How much sooner than due a renewal may run, in seconds (lease.EARLY)."""
        return self.ttl_ms / 1000 * EARLY

    def renewed(self, result: bool | Exception, now: float) -> Renewed:
        """The reaction to a renewal (:meth:`renew`) that ended at ``now`` with
        ``result``: what it returned, or the exception it raised."""
        if isinstance(result, LockLost):
            return Renewed(extended=False, lost=result)
        failure = None
        if isinstance(result, Exception):  # a bug must not end the lease keeping
            failure, result = result, False
        self.renew_failed = not result
        if not result:
            self.renew_failure = (
                repr(failure)
                if failure is not None
                else f"{self.reason}. {render_outcomes(self.outcomes)}"
            )
        step = self.next_step(now, failed=not result)
        return Renewed(
            extended=result,
            failure=failure,
            left=None if result else self.validity(now),
            at=None if step is None else step.at,
        )

    def forget(self) -> None:
        """Hold nothing any more, without a round (in a forked child: the parent's);
        nor a lost lock to release (its keys are the parent's too)."""
        self.deadline = None
        self.lost = False

    def expire(self, now: float) -> LockLost | None:
        """Called when the deadline may have passed: mark the lock lost and say why.

        Returns None (and changes nothing) while the lock is still valid or not held.
        """
        deadline = self.deadline
        if deadline is None or now < deadline:
            return None
        self.deadline = None
        self.lost = True
        why = ""
        if self.lease.auto_extend:
            reached = bound_reached(
                policy=self.lease,
                ttl_ms=self.ttl_ms,
                deadline=deadline,
                acquired_at=self.acquired_at,
                extensions=self.extensions,
                clock_drift_factor=self.config.clock_drift_factor,
            )
            if reached:
                cause = "the lease bound was reached"
            elif self.renew_failed:  # renewals were made, and failed: say how
                cause = f"the renewals failed: {self.renew_failure}"
            else:
                cause = "no renewal in time: the process was stopped, or too busy to renew"
            why = f" after {self.extensions} extensions ({cause})"
        self.loss = f"expired: its validity ran out{why}"
        return LockLost(
            f"lock {shown(self.name)} {self.loss}", name=self.name, outcomes=self.outcomes
        )

    def lost_error(self) -> LockLost:
        """The loss of the current acquisition, told again: with the failed extension's
        reason and each server's answer."""
        text = f"lock {shown(self.name)} {self.loss or 'was lost'}"
        return LockLost(text, name=self.name, outcomes=self.outcomes)

    def lost_because(self) -> str:
        """How the current acquisition was lost, as a sentence to end a message with
        ("" when that is not known: its validity ran out unseen)."""
        return f" It {self.loss}" if self.loss else ""

    def check_release(self) -> None:
        """Raise what :meth:`release` raises before its round (:class:`LockNotHeld`,
        :class:`LockLost`), changing nothing."""
        if not (self.lost and self.token is not None):
            self._require_held("release")

    def release(self) -> Flow[bool]:
        """Release on all servers (R9). True iff a majority still held our key.

        False means the lock had already expired (or was lost) on a majority; that is
        not an error, and neither is releasing a lock whose extension failed (it was
        released then). Raises :class:`LockNotHeld` if this object never acquired it or
        already released it (a double release).
        """
        if self.lost and self.token is not None:
            # Lost, but R9 all the same: a minority may still hold our key.
            self.lost = False
            yield from release_flow(
                key=self.key,
                keys=self.keys,
                token=self.token,
                ttl_ms=self.ttl_ms,
                config=self.config,
            )
            return False
        token, _ = self._require_held("release")
        self.deadline = None
        round_ = yield from release_flow(
            key=self.key, keys=self.keys, token=token, ttl_ms=self.ttl_ms, config=self.config
        )
        self.outcomes = round_.outcomes
        return round_.count(Reply.DONE) >= quorum(self.servers)

    def export(self, *, now: float, keep: bool) -> tuple[str, float]:
        """The token and the validity left at ``now``, to hand the lock over.

        Unless ``keep``, this object stops holding the lock (without releasing it): it
        will neither extend nor release it. Raises :class:`LockNotHeld` if it does not hold
        the lock and :class:`LockLost` if it was lost or its validity ran out.
        """
        token, deadline = self._require_held("export")
        error = self.expire(now)
        if error is not None:
            raise error
        if not keep:
            self.deadline = None
        return token, deadline - now

    def adopt(self, *, token: str, fence: int | None, validity: float, now: float) -> None:
        """Hold the lock exported with ``token``, for ``validity`` seconds from ``now``."""
        if self.deadline is not None and now < self.deadline:
            raise self.not_reentrant()
        self.token = token
        self.fence = fence
        self.deadline = now + validity
        self.acquired_at = now
        self.extensions = 0
        self.lost = False
        self.loss = ""
        self.renew_failed = False
        self.outcomes = ()

    def abandon(self) -> Flow[None]:
        """Best-effort cleanup after an interrupted acquire: delete our token's keys."""
        self.deadline = None
        if self.token is not None:
            yield from release_flow(
                key=self.key,
                keys=self.keys,
                token=self.token,
                ttl_ms=self.ttl_ms,
                config=self.config,
            )

    def probe(self, *, mine: bool) -> Flow[bool]:
        """Read the key on every server (changes nothing). With ``mine``: whether a
        majority holds this object's token; otherwise whether a majority holds the key at
        all (anyone's token). Raises :class:`QuorumUnavailable` when the servers that did
        not answer could tip the count either way.
        """
        round_ = yield from probe_flow(
            key=self.key,
            keys=self.keys,
            token=self.token or "",
            ttl_ms=self.ttl_ms,
            config=self.config,
        )
        outcomes = round_.outcomes
        if mine:
            # A prefix of 64 random bits: another token with the same prefix is as
            # unlikely as guessing ours (R2).
            ours = (self.token or "")[:HOLDER_PREFIX]
            hits = sum(1 for o in outcomes if o.holder is not None and o.holder == ours)
        else:
            hits = sum(1 for o in outcomes if o.reply is Reply.TAKEN)
        unanswered = sum(1 for o in outcomes if not o.reply.answered)
        needed = quorum(self.servers)
        if hits >= needed:
            return True
        if hits + unanswered < needed:
            return False
        raise QuorumUnavailable(
            f"could not tell whether lock {shown(self.name)} is held: {unanswered} of "
            f"{self.servers} servers did not answer. {render_outcomes(outcomes)}",
            name=self.name,
            outcomes=outcomes,
        )

    def not_reentrant(self) -> LockNotReentrant:
        return LockNotReentrant(
            f"lock {shown(self.name)} is already held by this Lock object: it is not "
            "reentrant (release it first)",
            name=self.name,
        )

    def _require_held(self, action: str) -> tuple[str, float]:
        if self.lost:  # (how: a failed extension or downgrade, a validity that ran out)
            how = f" ({self.loss})" if self.loss else ""
            raise LockLost(
                f"cannot {action} lock {shown(self.name)}: it was lost{how}",
                name=self.name,
                outcomes=self.outcomes,
            )
        if self.deadline is None or self.token is None:
            raise LockNotHeld(
                f"cannot {action} lock {shown(self.name)}: this Lock object does not hold it "
                "(never acquired, released already, or handed over)",
                name=self.name,
            )
        return self.token, self.deadline
