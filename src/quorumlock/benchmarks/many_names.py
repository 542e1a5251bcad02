"""Figure 4 of the suite: one process holding many locks at once, renewed automatically.

Each contender runs in a fresh worker process of its own (so that its memory is measured
from a clean start; see ``hold_many`` in ``_workers.py``): acquire ``count`` locks on
distinct names, hold them all for ``window`` seconds, release them; then acquire up to
``traced_count`` again under ``tracemalloc`` and release them. Measured:

* the time the acquisitions took, untraced (tracing slows Python several times over,
  and a lease thread slowed as much falls behind and loses locks);
* memory per held lock: the growth of the resident set (``/proc/self/statm``) over the
  untraced acquisitions, and of Python's traced allocations (``tracemalloc``) over the
  traced ones, each divided by its count. ``tracemalloc`` does not see thread stacks,
  the resident set does;
* renewal traffic during the window: extensions per second (counted by the locks, where
  the library exposes them) and commands per second on the servers (``INFO
  commandstats`` before and after, summed over the servers, INFO itself left out);
* locks lost during the window (where the library exposes it).

Contenders:

* quorumlock, N = 5: ``rl.lock(name, ttl=..., auto_extend=True, max_hold=math.inf)``;
  one lease thread per ``Redlock`` renews every lock a third of the way into its ttl;
* python-redis-lock, N = 1: ``Lock(client, name, expire=..., auto_renewal=True)``: one
  renewal thread per lock, every ``expire * 2 / 3`` s. A thread per lock does not scale
  to 10,000, so it holds fewer (``--many-peer-count``) and the report says so;
* pottery ``Redlock`` (N = 5) and redis-py ``Lock`` (N = 1) have no automatic renewal:
  they hold their locks with a ttl longer than the window, to show the memory of a held
  lock only.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from quorumlock.benchmarks._common import (
    Table,
    num,
    ratio,
    target_row,
    targets_table,
    version,
)
from quorumlock.benchmarks._workers import WorkerError, WorkerPool

__all__ = ["ManyConfig", "run", "summarize", "tables", "targets"]


@dataclass(frozen=True)
class _Many:
    slug: str
    label: str
    package: str
    servers: int
    renewal: str


CONTENDERS: Final[tuple[_Many, ...]] = (
    _Many("quorumlock", "quorumlock", "quorumlock", 5, "auto_extend: one lease thread"),
    _Many("redis-lock", "python-redis-lock", "python-redis-lock", 1, "auto_renewal: thread/lock"),
    _Many("pottery", "pottery Redlock", "pottery", 5, "none (no auto-renewal)"),
    _Many("redis-py", "redis-py Lock", "redis", 1, "none (no auto-renewal)"),
)

#: The ttl of the locks that are not renewed: longer than any window, so none expires.
_UNRENEWED_TTL: Final = 120.0
#: Seconds allowed per acquired lock, on top of the window, before a worker counts as hung.
_PER_LOCK: Final = 0.01


@dataclass(frozen=True)
class ManyConfig:
    """How many locks each contender holds, their ttl, and the measured window."""

    count: int = 10_000
    peer_count: int = 1_000  # python-redis-lock (a thread per lock) and pottery (slow)
    ttl: float = 3.0
    window: float = 6.0
    traced_count: int = 2_000  # locks acquired again under tracemalloc, for memory

    def count_for(self, slug: str) -> int:
        return self.count if slug in ("quorumlock", "redis-py") else self.peer_count


def summarize(spec: _Many, reply: dict[str, Any], config: ManyConfig) -> dict[str, Any]:
    """One row of the figure from a worker's ``hold_many`` reply."""
    row: dict[str, Any] = {
        "contender": spec.slug,
        "label": spec.label,
        "version": version(spec.package),
        "servers": spec.servers,
        "renewal": spec.renewal,
        "status": reply.get("status", "failed: no reply"),
    }
    if row["status"] != "ok":
        return row
    count = int(reply["held"])  # the locks actually held: per-lock figures divide by it
    window = float(reply["window_measured"])
    calls = reply["server_calls"]
    renewed = spec.slug in ("quorumlock", "redis-lock")
    if spec.slug == "quorumlock":
        due = count / (config.ttl / 3)  # a third of the way into each ttl
    elif spec.slug == "redis-lock":
        due = count / (max(1, round(config.ttl)) * 2 / 3)
    else:
        due = 0.0
    extensions = reply["extensions"]
    if extensions is None and spec.slug == "redis-lock":
        # One EVALSHA per extension on its single server; nothing else runs in the window.
        extensions = calls.get("evalsha", 0) + calls.get("eval", 0)
    row.update(
        count=count,
        ttl=float(reply["ttl"]) if renewed else None,
        acquire_seconds=reply["acquire_seconds"],
        acquire_retries=reply["acquire_retries"],
        acquire_failures=reply["acquire_failures"],
        asked=int(reply["count"]),
        traced_count=int(reply["traced_held"]),
        traced_bytes_per_lock=reply["traced_bytes"] / max(1, int(reply["traced_held"])),
        rss_bytes_per_lock=None if reply["rss_bytes"] is None else reply["rss_bytes"] / count,
        threads=reply["threads"],
        window=window,
        extensions_per_second=None if extensions is None else extensions / window,
        extensions_due_per_second=due if renewed else None,
        server_commands_per_second=sum(calls.values()) / window,
        server_calls=calls,
        lost=reply["lost"],
        released=reply["released"],
    )
    return row


