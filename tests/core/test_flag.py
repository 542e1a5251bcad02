"""The flag that a waiting acquire and the lease thread wait on (``quorumlock._io.flag``):
``threading.Event``'s behaviour, and what a signal handler's exception leaves of it, at
any moment, is still a working flag. (``threading.Event`` fails both interrupt tests
below: a set in another thread hangs on the lock that the exception left taken.)"""

from __future__ import annotations

import functools
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Protocol

import pytest

from quorumlock._io.flag import Flag
from quorumlock._io.wakeups import Entry, Waiter
from tests.core.test_mutex_let_go import InterruptAsCallReturns


def _set_soon(flag: _FlagLike, after: float = 0.05) -> threading.Thread:
    def later() -> None:
        time.sleep(after)
        flag.set()

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


def test_a_flag_starts_down_and_a_wait_for_it_times_out() -> None:
    flag = Flag()
    assert not flag.is_set()
    started = time.monotonic()
    assert flag.wait(0.05) is False
    assert time.monotonic() - started >= 0.05
    assert flag.wait(0) is False
    assert flag.wait(-1) is False


def test_raised_it_stays_up_for_every_wait_until_it_is_cleared() -> None:
    flag = Flag()
    flag.set()
    flag.set()  # twice: still one flag, up
    assert flag.is_set()
    assert flag.wait(0) is True
    assert flag.wait(10) is True  # at once: a wait does not take the flag down
    flag.clear()
    assert not flag.is_set()
    assert flag.wait(0.01) is False
    flag.clear()  # twice: still down
    assert flag.wait(0.01) is False


def test_a_set_in_another_thread_ends_a_wait_at_once() -> None:
    flag = Flag()
    started = time.monotonic()
    setter = _set_soon(flag)
    assert flag.wait(30) is True
    assert time.monotonic() - started < 20, "woken by the wait's end, not by the set"
    setter.join(timeout=10)
    flag.clear()
    _set_soon(flag).join(timeout=10)
    assert flag.wait(0) is True, "a set before the wait began is not seen"


