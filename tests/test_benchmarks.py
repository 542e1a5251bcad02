"""The benchmark suite: its pure parts, its checks on real processes, and one tiny run.

No timing is asserted anywhere: a benchmark's numbers are its output, not a test.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

import quorumlock
from quorumlock._io import fanout
from quorumlock.benchmarks import (
    _plots,
    asyncio_cycles,
    chain,
    contention,
    failover,
    handover,
    many_names,
    profile_cycle,
    refusals,
    rwlock_cycles,
    semaphore,
    server_cost,
    suite,
    trace,
    uncontended,
    versions,
)
from quorumlock.benchmarks._common import (
    START,
    Table,
    WorkersNotReady,
    each_count,
    environment,
    handovers,
    judge,
    latency_summary,
    percentile,
    ratio,
    rotated,
    shares,
    through_gate,
    unavailable_line,
    worker_processes,
)
from quorumlock.benchmarks._workers import Slice, WorkerPool, run_slice, warm_up
from quorumlock.testing import Hold, LocalServerGroup
from quorumlock.testing._checker import overlapping_pairs
from tests.conftest import refused_ports


def overlaps(holds: list[Hold]) -> list[tuple[Hold, Hold]]:
    return list(overlapping_pairs(holds))


def timed(worker: int, acquired: int, releasing: int, released: int) -> Hold:
    """A benchmark hold: ``time.monotonic_ns()`` readings, as ``run_slice`` records them."""
    return Hold(worker, start=acquired, end=releasing, released=released)


# --------------------------------------------------------------------------- statistics


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 101))
    assert percentile(values, 0.99) == 99
    assert percentile(values, 0.5) == 50
    assert percentile(values, 1.0) == 100
    assert percentile([7], 0.99) == 7
    assert math.isnan(percentile([], 0.5))


def test_latency_summary() -> None:
    assert latency_summary([4.0, 1.0, 3.0, 2.0]) == {"count": 4, "p50": 2.5, "p99": 4.0, "max": 4.0}
    assert latency_summary([]) == {"count": 0, "p50": None, "p99": None, "max": None}


def test_rotated_puts_each_item_once_in_each_position() -> None:
    items = ["a", "b", "c"]
    orders = [rotated(items, i) for i in range(3)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert rotated([], 4) == []


# --------------------------------------------------------------------------- ratios


def test_ratio_and_judge() -> None:
    assert ratio(10.0, 4.0) == 2.5
    assert ratio(None, 4.0) is None
    assert ratio(1.0, 0.0) is None
    assert ratio(math.nan, 1.0) is None
    assert judge(2.0, 2.0) == "pass"  # at least: the bound is included
    assert judge(1.99, 2.0) == "MISS"
    assert judge(4.9, 5.0, at_least=False) == "pass"
    assert judge(5.1, 5.0, at_least=False) == "MISS"
    assert judge(None, 5.0) == "n/a"
    assert judge(3.0, None) == "info"


def _summary(slug: str, rates: list[float], status: str = "ok") -> dict[str, Any]:
    return {
        "slug": slug,
        "status": status,
        "cycles_per_second": sorted(rates)[len(rates) // 2],
        "cycles_per_second_by_round": rates,
        "median_us": None,
        "median_us_by_round": [],
    }


def test_compute_ratios_pairs_rounds_and_judges_targets() -> None:
    spec = uncontended.Ratio("a/b", "a", "b", "cycles_per_second", 2.0)
    info = uncontended.Ratio("b/a", "b", "a", "cycles_per_second")
    summaries = {
        "a": _summary("a", [100.0, 300.0, 200.0]),
        "b": _summary("b", [50.0, 100.0, 200.0]),
    }
    got, other = uncontended.compute_ratios(summaries, [spec, info])
    assert got["value"] == pytest.approx(200 / 100)
    assert (got["per_round_min"], got["per_round_max"]) == (1.0, 3.0)
    assert (got["target"], got["result"]) == (">= 2x", "pass")
    assert other["result"] == "info"
    summaries["b"]["status"] = "failed: no cycle succeeded"
    (missing,) = uncontended.compute_ratios(summaries, [spec])
    assert (missing["value"], missing["result"]) == (None, "n/a")


# --------------------------------------------------------------------------- shares


def test_shares_of_an_even_split() -> None:
    got = shares([5, 5, 5, 5])
    assert got == {"min_share": 0.25, "max_share": 0.25, "min_over_fair": 1.0, "jain": 1.0}


def test_shares_when_one_worker_starves() -> None:
    got = shares({"a": 30, "b": 10, "c": 0})
    assert got["min_share"] == 0.0
    assert got["max_share"] == 0.75
    assert got["min_over_fair"] == 0.0
    assert got["jain"] == pytest.approx(40**2 / (3 * (900 + 100)))
    assert shares([0, 0]) == dict.fromkeys(("min_share", "max_share", "min_over_fair", "jain"))


# --------------------------------------------------------------------------- overlaps


def test_disjoint_holds_do_not_overlap() -> None:
    holds = [timed(0, 0, 10, 11), timed(1, 10, 20, 21), timed(0, 25, 30, 31)]
    assert overlaps(holds) == []  # touching (10 == 10) is not overlapping


def test_overlapping_holds_are_found_in_any_order() -> None:
    first, second, third = timed(0, 0, 100, 101), timed(1, 50, 60, 61), timed(2, 90, 120, 121)
    found = overlaps([third, second, first])
    assert found == [(first, second), (first, third)]


def test_a_hold_inside_a_long_one_is_found_after_a_short_one() -> None:
    long, short, late = timed(0, 0, 100, 100), timed(1, 10, 20, 20), timed(2, 30, 40, 40)
    assert overlaps([long, short, late]) == [(long, short), (long, late)]


# --------------------------------------------------------------------------- hand-overs


def test_handovers_pair_consecutive_holds_of_different_workers() -> None:
    holds = [
        timed(0, 1_000, 1_100, 1_200),
        timed(1, 1_250, 1_300, 1_400),  # 50 after worker 0's release completed
        timed(1, 1_500, 1_600, 1_700),  # same worker again: not a hand-over
        timed(2, 1_690, 1_800, 1_900),  # granted before worker 1's release returned: -10
        timed(0, 9_000, 9_100, 9_200),  # acquired after the stop: left out
    ]
    assert handovers(holds, start=0, stop=5_000) == [50, -10]
    assert handovers(holds, start=1_100, stop=5_000) == [-10]
    # and the take-backs: worker 1 again, 100 after its own release completed
    assert handovers(holds, start=0, stop=5_000, same_worker=True) == [100]


def _slice(holds: list[Hold], workers: int, counted: int | None = None) -> Slice:
    return Slice(
        contender="x",
        workers=workers,
        start_ns=0,
        stop_ns=2_000_000_000,
        holds=holds,
        failures=0,
        overlaps_seen=0,
        counted=len(holds) if counted is None else counted,
        error=None,
    )


def test_handover_summary() -> None:
    ms = 1_000_000
    holds = [timed(i % 2, i * 10 * ms, i * 10 * ms + ms, i * 10 * ms + 2 * ms) for i in range(5)]
    row = handover.summarize(handover.CONTENDERS[0], 1, [_slice(holds, 2)], "ok")
    assert (row["handovers"], row["p50_ms"], row["overlaps"], row["counter_ok"]) == (
        4,
        8.0,
        0,
        True,
    )
    lost = handover.summarize(handover.CONTENDERS[0], 1, [_slice(holds, 2, counted=4)], "ok")
    assert not lost["counter_ok"]  # an increment lost to a concurrent holder


def test_contention_summary_counts_shares_over_rounds() -> None:
    first = _slice([timed(0, 1, 2, 3)] * 3 + [timed(1, 4, 5, 6)], 3)
    second = _slice([timed(1, 1, 2, 3)] * 2, 3)
    row = contention.summarize(contention.CONTENDERS[0], 3, [first, second], "ok")
    assert row["per_process"] == [3, 3, 0]
    assert row["critical_sections"] == 6
    assert (row["min_share"], row["max_share"]) == (0.0, 0.5)
    assert row["cs_per_second_by_round"] == [2.0, 1.0]  # 4 and 2 holds in 2 s slices


# --------------------------------------------------------------------------- reports


def test_markdown_table() -> None:
    table = Table(["name", "n"], [["a|b", "1"]], frozenset({1}), "T", "note")
    assert table.markdown() == "**T**\n\n| name | n |\n|---|--:|\n| a\\|b | 1 |\n\nnote"
    assert "a|b" in table.text()


def test_write_docs_replaces_only_the_generated_section(tmp_path: Path) -> None:
    path = tmp_path / "benchmarks.md"
    path.write_text(f"# Title\n\nprose\n\n{suite.DOCS_BEGIN}\nold\n{suite.DOCS_END}\n\nafter\n")
    suite.write_docs(path, f"{suite.DOCS_BEGIN}\nnew\n{suite.DOCS_END}")
    assert path.read_text() == (
        f"# Title\n\nprose\n\n{suite.DOCS_BEGIN}\nnew\n{suite.DOCS_END}\n\nafter\n"
    )
    fresh = tmp_path / "fresh.md"
    suite.write_docs(fresh, "section")
    assert fresh.read_text() == "section\n"


def test_targets_of_an_empty_run_are_not_measured() -> None:
    rows = suite.issue_targets(suite.Run())
    assert [row["result"] for row in rows if row["target"]] == ["n/a"] * 4
    assert [row["name"][0] for row in rows if row["target"]] == ["1", "2", "3", "4"]


def _figure1(medians: dict[str, float]) -> dict[str, Any]:
    return {
        "results": [
            {"slug": slug, "status": "ok", "median_us": value} for slug, value in medians.items()
        ]
    }


@pytest.mark.parametrize(
    ("floor", "ours", "results"),
    [
        (110.0, 115.0, ["pass", "info", "info"]),  # 1.15x redis-py; the floor is below 1.2x
        (110.0, 125.0, ["MISS", "info", "info"]),  # 1.25x redis-py
        (130.0, 125.0, ["info", "info", "pass"]),  # the floor is above 1.2x: ours <= floor
        (130.0, 135.0, ["info", "info", "MISS"]),
    ],
)
def test_the_uncontended_target_falls_back_to_the_floor_only_when_the_floor_is_above_it(
    floor: float, ours: float, results: list[str]
) -> None:
    medians = {
        "quorumlock-n5": ours,
        "floor-n5": floor,
        "floor-scripts-n5": 120.0,
        "redis-py-n1": 100.0,
    }
    run = suite.Run(figures={"uncontended": _figure1(medians)})
    rows = [row for row in suite.issue_targets(run) if row["name"].startswith("1.")]
    assert [row["result"] for row in rows] == [*results, "info", "info"]
    # what is left of the gap to the floor: the client's part, then the scripts'
    assert [row["value"] for row in rows[3:]] == [
        pytest.approx(ours / 120.0),
        pytest.approx(120.0 / floor),
    ]


def test_the_contention_and_many_lock_targets() -> None:
    def row(slug: str, processes: int, rate: float, jain: float) -> dict[str, Any]:
        return {
            "contender": slug,
            "processes": processes,
            "status": "ok",
            "cs_per_second": rate,
            "jain": jain,
        }

    contended = {
        "config": {"processes": [1, 2, 16]},
        "rows": [
            row("quorumlock", 1, 1000.0, 1.0),
            row("quorumlock", 2, 900.0, 0.99),
            row("quorumlock", 16, 590.0, 0.90),
            row("pottery", 1, 100.0, 1.0),
            row("pottery", 2, 90.0, 0.5),
            row("pottery", 16, 50.0, 0.5),
        ],
    }
    many = {"rows": [{"contender": "quorumlock", "status": "ok", "count": 10_000,
                      "acquire_seconds": 4.0}]}  # fmt: skip
    run = suite.Run(
        figures={
            "contention": contended,
            "many": many,
            "uncontended": _figure1({"quorumlock-n5": 250.0}),  # 4,000 cycles/s
        }
    )
    results = {row["name"]: row["result"] for row in suite.issue_targets(run)}
    assert results["3. [P=2] quorumlock N=5 cs/s / pottery N=5 cs/s"] == "pass"
    assert results["3. [P=2] quorumlock N=5 Jain's index"] == "pass"
    assert results["3. [P=16] quorumlock N=5 cs/s / pottery N=5 cs/s"] == "pass"
    assert results["3. [P=16] quorumlock N=5 Jain's index"] == "MISS"
    assert results["3. [P=16] quorumlock N=5 cs/s / its cs/s at P=1"] == "MISS"  # 0.59
    assert "3. [P=1] quorumlock N=5 cs/s / pottery N=5 cs/s" not in results  # no target
    # 2,500 acquired/s against 4,000 cycles/s: 0.625 >= 0.5
    assert results["4. auto-extended locks acquired/s (figure 4) / uncontended N=5 cycles/s"] == (
        "pass"
    )


# --------------------------------------------------------------------------- real runs


@pytest.fixture(scope="module")
def five() -> Iterator[LocalServerGroup]:
    with LocalServerGroup(5) as group:
        yield group


def test_the_floor_with_scripts_sends_what_quorumlock_sends(
    five: LocalServerGroup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Byte for byte, the scripted floor's acquire (to each server) and release are the
    commands quorumlock writes in the uncontended cycle, its token aside; and its cycle
    succeeds, leaving no key."""
    name = f"{uncontended.KEY_PREFIX}:scripts"
    written: list[bytes] = []
    write = fanout._write

    def recording(conn: Any, data: bytes) -> None:
        written.append(data)
        write(conn, data)

    ours = uncontended.QuorumlockRunner(five.urls, name)
    floor = uncontended.ScriptedFloorRunner(five.urls, name)
    try:
        assert ours.cycle()  # connects, and each server's session is known
        monkeypatch.setattr(fanout, "_write", recording)
        assert ours.cycle()
        monkeypatch.undo()
        assert len(written) == 10
        start = len(floor._acquires[0][0])  # the cycle's token, where the floor puts it
        token = written[0][start : start + len(uncontended.TOKEN_MARK)]
        assert written[:5] == [token.join(parts) for parts in floor._acquires]
        assert written[5:] == [token.join(floor._release)] * 5
        assert floor.cycle()
        assert floor.cycle()
    finally:
        ours.close()
        floor.close()
    assert [redis.Redis.from_url(url).exists(name) for url in five.urls] == [0] * 5


