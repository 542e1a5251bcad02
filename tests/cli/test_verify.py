"""``quorumlock verify``: the fault-injection kit behind the real command."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import assert_one_line_error, run_cli

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


def test_verify_table() -> None:
    result = run_cli("verify", "--nemesis", "none", "--duration", "1", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "| none | safe |" in result.stdout
    assert result.stdout.rstrip().endswith("| ok |")


def test_unknown_nemesis() -> None:
    result = run_cli("verify", "--nemesis", "gremlins")
    assert result.returncode == 2
    assert "invalid choice: 'gremlins'" in assert_one_line_error(result)


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
