"""The Redlock protocol as sans-I/O flows.

A flow is a generator that *yields* what it needs done and *receives* what happened, in
the manner of httpx's auth flows. It never touches a socket, a clock or an event loop, so
the sync and asyncio front ends run the very same flows and cannot drift apart:

- it yields :class:`Fanout`: send one command to every server at once (R7) and wait for
  each reply up to ``timeout``; the driver answers with a :class:`Round` that carries the
  monotonic times read just before the first send and just after the last reply;
- it yields :class:`Sleep`: pause; the driver answers with the monotonic time after it;
- it yields :class:`Watch`: subscribe to the release announcements of a key for the rest
  of the flow; the driver answers with a :class:`Woken`: the monotonic time after it,
  and whether an announcement may have been missed since the failed attempt;
- it yields :class:`Wait`: pause until a release of the watched key is announced, or at
  most ``seconds``; the driver answers with a :class:`Woken`;
- a :class:`Fanout` of :attr:`Op.QUEUE` (after a :class:`Watch` only) puts the waiter's
  process in the key's queue of waiters: the driver fills in the process's entry
  (``token``: its id, ``arrival``: its place) from the watch.

The flow's return value is its result. A driver is a dozen lines: see ``_run`` in
``quorumlock._sync`` and ``quorumlock.asyncio``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from quorumlock._algorithm.arithmetic import (
    HAND_OVER,
    deadline,
    queue_backoff,
    queue_lease_ms,
    quorum,
    retry_delay,
    wake_stagger,
)
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.fencing import draw_fence, fence_committed
from quorumlock._algorithm.outcomes import (
    HOLDER_PREFIX,
    NodeOutcome,
    Reply,
    Verdict,
    judge_acquire,
)

__all__ = [
    "ACQUIRE_OPS",
    "AcquireResult",
    "ExtendResult",
    "Fanout",
    "Flow",
    "Op",
    "Round",
    "Session",
    "Sleep",
    "Wait",
    "Watch",
    "Woken",
    "acquire_flow",
    "announce_cleanup",
    "as_cleanup",
    "extend_flow",
    "line_place",
    "pass_turn",
    "probe_flow",
    "release_flow",
    "rewritten",
    "undo_targets",
    "wait_on",
    "woke_the_line",
]

T = TypeVar("T")


class Op(enum.Enum):
    ACQUIRE = "acquire"
    RELEASE = "release"
    EXTEND = "extend"
    COMMIT_FENCE = "commit fence"
    PROBE = "probe"  # a plain GET: who holds the key here (``locked()``, ``owned()``)
    QUEUE = "queue"  # join (or with ``arrival`` "-" leave) the key's queue of waiters
    # Leader election (docs/election.md): record a leader's term; read who leads.
    CLAIM_TERM = "claim term"
    READ_LEADER = "read leader"
    # The read-write lock's commands (quorumlock._algorithm.rwlock): the same roles on
    # its one sorted set of holders.
    RW_READ = "acquire read"
    RW_WRITE = "acquire write"
    RW_RELEASE = "release read-write"
    RW_EXTEND = "extend read-write"
    RW_COMMIT_FENCE = "commit fence read-write"
    RW_PROBE = "probe read-write"
    RW_DOWNGRADE = "downgrade"
    # A counting semaphore's K slot keys (quorumlock._algorithm.semaphore): ``key`` is the
    # semaphore's base key, ``permits`` the number of slots.
    SEMAPHORE_ACQUIRE = "semaphore acquire"
    SEMAPHORE_RELEASE = "semaphore release"


#: The commands that try to take a lock (a release announced after one may wake it).
ACQUIRE_OPS = frozenset({Op.ACQUIRE, Op.RW_READ, Op.RW_WRITE, Op.SEMAPHORE_ACQUIRE})
#: The commands that delete a hold (or the grants of a failed attempt): one that a server
#: answered NOSCRIPT to after its round was over ran nothing there, and is sent again.
RELEASE_OPS = frozenset({Op.RELEASE, Op.RW_RELEASE, Op.SEMAPHORE_RELEASE})
#: The commands that only read who holds a lock or leads (``locked()``, ``owned()``,
#: ``leader()``): their answer counts servers, as an acquire's does.
READ_OPS = frozenset({Op.PROBE, Op.RW_PROBE, Op.READ_LEADER})
#: The commands whose answer counts servers (see ``Fanout.counts_servers``).
COUNTING_OPS = ACQUIRE_OPS | READ_OPS


@dataclass(frozen=True, slots=True)
class Fanout:
    """Send one command to every server at once; wait up to ``timeout`` for each reply.

    ``max_ttl_ms`` (0: off) and ``fencing`` select the acquire script (restart
    quarantine, fencing counter) instead of the plain ``SET``; ``fence`` is the token a
    ``COMMIT_FENCE`` makes stick; ``notify`` makes a ``RELEASE`` announce itself to the
    head of the key's queue of waiters. A ``QUEUE`` names the entry in ``token``, its
    place in line in ``arrival`` ("-" to leave; "pass <notice>" to pass the entry's turn,
    see :meth:`~quorumlock._io.wakeups.Woke.passing`) and its lease in ``ttl_ms``. A
    ``RELEASE`` that undoes attempt ``k`` of an acquire carries ``arrival`` ``k``, so that
    its announcements are told apart from those of the final release of the same token.
    A user's ``RELEASE`` carries ``lease_ms`` when the process may stand in line behind
    the waiter the release wakes (:func:`release_flow`); the driver then fills in
    ``member`` and ``arrival``, the process's entry and its place, where the process
    listens to the key's releases, and each outcome that put it in line says where.
    ``fair`` (``fair=True``): an ``ACQUIRE`` runs the fair acquire script, refused to
    anyone but the head of the queue; the driver fills in ``member``, the caller's entry
    (if it has one); a ``RELEASE`` names the head without taking it off the queue.
    Without ``fair``, the driver fills in ``member`` for the attempts of a waiter (a
    blocking acquire that listens to the releases): the acquire script then takes the
    entry off the queue where it writes the lock (``QUEUED_ACQUIRE``). Either way, the
    driver also fills in ``arrival`` and ``lease_ms``, the entry's place and lease: where
    the attempt is refused, the script puts the entry in line in the same step, and
    each outcome says where (``NodeOutcome.place``).
    ``keys``: for a multi-resource lock, every key of its set, sorted (``key`` is the
    first); the command then covers the whole set on each server in one atomic step (the
    ``*_MANY`` scripts, which have no queue: their releases name no head, and
    ``fair`` does not apply). ``permits`` and ``slots`` (a semaphore's): the number of
    slot keys, and the slots a ``SEMAPHORE_ACQUIRE`` tries in order (a
    ``SEMAPHORE_RELEASE``: the one slot to keep, none for all). ``intent_ms``: a waiting
    writer's intent lease (a read-write lock's acquire and its undo). ``targets``: the
    servers the command goes to, one flag per server in server order (() for all); a
    server left out is not written to, and its outcome is ``NOT_HELD`` with a detail
    saying so (the undo of a failed attempt, see :func:`undo_targets`).
    """

    op: Op
    key: str
    token: str
    ttl_ms: int
    timeout: float
    max_ttl_ms: int = 0
    fencing: bool = False
    fence: int = 0
    notify: bool = False
    arrival: str = ""
    fair: bool = False
    member: str = ""
    keys: tuple[str, ...] = ()
    intent_ms: int = 0  # a waiting writer's claim on readers (docs/algorithm.md, read-write)
    permits: int = 0
    slots: tuple[int, ...] = ()
    targets: tuple[bool, ...] = ()
    lease_ms: int = 0  # a waiter's attempt: the lease of the entry it puts in line
    # read every reply, also once a majority decided the round (a lease renewal, which
    # runs in the background, where the round trip to the slowest server costs nobody)
    every: bool = False
    # the monotonic time the round waits no later than, first-contact grace included,
    # though always for ``timeout`` (None: the grace may last the connect timeout; 0.0:
    # no grace, for the undo of a failed attempt)
    until: float | None = None
    # the clean-up of an interrupted acquire: the grace is for the servers reached before
    # whose connection is gone, not for those never reached (see ``RoundMachine``)
    cleanup: bool = False

    @property
    def joins(self) -> bool:
        """An attempt that puts the caller's entry in line where it is refused: its
        replies end with the entry's place (:func:`quorumlock._algorithm.wire.queue_answer`)."""
        return self.op is Op.ACQUIRE and not self.keys and (self.fair or bool(self.member))

    @property
    def contended(self) -> bool:
        """A round of a name this process waits for, or takes turns on: a waiter's
        attempt or a fair one (it names the process's entry in the queue of waiters), a
        release that puts the process in line behind the waiter it wakes, a join, a
        leave, a pass. Such a round never busy-polls for its replies (see
        ``quorumlock._io.fanout.SpinPolicy``)."""
        return bool(self.member) or self.op is Op.QUEUE

    @property
    def per_session(self) -> bool:
        """The command names the server process it is sent to: pack it per connection."""
        if self.op in (Op.RW_READ, Op.RW_WRITE, Op.SEMAPHORE_ACQUIRE):
            return True  # the read-write and semaphore acquires are always scripts
        return self.op is Op.ACQUIRE and (
            self.max_ttl_ms > 0 or self.fencing or self.fair or bool(self.keys or self.member)
        )

    @property
    def acquires(self) -> bool:
        """The command tries to take a lock (of any kind)."""
        return self.op in ACQUIRE_OPS

    @property
    def counts_servers(self) -> bool:
        """The command's answer is a count of servers (an acquire, or a read of who holds
        or leads), which one server listed twice would make a lie."""
        return self.op in COUNTING_OPS

    def undo(self) -> Fanout:
        """The release that takes back whatever this acquire may have set (R6 step 5)."""
        if self.op is Op.SEMAPHORE_ACQUIRE:
            return Fanout(
                Op.SEMAPHORE_RELEASE, self.key, self.token, self.ttl_ms, self.timeout,
                permits=self.permits,
            )  # fmt: skip
        op = Op.RELEASE if self.op is Op.ACQUIRE else Op.RW_RELEASE
        return Fanout(
            op, self.key, self.token, self.ttl_ms, self.timeout, fair=self.fair, keys=self.keys
        )


