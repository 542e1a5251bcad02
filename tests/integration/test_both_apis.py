"""The lock contracts and lease keeping, each body run against both APIs.

Every test takes the ``api`` fixture (``sync`` or ``async``) and writes its body once, as
an ``async def`` that goes through ``tests/integration/apis.py``. Where the behaviour
differs by design (how a loss is reported), the body branches on ``api.flavour``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

import pytest

import quorumlock
from quorumlock import ConfigurationError, LockLost, Reply
from quorumlock._algorithm.arithmetic import drift
from quorumlock._algorithm.flows import Flow
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory, client_of, values
from tests.integration.apis import AnyLock, Api, call, holding, is_lost

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


async def wait_for(condition: object, limit: float, *, step: float = 0.01) -> bool:
    """Poll ``condition()`` with ``await asyncio.sleep`` (so lease tasks run); bounded."""
    assert callable(condition)
    give_up = time.monotonic() + limit
    while not condition():
        if time.monotonic() >= give_up:
            return False
        await asyncio.sleep(step)
    return True


class Sampler:
    """Samples a held lock: the end of its validity as seen at each sample."""

    def __init__(self, lock: AnyLock) -> None:
        self.lock = lock
        self.ends: list[float] = []  # now + validity, for every sample that held
        self.validities: list[float] = []

    def sample(self) -> float:
        now = time.monotonic()
        validity = self.lock.validity
        self.validities.append(validity)
        if validity > 0:
            self.ends.append(now + validity)
        return validity


def pttl(server_group: LocalServerGroup, index: int, key: str) -> int:
    client = client_of(server_group[index])
    try:
        return int(client.pttl(key))
    finally:
        client.close()


# --------------------------------------------------------------------------------------
# contracts
# --------------------------------------------------------------------------------------


def test_acquire_extend_release_contracts(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Same results and same exceptions in both APIs, step by step."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.5)
        assert not lock.held
        assert lock.validity == 0.0

        # acquire, and the double acquire
        began = time.monotonic()
        assert await call(lock.acquire()) is True
        assert lock.held
        validity = lock.validity
        # at most the ttl; at least the ttl less the drift and the time the call took
        assert 0.5 - drift(500, 0.01) - (time.monotonic() - began) <= validity < 0.5
        assert values(servers, lock_name) == [lock.token] * 5
        first_token = lock.token
        with pytest.raises(RuntimeError, match="already held"):
            await call(lock.acquire())
        assert lock.token == first_token  # the failed call changed nothing
        other = rl.lock(lock_name, ttl=0.5)
        assert await call(other.acquire(blocking=False)) is False
        with pytest.raises(RuntimeError):
            await call(other.release())  # never held by that object

        # extend while held
        validity = await call(lock.extend())
        assert 0.3 < validity <= 0.5
        assert lock.extensions == 1
        validity = await call(lock.extend(ttl=2))
        assert 1.5 < validity <= 2.0
        assert lock.extensions == 2
        # on a server that confirmed it: the round ends at the majority that decides it,
        # and a server left unread (one slow on a loaded machine) may run it later
        confirmed = [i for i, o in enumerate(lock.outcomes) if o.reply is Reply.DONE]
        assert len(confirmed) >= 3
        assert 1_500 < pttl(servers, confirmed[0], lock_name) <= 2_000

        # release while held
        assert await call(lock.release()) is True
        assert values(servers, lock_name) == [None] * 5
        assert not lock.held
        with pytest.raises(RuntimeError):
            await call(lock.release())
        with pytest.raises(RuntimeError):
            await call(lock.extend())

        # extend after the validity ran out: LockLost, then release says False
        assert await call(lock.acquire()) is True
        assert lock.token != first_token  # a fresh token for every acquisition (R2)
        assert lock.extensions == 0
        await asyncio.sleep(0.7)
        assert not lock.held
        with pytest.raises(LockLost) as lost:
            await call(lock.extend())
        assert lost.value.name == lock_name
        assert is_lost(lock)
        with pytest.raises(LockLost):
            lock.check()
        assert await call(lock.release()) is False
        with pytest.raises(RuntimeError):
            await call(lock.release())

        # release after the validity ran out: False, not an error
        assert await call(lock.acquire()) is True
        assert not is_lost(lock)
        assert lock.check() > 0
        await asyncio.sleep(0.7)
        assert await call(lock.release()) is False
        assert values(servers, lock_name) == [None] * 5

        # the lock can be taken again at once by anyone
        assert await call(other.acquire(blocking=False)) is True
        assert await call(other.release()) is True

    api.run(body)


def test_auto_extend_needs_a_bound(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        with pytest.raises(ConfigurationError, match="bound"):
            rl.lock(lock_name, ttl=1, auto_extend=True)
        with pytest.raises(ConfigurationError):
            rl.lock(lock_name, ttl=1, auto_extend=True, max_extensions=-1)
        with pytest.raises(ConfigurationError):
            rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=-1.0)
        with pytest.raises(ConfigurationError):
            rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=-math.inf)
        with pytest.raises(TypeError):
            rl.lock(lock_name, ttl=1, auto_extend=True, max_extensions=True)
        # A bound without auto_extend bounds nothing; a max_hold below the ttl neither
        # (the acquire holds for the ttl anyway).
        with pytest.raises(ConfigurationError, match="max_hold bounds the renewals"):
            rl.lock(lock_name, ttl=1, max_hold=10)
        with pytest.raises(ConfigurationError, match="max_extensions bounds the renewals"):
            rl.lock(lock_name, ttl=1, auto_extend=False, max_extensions=3)
        with pytest.raises(ConfigurationError, match=r"max_hold \(0.5 s\) is shorter than"):
            rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=0.5)
        # The explicit unbounded choice, and the bounded ones, are accepted.
        rl.lock(lock_name, ttl=1, auto_extend=True, max_extensions=3)
        rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=10)
        rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=1)
        lock = rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=math.inf)
        async with holding(lock):
            assert lock.held
        assert values(servers, lock_name) == [None] * 5
        # an adopted lock's max_hold counts from its adoption: shorter than its ttl, it
        # bounds what is left
        exported = rl.lock(lock_name, ttl=5)
        assert await call(exported.acquire(blocking=False))
        adopted = rl.adopt(await call(exported.export()), auto_extend=True, max_hold=0.5)
        assert adopted.held
        assert await call(adopted.release())
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_ownership_belongs_to_the_lock_object(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """Acquire in one thread (task), release in another: True."""

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=5, auto_extend=True, max_hold=math.inf)
        assert await api.elsewhere(lock.acquire) is True
        assert lock.held
        assert values(servers, lock_name) == [lock.token] * 5
        stranger = rl.lock(lock_name, ttl=5)
        with pytest.raises(RuntimeError):
            await call(stranger.release())
        assert await api.elsewhere(lock.release) is True
        assert not lock.held
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


# --------------------------------------------------------------------------------------
# lease keeping
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_renewal_keeps_a_short_lock_through_long_work(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=0.1)
        lock = rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=math.inf)
        sampler = Sampler(lock)
        async with holding(lock):
            work_ends = time.monotonic() + 5.0
            while time.monotonic() < work_ends:
                assert sampler.sample() > 0, f"validity ran out after {lock.extensions} ext."
                await asyncio.sleep(0.1)
            assert values(servers, lock_name) == [lock.token] * 5
            assert lock.extensions >= 10
            assert not is_lost(lock)
        assert len(sampler.validities) >= 30
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_a_renewal_that_raises_unexpectedly_is_logged_and_retried(
    api: Api, servers: LocalServerGroup, lock_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Catches a lease keeper that dies on an unexpected exception of a renewal (a bug,
    not a loss): the asyncio lease task used to end there, and the lock ran out while
    held. Both keepers log it and retry as after a failed renewal."""

    async def body() -> None:
        rl = api.redlock(servers.urls)
        lock = rl.lock(lock_name, ttl=1.5, auto_extend=True, max_hold=math.inf)
        state = lock._state
        renew = state.renew
        raised: list[int] = []

        def renew_once_broken(*, ttl_ms: int, now: float) -> Flow[bool]:
            # A generator, as a flow is: the bug is raised while the flow is driven.
            if not raised:
                raised.append(ttl_ms)
                raise RuntimeError("a bug in a renewal")
            return (yield from renew(ttl_ms=ttl_ms, now=now))

        state.renew = renew_once_broken  # type: ignore[method-assign]
        with caplog.at_level(logging.ERROR, logger="quorumlock"):
            async with holding(lock):
                # Two regular renewals fit in 2.5 s; the broken one is retried at once.
                assert await wait_for(lambda: lock.extensions >= 2, 6.0), lock.extensions
                assert raised
                assert not is_lost(lock)
        assert any("lease renewal of" in r.getMessage() for r in caplog.records)

    api.run(body)


