"""What a contended critical section costs: ``python -m quorumlock.benchmarks.chain``.

P processes loop on one name, N = 5 (``Redlock(urls).lock(name, ttl=10.0)``, a blocking
acquire, nothing held, a release, straight back to acquire), as figure 3 of the suite
does, all starting once every process has connected (a first acquire on a name of its
own), and each records when its calls returned and how much CPU its main thread spent
in them. Reported per P: critical sections per second; the hand-overs (the next holder
is another process) and the take-backs (the releasing process is next), each with the
median and p90 of the time from the release's return to the next acquire's return;
the release call's median; and per critical section, the main threads' CPU time in
acquire and in release, the processes' voluntary context switches and their
involuntary ones (taken off a core that another task was given; start-up included),
the rounds sent (counted by a :class:`~quorumlock.LockObserver` in each
process: all of them, then the acquire attempts that failed, the joins of the queue of
waiters and the release rounds, the undo of a failed attempt included), the median
duration of an acquire round (every attempt) and of a release round, as that observer
reports them (under contention a round takes longer than the same round at P = 1), the
CPU time of the servers' processes (when they run on this machine), and the share of
the host's CPU time that was idle while the loop ran (Linux: ``/proc/stat``). An acquire
that raises :class:`~quorumlock.QuorumUnavailable` (too few servers answered within the
per-instance timeout: the host stalled) is counted and the loop goes on; a line under
the table gives the count. This is where docs/benchmarks.md's numbers on the contended
loop come from. Numbers only: nothing here is judged against a time. ``--fair`` runs
the loop with ``Redlock(fair=True)`` (strict arrival order, docs/algorithm.md, "Fair
locks"), for what that costs.

With ``--overhear``, this process also subscribes to every release announcement of the
name on every server (one more subscriber per server, which the servers then publish to
as well, and whose threads take CPU time from the loop: it runs slower; compare its
critical sections with a run without) and reports, per P, whether the servers' queues
of waiters agreed: for each
release, the heads its servers named (the process each woke), grouped as one head on
every server that announced it, two heads or more, one head on some servers and nobody
(every listening process) on others, or nobody anywhere; and how many servers announced
each release (those that held the releaser's key).

With ``--pin-servers CPUS`` (servers on this machine, Linux), the servers' processes
are kept on those CPUs for the run (``sched_setaffinity``), the clients left where the
scheduler puts them: a diagnosis, not a setting to publish figures with. On a host whose
few cores the servers share with the clients (the suite's), it shows what the scheduler
costs the loop: docs/benchmarks-log.md has the runs.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import os
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

import redis

from quorumlock import LockObserver, QuorumUnavailable, Redlock, RoundEvent
from quorumlock._algorithm.scripts import RELEASED_PREFIX, WAKE_PREFIX
from quorumlock._io.wakeups import split_wake
from quorumlock.benchmarks._common import (
    GRACE,
    bounded,
    each_count,
    local_servers,
    percentile,
    ready_to_loop,
    table,
    unavailable_line,
    worker_processes,
)
from quorumlock.benchmarks._common import handovers as gaps
from quorumlock.testing import Hold

__all__ = ["ChainResult", "main", "measure"]

SERVERS: Final = 5

#: Seconds a worker process's first acquire (on a name of its own) may take.
WARM_UP: Final = 10.0

#: ``Redlock``'s default ``busy_poll``.
BUSY_POLL: Final = 0.0002

#: The name every process of the loop locks.
NAME: Final = "chain"

#: How a release's announcements agreed (``--overhear``), in the order reported.
AGREEMENT: Final = ("one head", "several heads", "a head and nobody", "nobody")


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
    # the durations of the rounds sent during the loop, all processes, sorted, in ms:
    # ("acquire", (...)), ("release", (...))
    round_ms: tuple[tuple[str, tuple[float, ...]], ...] = ()
    server_cpu: float | None = None  # the servers' processes' CPU seconds; None: unknown
    # with --overhear: releases by how their announcements agreed (AGREEMENT), and by
    # how many servers announced them; empty when not overheard
    agreement: tuple[tuple[str, int], ...] = ()
    announcers: tuple[tuple[int, int], ...] = ()
    # acquires that raised QuorumUnavailable in the loop (counted, and the loop went on)
    unavailable: int = 0
    # involuntary context switches, all processes: taken off a core for another task
    preempted: int = 0
    # the share of the host's CPU time that was idle during the loop; None: unknown
    host_idle: float | None = None

    def counted(self, what: str) -> int:
        return dict(self.rounds).get(what, 0)

    def round_median(self, op: str) -> float | None:
        """The median duration of the ``op`` rounds, in ms; None if none was sent."""
        durations = dict(self.round_ms).get(op, ())
        return percentile(durations, 0.5) if durations else None

    @property
    def rate(self) -> float:
        return self.sections / self.seconds


@dataclass(frozen=True, slots=True)
class _Job:
    urls: list[str]
    seconds: float  # how long the loop runs, from the gate
    index: int
    busy_poll: float
    fair: bool
    warm_up: float  # seconds its first acquire may take


class _Rounds(LockObserver):
    """Counts the rounds of one process by op, and the acquire attempts that failed;
    keeps the durations of the acquire and release rounds."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.seconds: dict[str, list[float]] = {"acquire": [], "release": []}

    def clear(self) -> None:
        self.counts.clear()
        for durations in self.seconds.values():
            durations.clear()

    def on_round(self, event: RoundEvent) -> None:
        counts = self.counts
        counts[event.op] = counts.get(event.op, 0) + 1
        if (durations := self.seconds.get(event.op)) is not None:
            durations.append(event.seconds)
        if event.op == "acquire":
            took = sum(1 for o in event.outcomes if o.reply.ok)
            if took <= len(event.outcomes) // 2:
                counts["acquire failed"] = counts.get("acquire failed", 0) + 1


