"""Which server process a connection talks to, and the incarnation marker.

When quorumlock opens a connection, it asks the server who it is (``INFO server``:
``run_id``, a random id drawn at every start) and whether it fsyncs every write
(``CONFIG GET append*``). A connection never
outlives the process it was opened to (a restart resets it), so that :class:`Session`
holds for every command sent on it, and the acquire script compares it with the marker
the server keeps (``quorumlock:incarnation``) atomically with the ``SET``: no extra round
trip per acquire. See ``quorumlock._algorithm.scripts.ACQUIRE``.

The same probe reads ``INFO replication``: a master that was a replica (promoted by a
failover or ``REPLICAOF NO ONE``, and not restarted since) shows the replication id it
had before in ``master_replid2`` and where that history ended in ``second_repl_offset``
(-1 on a master that was never promoted). The acquire script quarantines such a server
when it first sees it: its data came by asynchronous replication (see
``docs/deployment.md``). These three and the commands below go in one round trip.

A server that refuses ``CONFIG`` (an ACL without it) is taken as not durable: a restart
then puts it in quarantine, which is always safe. One that refuses ``INFO`` cannot be
checked at all, and its connection fails with the server's NOPERM error (fatal) when
the quarantine or fencing needs the session; without them (``max_ttl=None``), the
session only serves :class:`SameServerCheck` and such a server goes unchecked.

``CONFIG GET append*`` (a pattern) rather than ``CONFIG GET appendonly appendfsync``:
Redis before 7.0 takes one parameter per ``CONFIG GET``.

More commands in the same round trip check what would break every lock later:
``EVAL "return 1" 0`` and ``EVALSHA`` of that script (a server on which either is
renamed or disabled can never release a lock, even one taken with the plain ``SET``
when the quarantine and fencing are off: its connection fails with the server's fatal
"unknown command", so no key is ever set there; the minimal ACL allows both, where
``COMMAND INFO`` would be refused), ``INFO memory`` (an eviction policy with a
``maxmemory`` may evict lock keys: :class:`SameServerCheck` warns once per server) and
``HMGET`` of the marker (a key of that name of another type, an application's, fails
every script that reads the marker: where the quarantine or fencing needs the session,
the connection fails with :class:`~quorumlock._io.errors.MarkerOfAnotherType`, fatal,
which names the marker where the scripts' WRONGTYPE would blame the lock's key). Any
other error reply to these leaves the server unchecked.

The ``run_id`` of every new connection also feeds :class:`SameServerCheck`, which
refuses two instances that are one server; that is why sessions are read with the
quarantine and fencing off too (one round trip per new connection, none per lock).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import redis
from redis import exceptions as rx

from quorumlock._algorithm.cluster import slot_marker
from quorumlock._algorithm.flows import Session
from quorumlock._algorithm.scripts import LOSS_COMMANDS, MARKER_KEY
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import MarkerOfAnotherType, SentinelAsServer, wrong_type
from quorumlock._io.servers import AsyncRedisConnection, RedisConnection, read_reply

__all__ = [
    "SameServerCheck",
    "ServerState",
    "eviction_risk",
    "loss_sign",
    "noeviction_use",
    "open_session",
    "open_session_async",
    "read_server_state",
    "session_from",
    "stamp_fresh",
    "stamp_fresh_slots",
]

_INFO = ("INFO", "server")
_CONFIG = ("CONFIG", "GET", "append*")
_REPLICATION = ("INFO", "replication")
_MEMORY = ("INFO", "memory")
_NOOP = "return 1"  # a script that touches nothing: only shows EVAL and EVALSHA exist
_EVAL = ("EVAL", _NOOP, 0)
_EVALSHA = ("EVALSHA", hashlib.sha1(_NOOP.encode()).hexdigest(), 0)  # cached by the EVAL
_MARKER = ("HMGET", MARKER_KEY, "run_id")  # WRONGTYPE: a key of that name, not quorumlock's
_PROBE = (_INFO, _CONFIG, _REPLICATION, _MEMORY, _EVAL, _EVALSHA, _MARKER)

logger = logging.getLogger("quorumlock")


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _info_field(info: object, name: str) -> str:
    if isinstance(info, dict):  # a client object that parses INFO
        return _text(info.get(name, ""))
    for line in _text(info).splitlines():
        key, _, value = line.partition(":")
        if key == name:
            return value.strip()
    return ""


def _config_pairs(reply: object) -> dict[str, str]:
    if isinstance(reply, dict):
        return {_text(k): _text(v) for k, v in reply.items()}
    if isinstance(reply, list | tuple):
        items = [_text(x) for x in reply]
        return dict(zip(items[::2], items[1::2], strict=False))
    return {}


def eviction_risk(policy: str, maxmemory: int) -> str | None:
    """How a server may evict lock keys under memory pressure, or None when it cannot:
    ``maxmemory-policy noeviction``, or no ``maxmemory`` (0). An empty ``policy`` (not
    known) is taken as none."""
    if not policy or policy == "noeviction" or maxmemory <= 0:
        return None
    return f"maxmemory-policy {policy} with maxmemory {maxmemory}"


def noeviction_use(memory: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(used, maxmemory)`` of a server under ``maxmemory-policy noeviction`` with a
    ``maxmemory``, from its parsed ``INFO memory``; None for any other. ``used`` is what
    the server counts against ``maxmemory``: once it reaches it, the server refuses every
    write, new locks included (OOM)."""
    if _text(memory.get("maxmemory_policy", "")) != "noeviction":
        return None
    maxmemory = int(memory.get("maxmemory", 0) or 0)
    if maxmemory <= 0:
        return None
    used = int(memory.get("used_memory", 0) or 0)
    return used - int(memory.get("mem_not_counted_for_evict", 0) or 0), maxmemory


