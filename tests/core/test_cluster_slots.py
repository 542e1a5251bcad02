"""The pure side of a cluster instance: hash slots, per-slot markers, the commands sent.

No servers: ``tests/integration/test_cluster.py`` runs these against real clusters.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.crc import key_slot as redis_key_slot

from quorumlock._algorithm.cluster import (
    SLOTS,
    cluster_args,
    cluster_eval_args,
    key_slot,
    slot_marker,
    slot_tag,
)
from quorumlock._algorithm.flows import Fanout, Op, Session
from quorumlock._algorithm.scripts import (
    ACQUIRE,
    CLUSTER_ACQUIRE,
    CLUSTER_QUEUED_ACQUIRE,
    COMMIT_FENCE,
    MARKER_KEY,
    _cluster_variant,
)
from quorumlock._algorithm.wire import command_args, queue_keys

SESSION = Session("f" * 40, durable=False)


@given(st.text(alphabet=st.sampled_from("ab{}x:é"), max_size=12))
def test_key_slot_is_the_servers(key: str) -> None:
    """Hash tags included: ``{`` then the first ``}`` after it, when not empty."""
    assert key_slot(key) == redis_key_slot(key.encode())
    assert key_slot(key.encode()) == key_slot(key)


def test_every_slot_has_a_marker_in_that_slot() -> None:
    for slot in range(SLOTS):
        marker = slot_marker(slot)
        assert marker == f"{MARKER_KEY}:{{{slot_tag(slot)}}}"
        assert redis_key_slot(marker.encode()) == slot


def test_the_tag_table_is_pinned() -> None:
    """Every quorumlock client must pick the same marker for a slot (else each would keep
    its own and stamp nothing): the table is part of the wire format. The tag of a slot
    is the smallest non-negative integer, in decimal, that hashes to it."""
    assert [slot_tag(s) for s in (0, 1, 866, 12182, 16383)] == [
        _smallest(0),
        _smallest(1),
        _smallest(866),
        _smallest(12182),
        _smallest(16383),
    ]
    assert slot_marker(13907) == "quorumlock:incarnation:{0}"  # CRC16("0") % 16384
    assert slot_marker(0) == "quorumlock:incarnation:{3560}"
    assert slot_marker(16383) == "quorumlock:incarnation:{39296}"


def _smallest(slot: int) -> str:
    n = 0
    while redis_key_slot(str(n).encode()) != slot:
        n += 1
    return str(n)


def test_slot_out_of_range() -> None:
    with pytest.raises(ValueError, match="slot"):
        slot_tag(SLOTS)


def _step(op: Op, **options: object) -> Fanout:
    return Fanout(op, "orders:{42}", "t" * 40, 5000, 0.05, **options)  # type: ignore[arg-type]


def test_the_cluster_acquire_names_the_slot_marker_and_the_node() -> None:
    step = _step(Op.ACQUIRE, max_ttl_ms=60_000, fencing=True)
    slot = key_slot(step.key)
    plain = command_args(step, SESSION)
    args = cluster_args(step, SESSION, slot)
    assert args[:5] == ("EVALSHA", CLUSTER_ACQUIRE.sha, 2, "orders:{42}", slot_marker(slot))
    assert args[5:-1] == plain[5:]  # the acquire script's own ARGV, whatever its layout
    assert args[-1] == SESSION.run_id
    evaled = cluster_eval_args(step, SESSION, slot)
    assert evaled == ("EVAL", CLUSTER_ACQUIRE.source, *args[2:])


def test_the_cluster_queued_acquire_names_the_slot_marker_the_queue_and_the_node() -> None:
    step = _step(Op.ACQUIRE, max_ttl_ms=60_000, member="m1", arrival="12.5", lease_ms=1200)
    slot = key_slot(step.key)
    plain = command_args(step, SESSION)
    args = cluster_args(step, SESSION, slot)
    queue = queue_keys(step.key, slot_tag(slot))
    assert args[:5] == ("EVALSHA", CLUSTER_QUEUED_ACQUIRE.sha, 2, step.key, slot_marker(slot))
    assert args[5:-6] == plain[5:-5]  # the acquire script's own ARGV and the session
    # the cluster check takes the last off first, then the queue's part its five
    assert args[-6:] == (*queue, "m1", "12.5", 1200, SESSION.run_id)
    evaled = cluster_eval_args(step, SESSION, slot)
    assert evaled == ("EVAL", CLUSTER_QUEUED_ACQUIRE.source, *args[2:])


def test_the_fence_commit_names_the_slot_marker() -> None:
    step = _step(Op.COMMIT_FENCE, fence=7)
    slot = key_slot(step.key)
    args = cluster_args(step, SESSION, slot)
    assert args == ("EVALSHA", COMMIT_FENCE.sha, 2, step.key, slot_marker(slot), step.token, 7)


@pytest.mark.parametrize(
    "step",
    [
        _step(Op.RELEASE),
        _step(Op.EXTEND),
        _step(Op.ACQUIRE),  # max_ttl off, no fencing: R1's plain SET
    ],
    ids=["release", "extend", "plain acquire"],
)
def test_single_key_commands_are_those_of_a_plain_server(step: Fanout) -> None:
    assert cluster_args(step, SESSION, key_slot(step.key)) == command_args(step, SESSION)


def test_the_cluster_acquire_is_the_acquire_script_behind_a_check() -> None:
    """Derived, not copied: the acquire body runs as it is, after the preamble."""
    assert CLUSTER_ACQUIRE.source.endswith(ACQUIRE.source)
    preamble = CLUSTER_ACQUIRE.source[: -len(ACQUIRE.source)]
    assert 'redis.call("hdel", KEYS[2], "run_id")' in preamble
    assert "local ARGV = {unpack(ARGV, 1, #ARGV - 1)}" in preamble


def test_a_shebang_stays_first() -> None:
    """Should ACQUIRE get a ``#!lua`` line (script flags), it must stay the first line."""
    variant = _cluster_variant('#!lua flags=no-cluster\nreturn redis.call("get", KEYS[1])\n')
    first, _, rest = variant.partition("\n")
    assert first == "#!lua flags=no-cluster"
    assert rest.endswith('return redis.call("get", KEYS[1])\n')
    assert "unpack(ARGV" in rest


