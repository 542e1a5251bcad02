"""The worker pool both kits share (quorumlock/testing/_pool.py), on real processes.

The workers are the benchmarks' (they answer commands until EOF) and the verify kit's
(started with a spec file that does not exist, so they fail during start-up).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from quorumlock.testing._pool import ProcessPool, WorkerError, WorkerTimeout, read_records

BENCH_WORKER = "quorumlock.benchmarks._workers"
VERIFY_WORKER = "quorumlock.testing._worker"


def gone(pid: int) -> bool:
    """True when ``pid`` is no longer a child of this process (reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_workers_start_ready_answer_and_exit_at_eof(tmp_path: Path) -> None:
    pool = ProcessPool(BENCH_WORKER, [[], []], tmp_path, ready_timeout=120.0, exit_grace=30.0)
    with pool:
        pids = [process.pid for process in pool.processes]
        replies = pool.request(
            {0: {"cmd": "nonsense"}, 1: {"cmd": "nonsense"}}, time.monotonic() + 60.0
        )
        assert replies == {i: {"fatal": "unknown command 'nonsense'"} for i in (0, 1)}
        pool.end_input()
    assert pool.exit_codes() == [0, 0]  # EOF is "exit": nobody had to be killed
    assert pool.killed == 0
    assert all(gone(pid) for pid in pids)


def test_a_worker_that_dies_during_start_up_is_reported_with_its_log(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-spec.json")
    with pytest.raises(WorkerError) as caught:
        ProcessPool(VERIFY_WORKER, [[missing]], tmp_path, ready_timeout=120.0)
    message = str(caught.value)
    assert message.startswith("worker 0 (pid ")
    assert "exited with code 1 before its ready line" in message
    assert "FileNotFoundError" in message  # the end of the worker's log


def test_a_late_start_is_a_timeout_and_every_process_is_killed(tmp_path: Path) -> None:
    with pytest.raises(WorkerTimeout) as caught:
        ProcessPool(BENCH_WORKER, [[], []], tmp_path, ready_timeout=0.0)
    # verify documents RuntimeError for a failed worker and TimeoutError for a late one
    assert isinstance(caught.value, RuntimeError)
    assert isinstance(caught.value, TimeoutError)
    assert "no ready line in time (2 late)" in str(caught.value)


def test_close_kills_a_stopped_worker_by_pid_after_the_grace(tmp_path: Path) -> None:
    pool = ProcessPool(BENCH_WORKER, [[]], tmp_path, ready_timeout=120.0, exit_grace=0.2)
    (stopped,) = pool.processes
    stopped.pause()  # it cannot read its EOF: only SIGKILL ends it
    pool.close()
    assert pool.killed == 1
    assert pool.exit_codes() == [-9]
    assert not stopped.alive
    assert gone(stopped.pid)
    pool.close()  # idempotent: nothing left to kill
    assert pool.killed == 1


def test_a_late_reply_is_a_timeout(tmp_path: Path) -> None:
    with ProcessPool(BENCH_WORKER, [[]], tmp_path, ready_timeout=120.0) as pool:
        pool.processes[0].pause()
        pool.send(0, {"cmd": "nonsense"})
        with pytest.raises(WorkerTimeout, match="no reply in time"):
            pool.collect([0], time.monotonic() + 0.2)
    assert pool.killed == 1


def test_records_skip_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"kind": "hold", "start": 1}\n[1, 2]\n{"kind": "ho')
    assert read_records(path) == [{"kind": "hold", "start": 1}]
    assert read_records(tmp_path / "missing.jsonl") == []
