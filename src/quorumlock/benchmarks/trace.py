"""Where a hand-over's time goes: ``python -m quorumlock.benchmarks.trace``.

Figure 2's loop (W waiting processes and a holder on one name, N = 5, holds uniform in
5-105 ms, a releaser asking again only once another process holds the lock, or after 2
s), with every process recording its rounds: when each ended, how long it took, how many
servers granted it, and each server's latency in it (a
:class:`~quorumlock.LockObserver`). The processes start together once each has
connected. Reported per W: the hand-overs (the release call's return to the next
holder's acquire call's return, in another process), their median, p90, p99 and largest;
then where the median hand-over's time goes: when the next holder's successful acquire
round began, from the release's return (negative: before it returned), how long that
round took and the latency of its first to fifth reply, and the time from the round's
end to the acquire call's return (medians over the hand-overs); for the slowest
hand-overs, every round of every process that ended in its window (from the release
call, or 2 ms before it returned if that is earlier, to 1 ms after the next holder's
acquire returned); and how crowded the host's run queue was meanwhile: the benchmark's
own process sleeps 1 ms at a time while the others loop, and counts the wake-ups that
came more than 3 ms late (a process runnable, waiting for a core). An acquire that
raises :class:`~quorumlock.QuorumUnavailable` (too few servers answered within the
per-instance timeout: the host stalled) is counted and the loop goes on; a line under
the report gives the count. This is where docs/benchmarks.md's numbers on a hand-over's
parts come from. Numbers only: nothing here is judged against a time.
"""

from __future__ import annotations

import argparse
import faulthandler
import itertools
import math
import multiprocessing
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from quorumlock import LockObserver, QuorumUnavailable, Redlock, RoundEvent
from quorumlock.benchmarks._common import (
    GRACE,
    bounded,
    each_count,
    local_servers,
    percentile,
    ready_to_loop,
    unavailable_line,
    worker_processes,
)
from quorumlock.testing import Hold

__all__ = ["Probe", "Round", "TraceResult", "main", "measure", "probe_run_queue", "render"]

SERVERS: Final = 5
NAME: Final = "trace"

#: The holds, as figure 2 of the suite has them (seconds).
HOLD: Final = (0.005, 0.105)

#: How long a releaser waits for another process to take the lock before it asks again.
REJOIN_AFTER: Final = 2.0

#: How often a releaser looks whether another process took the lock (seconds).
REJOIN_POLL: Final = 0.001

#: Seconds a worker process's first acquire (on a name of its own) may take.
WARM_UP: Final = 10.0

#: The run queue's probe sleeps this long at a time (seconds) ...
PROBE_SLEEP: Final = 0.001
#: ... and counts the wake-ups later than this after a sleep's end (seconds).
PROBE_LATE: Final = 0.003


@dataclass(frozen=True, slots=True)
class Round:
    """One round of one process: when it ended (``time.monotonic_ns()``), its op, how
    long it took (ms), how many servers granted or confirmed it, and the latencies (ms)
    of the servers that answered, sorted."""

    worker: int
    ended: int
    op: str
    ms: float
    ok: int
    latencies: tuple[float, ...]

    @property
    def began(self) -> float:
        """When it began (``time.monotonic_ns()`` units)."""
        return self.ended - self.ms * 1e6


@dataclass(frozen=True, slots=True)
class Parts:
    """Where one hand-over's time went (ms): from the release's return to the start of
    the next holder's successful acquire round (negative: before the return), that
    round, and from its end to the acquire call's return; the round's reply latencies."""

    total: float
    before_round: float
    round: float
    after_round: float
    latencies: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    """What :func:`probe_run_queue` saw."""

    wake_ups: int
    late: int  # wake-ups more than PROBE_LATE after their sleep's end
    latest: float  # ms: how late the latest wake-up came


def probe_run_queue(seconds: float) -> Probe:
    """Sleep :data:`PROBE_SLEEP` at a time for ``seconds``, and count the wake-ups that
    came more than :data:`PROBE_LATE` after the sleep's end: a sleeping process woken
    that late was runnable, waiting for a core (on an idle machine none is)."""
    wake_ups = late = 0
    latest = 0.0
    end = time.monotonic() + seconds
    while (began := time.monotonic()) < end:
        time.sleep(PROBE_SLEEP)
        behind = time.monotonic() - began - PROBE_SLEEP
        wake_ups += 1
        if behind > PROBE_LATE:
            late += 1
        latest = max(latest, behind)
    return Probe(wake_ups, late, latest * 1e3)