def test_the_checks_catch_a_lock_that_excludes_nobody(five: LocalServerGroup) -> None:
    """Two processes "holding" at once are reported, by the hold intervals and the file.

    Contend mode: both workers loop for the whole slice (hand-over mode would have each
    wait for the other after its first hold, and whether the first holds overlap depends
    on when each process wakes up). Each hold lasts 1-2 ms, asleep: the other process
    walks in then, even where both share one busy core (holds of a few microseconds,
    as before, met on a busy CI machine only by luck)."""
    with tempfile.TemporaryDirectory() as tmp, WorkerPool(2, Path(tmp)) as pool:
        assert warm_up(pool, five.urls, ["no-lock"], "test") == {"no-lock": "ok"}
        piece = run_slice(
            pool,
            contender="no-lock",
            mode="contend",
            workers=2,
            urls=five.urls,
            name="test:no-lock",
            seconds=2.0,
            shared_dir=Path(tmp),
            hold=(0.001, 0.002),
        )
    assert {hold.worker for hold in piece.holds} == {0, 1}
    assert overlaps(piece.holds)
    assert piece.overlaps_seen > 0


def test_the_checks_find_nothing_wrong_with_quorumlock(five: LocalServerGroup) -> None:
    with tempfile.TemporaryDirectory() as tmp, WorkerPool(2, Path(tmp)) as pool:
        assert warm_up(pool, five.urls, ["quorumlock"], "test") == {"quorumlock": "ok"}
        piece = run_slice(
            pool,
            contender="quorumlock",
            mode="contend",
            workers=2,
            urls=five.urls,
            name="test:quorumlock-contend",
            seconds=0.5,
            shared_dir=Path(tmp),
        )
    assert len(piece.holds) > 1
    assert overlaps(piece.holds) == []
    assert (piece.overlaps_seen, piece.counted, piece.failures) == (0, len(piece.holds), 0)


