"""What every benchmark of this package shares: statistics, ratios, the run's metadata,
servers, peers and plain-text tables.

The pure functions here (:func:`percentile`, :func:`latency_summary`, :func:`ratio`,
:func:`judge`, :func:`shares`, :func:`handovers`, :func:`rotated`) read no clock and do no
I/O; ``tests/test_benchmarks.py`` tests them. Holds are :class:`quorumlock.testing.Hold`
records, checked for overlaps by the verify suite's checker (``quorumlock/testing/_checker.py``).
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import importlib.metadata
import itertools
import math
import multiprocessing
import os
import platform
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType, ModuleType
from typing import Any, Final, TypeVar

import redis

from quorumlock import Redlock
from quorumlock.testing import Hold, LocalServerGroup, ServerBinaryNotFound

__all__ = [
    "GRACE",
    "SOCKET_TIMEOUT",
    "START",
    "NotInstalled",
    "Table",
    "Workers",
    "WorkersNotReady",
    "bounded",
    "client",
    "clip",
    "describe_environment",
    "each_count",
    "environment",
    "handovers",
    "import_peer",
    "judge",
    "latency_summary",
    "local_servers",
    "num",
    "on_sigterm",
    "percentile",
    "ratio",
    "ready_to_loop",
    "rotated",
    "server_description",
    "shares",
    "table",
    "target_row",
    "targets_table",
    "through_gate",
    "version",
    "worker_processes",
]

#: Socket timeouts for every redis-py client a benchmark opens, so that no cycle can hang
#: on a frozen server: a loop is bounded by its time slice plus this.
SOCKET_TIMEOUT: Final = 5.0

T = TypeVar("T")
Number = TypeVar("Number", int, float)


# --------------------------------------------------------------------------- statistics


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values (NaN for none)."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return float(sorted_values[rank - 1])


def latency_summary(values: Sequence[float]) -> dict[str, float | int | None]:
    """``count``, ``p50`` (the median), ``p99`` (nearest rank) and ``max`` of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return {"count": 0, "p50": None, "p99": None, "max": None}
    return {
        "count": len(ordered),
        "p50": float(statistics.median(ordered)),
        "p99": percentile(ordered, 0.99),
        "max": float(ordered[-1]),
    }


def rotated(items: Sequence[T], round_index: int) -> list[T]:
    """The order of round ``round_index``: ``items`` rotated left by that many places.

    Over ``len(items)`` rounds each item runs once in each position, so a slow minute of
    the machine hits every contender alike.
    """
    shift = round_index % len(items) if items else 0
    return [*items[shift:], *items[:shift]]


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing, NaN or zero-divided."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    if math.isnan(numerator) or math.isnan(denominator):
        return None
    return numerator / denominator


def judge(value: float | None, target: float | None, *, at_least: bool = True) -> str:
    """A ratio against a target: ``pass``, ``MISS``, ``n/a`` (not measured) or ``info``."""
    if target is None:
        return "info"
    if value is None:
        return "n/a"
    met = value >= target if at_least else value <= target
    return "pass" if met else "MISS"


def shares(counts: Mapping[str, int] | Sequence[int]) -> dict[str, float | None]:
    """How evenly work was spread: each worker's share of the total.

    ``min_share`` and ``max_share`` are fractions of the total (a fair split of P
    workers gives 1/P each); ``min_over_fair`` is the smallest share divided by 1/P (1.0
    is perfectly fair, 0.0 means a worker starved); ``jain`` is Jain's fairness index,
    (sum x)^2 / (P * sum x^2), from 1/P (one worker did everything) to 1.0.
    """
    values = list(counts.values()) if isinstance(counts, Mapping) else list(counts)
    total = sum(values)
    if not values or total <= 0:
        return {"min_share": None, "max_share": None, "min_over_fair": None, "jain": None}
    fair = 1 / len(values)
    return {
        "min_share": min(values) / total,
        "max_share": max(values) / total,
        "min_over_fair": (min(values) / total) / fair,
        "jain": total * total / (len(values) * sum(v * v for v in values)),
    }


