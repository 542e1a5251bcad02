"""Uncontended acquire+release benchmark: quorumlock next to the other Python locks.

Every contender runs the same cycle on the same local servers, in the same run: create a
lock object, ``acquire(blocking=False)``, ``release()``. Nobody else wants the lock, so
the cycle measures the fixed cost of a lock: client code plus round trips.

Contenders (N = how many servers the lock uses):

* quorumlock, N = 1 and N = 5 (``Redlock(urls).lock(name, ttl=10.0)``);
* pottery's ``Redlock``, N = 5 (a thread pool per acquire and per release);
* redis-py's ``Lock``, N = 1 (``client.lock(name, timeout=10)``);
* python-redis-lock (``redis_lock.Lock``), N = 1;
* a bare floor, N = 1 and N = 5: ``SET key token NX PX 10000`` then ``EVALSHA`` of the
  compare-and-delete script, each written on every server's raw redis-py
  ``Connection`` before any reply is read. No library around it: what a Redlock cycle
  costs in this process with redis-py's parser, and nothing else;
* the bare floor with quorumlock's scripts, N = 5: the floor's loop sending the two
  commands quorumlock sends (the acquire script that checks the server's restart
  quarantine, the release script that announces the release to waiters). From the bare
  floor to it: what those scripts cost the servers; from it to quorumlock: what
  quorumlock's client costs.

The machine this runs on is noisy (a shared 2-core VM drifts by +-30 % from one minute to
the next), so the method is built for fairness rather than for long runs: every contender
is warmed up, then each round gives every contender one time slice, in an order rotated
from round to round, so a slow minute hits all contenders alike. A ratio between two
contenders is only meaningful inside one run; this script computes them for you.

Run ``quorumlock bench --help`` (or ``python -m quorumlock.benchmarks.uncontended --help``)
for the options; see README.md next to this file.
"""

from __future__ import annotations

import argparse
import gc
import json
import secrets
import signal
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, cast

import redis

from quorumlock import Redlock
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import Fanout, Op
from quorumlock._algorithm.lockstate import new_token
from quorumlock._algorithm.scripts import ACQUIRE, RELEASE
from quorumlock._algorithm.wire import command_args
from quorumlock._io.incarnation import open_session
from quorumlock._io.packing import pack
from quorumlock.benchmarks._common import (
    SOCKET_TIMEOUT,
    NotInstalled,
    Table,
    client,
    clip,
    describe_environment,
    environment,
    import_peer,
    judge,
    local_servers,
    num,
    on_sigterm,
    percentile,
    ratio,
    rotated,
    server_description,
    version,
)

__all__ = [
    "Batch",
    "Config",
    "ContenderResult",
    "Ratio",
    "compute_ratios",
    "describe_environment",
    "environment",
    "main",
    "percentile",
    "ratios_rows",
    "ratios_table",
    "results_rows",
    "results_table",
    "rotated",
    "run_benchmark",
]

TTL_SECONDS: Final = 10
TTL_MS: Final = TTL_SECONDS * 1000
KEY_PREFIX: Final = "quorumlock-bench:uncontended"

#: The compare-and-delete of the Redis "Distributed locks with Redis" page.
RELEASE_LUA: Final = """\
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"""

#: A contender that fails this many cycles in a row is dropped from later rounds.
MAX_CONSECUTIVE_FAILURES: Final = 50


# --------------------------------------------------------------------------- contenders


class Runner(Protocol):
    """One contender, connected and ready: ``cycle`` is one acquire+release."""

    def cycle(self) -> bool:
        """Acquire (non-blocking) and release; True if both succeeded."""
        ...

    def close(self) -> None:
        """Close the connections this runner opened."""
        ...


class QuorumlockRunner:
    """quorumlock as users write it: one ``Redlock`` per process, a lock object per use."""

    def __init__(self, urls: Sequence[str], key: str) -> None:
        self._redlock = Redlock(list(urls))
        self._key = key

    def cycle(self) -> bool:
        lock = self._redlock.lock(self._key, ttl=float(TTL_SECONDS))
        if not lock.acquire(blocking=False):
            return False
        return lock.release()

    def close(self) -> None:
        self._redlock.close()


