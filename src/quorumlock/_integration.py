"""What the web-framework integrations share: lock-name templates and Redlock options.

No framework is imported here (``quorumlock.django`` and ``quorumlock.fastapi`` import
theirs), so ``import quorumlock`` never drags one in.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import TypedDict

from quorumlock._algorithm.config import shown, validate_name
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
    lookups on them have no place in a key. ``{{`` and ``}}`` are literal braces. A
    template whose fixed text makes every name invalid (a prefix of quorumlock's own keys,
    a NUL, more than 4096 bytes) is refused here, not at every request.
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
            raise ConfigurationError(f"lock name template {shown(template)}: {exc}") from None
        for _, field, spec, conversion in parsed:
            if field is None:
                continue
            if not field.isidentifier() or spec or conversion:
                placeholder = "{" + field + ("!" + conversion if conversion else "")
                placeholder += (":" + spec if spec else "") + "}"
                raise ConfigurationError(
                    f"lock name template {template!r}: {placeholder} is not a plain "
                    "{name} placeholder (no positions, attributes, indexes, conversions "
                    "or format specs)"
                )
            if field not in fields:
                fields.append(field)
        self.template = template
        self.fields: tuple[str, ...] = tuple(fields)
        # Rendered with "0" (in none of the reserved prefixes) for every field: a name
        # refused whatever the values are.
        try:
            validate_name(self.render(dict.fromkeys(fields, "0")))
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"lock name template {shown(template)} makes no valid name: {exc}"
            ) from None

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
