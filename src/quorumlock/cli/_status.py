"""``quorumlock status NAME``: what every server says about one lock, read-only."""

from __future__ import annotations

import argparse
import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import redis

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import MAX_TTL_SECONDS
from quorumlock._algorithm.flows import Session
from quorumlock._algorithm.outcomes import NEW_SERVER, quarantine_cause
from quorumlock._algorithm.rwlock import rw_expiry, rw_key
from quorumlock._algorithm.semaphore import MAX_PERMITS, semaphore_base
from quorumlock._algorithm.wire import queue_keys, slot_keys, text
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import translate, wrong_type
from quorumlock._io.incarnation import SameServerCheck, noeviction_use
from quorumlock.cli._common import (
    EXIT_ERROR,
    EXIT_USAGE,
    CliError,
    Parser,
    Servers,
    add_server_options,
    emit_json,
    error_reply,
    one_lock_name,
    positive,
    print_table,
    resolve_servers,
    say,
)
from quorumlock.cli._quarantine import read_marker, server_state

__all__ = ["ServerStatus", "add_parser", "query"]

# The library's own check of a new connection (quorumlock._io.incarnation): a script that
# touches nothing, run by EVAL, then by EVALSHA from the cache that EVAL filled.
_NOOP = "return 1"
_NOOP_SHA = hashlib.sha1(_NOOP.encode()).hexdigest()
_MARKER_TEXT = (
    "the key quorumlock:incarnation holds another kind of value than quorumlock's marker "
    '(an application\'s key of that name? move it away: docs/safety.md, "A missing marker")'
)

_EPILOG = """\
Columns: reachable; the holder's token (its first 12 characters: tokens are random, so
equal prefixes on a majority mean one holder); the key's remaining ttl on that server;
quarantine: a server that restarted and may have forgotten its locks stays out of every
quorum for max_ttl seconds, and this says how long it still has to wait and why. A name
that nobody holds while too few servers are out of quarantine is reported as free but
unavailable (docs/safety.md, B1).

When processes wait in line for NAME (a blocking acquire joins the name's queue of
waiters, docs/algorithm.md, "Waiting"), a column shows how many are in line on each
server and the head of the line (the first 8 characters of its process's id), and a
line says how many a majority has in line and which head it names.

A key NAME of another type than a lock's (a hash, a list, ...) is shown as no
quorumlock lock, in the holder column and in a line.

A replica, a server whose maxmemory is used up under maxmemory-policy noeviction, one
that does not run EVAL or EVALSHA for these credentials (an ACL without them, a command
renamed), and one whose key quorumlock:incarnation is not quorumlock's marker (another
type: an application's key) refuse every lock: each is shown as such in the reachable
column, and counts toward no majority.

When NAME also has a read-write lock (quorumlock run --read/--write, Redlock.rwlock),
two more columns show its live readers and its writer (with the writers waiting) on
each server, and a line says who holds it on a majority.

When NAME is also a counting semaphore's name (quorumlock run --permits K,
Redlock.semaphore), a column shows how many of its permits are held on each server, and
a line says how many are held on a majority.

The exit status is 0 when a majority of the servers answered, 1 otherwise.

examples:
  quorumlock status nightly-report
  quorumlock status orders:42 --servers redis://10.0.0.1:6379,redis://10.0.0.2:6379,...
  quorumlock status nightly-report --json | jq '.servers[] | .remaining_ttl'
"""


