"""``quorumlock verify``: the fault-injection kit behind the real command."""

from __future__ import annotations

import json
import signal

import pytest

from tests.cli.conftest import (
    assert_one_line_error,
    end_and_clean,
    interrupt_midway,
    pid_alive,
    run_cli,
    spawn_cli,
)

pytestmark = pytest.mark.slow


def test_verify_one_nemesis_json() -> None:
    result = run_cli(
        "verify", "--nemesis", "kill-restart", "--duration", "2", "--count", "3", "--json",
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True
    (report,) = data["reports"]
    assert report["nemesis"] == "kill-restart"
    assert report["servers"] == 3
    assert report["overlaps"] == 0
    assert report["stale_writes_accepted"] == 0
    assert report["faults"] > 0
    assert "verify: [1/1] kill-restart: ok" in result.stderr  # progress without a tty


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_verify_and_every_process_it_started(signum: int) -> None:
    """SIGTERM (a CI job cancelled, ``timeout``, a service stopped) or SIGHUP while
    verify runs, its servers paused: it stops every server and worker it started and
    ends with 128 + N. verify died at once, leaving them running, the servers stopped
    with SIGSTOP."""
    proc = spawn_cli("verify", "--nemesis", "pause-servers", "--duration", "60")
    started: set[int] = set()
    try:
        stderr = interrupt_midway(proc, "running pause-servers", signum, started)
        assert len(started) >= 6 + 4, started  # 5 lock servers, the resource's, 4 workers
        assert proc.returncode == 128 + signum, stderr
        name = signal.Signals(signum).name
        assert stderr.strip().splitlines()[-1] == f"quorumlock: error: interrupted by {name}"
        assert not any(pid_alive(pid) for pid in started)
    finally:
        end_and_clean(proc, started)


def test_verify_table() -> None:
    result = run_cli("verify", "--nemesis", "none", "--duration", "1", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "| none | safe |" in result.stdout
    assert result.stdout.rstrip().endswith("| ok |")


def test_verify_compare_legacy() -> None:
    result = run_cli(
        "verify", "--compare", "legacy", "--nemesis", "kill-restart", "--duration", "3",
        "--count", "3", "--seed", "7", "--json",
        timeout=180,
    )  # fmt: skip
    # The legacy lock's violations are shown, but only quorumlock's rows set the status.
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True
    ours, legacy = data["reports"]
    assert (ours["contender"], ours["config"], ours["overlaps"]) == ("quorumlock", "safe", 0)
    assert (legacy["contender"], legacy["config"]) == ("legacy", "legacy SETNX")
    assert (ours["seed"], legacy["seed"]) == (7, 7)
    assert legacy["overlaps"] > 0, legacy
    assert legacy["safe"] is False
    assert "verify: [2/2] kill-restart (legacy): VIOLATION" in result.stderr
    assert "the legacy lock broke under: kill-restart" in result.stderr


def test_unknown_compare() -> None:
    result = run_cli("verify", "--compare", "zookeeper")
    assert result.returncode == 2
    assert "invalid choice: 'zookeeper'" in assert_one_line_error(result)


def test_unknown_nemesis() -> None:
    result = run_cli("verify", "--nemesis", "gremlins")
    assert result.returncode == 2
    assert "invalid choice: 'gremlins'" in assert_one_line_error(result)


def test_verify_an_election() -> None:
    result = run_cli(
        "verify", "--election", "--nemesis", "pause-clients", "--duration", "2", "--json",
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    assert report["config"] == "election, safe"
    assert report["overlaps"] == 0
    assert report["token_order_violations"] == 0
    assert report["acquisitions"] > 0


def test_an_election_cannot_go_unfenced() -> None:
    result = run_cli("verify", "--election", "--no-fencing")
    assert result.returncode == 2
    assert "--no-fencing" in assert_one_line_error(result)


def test_verify_a_read_write_lock() -> None:
    result = run_cli(
        "verify", "--rwlock", "--nemesis", "pause-clients", "--duration", "2", "--count", "3",
        "--json", timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    assert report["config"] == "rwlock, safe"
    assert report["overlaps"] == 0
    assert report["acquisitions"] > 0


def test_verify_a_semaphore() -> None:
    result = run_cli(
        "verify", "--nemesis", "kill-restart", "--duration", "2", "--count", "3",
        "--workers", "5", "--permits", "2", "--json",
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    assert report["permits"] == 2
    assert report["config"] == "safe, semaphore K=2"
    assert report["overlaps"] == 0
    assert report["acquisitions"] > 0


def test_verify_bad_permits() -> None:
    result = run_cli("verify", "--permits", "0")
    assert result.returncode == 2
    assert "--permits must be >= 1" in result.stderr


def test_verify_a_multi_resource_lock() -> None:
    result = run_cli(
        "verify", "--lock-many", "--nemesis", "none", "--duration", "2", "--count", "3",
        "--json", timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (report,) = json.loads(result.stdout)["reports"]
    assert report["config"] == "lock_many, safe"
    assert report["overlaps"] == 0
    assert report["acquisitions"] > 0
    assert report["writes"] > 0


def test_verify_one_kind_of_lock_at_a_time() -> None:
    for extra, named in (
        (["--permits", "2"], "--permits runs on its own: drop --lock-many"),
        (["--election"], "--lock-many runs on its own: drop --election"),
        (["--rwlock"], "--rwlock: not allowed with argument --lock-many"),
    ):
        result = run_cli("verify", "--lock-many", *extra)
        assert result.returncode == 2, result.stderr
        assert named in assert_one_line_error(result)


def test_verify_a_fair_lock_beside_the_legacy_one() -> None:
    result = run_cli(
        "verify", "--fair", "--compare", "legacy", "--nemesis", "pause-clients",
        "--duration", "2", "--count", "3", "--json",
        timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    ours, legacy = json.loads(result.stdout)["reports"]
    assert (ours["config"], ours["fair"], ours["overlaps"]) == ("fair, safe", True, 0)
    assert ours["acquisitions"] > 0
    assert (legacy["config"], legacy["fair"]) == ("legacy SETNX", False)


def test_verify_a_fair_election() -> None:
    result = run_cli(
        "verify", "--fair", "--election", "--nemesis", "none", "--duration", "1", timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "| none | election, fair, safe |" in result.stdout


def test_fair_orders_a_lock_or_an_election_only() -> None:
    for extra in (["--rwlock"], ["--lock-many"], ["--permits", "2"]):
        result = run_cli("verify", "--fair", *extra)
        assert result.returncode == 2, result.stderr
        message = assert_one_line_error(result)
        assert f"--fair orders the waiters of a lock or an election: drop {extra[0]}" in message
