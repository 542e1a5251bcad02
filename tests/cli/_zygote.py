"""A process that imported the ``quorumlock`` command once, and runs each command line it
is given in a fork of itself (``tests/cli/conftest.py``, ``run_cli``).

Starting an interpreter and importing the command line costs about 0.5-0.9 s per call on
the CI's machine, most of the time of a CLI test. A fork of this process is the command
as the console script runs it, in a process of its own: its own argv, environment,
working directory, standard streams (stdin from /dev/null, stdout and stderr to the files
named), exit status (an uncaught exception prints its traceback and exits 1, as the
interpreter does), its non-daemon threads waited for and its ``atexit`` functions run at
the end. Only the interpreter's start is not repeated: tests that need a fresh one
(signals, process groups, the console script itself) start the command as a subprocess
(``spawn_cli``), and ``QUORUMLOCK_TEST_CLI=process`` makes every call one.

Protocol, one JSON line per request on stdin: ``{"argv", "env", "cwd", "out", "err",
"status"}``; the answer is the fork's pid on its own line. The fork writes its exit status
to the file ``status`` once its output is flushed, as its last act; this process reaps
its forks (``SIGCHLD`` ignored) and ends when stdin closes.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
import threading
import traceback
from typing import Any

from quorumlock.cli import main


def _exit_status(exc: SystemExit) -> int:
    """The status the interpreter gives ``sys.exit(code)``: a string is printed, and 1."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run(request: dict[str, Any]) -> None:
    """In the fork: run the command line, and never return."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the command waits for its own
        stdin = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["out"], os.O_WRONLY | os.O_TRUNC)
        err = os.open(request["err"], os.O_WRONLY | os.O_TRUNC)
        for fd, target in ((stdin, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        try:
            try:
                status = main() & 0xFF
            except SystemExit as exc:
                status = _exit_status(exc)
            except BaseException:
                traceback.print_exc()
                status = 1
            threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter's exit
            atexit._run_exitfuncs()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        path = request["status"]
        with open(f"{path}.tmp", "w") as file:
            file.write(str(status))
        os.replace(f"{path}.tmp", path)
        os._exit(status)


def serve() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped as they end
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run(request)
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
