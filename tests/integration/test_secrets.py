"""Passwords and tokens never show: not in configuration errors, labels, reprs, outcomes,
exception messages, log lines, observer events, nor on the CLI's stderr or ``--json``.

Passwords are generated with every URL delimiter in them (a user who forgot to
percent-encode). Tokens leak when a server echoes our arguments in an error: a real
server with ``rename-command EVALSHA ""`` (or ``EVAL``) answers ``unknown command
'EVALSHA', with args beginning with: ... '<token>'``; that is also a deployment error
no retry fixes (fatal, named).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import redis.exceptions as rx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quorumlock import ConfigurationError, LockObserver, QuorumUnavailable, Redlock, Reply
from quorumlock._algorithm.scripts import SCRIPTS
from quorumlock._io.errors import translate
from quorumlock.testing import LocalServer
from tests.cli.conftest import run_cli
from tests.conftest import refused_ports
from tests.integration.apis import UNHURRIED, Api, call

# The distinctive middle of every generated password: nothing else in a message has it.
CORE = "Sup3rS3cretPW"
DELIMITERS = ":/?#[]@!$&'()*+,;=% \"\\"


class Recorder(LockObserver):
    def __init__(self) -> None:
        self.events: list[object] = []

    def on_acquire(self, event: Any) -> None:
        self.events.append(event)

    def on_release(self, event: Any) -> None:
        self.events.append(event)

    def on_lost(self, event: Any) -> None:
        self.events.append(event)

    def on_round(self, event: Any) -> None:
        self.events.append(event)


@pytest.fixture(scope="module")
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on (connections are refused at once), held for the
    module: a parallel test process's server cannot take it."""
    with refused_ports(1) as (port,):
        yield port


def passwords() -> st.SearchStrategy[str]:
    edge = st.text(alphabet=DELIMITERS + "ab", max_size=4)
    return st.builds(lambda a, b: f"{a}{CORE}{b}", edge, edge)


def texts_of(rl: Redlock | None, error: BaseException | None, recorder: Recorder) -> str:
    parts = [repr(error), str(error)]
    if rl is not None:
        parts += [repr(rl), repr(rl.servers)]
    parts += [repr(event) for event in recorder.events]
    return "\n".join(parts)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(password=passwords(), where=st.sampled_from(["userinfo", "user+password", "query"]))
# the part between '@' and '#' was read as the host, and shown with the server's name
@example(password=f"@%{CORE}#", where="userinfo")
# an '@' then a '#' in a query password: the '@' was taken for the end of the userinfo
@example(password=f"@#{CORE}", where="query")
# a '?' in the userinfo: the password's tail was read as a query option, and named
@example(password=f"?{CORE}=?", where="user+password")
# ... or as the host, shown in every message about the server
@example(password=f"b@%({CORE}?", where="user+password")
# a "scheme://" in the password: the mask took it for the start of another URL
@example(password=f"@+'*{CORE}\"a://", where="userinfo")
def test_generated_passwords_never_show(
    password: str, where: str, closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Every message a URL can lead to, with a password holding any URL delimiter: the
    URL is refused with our own words, or accepted and then fails to connect; either way
    neither the password nor its distinctive part is printed. Catches urllib's "Port
    could not be cast to integer value as '<password>'" passed through, and a mask that
    stops at the first '@'."""
    if where == "userinfo":
        url = f"redis://:{password}@127.0.0.1:{closed_port}"
    elif where == "user+password":
        url = f"redis://user:{password}@127.0.0.1:{closed_port}/0"
    else:
        url = f"redis://127.0.0.1:{closed_port}?password={password}"
    recorder = Recorder()
    rl: Redlock | None = None
    error: BaseException | None = None
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        try:
            rl = Redlock([url], connect_timeout=0.5, observer=recorder)
        except ConfigurationError as exc:
            error = exc
        else:
            with pytest.raises(QuorumUnavailable) as info:
                rl.lock("secret-test", ttl=2).acquire(blocking=False)
            error = info.value
            rl.close()
    if isinstance(error, ConfigurationError):
        assert "malformed server URL" in str(error)
        assert "\n" not in str(error)
    text = texts_of(rl, error, recorder) + "\n" + caplog.text
    assert CORE not in text
    assert password not in text


@pytest.mark.parametrize(
    "password", [f"a/{CORE}", f"a?{CORE}", f"a#{CORE}", f"a@{CORE}@b", f"{CORE}:x"]
)
def test_the_cli_never_prints_a_password(password: str, closed_port: int) -> None:
    """The CLI's one-line error and its --json report, with the password in the URL."""
    url = f"redis://user:{password}@127.0.0.1:{closed_port}"
    for args in (["status"], ["doctor", "--json"], ["status", "--json"]):
        result = run_cli(*args, servers=[url], timeout=60)
        assert result.returncode != 0
        assert CORE not in result.stdout + result.stderr, (args, result)
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://127.0.0.1:0", "the port must be in 1..65535, not 0"),
        ("redis://127.0.0.1:6379?no_such_option=1", "unknown query option 'no_such_option'"),
        ("redis://127.0.0.1:6379?db=x", "invalid value (option 'db')"),
        # in a query that holds a password, an unknown option may be the rest of it
        (f"redis://127.0.0.1:6379?password=a&{CORE}=b", "the query holds a password"),
        (f"rediss://127.0.0.1:6379?ssl_password=x&{CORE}=y", "the query holds a password"),
    ],
)
def test_precise_configuration_errors(url: str, message: str) -> None:
    """Port 0 is not read as "the default port"; an unknown query option is named
    (not redis-py's "__init__() got an unexpected keyword argument"), unless the query
    holds a password."""
    with pytest.raises(ConfigurationError) as info:
        Redlock([url])
    assert message in str(info.value)
    assert "__init__" not in str(info.value)
    assert CORE not in str(info.value)


