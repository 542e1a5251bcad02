"""The rules of a round (``quorumlock._algorithm.round``), without servers.

Hypothesis drives arbitrary interleavings of events (replies, errors, NOSCRIPT, MOVED,
connections made or failed, the clock) against a :class:`RoundMachine`, while a checker
that knows the rules independently watches every action it answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.fencing import draw_fence
from quorumlock._algorithm.flows import Fanout, Op, woke_the_line
from quorumlock._algorithm.outcomes import CLUSTER_NODE_AS_SERVER, Reply
from quorumlock._algorithm.round import (
    EARLY_OPS,
    FINISH,
    WITHHELD,
    Connect,
    Follow,
    RoundMachine,
    Send,
)

START = 100.0
TIMEOUT = 0.02


@dataclass
class Member:
    label: str
    where: str = ""
    tried: bool = True
    failure: str = ""
    routed: bool = False


@dataclass
class Checker:
    """What the rules say should happen, kept apart from the machine."""

    n: int
    timeout: float
    connect_timeout: float
    early: bool = False  # the round ends once a majority made it succeed
    decided: bool = False  # ...and it did, before every server answered
    first_contact: bool = False  # a server never reached had to be connected to
    state: dict[int, str] = field(default_factory=dict)  # "sent", "connecting", "answered"
    fresh: set[int] = field(default_factory=set)
    scripted: set[int] = field(default_factory=set)
    followed: set[int] = field(default_factory=set)
    ok: int = 0
    finished: bool = False
    in_grace: bool = False

    @property
    def owing(self) -> int:
        return sum(1 for s in self.state.values() if s != "answered")

    def worth_the_grace(self) -> bool:
        first = any(s == "connecting" for s in self.state.values()) or any(
            self.state[i] != "answered" for i in self.fresh
        )
        needed = quorum(self.n)
        return first and self.ok < needed <= self.ok + self.owing

    def answered(self, index: int, ok: bool, action: object, *, woke: bool = False) -> None:
        assert self.state[index] != "answered", "a server got two outcomes"
        self.state[index] = "answered"
        if woke:  # a release that named the head of the line: every answer is read
            self.early = False
        if ok:
            self.ok += 1
        if ok and self.early and self.ok >= quorum(self.n):
            assert action is FINISH, "a majority succeeded: the round is decided"
            self.decided = self.owing > 0
        elif self.owing == 0:
            assert action is FINISH, "every server answered, the round must finish"
        elif self.in_grace and not self.worth_the_grace():
            assert action is FINISH, "the grace went on when it could no longer help"
        else:
            assert action is None
        if action is FINISH:
            self.finished = True


def drive(machine: RoundMachine, checker: Checker, action: object, ready: bool) -> None:
    """Apply an action the machine answered to the model of the transport."""
    if isinstance(action, Send):
        assert not checker.finished or action.eval is False
        assert checker.state.get(action.index) != "answered", "sent to a server that answered"
        checker.state[action.index] = "sent"
        machine.sent(action.index, START)
    elif isinstance(action, Connect):
        checker.state[action.index] = "connecting"
    elif isinstance(action, Follow):
        member = machine.members[action.index]
        assert isinstance(member, Member)
        assert member.routed, "followed a plain server"
        assert action.index not in checker.followed, "followed MOVED twice"
        checker.followed.add(action.index)
        drive(machine, checker, machine.open(action.index, ready), ready)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_round_rules_hold_under_any_interleaving(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 5), label="n")
    members = [
        Member(
            f"s{i}",
            where=data.draw(st.sampled_from(["", "10.0.0.1:7000"])),
            tried=data.draw(st.booleans()),
            routed=data.draw(st.booleans()),
        )
        for i in range(n)
    ]
    op = data.draw(st.sampled_from([Op.ACQUIRE, Op.RELEASE, Op.EXTEND]), label="op")
    connect_timeout = data.draw(st.sampled_from([0.01, 0.05, 0.5]), label="connect_timeout")
    notify = op is Op.RELEASE and data.draw(st.booleans(), label="notify")
    release_early = data.draw(st.booleans(), label="release_early")
    step = Fanout(op, "k", "t", 1000, TIMEOUT, notify=notify)
    machine = RoundMachine(
        step, members, now=START, connect_timeout=connect_timeout, release_early=release_early
    )
    # a release ends early only where every server is known to hold its script
    early = op in EARLY_OPS and (release_early or op is not Op.RELEASE)
    checker = Checker(n, TIMEOUT, connect_timeout, early=early)
    ready = [data.draw(st.booleans()) for _ in range(n)]
    checker.first_contact = any(not r and not m.tried for r, m in zip(ready, members, strict=True))
    # a round that opens connections waits for them: it is never decided early
    checker.early = checker.early and all(ready)
    for first in machine.start(ready):
        drive(machine, checker, first, True)
    ok_raw = b"OK" if op is Op.ACQUIRE else 1
    refused_raw = None if op is Op.ACQUIRE else 0
    now = START
    for _ in range(60):
        if checker.finished:
            break
        pending = [i for i, s in checker.state.items() if s in ("sent", "connecting")]
        kinds = ["tick"]
        if pending:
            kinds += ["event"] * 3
        kind = data.draw(st.sampled_from(kinds))
        if kind == "tick":
            now += data.draw(st.sampled_from([0.0, 0.001, 0.01, 0.1]))
            action = machine.tick(now)
            limit = START + (max(TIMEOUT, connect_timeout) if checker.first_contact else TIMEOUT)
            if now >= limit:
                assert action is FINISH, "the round outlived its deadline"
            if now >= START + TIMEOUT and action is None:
                # Past the deadline only in the grace of first contact, and only while it
                # could still help.
                assert checker.first_contact
                assert now < START + connect_timeout
                assert checker.in_grace or checker.worth_the_grace()
                checker.in_grace = True
            if action is FINISH:
                checker.finished = True
            continue
        i = data.draw(st.sampled_from(pending))
        if checker.state[i] == "connecting":
            if data.draw(st.booleans()):
                sent = machine.connected(i)
                assert sent == Send(i)
                checker.fresh.add(i)
                drive(machine, checker, sent, True)
            else:
                failed = machine.connect_failed(i, Reply.ERROR, "refused")
                checker.answered(i, False, failed)
            continue
        events = ["ok", "refused", "error", "noscript", "moved"] + ["woke"] * notify
        event = data.draw(st.sampled_from(events))
        if event in ("ok", "refused", "woke"):
            # "woke": a release's answer that it deleted the key and named the head
            raw = {"ok": ok_raw, "refused": refused_raw, "woke": 2}[event]
            replied = machine.reply(i, raw, now)
            checker.answered(i, event != "refused", replied, woke=event == "woke")
        elif event == "error":
            broken = machine.error(i, Reply.ERROR, "broken")
            checker.answered(i, False, broken)
        elif event == "noscript":
            noscript = machine.noscript(i, Reply.ERROR, "NOSCRIPT")
            if i in checker.scripted:
                checker.answered(i, False, noscript)
            else:
                assert noscript == Send(i, eval=True), "NOSCRIPT is retried once, with EVAL"
                checker.scripted.add(i)
                # its second round trip gets the grace of first contact
                checker.fresh.add(i)
                checker.first_contact = True
                drive(machine, checker, noscript, True)
        else:
            moved = machine.moved(i, 42, ("10.0.0.2", 7001), Reply.ERROR, "MOVED 42")
            if members[i].routed and i not in checker.followed:
                assert moved == Follow(i, 42, ("10.0.0.2", 7001))
                drive(machine, checker, moved, data.draw(st.booleans()))
            else:
                checker.answered(i, False, moved)
    if not checker.finished:
        assert machine.tick(START + 10) is FINISH, "the round outlived its deadline"
    result = machine.result(now)
    assert [o.server for o in result.outcomes] == [m.label for m in members]
    assert result.started == START
    assert result.finished == now
    for i, outcome in enumerate(result.outcomes):
        if checker.state[i] != "answered":
            assert outcome.reply is (Reply.UNREAD if checker.decided else Reply.TIMEOUT)
            if checker.state[i] == "connecting":
                expected = "still connecting"
            elif checker.decided:
                expected = "a majority had answered"
            else:
                expected = "no reply in time"
            assert outcome.detail.endswith(expected)
        if outcome.detail and members[i].where:
            assert outcome.detail.startswith(members[i].where + ": ")
    assert sum(1 for o in result.outcomes if o.reply.ok) == checker.ok
    assert machine.decided is checker.decided
    # Ended: later events change nothing.
    for i in range(n):
        assert machine.reply(i, ok_raw, now) is None
        assert machine.connected(i) is None
    assert machine.result(now).outcomes == result.outcomes


def test_a_second_noscript_is_the_outcome() -> None:
    machine = RoundMachine(
        Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT), [Member("a")], now=START, connect_timeout=1
    )
    assert machine.start([True]) == [Send(0)]
    assert machine.noscript(0, Reply.ERROR, "NOSCRIPT") == Send(0, eval=True)
    assert machine.noscript(0, Reply.ERROR, "NOSCRIPT") is FINISH
    (outcome,) = machine.result(START + 0.001).outcomes
    assert (outcome.reply, outcome.detail) == (Reply.ERROR, "NOSCRIPT after EVAL")


def test_moved_is_followed_once_and_only_by_a_cluster_instance() -> None:
    members = [Member("cluster", where="10.0.0.1:7000", routed=True), Member("plain")]
    step = Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT)
    machine = RoundMachine(step, members, now=START, connect_timeout=1)
    machine.start([True, True])
    follow = machine.moved(0, 7, ("10.0.0.2", 7000), Reply.ERROR, "MOVED 7 10.0.0.2:7000")
    assert follow == Follow(0, 7, ("10.0.0.2", 7000))
    assert machine.open(0, False) == Connect(0)
    assert machine.connected(0) == Send(0)
    assert machine.moved(0, 7, ("10.0.0.3", 7000), Reply.ERROR, "MOVED again") is None
    assert machine.moved(1, 7, ("10.0.0.3", 7000), Reply.ERROR, "MOVED x") is FINISH
    outcomes = machine.result(START).outcomes
    assert [o.detail for o in outcomes] == [
        "10.0.0.1:7000: MOVED again",
        f"MOVED x: {CLUSTER_NODE_AS_SERVER}",
    ]
    # a plain server never redirects: a cluster's node listed as one, which no retry fixes
    assert [o.reply for o in outcomes] == [Reply.ERROR, Reply.FATAL]


@pytest.mark.parametrize(("granted", "finishes"), [(2, True), (1, False)])
def test_the_grace_of_first_contact_ends_once_a_majority_granted(
    granted: int, finishes: bool
) -> None:
    """N = 3, two servers never reached: the grace waits for them only while they are
    needed for a majority."""
    members = [Member("a"), Member("b", tried=False), Member("c", tried=False)]
    step = Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT)
    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    assert machine.start([True, False, False]) == [Send(0), Connect(1), Connect(2)]
    assert machine.reply(0, b"OK", START + 0.001) is None
    assert machine.tick(START + TIMEOUT) is None  # in the grace: b and c may still come
    assert machine.deadline == START + 1.0
    assert machine.connected(1) == Send(1)
    action = machine.reply(1, b"OK" if granted == 2 else None, START + 0.05)
    assert (action is FINISH) is finishes
    if not finishes:
        assert machine.tick(START + 1.0) is FINISH
    outcomes = machine.result(START + 0.05).outcomes
    assert outcomes[2].detail == "still connecting"


def test_no_grace_for_a_server_that_was_reached_before() -> None:
    members = [Member("a"), Member("b"), Member("c")]
    step = Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT)
    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    machine.start([True, False, False])
    assert machine.tick(START + TIMEOUT) is FINISH


def test_a_first_use_of_a_script_gets_the_grace_of_first_contact() -> None:
    """An extend whose script two of three servers have not cached yet (NOSCRIPT, then
    the EVAL form: two round trips) is waited for past the per-server timeout, up to the
    connect timeout, while they can still make a majority; it failed at the timeout (a
    first extend over a slow network lost its lock). No grace for the undo of a failed
    attempt (``until`` 0.0), nor once a majority can no longer be made."""
    members = [Member("a"), Member("b"), Member("c")]
    step = Fanout(Op.EXTEND, "k", "t", 1000, TIMEOUT)
    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    machine.start([True, True, True])
    assert machine.reply(0, 1, START + 0.005) is None
    assert machine.noscript(1, Reply.ERROR, "NOSCRIPT") == Send(1, eval=True)
    assert machine.noscript(2, Reply.ERROR, "NOSCRIPT") == Send(2, eval=True)
    assert machine.tick(START + TIMEOUT) is None  # the grace
    assert machine.deadline == START + 1.0
    assert machine.reply(1, 1, START + 0.05) is FINISH  # a majority confirmed it
    assert [o.reply for o in machine.result(START + 0.05).outcomes][:2] == [Reply.DONE] * 2

    undo = Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, until=0.0)
    machine = RoundMachine(undo, members, now=START, connect_timeout=1.0)
    machine.start([True, True, True])
    assert machine.noscript(1, Reply.ERROR, "NOSCRIPT") == Send(1, eval=True)
    assert machine.tick(START + TIMEOUT) is FINISH

    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    machine.start([True, True, True])
    assert machine.reply(0, 0, START + 0.005) is None  # not held there
    assert machine.reply(2, 0, START + 0.005) is None
    assert machine.noscript(1, Reply.ERROR, "NOSCRIPT") == Send(1, eval=True)
    assert machine.tick(START + TIMEOUT) is FINISH  # b alone cannot make a majority


def test_a_server_still_being_connected_to_says_why_its_last_attempt_failed() -> None:
    """A server that fails slower than a round lasts (a TLS handshake it never answers)
    is being connected to again at every round's end: its outcome says why the last
    attempt failed, where it said "still connecting" and nothing else for ever."""
    failure = "TLS: the server did not answer the handshake"
    members = [Member("a"), Member("b", failure=failure), Member("c")]
    machine = RoundMachine(
        Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT), members, now=START, connect_timeout=1.0
    )
    machine.start([True, False, False])
    assert machine.tick(START + TIMEOUT) is FINISH
    outcomes = machine.result(START + TIMEOUT).outcomes
    assert [o.reply for o in outcomes] == [Reply.TIMEOUT] * 3
    assert outcomes[0].detail == "no reply in time"
    assert outcomes[1].detail == f"still connecting; the last attempt failed: {failure}"
    assert outcomes[2].detail == "still connecting"


def test_the_grace_of_first_contact_ends_at_the_steps_until() -> None:
    """A blocking acquire's own time limit (``until``) ends the grace before the connect
    timeout; ``until`` 0.0 (the undo of a failed attempt) allows none."""
    members = [Member("a"), Member("b", tried=False), Member("c", tried=False)]
    step = Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT, until=START + 0.3)
    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    machine.start([True, False, False])
    assert machine.tick(START + TIMEOUT) is None
    assert machine.deadline == START + 0.3
    assert machine.tick(START + 0.3) is FINISH
    assert machine.result(START + 0.3).allowed == pytest.approx(0.3)
    undo = Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, until=0.0)
    machine = RoundMachine(undo, members, now=START, connect_timeout=1.0)
    machine.start([True, False, False])
    assert machine.tick(START + TIMEOUT) is FINISH
    assert machine.result(START + TIMEOUT).allowed == pytest.approx(TIMEOUT)


def test_a_cleanup_waits_for_every_server_reached_before_and_none_never_reached() -> None:
    """The clean-up of an interrupted acquire: b was reached before and needs a new
    connection (the interruption closed it mid-reply: it may hold the key), c was never
    reached (it holds nothing). The grace is for b, whatever a majority answered, and
    not for c. The same release without ``cleanup`` waits for neither."""
    members = [Member("a"), Member("b"), Member("c", tried=False), Member("d"), Member("e")]
    for cleanup in (True, False):
        step = Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, cleanup=cleanup)
        machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
        actions = machine.start([True, False, False, True, True])
        assert actions == [Send(0), Connect(1), Connect(2), Send(3), Send(4)]
        for i in (0, 3, 4):  # a majority confirmed
            assert machine.reply(i, 1, START + 0.001) is None
        if not cleanup:
            assert machine.tick(START + TIMEOUT) is FINISH
            continue
        assert machine.tick(START + TIMEOUT) is None  # b: being connected to again
        assert machine.connected(1) == Send(1)
        assert machine.tick(START + 0.5) is None  # b owes its reply
        assert machine.reply(1, 1, START + 0.6) is FINISH  # c: never waited for
        outcomes = machine.result(START + 0.6).outcomes
        assert [o.reply for o in outcomes] == [Reply.DONE] * 2 + [Reply.TIMEOUT] + [Reply.DONE] * 2
        assert outcomes[2].detail == "still connecting"


def test_a_server_the_step_does_not_target_gets_nothing_and_counts_as_not_held() -> None:
    step = Fanout(Op.RELEASE, "k", "t", 10_000, TIMEOUT, targets=(True, False, True))
    members = [Member(f"s{i}") for i in range(3)]
    machine = RoundMachine(step, members, now=START, connect_timeout=TIMEOUT)
    actions = machine.start([True, True, False])
    assert actions == [Send(0), None, Connect(2)]
    assert machine.owing == 2
    assert machine.reply(0, 1, START + 0.001) is None
    assert machine.connected(2) == Send(2)
    assert machine.reply(2, 0, START + 0.002) is FINISH
    outcomes = machine.result(START + 0.002).outcomes
    assert [o.reply for o in outcomes] == [Reply.DONE, Reply.NOT_HELD, Reply.NOT_HELD]
    assert outcomes[1].detail == "not sent: nothing to undo"


def test_a_server_the_transport_withholds_gets_nothing_and_counts_as_failed() -> None:
    """An acquire the transport must not send to a server (a release of its token may
    still run there, after a grant): no action there, an error outcome that says why,
    and a round that ends at once when every server is withheld."""
    step = Fanout(Op.ACQUIRE, "k", "t", 10_000, TIMEOUT)
    members = [Member(f"s{i}") for i in range(3)]
    machine = RoundMachine(step, members, now=START, connect_timeout=TIMEOUT)
    assert machine.start([True, True, False], withheld={1}) == [Send(0), None, Connect(2)]
    assert machine.owing == 2
    assert machine.reply(0, b"OK", START + 0.001) is None
    assert machine.connected(2) == Send(2)
    assert machine.reply(2, b"OK", START + 0.002) is FINISH
    outcomes = machine.result(START + 0.002).outcomes
    assert [o.reply for o in outcomes] == [Reply.GRANTED, Reply.ERROR, Reply.GRANTED]
    assert outcomes[1].detail == WITHHELD
    alone = RoundMachine(step, members, now=START, connect_timeout=TIMEOUT)
    assert alone.start([True] * 3, withheld={0, 1, 2}) == [None] * 3
    assert alone.finished
    assert [o.reply for o in alone.result(START).outcomes] == [Reply.ERROR] * 3


def _five(step: Fanout, *, release_early: bool = False) -> RoundMachine:
    members = [Member(f"s{i}") for i in range(5)]
    machine = RoundMachine(
        step, members, now=START, connect_timeout=1.0, release_early=release_early
    )
    assert machine.start([True] * 5) == [Send(i) for i in range(5)]
    return machine


def test_an_acquire_is_decided_by_the_third_grant_of_five() -> None:
    """The round costs the round trip to the slowest of the fastest majority: the two
    servers that have not answered are not waited for, and say so."""
    machine = _five(Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT))
    assert machine.reply(4, b"OK", START + 0.001) is None
    assert machine.reply(0, None, START + 0.002) is None  # taken there
    assert machine.reply(2, b"OK", START + 0.003) is None
    assert machine.reply(1, b"OK", START + 0.004) is FINISH
    assert machine.decided
    outcomes = machine.result(START + 0.004).outcomes
    assert [o.reply for o in outcomes] == [
        Reply.TAKEN, Reply.GRANTED, Reply.GRANTED, Reply.UNREAD, Reply.GRANTED
    ]  # fmt: skip
    assert outcomes[3].detail == "a majority had answered"
    assert not Reply.UNREAD.answered
    assert not Reply.UNREAD.ok


def test_a_release_is_decided_by_the_third_confirmation_of_five() -> None:
    """Where no answer read named the head of the queue of waiters, the two servers left
    unread cannot make a majority that did: the release need not wait for them."""
    machine = _five(Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, notify=True), release_early=True)
    assert machine.reply(3, 1, START + 0.001) is None
    assert machine.reply(0, 0, START + 0.002) is None  # not held there
    assert machine.reply(1, 1, START + 0.003) is None
    assert machine.reply(4, 1, START + 0.004) is FINISH
    assert machine.decided
    outcomes = machine.result(START + 0.004).outcomes
    assert [o.reply for o in outcomes] == [
        Reply.NOT_HELD, Reply.DONE, Reply.UNREAD, Reply.DONE, Reply.DONE
    ]  # fmt: skip
    assert not woke_the_line(outcomes)


@pytest.mark.parametrize("named", [1, 3, 5])
def test_a_release_that_named_the_head_reads_every_answer(named: int) -> None:
    """Whether a majority of the servers named the head of the line decides whether the
    process stands in line behind the waiter it woke: once one answer read says it did,
    the release waits for every answer, whatever a majority confirmed."""
    machine = _five(Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, notify=True), release_early=True)
    answers = [2] * named + [1] * (5 - named)  # 2: deleted, and named the head
    for i in range(4):
        assert machine.reply(i, answers[i], START + 0.001) is None
    assert machine.reply(4, answers[4], START + 0.002) is FINISH
    assert not machine.decided
    outcomes = machine.result(START + 0.002).outcomes
    assert [o.reply for o in outcomes] == [Reply.DONE] * 5
    assert woke_the_line(outcomes) is (named >= 3)


@pytest.mark.parametrize("keys", [(), ("k", "l")], ids=["lock", "set"])
def test_a_release_reads_every_answer_where_a_server_may_lack_its_script(
    keys: tuple[str, ...],
) -> None:
    """A server that lost the release script (a restart) answers NOSCRIPT, and only a
    round that reads that answer sends the script again: unless the transport knows
    that every server holds it and that none lags (``release_early``), a release waits
    for every answer; so does a multi-resource lock's, whose script it does not track."""
    step = Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, notify=True, keys=keys)
    machine = _five(step, release_early=bool(keys))
    for i in range(4):
        assert machine.reply(i, 1, START + 0.001) is None
    assert machine.reply(4, 1, START + 0.002) is FINISH
    assert not machine.decided


