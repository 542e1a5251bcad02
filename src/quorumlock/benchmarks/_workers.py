"""Worker processes of the multi-process benchmarks (hand-over, contention, many names).

The parent side, :class:`WorkerPool`, is the worker pool the verify kit uses too
(``quorumlock/testing/_pool.py``: a fresh interpreter per worker, a ready handshake,
commands in JSON lines on the worker's stdin and one reply line per command on a
private copy of its stdout, the worker's own output in a log file, cleanup by PID).

Commands:

* ``{"cmd": "warm", "urls": [...], "contenders": [...]}``: build every contender's
  client, make one blocking acquire and one release on a private key; reply with each
  contender's status (``ok``, ``not installed (...)``, ``failed: ...``);
* ``{"cmd": "run", "mode": "handover" | "contend", ...}``: loop on one lock name from
  ``start_ns`` to ``stop_ns`` (``time.monotonic_ns()``: CLOCK_MONOTONIC on Linux, one
  clock for every process of the machine) and reply with every hold;
* ``{"cmd": "many", ...}``: hold many locks at once with auto-renewal and measure memory
  and renewal traffic (see :func:`hold_many`);
* ``{"cmd": "exit"}``, or EOF: exit.

Every loop is bounded by ``stop_ns`` plus one acquire's timeout; the parent kills a
worker that has not replied ``REPLY_GRACE`` seconds after the stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import mmap
import os
import random
import struct
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import redis

from quorumlock import QuorumUnavailable, Redlock
from quorumlock.benchmarks._common import SOCKET_TIMEOUT, NotInstalled, client, import_peer
from quorumlock.testing import Hold
from quorumlock.testing._checker import overlapping_pairs
from quorumlock.testing._pool import ProcessPool, WorkerError, connect_parent

__all__ = [
    "CONTENDERS",
    "BlockingLock",
    "Slice",
    "WorkerError",
    "WorkerPool",
    "command_stats",
    "hold_many",
    "integrity",
    "main",
    "new_shared_file",
    "read_shared",
    "run_slice",
    "warm_up",
]

#: The lock's ttl in the hand-over and contention loops: far above any hold, so no lock
#: expires under its holder (python-redis-lock wants whole seconds).
TTL_SECONDS: Final = 10
#: Extra seconds the parent waits for a worker's reply after the slice's stop.
REPLY_GRACE: Final = 20.0
#: How long a worker may take to start (import everything) before the pool gives up.
READY_TIMEOUT: Final = 120.0
#: Seconds the workers get to exit when the pool closes, before they are killed.
EXIT_GRACE: Final = 5.0
#: Shared file layout: the number of critical sections entered, then the slot (worker
#: index + 1) of the worker inside one, 0 when none is.
_COUNTER: Final = struct.Struct("<QQ")
#: In the hand-over loop, a releaser stays out of the queue until another worker took
#: the lock, or this long (so that each release has every other worker waiting).
_REJOIN_BOUND: Final = 2.0
_REJOIN_POLL: Final = 0.0005
_ERROR_PAUSE: Final = 0.01
#: Attempts per lock when holding many (see _QuorumlockHolder.hold).
_HOLD_ATTEMPTS: Final = 5


# --------------------------------------------------------------------------- contenders

#: Each library's client objects of this worker process, by (library, servers): one set
#: per process, shared by the lock objects of every name, as an application keeps them.
#: (Each slice locks a name of its own: clients made per name started every slice cold,
#: connecting, and for quorumlock also subscribing, inside the measured time.)
_SHARED: dict[tuple[str, tuple[str, ...]], Any] = {}


def _shared(library: str, urls: Sequence[str], build: Callable[[], Any]) -> Any:
    """This process's ``library`` clients for ``urls``, built on first use."""
    key = (library, tuple(urls))
    if key not in _SHARED:
        _SHARED[key] = build()
    return _SHARED[key]


def close_shared() -> None:
    """Close every shared client (the worker's end)."""
    for clients in _SHARED.values():
        for closable in clients if isinstance(clients, tuple) else (clients,):
            with contextlib.suppress(Exception):
                closable.close()
    _SHARED.clear()


