"""The exceptions quorumlock raises. No ``redis.exceptions.*`` ever escapes the public API.

::

    Exception
    └── QuorumLockError                 every error quorumlock raises on purpose
        ├── ConfigurationError          (also ValueError) bad input or set-up (see the class)
        ├── LockNotAcquired             (also TimeoutError) the lock was not acquired in time
        │   └── QuorumUnavailable       too few servers could be used to form a majority
        ├── LockLost                    a held lock could not be kept (extension failed)
        ├── LockNotHeld                 (also RuntimeError) release/extend/export of a lock not held
        ├── LockNotReentrant            (also RuntimeError) a second acquire of a name already held
        │   └── LockUpgradeRefused      a read-write lock's reader asked to write (no upgrade)
        ├── StaleFencingToken           a fenced resource refused a write from a superseded holder
        └── FenceError                  a fenced resource's server failed a write or a read

Errors of the Redis servers (refused commands, broken connections) never escape as
``redis.exceptions.*``: a lock operation reports them per server in ``outcomes``, a
:class:`quorumlock.RedisFence` raises :class:`FenceError`.

Wrong *types* (a name that is not a ``str``, a ttl that is not a number) raise the builtin
``TypeError``, also before any network call.

Every exception that concerns a lock carries ``name`` (the lock name) and ``outcomes``: what
each server answered in the last round (see :class:`quorumlock.NodeOutcome`). All of them
pickle whole (their class, a subclass's too, their fields and the notes added to them),
so they can cross process boundaries (multiprocessing, task queues), and each
can be rebuilt as ``type(exc)(*exc.args)``, as Celery's result backends rebuild a task's
exception with the JSON serializer: ``args`` holds the message and the fields that a
serializer can carry (``name``; ``token`` and ``highest``; ``resource``), not
``outcomes``, and ``str(exc)`` is the message alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Imported at run time, not for type checkers only: frameworks that read annotations
# (typing.get_type_hints) resolve the constructors' ``outcomes``. It imports nothing of
# quorumlock's but the arithmetic.
from quorumlock._algorithm.outcomes import NodeOutcome

__all__ = [
    "ConfigurationError",
    "FenceError",
    "LockLost",
    "LockNotAcquired",
    "LockNotHeld",
    "LockNotReentrant",
    "LockUpgradeRefused",
    "QuorumLockError",
    "QuorumUnavailable",
    "StaleFencingToken",
]


class QuorumLockError(Exception):
    """Base class of every error quorumlock raises on purpose."""


class ConfigurationError(QuorumLockError, ValueError):
    """Raised by constructors and ``Redlock.lock`` for bad input, before any network call.

    Examples: an empty lock name or one longer than 4096 bytes of UTF-8, a ttl <= 0, a
    negative timeout, an empty or duplicated server list, a malformed URL, a clock drift
    factor outside [0, 1), a lock handle whose validity exceeds ``max_ttl``. Also for a
    set-up that only the servers show: two of the servers given are one server (seen
    when both are first connected to), servers ``provision()`` could not mark.
    """


class _LockError(QuorumLockError):
    """A lock-level error: carries the lock name and the per-server outcomes."""

    def __init__(self, message: str, name: str, *, outcomes: Sequence[NodeOutcome] = ()) -> None:
        super().__init__(message)
        # args, not the message alone: rebuilt as cls(*args), the exception keeps its name
        self.args = (message, name)
        self.name = name
        self.outcomes: tuple[NodeOutcome, ...] = tuple(outcomes)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructor arguments do not survive the default exception pickling.
        # The instance's dict goes along, as for a builtin exception: the notes added to
        # it (add_note) and any attribute the application set.
        return (_rebuild, (type(self), str(self), self.name, self.outcomes), self.__dict__)


def _rebuild(
    cls: type[_LockError], message: str, name: str, outcomes: tuple[NodeOutcome, ...]
) -> _LockError:
    return cls(message, name=name, outcomes=outcomes)


class LockNotAcquired(_LockError, TimeoutError):
    """Raised when a lock could not be acquired.

    Raised by ``with rl.lock(...)`` (and ``synchronized``) when the lock is held by someone
    else for longer than the wait allowed. ``acquire()`` returns ``False`` for that case
    instead.
    """


class QuorumUnavailable(LockNotAcquired):
    """Raised when fewer than a majority of the servers could be used.

    Raised by ``acquire()`` itself (not only by the context manager): servers that are
    unreachable, time out, refuse our credentials or are read-only replicas are a
    deployment problem, not contention, so they are never reported as a plain ``False``.
    A blocking acquire keeps retrying through transient failures (a restarting server)
    until its timeout; errors that retrying cannot fix (authentication, a read-only
    replica, a missing ACL permission) are raised at once.
    """


class LockLost(_LockError):
    """Raised when a held lock could not be kept.

    Raised by ``extend()`` when a majority did not confirm the extension within the
    remaining validity (the lock is then released everywhere), and by checks of a lock
    whose validity ran out or whose lease renewal found it lost.
    """


class LockNotHeld(_LockError, RuntimeError):
    """Raised by ``release()``, ``extend()`` or ``export()`` of a lock this object does not
    hold: never acquired, released already (a double release), or handed over.

    Also a ``RuntimeError``, as the same misuse of ``threading.Lock`` is.
    """


class LockNotReentrant(_LockError, RuntimeError):
    """Raised at once by an acquire that could only wait for the caller itself.

    A lock is not reentrant: acquiring a name that the same thread (sync) or task
    (asyncio) already holds, or is acquiring, through the same ``Redlock`` (with this
    object or another one) would wait until the outer lock's ttl ran out. Other threads,
    tasks and processes wait as normal contenders. Also a ``RuntimeError``.
    """


class LockUpgradeRefused(LockNotReentrant):
    """Raised at once when a reader of a read-write lock asks to write it: by
    ``upgrade()`` of a read hold, and by a write acquire of the same lock from the thread
    (sync) or task (asyncio) that holds it for reading through the same ``Redlock``.

    Two readers upgrading at once would each wait for the other to stop reading: a
    deadlock. Release the read hold and acquire the write lock instead (what was read
    may have changed in between), or take the write lock first and ``downgrade()`` it.
    """


class StaleFencingToken(QuorumLockError):
    """Raised by :meth:`quorumlock.RedisFence.execute` when the token is too old.

    A holder with a larger fencing token has written to the resource since: the caller's
    lock expired (a pause, a slow network) and someone else acquired it. The write was
    not applied. ``token`` is the refused token, ``highest`` the largest one seen.
    """

    def __init__(self, message: str, token: int, highest: int) -> None:
        super().__init__(message)
        self.args = (message, token, highest)  # see _LockError
        self.token = token
        self.highest = highest

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        fields = {"token": self.token, "highest": self.highest}
        return (_rebuild_with, (type(self), str(self), fields), self.__dict__)


def _rebuild_with(cls: type[Exception], message: str, fields: dict[str, Any]) -> Exception:
    """An exception of ``cls`` (a subclass of the application's among them) rebuilt from
    its message and its constructor's fields, by pickle."""
    return cls(message, **fields)


def _rebuild_stale(message: str, token: int, highest: int) -> StaleFencingToken:
    # What pickles made by earlier versions call.
    return StaleFencingToken(message, token=token, highest=highest)


class FenceError(QuorumLockError):
    """Raised by :class:`quorumlock.RedisFence` when the resource's server failed.

    The server refused the command (a wrong type, a wrong number of arguments: the
    command was not applied, though its token may have been recorded), or the
    connection failed or timed out (the write may or may not have been applied, as for
    any command whose reply was lost). The message says which, with the server's own
    error. ``resource`` is the fenced resource's name.
    """

    def __init__(self, message: str, resource: str) -> None:
        super().__init__(message)
        self.args = (message, resource)  # see _LockError
        self.resource = resource

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_with, (type(self), str(self), {"resource": self.resource}), self.__dict__)


def _rebuild_fence(message: str, resource: str) -> FenceError:
    # What pickles made by earlier versions call.
    return FenceError(message, resource=resource)
