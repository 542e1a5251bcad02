"""Handing a held lock to another process: ``Lock.export()`` and ``Redlock.adopt()``.

The cross-process tests run the other side in real child processes
(``tests/integration/adopter.py``): a subprocess fed JSON on stdin, and a
``multiprocessing`` spawn child fed a pickled handle. The parent checks the servers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import multiprocessing
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import quorumlock
import quorumlock.asyncio
from quorumlock import ConfigurationError, LockHandle, LockLost
from quorumlock._algorithm.scripts import EXTEND
from quorumlock.testing import LatencyProxy, LocalServerGroup
from tests.conftest import ServerFactory, client_of, values
from tests.integration.apis import Api, call, holding, is_lost
from tests.integration.test_both_apis import pttl, wait_for

ROOT = Path(__file__).resolve().parents[2]


def run_adopter(
    flavour: str, servers: list[str], action: str, handle: LockHandle, ttl: float = 30
) -> Any:
    """Run ``tests/integration/adopter.py`` in a child process; its JSON answer.

    The child's Redlock has never talked to the servers: its first round connects. It
    uses a 1 s instance timeout so that connecting on this loaded machine fits in it
    (see ``test_first_round_of_an_adopted_lock_waits_for_connections`` below).
    """
    request = {
        "servers": servers,
        "flavour": flavour,
        "action": action,
        "handle": json.loads(handle.to_json()),
        "ttl": ttl,
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.adopter"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --------------------------------------------------------------------------------------
# across processes
# --------------------------------------------------------------------------------------


def test_handoff_to_other_processes(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """Acquire here; a child adopts, extends to 30 s and hands over again; a second child
    adopts and releases. The servers show each step; then anyone can acquire."""

    async def body() -> None:
        rl = api.redlock(servers.urls, fencing=True, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        token, fence = lock.token, lock.fencing_token
        assert token is not None
        assert fence is not None
        handle = await call(lock.export())
        assert (handle.name, handle.token, handle.fencing_token) == (lock_name, token, fence)
        assert handle.ttl == 10.0
        assert 9.0 < handle.validity <= 10.0
        assert handle.servers == tuple(rl.servers)
        assert not lock.held  # handed over

        first = run_adopter(api.flavour, servers.urls, "extend-export", handle, ttl=30)
        assert 0 < first["adopted"] <= handle.validity
        assert 29.0 < first["extended"] <= 30.0
        assert values(servers, lock_name) == [token] * 5
        for index in range(5):
            assert 25_000 < pttl(servers, index, lock_name) <= 30_000
        again = LockHandle.from_dict(first["handle"])
        assert (again.token, again.fencing_token, again.ttl) == (token, fence, 10.0)
        assert 25.0 < again.validity <= 30.0

        second = run_adopter(api.flavour, servers.urls, "release", again)
        assert second["released"] is True
        assert values(servers, lock_name) == [None] * 5
        other = rl.lock(lock_name, ttl=10)
        assert await call(other.acquire(blocking=False))
        assert other.fencing_token is not None
        assert other.fencing_token > fence
        assert await call(other.release())

    api.run(body)


def test_handoff_through_multiprocessing_spawn(servers: LocalServerGroup, lock_name: str) -> None:
    """The handle pickles: a spawned child adopts it, extends it and releases it."""
    rl = quorumlock.Redlock(servers.urls, instance_timeout=1.0)
    try:
        lock = rl.lock(lock_name, ttl=10)
        assert lock.acquire()
        handle = lock.export()
        context = multiprocessing.get_context("spawn")
        results: Any = context.Queue()
        from tests.integration.adopter import spawned  # noqa: PLC0415

        child = context.Process(target=spawned, args=(servers.urls, handle, results))
        child.start()
        try:
            result = results.get(timeout=60)
        finally:
            child.join(timeout=30)
            if child.is_alive():  # our own child, by its handle
                child.kill()
                child.join(timeout=5)
        assert child.exitcode == 0
        assert "error" not in result, result
        assert result["token"] == handle.token
        assert all(15_000 < p <= 20_000 for p in result["pttls"]), result["pttls"]
        assert result["released"] is True
        assert values(servers, lock_name) == [None] * 5
        assert rl.lock(lock_name, ttl=10).acquire(blocking=False)
    finally:
        rl.close()


def test_adopted_lock_whose_key_is_gone_is_lost_on_extend(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The exporter kept the lock (keep=True) and released it: the adopter's token no
    longer matches anywhere, so its extension fails with LockLost (in another process
    too)."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        handle = await call(lock.export(keep=True))
        assert lock.held  # kept
        assert await call(lock.release())
        child = run_adopter(api.flavour, servers.urls, "extend", handle)
        assert child["adopted"] > 0
        assert child["error"] == "LockLost"

        adopted = rl.adopt(handle)
        assert adopted.held  # its validity is what the handle says ...
        with pytest.raises(LockLost) as lost:
            await call(adopted.extend())  # ... but the servers no longer have its token
        assert lost.value.name == lock_name
        assert [o.reply for o in lost.value.outcomes] == [quorumlock.Reply.NOT_HELD] * 5
        assert not adopted.held
        assert is_lost(adopted)
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


# --------------------------------------------------------------------------------------
# contracts, in one process
# --------------------------------------------------------------------------------------


def test_export_contracts(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=10)
        with pytest.raises(RuntimeError, match="does not hold"):
            await call(lock.export())
        assert await call(lock.acquire())
        with pytest.raises(TypeError, match="keep"):
            await call(lock.export(keep=1))  # type: ignore[arg-type]
        handle = await call(lock.export(keep=True))
        assert lock.held
        assert await call(lock.extend()) > 9  # still ours, too
        handle = await call(lock.export())
        assert not lock.held
        # Handed over: the exporter neither extends nor releases it.
        with pytest.raises(RuntimeError, match="does not hold"):
            await call(lock.extend())
        with pytest.raises(RuntimeError, match="does not hold"):
            await call(lock.release())
        with pytest.raises(RuntimeError, match="does not hold"):
            await call(lock.export())
        assert values(servers, lock_name) == [handle.token] * 5

        # The adopter holds it, with no more validity than the handle had.
        adopted = rl.adopt(handle)
        assert adopted.name == lock_name
        assert adopted.token == handle.token
        assert adopted.ttl == 10.0
        assert 0 < adopted.validity <= handle.validity
        assert adopted.check() > 0
        with pytest.raises(RuntimeError, match="already held"):
            await call(adopted.acquire())
        assert await call(adopted.release())
        assert values(servers, lock_name) == [None] * 5

        # A handed-over object can acquire again, with a fresh token.
        assert await call(lock.acquire())
        assert lock.token != handle.token
        assert await call(lock.release())

    api.run(body)


def test_export_of_an_expired_lock_is_lock_lost(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.3)
        assert await call(lock.acquire())
        await asyncio.sleep(0.4)
        with pytest.raises(LockLost, match="expired"):
            await call(lock.export())

    api.run(body)


def test_export_inside_with_hands_over(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    """Leaving the block after a hand-over neither releases nor reports a loss."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        async with holding(rl.lock(lock_name, ttl=10)) as lock:
            handle = await call(lock.export())
        assert not is_lost(lock)
        assert values(servers, lock_name) == [handle.token] * 5
        # The adopted lock as a context manager: entering does not acquire again,
        # leaving releases.
        async with holding(rl.adopt(handle)) as adopted:
            assert adopted.token == handle.token
            assert values(servers, lock_name) == [handle.token] * 5
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_entering_an_adopted_lock_that_expired_raises_lock_lost(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.3)
        assert await call(lock.acquire())
        adopted = rl.adopt(await call(lock.export()))
        await asyncio.sleep(0.4)
        with pytest.raises(LockLost):
            async with holding(adopted):
                pytest.fail("the block must not run")

    api.run(body)


