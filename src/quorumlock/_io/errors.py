"""The one place where redis-py's exceptions are translated.

Every exception met while talking to one server becomes a :class:`Reply` and a short
detail for that server's :class:`NodeOutcome`; nothing from ``redis.exceptions`` escapes.
"""

from __future__ import annotations

import re
import socket
import ssl

from redis import exceptions as rx

from quorumlock._algorithm.outcomes import Reply
from quorumlock._algorithm.scripts import SCRIPTS

__all__ = ["translate"]

# Errors that a retry cannot fix: the server is reachable but will never grant us a lock
# as configured (wrong credentials, a read-only replica, an ACL without our commands,
# a key of another type under the lock name, a TLS certificate we do not trust).
_FATAL: tuple[type[BaseException], ...] = (
    rx.AuthenticationError,
    rx.AuthenticationWrongNumberOfArgsError,
    rx.AuthorizationError,
    rx.ReadOnlyError,
    rx.NoPermissionError,
    ssl.SSLCertVerificationError,
)
_FATAL_PREFIXES = ("WRONGTYPE", "NOPERM", "READONLY", "NOAUTH", "WRONGPASS", "ERR unknown command")


def translate(exc: BaseException) -> tuple[Reply, str]:
    """Classify an exception raised while talking to one server.

    ``TIMEOUT`` for a reply that did not come in time, ``FATAL`` for errors no retry can
    fix, ``ERROR`` for everything else (refused or reset connections, a server loading
    its dataset, a cluster slot moving). The detail never contains credentials: redis-py
    and the OS name only the host and port.
    """
    if isinstance(exc, rx.TimeoutError | socket.timeout):
        return Reply.TIMEOUT, "no reply in time"
    tls = _tls_refusal(exc)
    if tls is not None:
        return Reply.FATAL, tls
    detail = _describe(exc)
    if isinstance(exc, rx.AskError):  # redis-py keeps only "<slot> <host:port>"
        detail = f"{'MOVED' if isinstance(exc, rx.MovedError) else 'ASK'} {detail}"
    if isinstance(exc, _FATAL) or _inner(detail).startswith(_FATAL_PREFIXES):
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
    error, raised by the handshake), or the server refuses ours or its absence (an alert,
    read with the first reply, since a TLS 1.3 handshake ends on the client's side before
    the server has checked the client's certificate). Neither is fixed by retrying.
    """
    error = exc if isinstance(exc, ssl.SSLError) else exc.__cause__ or exc.__context__
    if isinstance(error, ssl.SSLCertVerificationError):
        message = getattr(error, "verify_message", None) or error.strerror or str(error)
        return f"TLS: the server's certificate is not trusted ({message})"
    if isinstance(error, ssl.SSLError):
        reason = str(getattr(error, "reason", None) or "")
        if reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED":
            return "TLS: the server requires a client certificate (ssl_certfile, ssl_keyfile)"
        if "CERTIFICATE" in reason or "UNKNOWN_CA" in reason:
            text = reason.lower().replace("_", " ")
            return f"TLS: the server refused our client certificate ({text})"
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())  # one line, whatever the server or OS said
