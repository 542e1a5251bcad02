"""Bad input gives one line on stderr and a non-zero status, never a traceback."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from quorumlock.cli import _app, _status
from quorumlock.cli._common import Interrupted
from quorumlock.testing import LocalServerGroup, _servers
from quorumlock.testing._servers import ends_like_default
from tests.cli.conftest import Cli, assert_one_line_error, run_cli
from tests.conftest import ServerFactory

COMMANDS = [
    ["demo"],
    ["run"],
    ["status"],
    ["doctor"],
    ["servers"],
    ["servers", "start"],
    ["servers", "stop"],
    ["bench"],
    ["verify"],
]


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_examples(words: list[str]) -> None:
    result = run_cli(*words, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage: quorumlock" in result.stdout
    assert "examples:" in result.stdout


def test_top_level_help_and_version() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for word in ("demo", "run", "status", "doctor", "servers", "bench", "verify"):
        assert word in result.stdout
    assert run_cli("--version").stdout.startswith("quorumlock ")


def test_unknown_command() -> None:
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert "invalid choice: 'frobnicate'" in assert_one_line_error(result)


def test_no_command() -> None:
    result = run_cli()
    assert result.returncode == 2
    assert_one_line_error(result)


def test_an_unknown_option_before_the_command_is_named() -> None:
    """Not "the following arguments are required: COMMAND", which it said."""
    for words in (["--bogus"], ["--debug", "status", "x"]):
        result = run_cli(*words)
        assert result.returncode == 2
        line = assert_one_line_error(result)
        assert f"unrecognized arguments: {words[0]} (options go after the command" in line
    assert run_cli("--vers").stdout.startswith("quorumlock ")  # argparse's abbreviation


def test_run_without_double_dash(cli: Cli) -> None:
    result = cli("run", "job", "true")
    assert result.returncode == 2
    assert "missing '--'" in assert_one_line_error(result)


def test_run_with_nothing_after_double_dash(cli: Cli) -> None:
    result = cli("run", "job", "--")
    assert result.returncode == 2
    assert "no command after '--'" in assert_one_line_error(result)


def test_double_dash_elsewhere_is_refused(cli: Cli) -> None:
    result = cli("status", "job", "--", "true")
    assert result.returncode == 2
    assert_one_line_error(result)


@pytest.mark.parametrize(
    "words", [["run", "", "--", "true"], ["status", ""]], ids=["run", "status"]
)
def test_empty_name(cli: Cli, words: list[str]) -> None:
    result = cli(*words)
    assert result.returncode == 2
    assert "must not be empty" in assert_one_line_error(result)


@pytest.mark.parametrize(
    "words",
    [["run", "job ", "--", "true"], ["status", " job"], ["leader", "job\n"]],
    ids=["run", "status", "leader"],
)
def test_white_space_around_a_name(cli: Cli, words: list[str]) -> None:
    result = cli(*words)
    assert result.returncode == 2
    assert "has white space around it" in assert_one_line_error(result)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379",
        "redis://127.0.0.1:notaport",
        "redis://127.0.0.1:99999",
        "redis://",
        "redis://[::1",
        "redis://127.0.0.1:6379/notadb",
        "unix://",
    ],
)
@pytest.mark.parametrize("command", ["status", "doctor", "run"])
def test_malformed_urls(url: str, command: str) -> None:
    words = {"status": ["status", "x"], "doctor": ["doctor"], "run": ["run", "x", "--", "true"]}
    result = run_cli(*words[command][:2], "--servers", url, *words[command][2:])
    assert result.returncode == 2
    assert "malformed server URL" in assert_one_line_error(result)


BAD_PORT = "the port must be a number in 1..65535"
BAD_PATH = "the path must be a database number"


@pytest.mark.parametrize(
    ("url", "shown", "why"),
    [
        ("redis://127.0.0.1:abc", None, BAD_PORT),
        ("redis://:pw@127.0.0.1:99999", "redis://:***@127.0.0.1:99999", BAD_PORT),
        ("redis://127.0.0.1:6379/abc", None, BAD_PATH),
        ("redis://127.0.0.1:6379/-1", None, BAD_PATH),
    ],
)
def test_a_malformed_url_error_is_shown_whole(url: str, shown: str | None, why: str) -> None:
    """The '@' of the message's hint is not the end of the URL's password: the mask
    stops at the URL's end (a space), and hides nothing of the message but passwords."""
    result = run_cli("run", "x", "--servers", url, "--", "true")
    hint = "percent-encode any / ? # @ : in the user name or password"
    line = assert_one_line_error(result)
    assert line == f"quorumlock: error: malformed server URL {shown or url!r}: {why} ({hint})"