class BlockingLock(Protocol):
    """One library's blocking lock on one name, with the library's default retry policy."""

    def acquire(self, timeout: float) -> bool:
        """A new lock object, then a blocking acquire of at most about ``timeout`` s."""
        ...

    def release(self) -> None:
        """Release the lock acquired last."""
        ...

    def close(self) -> None:
        """Close the connections."""
        ...


class QuorumlockLock:
    """``Redlock(urls)`` (defaults: ``retry_delay=0.2``, pauses uniform in [0.1, 0.2] s),
    ``rl.lock(name, ttl=10.0).acquire(blocking=True, timeout=...)``."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        self._redlock: Redlock = _shared("quorumlock", urls, lambda: Redlock(list(urls)))
        self._name = name
        self._lock: Any = None

    def acquire(self, timeout: float) -> bool:
        self._lock = self._redlock.lock(self._name, ttl=float(TTL_SECONDS))
        return bool(self._lock.acquire(blocking=True, timeout=timeout))

    def release(self) -> None:
        self._lock.release()

    def close(self) -> None:
        pass  # shared: close_shared()


class PotteryLock:
    """pottery 3.x ``Redlock(key=..., masters=..., auto_release_time=10)``,
    ``acquire(timeout=...)``: retries after ``random.uniform(0, 0.2)`` s
    (``Redlock._RETRY_DELAY``)."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        self._pottery = import_peer("pottery")
        self._masters = _shared("pottery", urls, lambda: tuple(client(url) for url in urls))
        self._name = name
        self._lock: Any = None

    def acquire(self, timeout: float) -> bool:
        self._lock = self._pottery.Redlock(
            key=self._name, masters=frozenset(self._masters), auto_release_time=TTL_SECONDS
        )
        return bool(self._lock.acquire(timeout=timeout))

    def release(self) -> None:
        self._lock.release()

    def close(self) -> None:
        pass  # shared: close_shared()


class RedisPyLock:
    """redis-py ``client.lock(name, timeout=10)``, ``acquire(blocking_timeout=...)``: retries
    every ``sleep=0.1`` s (its default)."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        self._client = _shared("redis-py", urls[:1], lambda: client(urls[0]))
        self._name = name
        self._lock: Any = None

    def acquire(self, timeout: float) -> bool:
        self._lock = self._client.lock(self._name, timeout=TTL_SECONDS)
        return bool(self._lock.acquire(blocking=True, blocking_timeout=timeout))

    def release(self) -> None:
        self._lock.release()

    def close(self) -> None:
        pass  # shared: close_shared()


class RedisLockLock:
    """python-redis-lock ``Lock(client, name, expire=10)``, ``acquire(timeout=...)``: no
    polling; a waiter blocks in ``BLPOP`` on a signal list the release script pushes to.
    Its timeout is whole seconds (at least 1, at most ``expire``)."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        self._module = import_peer("redis_lock")
        self._client = _shared("redis-lock", urls[:1], lambda: client(urls[0]))
        self._name = name
        self._lock: Any = None

    def acquire(self, timeout: float) -> bool:
        self._lock = self._module.Lock(self._client, self._name, expire=TTL_SECONDS)
        whole = max(1, min(TTL_SECONDS, math.ceil(timeout)))
        return bool(self._lock.acquire(blocking=True, timeout=whole))

    def release(self) -> None:
        self._lock.release()

    def close(self) -> None:
        pass  # shared: close_shared()


