"""``quorumlock bench``: the uncontended benchmark of ``quorumlock.benchmarks.uncontended``.

It needs only the core: peers (pottery, python-redis-lock) join the table when they are
importable (``pip install 'quorumlock[bench]'``); redis-py's own Lock and the bare floor
are always there, since redis-py is a dependency.

``quorumlock bench --suite`` runs the whole suite instead
(``quorumlock.benchmarks.suite``: five figures, plots, ``--write-docs``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quorumlock.benchmarks import FIGURES
from quorumlock.cli._common import (
    ENV_SERVERS,
    EXIT_ERROR,
    EXIT_USAGE,
    CliError,
    Parser,
    Servers,
    add_server_options,
    count,
    embedded_server_binary,
    emit_json,
    positive,
    resolve_servers,
    say,
)
from quorumlock.testing import LocalServerGroup

if TYPE_CHECKING:
    from quorumlock.benchmarks import uncontended as bench

__all__ = ["add_parser"]

#: Upper bound of --rounds: a typo must not run for days (each round is a slice of up
#: to 60 s per contender, plus the overhead of a slice however short).
MAX_ROUNDS = 100

_EPILOG = """\
Every contender runs the same cycle (new lock object, acquire without blocking, release)
on the same servers, interleaved in rotated rounds so a noisy minute hits all alike.
Contenders: quorumlock (N=1, N=5), redis-py's Lock, a bare floor (raw SET NX PX and the
compare-and-delete), and pottery and python-redis-lock when they are installed. Method
and numbers: src/quorumlock/benchmarks/README.md.

examples:
  quorumlock bench                  # ~20 s on 5 embedded servers
  quorumlock bench --quick          # ~3 s smoke run
  quorumlock bench --json > bench.json
  quorumlock bench --servers redis://a:6379,redis://b:6379,redis://c:6379,redis://d:6379,redis://e:6379

the whole suite (five figures on 9 embedded servers; ~8 min, --quick ~40 s):
  quorumlock bench --suite                       # tables; plots in docs/benchmarks/
  quorumlock bench --suite --quick --no-plots    # a smoke run, tables only
  quorumlock bench --suite --only handover,contention --plots /tmp/plots
  quorumlock bench --suite --write-docs          # also rewrite docs/benchmarks.md's tables
