"""Server arguments: URLs or redis-py client objects, validated without touching the network.

A :class:`ServerSpec` knows how to open a new dedicated connection to one server, a label
to name it in errors and logs (never with a password), and an identity used to refuse the
same server listed twice (two databases of one server are not independent instances).

A ``RedisCluster`` client is one instance too: its spec carries a :class:`ClusterSeed`
(the startup nodes, the slot map the client already knows, its address remapping), and
:meth:`ServerSpec.at` gives the spec of each master, with the client's credentials and
TLS options. quorumlock still opens its own connections (``quorumlock._io.cluster``).
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, cast
from urllib.parse import parse_qs, unquote, urlsplit

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis import connection as _connection
from redis.asyncio import connection as _aconnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import never_show

__all__ = [
    "FRESH",
    "Address",
    "AsyncRedisConnection",
    "AsyncServerArg",
    "ClusterSeed",
    "RedisConnection",
    "ServerArg",
    "ServerSpec",
    "host_port",
    "mask_url",
    "parse_servers",
    "read_reply",
]

Flavour = Literal["sync", "async"]


class RedisConnection(Protocol):
    """The part of redis-py's (untyped) ``Connection`` that quorumlock uses."""

    pid: int

    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def pack_command(self, *args: str | int) -> list[bytes]: ...
    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...
    def read_response(self, *, timeout: float = ...) -> object: ...


# redis-py 8 bounds one read by a timeout of its own (``read_response(timeout=)``); before
# 8, a read waits as long as its socket's timeout, so :func:`read_reply` sets that instead.
_READ_TAKES_TIMEOUT: Final = (
    "timeout" in inspect.signature(_connection.AbstractConnection.read_response).parameters
)


def read_reply(conn: RedisConnection, timeout: float) -> object:
    """One reply from ``conn``, as ``read_response`` gives it, within ``timeout`` seconds
    (else redis-py's ``TimeoutError``, the connection closed), with every redis-py the
    package admits."""
    if _READ_TAKES_TIMEOUT:
        return conn.read_response(timeout=timeout)
    sock = getattr(conn, "_sock", None)
    if sock is None:  # not connected: read_response reports it
        return conn.read_response()
    before = sock.gettimeout()
    sock.settimeout(timeout)
    try:
        return conn.read_response()
    finally:
        kept = getattr(conn, "_sock", None) is sock  # (a failed read closes the connection)
        if kept:
            sock.settimeout(before)


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
_QUERY_PARSERS = cast(Mapping[str, Callable[[str], object]], _connection.URL_QUERY_ARGUMENT_PARSERS)

# A URL's sync connection class -> its asyncio twin.
_ASYNC_TWIN: dict[type[Any], type[Any]] = {
    _connection.Connection: _aconnection.Connection,
    _connection.SSLConnection: _aconnection.SSLConnection,
    _connection.UnixDomainSocketConnection: _aconnection.UnixDomainSocketConnection,
}

#: What ``Redlock`` accepts for one server.
ServerArg = str | redis.Redis | redis.cluster.RedisCluster
#: What ``quorumlock.asyncio.Redlock`` accepts for one server.
AsyncServerArg = str | redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster

_ONE_SERVER = (
    str,
    redis.Redis,
    redis.asyncio.Redis,
    redis.cluster.RedisCluster,
    redis.asyncio.cluster.RedisCluster,
)

#: A node's address: (host, port).
Address = tuple[str, int]
Remap = Callable[[Address], Address]

#: How long a connection may have been idle and still be used without a look at
#: whether its server closed it (the fan-outs look before a round, so that a restarted
#: server costs no failed round): less than a server takes to be killed, started again
#: and listening. One that died meanwhile fails the round whether it is found out
#: before or after the command goes.
FRESH = 0.002

# Connection options of a cluster client's nodes that belong to that client's object
# (callbacks bound to it, its shared registries) or to one node: never copied.
_CLUSTER_OWN = frozenset(
    {
        "host",
        "port",
        "redis_connect_func",
        "oss_cluster_maint_notifications_handler",
        "himport_registry",
        "orig_host_address",
        "orig_socket_timeout",
        "orig_socket_connect_timeout",
    }
)

try:  # redis-py 7 and later
    from redis.maint_notifications import MaintNotificationsConfig