@dataclass
class ServerStatus:
    server: str
    reachable: bool
    holder: str | None = None  # token prefix
    remaining_ttl: float | None = None  # seconds, None without a key
    quarantined_for: float | None = None  # None: unknown (see server_state)
    fence: int | None = None  # the server's fencing counter
    durable: bool | None = None  # appendonly yes + appendfsync always
    error: str | None = None
    quarantine_cause: str | None = None  # why it is quarantined, while it is
    # NAME's read-write lock (docs/algorithm.md, "Read-write locks"): token prefixes
    readers: list[str] = field(default_factory=list)
    writer: str | None = None
    waiting_writers: int = 0
    # NAME's counting semaphore (docs/algorithm.md, "Semaphores"): each held slot's
    # number and its holder's token prefix
    permits: dict[int, str] = field(default_factory=dict)
    # the processes in NAME's queue of waiters (docs/algorithm.md, "Waiting"), in line
    # order: the first 8 characters of each one's id; None where the server did not say
    in_line: list[str] | None = field(default_factory=list)
    # the type of a key NAME that is no lock (a hash, a list, ...): not quorumlock's
    other_type: str | None = None
    # "master", or "replica": it refuses every lock (None: it did not say)
    role: str | None = None
    # maxmemory used up under noeviction: it refuses every new lock (OOM)
    full: bool = False
    # why EVAL or EVALSHA failed (the library's words): every lock is a script, so every
    # lock fails there; None where both ran
    scripts: str | None = None
    # the key quorumlock:incarnation is not quorumlock's marker (another type): every lock
    # with the restart quarantine or fencing fails there
    marker_of_another_type: bool = False


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "status",
        help="show who holds a lock, on every server",
        description="Show, for each server: reachable, the holder's token prefix, the "
        "remaining ttl of the lock, and whether the server is in restart quarantine.",
        epilog=_EPILOG,
    )
    parser.add_argument("name", metavar="NAME", type=one_lock_name, help="the lock (its key)")
    parser.add_argument(
        "--max-ttl",
        metavar="S",
        type=positive("--max-ttl", maximum=MAX_TTL_SECONDS),
        default=60.0,
        help="the max_ttl your clients use: how long a restarted server stays out (default 60)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_server_options(parser)
    parser.set_defaults(handler=status)
    return parser


def query(servers: Servers, name: str, max_ttl: float = 60.0) -> list[ServerStatus]:
    """Ask every server at once (a dead one costs at most ``servers.timeout``).

    Raises :class:`CliError` (exit status 2) when two URLs reach one server process: its
    answer would be counted twice toward a majority, as ``run`` refuses to.
    """
    with servers.connected() as clients, ThreadPoolExecutor(len(clients)) as pool:
        pairs = zip(servers.labels, clients, strict=True)
        answers = list(pool.map(lambda pair: _one(pair[0], pair[1], name, max_ttl), pairs))
    same = SameServerCheck(servers.labels)
    for index, (_, run_id) in enumerate(answers):
        if run_id is not None:
            same.note(index, Session(run_id))
    try:
        same.check()
    except ConfigurationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    return [result for result, _ in answers]


def _one(
    label: str, client: redis.Redis, name: str, max_ttl: float
) -> tuple[ServerStatus, str | None]:
    """What the server says of ``name``, and its process's ``run_id`` (None: unknown)."""
    queue, leases = queue_keys(name)
    try:
        pipe = client.pipeline(transaction=False)
        pipe.get(name)
        pipe.pttl(name)
        pipe.time()
        # Keys a user's ACL rule may leave out (the read-write lock's, the semaphore's, the
        # queue's: the rule of docs/deployment.md covers the queue only): read where it
        # allows.
        pipe.zrange(rw_key(name), 0, -1, withscores=True)
        pipe.mget(slot_keys(semaphore_base(name), MAX_PERMITS))
        pipe.zrange(queue, 0, -1)
        pipe.zrange(leases, 0, -1, withscores=True)
        pipe.info("replication")
        pipe.info("memory")
        read_marker(pipe)
        pipe.eval(_NOOP, 0)
        pipe.evalsha(_NOOP_SHA, 0)  # cached by the EVAL
        replies = pipe.execute(raise_on_error=False)
    except redis.RedisError as exc:
        return ServerStatus(label, False, error=error_reply(exc), in_line=None), None
    value, pttl, clock, holds, slots, members, leased, replication, memory, marker, *scripts = (
        replies
    )
    other_type: str | None = None
    if wrong_type(value):
        # The server answered: NAME is a key of another type, which no lock can take.
        # Which type, asked only then: the ACL rule of docs/deployment.md has no TYPE.
        value, other_type = None, _key_type(client, name)
    failed = next((r for r in (value, pttl, clock) if isinstance(r, Exception)), None)
    if failed is not None:
        return ServerStatus(label, False, error=error_reply(failed), in_line=None), None
    result = ServerStatus(label, True, other_type=other_type, role=_role(replication))
    use = noeviction_use(memory) if isinstance(memory, dict) else None
    result.full = use is not None and use[0] >= use[1]
    result.marker_of_another_type = wrong_type(marker)
    refused = next((r for r in scripts if isinstance(r, Exception)), None)
    result.scripts = None if refused is None else translate(refused)[1]
    now_ms = int(clock[0]) * 1000 + int(clock[1]) // 1000
    for member, score in () if isinstance(holds, Exception) else holds:
        held = text(member)  # a mode letter and a token
        if rw_expiry(held, score) <= now_ms:
            continue  # expired: the next acquire on this server drops it
        if held[0] == "r":
            result.readers.append(held[1:13])
        elif held[0] == "w":
            result.writer = held[1:13]
        else:
            result.waiting_writers += 1
    if isinstance(slots, list):
        result.permits = {n: text(t)[:12] for n, t in enumerate(slots) if t is not None}
    if value is not None:
        token = text(value)
        result.holder = token[:12]
        result.remaining_ttl = int(pttl) / 1000 if int(pttl) >= 0 else None
    result.in_line = _in_line(members, leased, now_ms)
    state = server_state(client, max_ttl)
    if state is not None:
        result.quarantined_for = state.quarantined_for
        if state.quarantined_for > 0:
            result.quarantine_cause = quarantine_cause(state.lost, state.since)
        result.fence = state.fence
        result.durable = state.durable
    return result, None if state is None else state.run_id


def _in_line(members: object, leased: object, now_ms: int) -> list[str] | None:
    """The processes waiting in line on a server: the entries of the name's queue of
    waiters (``members``, in line order) whose lease (``leased``: each entry with the
    server's ms at which it runs out) has not run out by the server's clock (``now_ms``),
    each as its id's first 8 characters; None where the server refused to show them."""
    if not isinstance(members, list) or not isinstance(leased, list):
        return None  # an error reply in their place
    alive = {member for member, until in leased if until > now_ms}
    return [text(member)[:8] for member in members if member in alive]


def _role(replication: object) -> str | None:
    """The server's role from its ``INFO replication`` reply: "master", "replica" (a
    server that says "slave"), or None where it did not say (an error reply)."""
    if not isinstance(replication, dict) or "role" not in replication:
        return None
    role = text(replication["role"])
    return "replica" if role == "slave" else role


def _key_type(client: redis.Redis, name: str) -> str:
    """The type of the key ``name`` (a hash, a list, ...), or "another type" where the
    server does not say."""
    try:
        return text(client.type(name))
    except redis.RedisError:
        return "another type"


def status(args: argparse.Namespace) -> int:
    servers = resolve_servers(args)
    assert servers is not None
    results = query(servers, args.name, args.max_ttl)
    reachable = sum(r.reachable for r in results)
    needed = quorum(len(results))
    holders: list[str] = [r.holder for r in results if r.holder is not None]
    top, agreeing = _most_named(holders)
    held_by_majority = agreeing >= needed
    # Out of quarantine, or unknown (an ACL without INFO): counted as usable, as the
    # acquire would fail on it otherwise, not wait. A replica refuses every lock, and a
    # server where the name is a key of another type (WRONGTYPE) refuses this one.
    usable = sum(
        r.reachable and not r.quarantined_for and not _refuses(r) and not r.other_type
        for r in results
    )
    available = usable >= needed
    readers, writer = _rw_holders(results, needed)
    rw_seen = any(r.readers or r.writer or r.waiting_writers for r in results)
    permits = _permit_holders(results, needed)
    permits_seen = any(r.permits for r in results)
    in_line, head, lined_up = _line(results, needed)
    other_type, others = _most_named([r.other_type for r in results if r.other_type])
    line_seen = any(r.in_line for r in results)
    if args.json:
        emit_json(
            {
                "name": args.name,
                "servers": [asdict(r) for r in results],
                "reachable": reachable,
                "quorum": needed,
                "holder": top if held_by_majority else None,
                "available": available,
                "readers": readers,
                "writer": writer,
                "permits": permits,
                "in_line": in_line,
                "head": head,
            }
        )
    else:
        rows = [
            [
                r.server,
                (f"yes, {_refuses(r)}" if _refuses(r) else "yes")
                if r.reachable
                else f"no: {r.error}",
                f"{r.holder}…"
                if r.holder
                else f"not a lock: {r.other_type}"
                if r.other_type
                else "-",
                f"{r.remaining_ttl:.3f} s" if r.remaining_ttl is not None else "-",
                _quarantine_text(r),
            ]
            for r in results
        ]
        headers = ["server", "reachable", "holder", "ttl left", "quarantine"]
        if rw_seen:
            headers += ["readers", "writer"]
            for row, r in zip(rows, results, strict=True):
                waiting = f" ({r.waiting_writers} waiting)" if r.waiting_writers else ""
                row += [str(len(r.readers)), (f"{r.writer}…" if r.writer else "-") + waiting]
        if permits_seen:
            headers.append("permits")
            for row, r in zip(rows, results, strict=True):
                row.append(str(len(r.permits)))
        if line_seen:
            headers.append("in line")
            for row, r in zip(rows, results, strict=True):
                row.append(_line_text(r))
        print_table(headers, rows)
        if rw_seen:
            say(_rw_line(args.name, readers, writer, len(results)))
        if permits_seen:
            say(_permits_line(args.name, permits, len(results)))
        if held_by_majority:
            say(f"\n{args.name!r} is held: token {top}… on {agreeing} of {len(results)}")
        elif reachable < needed:
            say(f"\n{args.name!r}: unknown, too few servers answered")
        elif other_type:
            say(
                f"\n{args.name!r} is not a quorumlock lock, nor held by quorumlock: the key "
                f"is a {other_type} on {others} of {len(results)} servers"
            )
        elif holders:
            say(f"\n{args.name!r} is not held by a majority ({len(holders)} key(s) left)")
        elif available:
            if not rw_seen and not permits_seen:  # else their lines say it: not "free"
                say(f"\n{args.name!r} is free")
        else:
            say(_unavailable(args.name, results, usable, needed))
        if in_line:
            said = f", the head {head}… on {lined_up} of {len(results)}" if head else ""
            say(f"{in_line} process(es) in line on a majority{said}")
    if reachable < needed:
        say(
            f"quorumlock: error: only {reachable} of {len(results)} servers reachable, "
            f"{needed} needed for a majority",
            err=True,
        )
        return EXIT_ERROR
    return 0


def _line(results: list[ServerStatus], needed: int) -> tuple[int, str | None, int]:
    """How many processes a majority of the servers has in line for the name (at
    least), and the head of the line that most servers name, if a majority does, with
    how many name it."""
    counts = sorted((len(r.in_line) for r in results if r.in_line is not None), reverse=True)
    in_line = counts[needed - 1] if len(counts) >= needed else 0
    head, agreeing = _most_named([r.in_line[0] for r in results if r.in_line])
    return in_line, head if agreeing >= needed else None, agreeing


def _most_named(named: list[str]) -> tuple[str, int]:
    """The value the most servers named ("" for none), and how many named it."""
    top = max(set(named), key=named.count) if named else ""
    return top, named.count(top) if top else 0


def _line_text(result: ServerStatus) -> str:
    if not result.reachable:
        return "-"
    if result.in_line is None:
        return "unknown"
    if not result.in_line:
        return "0"
    return f"{len(result.in_line)}, head {result.in_line[0]}…"


def _rw_holders(results: list[ServerStatus], needed: int) -> tuple[list[str], str | None]:
    """The readers and the writer of NAME's read-write lock that a majority has."""
    counts: dict[str, int] = {}
    writers: dict[str, int] = {}
    for r in results:
        for reader in set(r.readers):
            counts[reader] = counts.get(reader, 0) + 1
        if r.writer:
            writers[r.writer] = writers.get(r.writer, 0) + 1
    readers = sorted(token for token, n in counts.items() if n >= needed)
    writer = next((token for token, n in writers.items() if n >= needed), None)
    return readers, writer


def _rw_line(name: str, readers: list[str], writer: str | None, servers: int) -> str:
    if writer:
        return f"\n{name!r} (read-write) is held for writing: token {writer}…"
    if readers:
        return f"\n{name!r} (read-write) is held for reading by {len(readers)} reader(s)"
    return f"\n{name!r} (read-write) is not held by a majority of the {servers} servers"


def _permit_holders(results: list[ServerStatus], needed: int) -> dict[int, str]:
    """The permits of NAME's semaphore that a majority has: each slot held there by
    one token on a majority, with that token's prefix."""
    counts: dict[tuple[int, str], int] = {}
    for r in results:
        for held in r.permits.items():
            counts[held] = counts.get(held, 0) + 1
    return {slot: token for (slot, token), n in sorted(counts.items()) if n >= needed}


def _permits_line(name: str, permits: dict[int, str], servers: int) -> str:
    if permits:
        slots = ", ".join(str(slot) for slot in permits)
        return f"\n{name!r} (semaphore) is held: {len(permits)} permit(s), slot(s) {slots}"
    return f"\n{name!r} (semaphore) has no permit held by a majority of the {servers} servers"


def _refuses(result: ServerStatus) -> str:
    """Why the server refuses every lock ("" where it does not): a replica (read-only,
    or its writes lost at the next sync), full under noeviction, no scripts run, or a
    marker of another type."""
    if result.role not in (None, "master"):
        return "a replica"
    if result.full:
        return "full (OOM)"
    if result.scripts:
        return "scripts refused"
    return "marker of another type" if result.marker_of_another_type else ""


def _unavailable(name: str, results: list[ServerStatus], usable: int, needed: int) -> str:
    replicas = sum(_refuses(r) == "a replica" for r in results)
    full = sum(_refuses(r) == "full (OOM)" for r in results)
    scripts = [r.scripts for r in results if _refuses(r) == "scripts refused"]
    markers = sum(_refuses(r) == "marker of another type" for r in results)
    if replicas or full or scripts or markers:
        who = [f"{replicas} replica(s)"] if replicas else []
        who += [f"{full} full under maxmemory-policy noeviction (OOM)"] if full else []
        who += [f"{len(scripts)} where scripts fail ({scripts[0]})"] if scripts else []
        who += [f"{markers} where {_MARKER_TEXT}"] if markers else []
        text = (
            f"\n{name!r} is free but unavailable: {usable} of {len(results)} servers can "
            f"grant a lock, {needed} needed; {' and '.join(who)} refuse every lock"
        )
        quarantined = any(r.quarantined_for for r in results)
        return f"{text}; {_quarantines(results)}" if quarantined else text
    return (
        f"\n{name!r} is free but unavailable: {usable} of {len(results)} servers are out of "
        f"restart quarantine, {needed} needed; {_quarantines(results)}"
    )


def _quarantines(results: list[ServerStatus]) -> str:
    wait = max((r.quarantined_for or 0.0) for r in results)
    text = f"the quarantines end within {wait:.1f} s"
    if any(NEW_SERVER in (r.quarantine_cause or "") for r in results):
        text += "; servers that are brand-new can be marked so with 'quorumlock servers init'"
    return text + " (docs/safety.md, B1)"


def _quarantine_text(result: ServerStatus) -> str:
    if not result.reachable:
        return "-"
    if result.quarantined_for is None:
        return "unknown"
    if result.quarantined_for > 0:
        return f"yes, {result.quarantined_for:.1f} s left: {result.quarantine_cause}"
    return "no"
