"""One fan-out round as a sans-I/O state machine: every rule of a round, decided once.

The sync fan-out (a poll loop) and the asyncio fan-out (callbacks on one event loop) only
move bytes. They tell a :class:`RoundMachine` what happened (events, as method calls) and
do what it answers (actions)::

    transport                          RoundMachine
    ---------                          ------------
    start(ready)                  -->  Send(i) / Connect(i) per server
    sent(i, now)                  -->  (the reply's latency runs from now)
    connected(i)                  -->  Send(i), or nothing once the round is over
    connect_failed(i, kind, text) -->  its outcome; maybe Finish
    reply(i, raw, now)            -->  its outcome; maybe Finish
    error(i, kind, text)          -->  its outcome; maybe Finish
    noscript(i, kind, text)       -->  Send(i, eval=True) once; then its outcome
    moved(i, slot, address, ...)  -->  Follow(i, ...) once, for a cluster instance
    tick(now)                     -->  Finish at the deadline, or the grace goes on
    result(now)                   -->  the Round: one outcome per server

The transport classifies exceptions with ``quorumlock._io.errors.translate`` (the one
translation point) and passes the ``(Reply, detail)`` it gives; it tells a NOSCRIPT or a
MOVED reply apart, since each may be answered by a new send.

The rules owned here:

- **Outcomes**: one per server, in server order; an error detail names the cluster node
  it came from; a server that did not answer by the end is a ``TIMEOUT``, "still
  connecting" (with why its last connection attempt failed, when one did: a server
  that fails slower than a round lasts is not reported as connecting for ever) or "no
  reply in time".
- **First contact** (a round that connects to a server never reached before): when the
  deadline comes, the round may wait on until ``started + connect_timeout`` for the
  connections (TLS, AUTH, the session probe), but only while a server being connected
  to, or one whose connection was made during this round, still owes its reply, and
  only while the servers owing a reply could still make a majority grant (or, for an
  extend or a release, confirm) it. The first acquire of a new Redlock then does not
  fail for a per-instance timeout meant for replies, and a server frozen at first
  contact costs nothing once a majority has answered. The wait counts against the
  validity like any other, and never lasts past ``Fanout.until``: none at all for the
  undo of a failed attempt (a server never reached holds nothing of its). A blocking
  acquire's own ``timeout`` does not shorten it: the first request of a web handler
  whose lock takes one attempt (timeout 0) would fail for a connection still being
  made. The clean-up of an interrupted acquire (``Fanout.cleanup``)
  waits instead for the servers reached before whose connection is gone (the
  interruption closed it mid-reply, after the server may have run the command), every
  one of them, and never for a server never reached.
- **NOSCRIPT**: a server that has not cached the script (its first use there, a restart,
  ``SCRIPT FLUSH``) gets the ``EVAL`` form once; a second NOSCRIPT is its outcome. That
  second round trip gets the grace of first contact: the round may wait for that
  server's reply until ``started + connect_timeout``, on the same terms (while the
  servers owing a reply could still make the round succeed, never past ``until``), so
  that a first extend over a slow network is not lost for a per-instance timeout meant
  for one round trip.
- **MOVED**: a cluster instance whose slot moved gets the command at the new owner once
  per round, within the same deadline; a second MOVED is its outcome. A plain server
  that answers MOVED is a cluster's node listed as a server: a fatal outcome.
- **Decided early**: an acquire, an extension or a release ends as soon as a majority
  granted (or confirmed) it: the round costs the round trip to the slowest server of the
  fastest majority, not to the slowest server (docs/algorithm.md, "N servers"). The
  servers that had not answered get ``UNREAD``; their replies are read later by the
  transport, and dropped. These wait for every reply (or the deadline) as before: a
  release once an answer read named the head of the queue of waiters (whether a majority
  named it decides whether the process stands in line behind the waiter it woke; while
  no answer read has, the servers left unread, fewer than a majority, cannot make one
  that did); a release to a server not known to hold the release script (a server that
  lost it answers NOSCRIPT, and only a round that reads that answer sends the script
  again) or that lags (its connection owes the replies of earlier rounds: a release that
  waits for it reads them all), or over a multi-resource lock's set; every other command
  (a join's answers say where the entry stands in line; the fence's commit and the lock
  family's scripts count their own way); an acquire with fencing on (its token is the
  largest counter among every grant: a server whose counter jumped after a restart sets
  it at once); a waiter's attempt (``Fanout.joins``: each answer says where its entry
  stands in line, which the process keeps track of); a lease renewal (``Fanout.every``:
  in the background, its latency costs nobody); a round that is not succeeding (a
  refusal's answers say who holds the key, and an undo needs to know where a grant may
  have been written); and a round that opens a connection (a new connection is checked
  for being a server already named under another URL, and a restarted server's first
  answer says whether it is in quarantine).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.flows import Fanout, Op, Round
from quorumlock._algorithm.outcomes import CLUSTER_NODE_AS_SERVER, NodeOutcome, Reply
from quorumlock._algorithm.wire import interpret, queue_answer

__all__ = [
    "EARLY_OPS",
    "FINISH",
    "RELEASE_LAG",
    "WITHHELD",
    "Action",
    "Connect",
    "Finish",
    "Follow",
    "Member",
    "RoundMachine",
    "Send",
]


class Member(Protocol):
    """What the round reads of one instance (a server, or a cluster's route).

    ``where``: "" for a plain server; a cluster master's address, which error details
    name. ``tried``: a connection attempt to it has ended, either way, at least once.
    ``failure``: why the last attempt that ended failed, as translated ("" if it
    connected). ``routed``: a cluster instance, which may follow a MOVED.
    """

    @property
    def label(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def tried(self) -> bool: ...
    @property
    def failure(self) -> str: ...
    @property
    def routed(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Send:
    """Send the round's command to server ``index`` (its ``EVAL`` form if ``eval``)."""

    index: int
    eval: bool = False


@dataclass(frozen=True, slots=True)
class Connect:
    """Server ``index`` has no connection ready: open one (or wait for the one under way),
    then report :meth:`RoundMachine.connected` or :meth:`RoundMachine.connect_failed`."""

    index: int


@dataclass(frozen=True, slots=True)
class Follow:
    """Cluster instance ``index`` answered MOVED: the slot is now at ``address``. Point its
    route there, then report :meth:`RoundMachine.open` for it (ready or not)."""

    index: int
    slot: int
    address: tuple[str, int]


@dataclass(frozen=True, slots=True)
class Finish:
    """The round is over: stop waiting, then build the result."""


FINISH = Finish()

Action = Send | Connect | Follow | Finish


@functools.cache
def _send(index: int) -> Send:
    """The plain :class:`Send` to server ``index``: one frozen object per index, shared by
    every round instead of made per server per round."""
    return Send(index)


#: The commands whose round ends once a majority made it succeed ("Decided early").
EARLY_OPS = frozenset({Op.ACQUIRE, Op.EXTEND, Op.RELEASE})

#: A connection still owed more replies of earlier rounds than this lags: a release does
#: not end without it (``RoundMachine``'s ``release_early``), and so reads them all. An
#: acquire and an extension of one hold leave one each where they ended at a majority.
RELEASE_LAG = 2

#: The detail of a server a transport did not send an acquire to (``RoundMachine.start``).
WITHHELD = (
    "not sent: a release of this acquire went on another connection, unanswered, and "
    "could still run there after a new grant"
)

# Where each server stands in the round.
_SENDING = 0  # a command is (to be) written on a ready connection
_CONNECTING = 1
_ANSWERED = 2


class RoundMachine:
    """The state of one round of a :class:`Fanout` step over ``members``.

    ``now`` is the monotonic time just before the first send; the deadline is
    ``now + step.timeout``; ``connect_timeout`` bounds the first-contact grace.
    ``release_early``: the transport lets a release end at a majority: every server
    holds the release script (it answered it since its connection was made) and none
    lags (owes the replies of more than the rounds of one hold).
    """

    __slots__ = (
        "_contact_until",
        "_done",
        "_early",
        "_fresh",
        "_grace_until",
        "_in_grace",
        "_missing",
        "_moved",
        "_needed",
        "_outcomes",
        "_queue_part",
        "_reconnecting",
        "_scripted",
        "_sent_at",
        "_state",
        "deadline",
        "decided",
        "finished",
        "members",
        "started",
        "step",
    )

    def __init__(
        self,
        step: Fanout,
        members: Sequence[Member],
        *,
        now: float,
        connect_timeout: float,
        release_early: bool = False,
    ) -> None:
        n = len(members)
        self.step = step
        self.members = members
        self.started = now
        #: When the round stops waiting (later than ``now + step.timeout`` in the grace).
        self.deadline = now + step.timeout
        self.finished = False
        self._grace_until = now + connect_timeout
        if step.until is not None:
            self._grace_until = min(self._grace_until, step.until)
        # the longest grace, first contact's, which a server meeting a script it has not
        # cached (NOSCRIPT) gets as well (``start`` takes the grace back without one)
        self._contact_until = self._grace_until
        self._in_grace = False
        self._needed = quorum(n)
        self._outcomes: list[NodeOutcome | None] = [None] * n
        self._state = [_SENDING] * n
        self._sent_at = [now] * n
        self._missing = n
        self._done = 0  # outcomes that count toward success (granted, confirmed)
        #: The round ended early: a majority made it succeed before every server answered.
        self.decided = False
        # the round may end at a majority (``EARLY_OPS``; not a lock family's script)
        self._early = (
            step.op in EARLY_OPS and not step.every and not step.fencing and not step.joins
        )
        if step.op is Op.RELEASE and (step.keys or not release_early):
            # A server that lost the release script answers NOSCRIPT, and only a round
            # that reads that answer sends the script again; a server that lags would
            # owe ever more replies: see ``release_early``.
            self._early = False
        self._fresh: set[int] = set()  # connected during this round, reply still due
        self._reconnecting: set[int] = set()  # a clean-up's servers reached before
        self._scripted: set[int] = set()  # got the EVAL form after a NOSCRIPT
        self._moved: set[int] = set()  # followed a MOVED
        # the replies may say something of the queue of waiters (see ``queue_answer``):
        # a release's announcement, a waiter's or a fair attempt, a join
        self._queue_part = step.notify or step.fair or bool(step.member) or step.op is Op.QUEUE

    # -- events --------------------------------------------------------------------

    def start(
        self, ready: Sequence[bool], withheld: Collection[int] = ()
    ) -> list[Send | Connect | None]:
        """The round begins: ``ready[i]`` says whether server ``i`` has a connection.
        A server the step does not target (``Fanout.targets``) gets no action (None),
        nor does one the transport ``withheld`` (it failed: a release of the same token
        may still run there, see ``quorumlock._io.orphans``). Check :attr:`finished`
        after: every server may be left out.

        The grace of first contact is possible only when a server without a connection
        was never reached before (a server down since it was last tried gets none). For
        a clean-up (``Fanout.cleanup``) it is the other way round: a server never
        reached holds nothing of the interrupted acquire's, and one reached before may.
        """
        actions: list[Send | Connect | None] = []
        first_contact = False
        targets = self.step.targets
        cleanup = self.step.cleanup
        for i, is_ready in enumerate(ready):
            if targets and not targets[i]:
                # Not sent (the undo of a failed attempt: nothing of ours there).
                label = self.members[i].label
                self._record(i, NodeOutcome(label, Reply.NOT_HELD, "not sent: nothing to undo"))
                actions.append(None)
                continue
            if i in withheld:
                self._record(i, NodeOutcome(self.members[i].label, Reply.ERROR, WITHHELD))
                actions.append(None)
                continue
            action = self.open(i, is_ready)
            if isinstance(action, Connect) and self.members[i].tried is cleanup:
                first_contact = True
                if cleanup:
                    self._reconnecting.add(i)
            actions.append(action)
        if not first_contact or self._grace_until <= self.deadline:
            self._grace_until = self.deadline
        if any(isinstance(action, Connect) for action in actions):
            # a round that opens connections waits for them as it always did (the check
            # that two URLs are not one server reads every new connection's session, and
            # a restarted server's answer says whether it is in quarantine)
            self._early = False
        return actions

    def open(self, index: int, ready: bool) -> Send | Connect:
        """Server ``index`` (at start, or after a :class:`Follow`) is ``ready``, or not."""
        if ready:
            self._state[index] = _SENDING
            return _send(index)
        self._state[index] = _CONNECTING
        return Connect(index)

    def sent(self, index: int, now: float) -> None:
        """The command was written to server ``index`` at ``now``."""
        self._sent_at[index] = now

    def connected(self, index: int) -> Send | None:
        """Server ``index``'s connection is up: send, unless the round is over."""
        if self.finished or self._state[index] != _CONNECTING:
            return None
        self._state[index] = _SENDING
        self._fresh.add(index)
        return _send(index)

    def connect_failed(self, index: int, kind: Reply, detail: str) -> Finish | None:
        if self._state[index] != _CONNECTING:
            return None
        return self._record(
            index, NodeOutcome(self.members[index].label, kind, self._at(index, detail))
        )

    def reply(self, index: int, raw: object, now: float) -> Finish | None:
        """A (non-error) reply from server ``index``, read at ``now``."""
        if self._state[index] == _ANSWERED:
            return None
        latency = now - self._sent_at[index]
        label = self.members[index].label
        if not self._queue_part:
            reply, detail, fence, holder = interpret(self.step.op, raw)
            return self._record(index, NodeOutcome(label, reply, detail, latency, fence, holder))
        raw, place, woke = queue_answer(self.step, raw)
        reply, detail, fence, holder = interpret(self.step.op, raw)
        outcome = NodeOutcome(label, reply, detail, latency, fence, holder, place, woke)
        return self._record(index, outcome)

    def error(self, index: int, kind: Reply, detail: str) -> Finish | None:
        """An error reply, a failed send or a broken connection, as translated."""
        if self._state[index] == _ANSWERED:
            return None
        return self._record(
            index, NodeOutcome(self.members[index].label, kind, self._at(index, detail))
        )

    def noscript(self, index: int, kind: Reply, detail: str) -> Send | Finish | None:
        """Server ``index`` answered NOSCRIPT (``kind``, ``detail``: as translated)."""
        if self._state[index] == _ANSWERED:
            return None
        if index in self._scripted:
            return self.error(index, Reply.ERROR, "NOSCRIPT after EVAL")
        if self.finished:
            return self.error(index, kind, detail)
        # The server has not cached the script (its first use there: a new server, a
        # restart, SCRIPT FLUSH): EVAL caches it. That costs a second round trip, which
        # the grace of first contact covers, as it covers a new connection's set-up.
        self._scripted.add(index)
        self._fresh.add(index)
        self._grace_until = max(self._grace_until, self._contact_until)
        return Send(index, eval=True)

    def moved(
        self, index: int, slot: int, address: tuple[str, int], kind: Reply, detail: str
    ) -> Follow | Finish | None:
        """Server ``index`` answered ``MOVED slot address`` (``kind``, ``detail``: as
        translated). Followed once per round, for a cluster instance only; a plain
        server that redirects is a cluster's node listed as a server: fatal."""
        if self._state[index] == _ANSWERED:
            return None
        if not self.members[index].routed:
            return self.error(index, Reply.FATAL, f"{detail}: {CLUSTER_NODE_AS_SERVER}")
        if self.finished or index in self._moved:
            return self.error(index, kind, detail)
        self._moved.add(index)
        return Follow(index, slot, address)

    def tick(self, now: float) -> Finish | None:
        """The time is ``now``: Finish once the deadline has passed (and no first-contact
        grace applies)."""
        if self.finished:
            return FINISH
        if now < self.deadline:
            return None
        if not self._in_grace and now < self._grace_until and self._worth_the_grace():
            self._in_grace = True
            self.deadline = self._grace_until
            return None
        self.finished = True
        return FINISH

    def result(self, now: float) -> Round:
        """The round's result, ``finished`` at ``now``; a server without an outcome timed
        out. Ends the round: later events change nothing."""
        self.finished = True
        outcomes = self._outcomes
        if self._missing:
            for i, outcome in enumerate(outcomes):
                if outcome is None:
                    label = self.members[i].label
                    if self._state[i] == _CONNECTING:
                        failure = self.members[i].failure
                        text = "still connecting"
                        if failure:
                            text += f"; the last attempt failed: {failure}"
                    else:
                        text = "a majority had answered" if self.decided else "no reply in time"
                    kind = Reply.UNREAD if self.decided else Reply.TIMEOUT
                    outcomes[i] = NodeOutcome(label, kind, self._at(i, text))
                    self._state[i] = _ANSWERED
        # Every server has its outcome now (``_missing`` counts the ones without).
        outcomes_ = cast("tuple[NodeOutcome, ...]", tuple(outcomes))
        return Round(self.started, now, outcomes_, self.deadline - self.started)

    # -- queries -------------------------------------------------------------------

    @property
    def owing(self) -> int:
        """How many servers have no outcome yet."""
        return self._missing

    def answered(self, index: int) -> bool:
        return self._state[index] == _ANSWERED

    @property
    def allowance(self) -> float:
        """How long from its start the round waits for a server it connects to: its
        timeout, or first contact's grace."""
        return max(self._grace_until, self.deadline) - self.started

    def owing_may_decide(self) -> bool:
        """The servers owing a reply could still make the round succeed (a majority
        granted or confirmed) when it has not yet; a clean-up's, whatever the others
        answered (each undoes what an interrupted acquire may have written there)."""
        done = self._done
        return self.step.cleanup or done < self._needed <= done + self._missing

    # -- rules ---------------------------------------------------------------------

    def _record(self, index: int, outcome: NodeOutcome) -> Finish | None:
        self._outcomes[index] = outcome
        self._state[index] = _ANSWERED
        self._fresh.discard(index)
        self._missing -= 1
        if outcome.woke:
            # A release that named the head of the line: whether a majority did decides
            # what the process does next, so every answer is read.
            self._early = False
        if outcome.reply.ok:
            self._done += 1
            if self._early and self._done >= self._needed and not self.finished:
                self.finished = True
                self.decided = self._missing > 0
                return FINISH
        if self._missing == 0:
            self.finished = True
            return FINISH
        if self._in_grace and not self._worth_the_grace():
            self.finished = True
            return FINISH
        return None

    def _worth_the_grace(self) -> bool:
        """First contact is still under way, and the servers owing a reply could still
        make the round succeed (a majority granted or confirmed) when it has not yet.
        For a clean-up: a server reached before is still being connected to again, or
        owes the reply to what was sent on its new connection, whatever the others
        answered."""
        if self.step.cleanup:
            state, fresh = self._state, self._fresh
            return any(state[i] == _CONNECTING or i in fresh for i in self._reconnecting)
        first_contact = bool(self._fresh) or _CONNECTING in self._state
        return first_contact and self.owing_may_decide()

    def _at(self, index: int, text: str) -> str:
        """An error detail, naming the cluster node it comes from."""
        where = self.members[index].where
        return f"{where}: {text}" if where else text