def test_malformed_url_never_shows_its_password() -> None:
    result = run_cli("status", "x", "--servers", "redis://alice:hunter2@[::1:6379")
    line = assert_one_line_error(result)
    assert "hunter2" not in result.stdout + result.stderr
    assert "alice:***@" in line


@pytest.mark.parametrize("where", ["--servers", "env"])
def test_a_password_with_a_comma(make_servers: ServerFactory, where: str) -> None:
    """URLs are separated by the commas before a scheme: a password may hold one (the
    list was cut at every comma, and the malformed 'URL' before it was shown with the
    start of the password)."""
    (server,) = make_servers(1, extra_args=("--requirepass", "zq7w,xk9v"))
    url = server.url.replace("redis://", "redis://:zq7w,xk9v@")
    other = make_servers(1)[0].url
    given = f"{url}, {other}"
    args = ["status", "x", "--json"]
    if where == "--servers":
        result = run_cli(*args, "--servers", given)
    else:
        result = run_cli(*args, servers=[given])
    assert "zq7w" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    assert [s["reachable"] for s in json.loads(result.stdout)["servers"]] == [True, True]
    # a host list without schemes is still refused, and names no password
    result = run_cli("status", "x", "--servers", "redis://:zq7w,xk9v@127.0.0.1:1,host:2")
    assert result.returncode == 2
    assert "zq7w" not in result.stdout + result.stderr


def test_same_server_twice(servers: LocalServerGroup) -> None:
    url = servers.urls[0]
    result = run_cli("status", "x", "--servers", f"{url},{url}")
    assert result.returncode == 2
    assert "listed twice" in assert_one_line_error(result)