def _loop(job: _Job, out: Any, gate: Any) -> None:
    index = job.index
    rounds = _Rounds()
    redlock = Redlock(job.urls, busy_poll=job.busy_poll, observer=rounds, fair=job.fair)
    holds: list[Hold] = []
    acquire_cpu = release_cpu = 0.0
    unavailable = 0
    # a first cycle on another name: connected, the scripts loaded
    start = ready_to_loop(redlock, f"{NAME}:warm-up", job.warm_up, gate, loop=job.seconds)
    stop = start + job.seconds
    rounds.clear()  # the loop's rounds only
    while time.time() < stop:
        lock = redlock.lock(NAME, ttl=10.0)
        before = time.thread_time()
        try:
            acquired = lock.acquire(timeout=max(0.01, stop - time.time()))
        except QuorumUnavailable:  # a stall of a loaded host: counted, reported
            unavailable += 1
            continue
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
    durations = {op: list(seconds) for op, seconds in rounds.seconds.items()}
    redlock.close()
    report = (
        holds, acquire_cpu, release_cpu, usage.ru_nvcsw, counts, durations, unavailable,
        usage.ru_nivcsw,
    )  # fmt: skip
    out.put(report)
    faulthandler.cancel_dump_traceback_later()


def _server_pids(urls: Sequence[str]) -> list[int] | None:
    """The process id each server gives (``INFO server``); None if any does not, or is
    not a process of this machine."""
    pids = []
    for url in urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        try:
            pid = int(client.info("server")["process_id"])
        except (redis.RedisError, KeyError, ValueError):
            return None
        finally:
            client.close()
        if not os.path.exists(f"/proc/{pid}/stat"):
            return None
        pids.append(pid)
    return pids


def _server_cpu(urls: Sequence[str]) -> float | None:
    """CPU seconds used so far by the servers' processes, read from /proc by the
    process id each server gives (``INFO server``); None if any is not on this machine."""
    pids = _server_pids(urls)
    if pids is None:
        return None
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def cpu_times(stat: str) -> tuple[int, int] | None:
    """The host's idle and total CPU time (in clock ticks) since it started, from the
    text of ``/proc/stat``: its ``cpu`` line, with the time waiting for I/O counted as
    idle; None where there is no such line."""
    for line in stat.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu" and len(fields) >= 6:
            # user nice system idle iowait irq softirq steal, then guest time, which
            # the kernel counts in user time already
            ticks = [int(field) for field in fields[1:9]]
            return ticks[3] + ticks[4], sum(ticks)
    return None


def _host_cpu() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as stat:
            return cpu_times(stat.read())
    except OSError:
        return None


def idle_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the host's CPU time that was idle between two :func:`cpu_times`;
    None when either is unknown or no time passed."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def pin_servers(urls: Sequence[str], cpus: set[int]) -> None:
    """Keep the servers' processes on ``cpus`` (``--pin-servers``): a diagnosis of what
    the scheduler costs the loop when the servers share the clients' cores, as in the
    suite (docs/benchmarks-log.md). ``SystemExit`` with a one-line message where the
    servers are not processes of this machine or cannot be moved."""
    pids = _server_pids(urls)
    if pids is None:
        raise SystemExit("error: --pin-servers needs servers running on this machine")
    for pid in pids:
        try:
            os.sched_setaffinity(pid, cpus)
        except (OSError, AttributeError) as exc:
            raise SystemExit(f"error: cannot pin the server process {pid}: {exc}") from None


