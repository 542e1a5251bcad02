"""``quorumlock leader NAME`` on real servers: nobody, a leader, bad input, too few servers."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

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
        as_json = run_cli("leader", "cli:few", "--timeout", "0.5", "--json", servers=group.urls)
    rl.close()
    assert result.returncode == 1
    assert "could not tell who leads" in assert_one_line_error(result)
    # --json: the failure as JSON on stdout too, its error the one on stderr
    assert as_json.returncode == 1
    error = assert_one_line_error(as_json).removeprefix("quorumlock: error: ")
    assert "could not tell who leads" in error
    assert json.loads(as_json.stdout) == {
        "name": "cli:few",
        "leader": None,
        "term": None,
        "validity": None,
        "error": error,
    }


def shown_transcript(page: Path, section: str) -> list[tuple[list[str], str]]:
    """The commands of the first console block under ``section`` and the output shown
    for each, from a page of the docs."""
    text = page.read_text().split(section, 1)[1].split("\n## ", 1)[0]
    block = text.split("```\n", 2)[1]
    transcript: list[tuple[list[str], str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            transcript.append((shlex.split(line[2:]), ""))
        else:
            words, shown = transcript[-1]
            transcript[-1] = (words, shown + line + "\n")
    return transcript


def test_the_docs_show_its_output_as_it_is(cli: Cli, servers: LocalServerGroup) -> None:
    """Catches docs/cli.md showing an output leader does not print (its --json was
    shown on one line, where leader prints one field a line): the commands shown are
    run against a leader as shown, and their output is the one shown, numbers aside."""
    page = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    transcript = shown_transcript(page, "## `quorumlock leader NAME`")
    assert len(transcript) == 2

    def numbers_aside(text: str) -> str:
        return re.sub(r"\d+(\.\d+)?", "N", text)

    rl = quorumlock.Redlock(servers.urls)
    with rl.election("scheduler", ttl=10, identity="host-a:1234").campaign():
        for words, shown in transcript:
            assert words[:2] == ["quorumlock", "leader"]
            result = cli(*words[1:])
            assert result.returncode == 0, result.stderr
            assert numbers_aside(result.stdout) == numbers_aside(shown)
    rl.close()