def test_check_after_a_failed_extension_says_why_the_lock_was_lost(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """The LockLost of check() after an extension failed (a lease's renewal or an
    extend()) carries the extension's reason and each server's answer, as its warning
    did (it said only "lock ... was lost", which a worker that logs str(exc) cannot act
    on)."""
    group = make_servers(3)

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.1)
        lock = rl.lock(lock_name, ttl=10)
        assert await call(lock.acquire())
        group[0].kill()
        group[1].kill()
        with pytest.raises(LockLost) as extended:
            await call(lock.extend())
        with pytest.raises(LockLost) as checked:
            lock.check()
        assert str(checked.value) == str(extended.value)
        assert "could not be extended: only 1 of 3 servers confirmed it" in str(checked.value)
        assert group.urls[0] in str(checked.value)
        assert checked.value.outcomes == extended.value.outcomes
        assert not await call(lock.release())  # lost: False, and no longer held
        with pytest.raises(quorumlock.LockNotHeld):
            lock.check()

    api.run(body)


def test_killed_majority_makes_the_lock_lost_within_its_validity(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)
    ttl = 1.0
    reports: list[tuple[object, float]] = []

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.1)
        lock = rl.lock(
            lock_name,
            ttl=ttl,
            auto_extend=True,
            max_hold=math.inf,
            on_lost=lambda lost: reports.append((lost, time.monotonic())),
        )
        times: dict[str, float] = {}

        async def hold_through_the_kill() -> None:
            async with holding(lock):
                assert await wait_for(lambda: lock.extensions >= 1, 2.0)
                group[0].kill()
                group[1].kill()
                times["killed"] = killed_at = time.monotonic()
                if isinstance(lock, quorumlock.Lock):
                    # Threads: the event fires and the callback runs; the block goes on.
                    assert lock.lost.wait(ttl + 0.5), "loss not reported within the ttl"
                    assert time.monotonic() - killed_at <= ttl + 0.5
                    assert await wait_for(lambda: bool(reports), 1.0)
                    with pytest.raises(LockLost):
                        lock.check()
                    assert not lock.held
                else:
                    # asyncio: the block is cancelled.
                    try:
                        await asyncio.sleep(ttl + 10)
                    except asyncio.CancelledError:
                        times["cancelled"] = time.monotonic()
                        raise
                    pytest.fail("the async with block was not cancelled")

        with pytest.raises(LockLost) as left:  # from leaving the block, in both APIs
            await hold_through_the_kill()
        # and why, the servers' answers too (it said only "was lost before the end")
        assert " It could not be extended: " in str(left.value) or " It expired: " in str(
            left.value
        ), left.value
        assert group.urls[0] in str(left.value)
        killed_at = times["killed"]
        if api.flavour == "async":
            assert 0 < times["cancelled"] - killed_at <= ttl + 0.5
            assert is_lost(lock)
        await asyncio.sleep(0.3)  # a second report would come now
        assert len(reports) == 1
        assert reports[0][0] is lock
        assert 0 < reports[0][1] - killed_at <= ttl + 0.5
        assert not lock.held

    api.run(body)


