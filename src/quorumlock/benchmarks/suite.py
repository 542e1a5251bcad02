"""The whole benchmark suite, in one run: ``python -m quorumlock.benchmarks.suite``.

Five figures, each measured side by side with the peers on the same local servers (9
``valkey-server``/``redis-server`` processes started by ``quorumlock.testing``; a figure
with N servers uses the first N), each with absolute numbers and ratios:

1. ``uncontended``: acquire+release p50/p99 and cycles/s vs N = 1, 3, 5, 7, 9
   (``uncontended.py``, with more server counts);
2. ``handover``: release -> next waiter's acquire, 2, 8 and 32 waiting processes
   (``handover.py``);
3. ``contention``: critical sections/s and shares, 1 to 16 processes on one name
   (``contention.py``);
4. ``many``: 10,000 locks held at once with auto-renewal: memory and renewal traffic
   (``many_names.py``);
5. ``asyncio``: 1,000 tasks on distinct names (``asyncio_cycles.py``'s second scenario).

It prints one table per figure plus the targets, writes PNG plots (``--plots``,
default ``docs/benchmarks/``; a temporary directory with ``--quick``), and optionally
JSON (``--json PATH``) and the tables section of ``docs/benchmarks.md``
(``--write-docs``). Exit status 1 if a figure crashed or found overlapping holds, never
because of a timing result.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import re
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TextIO

from quorumlock.benchmarks import (
    FIGURES,
    _plots,
    asyncio_cycles,
    contention,
    handover,
    many_names,
    uncontended,
)
from quorumlock.benchmarks._common import (
    Table,
    describe_environment,
    environment,
    on_sigterm,
    ratio,
    server_description,
    target_row,
    targets_table,
    version,
)
from quorumlock.benchmarks._workers import WorkerPool, warm_up
from quorumlock.testing import LocalServerGroup, ServerBinaryNotFound

__all__ = ["FIGURES", "SuiteConfig", "figures", "main", "quick_config", "run_suite"]

#: Server counts of figure 1; the suite starts as many servers as the largest.
SERVER_COUNTS: Final = (1, 3, 5, 7, 9)
#: The first wave's target for figure 1: the bare floor's N=5 cycles/s within 1.25x of ours.
TARGET_FLOOR: Final = 1.25
#: The targets of the "Targets" table (docs/benchmarks.md, "Targets"): quorumlock's
#: N=5 median cycle at most 1.2x redis-py's Lock's (N = 1), or, where the bare floor
#: itself is above that, at most the floor's; auto-extended locks acquired at no less
#: than half the uncontended cycle rate.
TARGET_VS_REDIS_PY: Final = 1.2
TARGET_VS_FLOOR: Final = 1.0
TARGET_MANY_ACQUIRES: Final = 0.5
DOCS_BEGIN: Final = (
    "<!-- suite results: begin (written by python -m quorumlock.benchmarks.suite --write-docs) -->"
)
DOCS_END: Final = "<!-- suite results: end -->"
PEERS: Final = ("quorumlock", "redis", "hiredis", "pottery", "python-redis-lock", "aioredlock")


@dataclass(frozen=True)
class SuiteConfig:
    """Every figure's settings; :func:`quick_config` is the CI smoke run's."""

    server_counts: tuple[int, ...] = SERVER_COUNTS
    uncontended: uncontended.Config = field(
        default_factory=lambda: uncontended.Config(rounds=5, slice_seconds=0.3, warmup_seconds=0.3)
    )
    handover: handover.HandoverConfig = field(default_factory=handover.HandoverConfig)
    contention: contention.ContentionConfig = field(default_factory=contention.ContentionConfig)
    many: many_names.ManyConfig = field(default_factory=many_names.ManyConfig)
    asyncio: asyncio_cycles.BenchConfig = field(
        default_factory=lambda: asyncio_cycles.BenchConfig(
            rounds=3, slice_seconds=2.0, warmup_seconds=1.0, tasks=1000
        )
    )


def quick_config() -> SuiteConfig:
    """Every figure and every contender, with tiny samples: seconds per figure."""
    return SuiteConfig(
        uncontended=uncontended.Config(rounds=1, slice_seconds=0.05, warmup_seconds=0.03),
        handover=handover.HandoverConfig(waiters=(2,), rounds=1, slice_seconds=1.0),
        contention=contention.ContentionConfig(processes=(1, 2), rounds=1, slice_seconds=0.5),
        many=many_names.ManyConfig(count=300, peer_count=100, ttl=1.5, window=1.0),
        asyncio=asyncio_cycles.BenchConfig(
            rounds=1, slice_seconds=0.4, warmup_seconds=0.25, tasks=100
        ),
    )


# --------------------------------------------------------------------------- figures


def _uncontended(urls: Sequence[str], config: SuiteConfig, log: Callable[[str], None]) -> Any:
    results = uncontended.run_benchmark(
        urls,
        config.uncontended,
        log=lambda m: log(f"uncontended: {m}"),
        contenders=uncontended.contenders_for(config.server_counts),
    )
    summaries = [r.summary() for r in results]
    ratios = uncontended.compute_ratios({s["slug"]: s for s in summaries}, _figure1_ratios(config))
    return {"config": asdict(config.uncontended), "results": summaries, "ratios": ratios}


def _figure1_ratios(config: SuiteConfig) -> list[uncontended.Ratio]:
    Ratio = uncontended.Ratio
    out = [
        Ratio(
            "bare floor N=5 cycles/s / quorumlock N=5 cycles/s",
            "floor-n5",
            "quorumlock-n5",
            "cycles_per_second",
            TARGET_FLOOR,
            at_least=False,
        )
    ]
    for n in config.server_counts:
        out.append(
            Ratio(
                f"quorumlock N={n} cycles/s / pottery N={n} cycles/s",
                f"quorumlock-n{n}",
                f"pottery-n{n}",
                "cycles_per_second",
            )
        )
        if n != 5:
            out.append(
                Ratio(
                    f"bare floor N={n} cycles/s / quorumlock N={n} cycles/s",
                    f"floor-n{n}",
                    f"quorumlock-n{n}",
                    "cycles_per_second",
                )
            )
    low, high = min(config.server_counts), max(config.server_counts)
    out += [
        Ratio(
            f"quorumlock N={high} median / N={low} median (flat in N: near 1)",
            f"quorumlock-n{high}",
            f"quorumlock-n{low}",
            "median_us",
        ),
        Ratio(
            f"pottery N={high} median / N={low} median",
            f"pottery-n{high}",
            f"pottery-n{low}",
            "median_us",
        ),
        Ratio(
            "quorumlock N=1 cycles/s / redis-py Lock cycles/s",
            "quorumlock-n1",
            "redis-py-n1",
            "cycles_per_second",
        ),
        Ratio(
            "quorumlock N=1 cycles/s / python-redis-lock cycles/s",
            "quorumlock-n1",
            "redis-lock-n1",
            "cycles_per_second",
        ),
    ]
    return out


def _round_trip_ms(urls: Sequence[str]) -> float | None:
    """One N=5 round trip here: half the median bare-floor cycle (SET, then EVALSHA)."""
    runner = uncontended.BareFloorRunner(urls[:5], f"quorumlock-bench:rtt:{secrets.token_hex(4)}")
    try:
        uncontended.run_batch(runner.cycle, 0.1, 1000)  # warm
        batch = uncontended.run_batch(runner.cycle, 0.5, 5000)
    finally:
        runner.close()
    if not batch.latencies_ns:
        return None
    ordered = sorted(batch.latencies_ns)
    return ordered[len(ordered) // 2] / 2 / 1e6


async def _asyncio_figure(
    urls: Sequence[str], config: SuiteConfig, log: Callable[[str], None]
) -> Any:
    scenario = asyncio_cycles.scenarios(config.asyncio.tasks, config.asyncio.instance_timeout)[1]
    results = await asyncio_cycles.run_scenario(scenario, urls[:5], config.asyncio, log=log)
    summaries = [r.summary() for r in results]
    ratios = uncontended.compute_ratios({s["slug"]: s for s in summaries}, scenario.ratios())
    return {
        "config": asdict(config.asyncio),
        "title": scenario.title,
        "results": summaries,
        "ratios": ratios,
    }


@dataclass
class Run:
    """One run of the suite: what each figure returned, or the error that stopped it."""

    figures: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def run_suite(
    urls: Sequence[str],
    config: SuiteConfig,
    only: Sequence[str],
    *,
    log: Callable[[str], None],
    work_dir: Path,
) -> Run:
    """Run the figures in ``only`` (in the suite's order); a crash stops that figure only."""
    run = Run()
    run_id = secrets.token_hex(4)

    def attempt(name: str, measure: Callable[[], Any]) -> None:
        began = time.monotonic()
        try:
            run.figures[name] = measure()
        except Exception as exc:  # reported, and the exit status says so
            run.errors[name] = f"{type(exc).__name__}: {exc}"
            log(f"{name}: CRASHED: {run.errors[name]}")
        run.seconds[name] = round(time.monotonic() - began, 1)

    if "uncontended" in only:
        attempt("uncontended", lambda: _uncontended(urls, config, log))
    processes = [f for f in ("handover", "contention") if f in only]
    if processes:
        size = max(
            config.handover.processes if "handover" in only else 1,
            max(config.contention.processes) if "contention" in only else 1,
        )
        try:
            log(f"starting {size} worker processes")
            with WorkerPool(size, work_dir) as pool:
                slugs = [p.slug for p in handover.CONTENDERS]
                status = warm_up(pool, urls[:5], slugs, run_id)
                log("workers ready: " + ", ".join(f"{k} {v}" for k, v in status.items()))
                if "handover" in only:
                    attempt(
                        "handover",
                        lambda: handover.run(
                            pool,
                            urls[:5],
                            config.handover,
                            status,
                            run_id=run_id,
                            shared_dir=work_dir,
                            log=log,
                            round_trip_ms=_round_trip_ms(urls),
                        ),
                    )
                if "contention" in only:
                    attempt(
                        "contention",
                        lambda: contention.run(
                            pool,
                            urls[:5],
                            config.contention,
                            status,
                            run_id=run_id,
                            shared_dir=work_dir,
                            log=log,
                        ),
                    )
        except Exception as exc:  # the pool itself failed: its figures did not run
            for name in processes:
                run.errors.setdefault(name, f"{type(exc).__name__}: {exc}")
    if "many" in only:
        attempt("many", lambda: many_names.run(urls[:5], config.many, run_id=run_id, log=log))
    if "asyncio" in only:
        attempt("asyncio", lambda: asyncio.run(_asyncio_figure(urls, config, log)))
    return run


# --------------------------------------------------------------------------- report


def figure_tables(name: str, figure: dict[str, Any]) -> list[Table]:
    """The tables of one figure, as printed and as written into the docs."""
    if name == "uncontended":
        body = uncontended.results_rows(figure["results"])
        return [
            replace(body, title="Figure 1: uncontended acquire+release vs N"),
            replace(uncontended.ratios_rows(figure["ratios"]), title="Figure 1: ratios"),
        ]
    if name == "handover":
        return handover.tables(figure)
    if name == "contention":
        return contention.tables(figure)
    if name == "many":
        return many_names.tables(figure)
    if name == "asyncio":
        body = uncontended.results_rows(figure["results"])
        return [
            replace(body, title=f"Figure 5: asyncio, {figure['title']}"),
            replace(uncontended.ratios_rows(figure["ratios"]), title="Figure 5: ratios"),
        ]
    raise ValueError(name)


def _uncontended_medians(run: Run) -> dict[str, float]:
    """Figure 1's median cycle (us) of each contender that ran, by slug."""
    fig1 = run.figures.get("uncontended") or {}
    return {
        s["slug"]: float(s["median_us"])
        for s in fig1.get("results", [])
        if s["status"] == "ok" and s["median_us"] is not None
    }


def _acquire_rate(run: Run) -> float | None:
    """Figure 4: quorumlock's auto-extended locks acquired per second."""
    for row in run.figures.get("many", {}).get("rows", []):
        if row["contender"] == "quorumlock" and row["status"] == "ok":
            seconds = row["acquire_seconds"]
            return None if not seconds else row["count"] / seconds
    return None


def issue_targets(run: Run) -> list[dict[str, Any]]:
    """The targets, one row each (``n/a`` when its figure did not run), as
    docs/benchmarks.md ("Targets") states them."""
    medians = _uncontended_medians(run)
    ours, floor = medians.get("quorumlock-n5"), medians.get("floor-n5")
    floor_vs_redis = ratio(floor, medians.get("redis-py-n1"))
    # the floor's own target applies where the bare floor is above redis-py's target
    by_floor = floor_vs_redis is not None and floor_vs_redis > TARGET_VS_REDIS_PY
    rows = [
        target_row(
            "1. uncontended: quorumlock N=5 median / redis-py Lock N=1 median",
            ratio(ours, medians.get("redis-py-n1")),
            None if by_floor else TARGET_VS_REDIS_PY,
            at_least=False,
        ),
        target_row(
            "1. uncontended: bare floor N=5 median / redis-py Lock N=1 median",
            floor_vs_redis,
        ),
        target_row(
            "1. uncontended: quorumlock N=5 median / bare floor N=5 median"
            + ("" if by_floor else " (applies when the floor is above redis-py's target)"),
            ratio(ours, floor),
            TARGET_VS_FLOOR if by_floor else None,
            at_least=False,
        ),
        # what is left of the gap to the floor, in two parts
        target_row(
            "1. uncontended: quorumlock N=5 median / floor with quorumlock's scripts N=5 "
            "median (the client's part)",
            ratio(ours, medians.get("floor-scripts-n5")),
        ),
        target_row(
            "1. uncontended: floor with quorumlock's scripts N=5 median / bare floor N=5 "
            "median (the scripts' part)",
            ratio(medians.get("floor-scripts-n5"), floor),
        ),
    ]
    fig2 = run.figures.get("handover")
    handed = [r for r in handover.targets(fig2) if r["target"]] if fig2 else []
    placeholder = target_row(
        "hand-over median", None, handover.TARGET_MEDIAN_MS, at_least=False, unit="ms"
    )
    rows += [row | {"name": "2. " + row["name"]} for row in handed or [placeholder]]
    fig3 = run.figures.get("contention")
    contended = [r for r in contention.targets(fig3) if r["target"]] if fig3 else []
    placeholder = target_row("contended N=5 cs/s vs pottery", None, contention.TARGET_VS_POTTERY)
    rows += [row | {"name": "3. " + row["name"]} for row in contended or [placeholder]]
    rate = _acquire_rate(run)
    cycles = medians.get("quorumlock-n5")
    rows.append(
        target_row(
            "4. auto-extended locks acquired/s (figure 4) / uncontended N=5 cycles/s",
            ratio(rate, None if cycles is None else 1e6 / cycles),
            TARGET_MANY_ACQUIRES,
        )
    )
    return rows


def crashes(run: Run) -> list[str]:
    """What makes the exit status 1: crashed figures, overlapping holds, quorumlock failing."""
    found = [f"{name} crashed: {error}" for name, error in run.errors.items()]
    for name in ("handover", "contention"):
        for row in run.figures.get(name, {}).get("rows", []):
            if row["status"] == "ok" and (row["overlaps"] or not row["counter_ok"]):
                found.append(f"{name}: {row['label']} had overlapping holds")
    for name in ("uncontended", "asyncio"):
        for row in run.figures.get(name, {}).get("results", []):
            if row["slug"].startswith("quorumlock") and row["status"] != "ok":
                found.append(f"{name}: {row['label']} N={row['servers']}: {row['status']}")
    many = run.figures.get("many", {}).get("rows", [])
    for row in many:
        if row["contender"] == "quorumlock" and row["status"] != "ok":
            found.append(f"many: quorumlock: {row['status']}")
    return found


def render_text(run: Run, meta: dict[str, Any]) -> str:
    lines = [
        f"quorumlock benchmark suite ({'quick smoke run' if meta['quick'] else 'full run'})",
        f"servers: {meta['servers']['description']}",
        f"client: {describe_environment(meta)}",
        "versions: "
        + ", ".join(f"{k} {v or 'not installed'}" for k, v in meta["versions"].items()),
        "",
    ]
    for name in FIGURES:
        if name in run.figures:
            for tbl in figure_tables(name, run.figures[name]):
                lines += [tbl.text(), ""]
        elif name in run.errors:
            lines += [f"{name}: CRASHED: {run.errors[name]}", ""]
    lines += [
        targets_table(issue_targets(run), "Targets (ratios from this run)").text(),
        "",
    ]
    return "\n".join(lines)


def render_markdown(run: Run, meta: dict[str, Any], plots: Path | None, docs: Path) -> str:
    """The generated section of docs/benchmarks.md."""
    lines = [
        DOCS_BEGIN,
        "",
        f"Measured {meta['date']} with `{meta['command']}` ({meta['wall_seconds']:.0f} s).",
        "",
        f"- servers: {meta['servers']['description']}",
        f"- client: {describe_environment(meta)}",
        "- versions: "
        + ", ".join(f"{k} {v or 'not installed'}" for k, v in meta["versions"].items()),
        "",
        "### Targets (this run)",
        "",
        targets_table(issue_targets(run)).markdown(),
        "",
    ]
    titles = {
        "uncontended": "Figure 1: uncontended latency vs N",
        "handover": "Figure 2: hand-over latency",
        "contention": "Figure 3: contended throughput and fairness",
        "many": "Figure 4: many locks held at once",
        "asyncio": "Figure 5: asyncio, many tasks",
    }
    for name in FIGURES:
        if name not in run.figures and name not in run.errors:
            continue
        lines += [f"### {titles[name]}", ""]
        if plots is not None and name in run.figures:
            rel = _relative(plots / f"{name}.png", docs.parent)
            lines += [f"![{titles[name]}]({rel})", ""]
        if name in run.errors:
            lines += [f"Crashed: `{run.errors[name]}`", ""]
            continue
        for tbl in figure_tables(name, run.figures[name]):
            lines += [tbl.markdown(), ""]
    lines.append(DOCS_END)
    return "\n".join(lines)


def _relative(path: Path, start: Path) -> str:
    try:
        return path.resolve().relative_to(start.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def write_docs(path: Path, section: str) -> None:
    """Replace the generated section of ``path`` (between the markers), or append it."""
    text = path.read_text() if path.exists() else ""
    pattern = re.compile(re.escape(DOCS_BEGIN) + r".*?" + re.escape(DOCS_END), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text)


# --------------------------------------------------------------------------- main


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.suite",
        description="The whole benchmark suite: quorumlock next to pottery, redis-py's Lock, "
        "python-redis-lock, aioredlock and a bare floor, on the same local servers, in one run. "
        "About 6-8 minutes on 2 cores; --quick: well under a minute.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: every figure, tiny samples"
    )
    parser.add_argument(
        "--only",
        metavar="FIGURES",
        default=",".join(FIGURES),
        help=f"comma-separated figures to run (default all: {','.join(FIGURES)})",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every number here")
    parser.add_argument(
        "--plots",
        type=Path,
        metavar="DIR",
        help="where to write the PNG plots (default docs/benchmarks/; with --quick a "
        "temporary directory)",
    )
    parser.add_argument("--no-plots", action="store_true", help="write no plots")
    parser.add_argument(
        "--write-docs",
        nargs="?",
        const=Path("docs/benchmarks.md"),
        type=Path,
        metavar="PATH",
        help="rewrite the generated section of docs/benchmarks.md (or PATH)",
    )
    args = parser.parse_args(argv)
    try:
        args.only = figures(args.only)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def figures(only: str) -> list[str]:
    """The figures that ``--only`` names (comma-separated), in the suite's order.

    Raises ``ValueError`` for an unknown figure, or none.
    """
    chosen = [f.strip() for f in only.split(",") if f.strip()]
    unknown = sorted(set(chosen) - set(FIGURES))
    if not chosen:
        raise ValueError(f"--only names no figure; choose from {','.join(FIGURES)}")
    if unknown:
        raise ValueError(f"--only: unknown figure(s) {unknown}; choose from {','.join(FIGURES)}")
    return [f for f in FIGURES if f in chosen]


def _progress(message: str) -> None:
    print(f"  ... {message}", file=sys.stderr, flush=True)


def main(
    argv: Sequence[str] | None = None,
    *,
    log: Callable[[str], None] = _progress,
    out: TextIO | None = None,
) -> int:
    """Run the suite as its command line says; the report goes to ``out`` (stdout)."""
    stream = out if out is not None else sys.stdout
    args = _parse_args(argv)
    config = quick_config() if args.quick else SuiteConfig()
    signal.signal(signal.SIGTERM, on_sigterm)  # servers and workers stop on SIGTERM too
    began = time.monotonic()
    try:
        servers = LocalServerGroup(max(config.server_counts))
    except ServerBinaryNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with servers, tempfile.TemporaryDirectory(prefix="quorumlock-bench-") as tmp:
            urls = servers.urls
            log(f"{len(urls)} servers ready")
            meta: dict[str, Any] = {
                "quick": args.quick,
                "figures": args.only,
                "command": "python -m quorumlock.benchmarks.suite"
                + ("".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))),
                "date": datetime.date.today().isoformat(),
                "servers": server_description(urls, True),
                "versions": {p: version(p) for p in PEERS},
                **environment(),
            }
            run = run_suite(urls, config, args.only, log=log, work_dir=Path(tmp))
    except KeyboardInterrupt:
        print("interrupted; workers and servers stopped", file=sys.stderr)
        return 130
    meta["wall_seconds"] = round(time.monotonic() - began, 1)
    meta["figure_seconds"] = run.seconds

    print(render_text(run, meta), file=stream)
    plots: Path | None = None
    if not args.no_plots:
        plots = args.plots or (
            Path(tempfile.mkdtemp(prefix="quorumlock-plots-"))
            if args.quick
            else Path("docs/benchmarks")
        )
        written, why = _plots.write_all(run.figures, plots)
        listed = ", ".join(str(p) for p in written) or "none"
        print(f"plots: {listed}{f' ({why})' if why else ''}", file=stream)
    if args.json is not None:
        document = {
            "meta": meta,
            "figures": run.figures,
            "errors": run.errors,
            "targets": issue_targets(run),
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    if args.write_docs is not None:
        write_docs(args.write_docs, render_markdown(run, meta, plots, args.write_docs))
        print(f"docs: rewrote the generated section of {args.write_docs}", file=stream)
    problems = crashes(run)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    print(f"(wall time {meta['wall_seconds']:.1f} s)", file=stream)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
