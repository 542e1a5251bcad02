"""``quorumlock demo``: worker processes contend for one lock while a server crashes.

With no servers configured it starts 5 embedded servers (the ``valkey-server`` of the
``server`` extra, or one on PATH), runs ``--workers`` processes that take turns on one
lock with fencing on, kills one server with SIGKILL a third of the way in and restarts
it a second later, empty. The restarted server has forgotten the locks it granted, so quorumlock
keeps it out of every quorum for ``max_ttl`` seconds: the progress line
shows that quarantine as it runs out. At the end it checks the hold intervals of all
workers (taken from the system-wide monotonic clock, so comparable across processes):

- overlapping holds: two workers holding the lock at the same time (must be 0);
- fencing tokens: in the order the holds happened, every token larger than the last;
- acquire latency, p50 and p99.

Every process it started (workers, servers) is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import logging
import multiprocessing as mp
import shutil
import signal
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from typing import Any, Final

import redis
from tqdm import tqdm

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._exceptions import QuorumLockError, QuorumUnavailable
from quorumlock.cli._common import (
    ENV_SERVERS,
    EXIT_USAGE,
    MAX_WORKERS,
    CliError,
    Interrupted,
    Parser,
    Servers,
    add_server_options,
    count,
    embedded_server_binary,
    interrupting,
    positive,
    redact,
    resolve_servers,
    say,
)
from quorumlock.cli._quarantine import quarantine_of
from quorumlock.testing import LocalServerGroup

__all__ = ["DemoResult", "add_parser", "check_holds"]

LOCK: Final = "quorumlock-demo:stock:42"
TTL: Final = 1.0
MAX_TTL: Final = 2.0  # the quarantine of a restarted server
WORK: Final = 0.002  # seconds of "work" under the lock
VICTIM: Final = 4  # the server that crashes (index)

_EPILOG = """\
examples:
  quorumlock demo                   # 5 embedded servers, 4 workers, ~15 s
  quorumlock demo --workers 8 --seconds 20
  quorumlock demo --servers redis://a:6379,redis://b:6379,redis://c:6379   # no crash