except ImportError:  # (no such notices, nor their handshake)
    _NO_MAINTENANCE_NOTICES: dict[str, Any] = {}
else:
    # A pool's connections ask a RESP3 server for redis-py's maintenance notices (a
    # managed service's) with `CLIENT MAINT_NOTIFICATIONS`, one command more than the ACL
    # rule of docs/deployment.md allows: plain commands need no such notices. (The
    # connections of a round are made without a pool, and never ask.)
    _NO_MAINTENANCE_NOTICES = {"maint_notifications_config": MaintNotificationsConfig(False)}

_SCHEMES = ("redis", "rediss", "unix")
#: valkey-py's names of the first two, taken as they are.
_VALKEY_SCHEMES = {"valkey": "redis", "valkeys": "rediss"}
# Where a URL starts in a text: a scheme at the start or after a space, quote, bracket,
# comma or "=" (a password may hold "://" itself, never a space, which is not allowed).
_URL_START = re.compile(r"(?<![^\s'\"(\[,=])[A-Za-z][A-Za-z0-9+.-]*://")
# redis-py also takes the password (and a TLS key's passphrase) as query options.
# A password in the query is masked with all that follows it in the URL: an ``&`` the
# user forgot to percent-encode would otherwise end the mask inside the password.
_QUERY_PASSWORD = re.compile(r"([?&](?:ssl_)?password=)[^\s'\"]*", re.IGNORECASE)
# Where a URL in running text ends.
_SPACE = re.compile(r"\s")
# A user name shown as it is: one with a URL delimiter is more likely a mistyped password.
_PLAIN_USER = re.compile(r"[^:/?#@\[\]\s]*")
# TLS options that name files: checked when the server is given, not at the first connect.
_TLS_FILES = ("ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile")


def mask_url(text: str, *, whole: bool = False) -> str:
    """``text`` with the password of every URL in it replaced by ``***``.

    The userinfo of a URL runs to the *last* ``@`` before the next URL (a password may
    hold ``@``, ``/``, ``?``, ``#`` or ``:`` that the user forgot to percent-encode) and
    before the next space, where a URL in running text ends (an ``@`` in the words after
    it is not part of it); all of it is masked but a user name free of delimiters; so
    is the value of a ``password=`` or ``ssl_password=`` query option (which may hold an
    ``@`` too), up to the next space or quote. When ``text`` is one URL alone
    (``whole``), a space is part of it too: the userinfo runs to its last ``@``, a
    query password to its end, and a ``scheme://`` further on may be part of a
    password. Masking too much is safe.
    """
    urls = list(_URL_START.finditer(text))
    if whole:  # one URL: a "scheme://" further on is part of its password
        urls = urls[:1] if urls and urls[0].start() == 0 else []
    if not urls:
        return _masked_rest(text, whole) if whole else text
    pieces = [text[: urls[0].start()]]
    for url, after in zip(urls, [*urls[1:], None], strict=True):
        end = len(text) if after is None else after.start()
        pieces.append(url.group() + _masked_rest(text[url.end() : end], whole))
    return "".join(pieces)


def _masked_rest(rest: str, whole: bool) -> str:
    """What follows a URL's ``scheme://``, its passwords masked (see :func:`mask_url`)."""
    hidden = [False] * len(rest)
    # One URL alone may hold an unencoded space in its password; in running text a
    # space ends the URL, and an '@' of the words after it is not the userinfo's end.
    space = None if whole else _SPACE.search(rest)
    at = rest.rfind("@", 0, len(rest) if space is None else space.start())
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        if not _PLAIN_USER.fullmatch(user):
            hidden[:at] = [True] * at
        elif colon:
            hidden[len(user) + 1 : at] = [True] * (at - len(user) - 1)
    for query in _QUERY_PASSWORD.finditer(rest):
        end = len(rest) if whole else query.end()
        hidden[query.end(1) : end] = [True] * (end - query.end(1))
    return "".join(
        "***" if hide else "".join(char for char, _ in run)
        for hide, run in itertools.groupby(zip(rest, hidden, strict=True), key=lambda c: c[1])
    )


