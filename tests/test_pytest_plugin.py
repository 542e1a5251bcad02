"""quorumlock's pytest plugin, as a user's own test suite uses it (``pytester``: the user's
files run in a pytest subprocess, against real servers)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.cli.conftest import end_and_clean, pid_alive
from tests.integration.test_docs_examples import examples

pytest_plugins = ["pytester"]

USER_TESTS = """
import asyncio

import pytest
import redis

from quorumlock import QuorumUnavailable


def test_a_ready_redlock(quorumlock_redlock, quorumlock_servers):
    assert len(quorumlock_servers) == 3
    with quorumlock_redlock.lock("job", ttl=5) as lock:  # no quarantine: servers are new
        assert lock.validity > 0


@pytest.mark.quorumlock_servers(count=5)
def test_five_and_a_kill(quorumlock_redlock, quorumlock_servers):
    assert len(quorumlock_servers) == 5
    quorumlock_servers[0].kill()
    quorumlock_servers[1].kill()
    with quorumlock_redlock.lock("job", ttl=5):
        pass
    quorumlock_servers[2].kill()
    with pytest.raises(QuorumUnavailable):
        quorumlock_redlock.lock("job", ttl=5).acquire(blocking=False)


def test_a_restart_is_quarantined(quorumlock_redlock, quorumlock_servers):
    for server in quorumlock_servers[:2]:
        server.restart()
    with pytest.raises(QuorumUnavailable, match="restart quarantine"):
        quorumlock_redlock.lock("job", ttl=5).acquire(blocking=False)


def test_asyncio(quorumlock_async_redlock):
    async def body():
        async with quorumlock_async_redlock:
            async with quorumlock_async_redlock.lock("job", ttl=5) as lock:
                return lock.validity > 0

    assert asyncio.run(body())


def test_session_servers(quorumlock_session_servers):
    assert len(quorumlock_session_servers) == 2  # quorumlock_count in the ini file
    client = redis.Redis.from_url(quorumlock_session_servers.urls[0])
    assert client.ping()
    client.close()


def test_factory(quorumlock_server_factory):
    group = quorumlock_server_factory(1, appendonly=True, appendfsync="always")
    client = redis.Redis.from_url(group.urls[0])
    assert client.config_get("appendfsync")["appendfsync"] == "always"
    client.close()
    assert len(quorumlock_server_factory()) == 2  # quorumlock_count in the ini file
"""


def test_a_users_suite_gets_servers_and_redlocks(pytester: pytest.Pytester) -> None:
    """Catches: the entry point missing, a fixture missing or not provisioned (the
    first acquire would be quarantined), the marker or the ini option ignored."""
    pytester.makeini("[pytest]\nquorumlock_count = 2\n")
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:valkey", "-q")
    # the ini default (2) applies to quorumlock_servers too: the first test says 3
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*test_a_ready_redlock*assert 2 == 3*"])


def test_the_plugin_can_be_disabled(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="def test_x(quorumlock_servers):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:quorumlock", "-p", "no:valkey", "-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'quorumlock_servers' not found*"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("many", "quorumlock_count must be an integer, not 'many'"),
        ("0", "quorumlock_count must be >= 1, not 0"),
    ],
)
def test_a_bad_count_is_a_usage_error_at_startup(
    pytester: pytest.Pytester, value: str, message: str
) -> None:
    """Refused before any test runs, in one line: not an error with a traceback in each
    test that uses a fixture while the others run."""
    pytester.makeini(f"[pytest]\nquorumlock_count = {value}\n")
    pytester.makepyfile(
        test_user="def test_x(quorumlock_servers):\n    pass\n\ndef test_y():\n    pass\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:valkey", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().strip() == f"ERROR: {message}"
    assert "passed" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_the_readmes_example_runs_as_written(pytester: pytest.Pytester) -> None:
    """README.md's example of the plugin, as a user's test module: both tests pass."""
    shown = [e.code for e in examples("README.md") if "quorumlock_servers" in e.code]
    assert len(shown) == 1
    pytester.makepyfile(test_user=shown[0])
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:valkey", "-q")
    result.assert_outcomes(passed=2)


def test_a_pytest_ended_by_sigterm_leaves_no_server_running(pytester: pytest.Pytester) -> None:
    """A SIGTERM sent to pytest alone (``kill PID``), whose default action skips the
    fixtures' teardown and the atexit hook: the servers of the test under way are
    stopped all the same, and pytest still ends by SIGTERM. Before, they stayed on their
    ports. (The kit's SIGTERM handler stops them; where setpriv is installed, their
    parent-death signal would too: tests/test_servers.py checks each.)"""
    pytester.makepyfile(
        test_user=(
            "import time\n\n"
            "def test_wait(quorumlock_servers):\n"
            "    print('PIDS', *[s.pid for s in quorumlock_servers], flush=True)\n"
            "    time.sleep(60)\n"
        )
    )
    proc = pytester.popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:randomly", "-p", "no:valkey"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    pids: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # (ends at EOF if pytest ends before the test runs)
            if line.startswith("PIDS "):
                pids = [int(pid) for pid in line.split()[1:]]
                break
        assert len(pids) == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
        deadline = time.monotonic() + 5.0
        while (left := [pid for pid in pids if pid_alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not left, f"servers still running: {left}"
    finally:
        end_and_clean(proc, pids)  # (a failed test's leftovers: its servers)
