"""``manage.py locked NAME [options] -- COMMAND [ARGS...]``: run a management command while
holding a lock, as ``quorumlock run`` runs any program (docs/django.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from quorumlock._algorithm.config import validate_name
from quorumlock._exceptions import ConfigurationError
from quorumlock.cli._common import EXIT_USAGE, CliError, Interrupted, interrupting
from quorumlock.cli._run import (
    EXIT_LOST,
    EXIT_NOT_ACQUIRED,
    EXIT_UNAVAILABLE,
    _acquire,
    _loss_reason,
    _supervise,
)
from quorumlock.django._redlock import get_redlock


def _seconds(what: str, *, allow_zero: bool = False) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number of seconds") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{what} must be > 0{' or 0' if allow_zero else ''}")
        return value

    return parse


class Command(BaseCommand):
    help = (
        "Run a management command while holding the lock NAME on a majority of the "
        "servers of settings.QUORUMLOCK: manage.py locked NAME -- migrate. The command "
        "runs in a child process; the lock is renewed while it runs and released when it "
        "ends. Exit statuses as 'quorumlock run': the command's own; "
        f"{EXIT_NOT_ACQUIRED} the lock was held by someone else for all of --wait (the "
        f"command did not run); {EXIT_UNAVAILABLE} too few servers usable; {EXIT_LOST} "
        "the lock was lost while the command ran (it got SIGTERM, then SIGKILL after "
        "--grace); 2 bad input."
    )
    requires_system_checks = ()  # the command run under the lock makes its own

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.usage = (
            f"{prog_name} {subcommand} NAME [--ttl S] [--wait S] [--grace S] -- COMMAND [ARGS...]"
        )
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("lock_name", metavar="NAME", help="the lock (its key)")
        parser.add_argument(
            "--ttl",
            metavar="S",
            type=_seconds("--ttl"),
            default=30.0,
            help="lease time in seconds, renewed while the command runs (default 30)",
        )
        parser.add_argument(
            "--wait",
            metavar="S",
            type=_seconds("--wait", allow_zero=True),
            default=None,
            help="wait at most S seconds for the lock (default: no limit; 0: try once)",
        )
        parser.add_argument(
            "--grace",
            metavar="S",
            type=_seconds("--grace", allow_zero=True),
            default=10.0,
            help="after a lost lock, seconds between SIGTERM and SIGKILL (default 10)",
        )

    def run_from_argv(self, argv: list[str]) -> None:
        # Split at the first '--' before argparse sees it: what follows is the command
        # and its own options, for the child's parser.
        if "--" in argv:
            at = argv.index("--")
            self._child: list[str] | None = argv[at + 1 :]
            argv = argv[:at]
        else:
            self._child = None
        super().run_from_argv(argv)

    def handle(self, *args: Any, **options: Any) -> None:
        child = getattr(self, "_child", None)
        if child is None:
            raise CommandError(
                "missing '--' before the command: manage.py locked NAME [options] -- "
                "COMMAND [ARGS...]",
                returncode=EXIT_USAGE,
            )
        if not child:
            raise CommandError(
                "no command after '--'",
                returncode=EXIT_USAGE,
            )
        name = options["lock_name"]
        lost: list[str] = []
        try:
            validate_name(name)
            redlock = get_redlock()
            lock = redlock.lock(
                name,
                ttl=options["ttl"],
                auto_extend=True,
                max_hold=math.inf,
                on_lost=lambda lock: lost.append(_loss_reason(lock)),
            )
        except (ConfigurationError, ImproperlyConfigured) as exc:
            # A bad settings.QUORUMLOCK too: this command skips the system checks (E001).
            raise CommandError(str(exc), returncode=EXIT_USAGE) from None
        # As quorumlock run: a signal while waiting (or before the command starts) stops
        # this process through its clean-up, no key of the lock left, with 128+N.
        acquired = False
        try:
            with interrupting() as received:
                try:
                    timeout = redlock.config.connect_timeout
                    acquired = _acquire(lock, options["wait"], timeout, received)
                    if not acquired:
                        waited = "" if options["wait"] == 0 else f" (waited {options['wait']:g} s)"
                        raise CommandError(
                            f"lock {name!r} is held by someone else{waited}",
                            returncode=EXIT_NOT_ACQUIRED,
                        )
                    run = argparse.Namespace(name=name, grace=options["grace"])
                    with _child_environment():
                        command = [sys.executable, "-m", "django", *child]
                        status = _supervise(lock, command, run, lost, received)
                finally:
                    if acquired or lock.held:  # (held: a signal as the acquire returned)
                        lock.release()
        except CliError as exc:
            raise CommandError(str(exc), returncode=exc.code) from None
        except Interrupted as exc:
            raise CommandError(
                f"interrupted by {signal.Signals(exc.signum).name}", returncode=128 + exc.signum
            ) from None
        if status:
            sys.exit(status)


@contextlib.contextmanager
def _child_environment() -> Iterator[None]:
    """``python -m django`` in the child finds this process's settings and modules."""
    saved = {key: os.environ.get(key) for key in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH")}
    module = saved["DJANGO_SETTINGS_MODULE"] or getattr(settings, "SETTINGS_MODULE", None)
    if module:
        os.environ["DJANGO_SETTINGS_MODULE"] = module
    paths = [path or os.getcwd() for path in sys.path]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
