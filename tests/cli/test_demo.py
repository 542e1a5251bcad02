"""``quorumlock demo`` end to end, and its cleanup on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from typing import Any

import pytest

from quorumlock.cli import _demo
from quorumlock.cli._app import build_parser
from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import assert_one_line_error, clean_env, command, pid_alive, run_cli
from tests.conftest import children_of
from tests.integration.test_server_warnings import closed_ports

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
    assert status == 128 + signum
    deadline = time.monotonic() + 10
    while any(pid_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(pid) for pid in started)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("when", ["while it watches", "as it collects"])
def test_a_signal_whose_exception_a_finaliser_dropped_still_stops_the_demo(
    servers: LocalServerGroup, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """A SIGTERM whose handler ran inside an object's ``__del__``: Python prints its
    KeyboardInterrupt and drops it. The demo stops all the same, ends with 143 and
    restores the handlers it replaced; without its look at the signals received it
    ran to the end and reported success. Looked at in this process."""
    watch = _demo._watch

    class Finalised:
        def __del__(self) -> None:
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)  # as the signal's handler runs, in a finaliser

    def watched_as_a_finaliser_ran(*args: Any) -> None:
        if when == "while it watches":
            Finalised()  # dropped at once: its __del__ runs, and its exception is dropped
        watch(*args)
        if when == "as it collects":
            Finalised()

    monkeypatch.setattr(_demo, "_watch", watched_as_a_finaliser_ran)
    signals = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    before = {signum: signal.getsignal(signum) for signum in signals}
    urls = ",".join(servers.urls[:3])
    args = build_parser().parse_args(
        ["demo", "--servers", urls, "--workers", "1", "--seconds", "1"]
    )
    assert args.handler(args) == 128 + signal.SIGTERM
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_the_demo_refuses_servers_too_few_of_which_answer(servers: LocalServerGroup) -> None:
    """Given servers of which no majority answers (down, or wanting a password), the demo
    says so at once, one line naming each, instead of running its workers for all of
    --seconds and ending with 'FAILED' and no reason."""
    refused = [f"redis://127.0.0.1:{port}" for port in closed_ports(2)]
    result = run_cli("demo", "--seconds", "30", servers=[*refused, servers.urls[0]])
    assert result.returncode == 1
    line = assert_one_line_error(result)
    assert "cannot run the demo: 1 of 3 servers answer, 2 needed for a majority" in line
    assert all(f"{url}: unreachable" in line for url in refused), line
    assert "acquisitions" not in result.stdout  # no worker ran
