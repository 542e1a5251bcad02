"""Worker processes of the verify kit and the benchmarks: started, watched and ended one way.

Each worker is a fresh interpreter running ``python -c`` with an entry that imports a
module's ``main`` (not ``-m``, which would execute a module a second time once its
package imported it; not ``multiprocessing``, so nothing of the caller's ``__main__``
is imported again). :class:`ProcessPool` only ever signals the processes it started, by
PID, through their :class:`subprocess.Popen` handles.

The protocol, in JSON lines:

* **parent -> worker**, on the worker's stdin: commands, one a line. EOF means "exit
  now" (a worker that is busy finishes what it does first; its loop is bounded);
* **worker -> parent**, on a private copy of the worker's stdout: replies, one a line.
  The worker's own fd 1 is pointed at its log (stderr), so anything a library prints
  lands there instead of in a reply. The first reply, sent by :func:`connect_parent`
  once the worker has imported everything, is ``{"ready": PID}``;
* **records**: a worker that must not lose what it did when it is killed later appends
  them to a :class:`RecordFile` (flushed line by line) instead of replying, and the
  parent reads them with :func:`read_records`. A reply pipe would lose nothing either,
  but its writer blocks once the pipe is full and nobody reads.

Lifetime: start-up is bounded (``ready_timeout``); every reply is awaited until a
deadline; :meth:`ProcessPool.close` closes every stdin, waits ``exit_grace`` seconds and
SIGKILLs the processes still running (a stopped one included), then reaps them all.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Final, Self

__all__ = [
    "Parent",
    "ProcessPool",
    "RecordFile",
    "WorkerError",
    "WorkerProcess",
    "WorkerTimeout",
    "connect_parent",
    "read_records",
]

_SELECT_SLICE: Final = 1.0  # seconds per select(): a deadline is checked at least this often
_REAP_WAIT: Final = 5.0  # a SIGKILLed process is gone well within this


class WorkerError(RuntimeError):
    """A worker process did not start, did not reply in time, or broke the protocol."""


class WorkerTimeout(WorkerError, TimeoutError):
    """A worker was not ready, or did not reply, by its deadline."""


# --------------------------------------------------------------------------- worker side


class Parent:
    """The worker's end of the protocol (see the module docstring)."""

    def __init__(self) -> None:
        self._replies: IO[str] = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)

    def reply(self, payload: dict[str, Any]) -> None:
        self._replies.write(json.dumps(payload) + "\n")
        self._replies.flush()

    def command(self) -> dict[str, Any] | None:
        """The next command, or None at EOF (the parent asks the worker to exit)."""
        line = sys.stdin.readline()
        return json.loads(line) if line.strip() else None

    def commands(self) -> Iterator[dict[str, Any]]:
        """Every command until EOF."""
        while (command := self.command()) is not None:
            yield command


def connect_parent() -> Parent:
    """Take over stdout for replies and tell the parent this worker is ready."""
    parent = Parent()
    parent.reply({"ready": os.getpid()})
    return parent


