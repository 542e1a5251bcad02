"""A replica promoted to master is quarantined when quorumlock first sees it.

Replication is asynchronous: a promoted replica may lack its old master's last lock keys,
while it carries the old master's incarnation marker (replicated like any key). Neither
"the marker names another process" rule for restarts fits: counted from the server's
start, a replica that ran for longer than ``max_ttl`` would count at once, and a durable
one would not be quarantined at all. The session reads ``INFO replication``; a promoted
replica is quarantined for ``max_ttl`` from the moment it is first seen, once per
promotion. ``REPLICAOF NO ONE`` stands for a failover here; tests/integration/
test_sentinel.py runs a real Sentinel failover.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from quorumlock import NodeOutcome, Reply
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._io.incarnation import read_server_state
from quorumlock.testing import LocalServer, LocalServerGroup
from tests.conftest import ServerFactory, client_of
from tests.integration.apis import Api
from tests.integration.test_quarantine import marker, run_id, seconds_left, try_lock, try_sync

G, Q = Reply.GRANTED, Reply.QUARANTINED


def replies(outcomes: Sequence[NodeOutcome]) -> list[Reply]:
    return [o.reply for o in outcomes]


def replica_of(make_servers: ServerFactory, master: LocalServer, **options: object) -> LocalServer:
    """A replica of ``master`` that has copied its dataset (bounded wait)."""
    source = client_of(master)
    source.config_set("repl-diskless-sync-delay", 0)  # default: wait 5 s for more replicas
    source.close()
    group: LocalServerGroup = make_servers(
        1, extra_args=("--replicaof", master.host, str(master.port)), **options
    )
    replica = group[0]
    client = client_of(replica)
    try:
        deadline = time.monotonic() + 10
        while client.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync within 10 s"
            time.sleep(0.02)
    finally:
        client.close()
    return replica


def wait_replicated(master: LocalServer, replica: LocalServer) -> None:
    """Until the replica's marker equals the master's (bounded)."""
    source, copy = client_of(master), client_of(replica)
    try:
        deadline = time.monotonic() + 10
        while copy.hgetall(MARKER_KEY) != source.hgetall(MARKER_KEY):
            assert time.monotonic() < deadline, "the marker did not replicate within 10 s"
            time.sleep(0.01)
    finally:
        source.close()
        copy.close()


def promote(replica: LocalServer) -> str:
    """``REPLICAOF NO ONE``; returns the replication id drawn by the promotion."""
    client = client_of(replica)
    try:
        client.execute_command("REPLICAOF", "NO", "ONE")  # type: ignore[no-untyped-call]
        info = client.info("replication")
        assert info["role"] == "master"
        return str(info["master_replid"])
    finally:
        client.close()


def test_a_durable_promoted_replica_is_quarantined_from_when_it_is_first_seen(
    api: Api, make_servers: ServerFactory, lock_name: str
) -> None:
    """The replica fsyncs every write (appendonly yes + appendfsync always), which saves
    nothing here: the writes it may lack never reached it. It is quarantined for max_ttl
    from its first acquire after the promotion, then not again on a new connection.
    Catches: a promoted replica taken for a durable restart (counted at once)."""
    master = make_servers(1)[0]
    replica = replica_of(make_servers, master, appendonly=True, appendfsync="always")

    async def body() -> None:
        got, outcomes = await try_lock(api, [master.url], lock_name, max_ttl=30)
        assert got
        assert replies(outcomes) == [G]
        wait_replicated(master, replica)
        promotion = promote(replica)

        got, outcomes = await try_lock(api, [replica.url], lock_name, max_ttl=30)
        assert got is None
        first = seconds_left(outcomes[0])
        assert 29.0 <= first <= 30.0
        assert marker(replica)["promotion"] == promotion
        assert marker(replica)["run_id"] == run_id(replica)

        # A new Redlock (new connections): the same quarantine goes on, it does not start
        # again.
        got, outcomes = await try_lock(api, [replica.url], lock_name, max_ttl=30)
        assert got is None
        assert seconds_left(outcomes[0]) <= first

    api.run(body)


def test_a_promoted_replica_that_ran_longer_than_max_ttl_still_waits_max_ttl(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A replica that has run for 3 s before its promotion, max_ttl 1 s: counted from the
    server's start (the rule for a restart), its quarantine would be over already. It is
    quarantined for 1 s from when it was first seen; after that it counts, also on new
    connections (the promotion was recorded). Catches: the promotion handled as a restart
    that reloaded a snapshot."""
    master = make_servers(1)[0]
    replica = replica_of(make_servers, master)
    assert try_sync([master.url], lock_name, max_ttl=1)[0]
    wait_replicated(master, replica)
    client = client_of(replica)
    deadline = time.monotonic() + 10
    while int(client.info("server")["uptime_in_seconds"]) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    client.close()
    promote(replica)

    got, outcomes = try_sync([replica.url], lock_name, max_ttl=1)
    assert got is None
    assert 0.0 < seconds_left(outcomes[0]) <= 1.0
    time.sleep(1.1)
    got, outcomes = try_sync([replica.url], lock_name, max_ttl=1)
    assert got
    assert replies(outcomes) == [G]