@given(st.text(min_size=1, max_size=30))
def test_the_queue_keys_of_a_name_are_in_its_slot_on_a_cluster(name: str) -> None:
    """An announced release (one that puts its process in line, too) and a queue
    command (a join, a leave, a pass) touch the lock key's slot only."""
    slot = key_slot(name)
    for step in (
        Fanout(Op.RELEASE, name, "t", 1000, 0.05, notify=True),
        Fanout(Op.RELEASE, name, "t", 9, 0.05, notify=True, member="m", arrival="1", lease_ms=9),
        Fanout(Op.QUEUE, name, "w", 1000, 0.05, arrival="12.5"),
        Fanout(Op.QUEUE, name, "w", 0, 0.05, arrival="-"),
        Fanout(Op.QUEUE, name, "w", 0, 0.05, arrival="pass w:1"),
    ):
        args = cluster_args(step, None, slot)
        count = args[2]
        assert isinstance(count, int)
        keys = [str(k) for k in args[3 : 3 + count]]
        if step.op is Op.RELEASE:  # the queue's keys are ARGV[5] and ARGV[6]
            keys += [str(k) for k in args[8:10]]
            assert all(k.startswith("quorumlock:queue") for k in keys[1:]), keys
            assert args[10:] == ((step.member, step.arrival, step.lease_ms) if step.member else ())
        else:
            assert args[5 : 3 + count] == ((name,) if step.arrival.startswith("pass") else ())
        assert {key_slot(k) for k in keys} == {slot}, keys
