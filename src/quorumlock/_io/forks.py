"""This process's id, without a system call each time it is asked.

``os.getpid()`` is a system call on Linux (glibc stopped caching it in 2.25), and the
connection pools ask it for every connection a round takes and gives back: twenty times
in an uncontended N = 5 cycle. :data:`PID` is read instead; a child made by
``os.fork()`` (and so by ``multiprocessing``'s fork) sets it anew before any of its
Python code runs. Read it as ``forks.PID`` (a name imported with ``from`` would keep the
parent's).
"""

from __future__ import annotations

import os

__all__ = ["PID"]

PID = os.getpid()


def _forked() -> None:
    global PID
    PID = os.getpid()


os.register_at_fork(after_in_child=_forked)
