"""The Celery app of ``tests/integration/test_celery.py``: its worker processes import it.

The broker (and result backend) and the lock servers come from the environment, set by
the test before the worker starts and before the test imports this module:
``QL_TEST_BROKER`` (a ``redis://`` URL) and ``QL_TEST_SERVERS`` (comma-separated URLs).

The tasks report what they do on the broker's server, so that the test can follow them
without sharing memory with the worker: ``started:<tag>`` (a list) gets the tag's run
number when a run starts; a run that waits goes on once ``gate:<tag>`` exists.
"""

from __future__ import annotations

import os
import time

import redis
from celery import Celery

from quorumlock import QuorumUnavailable, Redlock
from quorumlock.celery import Singleton, SingletonTask, configure, current_lock

BROKER = os.environ.get("QL_TEST_BROKER", "redis://127.0.0.1:6379/0")
SERVERS = os.environ.get("QL_TEST_SERVERS", "redis://127.0.0.1:6379").split(",")

#: The longest a task waits for its gate: every wait of these tasks is bounded.
GATE_WAIT = 30.0

app = Celery("celery_app", broker=BROKER, backend=BROKER)
app.conf.update(
    broker_connection_retry_on_startup=True,
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
    result_expires=300,
    task_default_retry_delay=0,
)
redlock = Redlock(SERVERS, instance_timeout=0.5)
configure(app, redlock, ttl=2.0, on_taken="skip")

_reports = redis.Redis.from_url(BROKER)


def _started(tag: str) -> int:
    return int(_reports.rpush(f"started:{tag}", os.getpid()))


def _wait_gate(tag: str) -> None:
    """Until ``gate:<tag>`` exists (the test opens it), checking the lock meanwhile."""
    deadline = time.monotonic() + GATE_WAIT
    while not _reports.exists(f"gate:{tag}"):
        current_lock().check()  # LockLost as soon as the lease is lost
        if time.monotonic() > deadline:
            raise TimeoutError(f"gate:{tag} was not opened within {GATE_WAIT} s")
        time.sleep(0.02)
    current_lock().check()


@app.task(base=SingletonTask, singleton=Singleton("hold:{tag}"))
def hold(tag: str, wait: bool = True) -> str:
    """Run mode, skip when taken (the project's default): waits for its gate."""
    _started(tag)
    if wait:
        _wait_gate(tag)
    return tag


@app.task(base=SingletonTask, singleton=Singleton("raise:{0}", on_taken="raise"))
def hold_or_raise(tag: str) -> str:
    _started(tag)
    _wait_gate(tag)
    return tag


@app.task(
    base=SingletonTask,
    bind=True,
    max_retries=200,
    singleton=Singleton("retry:{0}", on_taken="retry", countdown=0.1),
)
def retried(self: SingletonTask, tag: str) -> int:
    """Retried while the lock is taken; returns how many retries it took."""
    _started(tag)
    retries: int = self.request.retries
    return retries


@app.task(base=SingletonTask, singleton=Singleton("enqueue:{0}", mode="enqueue", ttl=10.0))
def queued(tag: str, fail: bool = False) -> str:
    """Enqueue mode: the lock is taken by delay(), released when the run ends."""
    _started(tag)
    _wait_gate(tag)
    if fail:
        raise RuntimeError(f"task {tag} failed on purpose")
    return tag


@app.task(base=SingletonTask, singleton=Singleton("pair:{0}", mode="enqueue", ttl=10.0))
def queued_pair(pair: tuple[str, int]) -> str:
    """Enqueue mode over a tuple, which the JSON serializer delivers as a list."""
    return pair[0]


@app.task(base=SingletonTask, singleton=Singleton("revoke:{0}", on_lost="revoke"))
def unchecked(tag: str) -> str:
    """Never calls check(): a lost lease revokes (terminates) it."""
    _started(tag)
    deadline = time.monotonic() + GATE_WAIT
    while time.monotonic() < deadline and not _reports.exists(f"gate:{tag}"):
        time.sleep(0.02)
    _reports.set(f"finished:{tag}", 1)
    return tag


@app.task(base=SingletonTask, bind=True, singleton=Singleton("again:{0}", mode="enqueue", ttl=10.0))
def retries_itself(self: SingletonTask, tag: str) -> int:
    """Enqueue mode, and a task that asks for a retry on its first run."""
    _started(tag)
    if self.request.retries == 0:
        raise self.retry(countdown=0)
    retries: int = self.request.retries
    return retries


def _retry_slowly(task: SingletonTask, tag: str) -> int:
    """The first run queues its retry, then holds the lock a second longer before it
    raises the retry (as a run that cleans up after ``retry(throw=False)`` does): the
    retried run starts meanwhile, on another worker process."""
    _started(tag)
    if task.request.retries == 0:
        retry = task.retry(countdown=0, throw=False)
        time.sleep(1.0)
        raise retry
    retries: int = task.request.retries
    return retries


@app.task(base=SingletonTask, bind=True, singleton=Singleton("slowly:{0}", ttl=10.0))
def retries_slowly(self: SingletonTask, tag: str) -> int:
    """Run mode: the retry of a run that still holds the lock."""
    return _retry_slowly(self, tag)


@app.task(
    base=SingletonTask,
    bind=True,
    singleton=Singleton("slowly-enqueued:{0}", mode="enqueue", ttl=10.0),
)
def retries_slowly_enqueued(self: SingletonTask, tag: str) -> int:
    """Enqueue mode: the retry of a run that still holds the lock."""
    return _retry_slowly(self, tag)


@app.task(base=SingletonTask, singleton=Singleton("late:{0}", mode="enqueue", ttl=0.5))
def late(tag: str) -> str:
    """Enqueue mode with a ttl shorter than its wait in the queue."""
    _started(tag)
    return tag


@app.task(base=SingletonTask, singleton=Singleton("keep:{0}", keep=3))
def kept(tag: str) -> str:
    """Keeps its lock 3 s after a success."""
    _started(tag)
    return tag


@app.task(
    base=SingletonTask,
    bind=True,
    autoretry_for=(QuorumUnavailable,),
    max_retries=200,
    retry_kwargs={"countdown": 0.1},
    singleton=Singleton("autoretry:{0}"),
)
def autoretried(self: SingletonTask, tag: str) -> int:
    """Retried by Celery's autoretry_for while its lock cannot be decided."""
    _started(tag)
    retries: int = self.request.retries
    return retries


@app.task
def echo(value: object) -> object:
    """A plain task: a chord's body, or the next step of a chain."""
    return value
