"""The read-write lock: the mutex's flows, run on the read-write scripts.

Pure, like the rest of ``_algorithm``. A hold of a read-write lock (a reader or the
writer) is a :class:`RWState`: a :class:`~quorumlock._algorithm.lockstate.LockState`
whose flows are the mutex's very flows (acquire with its retries and wake-ups, validity,
fencing, extend, leases, release), each of their steps rewritten for the read-write
scripts (:func:`rewritten`): an acquire becomes the read or the write acquire, a release
the read-write release, and so on, all on the name's one sorted set of holds
(:func:`rw_key`). So readers and writers keep every rule of the mutex by construction;
what differs lives in the scripts (``quorumlock._algorithm.scripts``, "read-write") and
in the two steps of their own here: the writer's intent, and the downgrade. See
docs/algorithm.md, "Read-write locks", for why a majority of per-server checks is enough.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import Duration, RedlockConfig, shown
from quorumlock._algorithm.flows import Fanout, Flow, Op, Round, Step, Watch, rewritten
from quorumlock._algorithm.lockstate import LockState
from quorumlock._algorithm.outcomes import NodeOutcome, Reply, render_outcomes
from quorumlock._algorithm.scripts import RW_BASES, RW_PREFIX
from quorumlock._exceptions import LockLost, LockNotHeld

__all__ = ["Mode", "RWState", "intent_lease_ms", "rw_expiry", "rw_key", "rw_score"]


class Mode(enum.Enum):
    READ = "read"
    WRITE = "write"


def rw_key(name: str) -> str:
    """The key of ``name``'s read-write lock on every server: ``quorumlock:rw:{<name>}``.

    One key holds every hold, so the lock never spans two cluster slots; the braces make
    the name its hash tag (for a name without braces of its own, the slot is the name's).
    """
    return f"{RW_PREFIX}{{{name}}}"


def rw_score(member: str, expiry_ms: float) -> float:
    """The score of a hold in the read-write set: its kind's base (the member's first
    letter: ``"r"``, ``"w"`` or ``"i"``) plus the server time (ms) it expires at. Each
    kind has a band of its own, where the scripts find its live holds in one lookup."""
    return RW_BASES[member[0]] + expiry_ms


def rw_expiry(member: str, score: float) -> float:
    """The server time (ms) a hold of the read-write set expires at (see :func:`rw_score`)."""
    return score - RW_BASES.get(member[:1], 0)


def intent_lease_ms(config: RedlockConfig, ttl_ms: int) -> int:
    """How long a waiting writer's intent keeps new readers out on a server.

    Each attempt and each undo of a waiting writer renews it; it must outlast the gap
    between two of them (a pause of at most ``retry_delay``, then up to two rounds) with
    room to spare, and lapses soon after a writer that died or gave up without its
    cleanup: twice that gap, at least 100 ms.
    """
    gap = config.retry_delay + 2 * config.timeout_for(ttl_ms)
    return max(100, math.ceil(2000 * gap))


#: The read-write command that plays each mutex command's role (acquire: by mode).
_ROLE = {
    Op.RELEASE: Op.RW_RELEASE,
    Op.EXTEND: Op.RW_EXTEND,
    Op.COMMIT_FENCE: Op.RW_COMMIT_FENCE,
    Op.PROBE: Op.RW_PROBE,
}


class RWState(LockState):
    """One hold of a read-write lock: a reader, or the writer (``mode``).

    ``name`` is the user's name (messages, logs); the servers' key is :func:`rw_key`.
    A reader draws no fencing token: the Redlock's ``fencing`` applies to writers.
    A downgraded writer holds for reading until released; acquiring again starts over
    in the hold's own mode.
    """

    #: The read-write release names no head of a queue (it wakes waiters of the name in
    #: every process), so a waiter does not join one: see docs/algorithm.md,
    #: "Read-write locks".
    queued = False

    # One key holds every hold and intent: a refusal by another holder's entry says
    # nothing about an entry of ours left by an earlier attempt, so every server is
    # undone (the undo also renews a waiting writer's intent).
    undo_everywhere = True

    def __init__(self, *, mode: Mode, config: RedlockConfig, **kwargs: object) -> None:
        if mode is Mode.READ and config.fencing:
            config = dataclasses.replace(config, fencing=False)
        super().__init__(config=config, **kwargs)  # type: ignore[arg-type]
        self.initial_mode = mode
        self.mode = mode
        self.key = rw_key(self.name)
        self._intent_ms = intent_lease_ms(config, self.ttl_ms)

    def _step(self, step: Step, intent_ms: int = 0) -> Step:
        """A mutex step as the read-write one: ``intent_ms`` is the writer's intent
        lease for an acquire and its undo (0: none)."""
        if isinstance(step, Watch):
            # readers and writers poll apart: a writer waiting on behind a reader would
            # leave no intent (only a writer's attempts renew one)
            return dataclasses.replace(step, key=self.key, kind=self.mode.value)
        if not isinstance(step, Fanout):
            return step
        if step.op is Op.ACQUIRE:
            op = Op.RW_WRITE if self.mode is Mode.WRITE else Op.RW_READ
        else:
            op = _ROLE.get(step.op, step.op)
        keeps_intent = op is Op.RW_WRITE or op is Op.RW_RELEASE
        # Built directly, not by dataclasses.replace: this runs for every round.
        return Fanout(
            op,
            self.key,
            step.token,
            step.ttl_ms,
            step.timeout,
            step.max_ttl_ms,
            step.fencing,
            step.fence,
            step.notify,
            # an undo's attempt: its announcements are told apart from the release's
            arrival=step.arrival if op is Op.RW_RELEASE else "",
            intent_ms=intent_ms if keeps_intent else 0,
            targets=step.targets,
            until=step.until,
        )

    def acquire(
        self,
        *,
        blocking: bool,
        timeout: Duration | None,
        now: float,
        raise_on_failure: bool = False,
        held_by: Callable[[], str | None] | None = None,
    ) -> Flow[bool]:
        """The mutex's acquire (same contract), for this hold's mode.

        A blocking writer leaves an intent on every server that refuses it, renewed by
        each attempt and each undo, so that no new reader gets in while it waits; when
        it gives up, a last release takes its intent back (nothing is left behind).
        """
        if self.deadline is None or now >= self.deadline:
            # A new acquisition (one while held is refused below, and keeps the mode).
            self.mode = self.initial_mode
        intent = self._intent_ms if self.mode is Mode.WRITE and blocking else 0
        sent = False

        def step_of(step: Step) -> Step:
            nonlocal sent
            sent = sent or isinstance(step, Fanout)
            return self._step(step, intent)

        flow = super().acquire(
            blocking=blocking,
            timeout=timeout,
            now=now,
            raise_on_failure=raise_on_failure,
            held_by=held_by,
        )
        try:
            acquired = yield from rewritten(flow, step_of)
        except Exception:
            if intent and sent:
                yield from self._drop_intent()
            raise
        if not acquired and intent and sent:
            yield from self._drop_intent()
        return acquired

    def _drop_intent(self) -> Flow[None]:
        """Take back a waiting writer's intent on every server, waking the readers it
        kept out."""
        token = self.token or ""
        timeout = self.config.timeout_for(self.ttl_ms)
        round_ = yield Fanout(Op.RW_RELEASE, self.key, token, self.ttl_ms, timeout, notify=True)
        assert isinstance(round_, Round)

    def extend(self, *, ttl: Duration | None, now: float) -> Flow[float]:
        return rewritten(super().extend(ttl=ttl, now=now), self._step)

    def renew(self, *, ttl_ms: int, now: float) -> Flow[bool]:
        return rewritten(super().renew(ttl_ms=ttl_ms, now=now), self._step)

    def release(self) -> Flow[bool]:
        return rewritten(super().release(), self._step)

    def abandon(self) -> Flow[None]:
        return rewritten(super().abandon(), self._step)

    def probe(self, *, mine: bool) -> Flow[bool]:
        """With ``mine``: whether a majority has this hold; otherwise whether a majority
        has a live hold of anyone, reader or writer."""
        return rewritten(super().probe(mine=mine), self._step)

    def export(self, *, now: float, keep: bool) -> tuple[str, float]:
        raise TypeError(
            f"a hold of read-write lock {shown(self.name)} cannot be exported: a handle "
            "is adopted as a plain lock"
        )

    def downgrade(self, *, now: float) -> Flow[None]:
        """Turn the held write lock into a read lock, atomically on each server: the
        write hold becomes a read hold with the same expiry, so no writer can come in
        between, and the validity is unchanged.

        Raises :class:`LockNotHeld` if this hold is not a held write lock, and
        :class:`LockLost` if a majority did not confirm it in time (the lock is then
        released everywhere and no longer held).
        """
        token, held_until = self._require_held("downgrade")
        if self.mode is not Mode.WRITE:
            raise LockNotHeld(
                f"cannot downgrade read-write lock {shown(self.name)}: it is held for "
                "reading already",
                name=self.name,
            )
        reason = "its validity had already run out"
        outcomes: tuple[NodeOutcome, ...] = ()  # the downgrade's, else the release's
        if now < held_until:
            wait = min(self.config.timeout_for(self.ttl_ms), held_until - now)
            round_ = yield Fanout(Op.RW_DOWNGRADE, self.key, token, self.ttl_ms, wait)
            assert isinstance(round_, Round)
            self.outcomes = outcomes = round_.outcomes
            confirmed = round_.count(Reply.DONE)
            if confirmed >= quorum(self.servers) and round_.finished < held_until:
                self.mode = Mode.READ
                return
            reason = f"only {confirmed} of {self.servers} servers confirmed it in time"
        # A downgrade that failed may have left a write hold or a read hold on any
        # server: neither can be counted on, so the lock is lost and taken back everywhere.
        self.deadline = None
        self.lost = True
        cleanup = yield Fanout(
            Op.RW_RELEASE,
            self.key,
            token,
            self.ttl_ms,
            self.config.timeout_for(self.ttl_ms),
            notify=True,
        )
        assert isinstance(cleanup, Round)
        # (not the acquire's answers, still in ``self.outcomes`` when none was sent)
        self.outcomes = outcomes = outcomes or cleanup.outcomes
        self.loss = f"could not be downgraded: {reason}. {render_outcomes(outcomes)}"
        raise LockLost(
            f"read-write lock {shown(self.name)} {self.loss}", name=self.name, outcomes=outcomes
        )
