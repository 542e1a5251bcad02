"""The safety checker of the verify suite and the benchmarks: pure functions over records.

It reads no clock and does no I/O, so it is tested on hand-made histories. The verify
suite (:func:`check_history`) and the benchmarks' hold-interval check (``integrity`` in
``quorumlock/benchmarks/_workers.py``) both count overlaps with :func:`overlapping_pairs`.

What the checker assumes about time, and why it holds for both kits:

* **One clock domain.** Every time of one history is a reading of one clock that every
  worker process reads, in one unit. The kits' workers run on one machine and read
  ``CLOCK_MONOTONIC`` (``time.monotonic()`` in seconds for verify,
  ``time.monotonic_ns()`` for the benchmarks). On Linux that clock is system-wide:
  every process reads the same counter, so readings of different processes compare
  directly. It is not comparable across machines, and wall-clock time
  (``time.time()``, which NTP steps) must never be mixed in. Nothing here can detect a
  history that breaks this: the producer of the records guarantees it.
* **Conservative intervals.** A hold's ``start`` is read after the acquire call returned
  and its ``end`` before the release call was made (and, for verify, no later than the
  lock's validity), so each interval lies inside the time the library promised exclusive
  ownership. Two intersecting intervals are therefore a real violation (no false
  positive); an overlap shorter than the time between the library's decision and those
  readings can be missed.
* **Half-open intervals.** ``[start, end)``: a hold ending exactly when the next begins
  does not overlap it, and an empty hold (``end <= start``) overlaps nothing.

What it counts, and why each count means a broken lock:

* **overlaps**: pairs of hold intervals of *different* workers that intersect, unless
  both are shared (readers of a read-write lock may overlap each other, never a writer:
  a pair with at most one shared hold counts). In verify
  a hold is ``[start, end)`` with ``start`` read just after ``acquire()`` returned and
  ``end = min(just before release(), start + validity at acquire)``. Two of them
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

Leader election (:func:`check_election`) is the same history read as terms: a hold is
one term, ``[start, end)`` the time its leader was promised leadership, its token the
term number. "At most one leader at any moment within validity" is "no two terms of
different workers overlap", and "terms strictly increase" is "no token out of order";
every term must carry its number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "HistoryCheck",
    "Hold",
    "KExclusionCheck",
    "SetHold",
    "Write",
    "check_election",
    "check_history",
    "check_k_exclusion",
    "overlapping_pairs",
    "overlapping_set_pairs",
]

_EXAMPLES = 5  # how many offending records a check keeps for the report


@dataclass(frozen=True, slots=True)
class Hold:
    """One acquisition by one worker, as the worker observed it.

    ``start`` and ``end`` are readings of the history's one clock (see the module
    docstring: ``time.monotonic()`` in verify); ``token`` is the fencing token of the
    acquisition, or None without fencing; ``released``, when recorded, is the same
    clock's reading once the release call returned (the benchmarks' hand-over times
    end there). The checker reads neither ``token`` for overlaps nor ``released``.
    ``shared``: a reader's hold of a read-write lock, which may overlap other shared
    holds (never an exclusive one).
    """

    worker: int
    start: float
    end: float
    token: int | None = None
    released: float | None = None
    shared: bool = False

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
        ValueError: ``end < start``, a hold with ``end < start`` or non-finite times, a
            write with a non-finite ``acquired``, or a negative ``stale_writes_rejected``.
    """
    if not (math.isfinite(start) and math.isfinite(end)) or end < start:
        raise ValueError(f"bad run window [{start}, {end}]")
    if stale_writes_rejected < 0:
        raise ValueError(f"stale_writes_rejected must be >= 0, not {stale_writes_rejected}")
    all_holds = list(holds)
    for hold in all_holds:
        if not (math.isfinite(hold.start) and math.isfinite(hold.end)) or hold.end < hold.start:
            raise ValueError(f"bad hold interval: {hold!r}")
    for write in writes:
        # A NaN compares false with everything: it would reset the newest acquisition
        # seen and hide every stale write after it.
        if not math.isfinite(write.acquired):
            raise ValueError(f"bad write time: {write!r}")
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


def check_election(
    terms: Iterable[Hold],
    writes: Sequence[Write],
    *,
    start: float,
    end: float,
    stale_writes_rejected: int = 0,
) -> HistoryCheck:
    """Check a run of leader election: at most one leader at any moment within its
    validity, and term numbers strictly increasing in the order the terms began.

    ``terms`` are the workers' terms as :class:`Hold` records (``token``: the term
    number; ``start``/``end``: read as for a lock's hold, ``end`` no later than the
    validity the leader was promised); ``writes`` the resource's log, written by the
    leaders with their term as fencing token. The result is :func:`check_history`'s:
    ``overlaps`` counts pairs of leaders at once, ``token_order_violations`` terms not
    above every term that began before them.

    Raises:
        ValueError: a term without its number, and what :func:`check_history` raises.
    """
    all_terms = list(terms)
    for term in all_terms:
        if term.token is None:
            raise ValueError(f"a term without its number: {term!r}")
    return check_history(
        all_terms, writes, start=start, end=end, stale_writes_rejected=stale_writes_rejected
    )


