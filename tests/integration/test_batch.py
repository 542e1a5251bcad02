"""Lease renewals in batches (issue 6, figure 4): many locks due at once share their round
trips (``SyncFanout.run_batch``), on real servers."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

import pytest

import quorumlock.asyncio
from quorumlock import Redlock, Reply, _sync
from quorumlock._algorithm.flows import Fanout, Op
from quorumlock._algorithm.round import RoundMachine
from quorumlock._io import fanout as fanout_module
from quorumlock.testing import LocalServerGroup
from tests.conftest import (
    ServerFactory,
    client_of,
    command_calls,
    decided,
    on_each,
    pttls,
    script_calls,
    settled_values,
    values,
)


def extend(name: str, token: str, ttl_ms: int = 30_000) -> Fanout:
    return Fanout(Op.EXTEND, name, token, ttl_ms, 1.0)


def test_a_batch_gives_each_step_its_own_replies_in_server_order(
    servers: LocalServerGroup, lock_name: str
) -> None:
    # A generous instance timeout: every server must grant (a loaded machine can miss the
    # default 50 ms on one or two, and those would then answer "not held").
    rl = Redlock(servers.urls, instance_timeout=1.0)
    mine = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(3)]
    for lock in mine:
        assert lock.acquire(blocking=False)
    rl._fanout.run(extend(lock_name + ":warm", "x"))  # connections open and idle
    steps = [
        extend(mine[0].name, mine[0].token or ""),
        extend(mine[1].name, "not-the-token"),
        extend(mine[2].name, mine[2].token or "", ttl_ms=20_000),
    ]
    rounds = rl._fanout.run_batch(steps)
    assert [[o.reply for o in r.outcomes] for r in rounds] == [
        [Reply.DONE] * 5,
        [Reply.NOT_HELD] * 5,
        [Reply.DONE] * 5,
    ]
    assert [[o.server for o in r.outcomes] for r in rounds] == [rl.servers] * 3
    assert all(29_000 < ttl <= 30_000 for ttl in pttls(servers, mine[0].name))
    assert all(19_000 < ttl <= 20_000 for ttl in pttls(servers, mine[2].name))
    assert all(r.finished >= r.started for r in rounds)
    for lock in mine:
        assert lock.release()


def test_a_server_that_lost_its_scripts_gets_the_careful_path(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, instance_timeout=1.0)  # every server grants (see above)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(2)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    client = client_of(servers[0])
    try:
        client.script_flush()
    finally:
        client.close()
    rounds = rl._fanout.run_batch([extend(lock.name, lock.token or "") for lock in locks])
    # run one at a time, each decided by a majority: a server may be left unread
    for round_ in rounds:
        assert decided([o.reply for o in round_.outcomes], [Reply.DONE] * 5), round_.outcomes
    for lock in locks:
        assert lock.release()


def test_a_dead_server_fails_its_part_of_the_batch_only(
    servers: LocalServerGroup, lock_name: str
) -> None:
    rl = Redlock(servers.urls, instance_timeout=0.5)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(3)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    servers[4].kill()
    rounds = rl._fanout.run_batch([extend(lock.name, lock.token or "") for lock in locks])
    for round_ in rounds:
        assert [o.reply for o in round_.outcomes][:4] == [Reply.DONE] * 4
        assert round_.outcomes[4].reply in (Reply.ERROR, Reply.TIMEOUT)
    servers[4].start()


def test_a_batch_of_releases_deletes_only_our_keys(
    servers: LocalServerGroup, lock_name: str
) -> None:
    # Patient: every server must have granted each lock (the last line reads all five);
    # on a loaded host a late first reply left one out.
    rl = Redlock(servers.urls, instance_timeout=0.5)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(4)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    steps = [
        Fanout(Op.RELEASE, lock.name, (lock.token or "") if i % 2 else "other", 10_000, 1.0)
        for i, lock in enumerate(locks)
    ]
    rounds = rl._fanout.run_batch(steps)
    # (a release that NOSCRIPT sent the careful way may end at a majority: the first
    # server's answer may be left unread)
    firsts = [r.outcomes[0].reply for r in rounds]
    assert firsts[0::2] == [Reply.NOT_HELD] * 2
    assert all(reply in (Reply.DONE, Reply.UNREAD) for reply in firsts[1::2]), firsts
    assert all(r.count(Reply.DONE) >= 3 for r in rounds[1::2])
    assert settled_values(servers, locks[1].name, [None] * 5) == [None] * 5
    assert values(servers, locks[0].name) == [locks[0].token] * 5


@pytest.mark.slow
def test_hundreds_of_leases_due_together_are_all_kept(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """400 locks with a 2 s ttl, renewed every two thirds of a second, in batches: none is
    lost, and each was extended several times. (With a 1 s ttl, a run of the suite with
    twice as many test processes as cores stalled this process past a validity: a loss
    that is right, not a fault of the batches.)"""
    rl = Redlock(servers.urls, instance_timeout=0.5)
    locks = [
        rl.lock(f"{lock_name}:{i}", ttl=2, auto_extend=True, max_hold=math.inf) for i in range(400)
    ]
    for lock in locks:
        # (blocking, bounded: an attempt cut short by a stall of a loaded machine is
        # tried again; the renewals are what this test is about)
        assert lock.acquire(timeout=10)
    # Renewed, not lost: wait (bounded) for three renewals of each, however loaded the
    # machine; a lost lock fails at once. How fast they come is a benchmark's business.
    give_up = time.monotonic() + 30
    while min(lock.extensions for lock in locks) < 3 and time.monotonic() < give_up:
        assert [lock.name for lock in locks if lock.lost.is_set()] == []
        time.sleep(0.1)
    assert [lock.name for lock in locks if lock.lost.is_set()] == []
    assert min(lock.extensions for lock in locks) >= 3
    for lock in locks:
        assert lock.release()


@pytest.mark.parametrize("failing", ["once", "always"])
def test_a_batch_of_renewals_that_fails_as_a_whole_is_retried_or_told_lost(
    servers: LocalServerGroup,
    lock_name: str,
    monkeypatch: pytest.MonkeyPatch,
    failing: str,
) -> None:
    """The batch of renewals raises as a whole (an error in the fan-out, not a server's
    answer): each of its locks' renewals failed, and is retried as a failed renewal is.
    Failing once, the leases go on (the locks are held past their ttl); failing always,
    each lock is told lost (``lost``) once its validity runs out. The lease thread used
    to log it and drop the batch's locks: their leases stopped, and nobody was told.
    (A 2 s ttl: a loaded machine may stall the retry past a 1 s validity, a loss that
    is right.)"""
    rl = Redlock(servers.urls, instance_timeout=0.5)
    run_batch = fanout_module.SyncFanout.run_batch
    failed: list[int] = []

    def broken(fanout: Any, steps: Any) -> Any:
        if failing == "always" or not failed:
            failed.append(len(steps))
            raise RuntimeError("the fan-out broke")
        return run_batch(fanout, steps)

    try:
        locks = [
            rl.lock(f"{lock_name}:{i}", ttl=2, auto_extend=True, max_hold=math.inf)
            for i in range(3)
        ]
        for lock in locks:
            assert lock.acquire(blocking=False)
        monkeypatch.setattr(fanout_module.SyncFanout, "run_batch", broken)
        # (bounded waits, not speeds: a loaded machine may be slow to get there)
        give_up = time.monotonic() + 15
        if failing == "once":
            while min(lock.extensions for lock in locks) < 2 and time.monotonic() < give_up:
                assert not any(lock.lost.is_set() for lock in locks)
                time.sleep(0.05)
            assert failed
            assert min(lock.extensions for lock in locks) >= 2
            assert not any(lock.lost.is_set() for lock in locks)
            assert all(lock.owned() for lock in locks)
        else:
            for lock in locks:
                assert lock.lost.wait(max(0.0, give_up - time.monotonic())), lock.name
            assert len(failed) >= 2  # retried before the validity ran out
        monkeypatch.undo()
        for lock in locks:
            lock.release()
    finally:
        rl.close()


def test_an_error_in_one_locks_step_fails_its_renewal_only(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected error in one lock's step of the lease thread (before any round):
    that lock's renewal failed, and is retried; the other locks due with it are renewed
    as usual. The error used to end the whole batch: the others were dropped, their
    leases stopped, and nobody was told."""
    rl = Redlock(servers.urls, instance_timeout=0.5)
    due_renewal = _sync.Lock._due_renewal
    raised: list[str] = []
    try:
        locks = [
            rl.lock(f"{lock_name}:{i}", ttl=2, auto_extend=True, max_hold=math.inf)
            for i in range(3)
        ]
        faulty = locks[0]

        def broken(lock: _sync.Lock, generation: int) -> Any:
            if lock is faulty and not raised:
                raised.append(lock.name)
                raise RuntimeError("a bug in one lock's step")
            return due_renewal(lock, generation)

        for lock in locks:
            assert lock.acquire(blocking=False)
        monkeypatch.setattr(_sync.Lock, "_due_renewal", broken)
        give_up = time.monotonic() + 15  # bounded, not a speed
        while min(lock.extensions for lock in locks) < 2 and time.monotonic() < give_up:
            assert not any(lock.lost.is_set() for lock in locks)
            time.sleep(0.05)
        assert raised == [faulty.name]
        assert min(lock.extensions for lock in locks) >= 2
        assert not any(lock.lost.is_set() for lock in locks)
        for lock in locks:
            assert lock.release()
    finally:
        rl.close()


