"""Lease keeping: when to extend a held lock, and when to stop.

Pure: times are passed in. Both front ends ask :func:`plan` what to do next and do it.

Schedule. A lock is extended once a third of its ttl has passed since its validity was
last set, so that two more attempts fit before it would expire (or up to a thirtieth of
the ttl sooner, to go out with other renewals due about then). A failed attempt that
still leaves validity (a majority did not answer in time, but none said "not held") is
retried after a short pause; the lock is lost when its validity runs out, or at once
when a majority says our key is gone.

Bound. R10: extensions must be bounded, or a stuck holder keeps the lock forever.
``max_extensions`` bounds their number and ``max_hold`` the total time held; the last
extension is shortened so that the lock never outlives ``acquired_at + max_hold``. Once
the bound is reached the lock simply runs out, and that is reported as a loss.

Timeline (ttl 3 s, drift 0.032 s, max_hold 5 s, acquired at t = 0)::

    t = 0.000  acquired; deadline 0 + 3 - 0.032 = 2.968
    t = 0.968  a third of the ttl used: extend to 3 s, deadline 3.936
    t = 1.936  extend to 3 s: deadline 4.904
    t = 2.904  extend by min(3, 5 - 2.904) = 2.096 s: deadline 4.977 (drift 0.023)
    t = 4.977  validity runs out (never after max_hold): lost, the holder is told
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from quorumlock._algorithm.arithmetic import DRIFT_FLOOR, drift
from quorumlock._algorithm.config import LeasePolicy

__all__ = ["EARLY", "LeasePolicy", "Plan", "bound_reached", "plan"]

#: Share of the ttl after which a renewal is due.
RENEW_AFTER = 1 / 3
#: Pause before retrying a renewal that failed without losing the lock, as a share of
#: the ttl (never more than a quarter of the validity left).
RETRY_AFTER = 1 / 12
#: How much sooner than due a renewal may run, as a share of the ttl: renewals due
#: within this of each other go out together (one batch of round trips on the sync
#: API's lease thread) instead of one small batch each.
EARLY = 1 / 30


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do next for a held lock."""

    at: float  # monotonic time to act
    extend_ms: int | None  # extend to this ttl at ``at``; None: only watch the deadline


def bound_reached(
    *,
    policy: LeasePolicy,
    ttl_ms: int,
    deadline: float,
    acquired_at: float,
    extensions: int,
    clock_drift_factor: float,
) -> bool:
    """Whether a lock held until ``deadline`` may be extended no more: ``max_extensions``
    made, or ``max_hold`` reached (after the last, shortened extension the deadline
    sits one drift before the end of the hold: nothing is left to extend)."""
    if policy.max_extensions is not None and extensions >= policy.max_extensions:
        return True
    if policy.max_hold is None or math.isinf(policy.max_hold):
        return False
    hold_end = acquired_at + policy.max_hold
    return hold_end - deadline <= drift(ttl_ms, clock_drift_factor) + 0.001


def plan(
    *,
    policy: LeasePolicy,
    ttl_ms: int,
    deadline: float,
    acquired_at: float,
    extensions: int,
    now: float,
    clock_drift_factor: float,
    failed: bool = False,
) -> Plan:
    """The next action for a lock held until ``deadline``.

    With no (more) extensions allowed, the plan is to watch the deadline: at that time
    the lock is lost unless released before. ``failed`` says the last renewal failed
    without losing the lock: retry soon rather than a third of the ttl later.
    """
    watch = Plan(deadline, None)
    if not policy.auto_extend or bound_reached(
        policy=policy,
        ttl_ms=ttl_ms,
        deadline=deadline,
        acquired_at=acquired_at,
        extensions=extensions,
        clock_drift_factor=clock_drift_factor,
    ):
        return watch
    ttl = ttl_ms / 1000
    if failed:
        at = now + min(ttl * RETRY_AFTER, max(0.0, deadline - now) / 4)
    else:
        at = max(now, deadline - ttl * (1 - RENEW_AFTER))
    extend_ms = ttl_ms
    if policy.max_hold is not None and not math.isinf(policy.max_hold):
        hold_end = acquired_at + policy.max_hold
        left_ms = math.floor((hold_end - at) * 1000)
        if left_ms / 1000 <= DRIFT_FLOOR * 2:
            return watch  # too little left to be worth a round
        extend_ms = min(ttl_ms, left_ms)
    if at >= deadline:
        return watch
    return Plan(at, extend_ms)
