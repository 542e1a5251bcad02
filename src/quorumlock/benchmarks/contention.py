"""Figure 3 of the suite: contended throughput and fairness, P processes on one name.

P worker processes (``_workers.py``) loop for the slice: blocking acquire (each library's
defaults, as in ``handover.py``), a tiny critical section, release, and straight back to
acquire. The critical section increments a counter in a memory-mapped file shared by the
processes and notes who is inside: a process that finds another one inside, or a final
counter that differs from the number of holds, is an overlap. The hold intervals
(acquire returned -> release called, on the machine's one monotonic clock) are checked
for intersections too.

Reported per contender and P: successful critical sections per second (median over
rounds), and how they were shared out: the smallest and largest share of one process
(1/P each would be fair) and Jain's index. Contenders: quorumlock (N = 5), pottery
``Redlock`` (N = 5), redis-py ``Lock`` (N = 1), python-redis-lock (N = 1).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from quorumlock.benchmarks._common import (
    Table,
    num,
    ratio,
    rotated,
    shares,
    target_row,
    targets_table,
    version,
)
from quorumlock.benchmarks._workers import Slice, WorkerPool, integrity, run_slice
from quorumlock.benchmarks.handover import CONTENDERS as HANDOVER_CONTENDERS
from quorumlock.benchmarks.handover import Peer

__all__ = ["CONTENDERS", "ContentionConfig", "run", "summarize", "tables", "targets"]

CONTENDERS: Final[tuple[Peer, ...]] = tuple(
    p for p in HANDOVER_CONTENDERS if p.slug in ("quorumlock", "pottery", "redis-py", "redis-lock")
)

#: The targets (docs/benchmarks.md, "Targets"), from P = 2 on:
#: quorumlock N=5 critical sections/s at least 10x pottery's, Jain's index at least
#: 0.95, and at the largest P at least 60 % of quorumlock's own rate at P = 1.
TARGET_VS_POTTERY: Final = 10.0
TARGET_JAIN: Final = 0.95
TARGET_VS_ALONE: Final = 0.6


@dataclass(frozen=True)
class ContentionConfig:
    """How many processes, how long and how often (see the suite's ``--help``)."""

    processes: tuple[int, ...] = (1, 2, 4, 8, 16)
    rounds: int = 3
    slice_seconds: float = 1.5


def summarize(peer: Peer, processes: int, slices: Sequence[Slice], status: str) -> dict[str, Any]:
    """One row of the figure: ``peer``'s slices at P = ``processes``."""
    rates = [len(piece.holds) / piece.seconds for piece in slices if piece.seconds > 0]
    counts = [0] * processes
    for piece in slices:
        for index, n in enumerate(piece.per_worker()):
            counts[index] += n
    return {
        "contender": peer.slug,
        "label": peer.label,
        "version": version(peer.package),
        "servers": peer.servers,
        "processes": processes,
        "status": status,
        "cs_per_second": statistics.median(rates) if rates else None,
        "cs_per_second_by_round": rates,
        "critical_sections": sum(counts),
        "per_process": counts,
        **shares(counts),
        **integrity(slices),
    }


def run(
    pool: WorkerPool,
    urls: Sequence[str],
    config: ContentionConfig,
    status: dict[str, str],
    *,
    run_id: str,
    shared_dir: Path,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Measure every contender whose ``status`` is ``ok`` at every P; a JSON-able result."""
    rows: list[dict[str, Any]] = []
    for processes in config.processes:
        active = [p for p in CONTENDERS if status.get(p.slug) == "ok"]
        slices: dict[str, list[Slice]] = {p.slug: [] for p in active}
        for round_index in range(config.rounds):
            for peer in rotated(active, round_index):
                slices[peer.slug].append(
                    run_slice(
                        pool,
                        contender=peer.slug,
                        mode="contend",
                        workers=processes,
                        urls=urls,
                        name=f"quorumlock-bench:contention:{run_id}:{peer.slug}:{processes}:"
                        f"{round_index}",
                        seconds=config.slice_seconds,
                        shared_dir=shared_dir,
                    )
                )
            log(f"contention, P={processes}: round {round_index + 1}/{config.rounds} done")
        for peer in CONTENDERS:
            state = status.get(peer.slug, "not installed")
            rows.append(summarize(peer, processes, slices.get(peer.slug, []), state))
    return {"config": asdict(config), "rows": rows}


def _value(result: dict[str, Any], slug: str, processes: int, field: str) -> float | None:
    """``field`` of ``slug``'s row at P = ``processes``, if it ran."""
    for r in result["rows"]:
        if r["contender"] == slug and r["processes"] == processes and r["status"] == "ok":
            value = r[field]
            return None if value is None else float(value)
    return None


def _rate(result: dict[str, Any], slug: str, processes: int) -> float | None:
    return _value(result, slug, processes, "cs_per_second")


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """quorumlock / pottery and Jain's index at each P (targets from P = 2 on), the
    largest P's rate against P = 1's, then the others."""
    out = []
    counts = result["config"]["processes"]
    for processes in counts:
        ours = _rate(result, "quorumlock", processes)
        contended = processes > 1
        out.append(
            target_row(
                f"[P={processes}] quorumlock N=5 cs/s / pottery N=5 cs/s",
                ratio(ours, _rate(result, "pottery", processes)),
                TARGET_VS_POTTERY if contended else None,
            )
        )
        if contended:
            out.append(
                target_row(
                    f"[P={processes}] quorumlock N=5 Jain's index",
                    _value(result, "quorumlock", processes, "jain"),
                    TARGET_JAIN,
                    unit="",
                )
            )
        for slug, label in (("redis-py", "redis-py Lock"), ("redis-lock", "python-redis-lock")):
            out.append(
                target_row(
                    f"[P={processes}] quorumlock N=5 cs/s / {label} N=1 cs/s",
                    ratio(ours, _rate(result, slug, processes)),
                )
            )
    if len(counts) > 1 and min(counts) == 1:
        most = max(counts)
        out.append(
            target_row(
                f"[P={most}] quorumlock N=5 cs/s / its cs/s at P=1",
                ratio(_rate(result, "quorumlock", most), _rate(result, "quorumlock", 1)),
                TARGET_VS_ALONE,
            )
        )
    return out


def tables(result: dict[str, Any]) -> list[Table]:
    """The figure's results table and its targets table."""
    body = []
    for r in result["rows"]:
        label = r["label"] + (f" {r['version']}" if r["version"] else "")
        if r["status"] != "ok":
            body.append([label, str(r["servers"]), str(r["processes"]), *["-"] * 6, r["status"]])
            continue
        problems = []
        if r["overlaps"] or not r["counter_ok"]:
            problems.append(f"OVERLAPS: {r['overlaps']}")
        if r["first_error"]:
            problems.append(f"{r['failures']} failed: {r['first_error']}")
        pct = 100.0
        body.append(
            [
                label,
                str(r["servers"]),
                str(r["processes"]),
                num(r["cs_per_second"], ",.0f"),
                num(None if r["min_share"] is None else r["min_share"] * pct, ".1f"),
                num(None if r["max_share"] is None else r["max_share"] * pct, ".1f"),
                num(r["jain"], ".2f"),
                f"{r['critical_sections']:,}",
                str(r["overlaps"]),
                "; ".join(problems),
            ]
        )
    cfg = result["config"]
    notes = (
        f"{cfg['rounds']} round(s) x {cfg['slice_seconds']:g} s per contender and P; cs/s: "
        "median over rounds. min/max %: the smallest and largest share of one process "
        "(fair: 100/P); Jain: 1 = fair, 1/P = one process did everything."
    )
    header = ["contender", "N", "P", "cs/s", "min %", "max %", "Jain", "critical sections"]
    return [
        Table(
            [*header, "overlaps", "note"],
            body,
            frozenset({1, 2, 3, 4, 5, 6, 7, 8}),
            "Figure 3: contended throughput and fairness",
            notes,
        ),
        targets_table(targets(result), "Figure 3: targets and ratios"),
    ]
