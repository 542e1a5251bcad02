"""Greenlets on one sync ``Redlock``, in a process that gevent or eventlet patched first.

Run by ``tests/integration/test_greenlets.py`` in a process of its own, which patches
first, as a gevent or eventlet application does (the patching would change the test
process)::

    python -c "from gevent import monkey; monkey.patch_all(); \
        from tests.integration.greenlets import main; main()" URL,URL,...
    python -c "import eventlet; eventlet.monkey_patch(); \
        from tests.integration.greenlets import main; main()" URL,URL,...

It prints one JSON object, what each part saw, and exits 0 (1 on an error, with its
traceback). Every wait is bounded.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

import quorumlock

#: The longest any part waits (a loaded machine).
WAIT = 30.0


class Green:
    """What the parts need of the library that patched the process (``threading`` is
    green under both: its ``Event`` is theirs)."""

    def __init__(self) -> None:
        # The library that patched the process imported itself: taken from sys.modules
        # (importing the other one would be a change of its own).
        eventlet, gevent = sys.modules.get("eventlet"), sys.modules.get("gevent.monkey")
        if eventlet is not None and eventlet.patcher.is_monkey_patched("socket"):
            self.name, library = "eventlet", eventlet
        elif gevent is not None and gevent.is_module_patched("socket"):
            self.name, library = "gevent", sys.modules["gevent"]
        else:
            raise SystemExit("gevent's monkey.patch_all() or eventlet.monkey_patch() first")
        self.sleep: Callable[[float], None] = library.sleep
        self.Timeout: Any = library.Timeout
        self._spawn: Any = library.spawn

    def spawn(self, func: Callable[..., None], *args: object) -> Any:
        return self._spawn(func, *args)

    def join(self, greenlets: list[Any]) -> None:
        """Wait for each to end (within WAIT), raising what one raised."""
        with self.Timeout(WAIT):
            for greenlet in greenlets:
                greenlet.wait() if self.name == "eventlet" else greenlet.get()


def contention(green: Green, rl: quorumlock.Redlock, workers: int, holds: int) -> dict[str, int]:
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
            # only, where greenlets are threads to threading.current_thread()
            kind = rl.rlock if n % 2 else rl.lock
            with kind("greenlets:contention", ttl=5, timeout=WAIT):
                inside += 1
                most = max(most, inside)
                green.sleep(0.002)  # another greenlet runs meanwhile
                inside -= 1
                made += 1

    green.join([green.spawn(work, n) for n in range(workers)])
    return {"holds": made, "most_at_once": most}


def waiting(green: Green, rl: quorumlock.Redlock) -> dict[str, float | int | bool]:
    """One greenlet holds a name for 0.3 s while another's blocking acquire waits for
    it: how often a third greenlet, ticking every 10 ms, ran during that wait (none if
    the wait blocked the process), and whether the waiter got the lock."""
    held = threading.Event()
    ticks = 0
    stop = False

    def holder() -> None:
        with rl.lock("greenlets:wait", ttl=5):
            held.set()
            green.sleep(0.3)

    def ticker() -> None:
        nonlocal ticks
        while not stop:
            green.sleep(0.01)
            ticks += 1

    first = green.spawn(holder)
    assert held.wait(WAIT), "the holder did not get the lock"
    clock = green.spawn(ticker)
    started = time.monotonic()
    # no timeout: a wait for a lock held by this very thread would raise at once
    # (LockNotReentrant), and each greenlet is a thread of its own
    lock = rl.lock("greenlets:wait", ttl=5)
    with green.Timeout(WAIT):
        got = lock.acquire()
    waited = time.monotonic() - started
    counted = ticks
    stop = True
    if got:
        lock.release()
    green.join([first, clock])
    return {"acquired": got, "waited": round(waited, 3), "ticks": counted}


def interrupted(
    green: Green, rl: quorumlock.Redlock, clients: list[redis.Redis]
) -> dict[str, int | list[int]]:
    """Acquires and releases cut short by the library's ``Timeout`` at every point of their
    rounds: how many were cut, and how many of their keys each server still has."""
    cut = 0
    for i in range(200):
        lock = rl.lock(f"greenlets:cut:{i}", ttl=30)
        try:
            with green.Timeout(0.00005 * (i % 20)):
                if lock.acquire(blocking=False):
                    lock.release()
        except green.Timeout:
            cut += 1
    deadline = time.monotonic() + WAIT
    left = [len(list(c.scan_iter("greenlets:cut:*"))) for c in clients]
    while any(left) and time.monotonic() < deadline:
        green.sleep(0.05)
        left = [len(list(c.scan_iter("greenlets:cut:*"))) for c in clients]
    return {"cut": cut, "keys_left": left}


def lease(green: Green, rl: quorumlock.Redlock) -> dict[str, bool]:
    """A lock with a 1 s ttl held through 2.5 s of the library's ``sleep``: kept only if the
    lease, a greenlet, renewed it meanwhile."""
    with rl.lock("greenlets:lease", ttl=1, auto_extend=True, max_hold=WAIT) as lock:
        green.sleep(2.5)
        kept = not lock.lost.is_set() and lock.owned()
    return {"kept": kept}


#: How many tries ``sleeps`` makes: a stale wake-up comes in a few of them (with 200,
#: the mutation check saw none in one run of four).
TRIES = 800


def sleeps(green: Green, rl: quorumlock.Redlock) -> dict[str, float]:
    """A greenlet's sleeps right after its rounds last as long as asked: the rounds'
    waits on the servers' sockets deliver nothing to the greenlet once they are over
    (eventlet's own ``select`` on several sockets can: a later sleep of the greenlet
    then returns at once). ``TRIES`` tries, each an acquire and a release (the servers'
    replies arriving together) and a 5 ms sleep: the shortest of those sleeps."""
    shortest = WAIT
    for i in range(TRIES):
        lock = rl.lock(f"greenlets:sleeps:{i}", ttl=5)
        with green.Timeout(WAIT):
            if lock.acquire():
                lock.release()
        started = time.monotonic()
        green.sleep(0.005)
        shortest = min(shortest, time.monotonic() - started)
    return {"shortest": round(shortest, 5)}


def main() -> None:
    green = Green()
    urls = sys.argv[1].split(",")
    clients = [redis.Redis.from_url(url) for url in urls]
    with quorumlock.Redlock(urls) as rl:
        report = {
            "library": {"name": green.name},
            "contention": contention(green, rl, workers=6, holds=10),
            "waiting": waiting(green, rl),
            "sleeps": sleeps(green, rl),
            "interrupted": interrupted(green, rl, clients),
            "lease": lease(green, rl),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