def handovers(
    holds: Sequence[Hold], *, start: int, stop: int, same_worker: bool = False
) -> list[float]:
    """Hand-over times (ns): each release completed -> the next acquire completed.

    The holds' times are ``time.monotonic_ns()`` readings: ``start`` when the acquire
    returned, ``released`` when the release returned (``end``, when the release call
    was made, stands in for a hold that has no ``released``). Holds are taken in the
    order they were acquired; a pair counts when the next hold went to another worker
    and both acquisitions fall in ``[start, stop]``. A value can be slightly negative:
    with N > 1 a waiter can be granted the lock by a majority while the releaser still
    reads the last servers' replies. ``same_worker``: the pairs where the next hold went
    to the same worker instead (the releaser took the lock back).
    """
    ordered = sorted(holds, key=lambda h: h.start)
    gaps: list[float] = []
    for before, after in itertools.pairwise(ordered):
        if (before.worker == after.worker) is not same_worker:
            continue
        if start <= before.start and after.start <= stop:
            released = before.end if before.released is None else before.released
            gaps.append(after.start - released)
    return gaps


# --------------------------------------------------------------------------- environment


def version(package: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


class NotInstalled(Exception):
    """A peer's package cannot be imported."""


def import_peer(module: str) -> ModuleType:
    """Import a peer library, or raise :class:`NotInstalled` saying why."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise NotInstalled(f"not installed ({exc})") from exc


def client(url: str) -> redis.Redis:
    """A redis-py client with the benchmarks' socket timeouts."""
    return redis.Redis.from_url(
        url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=SOCKET_TIMEOUT
    )


def environment() -> dict[str, Any]:
    """The client side of a run: Python, platform, CPUs, redis-py and hiredis versions."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "redis_py": version("redis"),
        "hiredis": version("hiredis"),
    }


def describe_environment(env: Mapping[str, Any]) -> str:
    """:func:`environment` on one line."""
    return (
        f"Python {env['python']} on {env['platform']}, {env['cpus']} CPUs, "
        f"redis-py {env['redis_py']}, hiredis {env['hiredis'] or 'no'}"
    )


def server_description(
    urls: Sequence[str], started: bool, given_by: str = "--servers"
) -> dict[str, Any]:
    """The servers of a run: URLs, each one's name and version, a one-line description
    that says where they came from: started here, or ``given_by`` an option or a
    variable."""
    versions = []
    for url in urls:
        conn = client(url)
        try:
            info = conn.info("server")
            name = info.get("server_name") or "redis"
            release = info.get("valkey_version") or info.get("redis_version") or "?"
            versions.append(f"{name} {release}")
        except redis.RedisError as exc:
            versions.append(f"unreachable ({exc})")
        finally:
            conn.close()
    kinds = sorted(set(versions))
    origin = "local, started by quorumlock.testing" if started else f"given by {given_by}"
    return {
        "urls": list(urls),
        "versions": versions,
        "description": f"{len(urls)} x {', '.join(kinds)} ({origin})",
    }


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler that raises ``SystemExit``, so context managers close servers."""
    raise SystemExit(128 + signum)


@contextmanager
def local_servers(spec: str | None, count: int = 5) -> Iterator[tuple[list[str], bool]]:
    """``(urls, started)``: the URLs of ``spec`` (comma-separated), or ``count`` local
    servers started for the block and closed after it."""
    if spec:
        urls = [u.strip() for u in spec.split(",") if u.strip()]
        if not urls:
            raise SystemExit("error: --servers needs at least one URL")
        yield urls, False
        return
    try:
        group = LocalServerGroup(count)
    except ServerBinaryNotFound as exc:
        raise SystemExit(f"error: {exc}") from exc
    with group:
        yield group.urls, True


def bounded(
    text: str, kind: Callable[[str], Number], most: float, *, zero: bool = False, unit: str = ""
) -> Number:
    """A number on a benchmark's command line (an ``argparse`` type): more than 0 (or 0
    too, with ``zero``) and at most ``most``, in ``unit``; anything else, NaN included,
    is a usage error."""
    of, suffix = (f" of {unit}", f" {unit}") if unit else ("", "")
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number{of}: {text!r}") from None
    if not ((value >= 0 if zero else value > 0) and value <= most):  # NaN too
        least = "at least 0" if zero else "more than 0"
        raise argparse.ArgumentTypeError(f"must be {least} and at most {most:g}{suffix}")
    return value


#: Seconds the worker processes of a benchmark get to start (import everything, connect)
#: and reach the gate (:class:`Workers`) before the benchmark gives up on them. The loops
#: start when the last one is there, however long the others took: on a slow host,
#: sixteen processes importing at once can take longer than a short run.
START: Final = 120.0

#: Seconds after the end of its loop a worker process has to report before it is stopped.
GRACE: Final = 20.0


class WorkersNotReady(RuntimeError):
    """A worker process did not reach the gate: it failed before its loop, or took
    longer than :data:`START` to start; or it sent no report after its loop (it failed
    in it)."""


class Workers:
    """The worker processes of :func:`worker_processes`, seen from the benchmark."""

    def __init__(self, gate: Any, out: Any, count: int) -> None:
        self._gate = gate
        self._out = out
        self._count = count

    def start(self) -> float:
        """Wait until every worker is at the gate, then let them all go: the wall clock
        at which their loops start. Raises :class:`WorkersNotReady` when one is not there
        within :data:`START` seconds (their reports say why)."""
        try:
            self._gate.wait(timeout=START)
        except threading.BrokenBarrierError:
            raise WorkersNotReady("a worker process did not start its loop") from None
        return time.time()

    def collect(self, timeout: float) -> list[Any]:
        """Every worker's report, waited for up to ``timeout`` seconds each. Raises
        :class:`WorkersNotReady` when one sends none in that time (a worker that failed
        printed its error)."""
        reports = []
        for _ in range(self._count):
            try:
                reports.append(self._out.get(timeout=timeout))
            except queue.Empty:
                raise WorkersNotReady(
                    f"a worker process sent no report within {timeout:g} s of its loop's end"
                ) from None
        return reports


def through_gate(gate: Any) -> float | None:
    """In a worker process, once it is ready for its loop: wait for the others, and
    return the wall clock at which the loops start; None if one of them never came (the
    worker then reports without looping)."""
    try:
        gate.wait(timeout=START)
    except threading.BrokenBarrierError:
        return None
    return time.time()


def ready_to_loop(
    redlock: Redlock, name: str, seconds: float, gate: Any, *, loop: float = 0.0
) -> float:
    """In a worker process, before its loop: a first acquire and release of ``name``
    (connected, the scripts loaded) within ``seconds``, then :func:`through_gate`.
    Returns the wall clock at which the loops start, or -inf where another worker never
    came (the caller then does not loop). Where this worker cannot start, it aborts the
    gate (the benchmark stops at once instead of waiting for it) and raises. ``loop``:
    the loop's seconds; a worker that has not reported ``GRACE / 2`` seconds after them
    prints where its threads are (:func:`stacks_after`)."""
    try:
        warm_up = redlock.lock(name, ttl=10.0)
        if not warm_up.acquire(timeout=seconds):
            raise RuntimeError(f"no lock on the servers within {seconds:g} s")
        warm_up.release()
    except BaseException:
        gate.abort()
        raise
    start = through_gate(gate)
    if start is None:
        return -math.inf
    if loop:
        stacks_after(loop + GRACE / 2)
    return start


def unavailable_line(label: str, counts: Sequence[tuple[int, int]]) -> str:
    """The line a benchmark prints under its table where acquires in its loops raised
    :class:`~quorumlock.QuorumUnavailable` (each then counted, and the loop went on):
    ``counts`` is (count, how many raised) per count of processes; "" where none did."""
    raised = [f"{label} = {count}: {n:,}" for count, n in counts if n]
    if not raised:
        return ""
    return (
        "acquires that raised QuorumUnavailable (too few servers answered within the "
        f"per-instance timeout: the host stalled): {', '.join(raised)}"
    )


def stacks_after(seconds: float) -> None:
    """In a worker process: print every thread's stack on standard error if it is still
    running ``seconds`` from now (a worker that hangs: the benchmark then ends without
    its report, :class:`WorkersNotReady`, and this says where it was). Called off by
    ``faulthandler.cancel_dump_traceback_later()`` once the worker has reported."""
    faulthandler.dump_traceback_later(seconds, exit=False)


def each_count(counts: Sequence[int], label: str, run: Callable[[int], T]) -> list[T]:
    """``run(count)`` for each count, in order, saying "<label> = <count>: done" on
    standard error after each; a run whose workers did not start, or did not report,
    ends the benchmark with a one-line error (:class:`WorkersNotReady`; the worker's own
    error is above)."""
    results = []
    for count in counts:
        try:
            results.append(run(count))
        except WorkersNotReady as exc:
            raise SystemExit(f"error: {label} = {count}: {exc} (its error is above)") from None
        print(f"{label} = {count}: done", file=sys.stderr)
    return results


@contextmanager
def worker_processes(
    target: Callable[..., None], jobs: Sequence[tuple[Any, ...]]
) -> Iterator[Workers]:
    """One fresh (spawned) process per job, each running ``target(*job, out, gate)``,
    where ``out`` is a queue it puts its report on and ``gate`` what it passes to
    :func:`through_gate` when ready to loop (or ``gate.abort()`` if it cannot). Yields
    the :class:`Workers`. On leaving, every process is joined, and one still alive after
    :data:`GRACE` seconds is terminated (ours, by its PID)."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    gate = context.Barrier(len(jobs) + 1)
    workers = [context.Process(target=target, args=(*job, out, gate), daemon=True) for job in jobs]
    for worker in workers:
        worker.start()
    try:
        yield Workers(gate, out, len(workers))
    finally:
        gate.abort()  # a worker still waiting (the benchmark failed first) goes on
        for worker in workers:
            worker.join(timeout=GRACE)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=GRACE)


# --------------------------------------------------------------------------- tables


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """A plain-text table; columns in ``right`` are right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def clip(text: str, width: int = 80) -> str:
    """One table cell of at most ``width`` characters (the JSON keeps the full text)."""
    return text if len(text) <= width else text[: width - 3] + "..."


def num(value: float | None, fmt: str) -> str:
    """``value`` formatted, or ``-`` when missing or NaN."""
    return "-" if value is None or math.isnan(value) else format(value, fmt)


@dataclass(frozen=True)
class Table:
    """One table of a report, rendered as plain text (terminal) or Markdown (docs)."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: frozenset[int] = frozenset()
    title: str = ""
    notes: str = ""

    def text(self) -> str:
        parts = [self.title] if self.title else []
        parts.append(table(self.header, self.rows, set(self.right)))
        if self.notes:
            parts.append(self.notes)
        return "\n".join(parts)

    def markdown(self) -> str:
        def cells(row: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

        align = ["--:" if i in self.right else "---" for i in range(len(self.header))]
        parts = [f"**{self.title}**\n"] if self.title else []
        parts += [cells(self.header), "|" + "|".join(align) + "|"]
        parts += [cells(row) for row in self.rows]
        if self.notes:
            parts += ["", self.notes]
        return "\n".join(parts)


def _suffix(unit: str) -> str:
    """How a value in ``unit`` is written after its number: ``x`` for a ratio, none for
    an index, else a space and the unit."""
    return "x" if unit == "x" else f" {unit}" if unit else ""


def target_row(
    name: str,
    value: float | None,
    target: float | None = None,
    *,
    at_least: bool = True,
    unit: str = "x",
) -> dict[str, Any]:
    """One line of a figure's ratio table: a value, and how it compares with a target
    (``unit``: ``x`` for a ratio, ``""`` for an index, else ``ms`` and the like)."""
    sign = ">=" if at_least else "<="
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "target": None if target is None else f"{sign} {target:g}{_suffix(unit)}",
        "result": judge(value, target, at_least=at_least),
    }


def targets_table(rows: Sequence[Mapping[str, Any]], title: str = "") -> Table:
    """The rows of :func:`target_row` (or of ``compute_ratios``) as a table."""
    body = []
    for row in rows:
        value = row["value"]
        unit = row.get("unit", "x")
        shown = "-" if value is None else f"{value:.2f}{_suffix(unit)}"
        body.append([row["name"], shown, row["target"] or "", row["result"]])
    return Table(["ratio or value", "measured", "target", "result"], body, frozenset({1}), title)
