"""The sans-I/O flows, driven by a scripted driver: no servers, no clock.

The driver below answers each :class:`Fanout` with replies chosen by the test and with
times the test controls, so every branch of R6, R8, R9 and R10 is checked exactly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    NodeOutcome,
    QuorumUnavailable,
    RedlockConfig,
    Reply,
)
from quorumlock._algorithm.arithmetic import (
    HAND_OVER,
    WAKE_STAGGER_MIN,
    deadline,
    queue_backoff,
    queue_lease_ms,
)
from quorumlock._algorithm.flows import (
    AcquireResult,
    Fanout,
    Flow,
    Op,
    Round,
    Session,
    Sleep,
    Wait,
    Watch,
    Woken,
    acquire_flow,
    announce_cleanup,
    as_cleanup,
    extend_flow,
    line_place,
    refused_while_free,
    release_flow,
    undo_targets,
    woke_the_line,
)
from quorumlock._algorithm.lockstate import LockState, new_token
from quorumlock._algorithm.outcomes import Verdict
from quorumlock._algorithm.rwlock import Mode, RWState
from quorumlock._algorithm.scripts import (
    ACQUIRE,
    ACQUIRE_BODY,
    ACQUIRE_MANY,
    COMMIT_FENCE,
    EXTEND,
    EXTEND_MANY,
    FAIR_ACQUIRE,
    MARKER_KEY,
    PROBE_MANY,
    QUEUED_ACQUIRE,
    RELEASE,
    RELEASE_MANY,
)
from quorumlock._algorithm.wire import (
    HOLDER_PREFIX,
    command_args,
    eval_args,
    interpret,
    queue_answer,
)
from quorumlock._io.packing import RoundPacker, pack

T = TypeVar("T")
G, X, E, F, TO = Reply.GRANTED, Reply.TAKEN, Reply.ERROR, Reply.FATAL, Reply.TIMEOUT


@dataclass
class Script:
    """A fake network: replies per op, a round duration, a clock that only moves forward."""

    n: int
    acquire: Callable[[int], Sequence[Reply]] = lambda attempt: [G] * 5
    release: Reply = Reply.DONE
    extend: Reply = Reply.DONE
    round_time: float = 0.004
    now: float = 1000.0
    # Whether a release is announced during the Wait after attempt N, and how long after
    # the Wait began (None: no announcement, the Wait lasts its full pause).
    announce: Callable[[int], float | None] = lambda attempt: None
    steps: list[Fanout | Sleep | Watch | Wait] = field(default_factory=list)
    attempts: int = 0
    watching: bool = False
    # The process listened on the key since before the failed attempt and heard nothing
    # (a subscription kept from an earlier wait): the Watch answers "nothing missed".
    listening: bool = False

    def run(self, flow: Flow[T]) -> T:
        try:
            step = next(flow)
            while True:
                if isinstance(step, Watch) and step.already:
                    # a process that listens to nothing yet (not recorded in ``steps``)
                    step = flow.send(Woken(self.now, False, listening=False))
                    continue
                self.steps.append(step)
                if isinstance(step, Sleep):
                    assert step.seconds >= 0
                    self.now += step.seconds
                    step = flow.send(self.now)
                    continue
                if isinstance(step, Watch):
                    assert not self.watching, "a flow watches once"
                    self.watching = True
                    self.now += self.round_time
                    step = flow.send(Woken(self.now, not self.listening))
                    continue
                if isinstance(step, Wait):
                    assert self.watching, "a flow waits only after it watched"
                    after = self.announce(self.attempts)
                    notified = after is not None and after < step.seconds
                    self.now += after if after is not None and notified else step.seconds
                    step = flow.send(Woken(self.now, notified))
                    continue
                if step.op is Op.ACQUIRE:
                    self.attempts += 1
                    replies = list(self.acquire(self.attempts))[: self.n]
                elif step.op is Op.RELEASE:
                    replies = [self.release] * self.n
                else:
                    replies = [self.extend] * self.n
                started = self.now
                self.now += self.round_time
                round_ = Round(
                    started,
                    self.now,
                    tuple(NodeOutcome(f"s{i}", r) for i, r in enumerate(replies)),
                )
                step = flow.send(round_)
        except StopIteration as stop:
            result: T = stop.value
            return result

    def ops(self) -> list[str]:
        return [
            s.op.value if isinstance(s, Fanout) else type(s).__name__.lower() for s in self.steps
        ]


def start(flow: Flow[AcquireResult]) -> object:
    """A blocking acquire's first step after the early :class:`Watch` (``already``),
    answered as in a process that listens to nothing yet."""
    early = next(flow)
    assert isinstance(early, Watch)
    assert early.already
    return flow.send(Woken(0.0, False, listening=False))


def state(n: int = 5, ttl_ms: int = 10_000, **options: object) -> LockState:
    return LockState(
        name="orders:42",
        ttl_ms=ttl_ms,
        servers=n,
        config=RedlockConfig(**options),  # type: ignore[arg-type]
        uniform=lambda: 0.5,
    )


def blocking_flow(**options: object) -> Flow[AcquireResult]:
    """A blocking acquire of the lock of ``state(**options)``, from time 0 with no
    timeout, every random draw 0.5."""
    s = state(**options)  # type: ignore[arg-type]
    return acquire_flow(
        key="orders:42", token="t", ttl_ms=s.ttl_ms, config=s.config, blocking=True,
        timeout=None, now=0.0, uniform=lambda: 0.5,
    )  # fmt: skip


def acquire(s: LockState, net: Script, **kwargs: object) -> bool:
    options: dict[str, object] = {"blocking": False, "timeout": None, "now": net.now}
    options.update(kwargs)
    return net.run(s.acquire(**options))  # type: ignore[arg-type]


def test_acquire_sends_set_nx_px_with_one_token_and_the_ttl_in_ms() -> None:
    s, net = state(max_ttl=None), Script(5)
    assert acquire(s, net)
    (step,) = net.steps
    assert isinstance(step, Fanout)
    assert command_args(step) == ("SET", "orders:42", s.token, "NX", "PX", 10_000)
    assert step.timeout == pytest.approx(0.05)  # derived from the ttl (R6 step 2)


def test_a_set_of_names_runs_the_many_scripts_over_the_whole_set() -> None:
    """One atomic step per server over every key of the set, sorted; the acquire keeps
    the acquire script's layout (KEYS[2] the marker, the other keys after it)."""
    keys = ("a", "b", "c")

    def step(op: Op, **fields: object) -> Fanout:
        return Fanout(op, "a", "t", 10_000, 0.05, keys=keys, **fields)  # type: ignore[arg-type]

    acquire = command_args(step(Op.ACQUIRE, max_ttl_ms=30_000), Session("r" * 40, durable=False))
    assert acquire == (
        "EVALSHA", ACQUIRE_MANY.sha, 4, "a", MARKER_KEY, "b", "c", "t", 10_000, 30_000, "0",
        "r" * 40, "0",
    )  # fmt: skip
    assert command_args(step(Op.RELEASE, notify=True)) == (
        "EVALSHA", RELEASE_MANY.sha, 3, "a", "b", "c", "t", "1", "t",
    )  # fmt: skip
    assert command_args(step(Op.EXTEND)) == (
        "EVALSHA", EXTEND_MANY.sha, 3, "a", "b", "c", "t", 10_000,
    )  # fmt: skip
    assert command_args(step(Op.PROBE)) == ("EVALSHA", PROBE_MANY.sha, 3, "a", "b", "c")
    # the fence commit checks one key: the set was set in one step, with one ttl
    assert command_args(step(Op.COMMIT_FENCE, fence=9)) == (
        "EVALSHA", COMMIT_FENCE.sha, 2, "a", MARKER_KEY, "t", 9,
    )  # fmt: skip


