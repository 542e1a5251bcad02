"""Celery tasks that run at most once at a time per key, with quorumlock.celery.

Start a worker in this directory, then run this file to enqueue duplicates:

    celery -A celery_reports worker --pool=threads --concurrency=4
    python celery_reports.py

QUORUMLOCK_SERVERS: the lock's servers (comma-separated URLs; use 3 or 5 independent
ones). CELERY_BROKER_URL: the broker, also the result backend. Both default to a server
on localhost.
"""

from __future__ import annotations

import os
import time

from celery import Celery

from quorumlock import Redlock
from quorumlock.celery import SKIPPED, Singleton, SingletonTask, configure, current_lock

SERVERS = os.environ.get("QUORUMLOCK_SERVERS", "redis://127.0.0.1:6379").split(",")
BROKER = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")

app = Celery("celery_reports", broker=BROKER, backend=BROKER)
app.conf.broker_connection_retry_on_startup = True
# The project's defaults: a run whose lock is taken is skipped; leases of 10 s, renewed
# while a task runs (a killed worker's lock frees itself 10 s after its last renewal).
configure(app, Redlock(SERVERS), ttl=10, on_taken="skip")


@app.task(base=SingletonTask, singleton=Singleton("report:{0}"))
def build_report(day: str) -> str:
    """One report per day at a time: a second run for the same day is skipped."""
    for _part in range(10):
        current_lock().check()  # LockLost once the lease is lost: stop writing
        time.sleep(0.1)  # one part of the work
    return f"report {day} built"


@app.task(
    base=SingletonTask,
    bind=True,
    max_retries=100,
    singleton=Singleton("user:{user_id}", on_taken="retry", countdown=0.2),
)
def sync_user(self: SingletonTask, user_id: int, full: bool = False) -> str:
    """One sync per user at a time: a second one waits its turn (Celery's retry)."""
    time.sleep(0.3)
    return f"user {user_id} synced after {self.request.retries} retries"


@app.task(base=SingletonTask, singleton=Singleton("export:{0}", mode="enqueue"))
def export(table: str) -> str:
    """Locked at enqueue: while one export of a table is queued or running, another is
    not even queued. The worker that runs it releases the lock, whatever the outcome,
    as does one that discards it (revoked, expired)."""
    time.sleep(0.3)
    return f"{table} exported"


@app.task(base=SingletonTask, singleton=Singleton(keep=5))
def refresh_cache() -> str:
    """Keyed by the task's name; after a success the lock stays 5 s: at most one
    refresh every 5 s, however often it is called."""
    return "cache refreshed"


def main() -> None:
    reports = [build_report.delay("2026-11-24"), build_report.delay("2026-11-24")]
    outcomes = sorted(str(r.get(timeout=60)) for r in reports)
    print(
        "build_report:",
        outcomes.count("report 2026-11-24 built"),
        "built,",
        outcomes.count(SKIPPED),
        "skipped",
    )

    syncs = [sync_user.delay(7), sync_user.delay(user_id=7, full=True)]
    done = [str(r.get(timeout=60)) for r in syncs]
    print(
        "sync_user:",
        sum(d.startswith("user 7 synced") for d in done),
        "synced, one after the other",
    )

    first = export.delay("orders")
    duplicate = export.delay("orders")  # returned at once: nothing was queued
    print(
        "export:",
        first.get(timeout=60),
        "| duplicate:",
        "not queued" if duplicate.get() == SKIPPED else "queued",
    )

    print(
        "refresh_cache:",
        refresh_cache.delay().get(timeout=60),
        "| again:",
        "skipped" if refresh_cache.delay().get(timeout=60) == SKIPPED else "ran",
    )


if __name__ == "__main__":
    main()
