"""``quorumlock run NAME -- CMD``: run a command while holding a lock, like flock(1).

The lock is a lease: it is acquired with ``--ttl`` and extended in the background for as
long as the command runs (``auto_extend=True, max_hold=inf``). If an extension fails and
the lock is lost, the command must stop at once, because someone else may now hold the
lock: it gets SIGTERM, then SIGKILL after ``--grace`` seconds, and ``run`` exits with
:data:`EXIT_LOST` whatever the command's own status was.

Timeline of a loss (ttl 30 s, extensions every ~10 s)::

    t=0      acquire, validity 29.7 s; CMD starts
    t=10     extension confirmed by a majority: validity 29.7 s again
    t=20     extension fails (servers partitioned away); retried while validity lasts
    t=49.7   validity gone, lock.lost is set: SIGTERM to CMD's process group
    t=59.7   CMD still running after --grace 10 s: SIGKILL; exit status 124

If ``run`` itself dies without a chance to clean up (SIGKILL, the OOM killer), CMD must
not go on unprotected while the lock runs out and someone else takes it. Two guards, see
docs/cli.md ("If run is killed"):

- On Linux CMD is started with ``PR_SET_PDEATHSIG`` = SIGKILL: the kernel kills it when
  the thread that started it ends. That thread is the one that supervises CMD, and it
  does not leave :func:`_supervise` while CMD runs.
- When CMD has its own process group (stdin not a terminal), a watchdog (``sh``) leads
  that group and CMD joins it. The watchdog holds the read end of a pipe whose only
  write end is ``run``'s: when ``run`` ends, however it ends, the watchdog reads EOF and
  SIGKILLs the whole group, CMD's children included. When CMD ends normally, ``run``
  writes a line first and the watchdog exits quietly, leaving the group alone. The
  watchdog being the group leader keeps the group id from being reused while it waits.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, Final

from quorumlock._algorithm.config import MAX_TTL_SECONDS
from quorumlock._algorithm.semaphore import MAX_PERMITS
from quorumlock._exceptions import LockLost, QuorumLockError, QuorumUnavailable
from quorumlock.cli._common import (
    EXIT_USAGE,
    INTERRUPTING,
    MAX_TIMEOUT,
    CliError,
    Interrupted,
    Parser,
    add_server_options,
    count,
    interrupting,
    lock_name,
    lock_names,
    make_redlock,
    one_line,
    positive,
    resolve_servers,
    say,
)

__all__ = [
    "EXIT_CANNOT_EXECUTE",
    "EXIT_LOST",
    "EXIT_NOT_ACQUIRED",
    "EXIT_NOT_FOUND",
    "EXIT_UNAVAILABLE",
    "add_parser",
]

EXIT_UNAVAILABLE: Final = 69  # sysexits EX_UNAVAILABLE: too few servers usable
EXIT_NOT_ACQUIRED: Final = 75  # sysexits EX_TEMPFAIL: someone else held the lock
EXIT_LOST: Final = 124  # the lock was lost while the command ran (as timeout(1): killed)
EXIT_CANNOT_EXECUTE: Final = 126  # as a shell: the command is not executable
EXIT_NOT_FOUND: Final = 127  # as a shell: the command was not found

FENCING_ENV: Final = "QUORUMLOCK_FENCING_TOKEN"
SLOT_ENV: Final = "QUORUMLOCK_PERMIT_SLOT"
_POLL: Final = 0.05  # how often the command and the lease are looked at
_PR_SET_PDEATHSIG: Final = 1  # from <linux/prctl.h>
# The watchdog ignores the signals run forwards to the group (it must outlive a SIGTERM
# that CMD survives); a line on stdin dismisses it; EOF (run is gone) kills the group.
_WATCHDOG: Final = "trap '' TERM HUP INT; if read -r _; then exit 0; fi; kill -KILL 0"

_EPILOG = f"""\
The lock is acquired (waiting up to --wait seconds), kept alive in the background while
CMD runs (extended well before its ttl runs out), and released when CMD exits. Nothing
is printed on success: run exits with CMD's status (128+N if CMD died of signal N).

If the lock is lost while CMD runs (a majority of the servers stopped confirming the
extensions), CMD is sent SIGTERM, then SIGKILL after --grace seconds. CMD runs in its
own process group (when stdin is not a terminal), so its children are signalled too.
If quorumlock itself is killed (even by SIGKILL), CMD and its process group are killed
at once (see docs/cli.md, "If run is killed", for what escapes).
SIGTERM, SIGHUP and SIGINT sent to quorumlock are passed on to CMD, and the lock is
released once CMD exits; while quorumlock waits for the lock, they stop the wait (what
the servers granted is deleted, CMD is not run, the exit status is 128+N). With
--fencing, CMD finds its fencing token (an integer that grows with every acquisition of
NAME) in ${FENCING_ENV}.

