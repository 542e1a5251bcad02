"""A flag that one thread waits on and others raise, safe against signal handlers.

``threading.Event`` is written in Python around a ``threading.Condition``: an exception
that a signal handler raises in the waiting thread (Ctrl-C's ``KeyboardInterrupt``, the
``SystemExit`` of a SIGTERM handler, Celery's soft time limit) can land between two of
its steps. It may then leave the condition's lock taken for good, and the next ``set``
(another thread's) hangs on it; or leave it let go inside the ``with`` block, whose exit
raises ``RuntimeError: release unlocked lock`` in the exception's place.

:class:`Flag` keeps its state in two things that each change in one step: a bool, and a
bare ``_thread`` lock that is held while the flag is down. Waiting is a C-level acquire
of that lock, which a signal handler's exception leaves cleanly (the lock not taken).
``set`` and ``clear`` change the bool and then the lock with no point between where
CPython runs a signal handler (as a call returns, as a function starts, at a loop's jump
back): a flag raised in a thread that such an exception interrupts is raised whole.
"""

from __future__ import annotations

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
        try:  # noqa: SIM105 (contextlib.suppress: its calls, before the release, are such points)
            self._gate.release()
        except RuntimeError:  # let go already: up, or being waited on
            pass

    def clear(self) -> None:
        self._up = False
        self._gate.acquire(blocking=False)

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the flag to be up; whether it is."""
        give_up = time.monotonic() + seconds
        while not self._up:
            left = give_up - time.monotonic()
            if left <= 0:
                return False
            self._gate.acquire(timeout=min(left, threading.TIMEOUT_MAX))
        return True