@pytest.fixture(params=["EVALSHA", "EVAL"])
def renamed(request: pytest.FixtureRequest) -> Iterator[tuple[LocalServer, str]]:
    """A server on which one of the script commands is disabled (rename-command X "")."""
    command = str(request.param)
    with LocalServer(extra_args=("--rename-command", command, "")) as server:
        yield server, command


def test_a_disabled_script_command_is_fatal_and_never_echoes_the_token(
    api: Api,
    renamed: tuple[LocalServer, str],
    servers: Any,
    lock_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """N = 3, one server without EVALSHA (or EVAL: then EVALSHA answers NOSCRIPT and the
    EVAL fallback is refused). That server's outcome is fatal and names the command; a
    majority still grants. Alone, it makes a blocking acquire with a timeout stop after
    one attempt (never retried). The token the server echoed is in no outcome, message,
    log line or event."""
    server, command = renamed
    recorder = Recorder()

    async def body() -> None:
        # (a second to answer: a release that two live servers must both confirm in
        # time fails on a loaded machine with the default 25 ms)
        rl = api.redlock([server.url, *servers.urls[:2]], observer=recorder, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=5)
        assert await call(lock.acquire(blocking=False))
        token = lock.token
        assert token is not None
        replies = [o.reply for o in lock.outcomes]
        assert replies == [Reply.FATAL, Reply.GRANTED, Reply.GRANTED]
        detail = lock.outcomes[0].detail
        assert f"unknown command '{command}'" in detail, detail
        assert token not in repr(lock.outcomes)
        assert await call(lock.release())
        alone = api.redlock([server.url], observer=recorder, instance_timeout=UNHURRIED)
        lone = alone.lock(lock_name, ttl=5)
        with pytest.raises(QuorumUnavailable) as info:
            await call(lone.acquire(timeout=3.0))
        assert "(1 attempt)" in str(info.value)
        assert f"unknown command '{command}'" in str(info.value)
        assert lone.token is not None
        texts = [str(info.value), repr(info.value.outcomes), *map(repr, recorder.events)]
        for text in texts:
            assert token not in text
            assert lone.token not in text
            assert "with args beginning with" not in text
        await call(rl.close())
        await call(alone.close())

    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        api.run(body)
    assert "with args beginning with" not in caplog.text


def test_tokens_and_passwords_a_proxy_echoes_are_scrubbed() -> None:
    """The one translation point, for an error text a proxy made up with our arguments
    in it: any token-like run of hex digits and any password in use is scrubbed; the
    digests of quorumlock's scripts (public) stay."""
    Redlock([f"redis://u:{CORE}@127.0.0.1:6379"])  # registers the password
    token = "0123456789abcdef0123456789abcdef01234567"
    sha = next(iter(SCRIPTS.values())).sha
    _, detail = translate(rx.ResponseError(f"proxy: EVALSHA {sha} 1 k {token} pw {CORE}"))
    assert token not in detail
    assert token[:16] not in detail
    assert CORE not in detail
    assert sha in detail