def _evicts(memory: object) -> str:
    """:func:`eviction_risk` from an ``INFO memory`` reply ("" when it cannot evict)."""
    if isinstance(memory, BaseException):
        return ""
    try:
        maxmemory = int(_info_field(memory, "maxmemory") or 0)
    except ValueError:
        return ""
    return eviction_risk(_info_field(memory, "maxmemory_policy"), maxmemory) or ""


def _check_scripting(replies: list[object]) -> None:
    """Raise the server's "unknown command" error for EVAL or EVALSHA (renamed or
    disabled), the first one refused so."""
    for reply in replies:
        if isinstance(reply, rx.ResponseError) and "unknown command" in str(reply).lower():
            raise reply


def session_from(info: object, config: object, replication: object = "") -> Session:
    """A :class:`Session` from the replies to ``INFO server``, ``CONFIG GET append*`` and
    ``INFO replication``.

    ``config`` is the CONFIG reply, or an exception if the server refused it. Raises
    ``ValueError`` if the INFO reply carries no ``run_id``.
    """
    run_id = _info_field(info, "run_id")
    if not run_id:
        raise ValueError("the server's INFO reply has no run_id")
    promotion = ""
    if _info_field(replication, "role") == "master" and _info_field(
        replication, "second_repl_offset"
    ) not in ("", "-1"):
        promotion = _info_field(replication, "master_replid")
    if isinstance(config, BaseException):
        return Session(run_id, durable=False, promotion=promotion)
    pairs = _config_pairs(config)
    durable = pairs.get("appendonly") == "yes" and pairs.get("appendfsync") == "always"
    return Session(run_id, durable=durable, promotion=promotion)


def _probe(conn: RedisConnection | AsyncRedisConnection) -> list[bytes]:
    return [part for command in _PROBE for part in conn.pack_command(*command)]


def _session(replies: list[object], required: bool) -> Session | None:
    info, config, replication, memory, evaled, evalshaed, marker = replies
    if not isinstance(info, BaseException) and "sentinel" in (
        _info_field(info, "redis_mode"),  # Redis
        _info_field(info, "server_mode"),  # Valkey
    ):
        raise SentinelAsServer  # (its EVAL is an unknown command too, for another reason)
    _check_scripting([evaled, evalshaed])
    if required and wrong_type(marker):
        raise MarkerOfAnotherType
    for reply in (info, replication):
        if isinstance(reply, BaseException):
            if required:
                raise reply
            return None
    session = session_from(info, config, replication)
    evicts = _evicts(memory)
    if evicts:
        return Session(session.run_id, session.durable, session.promotion, evicts)
    return session


def open_session(conn: RedisConnection, timeout: float, *, required: bool = True) -> Session | None:
    """Ask a freshly connected server who it is (seven commands, one round trip).

    Raises what the connection raises, and the server's "unknown command" error for a
    renamed or disabled EVAL or EVALSHA. An ``INFO`` the server refuses raises its error
    reply if ``required`` (the quarantine or fencing needs the session), and gives None
    otherwise; if ``required``, a marker of another type raises
    :class:`~quorumlock._io.errors.MarkerOfAnotherType`.
    """
    conn.send_packed_command(_probe(conn))
    replies: list[object] = []
    for _ in _PROBE:
        try:
            replies.append(read_reply(conn, timeout))
        except rx.ResponseError as exc:  # an error reply: the stream stays in step
            replies.append(exc)
    return _session(replies, required)


