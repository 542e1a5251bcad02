"""Semaphore cycle vs mutex cycle, uncontended, at N = 5.

Each contender runs one cycle again and again on the same local servers, in the same
run: make the object, ``acquire(blocking=False)``, ``release()``. Nobody else wants a
permit, so the cycle measures the fixed cost:

* ``mutex``: ``rl.lock(name, ttl=10)``: the acquire is ``SET NX PX`` (the plain lock);
* ``mutex-script``: the lock with ``fencing=True``, whose acquire is the acquire script
  that a semaphore's slot runs too (quarantine and fencing counter): the fair baseline
  for the semaphore's script;
* ``semaphore-k4``: ``rl.semaphore(name, permits=4, ttl=10)``: one script round reads
  the 4 slots and takes the first free one in a random order; the release deletes the
  token from every slot;
* ``semaphore-k4-3-held``: the same, with 3 of the 4 permits held by others all along.

As in ``uncontended.py``, every contender gets one time slice per round, in an order
rotated from round to round, so that the noise of a shared machine hits all alike; the
ratios of the medians are computed inside the run. Run
``python -m quorumlock.benchmarks.semaphore --help`` for the options.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from quorumlock import Permit, Redlock
from quorumlock.benchmarks._common import local_servers, percentile, rotated
from quorumlock.benchmarks.uncontended import run_batch

__all__ = ["CONTENDERS", "Config", "main", "run_benchmark"]

TTL: Final = 10.0
PERMITS: Final = 4


@dataclass(frozen=True)
class Config:
    rounds: int = 5
    slice_seconds: float = 0.3
    warmup_seconds: float = 0.3
    max_cycles: int = 20_000


class _Runner:
    def __init__(self, urls: Sequence[str], make: Callable[[Redlock, str], Any], **opts: Any):
        self._redlock = Redlock(list(urls), **opts)
        self._name = f"quorumlock-bench:sem:{secrets.token_hex(4)}"
        self._make = make
        self._held: list[Permit] = []

    def hold_others(self, count: int) -> None:
        """Hold ``count`` permits for the whole run (the others that hold)."""
        for _ in range(count):
            permit = self._redlock.semaphore(self._name, permits=PERMITS, ttl=60)
            if not permit.acquire(blocking=False):
                raise RuntimeError("could not hold a permit for the benchmark")
            self._held.append(permit)

    def cycle(self) -> bool:
        lock = self._make(self._redlock, self._name)
        if not lock.acquire(blocking=False):
            return False
        return bool(lock.release())

    def close(self) -> None:
        for permit in self._held:
            permit.release()
        self._redlock.close()


def _mutex(rl: Redlock, name: str) -> Any:
    return rl.lock(name, ttl=TTL)


def _semaphore(rl: Redlock, name: str) -> Any:
    return rl.semaphore(name, permits=PERMITS, ttl=TTL)


#: slug -> (how to build its runner from the URLs)
CONTENDERS: Final[dict[str, Callable[[Sequence[str]], _Runner]]] = {
    "mutex": lambda urls: _Runner(urls, _mutex),
    "mutex-script": lambda urls: _Runner(urls, _mutex, fencing=True),
    "semaphore-k4": lambda urls: _Runner(urls, _semaphore),
    "semaphore-k4-3-held": lambda urls: _held(_Runner(urls, _semaphore), 3),
}


def _held(runner: _Runner, count: int) -> _Runner:
    runner.hold_others(count)
    return runner


def run_benchmark(urls: Sequence[str], config: Config) -> dict[str, Any]:
    """Every contender's p50/p99 (microseconds) and cycles/s, and the ratios of the
    semaphore's p50 to the mutexes'."""
    runners = {slug: build(urls) for slug, build in CONTENDERS.items()}
    latencies: dict[str, list[int]] = {slug: [] for slug in runners}
    rates: dict[str, list[float]] = {slug: [] for slug in runners}
    failures = dict.fromkeys(runners, 0)
    try:
        for runner in runners.values():
            run_batch(runner.cycle, config.warmup_seconds, config.max_cycles)
        slugs = list(runners)
        for index in range(config.rounds):
            for slug in rotated(slugs, index):
                batch = run_batch(runners[slug].cycle, config.slice_seconds, config.max_cycles)
                latencies[slug] += batch.latencies_ns
                rates[slug].append(batch.rate)
                failures[slug] += batch.failures
    finally:
        for runner in runners.values():
            runner.close()
    results: dict[str, Any] = {}
    for slug, values in latencies.items():
        ordered = sorted(values)
        results[slug] = {
            "cycles": len(ordered),
            "failures": failures[slug],
            "p50_us": percentile(ordered, 0.5) / 1000 if ordered else None,
            "p99_us": percentile(ordered, 0.99) / 1000 if ordered else None,
            "cycles_per_second": statistics.median(rates[slug]) if rates[slug] else 0.0,
        }

    def p50(slug: str) -> float | None:
        value = results[slug]["p50_us"]
        return float(value) if value else None

    ratios = {}
    for semaphore in ("semaphore-k4", "semaphore-k4-3-held"):
        for mutex in ("mutex", "mutex-script"):
            top, bottom = p50(semaphore), p50(mutex)
            ratios[f"{semaphore} / {mutex}"] = top / bottom if top and bottom else None
    return {"servers": len(urls), "config": config.__dict__, "results": results, "ratios": ratios}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"uncontended acquire+release at N = {report['servers']} (p50/p99 in us)"]
    for slug, row in report["results"].items():
        p50, p99 = row["p50_us"], row["p99_us"]
        shown = "no cycle" if p50 is None else f"p50 {p50:8.1f}  p99 {p99:8.1f}"
        lines.append(
            f"  {slug:<22} {shown}  {row['cycles_per_second']:8.0f}/s  "
            f"({row['cycles']} cycles, {row['failures']} failed)"
        )
    for name, value in report["ratios"].items():
        lines.append(f"  {name:<36} {'-' if value is None else f'{value:.2f}x'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.semaphore",
        description="Semaphore acquire+release vs mutex acquire+release, uncontended.",
    )
    parser.add_argument("--servers", help="comma-separated URLs (default: 5 local servers)")
    parser.add_argument("--rounds", type=int, default=Config.rounds)
    parser.add_argument("--slice", type=float, default=Config.slice_seconds, help="seconds")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    config = Config(rounds=args.rounds, slice_seconds=args.slice)
    with local_servers(args.servers) as (urls, _started):
        report = run_benchmark(urls, config)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