def test_what_a_reply_says_about_the_line_of_waiters() -> None:
    """A waiter's attempt ends its answer with its place in line (0: it did not join);
    a release that announces itself answers 2 (it named the head), or 2 + the place it
    gave the releasing process behind it."""
    attempt = Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, member="p1", lease_ms=1200)
    assert attempt.joins
    assert queue_answer(attempt, [0, 0, 0, "holder", 3]) == ([0, 0, 0, "holder"], 3, False)
    assert queue_answer(attempt, [0, 0, 0, "holder", 0]) == ([0, 0, 0, "holder"], None, False)
    assert queue_answer(attempt, 1) == (1, None, False)  # granted: the short answer
    plain = Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, max_ttl_ms=1000)
    assert queue_answer(plain, [0, 0, 0, "holder"]) == ([0, 0, 0, "holder"], None, False)
    release = Fanout(Op.RELEASE, "k", "t", 1000, 0.05, notify=True)
    assert queue_answer(release, 1) == (1, None, False)
    assert queue_answer(release, 2) == (1, None, True)
    behind = dataclasses.replace(release, member="p1")
    assert queue_answer(behind, 4) == (1, 2, True)
    assert queue_answer(behind, 2) == (1, None, True)  # named the head, no place for p1
    assert queue_answer(Fanout(Op.QUEUE, "k", "p1", 1200, 0.05), 3) == (3, 3, False)


def test_acquire_with_the_quarantine_runs_the_acquire_script_naming_the_server() -> None:
    s, net = state(max_ttl=30), Script(5)
    assert acquire(s, net)
    (step,) = net.steps
    assert isinstance(step, Fanout)
    assert step.per_session
    with pytest.raises(ValueError, match="session"):
        command_args(step)
    args = command_args(step, Session("r" * 40, durable=True))
    assert args == (
        "EVALSHA", ACQUIRE.sha, 2, "orders:42", MARKER_KEY, s.token, 10_000, 30_000, "0",
        "r" * 40, "1",
    )  # fmt: skip
    assert eval_args(step, Session("r" * 40))[:2] == ("EVAL", ACQUIRE.source)


def test_a_promoted_replica_is_named_by_its_promotion_whatever_its_durability() -> None:
    """A replica promoted to master may lack its old master's last writes: fsync on the
    replica cannot help, so the promotion, not durability, is what the script is told."""
    s, net = state(max_ttl=30), Script(5)
    assert acquire(s, net)
    (step,) = net.steps
    assert isinstance(step, Fanout)
    for durable in (True, False):
        args = command_args(step, Session("r" * 40, durable=durable, promotion="p" * 40))
        assert args[-2:] == ("r" * 40, "P" + "p" * 40)
    assert command_args(step, Session("r" * 40))[-1] == "0"


def test_deadline_is_start_plus_ttl_minus_drift() -> None:
    s, net = state(), Script(5, now=50.0)
    assert acquire(s, net)
    assert s.deadline == pytest.approx(50.0 + 10.0 - 0.102)
    assert s.validity(net.now) == pytest.approx(10.0 - 0.004 - 0.102)


def test_token_is_40_hex_digits_from_20_random_bytes() -> None:
    tokens = {new_token() for _ in range(1000)}
    assert len(tokens) == 1000
    for token in tokens:
        assert len(token) == 40
        int(token, 16)


def test_each_acquire_uses_a_fresh_token() -> None:
    s, net = state(), Script(5)
    assert acquire(s, net)
    first = s.token
    net.run(s.release())
    assert acquire(s, net)
    assert s.token != first


@pytest.mark.parametrize("n", [1, 3, 5])
def test_failed_attempt_releases_on_all_servers(n: int) -> None:
    # R6 step 5: even servers that answered "taken" get the compare-and-delete.
    s, net = state(n), Script(n, acquire=lambda a: [X] * 5)
    assert not acquire(s, net)
    assert net.ops() == ["acquire", "release"]
    release = net.steps[1]
    assert isinstance(release, Fanout)
    assert release.token == s.token


def test_majority_that_took_too_long_is_refused_and_released() -> None:
    # R6 steps 3 and 5: validity <= 0 means failure even with every grant.
    s, net = state(ttl_ms=1000), Script(5, round_time=0.99)
    assert not acquire(s, net)
    assert net.ops() == ["acquire", "release"]
    assert not s.held


@given(st.floats(min_value=0.0, max_value=2.0))
def test_acquired_iff_round_ends_before_the_deadline(round_time: float) -> None:
    s, net = state(ttl_ms=1000), Script(5, round_time=round_time)
    start = net.now
    ok = acquire(s, net)
    assert ok == (start + round_time < deadline(start, 1000, 0.01))


def test_blocking_acquire_retries_with_jitter_until_it_succeeds() -> None:
    s = state(retry_delay=0.2, wake_on_release=False)
    net = Script(5, acquire=lambda a: [X] * 5 if a < 4 else [G] * 5)
    assert acquire(s, net, blocking=True)
    assert net.ops() == ["acquire", "release", "sleep"] * 3 + ["acquire"]
    sleeps = [st_.seconds for st_ in net.steps if isinstance(st_, Sleep)]
    assert sleeps == [pytest.approx(0.15)] * 3  # uniform() = 0.5 -> in [0.1, 0.2]


def test_jitter_uses_the_random_draw() -> None:
    draws = iter([0.0, 1.0])
    s = LockState(
        name="n",
        ttl_ms=1000,
        servers=3,
        config=RedlockConfig(retry_delay=0.2, wake_on_release=False),
        uniform=lambda: next(draws),
    )
    net = Script(3, acquire=lambda a: [X] * 3 if a < 3 else [G] * 3)
    assert acquire(s, net, blocking=True)
    assert [x.seconds for x in net.steps if isinstance(x, Sleep)] == [
        pytest.approx(0.1),
        pytest.approx(0.2),
    ]


def test_blocking_acquire_stops_at_its_timeout() -> None:
    s, net = state(retry_delay=0.2), Script(5, acquire=lambda a: [X] * 5)
    start = net.now
    assert not acquire(s, net, blocking=True, timeout=1.0)
    # It never sleeps past the timeout, and it gives up once the timeout has passed.
    assert net.now - start <= 1.0 + 2 * net.round_time + 1e-9
    assert net.now - start >= 1.0
    assert net.attempts >= 5


def test_an_attempt_that_ends_at_the_timeout_is_the_last() -> None:
    """The attempt and its undo end exactly at the timeout: no time is left for another.
    Catches one more attempt (and its wait) begun with no time left."""
    s, net = state(), Script(5, acquire=lambda a: [X] * 5, round_time=0.25)
    assert not acquire(s, net, blocking=True, timeout=0.5)
    assert net.ops() == ["acquire", "release"]
    assert net.now == 1000.5


def test_a_waiter_woken_again_and_again_tries_after_each_wake_up_until_its_timeout() -> None:
    """Every release is announced (another process takes the lock each time first): the
    waiter staggers its attempt after each announcement, never past its timeout.
    Catches a stagger stretched to the time left, which sleeps through the later
    announcements, and one that runs past the timeout."""
    s = state(retry_delay=0.2)
    net = Script(5, acquire=lambda a: [X] * 5, announce=lambda attempt: 0.0)
    start_at = net.now
    assert not acquire(s, net, blocking=True, timeout=1.0)
    assert net.now - start_at <= 1.0 + 2 * net.round_time + 1e-9
    assert net.attempts >= 10  # an R8 poll alone would make about 7 (0.15 s each)
    staggers = [step.seconds for step in net.steps if isinstance(step, Sleep)]
    assert staggers
    assert max(staggers) <= 0.2 + 1e-9  # at most one retry_delay


def test_timeout_zero_makes_exactly_one_attempt() -> None:
    s, net = state(), Script(5, acquire=lambda a: [X] * 5)
    assert not acquire(s, net, blocking=True, timeout=0)
    assert net.attempts == 1


def test_retry_count_bounds_the_attempts() -> None:
    s, net = state(retry_count=2), Script(5, acquire=lambda a: [X] * 5)
    assert not acquire(s, net, blocking=True)
    assert net.attempts == 3


def test_non_blocking_makes_one_attempt() -> None:
    s, net = state(), Script(5, acquire=lambda a: [X] * 5)
    assert not acquire(s, net)
    assert net.attempts == 1


def test_timeout_with_non_blocking_is_refused_before_any_round() -> None:
    s, net = state(), Script(5)
    with pytest.raises(ConfigurationError, match="blocking=False"):
        acquire(s, net, blocking=False, timeout=1.0)
    assert net.steps == []


def test_contention_can_raise_lock_not_acquired_with_outcomes() -> None:
    s, net = state(3), Script(3, acquire=lambda a: [G, X, X])
    with pytest.raises(LockNotAcquired) as info:
        acquire(s, net, raise_on_failure=True)
    assert info.value.name == "orders:42"
    assert [o.reply for o in info.value.outcomes] == [G, X, X]
    assert "held by another client" in str(info.value)
    assert not isinstance(info.value, QuorumUnavailable)


