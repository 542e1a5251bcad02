"""What the sync and asyncio fan-outs share about cluster instances: the slot map.

A cluster is one Redlock instance. Each round sends its command to the master that
owns the lock key's slot, as last learnt: from the user's ``RedisCluster`` object when it
had a map, from ``CLUSTER SLOTS`` (asked on quorumlock's own connection, in the
background, never inside a round's deadline), and from ``MOVED`` replies. A ``MOVED``
is followed at most once per round, within the round's deadline; ``ASK`` (a slot
half-way through a migration), ``TRYAGAIN`` and ``CLUSTERDOWN`` are ERROR outcomes for
that round, and the other instances carry the quorum.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from redis.exceptions import MovedError

from quorumlock._algorithm.cluster import (
    SLOTS,
    cluster_args,
    cluster_eval_args,
    key_slot,
    touches_marker,
)
from quorumlock._algorithm.flows import Fanout, Session
from quorumlock._io.packing import RoundPacker, pack
from quorumlock._io.servers import (
    Address,
    AsyncRedisConnection,
    ClusterSeed,
    RedisConnection,
    read_reply,
)

__all__ = [
    "REFRESH_EVERY",
    "ClusterPacker",
    "SlotMap",
    "fetch_slots",
    "fetch_slots_async",
    "moved_to",
    "parse_cluster_slots",
]

#: Least time between two background reloads of a cluster's slot map (seconds).
REFRESH_EVERY = 1.0

_CLUSTER_SLOTS = ("CLUSTER", "SLOTS")


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def parse_cluster_slots(reply: object, asked: Address) -> list[tuple[int, int, Address]]:
    """``(first slot, last slot, master address)`` ranges from a ``CLUSTER SLOTS`` reply.

    A master shown with an empty host (or ``?``) is the node that was ``asked``.
    Raises ``ValueError`` for a reply of another shape.
    """
    if not isinstance(reply, list):
        raise ValueError(f"unexpected CLUSTER SLOTS reply {reply!r}")
    ranges = []
    for entry in reply:
        if not isinstance(entry, list) or len(entry) < 3 or not isinstance(entry[2], list):
            raise ValueError(f"unexpected CLUSTER SLOTS entry {entry!r}")
        first, last, master = int(entry[0]), int(entry[1]), entry[2]
        host = _text(master[0])
        if host in ("", "?"):
            host = asked[0]
        ranges.append((first, last, (host, int(master[1]))))
    return ranges


def moved_to(exc: BaseException) -> tuple[int, Address] | None:
    """``(slot, new owner)`` of a ``MOVED`` error reply, None for anything else."""
    if not isinstance(exc, MovedError):
        return None
    return int(exc.slot_id), (str(exc.host), int(exc.port))


class SlotMap:
    """Which master serves each slot, as last learnt. Safe to share between threads:
    each update replaces one entry or the whole table (atomic under the GIL)."""

    def __init__(self, seed: ClusterSeed) -> None:
        self._seed = seed
        self._owner: list[Address | None] = [None] * SLOTS
        for first, last, address in seed.ranges:
            for slot in range(first, last + 1):
                self._owner[slot] = address
        self.loaded = bool(seed.ranges)  # a whole map is known (possibly with holes)
        self.loaded_at = -float("inf")  # monotonic time of the last reload

    def owner(self, slot: int) -> Address | None:
        return self._owner[slot]

    def moved(self, slot: int, address: Address) -> Address:
        """A node said ``MOVED slot address``: remember it; returns the remapped address."""
        address = self._remap(address)
        self._owner[slot] = address
        return address

    def replace(self, ranges: Iterable[tuple[int, int, Address]]) -> None:
        """Install a whole map (from ``CLUSTER SLOTS``); slots not listed have no owner."""
        owner: list[Address | None] = [None] * SLOTS
        for first, last, address in ranges:
            remapped = self._remap(address)
            for slot in range(max(first, 0), min(last, SLOTS - 1) + 1):
                owner[slot] = remapped
        self._owner = owner
        self.loaded = True
        self.loaded_at = time.monotonic()

    def addresses(self) -> list[Address]:
        """Whom to ask for the map: the known masters, then the startup nodes."""
        seen: dict[Address, None] = {}
        for address in (*self._owner, *self._seed.startup):
            if address is not None:
                seen.setdefault(address, None)
        return list(seen)

    def _remap(self, address: Address) -> Address:
        remap = self._seed.remap
        if remap is None:
            return address
        host, port = remap(address)
        return str(host), int(port)


def fetch_slots(
    connect: Callable[[Address], RedisConnection], addresses: Sequence[Address], timeout: float
) -> list[tuple[int, int, Address]]:
    """Ask the nodes at ``addresses``, in turn, for the slot map (``CLUSTER SLOTS``).

    ``connect`` makes a new connection (not yet connected) to an address. Raises the
    last node's error if none answered.
    """
    error: BaseException = ConnectionError("no cluster node to ask for the slot map")
    for address in addresses:
        conn = connect(address)
        try:
            conn.connect()
            conn.send_packed_command(conn.pack_command(*_CLUSTER_SLOTS))
            reply = read_reply(conn, timeout)
            return parse_cluster_slots(reply, address)
        except Exception as exc:
            error = exc
        finally:
            conn.disconnect()
    raise error


async def fetch_slots_async(
    connect: Callable[[Address], AsyncRedisConnection],
    addresses: Sequence[Address],
    timeout: float,
) -> list[tuple[int, int, Address]]:
    """The asyncio twin of :func:`fetch_slots`."""
    error: BaseException = ConnectionError("no cluster node to ask for the slot map")
    for address in addresses:
        conn = connect(address)
        try:
            await conn.connect()
            await conn.send_packed_command(conn.pack_command(*_CLUSTER_SLOTS))
            reply = await conn.read_response(timeout=timeout)
            return parse_cluster_slots(reply, address)
        except Exception as exc:
            error = exc
        finally:
            await conn.disconnect(nowait=True)
    raise error


class ClusterPacker:
    """The packed command of one round for a cluster instance (key in ``slot``).

    A silent release and extend are the same bytes as for a plain server; the acquire
    script and the fence commit name the slot's marker, an announced release and a
    queue command the key's queue with the slot's tag (``quorumlock._algorithm.cluster``).
    """

    __slots__ = ("_plain", "_slot", "_step")

    def __init__(self, step: Fanout, slot: int) -> None:
        self._step = step
        self._slot = slot
        self._plain = None if touches_marker(step) else RoundPacker(step)

    def packed(self, session: Session | None) -> bytes:
        if self._plain is not None:
            return self._plain.packed(session)
        return pack(cluster_args(self._step, session, self._slot))

    def eval_args(self, session: Session | None) -> tuple[str | int, ...]:
        return cluster_eval_args(self._step, session, self._slot)


class MasterLike(Protocol):
    """What a route reads of one cluster master's node (sync or asyncio)."""

    where: str
    tried: bool
    failure: str


