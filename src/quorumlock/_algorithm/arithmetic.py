"""The Redlock arithmetic (validity, retry pause, extension; docs/algorithm.md), written once.

Pure: no I/O, no clock. Every time is a float in seconds read from a monotonic clock by
the caller and passed in; every ttl is an int of milliseconds, the unit the servers use,
so the validity is computed from exactly the ttl the servers were sent.

Worked timeline (ttl 10 000 ms, clock drift factor 0.01, N = 5)::

    t = 100.000  start: read the monotonic clock, send SET NX PX 10000 to all 5
    t = 100.004  the third grant arrives: a majority (5 // 2 + 1 = 3)
    t = 100.006  the last reply arrives; elapsed = 0.006
    drift    = 10.000 * 0.01 + 0.002 = 0.102
    validity = 10.000 - 0.006 - 0.102 = 9.892 s, measured from t = 100.006
    deadline = 100.006 + 9.892 = 100.000 + 10.000 - 0.102 = 109.898

The deadline is ``start + ttl - drift`` whatever the elapsed time: every server received
the SET after ``start`` and so keeps the key until at least ``start + ttl`` on its own
clock, which runs at most ``drift`` slower than ours over one ttl. A round is good iff a
majority granted and it finished before that deadline (validity > 0).
"""

from __future__ import annotations

__all__ = [
    "DRIFT_FLOOR",
    "HAND_OVER",
    "KEPT_LOOK",
    "KEPT_WAKE",
    "TAKE_BACK_HOLD",
    "TAKE_BACK_HOLDS",
    "TAKE_BACK_TURN",
    "deadline",
    "default_instance_timeout",
    "drift",
    "queue_backoff",
    "queue_lease_ms",
    "quorum",
    "retry_delay",
    "validity",
    "wake_stagger",
]

#: Added to every drift (R6 step 4): 1 ms for Redis' expiry precision + 1 ms minimum drift.
DRIFT_FLOOR = 0.002

#: Bounds of the per-instance timeout derived from the ttl (R6 step 2).
_INSTANCE_TIMEOUT_SHARE = 0.005
_INSTANCE_TIMEOUT_MIN = 0.020
_INSTANCE_TIMEOUT_MAX = 0.250


def quorum(n: int) -> int:
    """How many of ``n`` servers make a majority: ``n // 2 + 1`` (R6 step 3)."""
    if n < 1:
        raise ValueError(f"a quorum needs at least one server, not {n}")
    return n // 2 + 1


def drift(ttl_ms: int, clock_drift_factor: float) -> float:
    """Seconds of validity given up for clock drift: ``ttl * factor + 2 ms`` (R6 step 4)."""
    return ttl_ms / 1000 * clock_drift_factor + DRIFT_FLOOR


def deadline(start: float, ttl_ms: int, clock_drift_factor: float) -> float:
    """The monotonic time until which a lock acquired by a round started at ``start`` holds.

    Equal to ``end + validity(ttl, end - start)`` for any end time: see the module docstring.
    """
    return start + ttl_ms / 1000 - drift(ttl_ms, clock_drift_factor)


def validity(ttl_ms: int, elapsed: float, clock_drift_factor: float) -> float:
    """Seconds the lock still holds after a round that took ``elapsed`` (R6 step 4).

    May be <= 0: then the round failed even with a majority of grants (R6 step 3).
    """
    return ttl_ms / 1000 - elapsed - drift(ttl_ms, clock_drift_factor)


def default_instance_timeout(ttl_ms: int) -> float:
    """Per-instance timeout when none is configured: 0.5 % of the ttl, within [20, 250] ms.

    R6 step 2 asks for a timeout small compared with the ttl, so that a dead server costs
    little of the validity: a 10 s ttl gets 50 ms, a 1 s ttl 20 ms, a 60 s ttl 250 ms.
    Establishing a connection has its own, longer timeout (a TLS handshake takes several
    round trips).
    """
    share = ttl_ms / 1000 * _INSTANCE_TIMEOUT_SHARE
    return min(max(share, _INSTANCE_TIMEOUT_MIN), _INSTANCE_TIMEOUT_MAX)


def retry_delay(base: float, uniform: float) -> float:
    """The pause before a retry (R8): uniform in ``[base / 2, base]``.

    ``uniform`` is a random number in [0, 1) supplied by the caller, so this stays pure.
    The jitter desynchronises clients that failed together (a split vote), and the
    ``base / 2`` floor keeps a retry from hammering the servers.
    """
    if not 0.0 <= uniform <= 1.0:
        raise ValueError(f"uniform must be in [0, 1], not {uniform}")
    return base / 2 + base / 2 * uniform


#: The smallest spread of the pause a woken waiter takes (see :func:`wake_stagger`).
WAKE_STAGGER_MIN = 0.001


