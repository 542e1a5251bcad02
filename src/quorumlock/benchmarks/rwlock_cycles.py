"""The read-write lock's fixed cost: uncontended read and write cycles against a plain
lock's, on the same N servers, in one process.

One cycle is a new hold (``rw.read()`` or ``rw.write()``, or ``rl.lock()`` for the plain
lock), ``acquire(blocking=False)``, ``release()``: what ``uncontended.py`` measures for
the plain lock. The three contenders take turns in every round (in a rotated order), so
that the machine's load falls on all of them alike; each uses its own name.

::

    python -m quorumlock.benchmarks.rwlock_cycles              # 5 local servers
    python -m quorumlock.benchmarks.rwlock_cycles --json out.json
    python -m quorumlock.benchmarks.rwlock_cycles --servers redis://a,redis://b,...

The target: a read cycle and a write cycle each within 1.2x of the plain lock's
cycle (in cycles per second: read / plain and write / plain at least 1 / 1.2).

``--crowd K`` first has K other readers take the read lock and hold it while the
cycles run (the write cycle, which they would refuse, is left out): what a read acquire
costs when many hold the lock. Each script finds the holds of one kind in one range
lookup of the name's sorted set (docs/algorithm.md, "Read-write locks"), so the read
cycle should cost about what it costs with nobody else holding.

``--parallel`` measures that readers do not wait for each other: 1 and then 8 asyncio
tasks, sharing one ``Redlock`` as an application's tasks do, hold a read of one name for
``--work`` seconds (10 ms) in a loop; the holds per second of 8 readers against one
reader's, and, for contrast, of 8 writers (which take turns). Target: 8 readers reach at
least 6x one reader's holds/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import quorumlock.asyncio
from quorumlock import Redlock
from quorumlock.benchmarks.uncontended import TTL_SECONDS, run_batch
from quorumlock.testing import LocalServerGroup

__all__ = ["PARALLEL_TARGET", "TARGET", "main", "measure", "measure_parallel"]

#: A read-write cycle may cost at most this many plain cycles (cycles/s: 1 / TARGET).
TARGET: Final = 1.2

#: 8 parallel readers reach at least this many times one reader's holds per second.
PARALLEL_TARGET: Final = 6.0

_PREFIX: Final = "quorumlock-bench:rwlock:"


def _cycles(redlock: Redlock, *, crowd: int = 0) -> dict[str, Callable[[], bool]]:
    plain_name, rw = f"{_PREFIX}plain", redlock.rwlock(f"{_PREFIX}rw", ttl=TTL_SECONDS)

    def plain() -> bool:
        lock = redlock.lock(plain_name, ttl=TTL_SECONDS)
        return lock.acquire(blocking=False) and lock.release()

    def read() -> bool:
        hold = rw.read()
        return hold.acquire(blocking=False) and hold.release()

    def write() -> bool:
        hold = rw.write()
        return hold.acquire(blocking=False) and hold.release()

    if crowd:
        return {"plain": plain, "read": read}  # a writer is refused while the crowd holds
    return {"plain": plain, "read": read, "write": write}


#: How long the crowd's holds last: longer than a measurement (the longest ttl the
#: default ``max_ttl`` allows).
_CROWD_TTL: Final = 60.0


@contextlib.contextmanager
def _crowd(urls: Sequence[str], readers: int) -> Iterator[None]:
    """``readers`` holds of the read lock of the measured name, taken before and
    released after (by a Redlock of their own, as other processes' would be)."""
    if not readers:
        yield
        return
    with Redlock(list(urls)) as redlock, contextlib.ExitStack() as holds:
        rw = redlock.rwlock(f"{_PREFIX}rw", ttl=_CROWD_TTL, blocking=False)
        for _ in range(readers):
            holds.enter_context(rw.read())  # LockNotAcquired if refused
        yield


def measure(
    urls: Sequence[str],
    *,
    rounds: int = 7,
    seconds: float = 0.3,
    max_cycles: int = 100_000,
    crowd: int = 0,
) -> dict[str, Any]:
    """Cycles per second of each contender, per round and as the median over rounds,
    and the ratios read / plain and write / plain with the verdict against
    :data:`TARGET`; with a ``crowd`` of other readers holding the read lock meanwhile,
    read / plain only."""
    with Redlock(list(urls)) as redlock, _crowd(urls, crowd):
        cycles = _cycles(redlock, crowd=crowd)
        for cycle in cycles.values():  # connections, scripts, first contact
            for _ in range(20):
                cycle()
        by_round: dict[str, list[float]] = {name: [] for name in cycles}
        failures = dict.fromkeys(cycles, 0)
        names = list(cycles)
        for i in range(rounds):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                # A failed cycle (a reply later than the instance timeout on a loaded
                # machine) is counted and not timed, as in uncontended.py.
                batch = run_batch(cycles[name], seconds, max_cycles)
                if not batch.latencies_ns:
                    raise RuntimeError(f"no {name} cycle succeeded: {batch.error}")
                by_round[name].append(batch.rate)
                failures[name] += batch.failures
    rates = {name: statistics.median(values) for name, values in by_round.items()}
    ratios = {
        f"{name} / plain": rates[name] / rates["plain"] if rates["plain"] else 0.0
        for name in rates
        if name != "plain"
    }
    return {
        "servers": len(urls),
        "crowd": crowd,
        "rounds": rounds,
        "seconds_per_slice": seconds,
        "cycles_per_second": rates,
        "cycles_per_second_by_round": by_round,
        "failed_cycles": failures,
        "ratios": ratios,
        "target": f">= {1 / TARGET:.3f} (within {TARGET:g}x of the plain lock's cycle)",
        "met": {name: value >= 1 / TARGET for name, value in ratios.items()},
    }


async def _holds(
    urls: Sequence[str], *, tasks: int, mode: str, work: float, seconds: float
) -> float:
    """Holds per second of ``tasks`` tasks sharing one Redlock (one per process is the
    normal idiom: its connections carry every task's rounds), holding ``mode`` ("read"
    or "write") of one name for ``work`` seconds in a loop, for ``seconds``."""
    rl = quorumlock.asyncio.Redlock(list(urls))
    name = f"{_PREFIX}parallel:{mode}:{tasks}"
    count = 0
    try:
        # connections and scripts before the clock starts
        hold = rl.rwlock(f"{_PREFIX}warm-up", ttl=TTL_SECONDS).read()
        if await hold.acquire(timeout=5):
            await hold.release()
        stop = time.monotonic() + seconds

        async def loop() -> None:
            nonlocal count
            rw = rl.rwlock(name, ttl=TTL_SECONDS)
            while time.monotonic() < stop:
                hold = rw.read() if mode == "read" else rw.write()
                if not await hold.acquire(timeout=max(0.0, stop - time.monotonic())):
                    return
                await asyncio.sleep(work)
                await hold.release()
                count += 1

        began = time.monotonic()
        await asyncio.gather(*(loop() for _ in range(tasks)))
        return count / (time.monotonic() - began)
    finally:
        await rl.close()


def measure_parallel(
    urls: Sequence[str], *, readers: int = 8, work: float = 0.01, seconds: float = 2.0
) -> dict[str, Any]:
    """Holds per second of one reader, of ``readers`` readers and of ``readers`` writers,
    and the ratio of the many readers' to the one reader's against
    :data:`PARALLEL_TARGET`."""
    rates = {
        "1 reader": asyncio.run(_holds(urls, tasks=1, mode="read", work=work, seconds=seconds)),
        f"{readers} readers": asyncio.run(
            _holds(urls, tasks=readers, mode="read", work=work, seconds=seconds)
        ),
        f"{readers} writers": asyncio.run(
            _holds(urls, tasks=readers, mode="write", work=work, seconds=seconds)
        ),
    }
    speedup = rates[f"{readers} readers"] / rates["1 reader"] if rates["1 reader"] else 0.0
    return {
        "work_seconds": work,
        "holds_per_second": rates,
        "readers_speedup": speedup,
        "target": f">= {PARALLEL_TARGET:g}x",
        "met": speedup >= PARALLEL_TARGET,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.rwlock_cycles",
        description="Uncontended read and write cycles of rl.rwlock() against rl.lock().",
    )
    parser.add_argument("--servers", help="comma-separated URLs (default: 5 local servers)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--slice", type=float, default=0.3, help="seconds per contender")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--crowd",
        type=int,
        default=0,
        metavar="K",
        help="K other readers hold the read lock meanwhile (no write cycle then)",
    )
    parser.add_argument(
        "--parallel", action="store_true", help="also 1 vs 8 parallel readers (and 8 writers)"
    )
    parser.add_argument("--work", type=float, default=0.01, help="seconds each hold lasts")
    args = parser.parse_args(argv)
    if args.crowd < 0:
        parser.error(f"--crowd: {args.crowd} is below 0")

    def run(urls: Sequence[str]) -> dict[str, Any]:
        result = measure(urls, rounds=args.rounds, seconds=args.slice, crowd=args.crowd)
        if args.parallel:
            result["parallel"] = measure_parallel(urls, work=args.work)
        return result

    if args.servers:
        result = run(args.servers.split(","))
    else:
        with LocalServerGroup(5) as group:
            result = run(group.urls)
    rates = result["cycles_per_second"]
    crowd = f", {args.crowd} other readers holding" if args.crowd else ""
    print(f"N = {result['servers']}, {result['rounds']} rounds x {args.slice:g} s each{crowd}")
    for name, rate in rates.items():
        failed = result["failed_cycles"][name]
        print(f"  {name:<6} {rate:10.0f} cycles/s  ({failed} failed cycles, not timed)")
    for name, value in result["ratios"].items():
        verdict = "met" if result["met"][name] else "MISSED"
        print(f"  {name:<14} {value:.3f}  target {result['target']}: {verdict}")
    if "parallel" in result:
        parallel = result["parallel"]
        for name, rate in parallel["holds_per_second"].items():
            print(f"  {name:<10} {rate:8.1f} holds/s of {parallel['work_seconds'] * 1000:g} ms")
        verdict = "met" if parallel["met"] else "MISSED"
        print(
            f"  8 readers / 1 reader {parallel['readers_speedup']:.2f}x  "
            f"target {parallel['target']}: {verdict}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
