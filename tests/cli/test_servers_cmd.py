"""``quorumlock servers start/stop``: servers that outlive the command, stopped by PID."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest
import redis

from quorumlock.cli import _servers_cmd
from quorumlock.cli._app import build_parser
from quorumlock.cli._common import Interrupted
from tests.cli.conftest import assert_one_line_error, pid_alive, run_cli, spawn_cli


def test_start_then_stop(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    started = run_cli("servers", "start", "--count", "3", "--dir", str(directory))
    state = directory / "servers.json"
    try:
        assert started.returncode == 0, started.stderr
        lines = started.stdout.strip().splitlines()
        assert lines[-1].startswith("export QUORUMLOCK_SERVERS=redis://127.0.0.1:")
        urls = lines[-1].split("=", 1)[1].split(",")
        assert len(urls) == 3
        pids = [entry["pid"] for entry in json.loads(state.read_text())["servers"]]
        for url in urls:
            client = redis.Redis.from_url(url, socket_timeout=2)
            assert client.ping()
            client.close()
        # The servers outlived the command, and work for the other commands.
        status = run_cli("status", "x", "--json", servers=urls)
        assert status.returncode == 0
        # Brand-new servers are marked as such: no restart quarantine at first use.
        assert [s["quarantined_for"] for s in json.loads(status.stdout)["servers"]] == [0] * 3
        lock = run_cli("run", "x", "--wait", "0", "--", "true", servers=urls)
        assert lock.returncode == 0, lock.stderr
        again = run_cli("servers", "start", "--count", "1", "--dir", str(directory))
        assert again.returncode == 1
        assert "still run" in assert_one_line_error(again)
        stopped = run_cli("servers", "stop", "--dir", str(directory))
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped 3 of 3 servers" in stopped.stdout
        deadline = time.monotonic() + 10
        while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(pid_alive(pid) for pid in pids)
        assert not state.exists()
    finally:
        _kill_leftovers(state)


def test_stop_without_start(tmp_path: Path) -> None:
    result = run_cli("servers", "stop", "--dir", str(tmp_path))
    assert result.returncode == 1
    assert "no servers were started" in assert_one_line_error(result)


def test_stop_leaves_a_reused_pid_alone(tmp_path: Path) -> None:
    """A state file whose PID now belongs to another process: that process is not killed."""
    directory = tmp_path / "run"
    directory.mkdir()
    entry = {"pid": os.getpid(), "start_time": 1, "url": "redis://127.0.0.1:1", "argv": ["x"]}
    (directory / "servers.json").write_text(json.dumps({"servers": [entry]}))
    result = run_cli("servers", "stop", "--dir", str(directory))
    assert result.returncode == 0
    assert "was not running" in result.stdout  # and this test process is still alive


def _kill_leftovers(state: Path) -> None:
    """If a test failed half way: SIGKILL the servers this test started (by their PID)."""
    if not state.exists():
        return
    for entry in json.loads(state.read_text())["servers"]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(entry["pid"]), signal.SIGKILL)


def _processes_in(directory: Path) -> list[int]:
    """The PIDs of the processes whose working directory is under ``directory``: the
    servers ``start`` ran there (it starts each in its own data directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue  # gone, or not ours to read
        if Path(cwd).is_relative_to(directory):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_signal_during_start_stops_every_server_it_started(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """A signal while ``start`` is half way: everything it started is stopped, the one it
    was waiting for included; nothing is left running, recorded or not."""
    if not Path("/proc/self/cwd").exists():
        pytest.skip("needs /proc to find the servers by their directory")
    directory = (tmp_path / "run").resolve()
    state = directory / "servers.json"
    proc = spawn_cli("servers", "start", "--count", "8", "--dir", str(directory))
    try:
        deadline = time.monotonic() + 30
        while not (directory / "server-2").exists():  # two up, the third on its way
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "start made no progress"
            time.sleep(0.01)
        assert len(_processes_in(directory)) >= 2
        proc.send_signal(signum)  # to the start process this test started
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signum
        name = signal.Signals(signum).name
        assert stderr.strip().splitlines()[-1] == f"quorumlock: error: interrupted by {name}"
        assert _processes_in(directory) == []
        assert not state.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pid in _processes_in(directory):  # a failed test's leftovers, all ours
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_whose_exception_a_finaliser_dropped_still_stops_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM whose handler ran inside an object's ``__del__`` as start waited for
    its first server: Python prints its KeyboardInterrupt and drops it. start stops all
    the same, and stops the server it started; it went on to start them all. Looked at
    in this process."""
    answering = _servers_cmd._answering_pid
    asked: list[str] = []

    class Finalised:
        def __del__(self) -> None:
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)  # as the signal's handler runs, in a finaliser

    def answering_as_a_finaliser_ran(url: str) -> int | None:
        asked.append(url)
        Finalised()  # dropped at once: its __del__ runs, and its exception is dropped
        return answering(url)

    monkeypatch.setattr(_servers_cmd, "_answering_pid", answering_as_a_finaliser_ran)
    directory = (tmp_path / "run").resolve()
    args = build_parser().parse_args(["servers", "start", "--count", "3", "--dir", str(directory)])
    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(Interrupted) as raised:
            args.handler(args)
        assert raised.value.signum == signal.SIGTERM
        assert len(set(asked)) == 1  # the first server's wait: no second one started
        assert signal.getsignal(signal.SIGTERM) == before
        assert _processes_in(directory) == []
        assert not (directory / "servers.json").exists()
    finally:
        for pid in _processes_in(directory):  # a failed test's leftovers, all ours
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_count_is_bounded(tmp_path: Path) -> None:
    directory = (tmp_path / "run").resolve()
    proc = spawn_cli("servers", "start", "--count", "100000", "--dir", str(directory))
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:  # unbounded: it is starting them; stop it, then them
            proc.kill()
            proc.wait(timeout=10)
        for pid in _processes_in(directory):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "--count must be at most 32" in lines[0]
    assert not directory.exists()  # nothing was started, not even a directory
