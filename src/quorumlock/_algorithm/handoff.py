"""Handing a held lock to another process: the handle, and the validity it carries.

Pure: wall-clock and monotonic times are passed in.

A lock's deadline is a time on its holder's monotonic clock, which means nothing in
another process or on another machine. A :class:`LockHandle` therefore carries the
validity left when it was exported (``validity``, already net of the drift allowance of
R6) and the wall-clock time of the export (``exported_at``). The adopter subtracts the
time elapsed since, as measured by its own wall clock, and the bound on the disagreement
of the two wall clocks it was told to allow (``clock_skew``)::

    validity = handle.validity - max(0, now_wall - handle.exported_at) - clock_skew

It is never more than the exporter had. Clock assumption: the two wall clocks differ by
at most ``clock_skew`` seconds (0 on the same machine, where both read the same clock).
If the adopter's clock is behind by more than that, the handle seems to come from the
future: that cannot be compensated, so it is reported (:func:`clock_disagreement`). An
``extend()`` right after the adoption makes the question moot: its new validity is
measured on the adopter's own monotonic clock, as for an acquire.

Timeline (ttl 10 s, same machine, clock_skew 0)::

    exporter  t_wall = 1000.000  validity 9.500 s left; handle.exported_at = 1000.000
    adopter   t_wall = 1000.300  validity 9.500 - 0.300 = 9.200 s, from its monotonic now
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quorumlock._algorithm.config import seconds, shown, shown_number, validate_name
from quorumlock._exceptions import ConfigurationError

__all__ = ["HANDLE_VERSION", "LockHandle", "adopted_validity", "clock_disagreement"]

#: The version of the serialised form; a handle of another version is refused.
HANDLE_VERSION = 1

#: The tokens quorumlock makes (R2): 20 random bytes as 40 hex digits.
_TOKEN = re.compile(r"[0-9a-f]{40}")

#: Shown of a token in reprs and logs: never the whole of it.
TOKEN_PREFIX = 8


@dataclass(frozen=True, slots=True)
class LockHandle:
    """A held lock, exported by ``Lock.export()`` to be adopted by ``Redlock.adopt()``.

    Small, immutable and serialisable: :meth:`to_json` / :meth:`from_json`,
    :meth:`to_dict` / :meth:`from_dict`, and pickle. It carries the lock's token, which
    is what proves ownership on the servers: treat a handle as a secret (its ``repr``
    shows only a prefix of the token).

    - ``name``, ``token``, ``ttl`` (seconds), ``fencing_token`` (None with fencing off);
    - ``validity``: seconds the lock still held at the export, on the exporter's clock;
    - ``exported_at``: the exporter's wall-clock time (``time.time()``) of the export;
    - ``servers``: the exporter's server labels (no passwords), checked by the adopter.

    The constructor raises ``TypeError`` for wrong types and :class:`ConfigurationError`
    for bad values.
    """

    name: str
    token: str
    ttl: float
    fencing_token: int | None
    validity: float
    exported_at: float
    servers: tuple[str, ...]

    def __post_init__(self) -> None:
        validate_name(self.name)
        if not isinstance(self.token, str):
            raise TypeError(f"token must be a str, not {type(self.token).__name__}")
        if not _TOKEN.fullmatch(self.token):
            raise ConfigurationError("token is not a quorumlock token (40 hex digits)")
        object.__setattr__(self, "ttl", seconds(self.ttl, "ttl"))
        fence = self.fencing_token
        if fence is not None:
            if not isinstance(fence, int) or isinstance(fence, bool):
                raise TypeError(f"fencing_token must be an int or None, not {fence!r}")
            if fence < 1:
                raise ConfigurationError(f"fencing_token must be >= 1, not {fence}")
        # Not bounded by the ttl: ``extend(ttl=...)`` may have extended it further.
        object.__setattr__(self, "validity", seconds(self.validity, "validity", allow_zero=True))
        exported_at = self.exported_at
        if not isinstance(exported_at, int | float) or isinstance(exported_at, bool):
            raise TypeError(f"exported_at must be a number, not {exported_at!r}")
        try:
            finite = math.isfinite(exported_at)
        except OverflowError:  # an int beyond any float
            finite = False
        if not finite:
            raise ConfigurationError(f"exported_at must be finite, not {shown_number(exported_at)}")
        object.__setattr__(self, "exported_at", float(exported_at))
        servers = self.servers
        if not isinstance(servers, tuple) or not all(isinstance(s, str) for s in servers):
            raise TypeError(f"servers must be a tuple of str, not {servers!r}")
        if not servers:
            raise ConfigurationError("servers must not be empty")

    def to_dict(self) -> dict[str, Any]:
        """The handle as a dict of JSON types (for task queues that serialise to JSON)."""
        return {
            "quorumlock_handle": HANDLE_VERSION,
            "name": self.name,
            "token": self.token,
            "ttl": self.ttl,
            "fencing_token": self.fencing_token,
            "validity": self.validity,
            "exported_at": self.exported_at,
            "servers": list(self.servers),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LockHandle:
        """The handle :meth:`to_dict` returned.

        Raises ``TypeError`` if ``data`` is not a mapping and :class:`ConfigurationError`
        if it is not a handle of this version, or a field is missing or malformed.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a lock handle must be a mapping, not {type(data).__name__}")
        version = data.get("quorumlock_handle")
        if version != HANDLE_VERSION:
            raise ConfigurationError(
                f"not a quorumlock lock handle of version {HANDLE_VERSION} "
                f"(quorumlock_handle={version!r})"
            )
        fields = ("name", "token", "ttl", "fencing_token", "validity", "exported_at", "servers")
        missing = [f for f in fields if f not in data]
        if missing:
            raise ConfigurationError(f"malformed lock handle: missing {', '.join(missing)}")
        extra = sorted(set(data) - {"quorumlock_handle", *fields})
        if extra:
            raise ConfigurationError(f"malformed lock handle: unknown {', '.join(extra)}")
        servers = data["servers"]
        if not isinstance(servers, list | tuple):
            raise ConfigurationError("malformed lock handle: servers must be a list")
        try:
            return cls(
                name=data["name"],
                token=data["token"],
                ttl=data["ttl"],
                fencing_token=data["fencing_token"],
                validity=data["validity"],
                exported_at=data["exported_at"],
                servers=tuple(servers),
            )
        except TypeError as exc:  # a field of the wrong type: the data is malformed
            raise ConfigurationError(f"malformed lock handle: {exc}") from None

    def to_json(self) -> str:
        """The handle as a JSON object (one line)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> LockHandle:
        """The handle :meth:`to_json` returned; errors as for :meth:`from_dict`."""
        if not isinstance(text, str | bytes):
            raise TypeError(f"a lock handle in JSON must be str or bytes, not {text!r}")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigurationError(f"malformed lock handle: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ConfigurationError("malformed lock handle: not a JSON object")
        return cls.from_dict(data)

    def __repr__(self) -> str:
        fence = "" if self.fencing_token is None else f" fencing_token={self.fencing_token}"
        return (
            f"<quorumlock.LockHandle {shown(self.name)} token={self.token[:TOKEN_PREFIX]}… "
            f"ttl={self.ttl:g}s validity={self.validity:.3f}s{fence}>"
        )


def adopted_validity(handle: LockHandle, *, now_wall: float, clock_skew: float) -> float:
    """Seconds the adopter may count on, from ``now_wall`` (its wall clock) on.

    Never more than ``handle.validity``; <= 0 when the handle has expired. Correct when
    the two wall clocks differ by at most ``clock_skew`` seconds (see the module doc).
    """
    elapsed = max(0.0, now_wall - handle.exported_at)
    return handle.validity - elapsed - clock_skew


def clock_disagreement(handle: LockHandle, *, now_wall: float, clock_skew: float) -> float:
    """How far (seconds) the handle seems to come from the future beyond ``clock_skew``.

    0.0 when the clock assumption may hold. A positive value proves that the adopter's
    wall clock is behind the exporter's by more than ``clock_skew`` (or that one of
    them was stepped): the adopted validity may then be too long by that much at least.
    """
    ahead = handle.exported_at - now_wall - clock_skew
    # Below a microsecond it is the rounding of the float sums, not a clock.
    return ahead if ahead > _ROUNDING else 0.0


#: Differences of wall-clock sums smaller than this are float rounding (seconds).
_ROUNDING = 1e-6