@pytest.mark.slow
def test_the_smallest_suite_end_to_end(five: LocalServerGroup, tmp_path: Path) -> None:
    """Every figure, every contender that is installed, a few hundred ms each: no crash,
    quorumlock measured everywhere, tables, Markdown and plots produced."""
    config = suite.SuiteConfig(
        server_counts=(1, 5),
        uncontended=uncontended.Config(rounds=1, slice_seconds=0.02, warmup_seconds=0.01),
        handover=handover.HandoverConfig(waiters=(1,), rounds=1, slice_seconds=0.4),
        contention=contention.ContentionConfig(processes=(2,), rounds=1, slice_seconds=0.2),
        many=many_names.ManyConfig(count=20, peer_count=5, ttl=1.5, window=0.2),
        asyncio=asyncio_cycles.BenchConfig(
            rounds=1, slice_seconds=0.1, warmup_seconds=0.05, tasks=5
        ),
    )
    messages: list[str] = []
    run = suite.run_suite(five.urls, config, suite.FIGURES, log=messages.append, work_dir=tmp_path)
    assert run.errors == {}
    assert suite.crashes(run) == []
    assert set(run.figures) == set(suite.FIGURES)
    fig1 = {r["slug"]: r for r in run.figures["uncontended"]["results"]}
    assert fig1["quorumlock-n5"]["status"] == "ok"
    assert fig1["floor-n5"]["cycles"] > 0
    quorumlock_rows = [
        r
        for name in ("handover", "contention", "many")
        for r in run.figures[name]["rows"]
        if r["contender"] == "quorumlock"
    ]
    assert [r["status"] for r in quorumlock_rows] == ["ok", "ok", "ok"]
    assert quorumlock_rows[1]["critical_sections"] > 0
    assert quorumlock_rows[2]["count"] == 20
    # Memory comes from a second, traced pass over the same number of locks.
    assert quorumlock_rows[2]["traced_count"] == 20
    assert quorumlock_rows[2]["traced_bytes_per_lock"] > 0
    meta = {
        "quick": True,
        "servers": {"description": "5 test servers"},
        "versions": {"quorumlock": "test"},
        "date": "today",
        "command": "test",
        "wall_seconds": 1.0,
        **environment(),
    }
    text = suite.render_text(run, meta)
    assert "Figure 2: hand-over latency" in text
    assert "Targets (ratios from this run)" in text
    markdown = suite.render_markdown(run, meta, tmp_path / "plots", tmp_path / "benchmarks.md")
    assert markdown.startswith(suite.DOCS_BEGIN)
    assert "![Figure 2: hand-over latency](plots/handover.png)" in markdown
    written, why = _plots.write_all(run.figures, tmp_path / "plots")
    if importlib.util.find_spec("matplotlib") is None:
        # README's test command installs the test extra only: the plots then say why not.
        assert (written, why) == (
            [],
            "matplotlib is not installed: pip install 'quorumlock[bench]'",
        )
        return
    assert why == ""
    assert [p.name for p in written] == [f"{name}.png" for name in suite.FIGURES]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_what_fails_the_run_is_a_crash_or_an_overlap_never_a_timing() -> None:
    run = suite.Run(errors={"many": "WorkerError: worker 0 (pid 1): exited"})
    row = {"status": "ok", "overlaps": 0, "counter_ok": True, "label": "pottery Redlock"}
    slow = {**row, "p50_ms": 1e6}  # a terrible number is a result, not a failure
    run.figures["handover"] = {"rows": [slow]}
    assert suite.crashes(run) == ["many crashed: WorkerError: worker 0 (pid 1): exited"]
    run.figures["contention"] = {"rows": [{**row, "counter_ok": False}]}
    assert suite.crashes(run)[1:] == ["contention: pottery Redlock had overlapping holds"]


