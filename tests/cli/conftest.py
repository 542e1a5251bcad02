"""The CLI tests run the real ``quorumlock`` command in a subprocess, on real servers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from quorumlock.testing import LocalServerGroup

Cli = Callable[..., subprocess.CompletedProcess[str]]


def command() -> list[str]:
    """The installed console script, or ``python -m quorumlock.cli`` without one."""
    script = Path(sys.executable).with_name("quorumlock")
    return [str(script)] if script.exists() else [sys.executable, "-m", "quorumlock.cli"]


def clean_env(servers: Sequence[str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUORUMLOCK_SERVERS")}
    if servers is not None:
        env["QUORUMLOCK_SERVERS"] = ",".join(servers)
    return env


def run_cli(
    *args: str, servers: Sequence[str] | None = None, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(servers),
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        check=False,
    )


def spawn_cli(*args: str, servers: Sequence[str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=clean_env(servers),
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """A failed command printed exactly one line on stderr, and no traceback."""
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("quorumlock: error: "), lines[0]
    return lines[0]


@pytest.fixture
def cli(servers: LocalServerGroup) -> Cli:
    """Run ``quorumlock ARGS`` against the five shared servers (emptied for each test)."""

    def call(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, servers=servers.urls, timeout=timeout)

    return call


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"
