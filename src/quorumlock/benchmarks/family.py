"""The lock family, uncontended: ``python -m quorumlock.benchmarks.family``.

What a reentrant lock and a multi-resource lock cost next to a plain lock, at N = 5
(``Redlock.rlock``, ``Redlock.lock_many``; docs/algorithm.md). One process, one key (or
set) nobody else uses, the sync API; per cycle a new lock object, a non-blocking acquire
and a release:

- ``lock``: the plain lock, the reference;
- ``rlock``: the outermost acquire, one re-entry, two releases (one round trip each way,
  like the plain lock: the re-entry and the inner release cost none);
- ``lock_many 2`` / ``lock_many 8``: a set of 2 or 8 names (one script per server and
  round, whatever the size of the set);
- ``re-entry``: with an rlock held, one re-entry and its release (no round trip at all).

Each round gives every contender one slice, in an order rotated from round to round;
the figure is the median of the rounds' cycles per second, and the ratio to ``lock``
of the same run. Numbers only: nothing here is judged against a time.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence

from quorumlock import QuorumUnavailable, Redlock
from quorumlock.benchmarks._common import local_servers, rotated

__all__ = ["CONTENDERS", "main", "measure"]

SERVERS = 5
TTL = 10.0

Cycle = Callable[[], None]


def _cycles(rl: Redlock, prefix: str) -> tuple[dict[str, Cycle], Cycle]:
    """The cycle of each contender, and what ends the held rlock of ``re-entry``."""
    many2 = [f"{prefix}:m2:{i}" for i in range(2)]
    many8 = [f"{prefix}:m8:{i}" for i in range(8)]
    held = rl.rlock(f"{prefix}:held", ttl=TTL, auto_extend=True, max_hold=float("inf"))

    def plain() -> None:
        lock = rl.lock(f"{prefix}:lock", ttl=TTL)
        if lock.acquire(blocking=False):
            lock.release()

    def reentrant() -> None:
        lock = rl.rlock(f"{prefix}:rlock", ttl=TTL)
        if lock.acquire(blocking=False):
            lock.acquire(blocking=False)
            lock.release()
            lock.release()

    def many(names: list[str]) -> Cycle:
        def cycle() -> None:
            lock = rl.lock_many(names, ttl=TTL)
            if lock.acquire(blocking=False):
                lock.release()

        return cycle

    def reentry() -> None:
        if held.depth == 0:
            held.acquire()
        held.acquire()
        held.release()

    def done() -> None:
        while held.depth > 0:
            held.release()

    cycles = {
        "lock": plain,
        "rlock": reentrant,
        "lock_many 2": many(many2),
        "lock_many 8": many(many8),
        "re-entry": reentry,
    }
    return cycles, done


CONTENDERS = ("lock", "rlock", "lock_many 2", "lock_many 8", "re-entry")


def measure(urls: Sequence[str], *, rounds: int, seconds: float) -> dict[str, float]:
    """The median cycles per second of each contender over ``rounds`` rotated rounds of
    ``seconds`` each."""
    rates: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    with Redlock(list(urls)) as rl:
        cycles, done = _cycles(rl, f"bench:family:{uuid.uuid4().hex[:8]}")
        try:
            _rounds(cycles, rates, rounds, seconds)
        finally:
            done()
    return {name: statistics.median(values) for name, values in rates.items()}


def _rounds(
    cycles: dict[str, Cycle], rates: dict[str, list[float]], rounds: int, seconds: float
) -> None:
    for cycle in cycles.values():  # warm up: connections open, scripts cached
        with contextlib.suppress(QuorumUnavailable):
            cycle()
    for index in range(rounds):
        for name in rotated(CONTENDERS, index):
            cycle = cycles[name]
            count = 0
            began = time.monotonic()
            stop = began + seconds
            while time.monotonic() < stop:
                # A server slower than the instance timeout on a loaded machine: the
                # cycle is not counted, and the run goes on.
                with contextlib.suppress(QuorumUnavailable):
                    cycle()
                    count += 1
            rates[name].append(count / (time.monotonic() - began))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.family",
        description="rlock and lock_many next to a plain lock, uncontended, N = 5.",
    )
    parser.add_argument("--servers", help=f"{SERVERS} comma-separated URLs (default: local)")
    parser.add_argument("--rounds", type=int, default=5, help="rotated rounds (default 5)")
    parser.add_argument(
        "--seconds", type=float, default=0.5, help="one slice, in seconds (default 0.5)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or not args.seconds > 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) < SERVERS:
            print(f"error: --servers needs {SERVERS} URLs", file=sys.stderr)
            return 2
        rates = measure(urls[:SERVERS], rounds=args.rounds, seconds=args.seconds)
    base = rates["lock"]
    print(f"uncontended cycles, N={SERVERS}, {args.rounds} x {args.seconds:g} s (rotated):")
    for name in CONTENDERS:
        print(f"  {name:<12} {rates[name]:>9.0f} /s   {rates[name] / base:5.2f} x lock")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