NodeT = TypeVar("NodeT", bound=MasterLike)
NodeT_co = TypeVar("NodeT_co", bound=MasterLike, covariant=True)


class ClusterLike(Protocol[NodeT_co]):
    """What a route needs of a cluster instance (sync or asyncio)."""

    label: str
    tried: bool
    map: SlotMap

    def owner(self, slot: int) -> NodeT_co | None: ...
    def node_at(self, address: Address) -> NodeT_co: ...


class Route(Generic[NodeT]):
    """A cluster instance in one round: the master that owns the key's slot.

    Lives for one round, so it may remember where it sent the command: after a ``MOVED``
    (followed at most once) it points at the new owner. The sync and asyncio fan-outs
    add how to reach that master.
    """

    __slots__ = ("cluster", "command", "label", "node", "redirected", "slot")

    routed = True  # it follows a MOVED (see quorumlock._algorithm.round)

    def __init__(self, cluster: ClusterLike[NodeT], step: Fanout) -> None:
        self.cluster = cluster
        self.label = cluster.label
        self.slot = key_slot(step.key)
        self.node: NodeT | None = cluster.owner(self.slot)
        self.command = ClusterPacker(step, self.slot)
        self.redirected = False

    @property
    def where(self) -> str:
        return self.node.where if self.node is not None else ""

    @property
    def tried(self) -> bool:
        return self.node.tried if self.node is not None else self.cluster.tried

    @property
    def failure(self) -> str:
        return self.node.failure if self.node is not None else ""

    def follow(self, slot: int, address: Address) -> NodeT:
        """A ``MOVED``: remember the new owner and send there from now on."""
        self.redirected = True
        self.node = self.cluster.node_at(self.cluster.map.moved(slot, address))
        return self.node