def test_adopting_an_expired_handle_raises_lock_lost(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.3)
        assert await call(lock.acquire())
        handle = await call(lock.export())
        await asyncio.sleep(0.4)
        with pytest.raises(LockLost, match="expired") as lost:
            rl.adopt(handle)
        assert lost.value.name == lock_name

    api.run(body)


def test_adopt_validates_before_holding(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        handle = await call(lock.export())
        for wrong in (handle.to_dict(), handle.to_json()):
            with pytest.raises(TypeError, match=r"LockHandle\.from_json") as refused:
                rl.adopt(wrong)  # type: ignore[arg-type]
            assert handle.token not in str(refused.value)  # a message may reach a log
        with pytest.raises(TypeError, match="clock_skew"):
            rl.adopt(handle, clock_skew="1")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="clock_skew"):
            rl.adopt(handle, clock_skew=-1)
        # a typo, not a skew (it said the handle "expired 1000…000 s ago")
        with pytest.raises(ConfigurationError, match="clock_skew must be at most 3600 s"):
            rl.adopt(handle, clock_skew=1e300)
        with pytest.raises(TypeError, match="check_servers"):
            rl.adopt(handle, check_servers=1)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="bound"):
            rl.adopt(handle, auto_extend=True)

        # Other servers: refused, unless told they are the same ones under other names.
        renamed = dataclasses.replace(
            handle, servers=tuple(s.replace("127.0.0.1", "localhost") for s in handle.servers)
        )
        with pytest.raises(ConfigurationError, match="check_servers=False"):
            rl.adopt(renamed)
        shuffled = dataclasses.replace(handle, servers=handle.servers[::-1])
        assert rl.adopt(shuffled).held  # the order does not matter
        assert rl.adopt(renamed, check_servers=False).held
        fewer = dataclasses.replace(handle, servers=handle.servers[:3])
        with pytest.raises(ConfigurationError, match="3 servers, not 5"):
            rl.adopt(fewer, check_servers=False)

        # A ttl this Redlock does not allow.
        strict = api.redlock(servers.urls, max_ttl=5)
        with pytest.raises(ConfigurationError, match="max_ttl"):
            strict.adopt(handle)

        assert await call(rl.adopt(handle).release())

    api.run(body)