@pytest.mark.parametrize("op", [Op.COMMIT_FENCE, Op.QUEUE, Op.RW_READ])
def test_other_commands_wait_for_every_reply(op: Op) -> None:
    """A join's answers say where the entry stands in line; the fence's commit and the
    lock family's scripts count their own way: none of them ends at a majority."""
    machine = _five(Fanout(op, "k", "t", 1000, TIMEOUT))
    raw: object = b"OK" if op is Op.RW_READ else 1
    for i in range(4):
        assert machine.reply(i, raw, START + 0.001) is None
    assert not machine.decided
    assert machine.reply(4, raw, START + 0.002) is FINISH
    assert not machine.decided


def test_a_round_that_fails_waits_for_every_reply() -> None:
    machine = _five(Fanout(Op.EXTEND, "k", "t", 1000, TIMEOUT))
    for i in range(3):
        assert machine.reply(i, 0, START + 0.001) is None  # not held: a majority can't confirm
    assert machine.reply(3, 1, START + 0.002) is None
    assert machine.reply(4, 1, START + 0.003) is FINISH
    assert not machine.decided


def test_an_acquire_with_fencing_reads_every_grant() -> None:
    """The token is the largest counter among every grant (a server whose counter jumped
    to its clock after a restart sets it at once): a fencing acquire is never decided
    early."""
    machine = _five(Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT, max_ttl_ms=5000, fencing=True))
    for i in range(4):
        assert machine.reply(i, [1, 0, 7], START + 0.001) is None
    assert machine.reply(4, [1, 0, 9], START + 0.002) is FINISH
    assert not machine.decided
    assert draw_fence(machine.result(START + 0.002).outcomes) == (9, False)


