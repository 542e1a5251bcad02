"""The lock-family benchmark: one tiny run on real servers. No timing is asserted."""

from __future__ import annotations

from quorumlock.benchmarks import family
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of


def test_a_tiny_run_measures_every_contender_and_leaves_no_key(
    servers: LocalServerGroup,
) -> None:
    rates = family.measure(servers.urls, rounds=1, seconds=0.05)
    assert set(rates) == set(family.CONTENDERS)
    assert all(rate > 0 for rate in rates.values())
    for server in servers:  # every lock released, the held rlock of re-entry too
        client = client_of(server)
        left = client.keys("bench:family:*")
        client.close()
        assert left == []
