"""PNG plots of the suite's figures, with matplotlib's non-interactive Agg backend.

matplotlib is imported only here, and only when plots are written (``quorumlock[bench]``
installs it); without it the suite prints its tables and says that no plot was written.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["write_all"]

_COLOURS = {
    "quorumlock": "tab:blue",
    "floor": "tab:gray",
    "pottery": "tab:orange",
    "redis-py": "tab:green",
    "redis-lock": "tab:red",
    "aioredlock": "tab:purple",
}


def _colour(slug: str) -> str:
    return next((c for prefix, c in _COLOURS.items() if slug.startswith(prefix)), "black")


def _uncontended(plt: Any, figure: dict[str, Any], path: Path) -> None:
    fig, (ax50, ax99) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    rows = [r for r in figure["results"] if r["status"] == "ok" and r["median_us"]]
    families: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        families.setdefault(row["slug"].rsplit("-n", 1)[0], []).append(row)
    for family, members in families.items():
        members.sort(key=lambda r: r["servers"])
        xs = [r["servers"] for r in members]
        label = members[0]["label"]
        style = "o-" if len(members) > 1 else "s"
        for ax, key in ((ax50, "median_us"), (ax99, "p99_us")):
            ax.plot(xs, [r[key] for r in members], style, color=_colour(family), label=label)
    for ax, title in ((ax50, "p50"), (ax99, "p99")):
        ax.set_title(f"uncontended acquire+release, {title}")
        ax.set_xlabel("N (servers)")
        ax.set_yscale("log")
        ax.set_xticks(sorted({r["servers"] for r in rows}) or [1])
        ax.grid(True, which="both", alpha=0.3)
    ax50.set_ylabel("latency per cycle (us, log)")
    ax50.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _by_contender(
    rows: list[dict[str, Any]], x: str, y: str
) -> dict[str, tuple[str, list[Any], list[Any]]]:
    out: dict[str, tuple[str, list[Any], list[Any]]] = {}
    for row in rows:
        if row["status"] != "ok" or row.get(y) is None:
            continue
        label = f"{row['label']} (N={row['servers']})"
        _, xs, ys = out.setdefault(row["contender"], (label, [], []))
        xs.append(row[x])
        ys.append(row[y])
    return out


def _handover(plt: Any, figure: dict[str, Any], path: Path) -> None:
    fig, (ax50, ax99) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, key, title in ((ax50, "p50_ms", "p50"), (ax99, "p99_ms", "p99")):
        for slug, (label, xs, ys) in _by_contender(figure["rows"], "waiters", key).items():
            ax.plot(xs, [max(v, 1e-3) for v in ys], "o-", color=_colour(slug), label=label)
        ax.set_title(f"hand-over: release -> next acquire, {title}")
        ax.set_xlabel("waiting processes")
        ax.set_xscale("log", base=2)
        ax.set_xticks(figure["config"]["waiters"], [str(w) for w in figure["config"]["waiters"]])
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.axhline(5.0, color="black", linestyle=":", linewidth=1)
    ax50.set_ylabel("ms (log); dotted: the 5 ms target")
    ax50.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _contention(plt: Any, figure: dict[str, Any], path: Path) -> None:
    fig, (rate, fair) = plt.subplots(1, 2, figsize=(11, 4.2))
    for slug, (label, xs, ys) in _by_contender(
        figure["rows"], "processes", "cs_per_second"
    ).items():
        rate.plot(xs, ys, "o-", color=_colour(slug), label=label)
    for slug, (label, xs, ys) in _by_contender(figure["rows"], "processes", "jain").items():
        fair.plot(xs, ys, "o-", color=_colour(slug), label=label)
    ticks = figure["config"]["processes"]
    for ax in (rate, fair):
        ax.set_xlabel("processes on one name")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(p) for p in ticks])
        ax.grid(True, which="both", alpha=0.3)
    rate.set_yscale("log")
    rate.set_title("critical sections per second (log)")
    fair.set_title("fairness: Jain's index (1 = even shares)")
    fair.set_ylim(0, 1.05)
    rate.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _many(plt: Any, figure: dict[str, Any], path: Path) -> None:
    rows = [r for r in figure["rows"] if r["status"] == "ok"]
    fig, (memory, traffic) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = [f"{r['label']}\n{r['count']:,} locks" for r in rows]
    xs = range(len(rows))
    width = 0.4
    memory.bar(
        [x - width / 2 for x in xs],
        [r["traced_bytes_per_lock"] for r in rows],
        width,
        label="tracemalloc",
    )
    memory.bar(
        [x + width / 2 for x in xs],
        [r["rss_bytes_per_lock"] or 0 for r in rows],
        width,
        label="resident set",
    )
    memory.set_title("memory per held lock (bytes)")
    memory.set_xticks(list(xs), labels, fontsize=8)
    memory.legend(fontsize=8)
    renewed = [r for r in rows if r["extensions_due_per_second"]]
    rx = range(len(renewed))
    traffic.bar(
        [x - width / 2 for x in rx],
        [r["extensions_due_per_second"] for r in renewed],
        width,
        label="due (library's schedule)",
        color="lightgray",
    )
    traffic.bar(
        [x + width / 2 for x in rx],
        [r["extensions_per_second"] or 0 for r in renewed],
        width,
        label="done",
    )
    traffic.set_xticks(
        list(rx), [f"{r['label']}\n{r['count']:,} locks" for r in renewed], fontsize=8
    )
    traffic.set_title(f"extensions per second (ttl {figure['config']['ttl']:g} s)")
    traffic.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _asyncio(plt: Any, figure: dict[str, Any], path: Path) -> None:
    rows = [r for r in figure["results"] if r["status"] == "ok" and r["cycles_per_second"]]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.bar(
        [r["label"] for r in rows],
        [r["cycles_per_second"] for r in rows],
        color=[_colour(r["slug"]) for r in rows],
    )
    ax.set_title(f"asyncio, {figure['config']['tasks']:,} tasks on distinct names, N=5")
    ax.set_ylabel("acquire+release cycles per second")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


_PLOTTERS: dict[str, Callable[[Any, dict[str, Any], Path], None]] = {
    "uncontended": _uncontended,
    "handover": _handover,
    "contention": _contention,
    "many": _many,
    "asyncio": _asyncio,
}


def write_all(figures: dict[str, Any], directory: Path) -> tuple[list[Path], str]:
    """One PNG per figure in ``directory``; returns the files and why any is missing."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        return [], "matplotlib is not installed: pip install 'quorumlock[bench]'"
    matplotlib.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, figure in figures.items():
        path = directory / f"{name}.png"
        _PLOTTERS[name](plt, figure, path)
        written.append(path)
    return written, ""