@pytest.mark.parametrize("tried", [False, True])
def test_a_round_that_opens_a_connection_is_not_decided_early(tried: bool) -> None:
    """New connections are waited for (their sessions say whether two URLs are one
    server, and a restarted server's answer whether it is in quarantine): a majority's
    grants end the grace of first contact, not the round."""
    members = [Member("a"), Member("b"), Member("c"), Member("d", tried=tried)]
    machine = RoundMachine(
        Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT), members, now=START, connect_timeout=1.0
    )
    assert machine.start([True, True, True, False])[3] == Connect(3)
    for i in range(3):
        assert machine.reply(i, b"OK", START + 0.001) is None
    assert not machine.decided
    assert machine.tick(START + TIMEOUT) is FINISH  # a majority granted: no grace
    assert machine.result(START + TIMEOUT).outcomes[3].reply is Reply.TIMEOUT


def test_a_lease_renewal_reads_every_reply() -> None:
    """A renewal runs in the background: it waits for every server (its outcomes say
    where the lease was renewed), while an ``extend()`` ends at a majority."""
    machine = _five(Fanout(Op.EXTEND, "k", "t", 1000, TIMEOUT, every=True))
    for i in range(4):
        assert machine.reply(i, 1, START + 0.001) is None
    assert machine.reply(4, 1, START + 0.002) is FINISH
    assert not machine.decided