async def open_session_async(
    conn: AsyncRedisConnection, timeout: float, *, required: bool = True
) -> Session | None:
    """The asyncio twin of :func:`open_session`."""
    await conn.send_packed_command(_probe(conn))
    replies: list[object] = []
    for _ in _PROBE:
        try:
            replies.append(await conn.read_response(timeout=timeout))
        except rx.ResponseError as exc:
            replies.append(exc)
    return _session(replies, required)


class SameServerCheck:
    """Refuses two instances that are one server.

    ``parse_servers`` refuses a host and port listed twice, but 127.0.0.1, localhost and
    ::1, a unix socket and a TCP port, or a proxy reach one server under several names.
    Every new connection's session names the server process (``run_id``, random at each
    start); two instances whose sessions name the same process are the same server.
    Thread safe; the conflict, once seen, stays (it is a configuration error).

    It also warns, once per server, of a server that may evict lock keys
    (``Session.evicts``): a deployment error that no lock operation would reveal.
    """

    def __init__(self, labels: list[str]) -> None:
        self._labels = labels
        self._owner: dict[str, int] = {}
        self._conflict: str | None = None
        self._mutex = threading.Lock()
        self._evicting: set[int] = set()  # servers warned of for their eviction policy

    def note(self, index: int, session: Session | None) -> None:
        """Record that server ``index`` runs in ``session``'s process."""
        if session is None:
            return
        with self._mutex:
            warn = bool(session.evicts) and index not in self._evicting
            if warn:
                self._evicting.add(index)
        if warn:
            marker = ""
            if "allkeys-" in session.evicts:
                marker = ", and an evicted incarnation marker puts the server in restart quarantine"
            logger.warning(
                "%s may evict keys under memory pressure (%s): a lock key evicted there "
                "vanishes while the lock is held%s. Set maxmemory-policy noeviction "
                "(docs/deployment.md, Eviction)",
                self._labels[index],
                session.evicts,
                marker,
            )
        with self._mutex:
            owner = self._owner.setdefault(session.run_id, index)
            if owner != index and self._conflict is None:
                first, second = sorted((owner, index))  # in the order they were listed
                self._conflict = (
                    f"{self._labels[first]} and {self._labels[second]} are the same server "
                    f"(run_id {session.run_id}): Redlock needs independent servers"
                )

    def after_fork(self) -> None:
        """In a forked child: a parent thread may have held the mutex at the fork."""
        self._mutex = threading.Lock()

    @property
    def conflict(self) -> bool:
        """Two instances were seen to be one server."""
        return self._conflict is not None

    def check(self) -> None:
        """Raise :class:`ConfigurationError` if two instances were seen to be one server."""
        if self._conflict is not None:
            raise ConfigurationError(self._conflict)


@dataclass(frozen=True, slots=True)
class ServerState:
    """One server's incarnation as quorumlock sees it (for ``quorumlock status``).

    ``run_id`` of the running process; ``marked`` whether the marker exists and names
    that process and, on a promoted replica, that promotion (False: the next acquire
    will find the server restarted, flushed or promoted);
    ``quarantined_for`` seconds of restart quarantine left for a client whose max_ttl is
    ``max_ttl`` (the marker's largest declared max_ttl counts too); ``fence`` the fencing
    counter; ``durable`` whether the server fsyncs every write; ``lost`` why the server
    is or will be quarantined (the acquire script's words: ``"start"``, ``"restart"``,
    ``"promotion"``, ``"flushall"``, ``"eviction"``, ...; see
    :func:`quorumlock._algorithm.outcomes.quarantine_cause`), ``since`` the server time
    (ms) that quarantine counts from (0: none).
    """

    run_id: str
    marked: bool
    quarantined_for: float
    fence: int
    durable: bool
    max_ttl: float
    lost: str = ""
    since: int = 0


