"""The one place the CLI reads a server's restart-quarantine state."""

from __future__ import annotations

import redis

from quorumlock._io.incarnation import ServerState, read_server_state

__all__ = ["quarantine_of", "server_state"]


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