def test_a_waiters_attempt_reads_every_reply() -> None:
    """A waiter's attempt stands in line where it is refused: each answer says where
    its entry stands, which the process keeps track of (and takes off when it leaves)."""
    step = Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT, member="m", arrival="1.0", lease_ms=1200)
    assert step.joins
    machine = _five(step)
    granted = [1, 0, 0, 0]  # the queued acquire script's grant; not put in line (0)
    for i in range(4):
        assert machine.reply(i, granted, START + 0.001) is None
    assert machine.reply(4, granted, START + 0.002) is FINISH
    assert not machine.decided
    assert [o.reply for o in machine.result(START + 0.002).outcomes] == [Reply.GRANTED] * 5


def test_a_connection_made_after_the_round_ended_sends_nothing() -> None:
    """N = 3, c never reached: a and b granted, the round ends at its timeout (no grace:
    c is not needed), and c's connection, up later, is left idle (its command would be a
    stray attempt nobody waits for)."""
    members = [Member("a"), Member("b"), Member("c", tried=False)]
    machine = RoundMachine(Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT), members, now=START,
                           connect_timeout=1.0)  # fmt: skip
    assert machine.start([True, True, False]) == [Send(0), Send(1), Connect(2)]
    assert machine.reply(0, b"OK", START + 0.001) is None
    assert machine.reply(1, b"OK", START + 0.002) is None
    assert machine.tick(START + TIMEOUT) is FINISH
    assert machine.connected(2) is None
    assert machine.connected(0) is None  # nor one that was not connecting


