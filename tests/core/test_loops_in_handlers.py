"""No loop of the package lets a signal handler's exception escape its try or with.

CPython runs signal handlers at a loop's jump back, and an exception a handler raises
there (``KeyboardInterrupt``, a ``SystemExit`` of a SIGTERM handler, Celery's soft time
limit) is matched against the exception table at a place the compiler did not always
cover with the handlers of the ``try`` or ``with`` around the loop: the exception then
escapes them, and a ``finally`` is skipped, a ``with`` block's lock stays taken, an
``except BaseException`` clean-up never runs (python/cpython#108214, #130279, #148278).

- CPython 3.11 and 3.12 look the jump's exception up at the instruction before the
  jump's target: a ``continue`` back to a loop that begins the try escapes.
- CPython 3.13 looks it up at the jump itself, which its compiler leaves out of the table
  at the end of a ``while cond:`` body, after an ``if`` that ends a loop's body, and in
  a comprehension with an ``if``.

:func:`escaping_jumps` reads the compiled code of every module and finds such jumps for
the running CPython; the tests below check it against real signals (``SHAPES``: which
of them escape depends on the version), then the package. The shapes that escape on
none: ``while True:`` with its test as an ``if ...: break`` and no ``continue`` back to
a loop that begins the try; a ``for`` loop whose body ends with ``continue`` rather than
an ``if``; a comprehension's ``if`` as a ``filter``, or the loop in a function of its own
(the exception then leaves that function at the call, which the handler covers).
"""

from __future__ import annotations

import dis
import pathlib
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from typing import Any

import pytest

import quorumlock

PACKAGE = pathlib.Path(quorumlock.__file__).parent

#: The instructions that may run a signal handler as they jump back.
_BACKWARD = {
    "JUMP_BACKWARD",
    "POP_JUMP_BACKWARD_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE",
}


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def escaping_jumps(code: types.CodeType) -> list[str]:
    """The jumps back in ``code`` (and the functions in it) where an exception raised as
    the jump runs escapes a ``try`` or ``with`` handler that covers the loop: each as
    ``"line N in qualname"``.

    An offset's exception goes to the handler of the one table entry that covers it; a
    handler that only cleans up (a comprehension's names, an ``except ... as`` name)
    re-raises to the handler that covers it, and so on. The handlers of try and with
    statements on that chain are those that begin with ``PUSH_EXC_INFO``.
    """
    found: list[str] = []
    for each in _codes(code):
        bytecode = dis.Bytecode(each)
        table: list[Any] = bytecode.exception_entries  # type: ignore[attr-defined]
        opname = {ins.offset: ins.opname for ins in bytecode}
        for ins in bytecode:
            if ins.opname not in _BACKWARD:
                continue
            target = ins.argval
            # where CPython looks the exception up (see the module's docstring)
            looked_up = ins.offset if sys.version_info >= (3, 13) else target - 2
            if _handlers(target, table, opname) - _handlers(looked_up, table, opname):
                line = ins.positions.lineno if ins.positions else None
                found.append(f"line {line} in {each.co_qualname}")
    return found


def _handlers(offset: int, table: list[Any], opname: dict[int, str]) -> set[int]:
    """The handlers of try and with statements that an exception at ``offset`` meets."""
    chain: set[int] = set()
    while True:
        entry = next((e for e in table if e.start <= offset < e.end), None)
        if entry is None or entry.target in chain:
            return {target for target in chain if opname[target] == "PUSH_EXC_INFO"}
        chain.add(entry.target)
        offset = entry.target


def _compiled(source: str) -> types.CodeType:
    return compile(source, "<shape>", "exec")


# Loops, each the whole body of a try whose handler counts the interrupts it catches
# (see ``_source``).
SHAPES = {
    "while-condition": """
        while n:
            n -= 1
    """,
    "while-condition-continue": """
        while n:
            n -= 1
            continue
    """,
    "for-ending-with-if": """
        for i in range(n):
            if i < 0:
                n -= 1
    """,
    "comprehension-with-if": """
        n = [i for i in range(n) if i < 0]
    """,
    "for-ending-with-if-in-a-handler": """
        try:
            raise ValueError
        except ValueError as exc:
            for i in range(n):
                if i < 0:
                    n -= 1
    """,
    "while-true-continue": """
        while True:
            if not n:
                break
            n -= 1
            continue
    """,
    "while-true-break": """
        while True:
            if not n:
                break
            n -= 1
    """,
    "for-ending-with-continue": """
        for i in range(n):
            if i < 0:
                n -= 1
            continue
    """,
}


def _source(shape: str) -> str:
    """The function ``run(n, note)`` of ``shape``: its loop in a try whose handler
    calls ``note()`` for a KeyboardInterrupt."""
    loop = textwrap.indent(textwrap.dedent(SHAPES[shape]).strip("\n"), " " * 8)
    return f"def run(n, note):\n    try:\n{loop}\n    except KeyboardInterrupt:\n        note()\n"


# Runs a shape's ``run`` over and over for argv[2] seconds with SIGALRM every 0.1 ms,
# whose handler raises KeyboardInterrupt only when it interrupts ``run`` (its frame, or
# that of a comprehension in it); prints how many interrupts run's handler caught (its
# note() makes no Python frame) and how many escaped it. In a process of its own: an
# exception that escapes an ``except`` block leaves the exception it handled as the
# thread's, and every later exception of that process chained to it.
_INTERRUPTED = """
import functools, signal, sys, time
namespace = {}
exec(sys.argv[1], namespace)
run = namespace["run"]
target = run.__code__
caught = []

def handler(signum, frame):
    if frame is not None and target in (frame.f_code, getattr(frame.f_back, "f_code", None)):
        raise KeyboardInterrupt

signal.signal(signal.SIGALRM, handler)
escaped = 0
end = time.monotonic() + float(sys.argv[2])
signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
while True:
    try:
        run(100_000, functools.partial(caught.append, None))
    except KeyboardInterrupt:
        escaped += 1
    if time.monotonic() > end:
        break
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print(len(caught), escaped)
"""


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_scan_says_what_real_signals_do(shape: str) -> None:
    """Each shape, compiled by the running CPython: the scan finds an escaping jump
    exactly when real signals escape the handler (in most interrupted runs; an interrupt
    can escape legitimately as the function begins or ends). Catches a scan that would
    pass the package for a reason that is not CPython's."""
    source = _source(shape)
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED, source, "0.6"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    caught, escaped = map(int, done.stdout.split())
    assert caught + escaped > 100, f"too few interrupts to tell ({caught}, {escaped})"
    assert bool(escaping_jumps(_compiled(source))) == (escaped > caught), (caught, escaped)


def test_no_loop_of_the_package_lets_an_exception_escape() -> None:
    """Every module of the package, compiled by the running CPython. On a failure,
    write the loop in one of the shapes the module's docstring names, and look again
    (on 3.11, 3.12 and 3.13, which CI runs this on)."""
    found = [
        f"{path.relative_to(PACKAGE.parent)}: {jump}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for jump in escaping_jumps(compile(path.read_text(), str(path), "exec"))
    ]
    assert not found, "\n".join(found)
