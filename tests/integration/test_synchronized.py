"""``Redlock.synchronized``: a decorator that runs every call under a lock, both APIs."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import quorumlock
import quorumlock.asyncio
from quorumlock import ConfigurationError, LockLost, LockNotAcquired
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, strict_mypy, values
from tests.integration.apis import Api, call


def test_each_call_runs_under_the_lock_and_releases_it(
    servers: LocalServerGroup, lock_name: str
) -> None:
    with quorumlock.Redlock(servers.urls, instance_timeout=1.0) as rl:

        @rl.synchronized(lock_name, ttl=10)
        def work(x: int, *, y: int = 1) -> tuple[int, list[str | None]]:
            """Adds."""
            return x + y, values(servers, lock_name)

        total, seen = work(2, y=3)
        assert total == 5
        token = seen[0]
        assert token is not None
        assert seen == [token] * 5  # the lock was held during the call
        assert values(servers, lock_name) == [None] * 5  # and released after
        _, again = work(1)
        assert again[0] != token  # a fresh acquisition per call
        assert work.__name__ == "work"
        assert work.__doc__ == "Adds."
        assert inspect.signature(work) == inspect.signature(work.__wrapped__)  # type: ignore[attr-defined]


def test_async_each_call_runs_under_the_lock_and_releases_it(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:

            @rl.synchronized(lock_name, ttl=10)
            async def work(pause: float) -> list[str | None]:
                """Waits."""
                await asyncio.sleep(pause)
                return values(servers, lock_name)

            seen = await work(0.01)
            assert seen[0] is not None
            assert seen == [seen[0]] * 5
            assert values(servers, lock_name) == [None] * 5
            assert work.__name__ == "work"
            assert work.__doc__ == "Waits."
            assert inspect.iscoroutinefunction(work)

    asyncio.run(body())


def test_exceptions_propagate_and_the_lock_is_released(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        if isinstance(rl, quorumlock.Redlock):

            @rl.synchronized(lock_name, ttl=10)
            def fails() -> None:
                assert values(servers, lock_name)[0] is not None
                raise KeyError("boom")

            with pytest.raises(KeyError, match="boom"):
                fails()
        else:

            @rl.synchronized(lock_name, ttl=10)
            async def afails() -> None:
                assert values(servers, lock_name)[0] is not None
                raise KeyError("boom")

            with pytest.raises(KeyError, match="boom"):
                await afails()
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_contention_raises_what_with_raises(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        holder = rl.lock(lock_name, ttl=10)
        assert await call(holder.acquire())
        calls: list[int] = []
        if isinstance(rl, quorumlock.Redlock):
            once = rl.synchronized(lock_name, ttl=10, blocking=False)(lambda: calls.append(1))
            briefly = rl.synchronized(lock_name, ttl=10, timeout=0.3)(lambda: calls.append(2))
            with pytest.raises(LockNotAcquired) as info:
                once()
            with pytest.raises(LockNotAcquired):
                briefly()
        else:

            async def append(x: int) -> None:
                calls.append(x)

            aonce = rl.synchronized(lock_name, ttl=10, blocking=False)(append)
            abriefly = rl.synchronized(lock_name, ttl=10, timeout=0.3)(append)
            with pytest.raises(LockNotAcquired) as info:
                await aonce(1)
            with pytest.raises(LockNotAcquired):
                await abriefly(2)
        assert info.value.name == lock_name
        assert calls == []  # the function never ran
        assert values(servers, lock_name) == [holder.token] * 5
        assert await call(holder.release())

    api.run(body)


def test_sync_lock_lost_during_the_call_raises_lock_lost(
    servers: LocalServerGroup, lock_name: str
) -> None:
    with quorumlock.Redlock(servers.urls, instance_timeout=1.0) as rl:
        done: list[bool] = []

        @rl.synchronized(lock_name, ttl=10)
        def work() -> None:
            for server in servers:  # someone deletes our keys: the lock is gone
                client = client_of(server)
                client.delete(lock_name)
                client.close()
            done.append(True)

        with pytest.raises(LockLost, match="lost before the end"):
            work()
        assert done == [True]  # a sync call cannot be interrupted: it ran to its end


def test_async_lock_lost_during_the_call_cancels_it(
    servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        async with quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0) as rl:
            reached: list[str] = []

            @rl.synchronized(lock_name, ttl=0.5, auto_extend=True, max_hold=30)
            async def work() -> None:
                reached.append("start")
                for server in servers:  # our keys vanish: the next renewal fails
                    client = client_of(server)
                    client.delete(lock_name)
                    client.close()
                await asyncio.sleep(5)  # cancelled long before
                reached.append("end")

            async with asyncio.timeout(10):
                with pytest.raises(LockLost):
                    await work()
            assert reached == ["start"]

    asyncio.run(body())


def test_wrong_kind_of_function_is_a_type_error(servers: LocalServerGroup) -> None:
    async def coroutine_function() -> None:
        pass

    def generator_function() -> Iterator[int]:
        yield 1

    async def async_generator_function() -> AsyncIterator[int]:
        yield 1

    class AsyncCallable:
        async def __call__(self) -> None:
            pass

    def plain() -> None:
        pass

    rl = quorumlock.Redlock(servers.urls)
    arl = quorumlock.asyncio.Redlock(servers.urls)
    decorate = rl.synchronized("test:kinds", ttl=10)
    adecorate = arl.synchronized("test:kinds", ttl=10)
    with pytest.raises(TypeError, match=r"quorumlock\.asyncio\.Redlock\.synchronized"):
        decorate(coroutine_function)
    with pytest.raises(TypeError, match="coroutine function"):
        decorate(AsyncCallable())
    with pytest.raises(TypeError, match="generator function"):
        decorate(generator_function)
    with pytest.raises(TypeError, match="generator function"):
        decorate(async_generator_function)
    with pytest.raises(TypeError, match="decorates a function"):
        decorate(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"quorumlock\.Redlock\.synchronized"):
        adecorate(plain)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="async generator function") as caught:
        adecorate(async_generator_function)  # type: ignore[arg-type]
    # (not sent to quorumlock.Redlock.synchronized: that one refuses it too)
    assert "quorumlock.Redlock" not in str(caught.value)
    assert callable(adecorate(AsyncCallable()))
    rl.close()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"ttl": 0}, ConfigurationError),
        ({"ttl": "5"}, TypeError),
        ({"ttl": 5, "auto_extend": True}, ConfigurationError),
        ({"ttl": 5, "max_extensions": 2}, ConfigurationError),
        ({"ttl": 5, "auto_extend": True, "max_hold": 4.999}, ConfigurationError),
        ({"ttl": 5, "blocking": "no"}, TypeError),
        ({"ttl": 5, "on_lost": 3}, TypeError),
    ],
)
def test_bad_options_fail_at_decoration_time(
    api: Api, servers: LocalServerGroup, options: dict[str, object], error: type[Exception]
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls)
        with pytest.raises(error):
            rl.synchronized("test:options", **options)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            rl.synchronized(b"name", ttl=5)  # type: ignore[arg-type]

    api.run(body)


SIGNATURE_SNIPPET = """
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final, assert_type