def test_the_failover_benchmark_runs(five: LocalServerGroup) -> None:
    """One trial: a SIGKILLed leader is replaced, a resign hands over; no time asserted."""
    result = failover.measure(five.urls, ttl=1.0, trials=1)
    assert (result.servers, result.ttl) == (5, 1.0)
    assert len(result.failovers) == 1
    assert len(result.resigns) == 1
    assert all(value > 0 for value in (*result.failovers, *result.resigns))
    assert "failover after SIGKILL" in result.summary()


@pytest.mark.parametrize(
    ("path", "function", "part"),
    [
        ("/x/src/quorumlock/_io/fanout.py", "_send", "quorumlock"),
        ("/x/src/quorumlock/benchmarks/uncontended.py", "cycle", "the benchmark's loop"),
        ("/x/site-packages/redis/connection.py", "read_response", "redis-py"),
        ("~", "<method 'gets' of 'hiredis.Reader' objects>", "redis-py"),
        ("~", "<method 'poll' of 'select.poll' objects>", "waiting on the servers"),
        ("~", "<method 'recv_into' of '_socket.socket' objects>", "waiting on the servers"),
        ("~", "<method 'sendall' of '_socket.socket' objects>", "writing to the servers"),
        ("~", "<built-in method posix.write>", "writing to the servers"),
        ("~", "<built-in method posix.readv>", "waiting on the servers"),
        ("~", "<built-in method select.select>", "waiting on the servers"),
        ("~", "<built-in method posix.getpid>", "stdlib and built-ins"),
        ("~", "<built-in method builtins.isinstance>", "stdlib and built-ins"),
        ("/usr/lib/python3.11/secrets.py", "token_hex", "stdlib and built-ins"),
    ],
)
def test_the_profile_shares_time_out_by_where_the_code_lives(
    path: str, function: str, part: str
) -> None:
    assert profile_cycle._part(path, function) == part


