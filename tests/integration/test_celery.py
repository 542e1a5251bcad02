"""quorumlock.celery with real Celery workers: a worker process (``celery worker``) and a
local valkey-server as broker and result backend, three more as the lock's servers.

The tasks are in ``tests/integration/celery_app.py``; they report their runs on the
broker's server (``started:<tag>``) and wait for the test to open their gate
(``gate:<tag>``), so every test follows the worker without sleeping for it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import logging
import os
import pickle
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest
from billiard.exceptions import SoftTimeLimitExceeded
from celery import Celery, chain, chord
from celery import group as group_of
from celery.result import AsyncResult, EagerResult
from kombu.exceptions import EncodeError

import quorumlock
import quorumlock.celery
from quorumlock import ConfigurationError, LockNotAcquired, Redlock
from quorumlock._algorithm.config import RESERVED_PREFIXES
from quorumlock.celery import (
    HANDLE_HEADER,
    SKIPPED,
    Singleton,
    SingletonTask,
    TaskLocked,
    TaskLockLost,
    configure,
    current_lock,
)
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, values
from tests.integration.test_lock_objects import interrupted_at, sweep_points

ROOT = Path(__file__).resolve().parents[2]
# Where the quorumlock under test is imported from (the worktree's src/ with PYTHONPATH):
# the worker processes import that one, not whichever one the environment has installed.
PACKAGE_ROOT = Path(quorumlock.__file__).resolve().parents[1]
WAIT = 30.0  # the longest any wait of these tests lasts (on a loaded machine)


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(0.02)


class Worker:
    """A ``celery worker`` process of the app module ``app``, on ``queue``."""

    def __init__(
        self,
        app: str,
        env: dict[str, str],
        log: Path,
        *,
        pool: str,
        queue: str = "celery",
        cwd: Path = ROOT,
    ) -> None:
        self.log = log
        # Celery's Django fixup would set up any Django project the environment names.
        env = {key: value for key, value in env.items() if key != "DJANGO_SETTINGS_MODULE"}
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            app,
            "worker",
            f"--pool={pool}",
            "--concurrency=4",
            "-Q",
            queue,
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
        ]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while " ready." not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the celery worker did not start:\n{self.output()[-3000:]}")
            time.sleep(0.05)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """A cold shutdown (SIGQUIT): the worker ends its pool's processes at once,
        without waiting for a task left waiting by a failed test."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def group() -> Iterator[LocalServerGroup]:
    """Three lock servers, and a fourth as the broker and result backend."""
    with LocalServerGroup(4) as servers:
        yield servers


@pytest.fixture(scope="module")
def env(group: LocalServerGroup) -> Iterator[dict[str, str]]:
    names = {
        "QL_TEST_BROKER": f"{group.urls[3]}/0",
        "QL_TEST_SERVERS": ",".join(group.urls[:3]),
    }
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(names)
    yield {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(PACKAGE_ROOT)])}
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def tasks(env: dict[str, str]) -> Iterator[ModuleType]:
    """``tests/integration/celery_app.py`` in this process (the side that enqueues)."""
    sys.modules.pop("tests.integration.celery_app", None)
    module = importlib.import_module("tests.integration.celery_app")
    yield module
    module.redlock.close()
    sys.modules.pop("tests.integration.celery_app", None)


@pytest.fixture(scope="module")
def worker(
    env: dict[str, str], tasks: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Worker]:
    """One worker for the module: 4 prefork children, so that duplicates run side by
    side (the threads pool runs the example's worker, the solo pool the killed one)."""
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    started = Worker("tests.integration.celery_app", env, log, pool="prefork", queue="celery")
    yield started
    started.stop()


@pytest.fixture
def tag() -> str:
    return uuid.uuid4().hex[:12]


def runs(tasks: ModuleType, tag: str) -> int:
    """How many runs of ``tag`` started."""
    return int(tasks._reports.llen(f"started:{tag}"))


def open_gate(tasks: ModuleType, tag: str) -> None:
    tasks._reports.set(f"gate:{tag}", 1)


def held_by(group: LocalServerGroup, key: str) -> str | None:
    """The token a majority of the three lock servers has for ``key`` (None: no one)."""
    found = values(list(group)[:3], key)
    for token in found:
        if token is not None and found.count(token) >= 2:
            return token
    return None


def get(result: AsyncResult[object]) -> object:
    return result.get(timeout=WAIT)


# --------------------------------------------------------------------------------------
# With a worker process
# --------------------------------------------------------------------------------------


