"""``quorumlock bench``: a real (quick) run, with and without the peer libraries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import (
    assert_one_line_error,
    clean_env,
    command,
    end_and_clean,
    interrupt_midway,
    pid_alive,
    run_cli,
    spawn_cli,
)


def test_bench_quick_json() -> None:
    result = run_cli("bench", "--quick", "--json", timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    slugs = {r["slug"]: r for r in data["results"]}
    for slug in ("quorumlock-n1", "quorumlock-n5", "redis-py-n1", "floor-n1", "floor-n5"):
        assert slugs[slug]["status"] == "ok", slugs[slug]
        assert slugs[slug]["cycles"] > 0
    assert "round 1/1 done" in result.stderr  # progress, without a tty


def test_sigterm_stops_bench_and_its_servers() -> None:
    """SIGTERM while bench runs on its embedded servers (a CI job cancelled, say): it
    stops them and ends with 143. It died at once, leaving its five servers running."""
    proc = spawn_cli("bench", "--rounds", "50")
    started: set[int] = set()
    try:
        stderr = interrupt_midway(proc, "warming up", signal.SIGTERM, started)
        assert len(started) >= 5, started
        assert proc.returncode == 143, stderr
        assert stderr.strip().splitlines()[-1] == "quorumlock: error: interrupted by SIGTERM"
        assert not any(pid_alive(pid) for pid in started)
    finally:
        end_and_clean(proc, started)


def test_bench_with_only_the_core(tmp_path: Path) -> None:
    """Peers that cannot be imported are left out, and so are their ratios."""
    for name in ("pottery", "redis_lock"):
        package = tmp_path / name
        package.mkdir()
        (package / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    env = clean_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [*command(), "bench", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "quorumlock" in result.stdout
    assert "redis-py Lock" in result.stdout
    assert "pottery" not in result.stdout.split("not installed, left out:")[0]
    assert "not installed, left out: pottery Redlock, python-redis-lock" in result.stdout


def test_bench_suite_quick_json() -> None:
    """``--suite``: the suite's figure 1 on its own 9 servers, JSON on stdout."""
    result = run_cli(
        "bench", "--suite", "--quick", "--only", "uncontended", "--no-plots", "--json", timeout=120
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["errors"] == {}
    assert set(data["figures"]) == {"uncontended"}
    slugs = {r["slug"]: r for r in data["figures"]["uncontended"]["results"]}
    for n in (1, 3, 5, 7, 9):
        assert slugs[f"quorumlock-n{n}"]["status"] == "ok", slugs[f"quorumlock-n{n}"]
        assert slugs[f"floor-n{n}"]["cycles"] > 0
    assert "Figure 1: uncontended acquire+release vs N" in result.stderr  # the tables
    first = data["targets"][0]
    assert first["name"].startswith("1. uncontended: quorumlock N=5 median")
    assert first["value"] is not None  # redis-py's Lock ran in figure 1 too


def test_bench_suite_options_need_suite_and_vice_versa() -> None:
    result = run_cli("bench", "--only", "handover", timeout=60)
    assert result.returncode == 2
    assert "--only goes with --suite" in result.stderr
    result = run_cli("bench", "--suite", "--rounds", "3", timeout=60)
    assert result.returncode == 2
    assert "drop --rounds" in result.stderr
    # Given as zero or empty is given all the same (they went unnoticed).
    result = run_cli("bench", "--suite", "--warmup", "0", "--servers", "", timeout=60)
    assert result.returncode == 2
    assert "drop --warmup, --servers" in result.stderr
    result = run_cli("bench", "--suite", "--only", "nonsense", timeout=60)
    assert result.returncode == 2
    # One line: it printed the suite module's usage too, with options bench does not take.
    assert "unknown figure(s) ['nonsense']" in assert_one_line_error(result)
    for words, said in (
        (["--suite", "--only", ""], "--only names no figure"),  # not all five, ~8 minutes
        (["--only", ""], "--only goes with --suite"),
        (["--suite", "--plots", "/tmp/p", "--no-plots"], "--plots and --no-plots contradict"),
    ):
        result = run_cli("bench", *words, timeout=60)
        assert result.returncode == 2
        assert said in assert_one_line_error(result)


def test_bench_on_servers_that_do_not_answer_fails_before_running() -> None:
    # It measured nothing, showed every contender failed, and exited 0.
    unreachable = ["redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3"]
    result = run_cli("bench", "--quick", servers=unreachable, timeout=60)
    assert result.returncode == 1, result.stderr
    line = assert_one_line_error(result)
    assert "cannot bench on redis://127.0.0.1:1: unreachable" in line
    assert result.stdout == ""


def test_bench_on_given_servers_that_answer(servers: LocalServerGroup) -> None:
    result = run_cli("bench", "--quick", "--json", servers=servers.urls, timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    slugs = {r["slug"]: r for r in data["results"]}
    assert slugs["quorumlock-n5"]["status"] == "ok", slugs["quorumlock-n5"]
    # They came from $QUORUMLOCK_SERVERS, which the report said was --servers.
    assert data["meta"]["servers"]["description"].endswith("(given by $QUORUMLOCK_SERVERS)")
    urls = ",".join(servers.urls)
    result = run_cli("bench", "--quick", "--json", "--servers", urls, timeout=120)
    assert result.returncode == 0, result.stderr
    description = json.loads(result.stdout)["meta"]["servers"]["description"]
    assert description.endswith("(given by --servers)")


def test_bench_rounds_have_a_bound() -> None:
    # --rounds 100000000 --slice 1e-9 --warmup 0 ran for ever.
    result = run_cli("bench", "--rounds", "100000000", "--slice", "1e-9", "--warmup", "0")
    assert result.returncode == 2
    assert "--rounds must be at most 100" in assert_one_line_error(result)