def test_sets_and_clears_racing_from_threads_leave_a_flag_that_works() -> None:
    """A set and a clear in two threads at once may leave the gate let go with the flag
    down: a wait then takes one more turn, and answers right."""
    flag = Flag()
    stop = time.monotonic() + 0.5

    def toggle(step: Callable[[], None]) -> None:
        while time.monotonic() < stop:
            step()

    threads = [threading.Thread(target=toggle, args=(step,)) for step in (flag.set, flag.clear)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    flag.clear()
    assert flag.wait(0.05) is False
    setter = _set_soon(flag)
    assert flag.wait(30) is True
    setter.join(timeout=10)


def _wait_into(flag: _FlagLike, woken: list[bool]) -> None:
    woken.append(flag.wait(30))


def _still_works(flag: _FlagLike, where: str) -> None:
    """From any state, down then up by another thread, as a waiter sees it (in a thread
    of its own: a flag left broken hangs it, not the test)."""
    seen: list[bool] = []

    def look() -> None:
        flag.clear()
        seen.append(flag.wait(0.02))
        setter = _set_soon(flag, 0.02)
        seen.append(flag.wait(10))
        setter.join(timeout=10)
        seen.append(setter.is_alive())

    looker = threading.Thread(target=look, daemon=True)
    looker.start()
    looker.join(timeout=30)
    assert not looker.is_alive(), f"{where}: a clear, a wait or a set hangs"
    assert seen == [False, True, False], f"{where}: up after a clear, a set not seen"


@pytest.mark.parametrize("method", ["wait", "set", "clear"])
@pytest.mark.parametrize("up", [False, True], ids=["down", "up"])
def test_an_interrupt_as_any_call_returns_leaves_a_flag_that_works(method: str, up: bool) -> None:
    """Where CPython runs a signal handler in the flag's code (as each call in it
    returns), its exception leaves the flag's state whole."""
    points = 0
    for at in range(1, 50):  # a point after each call: far fewer than that
        flag = Flag()
        if up:
            flag.set()
        code = getattr(Flag, method).__code__
        tracer = InterruptAsCallReturns(code, at)
        calls: dict[str, Callable[[], object]] = {
            "wait": functools.partial(flag.wait, 0.01),
            "set": flag.set,
            "clear": flag.clear,
        }
        call = calls[method]
        setter = _set_soon(flag, 0.005) if not up and method == "wait" else None
        woken: list[bool] = []
        waiting = threading.Thread(target=_wait_into, args=(flag, woken), daemon=True)
        if not up and method == "set":  # a thread waits as the set comes
            waiting.start()
            time.sleep(0.02)
        sys.setprofile(tracer)  # (a set during the wait, above: its gate let go in it)
        try:
            call()
        except KeyboardInterrupt:
            pass
        finally:
            sys.setprofile(None)
        if setter is not None:
            setter.join(timeout=10)
        if waiting.ident is not None:
            waiting.join(timeout=10)
            assert woken == [True], f"{tracer.where}: the waiting thread was not woken"
        if tracer.seen < at:  # no interrupt: the call ran to its end
            break
        points += 1
        _still_works(flag, tracer.where)
    else:
        pytest.fail("the call never ran to its end")
    # an up flag's wait and set call nothing that returns (a set's let-go raises)
    assert points >= (0 if up and method != "clear" else 1)


class _FlagLike(Protocol):
    def is_set(self) -> bool: ...
    def set(self) -> None: ...
    def clear(self) -> None: ...
    def wait(self, seconds: float) -> bool: ...


class _WaiterAsFlag:
    """A blocking acquire's :class:`Waiter`, seen as a flag: its notify raises it, its
    rearm lowers it."""

    def __init__(self) -> None:
        self._waiter = Waiter(b"quorumlock:released:test", Entry("member"))

    def is_set(self) -> bool:
        return self._waiter.notified()

    def set(self) -> None:
        self._waiter.notify()

    def clear(self) -> None:
        self._waiter.rearm()

    def wait(self, seconds: float) -> bool:
        return self._waiter.wait(seconds)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer")
@pytest.mark.parametrize("make", [Flag, _WaiterAsFlag], ids=["flag", "waiter"])
def test_real_signals_at_random_moments_of_waits_leave_a_flag_that_works(
    make: Callable[[], _FlagLike],
) -> None:
    """For 1.5 s the main thread lowers the flag and waits on it while another thread
    raises it over and over, and a timer sends the process SIGALRM every few hundred
    microseconds (the kernel's choice of thread, as for Ctrl-C), whose handler raises
    KeyboardInterrupt in the main thread. Nothing but that exception comes out of a
    wait or a clear, and the thread that raises the flag is never held up. (The timer
    repeats until the end: a main thread stuck on a lock is interrupted too.) Both
    the flag and the waiter of a blocking acquire, which waits on one."""
    flag = make()
    stop = time.monotonic() + 1.5
    armed = False
    rng = random.Random(7)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal armed
        if armed:
            armed = False
            raise KeyboardInterrupt

    def raise_flag() -> None:
        while time.monotonic() < stop:
            flag.set()
            time.sleep(0.0002)

    previous = signal.signal(signal.SIGALRM, interrupt)
    setter = threading.Thread(target=raise_flag, daemon=True)
    interrupts = 0
    try:
        setter.start()
        while time.monotonic() < stop:
            try:
                armed = True
                signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.00001, 0.0005), 0.0005)
                # (``while True``: on CPython 3.13 an exception raised at the jump back of
                # a ``while armed and ...`` loop that ends a ``try`` escapes its handler,
                # python/cpython#130279)
                while True:
                    if not armed or time.monotonic() >= stop:
                        break
                    flag.clear()
                    flag.wait(0.0005)
            except KeyboardInterrupt:
                interrupts += 1
            armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        setter.join(timeout=10)
        assert not setter.is_alive(), "a set hangs: an interrupted wait left the flag taken"
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert interrupts > 10, f"only {interrupts} interrupts: the test did not test much"
    _still_works(flag, "after the interrupts")
