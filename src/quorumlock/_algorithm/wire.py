"""The wire encoding of a fan-out: the command a :class:`Fanout` sends, and what a
server's reply to it means.

Pure, like the flows: the I/O layer packs these arguments (``quorumlock._io.packing``)
and hands each decoded reply to :func:`interpret`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from quorumlock._algorithm.election import term_key
from quorumlock._algorithm.flows import Fanout, Op, Session
from quorumlock._algorithm.outcomes import HOLDER_PREFIX, Reply, quarantine_cause
from quorumlock._algorithm.scripts import (
    ACQUIRE,
    ACQUIRE_MANY,
    CLAIM_TERM,
    COMMIT_FENCE,
    EXTEND,
    EXTEND_EACH,
    EXTEND_MANY,
    FAIR_ACQUIRE,
    MARKER_KEY,
    PROBE_MANY,
    QUEUE,
    QUEUE_EXPIRY_PREFIX,
    QUEUE_PREFIX,
    QUEUED_ACQUIRE,
    READ_LEADER,
    RELEASE,
    RELEASE_MANY,
    RW_ACQUIRE,
    RW_COMMIT_FENCE,
    RW_DOWNGRADE,
    RW_EXTEND,
    RW_PROBE,
    RW_RELEASE,
    SEMAPHORE_ACQUIRE,
    SEMAPHORE_RELEASE,
    Script,
)

__all__ = [
    "HOLDER_PREFIX",
    "command_args",
    "eval_args",
    "extend_each_args",
    "extends_one",
    "interpret",
    "member_args",
    "queue_answer",
    "queue_keys",
    "script_of",
    "session_args",
    "shared_args",
    "slot_keys",
    "text",
]


def command_args(step: Fanout, session: Session | None = None) -> tuple[str | int, ...]:
    """The command a fan-out sends, as arguments for the client's packer.

    Acquire is the plain ``SET key token NX PX ttl`` of R1, or with the restart
    quarantine or fencing on (``step.per_session``), the acquire script that runs that
    ``SET`` and names the ``session``'s server process: :func:`shared_args` followed by
    :func:`session_args`. Release and extend run the scripts by digest (``EVALSHA``).
    :func:`eval_args` is the fallback for a server that answers ``NOSCRIPT`` (it
    restarted, or its script cache was flushed).
    """
    if not step.per_session:
        return shared_args(step)
    if session is None:
        raise ValueError("the acquire script needs the connection's session")
    return (*shared_args(step), *session_args(session), *member_args(step))


def member_args(step: Fanout) -> tuple[str | int, ...]:
    """What a per-session command sends after the session's arguments: the caller's
    entry in the queue of waiters, its arrival and its lease, for a fair acquire; the
    queue's keys before those, for a queued one (``QUEUED_ACQUIRE``); else nothing. An
    entry without an arrival joins nowhere."""
    if not step.joins:
        return ()
    entry = (step.member, step.arrival, step.lease_ms)
    if step.fair:
        return entry
    return (*queue_keys(step.key), *entry)


def shared_args(step: Fanout) -> tuple[str | int, ...]:
    """The part of the command that is the same for every server (all of it, unless
    ``step.per_session``: then the session's arguments come last)."""
    if step.op in _RW_ARGS:
        return _RW_ARGS[step.op](step)
    if step.keys:
        return _set_args(step)
    if step.op is Op.ACQUIRE:
        if not step.per_session:
            return ("SET", step.key, step.token, "NX", "PX", step.ttl_ms)
        fencing = "1" if step.fencing else "0"
        if step.fair:
            return (
                "EVALSHA", FAIR_ACQUIRE.sha, 4, step.key, MARKER_KEY, *queue_keys(step.key),
                step.token, step.ttl_ms, step.max_ttl_ms, fencing,
            )  # fmt: skip
        script = QUEUED_ACQUIRE if step.member else ACQUIRE
        return (
            "EVALSHA", script.sha, 2, step.key, MARKER_KEY, step.token, step.ttl_ms,
            step.max_ttl_ms, fencing,
        )  # fmt: skip
    if step.op is Op.RELEASE:
        if not step.notify:
            return ("EVALSHA", RELEASE.sha, 1, step.key, step.token, "0")
        if step.member:  # the caller stands in line behind the head it wakes
            return (
                "EVALSHA", RELEASE.sha, 1, step.key, step.token, "1", step.token, "",
                *queue_keys(step.key), step.member, step.arrival, step.lease_ms,
            )  # fmt: skip
        return (
            "EVALSHA", RELEASE.sha, 1, step.key, step.token, "1", notice(step),
            "keep" if step.fair else "", *queue_keys(step.key),
        )  # fmt: skip
    if step.op is Op.QUEUE:
        if step.arrival.startswith("pass "):
            return ("EVALSHA", QUEUE.sha, 3, *queue_keys(step.key), step.key, step.token,
                    "pass", step.arrival[5:])  # fmt: skip
        return ("EVALSHA", QUEUE.sha, 2, *queue_keys(step.key), step.token, step.arrival,
                step.ttl_ms)  # fmt: skip
    if step.op is Op.PROBE:
        return ("GET", step.key)
    if step.op is Op.SEMAPHORE_ACQUIRE:
        slots = slot_keys(step.key, step.permits)
        return (
            "EVALSHA", SEMAPHORE_ACQUIRE.sha, len(slots) + 1, *slots, MARKER_KEY, step.token,
            step.ttl_ms, step.max_ttl_ms, "1" if step.fencing else "0",
            ",".join(str(slot) for slot in step.slots),
        )  # fmt: skip
    if step.op is Op.SEMAPHORE_RELEASE:
        slots = slot_keys(step.key, step.permits)
        keep = step.slots[0] if step.slots else -1
        notify = "1" if step.notify else "0"
        return (
            "EVALSHA", SEMAPHORE_RELEASE.sha, len(slots), *slots, step.token, keep, notify,
            notice(step),
        )  # fmt: skip
    if step.op is Op.COMMIT_FENCE:
        return ("EVALSHA", COMMIT_FENCE.sha, 2, step.key, MARKER_KEY, step.token, step.fence)
    if step.op is Op.CLAIM_TERM:
        return ("EVALSHA", CLAIM_TERM.sha, 2, step.key, term_key(step.key), step.token, step.fence)
    if step.op is Op.READ_LEADER:
        return ("EVALSHA", READ_LEADER.sha, 2, step.key, term_key(step.key))
    return ("EVALSHA", EXTEND.sha, 1, step.key, step.token, step.ttl_ms)


def notice(step: Fanout) -> str:
    """What a release's announcements call it: its token, and for the undo of attempt
    ``k`` of an acquire (``arrival`` ``k``) the attempt too, so that a process tells one
    release announced by several servers apart from the next release of the same token
    (:meth:`quorumlock._io.wakeups.Entry.deliver`)."""
    return f"{step.token}:{step.arrival}" if step.arrival else step.token


def queue_keys(key: str, tag: str | None = None) -> tuple[str, str]:
    """The queue of waiters of ``key`` and its expiries (see
    :data:`~quorumlock._algorithm.scripts.QUEUE_PREFIX`); on a cluster instance, with the
    hash ``tag`` of the key's slot, so that a script touches one slot only."""
    if tag is None:
        return QUEUE_PREFIX + key, QUEUE_EXPIRY_PREFIX + key
    return f"{QUEUE_PREFIX}{{{tag}}}:{key}", f"{QUEUE_EXPIRY_PREFIX}{{{tag}}}:{key}"


def _set_args(step: Fanout) -> tuple[str | int, ...]:
    """A multi-resource lock's command: the ``*_MANY`` script over its whole set. The
    acquire keeps ACQUIRE's layout (KEYS[2] the marker, the other keys after it), so
    that the cluster variant and the fence commit treat it as they treat ACQUIRE."""
    keys = step.keys
    if step.op is Op.ACQUIRE:
        fencing = "1" if step.fencing else "0"
        return (
            "EVALSHA", ACQUIRE_MANY.sha, len(keys) + 1, keys[0], MARKER_KEY, *keys[1:],
            step.token, step.ttl_ms, step.max_ttl_ms, fencing,
        )  # fmt: skip
    if step.op is Op.RELEASE:
        notify = "1" if step.notify else "0"
        return ("EVALSHA", RELEASE_MANY.sha, len(keys), *keys, step.token, notify, notice(step))
    if step.op is Op.EXTEND:
        return ("EVALSHA", EXTEND_MANY.sha, len(keys), *keys, step.token, step.ttl_ms)
    if step.op is Op.PROBE:
        return ("EVALSHA", PROBE_MANY.sha, len(keys), *keys)
    # The fence commit checks one key: the set was set in one step, with one ttl.
    return ("EVALSHA", COMMIT_FENCE.sha, 2, step.key, MARKER_KEY, step.token, step.fence)


def _rw_acquire_args(step: Fanout) -> tuple[str | int, ...]:
    mode = "r" if step.op is Op.RW_READ else "w"
    return (
        "EVALSHA", RW_ACQUIRE.sha, 2, step.key, MARKER_KEY, mode + step.token,
        f"{step.ttl_ms}:{step.intent_ms}", step.max_ttl_ms, "1" if step.fencing else "0",
    )  # fmt: skip


_RW_ARGS: dict[Op, Callable[[Fanout], tuple[str | int, ...]]] = {
    Op.RW_READ: _rw_acquire_args,
    Op.RW_WRITE: _rw_acquire_args,
    Op.RW_RELEASE: lambda step: (
        "EVALSHA",
        RW_RELEASE.sha,
        1,
        step.key,
        step.token,
        "1" if step.notify else "0",
        step.intent_ms,
        notice(step),
    ),
    Op.RW_EXTEND: lambda step: ("EVALSHA", RW_EXTEND.sha, 1, step.key, step.token, step.ttl_ms),
    # (announced under a notice of its own: the release that follows has the same token)
    Op.RW_DOWNGRADE: lambda step: (
        "EVALSHA",
        RW_DOWNGRADE.sha,
        1,
        step.key,
        step.token,
        f"{step.token}:downgrade",
    ),
    Op.RW_PROBE: lambda step: ("EVALSHA", RW_PROBE.sha, 1, step.key, step.token),
    Op.RW_COMMIT_FENCE: lambda step: (
        "EVALSHA",
        RW_COMMIT_FENCE.sha,
        2,
        step.key,
        MARKER_KEY,
        step.token,
        step.fence,
    ),
}


def session_args(session: Session) -> tuple[str, str]:
    """The acquire script's last two arguments: the server process, and what it may have
    lost: ``"P<replication id>"`` a promoted replica (its old master's last writes),
    ``"1"`` nothing across a restart (durable), ``"0"`` the last writes before a restart.
    A promotion wins over durability: fsync cannot save writes that never reached the
    replica."""
    if session.promotion:
        return (session.run_id, "P" + session.promotion)
    return (session.run_id, "1" if session.durable else "0")


_SCRIPT_OF = {
    Op.ACQUIRE: ACQUIRE,
    Op.RELEASE: RELEASE,
    Op.EXTEND: EXTEND,
    Op.COMMIT_FENCE: COMMIT_FENCE,
    Op.CLAIM_TERM: CLAIM_TERM,
    Op.READ_LEADER: READ_LEADER,
    Op.RW_READ: RW_ACQUIRE,
    Op.RW_WRITE: RW_ACQUIRE,
    Op.RW_RELEASE: RW_RELEASE,
    Op.RW_EXTEND: RW_EXTEND,
    Op.RW_DOWNGRADE: RW_DOWNGRADE,
    Op.RW_PROBE: RW_PROBE,
    Op.RW_COMMIT_FENCE: RW_COMMIT_FENCE,
    Op.SEMAPHORE_ACQUIRE: SEMAPHORE_ACQUIRE,
    Op.SEMAPHORE_RELEASE: SEMAPHORE_RELEASE,
    Op.QUEUE: QUEUE,
}


_SET_SCRIPT_OF = {
    Op.ACQUIRE: ACQUIRE_MANY,
    Op.RELEASE: RELEASE_MANY,
    Op.EXTEND: EXTEND_MANY,
    Op.PROBE: PROBE_MANY,
    Op.COMMIT_FENCE: COMMIT_FENCE,
}


def script_of(step: Fanout) -> Script:
    """The script a fan-out's command runs (``KeyError`` for a plain command)."""
    if step.op is Op.ACQUIRE and not step.keys and (step.fair or step.member):
        return FAIR_ACQUIRE if step.fair else QUEUED_ACQUIRE
    return (_SET_SCRIPT_OF if step.keys else _SCRIPT_OF)[step.op]


def slot_keys(base: str, permits: int) -> tuple[str, ...]:
    """The keys of a counting semaphore's permits: ``<base>:0`` .. ``<base>:<K-1>``."""
    return tuple(f"{base}:{slot}" for slot in range(permits))


def extends_one(step: Fanout) -> bool:
    """Whether ``step`` is a plain EXTEND of one key (not a set's, not aimed at some
    servers only), which :func:`extend_each_args` can send together with others."""
    return step.op is Op.EXTEND and not step.keys and not step.targets


def extend_each_args(steps: Sequence[Fanout], *, eval_form: bool = False) -> tuple[str | int, ...]:
    """One ``EXTEND_EACH`` call for ``steps`` (each :func:`extends_one`): their keys,
    then each one's token and ttl, in the same order; its answer has theirs in that
    order. ``eval_form``: the ``EVAL`` form, which also caches the script."""
    tail: list[str | int] = []
    for step in steps:
        tail += (step.token, step.ttl_ms)
    head = ("EVAL", EXTEND_EACH.source) if eval_form else ("EVALSHA", EXTEND_EACH.sha)
    return (*head, len(steps), *(step.key for step in steps), *tail)


def eval_args(step: Fanout, session: Session | None = None) -> tuple[str | int, ...]:
    """The ``EVAL`` form of a script command; running it also caches the script."""
    args = command_args(step, session)
    if args[0] != "EVALSHA":
        raise ValueError(f"{step.op.value} does not run a script")
    return ("EVAL", script_of(step).source, *args[2:])


def queue_answer(step: Fanout, raw: object) -> tuple[object, int | None, bool]:
    """What a reply says about the name's queue of waiters, apart: the reply without
    it, where ``step`` put the caller's entry in line (1: the head; None where it did
    not), and whether it woke the head of the line (a release that named it).

    A join (:attr:`Op.QUEUE`) answers the place itself; an attempt that joins where it
    is refused (:attr:`Fanout.joins`) answers the acquire script's reply followed by
    the place, 0 where it did not join (it wrote the lock, or the queue was refused); a
    release that announces itself answers 2 instead of 1 where it named the head, and 2 +
    the caller's place where it also put the caller in line behind it (``step.member``).
    """
    if type(raw) is int:
        if raw >= 2 and step.op is Op.RELEASE and step.notify and not step.keys:
            return 1, (raw - 2 if raw > 2 and step.member else None), True
        if step.op is Op.QUEUE and raw >= 1:
            return raw, raw, False
        return raw, None, False
    if step.joins and isinstance(raw, list) and raw and isinstance(raw[-1], int):
        place = raw[-1]
        return raw[:-1], (place if place >= 1 else None), False
    return raw, None, False


def text(value: object) -> str:
    """A server's reply as text (bytes decoded, an undecodable byte replaced)."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def interpret(op: Op, raw: object) -> tuple[Reply, str, int | None, str | None]:
    """Turn a server's (non-error) reply to ``op`` into (reply, detail, fencing counter,
    holder).

    Works with raw and decoded replies (a client object given by the user may decode).
    The acquire script answers ``[granted, quarantine ms left, fencing counter]`` and,
    when it was not granted, the holder's token, of which the first
    :data:`HOLDER_PREFIX` characters are kept (see :func:`announce_cleanup`); in
    quarantine, also why and since when (server ms), which the detail tells. Granted
    with neither a quarantine nor a counter, it answers 1 alone (a plain ``SET``: OK,
    or nil where the key is taken). What a reply says of the queue of waiters is taken
    apart before (:func:`queue_answer`).
    """
    if op is Op.RELEASE or op is Op.EXTEND:
        return _yes_no(raw)  # the commonest rounds after acquires: no branch below is theirs
    if op is Op.SEMAPHORE_ACQUIRE:
        # [slot tried, free slots, then the acquire script's reply for that slot]: the
        # slot and the free slots go in ``holder`` as "<slot>:<free>", which the
        # semaphore's flow reads (quorumlock._algorithm.semaphore.SlotReply).
        if isinstance(raw, list) and len(raw) >= 5 and isinstance(raw[0], int):
            reply, detail, fence, _ = interpret(Op.ACQUIRE, raw[2:])
            if reply is not Reply.ERROR:
                return reply, detail, fence, f"{raw[0]}:{text(raw[1])}"
    elif op is Op.ACQUIRE or op is Op.RW_READ or op is Op.RW_WRITE:
        if raw == 1 or raw in (b"OK", "OK"):  # the script's short answer, or a SET's
            return Reply.GRANTED, "", None, None
        if raw is None:
            return Reply.TAKEN, "", None, None
        if (
            isinstance(raw, list)
            and len(raw) in (3, 4, 6)
            and isinstance(raw[0], int)
            and isinstance(raw[1], int)
            and isinstance(raw[2], int)
        ):
            granted, left_ms, fence = raw[:3]
            counter = fence if fence > 0 else None
            holder = None
            if len(raw) >= 4 and isinstance(raw[3], bytes | str):
                value = raw[3].decode(errors="replace") if isinstance(raw[3], bytes) else raw[3]
                holder = value[:HOLDER_PREFIX]
            if left_ms > 0:
                recorded = "granted" if granted else "taken"
                lost, since = (text(x) for x in raw[4:6]) if len(raw) == 6 else ("", "")
                cause = quarantine_cause(lost, int(since) if since.isdigit() else None)
                detail = (
                    f"restart quarantine: {cause}; {left_ms / 1000:.1f} s left; {recorded} here"
                )
                return Reply.QUARANTINED, detail, counter, holder
            return (Reply.GRANTED if granted else Reply.TAKEN), "", counter, holder
    elif op is Op.PROBE or op is Op.RW_PROBE:
        if raw is None:
            return Reply.NOT_HELD, "", None, None
        if isinstance(raw, bytes | str):
            value = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            return Reply.TAKEN, "", None, value[:HOLDER_PREFIX]
    elif op is Op.QUEUE and isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        # a join's answer is the entry's place in line (see :func:`queue_answer`)
        return Reply.DONE, "", None, None
    elif op is Op.READ_LEADER:
        # "<pttl> <term> <token>": all of it, decoded by election.leader_of
        if raw is None:
            return Reply.NOT_HELD, "", None, None
        if isinstance(raw, bytes | str):
            return Reply.TAKEN, "", None, text(raw)
    else:
        return _yes_no(raw)
    return Reply.ERROR, f"unexpected reply {raw!r}", None, None


def _yes_no(raw: object) -> tuple[Reply, str, int | None, str | None]:
    """The reply of a command that answers 1 (it took effect: the key held our token) or
    0 (it did not), as :func:`interpret` gives it."""
    if raw == 1:
        return Reply.DONE, "", None, None
    if raw == 0:
        return Reply.NOT_HELD, "", None, None
    return Reply.ERROR, f"unexpected reply {raw!r}", None, None