@pytest.mark.slow
def test_sigstopped_servers_do_not_stall_renewal(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(5)
    live = list(group)[:3]

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.1)
        # Scripts cached and connections open before the freeze: the first use of a
        # script is covered by test_a_frozen_server_costs_no_failed_round.
        warm_up = rl.lock(lock_name + ":warm-up", ttl=1)
        assert await call(warm_up.acquire())
        assert await call(warm_up.extend())
        assert await call(warm_up.release())
        group[3].pause()
        group[4].pause()
        lock = rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=math.inf)
        sampler = Sampler(lock)
        counts: list[int] = []
        async with holding(lock):
            start = time.monotonic()
            for second in range(1, 4):
                while time.monotonic() < start + second:
                    assert sampler.sample() > 0
                    assert not is_lost(lock)
                    await asyncio.sleep(0.05)
                counts.append(lock.extensions)
            assert values(live, lock_name) == [lock.token] * 3
        # Extensions keep coming: some in every second of the work.
        assert counts[0] >= 1
        assert counts[0] < counts[1] < counts[2], counts
        assert values(live, lock_name) == [None] * 3

    try:
        api.run(body)
    finally:
        for server in list(group)[3:]:
            if server.paused:
                server.resume()


def test_max_extensions_is_honoured(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    reported: list[float] = []

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=0.1)
        lock = rl.lock(
            lock_name,
            ttl=0.6,
            auto_extend=True,
            max_extensions=2,
            on_lost=lambda _: reported.append(time.monotonic()),
        )
        sampler = Sampler(lock)
        assert await call(lock.acquire())
        give_up = time.monotonic() + 3.0
        while not is_lost(lock) and time.monotonic() < give_up:
            sampler.sample()
            await asyncio.sleep(0.01)
        assert is_lost(lock), "the end of the lease was not reported"
        assert await wait_for(lambda: bool(reported), 1.0)
        assert lock.extensions == 2
        # Reported at the deadline that the second extension set, not later.
        last_end = max(sampler.ends)
        assert last_end - 0.01 <= reported[0] <= last_end + 0.5
        with pytest.raises(LockLost):
            lock.check()
        await asyncio.sleep(0.3)
        assert lock.extensions == 2
        assert len(reported) == 1
        assert await call(lock.release()) is False
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_max_hold_is_honoured(api: Api, servers: LocalServerGroup, lock_name: str) -> None:
    max_hold = 1.5
    reported: list[float] = []

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=0.1)
        lock = rl.lock(
            lock_name,
            ttl=0.6,
            auto_extend=True,
            max_hold=max_hold,
            on_lost=lambda _: reported.append(time.monotonic()),
        )
        sampler = Sampler(lock)
        before_acquire = time.monotonic()
        assert await call(lock.acquire())
        after_acquire = time.monotonic()
        give_up = time.monotonic() + 4.0
        while not is_lost(lock) and time.monotonic() < give_up:
            sampler.sample()
            await asyncio.sleep(0.01)
        assert is_lost(lock), "the end of the lease was not reported"
        hold_end = before_acquire + max_hold
        # Never held past acquired_at + max_hold, by the client's own account (the
        # clock is read inside acquire(), so acquired_at is no later than its return;
        # on a loaded machine it can be well after before_acquire)...
        assert max(sampler.ends) <= after_acquire + max_hold + 0.005
        assert lock.extensions >= 2  # ...yet it was extended up to near that bound.
        assert await wait_for(lambda: bool(reported), 1.0)
        assert hold_end - 0.3 <= reported[0] <= hold_end + 0.5
        # ...and by the servers' (a generous margin for the last round's latency).
        assert await wait_for(lambda: values(servers, lock_name) == [None] * 5, 1.0)
        assert time.monotonic() <= hold_end + 0.5
        with pytest.raises(LockLost):
            lock.check()
        assert await call(lock.release()) is False

    api.run(body)


