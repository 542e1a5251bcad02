"""Fencing tokens and the restart quarantine: the pure parts.

No servers and no clock: :func:`draw_fence` and :func:`fence_committed` on outcomes
built by hand, ``judge_acquire``'s ``QUARANTINED`` verdict, the acquire flow's commit
round driven by a scripted network, and ``max_ttl``: its validation and the cap it puts
on every ttl. Each test names, in its docstring, the removal or mistake it would catch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import ConfigurationError, NodeOutcome, QuorumUnavailable, RedlockConfig, Reply
from quorumlock._algorithm.arithmetic import deadline, quorum
from quorumlock._algorithm.fencing import draw_fence, fence_committed
from quorumlock._algorithm.flows import (
    AcquireResult,
    Fanout,
    Flow,
    Op,
    Sleep,
    Wait,
    acquire_flow,
)
from quorumlock._algorithm.lockstate import LockState
from quorumlock._algorithm.outcomes import Verdict, judge_acquire
from tests.core.scripted import Step, drive

T = TypeVar("T")
G, X, Q = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED
E, F, TO = Reply.ERROR, Reply.FATAL, Reply.TIMEOUT
DONE, NOT_HELD = Reply.DONE, Reply.NOT_HELD
ACQUIRE_REPLIES = [G, X, Q, E, F, TO]


def out(reply: Reply, fence: int | None = None, index: int = 0) -> NodeOutcome:
    return NodeOutcome(f"s{index}", reply, fence=fence)


def outs(*pairs: tuple[Reply, int | None]) -> tuple[NodeOutcome, ...]:
    return tuple(out(reply, fence, i) for i, (reply, fence) in enumerate(pairs))


acquire_pairs = st.tuples(st.sampled_from(ACQUIRE_REPLIES), st.none() | st.integers(1, 2**53))
acquire_outcomes = st.lists(acquire_pairs, min_size=1, max_size=7).map(lambda pairs: outs(*pairs))


@st.composite
def outcomes_with_a_counted_grant(draw: st.DrawFn) -> tuple[NodeOutcome, ...]:
    """Like ``acquire_outcomes``, with a grant that drew a counter among them (at a
    drawn place): drawn at random, most lists have none, and filtering them out made
    Hypothesis give up on some seeds."""
    pairs = draw(st.lists(acquire_pairs, max_size=6))
    at = draw(st.integers(0, len(pairs)))
    pairs.insert(at, (G, draw(st.integers(1, 2**53))))
    return outs(*pairs)


# --------------------------------------------------------------------------------------
# draw_fence: the token is the largest counter among the counted grants
# --------------------------------------------------------------------------------------


def test_draw_fence_follows_the_docs_timeline() -> None:
    """docs/safety.md: A's counters x=7 y=7 z=6 give token 7, stuck on x and y at once;
    B's grants y=8 z=7 give 8, on y alone: a commit round is needed. Catches a token taken
    from the smallest or the first counter, and a 'stuck' that ignores the majority."""
    assert draw_fence(outs((G, 7), (G, 7), (G, 6))) == (7, True)
    assert draw_fence(outs((X, 9), (G, 8), (G, 7))) == (8, False)
    assert draw_fence(outs((G, 3), (G, 2), (G, 1))) == (3, False)
    assert draw_fence([out(G, 5)]) == (5, True)  # N = 1: the one server is the majority


def test_draw_fence_ignores_counters_of_servers_that_did_not_count() -> None:
    """A quarantined server's grant does not count, and neither does its counter; a taken
    or failed server's counter says nothing about our acquisition. Catches a token drawn
    over every outcome (a quarantined or taken server could then make it jump and the
    'stuck' test would count servers that never granted)."""
    assert draw_fence(outs((G, 5), (G, 5), (Q, 99))) == (5, True)
    assert draw_fence(outs((G, 5), (X, 50), (G, 4))) == (5, False)
    assert draw_fence(outs((G, 5), (Q, 5), (G, 4))) == (5, False)


@pytest.mark.parametrize(
    "outcomes",
    [
        outs((G, None), (G, None), (G, None)),
        outs((Q, 3), (X, 4), (E, None)),
        [out(X, 1)],
    ],
)
def test_draw_fence_needs_a_counted_grant_with_a_counter(outcomes: Sequence[NodeOutcome]) -> None:
    """Catches a token of 0 (or a max() crash) handed out when no counted grant drew one."""
    with pytest.raises(ValueError, match="fencing counter"):
        draw_fence(outcomes)


@given(acquire_outcomes)
def test_draw_fence_properties(outcomes: tuple[NodeOutcome, ...]) -> None:
    """The token is a counter of a counted grant, no counted grant has a larger one, and
    it is stuck exactly when a majority of all servers granted at the token."""
    counted = [o.fence for o in outcomes if o.reply is G and o.fence is not None]
    if not counted:
        with pytest.raises(ValueError, match="fencing counter"):
            draw_fence(outcomes)
        return
    token, stuck = draw_fence(outcomes)
    assert token in counted
    assert all(fence <= token for fence in counted)
    at_token = sum(1 for o in outcomes if o.reply is G and o.fence == token)
    assert stuck is (at_token >= quorum(len(outcomes)))


# --------------------------------------------------------------------------------------
# fence_committed: after the commit round, a majority of granting servers hold the token
# --------------------------------------------------------------------------------------


def test_fence_committed_counts_servers_at_the_token_and_confirmed_commits() -> None:
    """x already at 9 counts without its commit reply; y confirmed the commit. Catches a
    check that needs every commit reply, or that ignores the servers already in step."""
    acquired = outs((G, 9), (G, 7), (X, 3))
    assert fence_committed(acquired, outs((TO, None), (DONE, None), (DONE, None)), 9)
    assert not fence_committed(acquired, outs((TO, None), (NOT_HELD, None), (DONE, None)), 9)
    assert not fence_committed(acquired, outs((DONE, None), (TO, None), (DONE, None)), 9)


def test_fence_committed_never_counts_a_server_whose_grant_did_not_count() -> None:
    """A quarantined server that granted here confirms the commit (our key is there), yet
    its grant did not count, so it cannot make the token stick. Catches a check that
    counts every DONE of the commit round."""
    acquired = outs((G, 9), (G, 7), (Q, 2))
    committed = outs((DONE, None), (NOT_HELD, None), (DONE, None))
    assert not fence_committed(acquired, committed, 9)
    assert fence_committed(acquired, outs((DONE, None), (DONE, None), (TO, None)), 9)


def test_fence_committed_draws_the_token_when_not_given() -> None:
    acquired = outs((G, 9), (G, 7), (G, 7))
    assert fence_committed(acquired, outs((TO, None), (DONE, None), (TO, None)))
    assert not fence_committed(acquired, outs((TO, None), (TO, None), (TO, None)))


def test_fence_committed_needs_the_same_servers_in_both_rounds() -> None:
    with pytest.raises(ValueError, match="same servers"):
        fence_committed(outs((G, 1), (G, 1), (G, 1)), outs((DONE, None), (DONE, None)), 1)


@given(outcomes_with_a_counted_grant(), st.data())
def test_fence_committed_properties(outcomes: tuple[NodeOutcome, ...], data: st.DataObject) -> None:
    """Stuck iff a majority of all servers granted and either were at the token or
    confirmed the commit; a failed or refused commit reply never adds a server."""
    token = max(o.fence for o in outcomes if o.reply is G and o.fence is not None)
    commits = data.draw(
        st.lists(
            st.sampled_from([DONE, NOT_HELD, E, TO]),
            min_size=len(outcomes),
            max_size=len(outcomes),
        )
    )
    committed = tuple(out(reply, None, i) for i, reply in enumerate(commits))
    stuck = sum(
        1
        for got, commit in zip(outcomes, commits, strict=True)
        if got.reply is G and (got.fence == token or commit is DONE)
    )
    assert fence_committed(outcomes, committed, token) is (stuck >= quorum(len(outcomes)))
    nothing = tuple(out(TO, None, i) for i in range(len(outcomes)))
    assert fence_committed(outcomes, nothing, token) is draw_fence(outcomes)[1]


# --------------------------------------------------------------------------------------
# judge_acquire: the QUARANTINED verdict
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replies", "verdict"),
    [
        ([X, Q, Q], Verdict.QUARANTINED),  # docs/safety.md, t = 5: B refused
        ([G, Q, Q], Verdict.QUARANTINED),
        ([E, Q, X], Verdict.QUARANTINED),  # one answer, one quarantined: 2 of 2 needed
        ([Q, Q, Q], Verdict.QUARANTINED),
        ([G, G, Q], Verdict.ACQUIRED),  # the quarantined grant is not needed
        ([G, X, Q], Verdict.CONTENDED),  # a majority answered: someone else holds it
        ([TO, TO, Q], Verdict.UNAVAILABLE),  # even counted, too few would have answered
        ([F, F, Q], Verdict.FATAL),
        ([G, G, Q, TO, TO], Verdict.QUARANTINED),
        ([G, G, Q, Q, X], Verdict.CONTENDED),
        ([G, G, G, Q, Q], Verdict.ACQUIRED),
        ([Q], Verdict.QUARANTINED),
    ],
)
def test_judge_acquire_quarantined_verdict(replies: list[Reply], verdict: Verdict) -> None:
    """Catches a quarantined grant that counts (first rows would be ACQUIRED) and a
    quarantine reported as plain unavailability (no 'restart quarantine' for the user)."""
    outcomes = [out(reply, None, i) for i, reply in enumerate(replies)]
    assert judge_acquire(outcomes, in_time=True) is verdict


def test_quarantine_never_turns_a_late_quorum_into_another_verdict() -> None:
    """With a majority of counted grants, a round that ran out of validity is EXPIRED,
    whatever the quarantined servers said."""
    outcomes = [out(G, None, 0), out(G, None, 1), out(Q, None, 2)]
    assert judge_acquire(outcomes, in_time=False) is Verdict.EXPIRED


@given(st.lists(st.sampled_from(ACQUIRE_REPLIES), min_size=1, max_size=7), st.booleans())
def test_quarantined_verdict_means_the_quarantine_alone_kept_a_majority_out(
    replies: list[Reply], in_time: bool
) -> None:
    """QUARANTINED iff the round is not decided otherwise (acquired, expired, contended,
    fatal) and would have been a plain refusal (CONTENDED) had each quarantined server
    answered 'taken'. A round without quarantined servers is never QUARANTINED, and a
    quarantined grant never counts: turning it into a refusal changes nothing else."""
    outcomes = [out(reply, None, i) for i, reply in enumerate(replies)]
    verdict = judge_acquire(outcomes, in_time=in_time)
    as_taken = [replace(o, reply=X) if o.reply is Q else o for o in outcomes]
    taken_verdict = judge_acquire(as_taken, in_time=in_time)
    if Q not in replies:
        assert verdict is not Verdict.QUARANTINED
    if verdict is Verdict.QUARANTINED:
        assert taken_verdict is Verdict.CONTENDED
    elif taken_verdict is not Verdict.CONTENDED:
        assert verdict is taken_verdict
    if verdict in (Verdict.ACQUIRED, Verdict.EXPIRED):
        granted = sum(1 for r in replies if r is G)
        assert granted >= quorum(len(replies))


# --------------------------------------------------------------------------------------
# the acquire flow: the commit round, only when the counters disagree
# --------------------------------------------------------------------------------------


Responder = Callable[[Fanout, int], Sequence[NodeOutcome]]


@dataclass
class Network:
    """A scripted network: ``respond(step, attempt)`` gives each round's outcomes, and
    ``duration(step)`` how long it took; its clock carries on from one run to the next."""

    respond: Responder
    duration: Callable[[Fanout], float] = lambda step: 0.004
    now: float = 100.0
    steps: list[Step] = field(default_factory=list)
    attempts: int = 0

    def run(self, flow: Flow[T]) -> T:
        def respond(step: Fanout) -> Sequence[NodeOutcome]:
            if step.op is Op.ACQUIRE:
                self.attempts += 1
            return self.respond(step, self.attempts)

        driven = drive(flow, respond, now=self.now, took=self.duration, steps=self.steps)
        self.now = driven.now
        return driven.result

    def ops(self) -> list[Op | None]:
        return [s.op if isinstance(s, Fanout) else None for s in self.steps]

    def pauses(self) -> int:
        return sum(1 for s in self.steps if isinstance(s, Sleep | Wait))


def answer(acquire: Sequence[tuple[Reply, int | None]], commit: Sequence[Reply] = ()) -> Responder:
    def respond(step: Fanout, attempt: int) -> Sequence[NodeOutcome]:
        if step.op is Op.ACQUIRE:
            return outs(*acquire)
        if step.op is Op.COMMIT_FENCE:
            return tuple(out(reply, None, i) for i, reply in enumerate(commit))
        return tuple(out(DONE, None, i) for i in range(len(acquire)))

    return respond


def fenced_acquire(net: Network, *, fencing: bool = True) -> AcquireResult:
    flow = acquire_flow(
        key="stock:42",
        token="t" * 40,
        ttl_ms=10_000,
        config=RedlockConfig(fencing=fencing),
        blocking=False,
        timeout=None,
        now=net.now,
        uniform=lambda: 0.5,
    )
    return net.run(flow)


def test_counters_in_step_need_no_commit_round() -> None:
    """The usual case costs nothing extra. Catches a commit round sent on every acquire."""
    net = Network(answer([(G, 7), (G, 7), (G, 6)]))
    result = fenced_acquire(net)
    assert result.verdict is Verdict.ACQUIRED
    assert result.fence == 7
    assert net.ops() == [Op.ACQUIRE]


def test_counters_out_of_step_cost_one_commit_round_of_the_token() -> None:
    """Token 8 is on y alone: COMMIT_FENCE(8) goes to every server, with our key and token,
    and the acquisition counts once a majority of the granting servers confirm. Catches a
    token handed out without the commit (the majority-intersection argument fails)."""
    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[NOT_HELD, DONE, DONE]))
    result = fenced_acquire(net)
    assert result.verdict is Verdict.ACQUIRED
    assert result.fence == 8
    assert net.ops() == [Op.ACQUIRE, Op.COMMIT_FENCE]
    commit = net.steps[1]
    assert isinstance(commit, Fanout)
    assert (commit.key, commit.token, commit.fence) == ("stock:42", "t" * 40, 8)
    # It may only wait for the validity that is left.
    first = net.steps[0]
    assert isinstance(first, Fanout)
    holds_until = deadline(100.0, 10_000, 0.01)
    assert commit.timeout <= min(first.timeout, holds_until - 100.004) + 1e-9


def test_a_commit_that_does_not_stick_is_unfenced_and_released_everywhere() -> None:
    """Only y confirmed (z lost our key meanwhile): no majority at the token. The lock is
    not handed out, and R6 step 5 releases it on all servers. Catches a token handed out
    whatever the commit round said."""
    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[NOT_HELD, DONE, NOT_HELD]))
    result = fenced_acquire(net)
    assert result.verdict is Verdict.UNFENCED
    assert result.fence is None
    assert result.deadline is None
    assert net.ops() == [Op.ACQUIRE, Op.COMMIT_FENCE, Op.RELEASE]


def test_a_commit_confirmed_after_the_validity_ran_out_does_not_count() -> None:
    """Catches a commit round judged without the deadline: the holder would get a token
    for a lock that has already expired."""

    def duration(step: Fanout) -> float:
        return 20.0 if step.op is Op.COMMIT_FENCE else 0.004

    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[DONE, DONE, DONE]), duration)
    result = fenced_acquire(net)
    assert result.verdict is Verdict.UNFENCED
    assert net.ops() == [Op.ACQUIRE, Op.COMMIT_FENCE, Op.RELEASE]


def fenced_acquire_with(net: Network, config: RedlockConfig) -> AcquireResult:
    flow = acquire_flow(
        key="stock:42", token="t" * 40, ttl_ms=10_000, config=config, blocking=False,
        timeout=None, now=net.now, uniform=lambda: 0.5,
    )  # fmt: skip
    return net.run(flow)


def test_a_commit_confirmed_exactly_as_the_validity_ends_does_not_count() -> None:
    """The validity is a strict bound, for the commit round as for the acquire round.
    Catches ``<=`` for ``<``: a token for a lock whose validity has just ended."""
    holds_until = deadline(100.0, 10_000, RedlockConfig().clock_drift_factor)
    assert 100.0 + (holds_until - 100.0) == holds_until  # the fake clock lands on it

    def duration(step: Fanout) -> float:
        return holds_until - 100.0 if step.op is Op.COMMIT_FENCE else 0.0

    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[DONE, DONE, DONE]), duration)
    result = fenced_acquire_with(net, RedlockConfig(fencing=True))
    assert result.verdict is Verdict.UNFENCED
    assert net.ops() == [Op.ACQUIRE, Op.COMMIT_FENCE, Op.RELEASE]


def test_a_commit_round_waits_no_longer_than_the_validity_left() -> None:
    """With a per-instance timeout longer than what the acquire round left of the
    validity, the commit round waits only for that. Catches a commit bounded by the
    timeout alone, whose answers would all come too late to count."""

    def duration(step: Fanout) -> float:
        return 4.0 if step.op is Op.ACQUIRE else 0.004

    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[DONE, DONE, DONE]), duration)
    config = RedlockConfig(fencing=True, instance_timeout=8.0)
    result = fenced_acquire_with(net, config)
    assert result.verdict is Verdict.ACQUIRED
    commit = net.steps[1]
    assert isinstance(commit, Fanout)
    assert commit.op is Op.COMMIT_FENCE
    holds_until = deadline(100.0, 10_000, config.clock_drift_factor)
    assert commit.timeout == pytest.approx(holds_until - 104.0)
    assert commit.timeout < 8.0


def test_an_unfenced_acquisition_raises_quorum_unavailable() -> None:
    state = LockState(
        name="stock:42",
        ttl_ms=10_000,
        servers=3,
        config=RedlockConfig(fencing=True),
        uniform=lambda: 0.5,
    )
    net = Network(answer([(X, 9), (G, 8), (G, 7)], commit=[TO, TO, TO]))
    with pytest.raises(QuorumUnavailable, match="could not be made to stick"):
        net.run(state.acquire(blocking=False, timeout=None, now=net.now))
    assert state.fence is None
    assert not state.held


def test_fencing_off_draws_no_token_and_sends_no_commit() -> None:
    net = Network(answer([(G, None), (G, None), (G, None)]))
    result = fenced_acquire(net, fencing=False)
    assert result.verdict is Verdict.ACQUIRED
    assert result.fence is None
    assert net.ops() == [Op.ACQUIRE]


def test_quarantined_majority_raises_quorum_unavailable_naming_the_quarantine() -> None:
    """docs/safety.md, t = 5. Catches a quarantine reported as contention (a plain False)
    and a failed attempt that leaves the recorded grants behind (no cleanup release)."""
    detail = "restart quarantine, 59.0 s left; granted here"
    state = LockState(
        name="job", ttl_ms=10_000, servers=3, config=RedlockConfig(), uniform=lambda: 0.5
    )

    def respond(step: Fanout, attempt: int) -> Sequence[NodeOutcome]:
        if step.op is Op.ACQUIRE:
            return (out(X, None, 0), NodeOutcome("s1", Q, detail), NodeOutcome("s2", Q, detail))
        return tuple(out(DONE, None, i) for i in range(3))

    net = Network(respond)
    with pytest.raises(QuorumUnavailable) as info:
        net.run(state.acquire(blocking=False, timeout=None, now=net.now))
    message = str(info.value)
    assert "too few servers out of restart quarantine" in message
    assert "s1: quarantined (restart quarantine, 59.0 s left; granted here)" in message
    assert [o.reply for o in info.value.outcomes] == [X, Q, Q]
    assert net.ops() == [Op.ACQUIRE, Op.RELEASE]


def test_blocking_acquire_retries_until_the_quarantine_is_over() -> None:
    """Catches a quarantine treated as fatal (no retry can help) rather than waited out."""
    state = LockState(
        name="job", ttl_ms=10_000, servers=3, config=RedlockConfig(), uniform=lambda: 0.5
    )

    def respond(step: Fanout, attempt: int) -> Sequence[NodeOutcome]:
        if step.op is not Op.ACQUIRE:
            return tuple(out(DONE, None, i) for i in range(3))
        return outs((G, None), (Q, None), (Q, None)) if attempt < 4 else outs(*[(G, None)] * 3)

    net = Network(respond)
    assert net.run(state.acquire(blocking=True, timeout=5.0, now=net.now))
    assert net.attempts == 4
    # one immediate retry after subscribing to release announcements, then pauses
    assert net.pauses() == 2


# --------------------------------------------------------------------------------------
# max_ttl: validated, and the cap of every ttl
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf])
def test_max_ttl_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ConfigurationError, match="max_ttl"):
        RedlockConfig(max_ttl=bad)


@pytest.mark.parametrize("bad", ["60", True, [60]])
def test_max_ttl_must_be_a_number_or_none(bad: object) -> None:
    with pytest.raises(TypeError, match="max_ttl"):
        RedlockConfig(max_ttl=bad)  # type: ignore[arg-type]


def test_max_ttl_defaults_to_60_s_and_none_turns_the_quarantine_off() -> None:
    assert RedlockConfig().max_ttl == 60.0
    assert RedlockConfig().max_ttl_ms == 60_000
    assert RedlockConfig(max_ttl=None).max_ttl_ms == 0  # 0: the script's "off"
    assert RedlockConfig(max_ttl=timedelta(seconds=5)).max_ttl == 5.0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("max_ttl", "ms"), [(1.0, 1000), (1.0001, 1001), (0.0031, 4), (2.5005, 2501), (2.5, 2500)]
)
def test_max_ttl_ms_rounds_up(max_ttl: float, ms: int) -> None:
    """The quarantine may be longer than asked, never shorter. Catches round() or int()."""
    assert RedlockConfig(max_ttl=max_ttl).max_ttl_ms == ms


def test_ttl_above_max_ttl_is_a_configuration_error() -> None:
    """Catches a ttl that outlives the quarantine: a lock a restarted server forgot could
    still be valid elsewhere when the server rejoins."""
    config = RedlockConfig(max_ttl=2.0)
    assert config.ttl_ms(2.0) == 2000
    assert config.ttl_ms(timedelta(seconds=2)) == 2000
    with pytest.raises(ConfigurationError, match=r"exceeds max_ttl=2 s"):
        config.ttl_ms(2.001)
    with pytest.raises(ConfigurationError, match="max_ttl"):
        config.ttl_ms(timedelta(seconds=3))
    assert RedlockConfig(max_ttl=None).ttl_ms(3600) == 3_600_000


@given(
    st.floats(0.01, 1000.0, allow_nan=False, allow_infinity=False),
    # from the shortest max_ttl that admits a ttl (3 ms, less its drift, exceeds 2 ms)
    st.floats(0.003, 1000.0, allow_nan=False, allow_infinity=False),
)
def test_the_ttl_sent_never_exceeds_the_quarantine(ttl: float, max_ttl: float) -> None:
    """Every accepted ttl, in the whole milliseconds sent to the servers, fits in the
    quarantine; a ttl within max_ttl is never refused; a refused one exceeds it."""
    config = RedlockConfig(max_ttl=max_ttl)
    try:
        ttl_ms = config.ttl_ms(ttl)
    except ConfigurationError as exc:
        if "too short" in str(exc):
            return  # below its own drift allowance: refused whatever max_ttl is
        assert ttl > max_ttl
        return
    assert ttl_ms <= config.max_ttl_ms
    if ttl <= max_ttl:
        assert ttl_ms == round(ttl * 1000)
