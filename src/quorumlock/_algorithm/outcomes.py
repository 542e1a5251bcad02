"""What one server answered to one command, and how a round of answers is judged.

Pure: the I/O layer turns a raw reply (or an exception) into a :class:`NodeOutcome`; from
there on, everything is decided here.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from quorumlock._algorithm.arithmetic import quorum

__all__ = [
    "CLUSTER_NODE_AS_SERVER",
    "HOLDER_PREFIX",
    "MARKER_OF_ANOTHER_TYPE",
    "NEW_SERVER",
    "WRONG_TYPE",
    "NodeOutcome",
    "Reply",
    "Verdict",
    "judge_acquire",
    "quarantine_advice",
    "quarantine_cause",
    "render_outcomes",
]


#: How much of a holder's token an acquire keeps to tell holders apart (never shown).
HOLDER_PREFIX = 16

#: What a cluster node's redirection (CROSSSLOT, MOVED) to a plain server means: it is
#: listed as a standalone server, and no retry changes that.
CLUSTER_NODE_AS_SERVER = (
    "a node of a Redis or Valkey Cluster given as a plain server; give the cluster as one "
    "RedisCluster client (docs/cluster.md)"
)

#: What a WRONGTYPE reply means: the name, not the server, is at fault (on that server,
#: and for that name only, no lock can be taken).
WRONG_TYPE = (
    "WRONGTYPE: the lock's key holds another kind of value on this server (an "
    "application's key of the same name?): no lock of this name can be taken there"
)


#: What a WRONGTYPE reply to a read of the server's incarnation marker means: a key of
#: that name that is not quorumlock's. Every lock with the restart quarantine or fencing
#: reads the marker, so none can be taken on that server while it is there.
MARKER_OF_ANOTHER_TYPE = (
    "WRONGTYPE: the key quorumlock:incarnation, this server's incarnation marker, holds "
    "another kind of value (an application's key of that name?): no lock with the restart "
    "quarantine or fencing can be taken on this server until that key is moved away, after "
    'which the server counts as one that lost its marker (docs/safety.md, "A missing '
    'marker")'
)


class Reply(enum.Enum):
    """One server's answer. The first four are definite answers from the server."""

    GRANTED = "granted"  # SET NX succeeded: the key is ours on this server
    TAKEN = "taken"  # SET NX refused: someone else holds the key here
    DONE = "done"  # release/extend: the key held our token and was deleted/extended
    NOT_HELD = "not held"  # release/extend: the key is gone or belongs to someone else
    ERROR = "error"  # an error reply or a broken connection; retrying may help
    FATAL = "fatal"  # an error retrying cannot fix: auth, read-only replica, ACL, ...
    TIMEOUT = "timeout"  # no answer within the per-instance timeout
    QUARANTINED = "quarantined"  # the server lost its memory recently: its answer can't count
    # The round was decided before this server answered (a majority had granted or
    # confirmed): its reply is read later, and dropped. Not an answer, not a failure.
    UNREAD = "not read"

    # Identity tests, not set membership: hashing a member runs Python code, and these
    # are asked of every reply.
    @property
    def answered(self) -> bool:
        """The server answered the question (yes or no), as opposed to failing."""
        return (
            self is Reply.GRANTED
            or self is Reply.TAKEN
            or self is Reply.DONE
            or self is Reply.NOT_HELD
        )

    @property
    def ok(self) -> bool:
        """The command took effect on this server."""
        return self is Reply.GRANTED or self is Reply.DONE


@dataclass(frozen=True, slots=True)
class NodeOutcome:
    """What one server answered in one round.

    ``server`` is a label without credentials (``redis://127.0.0.1:7001``), ``detail``
    the error text where there was one, ``latency`` the seconds from the send to the
    reply (None without a reply), ``fence`` the server's fencing counter drawn by an
    acquire with fencing on (None otherwise). ``holder`` tells apart who holds the key
    where an acquire was refused (TAKEN): a short prefix of the holder's token when the
    server said it (the acquire script does), None otherwise; it is not shown anywhere.
    ``place``: where a blocking acquire's waiter stands in the name's queue of waiters
    on this server after this command (1: first in line), None where it does not stand
    in line by it. ``woke``: a release that named the head of that queue, which was
    woken.
    """

    server: str
    reply: Reply
    detail: str = ""
    latency: float | None = None
    fence: int | None = None
    holder: str | None = field(default=None, repr=False, compare=False)
    place: int | None = field(default=None, repr=False, compare=False)
    woke: bool = field(default=False, repr=False, compare=False)

    def __str__(self) -> str:
        text = f"{self.server}: {self.reply.value}"
        return f"{text} ({self.detail})" if self.detail else text