def test_duplicates_are_skipped(worker: Worker, tasks: ModuleType, tag: str) -> None:
    """Three runs of one key at once on four worker threads: one runs, two are skipped
    (SKIPPED, logged); a run of another key is not held up."""
    first = tasks.hold.delay(tag)
    wait_until(lambda: runs(tasks, tag) == 1, "the first run started")
    duplicates = [tasks.hold.delay(tag), tasks.hold.delay(tag)]
    assert [get(r) for r in duplicates] == [SKIPPED, SKIPPED]
    other = f"{tag}-other"
    open_gate(tasks, other)
    assert get(tasks.hold.delay(other)) == other
    assert runs(tasks, tag) == 1
    open_gate(tasks, tag)
    assert get(first) == tag
    assert "skipped: lock 'hold:" + tag in worker.output()
    assert get(tasks.hold.delay(tag)) == tag  # released at the end of the run
    assert runs(tasks, tag) == 2


def test_raise_when_taken(worker: Worker, tasks: ModuleType, tag: str) -> None:
    first = tasks.hold_or_raise.delay(tag)
    wait_until(lambda: runs(tasks, tag) == 1, "the first run started")
    with pytest.raises(TaskLocked, match=f"lock 'raise:{tag}' is held"):
        get(tasks.hold_or_raise.delay(tag))
    open_gate(tasks, tag)
    assert get(first) == tag


def test_retry_until_free(worker: Worker, tasks: ModuleType, tag: str) -> None:
    """on_taken="retry": Celery's retry, with the task's countdown, until the lock is free."""
    lock = tasks.redlock.lock(f"retry:{tag}", ttl=20)
    assert lock.acquire(blocking=False)
    try:
        result = tasks.retried.delay(tag)
        wait_until(lambda: result.state == "RETRY", "the task retried")
        assert runs(tasks, tag) == 0
    finally:
        lock.release()
    retries = get(result)
    assert isinstance(retries, int)
    assert retries >= 1
    assert runs(tasks, tag) == 1


def test_enqueue_mode(worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str) -> None:
    """delay() takes the lock: a duplicate is not queued; the worker adopts the lock (the
    same token on the servers) and releases it when the task ends, failed or not."""
    key = f"enqueue:{tag}"
    first = tasks.queued.delay(tag)
    token = held_by(group, key)
    assert token is not None  # held from the enqueue on
    duplicate = tasks.queued.delay(tag)
    assert isinstance(duplicate, EagerResult)
    assert get(duplicate) == SKIPPED
    wait_until(lambda: runs(tasks, tag) == 1, "the task started")
    assert held_by(group, key) == token  # adopted, not acquired again
    open_gate(tasks, tag)
    assert get(first) == tag
    assert values(list(group)[:3], key) == [None, None, None]
    assert runs(tasks, tag) == 1

    failing = f"{tag}-fails"
    open_gate(tasks, failing)
    with pytest.raises(RuntimeError, match="failed on purpose"):
        get(tasks.queued.delay(failing, fail=True))
    assert values(list(group)[:3], f"enqueue:{failing}") == [None, None, None]
    again = tasks.queued.delay(failing)
    assert not isinstance(again, EagerResult)  # queued: the failed run released the lock
    assert get(again) == failing


