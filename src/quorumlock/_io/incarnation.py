"""Which server process a connection talks to, and the incarnation marker (SPEC B1).

When quorumlock opens a connection with the restart quarantine or fencing on, it asks the
server who it is (``INFO server``: ``run_id``, a random id drawn at every start) and
whether it fsyncs every write (``CONFIG GET appendonly appendfsync``). A connection never
outlives the process it was opened to (a restart resets it), so that :class:`Session`
holds for every command sent on it, and the acquire script compares it with the marker
the server keeps (``quorumlock:incarnation``) atomically with the ``SET``: no extra round
trip per acquire. See ``quorumlock._algorithm.scripts.ACQUIRE``.

A server that refuses ``CONFIG`` (an ACL without it) is taken as not durable: a restart
then puts it in quarantine, which is always safe. One that refuses ``INFO`` cannot be
checked at all, and its connection fails with the server's NOPERM error (fatal).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import redis
from redis import exceptions as rx

from quorumlock._algorithm.cluster import slot_marker
from quorumlock._algorithm.flows import Session
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._io.servers import AsyncRedisConnection, RedisConnection

__all__ = [
    "ServerState",
    "open_session",
    "open_session_async",
    "read_server_state",
    "session_from",
    "stamp_fresh",
    "stamp_fresh_slots",
]

_INFO = ("INFO", "server")
_CONFIG = ("CONFIG", "GET", "appendonly", "appendfsync")


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


def session_from(info: object, config: object) -> Session:
    """A :class:`Session` from the replies to ``INFO server`` and ``CONFIG GET``.

    ``config`` is the CONFIG reply, or an exception if the server refused it. Raises
    ``ValueError`` if the INFO reply carries no ``run_id``.
    """
    run_id = _info_field(info, "run_id")
    if not run_id:
        raise ValueError("the server's INFO reply has no run_id")
    if isinstance(config, BaseException):
        return Session(run_id, durable=False)
    pairs = _config_pairs(config)
    durable = pairs.get("appendonly") == "yes" and pairs.get("appendfsync") == "always"
    return Session(run_id, durable=durable)


def open_session(conn: RedisConnection, timeout: float) -> Session:
    """Ask a freshly connected server who it is (two commands, one round trip).

    Raises what the connection raises; a refused ``INFO`` is the server's error reply.
    """
    conn.send_packed_command(conn.pack_command(*_INFO) + conn.pack_command(*_CONFIG))
    info = conn.read_response(timeout=timeout)
    config: object
    try:
        config = conn.read_response(timeout=timeout)
    except rx.ResponseError as exc:
        config = exc
    if isinstance(info, rx.ResponseError):
        raise info
    return session_from(info, config)


async def open_session_async(conn: AsyncRedisConnection, timeout: float) -> Session:
    """The asyncio twin of :func:`open_session`."""
    await conn.send_packed_command(conn.pack_command(*_INFO) + conn.pack_command(*_CONFIG))
    info: object
    try:
        info = await conn.read_response(timeout=timeout)
    except rx.ResponseError as exc:
        info = exc
    config: object
    try:
        config = await conn.read_response(timeout=timeout)
    except rx.ResponseError as exc:
        config = exc
    if isinstance(info, BaseException):
        raise info
    return session_from(info, config)


@dataclass(frozen=True, slots=True)
class ServerState:
    """One server's incarnation as quorumlock sees it (for ``quorumlock status``).

    ``run_id`` of the running process; ``marked`` whether the marker exists and names
    that process (False: the next acquire will find the server restarted or flushed);
    ``quarantined_for`` seconds of restart quarantine left for a client whose max_ttl is
    ``max_ttl`` (the marker's largest declared max_ttl counts too); ``fence`` the fencing
    counter; ``durable`` whether the server fsyncs every write.
    """

    run_id: str
    marked: bool
    quarantined_for: float
    fence: int
    durable: bool
    max_ttl: float


def read_server_state(client: redis.Redis, max_ttl: float = 60.0) -> ServerState:
    """Read one server's incarnation marker without changing anything.

    A marker that is missing or names another process means the server lost its memory
    (or never met quorumlock); the quarantine the next acquire will start is reported
    then: ``max_ttl`` from now for a missing marker, from the server's start otherwise
    (unless it is durable).
    """
    info: Any = client.info("server")
    try:
        config: object = client.config_get("append*")
    except rx.ResponseError as exc:
        config = exc
    session = session_from(info, config)
    uptime = float(_info_field(info, "uptime_in_seconds") or 0)
    seconds, micros = client.time()
    now_ms = seconds * 1000 + micros // 1000
    raw = client.hgetall(MARKER_KEY)
    marker = {_text(k): _text(v) for k, v in raw.items()}
    declared = int(marker.get("max_ttl", "0")) / 1000
    longest = max(max_ttl, declared)
    since = int(marker.get("since", "0"))
    marked = marker.get("run_id") == session.run_id
    if not marker:
        since = now_ms
    elif not marked and not session.durable:
        since = now_ms - int(max(uptime - 1, 0) * 1000)  # as the acquire script counts
    left = max(0.0, (since + longest * 1000 - now_ms) / 1000) if since else 0.0
    return ServerState(
        run_id=session.run_id,
        marked=marked,
        quarantined_for=left,
        fence=int(marker.get("fence", "0")),
        durable=session.durable,
        max_ttl=longest,
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