def test_unavailable_servers_raise_even_without_raise_on_failure() -> None:
    s, net = state(3), Script(3, acquire=lambda a: [G, E, TO])
    with pytest.raises(QuorumUnavailable, match="too few servers answered") as info:
        acquire(s, net)
    assert "s1: error" in str(info.value)
    assert "s2: timeout" in str(info.value)
    assert net.ops() == ["acquire", "release"]  # the one grant is undone


def test_blocking_acquire_waits_out_unavailability() -> None:
    s, net = state(3), Script(3, acquire=lambda a: [E, E, G] if a < 3 else [G, G, G])
    assert acquire(s, net, blocking=True, timeout=5.0)
    assert net.attempts == 3


def test_fatal_errors_are_raised_at_once_even_when_blocking() -> None:
    s, net = state(3), Script(3, acquire=lambda a: [F, F, G])
    with pytest.raises(QuorumUnavailable, match="too few usable servers"):
        acquire(s, net, blocking=True)
    assert net.attempts == 1


def test_one_fatal_server_of_three_is_tolerated() -> None:
    s, net = state(3), Script(3, acquire=lambda a: [F, G, G])
    assert acquire(s, net)


def test_acquiring_twice_is_a_usage_error() -> None:
    s, net = state(), Script(5)
    assert acquire(s, net)
    with pytest.raises(RuntimeError, match="already held"):
        acquire(s, net)


def test_acquire_again_after_expiry_is_allowed() -> None:
    s, net = state(ttl_ms=1000), Script(5)
    assert acquire(s, net)
    net.now += 5.0
    assert s.validity(net.now) == 0.0
    assert acquire(s, net)


def test_release_compares_and_deletes_on_all_servers() -> None:
    s, net = state(), Script(5)
    acquire(s, net)
    assert net.run(s.release())
    step = net.steps[-1]
    assert isinstance(step, Fanout)
    # "1": announce the release to the waiters (the script publishes only if it deleted)
    queue = ("quorumlock:queue:orders:42", "quorumlock:queue-expiry:orders:42")
    # the queue's keys come last, as arguments: an ACL rule without them still releases
    args = ("EVALSHA", RELEASE.sha, 1, "orders:42", s.token, "1", s.token, "", *queue)
    assert command_args(step) == args
    assert not s.held


@pytest.mark.parametrize(
    ("replies", "expected"),
    [((Reply.DONE,) * 3, True), ((Reply.NOT_HELD,) * 3, False)],
)
def test_release_reports_whether_a_majority_still_held_it(
    replies: tuple[Reply, ...], expected: bool
) -> None:
    s, net = state(3), Script(3, release=replies[0])
    acquire(s, net)
    assert net.run(s.release()) is expected


def test_release_without_holding_is_a_usage_error() -> None:
    s, net = state(), Script(5)
    with pytest.raises(RuntimeError, match="does not hold"):
        net.run(s.release())
    assert net.steps == []


def test_extend_resets_the_ttl_and_recomputes_the_deadline() -> None:
    s, net = state(), Script(5)
    acquire(s, net)
    net.now += 3.0
    started = net.now
    validity = net.run(s.extend(ttl=None, now=net.now))
    step = net.steps[-1]
    assert isinstance(step, Fanout)
    assert command_args(step) == ("EVALSHA", EXTEND.sha, 1, "orders:42", s.token, 10_000)
    assert s.deadline == pytest.approx(started + 10.0 - 0.102)
    assert validity == pytest.approx(10.0 - 0.102)


def test_extend_to_another_ttl() -> None:
    s, net = state(), Script(5)
    acquire(s, net)
    net.run(s.extend(ttl=2.5, now=net.now))
    step = net.steps[-1]
    assert isinstance(step, Fanout)
    assert step.ttl_ms == 2500


def test_extend_waits_no_longer_than_the_remaining_validity() -> None:
    s, net = state(ttl_ms=10_000), Script(5)
    acquire(s, net)
    assert s.deadline is not None
    net.now = s.deadline - 0.01
    net.run(s.extend(ttl=None, now=net.now))
    step = net.steps[-1]
    assert isinstance(step, Fanout)
    assert step.timeout == pytest.approx(0.01)


def test_extend_confirmed_by_a_minority_loses_the_lock_and_releases() -> None:
    s, net = state(3), Script(3, extend=Reply.NOT_HELD)
    acquire(s, net)
    with pytest.raises(LockLost, match="only 0 of 3") as info:
        net.run(s.extend(ttl=None, now=net.now))
    assert info.value.name == "orders:42"
    assert net.ops()[-2:] == ["extend", "release"]
    assert not s.held
    assert s.lost
    # Releasing a lost lock is not an error: it reports False, and still sends the
    # compare-and-delete to every server (R9): a minority may still hold our key.
    assert net.run(s.release()) is False
    assert net.ops()[-1] == "release"
    with pytest.raises(RuntimeError, match="does not hold"):
        net.run(s.release())


def test_extend_after_expiry_never_sends_the_extension() -> None:
    # R10: too late is too late. An extension must never re-create the lock.
    s, net = state(ttl_ms=1000), Script(5)
    acquire(s, net)
    net.now += 2.0
    with pytest.raises(LockLost, match="already run out"):
        net.run(s.extend(ttl=None, now=net.now))
    assert "extend" not in net.ops()


def test_extend_that_ends_after_the_old_deadline_does_not_count() -> None:
    s, net = state(ttl_ms=1000), Script(5, round_time=0.004)
    acquire(s, net)
    assert s.deadline is not None
    net.now = s.deadline - 0.002
    net.round_time = 0.005  # the majority confirms, but after the deadline
    with pytest.raises(LockLost, match="too late"):
        net.run(s.extend(ttl=None, now=net.now))


def test_extend_without_holding_is_a_usage_error() -> None:
    s, net = state(), Script(5)
    with pytest.raises(RuntimeError, match="does not hold"):
        net.run(s.extend(ttl=None, now=net.now))


def test_abandon_deletes_the_attempts_keys() -> None:
    s, net = state(), Script(5)
    acquire(s, net)
    net.run(s.abandon())
    assert net.ops()[-1] == "release"
    assert not s.held


@pytest.mark.parametrize(
    ("op", "raw", "reply"),
    [
        (Op.ACQUIRE, b"OK", Reply.GRANTED),
        (Op.ACQUIRE, "OK", Reply.GRANTED),
        (Op.ACQUIRE, True, Reply.GRANTED),
        (Op.ACQUIRE, None, Reply.TAKEN),
        (Op.RELEASE, 1, Reply.DONE),
        (Op.RELEASE, 0, Reply.NOT_HELD),
        (Op.EXTEND, 1, Reply.DONE),
        (Op.EXTEND, 0, Reply.NOT_HELD),
        (Op.ACQUIRE, b"QUEUED", Reply.ERROR),
        (Op.RELEASE, None, Reply.ERROR),
        (Op.ACQUIRE, [1, 0, 0], Reply.GRANTED),
        (Op.ACQUIRE, [0, 0, 0], Reply.TAKEN),
        (Op.ACQUIRE, [1, 1500, 0], Reply.QUARANTINED),
        (Op.ACQUIRE, [0, 1, 0], Reply.QUARANTINED),
        (Op.ACQUIRE, [1, 0], Reply.ERROR),
        (Op.COMMIT_FENCE, 1, Reply.DONE),
        (Op.COMMIT_FENCE, 0, Reply.NOT_HELD),
    ],
)
def test_interpret_replies(op: Op, raw: object, reply: Reply) -> None:
    assert interpret(op, raw)[0] is reply


def test_interpret_acquire_script_reply_carries_the_fence_and_the_quarantine_left() -> None:
    assert interpret(Op.ACQUIRE, [1, 0, 17]) == (Reply.GRANTED, "", 17, None)
    assert interpret(Op.ACQUIRE, [0, 0, 18]) == (Reply.TAKEN, "", 18, None)
    reply, detail, fence, _ = interpret(Op.ACQUIRE, [1, 2500, 0])
    assert (reply, fence) == (Reply.QUARANTINED, None)
    assert "2.5 s left" in detail
    assert "granted here" in detail