class PotteryRunner:
    """pottery 3.x ``Redlock``: ``auto_release_time`` is in seconds (it sends ``* 1000``)."""

    def __init__(self, urls: Sequence[str], key: str) -> None:
        self._pottery = import_peer("pottery")
        self._masters = [client(url) for url in urls]
        self._master_set = frozenset(self._masters)
        self._key = key

    def cycle(self) -> bool:
        lock = self._pottery.Redlock(
            key=self._key, masters=self._master_set, auto_release_time=TTL_SECONDS
        )
        if not lock.acquire(blocking=False):
            return False
        lock.release()  # raises ReleaseUnlockedLock if no majority held it
        return True

    def close(self) -> None:
        for master in self._masters:
            master.close()


class RedisPyRunner:
    """redis-py's own single-instance ``Lock`` (``timeout`` is in seconds)."""

    def __init__(self, urls: Sequence[str], key: str) -> None:
        self._client = client(urls[0])
        self._key = key

    def cycle(self) -> bool:
        lock = self._client.lock(self._key, timeout=TTL_SECONDS)
        if not lock.acquire(blocking=False):
            return False
        lock.release()  # raises LockNotOwnedError if the key was not ours any more
        return True

    def close(self) -> None:
        self._client.close()


class RedisLockRunner:
    """python-redis-lock (module ``redis_lock``), ``expire`` in seconds."""

    def __init__(self, urls: Sequence[str], key: str) -> None:
        self._redis_lock = import_peer("redis_lock")
        self._client = client(urls[0])
        self._key = key

    def cycle(self) -> bool:
        lock = self._redis_lock.Lock(self._client, self._key, expire=TTL_SECONDS)
        if not lock.acquire(blocking=False):
            return False
        lock.release()  # raises NotAcquired if the key was not ours any more
        return True

    def close(self) -> None:
        self._client.close()


class RawConnection(Protocol):
    """The part of redis-py's (untyped) ``Connection`` the bare floor uses."""

    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def send_command(self, *args: str | int) -> None: ...
    def pack_command(self, *args: str | int) -> list[bytes]: ...
    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...
    def read_response(self) -> object: ...


def _raw_connection(url: str) -> RawConnection:
    # The pool only parses the URL (redis://, rediss://, unix://) into a connection class
    # and its arguments; the connection itself is ours and never goes back to a pool.
    pool = redis.ConnectionPool.from_url(
        url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT
    )
    conn = cast(RawConnection, pool.connection_class(**pool.connection_kwargs))
    conn.connect()
    return conn


class BareFloorRunner:
    """The least a correct Redlock cycle can do with redis-py: no library around it.

    Acquire: a fresh 20-byte token from ``secrets``, ``SET key token NX PX``
    written on every connection, then every reply read. Release: ``EVALSHA`` of the
    compare-and-delete, the same way. Success needs a majority for both. No validity
    arithmetic, no per-node deadlines, no error translation: those are what a library
    adds on top, and the gap to this floor is their price.
    """

    def __init__(self, urls: Sequence[str], key: str) -> None:
        self._conns = [_raw_connection(url) for url in urls]
        self._key = key
        self._quorum = len(urls) // 2 + 1
        shas = set()
        for conn in self._conns:
            conn.send_command("SCRIPT", "LOAD", RELEASE_LUA)
            shas.add(_text(conn.read_response()))
        if len(shas) != 1:
            raise RuntimeError(f"servers disagree on the script's SHA1: {sorted(shas)}")
        self._sha = shas.pop()

    def cycle(self) -> bool:
        conns = self._conns
        key = self._key
        token = secrets.token_hex(20)
        packed = conns[0].pack_command("SET", key, token, "NX", "PX", TTL_MS)
        for conn in conns:
            conn.send_packed_command(packed, check_health=False)
        granted = 0
        for conn in conns:
            if conn.read_response() is not None:  # OK, or nil when the key exists
                granted += 1
        # Released on every server whether or not it granted the lock.
        packed = conns[0].pack_command("EVALSHA", self._sha, 1, key, token)
        for conn in conns:
            conn.send_packed_command(packed, check_health=False)
        released = 0
        for conn in conns:
            if conn.read_response() == 1:
                released += 1
        return granted >= self._quorum and released >= self._quorum

    def close(self) -> None:
        for conn in self._conns:
            conn.disconnect()