@dataclass(frozen=True, slots=True)
class Session:
    """What a connection learnt about its server when it was opened.

    A connection never outlives the server process it was opened to, so ``run_id`` is
    the identity of the process that runs every command sent on it (the acquire script
    compares it with the server's incarnation marker). ``durable``: the server fsyncs
    every write (``appendonly yes`` + ``appendfsync always``), so a restart loses nothing.
    ``promotion``: for a replica promoted to master (by a failover or ``REPLICAOF NO
    ONE``) that has not restarted since, the replication id it drew when promoted (a new
    random id at every promotion); "" otherwise. Its data came by asynchronous
    replication, so it may lack its old master's last writes whatever its own fsync.
    ``evicts``: how the server may evict keys under memory pressure (``"maxmemory-policy
    allkeys-lru with maxmemory 104857600"``), "" when it cannot (``noeviction``, or no
    ``maxmemory``) or did not say.
    """

    run_id: str
    durable: bool = False
    promotion: str = ""
    evicts: str = ""


@dataclass(frozen=True, slots=True)
class Round:
    """What a :class:`Fanout` gave: one outcome per server, in server order."""

    started: float  # monotonic, read before the first command was sent (R6 step 1)
    finished: float  # monotonic, read after the last reply or timeout (R6 step 3)
    outcomes: tuple[NodeOutcome, ...]
    #: How long it could wait for replies: its timeout, or longer in the first-contact
    #: grace (0.0: its timeout).
    allowed: float = 0.0

    def count(self, reply: Reply) -> int:
        return sum(1 for o in self.outcomes if o.reply is reply)


