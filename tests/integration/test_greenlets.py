"""The sync API under gevent and under eventlet: greenlets of one monkey-patched process
share a Redlock (gunicorn's gevent and eventlet workers, Celery's gevent and eventlet
pools; the Celery pools themselves are tested in test_celery.py). The greenlets run in a
process of their own (``tests/integration/greenlets.py``), on real servers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import quorumlock
from quorumlock.testing import LocalServerGroup

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_ROOT = Path(quorumlock.__file__).resolve().parents[1]
#: How each library's applications patch, first thing.
PATCH = {
    "gevent": "from gevent import monkey; monkey.patch_all()",
    "eventlet": "import eventlet; eventlet.monkey_patch()",
}


@pytest.fixture(scope="module", params=sorted(PATCH))
def report(request: pytest.FixtureRequest) -> dict[str, dict[str, object]]:
    library: str = request.param
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed (the test extra has it)")
    run = f"{PATCH[library]}; from tests.integration.greenlets import main; main()"
    with LocalServerGroup(3) as group:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(PACKAGE_ROOT)])}
        done = subprocess.run(
            [sys.executable, "-c", run, ",".join(group.urls)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, dict[str, object]] = json.loads(done.stdout.splitlines()[-1])
    assert result["library"] == {"name": library}
    return result


def test_greenlets_take_turns_on_one_name(report: dict[str, dict[str, object]]) -> None:
    """Six greenlets, ten blocking acquires each on one name (three of them through
    reentrant locks, which only their own greenlet may enter again), each hold yielding
    to the others: every hold is made, never two at once."""
    assert report["contention"] == {"holds": 60, "most_at_once": 1}


def test_a_waiting_acquire_lets_other_greenlets_run(report: dict[str, dict[str, object]]) -> None:
    """A blocking acquire with no timeout waits for a 0.3 s hold of another greenlet
    (each greenlet is a thread of its own: no LockNotReentrant) without blocking the
    process: a greenlet ticking every 10 ms ran meanwhile, and the wait ended with the
    lock."""
    waiting = report["waiting"]
    assert waiting["acquired"] is True
    assert isinstance(waiting["ticks"], int)
    assert waiting["ticks"] >= 5, waiting


def test_a_timeout_leaves_no_key(report: dict[str, dict[str, object]]) -> None:
    """Acquires and releases cut short by the library's Timeout (a BaseException raised
    at any point of a round) leave no key on any server."""
    interrupted = report["interrupted"]
    assert isinstance(interrupted["cut"], int)
    assert interrupted["cut"] > 20, interrupted  # the timeouts did cut rounds short
    assert interrupted["keys_left"] == [0, 0, 0]


def test_the_lease_runs_as_a_greenlet(report: dict[str, dict[str, object]]) -> None:
    """A lock of 1 s ttl with auto_extend, held through 2.5 s of the library's sleep, is
    still owned at the end."""
    assert report["lease"] == {"kept": True}


def test_a_greenlet_that_ran_rounds_sleeps_in_full(report: dict[str, dict[str, object]]) -> None:
    """After each of 800 acquires and releases, a 5 ms sleep of the same greenlet lasts
    5 ms: nothing of the rounds' waits on the servers' sockets wakes the greenlet later
    (under eventlet, whose select on several sockets would)."""
    shortest = report["sleeps"]["shortest"]
    assert isinstance(shortest, float)
    assert shortest >= 0.0049, report["sleeps"]
