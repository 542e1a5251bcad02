"""Asyncio acquire+release benchmark: ``quorumlock.asyncio`` next to the other asyncio Redlocks.

Every contender locks N = 5 servers, the same ones, in the same run and on the same event
loop, in three scenarios:

1. **One task**, uncontended: cycle after cycle on one key (create a lock, acquire it
   without blocking, release it). Latency (p50, p99) and cycles per second: the fixed
   cost of an asyncio lock.
2. **Many tasks** (1,000 by default), each cycling on a key of its own, all at once on
   one event loop: completed cycles per second for the whole process, and how many
   cycles failed. quorumlock pipelines every task's request over one connection per
   server, so a fan-out round waits behind the replies to up to 1,000 other requests;
   its default per-server timeout (derived from the ttl: 50 ms for 10 s) is shorter than
   such a round can take on a loaded 2-core machine, so this scenario gives quorumlock
   ``instance_timeout=2.0`` (the report says so).
3. **Many tasks on one key** (as many, the same ``instance_timeout``): each task waits
   for the lock (a blocking acquire, up to the end of the slice) and releases it at
   once, again and again: acquisitions per second for the whole process, the waits
   the slice's end cut short not counted. Web handlers guarding one record are this.

Contenders:

* quorumlock: ``rl = Redlock(urls)`` once (``quorumlock.asyncio``), then per cycle
  ``lock = rl.lock(key, ttl=10.0)``, ``await lock.acquire(blocking=False)``,
  ``await lock.release()``;
* pottery 3.x ``AIORedlock(key=..., masters={redis.asyncio.Redis, ...},
  auto_release_time=10)`` (seconds: pottery sends ``int(auto_release_time * 1000)`` as
  ``PX``), ``acquire(blocking=False)``, ``release()``;
* aioredlock (on aioredis 1.3.1): ``Aioredlock(urls, retry_count=1)`` once, then
  ``await lm.lock(key, lock_timeout=10)`` (seconds), ``await lm.unlock(lock)``. One try,
  like ``blocking=False``. Reported as ``not usable: <reason>`` if it cannot run here.

In scenario 3 the acquires wait: quorumlock's ``acquire(timeout=left)``, pottery's
``acquire(blocking=True, timeout=left)``, and aioredlock's ``lock`` with
``retry_count=1000`` (it has no timeout: its pauses, 0.1 to 0.3 s, go on until the
retries are spent) under ``asyncio.wait_for(..., left)``, ``left`` being the time to the
slice's end.

The method is the one of ``uncontended.py`` (and reuses its result and report code):
warm-up, then rounds in which every contender gets one time slice, in an order rotated
from round to round; medians over rounds. Run ``python -m
quorumlock.benchmarks.asyncio_cycles --help`` for the options; README.md next to this
file explains the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import secrets
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

import redis.asyncio

from quorumlock.asyncio import Redlock
from quorumlock.benchmarks._common import (
    NotInstalled,
    clip,
    describe_environment,
    environment,
    import_peer,
    local_servers,
    on_sigterm,
    rotated,
    server_description,
    version,
)
from quorumlock.benchmarks.uncontended import (
    Batch,
    ContenderResult,
    Ratio,
    compute_ratios,
    ratios_table,
    results_table,
)

__all__ = ["BenchConfig", "Scenario", "main", "run_scenario"]

TTL_SECONDS: Final = 10
SERVERS: Final = 5
#: Socket timeouts of the redis-py clients pottery is given.
SOCKET_TIMEOUT: Final = 5.0
#: Connections per server for pottery's clients in the many-task scenario (see PotteryRunner).
POTTERY_POOL: Final = 100
#: A slice whose tasks are still running this long after its end is cut short: the
#: cycles in flight are cancelled and the slice is reported. No loop can outlive it.
OVERRUN_GRACE: Final = 10.0
#: A task that fails this many cycles in a row stops for the rest of the slice.
MAX_FAILURE_STREAK: Final = 50
KEY_PREFIX: Final = "quorumlock-bench:asyncio"
#: aioredlock's tries per acquire in scenario 3, where it waits (it has no timeout).
AIOREDLOCK_WAITING_RETRIES: Final = 1000


# --------------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Scenario:
    """One of the two workloads: how many tasks, and quorumlock's per-server timeout."""

    slug: str
    title: str
    tasks: int
    instance_timeout: float | None = None
    one_key: bool = False  # the tasks wait for one key in turn (blocking acquires)

    def ratios(self) -> tuple[Ratio, ...]:
        tag = f"[{self.slug}] "
        if self.one_key:
            return (
                Ratio(
                    tag + "quorumlock async N=5 acquisitions/s / pottery AIORedlock N=5",
                    "quorumlock",
                    "pottery",
                    "cycles_per_second",
                ),
                Ratio(
                    tag + "quorumlock async N=5 acquisitions/s / aioredlock N=5",
                    "quorumlock",
                    "aioredlock",
                    "cycles_per_second",
                ),
            )
        return (
            Ratio(
                tag + "quorumlock async N=5 cycles/s / pottery AIORedlock N=5 cycles/s",
                "quorumlock",
                "pottery",
                "cycles_per_second",
                3.0,
            ),
            Ratio(
                tag + "quorumlock async N=5 cycles/s / aioredlock N=5 cycles/s",
                "quorumlock",
                "aioredlock",
                "cycles_per_second",
            ),
        )