def test_interpret_a_semaphore_and_a_probe_reply() -> None:
    """A semaphore's answer is the slot tried and the free slots, then the acquire
    script's answer for that slot; a probe's is the key's value (its holder's prefix)."""
    holder = "f" * 40
    assert interpret(Op.SEMAPHORE_ACQUIRE, [2, b"0110", 1, 0, 0]) == (
        Reply.GRANTED, "", None, "2:0110",
    )  # fmt: skip
    taken = interpret(Op.SEMAPHORE_ACQUIRE, [1, "0000", 0, 0, 0, holder.encode()])
    assert taken == (Reply.TAKEN, "", None, "1:0000")
    quarantined = interpret(Op.SEMAPHORE_ACQUIRE, [3, b"0001", 1, 900, 0])
    assert (quarantined[0], quarantined[3]) == (Reply.QUARANTINED, "3:0001")
    for malformed in ([2, b"0110", 1, 0], [b"2", b"0110", 1, 0, 0], [2, b"0110", 1, 0, "x"]):
        assert interpret(Op.SEMAPHORE_ACQUIRE, malformed)[0] is Reply.ERROR
    for op in (Op.PROBE, Op.RW_PROBE):
        assert interpret(op, None) == (Reply.NOT_HELD, "", None, None)
        assert interpret(op, holder.encode()) == (Reply.TAKEN, "", None, holder[:HOLDER_PREFIX])
        assert interpret(op, holder) == (Reply.TAKEN, "", None, holder[:HOLDER_PREFIX])


def test_eval_fallback_carries_the_full_source() -> None:
    step = Fanout(Op.EXTEND, "k", "t", 1000, 0.05)
    assert eval_args(step) == ("EVAL", EXTEND.source, 1, "k", "t", 1000)
    with pytest.raises(ValueError, match="script"):
        eval_args(Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05))