def test_the_cycle_profile_runs(five: LocalServerGroup, capsys: pytest.CaptureFixture[str]) -> None:
    """A short run: the three loops measured and profiled; no time asserted."""
    assert profile_cycle.main(["--servers", ",".join(five.urls), "--cycles", "50"]) == 0
    out = capsys.readouterr().out
    assert "quorumlock / bare floor:" in out
    assert "(the client's part)" in out
    assert "(the scripts' part)" in out
    assert out.count("profiled (") == 3
    assert "writing to the servers" in out


def test_the_chain_benchmark_counts_hand_overs_and_take_backs(five: LocalServerGroup) -> None:
    """Two processes for a second: every critical section is counted once, and each
    one after the first is a hand-over or a take-back; no time asserted."""
    result = chain.measure(five.urls, 2, 1.0)
    assert result.sections > 1
    assert len(result.handovers) + len(result.takebacks) == result.sections - 1
    assert len(result.releases) == result.sections
    assert result.handovers, "two processes on one name never handed the lock over"
    assert result.acquire_cpu > 0
    assert result.switches > 0
    # every section took one acquire round and one release round, at least
    assert result.counted("acquire") - result.counted("acquire failed") >= result.sections
    assert result.counted("release") >= result.sections
    assert result.server_cpu is not None  # local servers: their CPU time is read
    if sys.platform == "linux":  # the host's idle time is read from /proc/stat
        assert result.host_idle is not None
        assert 0.0 <= result.host_idle <= 1.0
    # each acquire and release round observed has its duration kept, sorted
    durations = dict(result.round_ms)
    for op in ("acquire", "release"):
        assert len(durations[op]) == result.counted(op)
        assert list(durations[op]) == sorted(durations[op])
        assert durations[op][0] > 0
    assert not result.agreement  # not overheard
    assert not result.announcers
    rendered = chain.render([result])
    assert rendered.splitlines()[2].split()[0] == "2"
    medians = (result.round_median("acquire"), result.round_median("release"))
    assert f"{medians[0]:.2f} / {medians[1]:.2f}" in rendered.splitlines()[2]
    assert "releases heard" not in rendered


def test_the_chain_benchmark_reads_the_hosts_idle_time_from_proc_stat() -> None:
    """The ``cpu`` line of ``/proc/stat``: idle and I/O wait are idle, guest time is in
    user time already (not counted twice); the share idle between two readings."""
    stat = "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\nintr 12345 0 0\n"
    assert chain.cpu_times(stat) == (820, 990)
    assert chain.cpu_times("intr 1 2 3\n") is None
    assert chain.cpu_times("cpu  1 2 3 4\n") is None  # no I/O wait field: not this format
    assert chain.idle_share((820, 990), (900, 1190)) == pytest.approx(0.4)
    assert chain.idle_share(None, (900, 1190)) is None
    assert chain.idle_share((820, 990), (820, 990)) is None  # no time passed


def test_the_chain_benchmark_shows_preemptions_and_idle_time_per_critical_section() -> None:
    """The involuntary context switches per critical section and the host's idle share
    are columns of their own ("-" when the idle share is unknown)."""
    result = chain.ChainResult(
        processes=2, seconds=1.0, sections=10, handovers=(0.5,), takebacks=(0.2,) * 8,
        releases=(0.1,) * 10, acquire_cpu=0.002, release_cpu=0.001, switches=40,
        preempted=25, host_idle=0.22,
    )  # fmt: skip
    lines = chain.render([result]).splitlines()
    header = lines[0]
    assert "preempted/cs" in header
    assert header.rstrip().endswith("host idle")
    row = lines[2].split()
    assert row[-1] == "22%"
    assert "2.50" in row  # 25 involuntary switches over 10 critical sections
    unknown = chain.render([dataclasses.replace(result, host_idle=None)]).splitlines()[2]
    assert unknown.split()[-1] == "-"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no sched_setaffinity here")
def test_the_chain_benchmark_pins_the_servers_where_it_is_told() -> None:
    """``--pin-servers`` keeps every server's process on the CPUs given (its own servers,
    so the other tests' are left where they were)."""
    with LocalServerGroup(5) as group:
        pids = [int(redis.Redis.from_url(url).info("server")["process_id"]) for url in group.urls]
        before = [os.sched_getaffinity(pid) for pid in pids]
        chain.pin_servers(group.urls, {0})
        assert [os.sched_getaffinity(pid) for pid in pids] == [{0}] * 5
        assert before != [{0}] * 5 or os.cpu_count() == 1


def test_the_chain_benchmark_refuses_to_pin_servers_elsewhere() -> None:
    """Servers whose process is not on this machine (here: one that stopped, which
    answers nothing) cannot be pinned: a one-line error, no traceback."""
    with LocalServerGroup(1) as group:
        urls = group.urls
    with pytest.raises(SystemExit, match=r"^error: --pin-servers needs servers running on this"):
        chain.pin_servers(urls, {0})