def scenarios(tasks: int, instance_timeout: float) -> tuple[Scenario, Scenario, Scenario]:
    return (
        Scenario("1 task", "scenario 1: one task, uncontended, cycles in sequence on one key", 1),
        Scenario(
            f"{tasks:,} tasks",
            f"scenario 2: {tasks:,} tasks at once, each on its own key; quorumlock runs "
            f"with Redlock(urls, instance_timeout={instance_timeout!r})",
            tasks,
            instance_timeout,
        ),
        Scenario(
            f"{tasks:,} tasks, one key",
            f"scenario 3: {tasks:,} tasks at once, all waiting for one key in turn; "
            f"quorumlock runs with Redlock(urls, instance_timeout={instance_timeout!r})",
            tasks,
            instance_timeout,
            one_key=True,
        ),
    )


class AsyncRunner(Protocol):
    """One contender, connected: ``cycle`` is one acquire+release on ``key``."""

    async def cycle(self, key: str) -> bool:
        """Acquire without blocking, then release; True if both succeeded."""
        ...

    async def turn(self, key: str, timeout: float) -> bool:
        """Wait up to ``timeout`` for the lock, then release; True if both succeeded."""
        ...

    async def aclose(self) -> None:
        """Close every connection this runner opened."""
        ...


class QuorumlockRunner:
    """``quorumlock.asyncio.Redlock`` as users write it: one per process, a lock per use."""

    def __init__(self, urls: Sequence[str], scenario: Scenario) -> None:
        self._redlock = Redlock(list(urls), instance_timeout=scenario.instance_timeout)

    async def cycle(self, key: str) -> bool:
        lock = self._redlock.lock(key, ttl=float(TTL_SECONDS))
        if not await lock.acquire(blocking=False):
            return False
        return await lock.release()

    async def turn(self, key: str, timeout: float) -> bool:
        lock = self._redlock.lock(key, ttl=float(TTL_SECONDS))
        if not await lock.acquire(timeout=timeout):
            return False
        return await lock.release()

    async def aclose(self) -> None:
        await self._redlock.close()