class ScriptedFloorRunner(BareFloorRunner):
    """The bare floor's loop with quorumlock's own commands, as a default ``Redlock``
    sends them in this cycle (its wire encoding builds them): the acquire script, which
    checks the restart quarantine and names each server's process, and the release
    script, which announces the release to waiters. Each cycle's token goes into bytes
    packed once per server; every reply is read, in server order, as the floor reads
    them. Success needs a majority of answers 1 to each: granted, then released
    without waking anyone.
    """

    def __init__(self, urls: Sequence[str], key: str) -> None:
        super().__init__(urls, key)
        acquire, release = cycle_commands(key)
        self._acquires: list[list[bytes]] = []
        for conn in self._conns:
            for script in (ACQUIRE, RELEASE):
                conn.send_command("SCRIPT", "LOAD", script.source)
                conn.read_response()
            session = open_session(cast(Any, conn), SOCKET_TIMEOUT)
            self._acquires.append(_template(command_args(acquire, session)))
        self._release = _template(command_args(release))

    def cycle(self) -> bool:
        conns = self._conns
        token = new_token().encode()
        for conn, parts in zip(conns, self._acquires, strict=True):
            conn.send_packed_command([token.join(parts)], check_health=False)
        granted = 0
        for conn in conns:
            if conn.read_response() == 1:  # the usual grant; a refusal answers a table
                granted += 1
        packed = token.join(self._release)
        for conn in conns:
            conn.send_packed_command([packed], check_health=False)
        released = 0
        for conn in conns:
            if conn.read_response() == 1:
                released += 1
        return granted >= self._quorum and released >= self._quorum


#: What stands for the token in a template packed once (``_template``): as long as a
#: token, and never one.
TOKEN_MARK: Final = "\x00" * len(new_token())


def cycle_commands(key: str) -> tuple[Fanout, Fanout]:
    """The two commands a default ``Redlock`` sends in an uncontended cycle of ``key``:
    the acquire (with the restart quarantine's check) and the release (which announces
    it), with :data:`TOKEN_MARK` for the token and a ttl of :data:`TTL_MS`."""
    config = RedlockConfig()
    timeout = config.timeout_for(TTL_MS)
    acquire = Fanout(
        Op.ACQUIRE, key, TOKEN_MARK, TTL_MS, timeout,
        max_ttl_ms=config.max_ttl_ms, fencing=config.fencing,
    )  # fmt: skip
    return acquire, Fanout(Op.RELEASE, key, TOKEN_MARK, TTL_MS, timeout, notify=True)


def _template(args: tuple[str | int, ...]) -> list[bytes]:
    """The packed command ``args`` (with ``TOKEN_MARK`` for the token), split where the
    token goes: ``token.join(parts)`` is the command with that token."""
    return pack(args).split(TOKEN_MARK.encode())


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Contender:
    """A lock implementation and the number of servers it uses."""

    label: str
    slug: str
    servers: int
    package: str
    build: Callable[[Sequence[str], str], Runner]


CONTENDERS: Final[tuple[Contender, ...]] = (
    Contender("quorumlock", "quorumlock-n1", 1, "quorumlock", QuorumlockRunner),
    Contender("quorumlock", "quorumlock-n5", 5, "quorumlock", QuorumlockRunner),
    Contender("pottery Redlock", "pottery-n5", 5, "pottery", PotteryRunner),
    Contender("redis-py Lock", "redis-py-n1", 1, "redis", RedisPyRunner),
    Contender("python-redis-lock", "redis-lock-n1", 1, "python-redis-lock", RedisLockRunner),
    Contender("bare floor, redis-py", "floor-n1", 1, "redis", BareFloorRunner),
    Contender("bare floor, redis-py", "floor-n5", 5, "redis", BareFloorRunner),
    Contender(
        "bare floor with quorumlock's scripts, redis-py",
        "floor-scripts-n5",
        5,
        "redis",
        ScriptedFloorRunner,
    ),
)


def contenders_for(counts: Sequence[int]) -> tuple[Contender, ...]:
    """The Redlocks (quorumlock, pottery, the bare floor) at each server count in
    ``counts``, the bare floor with quorumlock's scripts at N = 5 (if 5 is one of them),
    then the single-instance locks (redis-py, python-redis-lock) at N = 1."""
    multi = (
        ("quorumlock", "quorumlock", "quorumlock", QuorumlockRunner),
        ("bare floor, redis-py", "floor", "redis", BareFloorRunner),
        ("pottery Redlock", "pottery", "pottery", PotteryRunner),
    )
    chosen = [
        Contender(label, f"{slug}-n{n}", n, package, build)
        for label, slug, package, build in multi
        for n in counts
    ]
    if 5 in counts:
        chosen += [c for c in CONTENDERS if c.slug == "floor-scripts-n5"]
    single = [c for c in CONTENDERS if c.slug in ("redis-py-n1", "redis-lock-n1")]
    return (*chosen, *single)


