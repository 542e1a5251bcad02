"""The one place the CLI reads a server's restart-quarantine state."""

from __future__ import annotations

from typing import Any

import redis

from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._io.incarnation import ServerState, read_server_state

__all__ = ["quarantine_of", "read_marker", "server_state"]


def read_marker(client: redis.Redis | redis.client.Pipeline) -> Any:
    """Read a field of the server's key ``quorumlock:incarnation`` (the minimal ACL of
    docs/deployment.md allows it): WRONGTYPE (:func:`~quorumlock._io.errors.wrong_type`)
    says that the key is not quorumlock's marker (an application's key of that name),
    and every lock with the restart quarantine or fencing fails there."""
    return client.hget(MARKER_KEY, "run_id")


def server_state(client: redis.Redis, max_ttl: float) -> ServerState | None:
    """``client``'s server's incarnation, for a client whose max_ttl is ``max_ttl``.

    None when the server did not answer or refused a command (an ACL without INFO).
    """
    try:
        return read_server_state(client, max_ttl)
    except (redis.RedisError, ValueError):
        return None


def quarantine_of(client: redis.Redis, max_ttl: float) -> float | None:
    """Seconds of restart quarantine the server has left (0.0: none; None: unknown)."""
    state = server_state(client, max_ttl)
    return None if state is None else state.quarantined_for