class PotteryRunner:
    """pottery 3.x ``AIORedlock`` on one ``redis.asyncio.Redis`` client per server.

    With one task, the clients are what pottery's docs show (``Redis.from_url``). With
    many, each client gets a ``BlockingConnectionPool`` of redis-py's default size (100):
    the default pool raises ``MaxConnectionsError`` once 100 commands are in flight on a
    server, which fails most of pottery's cycles at 1,000 tasks (and the keys their
    failed releases leave behind fail the next cycles on them too).
    """

    def __init__(self, urls: Sequence[str], scenario: Scenario) -> None:
        self._aioredlock_class = import_peer("pottery").AIORedlock
        pools = [
            redis.asyncio.ConnectionPool.from_url(
                url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT
            )
            if scenario.tasks == 1
            else redis.asyncio.BlockingConnectionPool.from_url(
                url,
                max_connections=POTTERY_POOL,
                timeout=SOCKET_TIMEOUT,  # the longest wait for a free connection
                socket_timeout=SOCKET_TIMEOUT,
                socket_connect_timeout=SOCKET_TIMEOUT,
            )
            for url in urls
        ]
        self._clients = [redis.asyncio.Redis(connection_pool=pool) for pool in pools]
        self._masters = frozenset(self._clients)

    async def cycle(self, key: str) -> bool:
        lock = self._aioredlock_class(key=key, masters=self._masters, auto_release_time=TTL_SECONDS)
        if not await lock.acquire(blocking=False):
            return False
        await lock.release()  # raises ReleaseUnlockedLock without a majority
        return True

    async def turn(self, key: str, timeout: float) -> bool:
        lock = self._aioredlock_class(key=key, masters=self._masters, auto_release_time=TTL_SECONDS)
        if not await lock.acquire(blocking=True, timeout=timeout):
            return False
        await lock.release()
        return True

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose(close_connection_pool=True)


class AioredlockRunner:
    """aioredlock's ``Aioredlock`` (aioredis 1.x pools), one try per lock."""

    def __init__(self, urls: Sequence[str], scenario: Scenario) -> None:
        retries = AIOREDLOCK_WAITING_RETRIES if scenario.one_key else 1
        self._manager = import_peer("aioredlock").Aioredlock(list(urls), retry_count=retries)
        self._error = import_peer("aioredlock").LockError

    async def cycle(self, key: str) -> bool:
        lock = await self._manager.lock(key, lock_timeout=TTL_SECONDS)  # LockError if not
        await self._manager.unlock(lock)  # LockError without a majority
        return True

    async def turn(self, key: str, timeout: float) -> bool:
        try:
            lock = await asyncio.wait_for(
                self._manager.lock(key, lock_timeout=TTL_SECONDS), timeout
            )
        except (TimeoutError, self._error):
            return False
        await self._manager.unlock(lock)
        return True

    async def aclose(self) -> None:
        await self._manager.destroy()


@dataclass(frozen=True)
class AsyncContender:
    """How to build one contender (every one locks ``SERVERS`` servers)."""

    slug: str
    label: str
    package: str
    factory: Callable[[Sequence[str], Scenario], AsyncRunner]


CONTENDERS: Final[tuple[AsyncContender, ...]] = (
    AsyncContender("quorumlock", "quorumlock asyncio", "quorumlock", QuorumlockRunner),
    AsyncContender("pottery", "pottery AIORedlock", "pottery", PotteryRunner),
    AsyncContender("aioredlock", "aioredlock", "aioredlock", AioredlockRunner),
)


# --------------------------------------------------------------------------- measuring


@dataclass
class _Tally:
    """What the tasks of one slice recorded, together (one event loop: no locking)."""

    latencies_ns: list[int] = field(default_factory=list)
    cycles: int = 0
    failures: int = 0
    error: str | None = None


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return clip(text.splitlines()[0] if text else type(exc).__name__, 120)


