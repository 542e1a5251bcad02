"""Protected resources that refuse stale holders' writes, by fencing token.

A lock is only held within its validity; a holder that pauses (GC, swap, a stopped VM)
can wake up after its lock expired and another client acquired it, and write anyway.
With ``Redlock(..., fencing=True)`` every acquisition carries ``lock.fencing_token``, an
int that strictly increases across holders; a resource that remembers the highest token
it has seen and refuses smaller ones makes that late write harmless.

:class:`RedisFence` is that guard for data kept in Redis (the resource's own server, not
one of the lock servers). For SQL, the same rule is one conditional ``UPDATE`` (see
``docs/safety.md``). :class:`AsyncRedisFence` is its asyncio twin: both share
:class:`_Fence`, which checks the arguments and turns every redis-py exception into a
quorumlock one; they only make the calls.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis import exceptions as rx

from quorumlock._algorithm.config import shown, validate_name
from quorumlock._algorithm.scripts import FENCE_GUARD
from quorumlock._exceptions import ConfigurationError, FenceError, StaleFencingToken
from quorumlock._frontend import named_as

__all__ = ["AsyncRedisFence", "RedisFence"]

#: How the guard script refuses a token (docs/safety.md, fencing): the prefix, then the
#: highest token seen.
_STALE = "STALEFENCE "

#: The largest token the guard compares exactly (a Lua number is a double). quorumlock's
#: own tokens stay far below: a server's clock in microseconds is about 2**51.
MAX_TOKEN = 2**53 - 1

ClientT = TypeVar("ClientT", redis.Redis, redis.asyncio.Redis)
Arg = str | int | float | bytes
_SENDABLE = (str, bytes, memoryview, int, float)


class _Fence(Generic[ClientT]):
    """What both guards share: the resource, its fence key, the checks of a write and
    the translation of the resource server's errors."""

    #: The clients of this guard's API, and those of the other one (refused).
    _clients: tuple[type, ...] = ()
    _wanted = ""
    _other_clients: tuple[type, ...] = ()
    _other_fence = ""
    _other_kind = ""

    def __init__(self, client: ClientT, resource: str, *, fence_key: str | None = None) -> None:
        self.resource = validate_name(resource)
        if fence_key is not None and not isinstance(fence_key, str):
            raise TypeError(f"fence_key must be a str or None, not {fence_key!r}")
        if fence_key == "":
            raise ConfigurationError("fence_key must not be empty: give None for the default")
        self.fence_key = fence_key or f"quorumlock:fence:{resource}"
        if isinstance(client, self._other_clients):
            # Its calls would return coroutines never awaited (nothing written, no
            # error), or block and then fail as they are awaited.
            kind = f"{type(client).__module__}.{type(client).__name__}"
            raise TypeError(f"{kind} is {self._other_kind} client: give it to {self._other_fence}")
        if not isinstance(client, self._clients):
            raise TypeError(f"client must be {self._wanted}, not {client!r}")
        self._client: ClientT = client

    def _guard_args(
        self, token: object, command: tuple[Arg, ...]
    ) -> tuple[str, int, *tuple[Arg, ...]]:
        """The guard script's KEYS and ARGV, checked before anything is sent."""
        if token is None:
            raise TypeError(
                "the fencing token is None: the lock was taken by a Redlock without "
                "fencing=True, or was never acquired"
            )
        if not isinstance(token, int) or isinstance(token, bool):
            raise TypeError(f"a fencing token must be an int, not {token!r}")
        if token < 0:
            raise ConfigurationError(f"a fencing token must be >= 0, not {token}")
        if token > MAX_TOKEN:
            raise ConfigurationError(
                f"a fencing token must be at most 2**53 - 1 (the guard compares tokens as "
                f"the server's Lua numbers, exact up to there), not {token}"
            )
        if not command:
            raise ConfigurationError("no command given")
        for position, arg in enumerate(command, 1):
            # What redis-py can send; its own refusal (DataError) comes before anything
            # is sent, and would read as a lost reply.
            if not isinstance(arg, _SENDABLE) or isinstance(arg, bool):
                raise TypeError(
                    f"command argument {position} must be a str, bytes, int or float, "
                    f"not {type(arg).__name__}"
                )
        return (self.fence_key, token, *command)

    def _failure(self, exc: rx.RedisError, token: int) -> StaleFencingToken | FenceError:
        """The quorumlock exception for what redis-py raised during a write."""
        text = str(exc)
        if isinstance(exc, rx.ResponseError) and text.startswith(_STALE):
            seen = text[len(_STALE) :].split(maxsplit=1)
            try:
                highest = int(seen[0])
            except (IndexError, ValueError):
                return self._not_a_token(seen[0] if seen else "")
            if not 0 <= highest <= MAX_TOKEN:
                return self._not_a_token(seen[0])
            return StaleFencingToken(
                f"write to {self.resource!r} refused: fencing token {token} is older than "
                f"{highest}, the lock was acquired by another holder since",
                token=token,
                highest=highest,
            )
        return self._error("write to", exc)

    def _error(self, what: str, exc: rx.RedisError) -> FenceError:
        # A refused command was not applied, though the guard may have recorded the
        # token already (a script is not rolled back).
        if isinstance(exc, rx.ResponseError):
            detail = f"the server refused it: {exc}"
        else:  # the reply was lost: the write may or may not have been applied
            detail = f"no reply from the server ({type(exc).__name__}: {exc})"
        return FenceError(f"{what} {self.resource!r} failed: {detail}", resource=self.resource)

    def __repr__(self) -> str:
        flavour = "quorumlock.asyncio" if isinstance(self, AsyncRedisFence) else "quorumlock"
        return f"<{flavour}.RedisFence {shown(self.resource)} fence_key={shown(self.fence_key)}>"

    def _highest(self, value: object) -> int | None:
        if value is None:
            return None
        try:
            highest: int = int(value)  # type: ignore[call-overload]
        except ValueError:
            raise self._not_a_token(value) from None
        if not 0 <= highest <= MAX_TOKEN:
            raise self._not_a_token(value)
        return highest

    def _not_a_token(self, value: object) -> FenceError:
        """The fence key holds what no fence wrote (another program's value)."""
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        return FenceError(
            f"the fence of {self.resource!r} ({self.fence_key!r}) holds {text[:40]!r}, not "
            "a fencing token: something other than a fence wrote it",
            resource=self.resource,
        )


