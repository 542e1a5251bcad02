"""A scripted network for the flows of the pure core: each round is answered by a
function of its step, on a clock that only moves forward."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from quorumlock._algorithm.flows import Fanout, Flow, Round, Sleep, Wait, Watch, Woken
from quorumlock._algorithm.outcomes import NodeOutcome, Reply

T = TypeVar("T")
Step = Fanout | Sleep | Watch | Wait
Respond = Callable[[Fanout], Sequence[NodeOutcome]]
MAX_STEPS = 10_000


@dataclass
class Driven(Generic[T]):
    """What a flow returned, every step it took, and the clock at its end."""

    result: T
    steps: list[Step]
    now: float

    @property
    def rounds(self) -> list[Fanout]:
        return [step for step in self.steps if isinstance(step, Fanout)]


def drive(
    flow: Flow[T],
    respond: Respond,
    *,
    now: float = 0.0,
    took: float | Callable[[Fanout], float] = 0.004,
    steps: list[Step] | None = None,
    announced: Callable[[Wait], float | None] = lambda wait: None,
    missed: bool = True,
) -> Driven[T]:
    """Run ``flow`` to its end from ``now``: each round answered with ``respond(step)``
    and lasting ``took`` (or ``took(step)``) seconds; a sleep passes its time, and a
    wait too unless a release is announced ``announced(wait)`` seconds into it (None:
    none is). A watch of a process that listened to nothing yet subscribes at once; one
    that subscribes now may have missed a release (``missed``: the flow then tries
    again at once). Every step is also appended to ``steps`` as it comes, for a caller
    whose flow raises. A flow that takes more than ``MAX_STEPS`` steps fails the test."""
    taken = [] if steps is None else steps
    try:  # only the flow's own end: a StopIteration of ``respond`` is a failure
        step = next(flow)
    except StopIteration as stop:
        return Driven(stop.value, taken, now)
    while True:
        taken.append(step)
        assert len(taken) <= MAX_STEPS, f"the flow did not end: {taken[-3:]}"
        answer: Round | Woken | float
        if isinstance(step, Sleep):
            now += step.seconds
            answer = now
        elif isinstance(step, Wait):
            after = announced(step)
            if after is not None and after < step.seconds:
                now += after
                answer = Woken(now, True)
            else:
                now += step.seconds
                answer = Woken(now, False)
        elif isinstance(step, Watch):
            answer = Woken(now, False, listening=False) if step.already else Woken(now, missed)
        else:
            started = now
            now += took(step) if callable(took) else took
            answer = Round(started, now, tuple(respond(step)))
        try:
            step = flow.send(answer)
        except StopIteration as stop:
            return Driven(stop.value, taken, now)


def in_turn(*answers: Sequence[NodeOutcome]) -> Respond:
    """Answer the rounds with ``answers`` in turn; a round more fails the test."""
    left: Iterator[Sequence[NodeOutcome]] = iter(answers)

    def respond(step: Fanout) -> Sequence[NodeOutcome]:
        for outcomes in left:
            return outcomes
        raise AssertionError(f"a round more than expected: {step}")

    return respond


def answered(*replies: Reply) -> tuple[NodeOutcome, ...]:
    """One reply per server, in order, the servers named s0, s1, ..."""
    return tuple(NodeOutcome(f"s{i}", reply) for i, reply in enumerate(replies))


def everywhere(reply: Reply, servers: int = 3) -> tuple[NodeOutcome, ...]:
    """``reply`` from each of ``servers`` servers, named s0, s1, ..."""
    return answered(*[reply] * servers)