async def _cycle_until(
    runner: AsyncRunner, key: str, deadline_ns: int, tally: _Tally, *, wait: bool
) -> None:
    """One task's share of a slice: cycle on ``key`` until the deadline, timing each
    (``wait``: with blocking acquires that give up at the deadline; one that does is
    not counted)."""
    clock = time.perf_counter_ns
    record = tally.latencies_ns.append
    streak = 0
    while True:
        began = clock()
        try:
            if wait:
                ok = await runner.turn(key, max(0.0, (deadline_ns - began) / 1e9))
            else:
                ok = await runner.cycle(key)
        except Exception as exc:  # a failing contender is reported, never fatal
            ok = False
            if tally.error is None:
                tally.error = _one_line(exc)
        ended = clock()
        if wait and not ok and ended >= deadline_ns:
            return  # the slice's end cut its wait short
        tally.cycles += 1
        if ok:
            record(ended - began)
            streak = 0
        else:
            tally.failures += 1
            streak += 1
            if streak >= MAX_FAILURE_STREAK:
                return
        if ended >= deadline_ns:
            return


async def run_slice(
    runner: AsyncRunner, keys: Sequence[str], seconds: float, *, wait: bool = False
) -> Batch:
    """One task per key, all cycling for ``seconds``; the slice ends when the last stops.

    A task starts no cycle after the deadline, so the slice lasts ``seconds`` plus the
    cycles in flight then; the rate is completed cycles over that whole time. Tasks still
    running ``OVERRUN_GRACE`` seconds after the deadline are cancelled. ``wait``: the
    acquires wait for the lock, up to the deadline (``keys`` may repeat a key).
    """
    tally = _Tally()
    started = time.perf_counter_ns()
    deadline = started + int(seconds * 1e9)
    tasks = [
        asyncio.ensure_future(_cycle_until(runner, k, deadline, tally, wait=wait)) for k in keys
    ]
    try:
        _, late = await asyncio.wait(tasks, timeout=seconds + OVERRUN_GRACE)
    finally:
        elapsed = time.perf_counter_ns() - started
        stragglers = [task for task in tasks if not task.done()]
        for task in stragglers:
            task.cancel()
        if stragglers:  # bounded too: a task that ignores its cancellation is left behind
            await asyncio.wait(stragglers, timeout=OVERRUN_GRACE)
    if late:
        tally.error = f"{len(late)} task(s) overran the slice by {OVERRUN_GRACE:g} s"
    return Batch(tally.latencies_ns, tally.cycles, tally.failures, elapsed, tally.error)


@dataclass(frozen=True)
class BenchConfig:
    """How long and how often to measure (see ``--help``)."""

    rounds: int = 5
    slice_seconds: float = 2.0
    warmup_seconds: float = 1.0
    tasks: int = 1000
    instance_timeout: float = 2.0
    collect_garbage: bool = True


async def _close(runner: AsyncRunner) -> None:
    # Bounded: a server that stopped answering must not hang the exit, and one runner
    # that fails to close must not keep the others open.
    with contextlib.suppress(Exception):
        await asyncio.wait_for(runner.aclose(), SOCKET_TIMEOUT)


async def run_scenario(
    scenario: Scenario,
    urls: Sequence[str],
    config: BenchConfig,
    *,
    log: Callable[[str], None],
) -> list[ContenderResult]:
    """Warm up every contender, then ``config.rounds`` rotated rounds of one slice each."""
    run_id = secrets.token_hex(4)
    results: list[ContenderResult] = []
    runners: dict[str, AsyncRunner] = {}
    keys: dict[str, list[str]] = {}
    try:
        for contender in CONTENDERS:
            result = ContenderResult(
                contender.label,
                contender.slug,
                SERVERS,
                contender.package,
                version(contender.package),
            )
            results.append(result)
            try:
                runner = contender.factory(urls, scenario)
            except NotInstalled as exc:
                result.status = str(exc)  # "not installed (<the ImportError>)"
                continue
            except Exception as exc:  # aioredis 1.x may not even import on a new Python
                result.status = f"not usable: {_one_line(exc)}"
                continue
            runners[contender.slug] = runner
            prefix = f"{KEY_PREFIX}:{contender.slug}:{run_id}"
            keys[contender.slug] = [
                prefix if scenario.one_key else f"{prefix}:{i}" for i in range(scenario.tasks)
            ]
            # Warm-up: connections opened (all of them, for the many-task scenario),
            # scripts cached on the servers, code paths hot. Not recorded.
            warm = await run_slice(
                runner, keys[contender.slug], config.warmup_seconds, wait=scenario.one_key
            )
            if not warm.latencies_ns:
                result.status = f"not usable: {warm.error or 'no cycle succeeded'}"
                await _close(runners.pop(contender.slug))
            else:
                log(f"{scenario.slug}: {contender.label} warmed up")

        active = list(filter(lambda r: r.slug in runners, results))
        for round_index in range(config.rounds):
            for result in rotated(active, round_index):
                if config.collect_garbage:
                    gc.collect()  # nobody pays for the previous contender's garbage
                runner = runners[result.slug]
                batch = await run_slice(
                    runner, keys[result.slug], config.slice_seconds, wait=scenario.one_key
                )
                result.batches.append(batch)
                if not batch.latencies_ns:
                    result.status = f"failed: {batch.error or 'no cycle succeeded'}"
                    await _close(runners.pop(result.slug))
                continue
            active = list(filter(lambda r: r.slug in runners, active))
            log(f"{scenario.slug}: round {round_index + 1}/{config.rounds} done")
    finally:
        for runner in runners.values():
            await _close(runner)
    return results


