"""Server arguments: URLs or redis-py client objects, validated without touching the network.

A :class:`ServerSpec` knows how to open a new dedicated connection to one server, a label
to name it in errors and logs (never with a password), and an identity used to refuse the
same server listed twice (two databases of one server are not independent instances).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast
from urllib.parse import urlsplit

import redis
import redis.asyncio
from redis import connection as _connection
from redis.asyncio import connection as _aconnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from quorumlock._exceptions import ConfigurationError

__all__ = [
    "AsyncRedisConnection",
    "AsyncServerArg",
    "RedisConnection",
    "ServerArg",
    "ServerSpec",
    "mask_url",
    "parse_servers",
]

Flavour = Literal["sync", "async"]


class RedisConnection(Protocol):
    """The part of redis-py's (untyped) ``Connection`` that quorumlock uses."""

    pid: int

    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def pack_command(self, *args: str | int) -> list[bytes]: ...
    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...
    def read_response(self, *, timeout: float) -> object: ...


class AsyncRedisConnection(Protocol):
    """The part of redis-py's asyncio ``Connection`` that quorumlock uses."""

    async def connect(self) -> None: ...
    async def disconnect(self, nowait: bool = False) -> None: ...
    def pack_command(self, *args: str | int) -> list[bytes]: ...
    async def send_packed_command(
        self, command: list[bytes], check_health: bool = True
    ) -> None: ...
    async def read_response(self, *, timeout: float) -> object: ...


_parse_url = cast(Callable[[str], dict[str, Any]], _connection.parse_url)

# A URL's sync connection class -> its asyncio twin.
_ASYNC_TWIN: dict[type[Any], type[Any]] = {
    _connection.Connection: _aconnection.Connection,
    _connection.SSLConnection: _aconnection.SSLConnection,
    _connection.UnixDomainSocketConnection: _aconnection.UnixDomainSocketConnection,
}

#: What ``Redlock`` accepts for one server.
ServerArg = str | redis.Redis
#: What ``quorumlock.asyncio.Redlock`` accepts for one server.
AsyncServerArg = str | redis.asyncio.Redis

_SCHEMES = ("redis", "rediss", "unix")
_PASSWORD = re.compile(r"(?<=://)([^:@/]*):([^@/]*)@")
# redis-py also takes the password (and a TLS key's passphrase) as query options.
_QUERY_PASSWORD = re.compile(r"([?&](?:ssl_)?password=)[^&#]*", re.IGNORECASE)
# TLS options that name files: checked when the server is given, not at the first connect.
_TLS_FILES = ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile")


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe for messages and logs."""
    url = _PASSWORD.sub(lambda m: f"{m.group(1)}:***@", url)
    return _QUERY_PASSWORD.sub(lambda m: f"{m.group(1)}***", url)


def _missing_tls_file(kwargs: Mapping[str, Any]) -> str | None:
    """``"ssl_ca_certs '/x' does not exist"`` for the first TLS file option that names
    nothing, else None."""
    for option in _TLS_FILES:
        path = kwargs.get(option)
        if path is not None and not os.path.exists(path):
            return f"{option} {str(path)!r} does not exist"
    return None


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one server. ``kwargs`` may hold credentials: never print them."""

    label: str
    identity: tuple[str, ...]
    connection_class: type[Any]  # redis-py's, sync or asyncio as the flavour asked
    kwargs: Mapping[str, Any] = field(repr=False)
    # The client's connection pool, kept alive: redis-py's asyncio Sentinel pool gives
    # its connections only a weak reference to itself (to ask for the master's address).
    pool: object = field(default=None, repr=False, compare=False)

    def connection(self, *, connect_timeout: float) -> RedisConnection:
        """A new, not yet connected connection of our own (never from a shared pool).

        redis-py's own retries are off: a round has one deadline, and the caller decides
        whether to try again. Every read passes its own timeout; ``connect_timeout``
        bounds the connect and the handshake (AUTH, HELLO, CLIENT SETINFO).
        """
        return cast(RedisConnection, self._make(connect_timeout, Retry(NoBackoff(), 0)))

    def async_connection(self, *, connect_timeout: float) -> AsyncRedisConnection:
        """The asyncio twin of :meth:`connection` (for specs parsed as ``"async"``)."""
        return cast(AsyncRedisConnection, self._make(connect_timeout, AsyncRetry(NoBackoff(), 0)))

    def _make(self, connect_timeout: float, retry: object) -> object:
        options = dict(self.kwargs)
        options.update(
            socket_timeout=connect_timeout,
            socket_connect_timeout=connect_timeout,
            retry=retry,
            health_check_interval=0,
        )
        return self.connection_class(**options)


