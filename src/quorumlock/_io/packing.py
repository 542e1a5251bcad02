"""Commands packed once per round, by hiredis.

A round sends one command to every server. When the command names each server's process
(the acquire script with the restart quarantine on), only its last two arguments differ
from server to server: the shared part is packed once and each server's session suffix
is packed once per session and cached, instead of packing the whole command N times.
"""

from __future__ import annotations

import functools

import hiredis

from quorumlock._algorithm.flows import Fanout, Session
from quorumlock._algorithm.wire import command_args, member_args, session_args, shared_args

__all__ = ["RoundPacker", "pack"]


def pack(args: tuple[str | int | bytes, ...]) -> bytes:
    """RESP bytes of one command: ``*<n>\\r\\n`` then each argument as a bulk string.

    Numbers are turned into their decimal text here, not by hiredis: its packer crashes
    the interpreter (SIGSEGV) when a signal handler raises (Ctrl-C's KeyboardInterrupt, a
    SIGTERM handler's SystemExit) while it converts one.
    """
    text = tuple(b"%d" % arg if type(arg) is int else arg for arg in args)
    packed: bytes = hiredis.pack_command(text)  # type: ignore[arg-type]  # stub is too narrow
    return packed


@functools.lru_cache(maxsize=256)
def _session_suffix(session: Session) -> bytes:
    # The session's arguments as bulk strings, without the array header of their own.
    return pack(session_args(session)).partition(b"\r\n")[2]


class RoundPacker:
    """The packed command of one :class:`Fanout` step, for any server's session."""

    __slots__ = ("_body", "_header", "_packed", "_tail")

    def __init__(self, step: Fanout) -> None:
        self._packed: bytes | None = None
        if not step.per_session:
            self._packed = pack(command_args(step))
            return
        shared = shared_args(step)
        # a fair or queued acquire names the caller's entry after the session's arguments
        tail = member_args(step)
        self._body = pack(shared).partition(b"\r\n")[2]
        self._tail = pack(tail).partition(b"\r\n")[2] if tail else b""
        self._header = b"*%d\r\n" % (len(shared) + 2 + len(tail))

    @property
    def shared(self) -> bytes | None:
        """The bytes every server gets, or None when they depend on its session."""
        return self._packed

    def packed(self, session: Session | None) -> bytes:
        """The bytes to send to a server whose connection has ``session``.

        Raises ``ValueError`` when the command needs a session and there is none.
        """
        if self._packed is not None:
            return self._packed
        if session is None:
            raise ValueError("the acquire script needs the connection's session")
        return self._header + self._body + _session_suffix(session) + self._tail