def overlapping_pairs(holds: Iterable[Hold]) -> Iterator[tuple[Hold, Hold]]:
    """Every pair of intersecting non-empty holds of different workers, once each, that
    are not both shared (two readers of a read-write lock do not conflict).

    Holds may come in any order; each pair is ``(earlier, later)`` by ``start``, and
    pairs come in the order of their later hold. Intervals are half-open and empty holds
    overlap nothing (see the module docstring, also for the clock they must share).
    """
    live = sorted((h for h in holds if not h.empty), key=lambda h: (h.start, h.end))
    active: list[Hold] = []  # holds that started earlier and may still be open
    for hold in live:
        active = [other for other in active if other.end > hold.start]
        for other in active:
            if other.worker != hold.worker and not (other.shared and hold.shared):
                yield other, hold
        active.append(hold)


@dataclass(frozen=True, slots=True)
class SetHold:
    """One acquisition of a set of names (``Redlock.lock_many``) by one worker: the
    interval as for :class:`Hold`, and the names the set held."""

    worker: int
    start: float
    end: float
    names: frozenset[str]

    @property
    def empty(self) -> bool:
        """True when the holder had no validity left to observe (``end <= start``)."""
        return self.end <= self.start


def overlapping_set_pairs(holds: Iterable[SetHold]) -> Iterator[tuple[SetHold, SetHold]]:
    """Every pair of non-empty set holds of different workers that intersect in time
    *and* share a name, once each (however many names they share).

    Two holders of overlapping sets must never overlap: that is the multi-resource
    lock's mutual exclusion (docs/algorithm.md, "Multi-resource lock"). Holds of
    disjoint sets may overlap freely and are not counted. Same intervals, clock and
    order of pairs as :func:`overlapping_pairs`.
    """
    live = sorted((h for h in holds if not h.empty), key=lambda h: (h.start, h.end))
    active: list[SetHold] = []
    for hold in live:
        active = [other for other in active if other.end > hold.start]
        for other in active:
            if other.worker != hold.worker and not other.names.isdisjoint(hold.names):
                yield other, hold
        active.append(hold)


def _overlaps(live: list[Hold]) -> tuple[int, tuple[tuple[Hold, Hold], ...]]:
    """How many pairs :func:`overlapping_pairs` finds, and the first few."""
    count = 0
    examples: list[tuple[Hold, Hold]] = []
    for pair in overlapping_pairs(live):
        count += 1
        if len(examples) < _EXAMPLES:
            examples.append(pair)
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


@dataclass(frozen=True, slots=True)
class KExclusionCheck:
    """What :func:`check_k_exclusion` found: ``safe`` when never more than ``permits``
    held at once.

    ``most_at_once``: the largest number of non-empty holds that intersect at one
    moment; ``excess``: how many holds began while ``permits`` others were open (each is
    one more holder than allowed); ``example``: the holds open at the first such moment.
    """

    permits: int
    acquisitions: int
    most_at_once: int
    excess: int
    example: tuple[Hold, ...] = ()

    @property
    def safe(self) -> bool:
        """Never more than ``permits`` holds at once (``excess == 0``)."""
        return self.excess == 0


def check_k_exclusion(holds: Iterable[Hold], permits: int) -> KExclusionCheck:
    """Check that at no moment more than ``permits`` holds of a counting semaphore were
    open (the clock and interval rules of the module docstring: half-open, empty holds
    hold nothing, and a reading that errs only towards a shorter hold; so a count above
    ``permits`` is a real violation).

    Raises:
        ValueError: ``permits`` < 1, or a hold with ``end < start`` or non-finite times.
    """
    if isinstance(permits, bool) or not isinstance(permits, int) or permits < 1:
        raise ValueError(f"permits must be an int >= 1, not {permits!r}")
    all_holds = list(holds)
    for hold in all_holds:
        if not (math.isfinite(hold.start) and math.isfinite(hold.end)) or hold.end < hold.start:
            raise ValueError(f"bad hold interval: {hold!r}")
    live = sorted((h for h in all_holds if not h.empty), key=lambda h: (h.start, h.end))
    open_: list[Hold] = []
    most = excess = 0
    example: tuple[Hold, ...] = ()
    for hold in live:
        open_ = [other for other in open_ if other.end > hold.start]  # half-open
        open_.append(hold)
        most = max(most, len(open_))
        if len(open_) > permits:
            excess += 1
            if not example:
                example = tuple(open_)
    return KExclusionCheck(permits, len(all_holds), most, excess, example)