def test_a_master_that_never_was_a_replica_is_not_taken_for_a_promoted_one(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """The other side: a master with a replica (its own replication history) is not
    quarantined, and neither is a durable master restarted from its AOF. Catches a
    promotion test that fires on any replication id."""
    master = make_servers(1, appendonly=True, appendfsync="always")[0]
    replica = replica_of(make_servers, master)
    got, outcomes = try_sync([master.url], lock_name, max_ttl=30)
    assert got
    wait_replicated(master, replica)
    master.restart()
    got, outcomes = try_sync([master.url], lock_name, max_ttl=30)
    assert got
    assert replies(outcomes) == [G]
    client = client_of(master)
    assert client.info("replication")["second_repl_offset"] == -1  # what the session reads
    client.close()


def replicate(replica: LocalServer, master: LocalServer) -> None:
    """``REPLICAOF master`` on a running server, and wait until it has synced."""
    source, client = client_of(master), client_of(replica)
    try:
        source.config_set("repl-diskless-sync-delay", 0)
        client.execute_command("REPLICAOF", master.host, str(master.port))  # type: ignore[no-untyped-call]
        deadline = time.monotonic() + 10
        while client.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync within 10 s"
            time.sleep(0.02)
    finally:
        source.close()
        client.close()


def test_a_second_promotion_of_the_same_process_is_quarantined_again(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """R is promoted (quarantined, the marker now names R), M becomes R's replica, then M
    is promoted and R becomes M's replica before any acquire ran on M: R gets back a
    marker that names R itself. When R is promoted again, that marker is not proof of
    anything: M's last writes (had there been any) may be missing. The marker records
    the promotion's replication id, and a new promotion draws a new one. Catches: a
    promoted replica judged by the marker's run_id alone."""
    m = make_servers(1)[0]
    r = replica_of(make_servers, m)
    assert try_sync([m.url], lock_name, max_ttl=1)[0]
    wait_replicated(m, r)
    first = promote(r)
    got, outcomes = try_sync([r.url], lock_name, max_ttl=1)
    assert got is None
    assert Q in replies(outcomes)
    replicate(m, r)
    promote(m)
    replicate(r, m)
    assert marker(r)["run_id"] == run_id(r)  # the marker names R itself
    time.sleep(1.1)  # the first quarantine is over
    second = promote(r)
    assert second != first
    got, outcomes = try_sync([r.url], lock_name, max_ttl=1)
    assert got is None
    assert 0.0 < seconds_left(outcomes[0]) <= 1.0


def test_status_reports_the_quarantine_a_promotion_will_start(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """``read_server_state`` (``quorumlock status``) sees the promotion before any
    acquire does: not marked, max_ttl of quarantine to come; after the first acquire,
    marked and counting down."""
    master = make_servers(1)[0]
    replica = replica_of(make_servers, master, appendonly=True, appendfsync="always")
    assert try_sync([master.url], lock_name, max_ttl=30)[0]
    wait_replicated(master, replica)
    promote(replica)
    client = client_of(replica)
    try:
        before = read_server_state(client, max_ttl=30)
        assert not before.marked
        assert before.durable
        assert 29.0 <= before.quarantined_for <= 30.0
        assert try_sync([replica.url], lock_name, max_ttl=30)[0] is None
        after = read_server_state(client, max_ttl=30)
        assert after.marked
        assert 0.0 < after.quarantined_for <= 30.0
    finally:
        client.close()
