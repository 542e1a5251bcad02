"""Waiting on several sockets at once, also in a process that eventlet patched.

The sync fan-out and the subscriber thread wait on their sockets with ``select.poll``.
gevent's ``monkey.patch_all()`` keeps a cooperative ``poll``. eventlet's
``monkey_patch()`` (Celery's ``--pool=eventlet``, gunicorn's eventlet workers) deletes
it and keeps only a cooperative ``select.select`` that is unsafe on several sockets:
it returns one of them, and another one's readiness, if the hub saw it in the same
turn, is later delivered to the greenthread wherever it then waits (seen: a caller's
``eventlet.sleep(0.3)`` returned at once, after a round).

Under eventlet, :func:`poller` gives an object with ``poll``'s methods that looks with
eventlet's own, unpatched ``poll`` and, to wait, registers each socket with eventlet's
hub through callbacks that do nothing once the wait is over. :func:`readable_now` asks
without waiting, with the unpatched ``select`` there too. Which applies is looked up
at each call: a program may patch after importing quorumlock.
"""

from __future__ import annotations

import select
import sys
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

__all__ = ["Poller", "poller", "readable_now"]


class Poller(Protocol):
    """The part of ``select.poll``'s object that quorumlock uses."""

    def register(self, fd: FileDescriptorLike, eventmask: int = ..., /) -> None: ...

    def unregister(self, fd: FileDescriptorLike, /) -> None: ...

    def poll(self, timeout: float | None = ..., /) -> list[tuple[int, int]]: ...


def _unpatched() -> ModuleType | None:
    """eventlet's original ``select`` module when eventlet patched this process's."""
    patcher = sys.modules.get("eventlet.patcher")
    if patcher is None or hasattr(select, "poll"):
        return None
    unpatched: ModuleType = patcher.original("select")
    return unpatched


class _GreenPoller:
    """``select.poll``'s interface in an eventlet process (see the module): level
    triggered, all the ready descriptors at once, a wait that lets other greenthreads
    run, and nothing delivered to the caller after it returned."""

    __slots__ = ("_fds", "_look")

    def __init__(self, unpatched: ModuleType) -> None:
        self._look: Poller = unpatched.poll()
        self._fds: dict[int, None] = {}

    def register(self, fd: FileDescriptorLike, eventmask: int = select.POLLIN, /) -> None:
        number = _number(fd)
        self._look.register(number, eventmask)
        self._fds[number] = None

    def unregister(self, fd: FileDescriptorLike, /) -> None:
        number = _number(fd)
        self._look.unregister(number)
        del self._fds[number]

    def poll(self, timeout: float | None = None, /) -> list[tuple[int, int]]:
        ready = self._look.poll(0)
        if ready or timeout == 0:
            return ready
        seconds = None if timeout is None or timeout < 0 else timeout / 1000
        _green_wait(list(self._fds), seconds)
        return self._look.poll(0)


def _number(fd: FileDescriptorLike) -> int:
    """A descriptor's number (``poll`` reports numbers, whatever was registered)."""
    return fd if isinstance(fd, int) else fd.fileno()


def _green_wait(fds: list[int], seconds: float | None) -> None:
    """Let other greenthreads run until one of ``fds`` can be read or ``seconds``
    passed. A callback that eventlet's hub gathered before the wait ended, and calls
    after, finds it over and does nothing."""
    eventlet = sys.modules["eventlet"]  # imported: it patched this process
    hub = eventlet.hubs.get_hub()
    current = eventlet.getcurrent()
    waiting = True

    def wake(*_: object) -> None:
        nonlocal waiting
        if waiting:
            waiting = False
            current.switch()

    listeners = [hub.add(hub.READ, fd, wake, wake, None) for fd in fds]
    timer = None if seconds is None else hub.schedule_call_global(seconds, wake)
    try:
        hub.switch()
    finally:
        waiting = False
        for listener in listeners:
            hub.remove(listener)
        if timer is not None:
            timer.cancel()


def poller() -> Poller:
    """A new ``select.poll()`` object, or its stand-in under eventlet (see the module)."""
    unpatched = _unpatched()
    return select.poll() if unpatched is None else _GreenPoller(unpatched)


def readable_now(fds: Iterable[FileDescriptorLike]) -> list[FileDescriptorLike]:
    """Those of ``fds`` that can be read now (or that failed), without waiting: the
    first element of ``select.select(fds, [], [], 0)``."""
    unpatched = _unpatched()
    look = select.select if unpatched is None else unpatched.select
    readable: list[FileDescriptorLike] = look(list(fds), [], [], 0)[0]
    return readable