def test_asyncio_adopt_with_a_lease_outside_the_loop(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """asyncio: adopt() with a lease (its task lives on the loop) outside a running loop
    says so, and leaves the handle adoptable; a plain adoption needs no loop."""
    # Patient: the release runs on a new loop, on new connections, whose first replies
    # came late on a loaded host (the release returned False).
    rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=0.5)
    handle = asyncio.run(_exported(rl, lock_name))
    with pytest.raises(RuntimeError, match=r"call adopt\(\) from a coroutine"):
        rl.adopt(handle, auto_extend=True, max_hold=30)
    with pytest.raises(RuntimeError, match=r"call adopt\(\) from a coroutine"):
        rl.adopt(handle, on_lost=lambda lock: None)
    plain = rl.adopt(handle)
    assert plain.held

    async def release() -> None:
        assert await plain.release()
        await rl.close()

    asyncio.run(release())
    assert values(servers, lock_name) == [None] * len(servers)


async def _exported(rl: quorumlock.asyncio.Redlock, name: str) -> LockHandle:
    lock = rl.lock(name, ttl=10)
    assert await lock.acquire()
    return await lock.export()


def test_clock_skew_and_a_handle_from_the_future(
    api: Api, servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        handle = await call(lock.export())

        assert rl.adopt(handle, clock_skew=2).validity <= handle.validity - 2
        with caplog.at_level(logging.WARNING, logger="quorumlock"):
            assert rl.adopt(handle).validity <= handle.validity
            assert not caplog.records  # exported in the past: nothing to say
            future = dataclasses.replace(handle, exported_at=time.time() + 5)
            adopted = rl.adopt(future)
        assert adopted.validity <= handle.validity
        assert len(caplog.records) == 1
        message = caplog.records[0].getMessage()
        assert message.startswith(f"clock anomaly: the handle of lock {lock_name!r}")
        assert "in the future" in message
        assert handle.token not in message
        assert await call(adopted.release())

    api.run(body)


def test_adopted_lock_is_auto_extended(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.6)
        assert await call(lock.acquire())
        lost: list[object] = []
        adopted = rl.adopt(
            await call(lock.export()), auto_extend=True, max_hold=30, on_lost=lost.append
        )
        assert await wait_for(lambda: adopted.extensions >= 3, 5)
        assert adopted.held
        assert values(servers, lock_name) == [adopted.token] * 5
        assert await call(adopted.release())
        assert not lost

    api.run(body)


def test_exporter_stops_renewing_after_the_handover(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """An auto-extending lock handed over (and not adopted) runs out on the servers: the
    exporter no longer renews it, and it reports no loss either."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lost: list[object] = []
        lock = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30, on_lost=lost.append)
        assert await call(lock.acquire())
        assert await wait_for(lambda: lock.extensions >= 1, 5)  # renewing, so far
        handle = await call(lock.export())
        extensions = lock.extensions
        assert await wait_for(lambda: values(servers, lock_name) == [None] * 5, 5)
        assert lock.extensions == extensions  # none after the hand-over
        assert not lost
        assert not is_lost(lock)
        with pytest.raises(LockLost):
            rl.adopt(handle)

    api.run(body)


def test_a_renewal_in_flight_does_not_outlive_the_handover(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """A frozen server makes a lease renewal last its whole instance timeout (1 s); the
    lock is exported while it is in flight. sync: the export waits for it; asyncio: the
    export cancels it. Either way the exporter does not hold the lock again when the
    renewal would have completed, and renews it no more."""
    group = make_servers(3)

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=3, auto_extend=True, max_hold=30)
        assert await call(lock.acquire())
        plan = lock._state.next_step(time.monotonic())
        assert plan is not None
        assert plan.extend_ms is not None
        group[2].pause()
        try:
            await asyncio.sleep(max(0.0, plan.at - time.monotonic()) + 0.3)
            assert lock.extensions == 0  # the renewal is waiting for the frozen server
            handle = await call(lock.export())
            extensions = lock.extensions
            await asyncio.sleep(1.2)  # the renewal would have completed by now
            assert not lock.held
            assert lock.extensions == extensions
        finally:
            group[2].resume()
        adopted = rl.adopt(handle)
        assert adopted.held
        assert await call(adopted.release())

    api.run(body)


# --------------------------------------------------------------------------------------
# bugs found on the way (outside this feature)
# --------------------------------------------------------------------------------------


def test_first_round_of_an_adopted_lock_waits_for_connections(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """Connecting takes several round trips (client setinfo, the session probe), a warm
    round one: with 50 ms each way and a 250 ms instance timeout, a fresh Redlock's first
    acquire gets the lock (it waits for its connections), a warm extend fits, and a fresh
    Redlock's first extend of an adopted lock should too."""
    group = make_servers(3)
    proxies = [LatencyProxy(s.host, s.port, delay=0.05) for s in group]
    for proxy in proxies:
        proxy.start()

    async def body() -> None:
        urls = [p.url for p in proxies]
        rl = api.redlock(urls, instance_timeout=0.25)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire(blocking=False))  # first contact: waited for
        # A NOSCRIPT would cost a second round trip: 200 ms of the 250 ms, which a loaded
        # machine may exceed. The script is cached beforehand, so the extension must not
        # be lost: a LockLost here is a failure, not noise.
        for server in group:
            client = client_of(server)
            assert client.script_load(EXTEND.source) == EXTEND.sha
            client.close()
        assert await call(lock.extend()) > 9  # warm: one round trip
        handle = await call(lock.export())
        fresh = api.redlock(urls, instance_timeout=0.25)
        adopted = fresh.adopt(handle)
        assert await call(adopted.extend()) > 9  # waits for its connections

    try:
        api.run(body)
    finally:
        for proxy in proxies:
            proxy.close()


def test_release_inside_async_with_is_not_a_loss(servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = quorumlock.asyncio.Redlock(servers.urls)
        async with rl.lock(lock_name, ttl=10) as lock:
            assert await lock.release()
        await rl.close()

    asyncio.run(body())


def test_a_lease_wait_beyond_what_a_thread_can_wait_does_not_end_the_lease_thread(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The sync lease thread serves every lock of its Redlock: a due time further off
    than ``threading.TIMEOUT_MAX`` (a handle claiming 1e20 s, with ``max_ttl=None``)
    must not kill it with an OverflowError, leaving every other lease unrenewed and its
    loss untold."""
    with quorumlock.Redlock(servers.urls, max_ttl=None, instance_timeout=1.0) as rl:
        far = rl.lock(lock_name + ":far", ttl=5)
        rl._keeper.watch(far, time.monotonic() + 1e20, -1)  # the first due: waited for
        time.sleep(0.1)
        leased = rl.lock(lock_name, ttl=0.3, auto_extend=True, max_hold=30)
        assert leased.acquire()
        time.sleep(0.6)
        assert leased.extensions >= 2
        assert not leased.lost.is_set()
        assert leased.release()


def test_a_slow_on_lost_holds_up_no_other_lease_and_no_release(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """An ``on_lost`` that takes its time (an alert sent over the network) ran on the
    lease thread with the lost lock's mutex held: another lock of the Redlock missed its
    renewal and was lost for it ("the process was stopped, or too busy to renew"), and
    the lost lock's release waited for the callback. It runs on a thread of its own."""
    called = threading.Event()
    finish = threading.Event()

    def slow(lock: object) -> None:
        called.set()
        finish.wait(10)

    with quorumlock.Redlock(servers.urls, instance_timeout=1.0) as rl:
        other = rl.lock(lock_name + ":other", ttl=1.0, auto_extend=True, max_hold=60)
        doomed = rl.lock(lock_name, ttl=0.3, auto_extend=True, max_extensions=0, on_lost=slow)
        try:
            assert other.acquire()
            assert doomed.acquire()
            assert called.wait(5), "on_lost was not called"
            began = time.monotonic()
            assert doomed.release() is False
            assert time.monotonic() - began < 1.0, "the release waited for on_lost"
            time.sleep(1.5)  # more than other's ttl: only its renewals keep it
            assert other.held
            assert not other.lost.is_set()
            assert other.extensions >= 1
        finally:
            finish.set()
        assert other.release()