@dataclass(frozen=True)
class TraceResult:
    waiters: int
    seconds: float
    handovers: tuple[float, ...]  # ms, sorted
    parts: tuple[Parts, ...]
    slowest: tuple[tuple[float, Hold, Hold, tuple[Round, ...]], ...] = field(default=())
    probe: Probe | None = None  # the run queue while the processes looped
    # acquires that raised QuorumUnavailable in the loop (counted, and the loop went on)
    unavailable: int = 0


@dataclass(frozen=True, slots=True)
class _Job:
    urls: list[str]
    seconds: float
    index: int
    holder: Any  # a shared integer: the index of the process holding the lock last
    warm_up: float


class _Rounds(LockObserver):
    def __init__(self, index: int) -> None:
        self.index = index
        self.rounds: list[Round] = []

    def on_round(self, event: RoundEvent) -> None:
        latencies = sorted(o.latency * 1e3 for o in event.outcomes if o.latency is not None)
        ok = sum(1 for o in event.outcomes if o.reply.ok)
        self.rounds.append(
            Round(self.index, time.monotonic_ns(), event.op, event.seconds * 1e3, ok,
                  tuple(latencies))
        )  # fmt: skip


def _loop(job: _Job, out: Any, gate: Any) -> None:
    observer = _Rounds(job.index)
    redlock = Redlock(job.urls, observer=observer)
    pick = random.Random(job.index)
    holds: list[Hold] = []
    unavailable = 0
    # a first cycle on another name: connected, the scripts loaded
    start = ready_to_loop(redlock, f"{NAME}:warm-up", job.warm_up, gate, loop=job.seconds)
    stop = start + job.seconds
    observer.rounds.clear()  # the loop's rounds only
    while time.time() < stop:
        lock = redlock.lock(NAME, ttl=10.0)
        try:
            if not lock.acquire(timeout=max(0.01, stop - time.time())):
                continue
        except QuorumUnavailable:  # a stall of a loaded host: counted, reported
            unavailable += 1
            continue
        got = time.monotonic_ns()
        job.holder.value = job.index
        time.sleep(pick.uniform(*HOLD))
        releasing = time.monotonic_ns()
        lock.release()
        holds.append(Hold(job.index, got, releasing, released=time.monotonic_ns()))
        asked = time.monotonic()
        while job.holder.value == job.index and time.time() < stop:
            if time.monotonic() - asked >= REJOIN_AFTER:
                break
            time.sleep(REJOIN_POLL)
    redlock.close()
    out.put((holds, observer.rounds, unavailable))
    faulthandler.cancel_dump_traceback_later()


def _released(hold: Hold) -> float:
    """When ``hold``'s release call returned."""
    return hold.end if hold.released is None else hold.released


def _parts(before: Hold, after: Hold, rounds: Sequence[Round]) -> Parts | None:
    """Where the hand-over from ``before`` to ``after`` went, from ``after``'s process's
    rounds (None where its successful acquire round is not among them)."""
    released = _released(before)
    granted = [
        r for r in rounds
        if r.worker == after.worker and r.op == "acquire" and r.ok * 2 > SERVERS
        and before.start < r.ended <= after.start
    ]  # fmt: skip
    if not granted:
        return None
    last = granted[-1]
    return Parts(
        total=(after.start - released) / 1e6,
        before_round=(last.began - released) / 1e6,
        round=last.ms,
        after_round=(after.start - last.ended) / 1e6,
        latencies=last.latencies,
    )