# --------------------------------------------------------------------------- measuring


@dataclass
class Batch:
    """One time slice of one contender."""

    latencies_ns: list[int]
    cycles: int
    failures: int
    elapsed_ns: int
    error: str | None

    @property
    def rate(self) -> float:
        """Completed cycles per second over the slice."""
        return len(self.latencies_ns) / (self.elapsed_ns / 1e9) if self.elapsed_ns else 0.0


def run_batch(cycle: Callable[[], bool], seconds: float, max_cycles: int) -> Batch:
    """Run ``cycle`` until ``seconds`` passed or ``max_cycles`` ran, timing each call.

    One clock read per cycle: a cycle's end is the next one's start, so the latency
    includes the loop's own overhead (an append and a comparison, well under 1 us), the
    same for every contender. Failed cycles are counted, not timed.
    """
    clock = time.perf_counter_ns
    latencies: list[int] = []
    append = latencies.append
    failures = 0
    consecutive = 0
    error: str | None = None
    cycles = 0
    start = clock()
    deadline = start + int(seconds * 1e9)
    before = start
    after = start
    while cycles < max_cycles:
        try:
            ok = cycle()
        except Exception as exc:  # a broken contender is reported, not fatal
            ok = False
            error = f"{type(exc).__name__}: {exc}"
        after = clock()
        cycles += 1
        if ok:
            append(after - before)
            consecutive = 0
        else:
            failures += 1
            consecutive += 1
            if consecutive >= MAX_CONSECUTIVE_FAILURES:
                break
        if after >= deadline:
            break
        before = after
    return Batch(latencies, cycles, failures, after - start, error)


@dataclass
class ContenderResult:
    """Everything measured for one contender in one run."""

    label: str
    slug: str
    servers: int
    package: str
    version: str | None
    status: str = "ok"  # "ok", "not installed", "skipped: ...", "failed: ..."
    batches: list[Batch] = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return self.status == "ok" and any(b.latencies_ns for b in self.batches)

    def _sorted(self) -> list[int]:
        return sorted(ns for b in self.batches for ns in b.latencies_ns)

    def summary(self) -> dict[str, Any]:
        lat = self._sorted()
        rates = [b.rate for b in self.batches]
        return {
            "label": self.label,
            "slug": self.slug,
            "servers": self.servers,
            "package": self.package,
            "version": self.version,
            "status": self.status,
            "median_us": statistics.median(lat) / 1000 if lat else None,
            "p99_us": percentile(lat, 0.99) / 1000 if lat else None,
            "cycles_per_second": statistics.median(rates) if rates else None,
            "cycles_per_second_by_round": rates,
            "median_us_by_round": [
                statistics.median(b.latencies_ns) / 1000 if b.latencies_ns else None
                for b in self.batches
            ],
            "cycles": sum(b.cycles for b in self.batches),
            "failures": sum(b.failures for b in self.batches),
            "first_error": next((b.error for b in self.batches if b.error), None),
        }


@dataclass(frozen=True)
class Config:
    """How long and how often to measure (see ``--help``)."""

    rounds: int = 7
    slice_seconds: float = 0.3
    max_cycles: int = 20_000
    warmup_seconds: float = 0.5
    collect_garbage: bool = True