The exit status is 0 when no holds overlapped and the fencing tokens only grew.
"""

Hold = tuple[float, float, int | None]  # (acquired, released, fencing token)


@dataclass
class DemoResult:
    holds: list[Hold] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    unavailable: int = 0
    per_worker: list[int] = field(default_factory=list)


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "demo",
        help="see it work: workers contend for a lock while a server crashes and restarts",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1] if __doc__ else None,
        epilog=_EPILOG,
    )
    parser.add_argument(
        "--seconds",
        metavar="S",
        type=positive("--seconds"),
        default=12.0,
        help="how long the workers run (default 12)",
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=count("--workers", maximum=MAX_WORKERS),
        default=4,
        help="worker processes (default 4)",
    )
    # Their servers' URLs go to worker processes (demo) and to other libraries (bench)
    # as they are: no password to pass on with them.
    add_server_options(
        parser, passwords=False, timeout_help="seconds the workers wait to connect to a server"
    )
    parser.set_defaults(handler=demo)
    return parser


def demo(args: argparse.Namespace) -> int:
    if args.seconds > 300:
        raise CliError("--seconds must be at most 300", EXIT_USAGE)
    servers = resolve_servers(args, required=False)
    try:
        with interrupting() as received, _servers(servers) as (urls, group):
            result = _run(urls, group, args, received)
            _stop_if(received)
    except KeyboardInterrupt as exc:
        say("demo interrupted: every process it started was stopped", err=True)
        return 128 + exc.signum if isinstance(exc, Interrupted) else 130
    return _report(result, args.workers)


def _stop_if(received: list[int]) -> None:
    """Raise the :class:`Interrupted` of a signal in ``received`` whose own was dropped."""
    if received:
        raise Interrupted(received[0])


@contextlib.contextmanager
def _servers(servers: Servers | None) -> Iterator[tuple[list[str], LocalServerGroup | None]]:
    if servers is not None:
        if servers.specs and any(s.kwargs.get("password") for s in servers.specs):
            raise CliError("the demo runs on servers without a password", EXIT_USAGE)
        _check_majority(servers)
        say(f"using {len(servers)} servers from --servers/${ENV_SERVERS} (no crash injected)")
        yield servers.labels, None
        return
    group = LocalServerGroup(5, binary=embedded_server_binary())
    with group:
        say("started 5 local servers:")
        for index, server in enumerate(group, 1):
            say(f"  server {index}  {server.url}  pid {server.pid}")
        yield group.urls, group


def _check_majority(servers: Servers) -> None:
    """Raise :class:`CliError` (exit status 1) unless a majority of the servers answer a
    PING: otherwise every worker's every attempt could only fail, for all of
    ``--seconds``, with nothing said of why."""
    failures = servers.unanswered()
    answered, needed = len(servers.specs) - len(failures), quorum(len(servers.specs))
    if answered < needed:
        raise CliError(
            f"cannot run the demo: {answered} of {len(servers.specs)} servers answer, "
            f"{needed} needed for a majority ({'; '.join(failures)})"
        )


def _run(
    urls: list[str],
    group: LocalServerGroup | None,
    args: argparse.Namespace,
    received: list[int],
) -> DemoResult:
    ctx = mp.get_context("spawn")
    results: Any = ctx.Queue()
    counter: Synchronized[int] = ctx.Value("q", 0)
    go = ctx.Event()
    procs: list[BaseProcess] = [
        ctx.Process(
            target=_worker,
            args=(urls, args.seconds, go, counter, results),
            kwargs={"connect_timeout": args.timeout},
            name=f"quorumlock-demo-worker-{i}",
            daemon=True,
        )
        for i in range(args.workers)
    ]
    say(
        f"{args.workers} worker processes take turns on lock {LOCK!r} "
        f"(ttl {TTL:g} s, fencing on, quarantine {MAX_TTL:g} s) for {args.seconds:g} s"
    )
    collected: list[DemoResult] = []
    try:
        for proc in procs:
            proc.start()
        go.set()
        _watch(group, args.seconds, counter, received)
        deadline = time.monotonic() + 30
        while True:
            _stop_if(received)
            if len(collected) >= len(procs) or time.monotonic() >= deadline:
                break
            with contextlib.suppress(Exception):
                collected.append(results.get(timeout=0.5))
        if len(collected) < len(procs):
            raise CliError(f"only {len(collected)} of {len(procs)} workers reported back")
    finally:
        for proc in procs:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
    merged = DemoResult()
    for part in collected:
        merged.holds += part.holds
        merged.latencies += part.latencies
        merged.unavailable += part.unavailable
        merged.per_worker.append(len(part.holds))
    return merged


class _Crash:
    """The victim server's story: up, killed, restarted empty, quarantined, rejoined."""

    def __init__(self, group: LocalServerGroup | None, kill_at: float) -> None:
        self.server = group[VICTIM] if group is not None else None
        self.kill_at = kill_at
        self.phase = "up" if self.server is not None else "none"
        self.since = 0.0
        self.quarantine: float | None = None
        self._client: redis.Redis | None = None

    def step(self, elapsed: float, event: Callable[[str], None]) -> None:
        server = self.server
        if server is None:
            return
        name = f"server {VICTIM + 1}"
        if self.phase == "up" and elapsed >= self.kill_at:
            event(f"kill -9 {name} ({server.url}, pid {server.pid}): 4 of 5 left, majority 3")
            server.kill()
            self.phase, self.since = "down", elapsed
        elif self.phase == "down" and elapsed - self.since >= 1.0:
            server.start()
            event(
                f"restarted {name} (pid {server.pid}), empty: it forgot the locks it granted, "
                f"so it must stay out of quorums for {MAX_TTL:g} s"
            )
            self._client = redis.Redis.from_url(server.url, socket_timeout=0.5)
            self.phase, self.since = "restarted", elapsed
        elif self.phase in ("restarted", "quarantined") and self._client is not None:
            left = self.quarantine = quarantine_of(self._client, MAX_TTL)
            if left is None and elapsed - self.since > MAX_TTL + 1:
                event("(this quorumlock core cannot report quarantines)")
                self.phase = "rejoined"
            elif left is not None and left > 0 and self.phase == "restarted":
                event(f"{name} is quarantined: out of every quorum for {left:.1f} s more")
                self.phase = "quarantined"
            elif left == 0 and self.phase == "quarantined":
                event(f"{name} rejoined the quorums: 5 of 5 servers")
                self.phase = "rejoined"

    def describe(self) -> str:
        name = f"server {VICTIM + 1}"
        if self.phase == "none":
            return ""
        if self.phase == "down":
            return f"servers 4/5 up ({name} down)"
        if self.phase == "quarantined" and self.quarantine:
            return f"servers 5/5 up, {name} quarantined {self.quarantine:.1f} s"
        if self.phase == "restarted":
            return f"servers 5/5 up ({name} restarted)"
        return "servers 5/5 up"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _watch(
    group: LocalServerGroup | None,
    seconds: float,
    counter: Synchronized[int],
    received: list[int],
) -> None:
    """Show progress (a bar on a terminal, a line a second otherwise); crash a server.
    Stops with KeyboardInterrupt once a signal is in ``received`` (see
    :func:`interrupting`)."""
    started = time.monotonic()
    crash = _Crash(group, kill_at=seconds / 3)
    live = sys.stderr.isatty()
    size = shutil.get_terminal_size((100, 24))
    bar = tqdm(
        total=round(seconds, 1),
        bar_format="{bar:20}| {n:.1f}/{total:.0f} s  {desc}",
        disable=not live,
        leave=False,
        # A pseudo-terminal may report 0 x 0 (tqdm would then hide the bar).
        ncols=min(size.columns, 120),
        nrows=size.lines,
    )
    next_line = 1.0

    def event(message: str) -> None:
        tqdm.write(redact(f"[{time.monotonic() - started:5.1f} s] {message}"))

    try:
        while True:
            _stop_if(received)
            elapsed = time.monotonic() - started
            if elapsed >= seconds:
                break
            crash.step(elapsed, event)
            status = f"acquisitions {counter.value}  {crash.describe()}".rstrip()
            if live:
                bar.set_description_str(status, refresh=False)
                bar.n = round(elapsed, 1)
                bar.refresh()
            elif elapsed >= next_line:
                event(status)
                next_line += 1.0
            time.sleep(0.1)
    finally:
        bar.close()
        crash.close()


