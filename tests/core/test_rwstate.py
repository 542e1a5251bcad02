"""The read-write hold's state, driven without servers: how the mutex's steps are
rewritten for the read-write scripts, the bookkeeping of the mode, the downgrade's
verdict, and a waiting writer's intent."""

from __future__ import annotations

import random

import pytest

from quorumlock import (
    ConfigurationError,
    LockLost,
    LockNotHeld,
    LockNotReentrant,
    NodeOutcome,
    QuorumUnavailable,
    RedlockConfig,
    Reply,
)
from quorumlock._algorithm.flows import Fanout, Flow, Op, Watch, rewritten
from quorumlock._algorithm.rwlock import Mode, RWState, intent_lease_ms, rw_key
from quorumlock._algorithm.wire import notice
from tests.core.scripted import Step, answered, drive, everywhere, in_turn


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
    undo = writer._step(Fanout(Op.RELEASE, "doc:7", "t", 10_000, 0.05, arrival="2"), 300)
    assert isinstance(undo, Fanout)
    # the undo of attempt 2: its announcements are told apart from the release's
    assert (undo.op, undo.intent_ms, notice(undo)) == (Op.RW_RELEASE, 300, "t:2")
    extend = writer._step(Fanout(Op.EXTEND, "doc:7", "t", 10_000, 0.05), 300)
    assert isinstance(extend, Fanout)
    assert (extend.op, extend.intent_ms) == (Op.RW_EXTEND, 0)
    release = writer._step(Fanout(Op.RELEASE, "doc:7", "t", 10_000, 0.05))
    assert isinstance(release, Fanout)
    assert (release.op, release.intent_ms) == (Op.RW_RELEASE, 0)  # a held writer's
    # a writer's waiter polls for writers only: its own attempts keep its intent
    watch = writer._step(Watch("doc:7", 1.0))
    assert watch == Watch(rw_key("doc:7"), 1.0, kind="write")
    reader = state(Mode.READ, fencing=True)
    assert reader._step(Watch("doc:7", 1.0)) == Watch(rw_key("doc:7"), 1.0, kind="read")
    assert not reader.config.fencing  # readers draw no fencing token
    assert state(Mode.WRITE, fencing=True).config.fencing
    read = reader._step(acquire, 300)
    assert isinstance(read, Fanout)
    assert (read.op, read.intent_ms) == (Op.RW_READ, 0)


def test_acquiring_a_held_downgraded_hold_is_refused_and_keeps_it_a_reader() -> None:
    hold = state(Mode.WRITE)
    hold.token, hold.deadline, hold.mode = "t", 100.0, Mode.READ  # held, downgraded
    with pytest.raises(LockNotReentrant):
        next(hold.acquire(blocking=False, timeout=None, now=50.0))
    assert hold.mode is Mode.READ
    # at its deadline the hold is over: a new acquisition, in the hold's own mode
    first = next(hold.acquire(blocking=False, timeout=None, now=100.0))
    assert isinstance(first, Fanout)
    assert (first.op, hold.mode) == (Op.RW_WRITE, Mode.WRITE)


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
    exact = RedlockConfig(retry_delay=0.25, instance_timeout=0.125)
    assert intent_lease_ms(exact, 10_000) == 1000  # 2 x (0.25 + 2 x 0.125) s
    assert intent_lease_ms(RedlockConfig(retry_delay=0.001, instance_timeout=0.001), 10) == 100


# --------------------------------------------------------------------------------------
# downgrade: a majority confirms it within the validity, or the lock is lost everywhere
# --------------------------------------------------------------------------------------

DONE, NOT_HELD, TIMEOUT = Reply.DONE, Reply.NOT_HELD, Reply.TIMEOUT


def downgrade(
    hold: RWState,
    replies: tuple[Reply, ...],
    *,
    now: float = 50.0,
    took: float = 0.004,
    sent: list[Step] | None = None,
) -> list[Fanout]:
    """Run ``hold.downgrade(now)``, its round answered with ``replies`` ``took`` later
    (the release after a failure with NOT_HELD); the rounds sent (also into ``sent``)."""

    def respond(step: Fanout) -> tuple[NodeOutcome, ...]:
        answer = replies if step.op is Op.RW_DOWNGRADE else (NOT_HELD,) * len(replies)
        return answered(*answer)

    return drive(hold.downgrade(now=now), respond, now=now, took=took, steps=sent).rounds


def writer_until(deadline: float) -> RWState:
    hold = state(Mode.WRITE, instance_timeout=5.0)
    hold.token, hold.deadline = "t", deadline
    hold.outcomes = everywhere(Reply.GRANTED)  # its acquire's answers
    return hold


def test_a_downgrade_confirmed_by_a_majority_in_time_makes_a_reader() -> None:
    hold = writer_until(100.0)
    (round_,) = downgrade(hold, (DONE, DONE, TIMEOUT))
    assert round_.op is Op.RW_DOWNGRADE
    assert round_.timeout == 5.0
    assert hold.mode is Mode.READ
    assert hold.deadline == 100.0  # the validity is unchanged