def run_benchmark(
    urls: Sequence[str],
    config: Config,
    *,
    log: Callable[[str], None],
    contenders: Sequence[Contender] = CONTENDERS,
) -> list[ContenderResult]:
    """Warm up every contender, then run ``config.rounds`` rotated rounds of slices.

    ``contenders`` defaults to ``quorumlock bench``'s; the suite passes
    :func:`contenders_for` with more server counts. Each uses ``urls[:servers]``.
    """
    run_id = secrets.token_hex(4)
    results: list[ContenderResult] = []
    runners: dict[str, Runner] = {}
    try:
        for contender in contenders:
            result = ContenderResult(
                contender.label,
                contender.slug,
                contender.servers,
                contender.package,
                version(contender.package),
            )
            results.append(result)
            if contender.servers > len(urls):
                result.status = f"skipped: needs {contender.servers} servers"
                continue
            key = f"{KEY_PREFIX}:{contender.slug}:{run_id}"
            try:
                runner = contender.build(urls[: contender.servers], key)
            except NotInstalled:
                result.status = "not installed"
                continue
            except Exception as exc:
                result.status = f"failed: {type(exc).__name__}: {exc}"
                continue
            # Warm-up: connections opened, scripts cached, code paths hot. Not recorded.
            warm = run_batch(runner.cycle, config.warmup_seconds, config.max_cycles)
            if warm.failures == warm.cycles:
                result.status = f"failed: {warm.error or 'no cycle succeeded'}"
                runner.close()
                continue
            runners[contender.slug] = runner

        active = list(filter(lambda r: r.slug in runners, results))
        for round_index in range(config.rounds):
            order = rotated(active, round_index)
            for result in order:
                runner = runners[result.slug]
                if config.collect_garbage:
                    gc.collect()  # nobody pays for the previous contender's garbage
                batch = run_batch(runner.cycle, config.slice_seconds, config.max_cycles)
                result.batches.append(batch)
                if batch.failures and not batch.latencies_ns:
                    result.status = f"failed: {batch.error or 'no cycle succeeded'}"
                    runners.pop(result.slug).close()
                continue
            active = list(filter(lambda r: r.slug in runners, active))
            log(f"round {round_index + 1}/{config.rounds} done")
    finally:
        for runner in runners.values():
            runner.close()
    return results


# --------------------------------------------------------------------------- reporting


@dataclass(frozen=True)
class Ratio:
    """A ratio between two contenders, optionally with its target."""

    name: str
    numerator: str  # slug
    denominator: str  # slug
    metric: str  # "cycles_per_second" or "median_us"
    target: float | None = None
    at_least: bool = True  # target is a minimum (else a maximum)


RATIOS: Final[tuple[Ratio, ...]] = (
    Ratio(
        "quorumlock N=5 cycles/s / pottery N=5 cycles/s",
        "quorumlock-n5",
        "pottery-n5",
        "cycles_per_second",
        8.0,
    ),
    Ratio(
        "quorumlock N=5 median / redis-py Lock median",
        "quorumlock-n5",
        "redis-py-n1",
        "median_us",
        1.2,
        at_least=False,
    ),
    Ratio(
        "quorumlock N=1 cycles/s / redis-py Lock cycles/s",
        "quorumlock-n1",
        "redis-py-n1",
        "cycles_per_second",
        2.0,
    ),
    Ratio(
        "quorumlock N=5 cycles/s / bare floor N=5 cycles/s",
        "quorumlock-n5",
        "floor-n5",
        "cycles_per_second",
    ),
    Ratio(
        "quorumlock N=1 cycles/s / bare floor N=1 cycles/s",
        "quorumlock-n1",
        "floor-n1",
        "cycles_per_second",
    ),
    # What the targets would read for code with no overhead at all: if the floor misses a
    # target on this machine, no library can meet it here.
    Ratio(
        "bare floor N=5 cycles/s / pottery N=5 cycles/s",
        "floor-n5",
        "pottery-n5",
        "cycles_per_second",
    ),
    Ratio(
        "bare floor N=5 median / redis-py Lock median",
        "floor-n5",
        "redis-py-n1",
        "median_us",
    ),
    Ratio(
        "bare floor N=1 cycles/s / redis-py Lock cycles/s",
        "floor-n1",
        "redis-py-n1",
        "cycles_per_second",
    ),
    # What is left between quorumlock and the bare floor, in two parts.
    Ratio(
        "quorumlock N=5 median / floor with scripts N=5 median (the client's part)",
        "quorumlock-n5",
        "floor-scripts-n5",
        "median_us",
    ),
    Ratio(
        "floor with scripts N=5 median / bare floor N=5 median (the scripts' part)",
        "floor-scripts-n5",
        "floor-n5",
        "median_us",
    ),
)

_BY_ROUND: Final = {
    "cycles_per_second": "cycles_per_second_by_round",
    "median_us": "median_us_by_round",
}