def test_each_outcome_carries_its_servers_round_trip() -> None:
    machine = _five(Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT))
    machine.sent(0, START + 0.001)
    assert machine.reply(0, 1, START + 0.004) is None
    (first, *_) = machine.result(START + 0.004).outcomes
    assert first.latency == pytest.approx(0.003)


def test_the_allowance_for_a_server_connected_to_is_the_timeout_or_the_grace() -> None:
    """What a round allows a server it connects to, from the round's start (the asyncio
    transport counts it from the start of the attempt instead, when the event loop got
    to it late): the timeout, or the first contact's grace (up to ``until``)."""
    reached = [Member("a"), Member("b"), Member("c")]
    new = [Member("a"), Member("b", tried=False), Member("c", tried=False)]
    step = Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT)
    cases = [
        (reached, step, TIMEOUT),
        (new, step, 1.0),
        (new, Fanout(Op.ACQUIRE, "k", "t", 1000, TIMEOUT, until=START + 0.3), 0.3),
        (new, Fanout(Op.RELEASE, "k", "t", 1000, TIMEOUT, until=0.0), TIMEOUT),
    ]
    for members, fanout, allowance in cases:
        machine = RoundMachine(fanout, members, now=START, connect_timeout=1.0)
        machine.start([True, False, False])
        assert machine.allowance == pytest.approx(allowance)
    machine = RoundMachine(step, reached, now=START, connect_timeout=1.0)
    machine.start([True, True, True])
    assert machine.allowance == pytest.approx(TIMEOUT)
    machine.noscript(1, Reply.ERROR, "NOSCRIPT")  # a second round trip: the grace
    assert machine.allowance == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("op", "replies", "cleanup", "may"),
    [
        (Op.ACQUIRE, (), False, True),
        (Op.ACQUIRE, (b"OK",), False, True),
        (Op.ACQUIRE, (None,), False, True),
        (Op.ACQUIRE, (None, None), False, False),  # the third cannot make a majority
        (Op.RELEASE, (0, 0), False, False),
        (Op.RELEASE, (0, 0), True, True),  # a clean-up reads every server it undoes on
    ],
)
def test_the_servers_owing_a_reply_may_decide_while_they_can_make_a_majority(
    op: Op, replies: tuple[object, ...], cleanup: bool, may: bool
) -> None:
    members = [Member("a"), Member("b"), Member("c")]
    step = Fanout(op, "k", "t", 1000, TIMEOUT, cleanup=cleanup)
    machine = RoundMachine(step, members, now=START, connect_timeout=1.0)
    machine.start([True, True, True])
    for i, reply in enumerate(replies):
        machine.reply(i, reply, START + 0.001)
    assert machine.owing_may_decide() is may
