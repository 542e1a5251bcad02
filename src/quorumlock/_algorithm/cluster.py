"""A Redis/Valkey Cluster as ONE Redlock instance: slots, per-slot markers, commands.

Pure: no redis, no clock. A cluster counts as one of the N instances; each lock key is
served by the master that owns its slot (``key_slot``). The restart quarantine
and the fencing counter (B2) need an incarnation marker on that master, in the same slot
as the lock key so that the acquire script touches one slot only: the marker of slot
``s`` is ``quorumlock:incarnation:{<tag>}``, where ``<tag>`` is the smallest
non-negative integer, written in decimal, whose CRC16 falls in ``s`` (:func:`slot_tag`).
Every quorumlock client computes the same table, so they all share one marker per slot.

Why one marker per *slot* and not per node: a slot moves (resharding, failover) with
all its keys, the marker included, so whatever the marker knows about the slot's past
(a memory loss still in quarantine, the fencing counter) travels with the lock keys it
is about. A per-node marker would stay behind: a node that lost its memory and then
handed its slots to another node would pass on forgotten locks with no quarantine.
See ``docs/cluster.md`` and :data:`quorumlock._algorithm.scripts.CLUSTER_ACQUIRE`.
"""

from __future__ import annotations

import binascii
import functools

from quorumlock._algorithm.flows import Fanout, Op, Session
from quorumlock._algorithm.scripts import (
    ACQUIRE,
    CLUSTER_ACQUIRE,
    CLUSTER_ACQUIRE_MANY,
    CLUSTER_FAIR_ACQUIRE,
    CLUSTER_QUEUED_ACQUIRE,
    CLUSTER_RW_ACQUIRE,
    MARKER_KEY,
    RW_ACQUIRE,
)
from quorumlock._algorithm.wire import command_args, queue_keys, script_of

__all__ = [
    "SLOTS",
    "cluster_args",
    "cluster_eval_args",
    "key_slot",
    "slot_marker",
    "slot_tag",
    "touches_marker",
]

#: Number of hash slots of a Redis/Valkey Cluster.
SLOTS = 16384


def key_slot(key: str | bytes) -> int:
    """The cluster hash slot of ``key`` (UTF-8 for text), hash tags included.

    As the server computes it: CRC16 (XMODEM) of the key, or of the part between the
    first ``{`` and the next ``}`` when that part is not empty, modulo 16384.
    """
    data = key.encode() if isinstance(key, str) else key
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    return binascii.crc_hqx(data, 0) % SLOTS


@functools.cache
def _tags() -> tuple[str, ...]:
    # About 110,000 CRC16s of short strings, once per process (~70 ms).
    table: list[str | None] = [None] * SLOTS
    left = SLOTS
    n = 0
    while left:
        text = str(n)
        slot = binascii.crc_hqx(text.encode(), 0) % SLOTS
        if table[slot] is None:
            table[slot] = text
            left -= 1
        n += 1
    return tuple(tag for tag in table if tag is not None)


def slot_tag(slot: int) -> str:
    """The hash tag of ``slot``: the smallest integer (in decimal) that hashes to it."""
    if not 0 <= slot < SLOTS:
        raise ValueError(f"a slot is in [0, {SLOTS}), not {slot}")
    return _tags()[slot]


def slot_marker(slot: int) -> str:
    """The incarnation marker of ``slot``: ``quorumlock:incarnation:{<tag>}``."""
    return f"{MARKER_KEY}:{{{slot_tag(slot)}}}"


def touches_marker(step: Fanout) -> bool:
    """Whether ``step``'s command names a key besides the lock key, which on a cluster
    instance carries the slot's tag: the incarnation marker (KEYS[2]), or the key's
    queue of waiters."""
    return (
        step.per_session
        or step.op is Op.COMMIT_FENCE
        or step.op is Op.RW_COMMIT_FENCE
        or step.op is Op.QUEUE
        or (step.op is Op.RELEASE and step.notify and not step.keys)
    )


