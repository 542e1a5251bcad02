"""The CLI tests run the real ``quorumlock`` command in a process of its own, on real
servers: ``run_cli`` in a fork of a process that imported the command line once
(``tests/cli/_zygote.py``: the command as its console script runs it, without an
interpreter's start each time), ``spawn_cli`` as a subprocess. With
``QUORUMLOCK_TEST_CLI=process``, ``run_cli`` starts a subprocess too."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from quorumlock.testing import LocalServerGroup
from tests.conftest import children_of

Cli = Callable[..., subprocess.CompletedProcess[str]]


def command() -> list[str]:
    """The installed console script, or ``python -m quorumlock.cli`` without one."""
    script = Path(sys.executable).with_name("quorumlock")
    return [str(script)] if script.exists() else [sys.executable, "-m", "quorumlock.cli"]


def clean_env(servers: Sequence[str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUORUMLOCK_SERVERS")}
    # As a user's shell has it: a pipe's output held back until the buffer fills (a
    # machine that sets PYTHONUNBUFFERED would hide a command that does not flush).
    env.pop("PYTHONUNBUFFERED", None)
    if servers is not None:
        env["QUORUMLOCK_SERVERS"] = ",".join(servers)
    # A fatal signal (SIGABRT: ``ended``) makes the command print where each of its
    # threads was, for a test that found it stuck.
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def ended(proc: subprocess.Popen[str], timeout: float) -> int:
    """``proc``'s exit status, once it ends within ``timeout`` seconds. If it does not,
    the test fails with where each of its threads was (faulthandler's dump, on SIGABRT),
    and the process is gone."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        pytest.fail(f"{proc.args!r} did not end within {timeout:g} s; its threads were at:\n{err}")


def run_cli(
    *args: str, servers: Sequence[str] | None = None, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``quorumlock ARGS``, with ``QUORUMLOCK_SERVERS`` set to ``servers``: its exit
    status and output, as ``subprocess.run`` gives them (``subprocess.TimeoutExpired``
    after ``timeout`` s, the command killed)."""
    if os.environ.get("QUORUMLOCK_TEST_CLI") == "process":
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
    return _ZYGOTE.run([*command(), *args], clean_env(servers), cwd or Path.cwd(), timeout)


class _Zygote:
    """The test process's end of ``tests/cli/_zygote.py``, started on first use (and
    again if it died), stopped when the test process ends."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._files = tempfile.TemporaryDirectory(prefix="quorumlock-cli-")
        self._calls = 0
        atexit.register(self.close)

    def run(
        self, argv: list[str], env: dict[str, str], cwd: Path, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        with self._mutex:
            self._calls += 1
            base = Path(self._files.name) / str(self._calls)
            out, err, status = (base.with_suffix(s) for s in (".out", ".err", ".status"))
            out.touch()
            err.touch()
            request = {"argv": argv, "env": env, "cwd": str(cwd), "out": str(out),
                       "err": str(err), "status": str(status)}  # fmt: skip
            pid = self._start(request)
        deadline = time.monotonic() + timeout
        code: int | None = None
        while code is None:
            if status.exists():
                code = int(status.read_text())
            elif not pid_alive(pid):  # killed by a signal (no status written)
                code = int(status.read_text()) if status.exists() else -signal.SIGKILL
            elif time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)  # the fork of a process we started
                raise subprocess.TimeoutExpired(argv, timeout, _text(out), _text(err))
            else:
                time.sleep(0.002)
        result = subprocess.CompletedProcess(argv, code, _text(out), _text(err))
        for path in (out, err, status):
            path.unlink(missing_ok=True)
        return result

    def _start(self, request: Mapping[str, object]) -> int:
        process = self._process
        if process is None or process.poll() is not None:
            zygote = Path(__file__).with_name("_zygote.py")
            process = self._process = subprocess.Popen(
                [sys.executable, str(zygote)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=clean_env(),
            )
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the CLI's zygote ended (exit status {process.wait()})")
        return int(answer)

    def close(self) -> None:
        process = self._process
        if process is not None:
            assert process.stdin is not None
            process.stdin.close()  # it ends when its stdin does
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._files.cleanup()


def _text(path: Path) -> str:
    """A file's text as ``subprocess.run(text=True)`` reads a stream (universal newlines)."""
    raw = path.read_bytes().decode(errors="replace")
    return raw.replace("\r\n", "\n").replace("\r", "\n")


_ZYGOTE = _Zygote()


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


def interrupt_midway(
    proc: subprocess.Popen[str], ready: str, signum: int, started: set[int]
) -> str:
    """Once ``proc`` (a command this test spawned) prints a line holding ``ready`` on
    stderr (or ends), note the processes it started in ``started``, send it ``signum``,
    and wait for it to end (60 s), then up to 10 s for those processes; its stderr."""
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if ready in line or not line:
            break
    started |= children_of(proc.pid)
    proc.send_signal(signum)  # to the process this test started
    _, stderr = proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while any(pid_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    return stderr


def kill_leftovers(pids: Iterable[int]) -> None:
    """SIGKILL those of ``pids`` (the servers and workers a command this test started
    spawned) still alive, a failed test's leftovers; a process that took one of their
    PIDs since (no server nor quorumlock process) is left alone."""
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if pid_alive(pid) and any(part in cmdline for part in (b"-server", b"quorumlock")):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # (a paused server)
                os.kill(pid, signal.SIGKILL)


def end_and_clean(proc: subprocess.Popen[Any], pids: Iterable[int]) -> None:
    """On a test's way out: kill ``proc`` (a process this test started) if it still
    runs, then what it left of ``pids`` (:func:`kill_leftovers`)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)
    kill_leftovers(pids)


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
