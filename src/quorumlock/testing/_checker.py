"""The safety checker of the verify suite: a pure function over plain records.

It reads no clock and does no I/O, so it is tested on hand-made histories. The records
come from worker processes on one machine, whose ``time.monotonic()`` readings are all on
the same ``CLOCK_MONOTONIC`` and can be compared directly.

What it counts, and why each count means a broken lock:

* **overlaps**: pairs of hold intervals of *different* workers that intersect. A hold is
  the half-open interval ``[start, end)`` with ``start`` read just after ``acquire()``
  returned and ``end = min(just before release(), start + validity at acquire)``, so it is
  a sub-interval of the time the lock library promised exclusive ownership. Two of them
  intersecting is a mutual-exclusion violation, whatever happened to the resource. An
  empty interval (``end <= start``: the holder saw no validity left) intersects nothing.
* **stale writes accepted**: writes in the resource's log (the server-side order of
  applied writes) made by a holder whose acquisition is *older* than that of a write
  applied before it. Under mutual exclusion holds follow one another, and each holder
  writes inside its own hold, so the log is in acquisition order; a write that breaks the
  order came from a holder that had been superseded (paused past its validity, say) and
  reached the resource anyway. Fencing exists to reject exactly these writes.
* **token order violations**: holds (non-empty, with a fencing token) whose token is not
  greater than the token of every hold that started before them. Fencing tokens must
  strictly increase across holders over time.

``stale_writes_rejected`` (the fence's refusals) is reported as counted by the workers;
it is the *protection* at work, not a violation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["HistoryCheck", "Hold", "Write", "check_history"]

_EXAMPLES = 5  # how many offending records a check keeps for the report


@dataclass(frozen=True, slots=True)
class Hold:
    """One acquisition by one worker, as the worker observed it.

    ``start`` and ``end`` are ``time.monotonic()`` readings (see the module docstring);
    ``token`` is the fencing token of the acquisition, or None without fencing.
    """

    worker: int
    start: float
    end: float
    token: int | None = None

    @property
    def empty(self) -> bool:
        """True when the holder had no validity left to observe (``end <= start``)."""
        return self.end <= self.start


@dataclass(frozen=True, slots=True)
class Write:
    """One write applied by the protected resource, in the resource's own order.

    ``acquired`` is the ``start`` of the writer's hold (its acquisition time) and
    ``token`` its fencing token (None without fencing).
    """

    worker: int
    acquired: float
    token: int | None = None


@dataclass(frozen=True, slots=True)
class HistoryCheck:
    """What :func:`check_history` found. ``safe`` is True when nothing was violated."""

    acquisitions: int
    writes: int
    overlaps: int
    stale_writes_accepted: int
    stale_writes_rejected: int
    token_order_violations: int
    longest_gap: float
    acquisitions_per_second: float
    overlap_examples: tuple[tuple[Hold, Hold], ...] = ()
    stale_write_examples: tuple[Write, ...] = ()

    @property
    def safe(self) -> bool:
        """No overlap, no stale write accepted, no fencing token out of order."""
        return (
            self.overlaps == 0
            and self.stale_writes_accepted == 0
            and self.token_order_violations == 0
        )


def check_history(
    holds: Iterable[Hold],
    writes: Sequence[Write],
    *,
    start: float,
    end: float,
    stale_writes_rejected: int = 0,
) -> HistoryCheck:
    """Check a run's history for mutual-exclusion violations and stale writes.

    Args:
        holds: every acquisition of every worker, in any order.
        writes: the resource's log, in the order the resource applied the writes.
        start: when the run started (``time.monotonic()``); bounds ``longest_gap``.
        end: when the run ended; bounds ``longest_gap`` and divides the acquisitions.
        stale_writes_rejected: how many writes the fence refused (copied to the result).

    Returns:
        The counts described in the module docstring, plus ``longest_gap`` (the longest
        time within ``[start, end]`` when no worker held the lock: the whole window if
        nobody ever did) and ``acquisitions_per_second``.

    Raises:
        ValueError: ``end < start``, a hold with ``end < start`` or non-finite times, or
            a negative ``stale_writes_rejected``.
    """
    if not (math.isfinite(start) and math.isfinite(end)) or end < start:
        raise ValueError(f"bad run window [{start}, {end}]")
    if stale_writes_rejected < 0:
        raise ValueError(f"stale_writes_rejected must be >= 0, not {stale_writes_rejected}")
    all_holds = list(holds)
    for hold in all_holds:
        if not (math.isfinite(hold.start) and math.isfinite(hold.end)) or hold.end < hold.start:
            raise ValueError(f"bad hold interval: {hold!r}")
    live = sorted((h for h in all_holds if not h.empty), key=lambda h: (h.start, h.end))
    overlaps, overlap_examples = _overlaps(live)
    stale, stale_examples = _stale_writes(writes)
    duration = end - start
    return HistoryCheck(
        acquisitions=len(all_holds),
        writes=len(writes),
        overlaps=overlaps,
        stale_writes_accepted=stale,
        stale_writes_rejected=stale_writes_rejected,
        token_order_violations=_token_order_violations(live),
        longest_gap=_longest_gap(live, start, end),
        acquisitions_per_second=len(all_holds) / duration if duration > 0 else 0.0,
        overlap_examples=overlap_examples,
        stale_write_examples=stale_examples,
    )


def _overlaps(live: list[Hold]) -> tuple[int, tuple[tuple[Hold, Hold], ...]]:
    """Pairs of intersecting non-empty holds of different workers (``live`` sorted)."""
    count = 0
    examples: list[tuple[Hold, Hold]] = []
    active: list[Hold] = []  # holds that started earlier and may still be open
    for hold in live:
        active = [other for other in active if other.end > hold.start]
        for other in active:
            if other.worker != hold.worker:
                count += 1
                if len(examples) < _EXAMPLES:
                    examples.append((other, hold))
        active.append(hold)
    return count, tuple(examples)


def _stale_writes(writes: Sequence[Write]) -> tuple[int, tuple[Write, ...]]:
    """Writes applied after a write of a later acquisition."""
    count = 0
    examples: list[Write] = []
    newest = -math.inf
    for write in writes:
        if write.acquired < newest:
            count += 1
            if len(examples) < _EXAMPLES:
                examples.append(write)
        else:
            newest = write.acquired
    return count, tuple(examples)


def _token_order_violations(live: list[Hold]) -> int:
    """Holds whose token does not exceed every token of the holds started before them."""
    count = 0
    highest: int | None = None
    for hold in live:
        if hold.token is None:
            continue
        if highest is not None and hold.token <= highest:
            count += 1
        highest = hold.token if highest is None else max(highest, hold.token)
    return count


def _longest_gap(live: list[Hold], start: float, end: float) -> float:
    """The longest stretch of ``[start, end]`` covered by no hold."""
    longest = 0.0
    covered_until = start
    for hold in live:
        if hold.start >= end:
            break
        if hold.start > covered_until:
            longest = max(longest, hold.start - covered_until)
        covered_until = max(covered_until, hold.end)
    return max(longest, end - covered_until)
