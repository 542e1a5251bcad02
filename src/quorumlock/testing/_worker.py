"""Worker processes of the verify suite: each contends for one lock and writes a resource.

The parent side (:class:`WorkerPool`) runs :func:`main` once per worker through the
worker pool the benchmarks use too (``quorumlock/testing/_pool.py``: a fresh
interpreter per worker, readiness, bounded lifetime, cleanup by PID).

The protocol, through files in a private run directory and the pool's pipes:

1. the parent writes each worker's :class:`WorkerSpec` as JSON and starts the child;
2. the child imports everything, then replies ready (see ``_pool.py``);
3. once every child is ready, the parent writes ``{"start": T0, "stop": T1}`` (monotonic
   times) on each child's stdin and closes it. EOF instead means "exit now";
4. from T0 until T1 the child loops: acquire, record, work, write, release, rest. Every
   finished acquisition is appended to the record file as one JSON line, flushed at
   once, so a child killed later loses at most the acquisition in progress (before
   the loop, a quorumlock worker records its ``Redlock``'s ``fair`` as it runs, with
   ``{"kind": "config"}``);
5. the child appends ``{"kind": "done"}`` and exits by itself shortly after T1.

The worker's loop (see :func:`_contend`) is where the faults bite::

    acquire -> start = now; deadline = start + validity
            -> check validity > 0; set the "in critical section" flag
            -> sleep a random work time          <- a SIGSTOP here makes a stale holder
            -> write the payload (fenced or not); clear the flag
            -> end = min(now, deadline); release; record the hold

The flag lives in a shared memory-mapped file (one byte per worker) that the
``pause-clients`` nemesis reads to pause a worker between its check and its write.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import random
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import redis

from quorumlock import (
    Lock,
    LockNotAcquired,
    QuorumLockError,
    RedisFence,
    Redlock,
    StaleFencingToken,
)
from quorumlock.testing._checker import Hold, SetHold, Write
from quorumlock.testing._legacy import LegacyLock, LegacyLocks
from quorumlock.testing._pool import (
    ProcessPool,
    WorkerError,
    WorkerProcess,
    connect_parent,
    entry,
    read_records,
)
from quorumlock.testing._pool import RecordFile as _Records

__all__ = ["WorkerHandle", "WorkerPool", "WorkerSpec", "main"]

_READY_TIMEOUT: Final = 60.0
_ERROR_PAUSE: Final = 0.05  # after an unexpected error, so a broken setup cannot spin


class Writer(Protocol):
    """Appends a payload to the resource: True if applied, False if the fence refused it."""

    def __call__(self, token: int | None, payload: str, member: int | None = None) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerSpec:
    """Everything one worker process needs, serialised as JSON on its command line.

    Times are seconds. ``max_ttl`` None turns the restart quarantine off; ``fencing``
    False makes the worker write with a plain ``RPUSH`` instead of through the fence.
    ``contender`` is ``"quorumlock"`` (a :class:`~quorumlock.Redlock` over ``servers``)
    or ``"legacy"`` (the legacy SETNX lock on the first of them, see ``_legacy.py``).
    """

    index: int
    servers: tuple[str, ...]
    resource: str
    lock_name: str
    log_key: str
    fence_name: str
    ttl: float
    max_ttl: float | None
    fencing: bool
    instance_timeout: float
    retry_delay: float
    work: tuple[float, float]
    rest: tuple[float, float]
    acquire_timeout: float
    records: str
    flags: str
    seed: int
    contender: str = "quorumlock"
    election: bool = False  # campaign in a leader election instead of taking the lock
    # "mutex", or "rw": a read-write lock, each hold a read with probability 1/2 (a
    # reader writes nothing to the resource; its hold is recorded as shared), or "many":
    # each hold a lock_many of a random non-empty subset of the names
    # ``lock_name:0`` .. ``lock_name:(SET_NAMES - 1)``, writing to each name's own log
    # through each name's own fence (see :func:`set_member`)
    lock: str = "mutex"
    #: > 0: contend for one of this many permits of a semaphore named ``lock_name``.
    permits: int = 0
    fair: bool = False  # Redlock(fair=True): a single lock's waiters served in arrival order

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerSpec:
        raw: dict[str, Any] = json.loads(text)
        raw["servers"] = tuple(raw["servers"])
        raw["work"] = (float(raw["work"][0]), float(raw["work"][1]))
        raw["rest"] = (float(raw["rest"][0]), float(raw["rest"][1]))
        return cls(**raw)


#: How many names the sets of ``lock="many"`` are drawn from: three give sets that share
#: a name most of the time, and disjoint ones ({a}, {b}) often enough to run side by side.
SET_NAMES: Final = 3


def set_member(base: str, index: int) -> str:
    """The name (or log key, or fence name) of member ``index`` of a ``lock="many"`` run."""
    return f"{base}:{index}"


def encode_payload(worker: int, acquired: float, token: int | None) -> str:
    """The value a worker appends to the resource log: who wrote, for which acquisition."""
    return json.dumps({"worker": worker, "acquired": acquired, "token": token})


def decode_payload(raw: bytes | str) -> Write:
    """A :class:`Write` from a resource log entry.

    Raises:
        ValueError: the entry is not a payload written by :func:`encode_payload`.
    """
    try:
        data = json.loads(raw)
        token = data["token"]
        return Write(
            worker=int(data["worker"]),
            acquired=float(data["acquired"]),
            token=None if token is None else int(token),
        )
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a verify payload: {raw!r}") from exc


# --------------------------------------------------------------------------------------
# The child side
# --------------------------------------------------------------------------------------


_ENTRY: Final = entry(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of one worker process: ``python -c "$_ENTRY" WORKER_SPEC``.

    ``WORKER_SPEC`` is a path to a JSON :class:`WorkerSpec`. Returns the exit status: 0 after a
    normal run (or when the parent closed stdin without a start line), 2 for bad usage,
    130 after a ``KeyboardInterrupt``. Other exceptions propagate (exit status 1, with a
    traceback in the worker's log, which :func:`verify` quotes).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(f"usage: python -c {_ENTRY!r} WORKER_SPEC.json", file=sys.stderr)
        return 2
    spec = WorkerSpec.from_json(Path(args[0]).read_text(encoding="utf-8"))
    records = _Records(spec.records)
    try:
        window = connect_parent().command()  # bounded by the parent: a line or EOF
        if window is None:
            return 0
        _contend(spec, records, start=float(window["start"]), stop=float(window["stop"]))
        records.add(kind="done")
        return 0
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: leave quietly
        return 130
    finally:
        records.close()


def _contend(spec: WorkerSpec, records: _Records, *, start: float, stop: float) -> None:
    rng = random.Random(spec.seed)
    resource = redis.Redis.from_url(spec.resource, socket_timeout=5.0)
    write = _writer(spec, resource)
    redlock: Redlock | LegacyLocks
    if spec.contender == "legacy":
        redlock = LegacyLocks(
            spec.servers[0],
            timeout=spec.instance_timeout,
            retry_delay=spec.retry_delay,
            seed=rng.randrange(2**32),
        )
    else:
        redlock = Redlock(
            list(spec.servers),
            max_ttl=spec.max_ttl,
            fencing=spec.fencing,
            instance_timeout=spec.instance_timeout,
            retry_delay=spec.retry_delay,
            fair=spec.fair,
        )
        # what the report's configuration says is what the workers ran
        records.add(kind="config", fair=redlock.config.fair)
    flags_fd = os.open(spec.flags, os.O_RDWR)
    flags = mmap.mmap(flags_fd, 0)
    os.close(flags_fd)
    try:
        time.sleep(max(0.0, start - time.monotonic()))
        rw = None
        if spec.lock == "rw":
            assert isinstance(redlock, Redlock)  # verify() refuses a read-write legacy lock
            rw = redlock.rwlock(spec.lock_name, ttl=spec.ttl)
        while True:
            left = stop - time.monotonic()
            if left <= 0:
                break
            if spec.election:
                assert isinstance(redlock, Redlock)  # verify() refuses an election on legacy
                _campaign(
                    spec, redlock, records=records, flags=flags, write=write, rng=rng, left=left
                )
                continue
            reading = rw is not None and rng.random() < 0.5
            members: list[int] = []
            lock: Lock | LegacyLock
            if spec.lock == "many":
                assert isinstance(redlock, Redlock)  # verify() refuses a legacy set
                members = sorted(rng.sample(range(SET_NAMES), rng.randint(1, SET_NAMES)))
                names = [set_member(spec.lock_name, i) for i in members]
                lock = redlock.lock_many(names, ttl=spec.ttl)
            elif spec.permits:
                assert isinstance(redlock, Redlock)  # verify() refuses a legacy semaphore
                lock = redlock.semaphore(spec.lock_name, permits=spec.permits, ttl=spec.ttl)
            elif rw is None:
                lock = redlock.lock(spec.lock_name, ttl=spec.ttl)
            else:
                lock = rw.read() if reading else rw.write()
            try:
                acquired = lock.acquire(blocking=True, timeout=min(spec.acquire_timeout, left))
            except LockNotAcquired as exc:  # QuorumUnavailable included
                records.add(kind="error", error=type(exc).__name__)
                time.sleep(spec.retry_delay)  # in case it was raised without waiting
                continue
            except Exception as exc:
                _unexpected(records, exc)
                continue
            if not acquired:
                records.add(kind="error", error="timeout")
                continue
            began = time.monotonic()
            # validity is read after began: began + validity never exceeds the deadline.
            deadline = began + lock.validity
            token = lock.fencing_token
            outcome = "skipped"
            try:
                if lock.validity > 0:
                    flags[spec.index] = 1
                    try:
                        time.sleep(rng.uniform(*spec.work))
                        payload = encode_payload(spec.index, began, token)
                        if members:  # every name of the set: its own log and fence
                            applied = [write(token, payload, member) for member in members]
                            outcome = "accepted" if all(applied) else "rejected"
                        elif not reading:
                            outcome = "accepted" if write(token, payload) else "rejected"
                    finally:
                        flags[spec.index] = 0
            except Exception as exc:
                outcome = "failed"
                _unexpected(records, exc)
            finally:
                ended = min(time.monotonic(), deadline)
                with contextlib.suppress(QuorumLockError, RuntimeError):
                    lock.release()
                records.add(
                    kind="hold",
                    start=began,
                    end=max(ended, began),
                    token=token,
                    write=outcome,
                    shared=reading,
                    members=members,
                )
            time.sleep(rng.uniform(*spec.rest))
    finally:
        flags.close()
        redlock.close()
        resource.close()


def _campaign(
    spec: WorkerSpec,
    redlock: Redlock,
    *,
    records: _Records,
    flags: mmap.mmap,
    write: Writer,
    rng: random.Random,
    left: float,
) -> None:
    """One term of the election variant of the loop: campaign, lead (work, write with
    the term number as fencing token), resign. The term is recorded as a hold whose end
    is no later than the leadership promised: at the start, or as last renewed before
    the write."""
    election = redlock.election(spec.lock_name, ttl=spec.ttl, identity=f"worker-{spec.index}")
    began = deadline = 0.0
    number: int | None = None
    outcome = "skipped"
    try:
        with election.campaign(timeout=min(spec.acquire_timeout, left)) as term:
            began = time.monotonic()
            deadline = began + term.validity
            number = term.number
            try:
                if term.validity > 0:
                    flags[spec.index] = 1
                    try:
                        time.sleep(rng.uniform(*spec.work))
                        now = time.monotonic()
                        # Renewed while the work ran: the promise as of now, if any is
                        # left (none once it ran out, a paused worker's case).
                        if (validity := term.validity) > 0:
                            deadline = max(deadline, now + validity)
                        payload = encode_payload(spec.index, began, number)
                        outcome = "accepted" if write(number, payload) else "rejected"
                    finally:
                        flags[spec.index] = 0
            except Exception as exc:
                outcome = "failed"
                _unexpected(records, exc)
            ended = min(time.monotonic(), deadline)
    except LockNotAcquired as exc:  # QuorumUnavailable and the timeout included
        records.add(kind="error", error=type(exc).__name__)
        time.sleep(spec.retry_delay)
        return
    except QuorumLockError:  # LockLost at the end of the term: recorded below all the same
        ended = min(time.monotonic(), deadline)
    except Exception as exc:
        _unexpected(records, exc)
        return
    if number is not None:
        records.add(kind="hold", start=began, end=max(ended, began), token=number, write=outcome)
    time.sleep(rng.uniform(*spec.rest))


def _writer(spec: WorkerSpec, resource: redis.Redis) -> Writer:
    """How this worker appends to the resource log: True if applied, False if refused.

    With fencing, through :class:`quorumlock.RedisFence` (refusing a token lower than one
    it has seen); without, a plain ``RPUSH`` that nothing can refuse. ``member`` (a
    ``lock="many"`` run) picks that name's own log and fence instead of the lock's.
    """
    if not spec.fencing:

        def plain(token: int | None, payload: str, member: int | None = None) -> bool:
            log_key = spec.log_key if member is None else set_member(spec.log_key, member)
            resource.rpush(log_key, payload)
            return True

        return plain

    fences: dict[int | None, RedisFence] = {}

    def fenced(token: int | None, payload: str, member: int | None = None) -> bool:
        if token is None:
            raise RuntimeError("fencing=True, but the lock returned no fencing token")
        if (fence := fences.get(member)) is None:
            name = spec.fence_name if member is None else set_member(spec.fence_name, member)
            fence = fences[member] = RedisFence(resource, name)
        log_key = spec.log_key if member is None else set_member(spec.log_key, member)
        try:
            fence.execute(token, "RPUSH", log_key, payload)
        except StaleFencingToken:
            return False
        return True

    return fenced


def _unexpected(records: _Records, exc: Exception) -> None:
    records.add(kind="error", error=type(exc).__name__, detail=str(exc)[:200])
    traceback.print_exception(exc, file=sys.stderr)
    time.sleep(_ERROR_PAUSE)


# --------------------------------------------------------------------------------------
# The parent side
# --------------------------------------------------------------------------------------


class WorkerHandle(WorkerProcess):
    """One worker process started by :class:`WorkerPool`: signals go to its PID only."""

    def __init__(self, index: int, process: WorkerProcess, flags: mmap.mmap) -> None:
        super().__init__(process.popen)
        self.index = index
        self._flags = flags

    @property
    def in_critical_section(self) -> bool:
        """True between the worker's validity check and the end of its write."""
        return self._flags[self.index] == 1


