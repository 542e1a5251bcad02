"""The Redlock protocol as sans-I/O flows (SPEC R6 to R10).

A flow is a generator that *yields* what it needs done and *receives* what happened, in
the manner of httpx's auth flows. It never touches a socket, a clock or an event loop, so
the sync and asyncio front ends run the very same flows and cannot drift apart:

- it yields :class:`Fanout`: send one command to every server at once (R7) and wait for
  each reply up to ``timeout``; the driver answers with a :class:`Round` that carries the
  monotonic times read just before the first send and just after the last reply;
- it yields :class:`Sleep`: pause; the driver answers with the monotonic time after it.

The flow's return value is its result. A driver is a dozen lines: see ``_run`` in
``quorumlock._sync`` and ``quorumlock.asyncio``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

from quorumlock._algorithm.arithmetic import deadline, quorum, retry_delay
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.outcomes import NodeOutcome, Reply, Verdict, judge_acquire
from quorumlock._algorithm.scripts import EXTEND, RELEASE

__all__ = [
    "AcquireResult",
    "ExtendResult",
    "Fanout",
    "Flow",
    "Op",
    "Round",
    "Sleep",
    "acquire_flow",
    "command_args",
    "eval_args",
    "extend_flow",
    "interpret",
    "release_flow",
]

T = TypeVar("T")


class Op(enum.Enum):
    ACQUIRE = "acquire"
    RELEASE = "release"
    EXTEND = "extend"


@dataclass(frozen=True, slots=True)
class Fanout:
    """Send one command to every server at once; wait up to ``timeout`` for each reply."""

    op: Op
    key: str
    token: str
    ttl_ms: int
    timeout: float


@dataclass(frozen=True, slots=True)
class Round:
    """What a :class:`Fanout` gave: one outcome per server, in server order."""

    started: float  # monotonic, read before the first command was sent (R6 step 1)
    finished: float  # monotonic, read after the last reply or timeout (R6 step 3)
    outcomes: tuple[NodeOutcome, ...]

    def count(self, reply: Reply) -> int:
        return sum(1 for o in self.outcomes if o.reply is reply)


@dataclass(frozen=True, slots=True)
class Sleep:
    """Pause for ``seconds``; the driver answers with the monotonic time after it."""

    seconds: float


Step = Fanout | Sleep
Answer = Round | float
Flow = Generator[Step, Answer, T]


def command_args(step: Fanout) -> tuple[str | int, ...]:
    """The command a fan-out sends, as arguments for the client's packer.

    Acquire is the plain ``SET key token NX PX ttl`` of R1; release and extend run the
    scripts by digest (``EVALSHA``). :func:`eval_args` is the fallback for a server that
    answers ``NOSCRIPT`` (it restarted, or its script cache was flushed).
    """
    if step.op is Op.ACQUIRE:
        return ("SET", step.key, step.token, "NX", "PX", step.ttl_ms)
    if step.op is Op.RELEASE:
        return ("EVALSHA", RELEASE.sha, 1, step.key, step.token)
    return ("EVALSHA", EXTEND.sha, 1, step.key, step.token, step.ttl_ms)


def eval_args(step: Fanout) -> tuple[str | int, ...]:
    """The ``EVAL`` form of a script command; running it also caches the script."""
    args = command_args(step)
    if args[0] != "EVALSHA":
        raise ValueError(f"{step.op.value} does not run a script")
    script = RELEASE if step.op is Op.RELEASE else EXTEND
    return ("EVAL", script.source, *args[2:])


def interpret(op: Op, raw: object) -> tuple[Reply, str]:
    """Turn a server's (non-error) reply to ``op`` into a :class:`Reply`.

    Works with raw and decoded replies (a client object given by the user may decode).
    """
    if op is Op.ACQUIRE:
        if raw in (b"OK", "OK", True):
            return Reply.GRANTED, ""
        if raw is None:
            return Reply.TAKEN, ""
    elif raw == 1:
        return Reply.DONE, ""
    elif raw == 0:
        return Reply.NOT_HELD, ""
    return Reply.ERROR, f"unexpected reply {raw!r}"


@dataclass(frozen=True, slots=True)
class AcquireResult:
    verdict: Verdict
    deadline: float | None  # monotonic time the lock holds until; None unless ACQUIRED
    outcomes: tuple[NodeOutcome, ...]  # of the last acquire round
    attempts: int


def acquire_flow(
    *,
    key: str,
    token: str,
    ttl_ms: int,
    config: RedlockConfig,
    blocking: bool,
    timeout: float | None,
    now: float,
    uniform: Callable[[], float],
) -> Flow[AcquireResult]:
    """Acquire ``key`` with ``token`` on a majority (R6), retrying with jitter (R8).

    One attempt when ``blocking`` is false. Otherwise attempts go on until one succeeds,
    ``config.retry_count`` retries were made, ``timeout`` seconds passed since ``now``, or
    the verdict is ``FATAL`` (no retry can help). ``uniform()`` draws the jitter.
    """
    give_up_at = None if timeout is None else now + timeout
    timeout_each = config.timeout_for(ttl_ms)
    attempts = 0
    while True:
        attempts += 1
        acquire = Fanout(Op.ACQUIRE, key, token, ttl_ms, timeout_each)
        round_ = yield acquire
        assert isinstance(round_, Round)
        holds_until = deadline(round_.started, ttl_ms, config.clock_drift_factor)
        verdict = judge_acquire(round_.outcomes, in_time=round_.finished < holds_until)
        if verdict is Verdict.ACQUIRED:
            return AcquireResult(verdict, holds_until, round_.outcomes, attempts)
        # R6 step 5: undo on ALL servers, also those that seemed to refuse: a grant may
        # have been written and its reply lost.
        cleanup = yield Fanout(Op.RELEASE, key, token, ttl_ms, timeout_each)
        assert isinstance(cleanup, Round)
        now = cleanup.finished
        out_of_retries = config.retry_count is not None and attempts > config.retry_count
        if not blocking or verdict is Verdict.FATAL or out_of_retries:
            return AcquireResult(verdict, None, round_.outcomes, attempts)
        pause = retry_delay(config.retry_delay, uniform())
        if give_up_at is not None:
            if now >= give_up_at:
                return AcquireResult(verdict, None, round_.outcomes, attempts)
            pause = min(pause, give_up_at - now)
        slept = yield Sleep(pause)
        assert isinstance(slept, float)
        now = slept


def release_flow(*, key: str, token: str, ttl_ms: int, config: RedlockConfig) -> Flow[Round]:
    """Compare-and-delete on all servers, whatever we believe each holds (R9)."""
    round_ = yield Fanout(Op.RELEASE, key, token, ttl_ms, config.timeout_for(ttl_ms))
    assert isinstance(round_, Round)
    return round_


@dataclass(frozen=True, slots=True)
class ExtendResult:
    deadline: float | None  # the new deadline; None when the extension failed
    outcomes: tuple[NodeOutcome, ...]
    reason: str  # why it failed; "" on success
    lost: bool  # the failure lost the lock (it was released everywhere)


def extend_flow(
    *,
    key: str,
    token: str,
    ttl_ms: int,
    config: RedlockConfig,
    held_until: float,
    now: float,
    final: bool = True,
) -> Flow[ExtendResult]:
    """Reset the ttl of our key on a majority, within the remaining validity (R10).

    The extension counts only if a majority confirmed it and the round ended before the
    current deadline ``held_until``; the new deadline is computed as for an acquire, from
    the time the round started. On failure the key is released everywhere: the lock is
    lost, and keeping it on a minority would only block the other clients.

    With ``final=False`` (lease renewal) a failure that leaves the lock valid and
    recoverable (servers that did not answer, rather than a majority saying "not held")
    returns without releasing, so that the caller can try again before the deadline.

    Timeline (ttl 10 s, factor 0.01, held until t = 109.898)::

        t = 105.000  send the extend script with PX 10000 to all servers
        t = 105.003  the last reply: 3 of 5 confirmed, before 109.898: extended
        new deadline = 105.000 + 10.000 - 0.102 = 114.898
    """
    outcomes: tuple[NodeOutcome, ...] = ()
    if now >= held_until:
        reason = "its validity had already run out"
    else:
        wait = min(config.timeout_for(ttl_ms), held_until - now)
        round_ = yield Fanout(Op.EXTEND, key, token, ttl_ms, wait)
        assert isinstance(round_, Round)
        confirmed = round_.count(Reply.DONE)
        new_deadline = deadline(round_.started, ttl_ms, config.clock_drift_factor)
        enough = confirmed >= quorum(len(round_.outcomes))
        if enough and round_.finished < min(held_until, new_deadline):
            return ExtendResult(new_deadline, round_.outcomes, "", lost=False)
        if enough:
            reason = "the majority confirmed it too late"
        else:
            reason = f"only {confirmed} of {len(round_.outcomes)} servers confirmed it"
        outcomes = round_.outcomes
        n = len(outcomes)
        gone = round_.count(Reply.NOT_HELD) > n - quorum(n)  # no majority can confirm now
        if not final and not gone and round_.finished < held_until:
            return ExtendResult(None, outcomes, reason, lost=False)
    cleanup = yield from release_flow(key=key, token=token, ttl_ms=ttl_ms, config=config)
    return ExtendResult(None, outcomes or cleanup.outcomes, reason, lost=True)