@pytest.mark.parametrize(
    ("replies", "deadline", "took", "why"),
    [
        ((DONE, TIMEOUT, NOT_HELD), 100.0, 0.004, "only 1 of 3 servers confirmed it in time"),
        ((DONE, DONE, DONE), 50.004, 0.004, "only 3 of 3 servers confirmed it in time"),
        ((DONE, DONE, DONE), 50.0, 0.004, "its validity had already run out"),
    ],
)
def test_a_downgrade_not_confirmed_in_time_loses_the_lock_and_takes_it_back(
    replies: tuple[Reply, ...], deadline: float, took: float, why: str
) -> None:
    """A failed downgrade may have left a write hold or a read hold on any server: the
    lock is lost, and released everywhere. Catches a minority counted, a confirmation
    at the deadline counted, and a downgrade sent with no validity left."""
    hold, sent = writer_until(deadline), list[Step]()
    with pytest.raises(LockLost, match=why) as raised:
        downgrade(hold, replies, took=took, sent=sent)
    rounds = [step for step in sent if isinstance(step, Fanout)]
    assert (rounds[-1].op, rounds[-1].notify) == (Op.RW_RELEASE, True)  # readers woken
    sent_one = deadline > 50.0
    assert (Op.RW_DOWNGRADE in [r.op for r in rounds]) is sent_one
    # the answers that tell why: the downgrade's, else the release's
    said = replies if sent_one else (NOT_HELD,) * 3
    assert [o.reply for o in raised.value.outcomes] == list(said)
    assert hold.lost
    assert not hold.held
    assert hold.mode is Mode.WRITE


def test_a_downgrade_waits_no_longer_than_the_validity_left() -> None:
    hold = writer_until(51.0)
    (round_,) = downgrade(hold, (DONE, DONE, DONE))
    assert round_.timeout == pytest.approx(1.0)


def test_only_a_write_hold_is_downgraded() -> None:
    hold = writer_until(100.0)
    hold.mode = Mode.READ
    with pytest.raises(LockNotHeld, match="held for reading already"):
        downgrade(hold, (DONE, DONE, DONE))


# --------------------------------------------------------------------------------------
# a waiting writer's intent: taken back when it gives up
# --------------------------------------------------------------------------------------


def refused_throughout(hold: RWState, **acquire: object) -> tuple[bool, list[Fanout]]:
    """Run an acquire that every server refuses (another hold), on a clock of its own."""

    def respond(step: Fanout) -> tuple[NodeOutcome, ...]:
        return everywhere(Reply.TAKEN if step.op in (Op.RW_WRITE, Op.RW_READ) else Reply.DONE)

    driven = drive(hold.acquire(now=0.0, **acquire), respond)  # type: ignore[arg-type]
    return driven.result, driven.rounds


def test_a_writer_that_gives_up_takes_its_intent_back_everywhere() -> None:
    writer = state(Mode.WRITE, retry_delay=0.05)
    acquired, sent = refused_throughout(writer, blocking=True, timeout=0.3)
    assert not acquired
    attempts = [s for s in sent if s.op is Op.RW_WRITE]
    assert len(attempts) >= 2
    assert all(a.intent_ms > 0 for a in attempts)  # no reader gets in while it waits
    assert [s.notify for s in sent].count(True) == 1
    last = sent[-1]
    assert (last.op, last.token, last.notify) == (Op.RW_RELEASE, attempts[0].token, True)


@pytest.mark.parametrize(("mode", "blocking"), [(Mode.WRITE, False), (Mode.READ, True)])
def test_only_a_waiting_writer_leaves_an_intent(mode: Mode, blocking: bool) -> None:
    hold = state(mode, retry_delay=0.05)
    options: dict[str, object] = {"blocking": blocking, "timeout": 0.2 if blocking else None}
    acquired, sent = refused_throughout(hold, **options)
    assert not acquired
    assert all(s.intent_ms == 0 for s in sent)
    assert not any(s.notify for s in sent)  # each attempt's undo, and no intent to take back


def test_a_waiting_hold_joins_no_queue() -> None:
    """A read-write release names no head of a queue: its waiters watch, never join."""
    writer = state(Mode.WRITE, retry_delay=0.05)
    refused = everywhere(Reply.TAKEN)
    driven = drive(writer.acquire(blocking=True, timeout=0.2, now=0.0), lambda step: refused)
    watches = [step for step in driven.steps if isinstance(step, Watch)]
    assert [w.queued for w in watches] == [False]
    assert Op.QUEUE not in [r.op for r in driven.rounds]


def test_a_writer_refused_before_any_round_has_no_intent_to_take_back() -> None:
    sent = list[Step]()
    flow = state(Mode.WRITE).acquire(blocking=True, timeout=-1.0, now=0.0)
    with pytest.raises(ConfigurationError):
        drive(flow, in_turn(), steps=sent)
    assert sent == []


@pytest.mark.parametrize("mode", [Mode.WRITE, Mode.READ])
def test_an_acquire_that_raises_takes_back_only_a_writers_intent(mode: Mode) -> None:
    """Errors no retry can fix end a blocking acquire with QuorumUnavailable: a writer's
    intent, left by its attempt, is taken back (waking readers); a reader left none."""
    fatal = everywhere(Reply.FATAL)
    sent = list[Step]()
    with pytest.raises(QuorumUnavailable):
        drive(
            state(mode).acquire(blocking=True, timeout=None, now=0.0),
            lambda step: fatal,
            steps=sent,
        )
    rounds = [step for step in sent if isinstance(step, Fanout)]
    intent = rounds[0].intent_ms
    assert (intent > 0) is (mode is Mode.WRITE)
    # the writer's last release: no intent kept, the readers it kept out woken
    notified = [(r.op, r.intent_ms) for r in rounds if r.notify]
    assert notified == ([(Op.RW_RELEASE, 0)] if mode is Mode.WRITE else [])
