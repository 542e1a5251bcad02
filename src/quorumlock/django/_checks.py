"""System checks: the settings (always), and the doctor's quick audit of the servers
(``manage.py check --deploy``), see docs/django.md ("System checks")."""

from __future__ import annotations

from typing import Any, Final

from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured

from quorumlock._algorithm.arithmetic import default_instance_timeout
from quorumlock._io.servers import parse_servers
from quorumlock.cli._common import Servers
from quorumlock.cli._doctor import audit
from quorumlock.django._redlock import SETTING, build_redlock, redlock_settings

__all__ = ["CHECK_IDS", "check_servers", "check_settings"]

# The doctor's checks, each with its number in the ids quorumlock.E1xx / quorumlock.W1xx.
CHECK_IDS: Final = {
    "reachable": 101,
    "role": 102,
    "persistence": 103,
    "eviction": 104,
    "cluster": 105,
    "round trip": 106,
    "same server": 107,
    "servers": 108,
    "scripts": 109,
    "debug": 110,
    "quarantine": 111,
}
_AUDIT_TTL_MS: Final = 10_000  # the doctor's default --ttl, for the round-trip check


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """quorumlock.E001: ``settings.QUORUMLOCK`` is missing or malformed."""
    try:
        build_redlock().close()  # checks every option; opens no connection
    except ImproperlyConfigured as exc:
        return [Error(str(exc), hint=f"see docs/django.md, {SETTING}", id="quorumlock.E001")]
    return []


def check_servers(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The doctor's quick audit of every configured server: a failed check is an
    Error, a warning a Warning (ids in :data:`CHECK_IDS`)."""
    if check_settings():
        return []  # E001 says why
    servers, options = redlock_settings()
    specs = parse_servers(servers)
    timeout = options.get("instance_timeout") or default_instance_timeout(_AUDIT_TTL_MS)
    connect = float(options.get("connect_timeout") or 1.0)
    messages: list[CheckMessage] = []
    max_ttl = options.get("max_ttl", 60.0)  # None: the quarantine is off
    for check in audit(
        Servers(specs, connect), instance_timeout=timeout, clock_sample=None, max_ttl=max_ttl
    ):
        if check.result == "pass":
            continue
        number = CHECK_IDS.get(check.check, 199)
        text = f"{check.check} ({check.server}): {check.detail}"
        hint = "quorumlock doctor explains each check: docs/cli.md, 'quorumlock doctor'"
        if check.result == "fail":
            messages.append(Error(text, hint=hint, id=f"quorumlock.E{number}"))
        else:
            messages.append(Warning(text, hint=hint, id=f"quorumlock.W{number}"))
    return messages