# --------------------------------------------------------------------------- report


LEGEND: Final = """\
N = servers per lock; ttl 10 s. median us = p50, p99 us: nearest rank, over every timed
cycle of the run (scenario 2: each cycle timed in its own task, queueing included).
cycles/s: median over rounds of (completed cycles / slice time, the cycles in flight at
the end of the slice included); failed: cycles that returned False or raised (scenario
3: the acquires the slice's end cut short are neither). Ratios: from the run's medians;
'rounds' is the range of the same ratio round by round."""


@dataclass(frozen=True)
class Section:
    """One scenario's outcome: a summary per contender and the ratios between them."""

    scenario: Scenario
    summaries: list[dict[str, Any]]
    ratios: list[dict[str, Any]]

    def render(self) -> str:
        return "\n".join(
            [
                self.scenario.title,
                "",
                results_table(self.summaries),
                "",
                ratios_table(self.ratios),
                "",
            ]
        )

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self.scenario), "results": self.summaries, "ratios": self.ratios}


async def _measure(
    urls: Sequence[str], config: BenchConfig, log: Callable[[str], None]
) -> list[Section]:
    # SIGTERM cancels the run like Ctrl-C does, so every runner closes its connections
    # (``finally`` in run_scenario) before the servers stop.
    main_task = asyncio.current_task()
    assert main_task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    sections = []
    try:
        for scenario in scenarios(config.tasks, config.instance_timeout):
            results = await run_scenario(scenario, urls, config, log=log)
            summaries = [r.summary() for r in results]
            ratios = compute_ratios({s["slug"]: s for s in summaries}, scenario.ratios())
            sections.append(Section(scenario, summaries, ratios))
    except asyncio.CancelledError:
        # Interrupted: the cycles cut short leave some contenders' inner tasks (pottery's
        # per-server requests) to fail on closed connections. Their "exception was never
        # retrieved" reports say nothing about the benchmark: drop them.
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)
        raise
    return sections


# --------------------------------------------------------------------------- main


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    defaults = BenchConfig()
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.asyncio_cycles",
        description="Asyncio Redlocks (N=5) side by side in one run: quorumlock.asyncio, "
        "pottery AIORedlock, aioredlock; one task, many tasks at once on keys of their own, "
        "and as many waiting for one key in turn.",
    )
    parser.add_argument("--rounds", type=int, help=f"rotated rounds ({defaults.rounds})")
    parser.add_argument(
        "--slice",
        type=float,
        help=f"seconds per contender, scenario and round ({defaults.slice_seconds:g})",
    )
    parser.add_argument(
        "--warmup", type=float, help=f"warm-up seconds per contender ({defaults.warmup_seconds:g})"
    )
    parser.add_argument(
        "--tasks", type=int, help=f"tasks in the concurrency scenario ({defaults.tasks})"
    )
    parser.add_argument(
        "--instance-timeout",
        type=float,
        help="quorumlock's per-server timeout in the concurrency scenario, seconds "
        f"({defaults.instance_timeout:g})",
    )
    parser.add_argument(
        "--servers",
        help=f"comma-separated URLs of {SERVERS} servers to use instead of starting local "
        f"ones (keys start with {KEY_PREFIX}: and are left to expire)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write every number here")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run of about 5 s: 1 round, short slices, 100 tasks, every contender",
    )
    parser.add_argument(
        "--no-gc-collect", action="store_false", dest="gc_collect", help="no gc.collect()"
    )
    parser.add_argument(
        "--fail-on-miss", action="store_true", help="exit 1 when a target is missed"
    )
    return parser.parse_args(argv)