def compute_ratios(
    summaries: dict[str, dict[str, Any]], ratios: Sequence[Ratio] = RATIOS
) -> list[dict[str, Any]]:
    """Each ratio from the run's aggregates, plus its range over the paired rounds."""
    out: list[dict[str, Any]] = []
    for spec in ratios:
        top = summaries.get(spec.numerator, {})
        bottom = summaries.get(spec.denominator, {})
        value: float | None = None
        low = high = None
        if top.get("status") == "ok" and bottom.get("status") == "ok":
            value = ratio(top.get(spec.metric), bottom.get(spec.metric))
            # Each round ran both contenders within a few seconds of each other: the
            # per-round ratios show how much of the noise survives the pairing.
            xs, ys = top[_BY_ROUND[spec.metric]], bottom[_BY_ROUND[spec.metric]]
            per_round: list[float] = []
            if len(xs) == len(ys):  # round i of one is paired with round i of the other
                pairs = (ratio(x, y) for x, y in zip(xs, ys, strict=True))
                per_round = [r for r in pairs if r is not None]
            if per_round:
                low, high = min(per_round), max(per_round)
        out.append(
            {
                "name": spec.name,
                "metric": spec.metric,
                "value": value,
                "per_round_min": low,
                "per_round_max": high,
                "target": (
                    None
                    if spec.target is None
                    else f"{'>=' if spec.at_least else '<='} {spec.target:g}x"
                ),
                "result": judge(value, spec.target, at_least=spec.at_least),
            }
        )
    return out


def results_table(summaries: Sequence[dict[str, Any]]) -> str:
    """One row per contender: latency, cycles/s and its spread over rounds, failures."""
    return results_rows(summaries).text()


def results_rows(summaries: Sequence[dict[str, Any]]) -> Table:
    """:func:`results_table` as a :class:`Table` (for Markdown too)."""
    rows = []
    for s in summaries:
        rates = [r for r in s["cycles_per_second_by_round"] if r]
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}" if rates else "-"
        installed = s["version"] and s["status"] != "not installed"
        label = s["label"] + (f" {s['version']}" if installed else "")
        if s["status"] != "ok":
            rows.append([label, str(s["servers"]), *["-"] * 6, clip(s["status"])])
            continue
        note = f"first error: {s['first_error']}" if s["first_error"] else ""
        rows.append(
            [
                label,
                str(s["servers"]),
                num(s["median_us"], ",.1f"),
                num(s["p99_us"], ",.1f"),
                num(s["cycles_per_second"], ",.0f"),
                spread,
                f"{s['cycles']:,}",
                f"{s['failures']:,}",
                clip(note),
            ]
        )
    header = ["contender", "N", "median us", "p99 us", "cycles/s", "rounds min-max", "cycles"]
    return Table([*header, "failed", "note"], rows, frozenset({1, 2, 3, 4, 5, 6, 7}))


def ratios_table(ratios: Sequence[dict[str, Any]]) -> str:
    """The ratios from :func:`compute_ratios`, then how many targets were met."""
    targeted = [r for r in ratios if r["target"] is not None]
    met = sum(r["result"] == "pass" for r in targeted)
    unknown = sum(r["result"] == "n/a" for r in targeted)
    tail = f" ({unknown} not measured)" if unknown else ""
    return "\n".join([ratios_rows(ratios).text(), "", f"targets met: {met}/{len(targeted)}{tail}"])


def ratios_rows(ratios: Sequence[dict[str, Any]]) -> Table:
    """The ratios from :func:`compute_ratios` as a :class:`Table`."""
    ratio_rows = []
    for r in ratios:
        rng = (
            f"{r['per_round_min']:.2f}-{r['per_round_max']:.2f}x"
            if r["per_round_min"] is not None
            else "-"
        )
        ratio_rows.append(
            [
                r["name"],
                "-" if r["value"] is None else f"{r['value']:.2f}x",
                rng,
                r["target"] or "",
                r["result"],
            ]
        )
    return Table(["ratio", "value", "rounds", "target", "result"], ratio_rows, frozenset({1, 2}))