class _Overheard:
    """Every announcement of the releases of ``name`` on each server while the block runs
    (a pattern subscription per server, read by a thread of its own), kept with the
    wall-clock time it was read."""

    def __init__(self, urls: Sequence[str], name: str) -> None:
        self._name = name.encode()
        self._stop = threading.Event()
        self._heard: list[tuple[float, int, bytes, bytes | None]] = []  # time, server, notice, head
        self._ready = threading.Barrier(len(urls) + 1)
        self._threads = [
            threading.Thread(target=self._listen, args=(url, i), daemon=True)
            for i, url in enumerate(urls)
        ]

    def __enter__(self) -> _Overheard:
        for thread in self._threads:
            thread.start()
        with contextlib.suppress(threading.BrokenBarrierError):  # a server slow to answer
            self._ready.wait(timeout=10)  # every subscription made (or failed)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _listen(self, url: str, index: int) -> None:
        client = redis.Redis.from_url(url, socket_timeout=5)
        pubsub = client.pubsub()  # type: ignore[no-untyped-call, unused-ignore]
        try:
            try:
                pubsub.psubscribe(RELEASED_PREFIX + "*", WAKE_PREFIX + "*")
            finally:
                self._ready.wait(timeout=10)
            while True:
                if self._stop.is_set():
                    break
                message = pubsub.get_message(timeout=0.05)
                if message is not None and message["type"] == "pmessage":
                    self._note(index, message["channel"], message["data"])
        except (redis.RedisError, OSError, threading.BrokenBarrierError):
            pass  # this server's announcements are missing: the counts say fewer servers
        finally:
            pubsub.close()
            client.close()

    def _note(self, index: int, channel: bytes, data: bytes) -> None:
        if channel.startswith(WAKE_PREFIX.encode()):
            # on the channel of the head's process
            named = split_wake(data)
            if named is None or named[0] != self._name:
                return
            head: bytes | None = channel[len(WAKE_PREFIX) :]
            notice = named[1]
        elif channel == RELEASED_PREFIX.encode() + self._name and data.startswith(b" "):
            head, notice = None, data[1:]  # " <notice>": nobody named
        else:
            return
        self._heard.append((time.time(), index, notice, head))

    def tally(self, start: float, stop: float) -> tuple[Counter[str], Counter[int]]:
        """The releases announced between ``start`` and ``stop`` (wall clock): how many
        agreed in each way (:data:`AGREEMENT`), and how many were announced by each
        number of servers."""
        releases: dict[bytes, list[tuple[int, bytes | None]]] = {}
        for at, index, notice, head in list(self._heard):
            if start <= at <= stop:
                releases.setdefault(notice, []).append((index, head))
        agreement: Counter[str] = Counter()
        announcers: Counter[int] = Counter()
        for heard in releases.values():
            heads = {head for _, head in heard if head is not None}
            nobody = any(head is None for _, head in heard)
            if not heads:
                agreement["nobody"] += 1
            elif len(heads) > 1:
                agreement["several heads"] += 1
            else:
                agreement["a head and nobody" if nobody else "one head"] += 1
            announcers[len({index for index, _ in heard})] += 1
        return agreement, announcers


def measure(
    urls: list[str],
    processes: int,
    seconds: float,
    *,
    busy_poll: float = BUSY_POLL,
    fair: bool = False,
    overhear: bool = False,
    warm_up: float = WARM_UP,
) -> ChainResult:
    """Run the loop in ``processes`` fresh processes for ``seconds``, each with
    ``Redlock(urls, busy_poll=busy_poll, fair=fair)``; ``overhear``: tally how the servers'
    announcements of each release agreed (:class:`_Overheard`). The loops start together
    once every process has connected, by a first acquire on a name of its own; raises
    :class:`~quorumlock.benchmarks._common.WorkersNotReady` where one got no lock within
    ``warm_up`` seconds (or failed otherwise; its error is on standard error)."""
    jobs = [(_Job(urls, seconds, i, busy_poll, fair, warm_up),) for i in range(processes)]
    listening = _Overheard(urls, NAME) if overhear else contextlib.nullcontext()
    with listening, worker_processes(_loop, jobs) as workers:
        start = workers.start()
        cpu_before, host_before = _server_cpu(urls), _host_cpu()
        time.sleep(max(0.0, start + seconds - time.time()))
        cpu_after, host_after = _server_cpu(urls), _host_cpu()
        reports = workers.collect(seconds + GRACE)
        agreement, announcers = Counter[str](), Counter[int]()
        if isinstance(listening, _Overheard):
            agreement, announcers = listening.tally(start, start + seconds)
    holds: list[Hold] = [hold for report in reports for hold in report[0]]
    counts: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    for report in reports:
        for op, count in report[4].items():
            counts[op] = counts.get(op, 0) + count
        for op, spent in report[5].items():
            durations.setdefault(op, []).extend(spent)

    def ms(values: list[float], per_unit: float = 1e-6) -> tuple[float, ...]:
        """Sorted, in ms: ``values`` in ns (or, with ``per_unit`` 1e3, in seconds)."""
        return tuple(sorted(value * per_unit for value in values))

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
        round_ms=tuple((op, ms(spent, 1e3)) for op, spent in sorted(durations.items())),
        server_cpu=None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
        agreement=tuple((kind, agreement[kind]) for kind in AGREEMENT) if overhear else (),
        announcers=tuple(sorted(announcers.items(), reverse=True)),
        unavailable=sum(r[6] for r in reports),
        preempted=sum(r[7] for r in reports),
        host_idle=idle_share(host_before, host_after),
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _spread(samples: Sequence[float]) -> str:
    if not samples:
        return "-"
    return f"{percentile(samples, 0.5):.2f} / {percentile(samples, 0.9):.2f}"


