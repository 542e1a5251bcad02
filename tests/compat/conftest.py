"""Fixtures of the wire-compatibility tests: node-redlock, installed on first use.

``node_redlock`` is parametrized over :data:`~tests.compat.nodekit.REDLOCK_VERSIONS`, so
every test that uses it runs against each node-redlock version. When node or the npm
packages cannot be had, the tests fail under CI (the ``CI`` environment variable is set)
or when ``QUORUMLOCK_TEST_STRICT=1`` (``.ci/run`` sets it), and are skipped with the
reason elsewhere: the end of the run then names tests/compat/ as a skipped area.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pytest

from quorumlock import Redlock
from tests.compat.nodekit import (
    REDLOCK_VERSIONS,
    NodeRedlock,
    NodeUnavailable,
    find_node,
    install_redlock,
)
from tests.conftest import STRICT_ENV


@pytest.fixture(
    scope="session", params=REDLOCK_VERSIONS, ids=[f"redlock-{v}" for v in REDLOCK_VERSIONS]
)
def node_redlock(request: pytest.FixtureRequest) -> NodeRedlock:
    version = request.param
    assert isinstance(version, str)
    try:
        return install_redlock(find_node(), version)
    except NodeUnavailable as exc:
        message = f"node-redlock {version} is not available: {exc}"
        if os.environ.get("CI") or os.environ.get(STRICT_ENV) == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@dataclass(frozen=True)
class Setup:
    """How the quorumlock side is configured: the page's Redlock, or with B1 and B2 on."""

    name: str
    max_ttl: float | None
    fencing: bool

    def redlock(self, urls: Sequence[str]) -> Redlock:
        # A generous per-server timeout: this is about exclusion on a busy machine.
        return Redlock(list(urls), max_ttl=self.max_ttl, fencing=self.fencing, instance_timeout=1.0)


#: "plain" is the Redlock page's algorithm alone; "default" is quorumlock's defaults (the
#: restart quarantine on, max_ttl 60 s); "fencing" adds fencing tokens to the defaults.
SETUPS: Final = (
    Setup("plain", max_ttl=None, fencing=False),
    Setup("default", max_ttl=60.0, fencing=False),
    Setup("fencing", max_ttl=60.0, fencing=True),
)


@pytest.fixture(params=SETUPS, ids=[setup.name for setup in SETUPS])
def setup(request: pytest.FixtureRequest) -> Setup:
    assert isinstance(request.param, Setup)
    return request.param