def test_enqueue_mode_key_of_a_value_the_serializer_changes(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """A tuple argument reaches the worker as a list (JSON): the key is made of the
    value as the worker decodes it on both sides, so that the run adopts the lock
    taken at enqueue (it failed: "the message carries the lock 'pair:('x', 1)', but
    the task's key is 'pair:['x', 1]'"); a direct call takes the same lock."""
    key = f"pair:{[tag, 1]}"
    assert get(tasks.queued_pair.delay((tag, 1))) == tag
    assert values(list(group)[:3], key) == [None, None, None]
    lock = tasks.redlock.lock(key, ttl=10)
    assert lock.acquire(blocking=False)
    try:
        duplicate = tasks.queued_pair.delay((tag, 1))
        assert isinstance(duplicate, EagerResult)
        assert get(duplicate) == SKIPPED
        assert tasks.queued_pair((tag, 1)) == SKIPPED  # a direct call
    finally:
        lock.release()


def test_enqueue_mode_skip_ends_in_the_result_backend(
    worker: Worker, tasks: ModuleType, tag: str
) -> None:
    """A duplicate that is not queued keeps the caller's task id and its SKIPPED is in
    the result backend: AsyncResult(id), a group, a chord and a chain that contain it
    finish (they waited for ever), as with a run skipped on a worker."""
    first = tasks.queued.delay(tag)
    duplicate = tasks.queued.apply_async((tag,), task_id=f"dup-{tag}")
    assert duplicate.id == f"dup-{tag}"
    assert AsyncResult(f"dup-{tag}", app=tasks.app).get(timeout=WAIT) == SKIPPED
    assert get(chain(tasks.queued.si(tag), tasks.echo.s()).apply_async()) == SKIPPED
    # each gate opens once both runs are enqueued: a first run that ended before the
    # second was sent would have released the lock, and the second would run too
    in_group, in_chord = f"{tag}-group", f"{tag}-chord"
    both = group_of(tasks.queued.s(in_group), tasks.queued.s(in_group)).apply_async()
    open_gate(tasks, in_group)
    assert both.get(timeout=WAIT) == [in_group, SKIPPED]
    gathered = chord([tasks.queued.s(in_chord), tasks.queued.s(in_chord)])(tasks.echo.s())
    open_gate(tasks, in_chord)
    assert get(gathered) == [in_chord, SKIPPED]
    open_gate(tasks, tag)
    assert get(first) == tag
    assert runs(tasks, tag) == runs(tasks, in_group) == runs(tasks, in_chord) == 1


@pytest.mark.parametrize("discarded", ["revoked", "expired"])
def test_enqueue_mode_discarded_message_releases_its_lock(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str, discarded: str
) -> None:
    """A message that the worker discards without running it (revoked, or expired in the
    queue) releases the lock it carries: the next enqueue is queued and runs (it was
    skipped, and the lock held, until the ttl of 10 s)."""
    key = f"enqueue:{tag}"
    if discarded == "revoked":
        result = tasks.queued.apply_async((tag,), countdown=1.0)
        result.revoke()
    else:
        result = tasks.queued.apply_async((tag,), countdown=1.0, expires=0.5)
    assert held_by(group, key) is not None
    wait_until(lambda: result.state == "REVOKED", f"the task was discarded ({discarded})")
    # well before the ttl (10 s from the enqueue), with room for a loaded machine
    wait_until(lambda: held_by(group, key) is None, "the lock was released", timeout=6.0)
    # the worker logs the release once it is done: the line may come a moment after
    said = "discarded (revoked or expired): lock 'enqueue:" + tag
    wait_until(lambda: said in worker.output(), "the worker logged the release")
    open_gate(tasks, tag)
    again = tasks.queued.delay(tag)
    assert not isinstance(again, EagerResult)
    assert get(again) == tag
    assert runs(tasks, tag) == 1


class Unsendable:
    """An argument the JSON serializer refuses: the send fails after the lock was taken."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __str__(self) -> str:
        return self.tag


def test_enqueue_mode_raise_and_send_failure(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """A duplicate raises TaskLocked when on_taken="raise"; a send that fails releases
    the lock it took (nothing is left behind on the servers)."""
    app = Celery("enqueue-raise", broker=tasks.BROKER, set_as_current=False)
    configure(app, tasks.redlock, on_taken="raise")

    @app.task(base=SingletonTask, singleton=Singleton("send:{0}", mode="enqueue"))
    def send(x: object) -> str:
        return str(x)

    with pytest.raises(EncodeError):
        send.delay(Unsendable(tag))
    assert values(list(group)[:3], f"send:{tag}") == [None, None, None]
    lock = tasks.redlock.lock(f"send:{tag}", ttl=10)
    assert lock.acquire(blocking=False)
    try:
        with pytest.raises(TaskLocked) as raised:
            send.delay(tag)
        assert raised.value.name == f"send:{tag}"
        assert isinstance(raised.value, LockNotAcquired)
    finally:
        lock.release()


def test_enqueue_mode_handle_expired_in_the_queue(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """A lock taken at enqueue that expired before the run (ttl 0.5 s, a countdown of
    1.5 s): the worker says so and acquires the lock at run time instead."""
    result = tasks.late.apply_async((tag,), countdown=1.5)
    assert get(result) == tag
    assert f"late[{result.id}]: the lock taken at enqueue expired in the queue" in worker.output()
    assert values(list(group)[:3], f"late:{tag}") == [None, None, None]


def test_enqueue_mode_task_that_retries_itself(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """self.retry() of an enqueue-mode task is queued although its run holds the lock
    (it is not a duplicate); the retried run takes the lock at run time."""
    result = tasks.retries_itself.delay(tag)
    assert get(result) == 1
    assert runs(tasks, tag) == 2
    assert values(list(group)[:3], f"again:{tag}") == [None, None, None]


@pytest.mark.parametrize("enqueued", [False, True], ids=["run", "enqueue"])
def test_a_retry_waits_for_the_run_that_queued_it(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str, enqueued: bool
) -> None:
    """A run that queued its retry holds the lock until it ends, here a second after the
    retry was queued: the retried run, on another worker process meanwhile, waits for
    that end instead of being skipped as a duplicate (the task's work would be lost)."""
    task = tasks.retries_slowly_enqueued if enqueued else tasks.retries_slowly
    result = task.delay(tag)
    assert get(result) == 1
    assert runs(tasks, tag) == 2
    key = f"slowly-enqueued:{tag}" if enqueued else f"slowly:{tag}"
    assert values(list(group)[:3], key) == [None, None, None]
    assert f"skipped: lock {key!r}" not in worker.output()


def test_enqueue_mode_handle_of_another_key(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """A message that carries the lock of another key (made by hand here): the run
    fails with ConfigurationError and releases that lock; nothing is left behind."""
    other = tasks.redlock.lock(f"enqueue:{tag}-other", ttl=10)
    assert other.acquire(blocking=False)
    handle = other.export()
    result = tasks.app.send_task(
        tasks.queued.name, (tag,), headers={HANDLE_HEADER: handle.to_dict()}
    )
    with pytest.raises(ConfigurationError, match="carries the lock"):
        get(result)
    assert values(list(group)[:3], f"enqueue:{tag}-other") == [None, None, None]
    assert runs(tasks, tag) == 0


def test_errors_survive_pickle() -> None:
    for error in (TaskLocked("taken", name="k"), TaskLockLost("lost", name="k")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert (str(copy), copy.name) == (str(error), "k")
    assert TaskLocked("rebuilt from a message alone").name == ""


@contextlib.contextmanager
def majority_refusing(group: LocalServerGroup) -> Iterator[None]:
    """Two of the three lock servers refuse every key to the default user (its ACL): a
    majority refuses every acquire at once (QuorumUnavailable), and none leaves a key
    behind (a paused server may apply a stale write when it wakes up, and a replica
    promoted back is quarantined)."""
    refusing = [client_of(server) for server in list(group)[:2]]
    for client in refusing:
        client.execute_command("ACL", "SETUSER", "default", "resetkeys", "~nothing-here")  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        for client in refusing:
            client.execute_command("ACL", "SETUSER", "default", "resetkeys", "~*")  # type: ignore[no-untyped-call]


def test_quorum_unavailable_reaches_the_caller(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """A run whose lock cannot be decided fails with QuorumUnavailable, and the caller's
    result.get() raises that very class, with the lock's name (JSON result backend)."""
    with majority_refusing(group):
        result = tasks.hold.delay(tag, wait=False)
        with pytest.raises(quorumlock.QuorumUnavailable) as raised:
            get(result)
    assert raised.value.name == f"hold:{tag}"
    assert str(raised.value).startswith(f"could not acquire lock 'hold:{tag}'")
    assert runs(tasks, tag) == 0


def test_autoretry_for_quorum_unavailable(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """autoretry_for=(QuorumUnavailable,): a run whose lock cannot be decided is retried
    by Celery, and runs once the servers can decide it."""
    with majority_refusing(group):
        result = tasks.autoretried.delay(tag)
        wait_until(lambda: result.state in {"RETRY", "FAILURE"}, "the run failed or retried")
        assert result.state == "RETRY"
        assert runs(tasks, tag) == 0
    retries = get(result)
    assert isinstance(retries, int)
    assert retries >= 1
    assert runs(tasks, tag) == 1
    assert values(list(group)[:3], f"autoretry:{tag}") == [None, None, None]


def _errors() -> list[BaseException]:
    """One of each exception class that quorumlock and quorumlock.celery make public."""
    lock_errors = (
        quorumlock.LockNotAcquired,
        quorumlock.LockLost,
        quorumlock.LockNotHeld,
        quorumlock.LockNotReentrant,
    )
    fields: dict[str, dict[str, object]] = {
        "StaleFencingToken": {"token": 3, "highest": 5},
        "FenceError": {"resource": "ledger"},
    }
    made: list[BaseException] = []
    for name in [*quorumlock.__all__, "TaskLocked", "TaskLockLost"]:
        cls = getattr(quorumlock, name, None) or getattr(quorumlock.celery, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            continue
        options = {"name": "the:lock"} if issubclass(cls, lock_errors) else fields.get(name, {})
        made.append(cls("the message", **options))
    return made


FIELDS = ("name", "token", "highest", "resource")


@pytest.mark.parametrize("serializer", ["json", "pickle"])
def test_every_error_survives_the_result_backend(group: LocalServerGroup, serializer: str) -> None:
    """Each public exception class, stored as a task's failure in a Redis result backend
    and read back by result.get(): the same class, message and fields (name, ...)."""
    app = Celery(
        "errors",
        backend=f"{group.urls[3]}/2",
        set_as_current=False,
        result_serializer=serializer,
        accept_content=["json", "pickle"],
        result_accept_content=["json", "pickle"],
    )
    try:
        errors = _errors()
        assert {type(e).__name__ for e in errors} >= {"QuorumUnavailable", "StaleFencingToken"}
        for error in errors:
            task_id = uuid.uuid4().hex
            app.backend.store_result(task_id, error, "FAILURE")
            with pytest.raises(type(error), match=r"^the message$") as raised:
                AsyncResult(task_id, app=app).get(timeout=WAIT)
            copy = raised.value
            assert type(copy) is type(error), (error, copy)
            assert str(copy) == "the message"
            for field_name in FIELDS:
                assert getattr(copy, field_name, None) == getattr(error, field_name, None)
            again = pickle.loads(pickle.dumps(error))
            assert (type(again), str(again)) == (type(error), "the message")
            for field_name in FIELDS:
                assert getattr(again, field_name, None) == getattr(error, field_name, None)
    finally:
        app.close()


def test_keep_after_success(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """keep=3: the lock stays 3 s after a success, then expires."""
    assert get(tasks.kept.delay(tag)) == tag
    assert held_by(group, f"keep:{tag}") is not None
    left = client_of(group[0]).pttl(f"keep:{tag}")
    assert 0 < left <= 3000
    assert get(tasks.kept.delay(tag)) == SKIPPED
    wait_until(lambda: held_by(group, f"keep:{tag}") is None, "the kept lock expired")
    assert get(tasks.kept.delay(tag)) == tag
    assert runs(tasks, tag) == 2


def test_lease_loss_fails_the_task(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """The lock's keys vanish while the task runs: its next renewal fails, check()
    raises, and the task fails with TaskLockLost: never silently unprotected."""
    result = tasks.hold.delay(tag)
    wait_until(lambda: runs(tasks, tag) == 1, "the task started")
    for server in list(group)[:3]:
        client_of(server).delete(f"hold:{tag}")
    with pytest.raises(TaskLockLost) as raised:
        result.get(timeout=2.0 + WAIT)
    assert isinstance(raised.value, LockNotAcquired) is False
    assert "hold:" + tag in str(raised.value)


def test_a_soft_time_limit_ends_the_run_and_releases_its_lock(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """Celery's soft time limit, raised in the task by the prefork child's signal
    handler while it waits under its lock: the run fails with SoftTimeLimitExceeded,
    its lock is released before the failure is stored (no key is left: a lock left
    behind would stay, renewed, until its lease ended), and the next run of the key
    takes it at once."""
    result = tasks.hold.apply_async((tag,), soft_time_limit=2)
    wait_until(lambda: runs(tasks, tag) == 1, "the task started")
    assert held_by(group, f"hold:{tag}") is not None
    with pytest.raises(SoftTimeLimitExceeded):
        result.get(timeout=WAIT)
    assert values(list(group)[:3], f"hold:{tag}") == [None] * 3
    open_gate(tasks, tag)
    assert get(tasks.hold.delay(tag)) == tag
    assert runs(tasks, tag) == 2


def test_lease_loss_revokes_the_task(
    worker: Worker, tasks: ModuleType, group: LocalServerGroup, tag: str
) -> None:
    """on_lost="revoke": a task that never calls check() is terminated by Celery's
    revoke when its lease is lost (the prefork pool ends its process)."""
    result = tasks.unchecked.delay(tag)
    wait_until(lambda: runs(tasks, tag) == 1, "the task started")
    for server in list(group)[:3]:
        client_of(server).delete(f"revoke:{tag}")
    wait_until(lambda: result.state == "REVOKED", "the task was revoked")
    assert "revoking the task (terminate)" in worker.output()
    open_gate(tasks, tag)  # too late: the run was ended before it
    time.sleep(0.2)
    assert not tasks._reports.exists(f"finished:{tag}")


def test_sigkilled_worker_frees_the_lock_after_the_ttl(
    tasks: ModuleType,
    env: dict[str, str],
    group: LocalServerGroup,
    tmp_path: Path,
    tag: str,
) -> None:
    """A worker killed with SIGKILL mid-task: its lease is no longer renewed and the lock
    frees itself after the ttl (2 s); while the worker lived, it was renewed past it."""
    queue = f"solo-{tag}"
    solo = Worker(
        "tests.integration.celery_app", env, tmp_path / "solo.log", pool="solo", queue=queue
    )
    try:
        tasks.hold.apply_async((tag,), queue=queue)
        wait_until(lambda: runs(tasks, tag) == 1, "the task started")
        key = f"hold:{tag}"
        token = held_by(group, key)
        assert token is not None
        time.sleep(3.0)  # 1.5 ttl: held only if renewed
        assert held_by(group, key) == token
        solo.kill()
        # No key is left without an expiry: each is gone (-2) or goes within the ttl.
        left = [client_of(server).pttl(key) for server in list(group)[:3]]
        assert all(ms == -2 or 0 < ms <= 2000 for ms in left), left
        wait_until(lambda: held_by(group, key) is None, "the lock expired")
    finally:
        solo.stop()
    lock = tasks.redlock.lock(key, ttl=5)
    assert lock.acquire(blocking=False)  # free again
    lock.release()


@pytest.mark.parametrize("pool", ["gevent", "eventlet"])
def test_a_green_worker(
    env: dict[str, str],
    tasks: ModuleType,
    group: LocalServerGroup,
    tmp_path: Path,
    tag: str,
    *,
    pool: str,
) -> None:
    """A worker of the gevent or the eventlet pool (Celery patches the process; its tasks
    run as greenlets of one process): duplicates of a running key are skipped, the
    running task's lock is renewed past its ttl (2 s) by the lease, which runs as a
    greenlet, and it is released when the task ends."""
    if importlib.util.find_spec(pool) is None:
        pytest.skip(f"{pool} is not installed (the test extra has it)")
    queue = f"{pool}-{tag}"
    green_worker = Worker(
        "tests.integration.celery_app", env, tmp_path / f"{pool}.log", pool=pool, queue=queue
    )
    try:
        first = tasks.hold.apply_async((tag,), queue=queue)
        wait_until(lambda: runs(tasks, tag) == 1, "the first run started")
        key = f"hold:{tag}"
        token = held_by(group, key)
        assert token is not None
        duplicates = [tasks.hold.apply_async((tag,), queue=queue) for _ in range(2)]
        assert [get(r) for r in duplicates] == [SKIPPED, SKIPPED]
        time.sleep(3.0)  # 1.5 ttl: held only if renewed
        assert held_by(group, key) == token
        open_gate(tasks, tag)
        assert get(first) == tag
        assert held_by(group, key) is None
        assert runs(tasks, tag) == 1
        assert "skipped: lock 'hold:" + tag in green_worker.output()
    finally:
        green_worker.stop()


# --------------------------------------------------------------------------------------
# The example of docs/celery.md
# --------------------------------------------------------------------------------------

EXAMPLE = ROOT / "examples" / "celery_reports.py"


def test_example_runs_as_written(group: LocalServerGroup, tmp_path: Path) -> None:
    """examples/celery_reports.py, as docs/celery.md tells to run it: a worker started in
    examples/, then the file itself (its own broker database: no other worker takes its
    tasks)."""
    env = {
        **os.environ,
        "QUORUMLOCK_SERVERS": ",".join(group.urls[:3]),
        "CELERY_BROKER_URL": f"{group.urls[3]}/1",
    }
    env["PYTHONPATH"] = str(PACKAGE_ROOT)  # quorumlock only, not the tests
    example_worker = Worker(
        "celery_reports", env, tmp_path / "example.log", pool="threads", cwd=EXAMPLE.parent
    )
    try:
        done = subprocess.run(
            [sys.executable, EXAMPLE.name],
            cwd=EXAMPLE.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        example_worker.stop()
    assert done.returncode == 0, done.stderr + example_worker.output()[-3000:]
    assert done.stdout.splitlines() == [
        "build_report: 1 built, 1 skipped",
        "sync_user: 2 synced, one after the other",
        "export: orders exported | duplicate: not queued",
        "refresh_cache: cache refreshed | again: skipped",
    ]


def test_docs_show_the_example_as_it_is() -> None:
    """docs/celery.md shows examples/celery_reports.py whole, as the tests run it."""
    page = (ROOT / "docs" / "celery.md").read_text()
    code = EXAMPLE.read_text()
    assert f"```python\n{code}```" in page


# --------------------------------------------------------------------------------------
# In this process: keys, options, errors, eager mode
# --------------------------------------------------------------------------------------


@pytest.fixture
def app(group: LocalServerGroup) -> Iterator[tuple[Celery, Redlock]]:
    celery_app = Celery("inproc", set_as_current=False)
    redlock = Redlock(group.urls[:3])
    configure(celery_app, redlock)
    yield celery_app, redlock
    redlock.close()


def test_key_templates_over_the_arguments(app: tuple[Celery, Redlock], tag: str) -> None:
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("user:{user_id}:{1}"))
    def by_name(user_id: str, part: int = 3, *, flag: bool = False) -> str:
        return current_lock().name

    @celery_app.task(base=SingletonTask)
    def by_task_name() -> str:
        return current_lock().name

    @celery_app.task(base=SingletonTask, singleton=Singleton("pair:{pair[1]}:{0[0]}"))
    def by_index(pair: list[str]) -> str:
        return current_lock().name

    assert by_name(tag, 4) == f"user:{tag}:4"
    assert by_name(user_id=tag) == f"user:{tag}:3"
    assert by_name(tag, part=5, flag=True) == f"user:{tag}:5"
    assert by_task_name() == by_task_name.name
    assert by_index(["a", tag]) == f"pair:{tag}:a"


def test_names_under_reserved_prefixes(app: tuple[Celery, Redlock], tag: str) -> None:
    """A name under a prefix of quorumlock's own keys is refused where the lock is taken
    (ConfigurationError), another name under quorumlock: is not; docs/celery.md names
    each of those prefixes."""
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("quorumlock:{0}"))
    def under(x: str) -> str:
        return current_lock().name

    assert under(f"mine:{tag}") == f"quorumlock:mine:{tag}"
    for prefix in RESERVED_PREFIXES:
        with pytest.raises(ConfigurationError, match="which quorumlock keeps for its own keys"):
            under(prefix.removeprefix("quorumlock:") + tag)
    page = (ROOT / "docs" / "celery.md").read_text()
    assert [p for p in RESERVED_PREFIXES if f"`{p}`" not in page] == []
    assert "Other names under `quorumlock:` are not refused" in page


def test_taken_in_a_direct_call(app: tuple[Celery, Redlock], tag: str) -> None:
    celery_app, redlock = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("direct:{0}"))
    def skipped(x: str) -> str:
        return x

    @celery_app.task(base=SingletonTask, singleton=Singleton("direct:{0}", on_taken="raise"))
    def raised(x: str) -> str:
        return x

    with redlock.lock(f"direct:{tag}", ttl=10):
        assert skipped(tag) == SKIPPED
        with pytest.raises(TaskLocked):
            raised(tag)
    assert skipped(tag) == tag


def test_current_lock_names_each_run_of_tasks_called_one_in_another(
    app: tuple[Celery, Redlock], tag: str
) -> None:
    """A singleton task that calls another directly: ``current_lock()`` names the inner
    run's lock inside it, the outer run's again once it returned, and none after."""
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("inner:{0}"))
    def inner(x: str) -> str:
        return current_lock().name

    @celery_app.task(base=SingletonTask, singleton=Singleton("outer:{0}"))
    def outer(x: str) -> list[str]:
        return [current_lock().name, inner(x), current_lock().name]

    assert outer(tag) == [f"outer:{tag}", f"inner:{tag}", f"outer:{tag}"]
    with pytest.raises(RuntimeError, match="no quorumlock singleton task"):
        current_lock()


@pytest.mark.parametrize("on_lost", ["check", "revoke"])
def test_a_soft_time_limit_anywhere_in_a_direct_call_leaves_no_lock(
    app: tuple[Celery, Redlock],
    group: LocalServerGroup,
    tag: str,
    on_lost: Literal["check", "revoke"],
) -> None:
    """Celery's soft time limit raised at every point of a run's own code (the task
    wrapper's, the lock objects'), one point per run of a direct call: the call raises
    it, no key is left, ``current_lock()`` names no lock, and the next run of the key
    runs. Such a limit that came as the wrapper went from taking the lock to running the
    task, or from the task to releasing the lock, left the lock held, renewed by its
    lease (``current_lock()`` kept it)."""
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("soft:{0}", on_lost=on_lost))
    def limited(x: str) -> str:
        return x

    for at in sweep_points():
        key = f"{tag}-{at}"
        where, result = interrupted_at(
            at, functools.partial(limited, key), SoftTimeLimitExceeded, frozenset({"celery.py"})
        )
        assert values(list(group)[:3], f"soft:{key}") == [None] * 3, where
        with pytest.raises(RuntimeError, match="no quorumlock singleton task"):
            current_lock()  # the run's lock is no longer named
        assert limited(key) == key, where
        if not where:
            assert result == key
            break
    assert at > 50, at


def test_eager_enqueue_mode(app: tuple[Celery, Redlock], group: LocalServerGroup, tag: str) -> None:
    """task_always_eager: delay() runs the task here; the lock is released after it."""
    celery_app, _ = app
    celery_app.conf.task_always_eager = True

    @celery_app.task(base=SingletonTask, singleton=Singleton("eager:{0}", mode="enqueue"))
    def eager(x: str) -> str:
        return current_lock().name

    assert eager.delay(tag).get() == f"eager:{tag}"
    assert values(list(group)[:3], f"eager:{tag}") == [None, None, None]


def test_eager_enqueue_mode_run_that_fails_is_no_loss(
    app: tuple[Celery, Redlock],
    group: LocalServerGroup,
    tag: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """task_always_eager with task_eager_propagates: the run's error comes out of
    delay() after the run released the lock it took over. delay() does not release it
    again: it did, and warned that the lock "was no longer held by a majority at
    release" (a loss, for the observers too)."""
    celery_app, _ = app
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True

    @celery_app.task(base=SingletonTask, singleton=Singleton("eager-fails:{0}", mode="enqueue"))
    def fails(x: str) -> None:
        raise ValueError("failed on purpose")

    with (
        caplog.at_level(logging.WARNING, logger="quorumlock"),
        pytest.raises(ValueError, match="on purpose"),
    ):
        fails.delay(tag)
    assert values(list(group)[:3], f"eager-fails:{tag}") == [None, None, None]
    assert [r.getMessage() for r in caplog.records if r.name == "quorumlock"] == []


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"mode": "later"}, "mode must be one of"),
        ({"on_taken": "wait"}, "on_taken must be one of"),
        ({"mode": "enqueue", "on_taken": "retry"}, "needs mode='run'"),
        ({"key": "{}"}, "empty field"),
        ({"key": "x:{0"}, "malformed"),
        ({"key": ""}, "must not be empty"),
        ({"ttl": 0}, "ttl"),
        ({"keep": -1}, "keep"),
        ({"on_lost": "ignore"}, "on_lost must be one of"),
    ],
)
def test_bad_singleton_options(options: dict[str, object], error: str) -> None:
    with pytest.raises(ConfigurationError, match=error):
        Singleton(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "error"),
    [("x:{nope}", r"\{nope\}, which is not an argument"), ("x:{2}", "takes 2 positional")],
)
def test_template_fields_must_name_arguments(
    app: tuple[Celery, Redlock], key: str, error: str
) -> None:
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton(key))
    def task(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ConfigurationError, match=error):
        task(1, 2)
    with pytest.raises(ConfigurationError, match=error):
        task.delay(1, 2)


@pytest.mark.parametrize("mode", ["run", "enqueue"])
def test_template_fields_missing_from_a_call(
    app: tuple[Celery, Redlock], mode: Literal["run", "enqueue"]
) -> None:
    """A field that only ``*args`` or ``**kwargs`` can fill, and a call that does not:
    ConfigurationError naming it (a bare KeyError 'user' or IndexError before)."""
    celery_app, _ = app

    @celery_app.task(base=SingletonTask, singleton=Singleton("x:{user}", mode=mode))
    def by_name(**kwargs: object) -> str:
        return "ran"

    @celery_app.task(base=SingletonTask, singleton=Singleton("x:{1}", mode=mode))
    def by_position(*args: object) -> str:
        return "ran"

    with pytest.raises(ConfigurationError, match=r"uses \{user\}, an argument this call"):
        by_name(other=1)
    if mode == "enqueue":  # delay() formats the name before anything is sent
        with pytest.raises(ConfigurationError, match=r"uses \{user\}, an argument this call"):
            by_name.delay(other=1)
    with pytest.raises(ConfigurationError, match=r"uses \{1\}, an argument this call"):
        by_position(0)
    assert by_name(user=1) == by_position(0, 1) == "ran"


def test_configuration_errors(group: LocalServerGroup) -> None:
    bare = Celery("bare", set_as_current=False)

    @bare.task(base=SingletonTask)
    def unconfigured() -> None:
        return None

    with pytest.raises(ConfigurationError, match=r"configure\(app, redlock\) was not called"):
        unconfigured()

    with Redlock(group.urls[:3], max_ttl=10) as redlock:
        with pytest.raises(ConfigurationError, match="max_ttl"):
            configure(bare, redlock, ttl=20)
        with pytest.raises(ConfigurationError, match="on_taken must be one of"):
            configure(bare, redlock, ttl=5, on_taken="later")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"celery\.Celery"):
            configure(object(), redlock, ttl=5)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="max_hold=4 s is shorter than ttl=5 s"):
            configure(bare, redlock, ttl=5, max_hold=4)
        configure(bare, redlock, ttl=5, on_taken="retry", max_hold=6)

        @bare.task(base=SingletonTask, singleton=Singleton(mode="enqueue"))
        def enqueued() -> None:
            return None

        @bare.task(base=SingletonTask, singleton=Singleton(keep=30))
        def kept_long() -> None:
            return None

        with pytest.raises(ConfigurationError, match="needs mode='run'"):
            enqueued()

        @bare.task(base=SingletonTask, singleton=Singleton(ttl=8))
        def held_long() -> None:
            return None

        with pytest.raises(ConfigurationError, match="keep=30 s exceeds"):
            kept_long()
        with pytest.raises(ConfigurationError, match="held_long: max_hold=6 s is shorter"):
            held_long()


def test_current_lock_outside_a_task() -> None:
    with pytest.raises(RuntimeError, match="no quorumlock singleton task"):
        current_lock()


def test_without_celery_installed() -> None:
    """As if Celery were not installed: quorumlock imports, and quorumlock.celery says
    what to install."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('celery', 'kombu'):\n"
        "            raise ImportError('no module named ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import quorumlock, quorumlock.asyncio, quorumlock.cli\n"
        "try:\n"
        "    import quorumlock.celery\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "quorumlock.celery needs Celery: pip install 'quorumlock[celery]'" in done.stdout


def test_only_quorumlock_celery_imports_celery() -> None:
    package = Path(quorumlock.__file__).parent
    importers = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] in {"celery", "kombu"} for name in names):
                importers.append(path.relative_to(package).as_posix())
    assert sorted(set(importers)) == ["celery.py"]


def test_celery_is_imported_only_by_quorumlock_celery() -> None:
    code = (
        "import sys, quorumlock, quorumlock.asyncio, quorumlock.testing, quorumlock.otel\n"
        "assert 'celery' not in sys.modules, 'celery imported by quorumlock'\n"
        "import quorumlock.celery\n"
        "assert 'celery' in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
