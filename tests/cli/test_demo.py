"""``quorumlock demo`` end to end, and its cleanup on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest

from tests.cli.conftest import clean_env, command, pid_alive, run_cli
from tests.conftest import children_of

pytestmark = pytest.mark.slow


def test_demo_end_to_end() -> None:
    began = time.monotonic()
    # 9 s: the story (kill at 3 s, restart 1 s later, 2 s of quarantine) with room to spare
    result = run_cli("demo", "--seconds", "9", timeout=90)
    took = time.monotonic() - began
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "started 5 local servers" in out
    assert "kill -9 server 5" in out
    assert "restarted server 5" in out
    assert re.search(r"acquisitions\s+[1-9]\d* by 4 workers", out)
    assert re.search(r"overlaps found\s+0\b", out)
    assert re.search(r"fencing monotonic\s+yes\b", out)
    assert re.search(r"server 5 is quarantined: out of every quorum for [\d.]+ s more", out)
    assert "server 5 rejoined the quorums" in out
    assert re.search(r"acquire latency\s+p50 [\d.]+ ms, p99 [\d.]+ ms", out)
    assert re.search(r"\[\s*\d+\.\d s\] acquisitions \d+", out)  # progress, without a tty
    assert took < 90
    pids = [int(p) for p in re.findall(r"pid (\d+)", out)]
    assert pids
    assert not any(pid_alive(pid) for pid in pids)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_demo_cleans_up_on_interrupt(signum: int) -> None:
    proc = subprocess.Popen(
        [*command(), "demo", "--seconds", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=clean_env(),
    )
    try:
        assert proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "acquisitions" in line or not line:
                break
        assert any("acquisitions" in line for line in lines), lines
        started = children_of(proc.pid)
        assert len(started) >= 5 + 4  # servers and workers
        proc.send_signal(signum)
        status = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert status == 130
    deadline = time.monotonic() + 10
    while any(pid_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(pid) for pid in started)