def test_max_hold_is_honoured_when_the_event_loop_is_late(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """The last, shortened extension must be measured from when it is sent.

    ttl 1 s, max_hold 1.2 s: the only extension is due at ~0.32 s and is shortened to
    ~0.88 s so that the lock ends at 1.2 s. If the renewal is sent late (a busy event
    loop, simulated by a blocking sleep from 0.1 s to 0.5 s), it must still end at 1.2 s.
    Regression: the asyncio lease task used to send the extension planned before its
    sleep, sized for the earlier time, and held the lock ~0.3 s past max_hold.
    """
    max_hold = 1.2

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=0.1)
        lock = rl.lock(lock_name, ttl=1, auto_extend=True, max_hold=max_hold)
        sampler = Sampler(lock)
        assert await call(lock.acquire())
        after_acquire = time.monotonic()  # acquired_at is no later than this
        await asyncio.sleep(0.1)
        time.sleep(0.4)  # a busy event loop (sync API: the lease thread is not affected)
        give_up = time.monotonic() + 3.0
        while not is_lost(lock) and time.monotonic() < give_up:
            sampler.sample()
            await asyncio.sleep(0.01)
        assert lock.extensions == 1
        assert max(sampler.ends) <= after_acquire + max_hold + 0.005
        await call(lock.release())

    api.run(body)


@pytest.mark.parametrize("found_by", ["check", "extend"])
def test_a_loss_found_by_the_holder_calls_on_lost_once(
    api: Api, servers: LocalServerGroup, lock_name: str, found_by: str
) -> None:
    """The validity runs out while the lease cannot run (an event loop held by a long
    computation; the sync lease thread may find it first): whoever finds the loss,
    ``on_lost`` runs once and ``lock.lost`` is set. An asyncio ``check()`` that found it
    told no one, and an ``extend()`` made ``on_lost`` run twice."""

    async def body() -> None:
        rl = api.redlock(servers.urls)
        calls: list[object] = []
        lock = rl.lock(lock_name, ttl=0.5, on_lost=calls.append)
        assert await call(lock.acquire())
        time.sleep(0.7)  # (blocking: in asyncio, the lease task cannot run)

        async def find() -> float:
            return lock.check() if found_by == "check" else await call(lock.extend())

        with pytest.raises(LockLost):
            await find()
        await asyncio.sleep(0.3)  # the lease, had it anything left to tell
        assert calls == [lock]
        assert is_lost(lock)
        await call(lock.release())

    api.run(body)


