"""The Lua scripts quorumlock runs on the servers, with their SHA1 digests.

The bodies are those of the Redis "Distributed locks with Redis" page (release) and of the
Redlock ports in other languages (extend), so that quorumlock contends correctly with them
on the same keys (SPEC B6): the value of a lock key is the holder's token as plain text.
The SHA1 of each source is what ``EVALSHA`` expects; a test checks it against
``SCRIPT LOAD`` on a live server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["EXTEND", "RELEASE", "Script"]


@dataclass(frozen=True, slots=True)
class Script:
    """A Lua source and its SHA1 (computed, never written by hand)."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


#: R3/R9 compare-and-delete. A plain DEL could remove another client's lock after ours
#: expired; this deletes the key only while it still holds our token.
RELEASE = Script(
    "release",
    """\
-- quorumlock release (SPEC R3): compare-and-delete
-- KEYS[1]  the lock key
-- ARGV[1]  the token we stored when acquiring
-- returns  1 if the key held our token and was deleted, 0 otherwise
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
""",
)

#: R10 extension: reset the ttl only while the key still holds our token. An expired key
#: is never re-created (PEXPIRE on a missing key does nothing and GET already failed).
EXTEND = Script(
    "extend",
    """\
-- quorumlock extend (SPEC R10): compare-and-pexpire
-- KEYS[1]  the lock key
-- ARGV[1]  the token we stored when acquiring
-- ARGV[2]  the new ttl in milliseconds
-- returns  1 if the key held our token and its ttl was reset, 0 otherwise
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("pexpire", KEYS[1], ARGV[2])
else
    return 0
end
""",
)