def render(results: Sequence[ChainResult]) -> str:
    header = (
        "P", "cs/s", "hand-overs", "median / p90 ms", "take-backs", "median / p90 ms",
        "release ms", "CPU acquire ms/cs", "CPU release ms/cs", "switches/cs",
        "preempted/cs", "rounds/cs: all (failed tries, joins, releases)",
        "round ms: acquire / release", "server CPU ms/cs", "host idle",
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
                f"{r.preempted / per:.2f}",
                f"{every / per:.2f} ({', '.join(f'{x:.2f}' for x in parts)})",
                " / ".join(_ms(r.round_median(op)) for op in ("acquire", "release")),
                "-" if r.server_cpu is None else f"{r.server_cpu / per * 1e3:.2f}",
                "-" if r.host_idle is None else f"{r.host_idle:.0%}",
            )
        )
    rendered = table(header, rows, right=set(range(len(header))))
    if line := unavailable_line("P", [(r.processes, r.unavailable) for r in results]):
        rendered += "\n" + line
    overheard = [r for r in results if r.agreement]
    if overheard:
        rendered += "\n\n" + _render_agreement(overheard)
    return rendered


def _render_agreement(results: Sequence[ChainResult]) -> str:
    """The releases overheard (``--overhear``): how their announcements agreed."""
    header = ("P", "releases heard", "servers announcing: releases", *AGREEMENT)
    rows = []
    for r in results:
        heard = sum(count for _, count in r.agreement)
        share = (f"{count / max(1, heard):.1%}" for _, count in r.agreement)
        servers = ", ".join(f"{n}: {count:,}" for n, count in r.announcers) or "-"
        rows.append((str(r.processes), f"{heard:,}", servers, *share))
    return table(header, rows, right=set(range(len(header))))


def _processes(text: str) -> list[int]:
    try:
        counts = [int(p) for p in filter(str.strip, text.split(","))]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of process counts: {text!r}") from None
    if not counts or any(p < 1 or p > 64 for p in counts):
        raise argparse.ArgumentTypeError("process counts must be 1 to 64")
    return counts


def _seconds(text: str) -> float:
    return bounded(text, float, 600, unit="seconds")


def _busy_poll(text: str) -> float:
    return bounded(text, float, 0.01, zero=True, unit="seconds")


def _cpus(text: str) -> set[int]:
    """A set of CPU numbers of this machine, as ``taskset -c`` takes them: ``1`` or
    ``0,2``."""
    try:
        cpus = {int(c) for c in filter(str.strip, text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of CPU numbers: {text!r}") from None
    known = os.cpu_count() or 1
    if not cpus or any(c < 0 or c >= known for c in cpus):
        raise argparse.ArgumentTypeError(f"CPU numbers are 0 to {known - 1} on this machine")
    return cpus


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
    parser.add_argument(
        "--fair", action="store_true", help="Redlock(fair=True): strict arrival order"
    )
    parser.add_argument(
        "--overhear", action="store_true",
        help="also tally whether the servers' releases named the same waiter (one more "
        "subscriber per server, read by this process: the loop runs slower)",
    )  # fmt: skip
    parser.add_argument(
        "--pin-servers", type=_cpus, metavar="CPUS",
        help="keep the servers' processes on these CPUs (comma-separated numbers), to see "
        "what the scheduler costs the loop when servers and clients share cores",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) != SERVERS:
            parser.error(f"--servers needs {SERVERS} URLs, not {len(urls)}")
        if args.pin_servers is not None:
            pin_servers(urls, args.pin_servers)
        results = each_count(
            args.processes,
            "P",
            lambda count: measure(
                urls, count, args.seconds, busy_poll=args.busy_poll, fair=args.fair,
                overhear=args.overhear,
            ),
        )  # fmt: skip
    print(
        f"N = {SERVERS}, one name, {args.seconds:g} s per count, busy_poll={args.busy_poll:g}"
        + (", fair=True" if args.fair else "")
        + (
            f", servers pinned to CPU {','.join(map(str, sorted(args.pin_servers)))}"
            if args.pin_servers is not None
            else ""
        )
    )
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