#: The cluster variant of each acquire script, by the plain script's digest.
_CLUSTER_OF = {ACQUIRE.sha: CLUSTER_ACQUIRE, RW_ACQUIRE.sha: CLUSTER_RW_ACQUIRE}


def cluster_args(step: Fanout, session: Session | None, slot: int) -> tuple[str | int, ...]:
    """The command a fan-out sends to a cluster instance for a key in ``slot``.

    The same as :func:`quorumlock._algorithm.wire.command_args`, except where the
    command names the marker: KEYS[2] is the slot's marker (:func:`slot_marker`), and
    the acquire runs :data:`CLUSTER_ACQUIRE` with the node's ``run_id`` as one more,
    last argument (the script takes it off before the acquire body runs). The keys of
    the key's queue of waiters carry the slot's tag (:func:`queue_keys`).
    """
    args = command_args(step, session)
    if step.op is Op.QUEUE:
        return (*args[:3], *queue_keys(step.key, slot_tag(slot)), *args[5:])
    if step.op is Op.RELEASE and step.notify and not step.keys:
        # ARGV[5] and ARGV[6] (the process's entry may follow them)
        return (*args[:8], *queue_keys(step.key, slot_tag(slot)), *args[10:])
    if not touches_marker(step):
        return args
    if step.op is Op.ACQUIRE and step.fair and not step.keys:
        if session is None:
            raise ValueError("the acquire script needs the connection's session")
        queue = queue_keys(step.key, slot_tag(slot))
        return (
            "EVALSHA", CLUSTER_FAIR_ACQUIRE.sha, 4, args[3], slot_marker(slot), *queue,
            *args[7:], session.run_id,
        )  # fmt: skip
    if step.op is Op.ACQUIRE and step.member and not step.keys:
        if session is None:
            raise ValueError("the acquire script needs the connection's session")
        queue = queue_keys(step.key, slot_tag(slot))
        return (
            "EVALSHA", CLUSTER_QUEUED_ACQUIRE.sha, 2, args[3], slot_marker(slot),
            *args[5:-5], *queue, *args[-3:], session.run_id,
        )  # fmt: skip
    keys = args[2]
    if args[0] != "EVALSHA" or not isinstance(keys, int) or keys < 2 or args[4] != MARKER_KEY:
        raise ValueError(f"the {step.op.value} command does not name the marker as KEYS[2]")
    marker = slot_marker(slot)
    if step.op is Op.COMMIT_FENCE or step.op is Op.RW_COMMIT_FENCE:
        return (*args[:4], marker, *args[5:])
    if session is None:
        raise ValueError("the acquire script needs the connection's session")
    # A multi-resource lock's set lies in one slot (Redlock.lock_many checks): the
    # marker of that slot serves the whole set.
    script = CLUSTER_ACQUIRE_MANY if step.keys else _CLUSTER_OF[str(args[1])]
    return ("EVALSHA", script.sha, keys, args[3], marker, *args[5:], session.run_id)


#: The cluster variants of the acquire scripts, by digest.
_CLUSTER_SCRIPTS = {
    script.sha: script
    for script in (
        CLUSTER_ACQUIRE,
        CLUSTER_ACQUIRE_MANY,
        CLUSTER_FAIR_ACQUIRE,
        CLUSTER_QUEUED_ACQUIRE,
        CLUSTER_RW_ACQUIRE,
    )
}


def cluster_eval_args(step: Fanout, session: Session | None, slot: int) -> tuple[str | int, ...]:
    """The ``EVAL`` form of :func:`cluster_args` (for a node that answered NOSCRIPT)."""
    args = cluster_args(step, session, slot)
    if args[0] != "EVALSHA":
        raise ValueError(f"{step.op.value} does not run a script")
    script = _CLUSTER_SCRIPTS.get(str(args[1])) or script_of(step)
    return ("EVAL", script.source, *args[2:])
