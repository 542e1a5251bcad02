"""Observability: the observer protocol, its events, and clock-anomaly checks.

A :class:`LockObserver` given to ``Redlock(..., observer=...)`` is called synchronously
after each operation: on the calling thread, on the lease thread (sync renewals), or on
the event loop (asyncio). With no observer, nothing here runs and no event is built.
An exception raised by an observer is logged and never reaches the locking code.

Events never carry a lock's token.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import check_callback, shown
from quorumlock._algorithm.flows import Fanout, Round
from quorumlock._algorithm.handoff import TOKEN_PREFIX
from quorumlock._algorithm.outcomes import (
    WRONG_TYPE,
    NodeOutcome,
    Reply,
    quarantine_advice,
    render_outcomes,
)

__all__ = [
    "AcquireEvent",
    "ExtendEvent",
    "LockObserver",
    "LostEvent",
    "ReleaseEvent",
    "RoundEvent",
    "check_observer",
    "clock_anomaly",
    "log_round",
    "notify",
    "round_hook",
    "warn_due",
    "warn_unusable",
]

logger = logging.getLogger("quorumlock")


@dataclass(frozen=True, slots=True)
class AcquireEvent:
    """An acquire call ended (``acquire()``, entering ``with``, a ``synchronized`` call);
    not one refused before any round (the object busy in another thread or task, a
    ``LockNotReentrant``).

    ``result`` is ``"acquired"`` or why not: ``"contended"`` (held by another client),
    ``"expired"`` (a majority granted it, too late), ``"unavailable"`` (too few servers
    answered), ``"quarantined"`` (too few out of restart quarantine), ``"unfenced"`` (the
    fencing token did not stick) or ``"fatal"`` (errors no retry can fix). ``seconds``
    covers every attempt and pause; ``outcomes`` are the last attempt's.
    """

    name: str
    acquired: bool
    result: str
    attempts: int
    seconds: float
    fencing_token: int | None
    outcomes: tuple[NodeOutcome, ...]


@dataclass(frozen=True, slots=True)
class ExtendEvent:
    """An extension ended: ``extend()``, or a lease renewal (``renewal=True``).

    ``validity`` is the new validity in seconds (0.0 when not extended); ``reason`` says
    why it failed ("" on success). A failed renewal that left the lock valid is retried.
    """

    name: str
    extended: bool
    renewal: bool
    seconds: float
    validity: float
    reason: str
    outcomes: tuple[NodeOutcome, ...]


@dataclass(frozen=True, slots=True)
class ReleaseEvent:
    """A release ended. ``released``: a majority still held our key (see ``release()``)."""

    name: str
    released: bool
    seconds: float
    outcomes: tuple[NodeOutcome, ...]


@dataclass(frozen=True, slots=True)
class LostEvent:
    """A held lock was lost; reported once per acquisition.

    ``reason`` is one of ``"extension failed"`` (a majority did not confirm an extension
    in time), ``"validity ran out"`` (no renewal, or the lease bound was reached, and the
    holder noticed: lease thread, ``check()``, end of ``with``), ``"not held at
    release"`` (a majority no longer had our key when the holder released it) and
    ``"downgrade failed"`` (a read-write lock's downgrade was not confirmed).
    """

    name: str
    reason: str
    outcomes: tuple[NodeOutcome, ...]


@dataclass(frozen=True, slots=True)
class RoundEvent:
    """One command sent to every server at once (a round), and each server's answer.

    ``op`` is the round's command: ``"acquire"``, ``"extend"``, ``"release"`` (a release
    round also cleans up after every failed acquire attempt), ``"commit fence"``,
    ``"probe"`` (``locked()``, ``owned()``) or ``"queue"`` (a blocking lock's join of
    the name's queue of waiters between attempts, its outcomes' ``place`` the place in
    line; or a waiter's leave, or a turn passed on); for a read-write lock's hold
    ``"acquire read"``, ``"acquire write"``, ``"extend read-write"``, ``"release
    read-write"``, ``"commit fence read-write"``, ``"probe read-write"`` or
    ``"downgrade"``; for an election ``"claim term"`` and ``"read leader"``; for a
    semaphore's permit also ``"semaphore acquire"`` and ``"semaphore release"``, whose
    ``name`` is the semaphore's base key ``quorumlock:semaphore:<name>`` (its extend and
    commit fence rounds name the slot's key, ``<base>:<slot>``). ``seconds`` is the
    round's duration; each outcome has the server label, its reply and its latency (None
    without a reply).
    """

    name: str
    op: str
    seconds: float
    outcomes: tuple[NodeOutcome, ...]


@runtime_checkable
class LockObserver(Protocol):
    """What ``Redlock(..., observer=...)`` calls. Subclass it to get no-op defaults.

    Each method receives one event and returns nothing; it runs synchronously, so it
    should be quick (hand the event to a queue for anything slow). An exception raised
    here is logged on the ``quorumlock`` logger and otherwise ignored.
    """

    def on_acquire(self, event: AcquireEvent) -> None:
        """An acquire call ended, acquired or not."""
        return

    def on_extend(self, event: ExtendEvent) -> None:
        """An extension (explicit or lease renewal) ended."""
        return

    def on_release(self, event: ReleaseEvent) -> None:
        """A release ended."""
        return

    def on_lost(self, event: LostEvent) -> None:
        """A held lock was lost."""
        return

    def on_round(self, event: RoundEvent) -> None:
        """A round of one command to every server ended (several per operation)."""
        return


_METHODS = ("on_acquire", "on_extend", "on_release", "on_lost", "on_round")


def check_observer(observer: object) -> LockObserver | None:
    """``observer`` if it implements :class:`LockObserver` (or None); else ``TypeError``."""
    if observer is None:
        return None
    if isinstance(observer, type):
        # Its methods would be called unbound, each event an error logged and ignored.
        raise TypeError(
            f"observer must be an instance, not the class {observer.__name__}: give "
            f"{observer.__name__}()"
        )
    missing = [m for m in _METHODS if not callable(getattr(observer, m, None))]
    if missing or not isinstance(observer, LockObserver):
        raise TypeError(
            f"observer must implement quorumlock.LockObserver; {observer!r} lacks "
            f"{', '.join(missing)}"
        )
    for method in _METHODS:
        check_callback(getattr(observer, method), f"the observer's {method}")
    return observer


def notify(
    observer: LockObserver,
    event: AcquireEvent | ExtendEvent | ReleaseEvent | LostEvent | RoundEvent,
) -> None:
    """Hand ``event`` to the observer method for its type; log what it raises."""
    method = _METHOD_OF[type(event)]
    try:
        getattr(observer, method)(event)
    except Exception:
        logger.exception("observer %r raised in %s; ignored", observer, method)


_METHOD_OF: dict[type, str] = {
    AcquireEvent: "on_acquire",
    ExtendEvent: "on_extend",
    ReleaseEvent: "on_release",
    LostEvent: "on_lost",
    RoundEvent: "on_round",
}


def round_hook(
    log_round: Callable[[Fanout, Round], None], observer: LockObserver | None
) -> Callable[[Fanout, Round], None]:
    """What a front end's driver calls after each round: ``log_round`` alone when there
    is no observer (not even a wrapper), else ``log_round`` and then the observer."""
    if observer is None:
        return log_round

    def after_round(step: Fanout, round_: Round) -> None:
        log_round(step, round_)
        seconds = round_.finished - round_.started
        notify(observer, RoundEvent(step.key, step.op.value, seconds, round_.outcomes))

    return after_round


#: A round that outlasts its own timeout by more than this was not slowed by the
#: servers (the fan-out stops waiting at the timeout): the client process or its
#: machine stalled (GC, swap, SIGSTOP, a suspended VM), or its clock jumped.
STALL = 1.0


def clock_anomaly(step: Fanout, round_: Round) -> str | None:
    """Why ``round_``'s timing cannot be right, or None.

    A round that ended before it started means the monotonic clock went backwards; one
    that outlasted its timeout (or the first-contact grace it was given, which may last
    the connect timeout: ``Round.allowed``) by more than :data:`STALL` seconds means the
    client was stalled. Either way, time measured across it is not to be trusted: a lock
    held by this process may have expired without its holder noticing in time.
    """
    elapsed = round_.finished - round_.started
    if elapsed < 0:
        return f"the monotonic clock went backwards by {-elapsed:.3f} s during a round"
    grace = round_.allowed > step.timeout + 0.001  # (not a float's rounding)
    allowed = round_.allowed if grace else step.timeout
    if elapsed > allowed + STALL:
        what = "wait for first contact" if grace else "timeout"
        return (
            f"a round took {elapsed:.3f} s, {elapsed - allowed:.3f} s past its "
            f"{allowed * 1000:.0f} ms {what}: this process or its machine stalled "
            "(GC, swap, SIGSTOP, a suspended VM) or the clock jumped"
        )
    return None


#: When each warning about a server was last given (monotonic), per (what, server).
_WARNED: dict[tuple[str, str], float] = {}
#: A warning about one server is repeated at most this often while the cause lasts.
WARN_EVERY = 10.0


def warn_due(what: str, server: str, now: float) -> bool:
    """Whether the warning ``what`` about ``server`` should be given at ``now`` (monotonic):
    at most every :data:`WARN_EVERY` seconds per server, so a server that stays broken
    keeps being reported without flooding the log."""
    last = _WARNED.get((what, server), -math.inf)
    if now - last < WARN_EVERY:
        return False
    _WARNED[(what, server)] = now
    return True


def warn_unusable(step: Fanout, round_: Round) -> None:
    """Warn (rate-limited by :func:`warn_due`) of servers that will not answer right.

    A server with an error no retry can fix (wrong password, a replica, an ACL denial, a
    missing command) counts toward no quorum however often the locks succeed on the
    others: the Redlock then tolerates fewer failures than its size promises. And an
    acquire round that too few servers answered for a majority (refused connections,
    unknown hosts, timeouts), however many answered, means a blocking acquire keeps
    trying, without end when it has no timeout.

    Neither is warned of where the caller is told anyway: fatal errors that leave no
    majority make the call itself fail with them, and acquires that too few servers
    answered are warned of only once that has lasted :data:`UNREACHABLE_AFTER` seconds (a
    single attempt, or a short timeout, ends in an exception that names every server
    first).
    """
    outcomes = round_.outcomes
    n = len(outcomes)
    fatal = [o for o in outcomes if o.reply is Reply.FATAL]
    left = n - len(fatal) - quorum(n)
    for outcome in fatal if left >= 0 else ():
        if outcome.detail == WRONG_TYPE:
            # The name is at fault, not the server: every other name still locks there.
            if warn_due("wrong type", f"{outcome.server} {step.key}", round_.finished):
                logger.warning(
                    "%s: the key of lock %s holds another kind of value there (WRONGTYPE: "
                    "an application's key of the same name?): no lock of that name can be "
                    "taken on that server; choose another name",
                    outcome.server,
                    shown(step.key),
                )
            continue
        if warn_due("fatal", outcome.server, round_.finished):
            logger.warning(
                "%s fails with an error no retry can fix (%s): it counts toward no quorum "
                "until that is fixed; %d servers now tolerate %d failure%s, not %d",
                outcome.server,
                outcome.detail,
                n,
                left,
                "" if left == 1 else "s",
                n - quorum(n),
            )
    if not step.acquires:
        return
    # A majority that does not answer keeps every acquire away, whether or not a
    # minority answers. (Quarantined and fatal answers have warnings of their own.)
    needed = quorum(n)
    answered = sum(o.reply is not Reply.ERROR and o.reply is not Reply.TIMEOUT for o in outcomes)
    if answered >= needed and not _UNANSWERED:
        return  # the usual case, without building the key below
    servers = " ".join(o.server for o in outcomes)
    if answered >= needed:
        _UNANSWERED.pop(servers, None)
        return
    # A run from the end of its first round (one long round, slow connects, is not
    # enough), of the rounds of every acquire to these servers (any lock, any call), with
    # no longer pause between two of them than STREAK_GAP: after a longer one, nothing
    # says the servers did not answer in between, and a new run begins.
    since, last = _UNANSWERED.get(servers, (round_.finished, round_.finished))
    if round_.started - last > STREAK_GAP:
        since = round_.finished
    _UNANSWERED[servers] = (since, round_.finished)
    if round_.finished - since >= UNREACHABLE_AFTER and warn_due(
        "unreachable", servers, round_.finished
    ):
        logger.warning(
            "%s acquires for %.1f s%s (the last: lock %s): %s. A blocking acquire keeps "
            "trying until its timeout; with timeout=None, for as long as no majority answers",
            "no server answered" if answered == 0 else f"only {answered} of {n} servers answered",
            round_.finished - since,
            "" if answered == 0 else f", {needed} needed",
            shown(step.key),
            render_outcomes(outcomes),
        )


#: How long acquire rounds must have found too few servers answering before it is warned of.
UNREACHABLE_AFTER = 5.0
#: The longest pause between two such rounds within one run (a blocking acquire's pause
#: between attempts is ``retry_delay``, 0.2 s by default).
STREAK_GAP = 30.0
#: For each set of servers (monotonic): since when acquire rounds found too few of them
#: answering, and when the last of those rounds ended.
_UNANSWERED: dict[str, tuple[float, float]] = {}


def _all_answered(outcomes: tuple[NodeOutcome, ...]) -> bool:
    """There are outcomes and every server answered the question (``Reply.answered``) or
    was left unread by a round a majority decided, in one pass of identity tests: this
    runs after every round."""
    if not outcomes:
        return False
    granted, taken, done, not_held = Reply.GRANTED, Reply.TAKEN, Reply.DONE, Reply.NOT_HELD
    unread = Reply.UNREAD
    for outcome in outcomes:
        reply = outcome.reply
        if not (
            reply is granted
            or reply is done
            or reply is unread
            or reply is taken
            or reply is not_held
        ):
            return False
    return True


#: Warnings held back by :func:`warn_due` since the last one given, per what they warn of.
_HELD_BACK: dict[str, int] = {}


def _warn_anomaly(step: Fanout, anomaly: str, now: float) -> None:
    """Warn of a round's clock anomaly, at most every :data:`WARN_EVERY` seconds: one
    stall of a process with a thousand rounds under way made a thousand warnings. The
    next one given says how many were held back (the debug line of each round stays)."""
    if not warn_due("clock anomaly", "", now):
        _HELD_BACK["clock anomaly"] = _HELD_BACK.get("clock anomaly", 0) + 1
        return
    more = _HELD_BACK.pop("clock anomaly", 0)
    since = f" ({more:,} more since the last such warning, held back)" if more else ""
    logger.warning(
        "clock anomaly in %s of lock %s: %s%s", step.op.value, shown(step.key), anomaly, since
    )


def log_round(step: Fanout, round_: Round) -> None:
    """One debug line per round; a warning (rate-limited by :func:`warn_due`) for a server
    in restart quarantine, which is a deployment event an operator should see, for servers
    that will not answer right (:func:`warn_unusable`), and for a round whose timing shows
    a stalled process or a clock that jumped."""
    elapsed = round_.finished - round_.started
    if (elapsed < 0 or elapsed > step.timeout + STALL) and (anomaly := clock_anomaly(step, round_)):
        _warn_anomaly(step, anomaly, round_.finished)
    # The usual round: every server answered, none in quarantine or failing for good, and
    # no run of unanswered acquires to end (see warn_unusable): nothing to warn of.
    if _UNANSWERED or not _all_answered(round_.outcomes):
        for outcome in round_.outcomes:
            quarantined = outcome.reply is Reply.QUARANTINED
            if quarantined and warn_due("quarantine", outcome.server, round_.finished):
                logger.warning(
                    "%s counts toward no quorum: %s. %s",
                    outcome.server,
                    outcome.detail,
                    quarantine_advice([outcome]),
                )
        warn_unusable(step, round_)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "%s %s token=%s… in %.2f ms: %s",
            step.op.value,
            shown(step.key),
            step.token[:TOKEN_PREFIX],
            elapsed * 1000,
            render_outcomes(round_.outcomes),
        )
