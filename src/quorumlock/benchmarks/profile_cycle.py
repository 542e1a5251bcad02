"""Where one uncontended cycle's time goes: ``python -m quorumlock.benchmarks.profile_cycle``.

Runs quorumlock's uncontended cycle (``Redlock(urls).lock(name, ttl=10.0)``, a
non-blocking acquire and a release, as in figure 1 of the suite), the bare floor's
(``SET NX PX`` then the compare-and-delete, written on every raw connection before any
reply is read) and the bare floor's loop sending quorumlock's own two scripts (the
client's part of the gap is quorumlock's to the latter, the scripts' part the latter's
to the floor), at N = 5, first unprofiled (wall and CPU time per cycle of this
process), then under :mod:`cProfile`. The profile's own time is shared
out by where the code lives: quorumlock, redis-py, writing to the servers
(``sendall``, or the ``write`` of a plain socket), waiting on them (the socket reads
and ``select``/``poll``), the benchmark's own loop, the rest of the standard library
and the interpreter's built-ins. Numbers only: nothing here is judged against a time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Final

from quorumlock.benchmarks._common import local_servers
from quorumlock.benchmarks.uncontended import (
    BareFloorRunner,
    QuorumlockRunner,
    ScriptedFloorRunner,
)

__all__ = ["main", "measure", "where"]

SERVERS: Final = 5

#: A function's file (or a built-in's name, for hiredis's reader), by the first of these
#: it contains, names its part of the cycle.
PARTS: Final[tuple[tuple[str, str], ...]] = (
    ("/quorumlock/benchmarks/", "the benchmark's loop"),
    ("/quorumlock/", "quorumlock"),
    ("/redis/", "redis-py"),
    ("hiredis", "redis-py"),
)

#: Built-ins that wait on the servers (the CPU they use is the kernel's, not ours).
WAITS: Final[tuple[str, ...]] = ("recv", "recv_into", "select", "poll", "epoll", "read", "readv")


def _part(path: str, function: str) -> str:
    for marker, part in PARTS:
        if marker in f"{path} {function}":
            return part
    if path != "~":
        return "stdlib and built-ins"
    # A built-in's name: "<method 'recv_into' of '_socket.socket' objects>" or
    # "<built-in method posix.readv>"
    name = function.strip("<>{}")
    if any(f"method '{w}'" in name or name.endswith(f".{w}") for w in WAITS):
        return "waiting on the servers"
    if "method 'send" in name or "sendall" in name or name.endswith("posix.write"):
        return "writing to the servers"
    return "stdlib and built-ins"


def measure(runner: QuorumlockRunner | BareFloorRunner, cycles: int) -> tuple[float, float]:
    """Wall and CPU microseconds per cycle over ``cycles`` cycles."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(cycles):
        if not runner.cycle():
            raise RuntimeError("an uncontended cycle failed")
    return (
        (time.perf_counter() - wall) / cycles * 1e6,
        (time.process_time() - cpu) / cycles * 1e6,
    )


def where(runner: QuorumlockRunner | BareFloorRunner, cycles: int) -> tuple[dict[str, float], str]:
    """The profiled run: microseconds per cycle by part, and the top functions by own time."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(cycles):
        runner.cycle()
    profile.disable()
    stats = pstats.Stats(profile)
    parts: dict[str, float] = {}
    for (path, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        own = row[2]
        part = _part(path, function)
        parts[part] = parts.get(part, 0.0) + own / cycles * 1e6
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(20)
    return parts, out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.profile_cycle",
        description="Where one uncontended acquire+release cycle's time goes, N = 5: "
        "quorumlock next to the bare floor and to the bare floor sending quorumlock's "
        "scripts, then a profile of each.",
    )
    parser.add_argument("--servers", help=f"{SERVERS} comma-separated URLs (default: local)")
    parser.add_argument(
        "--cycles", type=int, default=3000, help="cycles per measurement (default 3000)"
    )
    parser.add_argument(
        "--functions", action="store_true", help="also print the 20 functions with most own time"
    )
    args = parser.parse_args(argv)
    if args.cycles < 1:
        parser.error("--cycles must be >= 1")
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) < SERVERS:
            print(f"error: --servers needs {SERVERS} URLs", file=sys.stderr)
            return 2
        key = f"quorumlock-bench:profile:{uuid.uuid4().hex}"
        runners: dict[str, QuorumlockRunner | BareFloorRunner] = {
            "quorumlock": QuorumlockRunner(urls[:SERVERS], key + ":q"),
            "bare floor": BareFloorRunner(urls[:SERVERS], key + ":f"),
            "floor with scripts": ScriptedFloorRunner(urls[:SERVERS], key + ":s"),
        }
        try:
            for runner in runners.values():
                measure(runner, min(args.cycles, 500))  # warm-up: connections, scripts
            print(f"one uncontended cycle, N = {SERVERS}, {args.cycles} cycles, unprofiled:")
            timed = {name: measure(runner, args.cycles) for name, runner in runners.items()}
            for name, (wall, cpu) in timed.items():
                print(f"  {name:<18} {wall:8.1f} us wall  {cpu:8.1f} us CPU (this process)")
            ours, floor, scripted = (
                timed[name][0] for name in ("quorumlock", "bare floor", "floor with scripts")
            )
            print(f"  quorumlock / bare floor: {ours / floor:.2f}x wall")
            print(f"  quorumlock / floor with scripts (the client's part): {ours / scripted:.2f}x")
            print(f"  floor with scripts / bare floor (the scripts' part): {scripted / floor:.2f}x")
            for name, runner in runners.items():
                parts, top = where(runner, args.cycles)
                total = sum(parts.values())
                print(f"\n{name}, profiled ({total:.1f} us per cycle under the profiler):")
                for part, micros in sorted(parts.items(), key=lambda item: -item[1]):
                    print(f"  {part:<24} {micros:8.1f} us  {micros / total:6.1%}")
                if args.functions:
                    print(top)
                continue
        finally:
            for runner in runners.values():
                runner.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