def wake_stagger(round_seconds: float, misses: int, uniform: float, ceiling: float) -> float:
    """The random pause of a waiter woken by a release announcement, before it tries.

    Every waiter of a name is woken by the same announcement. Were they all to try at
    once, each server would grant the first request to reach it, and with three or more
    of them the grants could scatter so that nobody gets a majority (a split vote), and
    all would try again together. So each waits uniform in ``[0, spread)``, where the
    spread is twice the last round's duration (at least 1 ms), long enough for the
    first one's round to reach every server ahead of the second's. It doubles after each
    announcement that did not bring this waiter the lock (``misses``), which spreads a
    crowd of waiters thinner, up to ``ceiling`` (the R8 ``retry_delay``): a name that
    keeps being announced without ever being free (stale grants of a crashed client in
    a split) costs no more than polling. The mean cost for a lone waiter is half a
    millisecond, against ``retry_delay / 2`` or more for a polling waiter.
    """
    if not 0.0 <= uniform <= 1.0:
        raise ValueError(f"uniform must be in [0, 1], not {uniform}")
    if misses < 0:
        raise ValueError(f"misses must be >= 0, not {misses}")
    spread = max(WAKE_STAGGER_MIN, 2 * round_seconds)
    for _ in range(misses):
        if spread >= ceiling:
            break
        spread *= 2
    return min(spread, max(ceiling, WAKE_STAGGER_MIN)) * uniform


#: The shortest lease of an entry in a queue of waiters.
QUEUE_LEASE_MIN_MS = 1000

#: A waiter further back in line than second polls up to this many times less often.
QUEUE_BACKOFF_MAX = 3


def queue_backoff(place: int | None) -> int:
    """How many R8 pauses a waiter at ``place`` in line (1: the head; None: unknown)
    waits between its polls: 1 for the head and the next, who take a lock whose release
    went unannounced; one less than its place further back, at most
    :data:`QUEUE_BACKOFF_MAX`. A release wakes the head by name whatever the pauses: the
    polls are only the fallback, and with many waiters they are most of the servers' and
    the clients' work."""
    if place is None or place <= 2:
        return 1
    return min(place - 1, QUEUE_BACKOFF_MAX)


def queue_lease_ms(retry_delay: float) -> int:
    """How long an entry in a key's queue of waiters lasts unless its waiter renews it.

    A waiter renews it at least every third of it, and tries at least every
    :data:`QUEUE_BACKOFF_MAX` ``retry_delay``: three more pauses, at least a second,
    outlast every live waiter's gaps (a round, a pause, a stagger), while a waiter that
    died leaves the line soon after.
    """
    return max(QUEUE_LEASE_MIN_MS, round((QUEUE_BACKOFF_MAX + 3) * retry_delay * 1000))


#: How long after a release of this process woke the head of a name's queue of waiters
#: a blocking acquire of that name by this process stands in line behind it instead of
#: trying (seconds). The waiter woken needs a wake-up and one round to take the lock
#: (about a millisecond on a LAN); a process that releases and at once acquires again
#: (a worker taking its next job on the same name) would otherwise race it, and on a
#: majority of the servers each may win some: both fail, both undo, and the lock waits.
#: A waiter that is gone by then (its entry outlives it by at most its lease) costs the
#: process standing in line behind it one polling pause.
HAND_OVER = 0.05

#: A process that asks for a name again at once after releasing it (a loop of short
#: holds) takes it back without waking the next waiter, up to this many holds in a row
#: and for at most :data:`TAKE_BACK_TURN` seconds from the first of them; then its
#: release wakes the head of the line, and its next acquire stands behind it
#: (:data:`HAND_OVER`). A hand-over costs a wake-up and a round of the waiter woken
#: besides the release; taking the lock back costs one round. "At once" is sooner than
#: its release round took: anything in between that waits for the network is not.
#: The turn trades the waiters' latency (up to a turn more per looping process ahead of
#: them) for throughput: each hand-over also moves the work to another process, whose
#: first rounds run slower than a process that kept going (docs/benchmarks-log.md,
#: "Longer turns").
TAKE_BACK_HOLDS = 64
#: See :data:`TAKE_BACK_HOLDS` (seconds).
TAKE_BACK_TURN = 0.02
#: Only a hold shorter than this may be taken back (seconds), from when it was granted
#: (or its acquire's start, where a plain attempt took it back and nobody told when) to
#: its release's start: a hand-over costs about a millisecond at most on a LAN, which a
#: longer hold makes small beside it, while the turn would keep the waiters waiting. It
#: also keeps a process that asks again soon after its release but not in a loop (it
#: waited for something in between: "at once" is only a guess from the release round's
#: duration) from keeping the lock after a wait in line (docs/benchmarks-log.md,
#: "Long holds are not taken back").
TAKE_BACK_HOLD = 0.002
#: A release that did not wake the next waiter because its process was expected to take
#: the lock back (:data:`TAKE_BACK_HOLDS`) wakes it this long after it returned (seconds)
#: unless the process asked for the name again by then: the lock is free, and the
#: waiters would otherwise wait for their next poll. At most :data:`KEPT_LOOK` after it:
#: see there.
KEPT_WAKE = 0.001
#: While a process goes on taking a name back, whoever sends the wake-ups its releases
#: owe (:data:`KEPT_WAKE`) looks once per this many seconds, not once per release: each
#: look wakes the process's subscriber thread, which takes the interpreter from the loop
#: (docs/benchmarks-log.md, "Fewer looks"). So a process that stops looping wakes the
#: next waiter at least ``KEPT_WAKE`` and at most this long after its last release.
KEPT_LOOK = 0.004