With --permits K, NAME is a counting semaphore instead: CMD runs under one of its K
permits, so that at most K commands run at once across machines (every client of NAME
should pass the same K); CMD finds which permit (0 to K-1) in ${SLOT_ENV}.

exit statuses:
  0-255  CMD's own status (128+N: CMD was killed by signal N, or N stopped the wait)
  2      bad input: a missing '--', an empty NAME, a malformed URL, a bad option
  {EXIT_UNAVAILABLE}     too few servers reachable to form a majority (nothing was run)
  {EXIT_NOT_ACQUIRED}     NAME (or all K permits) was held by others all of --wait (nothing run)
  {EXIT_LOST}    the lock was lost while CMD ran: CMD was terminated
  {EXIT_CANNOT_EXECUTE}    CMD could not be executed; {EXIT_NOT_FOUND}: CMD was not found

With --read or --write, NAME is a read-write lock (docs/algorithm.md, "Read-write
locks"): any number of --read runs at once, or one --write run; a waiting --write run
keeps new --read runs out. It is a lock apart from the plain lock NAME.

examples:
  quorumlock run nightly-report -- ./report.sh --full
  quorumlock run --read catalog -- ./export.sh      # many at once, never during --write
  quorumlock run db-migrate --wait 0 -- alembic upgrade head    # skip if it is running
  quorumlock run --permits 4 exports -- ./export.sh    # at most 4 at once
  quorumlock run deploy --ttl 60 --wait 300 --fencing -- sh -c 'deploy --fence "${FENCING_ENV}"'
  QUORUMLOCK_SERVERS=redis://a:6379,redis://b:6379,redis://c:6379 quorumlock run job -- ./job
"""


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "run",
        help="run a command while holding a lock, like flock(1) across machines",
        description="Run CMD while holding the lock NAME on a majority of the servers.",
        usage="quorumlock run NAME[,NAME...] [--read | --write | --permits K] [--ttl S] "
        "[--wait S] [--servers URLS] [options] -- CMD [ARGS...]",
        epilog=_EPILOG,
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        type=lock_names,
        help="the lock (its key); several names separated by commas (a,b,c) are locked "
        "all together or not at all",
    )
    parser.add_argument(
        "--ttl",
        metavar="S",
        type=positive("--ttl", maximum=MAX_TTL_SECONDS),
        default=30.0,
        help="lease time in seconds, renewed while CMD runs (default 30); another client "
        "can take the lock at most this long after this machine stops renewing it",
    )
    parser.add_argument(
        "--wait",
        metavar="S",
        type=positive("--wait", allow_zero=True),
        default=None,
        help="wait at most S seconds for the lock while others hold it (default: no limit; "
        "0: try once); servers that do not answer are given up to --timeout first",
    )
    parser.add_argument(
        "--grace",
        metavar="S",
        type=positive("--grace", allow_zero=True, maximum=MAX_TIMEOUT),
        default=10.0,
        help="after a lost lock, seconds between SIGTERM and SIGKILL (default 10)",
    )
    parser.add_argument(
        "--fencing",
        action="store_true",
        help=f"issue a fencing token, passed to CMD as ${FENCING_ENV}",
    )
    parser.add_argument(
        "--max-ttl",
        metavar="S",
        type=positive("--max-ttl", maximum=MAX_TTL_SECONDS),
        default=60.0,
        help="the longest ttl any client uses: a restarted server is kept out of quorums "
        "this long (default 60; --ttl must not exceed it)",
    )
    shared = parser.add_mutually_exclusive_group()
    shared.add_argument(
        "--read",
        action="store_true",
        help="hold NAME's read-write lock for reading: shared with other --read runs, "
        "exclusive of --write runs (a lock apart from the plain lock NAME)",
    )
    shared.add_argument(
        "--write",
        action="store_true",
        help="hold NAME's read-write lock for writing: exclusive of --read and --write runs",
    )
    shared.add_argument(
        "--permits",
        metavar="K",
        type=count("--permits", 1, MAX_PERMITS),
        default=None,
        help=f"run under one of K permits of the counting semaphore NAME (at most K "
        f"commands at once; 1 to {MAX_PERMITS}); the permit's number is in ${SLOT_ENV}",
    )
    add_server_options(
        parser,
        timeout_help="seconds to wait to connect to a server, and for too few usable servers "
        "before exit 69; a reply is waited for 0.5 %% of --ttl, within [20, 250] ms",
    )
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    command: list[str] | None = args.child_command
    if command is None:
        raise CliError(
            "missing '--' before the command: quorumlock run NAME [options] -- CMD [ARGS...]",
            EXIT_USAGE,
        )
    if not command:
        raise CliError("no command after '--'", EXIT_USAGE)
    if args.ttl > args.max_ttl:
        raise CliError(
            f"--ttl {args.ttl:g} exceeds --max-ttl {args.max_ttl:g}: raise --max-ttl "
            "(the quarantine of a restarted server) to at least the ttl",
            EXIT_USAGE,
        )
    names = _names(args.name)
    if args.read and args.fencing:
        raise CliError(
            "--fencing issues tokens to writers only: a --read run draws none", EXIT_USAGE
        )
    if (args.read or args.write or args.permits is not None) and len(names) > 1:
        flag = "--read" if args.read else "--write" if args.write else "--permits"
        raise CliError(f"{flag} takes one NAME, not a list: {args.name!r}", EXIT_USAGE)
    servers = resolve_servers(args)
    assert servers is not None
    lost_reason: list[str] = []

    def on_lost(lock: Any) -> None:
        lost_reason.append(_loss_reason(lock))

    with make_redlock(
        servers, max_ttl=args.max_ttl, fencing=args.fencing, connect_timeout=args.timeout
    ) as redlock:
        options: dict[str, Any] = {
            "ttl": args.ttl,
            "auto_extend": True,
            "max_hold": math.inf,
            "on_lost": on_lost,
        }
        lock: Any
        if args.read or args.write:
            rw = redlock.rwlock(names[0], **options)
            lock = rw.read() if args.read else rw.write()
        elif args.permits is not None:
            lock = redlock.semaphore(names[0], permits=args.permits, **options)
        elif len(names) == 1:
            lock = redlock.lock(names[0], **options)
        else:  # every name or none (docs/algorithm.md, "Multi-resource lock")
            lock = redlock.lock_many(names, **options)
        # From the wait to the end: a signal that is not passed on to CMD (while waiting,
        # or between the acquire and CMD's start) stops run through its clean-up.
        acquired = False
        with interrupting() as received:
            try:
                acquired = _acquire(lock, args.wait, args.timeout, received)
                if not acquired:
                    waited = "" if args.wait == 0 else f" (waited {args.wait:g} s)"
                    held = (
                        f"all {args.permits} permits of {args.name!r} are held by others"
                        if args.permits is not None
                        else f"lock {args.name!r} is held by someone else"
                        if len(names) == 1
                        else f"one or more of the locks {', '.join(map(repr, names))} is held "
                        "by someone else"
                    )
                    say(f"quorumlock: {held}{waited}", err=True)
                    return EXIT_NOT_ACQUIRED
                return _supervise(lock, command, args, lost_reason, received)
            finally:
                # (held: a signal came as the acquire returned, before ``acquired`` was set)
                if acquired or lock.held:
                    lock.release()  # R9, also after a loss; never raises for unreachable servers


def _names(text: str) -> list[str]:
    """NAME, or the names of ``a,b,c``: each non-empty, without white space around it
    (a list written ``a, b`` would lock the key " b", a name read from a file with its
    newline another key), none twice (a usage error)."""
    names = text.split(",")
    if len(names) == 1:
        try:
            lock_name(text)
        except argparse.ArgumentTypeError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    else:
        if not all(names):
            raise CliError(f"an empty name in {text!r}: write names as a,b,c", EXIT_USAGE)
        spaced = next((n for n in names if n != n.strip()), None)
        if spaced is not None:
            raise CliError(
                f"the name {spaced!r} in {text!r} has spaces around it: write names as a,b,c",
                EXIT_USAGE,
            )
        if len(set(names)) < len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise CliError(f"the name {twice!r} is given twice in {text!r}", EXIT_USAGE)
    return names


def _acquire(
    lock: Any, wait: float | None, connect_timeout: float, received: Sequence[int]
) -> bool:
    """Acquire within ``wait`` seconds (None: no limit; 0: one try); then, where a
    signal came (``received``, see :func:`interrupting`) whose exception Python dropped
    (raised in an object's finaliser, ``__del__``, as the acquire went on),
    :class:`Interrupted` all the same: the caller releases what was taken.

    Servers that cannot be used are an error (:data:`EXIT_UNAVAILABLE`) rather than a
    silent wait, but only once they had ``connect_timeout`` to come up: a first round
    can find every connection still being set up (its per-server timeout is a small
    share of the ttl), and those connections are ready for the next round.

    SIGTERM, SIGHUP and SIGINT while waiting interrupt the acquire as Ctrl-C does (under
    :func:`interrupting`), so that the keys already granted (the lock's on a minority,
    the place in the queue of waiters) are deleted before the process ends with 128+N.
    """
    acquired = _take(lock, wait, connect_timeout)
    if received:
        raise Interrupted(received[0])
    return acquired


def _take(lock: Any, wait: float | None, connect_timeout: float) -> bool:
    began = time.monotonic()
    try:
        while True:
            try:
                if lock.acquire(blocking=False):
                    return True
                break  # held by someone else
            except QuorumUnavailable as exc:
                if time.monotonic() - began >= connect_timeout:
                    raise CliError(one_line(str(exc)), EXIT_UNAVAILABLE) from None
                time.sleep(_POLL)
        if wait == 0:
            return False
        left = None if wait is None else max(0.0, wait - (time.monotonic() - began))
        return bool(lock.acquire(blocking=True, timeout=left))
    except QuorumUnavailable as exc:
        raise CliError(one_line(str(exc)), EXIT_UNAVAILABLE) from None


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass


def _supervise(
    lock: Any,
    command: list[str],
    args: argparse.Namespace,
    lost: list[str],
    received: Sequence[int],
) -> int:
    """Run CMD while the lock is held. ``received``: the signals :func:`interrupting`
    saw; one whose exception was dropped (raised in a finaliser) after the caller last
    looked is passed on to CMD as one that comes now would be."""
    own_group = not _stdin_is_terminal()
    spawned: list[subprocess.Popen[bytes]] = []
    group = 0
    pending: list[int] = []  # signals that came before CMD existed: passed on once it does

    def signal_child(signum: int) -> None:
        if not spawned or spawned[0].poll() is not None:
            return
        try:
            if own_group:
                os.killpg(group, signum)
            else:
                spawned[0].send_signal(signum)
        except ProcessLookupError:
            pass

    def forward(signum: int, frame: FrameType | None) -> None:
        if spawned:
            signal_child(signum)
        else:
            pending.append(signum)

    previous: dict[int, Any] = {}
    # Installed before anything is spawned: a SIGTERM between the acquire and CMD's start
    # must reach CMD (or stop it from being run), not end run with the lock held.
    if threading.current_thread() is threading.main_thread():
        for signum in INTERRUPTING:
            handler: Callable[[int, FrameType | None], Any] | int = forward
            if signum == signal.SIGINT and not own_group:
                # With a terminal, CMD shares our process group: Ctrl-C reaches it
                # directly, and run must only survive it. Not with SIG_IGN, which CMD
                # would inherit through exec (a handler is reset to the default there),
                # unless SIGINT was ignored already (a script's `cmd &`).
                ignored = signal.getsignal(signum) == signal.SIG_IGN
                handler = signal.SIG_IGN if ignored else _ignore
            previous[signum] = signal.signal(signum, handler)
    # From here on ``forward`` sees every signal; one that came since the caller looked
    # (its exception dropped) is handled as if it came now.
    for signum in received:
        if signal.getsignal(signum) is forward:
            forward(signum, None)
    watchdog: _Watchdog | None = None
    try:
        env = dict(os.environ)
        token = getattr(lock, "fencing_token", None)
        if token is not None:
            env[FENCING_ENV] = str(token)
        slot = getattr(lock, "slot", None)
        if slot is not None:
            env[SLOT_ENV] = str(slot)
        watchdog = _Watchdog.start() if own_group else None
        child = _spawn(command, env, own_group, None if watchdog is None else watchdog.pid)
        group = child.pid if watchdog is None else watchdog.pid
        spawned.append(child)
        for signum in pending:
            signal_child(signum)
        while True:
            if child.poll() is not None:
                break
            if lock.lost.wait(_POLL):
                return _stop_after_loss(child, signal_child, args, lost, lock)
        status = _status_of(child.returncode)
        if lock.lost.is_set():  # lost as CMD ended: its work may not have been covered
            say(
                f"quorumlock: lock {args.name!r} was lost as the command ended "
                f"({_reason(lost, lock)}); the command's status was {status}",
                err=True,
            )
            return EXIT_LOST
        return status
    finally:
        # CMD ended (or never ran): what is left is the release, short and owed. A
        # signal now must not turn CMD's status into an interruption (a caller would
        # run again a job that is done): it is dropped, and run ends once the lock is
        # released (interrupting puts the original handlers back then).
        for signum in previous:
            signal.signal(signum, _ignore)
        if watchdog is not None:
            watchdog.dismiss()


def _spawn(
    command: list[str], env: dict[str, str], own_group: bool, group: int | None
) -> subprocess.Popen[bytes]:
    """Start CMD: in ``group`` (a new group of its own if None) when ``own_group``."""
    if not command[0]:  # as a shell says of '' (the system's answer would be 126)
        raise CliError("command not found: '' (an empty command name)", EXIT_NOT_FOUND)
    try:
        return subprocess.Popen(
            command,
            env=env,
            process_group=(group or 0) if own_group else None,
            # Safe with the lease's threads: it takes no lock a thread could hold at
            # fork (two system calls, a prepared ctypes function).
            preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509
        )
    except FileNotFoundError:
        raise CliError(f"command not found: {command[0]}", EXIT_NOT_FOUND) from None
    except PermissionError:
        raise CliError(f"command not executable: {command[0]}", EXIT_CANNOT_EXECUTE) from None
    except OSError as exc:
        raise CliError(f"cannot run {command[0]}: {exc.strerror}", EXIT_CANNOT_EXECUTE) from None


def _stop_after_loss(
    child: subprocess.Popen[bytes],
    signal_child: Callable[[int], None],
    args: argparse.Namespace,
    lost: list[str],
    lock: Any,
) -> int:
    say(
        f"quorumlock: the lock was lost: {_reason(lost, lock)}: "
        f"sending SIGTERM to the command (pid {child.pid})",
        err=True,
    )
    signal_child(signal.SIGTERM)
    deadline = time.monotonic() + args.grace
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(_POLL)
    if child.poll() is None:
        say(
            f"quorumlock: the command ignored SIGTERM for {args.grace:g} s: sending SIGKILL",
            err=True,
        )
        signal_child(signal.SIGKILL)
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            say(f"quorumlock: pid {child.pid} survived SIGKILL for 10 s", err=True)
    return EXIT_LOST


def _status_of(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _loss_reason(lock: Any) -> str:
    """The library's own account of the loss: the text of the ``LockLost`` that
    ``check()`` raises once a loss is known (a failed renewal and each server's answer,
    or a validity that ran out, and why)."""
    try:
        lock.check()
    except LockLost as exc:
        return str(exc)
    except QuorumLockError:
        pass
    return f"lock {lock.name!r}: its validity ran out"


def _reason(lost: list[str], lock: Any) -> str:
    """Why ``lock`` was lost: as its ``on_lost`` said, or, before that callback ran (on
    a thread of its own), as it will say."""
    return lost[0] if lost else _loss_reason(lock)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and os.isatty(sys.stdin.fileno())
    except (OSError, ValueError):
        return False


class _Watchdog:
    """The leader of CMD's process group, which SIGKILLs the group if ``run`` vanishes."""

    def __init__(self, proc: subprocess.Popen[bytes], write_end: int) -> None:
        self._proc = proc
        self._write_end: int | None = write_end
        self.pid = proc.pid

    @classmethod
    def start(cls) -> _Watchdog | None:
        """Start it in a new process group of its own; None where that fails (no sh)."""
        read_end, write_end = os.pipe()  # both close-on-exec: no other child inherits them
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", _WATCHDOG],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                process_group=0,
            )
        except OSError:
            os.close(write_end)
            return None
        finally:
            os.close(read_end)
        return cls(proc, write_end)

    def dismiss(self) -> None:
        """CMD ended (or never started): let the watchdog exit without killing anyone."""
        if self._write_end is None:
            return
        with contextlib.suppress(OSError):  # it is gone already (killed with the group)
            os.write(self._write_end, b"done\n")
        os.close(self._write_end)
        self._write_end = None
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5)


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the kernel SIGKILL CMD when ``run`` ends (Linux).

    ``PR_SET_PDEATHSIG`` follows the thread that forked, which is the supervising one
    (it stays until CMD ends). It survives ``execve`` except into a set-user-ID or
    set-group-ID program, and CMD's own children do not inherit it (the watchdog covers
    them). None where ``prctl`` does not exist.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    signum = int(signal.SIGKILL)

    def setup() -> None:  # in the child between fork and exec: two system calls, no locks
        prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # run died before prctl took effect
            os.kill(os.getpid(), signum)

    return setup