def parse_servers(servers: object, flavour: Flavour = "sync") -> list[ServerSpec]:
    """Validate the ``servers`` argument of ``Redlock`` (sync or asyncio ``flavour``).

    Accepts one URL or client, or a sequence of them. Raises ``TypeError`` for other
    types (a sync client given to the asyncio API, or the reverse) and
    :class:`ConfigurationError` for an empty list, a malformed URL, or a server listed
    twice.
    """
    if isinstance(servers, str | redis.Redis | redis.asyncio.Redis):
        items: Sequence[object] = [servers]
    elif isinstance(servers, Sequence):
        items = servers
    else:
        raise TypeError(
            "servers must be a URL, a redis.Redis client, or a list of them, "
            f"not {type(servers).__name__}"
        )
    if not items:
        raise ConfigurationError("at least one server is needed")
    specs = [_parse_one(item, flavour) for item in items]
    seen: dict[tuple[str, ...], str] = {}
    for spec in specs:
        if spec.identity in seen:
            raise ConfigurationError(
                f"the same server is listed twice ({seen[spec.identity]} and {spec.label}): "
                "Redlock needs independent servers"
            )
        seen[spec.identity] = spec.label
    return specs


def _parse_one(server: object, flavour: Flavour) -> ServerSpec:
    if isinstance(server, str):
        spec = _from_url(server)
        if flavour == "async":
            spec = ServerSpec(
                spec.label, spec.identity, _ASYNC_TWIN[spec.connection_class], spec.kwargs
            )
        return spec
    client_type = redis.Redis if flavour == "sync" else redis.asyncio.Redis
    if isinstance(server, client_type):
        return _from_pool(server.connection_pool)
    expected = "redis.Redis" if flavour == "sync" else "redis.asyncio.Redis"
    hint = ""
    if flavour == "sync" and isinstance(server, redis.asyncio.Redis):
        hint = " (asyncio clients go to quorumlock.asyncio.Redlock)"
    elif flavour == "async" and isinstance(server, redis.Redis):
        hint = " (sync clients go to quorumlock.Redlock)"
    raise TypeError(
        f"a server must be a URL or a {expected} client, not {type(server).__name__}{hint}"
    )


def _from_url(url: str) -> ServerSpec:
    masked = mask_url(url.strip())
    if not url.strip():
        raise ConfigurationError("a server URL must not be empty")
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # raises for a port that is not a number in range
    except ValueError as exc:
        raise ConfigurationError(f"malformed server URL {masked!r}: {exc}") from None
    if parts.scheme not in _SCHEMES:
        raise ConfigurationError(
            f"malformed server URL {masked!r}: the scheme must be redis://, rediss:// or unix://"
        )
    if parts.scheme == "unix":
        if not parts.path:
            raise ConfigurationError(f"malformed server URL {masked!r}: no socket path")
    else:
        if not parts.hostname:
            raise ConfigurationError(f"malformed server URL {masked!r}: no host")
        if parts.path not in ("", "/") and not re.fullmatch(r"/\d+", parts.path):
            raise ConfigurationError(
                f"malformed server URL {masked!r}: the path must be a database number"
            )
    try:
        kwargs = _parse_url(url.strip())
    except ValueError as exc:
        raise ConfigurationError(f"malformed server URL {masked!r}: {exc}") from None
    connection_class: type[Any] = kwargs.pop("connection_class", _connection.Connection)
    try:  # catches unknown query options and bad values now, not at the first connect
        connection_class(**kwargs)
    except (TypeError, ValueError, redis.RedisError) as exc:
        raise ConfigurationError(f"malformed server URL {masked!r}: {exc}") from None
    if (missing := _missing_tls_file(kwargs)) is not None:
        raise ConfigurationError(f"malformed server URL {masked!r}: {missing}")
    return _spec(parts.scheme, connection_class, kwargs)


def _from_pool(pool: Any) -> ServerSpec:
    kwargs = dict(pool.connection_kwargs)
    if (missing := _missing_tls_file(kwargs)) is not None:
        raise ConfigurationError(f"a redis client's TLS option is wrong: {missing}")
    service = getattr(pool, "service_name", None)
    if service is not None:  # a Sentinel-managed master: the address changes on failover
        return ServerSpec(
            f"sentinel://{service}",
            ("sentinel", str(service)),
            pool.connection_class,
            kwargs,
            pool,
        )
    scheme = (
        "unix"
        if "path" in kwargs
        else "rediss"
        if "ssl" in pool.connection_class.__name__.lower()
        else "redis"
    )
    return _spec(scheme, pool.connection_class, kwargs)


def _spec(scheme: str, connection_class: type[Any], kwargs: dict[str, Any]) -> ServerSpec:
    db = int(kwargs.get("db") or 0)
    suffix = f"/{db}" if db else ""
    user = f"{kwargs['username']}@" if kwargs.get("username") else ""
    if scheme == "unix":
        path = str(kwargs["path"])
        suffix = f"?db={db}" if db else ""  # a path component would read as part of the path
        return ServerSpec(f"unix://{user}{path}{suffix}", ("unix", path), connection_class, kwargs)
    host = str(kwargs.get("host") or "localhost")
    port = int(kwargs.get("port") or 6379)
    shown = f"[{host}]" if ":" in host else host
    label = f"{scheme}://{user}{shown}:{port}{suffix}"
    return ServerSpec(label, ("tcp", host.lower(), str(port)), connection_class, kwargs)
