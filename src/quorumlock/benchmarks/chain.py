"""What a contended critical section costs: ``python -m quorumlock.benchmarks.chain``.

P processes loop on one name, N = 5 (``Redlock(urls).lock(name, ttl=10.0)``, a blocking
acquire, nothing held, a release, straight back to acquire), as figure 3 of the suite
does, and each records when its calls returned and how much CPU its main thread spent
in them. Reported per P: critical sections per second; the hand-overs (the next holder
is another process) and the take-backs (the releasing process is next), each with the
median and p90 of the time from the release's return to the next acquire's return;
the release call's median; and per critical section, the main threads' CPU time in
acquire and in release, the processes' voluntary context switches (start-up
included), the rounds sent (counted by a :class:`~quorumlock.LockObserver` in each
process: all of them, then the acquire attempts that failed, the joins of the queue of
waiters and the release rounds, the undo of a failed attempt included) and the CPU
time of the servers' processes (when they run on this machine). This is where
docs/benchmarks.md's numbers on the contended loop come from. Numbers only: nothing
here is judged against a time.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis

from quorumlock import LockObserver, Redlock, RoundEvent
from quorumlock.benchmarks._common import (
    GRACE,
    START,
    bounded,
    local_servers,
    percentile,
    table,
    worker_processes,
)
from quorumlock.benchmarks._common import handovers as gaps
from quorumlock.testing import Hold

__all__ = ["ChainResult", "main", "measure"]

SERVERS: Final = 5

#: ``Redlock``'s default ``busy_poll``.
BUSY_POLL: Final = 0.0002


@dataclass(frozen=True, slots=True)
class ChainResult:
    processes: int
    seconds: float
    sections: int
    # Sorted, in ms: release returned -> another process's acquire returned; -> the same
    # process's acquire returned; the release calls.
    handovers: tuple[float, ...]
    takebacks: tuple[float, ...]
    releases: tuple[float, ...]
    acquire_cpu: float  # main thread CPU seconds in acquire, all processes
    release_cpu: float
    switches: int  # voluntary context switches, all processes
    # rounds sent during the loop, all processes: ("acquire", n), ("acquire failed", n),
    # ("queue", n), ("release", n), ...
    rounds: tuple[tuple[str, int], ...] = ()
    server_cpu: float | None = None  # the servers' processes' CPU seconds; None: unknown

    def counted(self, what: str) -> int:
        return dict(self.rounds).get(what, 0)

    @property
    def rate(self) -> float:
        return self.sections / self.seconds


@dataclass(frozen=True, slots=True)
class _Job:
    urls: list[str]
    start: float  # wall clock, when the loop starts
    stop: float
    index: int
    busy_poll: float


class _Rounds(LockObserver):
    """Counts the rounds of one process by op, and the acquire attempts that failed."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def on_round(self, event: RoundEvent) -> None:
        counts = self.counts
        counts[event.op] = counts.get(event.op, 0) + 1
        if event.op == "acquire":
            took = sum(1 for o in event.outcomes if o.reply.ok)
            if took <= len(event.outcomes) // 2:
                counts["acquire failed"] = counts.get("acquire failed", 0) + 1


def _loop(job: _Job, out: Any) -> None:
    start, stop, index = job.start, job.stop, job.index
    rounds = _Rounds()
    redlock = Redlock(job.urls, busy_poll=job.busy_poll, observer=rounds)
    holds: list[Hold] = []
    acquire_cpu = release_cpu = 0.0
    time.sleep(max(0.0, start - time.time()))
    rounds.counts.clear()  # the loop's rounds only
    while time.time() < stop:
        lock = redlock.lock("chain", ttl=10.0)
        before = time.thread_time()
        acquired = lock.acquire(timeout=max(0.01, stop - time.time()))
        got = time.monotonic_ns()
        middle = time.thread_time()
        acquire_cpu += middle - before
        if acquired:
            releasing = time.monotonic_ns()
            lock.release()
            holds.append(Hold(index, got, releasing, released=time.monotonic_ns()))
            release_cpu += time.thread_time() - middle
    usage = resource.getrusage(resource.RUSAGE_SELF)
    counts = dict(rounds.counts)
    redlock.close()
    out.put((holds, acquire_cpu, release_cpu, usage.ru_nvcsw, counts))


