"""Counting semaphores: at most K holders at once, safe by construction (sans-I/O).

A counter over a majority quorum is not safe: with 3 servers and 2 permits, requests that
reach the servers in different orders can each count as one of the first two on a
different majority, and 3 clients hold. quorumlock never counts. A semaphore named
``name`` with ``permits=K`` is K *slots*, the keys ``quorumlock:semaphore:<name>:0`` ..
``:<K-1>``, and a permit is an ordinary Redlock lock on one slot: granted by a majority,
with the same token rules (R1-R3), validity (R6), restart quarantine, fencing counter,
extension (R10) and release (R9). Two holders of one slot would be two holders of one
lock, which the mutex argument excludes; so there are never more holders than slots
(docs/algorithm.md, "Semaphores").

What the semaphore adds is only how a slot is *chosen*, so that an acquire costs one
round when permits are free instead of one per slot:

1. Every server runs one script (``SEMAPHORE_ACQUIRE``): it tries the slots in an order
   the client drew at random and takes the first free one (``SET NX`` with the restart
   quarantine and fencing, exactly the lock's acquire), and tells which slots were free.
   Contenders draw different orders, so they rarely go for the same slot. When the same
   slot was granted by a majority in time, the permit is held.
2. Otherwise (servers granted different slots, because others came in between), one
   more round asks every server for the one slot that was free on the most servers; the
   script first deletes our token from every other slot, so a client never keeps two.
3. Anything else granted on the way (on a slot we do not keep) is deleted again: by
   the second round's script on the servers that answered it, else by one more round;
   a failed attempt deletes everything it may have been granted, as a failed lock
   attempt does (an attempt that every server answered with "taken" was granted
   nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from quorumlock._algorithm.arithmetic import deadline, quorum, retry_delay, wake_stagger
from quorumlock._algorithm.config import Duration, RedlockConfig, shown
from quorumlock._algorithm.flows import (
    Fanout,
    Flow,
    Op,
    Round,
    Sleep,
    Wait,
    Watch,
    Woken,
    _fence_flow,
    wait_on,
)
from quorumlock._algorithm.lockstate import LockState, check_wait
from quorumlock._algorithm.outcomes import (
    NodeOutcome,
    Reply,
    Verdict,
    judge_acquire,
    quarantine_advice,
    render_outcomes,
)
from quorumlock._exceptions import (
    ConfigurationError,
    LockNotAcquired,
    QuorumUnavailable,
)

__all__ = [
    "MAX_PERMITS",
    "SEMAPHORE_PREFIX",
    "SemaphoreResult",
    "SemaphoreState",
    "check_permits",
    "semaphore_acquire_flow",
    "semaphore_base",
]

#: The keys of a semaphore's slots start with this, then the semaphore's name.
SEMAPHORE_PREFIX = "quorumlock:semaphore:"

#: The most permits a semaphore may have: every acquire reads every slot on every server.
MAX_PERMITS = 1024


def semaphore_base(name: str) -> str:
    """The base key of semaphore ``name``: its slots are ``<base>:<slot>``, and its
    releases are announced on ``quorumlock:released:<base>``."""
    return SEMAPHORE_PREFIX + name


def check_permits(permits: object) -> int:
    """``permits``: an int from 1 to :data:`MAX_PERMITS`."""
    if isinstance(permits, bool) or not isinstance(permits, int):
        raise TypeError(f"permits must be an int, not {permits!r}")
    if not 1 <= permits <= MAX_PERMITS:
        raise ConfigurationError(f"permits must be from 1 to {MAX_PERMITS}, not {permits}")
    return permits


def _slot_and_free(outcome: NodeOutcome) -> tuple[int, str] | None:
    """What a server said to ``SEMAPHORE_ACQUIRE`` besides its answer: the slot it tried
    and which slots were free ("1") there; None when it did not answer."""
    if outcome.holder is None or ":" not in outcome.holder:
        return None
    slot, _, free = outcome.holder.partition(":")
    return (int(slot), free) if slot.isdigit() else None


def _for_slot(outcomes: Sequence[NodeOutcome], slot: int) -> tuple[NodeOutcome, ...]:
    """The round as an acquire of ``slot`` alone: a grant of another slot is a refusal."""
    judged = []
    for outcome in outcomes:
        said = _slot_and_free(outcome)
        other = outcome.reply is Reply.GRANTED and (said is None or said[0] != slot)
        judged.append(replace(outcome, reply=Reply.TAKEN) if other else outcome)
    return tuple(judged)


def _best_granted(outcomes: Sequence[NodeOutcome]) -> int | None:
    """The slot granted by the most servers (None: no grant)."""
    counts: dict[int, int] = {}
    for outcome in outcomes:
        said = _slot_and_free(outcome)
        if outcome.reply is Reply.GRANTED and said is not None:
            counts[said[0]] = counts.get(said[0], 0) + 1
    if not counts:
        return None
    return max(counts, key=lambda slot: (counts[slot], -slot))


def _most_free(outcomes: Sequence[NodeOutcome], permits: int, pick: float) -> int | None:
    """The slot that was free on the most servers that answered, if that is a majority
    (ties broken by ``pick``, uniform in [0, 1)); None when no slot can be had."""
    counts = [0] * permits
    for outcome in outcomes:
        said = _slot_and_free(outcome)
        if said is None or not outcome.reply.answered:
            continue
        for slot, bit in enumerate(said[1][:permits]):
            if bit == "1":
                counts[slot] += 1
    best = max(counts, default=0)
    if best < quorum(len(outcomes)):
        return None
    ties = [slot for slot, count in enumerate(counts) if count == best]
    return ties[min(int(pick * len(ties)), len(ties) - 1)]


def _strays(last: Round, kept: int | None) -> bool:
    """Whether our token may be left on a slot other than ``kept`` on some server after
    the attempt's ``last`` round. Every run of the script deletes our token from every
    slot but the one it tries, so a server is clean when its last answer was "taken"
    (nothing written), or a grant or a quarantined answer for ``kept`` itself; a grant of
    another slot, or no answer (its effect unknown), may have left one."""
    for outcome in last.outcomes:
        said = _slot_and_free(outcome)
        if outcome.reply is Reply.TAKEN:
            continue
        mine = outcome.reply in (Reply.GRANTED, Reply.QUARANTINED)
        if mine and said is not None and said[0] == kept:
            continue
        return True
    return False


def _order(permits: int, uniform: Callable[[], float]) -> tuple[int, ...]:
    """A random order of the slots (Fisher-Yates with ``uniform``)."""
    slots = list(range(permits))
    for i in range(permits - 1, 0, -1):
        j = min(int(uniform() * (i + 1)), i)
        slots[i], slots[j] = slots[j], slots[i]
    return tuple(slots)


@dataclass(frozen=True, slots=True)
class SemaphoreResult:
    verdict: Verdict
    slot: int | None  # the slot held; None unless ACQUIRED
    deadline: float | None
    outcomes: tuple[NodeOutcome, ...]  # of the last acquire round, as for its slot
    attempts: int
    fence: int | None = None


def semaphore_acquire_flow(
    *,
    base: str,
    permits: int,
    token: str,
    ttl_ms: int,
    config: RedlockConfig,
    blocking: bool,
    timeout: float | None,
    now: float,
    uniform: Callable[[], float],
) -> Flow[SemaphoreResult]:
    """Acquire one of the ``permits`` slots of ``base`` with ``token`` (see the module).

    Retries as :func:`~quorumlock._algorithm.flows.acquire_flow` does (R8), woken by the
    releases of any permit of the semaphore. Timeline (N = 5, K = 4, one slot taken)::

        t = 0.000  round 1: order 2,0,3,1; every server grants slot 0 (2 is taken)
        t = 0.001  slot 0 granted by 5 of 5 in time: held; no second round
    """
    give_up_at = None if timeout is None else now + timeout
    timeout_each = config.timeout_for(ttl_ms)
    watching = False
    misses = 0
    attempts = 0

    def step(slots: tuple[int, ...]) -> Fanout:
        return Fanout(
            Op.SEMAPHORE_ACQUIRE, base, token, ttl_ms, timeout_each, config.max_ttl_ms,
            config.fencing, permits=permits, slots=slots,
        )  # fmt: skip

    while True:
        attempts += 1
        first = yield step(_order(permits, uniform))
        assert isinstance(first, Round)
        last = first
        slot = _best_granted(first.outcomes)
        judged = _for_slot(first.outcomes, -1 if slot is None else slot)
        holds_until = deadline(first.started, ttl_ms, config.clock_drift_factor)
        verdict = judge_acquire(judged, in_time=first.finished < holds_until)
        if verdict is not Verdict.ACQUIRED and verdict is not Verdict.FATAL:
            # No slot on a majority: ask everyone for the one most of them had free.
            target = _most_free(first.outcomes, permits, uniform())
            if target is not None:
                second = yield step((target,))
                assert isinstance(second, Round)
                last = second
                slot = target
                judged = _for_slot(last.outcomes, slot)
                holds_until = deadline(last.started, ttl_ms, config.clock_drift_factor)
                verdict = judge_acquire(judged, in_time=last.finished < holds_until)
        if verdict is Verdict.ACQUIRED and slot is not None:
            fence = None
            if config.fencing:
                fence = yield from _fence_flow(
                    key=f"{base}:{slot}",
                    token=token,
                    ttl_ms=ttl_ms,
                    timeout=timeout_each,
                    acquired=Round(last.started, last.finished, judged),
                    holds_until=holds_until,
                )
            if fence is not None or not config.fencing:
                if _strays(last, slot):
                    # (announced as the attempt's, apart from the permit's release)
                    yield Fanout(
                        Op.SEMAPHORE_RELEASE, base, token, ttl_ms, timeout_each,
                        notify=True, arrival=str(attempts), permits=permits, slots=(slot,),
                    )  # fmt: skip
                return SemaphoreResult(verdict, slot, holds_until, judged, attempts, fence)
            verdict = Verdict.UNFENCED
        # Undo everything this attempt was granted, on every server (R6 step 5), without
        # waking the waiters: when contenders split the votes, each undoing one would
        # wake all the others to split them again; they retry after their random pause
        # instead (R8), and a holder's release still wakes them. Not when every server
        # answered "taken" to every round: each answer says the script ran and wrote
        # nothing of ours (the usual answer while all permits are held), so no reply
        # was lost and there is nothing to undo.
        now = last.finished
        if _strays(last, None):
            cleanup = yield Fanout(
                Op.SEMAPHORE_RELEASE, base, token, ttl_ms, timeout_each, permits=permits,
                until=0.0,
            )  # fmt: skip
            assert isinstance(cleanup, Round)
            now = cleanup.finished
        out_of_retries = config.retry_count is not None and attempts > config.retry_count
        if not blocking or verdict is Verdict.FATAL or out_of_retries:
            return SemaphoreResult(verdict, None, None, judged, attempts)
        if give_up_at is not None and now >= give_up_at:
            return SemaphoreResult(verdict, None, None, judged, attempts)
        if config.wake_on_release and not watching:
            watching = True
            wait = config.connect_timeout
            if give_up_at is not None:
                wait = min(wait, give_up_at - now)
            # no queue: a semaphore's release wakes waiters of the name in every process;
            # waiters that may take other slots (another ``permits``) poll apart
            kind = f"{permits} permits"
            watched = yield Watch(base, wait, queued=False, since=first.started, kind=kind)
            assert isinstance(watched, Woken)
            if watched.notified:
                continue  # at once: a release before the subscription would go unnoticed
            now = watched.now
        pause = retry_delay(config.retry_delay, uniform())
        if give_up_at is not None:
            pause = min(pause, give_up_at - now)
        if not watching:
            slept = yield Sleep(pause)
            assert isinstance(slept, float)
            continue
        woken = yield Wait(pause, wait_on(config, give_up_at, now + pause))
        assert isinstance(woken, Woken)
        if woken.notified:
            elapsed = last.finished - first.started
            stagger = wake_stagger(elapsed, misses, uniform(), config.retry_delay)
            if give_up_at is not None:
                stagger = min(stagger, max(0.0, give_up_at - woken.now))
            misses += 1
            if stagger > 0:
                slept = yield Sleep(stagger)
                assert isinstance(slept, float)


#: Verdicts that mean the servers, not other holders, kept us from a permit.
_UNAVAILABLE = frozenset(
    {Verdict.FATAL, Verdict.UNAVAILABLE, Verdict.QUARANTINED, Verdict.UNFENCED}
)


class SemaphoreState(LockState):
    """A permit's view: a :class:`LockState` whose key is the slot it holds.

    Extend, renew, ``owned()``, export and the lease work on the slot's key exactly as for
    a lock; acquire chooses the slot, and release deletes our token from every slot.
    """

    def __init__(self, *, permits: int, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.permits = permits
        self.base = semaphore_base(self.name)
        self.slot: int | None = None

    @property
    def key(self) -> str:
        return f"{self.base}:{0 if self.slot is None else self.slot}"

    @key.setter
    def key(self, value: str) -> None:
        raise AttributeError("a permit's key is the key of its slot, not set by hand")

    def acquire(
        self,
        *,
        blocking: bool,
        timeout: Duration | None,
        now: float,
        raise_on_failure: bool = False,
        held_by: Callable[[], str | None] | None = None,
    ) -> Flow[bool]:
        # (``held_by`` is not asked: a caller may hold several permits at once, and
        # waits for its own as for anyone's)
        if self.deadline is not None and now < self.deadline:
            raise self.not_reentrant()
        wait = check_wait(blocking, timeout)
        self.deadline = None
        self.fence = None
        self.lost = False
        self.loss = ""
        self.slot = None
        self.token = token = self._token_factory()
        result = yield from semaphore_acquire_flow(
            base=self.base,
            permits=self.permits,
            token=token,
            ttl_ms=self.ttl_ms,
            config=self.config,
            blocking=blocking,
            timeout=wait,
            now=now,
            uniform=self._uniform,
        )
        self.outcomes = result.outcomes
        self.verdict = result.verdict
        self.attempts = result.attempts
        if result.verdict is Verdict.ACQUIRED:
            self.slot = result.slot
            self.deadline = result.deadline
            self.fence = result.fence
            self.acquired_at = now
            self.extensions = 0
            self.renew_failed = False
            return True
        tried = f"{result.attempts} attempt" + ("s" if result.attempts > 1 else "")
        detail = (
            f"could not acquire one of the {self.permits} permits of semaphore "
            f"{shown(self.name)} ({tried}): {result.verdict.value}, {quorum(self.servers)} "
            f"of {self.servers} needed for one slot. {render_outcomes(self.outcomes)}"
        )
        if advice := quarantine_advice(self.outcomes):
            detail = f"{detail}. {advice}"
        if result.verdict in _UNAVAILABLE:
            raise QuorumUnavailable(detail, name=self.name, outcomes=self.outcomes)
        if raise_on_failure:
            raise LockNotAcquired(detail, name=self.name, outcomes=self.outcomes)
        return False

    def _release_all(self, token: str) -> Flow[Round]:
        round_ = yield Fanout(
            Op.SEMAPHORE_RELEASE, self.base, token, self.ttl_ms,
            self.config.timeout_for(self.ttl_ms), notify=True, permits=self.permits,
        )  # fmt: skip
        assert isinstance(round_, Round)
        return round_

    def release(self) -> Flow[bool]:
        """Release the permit on all servers (R9): our token is deleted from every slot,
        and the semaphore's waiters are woken. True iff a majority still held it."""
        if self.lost and self.token is not None:
            self.lost = False
            yield from self._release_all(self.token)
            return False
        token, _ = self._require_held("release")
        self.deadline = None
        round_ = yield from self._release_all(token)
        self.outcomes = round_.outcomes
        return round_.count(Reply.DONE) >= quorum(self.servers)

    def abandon(self) -> Flow[None]:
        self.deadline = None
        if self.token is not None:
            yield from self._release_all(self.token)

    def probe(self, *, mine: bool) -> Flow[bool]:
        if not mine:
            raise TypeError("a semaphore permit has no locked(): use owned() to check this permit")
        return (yield from super().probe(mine=True))
