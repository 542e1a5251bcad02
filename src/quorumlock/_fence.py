"""Protected resources that refuse stale holders' writes, by fencing token.

A lock is only held within its validity; a holder that pauses (GC, swap, a stopped VM)
can wake up after its lock expired and another client acquired it, and write anyway.
With ``Redlock(..., fencing=True)`` every acquisition carries ``lock.fencing_token``, an
int that strictly increases across holders; a resource that remembers the highest token
it has seen and refuses smaller ones makes that late write harmless.

:class:`RedisFence` is that guard for data kept in Redis (the resource's own server, not
one of the lock servers). For SQL, the same rule is one conditional ``UPDATE`` (see
``docs/safety.md``).
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio
from redis import exceptions as rx

from quorumlock._algorithm.config import validate_name
from quorumlock._algorithm.scripts import FENCE_GUARD
from quorumlock._exceptions import StaleFencingToken

__all__ = ["AsyncRedisFence", "RedisFence"]

_STALE = "STALEFENCE "


def _check_token(token: object) -> int:
    if not isinstance(token, int) or isinstance(token, bool):
        raise TypeError(f"a fencing token must be an int, not {token!r}")
    if token < 0:
        raise ValueError(f"a fencing token must be >= 0, not {token}")
    return token


def _guard_args(
    fence_key: str, token: object, command: tuple[str | int | float | bytes, ...]
) -> tuple[str, int, *tuple[str | int | float | bytes, ...]]:
    """The guard script's KEYS and ARGV, checked before anything is sent."""
    checked = _check_token(token)
    if not command:
        raise ValueError("no command given")
    return (fence_key, checked, *command)


def _stale(exc: rx.ResponseError, token: int, resource: str) -> StaleFencingToken | None:
    text = str(exc)
    if not text.startswith(_STALE):
        return None
    highest = int(text[len(_STALE) :].split(maxsplit=1)[0])
    return StaleFencingToken(
        f"write to {resource!r} refused: fencing token {token} is older than {highest}, "
        "the lock was acquired by another holder since",
        token=token,
        highest=highest,
    )


class RedisFence:
    """A guard for one resource kept in Redis: writes carry a fencing token.

    ``execute(token, *command)`` runs ``command`` (e.g. ``"HSET", "stock:42", "count", 7``)
    on ``client`` in one atomic step with the check that ``token`` is at least the highest
    token this resource has seen, and records ``token``. The highest token is kept under
    ``fence_key`` (default ``"quorumlock:fence:<resource>"``), without a ttl::

        fence = RedisFence(redis.Redis(...), "stock:42")
        with rl.lock("stock:42", ttl=10) as lock:   # rl = Redlock(..., fencing=True)
            fence.execute(lock.fencing_token, "HINCRBY", "stock:42", "count", -1)

    Raises :class:`StaleFencingToken` (nothing was written) when a larger token was
    seen, ``TypeError``/``ValueError`` for a token that is not an int >= 0; errors of the
    command itself are raised by redis-py as for any command.
    """

    def __init__(self, client: redis.Redis, resource: str, *, fence_key: str | None = None) -> None:
        self.resource = validate_name(resource)
        self.fence_key = fence_key or f"quorumlock:fence:{resource}"
        self._client = client

    def execute(self, token: int, *command: str | int | float | bytes) -> Any:
        """Run ``command`` if ``token`` is not stale; return its reply."""
        args = _guard_args(self.fence_key, token, command)
        try:
            try:
                return self._client.evalsha(FENCE_GUARD.sha, 1, *args)
            except rx.NoScriptError:  # the resource server lost its script cache
                return self._client.eval(FENCE_GUARD.source, 1, *args)
        except rx.ResponseError as exc:
            if (stale := _stale(exc, args[1], self.resource)) is not None:
                raise stale from None
            raise

    def highest(self) -> int | None:
        """The highest token the resource has accepted, or None if none yet."""
        value = self._client.get(self.fence_key)
        return None if value is None else int(value)


class AsyncRedisFence:
    """The asyncio twin of :class:`RedisFence` (``await fence.execute(...)``)."""

    def __init__(
        self, client: redis.asyncio.Redis, resource: str, *, fence_key: str | None = None
    ) -> None:
        self.resource = validate_name(resource)
        self.fence_key = fence_key or f"quorumlock:fence:{resource}"
        self._client = client

    async def execute(self, token: int, *command: str | int | float | bytes) -> Any:
        """Run ``command`` if ``token`` is not stale; return its reply."""
        args = _guard_args(self.fence_key, token, command)
        try:
            try:
                return await self._client.evalsha(FENCE_GUARD.sha, 1, *args)
            except rx.NoScriptError:  # the resource server lost its script cache
                return await self._client.eval(FENCE_GUARD.source, 1, *args)
        except rx.ResponseError as exc:
            if (stale := _stale(exc, args[1], self.resource)) is not None:
                raise stale from None
            raise

    async def highest(self) -> int | None:
        """The highest token the resource has accepted, or None if none yet."""
        value = await self._client.get(self.fence_key)
        return None if value is None else int(value)
