"""The one place the CLI reads a server's restart-quarantine state (SPEC R11, B1)."""

from __future__ import annotations

import importlib

import redis

__all__ = ["quarantine_of"]


def quarantine_of(client: redis.Redis) -> float | None:
    """Seconds of restart quarantine ``client``'s server has left (0.0: none).

    None when the installed core cannot tell (no incarnation marker support) or the
    server did not answer.
    """
    try:
        incarnation = importlib.import_module("quorumlock._io.incarnation")
    except ImportError:
        return None
    try:
        return float(incarnation.read_server_state(client).quarantined_for)
    except redis.RedisError:
        return None