def loss_sign(client: redis.Redis) -> str | None:
    """What the acquire script would take as a sign that the server lost data since it
    started, for a missing marker (None: no sign). The same reading as its ``loss_sign``:
    a cluster node, evicted keys, or a command of :data:`LOSS_COMMANDS` called."""
    if _info_field(client.info("cluster"), "cluster_enabled") == "1":
        return "cluster"
    evicted = _info_field(client.info("stats"), "evicted_keys")
    if not evicted:
        return "unknown"
    if int(evicted) > 0:
        return "eviction"
    stats: Any = client.info("commandstats")
    if isinstance(stats, dict):  # redis-py parses INFO: {"cmdstat_x": {"calls": n, ...}}
        calls = {
            _text(k).removeprefix("cmdstat_"): int(v.get("calls", 0)) if isinstance(v, dict) else 0
            for k, v in stats.items()
        }
    else:
        calls = {}
        for line in _text(stats).splitlines():
            name, _, rest = line.partition(":")
            if name.startswith("cmdstat_") and rest.startswith("calls="):
                calls[name.removeprefix("cmdstat_")] = int(rest[6:].split(",")[0])
    for name in LOSS_COMMANDS:
        if calls.get(name, 0) > 0:
            return name
    return None


def read_server_state(client: redis.Redis, max_ttl: float = 60.0) -> ServerState:
    """Read one server's incarnation marker without changing anything.

    A marker that is missing or names another process means the server lost its memory
    (or never met quorumlock); the quarantine the next acquire will start is reported
    then, as the acquire script counts it: ``max_ttl`` from now for a promotion not yet
    noticed or a missing marker with a sign of a loss since the start
    (:func:`loss_sign`), from the server's start otherwise (unless it is durable).
    """
    info: Any = client.info("server")
    try:
        config: object = client.config_get("append*")
    except rx.ResponseError as exc:
        config = exc
    session = session_from(info, config, client.info("replication"))
    uptime = float(_info_field(info, "uptime_in_seconds") or 0)
    seconds, micros = client.time()
    now_ms = seconds * 1000 + micros // 1000
    raw = client.hgetall(MARKER_KEY)
    marker = {_text(k): _text(v) for k, v in raw.items()}
    declared = int(marker.get("max_ttl", "0")) / 1000
    longest = max(max_ttl, declared)
    since = int(marker.get("since", "0"))
    marked = marker.get("run_id") == session.run_id
    if session.promotion and marker.get("promotion") != session.promotion:
        marked = False
    lost = marker.get("lost", "")
    start_ms = now_ms - int(max(uptime - 1, 0) * 1000)  # as the acquire script counts
    if not marked and session.promotion:
        since, lost = max(since, now_ms), "promotion"
    elif not marker.get("run_id"):
        sign = loss_sign(client)
        since, lost = (now_ms, sign) if sign else (start_ms, "start")
    elif not marked and not session.durable:
        since, lost = start_ms, "restart"
    left = max(0.0, (since + longest * 1000 - now_ms) / 1000) if since else 0.0
    return ServerState(
        run_id=session.run_id,
        marked=marked,
        quarantined_for=left,
        fence=int(marker.get("fence", "0")),
        durable=session.durable,
        max_ttl=longest,
        lost=lost,
        since=since,
    )


def stamp_fresh(client: redis.Redis) -> None:
    """Mark a server that has never granted a lock as such: no quarantine at first use.

    Only for a server just started on an empty data directory (the test kit and
    ``quorumlock servers start`` do this); stamping a server that lost its data would
    defeat the restart quarantine. Raises ``RuntimeError`` if the server holds any key.
    """
    if client.dbsize():
        raise RuntimeError("only an empty, freshly started server may be stamped as new")
    run_id = _info_field(client.info("server"), "run_id")
    client.hset(MARKER_KEY, mapping={"run_id": run_id, "since": 0})


def stamp_fresh_slots(client: redis.Redis, slots: Iterable[int]) -> None:
    """:func:`stamp_fresh` for a brand-new cluster master: the marker of each slot it owns.

    A cluster instance keeps one marker per slot (``quorumlock._algorithm.cluster``).
    ``client`` speaks to that master alone (not a cluster client). Same rules as
    :func:`stamp_fresh`: only for a master just started empty; raises ``RuntimeError``
    if it holds any key.
    """
    if client.dbsize():
        raise RuntimeError("only an empty, freshly started server may be stamped as new")
    run_id = _info_field(client.info("server"), "run_id")
    pipe = client.pipeline(transaction=False)
    for slot in slots:
        pipe.hset(slot_marker(slot), mapping={"run_id": run_id, "since": 0})
    pipe.execute()
