"""The sync rounds busy-poll only while that pays (``SpinPolicy``)."""

from __future__ import annotations

import time

from quorumlock import Redlock
from quorumlock._io.fanout import SpinPolicy
from quorumlock.testing import LocalServerGroup
from tests.conftest import ServerFactory


def test_rounds_that_wait_longer_than_the_spin_on_average_stop_it() -> None:
    policy = SpinPolicy(0.0002)
    for _ in range(20):
        policy.waited(0.0001)
    assert policy.budget() == 0.0002
    policy.waited(0.005)  # one slow round counts as four spins at most: 0.275 ms
    assert policy.budget() == 0.0
    policy.waited(0.0001)  # 0.231 ms
    assert policy.budget() == 0.0
    policy.waited(0.0001)  # 0.198 ms
    assert policy.budget() == 0.0002


def test_busy_poll_zero_never_spins() -> None:
    policy = SpinPolicy(0.0)
    for seconds in (0.0, 0.0001, 0.01):
        assert policy.budget() == 0.0
        policy.waited(seconds)


class _Spy(SpinPolicy):
    """The policy of a real Redlock, recording what each round was given, and each
    round's wait (every round reports one, spinning or not)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.given: list[float] = []
        self.waits = 0
        # Each round in order: whether it asked for a budget (a contended round never
        # does: it never spins).
        self.asked: list[bool] = []
        self._asking = False

    def budget(self) -> float:
        self.given.append(super().budget())
        self._asking = True
        return self.given[-1]

    def waited(self, seconds: float) -> None:
        self.waits += 1
        self.asked.append(self._asking)
        self._asking = False
        super().waited(seconds)


SPIN = 0.0002


def test_rounds_slower_than_the_spin_stop_spinning(
    make_servers: ServerFactory, lock_name: str
) -> None:
    group = make_servers(3)
    # The lock is taken by a client with the default timeouts, so that a busy machine
    # cannot leave one of the three servers without the key; the spied client only
    # reads it. Its rounds wait 0.1 s for the paused server: the policy counts any wait
    # as four spins at most, so the sequence below does not depend on that time, and
    # the two servers that answer have 0.1 s to do it.
    holder = Redlock(group.urls)
    held = holder.lock(lock_name, ttl=30)
    redlock = Redlock(group.urls, instance_timeout=0.1)
    spy = _Spy(redlock.config.busy_poll)
    redlock._fanout.spin = spy
    try:
        assert held.acquire(blocking=False)
        lock = redlock.lock(lock_name, ttl=30)
        # One server paused: every round that reads every reply (the GET of locked())
        # waits its 0.1 s for that one, far past a spin. (Not an acquire: it ends at the
        # majority's grants.)
        group.servers[0].pause()
        spy.recent, spy.given = 0.0, []
        for _ in range(12):  # answered by the other two
            assert lock.locked()
        # 0.2 ms after the first (at most one spin: it still spins), 0.35 ms after the
        # second: the third round and those after it sleep at once
        assert spy.given == [SPIN] * 2 + [0.0] * 10
    finally:
        group.servers[0].resume()
        redlock.close()
        if held.held:
            held.release()
        holder.close()


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
        # Local servers answer in about 0.1 ms: the average falls below one spin within
        # a few rounds (seven of 0.1 ms: 0.19 ms), and the rounds spin again. On a
        # loaded machine the replies take longer for a while: up to 10 s of cycles.
        give_up = time.monotonic() + 10.0
        while SPIN not in spy.given and time.monotonic() < give_up:
            assert lock.acquire(blocking=False)
            assert lock.release()
        assert spy.given[0] == 0.0
        assert SPIN in spy.given
    finally:
        redlock.close()


def test_the_rounds_of_a_waiter_never_spin(servers: LocalServerGroup, lock_name: str) -> None:
    """A blocking acquire of a held lock: its first attempt may spin; once it waits in
    the queue, its attempts, its joins and its leave at the end never do (the processes
    that take turns on a name need the cores a spin would take)."""
    holder = Redlock(servers.urls[:3])
    redlock = Redlock(servers.urls[:3], retry_delay=0.05)
    spy = _Spy(redlock.config.busy_poll)
    redlock._fanout.spin = spy
    try:
        held = holder.lock(lock_name, ttl=10)
        assert held.acquire(blocking=False)
        lock = redlock.lock(lock_name, ttl=10)
        # 1.5 s: time for the subscription on a busy machine, then a poll every 0.1 s
        assert not lock.acquire(blocking=True, timeout=1.5)
        assert spy.waits >= 3  # the first attempt, a waiter's, its polls, a leave
        # The first attempt spins, as may the polls before the process listens to the
        # key's releases (its subscription, slow on a loaded machine: there one did);
        # from the first round of a waiter in line on, none even asks.
        assert spy.asked[0]
        assert spy.given == [SPIN] * len(spy.given)
        assert False in spy.asked, "no round of a waiter in line"
        first_in_line = spy.asked.index(False)
        assert not any(spy.asked[first_in_line:]), spy.asked
        assert held.release()
    finally:
        redlock.close()
        holder.close()