def render(
    summaries: list[dict[str, Any]], ratios: list[dict[str, Any]], meta: dict[str, Any]
) -> str:
    """The plain-text report: header, results table, ratios and targets."""
    cfg = meta["config"]
    lines = [
        f"uncontended acquire+release, {cfg['rounds']} round(s) x {cfg['slice_seconds']:g} s "
        f"per contender (rotated order), warm-up {cfg['warmup_seconds']:g} s, "
        f"ttl {TTL_SECONDS} s",
        f"servers: {meta['servers']['description']}",
        f"client: {describe_environment(meta)}",
        "",
        results_table(summaries),
        "",
        "cycles/s: median over rounds of (completed cycles / slice time); median and p99:",
        "over every timed cycle of the run. Ratios: from the run's medians; 'rounds' is the",
        "range of the same ratio computed round by round (contenders paired in time).",
        "",
        ratios_table(ratios),
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.uncontended",
        description="Uncontended acquire+release cycles: quorumlock vs other Python locks, "
        "interleaved on the same servers in one run.",
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7)")
    parser.add_argument(
        "--slice",
        type=float,
        default=None,
        help="seconds per contender per round (default 0.3)",
    )
    parser.add_argument(
        "--max-cycles",
        type=int,
        default=None,
        help="at most this many cycles per slice (default 20000)",
    )
    parser.add_argument(
        "--warmup", type=float, default=None, help="warm-up seconds per contender (default 0.5)"
    )
    parser.add_argument(
        "--servers",
        default=None,
        help="comma-separated URLs of servers to use instead of starting 5 local ones "
        "(N=5 contenders need 5; their keys start with " + KEY_PREFIX + ")",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write results as JSON")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run of about 3 s for CI: 1 round, tiny slices, every contender",
    )
    parser.add_argument(
        "--no-gc-collect",
        dest="gc_collect",
        action="store_false",
        help="do not run gc.collect() before each slice",
    )
    parser.add_argument(
        "--fail-on-miss",
        action="store_true",
        help="exit with status 1 if a target is missed (off by default: one noisy run "
        "should not fail CI)",
    )
    return parser.parse_args(argv)


def _config(args: argparse.Namespace) -> Config:
    base = Config(rounds=1, slice_seconds=0.05, warmup_seconds=0.03) if args.quick else Config()

    def pick(value: Any, default: Any) -> Any:
        return default if value is None else value

    config = Config(
        rounds=pick(args.rounds, base.rounds),
        slice_seconds=pick(args.slice, base.slice_seconds),
        max_cycles=pick(args.max_cycles, base.max_cycles),
        warmup_seconds=pick(args.warmup, base.warmup_seconds),
        collect_garbage=args.gc_collect,
    )
    if config.rounds < 1 or config.max_cycles < 1:
        raise SystemExit("error: --rounds and --max-cycles must be >= 1")
    if not 0 < config.slice_seconds <= 60 or not 0 <= config.warmup_seconds <= 60:
        raise SystemExit("error: --slice must be in (0, 60] and --warmup in [0, 60]")
    return config


def run_metadata(
    config: Config, urls: list[str], started: bool, given_by: str = "--servers"
) -> dict[str, Any]:
    """What a run's report says about itself: its settings, its servers (``given_by``:
    where servers that were not ``started`` came from), the machine."""
    return {
        "config": {
            "rounds": config.rounds,
            "slice_seconds": config.slice_seconds,
            "max_cycles": config.max_cycles,
            "warmup_seconds": config.warmup_seconds,
            "gc_collect": config.collect_garbage,
            "ttl_seconds": TTL_SECONDS,
        },
        "servers": server_description(urls, started, given_by),
        **environment(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    config = _config(args)
    signal.signal(signal.SIGTERM, on_sigterm)

    def log(message: str) -> None:
        print(f"  ... {message}", file=sys.stderr, flush=True)

    started_at = time.monotonic()
    try:
        with local_servers(args.servers) as (urls, started):
            meta = run_metadata(config, urls, started)
            log(f"servers ready: {', '.join(urls)}")
            results = run_benchmark(urls, config, log=log)
    except KeyboardInterrupt:
        print("interrupted; servers closed", file=sys.stderr)
        return 130
    meta["wall_seconds"] = round(time.monotonic() - started_at, 2)
    summaries = [r.summary() for r in results]
    ratios = compute_ratios({s["slug"]: s for s in summaries})
    print(render(summaries, ratios, meta))
    print(f"(wall time {meta['wall_seconds']:.1f} s)")
    if args.json is not None:
        args.json.write_text(
            json.dumps({"meta": meta, "results": summaries, "ratios": ratios}, indent=2) + "\n"
        )
    missed = any(r["result"] == "MISS" for r in ratios)
    return 1 if args.fail_on_miss and missed else 0


if __name__ == "__main__":
    sys.exit(main())