class RedisFence(_Fence[redis.Redis]):
    """A guard for one resource kept in Redis: writes carry a fencing token.

    ``execute(token, *command)`` runs ``command`` (e.g. ``"HSET", "stock:42", "count", 7``)
    on ``client`` in one atomic step with the check that ``token`` is at least the highest
    token this resource has seen, and records ``token``. The highest token is kept under
    ``fence_key`` (default ``"quorumlock:fence:<resource>"``), without a ttl::

        fence = RedisFence(redis.Redis(...), "stock:42")
        with rl.lock("stock:42", ttl=10) as lock:   # rl = Redlock(..., fencing=True)
            fence.execute(lock.fencing_token, "HINCRBY", "stock:42", "count", -1)

    Raises :class:`StaleFencingToken` (nothing was written) when a larger token was
    seen, ``TypeError`` for a token that is not an int (None among them: the
    ``fencing_token`` of a lock without fencing) or a command argument that is not a
    ``str``, ``bytes``, ``int`` or ``float``, and :class:`ConfigurationError` for a token
    below 0 or above ``2**53 - 1`` (the guard compares tokens as the server's Lua
    numbers, exact up to there) or no command, all before anything is sent. An error of
    the command itself (the server refused it) or of the connection raises
    :class:`FenceError`, as it does from ``highest()``.
    Making the fence raises ``TypeError`` for a client that is not a ``redis.Redis`` or a
    ``RedisCluster`` (an asyncio client goes to ``quorumlock.asyncio.RedisFence``), or a
    ``resource`` or ``fence_key`` that is not a str, and :class:`ConfigurationError` for
    an empty ``fence_key`` or a ``resource`` that is not a valid lock name.
    """

    _clients = (redis.Redis, redis.cluster.RedisCluster)
    _wanted = "a redis.Redis client (the resource's server)"
    _other_clients = (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)
    _other_fence = "quorumlock.asyncio.RedisFence"
    _other_kind = "an asyncio"

    def execute(self, token: int | None, *command: Arg) -> Any:
        """Run ``command`` if ``token`` is not stale; return its reply."""
        args = self._guard_args(token, command)
        try:
            try:
                return self._client.evalsha(FENCE_GUARD.sha, 1, *args)
            except rx.NoScriptError:  # the resource server lost its script cache
                return self._client.eval(FENCE_GUARD.source, 1, *args)
        except rx.RedisError as exc:
            raise self._failure(exc, args[1]) from None

    def highest(self) -> int | None:
        """The highest token the resource has accepted, or None if none yet."""
        try:
            return self._highest(self._client.get(self.fence_key))
        except rx.RedisError as exc:
            raise self._error("reading the fence of", exc) from None


@named_as("RedisFence")
class AsyncRedisFence(_Fence[redis.asyncio.Redis]):
    """The asyncio twin of :class:`RedisFence` (``await fence.execute(...)``)."""

    _clients = (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)
    _wanted = "a redis.asyncio.Redis client (the resource's server)"
    _other_clients = (redis.Redis, redis.cluster.RedisCluster)
    _other_fence = "quorumlock.RedisFence"
    _other_kind = "a sync"

    async def execute(self, token: int | None, *command: Arg) -> Any:
        """Run ``command`` if ``token`` is not stale; return its reply."""
        args = self._guard_args(token, command)
        try:
            try:
                return await self._client.evalsha(FENCE_GUARD.sha, 1, *args)
            except rx.NoScriptError:  # the resource server lost its script cache
                return await self._client.eval(FENCE_GUARD.source, 1, *args)
        except rx.RedisError as exc:
            raise self._failure(exc, args[1]) from None

    async def highest(self) -> int | None:
        """The highest token the resource has accepted, or None if none yet."""
        try:
            return self._highest(await self._client.get(self.fence_key))
        except rx.RedisError as exc:
            raise self._error("reading the fence of", exc) from None


# Its name where users meet it, quorumlock.asyncio.RedisFence (help(), messages).
AsyncRedisFence.__name__ = AsyncRedisFence.__qualname__ = "RedisFence"
