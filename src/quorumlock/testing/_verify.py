"""``verify()``: run workers against real servers under a nemesis, and check the history.

One run::

    N lock servers (LocalServerGroup)      one resource server, never faulted
       |  (behind LatencyProxy for "latency")        ^
       v                                             |  RPUSH, fenced or not
    W worker processes  --- acquire/hold/write/release loop ---+
       ^
       |  kill -9 / restart / SIGSTOP / SIGCONT / delays
    the nemesis thread (in this process)

Afterwards :func:`~quorumlock.testing.check_history` reads every hold interval and the
resource's log and counts overlaps and stale writes.

The three configurations of the table:

* ``safe``: restart quarantine on, with ``max_ttl = 2 * ttl`` so a restarted server
  rejoins within the run, and writes go through the fence (``RedisFence``) with the
  lock's fencing token;
* ``no quarantine`` (``quarantine=False``): ``max_ttl=None``. Expected to fail under
  ``kill-restart``: a restarted server forgot the lock and votes again at once;
* ``no fencing`` (``fencing=False``): plain ``RPUSH`` to the resource. Expected to fail
  under ``pause-clients``: a paused holder writes after it was superseded.

And one other lock, for comparison (``contender="legacy"``, ``quorumlock verify
--compare legacy``): the legacy SETNX/GETSET/DEL lock (``_legacy.py``) on the first
server, with plain writes. Expected to fail under ``kill-restart``: the restarted server
forgot the key and the next ``SETNX`` succeeds while the holder still holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import redis

from quorumlock._algorithm.config import MAX_TTL_SECONDS, RedlockConfig, to_ttl_ms
from quorumlock._exceptions import ConfigurationError
from quorumlock.testing._checker import (
    HistoryCheck,
    Write,
    check_election,
    check_history,
    check_k_exclusion,
    overlapping_set_pairs,
)
from quorumlock.testing._nemesis import NEMESES, Targets, make_nemesis
from quorumlock.testing._proxy import LatencyProxy
from quorumlock.testing._servers import LocalServer, LocalServerGroup
from quorumlock.testing._worker import (
    SET_NAMES,
    WorkerPool,
    WorkerSpec,
    decode_payload,
    set_member,
)

__all__ = ["CONTENDERS", "NEMESES", "VerifyReport", "format_table", "verify"]

LOCK_NAME: Final = "quorumlock:verify:lock"
LOG_KEY: Final = "quorumlock:verify:log"
FENCE_NAME: Final = "quorumlock:verify:resource"
#: What ``verify(lock=...)`` accepts: a lock, a read-write lock, a multi-resource lock.
LOCK_KINDS: Final = ("mutex", "rw", "many")

_REJOIN_FACTOR: Final = 2.0  # the safe configuration's max_ttl, in ttls
_LEAD_IN: Final = 0.2  # seconds between "go" and the start of the run
_EXIT_GRACE: Final = 5.0  # seconds past the end (plus 2 ttl) before stragglers are killed

# The work time (between the validity check and the write), in ttls, per nemesis. Short by
# default, for many acquisitions; long for kill-restart, so that a hold spans several
# restarts (spaced ttl / 6) and the no-quarantine configuration fails every time.
_WORK: Final[Mapping[str, tuple[float, float]]] = {"kill-restart": (0.4, 0.7)}
_DEFAULT_WORK: Final = (0.02, 0.08)
_REST: Final = (0.0, 0.01)  # seconds a worker rests between release and its next attempt

#: The locks :func:`verify` can put under the nemeses.
CONTENDERS: Final = ("quorumlock", "legacy")
#: The configuration column of the legacy SETNX lock.
LEGACY_LABEL: Final = "legacy SETNX"


def config_label(*, quarantine: bool, fencing: bool) -> str:
    """``"safe"``, ``"no quarantine"``, ``"no fencing"`` or ``"no quarantine, no fencing"``."""
    missing = [name for name, on in (("quarantine", quarantine), ("fencing", fencing)) if not on]
    return ", ".join(f"no {name}" for name in missing) or "safe"


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """The outcome of one :func:`verify` run.

    The counts are those of :class:`~quorumlock.testing.HistoryCheck`. ``faults`` is how
    many faults the nemesis injected; ``errors`` counts failed acquisitions by kind
    (``"QuorumUnavailable"``, ``"timeout"``...) and anything unexpected a worker hit;
    ``stragglers`` is how many workers had to be killed after the run.
    """

    nemesis: str
    config: str
    servers: int
    workers: int
    duration: float
    ttl: float
    quarantine: bool
    fencing: bool
    seed: int
    acquisitions: int
    acquisitions_per_second: float
    writes: int
    overlaps: int
    stale_writes_accepted: int
    stale_writes_rejected: int
    token_order_violations: int
    longest_gap: float
    faults: int
    stragglers: int = 0
    errors: Mapping[str, int] = field(default_factory=dict)
    contender: str = "quorumlock"
    #: A semaphore run (``verify(permits=K)``): ``overlaps`` then counts the holds that
    #: began while K others were open (:func:`~quorumlock.testing.check_k_exclusion`).
    permits: int | None = None
    #: Every worker's ``Redlock`` had ``fair=True`` (``verify(fair=True)``), as the
    #: workers reported it.
    fair: bool = False

    @property
    def safe(self) -> bool:
        """No overlapping holds, no stale write accepted, no fencing token out of order."""
        return (
            self.overlaps == 0
            and self.stale_writes_accepted == 0
            and self.token_order_violations == 0
        )

    @property
    def ok(self) -> bool:
        """:attr:`safe`, and the lock was acquired at least once (so something was tested)."""
        return self.safe and self.acquisitions > 0

    def summary(self) -> str:
        """One line: the cell, the counts and the verdict."""
        verdict = "ok" if self.ok else "UNSAFE" if not self.safe else "no acquisitions"
        what = "overlaps" if self.permits is None else f"holders beyond K={self.permits}"
        return (
            f"{self.nemesis} / {self.config} (N={self.servers}, {self.workers} workers, "
            f"{self.duration:g} s, ttl {self.ttl:g} s, seed {self.seed}): "
            f"{self.acquisitions} acquisitions ({self.acquisitions_per_second:.1f}/s), "
            f"{self.overlaps} {what}, {self.stale_writes_accepted} stale writes accepted, "
            f"{self.stale_writes_rejected} rejected, {self.token_order_violations} tokens "
            f"out of order, longest gap {self.longest_gap:.2f} s, {self.faults} faults: "
            f"{verdict}"
        )


def verify(
    *,
    nemesis: str,
    servers: int = 5,
    workers: int = 4,
    duration: float = 4.0,
    ttl: float = 1.0,
    quarantine: bool = True,
    fencing: bool = True,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
    contender: str = "quorumlock",
    election: bool = False,
    lock: str = "mutex",
    permits: int | None = None,
    fair: bool = False,
) -> VerifyReport:
    """Run ``workers`` processes contending for one lock on ``servers`` real servers for
    ``duration`` seconds under ``nemesis``, and check the history.

    Starts ``servers + 1`` local servers (the last one holds the protected resource and is
    never faulted) and the worker processes, and stops every one of them before
    returning, also on errors and ``KeyboardInterrupt``.

    Args:
        nemesis: one of :data:`NEMESES`.
        servers: N, the number of lock servers.
        workers: number of worker processes (``pause-clients`` needs at least 2 to show
            anything).
        duration: seconds of contention.
        ttl: the lock's ttl in seconds; the nemeses' schedules scale with it.
        quarantine: keep restarted servers out of quorums for ``max_ttl = 2 * ttl``
            (False: ``max_ttl=None``, the unsafe configuration).
        fencing: acquire fencing tokens and write through :class:`quorumlock.RedisFence`
            (False: plain writes, the unsafe configuration).
        seed: seed of every random choice (nemesis schedule, work times); None picks one,
            reported in the result. Timing still varies from run to run.
        progress: called with a short message at each step (e.g. ``print``).
        contender: ``"quorumlock"``, or ``"legacy"`` for the legacy SETNX lock on the
            first server instead (``quarantine`` and ``fencing`` do not apply to it:
            the report says False for both), to compare the two under the same faults.
        election: the workers campaign in a leader election on the name instead of
            acquiring the lock (renewed while they lead, their term number the fencing
            token, so ``fencing`` must be True), and the history is checked by
            :func:`~quorumlock.testing.check_election`; the report's configuration
            says "election".
        lock: ``"mutex"`` (``Redlock.lock``); ``"rw"``: a read-write lock
            (``Redlock.rwlock``), each hold a read or a write at random; readers may
            overlap readers, never a writer, and only writers write to the resource; or
            ``"many"``: each hold a ``Redlock.lock_many`` of a random non-empty subset of
            three names, writing to each name's own log through each name's own fence.
            Holders of disjoint sets may overlap; two holders of sets that share a name
            never (:func:`~quorumlock.testing.overlapping_set_pairs`, ``overlaps`` counts
            those pairs), and each name's writes are checked as a lock's are.
        permits: contend for the permits of a counting semaphore (``rl.semaphore``)
            instead of a lock, and check that never more than ``permits`` hold at once
            (:func:`~quorumlock.testing.check_k_exclusion`; ``overlaps`` counts the
            holders beyond K). Several holders write at once then, so the resource's
            order and the fencing tokens' order are not checked.
        fair: the workers' ``Redlock`` has ``fair=True`` (docs/algorithm.md, "Fair
            locks"): the lock, or the election's campaign, serves its waiters in
            arrival order; checked as without it (the faults may reorder the line, never
            let two hold at once). The report's configuration says so ("fair, safe").

    Returns:
        A :class:`VerifyReport`; its ``ok`` says whether the run was safe.

    Raises:
        TypeError: ``duration`` or ``ttl`` is not a number, ``seed`` not an int, or
            ``progress`` not a callable.
        ValueError: unknown ``nemesis``, ``contender`` or ``lock``, or ``servers``/``workers`` < 1,
            or ``quarantine``, ``fencing``, ``election`` or ``fair`` not a bool,
            or ``duration`` or ``ttl`` not positive and finite, or options that do not go
            together (each named in the message); a
            :class:`~quorumlock.ConfigurationError` for a ttl the workers' ``Redlock``
            would refuse (too short to leave any validity, longer than 1e9 s, or half
            that with ``quarantine``).
        ServerBinaryNotFound: no server binary is available.
        ServerStartError: a server could not be started.
        RuntimeError: a worker or the nemesis failed (not a safety violation: the run
            could not be carried out); the message says which and why.
        TimeoutError: the workers did not become ready within 60 s.
    """
    if nemesis not in NEMESES:
        raise ValueError(f"unknown nemesis {nemesis!r}; choose one of {', '.join(NEMESES)}")
    if lock not in LOCK_KINDS:
        raise ValueError(f"lock must be one of {', '.join(map(repr, LOCK_KINDS))}, not {lock!r}")
    for what, count in (("servers", servers), ("workers", workers)):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{what} must be an int >= 1, not {count!r}")
    for what, value in (("duration", duration), ("ttl", ttl)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{what} must be a number of seconds, not {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{what} must be a positive number of seconds, not {value!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None, not {seed!r}")
    for switch, on in (
        ("quarantine", quarantine),
        ("fencing", fencing),
        ("election", election),
        ("fair", fair),
    ):
        if not isinstance(on, bool):  # "no" would be true: the wrong configuration
            raise ValueError(f"{switch} must be True or False, not {on!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None, not {progress!r}")
    if contender == "quorumlock":
        # What every worker's Redlock would refuse, each with a traceback: refused here,
        # before any server starts.
        to_ttl_ms(ttl, RedlockConfig().clock_drift_factor)
        if quarantine and _REJOIN_FACTOR * ttl > MAX_TTL_SECONDS:
            raise ConfigurationError(
                f"ttl must be at most {MAX_TTL_SECONDS / _REJOIN_FACTOR:g} s with the restart "
                f"quarantine on (its max_ttl is {_REJOIN_FACTOR:g} ttls), not {ttl!r}"
            )
    if contender not in CONTENDERS:
        raise ValueError(f"unknown contender {contender!r}; choose one of {', '.join(CONTENDERS)}")
    if election and not fencing:
        raise ValueError("an election always fences with its term numbers: fencing=False")
    kind = "a read-write lock" if lock == "rw" else "a multi-resource lock"
    if lock != "mutex" and contender != "quorumlock":
        raise ValueError(f"{kind} runs on quorumlock only, not on {contender!r}")
    if lock != "mutex" and election:
        raise ValueError(f"{kind} does not run as an election: lock={lock!r}, election=True")
    if election and contender != "quorumlock":
        raise ValueError(f"an election runs on quorumlock only, not on {contender!r}")
    if permits is not None and (
        isinstance(permits, bool) or not isinstance(permits, int) or permits < 1
    ):
        raise ValueError(f"permits must be an int >= 1 or None, not {permits!r}")
    if permits is not None and contender != "quorumlock":
        raise ValueError(f"a semaphore runs on quorumlock only, not on {contender!r}")
    if permits is not None and election:
        raise ValueError(
            f"a semaphore does not run as an election: permits={permits}, election=True"
        )
    if permits is not None and lock != "mutex":
        raise ValueError(f"a semaphore is not {kind}: permits={permits}, lock={lock!r}")
    if fair and (lock != "mutex" or permits is not None or contender != "quorumlock"):
        raise ValueError(
            "fair orders the waiters of quorumlock's lock or election only: not a "
            "read-write lock, a multi-resource lock, a semaphore or another contender"
        )
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    say = progress or (lambda _message: None)
    if contender == "legacy":
        quarantine = fencing = False
        label = LEGACY_LABEL
    else:
        label = config_label(quarantine=quarantine, fencing=fencing)
    if fair:
        label = f"fair, {label}"
    if election:
        label = f"election, {label}"
    if lock != "mutex":
        label = f"{'rwlock' if lock == 'rw' else 'lock_many'}, {label}"
    if permits is not None:
        label = f"{label}, semaphore K={permits}"
    rng = random.Random(seed)
    instance_timeout = min(0.05, ttl / 10)
    rejoin = _REJOIN_FACTOR * ttl
    work_low, work_high = _WORK.get(nemesis, _DEFAULT_WORK)

    with contextlib.ExitStack() as stack:
        run_dir = Path(tempfile.mkdtemp(prefix="quorumlock-verify-"))
        stack.callback(shutil.rmtree, run_dir, True)

        say(f"starting {servers} lock servers and the resource server")
        group = stack.enter_context(LocalServerGroup(servers))
        resource = stack.enter_context(LocalServer())
        proxies: list[LatencyProxy] = []
        if nemesis == "latency":
            for server in group:
                proxy = LatencyProxy(server.host, server.port, seed=rng.randrange(2**32))
                proxies.append(stack.enter_context(proxy))
        urls = [p.url for p in proxies] if proxies else group.urls

        specs = [
            WorkerSpec(
                index=index,
                servers=tuple(urls),
                resource=resource.url,
                lock_name=LOCK_NAME,
                log_key=LOG_KEY,
                fence_name=FENCE_NAME,
                ttl=ttl,
                max_ttl=rejoin if quarantine else None,
                fencing=fencing,
                instance_timeout=instance_timeout,
                retry_delay=min(0.05, ttl / 10),
                work=(work_low * ttl, work_high * ttl),
                rest=_REST,
                acquire_timeout=2 * ttl,
                records=str(run_dir / f"worker-{index}.jsonl"),
                flags=str(run_dir / "flags"),
                seed=rng.randrange(2**32),
                contender=contender,
                election=election,
                lock=lock,
                permits=permits or 0,
                fair=fair,
            )
            for index in range(workers)
        ]
        say(f"starting {workers} worker processes")
        pool = stack.enter_context(WorkerPool(run_dir, specs))
        pool.start()

        start = time.monotonic() + _LEAD_IN
        stop = start + duration
        chaos = make_nemesis(
            nemesis,
            Targets(
                servers=group.servers,
                workers=pool.handles,
                proxies=proxies,
                ttl=ttl,
                rejoin=rejoin,
                instance_timeout=instance_timeout,
                rng=random.Random(rng.randrange(2**32)),
            ),
        )
        say(f"running {nemesis} / {label} for {duration:g} s")
        pool.go(start, stop)
        chaos.start(at=start, until=stop)
        try:
            time.sleep(max(0.0, stop - time.monotonic()))
        finally:
            chaos.stop()  # heals: paused workers resume and can finish
        pool.wait(stop + 2 * ttl + _EXIT_GRACE)

        say("checking the history")
        failed = next(
            ((index, code) for index, code in enumerate(pool.exit_codes()) if code not in (0, -9)),
            None,
        )
        if failed is not None:
            index, code = failed
            raise RuntimeError(f"worker {index} exited with code {code}:\n{pool.log_tail(index)}")
        writes = _resource_log(resource)
        records = list(pool.records())
        errors = Counter(str(r["error"]) for r in records if r.get("kind") == "error")
        rejected = sum(1 for r in records if r.get("kind") == "hold" and r["write"] == "rejected")
        ran_fair = _ran_fair(records)
        holds = pool.holds()
        if lock == "many":
            check = _check_sets(pool, resource, start=start, end=stop, rejected=rejected)
        elif permits is None:
            checker = check_election if election else check_history
            check = checker(holds, writes, start=start, end=stop, stale_writes_rejected=rejected)
        else:
            # K holders write side by side: only the count of holders is checked.
            whole = check_history(holds, [], start=start, end=stop)
            k_check = check_k_exclusion(holds, permits)
            check = dataclasses.replace(
                whole,
                writes=len(writes),
                overlaps=k_check.excess,
                token_order_violations=0,
                stale_writes_rejected=rejected,
                overlap_examples=(),
            )
        report = VerifyReport(
            nemesis=nemesis,
            config=label,
            servers=servers,
            workers=workers,
            duration=duration,
            ttl=ttl,
            quarantine=quarantine,
            fencing=fencing,
            seed=seed,
            faults=chaos.faults,
            stragglers=pool.killed,
            errors=dict(errors),
            acquisitions=check.acquisitions,
            acquisitions_per_second=check.acquisitions_per_second,
            writes=check.writes,
            overlaps=check.overlaps,
            stale_writes_accepted=check.stale_writes_accepted,
            stale_writes_rejected=check.stale_writes_rejected,
            token_order_violations=check.token_order_violations,
            longest_gap=check.longest_gap,
            contender=contender,
            permits=permits,
            fair=ran_fair,
        )
        say(report.summary())
    return report


def _ran_fair(records: list[dict[str, Any]]) -> bool:
    """Whether the workers said they ran fair locks (every one of them)."""
    fair = [bool(r["fair"]) for r in records if r.get("kind") == "config"]
    return bool(fair) and all(fair)


def _check_sets(
    pool: WorkerPool, resource: LocalServer, *, start: float, end: float, rejected: int
) -> HistoryCheck:
    """The check of a ``lock="many"`` run: two holders of sets that share a name never
    overlap, and each name's writes, checked against the holds of the sets that
    contained it, as a lock's are (no stale write accepted, tokens in order)."""
    set_holds = pool.set_holds(LOCK_NAME)
    holds = pool.holds()  # the same records in the same order, with their tokens
    whole = check_history(holds, [], start=start, end=end)
    overlaps = sum(1 for _ in overlapping_set_pairs(set_holds))
    writes = stale = disorder = 0
    for member in range(SET_NAMES):
        name = set_member(LOCK_NAME, member)
        mine = [hold for hold, of in zip(holds, set_holds, strict=True) if name in of.names]
        log = _resource_log(resource, set_member(LOG_KEY, member))
        one = check_history(mine, log, start=start, end=end)
        writes += one.writes
        stale += one.stale_writes_accepted
        disorder += one.token_order_violations
    return dataclasses.replace(
        whole,
        writes=writes,
        overlaps=overlaps,
        overlap_examples=(),
        stale_writes_accepted=stale,
        token_order_violations=disorder,
        stale_writes_rejected=rejected,
    )


def _resource_log(resource: LocalServer, key: str = LOG_KEY) -> list[Write]:
    client = redis.Redis(host=resource.host, port=resource.port, socket_timeout=10.0)
    try:
        raw = client.lrange(key, 0, -1)
    finally:
        client.close()
    assert isinstance(raw, list)
    return [decode_payload(entry) for entry in raw]


def format_table(reports: Iterable[VerifyReport]) -> str:
    """A markdown table with one row per report (nemesis x configuration)."""
    header = (
        "| nemesis | configuration | N | overlaps | stale writes accepted "
        "| stale writes rejected | acquisitions/s | longest gap (s) | faults | verdict |"
    )
    rule = "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"
    rows = [header, rule]
    for r in reports:
        verdict = "ok" if r.ok else "**UNSAFE**" if not r.safe else "no acquisitions"
        rows.append(
            f"| {r.nemesis} | {r.config} | {r.servers} | {r.overlaps} "
            f"| {r.stale_writes_accepted} | {r.stale_writes_rejected} "
            f"| {r.acquisitions_per_second:.1f} | {r.longest_gap:.2f} | {r.faults} "
            f"| {verdict} |"
        )
    return "\n".join(rows)
