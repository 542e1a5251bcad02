"""``quorumlock leader NAME`` on real servers: nobody, a leader, bad input, too few servers."""

from __future__ import annotations

import json

import quorumlock
from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import Cli, assert_one_line_error, run_cli
from tests.conftest import ServerFactory


def test_no_leader_then_the_leader(cli: Cli, servers: LocalServerGroup, lock_name: str) -> None:
    result = cli("leader", lock_name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{lock_name!r}: no leader"
    assert json.loads(cli("leader", lock_name, "--json").stdout) == {
        "name": lock_name,
        "leader": None,
        "term": None,
        "validity": None,
    }
    rl = quorumlock.Redlock(servers.urls)
    # Held until the test ends it: a CLI call may take seconds on a loaded machine.
    with rl.election(lock_name, ttl=30, identity="host-a:1234").campaign() as term:
        text = cli("leader", lock_name)
        data = json.loads(cli("leader", lock_name, "--json").stdout)
    rl.close()
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"{lock_name!r}: leader 'host-a:1234', term {term.number}, ")
    assert data["leader"] == "host-a:1234"
    assert data["term"] == term.number
    assert 0 < data["validity"] <= 30
    assert cli("leader", lock_name).stdout.strip() == f"{lock_name!r}: no leader"


def test_bad_input_is_one_line(cli: Cli) -> None:
    assert_one_line_error(cli("leader", ""))
    result = cli("leader", "a}b")
    assert result.returncode == 2
    assert "hash tag" in assert_one_line_error(result)
    assert run_cli("leader", "--help").stdout.count("examples:") == 1


def test_too_few_servers_to_tell(make_servers: ServerFactory) -> None:
    group = make_servers(3)
    rl = quorumlock.Redlock(group.urls)
    with rl.election("cli:few", ttl=30, identity="x").campaign():
        group[0].kill()
        result = run_cli("leader", "cli:few", "--timeout", "0.5", servers=group.urls)
        assert result.returncode == 0, result.stderr  # two of three still tell
        group[1].kill()
        result = run_cli("leader", "cli:few", "--timeout", "0.5", servers=group.urls)
    rl.close()
    assert result.returncode == 1
    assert "could not tell who leads" in assert_one_line_error(result)