def test_the_chain_benchmark_overhears_whom_each_release_named(five: LocalServerGroup) -> None:
    """With ``overhear``, every release announced in the window is tallied once, by how
    its servers' announcements agreed and by how many servers announced it: the release
    before each hand-over (but those of the last sections, which may end after the
    window), the releases of a process taking the lock back announce nothing (or a
    wake-up owed later, at most one each), and the announced undos of failed attempts.
    Two processes take turns, so most releases heard named the other one. No time
    asserted."""
    result = chain.measure(five.urls, 2, 1.0, overhear=True)
    agreement = dict(result.agreement)
    heard = sum(agreement.values())
    assert list(agreement) == list(chain.AGREEMENT)
    assert sum(count for _, count in result.announcers) == heard
    assert all(1 <= servers <= 5 for servers, _ in result.announcers)
    assert len(result.handovers) - 2 * 2 <= heard
    assert heard <= result.sections + result.counted("acquire failed")
    assert heard - agreement["nobody"] > heard // 2, "the releases named nobody: no queue"
    rendered = chain.render([result])
    assert "releases heard" in rendered.splitlines()[4]
    assert rendered.splitlines()[6].split()[:2] == ["2", f"{heard:,}"]


def _reports_nothing(out: object, gate: object) -> None:
    """A worker process that starts its loop and ends without a report, as one that
    fails in its loop does (module level, so that "spawn" can import it)."""
    through_gate(gate)


def test_a_worker_that_sends_no_report_ends_the_benchmark_in_one_line() -> None:
    """Not a ``queue.Empty`` traceback: ``WorkersNotReady``, which a benchmark's command
    line turns into one line and a non-zero exit."""
    with worker_processes(_reports_nothing, [()]) as workers:
        workers.start()
        with pytest.raises(WorkersNotReady, match=r"sent no report within 0\.5 s") as caught:
            workers.collect(0.5)

    def run(count: int) -> None:
        raise caught.value

    with pytest.raises(SystemExit) as stopped:
        each_count([16], "P", run)
    assert str(stopped.value.code).startswith("error: P = 16: a worker process sent no report")


HANGING_WORKER = """
import faulthandler, time
from quorumlock.benchmarks._common import stacks_after

def hang_in_the_loop():
    stacks_after(0.1)
    time.sleep(1.5)

def report_in_time():
    stacks_after(0.5)
    faulthandler.cancel_dump_traceback_later()
    time.sleep(0.8)

hang_in_the_loop()
report_in_time()
"""