def test_no_extension_after_release(api: Api, make_servers: ServerFactory, lock_name: str) -> None:
    """Release during a renewal round: the renewal stops (or ends) first, none follows."""
    group = make_servers(3)
    live = list(group)[:2]

    async def body() -> None:
        # The frozen server makes every round last the whole instance timeout (0.5 s).
        rl = api.redlock(group.urls, instance_timeout=0.5, connect_timeout=5.0)
        # Warm up: connections to every server, scripts cached, before the freeze.
        warm_up = rl.lock(lock_name + ":warm-up", ttl=3)
        assert await call(warm_up.acquire())
        assert await call(warm_up.extend())
        assert await call(warm_up.release())
        group[2].pause()
        lock = rl.lock(lock_name, ttl=3, auto_extend=True, max_hold=math.inf)
        assert await call(lock.acquire())
        assert lock.extensions == 0
        # A renewal is due a third of the ttl after the acquire round started. It is in
        # flight once the live servers have reset the key's ttl while the round still
        # waits for the frozen one.
        previous = pttl(group, 0, lock_name)
        give_up = time.monotonic() + 3.0
        while True:
            await asyncio.sleep(0.005)
            current = pttl(group, 0, lock_name)
            if current > previous + 100:
                break
            previous = current
            assert time.monotonic() < give_up, "no renewal started"
        assert lock.extensions == 0, "the renewal round ended before the release"
        assert await call(lock.release()) is True
        after_release = lock.extensions
        assert after_release <= 1  # the sync API lets the round in flight finish first
        assert values(live, lock_name) == [None, None]
        for _ in range(6):
            await asyncio.sleep(0.25)
            assert values(live, lock_name) == [None, None]
            assert lock.extensions == after_release
            assert not lock.held
            assert not is_lost(lock)
        # Nobody is blocked by a leftover: a new lock takes the name at once.
        other = rl.lock(lock_name, ttl=3)
        assert await call(other.acquire(blocking=False))
        assert await call(other.release())

    try:
        api.run(body)
    finally:
        if group[2].paused:
            group[2].resume()


def test_release_after_a_reported_loss_still_deletes_the_keys(
    api: Api, servers: LocalServerGroup, lock_name: str
) -> None:
    """R9: release is the compare-and-delete on all servers, whatever the client believes.

    A large drift allowance makes the servers keep the key ~1 s longer than the client's
    validity. Once the validity ran out, ``release()`` must delete that key, whether or
    not the loss was noticed first (by ``check()`` here; by the lease keeper watching the
    deadline, or failed renewals that kept resetting the key on a minority, in practice).
    Regression: LockState.release() used to return False without any round once a loss
    was recorded, leaving such keys for up to a ttl.
    """

    async def body() -> None:
        rl = api.redlock(servers.urls, instance_timeout=1.0, clock_drift_factor=0.5)
        # Not noticed before the release: the keys are deleted.
        lock = rl.lock(lock_name, ttl=2)
        assert await call(lock.acquire())
        assert lock.validity < 1.0
        await asyncio.sleep(1.1)
        assert not lock.held
        assert values(servers, lock_name) == [lock.token] * 5  # the servers still hold it
        await call(lock.release())
        assert values(servers, lock_name) == [None] * 5
        # Noticed first: the same release must delete them too.
        assert await call(lock.acquire())
        await asyncio.sleep(1.1)
        with pytest.raises(LockLost):
            lock.check()
        assert values(servers, lock_name) == [lock.token] * 5
        assert await call(lock.release()) is False
        assert values(servers, lock_name) == [None] * 5

    api.run(body)


def test_a_frozen_server_costs_no_failed_round(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """One of five servers frozen from the start (fresh servers: no script cached yet).

    Every round waits for it up to the instance timeout, but acquire, extend and release
    all succeed with the other four, the first time. Regression: the sync fan-out used to
    wait for the hanging connection until the deadline before reading the others' replies,
    so the EVAL fallback after NOSCRIPT timed out (extend raised LockLost, release said
    False).
    """
    group = make_servers(5)

    async def body() -> None:
        rl = api.redlock(group.urls, instance_timeout=0.2, connect_timeout=5.0)
        lock = rl.lock(lock_name, ttl=5)
        for _ in range(2):
            assert await call(lock.acquire()) is True
            assert await call(lock.extend()) > 4
            assert await call(lock.extend()) > 4
            assert [o.reply.value for o in lock.outcomes][:4] == ["done"] * 4
            assert values(list(group)[:4], lock_name) == [lock.token] * 4
            assert await call(lock.release()) is True
            assert values(list(group)[:4], lock_name) == [None] * 4

    group[4].pause()
    try:
        api.run(body)
    finally:
        group[4].resume()