def run(
    urls: Sequence[str],
    config: ManyConfig,
    *,
    run_id: str,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Each contender in a fresh process of its own, one after the other."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="quorumlock-bench-many-") as tmp:
        for spec in CONTENDERS:
            count = config.count_for(spec.slug)
            ttl = config.ttl if spec.slug in ("quorumlock", "redis-lock") else _UNRENEWED_TTL
            command = {
                "cmd": "many",
                "contender": spec.slug,
                "urls": list(urls[: spec.servers]),
                "count": count,
                "ttl": ttl,
                "window": config.window,
                "traced_count": config.traced_count,
                "name": f"quorumlock-bench:many:{run_id}:{spec.slug}",
            }
            traced = min(count, config.traced_count)
            deadline = time.monotonic() + 60 + config.window + (count + traced * 3) * _PER_LOCK
            try:
                with WorkerPool(1, Path(tmp)) as pool:
                    reply = pool.request({0: command}, deadline)[0]
            except WorkerError as exc:
                reply = {"status": f"failed: {exc}"}
            rows.append(summarize(spec, reply, config))
            log(f"many names: {spec.label} done")
    return {"config": asdict(config), "rows": rows}


def _row(result: dict[str, Any], slug: str) -> dict[str, Any]:
    return next((r for r in result["rows"] if r["contender"] == slug and r["status"] == "ok"), {})


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Informational: how the renewals kept up, and memory next to the peers'."""
    ours = _row(result, "quorumlock")
    out = [
        target_row(
            "quorumlock extensions done / due in the window",
            ratio(ours.get("extensions_per_second"), ours.get("extensions_due_per_second")),
        )
    ]
    for slug, label in (
        ("redis-lock", "python-redis-lock"),
        ("pottery", "pottery Redlock"),
        ("redis-py", "redis-py Lock"),
    ):
        theirs = _row(result, slug).get("traced_bytes_per_lock")
        out.append(
            target_row(
                f"{label} traced bytes per lock / quorumlock's",
                ratio(theirs, ours.get("traced_bytes_per_lock")),
            )
        )
    return out


def tables(result: dict[str, Any]) -> list[Table]:
    """The figure's results table and its ratios."""
    body = []
    for r in result["rows"]:
        label = r["label"] + (f" {r['version']}" if r["version"] else "")
        if r["status"] != "ok":
            body.append([label, str(r["servers"]), *["-"] * 10, r["status"]])
            continue
        body.append(
            [
                label,
                str(r["servers"]),
                f"{r['count']:,}",
                num(r["traced_bytes_per_lock"], ",.0f"),
                num(r["rss_bytes_per_lock"], ",.0f"),
                str(r["threads"]),
                num(r["extensions_per_second"], ",.0f"),
                num(r["extensions_due_per_second"], ",.0f"),
                num(r["server_commands_per_second"], ",.0f"),
                "-" if r["lost"] is None else str(r["lost"]),
                num(r["acquire_seconds"], ".1f"),
                str(r["acquire_retries"]),
                r["renewal"],
            ]
        )
    cfg = result["config"]
    notes = (
        f"Renewed locks: ttl {cfg['ttl']:g} s (python-redis-lock: whole seconds); window "
        f"{cfg['window']:g} s. B/lock: tracemalloc growth over a second pass of up to "
        f"{cfg.get('traced_count', 0):,} acquisitions (tracing slows Python several times "
        "over: the first pass, which gives the other columns, runs untraced), and "
        "resident-set growth over the first pass (thread stacks included), per lock. "
        "ext/s due: the rate the "
        "library's own schedule asks for. Server cmd/s: INFO commandstats, all servers, "
        "commands run inside scripts included. "
        "lost: locks lost by the end of the window. retries: failed acquire attempts "
        "(quorumlock: up to 5 per lock, each on a fresh name; a lock whose 5 failed is "
        "left out of 'locks')."
    )
    header = ["contender", "N", "locks", "B/lock traced", "B/lock RSS", "threads", "ext/s"]
    return [
        Table(
            [*header, "ext/s due", "server cmd/s", "lost", "acquire s", "retries", "renewal"],
            body,
            frozenset(range(1, 12)),
            "Figure 4: many locks held at once",
            notes,
        ),
        targets_table(targets(result), "Figure 4: ratios"),
    ]