def _server_cpu(urls: Sequence[str]) -> float | None:
    """CPU seconds used so far by the servers' processes, read from /proc by the
    process id each server gives (``INFO server``); None if any is not on this machine."""
    total = 0.0
    for url in urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        try:
            pid = int(client.info("server")["process_id"])
        except (redis.RedisError, KeyError, ValueError):
            return None
        finally:
            client.close()
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def measure(
    urls: list[str], processes: int, seconds: float, *, busy_poll: float = BUSY_POLL
) -> ChainResult:
    """Run the loop in ``processes`` fresh processes for ``seconds``, each with
    ``Redlock(urls, busy_poll=busy_poll)``."""
    start = time.time() + START
    jobs = [(_Job(urls, start, start + seconds, i, busy_poll),) for i in range(processes)]
    with worker_processes(_loop, jobs) as collect:
        time.sleep(max(0.0, start - time.time()))
        cpu_before = _server_cpu(urls)
        time.sleep(max(0.0, start + seconds - time.time()))
        cpu_after = _server_cpu(urls)
        reports = collect(START + seconds + GRACE)
    holds: list[Hold] = [hold for report in reports for hold in report[0]]
    counts: dict[str, int] = {}
    for report in reports:
        for op, count in report[4].items():
            counts[op] = counts.get(op, 0) + count

    def ms(values: list[float]) -> tuple[float, ...]:
        return tuple(sorted(value / 1e6 for value in values))

    def after_releases(same_worker: bool) -> list[float]:
        return gaps(holds, start=0, stop=sys.maxsize, same_worker=same_worker)

    return ChainResult(
        processes=processes,
        seconds=seconds,
        sections=len(holds),
        handovers=ms(after_releases(same_worker=False)),
        takebacks=ms(after_releases(same_worker=True)),
        releases=ms([h.released - h.end for h in holds if h.released is not None]),
        acquire_cpu=sum(r[1] for r in reports),
        release_cpu=sum(r[2] for r in reports),
        switches=sum(r[3] for r in reports),
        rounds=tuple(sorted(counts.items())),
        server_cpu=None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
    )


def _spread(samples: Sequence[float]) -> str:
    if not samples:
        return "-"
    return f"{percentile(samples, 0.5):.2f} / {percentile(samples, 0.9):.2f}"


def render(results: Sequence[ChainResult]) -> str:
    header = (
        "P", "cs/s", "hand-overs", "median / p90 ms", "take-backs", "median / p90 ms",
        "release ms", "CPU acquire ms/cs", "CPU release ms/cs", "switches/cs",
        "rounds/cs: all (failed tries, joins, releases)", "server CPU ms/cs",
    )  # fmt: skip
    rows = []
    for r in results:
        per = max(1, r.sections)
        every = sum(count for op, count in r.rounds if op != "acquire failed")
        parts = (r.counted(op) / per for op in ("acquire failed", "queue", "release"))
        rows.append(
            (
                str(r.processes),
                f"{r.rate:,.0f}",
                f"{len(r.handovers):,}",
                _spread(r.handovers),
                f"{len(r.takebacks):,}",
                _spread(r.takebacks),
                f"{percentile(r.releases, 0.5):.2f}" if r.releases else "-",
                f"{r.acquire_cpu / per * 1e3:.2f}",
                f"{r.release_cpu / per * 1e3:.2f}",
                f"{r.switches / per:.1f}",
                f"{every / per:.2f} ({', '.join(f'{x:.2f}' for x in parts)})",
                "-" if r.server_cpu is None else f"{r.server_cpu / per * 1e3:.2f}",
            )
        )
    return table(header, rows, right=set(range(len(header))))


def _processes(text: str) -> list[int]:
    try:
        counts = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of process counts: {text!r}") from None
    if not counts or any(p < 1 or p > 64 for p in counts):
        raise argparse.ArgumentTypeError("process counts must be 1 to 64")
    return counts


def _seconds(text: str) -> float:
    return bounded(text, float, 600, unit="seconds")


def _busy_poll(text: str) -> float:
    return bounded(text, float, 0.01, zero=True, unit="seconds")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.chain",
        description="What a contended critical section costs: P processes loop acquire "
        "and release on one name, N = 5.",
    )
    parser.add_argument("--servers", help="5 comma-separated URLs (default: local)")
    parser.add_argument(
        "--processes", type=_processes, default=[1, 2, 16],
        help="comma-separated process counts (default 1,2,16)",
    )  # fmt: skip
    parser.add_argument(
        "--seconds", type=_seconds, default=4.0, help="seconds per count (default 4)"
    )
    parser.add_argument(
        "--busy-poll", type=_busy_poll, default=BUSY_POLL,
        help=f"the Redlocks' busy_poll in seconds (default {BUSY_POLL:g})",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) != SERVERS:
            parser.error(f"--servers needs {SERVERS} URLs, not {len(urls)}")
        results = []
        for count in args.processes:
            results.append(measure(urls, count, args.seconds, busy_poll=args.busy_poll))
            print(f"P = {count}: done", file=sys.stderr)
    print(f"N = {SERVERS}, one name, {args.seconds:g} s per count, busy_poll={args.busy_poll:g}")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
