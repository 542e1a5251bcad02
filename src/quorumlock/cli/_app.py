"""The parser of every command, and the one place where errors become exit statuses."""

from __future__ import annotations

import argparse
import io
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from types import ModuleType

import quorumlock
from quorumlock._exceptions import ConfigurationError, QuorumLockError
from quorumlock.cli import (
    _bench,
    _demo,
    _doctor,
    _leader,
    _run,
    _servers_cmd,
    _status,
    _verify,
)
from quorumlock.cli._common import (
    EXIT_ERROR,
    EXIT_USAGE,
    CliError,
    Interrupted,
    Parser,
    interrupting,
    one_line,
    scrub,
    setup_logging,
)
from quorumlock.testing._servers import ends_like_default

__all__ = ["build_parser", "main"]

_COMMANDS: tuple[ModuleType, ...] = (
    _demo,
    _run,
    _status,
    _leader,
    _doctor,
    _servers_cmd,
    _bench,
    _verify,
)

_DESCRIPTION = """\
quorumlock: distributed locks over N independent Redis/Valkey servers (Redlock).

Servers come from --servers URL,URL,... or $QUORUMLOCK_SERVERS (redis://, rediss://
for TLS, unix://, or valkey-py's valkey:// and valkeys://; user:password@ for ACL, or
--password-file). Passwords are never printed. Run 'quorumlock COMMAND --help' for a
command's options and examples.
"""

_EPILOG = """\
examples:
  quorumlock demo
  eval "$(quorumlock servers start --count 3 | tail -n 1)"
  quorumlock run nightly-report --ttl 30 -- ./report.sh --full
  quorumlock status nightly-report
  quorumlock leader scheduler
  quorumlock doctor --json

exit statuses: 0 success, 1 failure (a check failed, servers unreachable), 2 bad input,
128+N when signal N stopped it (143 SIGTERM, 129 SIGHUP, 130 Ctrl-C), what it started
stopped too; 'quorumlock run' exits with its command's status (see 'quorumlock run --help').
"""


def build_parser() -> Parser:
    parser = Parser(prog="quorumlock", description=_DESCRIPTION, epilog=_EPILOG)
    parser.add_argument(
        "--version", action="version", version=f"quorumlock {quorumlock.__version__}"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for command in _COMMANDS:
        sub = command.add_parser(subparsers)
        if command is not _servers_cmd:  # its actions have their own --debug
            sub.add_argument(
                "--debug", action="store_true", help="log every round, show tracebacks of errors"
            )
    return parser


def _own_option(word: str) -> bool:
    """Whether ``word`` is an option of ``quorumlock`` itself (before a command):
    ``-h``, ``--help``, ``--version``, or what argparse takes for one of the last two
    (``--vers``)."""
    return word == "-h" or (len(word) > 2 and any(o.startswith(word) for o in _OWN_OPTIONS))


#: The long options ``quorumlock`` itself takes, before a command.
_OWN_OPTIONS = ("--help", "--version")


def _split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``run`` takes its command after ``--``: split it off before argparse sees it."""
    if "--" not in argv:
        return argv, None
    index = argv.index("--")
    return argv[:index], argv[index + 1 :]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    options, command = _split_command(list(sys.argv[1:] if argv is None else argv))
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A line as soon as it is written, also into a pipe or a file (`demo | tee`, a
        # CI log): Python holds a pipe's output back until 8 KiB or the exit. And what
        # the output's encoding cannot carry (the tables' "…" and "±", a lock name, in
        # an ASCII or Latin-1 locale) is written as a backslash escape, as on stderr,
        # not an error after half a table.
        sys.stdout.reconfigure(line_buffering=True, errors="backslashreplace")
    debug = False
    setup_logging(debug)
    try:
        if options and options[0].startswith("-") and not _own_option(options[0]):
            # argparse would say that COMMAND is missing, not what is wrong
            raise CliError(
                f"unrecognized arguments: {options[0]} (options go after the command: "
                "quorumlock COMMAND [options]; see: quorumlock --help)",
                EXIT_USAGE,
            )
        args, extras = build_parser().parse_known_args(options)
        # Only a --debug that the command took: one in the wrong place is refused below
        # and turns nothing on.
        debug = bool(getattr(args, "debug", False))
        setup_logging(debug)
        if extras:
            if args.command == "run" and command is None:
                raise CliError(
                    "missing '--' before the command: "
                    "quorumlock run NAME [options] -- CMD [ARGS...]",
                    EXIT_USAGE,
                )
            where = " ".join(w for w in (args.command, getattr(args, "action", None)) if w)
            raise CliError(
                f"unrecognized arguments: {' '.join(extras)} (see: quorumlock {where} --help)",
                EXIT_USAGE,
            )
        if command is not None and args.command != "run":
            raise CliError(f"{args.command} takes no command after '--'", EXIT_USAGE)
        args.child_command = command
        handler: Callable[[argparse.Namespace], int] = args.handler
        with _terminating() as received:
            status = handler(args)
        if received:  # its exception was dropped (see _terminating): the command ran on
            raise Interrupted(received[0])
        return status
    except CliError as exc:
        return _fail(str(exc), exc.code, debug)
    except ConfigurationError as exc:
        return _fail(str(exc), EXIT_USAGE, debug)
    except QuorumLockError as exc:
        return _fail(str(exc), EXIT_ERROR, debug)
    except Interrupted as exc:
        name = signal.Signals(exc.signum).name
        return _fail(f"interrupted by {name}", 128 + exc.signum, debug)
    except KeyboardInterrupt:
        _fail("interrupted", 130, debug)
        return 130
    except OSError as exc:
        return _fail(f"{type(exc).__name__}: {exc}", EXIT_ERROR, debug)
    except Exception as exc:  # a bug: still one line, the traceback with --debug
        hint = "" if debug else " (run with --debug for the traceback)"
        return _fail(f"internal error: {type(exc).__name__}: {exc}{hint}", EXIT_ERROR, debug)


def _terminating() -> AbstractContextManager[list[int]]:
    """SIGTERM and SIGHUP stop a command as Ctrl-C does (:func:`interrupting`), so that
    its clean-up runs (the servers and workers that ``verify`` and ``bench`` start are
    stopped, not left running), and it exits with 128 + N. A command that needs more
    installs its own handlers over these (``run``, ``demo``, ``servers start``). A signal
    ignored when the command started (``nohup``) stays ignored; one that the local
    servers' kit handles (which would only stop its servers and end the process) is
    handled here instead.

    Its block gets the list of the signals received: where Python dropped the exception
    (raised in an object's finaliser), the command goes on to its end, and :func:`main`
    reports the signal all the same."""
    return interrupting((signal.SIGTERM, signal.SIGHUP), replaces=ends_like_default)


def _fail(message: str, code: int, debug: bool) -> int:
    if debug:
        sys.stderr.write(scrub(traceback.format_exc()))
    print(f"quorumlock: error: {scrub(one_line(message))}", file=sys.stderr, flush=True)
    return code
