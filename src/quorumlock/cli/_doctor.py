"""``quorumlock doctor``: audit every configured server (docs/cli.md, ``quorumlock doctor``).

Each check gives ``pass``, ``warn`` or ``fail``; any ``fail`` makes the exit status 1.

- **reachable**: the server answers (with the credentials given).
- **role**: it is a master. A replica is read-only, and a master with asynchronous
  replicas loses locks on failover, so Redlock wants independent masters.
- **persistence** (R11): ``appendonly yes`` with ``appendfsync always`` survives a crash
  with every lock. Anything less loses recent locks on a restart, which is safe only
  because quorumlock keeps a restarted server out of quorums for ``max_ttl`` (R11, B1):
  a warning, since every client must then keep ``max_ttl`` at least its longest ttl.
- **eviction**: lock keys carry a ttl, so ``volatile-*`` and ``allkeys-*`` policies may
  evict them under memory pressure: a lock silently vanishes. ``noeviction`` passes,
  unless the server is full (it refuses every new lock: OOM) or nearly (a warning).
- **cluster**: a cluster node redirects keys of other slots; Redlock needs standalone
  masters (a cluster can still be one instance through a cluster client in the API).
- **scripts**: ``EVAL "return 1" 0`` and ``EVALSHA`` of its digest run, as the library
  checks when it connects: every lock is a script, so a server where either is renamed,
  disabled or refused by its ACL fails every lock there (fatal), and fails the check.
  No reply in time fails it too, as a server paused (``CLIENT PAUSE WRITE``) or busy.
- **round trip**: the slowest of several PINGs against the per-instance timeout of a lock
  of ``--ttl`` (R6 step 2): above half of it warns, above all of it fails.
- **clock rate** (R12): ``TIME`` read twice on every server ``--clock-sample`` s apart; a
  server whose clock advances at a rate that differs from the others' median by more
  than the clock drift factor (1 %) fails, by more than a quarter of it warns; the
  uncertainty of the readings (half a round trip each), and so of the median, is given
  the benefit of the doubt.
- **same server**: two URLs that reach one server process (127.0.0.1 and localhost, a
  unix socket and a TCP port, a proxy) fail, as the library refuses them (R5): it
  compares each server's ``run_id`` as :class:`~quorumlock._io.incarnation.SameServerCheck`
  does.
- **servers**: N even or below 3 warns (R5): a majority of an even N tolerates no more
  failures than N - 1, and N = 1 is not fault tolerant.
- **quarantine** (B1): a server in restart quarantine (for a client whose max_ttl is
  ``--max-ttl``, or the largest a client declared there) warns, with the time left and
  why: it counts toward no quorum until then, as ``quorumlock status`` shows. A warning,
  not a failure: it ends by itself. A key ``quorumlock:incarnation`` of another type than
  the marker's (an application's) fails: no lock with the quarantine or fencing can be
  taken there until it is moved away.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

import redis

from quorumlock._algorithm.arithmetic import default_instance_timeout, quorum
from quorumlock._algorithm.config import MAX_TTL_SECONDS, RedlockConfig, to_ttl_ms
from quorumlock._algorithm.outcomes import MARKER_OF_ANOTHER_TYPE, Reply, quarantine_cause
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import translate, wrong_type
from quorumlock._io.incarnation import (
    SameServerCheck,
    ServerState,
    eviction_risk,
    noeviction_use,
    session_from,
)
from quorumlock.cli._common import (
    EXIT_ERROR,
    EXIT_USAGE,
    MAX_TIMEOUT,
    CliError,
    Parser,
    Servers,
    add_server_options,
    emit_json,
    error_reply,
    positive,
    print_table,
    resolve_servers,
    say,
)
from quorumlock.cli._quarantine import read_marker, server_state

__all__ = ["Check", "add_parser", "audit"]

Result = Literal["pass", "warn", "fail"]
ALL: Final = "(all)"
_PINGS: Final = 10
_DRIFT_FACTOR: Final = 0.01
# A server under maxmemory-policy noeviction this full is warned of: it refuses every
# write, new locks included, once full (OOM).
_NEARLY_FULL: Final = 0.9
# The library's own check of a new connection (quorumlock._io.incarnation): a script
# that touches nothing, run by EVAL, then by EVALSHA from the cache that EVAL filled.
_NOOP: Final = "return 1"
_NOOP_SHA: Final = hashlib.sha1(_NOOP.encode()).hexdigest()

_EPILOG = """\
checks: reachable, role (master), persistence (R11), eviction policy, cluster mode,
scripts (EVAL and EVALSHA run), DEBUG enabled, round trip vs the per-instance timeout,
restart quarantine (for --max-ttl), clock rate across servers (R12), two URLs that reach
one server, and the number of servers (odd, >= 3). 'quorumlock doctor --help' lists
them; docs/cli.md explains each.
The exit status is 1 if any check fails, 0 otherwise (warnings included).

