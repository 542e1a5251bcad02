"""quorumlock and node-redlock contend for one name on the same servers.

Two quorumlock worker processes (``tests/compat/py_worker.py``) and one node process
with two node-redlock clients (``node/redlock_client.js contend``) take the same lock
again and again for a bounded time. Each hold is checked on a separate server used only
as the checker: INCR of an "inside" counter must return 1 (anything else is two holders
at once), and GETSET of the last holder's side counts hand-offs between the two
implementations. Both sides must make progress, or the test could not fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest

from quorumlock.testing import LocalServer, LocalServerGroup
from tests.compat.conftest import SETUPS, Setup
from tests.compat.nodekit import REPO_ROOT, NodeRedlock
from tests.conftest import client_of

DURATION_MS = 1500
HOLD_MS = 5
TTL_MS = 5000
PY_WORKERS = 2
NODE_CLIENTS = 2
MIN_HOLDS = 3
START_LIMIT = 30.0


def run_contention(
    node_redlock: NodeRedlock,
    urls: list[str],
    checker: LocalServer,
    name: str,
    setup: Setup,
    **node_options: int,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start every worker, wait until all are ready, say go, collect their JSON reports."""
    common: dict[str, str | int] = {
        "servers": ",".join(urls),
        "name": name,
        "ttl": TTL_MS,
        "duration": DURATION_MS,
        "hold": HOLD_MS,
        "checker": checker.url,
    }
    py_argv = [sys.executable, "-m", "tests.compat.py_worker", "--side", "quorumlock"]
    for key, value in common.items():
        py_argv += [f"--{key}", str(value)]
    py_argv += ["--max-ttl", str(setup.max_ttl or 0)]
    if setup.fencing:
        py_argv.append("--fencing")
    node_argv = node_redlock.command(
        "contend", side="node", workers=NODE_CLIENTS, **common, **node_options
    )

    names = ["quorumlock worker"] * PY_WORKERS + [f"node-redlock {node_redlock.version}"]
    procs = [
        subprocess.Popen(py_argv, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(PY_WORKERS)
    ]
    procs.append(
        subprocess.Popen(
            node_argv, env=node_redlock.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    )
    client = client_of(checker)
    try:
        give_up = time.monotonic() + START_LIMIT
        while int(client.get(f"{name}:ready") or 0) < len(procs):
            for label, proc in zip(names, procs, strict=True):
                if proc.poll() is not None:
                    _, err = proc.communicate(timeout=5)
                    raise AssertionError(f"{label} exited before the start: {err.decode()}")
            assert time.monotonic() < give_up, f"workers not ready within {START_LIMIT} s"
            time.sleep(0.02)
        client.set(f"{name}:go", 1)
        reports = []
        for label, proc in zip(names, procs, strict=True):
            out, err = proc.communicate(timeout=DURATION_MS / 1000 + 30)
            assert proc.returncode == 0, f"{label} exited {proc.returncode}: {err.decode()}"
            reports.append(json.loads(out))
    finally:
        client.close()
        for proc in procs:  # only on failure: each was started here, killed by its handle
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)
    return reports[:PY_WORKERS], reports[PY_WORKERS]


@pytest.mark.parametrize(
    ("n", "setup"),
    [(3, SETUPS[2]), (1, SETUPS[2]), (3, SETUPS[0])],
    ids=["N3-fencing", "N1-fencing", "N3-plain"],
)
def test_quorumlock_and_node_redlock_never_hold_together(
    node_redlock: NodeRedlock, servers: LocalServerGroup, lock_name: str, n: int, setup: Setup
) -> None:
    lock_servers = list(servers)[:n]
    checker_server = servers[len(servers) - 1]  # not one of the lock servers
    py_reports, node_report = run_contention(
        node_redlock, [s.url for s in lock_servers], checker_server, lock_name, setup
    )
    assert_fair_and_exclusive(node_redlock, servers, lock_name, py_reports, node_report)


def assert_fair_and_exclusive(
    node_redlock: NodeRedlock,
    servers: LocalServerGroup,
    lock_name: str,
    py_reports: list[dict[str, Any]],
    node_report: dict[str, Any],
) -> None:
    reports = [*py_reports, node_report]
    summary = json.dumps(reports)
    assert node_report["redlock"] == node_redlock.version
    assert all(not r["errors"] for r in reports), summary
    assert all(not r["overlaps"] for r in reports), f"two holders at once: {summary}"
    assert all(not r.get("fence_violations") for r in reports), summary
    # A foreign release never removed a live key: every holder still found its own.
    assert all(r["release_failures"] == 0 for r in reports), summary
    # Both implementations got the lock, and it passed between them.
    assert sum(r["holds"] for r in py_reports) >= MIN_HOLDS, summary
    assert node_report["holds"] >= MIN_HOLDS, summary
    assert sum(r["handoffs"] for r in reports) >= 2, summary
    checker = client_of(servers[len(servers) - 1])
    assert checker.get(f"{lock_name}:inside") == b"0"
    checker.close()


def test_node_redlock_without_retries_and_its_own_pause(
    node_redlock: NodeRedlock, servers: LocalServerGroup, lock_name: str
) -> None:
    """The setting docs/compatibility.md recommends next to quorumlock: ``retryCount: 0``,
    and the caller pauses and tries again. Each failed attempt then releases what a
    minority granted (node-redlock does so only after its last retry), so the name does
    not stay split between the two clients."""
    lock_servers = list(servers)[:3]
    py_reports, node_report = run_contention(
        node_redlock,
        [s.url for s in lock_servers],
        servers[len(servers) - 1],
        lock_name,
        SETUPS[0],
        retries=0,
        pause=40,
    )
    assert_fair_and_exclusive(node_redlock, servers, lock_name, py_reports, node_report)