def test_all_subsets_of_taken_servers_for_n_1_3_5() -> None:
    # The redsync TestMutexQuorum idea, on the pure flow: acquire succeeds iff the free
    # servers are a majority.
    for n in (1, 3, 5):
        for taken in itertools.chain.from_iterable(
            itertools.combinations(range(n), k) for k in range(n + 1)
        ):
            replies = [X if i in taken else G for i in range(n)]
            s, net = state(n), Script(n, acquire=lambda a, r=replies: r)  # type: ignore[misc]
            assert acquire(s, net) == (n - len(taken) >= n // 2 + 1), (n, taken)


# --------------------------------------------------------------------------------------
# Waking on release (issue 6): subscribe once, retry at once, then wait for announcements
# --------------------------------------------------------------------------------------


def test_first_failure_subscribes_then_retries_at_once_then_waits() -> None:
    s = state(retry_delay=0.2)
    net = Script(5, acquire=lambda a: [X] * 5 if a < 4 else [G] * 5)
    assert acquire(s, net, blocking=True)
    assert net.ops() == [
        "acquire", "release", "watch",  # subscribe after the first failure...
        "acquire", "release", "queue", "wait",  # ...retry at once: no lost release; queue
        "acquire", "release", "queue", "wait",
        "acquire",
    ]  # fmt: skip
    waits = [x.seconds for x in net.steps if isinstance(x, Wait)]
    assert waits == [pytest.approx(0.15)] * 2  # the R8 pause is the fallback


def test_a_process_listening_all_along_joins_and_waits_without_trying_again() -> None:
    """The Watch answers that nothing can have been missed (the process kept its
    subscription from an earlier wait and heard no release since the failed attempt was
    sent): no attempt at once, straight to the queue and the wait."""
    s = state(retry_delay=0.2)
    net = Script(5, acquire=lambda a: [X] * 5 if a < 3 else [G] * 5, listening=True)
    started = net.now
    assert acquire(s, net, blocking=True)
    assert net.ops() == [
        "acquire", "release", "watch", "queue", "wait",
        "acquire", "release", "queue", "wait",
        "acquire",
    ]  # fmt: skip
    watch = next(x for x in net.steps if isinstance(x, Watch))
    assert watch.since == started  # when the failed attempt was sent


def test_a_waiter_that_polls_stands_in_no_line_whatever_its_replies_say() -> None:
    """Without wake_on_release a waiter polls at the R8 pause: a place in line in the
    replies to its attempts (no driver reports one to a waiter that does not listen)
    does not space its polls out."""
    flow = blocking_flow(retry_delay=0.2, wake_on_release=False)
    attempt = next(flow)
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE
    refused = Round(
        0.0, 0.001, tuple(NodeOutcome(f"s{i}", X, holder="other", place=4) for i in range(5))
    )
    pause = flow.send(refused)
    assert isinstance(pause, Sleep)
    assert pause.seconds == pytest.approx(0.15)  # as the head's, not three pauses


def test_non_blocking_acquire_never_subscribes() -> None:
    s, net = state(), Script(5, acquire=lambda a: [X] * 5)
    assert not acquire(s, net)
    assert net.ops() == ["acquire", "release"]


def test_without_wake_on_release_the_flow_only_polls() -> None:
    s = state(wake_on_release=False)
    net = Script(5, acquire=lambda a: [X] * 5 if a < 3 else [G] * 5)
    assert acquire(s, net, blocking=True)
    assert "watch" not in net.ops()
    assert "wait" not in net.ops()


def test_an_announced_release_ends_the_wait_and_the_next_try_follows_within_the_stagger() -> None:
    # Attempt 2 fails; the release is announced 30 ms into the following wait.
    s = state(retry_delay=0.2)
    net = Script(
        5,
        acquire=lambda a: [X] * 5 if a < 3 else [G] * 5,
        announce=lambda attempt: 0.030 if attempt == 2 else None,
    )
    assert acquire(s, net, blocking=True)
    assert net.ops()[-3:] == ["wait", "sleep", "acquire"]
    stagger = net.steps[-2]
    assert isinstance(stagger, Sleep)
    # uniform() = 0.5 and a 4 ms round: half of max(1 ms, 2 x 4 ms) = 4 ms
    assert stagger.seconds == pytest.approx(0.004)


def test_a_wake_up_by_name_tries_at_once_and_joins_again_after_a_failure() -> None:
    # The announcement named this waiter (the head of the queue, taken off it): nobody
    # else was woken, so no stagger; a failed try (someone barged in) puts it back.
    s = state(retry_delay=0.2)
    net = Script(5, acquire=lambda a: [X] * 5 if a < 4 else [G] * 5)
    woken_alone = Woken(0.0, True, alone=True)
    flow = acquire_flow(
        key="orders:42", token="t", ttl_ms=s.ttl_ms, config=s.config, blocking=True,
        timeout=None, now=net.now, uniform=lambda: 0.5,
    )  # fmt: skip
    ops: list[str] = []
    answer: object = None
    step = start(flow)
    with contextlib.suppress(StopIteration):
        while True:
            ops.append(step.op.value if isinstance(step, Fanout) else type(step).__name__)
            if isinstance(step, Wait):
                answer = woken_alone
            elif isinstance(step, Fanout):
                granted = step.op is Op.ACQUIRE and ops.count("acquire") >= 4
                reply = G if granted else X if step.op is Op.ACQUIRE else Reply.DONE
                answer = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", reply) for i in range(5)))
            else:
                answer = Woken(0.0, True)  # the Watch: a new subscription
            step = flow.send(answer)
    assert ops == [
        "acquire", "release", "Watch",
        "acquire", "release", "queue", "Wait",
        "acquire", "release", "queue", "Wait",  # no Sleep: no stagger; joins again
        "acquire",
    ]  # fmt: skip


def test_a_process_that_listens_already_stands_in_line_with_its_first_attempt() -> None:
    """Listening already (a wait of its own ended moments ago): no subscription, no
    attempt at once after the first; a refusal that put it in line on a majority needs
    no join (the driver answers the join without sending it)."""
    flow = blocking_flow(retry_delay=0.2)
    early = next(flow)
    assert isinstance(early, Watch)
    assert early.already
    attempt = flow.send(Woken(0.0, False, listening=True))
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE
    assert attempt.lease_ms == queue_lease_ms(0.2)  # the driver names the entry
    # refused for another holder everywhere (nothing to undo), put in line 4th
    refused = Round(
        0.0, 0.001, tuple(NodeOutcome(f"s{i}", X, holder="other", place=4) for i in range(5))
    )
    join = flow.send(refused)
    assert isinstance(join, Fanout)
    assert join.op is Op.QUEUE
    wait = flow.send(Round(0.001, 0.001, ()))  # in line already: nothing was sent
    assert isinstance(wait, Wait)
    assert wait.seconds == pytest.approx(0.15 * 3)  # the place its attempt was given


def _listening_flow(*, fair: bool = False) -> Flow[AcquireResult]:
    """A blocking acquire (retry_delay 0.2 s, no timeout), past the step that asks the
    driver whether its process listens to the name already."""
    flow = blocking_flow(retry_delay=0.2, fair=fair)
    assert isinstance(next(flow), Watch)
    return flow


@pytest.mark.parametrize(
    ("woke", "first"),
    [(0.001, Op.QUEUE), (HAND_OVER, Op.ACQUIRE), (0.2, Op.ACQUIRE), (None, Op.ACQUIRE)],
)
def test_a_process_whose_release_just_woke_a_waiter_stands_behind_it(
    woke: float | None, first: Op
) -> None:
    """A release of this process woke the head of the line less than HAND_OVER ago: its
    next acquire joins the line and waits, without an attempt that would race the
    waiter it woke; later, or with no such release, it tries first."""
    flow = _listening_flow()
    step = flow.send(Woken(0.0, False, listening=True, woke=woke))
    assert isinstance(step, Fanout)
    assert step.op is first
    if first is Op.QUEUE:
        assert isinstance(flow.send(Round(0.0, 0.001, ())), Wait)
        granted = Round(0.01, 0.011, tuple(NodeOutcome(f"s{i}", G) for i in range(5)))
        attempt = flow.send(Woken(0.01, True, alone=True))
        assert isinstance(attempt, Fanout)
        assert attempt.op is Op.ACQUIRE
        with pytest.raises(StopIteration) as done:
            flow.send(granted)
        assert done.value.value.attempts == 1  # standing in line cost no attempt


def test_a_process_standing_behind_then_woken_with_every_waiter_staggers_the_least() -> None:
    """It stood behind the waiter its release woke, with no attempt of its own: an
    announcement that woke every waiter (not its process by name) has it stagger over
    the smallest spread, as no round of its own was measured yet."""
    flow = _listening_flow()
    join = flow.send(Woken(0.0, False, listening=True, woke=0.001))
    assert isinstance(join, Fanout)
    assert join.op is Op.QUEUE
    assert isinstance(flow.send(Round(0.0, 0.001, ())), Wait)
    stagger = flow.send(Woken(0.01, True))
    assert isinstance(stagger, Sleep)
    assert stagger.seconds == pytest.approx(WAKE_STAGGER_MIN * 0.5)
    attempt = flow.send(0.0105)
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE


@pytest.mark.parametrize(("place", "pauses"), [(None, 1), (2, 1), (4, 3), (9, 3)])
def test_a_process_its_release_put_in_line_polls_as_its_place_says(
    place: int | None, pauses: int
) -> None:
    """The release that woke the head put this process in line too, and said where: the
    acquire that stands behind sends nothing (the driver answers the join at once) and
    waits as a waiter at that place waits (far back, up to three pauses between polls)."""
    flow = _listening_flow()
    join = flow.send(Woken(0.0, False, listening=True, woke=0.001, place=place))
    assert isinstance(join, Fanout)
    assert join.op is Op.QUEUE
    wait = flow.send(Round(0.0, 0.0, ()))  # in line already: nothing was sent
    assert isinstance(wait, Wait)
    assert wait.seconds == pytest.approx(0.15 * pauses)


def test_a_release_stands_its_process_in_line_with_the_entry_lease() -> None:
    """A user's release carries the lease of the entry it may put in line (the driver
    names the entry where the process listens to the name); a fair lock's and a set's
    never do."""
    for fair, keys, lease in (
        (False, (), queue_lease_ms(0.2)),
        (True, (), 0),
        (False, ("a", "b"), 0),
    ):
        s = state(retry_delay=0.2, fair=fair)
        flow = release_flow(key="a", token="t", ttl_ms=s.ttl_ms, config=s.config, keys=keys)
        step = next(flow)
        assert isinstance(step, Fanout)
        assert step.op is Op.RELEASE
        assert step.notify
        assert step.lease_ms == lease


def test_a_fair_acquire_tries_at_once_after_its_release_woke_the_head() -> None:
    """A fair lock's attempt races nobody: the servers refuse it to all but the head of
    the line and put it in line where they refuse it, in the same round. So a process
    whose release just woke the head tries at once, instead of joining and waiting:
    where the head came and went meanwhile, it takes the free lock, where standing
    behind it would head an empty line until its poll."""
    flow = _listening_flow(fair=True)
    step = flow.send(Woken(0.0, False, listening=True, woke=0.001))
    assert isinstance(step, Fanout)
    assert step.op is Op.ACQUIRE
    assert step.fair


@pytest.mark.parametrize(
    ("holders", "nudged"),
    [
        (("", "", "", "h", "h"), True),  # free on a majority: the head is not taking it
        (("", "", "h", "h", "h"), False),  # held by another: its release names the head
        (("", "", None, None, None), False),  # too few said: their state is unknown
    ],
)
def test_a_fair_attempt_refused_while_the_lock_is_free_wakes_the_head(
    holders: tuple[str | None, ...], nudged: bool
) -> None:
    """A fair attempt refused by a majority with nobody holding the lock: the head of
    the line is not taking it (it became the head with no release to name it: a process
    whose waiters come and go moves its entry in the line). The waiter wakes it, with
    the queue script's pass of no entry, then waits as ever."""
    flow = _listening_flow(fair=True)
    attempt = flow.send(Woken(0.0, False, listening=True))
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE
    refused = Round(
        0.0, 0.001, tuple(NodeOutcome(f"s{i}", X, holder=h) for i, h in enumerate(holders))
    )
    assert refused_while_free(refused.outcomes) is nudged
    step = flow.send(refused)
    if nudged:
        assert isinstance(step, Fanout)
        assert step.op is Op.QUEUE
        assert step.token == ""  # no entry of ours leaves the line
        assert step.arrival.startswith("pass ")
        done = tuple(NodeOutcome(f"s{i}", Reply.DONE) for i in range(5))
        step = flow.send(Round(0.001, 0.002, done))
    assert isinstance(step, Fanout | Wait | Watch)
    assert not (isinstance(step, Fanout) and step.arrival.startswith("pass "))


def test_a_fair_attempt_refused_just_after_its_own_release_named_the_head_wakes_nobody() -> None:
    """The process's own release named the head a moment ago: the hand-over is under
    way, and the head is coming. The attempt refused while the lock is free does not
    wake it again (it would on a later attempt)."""
    flow = _listening_flow(fair=True)
    attempt = flow.send(Woken(0.0, False, listening=True, woke=0.001))
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE
    free = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", X, holder="") for i in range(5)))
    step = flow.send(free)
    assert not (isinstance(step, Fanout) and step.arrival.startswith("pass "))
    # the next attempt refused while the lock is free: the head is not coming, wake it
    done = Round(0.001, 0.002, tuple(NodeOutcome(f"s{i}", Reply.DONE) for i in range(5)))
    attempts = 1
    for _ in range(20):
        if isinstance(step, Fanout) and step.arrival.startswith("pass "):
            break
        if isinstance(step, Wait | Watch):
            step = flow.send(Woken(0.3, False))
        elif isinstance(step, Sleep):
            step = flow.send(0.3)
        elif step.op is Op.ACQUIRE:
            attempts += 1
            step = flow.send(free)
        else:
            step = flow.send(done)
    assert isinstance(step, Fanout)
    assert step.arrival.startswith("pass ")
    assert attempts == 2


def test_a_process_that_listens_to_nothing_never_stands_behind() -> None:
    """Not listening, it cannot be woken: whatever its release woke, it tries."""
    flow = _listening_flow()
    step = flow.send(Woken(0.0, False, listening=False, woke=0.001))
    assert isinstance(step, Fanout)
    assert step.op is Op.ACQUIRE


def test_a_release_woke_the_line_when_a_majority_named_its_head() -> None:
    named = [NodeOutcome(f"s{i}", Reply.DONE, woke=i < 3) for i in range(5)]
    assert woke_the_line(named)
    assert not woke_the_line([*named[:2], *(NodeOutcome(f"s{i}", Reply.DONE) for i in range(3))])
    assert not woke_the_line([])
    # one server is a majority of one
    assert woke_the_line([NodeOutcome("s0", Reply.DONE, woke=True)])
    assert not woke_the_line([NodeOutcome("s0", Reply.DONE)])


@pytest.mark.parametrize(
    ("op", "undone_by"),
    [
        (Op.ACQUIRE, Op.RELEASE),
        (Op.RW_READ, Op.RW_RELEASE),
        (Op.RW_WRITE, Op.RW_RELEASE),
        (Op.SEMAPHORE_ACQUIRE, Op.SEMAPHORE_RELEASE),
    ],
)
def test_each_kind_of_attempt_is_undone_by_its_own_release(op: Op, undone_by: Op) -> None:
    """The undo of a failed attempt (R6 step 5) deletes what that kind of acquire
    writes, with the same key, token, set of keys and slots: another kind's release
    would leave the attempt's keys to their ttl."""
    attempt = Fanout(op, "orders:42", "t" * 40, 10_000, 0.05, keys=("a", "b"), permits=3)
    undo = attempt.undo()
    assert undo.op is undone_by
    assert (undo.key, undo.token, undo.ttl_ms) == ("orders:42", "t" * 40, 10_000)
    assert undo.timeout == 0.05
    if op is Op.SEMAPHORE_ACQUIRE:
        assert undo.permits == 3
    else:
        assert undo.keys == ("a", "b")


@pytest.mark.parametrize("final", [True, False])
def test_only_a_renewal_reads_every_reply_of_its_extension(final: bool) -> None:
    """A lease renewal runs in the background and reads the slowest server's reply too;
    a caller's extend() returns once a majority decided it."""
    flow = extend_flow(
        key="orders:42", token="t", ttl_ms=10_000, config=RedlockConfig(), held_until=110.0,
        now=100.0, final=final,
    )  # fmt: skip
    step = next(flow)
    assert isinstance(step, Fanout)
    assert step.op is Op.EXTEND
    assert step.every is not final


@pytest.mark.parametrize("op", [Op.RW_READ, Op.RW_WRITE, Op.SEMAPHORE_ACQUIRE])
def test_the_family_acquires_name_the_server_they_are_sent_to(op: Op) -> None:
    """Their scripts always run the restart quarantine's check, which names the server
    process of each connection: they are packed per connection, like the acquire script."""
    assert Fanout(op, "k", "t", 1000, 0.05).per_session
    assert not Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05).per_session  # a plain SET NX PX
    # with a cap on the ttl, however small, an acquire is the script
    assert Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, max_ttl_ms=1).per_session