def test_a_lock_busy_in_another_thread_is_renewed_after_the_batch(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """The lease thread does not wait for a lock whose mutex a user thread holds: it
    renews the others first, then that one."""
    rl = Redlock(servers.urls)
    locks = [
        rl.lock(f"{lock_name}:{i}", ttl=1, auto_extend=True, max_hold=math.inf) for i in range(5)
    ]
    for lock in locks:
        assert lock.acquire(blocking=False)
    busy = locks[2]
    with busy._mutex:
        # every lock falls due while this one's mutex is held: the others are renewed
        # meanwhile (waited for, bounded: not a speed)
        give_up = time.monotonic() + 10
        others = [lock for lock in locks if lock is not busy]
        while min(lock.extensions for lock in others) < 1 and time.monotonic() < give_up:
            time.sleep(0.05)
        assert min(lock.extensions for lock in others) >= 1
        assert busy.extensions == 0
    give_up = time.monotonic() + 2
    while busy.extensions == 0 and time.monotonic() < give_up:
        time.sleep(0.01)
    assert busy.extensions >= 1
    assert not any(lock.lost.is_set() for lock in locks)
    for lock in locks:
        assert lock.release()


def test_a_batch_of_plain_answers_builds_no_round_machine_per_step(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The usual renewal batch (every server answers 1 or 0) costs no per-step
    RoundMachine: a process holding thousands of leases renews them at a fraction of a
    round's CPU each (issue 15). A step with any other event still gets its machine."""
    rl = Redlock(servers.urls, instance_timeout=1.0)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(20)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    rl._fanout.run(extend(lock_name + ":warm", "x"))  # the extend script cached
    client = client_of(servers[1])
    try:
        client.delete(locks[3].name)
        client.delete(locks[5].name)
        client.hset(locks[5].name, "f", "v")  # the extend script's GET: a WRONGTYPE error
    finally:
        client.close()
    made: list[Fanout] = []

    class Counted(RoundMachine):
        def __init__(self, step: Fanout, *args: Any, **kwargs: Any) -> None:
            made.append(step)
            super().__init__(step, *args, **kwargs)

    monkeypatch.setattr(fanout_module, "RoundMachine", Counted)
    rounds = rl._fanout.run_batch([extend(lock.name, lock.token or "") for lock in locks])
    assert [step.key for step in made] == [locks[5].name]
    replies = [[o.reply for o in r.outcomes] for r in rounds]
    done = [Reply.DONE] * 5
    assert replies[3] == [Reply.DONE, Reply.NOT_HELD, Reply.DONE, Reply.DONE, Reply.DONE]
    assert replies[5][1] is Reply.FATAL  # as translated: no retry fixes a WRONGTYPE
    assert "WRONGTYPE" in rounds[5].outcomes[1].detail
    assert replies[5][:1] + replies[5][2:] == [Reply.DONE] * 4
    assert all(replies[i] == done for i in range(20) if i not in (3, 5))
    for round_ in rounds:
        assert [o.server for o in round_.outcomes] == rl.servers
        answered = [o for o in round_.outcomes if o.reply in (Reply.DONE, Reply.NOT_HELD)]
        assert all(o.latency is not None and o.latency >= 0 for o in answered)
    for i, lock in enumerate(locks):
        if i != 5:
            lock.release()
    rl.close()


def test_a_batch_waits_for_a_new_connection_rather_than_going_round_by_round(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose idle connection another thread's round holds gets a new one: the
    batch stays one round trip, not one round per step."""
    rl = Redlock(servers.urls, instance_timeout=1.0)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(10)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    rl._fanout.run(extend(lock_name + ":warm", "x"))  # the extend script cached
    fanout = rl._fanout
    assert fanout.nodes is not None
    busy = fanout.nodes[2]
    held = []
    while (conn := busy.take()) is not None:  # as if other threads' rounds had them all
        held.append(conn)
    assert held
    singles: list[Fanout] = []
    single = fanout.run

    def counted(step: Fanout) -> Any:
        singles.append(step)
        return single(step)

    monkeypatch.setattr(fanout, "run", counted)
    rounds = fanout.run_batch([extend(lock.name, lock.token or "") for lock in locks])
    assert singles == []
    assert [[o.reply for o in r.outcomes] for r in rounds] == [[Reply.DONE] * 5] * 10
    for conn in held:
        busy.give(conn)
    monkeypatch.undo()
    for lock in locks:
        assert lock.release()
    rl.close()


def test_asyncio_commands_of_one_turn_of_the_loop_share_one_write_per_server(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Many tasks sending at once (lease renewals of many locks, many acquires) write
    each server's commands together: one write for the first and one for the rest of
    the turn, not one system call per command (issue 15: 10,000 auto-extended locks)."""

    async def body() -> None:
        rl = quorumlock.asyncio.Redlock(servers.urls, instance_timeout=1.0)
        locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(20)]
        warm = rl.lock(lock_name + ":warm", ttl=10)
        assert await warm.acquire(blocking=False)  # every pipe open
        assert await warm.release()
        nodes = rl._fanout.nodes
        assert nodes is not None
        writes: list[int] = []
        for node in nodes:
            pipe = node._pipe
            assert pipe is not None
            write = pipe._writer.write

            def counted(data: Any, write: Any = write) -> None:
                writes.append(len(data))
                write(data)

            pipe._writer.write = counted  # type: ignore[method-assign]
        results = await asyncio.gather(*(lock.acquire(blocking=False) for lock in locks))
        assert results == [True] * 20
        assert len(writes) == 2 * len(nodes)
        assert all(await asyncio.gather(*(lock.release() for lock in locks)))
        for lock in locks:
            assert values(servers, lock.name) == [None] * 5
        await rl.close()

    asyncio.run(body())


def test_renewals_due_within_a_thirtieth_of_the_ttl_go_out_together(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locks acquired one after another fall due one after another: the lease thread
    takes, with the first due, every renewal due within a thirtieth of the ttl (0.2 s
    here), instead of a small batch of round trips for each. Catches the early margin
    dropped (about one batch per lock: 20)."""
    batches: list[int] = []
    tend = _sync._tend_together

    def counted(due: list[tuple[Any, int]]) -> None:
        batches.append(len(due))
        tend(due)

    monkeypatch.setattr(_sync, "_tend_together", counted)
    rl = Redlock(servers.urls, instance_timeout=1.0)
    locks = []
    for i in range(20):  # 10 ms apart: each due about 10 ms after the one before
        lock = rl.lock(f"{lock_name}:{i}", ttl=6, auto_extend=True, max_hold=math.inf)
        assert lock.acquire(blocking=False)
        locks.append(lock)
        time.sleep(0.01)
    give_up = time.monotonic() + 10
    while min(lock.extensions for lock in locks) < 1 and time.monotonic() < give_up:
        time.sleep(0.05)
    assert min(lock.extensions for lock in locks) == 1
    assert sum(batches) >= 20
    assert len(batches) <= 6, batches
    for lock in locks:
        assert lock.release()
    rl.close()


def test_the_renewals_of_a_batch_cost_each_server_one_script_call(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """The plain extends of a batch go to each server as one call of a script that
    extends every key (``EXTEND_EACH``), each compared with its own token, not one
    script call per lock: a script call is most of what an extend costs a server
    (docs/algorithm.md, "The I/O"). Catches one call per lock (20 here), and keys mixed
    up. Servers of its own: the shared ones may still serve another test's leases."""
    servers = make_servers(5)
    rl = Redlock(servers.urls, instance_timeout=1.0)  # every server grants (see above)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(20)]
    for lock in locks:
        assert lock.acquire(blocking=False)
    steps = [extend(lock.name, lock.token or "", ttl_ms=20_000 + i) for i, lock in enumerate(locks)]
    steps[7] = extend(locks[7].name, "not-the-token")
    before = [script_calls(server) for server in servers]
    rounds = rl._fanout.run_batch(steps)
    after = [script_calls(server) for server in servers]
    assert [b - a for a, b in zip(before, after, strict=True)] == [1] * 5
    replies = [[o.reply for o in r.outcomes] for r in rounds]
    assert replies[7] == [Reply.NOT_HELD] * 5
    assert all(replies[i] == [Reply.DONE] * 5 for i in range(20) if i != 7)
    for i, lock in enumerate(locks):
        left = pttls(servers, lock.name)
        if i == 7:
            assert all(9_000 < ttl <= 10_000 for ttl in left), left
        else:
            assert all(19_000 < ttl <= 20_000 + i for ttl in left), left
    for lock in locks:
        assert lock.release()
    rl.close()


def test_a_batch_after_a_server_lost_its_scripts_caches_the_script_again(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A server whose script cache was emptied under a live connection answers the
    batch's call NOSCRIPT: its locks are renewed the careful way, one round each, and
    the next batch sends the call in its ``EVAL`` form, which caches it again: one
    script call there, then ``EVALSHA`` again. Servers of its own (see above)."""
    servers = make_servers(5)
    rl = Redlock(servers.urls, instance_timeout=1.0)  # every server grants (see above)
    locks = [rl.lock(f"{lock_name}:{i}", ttl=10) for i in range(4)]
    for lock in locks:
        assert lock.acquire(blocking=False)

    def batch() -> list[list[Reply]]:
        rounds = rl._fanout.run_batch([extend(lock.name, lock.token or "") for lock in locks])
        return [[o.reply for o in r.outcomes] for r in rounds]

    assert batch() == [[Reply.DONE] * 5] * 4  # the script cached everywhere
    client = client_of(servers[0])
    try:
        client.script_flush()
    finally:
        client.close()
    for replies in batch():  # one round each, decided by a majority
        assert decided(replies, [Reply.DONE] * 5), replies
    before = [script_calls(server) for server in servers]
    assert batch() == [[Reply.DONE] * 5] * 4
    after = [script_calls(server) for server in servers]
    assert [b - a for a, b in zip(before, after, strict=True)] == [1] * 5
    before = [command_calls(server, "eval") for server in servers]
    assert batch() == [[Reply.DONE] * 5] * 4
    assert [command_calls(server, "eval") for server in servers] == before  # cached: EVALSHA
    for lock in locks:
        assert lock.release()
    rl.close()


def test_a_batch_call_refused_as_a_whole_renews_each_lock_alone(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """A server refuses the whole call when one of its keys is out of the user's ACL
    (keys are checked before a script runs): each lock is then renewed alone, and only
    the refused key's renewal fails. Catches a batch whose every renewal failed for one
    key."""

    def acl(*args: str) -> Callable[[Any], object]:
        return lambda client: client.execute_command("ACL", *args)

    rule = ("~locks:*", "~quorumlock:*", "&*", "+@all")  # no other key
    on_each(servers, acl("SETUSER", "batch", "reset", "on", ">pw", *rule))
    try:
        urls = [s.url.replace("redis://", "redis://batch:pw@") for s in servers]
        rl = Redlock(urls, instance_timeout=1.0)  # every server grants (see above)
        locks = [rl.lock(f"locks:{lock_name}:{i}", ttl=10) for i in range(3)]
        for lock in locks:
            assert lock.acquire(blocking=False)
        steps = [extend(lock.name, lock.token or "", ttl_ms=20_000) for lock in locks]
        steps.insert(1, extend(f"elsewhere:{lock_name}", "x"))
        rounds = rl._fanout.run_batch(steps)
        outcomes = [r.outcomes for r in rounds]
        assert all(o.reply is not Reply.DONE for o in outcomes[1])
        assert any("NOPERM" in o.detail or "permission" in o.detail for o in outcomes[1])
        for i in (0, 2, 3):
            assert decided([o.reply for o in outcomes[i]], [Reply.DONE] * 5), outcomes[i]
        for lock in locks:  # (a round that ended at a majority: the others may be late)
            assert sum(19_000 < ttl <= 20_000 for ttl in pttls(servers, lock.name)) >= 3
            assert lock.release()
        rl.close()
    finally:
        on_each(servers, acl("DELUSER", "batch"))
