"""``quorumlock run a,b -- CMD``: several names, locked all together or not at all."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import Cli, assert_one_line_error, spawn_cli


def held_on(group: LocalServerGroup, name: str) -> int:
    count = 0
    for url in group.urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        count += client.exists(name)
        client.close()
    return count


def test_commands_on_overlapping_sets_never_overlap(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """Commands holding {a, b}, {b, c} and {c, a} (in any order) run one at a time, all
    of them (no deadlock), and leave no key behind. Catches a run that locks only the
    first name (then {b, c} and {c, a} would overlap)."""
    a, b, c = (f"{lock_name}:{x}" for x in "abc")
    log = tmp_path / "log"
    body = f"echo in >> {log}; sleep 0.3; echo out >> {log}"
    sets = [f"{a},{b}", f"{c},{b}", f"{c},{a}", f"{b},{a}"]
    procs = [
        spawn_cli("run", names, "--wait", "60", "--", "sh", "-c", body, servers=servers.urls)
        for names in sets
    ]
    for proc in procs:
        assert proc.wait(timeout=90) == 0
    assert log.read_text().split() == ["in", "out"] * len(sets)
    assert [held_on(servers, name) for name in (a, b, c)] == [0, 0, 0]


def test_a_set_waits_for_a_plain_lock_on_one_of_its_names(
    cli: Cli, servers: LocalServerGroup, lock_name: str
) -> None:
    a, b = f"{lock_name}:a", f"{lock_name}:b"
    holder = spawn_cli("run", b, "--", "sleep", "5", servers=servers.urls)
    try:
        give_up = time.monotonic() + 20
        while held_on(servers, b) < 3:
            assert time.monotonic() < give_up, "the holder did not take its lock in time"
            time.sleep(0.02)
        result = cli("run", f"{a},{b}", "--wait", "0", "--", "true")
        assert result.returncode == 75, result.stderr
        # (not "lock 'a,b' is held": b alone is)
        assert f"one or more of the locks {a!r}, {b!r} is held by someone else" in result.stderr
        assert held_on(servers, a) == 0  # nothing of the failed attempt is left
    finally:
        assert holder.wait(timeout=30) == 0


def test_bad_name_lists_are_usage_errors(cli: Cli, lock_name: str) -> None:
    for names, text in (
        (f"{lock_name},,x", "empty name"),
        ("x,y,x", "twice"),
        (f"{lock_name}, x", "the name ' x' in"),  # not the key " x"
        (f"{lock_name},x ", "the name 'x ' in"),
        (f"{lock_name} ", "has white space around it"),  # one name: the key "x " is a slip
        (f"{lock_name}\n", "has white space around it"),
    ):
        result = cli("run", names, "--", "true")
        assert result.returncode == 2
        assert text in assert_one_line_error(result)