class RecordFile:
    """Append-only JSON-lines file; every line is flushed when written, so a worker
    killed later loses at most the record it was writing."""

    def __init__(self, path: str | Path) -> None:
        self._file: IO[str] = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    def add(self, **record: object) -> None:
        self._file.write(json.dumps(record) + "\n")

    def close(self) -> None:
        self._file.close()


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete record of a :class:`RecordFile` (a torn last line is skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    result: list[dict[str, Any]] = []
    for line in text.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if isinstance(record, dict):
                result.append(record)
    return result


# --------------------------------------------------------------------------- parent side


def _child_environment() -> dict[str, str]:
    """This environment, with this copy of quorumlock first on ``PYTHONPATH`` (so a child
    imports the same code even when the parent runs from an uninstalled checkout)."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def entry(module: str) -> str:
    """The ``python -c`` program that runs ``module.main()`` and exits with its status."""
    return f"import sys; from {module} import main; sys.exit(main())"


class WorkerProcess:
    """One process of a :class:`ProcessPool`: signals go to its PID only, through its
    ``popen`` (which never signals a PID it has reaped). ``paused`` is True from
    :meth:`pause` until :meth:`resume`."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.paused = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def pause(self) -> None:
        """SIGSTOP (a no-op once the process has exited)."""
        self.popen.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT (harmless when the process is not stopped or has exited)."""
        self.popen.send_signal(signal.SIGCONT)
        self.paused = False


class ProcessPool:
    """Worker processes of one module's ``main``, started at once and ready for commands.

    ``args[i]`` are worker ``i``'s command-line arguments; its log (stdout and stderr of
    the worker) is ``run_dir / f"worker-{i}.log"``, and ``run_dir`` is its working
    directory (nothing in the caller's directory shadows a module). The constructor
    returns once every worker replied ready; if one exits first or is not ready within
    ``ready_timeout`` seconds, every process is killed and :class:`WorkerError` (or
    :class:`WorkerTimeout`) raised. Use it as a context manager: leaving it calls
    :meth:`close`.
    """

    def __init__(
        self,
        module: str,
        args: Sequence[Sequence[str]],
        run_dir: Path,
        *,
        ready_timeout: float,
        exit_grace: float = 0.0,
    ) -> None:
        self._exit_grace = exit_grace
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[Path] = []
        self._buffers: dict[int, bytes] = {}
        self.processes: list[WorkerProcess] = []
        self.killed = 0
        try:
            for index, argv in enumerate(args):
                log_path = run_dir / f"worker-{index}.log"
                self._logs.append(log_path)
                with log_path.open("wb") as log:
                    proc = subprocess.Popen(
                        [sys.executable, "-c", entry(module), *argv],
                        cwd=run_dir,
                        env=_child_environment(),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=log,
                        close_fds=True,
                    )
                self._procs.append(proc)
                self.processes.append(WorkerProcess(proc))
            self.collect(range(len(self._procs)), time.monotonic() + ready_timeout, "ready line")
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self._procs)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def send(self, index: int, command: dict[str, Any]) -> None:
        """Write one command to worker ``index``.

        Raises:
            WorkerError: its stdin is closed or broken (it exited).
        """
        stdin = self._procs[index].stdin
        try:
            if stdin is None or stdin.closed:
                raise OSError("stdin closed")
            stdin.write(json.dumps(command).encode() + b"\n")
            stdin.flush()
        except OSError as exc:
            raise self.error(index, f"cannot write to it ({exc})") from exc

    def end_input(self) -> None:
        """Close every worker's stdin: EOF, the last command."""
        for proc in self._procs:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):  # BrokenPipeError: it died already
                    proc.stdin.close()

    def request(
        self, commands: dict[int, dict[str, Any]], deadline: float
    ) -> dict[int, dict[str, Any]]:
        """Send each worker its command, then :meth:`collect` one reply from each."""
        for index, command in commands.items():
            self.send(index, command)
        return self.collect(commands, deadline)

    def collect(
        self, indices: Iterable[int], deadline: float, what: str = "reply"
    ) -> dict[int, dict[str, Any]]:
        """One reply line from each worker in ``indices`` by ``deadline``
        (``time.monotonic()``).

        Raises:
            WorkerError: a worker exited first (its log's last lines are quoted), or a
                reply is not JSON.
            WorkerTimeout: a reply is late.
        """
        pending = {self._fd(i): i for i in indices}
        replies: dict[int, dict[str, Any]] = {}
        with selectors.DefaultSelector() as selector:
            for fd in pending:
                selector.register(fd, selectors.EVENT_READ)
            while True:
                if not pending:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    late = sorted(pending.values())
                    raise self.error(
                        late[0], f"no {what} in time ({len(late)} late)", WorkerTimeout
                    )
                for key, _ in selector.select(timeout=min(left, _SELECT_SLICE)):
                    fd = int(key.fd)
                    index = pending[fd]
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            self._procs[index].wait(timeout=_REAP_WAIT)
                        code = self._procs[index].returncode
                        raise self.error(index, f"exited with code {code} before its {what}")
                    buffer = self._buffers.get(fd, b"") + chunk
                    line, newline, rest = buffer.partition(b"\n")
                    if not newline:
                        self._buffers[fd] = buffer
                        continue
                    self._buffers[fd] = rest
                    try:
                        replies[index] = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise self.error(index, f"sent a broken {what} ({exc})") from exc
                    selector.unregister(fd)
                    del pending[fd]
        return replies

    def wait(self, deadline: float) -> None:
        """Wait until every worker exited, or ``deadline``; then :meth:`close`."""
        self.end_input()
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.close()

    def close(self) -> None:
        """EOF to every worker, ``exit_grace`` seconds to exit, then SIGKILL (by PID) for
        the ones still running, counted in ``killed``; reap them all. Idempotent."""
        self.end_input()
        deadline = time.monotonic() + self._exit_grace
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.kill()  # ends a SIGSTOPped process too
                self.killed += 1
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_REAP_WAIT)
            if proc.stdout is not None:
                proc.stdout.close()

    def exit_codes(self) -> list[int | None]:
        return [proc.poll() for proc in self._procs]

    def log_tail(self, index: int, lines: int = 20) -> str:
        """The last ``lines`` lines of worker ``index``'s log ("" if it has none)."""
        try:
            text = self._logs[index].read_text(encoding="utf-8", errors="replace")
        except (OSError, IndexError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def error(self, index: int, what: str, kind: type[WorkerError] = WorkerError) -> WorkerError:
        """A ``kind`` saying what worker ``index`` did, with the end of its log."""
        tail = self.log_tail(index, 5).splitlines()
        detail = f"; its log ends with: {' | '.join(tail)}" if tail else ""
        return kind(f"worker {index} (pid {self._procs[index].pid}): {what}{detail}")

    def _fd(self, index: int) -> int:
        stdout = self._procs[index].stdout
        assert stdout is not None
        return stdout.fileno()
