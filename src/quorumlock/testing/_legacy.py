"""The legacy SETNX lock, as a contender for the fault-injection checker.

This is the lock pattern the Redis documentation of ``SETNX`` once described, still
found in code written against it, here so that ``quorumlock verify --compare legacy``
shows on real servers why it breaks (docs/safety.md, "The legacy SETNX pattern"; its
model is ``models/legacy.pml``). One server; the value of the key is an expiry
timestamp read from each client's own wall clock; the key itself never expires::

    acquire: SETNX key <now + ttl + 1 ms>         1: the lock is ours
             0: GET key; if the value is past by our clock:
                GETSET key <now + ttl + 1 ms>     ours iff the old value was still past
                                                  (else another waiter was first)
    release: if our clock is not past the value we set: DEL key

What breaks it: a restarted server forgets the key and the next ``SETNX`` succeeds while
the holder still believes it holds (there is no quarantine); the expiry is judged by
each client's clock, so clocks that disagree hand over a lock that its holder still
believes valid; and the check-then-``DEL`` of the release can delete the lock of a
holder that took over in between. It has no fencing token.

Never use it to protect anything: it is a contender of the checker, nothing else.
"""

from __future__ import annotations

import contextlib
import random
import time
from typing import Final

import redis

__all__ = ["LegacyLock", "LegacyLocks"]

_PAD_MS: Final = 1  # the "+ 1" of the recipe (a second there, where timestamps were seconds)


def _now_ms() -> int:
    # The recipe's clock: wall time, each client its own.
    return int(time.time() * 1000)


class LegacyLocks:
    """Makes :class:`LegacyLock` objects on one server, like ``Redlock.lock`` does."""

    def __init__(self, url: str, *, timeout: float, retry_delay: float, seed: int) -> None:
        self._client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._retry_delay = retry_delay
        self._rng = random.Random(seed)

    def lock(self, name: str, *, ttl: float) -> LegacyLock:
        return LegacyLock(self._client, name, ttl, self._retry_delay, self._rng)

    def close(self) -> None:
        self._client.close()


class LegacyLock:
    """One acquisition of the legacy lock, with the attributes the verify worker reads
    from a quorumlock ``Lock``: ``acquire``, ``validity``, ``fencing_token``, ``release``.
    """

    fencing_token: None = None

    def __init__(
        self, client: redis.Redis, name: str, ttl: float, retry_delay: float, rng: random.Random
    ) -> None:
        self._client = client
        self._name = name
        self._ttl_ms = round(ttl * 1000)
        self._retry_delay = retry_delay
        self._rng = rng
        self._expiry: int | None = None  # the timestamp we set, while we believe we hold

    @property
    def validity(self) -> float:
        """Seconds until the expiry we set, by our own clock (0 when not held)."""
        if self._expiry is None:
            return 0.0
        return max(0.0, (self._expiry - _now_ms()) / 1000)

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> bool:
        """Try until the lock is ours or ``timeout`` seconds passed; errors of the server
        (down, restarting, paused) count as a failed try."""
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                if self._try():
                    return True
            except redis.RedisError:
                pass
            if not blocking or (give_up is not None and time.monotonic() >= give_up):
                return False
            pause = self._retry_delay * self._rng.uniform(0.5, 1.0)
            if give_up is not None:
                pause = min(pause, max(0.0, give_up - time.monotonic()))
            time.sleep(pause)

    def _try(self) -> bool:
        expiry = _now_ms() + self._ttl_ms + _PAD_MS
        if self._client.setnx(self._name, expiry):
            self._expiry = expiry
            return True
        seen = self._client.get(self._name)
        if seen is None or int(seen) >= _now_ms():
            return False  # released in between (try again later), or not past yet
        expiry = _now_ms() + self._ttl_ms + _PAD_MS
        old = self._client.getset(self._name, expiry)
        if old is None or int(old) < _now_ms():
            self._expiry = expiry
            return True
        return False  # another waiter's GETSET came first (ours moved its expiry a bit)

    def release(self) -> None:
        """``DEL`` the key if our clock is not past the expiry we set (the recipe's check);
        an error of the server is ignored (the key then expires by the timestamp)."""
        expiry, self._expiry = self._expiry, None
        if expiry is None or _now_ms() >= expiry:
            return
        with contextlib.suppress(redis.RedisError):
            self._client.delete(self._name)
