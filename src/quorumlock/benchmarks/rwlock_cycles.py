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

The issue's target: a read cycle and a write cycle each within 1.2x of the plain lock's
cycle (in cycles per second: read / plain and write / plain at least 1 / 1.2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from quorumlock import Redlock
from quorumlock.benchmarks.uncontended import TTL_SECONDS, run_batch
from quorumlock.testing import LocalServerGroup

__all__ = ["TARGET", "main", "measure"]

#: A read-write cycle may cost at most this many plain cycles (cycles/s: 1 / TARGET).
TARGET: Final = 1.2

_PREFIX: Final = "quorumlock-bench:rwlock:"


def _cycles(redlock: Redlock) -> dict[str, Callable[[], bool]]:
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

    return {"plain": plain, "read": read, "write": write}


def measure(
    urls: Sequence[str], *, rounds: int = 7, seconds: float = 0.3, max_cycles: int = 100_000
) -> dict[str, Any]:
    """Cycles per second of each contender, per round and as the median over rounds,
    and the ratios read / plain and write / plain with the verdict against
    :data:`TARGET`."""
    with Redlock(list(urls)) as redlock:
        cycles = _cycles(redlock)
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
        for name in ("read", "write")
    }
    return {
        "servers": len(urls),
        "rounds": rounds,
        "seconds_per_slice": seconds,
        "cycles_per_second": rates,
        "cycles_per_second_by_round": by_round,
        "failed_cycles": failures,
        "ratios": ratios,
        "target": f">= {1 / TARGET:.3f} (within {TARGET:g}x of the plain lock's cycle)",
        "met": {name: value >= 1 / TARGET for name, value in ratios.items()},
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
    args = parser.parse_args(argv)
    if args.servers:
        result = measure(args.servers.split(","), rounds=args.rounds, seconds=args.slice)
    else:
        with LocalServerGroup(5) as group:
            result = measure(group.urls, rounds=args.rounds, seconds=args.slice)
    rates = result["cycles_per_second"]
    print(f"N = {result['servers']}, {result['rounds']} rounds x {args.slice:g} s each")
    for name, rate in rates.items():
        failed = result["failed_cycles"][name]
        print(f"  {name:<6} {rate:10.0f} cycles/s  ({failed} failed cycles, not timed)")
    for name, value in result["ratios"].items():
        verdict = "met" if result["met"][name] else "MISSED"
        print(f"  {name:<14} {value:.3f}  target {result['target']}: {verdict}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