def render_outcomes(outcomes: Sequence[NodeOutcome]) -> str:
    """One line naming every server and its answer, for exception messages and logs."""
    return "; ".join(str(o) for o in outcomes)


class Verdict(enum.Enum):
    """Why a round of acquire answers did or did not give us the lock."""

    ACQUIRED = "acquired"
    CONTENDED = "held by another client"  # enough servers answered; too few said yes
    EXPIRED = "validity ran out during the attempt"  # quorum, but validity <= 0 (R6.3)
    UNAVAILABLE = "too few servers answered"  # a retry may succeed once they are back
    QUARANTINED = "too few servers out of restart quarantine"  # a retry succeeds later
    UNFENCED = "the fencing token could not be made to stick on a majority"
    FATAL = "too few usable servers"  # errors that no retry can fix keep a majority away


def judge_acquire(outcomes: Sequence[NodeOutcome], *, in_time: bool) -> Verdict:
    """Judge one acquire round.

    ``in_time`` says whether the validity left after the round is > 0. The lock is ours iff
    at least ``N // 2 + 1`` servers granted it and ``in_time``. Otherwise the verdict says
    whether waiting can help: ``FATAL`` when errors retrying cannot fix already keep a
    majority out of reach, ``UNAVAILABLE`` when fewer than a majority answered at all,
    ``QUARANTINED`` when they would have been enough but for servers in restart
    quarantine, ``CONTENDED`` when they answered but too few said yes.
    """
    n = len(outcomes)
    needed = quorum(n)
    yes = Reply.GRANTED  # read once: an enum member read costs a call on Python 3.11
    granted = sum(1 for o in outcomes if o.reply is yes)
    if granted >= needed:
        return Verdict.ACQUIRED if in_time else Verdict.EXPIRED
    if n - sum(1 for o in outcomes if o.reply is Reply.FATAL) < needed:
        return Verdict.FATAL
    answered = sum(1 for o in outcomes if o.reply.answered)
    if answered < needed:
        quarantined = sum(1 for o in outcomes if o.reply is Reply.QUARANTINED)
        return Verdict.QUARANTINED if answered + quarantined >= needed else Verdict.UNAVAILABLE
    return Verdict.CONTENDED


#: The words that tell a quarantine a brand-new server may be under (see
#: :func:`quarantine_advice`).
NEW_SERVER = "a new server"

_EMPTIED = {"flushall": "FLUSHALL", "flushdb": "FLUSHDB", "swapdb": "SWAPDB"}
_REPLACED = {
    "debug": "DEBUG",
    "replicaof": "REPLICAOF",
    "slaveof": "SLAVEOF",
    "failover": "FAILOVER",
}


def _utc(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def quarantine_cause(lost: str, since_ms: int | None) -> str:
    """Why a server is in restart quarantine, from what the acquire script recorded in its
    marker (``lost``) and the server time (ms) the quarantine counts from."""
    at = f" at {_utc(since_ms)}" if since_ms else ""
    if lost == "start":
        return (
            f"no quorumlock marker on a server that started{at}: {NEW_SERVER}, or one that "
            "came back without its data"
        )
    if lost == "restart":
        return f"restarted{at} (its last writes before the restart may be lost)"
    if lost == "promotion":
        return "a replica promoted to master (its old master's last writes may be missing)"
    if lost == "eviction":
        return "its marker is gone and it evicted keys (maxmemory) since it started"
    if lost in _EMPTIED:
        return f"its data was emptied ({_EMPTIED[lost]} since it started)"
    if lost in _REPLACED:
        return f"its marker is gone and {_REPLACED[lost]} ran since it started"
    if lost == "config|resetstat":
        return "its marker is gone and its statistics were reset (CONFIG RESETSTAT)"
    if lost == "cluster":
        return "a cluster node without this slot's marker (new, moved here, or lost)"
    return "it lost its memory"


def quarantine_advice(outcomes: Sequence[NodeOutcome]) -> str:
    """What a user can do about servers in restart quarantine (empty if none is)."""
    quarantined = [o for o in outcomes if o.reply is Reply.QUARANTINED]
    if not quarantined:
        return ""
    text = "Wait: the quarantine ends by itself (a blocking acquire keeps retrying)"
    if any(NEW_SERVER in o.detail for o in quarantined):
        text += (
            "; if the server is brand-new and never granted a lock, mark it as new with "
            "'quorumlock servers init URL' or quorumlock.provision()"
        )
    return text + ". See docs/safety.md (B1)."