def test_a_worker_that_hangs_says_where_it_is() -> None:
    """A worker still running well after its loop prints every thread's stack (and is
    not stopped by it); once it has reported, nothing is printed. The worker is a
    process of its own: its standard error is whole once it has exited (read while
    the dump was being written, it was cut short)."""
    done = subprocess.run(
        [sys.executable, "-c", HANGING_WORKER],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stderr.count("most recent call first") == 1, done.stderr
    assert "in hang_in_the_loop" in done.stderr
    assert "in report_in_time" not in done.stderr


def test_the_line_of_acquires_that_raised_quorum_unavailable() -> None:
    assert unavailable_line("P", [(1, 0), (16, 0)]) == ""
    line = unavailable_line("W", [(2, 0), (32, 1_200), (8, 3)])
    assert line.startswith("acquires that raised QuorumUnavailable (")
    assert line.endswith("): W = 32: 1,200, W = 8: 3")


@pytest.mark.parametrize("benchmark", ["chain", "trace"])
def test_an_acquire_that_raises_quorum_unavailable_is_counted_and_the_loop_goes_on(
    benchmark: str,
) -> None:
    """A majority of the servers frozen once the loop runs (its name is on a server)
    until the benchmark returns: the acquire under way raises ``QuorumUnavailable`` at
    its timeout, the loop's end. The worker counts it and reports; the result and the
    report say so (the worker died of it before, and the benchmark had no report)."""
    with LocalServerGroup(5) as group:
        frozen = group[:3]
        stop = threading.Event()

        def freeze_once_looping() -> None:
            client = redis.Redis(host=group[0].host, port=group[0].port, socket_timeout=2)
            deadline = time.monotonic() + 60
            while not stop.is_set() and time.monotonic() < deadline:
                if client.exists(benchmark):
                    for server in frozen:
                        server.pause()
                    return
                time.sleep(0.005)

        freezer = threading.Thread(target=freeze_once_looping)
        freezer.start()
        try:
            if benchmark == "chain":
                result = chain.measure(group.urls, 1, 1.5)
                unavailable, rendered = result.unavailable, chain.render([result])
                label = "P = 1"
            else:
                traced = trace.measure(group.urls, 1, 1.5, slowest=0)
                unavailable, rendered = traced.unavailable, trace.render([traced])
                label = "W = 1"
        finally:
            stop.set()
            freezer.join(timeout=70)
            for server in frozen:
                server.resume()
    assert all(server.paused is False for server in frozen)
    assert unavailable >= 1
    assert rendered.splitlines()[-1].endswith(f"{label}: {unavailable:,}")


def test_the_chain_benchmark_stops_when_a_process_cannot_start_its_loop() -> None:
    """A process that gets no lock before its loop (no server answers) stops the run at
    once with ``WorkersNotReady``: the others do not wait for it, nor loop alone."""
    with refused_ports(5) as ports:
        urls = [f"redis://127.0.0.1:{port}/0" for port in ports]
        began = time.monotonic()
        with pytest.raises(WorkersNotReady):
            chain.measure(urls, 2, 1.0, warm_up=0.2)
    # not the time the others are given to start: the failing one let them go
    assert time.monotonic() - began < START / 2


def test_the_trace_benchmark_splits_each_hand_over_into_its_parts(
    five: LocalServerGroup, capsys: pytest.CaptureFixture[str]
) -> None:
    """One waiter and a holder for two seconds: every hand-over goes to the other
    process, its parts add up to it, and the rounds around the slowest are the holder's
    release and the next holder's acquire among others; no time asserted."""
    result = trace.measure(five.urls, 1, 2.0, slowest=1)
    assert result.handovers, "two processes on one name never handed the lock over"
    assert list(result.handovers) == sorted(result.handovers)
    assert result.parts, "no hand-over's acquire round was found"
    assert len(result.parts) <= len(result.handovers)
    for part in result.parts:
        assert part.before_round + part.round + part.after_round == pytest.approx(
            part.total, abs=1e-3
        )
        assert 3 <= len(part.latencies) <= 5  # a granted round: a majority answered
        assert list(part.latencies) == sorted(part.latencies)
    ((gap, before, after, window),) = result.slowest
    assert gap == result.handovers[-1]
    assert before.worker != after.worker
    ops = {(r.worker, r.op) for r in window}
    assert (before.worker, "release") in ops
    assert (after.worker, "acquire") in ops
    probe = result.probe
    assert probe is not None
    assert probe.wake_ups > 0
    assert 0 <= probe.late <= probe.wake_ups
    rendered = trace.render([result])
    assert rendered.startswith(f"W = 1: {len(result.handovers):,} hand-overs in 2 s;")
    assert "a slow hand-over" in rendered
    assert f"late {probe.late:,} times of {probe.wake_ups:,}," in rendered
    assert trace.main(["--servers", ",".join(five.urls), "--waiters", "1", "--seconds",
                       "0.5", "--slowest", "0"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "W = 1:" in out
    assert "a slow hand-over" not in out


def test_the_run_queue_probe_counts_the_wake_ups_that_came_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each of the probe's sleeps made 2 ms longer than the lateness it counts: every
    wake-up is counted late, and the latest is at least that late."""
    real_sleep = time.sleep
    late_by = trace.PROBE_LATE + 0.002
    monkeypatch.setattr(time, "sleep", lambda seconds: real_sleep(seconds + late_by))
    probe = trace.probe_run_queue(0.05)
    assert probe.wake_ups >= 1
    assert probe.late == probe.wake_ups
    assert probe.latest >= late_by * 1e3


@pytest.mark.parametrize(
    ("main", "bad"),
    [
        (trace.main, (["--waiters", "0"], ["--waiters", "x"], ["--seconds", "-1"],
                      ["--slowest", "-1"])),
        (chain.main, (["--processes", "0"], ["--processes", "x"], ["--seconds", "-1"],
                      ["--busy-poll", "1"], ["--pin-servers", "x"], ["--pin-servers", "-1"],
                      ["--pin-servers", str(os.cpu_count() or 1)], ["--pin-servers", ""])),
        (refusals.main, (["--processes", "0"], ["--seconds", "nan"],
                         ["--only", "quorumlock-n9"])),
    ],
    ids=["trace", "chain", "refusals"],
)  # fmt: skip
def test_the_benchmark_refuses_bad_arguments(
    main: Callable[[list[str]], int],
    bad: tuple[list[str], ...],
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in bad:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "error:" in capsys.readouterr().err


def _contender(slug: str) -> uncontended.Contender:
    return next(c for c in uncontended.CONTENDERS if c.slug == slug)


def test_a_refused_attempt_on_one_server_is_one_round(five: LocalServerGroup) -> None:
    """Two processes hammer one name on one server, counting quorumlock's rounds: a
    granted attempt is an acquire and a release, a refused one its acquire alone (no
    undo where the server refused it for another holder); no time asserted."""
    result = refusals.measure(five.urls, _contender("quorumlock-n1"), 2, 1.0, counting=True)
    assert result.error is None
    assert result.granted > 0
    assert result.attempts > result.granted, "two processes on one name never refused"
    assert result.per_refusal == 1.0
    rendered = refusals.render([result], [result])
    assert rendered.splitlines()[2].split()[-1] == "1.000"


def test_the_refusals_benchmark_reports_a_contender_that_fails() -> None:
    """A contender that cannot run (no server at its URL) gets its error in its row,
    not a traceback; its rounds are not counted."""
    with refused_ports(1) as (port,):
        url = f"redis://127.0.0.1:{port}/0"
        result = refusals.measure([url], _contender("redis-py-n1"), 1, 0.2, counting=False)
    assert result.error is not None
    assert "ConnectionError" in result.error
    assert result.per_refusal is None
    assert "-" in refusals.render([result], []).splitlines()[2]


def test_the_rwlock_cycles_benchmark_measures_every_contender(five: LocalServerGroup) -> None:
    """A smoke run: structure only, never a speed (the machine may be loaded)."""
    result = rwlock_cycles.measure(five.urls, rounds=2, seconds=0.05)
    assert set(result["cycles_per_second"]) == {"plain", "read", "write"}
    assert all(rate > 0 for rate in result["cycles_per_second"].values())
    assert set(result["ratios"]) == {"read / plain", "write / plain"}
    assert all(len(rounds) == 2 for rounds in result["cycles_per_second_by_round"].values())


def test_semaphore_benchmark_runs_every_contender_once(servers: LocalServerGroup) -> None:
    """One tiny run: every contender completes cycles, none fails, the ratios exist,
    and the permits held for the run are given back (no timing is asserted)."""
    config = semaphore.Config(rounds=1, slice_seconds=0.05, warmup_seconds=0.02, max_cycles=50)
    report = semaphore.run_benchmark(servers.urls, config)
    assert set(report["results"]) == set(semaphore.CONTENDERS)
    for slug, row in report["results"].items():
        assert row["cycles"] > 0, slug
        assert row["failures"] == 0, slug
    assert all(value is not None for value in report["ratios"].values())
    assert "semaphore-k4 / mutex" in semaphore.format_report(report)
    for server in servers:
        client = redis.Redis(host=server.host, port=server.port)
        assert client.keys("quorumlock:semaphore:*") == []
        client.close()


def test_two_versions_take_turns_in_one_process(
    five: LocalServerGroup, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--control``: this version against a copy of itself, each a package of its own
    (none of the copies' modules is quorumlock's, and none is left loaded after); every
    pair times both, and the report gives both medians and the ratio. No time asserted."""
    tiny = ["--pairs", "3", "--slice", "5", "--warmup", "5"]
    servers = ["--servers", ",".join(five.urls)]
    before = set(sys.modules)
    result = versions.measure(five.urls, None, pairs=3, slice_cycles=5, warmup=5)
    assert len(result.this) == len(result.other) == len(result.ratios) == 3
    assert len(result.this_cpu) == len(result.other_cpu) == len(result.cpu_ratios) == 3
    assert all(t > 0 for t in (*result.this, *result.other, *result.this_cpu))
    assert "control" in result.label
    assert not {m for m in set(sys.modules) - before if m.startswith("_quorumlock_")}
    assert versions.main(["--control", *tiny, *servers]) == 0
    out = capsys.readouterr().out
    assert "3 pairs of slices" in out
    assert out.count("this / other, pair by pair: median") == 2
    assert "CPU time (this process):" in out
    # a directory holding a quorumlock package: this very one
    here = Path(versions.__file__).resolve().parents[1]
    assert versions.main(["--against", str(here.parent), *tiny, *servers]) == 0
    assert f"the package in {here.parent}" in capsys.readouterr().out
    # the asyncio cycle: each copy's own asyncio Redlock, on one event loop
    async_result = versions.measure(
        five.urls, None, pairs=2, slice_cycles=5, warmup=5, api="asyncio"
    )
    assert async_result.api == "asyncio"
    assert len(async_result.ratios) == 2
    assert not {m for m in set(sys.modules) - before if m.startswith("_quorumlock_")}
    assert versions.main(["--control", "--asyncio", *tiny, *servers]) == 0
    assert "cycle (asyncio), 3 pairs" in capsys.readouterr().out


def test_a_copy_imports_only_itself(tmp_path: Path) -> None:
    module = versions.load_copy(
        Path(versions.__file__).resolve().parents[1], "_quorumlock_copy_test", tmp_path
    )
    try:
        assert module.__file__ is not None
        assert Path(module.__file__).is_relative_to(tmp_path)
        assert module.Redlock is not quorumlock.Redlock
        rewritten = (tmp_path / "_quorumlock_copy_test" / "_sync.py").read_text()
        assert "from _quorumlock_copy_test." in rewritten
        assert "from quorumlock." not in rewritten
    finally:
        for name in [m for m in sys.modules if m.startswith("_quorumlock_copy_test")]:
            del sys.modules[name]
        sys.path.remove(str(tmp_path))


@pytest.mark.skipif(
    not (Path(versions.__file__).resolve().parents[3] / ".git").exists(),
    reason="quorumlock is not installed from a git clone here",
)
def test_a_git_revision_is_the_other_version(
    five: LocalServerGroup, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = ["--servers", ",".join(five.urls)]
    tiny = ["--pairs", "2", "--slice", "5", "--warmup", "5"]
    assert versions.main(["--against", "HEAD", *tiny, *servers]) == 0
    assert "git revision HEAD" in capsys.readouterr().out
    assert versions.main(["--against", "no-such-revision", *tiny, *servers]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: git archive no-such-revision: ")
    assert err.count("\n") == 1


def test_the_versions_benchmark_refuses_what_it_cannot_load(
    five: LocalServerGroup, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = ["--servers", ",".join(five.urls)]
    assert versions.main(["--against", str(tmp_path), *servers]) == 2  # no package there
    err = capsys.readouterr().err
    assert err.startswith("error: no quorumlock package in")
    assert err.count("\n") == 1
    # a package that does not import: refused in one line, and nothing of it stays loaded
    broken = tmp_path / "broken" / "quorumlock"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('not today')\n")
    before = set(sys.modules)
    assert versions.main(["--against", str(broken.parent), *servers]) == 2
    assert not {m for m in set(sys.modules) - before if m.startswith("_quorumlock_")}
    err = capsys.readouterr().err
    assert err.startswith("error: the copy of ")
    assert "does not import: not today" in err
    assert err.count("\n") == 1
    for argv in (["--pairs", "1"], ["--control", "--pairs", "0"], ["--control", "--against", "x"]):
        with pytest.raises(SystemExit) as exc:
            versions.main(argv)
        assert exc.value.code == 2
        assert "error:" in capsys.readouterr().err


def test_the_server_cost_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """A short run on its own server: every variant measured; no time asserted."""
    assert server_cost.main(["--seconds", "0.1", "--cycles", "20"]) == 0
    out = capsys.readouterr().out
    for name, _, _ in server_cost.VARIANTS:
        assert f"  {name} " in out
