"""What a refused acquire costs: ``python -m quorumlock.benchmarks.refusals``.

P processes (default 8) hammer one name with non-blocking acquires: each loops on the
uncontended benchmark's cycle (a lock object, ``acquire(blocking=False)``, and a
``release()`` when it was granted), so almost every attempt is refused because another
process holds the name. Every contender of ``quorumlock bench`` runs it in turn, on the
same local servers, with a fresh name: quorumlock at N = 1 and N = 5, pottery at N = 5,
redis-py's ``Lock`` and python-redis-lock at N = 1, and the bare floor at N = 1 and 5
(which releases on every server after every attempt, granted or not: two commands per
server per attempt). The loops start together once every process has made a first
attempt (connected).

Reported per contender: attempts per second (all processes) and critical sections per
second (the granted ones). Then, for quorumlock, a second pass of the same loop counts
the rounds it sends (a :class:`~quorumlock.LockObserver` in each process, left out of
the timed pass): a granted attempt is two rounds (the acquire and the release), and a
refused one should be one round trip and nothing else (no undo where every server
refused it for another holder). Numbers only: nothing here is judged against a time.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from quorumlock import LockObserver, Redlock, RoundEvent
from quorumlock.benchmarks._common import (
    GRACE,
    WorkersNotReady,
    bounded,
    local_servers,
    table,
    through_gate,
    worker_processes,
)
from quorumlock.benchmarks.uncontended import CONTENDERS, TTL_SECONDS, Contender

__all__ = ["RefusalResult", "main", "measure"]


@dataclass(frozen=True, slots=True)
class RefusalResult:
    contender: Contender
    processes: int
    seconds: float
    attempts: int
    granted: int
    rounds: int | None = None  # quorumlock's counting pass: rounds sent; None: not counted
    error: str | None = None

    @property
    def rate(self) -> float:
        return self.attempts / self.seconds

    @property
    def sections(self) -> float:
        return self.granted / self.seconds

    @property
    def per_refusal(self) -> float | None:
        """Rounds per refused attempt, a granted one counted as two (acquire, release)."""
        refused = self.attempts - self.granted
        if self.rounds is None or refused <= 0:
            return None
        return (self.rounds - 2 * self.granted) / refused


@dataclass(frozen=True, slots=True)
class _Job:
    contender: Contender
    urls: list[str]
    key: str
    seconds: float  # how long the loop runs, from the gate
    counting: bool  # quorumlock with an observer counting its rounds


class _Rounds(LockObserver):
    def __init__(self) -> None:
        self.count = 0

    def on_round(self, event: RoundEvent) -> None:
        self.count += 1


def _cycle(job: _Job, rounds: _Rounds) -> tuple[Callable[[], bool], Callable[[], None]]:
    """The contender's cycle and what closes it (quorumlock's own when counting)."""
    urls = job.urls[: job.contender.servers]
    if not job.counting:
        runner = job.contender.build(urls, job.key)
        return runner.cycle, runner.close
    redlock = Redlock(urls, observer=rounds)

    def cycle() -> bool:  # QuorumlockRunner's, with the observer
        lock = redlock.lock(job.key, ttl=float(TTL_SECONDS))
        return lock.acquire(blocking=False) and lock.release()

    return cycle, redlock.close


def _loop(job: _Job, out: Any, gate: Any) -> None:
    logging.disable(logging.WARNING)  # python-redis-lock warns of every refusal
    rounds = _Rounds()
    attempts = granted = 0
    try:
        cycle, close = _cycle(job, rounds)
    except Exception as exc:  # reported in the table: a peer may not be installed
        out.put((0, 0, 0, f"{type(exc).__name__}: {exc}"))
        gate.abort()  # the others stop waiting for this one
        return
    try:
        cycle()  # connected before the loops start together
        start = through_gate(gate)
        if start is None:
            out.put((0, 0, 0, "another worker process did not start"))
            return
        stop = start + job.seconds
        rounds.count = 0  # the loop's rounds only
        while True:
            if time.time() >= stop:
                break
            attempts += 1
            if cycle():
                granted += 1
    except Exception as exc:
        out.put((attempts, granted, rounds.count, f"{type(exc).__name__}: {exc}"))
        gate.abort()  # where it failed before the loop: the others stop waiting
        return
    finally:
        close()
    out.put((attempts, granted, rounds.count, None))


def measure(
    urls: list[str], contender: Contender, processes: int, seconds: float, *, counting: bool
) -> RefusalResult:
    """Run ``contender``'s cycle in ``processes`` fresh processes for ``seconds``
    (``counting``: quorumlock's, counting its rounds)."""
    key = f"quorumlock-bench:refusals:{uuid.uuid4().hex}"
    job = _Job(contender, urls, key, seconds, counting)
    with worker_processes(_loop, [(job,)] * processes) as workers:
        with contextlib.suppress(WorkersNotReady):  # their reports say why
            workers.start()
        reports = workers.collect(seconds + GRACE)
    errors = [report[3] for report in reports if report[3]]
    return RefusalResult(
        contender=contender,
        processes=processes,
        seconds=seconds,
        attempts=sum(report[0] for report in reports),
        granted=sum(report[1] for report in reports),
        rounds=sum(report[2] for report in reports) if counting else None,
        error=errors[0] if errors else None,
    )


def render(results: Sequence[RefusalResult], counted: Sequence[RefusalResult]) -> str:
    per_refusal = {r.contender.slug: r.per_refusal for r in counted}
    header = ("contender", "N", "attempts/s", "cs/s", "rounds per refused attempt")
    rows = []
    for r in results:
        label, servers = r.contender.label, str(r.contender.servers)
        if r.error:
            rows.append((label, servers, "-", "-", r.error[:60]))
            continue
        rounds = per_refusal.get(r.contender.slug)
        shown = "-" if rounds is None else f"{rounds:.3f}"
        rows.append((label, servers, f"{r.rate:,.0f}", f"{r.sections:,.0f}", shown))
    return table(header, rows, right={1, 2, 3, 4})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.refusals",
        description="What a refused acquire costs: P processes hammer one name with "
        "non-blocking acquires, each contender in turn.",
    )
    parser.add_argument("--servers", help="5 comma-separated URLs (default: local)")
    parser.add_argument(
        "--processes", type=lambda t: bounded(t, int, 64), default=8,
        help="processes per contender (default 8)",
    )  # fmt: skip
    parser.add_argument(
        "--seconds", type=lambda t: bounded(t, float, 600, unit="seconds"), default=3.0,
        help="seconds per contender (default 3)",
    )  # fmt: skip
    parser.add_argument(
        "--only", help="comma-separated contender slugs (default: all), e.g. quorumlock-n5"
    )
    args = parser.parse_args(argv)
    chosen = list(CONTENDERS)
    if args.only:
        slugs = {slug.strip() for slug in args.only.split(",") if slug.strip()}
        unknown = sorted(slugs - {c.slug for c in CONTENDERS})
        if unknown:
            known = ", ".join(c.slug for c in CONTENDERS)
            parser.error(f"unknown contender {unknown[0]!r} (one of: {known})")
        chosen = [c for c in CONTENDERS if c.slug in slugs]
    with local_servers(args.servers, 5) as (urls, _):
        if len(urls) != 5:
            parser.error(f"--servers needs 5 URLs, not {len(urls)}")
        results, counted = [], []
        try:
            for contender in chosen:  # a peer that is not installed says so in its row
                results.append(
                    measure(urls, contender, args.processes, args.seconds, counting=False)
                )
                print(f"{contender.slug}: done", file=sys.stderr)
            for contender in chosen:
                if contender.package == "quorumlock":
                    counted.append(
                        measure(urls, contender, args.processes, args.seconds, counting=True)
                    )
                    print(f"{contender.slug}: rounds counted", file=sys.stderr)
                continue
        except WorkersNotReady as exc:  # (a worker that failed printed its error above)
            raise SystemExit(f"error: {contender.slug}: {exc}") from None
    print(f"P = {args.processes} processes on one name, {args.seconds:g} s per contender")
    print(render(results, counted))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