def test_a_set_of_names_waits_without_standing_in_any_line() -> None:
    """A multi-resource lock's releases wake every waiter (its scripts have no queue):
    its attempts carry no entry to put in line and it never joins one."""
    config = RedlockConfig(retry_delay=0.2)
    net = Script(5, acquire=lambda attempt: [X] * 5 if attempt < 3 else [G] * 5)
    flow = acquire_flow(
        key="a", token="t", ttl_ms=10_000, config=config, blocking=True, timeout=None,
        now=net.now, uniform=lambda: 0.5, keys=("a", "b"),
    )  # fmt: skip
    result = net.run(flow)
    assert result.verdict is Verdict.ACQUIRED
    attempts = [s for s in net.steps if isinstance(s, Fanout) and s.op is Op.ACQUIRE]
    assert len(attempts) == 3
    assert all(a.lease_ms == 0 and a.keys == ("a", "b") for a in attempts)
    assert "queue" not in net.ops()


def test_the_clean_up_of_an_interrupted_acquire_marks_its_rounds_and_nothing_else() -> None:
    """Every round of the clean-up is marked (it waits for no server never reached), its
    other steps and its answers pass through unchanged."""
    marked = Fanout(Op.RELEASE, "k", "t", 1000, 0.05, cleanup=True)

    def flow() -> Flow[str]:
        first = yield Fanout(Op.RELEASE, "k", "t", 1000, 0.05)
        slept = yield Sleep(0.25)
        second = yield marked
        return f"{first} {slept} {second}"

    cleanup = as_cleanup(flow())
    assert next(cleanup) == marked  # the first round, marked on the way
    assert cleanup.send(1.0) == Sleep(0.25)
    assert cleanup.send(2.0) == marked
    with pytest.raises(StopIteration) as stop:
        cleanup.send(3.0)
    assert stop.value.value == "1.0 2.0 3.0"


def test_a_requeue_wake_up_joins_and_waits_on_without_trying() -> None:
    flow = blocking_flow(retry_delay=0.2)
    taken = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", X) for i in range(5)))
    done = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", Reply.DONE) for i in range(5)))
    assert start(flow).op is Op.ACQUIRE  # type: ignore[attr-defined]
    assert flow.send(taken).op is Op.RELEASE  # type: ignore[union-attr]
    assert isinstance(flow.send(done), Watch)
    assert flow.send(Woken(0.001, True)).op is Op.ACQUIRE  # type: ignore[union-attr]
    assert flow.send(taken).op is Op.RELEASE  # type: ignore[union-attr]
    assert flow.send(done).op is Op.QUEUE  # type: ignore[union-attr]
    wait = flow.send(done)
    assert isinstance(wait, Wait)
    assert flow.send(Woken(0.01, True, requeue=True)).op is Op.QUEUE  # type: ignore[union-attr]
    later = Round(0.05, 0.06, done.outcomes)
    again = flow.send(later)
    assert isinstance(again, Wait)  # waits on, for the rest of its pause
    assert again.seconds == pytest.approx(wait.seconds - 0.059)


def _first_pause(flow: Flow[AcquireResult]) -> Wait:
    """A listening waiter's first attempt (sent at 0.0, refused by another holder
    everywhere), its join (0.001 to 0.002), and the pause after them: 0.15 s."""
    taken = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", X, holder="other") for i in range(5)))
    attempt = flow.send(Woken(0.0, False, listening=True))
    assert isinstance(attempt, Fanout)
    assert attempt.op is Op.ACQUIRE
    join = flow.send(taken)
    assert isinstance(join, Fanout)
    assert join.op is Op.QUEUE
    wait = flow.send(Round(0.001, 0.002, ()))
    assert isinstance(wait, Wait)
    assert wait.seconds == pytest.approx(0.15)
    return wait


def test_a_requeue_wake_up_at_the_end_of_the_pause_tries_again() -> None:
    """Woken to stand in line for another waiter of its process just as its own pause
    ends: no join and no wait of nothing, the next attempt."""
    flow = _listening_flow()
    wait = _first_pause(flow)
    again = flow.send(Woken(0.002 + wait.seconds, True, requeue=True))
    assert isinstance(again, Fanout)
    assert again.op is Op.ACQUIRE


@pytest.mark.parametrize(
    ("timeout", "retry_count", "longer"),
    [(None, None, math.inf), (2.0, None, 2.0 - 0.002 - 0.15), (None, 3, 0.0), (2.0, 3, 0.0)],
)
def test_a_waiter_may_wait_on_past_its_pause_up_to_its_timeout(
    timeout: float | None, retry_count: int | None, longer: float
) -> None:
    """A waiter's pause may go on while another waiter of its process polls for it (the
    driver knows whether one does): up to its timeout, or for good without one; not at
    all with a retry count, which each acquire spends on its own attempts."""
    s = state(retry_delay=0.2, retry_count=retry_count)
    flow = acquire_flow(
        key="orders:42", token="t", ttl_ms=s.ttl_ms, config=s.config, blocking=True,
        timeout=timeout, now=0.0, uniform=lambda: 0.5,
    )  # fmt: skip
    assert isinstance(next(flow), Watch)
    assert _first_pause(flow).longer == pytest.approx(longer)
    # woken to stand in line for another waiter of the process: the rest of the wait
    # may go on as long
    join = flow.send(Woken(0.05, True, requeue=True))
    assert isinstance(join, Fanout)
    assert join.op is Op.QUEUE
    rest = flow.send(Round(0.05, 0.06, ()))
    assert isinstance(rest, Wait)
    assert rest.seconds == pytest.approx(0.152 - 0.06)
    assert rest.longer == pytest.approx(longer)


