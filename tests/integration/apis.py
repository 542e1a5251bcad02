"""One test body, both APIs.

A test body is an ``async def`` that speaks to either flavour through this adapter::

    def test_something(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
        async def body() -> None:
            rl = api.redlock(servers.urls)
            lock = rl.lock(lock_name, ttl=5)
            assert await call(lock.acquire())
            async with holding(rl.lock(lock_name + ":2", ttl=5)) as other:
                ...
            assert await call(lock.release())

        api.run(body)

``call`` awaits what the asyncio API returns and passes the sync API's results through;
``holding`` enters ``with lock`` or ``async with lock``. Sync calls block the event loop,
which is fine here: the sync lease thread does not need the loop, and waiting is done
with ``await asyncio.sleep`` so that the asyncio lease task gets its turns.

A Redlock made here waits up to :data:`PATIENT` for each server's reply unless the test
sets ``instance_timeout`` itself. The default (0.5 % of the ttl: 50 ms at 10 s) is what
a lock needs in production, but the suite's servers share two CPUs with the test
processes, and a server that answers a round 60 ms late would fail a test that checks
every server's part (each server holds the key, two names of one server are refused)
for a reason that is not the test's. Tests of timeouts, frozen servers and validity set
their own.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeAlias, TypeVar

import quorumlock
import quorumlock.asyncio

T = TypeVar("T")

Flavour = Literal["sync", "async"]
AnyRedlock: TypeAlias = quorumlock.Redlock | quorumlock.asyncio.Redlock
AnyLock: TypeAlias = quorumlock.Lock | quorumlock.asyncio.Lock
Body = Callable[[], Coroutine[Any, Any, None]]

#: The instance timeout of the tests' Redlocks unless a test sets its own (see above).
PATIENT = 0.5
#: The instance timeout of a test that counts the attempts of an acquire that must stop
#: at its first (a refusal no retry can fix): a first attempt timed out on a loaded host
#: is followed by a second, and counted (seen with 3 test processes on 2 CPUs: "(2
#: attempts)", the second refused).
UNHURRIED = 2.0

__all__ = [
    "FLAVOURS",
    "PATIENT",
    "UNHURRIED",
    "AnyLock",
    "AnyRedlock",
    "Api",
    "AsyncApi",
    "Body",
    "SyncApi",
    "api_for",
    "call",
    "holding",
    "is_lost",
]


async def call(value: Awaitable[T] | T) -> T:
    """``await value`` if it is awaitable (asyncio API), else ``value`` (sync API)."""
    if inspect.isawaitable(value):
        result: T = await value
        return result
    return value


@asynccontextmanager
async def holding(lock: AnyLock) -> AsyncIterator[AnyLock]:
    """``with lock`` for a sync lock, ``async with lock`` for an asyncio one."""
    if isinstance(lock, quorumlock.asyncio.Lock):
        async with lock:
            yield lock
    else:
        with lock:
            yield lock


def is_lost(lock: AnyLock) -> bool:
    """Whether ``lock.lost`` (a ``threading.Event`` or an ``asyncio.Event``) is set."""
    return lock.lost.is_set()


class Api:
    """What differs between the flavours, for the tests: building and running."""

    flavour: Flavour

    def __init__(self) -> None:
        self._redlocks: list[AnyRedlock] = []

    def redlock(self, urls: Sequence[Any], **options: Any) -> AnyRedlock:
        """A Redlock of this flavour over ``urls`` (URLs, or client objects of this flavour,
        a ``RedisCluster`` among them); :meth:`run` closes it at the end."""
        raise NotImplementedError

    def run(self, body: Body) -> None:
        """Run ``body`` in a fresh event loop, then close the Redlocks it made."""

        async def main() -> None:
            try:
                await body()
            finally:
                redlocks, self._redlocks = self._redlocks, []
                for rl in redlocks:
                    await call(rl.close())

        asyncio.run(main())

    async def elsewhere(self, work: Callable[[], Awaitable[T] | T]) -> T:
        """Run ``work()`` in another thread (sync) or another task (asyncio)."""
        raise NotImplementedError

    async def concurrently(self, bodies: Sequence[Body], *, limit: float) -> None:
        """Run the bodies at the same time: threads (sync) or tasks (asyncio).

        Each sync body gets its own thread and event loop; ``limit`` bounds the wait.
        Re-raises the first exception a body raised.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.flavour


class SyncApi(Api):
    flavour: Flavour = "sync"

    def redlock(self, urls: Sequence[Any], **options: Any) -> quorumlock.Redlock:
        options.setdefault("instance_timeout", PATIENT)
        rl = quorumlock.Redlock(list(urls), **options)
        self._redlocks.append(rl)
        return rl

    async def elsewhere(self, work: Callable[[], Awaitable[T] | T]) -> T:
        results: list[T] = []
        errors: list[BaseException] = []

        def target() -> None:
            try:
                results.append(asyncio.run(call(work())))
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=target, name="elsewhere", daemon=True)
        thread.start()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the work did not finish within 30 s"
        if errors:
            raise errors[0]
        return results[0]

    async def concurrently(self, bodies: Sequence[Body], *, limit: float) -> None:
        errors: list[BaseException] = []

        def target(body: Body) -> None:
            try:
                asyncio.run(body())
            except BaseException as exc:
                errors.append(exc)

        threads = [
            threading.Thread(target=target, args=(body,), name=f"worker-{i}", daemon=True)
            for i, body in enumerate(bodies)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=limit)
        assert not any(t.is_alive() for t in threads), f"workers still running after {limit} s"
        if errors:
            raise errors[0]


class AsyncApi(Api):
    flavour: Flavour = "async"

    def redlock(self, urls: Sequence[Any], **options: Any) -> quorumlock.asyncio.Redlock:
        options.setdefault("instance_timeout", PATIENT)
        rl = quorumlock.asyncio.Redlock(list(urls), **options)
        self._redlocks.append(rl)
        return rl

    async def elsewhere(self, work: Callable[[], Awaitable[T] | T]) -> T:
        async def task() -> T:
            return await call(work())

        return await asyncio.wait_for(asyncio.get_running_loop().create_task(task()), 30)

    async def concurrently(self, bodies: Sequence[Body], *, limit: float) -> None:
        async with asyncio.timeout(limit), asyncio.TaskGroup() as group:
            for body in bodies:
                group.create_task(body())


FLAVOURS: tuple[Flavour, ...] = ("sync", "async")


def api_for(flavour: Flavour) -> Api:
    return SyncApi() if flavour == "sync" else AsyncApi()