@pytest.mark.parametrize("command", [["status", "x"], ["doctor"], ["run", "x", "--", "true"]])
def test_no_servers_configured(command: list[str]) -> None:
    result = run_cli(*command)
    assert result.returncode == 2
    assert "QUORUMLOCK_SERVERS" in assert_one_line_error(result)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["run", "x", "--ttl", "-1", "--", "true"], "--ttl must be > 0"),
        (["run", "x", "--ttl", "abc", "--", "true"], "--ttl must be a number"),
        (["run", "x", "--wait", "nan", "--", "true"], "--wait must be finite"),
        (["run", "x", "--ttl", "90", "--", "true"], "exceeds --max-ttl"),
        (["doctor", "--clock-sample", "0"], "--clock-sample must be > 0"),
        (["servers", "start", "--count", "0"], "--count must be >= 1"),
        (["status", "x", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_option_values(cli: Cli, words: list[str], message: str) -> None:
    result = cli(*words)
    assert result.returncode == 2
    assert message in assert_one_line_error(result)


def test_a_debug_in_the_wrong_place_is_refused_and_turns_nothing_on() -> None:
    # It was refused, after a traceback it had turned on.
    result = run_cli("--debug", "status", "x", servers=NOWHERE)
    assert result.returncode == 2
    assert "unrecognized arguments: --debug" in assert_one_line_error(result)


def test_debug_shows_the_traceback() -> None:
    result = run_cli("status", "x", "--servers", "http://x", "--debug")
    assert result.returncode == 2
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("quorumlock: error: ")


UNREACHABLE = ["redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://:pa55word@127.0.0.1:3"]


def test_unreachable_servers_run() -> None:
    result = run_cli("run", "x", "--", "true", servers=UNREACHABLE)
    assert result.returncode == 69
    line = assert_one_line_error(result)
    assert "127.0.0.1:1" in line
    assert "pa55word" not in result.stderr


def test_unreachable_servers_status() -> None:
    result = run_cli("status", "x", servers=UNREACHABLE)
    assert result.returncode == 1
    assert "only 0 of 3 servers reachable" in assert_one_line_error(result)
    assert "pa55word" not in result.stdout + result.stderr


def test_unreachable_servers_doctor() -> None:
    result = run_cli("doctor", "--json", servers=UNREACHABLE)
    assert result.returncode == 1
    assert "reachable" in assert_one_line_error(result)
    assert "pa55word" not in result.stdout + result.stderr


@pytest.mark.parametrize("words", [["demo"], ["bench", "--quick"]])
def test_no_server_binary(words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUORUMLOCK_SERVER_BINARY", "/nonexistent/valkey-server")
    result = run_cli(*words)
    assert result.returncode == 1
    assert "QUORUMLOCK_SERVER_BINARY" in assert_one_line_error(result)


NOWHERE = ["redis://127.0.0.1:1"]  # never contacted: bad input is refused first
# A short run, should verify start one: a bad --ttl failed in every worker, not at once.
VERIFY_SHORT = ["verify", "--nemesis", "none", "--count", "3", "--workers", "2", "--duration", "1"]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["status", "x", "--password-file", "/nonexistent"], "cannot read --password-file"),
        (["doctor", "--password-file", "/nonexistent"], "cannot read --password-file"),
        (["run", "x", "--password-file", "/", "--", "true"], "cannot read --password-file"),
        (["status", "x", "--password-file", "{binary}"], "is not UTF-8 text"),
        (["status", "x", "--timeout", "inf"], "--timeout must be finite"),
        (["doctor", "--timeout", "1e400"], "--timeout must be finite"),
        (["run", "x", "--timeout", "99999", "--", "true"], "--timeout must be at most 3600"),
        (["status", "x", "--timeout", "abc"], "--timeout must be a number"),
        (["doctor", "--clock-sample", "100"], "--clock-sample must be at most 60"),
        (["demo", "--seconds", "1000"], "--seconds must be at most 300"),
        (["demo", "--workers", "100000"], "--workers must be at most 64"),
        (["bench", "--slice", "100"], "--slice and --warmup must be at most 60"),
        (["verify", "--duration", "1000"], "--duration must be at most 600"),
        (["verify", "--count", "100000"], "--count must be at most 32"),
        (["verify", "--workers", "100000"], "--workers must be at most 64"),
        (["servers", "start", "--count", "33", "--dir", "{file}/d"], "--count must be at most 32"),
        (["servers", "start", "--dir", "{file}/d"], "cannot create --dir"),
        (["servers", "start", "--dir", ""], "the directory must not be empty"),
        (["servers", "stop", "--dir", " "], "the directory must not be empty"),
        (["status", "x" * 4097], "is longer than 4096 bytes"),
        (["run", "x", "--grace", "1e300", "--", "true"], "--grace must be at most 3600"),
        (["status", "quorumlock:incarnation"], "quorumlock:incarnation"),
        (
            ["run", "x", "--ttl", "1e12", "--max-ttl", "1e12", "--", "true"],
            "--ttl must be at most 1e+09",
        ),
        (["run", "x", "--max-ttl", "1e16", "--", "true"], "--max-ttl must be at most 1e+09"),
        (["run", "x", "--ttl", "1e308", "--", "true"], "--ttl must be at most 1e+09"),
        (["doctor", "--ttl", "1e308"], "--ttl must be at most 1e+09"),
        (["doctor", "--ttl", "0.0001"], "ttl 0.0001 is too short"),  # as run and verify say
        (["doctor", "--instance-timeout", "1e10"], "--instance-timeout must be at most 3600"),
        (["status", "x", "--max-ttl", "1e10"], "--max-ttl must be at most 1e+09"),
        (["servers", "init", "--timeout", "1e20", "{url}"], "--timeout must be at most 3600"),
        ([*VERIFY_SHORT, "--ttl", "0.001"], "ttl 0.001 is too short"),
        ([*VERIFY_SHORT, "--ttl", "1e308"], "--ttl must be at most 1e+09"),
        ([*VERIFY_SHORT, "--ttl", "6e8"], "ttl must be at most 5e+08 s with the restart"),
    ],
)
def test_bad_input_is_status_2_in_every_command(
    words: list[str], message: str, tmp_path: Path
) -> None:
    """Unreadable files, numbers out of range, directories that cannot be made: status 2."""
    binary, file = tmp_path / "binary", tmp_path / "file"
    binary.write_bytes(b"\xff\xfe\x00pw\n")
    file.write_text("a file, not a directory")
    words = [w.format(binary=binary, file=file, url=NOWHERE[0]) for w in words]
    result = run_cli(*words, servers=NOWHERE, timeout=30)
    assert result.returncode == 2, result.stderr
    assert message in assert_one_line_error(result)