def test_the_stagger_grows_with_each_announcement_that_brought_no_lock() -> None:
    s = state(retry_delay=0.2)
    net = Script(
        5,
        acquire=lambda a: [X] * 5 if a < 12 else [G] * 5,
        announce=lambda attempt: 0.001,  # every wait is cut short: others keep winning
    )
    assert acquire(s, net, blocking=True)
    staggers = [x.seconds for x in net.steps if isinstance(x, Sleep)]
    assert staggers == [pytest.approx(min(0.004 * 2**k, 0.1)) for k in range(len(staggers))]


def test_the_stagger_never_outlasts_the_timeout() -> None:
    s = state(retry_delay=0.2)
    net = Script(5, acquire=lambda a: [X] * 5, announce=lambda attempt: 0.001)
    start = net.now
    assert not acquire(s, net, blocking=True, timeout=0.5)
    assert net.now - start <= 0.5 + 2 * net.round_time + 1e-9


def test_the_subscription_wait_is_bounded_by_the_timeout() -> None:
    s = state(connect_timeout=5.0)
    net = Script(5, acquire=lambda a: [X] * 5)
    acquire(s, net, blocking=True, timeout=0.3)
    watch = next(x for x in net.steps if isinstance(x, Watch))
    assert watch.key == "orders:42"
    assert watch.timeout <= 0.3


def outcome_of(i: int, spec: str) -> NodeOutcome:
    """``"G"`` granted, ``"E"`` error, ``"Q"`` quarantined, ``"T"`` timeout, and
    ``"a"``, ``"b"``, ... TAKEN by that holder (``"X"``: taken, holder not said)."""
    fixed = {"G": Reply.GRANTED, "E": Reply.ERROR, "Q": Reply.QUARANTINED, "T": Reply.TIMEOUT}
    if spec in fixed:
        return NodeOutcome(f"s{i}", fixed[spec])
    return NodeOutcome(f"s{i}", Reply.TAKEN, holder=None if spec == "X" else spec)


@pytest.mark.parametrize(
    ("replies", "announce"),
    [
        ("GGabc", True),  # 5 servers, 2-1-1-1: nobody has a majority, our undo may free it
        ("GGaab", True),  # 2-2-1 split
        ("Gaabb", True),  # 1-2-2 split
        ("GGaaa", False),  # a holds a majority: waking the others is useless
        ("aaabb", False),
        ("GGXXX", False),  # holders not said: counted as one, a majority
        ("GGGXX", True),  # (would have been acquired: the rule itself is pure)
        ("GGabE", False),  # a server did not answer: its state is unknown
        ("GGabQ", False),  # a server in quarantine
        ("GGabT", False),
        ("Gab", True),  # 3 servers, 1-1-1
        ("Gaa", False),
        ("G", True),  # one server: granted is a majority
        ("a", False),
        ("GGGaaab", True),  # 7 servers, 3-3-1
        ("GaaaaXX", False),  # a has 4 of 7
    ],
)
def test_announce_cleanup_cases(replies: str, announce: bool) -> None:
    outcomes = tuple(outcome_of(i, r) for i, r in enumerate(replies))
    assert announce_cleanup(outcomes) is announce


@given(st.lists(st.sampled_from("GEQTXabc"), min_size=1, max_size=9))
def test_announce_cleanup_iff_every_server_answered_and_no_holder_has_a_majority(
    replies: list[str],
) -> None:
    outcomes = tuple(outcome_of(i, r) for i, r in enumerate(replies))
    answered = all(r not in "EQT" for r in replies)
    biggest = max((replies.count(h) for h in "Xabc"), default=0)
    expected = answered and biggest < len(replies) // 2 + 1
    assert announce_cleanup(outcomes) is expected


@pytest.mark.parametrize(("replies", "announce"), [("GGaab", True), ("GGaaa", False)])
def test_the_undo_of_a_failed_attempt_carries_the_announce_rule(
    replies: str, announce: bool
) -> None:
    outcomes = tuple(outcome_of(i, r) for i, r in enumerate(replies))
    flow = state().acquire(blocking=False, timeout=None, now=0.0)
    assert isinstance(next(flow), Fanout)
    undo = flow.send(Round(0.0, 0.004, outcomes))
    assert isinstance(undo, Fanout)
    assert undo.op is Op.RELEASE
    assert undo.notify is announce


def test_interpret_keeps_a_prefix_of_the_holders_token() -> None:
    reply, _, _, holder = interpret(Op.ACQUIRE, [0, 0, 0, b"f" * 40])
    assert reply is Reply.TAKEN
    assert holder == "f" * HOLDER_PREFIX
    assert interpret(Op.ACQUIRE, [1, 0, 0])[3] is None


def test_a_fair_acquire_packs_the_callers_entry_after_the_session() -> None:
    session = Session("abc", durable=True)
    step = Fanout(
        Op.ACQUIRE, "k", "t", 1000, 0.05, 60_000, fair=True, member="m1", arrival="12.5",
        lease_ms=1200,
    )  # fmt: skip
    args = command_args(step, session)
    assert args[:4] == ("EVALSHA", FAIR_ACQUIRE.sha, 4, "k")
    # the entry, its arrival and its lease: where refused, it stands in line
    assert args[-5:] == ("abc", "1", "m1", "12.5", 1200)
    assert RoundPacker(step).packed(session) == pack(args)
    assert eval_args(step, session)[:2] == ("EVAL", FAIR_ACQUIRE.source)


@pytest.mark.parametrize("max_ttl_ms", [60_000, 0], ids=["quarantine", "no quarantine"])
def test_a_queued_waiters_acquire_names_its_entry_and_the_queue(max_ttl_ms: int) -> None:
    """A waiter in line sends the queued acquire script (even with the quarantine and
    fencing off, which would send the plain SET), its entry after the session."""
    session = Session("abc", durable=False)
    step = Fanout(
        Op.ACQUIRE, "k", "t", 1000, 0.05, max_ttl_ms, member="m1", arrival="12.5", lease_ms=1200
    )
    assert step.per_session
    args = command_args(step, session)
    assert args[:6] == ("EVALSHA", QUEUED_ACQUIRE.sha, 2, "k", MARKER_KEY, "t")
    # the queue's keys as arguments (undeclared: see the script), after the session, then
    # the entry, its arrival and its lease: where refused, it stands in line
    queue = ("quorumlock:queue:k", "quorumlock:queue-expiry:k")
    assert args[-7:] == ("abc", "0", *queue, "m1", "12.5", 1200)
    assert RoundPacker(step).packed(session) == pack(args)
    assert eval_args(step, session)[:2] == ("EVAL", QUEUED_ACQUIRE.source)
    # without an entry, the acquire of before
    plain = Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, 60_000)
    assert command_args(plain, session)[:3] == ("EVALSHA", ACQUIRE.sha, 2)


def test_the_queued_acquire_is_the_acquire_script_run_as_a_function() -> None:
    """Derived, not copied: the acquire body runs unchanged, inside a function whose
    reply decides whether the entry leaves the queue."""
    head, found, tail = QUEUED_ACQUIRE.source.partition(ACQUIRE_BODY)
    assert found
    assert head.rstrip().endswith("local quorumlock_reply = (function()")
    assert tail.startswith("end)()\nlocal quorumlock_place = 0\n")
    assert "if quorumlock_reply[1] == 1 then" in tail
    # its usual grant answers short, as ACQUIRE's does; the place follows otherwise
    assert tail.endswith(
        "if quorumlock_reply[1] == 1 and quorumlock_reply[2] == 0 and quorumlock_reply[3] == 0"
        " then\n    return 1\nend\n"
        "quorumlock_reply[#quorumlock_reply + 1] = quorumlock_place\nreturn quorumlock_reply\n"
    )
    # and so is the fair acquire, behind the queue's check
    head, found, tail = FAIR_ACQUIRE.source.partition(ACQUIRE_BODY)
    assert found
    assert head.rstrip().endswith("return quorumlock_joined((function()")
    assert tail == "end)())\n"


def test_the_acquire_script_is_its_body_with_a_short_usual_answer() -> None:
    """ACQUIRE runs the body that the derived scripts embed, all but its last line: the
    table it answers is kept for the unusual answers, after the short one."""
    last = "return {granted, left, fence, holder}\n"
    assert ACQUIRE_BODY.endswith(last)
    kept = ACQUIRE_BODY[: -len(last)]
    assert ACQUIRE.source.startswith(kept)
    short = ACQUIRE.source[len(kept) :]
    assert "if granted == 1 and fence == 0 then\n    return 1\nend\n" in short
    assert short.endswith(last)


