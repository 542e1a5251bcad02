"""The read-write hold's state, driven without servers: how the mutex's steps are
rewritten for the read-write scripts, and the bookkeeping of the mode."""

from __future__ import annotations

import random

import pytest

from quorumlock import LockNotReentrant, RedlockConfig
from quorumlock._algorithm.flows import Fanout, Flow, Op, Watch, rewritten
from quorumlock._algorithm.rwlock import Mode, RWState, intent_lease_ms, rw_key


def state(mode: Mode, **config: object) -> RWState:
    return RWState(
        mode=mode,
        name="doc:7",
        ttl_ms=10_000,
        servers=3,
        config=RedlockConfig(**config),  # type: ignore[arg-type]
        uniform=random.random,
    )


def test_each_mutex_step_becomes_the_read_write_one() -> None:
    writer = state(Mode.WRITE)
    acquire = Fanout(Op.ACQUIRE, "doc:7", "t", 10_000, 0.05, 60_000, True)
    step = writer._step(acquire, 300)
    assert isinstance(step, Fanout)
    assert (step.op, step.key, step.intent_ms, step.fencing) == (
        Op.RW_WRITE,
        rw_key("doc:7"),
        300,
        True,
    )
    undo = writer._step(Fanout(Op.RELEASE, "doc:7", "t", 10_000, 0.05), 300)
    assert isinstance(undo, Fanout)
    assert (undo.op, undo.intent_ms) == (Op.RW_RELEASE, 300)
    extend = writer._step(Fanout(Op.EXTEND, "doc:7", "t", 10_000, 0.05), 300)
    assert isinstance(extend, Fanout)
    assert (extend.op, extend.intent_ms) == (Op.RW_EXTEND, 0)
    watch = writer._step(Watch("doc:7", 1.0))
    assert watch == Watch(rw_key("doc:7"), 1.0)
    reader = state(Mode.READ, fencing=True)
    assert not reader.config.fencing  # readers draw no fencing token
    read = reader._step(acquire, 300)
    assert isinstance(read, Fanout)
    assert (read.op, read.intent_ms) == (Op.RW_READ, 0)


def test_acquiring_a_held_downgraded_hold_is_refused_and_keeps_it_a_reader() -> None:
    hold = state(Mode.WRITE)
    hold.token, hold.deadline, hold.mode = "t", 100.0, Mode.READ  # held, downgraded
    with pytest.raises(LockNotReentrant):
        next(hold.acquire(blocking=False, timeout=None, now=50.0))
    assert hold.mode is Mode.READ


def test_rewritten_passes_answers_and_the_result_through() -> None:
    def flow() -> Flow[float]:
        answer = yield Watch("a", 1.0)
        assert isinstance(answer, float)
        return answer * 2

    wrapped = rewritten(flow(), lambda step: step)
    assert next(wrapped) == Watch("a", 1.0)
    with pytest.raises(StopIteration) as stop:
        wrapped.send(21.0)
    assert stop.value.value == 42.0


def test_the_intent_outlasts_the_gap_between_attempts() -> None:
    config = RedlockConfig(retry_delay=0.2, instance_timeout=0.05)
    assert 600 <= intent_lease_ms(config, 10_000) <= 601  # 2 x (0.2 + 2 x 0.05) s, rounded up
    assert intent_lease_ms(RedlockConfig(retry_delay=0.001, instance_timeout=0.001), 10) == 100
