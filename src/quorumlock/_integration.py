"""What the web-framework integrations share: lock-name templates and Redlock options.

No framework is imported here (``quorumlock.django`` and ``quorumlock.fastapi`` import
theirs), so ``import quorumlock`` never drags one in.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import TypedDict

from quorumlock._exceptions import ConfigurationError
from quorumlock._observe import LockObserver

__all__ = ["NameTemplate", "RedlockOptions", "redlock_option_names"]


class RedlockOptions(TypedDict, total=False):
    """The keyword options of :class:`quorumlock.Redlock` (and of the asyncio one)."""

    clock_drift_factor: float
    retry_delay: float
    retry_count: int | None
    instance_timeout: float | None
    connect_timeout: float
    busy_poll: float
    max_ttl: float | None
    fencing: bool
    wake_on_release: bool
    fair: bool
    observer: LockObserver | None


def redlock_option_names() -> frozenset[str]:
    return frozenset(RedlockOptions.__annotations__)


class NameTemplate:
    """A lock name with ``{field}`` placeholders, filled in per call or per request.

    Only plain names are allowed between braces (no ``{0}``, ``{a.b}``, ``{a[0]}``, no
    conversion or format spec): the values come from requests, and attribute or index
    lookups on them have no place in a key. ``{{`` and ``}}`` are literal braces.
    """

    def __init__(self, template: str) -> None:
        if not isinstance(template, str):
            raise TypeError(f"a lock name template is a str, not {type(template).__name__}")
        if not template:
            raise ConfigurationError("the lock name template is empty")
        fields: list[str] = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise ConfigurationError(f"lock name template {template!r}: {exc}") from None
        for _, field, spec, conversion in parsed:
            if field is None:
                continue
            if not field.isidentifier() or spec or conversion:
                shown = "{" + field + ("!" + conversion if conversion else "")
                shown += (":" + spec if spec else "") + "}"
                raise ConfigurationError(
                    f"lock name template {template!r}: {shown} is not a plain "
                    "{name} placeholder (no positions, attributes, indexes, conversions "
                    "or format specs)"
                )
            if field not in fields:
                fields.append(field)
        self.template = template
        self.fields: tuple[str, ...] = tuple(fields)

    def render(self, values: Mapping[str, object]) -> str:
        """The name with every placeholder replaced by ``str(values[field])``.

        Raises :class:`KeyError` naming the first field missing from ``values``.
        """
        missing = [field for field in self.fields if field not in values]
        if missing:
            raise KeyError(missing[0])
        return self.template.format_map({field: str(values[field]) for field in self.fields})

    def __repr__(self) -> str:
        return f"NameTemplate({self.template!r})"