def _missing_tls_file(kwargs: Mapping[str, Any]) -> str | None:
    """``"ssl_ca_certs '/x' does not exist"`` for the first TLS file option that names
    nothing, else None."""
    for option in _TLS_FILES:
        path = kwargs.get(option)
        if path is not None and not os.path.exists(path):
            return f"{option} {str(path)!r} does not exist"
    return None


@dataclass(frozen=True, slots=True)
class ClusterSeed:
    """What a cluster instance starts from: where to ask for the slot map, the map the
    user's client already had (``(first slot, last slot, master)`` ranges, possibly
    none), and the client's address remapping (None: addresses as the cluster gives)."""

    startup: tuple[Address, ...]
    ranges: tuple[tuple[int, int, Address], ...] = ()
    remap: Remap | None = None


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one server. ``kwargs`` may hold credentials: never print them.

    ``cluster`` is set for a cluster instance: then ``kwargs`` hold no address, and
    :meth:`at` gives the spec of one of its nodes.
    """

    label: str
    identity: tuple[str, ...]
    connection_class: type[Any]  # redis-py's, sync or asyncio as the flavour asked
    kwargs: Mapping[str, Any] = field(repr=False)
    cluster: ClusterSeed | None = None
    # The client's connection pool, kept alive: redis-py's asyncio Sentinel pool gives
    # its connections only a weak reference to itself (to ask for the master's address).
    pool: object = field(default=None, repr=False, compare=False)

    def at(self, address: Address) -> ServerSpec:
        """The spec of the cluster node at ``address``: same label, options, credentials."""
        host, port = address
        kwargs = {**self.kwargs, "host": host, "port": port}
        return ServerSpec(
            self.label, ("tcp", host.lower(), str(port)), self.connection_class, kwargs
        )

    def client(self, *, timeout: float) -> redis.Redis:
        """A redis-py client with a connection pool of its own, for plain commands (the
        command line tool's, ``provision()``'s); ``timeout`` bounds the connect and every
        reply."""
        # (A client's kwargs may carry its own maintenance-notices option: replaced.)
        kwargs = {
            **self.kwargs,
            **_NO_MAINTENANCE_NOTICES,
            "socket_timeout": timeout,
            "socket_connect_timeout": timeout,
        }
        pool = redis.ConnectionPool(connection_class=self.connection_class, **kwargs)
        return redis.Redis(connection_pool=pool)

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

    Accepts one URL or client (``Redis``, or ``RedisCluster``: a whole cluster is one
    instance), or a sequence of them. Raises ``TypeError`` for other types (a sync
    client given to the asyncio API, or the reverse) and :class:`ConfigurationError` for
    an empty list, a malformed URL, or a server listed twice.
    """
    if isinstance(servers, _ONE_SERVER):
        items: Sequence[object] = [servers]
    elif isinstance(servers, Sequence):
        items = servers
    else:
        raise TypeError(
            "servers must be a URL, a redis.Redis or RedisCluster client, or a list of "
            f"them, not {type(servers).__name__}"
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
    if flavour == "sync":
        if isinstance(server, redis.Redis):
            return _from_pool(server.connection_pool)
        if isinstance(server, redis.cluster.RedisCluster):
            return _from_cluster(server)
        expected = "redis.Redis or redis.cluster.RedisCluster"
        wrong_api = isinstance(server, redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster)
        hint = " (asyncio clients go to quorumlock.asyncio.Redlock)" if wrong_api else ""
    else:
        if isinstance(server, redis.asyncio.Redis):
            return _from_pool(server.connection_pool)
        if isinstance(server, redis.asyncio.cluster.RedisCluster):
            return _from_async_cluster(server)
        expected = "redis.asyncio.Redis or redis.asyncio.cluster.RedisCluster"
        wrong_api = isinstance(server, redis.Redis | redis.cluster.RedisCluster)
        hint = " (sync clients go to quorumlock.Redlock)" if wrong_api else ""
    if type(server).__module__.partition(".")[0] == "valkey":
        hint = " (valkey-py's clients are not taken: give the server's URL)"
    raise TypeError(
        f"a server must be a URL or a {expected} client, not {type(server).__name__}{hint}"
    )


# Why urllib refused a URL, in our words: its messages quote the part it could not
# read, which is the password when one holds an unencoded delimiter.
_ENCODE_HINT = "percent-encode any / ? # @ : in the user name or password"


def _from_url(url: str) -> ServerSpec:
    url = url.strip()
    masked = mask_url(url, whole=True)
    if not url:
        raise ConfigurationError("a server URL must not be empty")

    def malformed(why: str) -> ConfigurationError:
        return ConfigurationError(f"malformed server URL {masked!r}: {why}")

    try:
        parts = urlsplit(url)
    except ValueError:  # only an unbalanced [ ] of an IPv6 host
        raise malformed(f"the host is not a valid [IPv6] address ({_ENCODE_HINT})") from None
    if parts.scheme in _VALKEY_SCHEMES:
        scheme = _VALKEY_SCHEMES[parts.scheme]
        url = scheme + url[len(parts.scheme) :]
        parts = parts._replace(scheme=scheme)
    if parts.scheme not in _SCHEMES:
        raise malformed(
            "the scheme must be redis://, rediss:// or unix:// (or valkey-py's valkey:// "
            "and valkeys://)"
        )
    # A scheme is case-insensitive (REDIS://), redis-py's parser is not: give it the
    # lower case that urllib already read.
    url = parts.scheme + url[len(parts.scheme) :]
    if "," in parts.netloc.rpartition("@")[2]:
        raise malformed(
            "a ',' in the host: one URL names one server (give Redlock a list of URLs; "
            "the command line takes them comma-separated, each with its scheme)"
        )
    if "#" in url:
        # A server URL has no fragment: a '#' is a password's, and whatever follows it
        # (the rest of the password, the real host) would be dropped, and what precedes
        # it read as the host, shown in every message about that server.
        raise malformed(f"a '#' ends the URL there ({_ENCODE_HINT})")
    try:
        port = parts.port
    except ValueError:
        raise malformed(f"the port must be a number in 1..65535 ({_ENCODE_HINT})") from None
    if port == 0:
        raise malformed("the port must be in 1..65535, not 0")
    if parts.scheme == "unix":
        if not parts.path:
            raise malformed("no socket path")
        host = parts.netloc.rpartition("@")[2]
        if host and host.lower() != "localhost":
            # redis-py would drop it: unix://run/redis.sock is the socket /redis.sock
            raise malformed(
                f"a unix:// URL has no host, and {host!r} is not part of the "
                "socket's path: write unix:///absolute/path.sock (three slashes)"
            )
    else:
        if not parts.hostname:
            raise malformed("no host")
        if parts.path not in ("", "/") and not re.fullmatch(r"/\d+", parts.path):
            raise malformed(f"the path must be a database number ({_ENCODE_HINT})")
    if any("@" in item.partition("=")[0] for item in parts.query.split("&")):
        # An '@' in the query, not in an option's value: the end of a user name or
        # password that holds a '?', whose tail urllib took for the host.
        raise malformed(f"an '@' after the host ({_ENCODE_HINT})")
    query = parse_qs(parts.query, keep_blank_values=True)
    secret_query = bool(_SECRET_OPTIONS & set(query))
    # redis-py reads the first of two values, and a ?db= over the path's: refused, as
    # which one is used is not what the URL says
    twice = sorted(name for name, values in query.items() if len(values) > 1)
    if twice:
        name = _QUERY_HINT_NAME if secret_query else _option_name(twice[0])
        raise malformed(f"query option {name} given twice")
    if re.fullmatch(r"/\d+", parts.path) and "db" in query:
        raise malformed(f"the database given twice: {parts.path} and ?db=")
    try:
        kwargs = _parse_url(url)
    except ValueError:
        raise malformed(f"a query option has an invalid value ({_bad_value(url)})") from None
    connection_class: type[Any] = kwargs.pop("connection_class", _connection.Connection)
    unknown = sorted(set(kwargs) - _options_of(connection_class))
    if unknown:
        tls_only = unknown[0].startswith("ssl_") and parts.scheme != "rediss"
        hint = " (a TLS option: use rediss://)" if tls_only else ""
        # In a query that holds a password, an unknown "option" may be the rest of that
        # password, cut at an unencoded &: its name would show part of the password.
        if secret_query:
            name = _QUERY_HINT_NAME
        elif unknown[0] in masked:
            name = _option_name(unknown[0])
        else:  # masked: the tail of a user name or password that holds a '?'
            name = f"(its name is not shown: {_ENCODE_HINT})"
        raise malformed(f"unknown query option {name}{hint}")
    try:  # catches bad values now, not at the first connect
        connection_class(**kwargs)
    except (TypeError, ValueError, redis.RedisError) as exc:
        # Value errors quote the value: scrub the secrets the URL holds first.
        raise malformed(_scrub(str(exc), url, kwargs)) from None
    if (missing := _missing_tls_file(kwargs)) is not None:
        raise malformed(missing)
    return _spec(parts.scheme, connection_class, kwargs)


def _options_of(connection_class: type[Any]) -> frozenset[str]:
    """The keyword arguments a redis-py connection class takes (its own and its bases')."""
    names: set[str] = set()
    for cls in connection_class.__mro__:
        init = cls.__dict__.get("__init__")
        if init is not None:
            params = inspect.signature(init).parameters.values()
            names.update(p.name for p in params if p.default is not p.empty)
    return frozenset(names)


#: The query options that hold a secret.
_SECRET_OPTIONS: Final = frozenset({"password", "ssl_password"})
#: What an unknown query option is called when the query holds a password.
_QUERY_HINT_NAME: Final = (
    "(its name is not shown: the query holds a password; percent-encode any & = in it)"
)


def _option_name(name: str) -> str:
    """``name`` quoted when it looks like an option's name; a name with a delimiter is
    more likely the tail of a password holding an unencoded ``?``: never shown."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name):
        return repr(name)
    return f"(its name is not shown: {_ENCODE_HINT})"


def _bad_value(url: str) -> str:
    """Which option of the URL's query redis-py could not read (named, value not shown)."""
    for name, values in parse_qs(urlsplit(url).query).items():
        parser = _QUERY_PARSERS.get(name)
        if parser is not None and values:
            try:
                parser(values[0])
            except (TypeError, ValueError):
                return f"option {_option_name(name)}"
    return _ENCODE_HINT


def _scrub(text: str, url: str, kwargs: Mapping[str, Any]) -> str:
    """``text`` without the URL's userinfo or any password option, and on one line."""
    secrets = [kwargs.get("password"), kwargs.get("ssl_password")]
    userinfo = urlsplit(url).netloc.rpartition("@")[0]
    secrets += [userinfo, unquote(userinfo), userinfo.partition(":")[2]]
    for secret in sorted((str(s) for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return " ".join(mask_url(text).split())


def host_port(host: object, port: object) -> str:
    """``host:port``, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _sentinel_addresses(pool: Any) -> list[str]:
    """``host:port`` of each sentinel a Sentinel master's pool asks, in its order."""
    found = []
    for sentinel in getattr(getattr(pool, "sentinel_manager", None), "sentinels", ()):
        kwargs = getattr(getattr(sentinel, "connection_pool", None), "connection_kwargs", {})
        host, port = kwargs.get("host"), kwargs.get("port")
        if host is not None:
            found.append(host_port(host, port))
    return found


def _from_pool(pool: Any) -> ServerSpec:
    kwargs = dict(pool.connection_kwargs)
    if (missing := _missing_tls_file(kwargs)) is not None:
        raise ConfigurationError(f"a redis client's TLS option is wrong: {missing}")
    _keep_secret(kwargs)
    service = getattr(pool, "service_name", None)
    if service is not None:  # a Sentinel-managed master: the address changes on failover
        # Named by its sentinels as well: two Sentinel deployments may both call their
        # master "mymaster" (the same master reached through two sets of sentinels is
        # caught by its run_id, as two URLs of one server are).
        sentinels = _sentinel_addresses(pool)
        return ServerSpec(
            f"sentinel://{','.join(sentinels)}/{service}" if sentinels else f"sentinel://{service}",
            ("sentinel", str(service), *sorted(sentinels)),
            pool.connection_class,
            kwargs,
            pool=pool,
        )
    scheme = (
        "unix"
        if "path" in kwargs
        else "rediss"
        if "ssl" in pool.connection_class.__name__.lower()
        else "redis"
    )
    return _spec(scheme, pool.connection_class, kwargs)


def _keep_secret(kwargs: Mapping[str, Any]) -> None:
    """A server echoing our AUTH (a proxy, a renamed command) must not print it."""
    for option in ("password", "ssl_password"):
        never_show(kwargs.get(option))


def _spec(scheme: str, connection_class: type[Any], kwargs: dict[str, Any]) -> ServerSpec:
    _keep_secret(kwargs)
    db = int(kwargs.get("db") or 0)
    suffix = f"/{db}" if db else ""
    user = f"{kwargs['username']}@" if kwargs.get("username") else ""
    if scheme == "unix":
        path = str(kwargs["path"])
        suffix = f"?db={db}" if db else ""  # a path component would read as part of the path
        return ServerSpec(f"unix://{user}{path}{suffix}", ("unix", path), connection_class, kwargs)
    host = str(kwargs.get("host") or "localhost")
    if kwargs.get("port") == 0:  # redis-py would try port 0; never read it as the default
        raise ConfigurationError(f"a server's port must be in 1..65535, not 0 (host {host!r})")
    port = int(kwargs.get("port") or 6379)
    shown = f"[{host}]" if ":" in host else host
    label = f"{scheme}://{user}{shown}:{port}{suffix}"
    return ServerSpec(label, ("tcp", host.lower(), str(port)), connection_class, kwargs)


def _from_cluster(client: redis.cluster.RedisCluster) -> ServerSpec:
    """A sync ``RedisCluster``: its nodes' connection options, startup nodes, slot map."""
    manager: Any = client.nodes_manager
    pools = [
        node.redis_connection.connection_pool
        for node in (*manager.nodes_cache.values(), *manager.startup_nodes.values())
        if node.redis_connection is not None
    ]
    if pools:
        connection_class: type[Any] = pools[0].connection_class
        kwargs = dict(pools[0].connection_kwargs)
    else:  # never initialised: the options it was given
        kwargs = dict(manager.connection_kwargs)
        ssl = kwargs.pop("ssl", False)
        connection_class = _connection.SSLConnection if ssl else _connection.Connection
    ranges = []
    for slot, nodes in sorted(manager.slots_cache.items()):
        if nodes:
            ranges.append((slot, slot, (str(nodes[0].host), int(nodes[0].port))))
    return _cluster_spec(manager, connection_class, kwargs, _merge(ranges))


def _from_async_cluster(client: redis.asyncio.cluster.RedisCluster) -> ServerSpec:
    """An asyncio ``RedisCluster`` (initialised or not): the same as a sync one."""
    manager: Any = client.nodes_manager
    node = next(iter(manager.startup_nodes.values()))
    ranges = []
    for slot, nodes in sorted(manager.slots_cache.items()):
        if nodes:
            ranges.append((slot, slot, (str(nodes[0].host), int(nodes[0].port))))
    return _cluster_spec(
        manager, node.connection_class, dict(node.connection_kwargs), _merge(ranges)
    )


def _merge(ranges: list[tuple[int, int, Address]]) -> tuple[tuple[int, int, Address], ...]:
    merged: list[tuple[int, int, Address]] = []
    for first, last, address in ranges:
        if merged and merged[-1][2] == address and merged[-1][1] + 1 == first:
            merged[-1] = (merged[-1][0], last, address)
        else:
            merged.append((first, last, address))
    return tuple(merged)


def _cluster_spec(
    manager: Any,
    connection_class: type[Any],
    kwargs: dict[str, Any],
    ranges: tuple[tuple[int, int, Address], ...],
) -> ServerSpec:
    _keep_secret(kwargs)
    startup = tuple((str(n.host), int(n.port)) for n in manager.startup_nodes.values())
    if not startup:
        raise ConfigurationError("the RedisCluster client has no startup node")
    options = {k: v for k, v in kwargs.items() if k not in _CLUSTER_OWN}
    tls = "ssl" in connection_class.__name__.lower()
    host, port = startup[0]
    user = f"{options['username']}@" if options.get("username") else ""
    shown = f"[{host}]" if ":" in host else host
    label = f"{'rediss' if tls else 'redis'}+cluster://{user}{shown}:{port}"
    seed = ClusterSeed(startup, ranges, manager.address_remap)
    # One identity for the whole cluster: its first startup node, so that the same
    # cluster (or that node's own URL) listed twice is refused.
    identity = ("tcp", host.lower(), str(port))
    return ServerSpec(label, identity, connection_class, options, seed)
