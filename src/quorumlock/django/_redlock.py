"""The process's Redlock, built from ``settings.QUORUMLOCK`` on first use."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from quorumlock._exceptions import ConfigurationError
from quorumlock._integration import RedlockOptions, redlock_option_names
from quorumlock._io.servers import ServerArg
from quorumlock._sync import Redlock

__all__ = ["build_redlock", "close_redlock", "get_redlock", "redlock_settings"]

SETTING = "QUORUMLOCK"

_guard = threading.Lock()
_current: tuple[int, Redlock] | None = None  # (pid of the process that built it, it)


def redlock_settings() -> tuple[Sequence[ServerArg], RedlockOptions]:
    """The servers and options of ``settings.QUORUMLOCK``, checked.

    ``{"SERVERS": [...], "MAX_TTL": 60, "FENCING": True, ...}``: every other key is a
    keyword option of :class:`quorumlock.Redlock` in upper case. Raises
    ``ImproperlyConfigured`` for a missing setting, a missing ``SERVERS`` or an unknown
    key (the types and values are checked by ``Redlock`` itself).
    """
    raw = getattr(settings, SETTING, None)
    if raw is None:
        raise ImproperlyConfigured(
            f'settings.{SETTING} is not set: {SETTING} = {{"SERVERS": ["redis://...", ...]}}'
        )
    if not isinstance(raw, dict):
        raise ImproperlyConfigured(f"settings.{SETTING} must be a dict, not {type(raw).__name__}")
    known = redlock_option_names()
    options: dict[str, Any] = {}
    servers: Any = None
    for key, value in raw.items():
        if key == "SERVERS":
            servers = value
        elif isinstance(key, str) and key.lower() in known and key.isupper():
            options[key.lower()] = value
        else:
            hint = f" (did you mean {key.upper()!r}?)" if str(key).lower() in known else ""
            allowed = ", ".join(["SERVERS", *sorted(k.upper() for k in known)])
            raise ImproperlyConfigured(
                f"settings.{SETTING} has an unknown key {key!r}{hint}; the keys are {allowed}"
            )
    if servers is None:
        raise ImproperlyConfigured(f'settings.{SETTING} has no "SERVERS" list')
    if isinstance(servers, str):
        servers = [servers]
    return servers, options  # type: ignore[return-value]


def build_redlock() -> Redlock:
    """A new Redlock from the settings (``ImproperlyConfigured`` for bad ones)."""
    servers, options = redlock_settings()
    try:
        return Redlock(servers, **options)
    except (ConfigurationError, TypeError) as exc:
        raise ImproperlyConfigured(f"settings.{SETTING}: {exc}") from None


def get_redlock() -> Redlock:
    """The process's :class:`quorumlock.Redlock`, built from the settings on first use.

    Shared by every thread. A forked child (a pre-forking server's worker) builds its
    own on first use: connections are never shared across a fork.
    """
    global _current
    current = _current
    pid = os.getpid()
    if current is not None and current[0] == pid:
        return current[1]
    with _guard:
        if _current is None or _current[0] != pid:
            _current = (pid, build_redlock())
        return _current[1]


def close_redlock() -> None:
    """Close the process's Redlock (its connections); the next use builds a new one.

    Called at interpreter exit, and when a test changes ``settings.QUORUMLOCK``.
    """
    global _current
    with _guard:
        current, _current = _current, None
    if current is not None and current[0] == os.getpid():
        current[1].close()


def _forget_after_fork() -> None:
    # The parent's Redlock and its connections stay the parent's: dropped, not closed
    # (closing would shut sockets the parent still uses). A new guard, too: another
    # thread may have held the old one at the fork.
    global _current, _guard
    _current = None
    _guard = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(close_redlock)


@receiver(setting_changed)
def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == SETTING:
        close_redlock()
