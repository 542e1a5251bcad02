"""``quorumlock run --read/--write`` and ``status`` of a read-write lock, on real servers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

from quorumlock._algorithm.rwlock import rw_key, rw_score
from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import Cli, assert_one_line_error, spawn_cli


def members_on(group: LocalServerGroup, name: str) -> list[str]:
    """The mode letters of the read-write holds on every server, e.g. ``["rr", ...]``."""
    result = []
    for url in group.urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        raw: list[bytes] = client.zrange(rw_key(name), 0, -1)  # type: ignore[assignment]
        result.append("".join(sorted(m.decode()[0] for m in raw)))
        client.close()
    return result


def until_file(path: Path) -> list[str]:
    """A command that runs until ``path`` exists (at most 60 s)."""
    return [
        "sh",
        "-c",
        f'i=0; while [ ! -e "{path}" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done',
    ]


def wait_for(predicate: object, timeout: float = 20.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_readers_run_together_and_a_writer_waits_for_them(
    cli: Cli, servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    readers = [
        spawn_cli("run", "--read", lock_name, "--", *until_file(done), servers=servers.urls)
        for _ in range(2)
    ]
    try:
        wait_for(lambda: sum(m.count("r") >= 2 for m in members_on(servers, lock_name)) >= 3)
        status = cli("status", lock_name, "--json")
        assert status.returncode == 0
        report = json.loads(status.stdout)
        assert len(report["readers"]) == 2
        assert report["writer"] is None
        table = cli("status", lock_name)
        assert "held for reading by 2 reader(s)" in table.stdout
        assert "unavailable" not in table.stdout, table.stdout
        busy = cli("run", "--write", lock_name, "--wait", "0", "--", "true")
        assert busy.returncode == 75
        done.touch()
        assert cli("run", "--write", lock_name, "--wait", "30", "--", "true").returncode == 0
    finally:
        done.touch()
        for reader in readers:
            assert reader.wait(timeout=30) == 0
    assert members_on(servers, lock_name) == [""] * 5


def test_a_writer_excludes_readers_and_status_names_it(
    cli: Cli, servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    writer = spawn_cli("run", "--write", lock_name, "--", *until_file(done), servers=servers.urls)
    try:
        wait_for(lambda: sum("w" in m for m in members_on(servers, lock_name)) >= 3)
        table = cli("status", lock_name)
        assert table.returncode == 0
        assert "held for writing" in table.stdout
        # The servers are usable: the plain lock NAME is neither "unavailable" nor said
        # to be "free" beside a held read-write lock.
        assert "unavailable" not in table.stdout, table.stdout
        assert "is free" not in table.stdout, table.stdout
        assert cli("run", "--read", lock_name, "--wait", "0", "--", "true").returncode == 75
        # The plain lock of the same name is another lock.
        assert cli("run", lock_name, "--wait", "0", "--", "true").returncode == 0
    finally:
        done.touch()
        assert writer.wait(timeout=30) == 0


def test_status_counts_the_live_holds_of_each_kind_only(
    cli: Cli, servers: LocalServerGroup, lock_name: str
) -> None:
    """Holds past their time (a writer's, two waiting writers') that no acquire has
    dropped yet are not shown beside the live reader; a live intent is counted."""
    for url in servers.urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        seconds, micros = client.time()
        now = int(seconds) * 1000 + int(micros) // 1000
        gone, live = now - 1_000, now + 60_000
        members = {"wgone-writer": gone, "igone-1": gone, "igone-2": gone}
        members |= {"rlive-reader": live, "ilive-waiter": live}
        client.zadd(rw_key(lock_name), {m: rw_score(m, at) for m, at in members.items()})
        client.pexpire(rw_key(lock_name), 60_000)
        client.close()
    report = json.loads(cli("status", lock_name, "--json").stdout)
    assert report["readers"] == ["live-reader"]
    assert report["writer"] is None
    assert [s["waiting_writers"] for s in report["servers"]] == [1] * 5


def test_read_with_fencing_or_write_is_a_usage_error(cli: Cli, lock_name: str) -> None:
    result = cli("run", "--read", "--fencing", lock_name, "--", "true")
    assert result.returncode == 2
    assert "writers only" in assert_one_line_error(result)
    result = cli("run", "--read", "--write", lock_name, "--", "true")
    assert result.returncode == 2
