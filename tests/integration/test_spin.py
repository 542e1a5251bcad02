"""The sync rounds busy-poll only while that pays (``SpinPolicy``)."""

from __future__ import annotations

from quorumlock import Redlock
from quorumlock._io.fanout import SpinPolicy
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory


def test_rounds_that_wait_longer_than_two_spins_stop_the_spin() -> None:
    policy = SpinPolicy(0.0002)
    for _ in range(20):
        policy.waited(0.0001)
    assert policy.budget() == 0.0002
    policy.waited(0.005)  # one slow round counts as four spins at most: 0.275 ms
    assert policy.budget() == 0.0002
    policy.waited(0.005)  # 0.41 ms: more than two spins
    assert policy.budget() == 0.0
    policy.waited(0.0001)  # 0.33 ms
    assert policy.budget() == 0.0002


def test_busy_poll_zero_never_spins() -> None:
    policy = SpinPolicy(0.0)
    for seconds in (0.0, 0.0001, 0.01):
        assert policy.budget() == 0.0
        policy.waited(seconds)


class _Spy(SpinPolicy):
    """The policy of a real Redlock, recording what each round was given."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.given: list[float] = []

    def budget(self) -> float:
        self.given.append(super().budget())
        return self.given[-1]


SPIN = 0.0002


def test_rounds_slower_than_the_spin_stop_spinning(
    make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)
    redlock = Redlock(group.urls, instance_timeout=0.02)
    spy = _Spy(redlock.config.busy_poll)
    redlock._fanout.spin = spy
    try:
        lock = redlock.lock(lock_name, ttl=10)
        assert lock.acquire(blocking=False)
        assert lock.release()
        # One server paused: every round waits its 20 ms for that reply, far past a spin.
        group.servers[0].pause()
        spy.recent, spy.given = 0.0, []  # (the first round, connecting, waited long)
        for _ in range(6):  # 12 rounds, granted and released by the other two
            assert lock.acquire(blocking=False)
            lock.release()
        # 0.2, 0.35, 0.46 ms: the fourth round and those after it sleep at once
        assert spy.given == [SPIN] * 3 + [0.0] * 9
    finally:
        group.servers[0].resume()
        redlock.close()


def test_rounds_whose_replies_come_soon_spin_again(
    servers: LocalServerGroup, lock_name: str
) -> None:
    redlock = Redlock(servers.urls[:3])
    spy = _Spy(redlock.config.busy_poll)
    redlock._fanout.spin = spy
    try:
        lock = redlock.lock(lock_name, ttl=10)
        assert lock.acquire(blocking=False)
        assert lock.release()
        spy.recent, spy.given = 0.0008, []  # as after a busy spell: not spinning
        for _ in range(20):
            assert lock.acquire(blocking=False)
            assert lock.release()
        # Local servers answer in about 0.1 ms: the average falls below two spins within
        # a few rounds (three of 0.1 ms: 0.38 ms), and the rounds spin again.
        assert spy.given[0] == 0.0
        assert spy.given.count(SPIN) > len(spy.given) / 2
    finally:
        redlock.close()
