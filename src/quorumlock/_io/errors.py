"""The one place where redis-py's exceptions are translated.

Every exception met while talking to one server becomes a :class:`Reply` and a short
detail for that server's :class:`NodeOutcome`; nothing from ``redis.exceptions`` escapes.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl

from redis import exceptions as rx
from redis.sentinel import MasterNotFoundError

from quorumlock._algorithm.outcomes import (
    CLUSTER_NODE_AS_SERVER,
    MARKER_OF_ANOTHER_TYPE,
    WRONG_TYPE,
    Reply,
)
from quorumlock._algorithm.scripts import SCRIPTS

__all__ = ["never_show", "scheme_mismatch", "translate", "wrong_type"]

# Errors that a retry cannot fix: the server is reachable but will never grant us a lock
# as configured (wrong credentials, a read-only replica, an ACL without our commands,
# a key of another type under the lock name, a TLS certificate we do not trust, a
# server in protected mode, a client name with a space; a database number beyond the
# server's: _NO_DATABASE).
_FATAL: tuple[type[BaseException], ...] = (
    rx.AuthenticationError,
    rx.AuthenticationWrongNumberOfArgsError,
    rx.AuthorizationError,
    rx.ReadOnlyError,
    rx.NoPermissionError,
    ssl.SSLCertVerificationError,
)
_WRONGTYPE = "WRONGTYPE"
_FATAL_PREFIXES = (
    "NOPERM",
    "READONLY",
    "NOAUTH",
    "WRONGPASS",
    "DENIED",
    # CLIENT SETNAME of a new connection (redis-py drops the "ERR ")
    "Client names cannot contain",
    "ERR Client names cannot contain",
)
# redis-py drops the "ERR " of a generic error. A command renamed or disabled
# (rename-command) is missing for good: quorumlock cannot lock on that server.
_UNKNOWN_COMMAND = re.compile(r"^(?:ERR )?unknown command [`'](\w+)[`']", re.IGNORECASE)
# A server with a password answers NOAUTH to a client that gave none: to redis-py's HELLO
# (RESP3) with a long text about HELLO's own AUTH option, to any other command (RESP2)
# with "Authentication required." redis-py drops the "NOAUTH ".
_NOAUTH = ("HELLO must be called with the client already authenticated", "Authentication required")
# SELECT of a database the server does not have (a URL's /99 with the default 16), at
# every new connection: no retry creates it.
_NO_DATABASE = ("DB index is out of range", "ERR DB index is out of range")
# Servers echo the first arguments of a command they do not know; proxies may echo more.
# The arguments are ours (the key, the token, the script): never worth showing.
_ECHO = re.compile(r",? *with args beginning with:.*$", re.IGNORECASE)
# A run of hex digits as long as a token's prefix that is kept: a whole token, or the part
# of one a server echoed (before it cut the echo short). Script digests are public.
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{16,}")
_DIGESTS = frozenset(script.sha for script in SCRIPTS.values())

# Passwords of the servers in use (see :func:`never_show`), scrubbed from every detail.
_SECRETS: set[str] = set()
# Shorter ones would blank out ordinary words of messages; they protect nothing anyway.
_MIN_SECRET = 4


def never_show(secret: object) -> None:
    """Scrub ``secret`` (a password) from every server error detail from now on."""
    if isinstance(secret, str) and len(secret) >= _MIN_SECRET:
        _SECRETS.add(secret)


class SentinelAsServer(rx.ResponseError):
    """A server listed as one of the N is a Sentinel (its ``INFO`` says so), which runs no
    lock command: its master is what the list should name."""

    def __init__(self) -> None:
        super().__init__(
            "this is a Sentinel, not a Redis or Valkey server: list the master it watches, "
            "as Sentinel([...]).master_for(NAME) (see docs/deployment.md, Sentinel)"
        )


class MarkerOfAnotherType(rx.ResponseError):
    """The server's key ``quorumlock:incarnation`` is not a hash: every lock with the
    restart quarantine or fencing fails there, for good (the scripts read it first), and
    not for the lock's key, which the server's WRONGTYPE reply would suggest."""

    def __init__(self) -> None:
        super().__init__(MARKER_OF_ANOTHER_TYPE)


def wrong_type(reply: object) -> bool:
    """Whether ``reply`` (a command's reply, or the error it raised) is the server's
    WRONGTYPE: the key the command read holds another kind of value."""
    return isinstance(reply, rx.ResponseError) and str(reply).startswith(_WRONGTYPE)


def translate(exc: BaseException) -> tuple[Reply, str]:
    """Classify an exception raised while talking to one server.

    ``TIMEOUT`` for a reply that did not come in time, ``FATAL`` for errors no retry can
    fix, ``ERROR`` for everything else (refused or reset connections, a server loading
    its dataset, a cluster slot moving). The detail never contains a password or a token:
    arguments a server echoes are cut, and what looks like a token or is a known
    password is scrubbed (every outcome, message, log line and event comes from here).
    """
    if isinstance(exc, rx.TimeoutError | socket.timeout):
        return Reply.TIMEOUT, scheme_mismatch(exc) or "no reply in time"
    tls = _tls_refusal(exc)
    if tls is not None:
        return Reply.FATAL, tls
    if (mismatch := scheme_mismatch(exc)) is not None:
        return Reply.ERROR, mismatch
    if isinstance(exc, SentinelAsServer | MarkerOfAnotherType):
        return Reply.FATAL, str(exc)
    detail = _scrub(_describe(exc))
    if isinstance(exc, MasterNotFoundError):
        # redis-py appends every sentinel client's repr and error: a thousand characters
        # in every outcome, exception and log line.
        head, tried, _ = detail.partition(" : ")
        why = "no sentinel could be reached" if tried else "the sentinels know no such master"
        return Reply.ERROR, f"{head}: {why} (a retry may find one)"
    if isinstance(exc, rx.AuthenticationError) and detail.startswith(_NOAUTH):
        return Reply.FATAL, "the server requires a password, and none was given"
    if (unknown := _UNKNOWN_COMMAND.match(detail)) is not None:
        return Reply.FATAL, (
            f"unknown command {unknown.group(1)!r}: renamed or disabled on this server "
            "(quorumlock needs EVAL and EVALSHA; see docs/deployment.md)"
        )
    if detail.startswith(_NO_DATABASE):
        return Reply.FATAL, (
            f"the database the URL selects does not exist on this server ({detail}; "
            "the server's 'databases' setting says how many there are)"
        )
    if isinstance(exc, rx.ClusterCrossSlotError):
        # Keys that the scripts declare together are always in one slot of a cluster
        # instance: this is a cluster node listed as a plain server, for good.
        return Reply.FATAL, f"{detail}: {CLUSTER_NODE_AS_SERVER}"
    if isinstance(exc, rx.AskError):  # redis-py keeps only "<slot> <host:port>"
        detail = f"{'MOVED' if isinstance(exc, rx.MovedError) else 'ASK'} {detail}"
    inner = _inner(detail)
    if inner.startswith(_WRONGTYPE):
        return Reply.FATAL, WRONG_TYPE
    if isinstance(exc, _FATAL) or inner.startswith(_FATAL_PREFIXES):
        return Reply.FATAL, detail
    if _ACL_IN_SCRIPT.search(detail):
        return Reply.FATAL, _name_the_call(detail)
    return Reply.ERROR, detail


# Redis before 7.0 reports an error of a command a script called as "Error running
# script (call to f_<sha>): @user_script:17: @user_script: 17: -READONLY You can't ...".
_SCRIPT_ERROR = re.compile(r"^Error running script .*@user_script: ?\d+: -?(.*)$")


def _inner(detail: str) -> str:
    """The error of the command itself, when a script's call failed (Redis < 7.0)."""
    match = _SCRIPT_ERROR.match(detail)
    return detail if match is None else match.group(1)


# A command a script calls that the user's ACL refuses: Valkey and Redis 7 say "ACL
# failure in script" and name the command, Redis 6.2 says "The user executing the script
# can't run this command" and gives only the script's digest and line.
_ACL_IN_SCRIPT = re.compile(r"ACL failure in script|user executing the script can't")
_WHERE = re.compile(r"f_([0-9a-f]{40})\).*@user_script:(\d+)")
_CALL = re.compile(r"redis\.call\(\"(\w+)\"")


def _name_the_call(detail: str) -> str:
    """``detail``, with the command the script called on that line when the server did
    not name it (one of quorumlock's scripts, found by its digest)."""
    where = _WHERE.search(detail)
    if where is None or "executing the script can't" not in detail:
        return detail
    script = next((x for x in SCRIPTS.values() if x.sha == where.group(1)), None)
    if script is None:
        return detail
    lines = script.source.splitlines()
    number = int(where.group(2))
    call = _CALL.search(lines[number - 1]) if 0 < number <= len(lines) else None
    if call is None:
        return detail
    return f"{detail} (line {number} of quorumlock's {script.name} script: {call.group(1)})"


def _tls_refusal(exc: BaseException) -> str | None:
    """The detail of a TLS handshake that failed over certificates, else None.

    Either side may refuse: we do not trust the server's certificate (a verification
    error, raised by the handshake), or the server refuses ours or its absence. Over
    TLS 1.2 the server's alert ends the handshake (a bare "handshake failure" when we
    showed no certificate); over TLS 1.3 the handshake ends on the client's side before
    the server has checked our certificate, so the alert comes with the first reply, or,
    when the server has already closed, as an unexpected EOF under the first command
    redis-py sends on a new connection. Neither is fixed by retrying.
    """
    error = exc if isinstance(exc, ssl.SSLError) else exc.__cause__ or exc.__context__
    if isinstance(error, ssl.SSLCertVerificationError):
        message = getattr(error, "verify_message", None) or error.strerror or str(error)
        return f"TLS: the server's certificate is not trusted ({message})"
    if isinstance(error, ssl.SSLEOFError) and _while_connecting(exc):
        if _tls_with_certificate(_setting_up(exc)):
            return (
                "TLS: the server refused our client certificate (it closed the "
                "connection right after the TLS handshake)"
            )
        return f"{_NEEDS_CERTIFICATE} (it closed the connection right after the TLS handshake)"
    if _reset(exc):
        # TLS 1.3 again: the server may answer our first command by resetting the
        # connection instead of with its alert (it closed with that command unread), as
        # it may end it with an EOF (above). Only a TLS connection set up right then
        # counts: any other reset is a server going away.
        connection = _setting_up(exc)
        if _tls_without_certificate(connection):
            return f"{_NEEDS_CERTIFICATE} (it reset the connection right after the TLS handshake)"
        if _tls_with_certificate(connection):
            return (
                "TLS: the server refused our client certificate (it reset the connection "
                "right after the TLS handshake)"
            )
    if isinstance(error, ssl.SSLError):
        reason = str(getattr(error, "reason", None) or "")
        if reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED":
            return _NEEDS_CERTIFICATE
        if reason == "SSLV3_ALERT_HANDSHAKE_FAILURE":
            return (
                f"{_NEEDS_CERTIFICATE} (a TLS 1.2 handshake failure alert; or no cipher in common)"
            )
        if "CERTIFICATE" in reason or "UNKNOWN_CA" in reason:
            text = reason.lower().replace("_", " ")
            return f"TLS: the server refused our client certificate ({text})"
    return None


_NEEDS_CERTIFICATE = "TLS: the server requires a client certificate (ssl_certfile, ssl_keyfile)"


def scheme_mismatch(exc: BaseException) -> str | None:
    """The detail of a new connection's failure that the URL's scheme may explain (TLS
    to a plain server, or plain text to a TLS one), else None.

    A plain Redis or Valkey server never answers a TLS handshake (it waits for the end
    of a command line): ``rediss://`` to one times out in the handshake, after the TCP
    connect. A TLS server ends, without a reply, a connection whose first bytes are not
    TLS: ``redis://`` to one is closed or reset under the first command. A frozen
    server, or one going away, may do the same: the outcome stays one a retry may fix.
    """
    if isinstance(exc, rx.TimeoutError | socket.timeout):
        if _handshake_unanswered(exc) and _tls_certificate(_setting_up(exc)) is not None:
            return _NOT_TLS
        return None
    closed = isinstance(exc, rx.ConnectionError) and str(exc) == _CLOSED
    if (closed or _reset(exc)) and _plain_tcp(_setting_up(exc)):
        return _TLS_ONLY
    return None


_NOT_TLS = (
    "TLS: the server did not answer the handshake (is it TLS-enabled? use redis:// for "
    "a plain server)"
)
_TLS_ONLY = (
    "the server ended the connection at our first command, without a reply (going "
    "away, or a TLS port? use rediss:// for TLS)"
)
# redis-py's words for a connection its server closed (sync and asyncio).
_CLOSED = "Connection closed by server."
# Where asyncio waits for the TLS handshake, once the TCP connect is done.
_HANDSHAKE_WAIT = "_create_connection_transport"


def _handshake_unanswered(exc: BaseException) -> bool:
    """``exc``, a timeout, ended a wait for the server's side of the TLS handshake: the
    ssl module's own timeout (sync), or a connect cancelled in that wait (asyncio)."""
    seen: BaseException | None = exc
    for _ in range(5):  # redis-py wraps it once or twice
        if seen is None:
            return False
        if isinstance(seen, TimeoutError) and "handshake operation timed out" in str(seen):
            return True
        if isinstance(seen, asyncio.CancelledError) and _innermost(seen) == _HANDSHAKE_WAIT:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _innermost(exc: BaseException) -> str:
    """The name of the function ``exc`` was raised in."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_name


# redis-py's methods that set up a new connection (sync and asyncio have the same names).
_SETUP = frozenset({"on_connect", "on_connect_check_health", "connect_check_health"})


def _while_connecting(exc: BaseException) -> bool:
    """``exc`` was raised while redis-py set up a new connection (not on one in use: a
    server that dies mid-session also ends TLS with an EOF, and that is transient)."""
    return _setting_up(exc) is not None


def _setting_up(exc: BaseException) -> object | None:
    """The redis-py connection that was being set up when ``exc`` was raised, else None."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name in _SETUP:
            connection: object = tb.tb_frame.f_locals.get("self", _UNKNOWN)
            return connection
        tb = tb.tb_next
    return None


_UNKNOWN = object()


def _reset(exc: BaseException) -> bool:
    """``exc`` is, or was caused by, a connection reset by the peer."""
    seen: BaseException | None = exc
    for _ in range(5):  # redis-py wraps the OS error once or twice
        if seen is None:
            return False
        if isinstance(seen, ConnectionResetError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _transport(connection: object | None) -> str | None:
    """What ``connection``, a redis-py connection (sync or asyncio: their classes share
    their names), runs over: "tls", "unix" or "tcp"; None when unknown."""
    if connection is None or connection is _UNKNOWN:
        return None
    name = type(connection).__name__
    return "tls" if "SSL" in name else "unix" if "Unix" in name else "tcp"


def _tls_certificate(connection: object | None) -> bool | None:
    """Whether ``connection``, a redis-py TLS connection (sync or asyncio), has a client
    certificate configured; None when it is not one (or unknown)."""
    if _transport(connection) != "tls":
        return None
    certfile = getattr(connection, "certfile", None)
    if certfile is None:
        context = getattr(connection, "ssl_context", None)
        certfile = getattr(context, "certfile", None)
    return bool(certfile)


def _plain_tcp(connection: object | None) -> bool:
    """``connection`` is a redis-py connection over TCP without TLS (sync or asyncio)."""
    return _transport(connection) == "tcp"


def _tls_without_certificate(connection: object | None) -> bool:
    return _tls_certificate(connection) is False


def _tls_with_certificate(connection: object | None) -> bool:
    return _tls_certificate(connection) is True


def _scrub(detail: str) -> str:
    """``detail`` without echoed arguments, tokens or known passwords."""
    detail = _ECHO.sub("", detail)
    detail = _HEX_RUN.sub(lambda m: m.group() if m.group() in _DIGESTS else "<token>", detail)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in detail:
            detail = detail.replace(secret, "***")
    return detail


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())  # one line, whatever the server or OS said