"""


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "bench",
        help="benchmark uncontended acquire+release against other Python locks",
        description="Uncontended acquire+release cycles: quorumlock next to the other "
        "Python locks that are installed, in one run on the same servers (5 embedded "
        "servers unless --servers or $QUORUMLOCK_SERVERS name others).",
        epilog=_EPILOG,
    )
    parser.add_argument(
        "--rounds",
        metavar="N",
        type=count("--rounds", maximum=MAX_ROUNDS),
        help=f"rounds (default 7, at most {MAX_ROUNDS})",
    )
    parser.add_argument(
        "--slice",
        metavar="S",
        type=positive("--slice"),
        help="seconds per contender per round (default 0.3)",
    )
    parser.add_argument(
        "--max-cycles",
        metavar="N",
        type=count("--max-cycles"),
        help="at most this many cycles per slice (default 20000)",
    )
    parser.add_argument(
        "--warmup",
        metavar="S",
        type=positive("--warmup", allow_zero=True),
        help="warm-up seconds per contender (default 0.5)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run of about 3 s: 1 round, tiny slices"
    )
    parser.add_argument(
        "--no-gc-collect",
        dest="gc_collect",
        action="store_false",
        help="do not run gc.collect() before each slice",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    suite = parser.add_argument_group(
        "the whole suite (python -m quorumlock.benchmarks.suite; see docs/benchmarks.md)"
    )
    suite.add_argument(
        "--suite",
        action="store_true",
        help="run the five figures instead: uncontended vs N, hand-over, contention, many "
        "held locks, asyncio (always on its own 9 embedded servers; --quick and --json apply)",
    )
    suite.add_argument(
        "--only",
        metavar="FIGURES",
        help=f"with --suite: comma-separated figures ({','.join(FIGURES)})",
    )
    suite.add_argument(
        "--plots",
        metavar="DIR",
        help="with --suite: where to write the PNG plots (default docs/benchmarks/; "
        "with --quick a temporary directory)",
    )
    suite.add_argument("--no-plots", action="store_true", help="with --suite: write no plots")
    suite.add_argument(
        "--write-docs",
        nargs="?",
        const="docs/benchmarks.md",
        metavar="PATH",
        help="with --suite: rewrite the generated section of docs/benchmarks.md (or PATH)",
    )
    # Their servers' URLs go to worker processes (demo) and to other libraries (bench)
    # as they are: no password to pass on with them.
    add_server_options(
        parser,
        passwords=False,
        timeout_help="seconds to wait for each server of --servers to answer a PING before the run",
    )
    parser.set_defaults(handler=run_bench)
    return parser


def _config(args: argparse.Namespace) -> bench.Config:
    # The benchmarks are imported by the command that runs them only: every other
    # command starts about 0.1 s sooner without them (of 0.8-0.9 s on a 2-CPU VM).
    from quorumlock.benchmarks import uncontended as bench  # noqa: PLC0415

    base = (
        bench.Config(rounds=1, slice_seconds=0.05, warmup_seconds=0.03)
        if args.quick
        else bench.Config()
    )
    config = bench.Config(
        rounds=args.rounds or base.rounds,
        slice_seconds=args.slice or base.slice_seconds,
        max_cycles=args.max_cycles or base.max_cycles,
        warmup_seconds=base.warmup_seconds if args.warmup is None else args.warmup,
        collect_garbage=args.gc_collect,
    )
    if config.slice_seconds > 60 or config.warmup_seconds > 60:
        raise CliError("--slice and --warmup must be at most 60 s", EXIT_USAGE)
    return config


@contextlib.contextmanager
def _urls(servers: Servers | None) -> Iterator[tuple[list[str], bool]]:
    if servers is not None:
        if any(spec.kwargs.get("password") for spec in servers.specs):
            raise CliError("bench runs on servers without a password", EXIT_USAGE)
        _check_answering(servers)
        yield servers.labels, False
        return
    group = LocalServerGroup(5, binary=embedded_server_binary())
    with group:
        yield group.urls, True


def _check_answering(servers: Servers) -> None:
    """Raise :class:`CliError` (exit status 1) unless every server answers a PING: on
    one that does not, the contenders using it could only fail."""
    if failures := servers.unanswered():
        raise CliError(f"cannot bench on {failures[0]}")


def _suite_argv(args: argparse.Namespace, json_path: str | None) -> list[str]:
    """The suite's own command line, from ``quorumlock bench --suite``'s options."""
    not_for_suite = {
        "--rounds": args.rounds,
        "--slice": args.slice,
        "--max-cycles": args.max_cycles,
        "--warmup": args.warmup,
        "--servers": args.servers,
        "--no-gc-collect": not args.gc_collect,
    }
    given = [
        name
        for name, value in not_for_suite.items()
        if value is not None and value is not False  # (0 and "" are given too)
    ]
    if given:
        raise CliError(f"--suite sets its own figures and servers: drop {', '.join(given)}", 2)
    from quorumlock.benchmarks import suite  # noqa: PLC0415 (see _config)

    argv = ["--quick"] if args.quick else []
    if args.plots is not None and args.no_plots:
        raise CliError("--plots and --no-plots contradict each other: give one", EXIT_USAGE)
    if args.only is not None:  # ('' too: it names no figure, it is not "all of them")
        try:  # here, for one line: the suite's parser would print its usage too
            suite.figures(args.only)
        except ValueError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        argv += ["--only", args.only]
    if args.plots:
        argv += ["--plots", args.plots]
    if args.no_plots:
        argv.append("--no-plots")
    if args.write_docs:
        argv += ["--write-docs", args.write_docs]
    if json_path:
        argv += ["--json", json_path]
    return argv


def run_suite(args: argparse.Namespace) -> int:
    from quorumlock.benchmarks import suite  # noqa: PLC0415 (see _config)

    def log(message: str) -> None:
        say(f"bench: {message}", err=True)

    with tempfile.TemporaryDirectory(prefix="quorumlock-bench-json-") as tmp:
        json_path = str(Path(tmp) / "suite.json") if args.json else None
        argv = _suite_argv(args, json_path)
        try:
            # --json: the document on stdout, the report on stderr.
            status = suite.main(argv, log=log, out=sys.stderr if args.json else sys.stdout)
        except SystemExit as exc:  # argparse's error for a bad --only, already printed
            raise CliError("bad --suite options (see above)", 2) from exc
        if json_path and Path(json_path).exists():
            emit_json(json.loads(Path(json_path).read_text()))
    return status


def run_bench(args: argparse.Namespace) -> int:
    for name in ("only", "plots", "no_plots", "write_docs"):
        if getattr(args, name) not in (None, False) and not args.suite:
            raise CliError(f"--{name.replace('_', '-')} goes with --suite", 2)
    if args.suite:
        return run_suite(args)
    from tqdm import tqdm  # noqa: PLC0415 (see _config)

    from quorumlock.benchmarks import uncontended as bench  # noqa: PLC0415

    config = _config(args)
    servers = resolve_servers(args, required=False)
    started_at = time.monotonic()
    live = sys.stderr.isatty()
    with _urls(servers) as (urls, started):
        given_by = "--servers" if args.servers is not None else f"${ENV_SERVERS}"
        meta = bench.run_metadata(config, urls, started, given_by)
        progress = tqdm(
            total=config.rounds,
            desc="warming up",
            bar_format="{desc}: {bar:20}| {n}/{total} rounds {elapsed}",
            disable=not live,
            leave=False,
            ncols=80,
            nrows=24,
        )
        if not live:
            say(f"bench: warming up {len(bench.CONTENDERS)} contenders", err=True)

        def log(message: str) -> None:
            if live:
                progress.set_description_str("measuring", refresh=False)
                progress.update(1)
            else:
                say(f"bench: {message}", err=True)

        try:
            results = bench.run_benchmark(urls, config, log=log)
        finally:
            progress.close()
    meta["wall_seconds"] = round(time.monotonic() - started_at, 2)
    summaries = [r.summary() for r in results if r.status != "not installed"]
    shown = {s["slug"] for s in summaries}
    ratios = [
        ratio
        for ratio, spec in zip(
            bench.compute_ratios({s["slug"]: s for s in summaries}), bench.RATIOS, strict=True
        )
        if spec.numerator in shown and spec.denominator in shown
    ]
    if args.json:
        emit_json({"meta": meta, "results": summaries, "ratios": ratios})
    else:
        say(bench.render(summaries, ratios, meta))
        missing = [r.label for r in results if r.status == "not installed"]
        if missing:
            say(
                f"\nnot installed, left out: {', '.join(missing)} (pip install 'quorumlock[bench]')"
            )
        say(f"(wall time {meta['wall_seconds']:.1f} s)")
    if not any(r.measured for r in results):
        say("quorumlock: error: no contender could be measured (see their status)", err=True)
        return EXIT_ERROR
    return 0