examples:
  quorumlock doctor
  quorumlock doctor --servers rediss://:pw@a:6380,rediss://:pw@b:6380,rediss://:pw@c:6380
  quorumlock doctor --ttl 2 --json | jq '.checks[] | select(.result != "pass")'
"""


@dataclass
class Check:
    check: str
    server: str
    result: Result
    detail: str


@dataclass
class _Probe:
    """What one server told us (phase 1), and its second clock reading (phase 2)."""

    label: str
    client: redis.Redis
    max_ttl: float | None = None  # None: the quarantine is not checked
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    appendfsync: str | None = None
    # enable-debug-command: "" where the server has no such setting (DEBUG always on),
    # None where CONFIG could not be read
    debug_command: str | None = None
    # why EVAL or EVALSHA failed (the library's words), None where both ran
    scripts: str | None = None
    # the server's restart quarantine (None: not checked, or the server refused INFO)
    state: ServerState | None = None
    # the key quorumlock:incarnation is of another type (checked with the quarantine)
    marker_of_another_type: bool = False
    # they got no reply in time: the server is held back, not without scripts
    scripts_late: bool = False
    rtts: list[float] = field(default_factory=list)
    # (local midpoint, server, half the round trip: how far off the midpoint may be) s
    clock: list[tuple[float, float, float]] = field(default_factory=list)


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "doctor",
        help="audit the servers: role, persistence, eviction, cluster, latency, clocks",
        description="Audit every configured server for use as a Redlock instance "
        "and print a table with pass / warn / fail per check.",
        epilog=_EPILOG,
    )
    parser.add_argument(
        "--ttl",
        metavar="S",
        type=positive("--ttl", maximum=MAX_TTL_SECONDS),
        default=10.0,
        help="the ttl your locks use, for the round-trip check (default 10)",
    )
    parser.add_argument(
        "--instance-timeout",
        metavar="S",
        type=positive("--instance-timeout", maximum=MAX_TIMEOUT),
        default=None,
        help="the per-instance timeout your Redlock uses (default: derived from --ttl)",
    )
    parser.add_argument(
        "--clock-sample",
        metavar="S",
        type=positive("--clock-sample"),
        default=1.0,
        help="seconds between the two clock readings (default 1; longer is more precise)",
    )
    parser.add_argument(
        "--max-ttl",
        metavar="S",
        type=positive("--max-ttl", maximum=MAX_TTL_SECONDS),
        default=60.0,
        help="the max_ttl your clients use, for the restart-quarantine check (default 60)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_server_options(parser)
    parser.set_defaults(handler=doctor)
    return parser


def doctor(args: argparse.Namespace) -> int:
    # A ttl that no lock could use (no longer than its drift allowance) is refused as
    # run and verify refuse it (ConfigurationError: exit status 2).
    to_ttl_ms(args.ttl, RedlockConfig().clock_drift_factor)
    servers = resolve_servers(args)
    assert servers is not None
    timeout = (
        args.instance_timeout
        if args.instance_timeout is not None
        else default_instance_timeout(round(args.ttl * 1000))
    )
    checks = audit(
        servers, instance_timeout=timeout, clock_sample=args.clock_sample, max_ttl=args.max_ttl
    )
    counts = {r: sum(c.result == r for c in checks) for r in ("pass", "warn", "fail")}
    if args.json:
        emit_json(
            {
                "servers": servers.labels,
                "instance_timeout": timeout,
                "checks": [asdict(c) for c in checks],
                "summary": counts,
                "ok": counts["fail"] == 0,
            }
        )
    else:
        print_table(
            ["check", "server", "result", "detail"],
            [[c.check, c.server, c.result.upper(), c.detail] for c in checks],
            wrap=70,
        )
        say(f"\n{counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed")
    if counts["fail"]:
        failed = sorted({c.check for c in checks if c.result == "fail"})
        say(f"quorumlock: error: doctor found failures: {', '.join(failed)}", err=True)
        return EXIT_ERROR
    return 0


def _answered(probe: _Probe) -> bool:
    return probe.error is None


def audit(
    servers: Servers,
    *,
    instance_timeout: float,
    clock_sample: float | None,
    max_ttl: float | None = 60.0,
) -> list[Check]:
    """Probe every server in parallel and judge what they said.

    ``clock_sample=None`` is the quick audit: no clock-rate check, so no pause between
    two clock readings (the Django system checks run it). ``max_ttl`` is the clients'
    restart quarantine, None where it is off (no quarantine check).
    """
    if clock_sample is not None and clock_sample > 60:
        raise CliError("--clock-sample must be at most 60 s", EXIT_USAGE)
    with servers.connected() as clients, ThreadPoolExecutor(len(clients)) as pool:
        probes = [
            _Probe(label, client, max_ttl)
            for label, client in zip(servers.labels, clients, strict=True)
        ]
        list(pool.map(_probe, probes))
        if clock_sample is not None and any(p.error is None for p in probes):
            time.sleep(clock_sample)
            list(pool.map(_read_clock, filter(_answered, probes)))
    checks: list[Check] = []
    for probe in probes:
        checks += _judge(probe, instance_timeout)
    checks += _judge_clocks(probes)
    checks += _judge_same_server(probes)
    checks.append(_judge_count(len(probes)))
    return checks


def _judge_same_server(probes: list[_Probe]) -> list[Check]:
    """A failed row for every group of URLs that reach one server process.

    The process is named by its ``run_id``, as the library names it for every new
    connection; the message is the library's own (``run`` refuses such a list).
    """
    by_run_id: dict[str, list[int]] = {}
    for index, probe in enumerate(probes):
        if probe.error is None:
            try:
                run_id = session_from(probe.info, None).run_id
            except ValueError:
                continue  # no run_id in INFO: cannot tell (a proxy that hides it)
            by_run_id.setdefault(run_id, []).append(index)
    checks: list[Check] = []
    for indexes in by_run_id.values():
        if len(indexes) < 2:
            continue
        same = SameServerCheck([probes[i].label for i in indexes])
        for position, index in enumerate(indexes):
            same.note(position, session_from(probes[index].info, None))
        try:
            same.check()
        except ConfigurationError as exc:
            labels = [probes[i].label for i in indexes]
            checks.append(Check("same server", ", ".join(labels), "fail", str(exc)))
    if not checks and len(by_run_id) > 1:
        checks.append(
            Check("same server", ALL, "pass", f"{len(by_run_id)} distinct server processes")
        )
    return checks


def _probe(probe: _Probe) -> None:
    client = probe.client
    try:
        client.ping()  # connects: not a round trip of a lock
        for _ in range(_PINGS):
            began = time.perf_counter()
            client.ping()
            probe.rtts.append(time.perf_counter() - began)
        for section in ("server", "replication", "persistence", "memory", "cluster", "clients"):
            probe.info.update(client.info(section))
        _read_clock(probe)
    except redis.RedisError as exc:
        probe.error = error_reply(exc)
        return
    try:
        client.eval(_NOOP, 0)
        client.evalsha(_NOOP_SHA, 0)  # cached by the EVAL
    except redis.RedisError as exc:
        kind, probe.scripts = translate(exc)
        probe.scripts_late = kind is Reply.TIMEOUT
    if probe.max_ttl is not None:
        try:
            read_marker(client)
        except redis.RedisError as exc:
            probe.marker_of_another_type = wrong_type(exc)
        probe.state = server_state(client, probe.max_ttl)
    try:
        reply = client.config_get("appendfsync")
        probe.appendfsync = str(reply.get("appendfsync")) if reply else None
    except redis.RedisError:
        probe.appendfsync = None  # CONFIG renamed or not permitted
        return
    try:
        reply = client.config_get("enable-debug-command")
        probe.debug_command = str(reply.get("enable-debug-command", ""))
    except redis.RedisError:
        probe.debug_command = None


def _judge_debug(label: str, setting: str | None) -> Check | None:
    """DEBUG RELOAD NOSAVE loads the last snapshot into the running server, its marker
    naming the same process: a loss the restart quarantine cannot see (docs/safety.md,
    "Assumptions"). None where CONFIG could not be read."""
    if setting is None:
        return None
    if setting == "no":
        return Check("debug", label, "pass", "DEBUG disabled (enable-debug-command no)")
    why = (
        "DEBUG always enabled (a server without enable-debug-command)"
        if setting == ""
        else f"DEBUG enabled (enable-debug-command {setting})"
    )
    return Check(
        "debug",
        label,
        "warn",
        f"{why}: DEBUG RELOAD NOSAVE brings back older data and lock keys unseen by the "
        "restart quarantine; disable it on lock servers",
    )


def _judge_quarantine(label: str, state: ServerState | None, marker: bool) -> Check | None:
    """A server in restart quarantine counts toward no quorum until it ends (B1): a
    warning, with the time left and why, since it ends by itself. A marker of another
    type (``marker``) fails: no lock with the quarantine can be taken there until it is
    moved away. None where the state could not be read (an ACL without INFO) or was not
    asked for."""
    if marker:
        return Check("quarantine", label, "fail", f"{MARKER_OF_ANOTHER_TYPE.partition(': ')[2]}")
    if state is None:
        return None
    if state.quarantined_for <= 0:
        return Check("quarantine", label, "pass", "not in restart quarantine")
    return Check(
        "quarantine",
        label,
        "warn",
        f"restart quarantine: {state.quarantined_for:.1f} s left: "
        f"{quarantine_cause(state.lost, state.since)}; it counts toward no quorum until "
        "then (docs/safety.md, B1)",
    )


def _read_clock(probe: _Probe) -> None:
    try:
        before = time.monotonic()
        seconds, micros = probe.client.time()
        after = time.monotonic()
    except redis.RedisError as exc:
        probe.error = probe.error or error_reply(exc)
        return
    probe.clock.append(((before + after) / 2, seconds + micros / 1e6, (after - before) / 2))


def _judge(probe: _Probe, instance_timeout: float) -> list[Check]:
    label = probe.label
    if probe.error is not None:
        return [Check("reachable", label, "fail", probe.error)]
    info = probe.info
    version = info.get("valkey_version") or info.get("redis_version") or "?"
    name = info.get("server_name") or "redis"
    checks = [Check("reachable", label, "pass", f"{name} {version}")]

    role = str(info.get("role", "?"))
    if role == "master":
        replicas = int(info.get("connected_slaves", 0))
        if replicas:
            checks.append(
                Check(
                    "role",
                    label,
                    "warn",
                    f"master with {replicas} replica(s): a failover to an asynchronous "
                    "replica can lose locks; Redlock wants independent masters",
                )
            )
        else:
            checks.append(Check("role", label, "pass", "master"))
    else:
        checks.append(Check("role", label, "fail", f"role is {role}: a lock needs a master"))

    aof = bool(int(info.get("aof_enabled", 0)))
    fsync = probe.appendfsync
    if aof and fsync == "always":
        checks.append(
            Check("persistence", label, "pass", "appendonly yes, appendfsync always (R11)")
        )
    else:
        what = f"appendonly yes, appendfsync {fsync or '?'}" if aof else "appendonly no"
        checks.append(
            Check(
                "persistence",
                label,
                "warn",
                f"{what}: a crash forgets recent locks; safe only with the restart "
                "quarantine, max_ttl >= every ttl in use (R11, B1)",
            )
        )

    policy = str(info.get("maxmemory_policy", "?"))
    maxmemory = int(info.get("maxmemory", 0))
    risk = eviction_risk(policy, maxmemory)  # what a Redlock warns of when it connects
    use = noeviction_use(info)  # what it counts against maxmemory before it refuses (OOM)
    if use is not None and use[0] >= use[1] * _NEARLY_FULL:
        used, _ = use
        full = used >= maxmemory
        checks.append(
            Check(
                "eviction",
                label,
                "fail" if full else "warn",
                f"maxmemory-policy noeviction, used_memory {used} of maxmemory {maxmemory}: "
                + (
                    "the server is full and refuses every new lock (OOM)"
                    if full
                    else "nearly full; once full it refuses every new lock (OOM)"
                ),
            )
        )
    elif policy == "noeviction":
        checks.append(Check("eviction", label, "pass", "maxmemory-policy noeviction"))
    elif risk is None:
        checks.append(
            Check(
                "eviction",
                label,
                "warn",
                f"maxmemory-policy {policy}: no maxmemory yet, but once one is set lock "
                "keys can be evicted; use noeviction",
            )
        )
    else:
        checks.append(
            Check(
                "eviction",
                label,
                "fail",
                f"{risk}: lock keys can be evicted; use noeviction",
            )
        )

    if int(info.get("cluster_enabled", 0)):
        checks.append(
            Check(
                "cluster",
                label,
                "fail",
                "cluster mode: keys of other slots are redirected; use standalone masters",
            )
        )
    else:
        checks.append(Check("cluster", label, "pass", "standalone"))

    if probe.scripts is None:
        checks.append(Check("scripts", label, "pass", "EVAL and EVALSHA run"))
    elif probe.scripts_late:
        checks.append(Check("scripts", label, "fail", _held_back(info)))
    else:
        checks.append(
            Check("scripts", label, "fail", f"{probe.scripts}: every lock fails on this server")
        )

    debug = _judge_debug(label, probe.debug_command)
    if debug is not None:
        checks.append(debug)

    quarantine = _judge_quarantine(label, probe.state, probe.marker_of_another_type)
    if quarantine is not None:
        checks.append(quarantine)

    worst = max(probe.rtts)
    median = statistics.median(probe.rtts)
    detail = (
        f"median {median * 1000:.2f} ms, max {worst * 1000:.2f} ms of {len(probe.rtts)} pings; "
        f"per-instance timeout {instance_timeout * 1000:.0f} ms"
    )
    if worst >= instance_timeout:
        checks.append(Check("round trip", label, "fail", detail))
    elif worst >= instance_timeout / 2:
        checks.append(Check("round trip", label, "warn", detail))
    else:
        checks.append(Check("round trip", label, "pass", detail))
    return checks


def _held_back(info: dict[str, Any]) -> str:
    """Why EVAL got no reply in time: a pause, where the server says so (``INFO
    clients`` of Valkey and Redis 7.4 and later), else a pause or a busy server."""
    paused = str(info.get("paused_actions", "none"))
    if paused != "none":
        left = int(info.get("paused_timeout_milliseconds", 0)) / 1000
        why = f"the server is paused for {paused} commands (CLIENT PAUSE, {left:.1f} s left)"
    else:
        why = "the server may be paused (CLIENT PAUSE WRITE) or busy (a long script)"
    return f"EVAL got no reply in time: {why}; every lock times out there meanwhile"


def _judge_clocks(probes: list[_Probe]) -> list[Check]:
    """Each server's clock rate against the others' median.

    A reading is known only to within half its round trip: the uncertainty of a rate is
    the two half round trips over the sample. The median is as uncertain as the rates it
    is taken from: it lies between the median of the rates' lowest values and that of
    their highest. A server is judged on the gap between its own range and the median's,
    the part of its deviation that neither uncertainty can explain (a slow reply on a
    loaded machine, its own or another server's, is not a fast clock).
    """
    rates: dict[str, tuple[float, float]] = {}  # label -> (rate, uncertainty)
    for probe in probes:
        if probe.error is None and len(probe.clock) == 2:
            (local0, server0, error0), (local1, server1, error1) = probe.clock
            if local1 > local0:
                elapsed = local1 - local0
                rates[probe.label] = ((server1 - server0) / elapsed, (error0 + error1) / elapsed)
    if not rates:
        return []
    median = statistics.median(rate for rate, _ in rates.values())
    lowest = statistics.median(rate - uncertainty for rate, uncertainty in rates.values())
    highest = statistics.median(rate + uncertainty for rate, uncertainty in rates.values())
    checks: list[Check] = []
    for label, (rate, uncertainty) in rates.items():
        relative = rate / median - 1
        local = rate - 1
        gap = max(0.0, rate - uncertainty - highest, lowest - (rate + uncertainty))
        beyond = gap / median
        detail = (
            f"{relative * 100:+.3f} % (± {uncertainty * 100:.3f} %) vs the servers' median, "
            f"{local * 100:+.3f} % vs this machine (drift allowance {_DRIFT_FACTOR * 100:g} %)"
        )
        if beyond > _DRIFT_FACTOR:
            result: Result = "fail"
        elif beyond > _DRIFT_FACTOR / 4:
            result = "warn"
        else:
            result = "pass"
        checks.append(Check("clock rate", label, result, detail))
    return checks


def _judge_count(n: int) -> Check:
    if n == 1:
        return Check(
            "servers", ALL, "warn", "1 server: correct, but not fault tolerant (use 3 or 5)"
        )
    if n % 2 == 0:
        return Check(
            "servers",
            ALL,
            "warn",
            f"{n} servers tolerate {n - quorum(n)} down, no more than {n - 1} would "
            f"(a majority is {quorum(n)}); use an odd number",
        )
    return Check(
        "servers", ALL, "pass", f"{n} servers, majority {quorum(n)}: tolerates {n - quorum(n)} down"
    )