def _worker(
    urls: list[str],
    seconds: float,
    go: Any,
    counter: Synchronized[int],
    results: Any,
    *,
    connect_timeout: float,
) -> None:
    """One contender: take the lock, "work", release, for ``seconds``; report the holds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us
    # The parent narrates the crash and the quarantine once; four workers warning about
    # the same quarantined server would only repeat it.
    logging.getLogger("quorumlock").setLevel(logging.ERROR)
    from quorumlock import Redlock  # noqa: PLC0415

    result = DemoResult()
    go.wait(30)
    stop_at = time.monotonic() + seconds
    rl = Redlock(
        urls,
        retry_delay=0.02,
        max_ttl=MAX_TTL,
        fencing=True,
        connect_timeout=connect_timeout,
    )
    while time.monotonic() < stop_at:
        lock = rl.lock(LOCK, ttl=TTL)
        began = time.monotonic()
        try:
            if not lock.acquire(timeout=min(1.0, max(0.0, stop_at - began))):
                continue
        except QuorumUnavailable:
            result.unavailable += 1
            continue
        except QuorumLockError:
            result.unavailable += 1
            continue
        got = time.monotonic()
        token = getattr(lock, "fencing_token", None)
        result.latencies.append(got - began)
        try:
            time.sleep(WORK)
        finally:
            result.holds.append((got, time.monotonic(), token))
            lock.release()
            with counter.get_lock():
                counter.value += 1
    rl.close()
    results.put(result)


def check_holds(holds: list[Hold]) -> tuple[int, bool | None]:
    """(overlapping holds, fencing tokens strictly increasing in hold order or None)."""
    ordered = sorted(holds)
    overlaps = 0
    latest_end = float("-inf")
    for start, end, _ in ordered:
        if start < latest_end:
            overlaps += 1
        latest_end = max(latest_end, end)
    tokens = [token for _, _, token in ordered if token is not None]
    if not tokens or len(tokens) < len(ordered):
        return overlaps, None
    increasing = all(b > a for a, b in itertools.pairwise(tokens))
    return overlaps, increasing


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def _report(result: DemoResult, workers: int) -> int:
    overlaps, monotonic = check_holds(result.holds)
    say("")
    say(
        f"acquisitions          {len(result.holds)} by {workers} workers "
        f"({', '.join(map(str, result.per_worker))})"
    )
    say(f"overlaps found        {overlaps}")
    fencing = {True: "yes", False: "NO", None: "n/a (no fencing tokens)"}[monotonic]
    say(f"fencing monotonic     {fencing}")
    if result.latencies:
        p50 = statistics.median(result.latencies) * 1000
        p99 = _percentile(result.latencies, 0.99) * 1000
        say(f"acquire latency       p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    say(f"unavailable attempts  {result.unavailable}")
    ok = overlaps == 0 and monotonic is not False and len(result.holds) > 0
    say("result                " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1
