"""The one place where redis-py's exceptions are translated (STYLE rule 4).

Every exception met while talking to one server becomes a :class:`Reply` and a short
detail for that server's :class:`NodeOutcome`; nothing from ``redis.exceptions`` escapes.
"""

from __future__ import annotations

import socket
import ssl

from redis import exceptions as rx

from quorumlock._algorithm.outcomes import Reply

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
    detail = _describe(exc)
    if isinstance(exc, rx.AskError):  # redis-py keeps only "<slot> <host:port>"
        detail = f"{'MOVED' if isinstance(exc, rx.MovedError) else 'ASK'} {detail}"
    if isinstance(exc, _FATAL) or detail.startswith(_FATAL_PREFIXES):
        return Reply.FATAL, detail
    # A connect error wrapping a certificate failure is as final as the bare one.
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, ssl.SSLCertVerificationError):
        return Reply.FATAL, detail
    return Reply.ERROR, detail


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())  # one line, whatever the server or OS said