class WorkerPool:
    """Starts, releases, waits for and (if they overrun) kills the worker processes.

    Every process it starts is killed by :meth:`close` if it is still running, also when
    the caller is interrupted. Use it as a context manager. ``run_dir`` receives each
    worker's spec and log; the specs name their record files and the shared flags file.

    Raises:
        ValueError: the specs are not numbered 0, 1, 2... or name different flags files.
    """

    def __init__(self, run_dir: Path, specs: Sequence[WorkerSpec]) -> None:
        if [spec.index for spec in specs] != list(range(len(specs))):
            raise ValueError("worker specs must be numbered 0, 1, 2... in order")
        if len({spec.flags for spec in specs}) != 1:
            raise ValueError("every worker spec must name the same flags file")
        self._dir = run_dir
        self._specs = tuple(specs)
        self._pool: ProcessPool | None = None
        flags_path = Path(specs[0].flags)
        flags_path.write_bytes(b"\0" * len(specs))
        with flags_path.open("r+b") as fh:
            self._flags = mmap.mmap(fh.fileno(), 0)
        self.handles: list[WorkerHandle] = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def killed(self) -> int:
        """How many workers had to be killed."""
        return 0 if self._pool is None else self._pool.killed

    def start(self) -> None:
        """Start every worker and wait until all are ready.

        Raises:
            RuntimeError: a worker exited during start-up (its log's end is quoted).
            TimeoutError: the workers were not all ready within 60 s.
        """
        paths = [self._dir / f"worker-{spec.index}.json" for spec in self._specs]
        for spec, path in zip(self._specs, paths, strict=True):
            path.write_text(spec.to_json(), encoding="utf-8")
        self._pool = ProcessPool(
            __name__, [[str(path)] for path in paths], self._dir, ready_timeout=_READY_TIMEOUT
        )
        self.handles = [
            WorkerHandle(index, process, self._flags)
            for index, process in enumerate(self._pool.processes)
        ]

    def go(self, start: float, stop: float) -> None:
        """Tell every worker to contend from ``start`` until ``stop`` (monotonic times)."""
        pool = self._started()
        for index in range(len(pool)):
            with contextlib.suppress(WorkerError):  # it died; seen in its exit code
                pool.send(index, {"start": start, "stop": stop})
        pool.end_input()

    def wait(self, deadline: float) -> None:
        """Wait until every worker exited, or ``deadline``; then kill the stragglers."""
        self._started().wait(deadline)
        self.close()

    def close(self) -> None:
        """SIGKILL (by PID) every worker still running, and reap them all. Idempotent."""
        if self._pool is not None:
            self._pool.close()
        if not self._flags.closed:
            with contextlib.suppress(BufferError):
                self._flags.close()

    def exit_codes(self) -> list[int | None]:
        return self._started().exit_codes()

    def log_tail(self, index: int, lines: int = 20) -> str:
        return "" if self._pool is None else self._pool.log_tail(index, lines)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every complete record line of every worker (a torn last line is skipped)."""
        for spec in self._specs:
            for record in read_records(spec.records):
                record["worker"] = spec.index
                yield record

    def holds(self) -> list[Hold]:
        return [
            Hold(
                worker=r["worker"],
                start=r["start"],
                end=r["end"],
                token=r["token"],
                shared=bool(r.get("shared", False)),
            )
            for r in self.records()
            if r.get("kind") == "hold"
        ]

    def set_holds(self, base: str) -> list[SetHold]:
        """The holds of a ``lock="many"`` run, each with the names of its set."""
        return [
            SetHold(
                worker=r["worker"],
                start=r["start"],
                end=r["end"],
                names=frozenset(set_member(base, i) for i in r.get("members", ())),
            )
            for r in self.records()
            if r.get("kind") == "hold"
        ]

    def _started(self) -> ProcessPool:
        if self._pool is None:
            raise RuntimeError("the workers were not started")
        return self._pool
