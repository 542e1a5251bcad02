"""The test starter of one job of the mutation check (run.py starts one per job).

A mutant's tests mostly take a fraction of a second; the start of a Python process that
runs them (pytest, its plugins, redis-py, hypothesis) took about 1.5 s of CPU. This
process pays that once: it imports pytest and every third-party module the runs share,
never quorumlock or the tests, and then runs each mutant's tests in a fork of itself,
which imports quorumlock and the tests afresh from the copy of the tree it is given.

Usage: ``python tests/mutation/starter.py TREE``. Each line read on stdin is a JSON
object ``{"tests": [...], "timeout": seconds}``; the answer is one JSON line
``{"code": pytest's exit status, or null if the run was killed at its timeout,
"output": what pytest printed}``, or ``{"error": why}`` if the run imported quorumlock
from elsewhere than the tree (no verdict). It ends at the end of its input.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.metadata
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import pytest
from _pytest.config import default_plugins

# What every run imports that no mutant changes (the start's cost, on a profile: the
# plugins named by entry points, redis-py with its OpenTelemetry hooks, hypothesis).
SHARED: tuple[str, ...] = ("redis", "redis.asyncio", "hiredis", "hypothesis", "asyncio")
# Exit status of a child whose quorumlock did not come from the tree (never a verdict).
WRONG_TREE = 97
_POLL = 0.02  # seconds between looks at whether the run ended (bounded by its timeout)


def preload() -> None:
    for name in default_plugins:
        importlib.import_module(f"_pytest.{name}")
    for entry in importlib.metadata.entry_points(group="pytest11"):
        if entry.dist is not None and entry.dist.name == "quorumlock":
            continue
        importlib.import_module(entry.module)
    for name in SHARED:
        importlib.import_module(name)
    loaded = [name for name in sys.modules if name.split(".")[0] in ("quorumlock", "tests")]
    if loaded:
        raise SystemExit(f"the starter imported {loaded[0]}: each run must import it afresh")
    if threading.active_count() != 1:
        raise SystemExit("the starter runs threads after its imports: a fork would copy them")


def child(tree: Path, tests: list[str], output: int) -> None:
    """In the forked process: run pytest on ``tests`` in ``tree``; never returns."""
    code = 3
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.chdir(tree)
        src = str(tree / "src")
        sys.path.insert(0, src)
        os.environ["PYTHONPATH"] = src
        import quorumlock  # noqa: PLC0415  (the mutated copy's, imported after the fork)

        if not Path(quorumlock.__file__ or "").resolve().is_relative_to(tree.resolve()):
            print(f"quorumlock was imported from {quorumlock.__file__}, not from {tree}")
            code = WRONG_TREE
        else:
            args = ["-x", "-q", "-p", "no:cacheprovider", "--assert=plain", *tests]
            code = int(pytest.main(args))
    except BaseException:  # the child reports anything, and exits
        traceback.print_exc()
    finally:
        # As at a process's exit: the exit handlers (the testing kit's kills any server
        # left running), then the streams; not the starter's own unwinding.
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run(tree: Path, tests: list[str], timeout: float) -> dict[str, object]:
    with tempfile.TemporaryFile() as output:
        pid = os.fork()
        if pid == 0:
            child(tree, tests, output.fileno())
        deadline = time.monotonic() + timeout
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < deadline:
            time.sleep(_POLL)
            done, status = os.waitpid(pid, os.WNOHANG)
        finished = bool(done)
        if not finished:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        output.seek(0)
        text = output.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status) if finished else None
    if code == WRONG_TREE:
        return {"error": text.strip()}
    return {"code": code, "output": text}


def main() -> None:
    tree = Path(sys.argv[1])
    sys.dont_write_bytecode = True  # see run.py's run_tests
    preload()
    for line in sys.stdin:
        request = json.loads(line)
        answer = run(tree, list(request["tests"]), float(request["timeout"]))
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