import quorumlock
import quorumlock.asyncio

rl = quorumlock.Redlock(["redis://127.0.0.1:1"])
arl = quorumlock.asyncio.Redlock(["redis://127.0.0.1:1"])


@rl.synchronized("test:types", ttl=5)
def work(a: int, *, b: str = "") -> float:
    return a / 2


@arl.synchronized("test:types", ttl=5)
async def awork(a: int, *, b: str = "") -> float:
    return a / 2


def checked_not_called() -> None:
    assert_type(work(1, b="x"), float)
    coroutine = assert_type(awork(1, b="x"), Coroutine[Any, Any, float])
    coroutine.close()
    work("1")  # type: ignore[arg-type]
    awork(1, c=2).close()  # type: ignore[call-arg]
"""


def mypy(source: str, directory: Path) -> subprocess.CompletedProcess[str]:
    """:func:`strict_mypy` on ``source``, written to a file in ``directory``."""
    snippet = directory / "snippet.py"
    snippet.write_text(source)
    return strict_mypy(snippet)


@pytest.mark.usefixtures("have_mypy")
def test_type_checkers_keep_the_signature(tmp_path: Path) -> None:
    """mypy --strict on a snippet: the decorated functions keep their parameters and
    return types. Its wrong calls need their ``type: ignore``; were the signature lost,
    mypy would report the ignores as unused. The same snippet with one ignore removed
    must fail, or the check proves nothing. mypy is in the lint extra, not the test
    extra: .ci/run runs this test again after installing it."""
    kept = mypy(SIGNATURE_SNIPPET, tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    broken = SIGNATURE_SNIPPET.replace('work("1")  # type: ignore[arg-type]', 'work("1")')
    lost = mypy(broken, tmp_path)
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert "[arg-type]" in lost.stdout