def measure(
    urls: list[str], waiters: int, seconds: float, *, slowest: int = 3, warm_up: float = WARM_UP
) -> TraceResult:
    """Run figure 2's loop in ``waiters`` + 1 fresh processes for ``seconds``, each
    recording its rounds; keep the rounds around the ``slowest`` hand-overs. Raises
    :class:`~quorumlock.benchmarks._common.WorkersNotReady` where a process got no lock
    within ``warm_up`` seconds (or failed otherwise; its error is on standard error)."""
    holder = multiprocessing.get_context("spawn").Value("i", -1, lock=False)
    jobs = [(_Job(urls, seconds, i, holder, warm_up),) for i in range(waiters + 1)]
    with worker_processes(_loop, jobs) as workers:
        workers.start()
        probe = probe_run_queue(seconds)  # while they loop
        reports = workers.collect(seconds + GRACE)
    holds = sorted((h for report in reports for h in report[0]), key=lambda h: h.start)
    rounds = sorted((r for report in reports for r in report[1]), key=lambda r: r.ended)
    gaps: list[tuple[float, Hold, Hold]] = []
    parts: list[Parts] = []
    for before, after in itertools.pairwise(holds):
        if before.worker == after.worker:
            continue
        released = _released(before)
        gaps.append(((after.start - released) / 1e6, before, after))
        found = _parts(before, after, rounds)
        if found is not None:
            parts.append(found)
    worst = []
    for gap, before, after in sorted(gaps, key=lambda g: g[0], reverse=True)[:slowest]:
        # from the release call on (its round, which a loaded host may end well before
        # the call returns), or 2 ms before the call returned where that is earlier
        opened = min(before.end, _released(before) - 2e6)
        window = tuple(r for r in rounds if opened <= r.ended <= after.start + 1e6)
        worst.append((gap, before, after, window))
    return TraceResult(
        waiters=waiters,
        seconds=seconds,
        handovers=tuple(sorted(g[0] for g in gaps)),
        parts=tuple(parts),
        slowest=tuple(worst),
        probe=probe,
        unavailable=sum(report[2] for report in reports),
    )


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.3f}" if values else "-"


def render(results: Sequence[TraceResult]) -> str:
    lines = []
    for r in results:
        gaps = r.handovers
        over = sum(1 for g in gaps if g > 2.0)
        lines.append(
            f"W = {r.waiters}: {len(gaps):,} hand-overs in {r.seconds:g} s; median "
            f"{percentile(gaps, 0.5):.2f} / p90 {percentile(gaps, 0.9):.2f} / p99 "
            f"{percentile(gaps, 0.99):.2f} / max {max(gaps, default=math.nan):.2f} ms; "
            f"over 2 ms: {over}"
        )
        parts = r.parts
        replies = " / ".join(
            _median([p.latencies[i] for p in parts if len(p.latencies) > i]) for i in range(SERVERS)
        )
        early = sum(1 for p in parts if p.before_round < 0)
        lines.append(
            f"  its parts (medians of {len(parts):,}, ms): the next holder's round began "
            f"{_median([p.before_round for p in parts])} after the release returned "
            f"({early:,} began before); the round {_median([p.round for p in parts])} "
            f"(replies 1-{SERVERS}: {replies}); then {_median([p.after_round for p in parts])}"
        )
        if r.probe is not None:
            lines.append(
                f"  the run queue meanwhile: a process sleeping {PROBE_SLEEP * 1e3:g} ms at a "
                f"time woke more than {PROBE_LATE * 1e3:g} ms late {r.probe.late:,} times of "
                f"{r.probe.wake_ups:,}, at most {r.probe.latest:.1f} ms late"
            )
        for gap, before, after, window in r.slowest:
            released = _released(before)
            lines.append(
                f"  a slow hand-over, {gap:.2f} ms: process {before.worker} released, "
                f"process {after.worker} acquired; the rounds that ended around it:"
            )
            for w in window:
                lines.append(
                    f"    {(w.ended - released) / 1e6:+8.2f} ms  process {w.worker:<3} "
                    f"{w.op:<8} {w.ms:7.2f} ms  {w.ok}/{SERVERS} granted or confirmed"
                )
    if line := unavailable_line("W", [(r.waiters, r.unavailable) for r in results]):
        lines.append(line)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.trace",
        description="Where a hand-over's time goes: figure 2's loop (W waiting processes "
        "and a holder on one name, N = 5), every process recording its rounds.",
    )
    parser.add_argument("--servers", help=f"{SERVERS} comma-separated URLs (default: local)")
    parser.add_argument(
        "--waiters",
        type=lambda text: [bounded(v, int, 64) for v in text.split(",")],
        default=[2, 8, 32],
        help="comma-separated counts of waiting processes (default 2,8,32)",
    )
    parser.add_argument(
        "--seconds", type=lambda t: bounded(t, float, 600, unit="s"), default=15.0,
        help="seconds per count (default 15)",
    )  # fmt: skip
    parser.add_argument(
        "--slowest", type=lambda t: bounded(t, int, 100, zero=True), default=3,
        help="the slowest hand-overs to show with their rounds (default 3)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) != SERVERS:
            parser.error(f"--servers needs {SERVERS} URLs, not {len(urls)}")
        slowest = args.slowest
        results = each_count(
            args.waiters, "W", lambda count: measure(urls, count, args.seconds, slowest=slowest)
        )
    print(f"N = {SERVERS}, one name, holds U[{HOLD[0] * 1e3:g}, {HOLD[1] * 1e3:g}] ms")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