def test_the_demo_and_bench_refuse_servers_with_a_password_as_bad_input(
    tmp_path: Path,
) -> None:
    password = tmp_path / "pw"
    password.write_text("pw\n")
    for words in (["demo", "--seconds", "1"], ["bench", "--quick"]):
        result = run_cli(*words, servers=["redis://:pw@127.0.0.1:1"], timeout=30)
        assert result.returncode == 2, result.stderr
        assert "without a password" in assert_one_line_error(result)
        # Nor do they offer --password-file (it was offered, and always refused).
        usage = run_cli(words[0], "--help")
        assert "--password-file" not in usage.stdout
        assert "without a password" in usage.stdout
        result = run_cli(*words, "--password-file", str(password), servers=NOWHERE)
        assert result.returncode == 2, result.stderr
        assert "unrecognized arguments: --password-file" in assert_one_line_error(result)


@pytest.mark.parametrize(
    "words",
    [
        ["--help"],
        ["--version"],
        ["frobnicate"],
        ["status", "x", "--servers", "http://x", "--debug"],
        ["status", "x", "--json"],
        ["run", "x", "--ttl", "0", "--", "true"],
    ],
    ids=" ".join,
)
def test_a_command_run_in_a_fork_is_the_command_run_as_a_process(
    words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_cli`` runs the command in a fork of a process that imported it once
    (tests/cli/_zygote.py): the same status, output and errors as the console script
    started afresh."""
    forked = run_cli(*words, servers=UNREACHABLE)
    monkeypatch.setenv("QUORUMLOCK_TEST_CLI", "process")
    started = run_cli(*words, servers=UNREACHABLE)
    assert forked.returncode == started.returncode
    assert forked.stdout == started.stdout
    assert forked.stderr == started.stderr


def test_a_command_handles_sigterm_where_the_server_kit_would() -> None:
    """A process whose local servers' kit handles SIGTERM (it started servers from its
    main thread) still gets the command's handler, which cleans up and exits 128 + N;
    the kit's, which would only stop its servers, comes back after it."""
    kits = _servers._kill_then_die
    assert ends_like_default(kits)
    assert ends_like_default(signal.SIG_DFL)
    before = signal.signal(signal.SIGTERM, kits)
    try:
        with _app._terminating():
            handler = signal.getsignal(signal.SIGTERM)
            assert handler is not kits
            assert callable(handler)
            with pytest.raises(Interrupted):
                handler(signal.SIGTERM, None)
        assert signal.getsignal(signal.SIGTERM) is kits
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_whose_exception_a_finaliser_dropped_still_sets_the_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SIGTERM whose handler ran inside an object's ``__del__``: Python prints the
    handler's exception and drops it, and the command runs to its end. Its status is
    143 all the same, with the usual line; without the handler's note of the signal it
    was the command's own (0 here)."""

    class Finalised:
        def __del__(self) -> None:
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)  # as the signal's handler runs, in a finaliser

    def status(args: object) -> int:
        Finalised()  # dropped at once: its __del__ runs, and its exception is dropped
        return 0

    monkeypatch.setattr(_status, "status", status)
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        assert _app.main(["status", "job", "--servers", "redis://127.0.0.1:1"]) == 143
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "quorumlock: error: interrupted by SIGTERM"
