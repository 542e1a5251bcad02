"""Greenlets on one sync ``Redlock``, in a process that gevent patched first.

Run by ``tests/integration/test_gevent.py`` in a process of its own, which patches
first, as a gevent application does (the patching would change the test process)::

    python -c "from gevent import monkey; monkey.patch_all(); \
        from tests.integration.greenlets import main; main()" URL,URL,...

It prints one JSON object, what each part saw, and exits 0 (1 on an error, with its
traceback). Every wait is bounded.
"""

from __future__ import annotations

import json
import sys
import time

import gevent
import gevent.event
import redis
from gevent import monkey

import quorumlock

#: The longest any part waits (a loaded machine).
WAIT = 30.0


def contention(rl: quorumlock.Redlock, workers: int, holds: int) -> dict[str, int]:
    """``workers`` greenlets each hold one name ``holds`` times, blocking acquires that
    wait for each other's releases (wake-ups included), half of them through reentrant
    locks: how many holds were made, and the most holders seen at once."""
    inside = 0
    most = 0
    made = 0

    def work(n: int) -> None:
        nonlocal inside, most, made
        for _ in range(holds):
            # half the greenlets with a reentrant lock: re-entered by its own greenlet
            # only, where gevent's greenlets are threads to threading.current_thread()
            kind = rl.rlock if n % 2 else rl.lock
            with kind("greenlets:contention", ttl=5, timeout=WAIT):
                inside += 1
                most = max(most, inside)
                gevent.sleep(0.002)  # another greenlet runs meanwhile
                inside -= 1
                made += 1

    gevent.joinall([gevent.spawn(work, n) for n in range(workers)], timeout=WAIT, raise_error=True)
    return {"holds": made, "most_at_once": most}


def waiting(rl: quorumlock.Redlock) -> dict[str, float | int | bool]:
    """One greenlet holds a name for 0.3 s while another's blocking acquire waits for
    it: how often a third greenlet, ticking every 10 ms, ran during that wait (none if
    the wait blocked the process), and whether the waiter got the lock."""
    held = gevent.event.Event()
    ticks = 0
    stop = False

    def holder() -> None:
        with rl.lock("greenlets:wait", ttl=5):
            held.set()
            gevent.sleep(0.3)

    def ticker() -> None:
        nonlocal ticks
        while not stop:
            gevent.sleep(0.01)
            ticks += 1

    first = gevent.spawn(holder)
    assert held.wait(WAIT), "the holder did not get the lock"
    clock = gevent.spawn(ticker)
    started = time.monotonic()
    # no timeout: a wait for a lock held by this very thread would raise at once
    # (LockNotReentrant), and each greenlet is a thread of its own
    lock = rl.lock("greenlets:wait", ttl=5)
    with gevent.Timeout(WAIT):
        got = lock.acquire()
    waited = time.monotonic() - started
    counted = ticks
    stop = True
    if got:
        lock.release()
    gevent.joinall([first, clock], timeout=WAIT, raise_error=True)
    return {"acquired": got, "waited": round(waited, 3), "ticks": counted}


def interrupted(rl: quorumlock.Redlock, clients: list[redis.Redis]) -> dict[str, int | list[int]]:
    """Acquires and releases cut short by ``gevent.Timeout`` at every point of their
    rounds: how many were cut, and how many of their keys each server still has."""
    cut = 0
    for i in range(200):
        lock = rl.lock(f"greenlets:cut:{i}", ttl=30)
        try:
            with gevent.Timeout(0.00005 * (i % 20)):
                if lock.acquire(blocking=False):
                    lock.release()
        except gevent.Timeout:
            cut += 1
    deadline = time.monotonic() + WAIT
    left = [len(list(c.scan_iter("greenlets:cut:*"))) for c in clients]
    while any(left) and time.monotonic() < deadline:
        gevent.sleep(0.05)
        left = [len(list(c.scan_iter("greenlets:cut:*"))) for c in clients]
    return {"cut": cut, "keys_left": left}


def lease(rl: quorumlock.Redlock) -> dict[str, bool]:
    """A lock with a 1 s ttl held through 2.5 s of ``gevent.sleep``: kept only if the
    lease, a greenlet, renewed it meanwhile."""
    with rl.lock("greenlets:lease", ttl=1, auto_extend=True, max_hold=WAIT) as lock:
        gevent.sleep(2.5)
        kept = not lock.lost.is_set() and lock.owned()
    return {"kept": kept}


def main() -> None:
    if not monkey.is_module_patched("socket"):
        raise SystemExit("gevent's monkey.patch_all() must run first")
    urls = sys.argv[1].split(",")
    clients = [redis.Redis.from_url(url) for url in urls]
    with quorumlock.Redlock(urls) as rl:
        report = {
            "contention": contention(rl, workers=6, holds=10),
            "waiting": waiting(rl),
            "interrupted": interrupted(rl, clients),
            "lease": lease(rl),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