def _config(args: argparse.Namespace) -> BenchConfig:
    base = BenchConfig()
    if args.quick:
        base = BenchConfig(rounds=1, slice_seconds=0.4, warmup_seconds=0.25, tasks=100)
    chosen = {
        "rounds": args.rounds,
        "slice_seconds": args.slice,
        "warmup_seconds": args.warmup,
        "tasks": args.tasks,
        "instance_timeout": args.instance_timeout,
    }
    overrides = {name: value for name, value in chosen.items() if value is not None}
    config = BenchConfig(**{**asdict(base), **overrides, "collect_garbage": args.gc_collect})
    if config.rounds < 1 or config.tasks < 1:
        raise SystemExit("error: --rounds and --tasks must be >= 1")
    if not (0 < config.slice_seconds <= 60 and 0 < config.warmup_seconds <= 60):
        raise SystemExit("error: --slice and --warmup must be in (0, 60]")
    if not 0 < config.instance_timeout <= 30:
        raise SystemExit("error: --instance-timeout must be in (0, 30]")
    return config


def _progress(message: str) -> None:
    print(f"  ... {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    config = _config(args := _parse_args(argv))
    signal.signal(signal.SIGTERM, on_sigterm)  # servers stop on SIGTERM too
    began = time.monotonic()
    try:
        with local_servers(args.servers) as (given, started):
            if len(given) < SERVERS:
                raise SystemExit(f"error: --servers needs {SERVERS} URLs, got {len(given)}")
            urls = given[:SERVERS]
            meta: dict[str, Any] = {
                "config": {**asdict(config), "ttl_seconds": TTL_SECONDS},
                "servers": server_description(urls, started),
                "loop": "asyncio (default event loop)",
                **environment(),
            }
            _progress(f"servers ready: {', '.join(urls)}")
            try:
                sections = asyncio.run(_measure(urls, config, _progress))
            finally:  # the loop's SIGTERM handler is gone with it: cover the servers' stop
                signal.signal(signal.SIGTERM, on_sigterm)
    except KeyboardInterrupt:
        print("interrupted; connections and servers closed", file=sys.stderr)
        return 130
    except asyncio.CancelledError:  # SIGTERM during the run
        print("terminated; connections and servers closed", file=sys.stderr)
        return 128 + signal.SIGTERM
    meta["wall_seconds"] = round(time.monotonic() - began, 2)

    print(
        f"asyncio acquire+release, N={SERVERS}: {config.rounds} round(s) x "
        f"{config.slice_seconds:g} s per contender and scenario (rotated order), "
        f"warm-up {config.warmup_seconds:g} s"
    )
    print(f"servers: {meta['servers']['description']}")
    print(f"client: {describe_environment(meta)}, {meta['loop']}")
    print()
    for section in sections:
        print(section.render())
    print(LEGEND)
    print(f"(wall time {meta['wall_seconds']:.1f} s)")
    if args.json is not None:
        document = {"meta": meta, "scenarios": [section.as_json() for section in sections]}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    missed = any(r["result"] == "MISS" for section in sections for r in section.ratios)
    return 1 if args.fail_on_miss and missed else 0


if __name__ == "__main__":
    sys.exit(main())