class AioredlockLock:
    """aioredlock ``Aioredlock(urls)`` (defaults: ``retry_count=3``, pauses uniform in
    [0.1, 0.3] s), ``await lm.lock(name, lock_timeout=10)``, on its own event loop.

    With its defaults ``lock()`` gives up after 3 attempts (``LockError``); the worker
    calls it again until the slice's time is up, which is how a caller waits with it.
    """

    def __init__(self, urls: Sequence[str], name: str) -> None:
        module = import_peer("aioredlock")
        self._error: type[Exception] = module.LockError
        session: _AioSession = _shared(
            "aioredlock", urls, lambda: _AioSession(module.Aioredlock(list(urls)))
        )
        self._loop, self._manager = session.loop, session.manager
        self._name = name
        self._lock: Any = None

    async def _acquire(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._lock = await self._manager.lock(self._name, lock_timeout=TTL_SECONDS)
                return True
            except self._error:
                if time.monotonic() >= deadline:
                    return False

    def acquire(self, timeout: float) -> bool:
        return self._loop.run_until_complete(self._acquire(timeout))

    def release(self) -> None:
        self._loop.run_until_complete(self._manager.unlock(self._lock))

    def close(self) -> None:
        pass  # shared: close_shared()


class _AioSession:
    """aioredlock's lock manager and the event loop it runs on, one per process."""

    def __init__(self, manager: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.manager = manager

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.manager.destroy())
        self.loop.close()


class NoLock:
    """A "lock" that excludes nobody: the overlap checks' own test (tests/test_benchmarks.py
    runs it to see that the checks catch two holders at once). No figure uses it."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        pass

    def acquire(self, timeout: float) -> bool:
        time.sleep(0.0005)  # a pause between holds, as a real lock's round trip makes
        return True

    def release(self) -> None:
        pass

    def close(self) -> None:
        pass


#: slug -> (how to build it, servers it locks). The parent names contenders by slug.
CONTENDERS: Final[dict[str, tuple[Callable[[Sequence[str], str], BlockingLock], int]]] = {
    "quorumlock": (QuorumlockLock, 5),
    "pottery": (PotteryLock, 5),
    "redis-py": (RedisPyLock, 1),
    "redis-lock": (RedisLockLock, 1),
    "aioredlock": (AioredlockLock, 5),
    "no-lock": (NoLock, 1),
}


# --------------------------------------------------------------------------- shared file


def new_shared_file(directory: Path) -> Path:
    """A fresh shared file (counter 0, nobody inside) in ``directory``."""
    fd, name = tempfile.mkstemp(prefix="cs-", dir=directory)
    with os.fdopen(fd, "wb") as handle:
        handle.write(_COUNTER.pack(0, 0))
    return Path(name)


def read_shared(path: Path) -> int:
    """How many critical sections were entered, as counted in the shared file."""
    counter, _ = _COUNTER.unpack(path.read_bytes()[: _COUNTER.size])
    return int(counter)


def _enter(shared: mmap.mmap, slot: int) -> bool:
    """Enter the critical section: False if another worker was inside (an overlap).

    Read-modify-write with no atomic operation: under mutual exclusion nobody else
    touches the file, so the counter ends equal to the number of holds; two holders at
    once would see each other's slot, or lose an increment.
    """
    counter, inside = _COUNTER.unpack_from(shared, 0)
    _COUNTER.pack_into(shared, 0, counter + 1, slot)
    return bool(inside == 0)


def _leave(shared: mmap.mmap) -> None:
    counter, _ = _COUNTER.unpack_from(shared, 0)
    _COUNTER.pack_into(shared, 0, counter, 0)


# --------------------------------------------------------------------------- worker side


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


class _Worker:
    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], BlockingLock] = {}
        self._random = random.Random()

    def _lock(self, slug: str, urls: Sequence[str], name: str) -> BlockingLock:
        key = (slug, name)
        if key not in self._locks:
            build, servers = CONTENDERS[slug]
            self._locks[key] = build(urls[:servers], name)
        return self._locks[key]

    def close(self) -> None:
        for lock in self._locks.values():
            with contextlib.suppress(Exception):
                lock.close()
        close_shared()

    def warm(self, cmd: dict[str, Any]) -> dict[str, Any]:
        status: dict[str, str] = {}
        for slug in cmd["contenders"]:
            try:
                # a key of its own: a quorumlock release that timed out on server 0 under
                # the warm-up's load leaves its key there for its ttl, which redis-py's
                # Lock (server 0, the same key) would then wait on in vain
                lock = self._lock(slug, cmd["urls"], f"{cmd['name']}:{slug}")
                if not lock.acquire(5.0):
                    raise RuntimeError("the private warm-up key was taken")
                lock.release()
                status[slug] = "ok"
            except NotInstalled as exc:
                status[slug] = str(exc)
            except Exception as exc:  # reported, never fatal
                status[slug] = f"failed: {_one_line(exc)}"
        return {"status": status}

    def run(self, cmd: dict[str, Any]) -> dict[str, Any]:
        lock = self._lock(cmd["contender"], cmd["urls"], cmd["name"])
        slot = int(cmd["slot"])
        stop = int(cmd["stop_ns"])
        handover = cmd["mode"] == "handover"
        hold_low, hold_high = cmd.get("hold", (0.0, 0.0))
        holds: list[tuple[int, int, int]] = []
        failures = 0
        overlaps_seen = 0
        error: str | None = None
        with (
            open(cmd["shared"], "r+b") as handle,
            mmap.mmap(handle.fileno(), _COUNTER.size) as shared,
        ):
            _sleep_until(int(cmd["start_ns"]))
            while (now := time.monotonic_ns()) < stop:
                try:
                    acquired = lock.acquire((stop - now) / 1e9)
                except Exception as exc:  # counted and reported; the loop is time-bounded
                    failures += 1
                    error = error or _one_line(exc)
                    time.sleep(_ERROR_PAUSE)
                    continue
                got = time.monotonic_ns()
                if not acquired:
                    continue
                if got > stop:  # too late to count: give it back and stop
                    with contextlib.suppress(Exception):
                        lock.release()
                    break
                if not _enter(shared, slot):
                    overlaps_seen += 1
                (mine,) = struct.unpack_from("<Q", shared, 0)  # the count, ours included
                if hold_high:  # the hand-over figure's holds; none in the contention loop
                    time.sleep(self._random.uniform(hold_low, hold_high))
                _leave(shared)
                releasing = time.monotonic_ns()
                try:
                    lock.release()
                except Exception as exc:
                    failures += 1
                    error = error or _one_line(exc)
                released = time.monotonic_ns()
                holds.append((got, releasing, released))
                if handover:
                    _wait_for_next_holder(shared, mine, stop)
        return {
            "holds": holds,
            "failures": failures,
            "overlaps_seen": overlaps_seen,
            "error": error,
        }


def _sleep_until(at_ns: int) -> None:
    delay = (at_ns - time.monotonic_ns()) / 1e9
    if delay > 0:
        time.sleep(delay)


def _wait_for_next_holder(shared: mmap.mmap, count: int, stop: int) -> None:
    """Stay out of the queue until another worker entered its critical section.

    A releaser that asked again at once would often win its own lock back (its first
    attempt is immediate, a polling waiter's is not) and measure nothing; waiting keeps
    every other worker in the queue at each release, which is what the figure measures.
    """
    bound = min(stop, time.monotonic_ns() + int(_REJOIN_BOUND * 1e9))
    while time.monotonic_ns() < bound:
        (current,) = struct.unpack_from("<Q", shared, 0)
        if current != count:
            return
        time.sleep(_REJOIN_POLL)


def _rss_bytes() -> int | None:
    try:
        fields = Path("/proc/self/statm").read_text().split()
    except OSError:
        return None
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")


def command_stats(urls: Sequence[str]) -> dict[str, int]:
    """Calls per command (``INFO commandstats``), summed over the servers."""
    totals: dict[str, int] = {}
    for url in urls:
        conn = client(url)
        try:
            for name, stats in conn.info("commandstats").items():
                command = name.removeprefix("cmdstat_")
                totals[command] = totals.get(command, 0) + int(stats["calls"])
        finally:
            conn.close()
    return totals


class _Holder(Protocol):
    retries: int

    def clear(self) -> None: ...
    def hold(self, name: str) -> bool:
        """Acquire one more lock (several attempts at most); False if none succeeded."""
        ...

    def extensions(self) -> int | None: ...
    def lost(self) -> int | None: ...
    def release_all(self) -> int: ...
    def close(self) -> None: ...


class _QuorumlockHolder:
    def __init__(self, urls: Sequence[str], ttl: float) -> None:
        self._redlock = Redlock(list(urls))
        self._ttl = ttl
        self._locks: list[Any] = []
        self.retries = 0

    def hold(self, name: str) -> bool:
        for attempt in range(_HOLD_ATTEMPTS):
            # A fresh name per attempt: a failed attempt's keys may stay for the ttl on
            # servers whose late replies granted it and whose cleanup timed out too.
            lock = self._redlock.lock(
                f"{name}:{attempt}", ttl=self._ttl, auto_extend=True, max_hold=math.inf
            )
            try:
                if lock.acquire(blocking=False):
                    self._locks.append(lock)
                    return True
            except QuorumUnavailable:
                # The per-server timeout derived from a short ttl (20 ms at 3 s) can run
                # out on a loaded machine, or while the lease thread renews many locks.
                pass
            self.retries += 1
        return False

    def clear(self) -> None:
        self._locks.clear()

    def extensions(self) -> int | None:
        return int(sum(lock.extensions for lock in self._locks))

    def lost(self) -> int | None:
        return int(sum(lock.lost.is_set() for lock in self._locks))

    def release_all(self) -> int:
        return sum(bool(lock.release()) for lock in self._locks if lock.held)

    def close(self) -> None:
        self._redlock.close()


class _RedisLockHolder:
    """python-redis-lock with ``auto_renewal=True``: one renewal thread per lock, which
    extends it every ``expire * 2 / 3`` s.

    Its client gets a ``BlockingConnectionPool`` of 100 connections: redis-py's default
    pool raises ``MaxConnectionsError`` when more than 100 threads renew at once, and the
    exception ends that lock's renewal thread for good.
    """

    def __init__(self, urls: Sequence[str], ttl: float) -> None:
        self._module = import_peer("redis_lock")
        pool = redis.BlockingConnectionPool.from_url(
            urls[0],
            max_connections=100,
            timeout=SOCKET_TIMEOUT,
            socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=SOCKET_TIMEOUT,
        )
        self._client = redis.Redis(connection_pool=pool)
        self._expire = max(1, round(ttl))
        self._locks: list[Any] = []
        self.retries = 0

    def hold(self, name: str) -> bool:
        lock = self._module.Lock(self._client, name, expire=self._expire, auto_renewal=True)
        if not lock.acquire(blocking=False):
            return False
        self._locks.append(lock)
        return True

    def clear(self) -> None:
        self._locks.clear()

    def extensions(self) -> int | None:
        return None  # not exposed: the server-side counts show them

    def lost(self) -> int | None:
        # The key no longer holds this lock's id: it expired without its renewal.
        return int(sum(lock.get_owner_id() != lock.id for lock in self._locks))

    def release_all(self) -> int:
        released = 0
        for lock in self._locks:
            with contextlib.suppress(Exception):
                lock.release()
                released += 1
        return released

    def close(self) -> None:
        self._client.close()


class _PlainHolder:
    """A lock with no auto-renewal (pottery's Redlock, redis-py's Lock): held for the
    whole window with a ttl longer than it, to measure the memory of a held lock."""

    def __init__(self, make: Callable[[str], Any]) -> None:
        self._make = make
        self._locks: list[Any] = []
        self.retries = 0

    def hold(self, name: str) -> bool:
        lock = self._make(name)
        if not lock.acquire(blocking=False):
            return False
        self._locks.append(lock)
        return True

    def clear(self) -> None:
        self._locks.clear()

    def extensions(self) -> int | None:
        return None

    def lost(self) -> int | None:
        return None

    def release_all(self) -> int:
        released = 0
        for lock in self._locks:
            with contextlib.suppress(Exception):
                lock.release()
                released += 1
        return released

    def close(self) -> None:
        pass


def _holder(slug: str, urls: Sequence[str], ttl: float) -> tuple[_Holder, list[redis.Redis]]:
    """A holder for ``slug`` and the clients to close after it."""
    if slug == "quorumlock":
        return _QuorumlockHolder(urls, ttl), []
    if slug == "redis-lock":
        return _RedisLockHolder(urls[:1], ttl), []
    if slug == "pottery":
        pottery = import_peer("pottery")
        masters = [client(url) for url in urls]
        masterset = frozenset(masters)

        def make_pottery(name: str) -> Any:
            return pottery.Redlock(key=name, masters=masterset, auto_release_time=ttl)

        return _PlainHolder(make_pottery), masters
    if slug == "redis-py":
        single = client(urls[0])

        def make_redis_py(name: str) -> Any:
            return single.lock(name, timeout=ttl)

        return _PlainHolder(make_redis_py), [single]
    raise ValueError(f"unknown contender {slug!r}")


def _calls_between(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The commands the servers ran between two readings of their commandstats, by name
    (not our own INFO)."""
    calls = {name: after[name] - before.get(name, 0) for name in after}
    return {name: n for name, n in calls.items() if n and name != "info"}


def hold_many(cmd: dict[str, Any]) -> dict[str, Any]:
    """Acquire ``count`` locks and hold them all for ``window`` seconds, then measure
    Python's allocations per lock in a second pass.

    The first pass runs untraced, as an application would: the acquisitions' time, the
    resident-set growth over them (``/proc``), then the servers' ``INFO commandstats``
    and the extensions counted by the locks over the ``window`` that follows, and the
    locks lost by its end. The second pass acquires ``traced_count`` locks again under
    ``tracemalloc`` and releases them: tracing makes Python several times slower, and a
    lease thread slowed as much falls behind its renewals and loses locks that an
    untraced one keeps.
    """
    slug, urls, count = cmd["contender"], cmd["urls"], int(cmd["count"])
    ttl, window, prefix = float(cmd["ttl"]), float(cmd["window"]), cmd["name"]
    traced_count = min(count, int(cmd.get("traced_count", count)))
    try:
        holder, clients = _holder(slug, urls, ttl)
    except NotInstalled as exc:
        return {"status": str(exc)}
    result: dict[str, Any] = {"status": "ok", "count": count, "ttl": ttl, "window": window}
    try:
        # Connections opened and scripts loaded before measuring: their buffers are not
        # a held lock's cost.
        if not holder.hold(f"{prefix}:warm"):
            raise RuntimeError("could not acquire the warm-up lock")
        holder.release_all()
        holder.clear()
        holder.retries = 0
        gc.collect()
        rss_before = _rss_bytes()
        started = time.monotonic()
        held = sum(holder.hold(f"{prefix}:{index}") for index in range(count))
        result["acquire_seconds"] = time.monotonic() - started
        result["held"] = held
        result["acquire_failures"] = count - held
        result["acquire_retries"] = holder.retries
        gc.collect()
        rss_after = _rss_bytes()
        result["rss_bytes"] = (
            None if rss_before is None or rss_after is None else rss_after - rss_before
        )
        result["threads"] = threading.active_count()
        stats_before = command_stats(urls)
        extensions_before = holder.extensions()
        window_start = time.monotonic()
        time.sleep(window)
        elapsed = time.monotonic() - window_start
        extensions_after = holder.extensions()
        stats_after = command_stats(urls)
        result["window_measured"] = elapsed
        result["extensions"] = (
            None
            if extensions_before is None or extensions_after is None
            else extensions_after - extensions_before
        )
        result["server_calls"] = _calls_between(stats_before, stats_after)
        result["lost"] = holder.lost()
        result["released"] = holder.release_all()
        holder.clear()
        gc.collect()
        tracemalloc.start()
        traced_before = tracemalloc.get_traced_memory()[0]
        traced_held = sum(holder.hold(f"{prefix}:traced:{index}") for index in range(traced_count))
        gc.collect()
        result["traced_bytes"] = tracemalloc.get_traced_memory()[0] - traced_before
        result["traced_held"] = traced_held
        tracemalloc.stop()
        holder.release_all()
    except Exception as exc:
        result["status"] = f"failed: {_one_line(exc)}"
        with contextlib.suppress(Exception):
            holder.release_all()
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        holder.close()
        for conn in clients:
            conn.close()
    return result


def main() -> int:
    """The worker process: answer commands from stdin until EOF or ``exit``."""
    parent = connect_parent()
    worker = _Worker()
    try:
        for cmd in parent.commands():
            kind = cmd.get("cmd")
            if kind == "exit":
                break
            try:
                if kind == "warm":
                    parent.reply(worker.warm(cmd))
                elif kind == "run":
                    parent.reply(worker.run(cmd))
                elif kind == "many":
                    parent.reply(hold_many(cmd))
                else:
                    parent.reply({"fatal": f"unknown command {kind!r}"})
            except Exception as exc:
                parent.reply({"fatal": _one_line(exc)})
    finally:
        worker.close()
    return 0


# --------------------------------------------------------------------------- parent side


class WorkerPool(ProcessPool):
    """``size`` worker processes, started at once and ready for commands.

    Use it as a context manager: leaving it asks every worker to exit, and kills (by
    PID, through its ``Popen``) any that has not exited 5 s later.
    """

    def __init__(self, size: int, log_dir: Path) -> None:
        super().__init__(
            __name__,
            [[] for _ in range(size)],
            log_dir,
            ready_timeout=READY_TIMEOUT,
            exit_grace=EXIT_GRACE,
        )

    def request(
        self, commands: dict[int, dict[str, Any]], deadline: float
    ) -> dict[int, dict[str, Any]]:
        """Send each worker its command, then collect one reply from each by ``deadline``
        (``time.monotonic()``). Raises :class:`WorkerError` when one is late, dies or
        reports a fatal error."""
        replies = super().request(commands, deadline)
        for index, payload in replies.items():
            if "fatal" in payload:
                raise self.error(index, payload["fatal"])
        return replies


@dataclass
class Slice:
    """What the workers of one slice did: every hold, and what went wrong."""

    contender: str
    workers: int
    start_ns: int
    stop_ns: int
    holds: list[Hold]
    failures: int
    overlaps_seen: int  # workers that found another one inside the critical section
    counted: int  # critical sections counted in the shared file
    error: str | None

    @property
    def seconds(self) -> float:
        return (self.stop_ns - self.start_ns) / 1e9

    def per_worker(self) -> list[int]:
        """Holds per worker, for every worker of the slice (zeros included)."""
        counts = [0] * self.workers
        for hold in self.holds:
            counts[hold.worker] += 1
        return counts


def integrity(slices: Sequence[Slice]) -> dict[str, Any]:
    """What went wrong in ``slices``, for a figure's summary: failed calls, overlapping
    holds (by their intervals, and as the workers saw them in the shared file), whether
    the shared counter agrees with the holds, and the first error met."""
    errors = [piece.error for piece in slices if piece.error]
    return {
        "failures": sum(piece.failures for piece in slices),
        "overlaps": sum(
            sum(1 for _ in overlapping_pairs(piece.holds)) + piece.overlaps_seen for piece in slices
        ),
        "counter_ok": all(piece.counted == len(piece.holds) for piece in slices),
        "first_error": errors[0] if errors else None,
    }


#: Lead time between sending a slice's commands and its start, so every worker begins
#: at the same instant.
_LEAD: Final = 0.3


def run_slice(
    pool: WorkerPool,
    *,
    contender: str,
    mode: str,
    workers: int,
    urls: Sequence[str],
    name: str,
    seconds: float,
    shared_dir: Path,
    hold: tuple[float, float] = (0.0, 0.0),
) -> Slice:
    """Run the first ``workers`` workers of ``pool`` on lock ``name`` for ``seconds``."""
    shared = new_shared_file(shared_dir)
    try:
        start = time.monotonic_ns() + int(_LEAD * 1e9)
        stop = start + int(seconds * 1e9)
        commands = {
            index: {
                "cmd": "run",
                "mode": mode,
                "contender": contender,
                "urls": list(urls),
                "name": name,
                "slot": index + 1,
                "start_ns": start,
                "stop_ns": stop,
                "hold": list(hold),
                "shared": str(shared),
            }
            for index in range(workers)
        }
        deadline = time.monotonic() + _LEAD + seconds + REPLY_GRACE
        replies = pool.request(commands, deadline)
        counted = read_shared(shared)
    finally:
        shared.unlink(missing_ok=True)
    holds = [
        Hold(index, start=acquired, end=releasing, released=released)
        for index, reply in replies.items()
        for acquired, releasing, released in reply["holds"]
    ]
    errors = [reply["error"] for reply in replies.values() if reply["error"]]
    return Slice(
        contender=contender,
        workers=workers,
        start_ns=start,
        stop_ns=stop,
        holds=holds,
        failures=sum(int(reply["failures"]) for reply in replies.values()),
        overlaps_seen=sum(int(reply["overlaps_seen"]) for reply in replies.values()),
        counted=counted,
        error=errors[0] if errors else None,
    )


def warm_up(
    pool: WorkerPool, urls: Sequence[str], contenders: Sequence[str], run_id: str
) -> dict[str, str]:
    """Every worker connects every contender (one cycle on a private key); returns each
    contender's status, the first problem any worker met, or ``ok``."""
    commands = {
        index: {
            "cmd": "warm",
            "urls": list(urls),
            "contenders": list(contenders),
            "name": f"quorumlock-bench:warm:{run_id}:{index}",
        }
        for index in range(len(pool))
    }
    replies = pool.request(commands, time.monotonic() + READY_TIMEOUT)
    status: dict[str, str] = {}
    for reply in replies.values():
        for slug, state in reply["status"].items():
            if status.get(slug, "ok") == "ok":
                status[slug] = state
    return status
