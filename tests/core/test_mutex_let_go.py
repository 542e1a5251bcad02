"""A sync acquire lets its lock object's mutex go while it waits (``_sync._without``), and
takes it back whatever exception comes meanwhile: a signal handler's exception at any
moment where CPython runs one, as a call returns, leaves the mutex held as it was."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType

import pytest

from quorumlock._sync import _without


class InterruptAsCallReturns:
    """A profile function that raises KeyboardInterrupt as the ``at``-th call made in
    ``code`` returns (1, 2, ...): where CPython runs a signal handler that is due. (Not
    the calls that C makes, nor those of a type, which the profiler does not see.)"""

    def __init__(self, code: CodeType, at: int) -> None:
        self.code = code
        self.at = at
        self.seen = 0
        self.where = ""

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "c_return":
            caller: FrameType | None = frame
            name = getattr(arg, "__name__", "?")
        elif event == "return":
            caller, name = frame.f_back, frame.f_code.co_name
        else:
            return
        if caller is None or caller.f_code is not self.code:
            return
        self.seen += 1
        if self.seen == self.at:
            self.where = f"point {self.at}, as {name} returns"
            raise KeyboardInterrupt


def _depth(mutex: threading.RLock) -> int:
    """How many times this thread holds ``mutex`` (``RLock._recursion_count()`` came in
    a later 3.11 release than Debian 12's 3.11.2): let go and taken back as often."""
    depth = 0
    while mutex._is_owned():  # type: ignore[attr-defined]
        mutex.release()
        depth += 1
    for _ in range(depth):
        mutex.acquire()
    return depth


def _returns() -> str:
    return "done"


def _raises() -> str:
    raise KeyboardInterrupt  # a signal handler's, as the wait itself is interrupted


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("wait", [_returns, _raises], ids=["returns", "raises"])
def test_an_interrupt_as_any_call_returns_leaves_the_mutex_held_as_it_was(
    depth: int, wait: Callable[[], str]
) -> None:
    mutex = threading.RLock()
    for _ in range(depth):
        mutex.acquire()
    let_go: list[bool] = []

    def waiting() -> str:
        let_go.append(not mutex._is_owned())  # type: ignore[attr-defined]
        return wait()

    points = 0
    try:
        for at in range(1, 100):  # a point after each call: far fewer than that
            tracer = InterruptAsCallReturns(_without.__code__, at)
            let_go.clear()
            outcome: object
            sys.setprofile(tracer)
            try:
                outcome = _without(mutex, waiting)
            except KeyboardInterrupt as exc:
                outcome = exc
            finally:
                sys.setprofile(None)
            where = tracer.where
            assert mutex._is_owned(), f"{where}: the mutex was not taken back"  # type: ignore[attr-defined]
            assert _depth(mutex) == depth, where
            assert let_go in ([], [True]), where
            if tracer.seen < at:  # no interrupt: the call ran to its end
                break
            points += 1
        else:
            pytest.fail("the call never ran to its end")
        if wait is _returns:
            assert outcome == "done"
        else:
            assert isinstance(outcome, KeyboardInterrupt)
        assert let_go == [True]
        assert points >= 3  # the calls before, as and after the mutex is let go
    finally:
        while mutex._is_owned():  # type: ignore[attr-defined]
            mutex.release()
