"""A flag that one thread waits on and others raise, safe against signal handlers.

``threading.Event`` is written in Python around a ``threading.Condition``: an exception
that a signal handler raises in the waiting thread (Ctrl-C's ``KeyboardInterrupt``, the
``SystemExit`` of a SIGTERM handler, Celery's soft time limit) can land between two of
its steps. It may then leave the condition's lock taken for good, and the next ``set``
(another thread's) hangs on it; or leave it let go inside the ``with`` block, whose exit
raises ``RuntimeError: release unlocked lock`` in the exception's place.

:class:`Flag` keeps its state in two things that each change in one step: a bool, and a
bare ``_thread`` lock that is held while the flag is down. Waiting is a C-level acquire
of that lock, which a signal handler's exception leaves cleanly (the lock not taken), and
no moment of it leaves either thing half changed.
"""

from __future__ import annotations

import contextlib
import threading
import time

__all__ = ["Flag"]


class Flag:
    """Like ``threading.Event`` (``set``, ``clear``, ``is_set``, ``wait``), for one
    waiting thread at a time; any thread may raise or lower it.

    The gate lock is held while the flag is down and let go when it is raised, so that
    an acquire returns as the flag goes up. A wait takes the gate with it; the bool,
    read first and last, is what says whether the flag is up, so a gate let go by a race
    of ``set`` and ``clear`` costs one more turn of the wait, never a wrong answer."""

    __slots__ = ("_gate", "_up")

    def __init__(self) -> None:
        self._up = False
        self._gate = threading.Lock()
        self._gate.acquire()

    def is_set(self) -> bool:
        return self._up

    def set(self) -> None:
        self._up = True
        with contextlib.suppress(RuntimeError):  # let go already: up, or being waited on
            self._gate.release()

    def clear(self) -> None:
        self._up = False
        self._gate.acquire(blocking=False)

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the flag to be up; whether it is."""
        if self._up:
            return True
        give_up = time.monotonic() + seconds
        while not self._up:
            left = give_up - time.monotonic()
            if left <= 0:
                return False
            self._gate.acquire(timeout=min(left, threading.TIMEOUT_MAX))
        return True
