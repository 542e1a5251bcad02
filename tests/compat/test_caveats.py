"""What mixing clients costs: the weaker client's guarantee applies (docs/compatibility.md).

quorumlock's restart quarantine lives in quorumlock's acquire script. A foreign
Redlock client runs its own scripts, so a server that restarted empty counts for it at
once. This test pins that documented caveat down, next to the quorumlock client that the
quarantine keeps out in the same situation.
"""

from __future__ import annotations

import pytest

from quorumlock import ConfigurationError, QuorumUnavailable, Redlock, Reply
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock.testing import LocalServerGroup
from tests.compat.nodekit import NodeRedlock, NodeSession
from tests.conftest import ServerFactory, values

TTL_MS = 10_000


def test_node_redlock_does_not_honour_the_restart_quarantine(
    node_redlock: NodeRedlock, make_servers: ServerFactory, lock_name: str
) -> None:
    """docs/safety.md's timeline with node-redlock as the second client: A (quorumlock)
    holds "job" on x, y, z; y and z are killed -9 and restarted at once, forgetting A's
    key. A second quorumlock client is kept out by the quarantine; node-redlock is not,
    and holds "job" while A still does."""
    group = make_servers(3)
    rl_a = Redlock(group.urls, max_ttl=60, instance_timeout=1.0)
    a = rl_a.lock(lock_name, ttl=TTL_MS / 1000)
    assert a.acquire(blocking=False)
    assert [o.reply for o in a.outcomes] == [Reply.GRANTED] * 3
    group[1].restart()
    group[2].restart()
    assert values(group, lock_name) == [a.token, None, None]

    rl_b = Redlock(group.urls, max_ttl=60, instance_timeout=1.0)
    with pytest.raises(QuorumUnavailable, match="restart quarantine"):
        rl_b.lock(lock_name, ttl=TTL_MS / 1000).acquire(blocking=False)
    assert values(group, lock_name) == [a.token, None, None]

    with NodeSession(node_redlock, group.urls) as node:
        value = node.acquire("n", lock_name, TTL_MS)
        assert value is not None, "node-redlock was refused: the caveat no longer holds"
        assert values(group, lock_name) == [a.token, value, value]
        assert a.held  # two holders at once: the documented caveat
        assert node.release("n")
    assert a.release() is False  # only x remembered A's key
    rl_a.close()
    rl_b.close()


def test_a_lock_named_like_the_marker_key_is_refused_as_bad_input(
    servers: LocalServerGroup,
) -> None:
    """Any client's lock names must stay out of quorumlock's own keys (compatibility.md);
    quorumlock should refuse the one name that is its marker, before any network call."""
    rl = Redlock(servers.urls[:3])
    try:
        with pytest.raises(ConfigurationError):
            rl.lock(MARKER_KEY, ttl=1)
    finally:
        rl.close()