@pytest.mark.parametrize(
    ("places", "backoff"),
    [
        ((1, 1, 1, 1, 1), 1),  # the head polls as before
        ((2, 2, 2, 3, 3), 1),  # and so does the next
        ((4, 4, 4, 4, 4), 3),
        ((9, 9, 9, 9, 9), 3),  # at most QUEUE_BACKOFF_MAX pauses
        ((1, 2, 9, 9, 9), 3),  # a majority puts it at 9 or ahead: 9
        ((1, 2, 3, 9, 9), 2),
        ((4, 4, 4, None, None), 3),  # exactly a majority answered: known
        ((9, 9, None, None, None), 1),  # fewer than a majority answered: unknown
    ],
)
def test_a_waiter_far_back_in_line_polls_less_often(
    places: tuple[int | None, ...], backoff: int
) -> None:
    """The pause after a join is the R8 pause times :func:`queue_backoff` of the place a
    majority reported; the head and the next poll as often as ever."""
    flow = blocking_flow(retry_delay=0.2)
    taken = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", X) for i in range(5)))
    done = Round(0.0, 0.001, tuple(NodeOutcome(f"s{i}", Reply.DONE) for i in range(5)))
    joined = Round(
        0.0,
        0.001,
        tuple(
            NodeOutcome(f"s{i}", Reply.DONE, place=p)
            if p is not None
            else NodeOutcome(f"s{i}", Reply.TIMEOUT)
            for i, p in enumerate(places)
        ),
    )
    assert start(flow).op is Op.ACQUIRE  # type: ignore[attr-defined]
    assert flow.send(taken).op is Op.RELEASE  # type: ignore[union-attr]
    assert isinstance(flow.send(done), Watch)
    assert flow.send(Woken(0.001, True)).op is Op.ACQUIRE  # type: ignore[union-attr]
    assert flow.send(taken).op is Op.RELEASE  # type: ignore[union-attr]
    assert flow.send(done).op is Op.QUEUE  # type: ignore[union-attr]
    wait = flow.send(joined)
    assert isinstance(wait, Wait)
    # uniform() = 0.5: the R8 pause is 0.15 s
    assert wait.seconds == pytest.approx(0.15 * backoff)
    assert queue_backoff(line_place(joined.outcomes)) == backoff


# --------------------------------------------------------------------------------------
# the undo of a failed attempt (R6 step 5): only where a grant of ours may be
# --------------------------------------------------------------------------------------

OURS = "0123456789abcdef" + "0" * 24  # a token; its prefix is what a refusal names


def undo_case(i: int, spec: str) -> NodeOutcome:
    """``outcome_of``, and ``"o"``: TAKEN, naming our own token (an earlier grant)."""
    if spec == "o":
        return NodeOutcome(f"s{i}", Reply.TAKEN, holder=OURS[:HOLDER_PREFIX])
    return outcome_of(i, spec)


@pytest.mark.parametrize(
    ("replies", "targets"),
    [
        ("aaaaa", "....."),  # refused by another holder everywhere: no undo at all
        ("aabbc", "....."),
        ("GGaaa", "UU..."),  # undo the grants only
        ("aaaaT", "....U"),  # no reply: a grant may have been written
        ("aaaaE", "....U"),
        ("aaaaQ", "....U"),  # quarantined: the script may have granted ("granted here")
        ("aaaaX", "....U"),  # the plain SET NX names no holder: it may be our own key
        ("aaaao", "....U"),  # our own token: an earlier attempt's grant, reply lost
        ("GGGGG", "UUUUU"),
    ],
)
def test_undo_targets_cases(replies: str, targets: str) -> None:
    outcomes = tuple(undo_case(i, r) for i, r in enumerate(replies))
    assert undo_targets(outcomes, OURS) == tuple(t == "U" for t in targets)


@given(st.lists(st.sampled_from("GEQTXabco"), min_size=1, max_size=9))
def test_undo_targets_skips_exactly_the_refusals_naming_another_holder(
    replies: list[str],
) -> None:
    outcomes = tuple(undo_case(i, r) for i, r in enumerate(replies))
    assert undo_targets(outcomes, OURS) == tuple(r not in "abc" for r in replies)


def first_undo(s: LockState, replies: str) -> Fanout | None:
    """Run one non-blocking attempt of ``s`` answered by ``replies``; its undo, if any."""
    flow = s.acquire(blocking=False, timeout=None, now=0.0)
    step = next(flow)
    assert isinstance(step, Fanout)
    assert step.token == s.token
    ours = (s.token or "")[:HOLDER_PREFIX]
    outcomes = tuple(
        NodeOutcome(f"s{i}", Reply.TAKEN, holder=ours) if r == "o" else outcome_of(i, r)
        for i, r in enumerate(replies)
    )
    try:
        undo = flow.send(Round(0.0, 0.004, outcomes))
    except StopIteration:
        return None
    assert isinstance(undo, Fanout)
    with pytest.raises(StopIteration):
        flow.send(Round(0.004, 0.008, outcomes))
    return undo


def test_a_refusal_by_other_holders_everywhere_has_no_undo_round() -> None:
    assert first_undo(state(), "aabbc") is None


def test_the_undo_targets_only_the_servers_that_may_hold_a_grant_of_ours() -> None:
    undo = first_undo(state(), "GaaTo")
    assert undo is not None
    assert undo.op is Op.RELEASE
    assert undo.targets == (True, False, False, True, True)
    assert undo.until == 0.0  # an undo waits for no server's first contact


def test_an_undo_of_every_server_targets_all_of_them_plainly() -> None:
    undo = first_undo(state(), "GGXXX")
    assert undo is not None
    assert undo.targets == ()


def test_a_read_write_hold_undoes_every_server_whatever_they_answered() -> None:
    rw = RWState(
        name="orders:42",
        ttl_ms=10_000,
        servers=5,
        config=RedlockConfig(),
        uniform=lambda: 0.5,
        mode=Mode.WRITE,
    )
    undo = first_undo(rw, "aabbc")
    assert undo is not None
    assert undo.op is Op.RW_RELEASE
    assert undo.targets == ()


def test_the_rounds_of_a_name_the_process_takes_turns_on_are_contended() -> None:
    """A waiter's attempt, a fair one, a release that puts the process in line, and a
    join, leave or pass are contended (they never busy-poll); a plain acquire, a
    release that stands nowhere, an extension are not."""
    plain = Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05)
    assert not plain.contended
    assert not Fanout(Op.RELEASE, "k", "t", 1000, 0.05, notify=True).contended
    assert not Fanout(Op.EXTEND, "k", "t", 1000, 0.05).contended
    assert Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, member="m", arrival="1.0").contended
    assert Fanout(Op.ACQUIRE, "k", "t", 1000, 0.05, fair=True, member="m").contended
    assert Fanout(Op.RELEASE, "k", "t", 1000, 0.05, notify=True, member="m").contended
    for arrival in ("1.0", "-", "pass m:1"):
        assert Fanout(Op.QUEUE, "k", "m", 1000, 0.05, arrival=arrival).contended


INTERRUPTED_PACKING = """
import random, signal, time
from quorumlock._io.packing import pack

signal.signal(signal.SIGALRM, signal.default_int_handler)  # Ctrl-C's KeyboardInterrupt
args = ("EVALSHA", "a" * 40, 1, "orders:42", "0123456789abcdef" * 2, 30000, -1, 2**70)
end = time.monotonic() + 3.0
while time.monotonic() < end:
    try:
        signal.setitimer(signal.ITIMER_REAL, random.uniform(0.00001, 0.0002))
        for _ in range(50):
            pack(args)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except KeyboardInterrupt:
        pass
signal.setitimer(signal.ITIMER_REAL, 0)
"""


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer")
def test_a_keyboard_interrupt_while_a_command_is_packed_is_no_crash() -> None:
    """A KeyboardInterrupt (or a signal handler's exception) that comes while a command
    with numbers is packed is raised like any other: hiredis's packer crashed the
    interpreter (SIGSEGV) when one came while it turned a number into text."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_PACKING], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


def test_numbers_are_packed_as_their_decimal_text() -> None:
    args = ("SET", "k", 1, -1, 0, 2**70, b"x", "é")
    assert pack(args) == pack(tuple(str(a) if isinstance(a, int) else a for a in args))
    assert pack(("PX", 30000)) == b"*2\r\n$2\r\nPX\r\n$5\r\n30000\r\n"