@dataclass(frozen=True, slots=True)
class Sleep:
    """Pause for ``seconds``; the driver answers with the monotonic time after it."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Watch:
    """Subscribe to the release announcements of ``key`` on every server, for the rest of
    the flow, waiting up to ``timeout`` for a majority of them to confirm. Announcements
    received since the last ``ACQUIRE`` fan-out was sent wake the next :class:`Wait`.

    The driver answers with a :class:`Woken`: the monotonic time after it, and
    ``notified`` unless the process had listened on the key since before ``since`` (when
    the failed attempt was sent) on a majority, and heard nothing since (a subscription
    kept from an earlier wait): a release in between may have gone unheard, and the flow
    tries again at once. It unsubscribes when the flow ends, however it ends.
    """

    key: str
    timeout: float
    keys: tuple[str, ...] = ()  # a multi-resource lock's set: a release of any wakes
    queued: bool = True  # the waiter joins the key's queue (a single lock's waiter)
    since: float = -math.inf
    # What the waiter asks for, among the waiters of one name that never queue: its
    # polls stand only for those that ask the same (a read-write lock's "read", "write";
    # a semaphore's number of permits)
    kind: str = ""
    # Only if the process listens to the key already (a waiter of it, or one that left
    # moments ago, and a majority confirmed): then the waiter is there before the first
    # attempt, which stands in line where it is refused; otherwise nothing is done and
    # the answer's ``listening`` is False. Answered at once, never waited for.
    already: bool = False


@dataclass(frozen=True, slots=True)
class Wait:
    """Pause up to ``seconds``, or until a release of the watched key is announced.
    ``longer``: while another waiter of this process on the key polls for both (the
    oldest of their sort: the same thing asked by the same process), wait on up to this
    many seconds more (``math.inf``: no bound), until that one leaves or an
    announcement comes."""

    seconds: float
    longer: float = 0.0


@dataclass(frozen=True, slots=True)
class Woken:
    """How a :class:`Wait` ended: the monotonic time, and whether an announcement came.

    ``alone``: the announcement named this waiter's process, which the server took off
    its queue (nobody else was woken: no stagger). ``requeue``: the process's entry was
    taken off the queue for another of its waiters; this one should put it back in line
    (with :attr:`Op.QUEUE`) and wait on. The answer to a :class:`Watch` ``already``:
    ``listening``, whether the waiter is there; ``woke``, how long ago a release of the
    key by this process woke the head of its queue (None: none did lately); ``place``,
    the waiter's place in line where that release put the process's entry in line on a
    majority (None otherwise).
    """

    now: float
    notified: bool
    alone: bool = False
    requeue: bool = False
    listening: bool = True
    woke: float | None = None
    place: int | None = None


Step = Fanout | Sleep | Watch | Wait
Answer = Round | float | Woken
Flow = Generator[Step, Answer, T]


def rewritten(flow: Flow[T], rewrite: Callable[[Step], Step]) -> Flow[T]:
    """``flow`` with each step it yields passed through ``rewrite``; answers and the
    result go through unchanged, and so does whatever it raises."""
    try:
        step = next(flow)
        while True:
            answer = yield rewrite(step)
            step = flow.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result
    finally:
        flow.close()


def as_cleanup(flow: Flow[T]) -> Flow[T]:
    """``flow``, the clean-up of an interrupted acquire (a task's cancellation, a signal),
    with its rounds marked so (``Fanout.cleanup``): they wait for no connection to a
    server never reached, which holds nothing of that acquire's, and for a new one to
    each server whose connection the interruption closed mid-reply, which may."""

    def marked(step: Step) -> Step:
        if isinstance(step, Fanout) and not step.cleanup:
            return dataclasses.replace(step, cleanup=True)
        return step

    return rewritten(flow, marked)


@dataclass(frozen=True, slots=True)
class AcquireResult:
    verdict: Verdict
    deadline: float | None  # monotonic time the lock holds until; None unless ACQUIRED
    outcomes: tuple[NodeOutcome, ...]  # of the last acquire round
    attempts: int
    fence: int | None = None  # the fencing token, with fencing on and ACQUIRED


def announce_cleanup(outcomes: Sequence[NodeOutcome]) -> bool:
    """Whether the release that undoes a failed attempt should wake the other waiters.

    Yes when every server answered GRANTED or TAKEN and no single holder has the key on
    a majority: then nobody holds the lock (a split vote: our grants and those of the
    others who tried at the same moment are all that keep it), and once everyone's
    attempt is undone the lock is free. No when one holder has a majority: waking the
    waiters would only make them fail again (over and over while the holder keeps the
    lock). No when a server did not answer or is in quarantine: its state is unknown, so
    the waiters keep to their polling pause.

    Holders are told apart by ``NodeOutcome.holder``; a TAKEN without it (the plain
    ``SET`` with the quarantine and fencing off) is counted as one same holder, which
    can only make an announcement less likely, never wrong.
    """
    holders: dict[str | None, int] = {}
    for outcome in outcomes:
        if outcome.reply is Reply.TAKEN:
            holders[outcome.holder] = holders.get(outcome.holder, 0) + 1
        elif outcome.reply is not Reply.GRANTED:
            return False
    return max(holders.values(), default=0) < quorum(len(outcomes))


def pass_turn(key: str, member: str, notice: str, timeout: float) -> Fanout:
    """The queue script's pass: ``member``'s entry of ``key`` leaves the line (none for
    ""), and where the lock is free the head is woken, its announcement called
    ``notice`` (the same on every server)."""
    return Fanout(Op.QUEUE, key, member, 0, timeout, arrival=f"pass {notice}")


def refused_while_free(outcomes: Sequence[NodeOutcome]) -> bool:
    """Whether a majority of the servers refused a fair attempt with the lock free: the
    fair acquire script, refused to all but the head of the line, names no holder
    (``""``) where nobody holds the key."""
    free = sum(1 for o in outcomes if o.reply is Reply.TAKEN and o.holder == "")
    return free >= quorum(len(outcomes))


def undo_targets(outcomes: Sequence[NodeOutcome], token: str) -> tuple[bool, ...]:
    """Which servers the undo of a failed attempt with ``token`` must reach (R6 step 5).

    All of them but those that answered TAKEN naming a holder other than us: that
    answer says the acquire script ran and found the key held by another token, so it
    wrote nothing of ours, and nothing of ours can be there (one key holds one token).
    A grant, a timeout, an error, a quarantine or a TAKEN that names no holder (the
    plain ``SET NX``) leaves the server's state unknown or ours: it is undone. A TAKEN
    naming our own token (an earlier attempt's grant, whose reply was lost) is undone
    too. Holders are compared by their first :data:`HOLDER_PREFIX` characters; another
    token with our prefix only costs one release too many. See docs/algorithm.md,
    "N servers".
    """
    ours = token[:HOLDER_PREFIX]
    return tuple(
        not (o.reply is Reply.TAKEN and o.holder is not None and o.holder != ours) for o in outcomes
    )


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
    keys: tuple[str, ...] = (),
    queue: bool = True,
    undo_everywhere: bool = False,
) -> Flow[AcquireResult]:
    """Acquire ``key`` with ``token`` on a majority (R6), retrying with jitter (R8).

    A failed attempt is undone on the servers :func:`undo_targets` names, in no round at
    all when it names none (every server refused for another holder: the refusal costs
    its one round trip); ``undo_everywhere`` undoes it on every server whatever they
    answered (a read-write lock, whose one key holds many tokens).

    One attempt when ``blocking`` is false. Otherwise attempts go on until one succeeds,
    ``config.retry_count`` retries were made, ``timeout`` seconds passed since ``now``, or
    the verdict is ``FATAL`` (no retry can help). ``uniform()`` draws the jitter.

    With ``config.wake_on_release``, the first failed attempt of a blocking acquire
    subscribes to the key's release announcements (:class:`Watch`), joins the key's queue
    of waiters (:attr:`Op.QUEUE`) and tries again at once, so that a release that
    happened before the subscription took effect is not missed (not at once when the
    process was listening all along and heard no release). From then on each pause
    (:class:`Wait`) ends early when a release names this waiter (the head of the queue;
    or anyone, from a server whose queue is empty); a wake-up that may have been shared
    is followed by a short random stagger (see
    :func:`~quorumlock._algorithm.arithmetic.wake_stagger`). Every attempt of a waiter
    stands in line where it is refused, in the same round (the driver names the entry,
    its arrival and lease: ``Fanout.joins``); a waiter whose entry was taken off the queue
    (woken by name) or whose lease is a third gone joins again after its next failed
    attempt, at the same place: every failed attempt asks to join, and the driver sends
    the join unless the entry is in line already (a majority put it there less than a
    third of its lease ago, by a join or by that attempt, and nobody took it off since);
    a join renews the lease. A blocking acquire in a process that listens to the key
    already (another waiter of it, or a wait that ended less than ``LINGER`` seconds ago:
    the workers of a busy name take turns) is a waiter from its first attempt
    (``Watch.already``): a refused first attempt costs one round, not two. The R8 pause
    stays as the fallback for an announcement that is lost and for a lock that expires;
    a pause may go on (``Wait.longer``, up to the timeout) while another waiter of the
    process polls for both, unless ``config.retry_count`` is set.
    Timeline (N = 5, retry_delay 0.2 s)::

        t = 0.000   attempt 1: 5 x TAKEN (holder H): nothing to undo; subscribe; a
                    majority confirms by 0.001
        t = 0.001   attempt 2 (at once), a waiter's: 5 x TAKEN (H), and each server puts
                    us in line (arrival a, the same on every server); wait up to 0.1 to
                    0.2 s
        t = 0.050   the holder releases: every server deletes its key, takes the head
                    of its queue (us) off it and names it in the announcement
        t = 0.0502  woken, alone: attempt 3 at once: granted

    The same process acquires again at t = 0.060 while H waits: it listens already, so
    its attempt 1 is a waiter's: refused, it stands in line behind H in that round.

    Without ``queue`` (and always for a multi-resource lock's set, ``keys``), the waiter
    watches but never joins a queue: the kinds of lock whose releases name no head (the
    set's, the read-write lock's) wake waiters of the name in every process, and a
    release that names another process's entry leaves this waiter to its R8 poll.
    ``fair`` applies to the single lock only.
    """
    queue = queue and not keys
    fair = config.fair and queue
    give_up_at = None if timeout is None else now + timeout
    timeout_each = config.timeout_for(ttl_ms)
    # a waiter's entry: its lease, and the join made once it first queues apart from an
    # attempt (most acquires never wait)
    lease_ms = queue_lease_ms(config.retry_delay) if blocking and queue else 0
    join: Fanout | None = None
    watching = behind = just_woke = False
    place: int | None = None  # in the queue of waiters, as a majority last told it
    if blocking and queue and config.wake_on_release:
        heard = yield Watch(key, 0.0, already=True)
        assert isinstance(heard, Woken)
        watching = heard.listening
        # this process just woke the head of the line: stand behind it, not race it (a
        # fair lock's attempt races nobody: the servers refuse it to all but the head,
        # and where it is refused it stands in line in the same round; where the head
        # came and went meanwhile, it takes the free lock instead of waiting for a poll)
        just_woke = watching and heard.woke is not None and heard.woke < HAND_OVER
        behind = just_woke and not fair
        place = heard.place  # where that release put this process in line, if it did
        now = heard.now
    misses = 0  # announcements that woke us without bringing us the lock
    attempts = 0
    elapsed = 0.0
    while True:
        if behind:
            behind = False  # no attempt: join the line, then wait to be woken
        else:
            attempts += 1
            acquire = Fanout(
                Op.ACQUIRE,
                key,
                token,
                ttl_ms,
                timeout_each,
                config.max_ttl_ms,
                config.fencing,
                fair=fair,
                keys=keys,
                lease_ms=lease_ms,
            )
            round_ = yield acquire
            assert isinstance(round_, Round)
            if watching and queue:
                place = line_place(round_.outcomes) or place
            holds_until = deadline(round_.started, ttl_ms, config.clock_drift_factor)
            verdict = judge_acquire(round_.outcomes, in_time=round_.finished < holds_until)
            if verdict is Verdict.ACQUIRED and config.fencing:
                fence = yield from _fence_flow(
                    key=key,
                    token=token,
                    ttl_ms=ttl_ms,
                    timeout=timeout_each,
                    acquired=round_,
                    holds_until=holds_until,
                )
                if fence is not None:
                    return AcquireResult(verdict, holds_until, round_.outcomes, attempts, fence)
                verdict = Verdict.UNFENCED
            elif verdict is Verdict.ACQUIRED:
                return AcquireResult(verdict, holds_until, round_.outcomes, attempts)
            # R6 step 5: undo on every server where a grant of ours may have been written,
            # also those that seemed to fail (a grant may have been written and its reply
            # lost); not where another holder's key refused us.
            targets = (True,) * len(round_.outcomes)
            if not undo_everywhere:
                targets = undo_targets(round_.outcomes, token)
            now = round_.finished
            elapsed = round_.finished - round_.started
            if any(targets):
                notify = announce_cleanup(round_.outcomes)
                cleanup = yield Fanout(
                    Op.RELEASE, key, token, ttl_ms, timeout_each, notify=notify,
                    arrival=str(attempts), fair=fair, keys=keys,
                    targets=() if all(targets) else targets, until=0.0,
                )  # fmt: skip
                assert isinstance(cleanup, Round)
                now = cleanup.finished
            if fair and not just_woke and refused_while_free(round_.outcomes):
                # Not our turn, and nobody holds the lock: the head of the line is not
                # taking it (unless our own release just named it: a hand-over under
                # way). It became the head with no release to name it (a process whose
                # waiters come and go moves its entry in the line). Wake it: the queue
                # script's pass of no entry, as a release would.
                nudge = yield pass_turn(key, "", f"{token}:{attempts}", timeout_each)
                assert isinstance(nudge, Round)
                now = nudge.finished
            just_woke = False
            out_of_retries = config.retry_count is not None and attempts > config.retry_count
            if not blocking or verdict is Verdict.FATAL or out_of_retries:
                return AcquireResult(verdict, None, round_.outcomes, attempts)
            if give_up_at is not None and now >= give_up_at:
                return AcquireResult(verdict, None, round_.outcomes, attempts)
            if config.wake_on_release and not watching:
                watching = True
                wait = config.connect_timeout
                if give_up_at is not None:
                    wait = min(wait, give_up_at - now)
                watched = yield Watch(key, wait, keys, queued=queue, since=round_.started)
                assert isinstance(watched, Woken)
                if watched.notified:
                    continue  # at once: a release before the subscription would go unnoticed
                now = watched.now
        if watching and queue:
            # (re)join after every failed try: the first time; after a wake-up by name,
            # which took the entry off the queues; and to renew the lease (the driver
            # answers at once, sending nothing, when none of these applies)
            if join is None:
                join = Fanout(Op.QUEUE, key, "", lease_ms, timeout_each)
            joined = yield join
            assert isinstance(joined, Round)
            now = joined.finished
            place = line_place(joined.outcomes) or place
        pause = retry_delay(config.retry_delay, uniform()) * queue_backoff(place)
        if give_up_at is not None:
            pause = min(pause, give_up_at - now)
        if not watching:
            slept = yield Sleep(pause)
            assert isinstance(slept, float)
            continue
        longer = wait_on(config, give_up_at, now + pause)
        woken = yield Wait(pause, longer)
        assert isinstance(woken, Woken)
        while queue and woken.requeue and woken.now < now + pause:
            # another waiter of this process was woken by name: stand in line for it
            assert join is not None  # a waiter woken in the queue has joined it
            joined = yield join
            assert isinstance(joined, Round)
            woken = yield Wait(max(0.0, now + pause - joined.finished), longer)
            assert isinstance(woken, Woken)
        if woken.notified and not woken.alone and not woken.requeue:
            stagger = wake_stagger(elapsed, misses, uniform(), config.retry_delay)
            if give_up_at is not None:
                stagger = min(stagger, max(0.0, give_up_at - woken.now))
            misses += 1
            if stagger > 0:
                slept = yield Sleep(stagger)
                assert isinstance(slept, float)


def wait_on(config: RedlockConfig, give_up_at: float | None, end: float) -> float:
    """How much longer than a pause that ends at ``end`` a waiter may wait
    (:attr:`Wait.longer`) while another waiter of its process polls for both: to its
    timeout ``give_up_at`` (None: for good). Not with a retry count, which each acquire
    spends on its own attempts. (The driver knows whether another polls for it: never
    for a set's waiter, whose names no other waiter asks for all together.)"""
    if config.retry_count is not None:
        return 0.0
    return math.inf if give_up_at is None else max(0.0, give_up_at - end)


def woke_the_line(outcomes: Sequence[NodeOutcome]) -> bool:
    """Whether a release woke the head of the queue of waiters: a majority of the
    servers named it (a waiter woken by the first of them tries at once)."""
    woke = 0
    for outcome in outcomes:
        if outcome.woke:
            woke += 1
    return woke > 0 and woke >= quorum(len(outcomes))


def line_place(outcomes: Sequence[NodeOutcome]) -> int | None:
    """A waiter's place in line from the answers to its join, or to an attempt that
    joined where it was refused: a majority of the servers put it at that place or ahead
    of it (None when fewer than a majority did, or when the join was not sent)."""
    places = sorted(o.place for o in outcomes if o.place)
    needed = quorum(len(outcomes)) if outcomes else 1
    return places[needed - 1] if len(places) >= needed else None


def _fence_flow(
    *, key: str, token: str, ttl_ms: int, timeout: float, acquired: Round, holds_until: float
) -> Flow[int | None]:
    """The fencing token of an acquisition, made to stick on a majority.

    Returns None if it could not be made to stick before ``holds_until``. One more round
    trip only when the servers' counters disagree (see :func:`draw_fence`).
    """
    fence, stuck = draw_fence(acquired.outcomes)
    if stuck:
        return fence
    wait = min(timeout, holds_until - acquired.finished)
    commit = yield Fanout(Op.COMMIT_FENCE, key, token, ttl_ms, wait, fence=fence)
    assert isinstance(commit, Round)
    if commit.finished < holds_until and fence_committed(acquired.outcomes, commit.outcomes, fence):
        return fence
    return None


def release_flow(
    *, key: str, token: str, ttl_ms: int, config: RedlockConfig, keys: tuple[str, ...] = ()
) -> Flow[Round]:
    """Compare-and-delete on all servers, whatever we believe each holds (R9)."""
    timeout = config.timeout_for(ttl_ms)
    fair = config.fair and not keys
    # a process that acquires the key again soon stands in line behind the waiter this
    # release wakes, put there by this round (docs/algorithm.md, "Waiting", step 9)
    lease_ms = 0 if fair or keys else queue_lease_ms(config.retry_delay)
    round_ = yield Fanout(
        Op.RELEASE, key, token, ttl_ms, timeout, notify=True, fair=fair, keys=keys,
        lease_ms=lease_ms,
    )  # fmt: skip
    assert isinstance(round_, Round)
    return round_


def probe_flow(
    *, key: str, token: str, ttl_ms: int, config: RedlockConfig, keys: tuple[str, ...] = ()
) -> Flow[Round]:
    """Read the key on all servers: each answers TAKEN (with the holder's token prefix)
    or NOT_HELD. Changes nothing."""
    round_ = yield Fanout(Op.PROBE, key, token, ttl_ms, config.timeout_for(ttl_ms), keys=keys)
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
    keys: tuple[str, ...] = (),
) -> Flow[ExtendResult]:
    """Reset the ttl of our key on a majority, within the remaining validity (R10).

    The extension counts only if a majority confirmed it and the round ended before the
    current deadline ``held_until``; the new deadline is computed as for an acquire, from
    the time the round started. On failure the key is released everywhere: the lock is
    lost, and keeping it on a minority would only block the other clients.

    With ``final=False`` (lease renewal) a failure before the deadline never releases:
    the holder may be relying on the validity it was given and not be looking. When it
    is recoverable (servers that did not answer, rather than a majority saying "not
    held") the caller can try again before the deadline; otherwise the lock is lost,
    and reported so at once, but the keys the holder still has stay until its release
    or their ttl (docs/algorithm.md, "N servers").

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
        round_ = yield Fanout(Op.EXTEND, key, token, ttl_ms, wait, keys=keys, every=not final)
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
        if not final and round_.finished < held_until:
            # A renewal that cannot succeed reports the loss now, but keeps the keys it
            # still has: the holder was promised the lock until ``held_until`` and may
            # not have looked since. Its release (the end of its block) deletes them.
            return ExtendResult(None, outcomes, reason, lost=gone)
    cleanup = yield from release_flow(key=key, token=token, ttl_ms=ttl_ms, config=config, keys=keys)
    return ExtendResult(None, outcomes or cleanup.outcomes, reason, lost=True)
