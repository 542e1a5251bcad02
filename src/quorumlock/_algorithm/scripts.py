"""The Lua scripts quorumlock runs on the servers, with their SHA1 digests.

The release and extend bodies are those of the Redis "Distributed locks with Redis" page
and of the Redlock ports in other languages, so that quorumlock contends correctly with
them on the same keys: the value of a lock key is the holder's token as plain
text, set by ``SET key token NX PX ttl`` (R1). The acquire script runs that very ``SET``
and, in the same atomic step, checks the server's incarnation marker (the restart
quarantine) and counts its fencing counter; see ``docs/safety.md``.

The SHA1 of each source is what ``EVALSHA`` expects; a test checks it against
``SCRIPT LOAD`` on a live server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = [
    "ACQUIRE",
    "ACQUIRE_MANY",
    "CLAIM_TERM",
    "CLUSTER_ACQUIRE",
    "CLUSTER_ACQUIRE_MANY",
    "CLUSTER_FAIR_ACQUIRE",
    "CLUSTER_QUEUED_ACQUIRE",
    "CLUSTER_RW_ACQUIRE",
    "COMMIT_FENCE",
    "EXTEND",
    "EXTEND_EACH",
    "EXTEND_MANY",
    "FAIR_ACQUIRE",
    "FENCE_GUARD",
    "LOSS_COMMANDS",
    "MARKER_KEY",
    "PROBE_MANY",
    "PROVISION",
    "QUEUE",
    "QUEUED_ACQUIRE",
    "QUEUE_EXPIRY_PREFIX",
    "QUEUE_PREFIX",
    "READ_LEADER",
    "RELEASE",
    "RELEASED_PREFIX",
    "RELEASE_MANY",
    "RW_ACQUIRE",
    "RW_COMMIT_FENCE",
    "RW_DOWNGRADE",
    "RW_EXTEND",
    "RW_PREFIX",
    "RW_PROBE",
    "RW_RELEASE",
    "SCRIPTS",
    "SEMAPHORE_ACQUIRE",
    "SEMAPHORE_RELEASE",
    "WAKE_PREFIX",
    "Script",
]


@dataclass(frozen=True, slots=True)
class Script:
    """A Lua source and its SHA1 (computed, never written by hand)."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


#: Release announcements go to this prefix + the lock key (a pub/sub channel per name).
RELEASED_PREFIX = "quorumlock:released:"

#: A release that names the head of a queue goes to this prefix + the head's id instead:
#: the channel of the one process that id stands for (see :data:`RELEASE`).
WAKE_PREFIX = "quorumlock:wake:"

#: The queue of the waiters of a lock key: this prefix + the key, a sorted set of waiter
#: ids scored by their arrival (the waiter's own clock in ms, with a random fraction of
#: a microsecond: drawn once and sent to every server, so every server orders the queue
#: alike).
QUEUE_PREFIX = "quorumlock:queue:"

#: When each queue entry expires: this prefix + the lock key, a sorted set of the same
#: ids scored by the server's clock in ms. An entry not renewed by then is dropped, so a
#: waiter that died never holds up the line for longer than its lease.
QUEUE_EXPIRY_PREFIX = "quorumlock:queue-expiry:"

#: Taking the dead off a queue of waiters, as a Lua function that every script reading
#: or joining a queue defines first (the join, the wake, the fair acquire's check of the
#: head): the entries whose lease ran out by the server's clock leave both sorted sets.
#: It answers that clock (ms), which the caller reuses.
_SWEEP = """\
-- sweep: take the entries of ``queue`` whose lease in ``expiry`` ran out off both;
-- returns the server's clock in ms
local function quorumlock_sweep(queue, expiry)
    local t = redis.call("time")
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for _, dead in ipairs(redis.call("zrangebyscore", expiry, "-inf", now)) do
        redis.call("zrem", queue, dead)
        redis.call("zrem", expiry, dead)
    end
    return now
end
"""

#: The join of a queue of waiters, as a Lua function that the queue script and the
#: acquire scripts of a waiter (QUEUED_ACQUIRE, FAIR_ACQUIRE) define: it puts the entry
#: in line (again: the same id and arrival keep the place; the lease is renewed), after
#: taking the dead off (unless the script just did, at ``swept``: a release that woke
#: the head, a fair acquire's check of the head), and answers its place, which sets how
#: often the waiter polls.
_JOIN = """\
-- join: ``member`` stands in ``queue`` at ``arrival`` (the same number on every
-- server), expiring ``lease`` ms from now unless it joins again; returns its place
-- in line (1: the head). ``swept``: the server's ms at which this script took the
-- dead off already (nil: not yet)
local function quorumlock_join(queue, expiry, member, arrival, lease, swept)
    -- the dead do not count ahead of the caller
    local now = swept or quorumlock_sweep(queue, expiry)
    redis.call("zadd", queue, arrival, member)
    redis.call("zadd", expiry, now + lease, member)
    -- both keys outlive every entry, and vanish once the last entry has expired
    for _, key in ipairs({queue, expiry}) do
        if redis.call("pttl", key) < lease then
            redis.call("pexpire", key, lease)
        end
    end
    return redis.call("zrank", queue, member) + 1
end
"""

#: The announcement that a lock key is free, as a Lua function that the release script
#: and the queue script's pass define (see RELEASE): it takes the head of the key's
#: queue of waiters off the queue (not with ``keep``) and publishes on the head's own
#: channel, or on the name's channel when nobody is in line.
_WAKE = """\
-- wake: ``key`` is free: name the head of ``queue`` (after taking the dead off, and
-- ``skip``'s entry: the caller's own is not a waiter's), taking it off the queue unless
-- ``keep`` is "keep"; publish ``notice`` to it, or to everyone when nobody is in line.
-- Returns 2 where it named a head, 1 otherwise, and the server's ms at which it took
-- the dead off (nil where it did not look). ``expiry`` nil: no queue to look at.
local function quorumlock_wake(key, queue, expiry, notice, keep, skip)
    local head = ""
    local now = nil
    -- pcall: a user whose ACL denies the queue still releases (everyone wakes)
    local looked, ttl = false, -2
    if expiry then
        looked, ttl = pcall(redis.call, "pttl", queue)
        if looked and ttl == -2 then
            looked, ttl = pcall(redis.call, "pttl", expiry)
        end
    end
    -- neither key (nobody queues, nearly always): nothing to expire or to take
    if looked and ttl ~= -2 then
        local ok, first = pcall(function()
            now = quorumlock_sweep(queue, expiry)
            local found = redis.call("zrange", queue, 0, 0)[1]
            if found and found == skip then
                redis.call("zrem", queue, found)
                redis.call("zrem", expiry, found)
                found = redis.call("zrange", queue, 0, 0)[1]
            end
            if found and keep ~= "keep" then
                redis.call("zrem", queue, found)
                redis.call("zrem", expiry, found)
            end
            return found or ""
        end)
        if ok then
            head = first
        else
            now = nil  -- refused part way: the dead may still be there
        end
    end
    -- pcall: a user whose ACL denies the channel still releases (waiters then poll)
    if head ~= "" then
        -- only the head's process listens there: nobody else reads this release
        redis.pcall("publish", "quorumlock:wake:" .. head, #key .. " " .. key .. notice)
        return 2, now
    end
    redis.pcall("publish", "quorumlock:released:" .. key, " " .. notice)
    return 1, now
end
"""

#: R3/R9 compare-and-delete. A plain DEL could remove another client's lock after ours
#: expired; this deletes the key only while it still holds our token. The delete is the
#: Redis page's; what follows it only tells waiting quorumlock clients that the key is
#: gone (a blocking acquire subscribes to :data:`RELEASED_PREFIX` + key, see
#: ``docs/algorithm.md``, "Waiting: woken by the release"): it takes the head of the
#: key's queue of waiters off the queue and names it in the announcement, so that this
#: one waiter (one process) tries, about one round trip after the release, instead of
#: every waiter. ``ARGV[2]`` is "1" to announce the release, anything else (or nothing,
#: as other clients call it) not to. With a head, the message goes to the head's own
#: channel (:data:`WAKE_PREFIX` + its id, which only its process listens to) and is
#: ``<length of the key> <key><notice>``; with none (the queue is empty, not given, or
#: out of the caller's reach) it goes to the name's channel, for every listening
#: process, and is `` <notice>``. The notice is the release's name (``ARGV[3]``, or the
#: token), which tells the announcements of one release on several servers apart from
#: those of the next. The release answers 2 instead of 1 where it named a head: a process
#: whose release woke a waiter lets that waiter take the lock first (docs/algorithm.md,
#: "Waiting", step 9): given the process's id in the queue (``ARGV[7]``, with its
#: arrival and lease), the release puts it in line behind the waiter it woke, in the same
#: step, and answers 2 + its place; a process whose entry comes first in line
#: (left from an earlier release) has it taken off, and the next waiter is named. Other
#: clients never ask it to announce, and get 1 as on the Redis page.
#:
#: The queue's keys come as arguments, not as KEYS: a server checks declared keys
#: against the user's ACL before the script runs, and a user whose rule predates the
#: queues (keys limited to the lock names, docs/deployment.md) would have every release
#: refused. Read undeclared, a refusal fails only the queue's part (caught by ``pcall``):
#: the key is deleted and the release announced to everyone, as before the queues. On a
#: cluster the queue's keys carry the lock key's slot tag, so they stay on its node.
#: When neither of the queue's keys exists (no waiter queues, the usual release), the
#: queue's part ends after two ``PTTL`` (-2: no such key) instead of reading the clock
#: and both sorted sets: it would find nothing to expire and no head (each ``PTTL``
#: called through ``pcall`` as it is, with no Lua function made for it on every
#: release). ``PTTL`` is a command the queue script already needs, so the documented
#: ACL rule covers it.
RELEASE = Script(
    "release",
    _SWEEP
    + _WAKE
    + _JOIN
    + """\
-- quorumlock release: compare-and-delete, then wake the head of the queue
-- KEYS[1]  the lock key
-- ARGV[1]  the token we stored when acquiring
-- ARGV[2]  "1" to publish the release on "quorumlock:released:" .. KEYS[1]
-- ARGV[3]  (optional) what the announcement calls this release (default: ARGV[1])
-- ARGV[4]  (optional) "keep" to leave the head in the queue (fair locks: it leaves
--          once it holds the lock)
-- ARGV[5]  (optional) the queue: waiter id -> arrival
-- ARGV[6]  (optional) the queue's expiries: waiter id -> server ms
-- ARGV[7]  (optional) the caller's id in the queue, ARGV[8] its arrival and ARGV[9] its
--          lease in ms: where the release names a head, the caller stands in line
--          behind it
-- returns  1 if the key held our token and was deleted, 0 otherwise; 2 instead of 1
--          when it named the head of the queue in its announcement, 2 + the caller's
--          place in line when it also put the caller in line
if redis.call("get", KEYS[1]) == ARGV[1] then
    redis.call("del", KEYS[1])
    if ARGV[2] == "1" then
        local woke, swept = quorumlock_wake(KEYS[1], ARGV[5], ARGV[6], ARGV[3] or ARGV[1],
            ARGV[4], ARGV[7])
        if woke == 2 and ARGV[7] then
            local ok, place = pcall(quorumlock_join, ARGV[5], ARGV[6], ARGV[7], ARGV[8],
                tonumber(ARGV[9]), swept)
            if ok then
                return 2 + place
            end
        end
        return woke
    end
    return 1
else
    return 0
end
""",
)

#: A waiter joins, renews its place in, or leaves the queue of a lock key (see RELEASE).
#: Joining again with the same id and arrival keeps the place; the lease is renewed. A
#: join answers the entry's place in line, which sets how often the waiter polls. A
#: process that stood in line by its release (RELEASE's ``ARGV[7]``) and was named by a
#: later release when none of its waiters waited passes its turn: its entry leaves the
#: queue and, where the lock key is free, the next waiter is woken as a release wakes it
#: (docs/algorithm.md, "Waiting", step 9).
QUEUE = Script(
    "queue",
    _SWEEP
    + _WAKE
    + _JOIN
    + """\
-- quorumlock queue: join or leave the queue of waiters of a lock key
-- KEYS[1]  the queue: waiter id -> arrival
-- KEYS[2]  the queue's expiries: waiter id -> server ms
-- KEYS[3]  (a pass only) the lock key
-- ARGV[1]  the waiter's id
-- ARGV[2]  its arrival (the same number on every server); "-" to leave the queue;
--          "pass" to leave it and, where the lock key is free, wake the next waiter
-- ARGV[3]  the lease in ms: the entry expires unless renewed within it; for a pass,
--          what its announcement calls it
-- returns  the entry's place in line (1: the head) after a join; 1 after a leave; after
--          a pass, 2 where it woke the next waiter, 1 otherwise
if ARGV[2] == "-" or ARGV[2] == "pass" then
    redis.call("zrem", KEYS[1], ARGV[1])
    redis.call("zrem", KEYS[2], ARGV[1])
    if ARGV[2] == "pass" and not redis.call("get", KEYS[3]) then
        return (quorumlock_wake(KEYS[3], KEYS[1], KEYS[2], ARGV[3], "", ""))
    end
    return 1
end
return quorumlock_join(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]))
""",
)

#: R10 extension: reset the ttl only while the key still holds our token. An expired key
#: is never re-created (PEXPIRE on a missing key does nothing and GET already failed).
EXTEND = Script(
    "extend",
    """\
-- quorumlock extend: compare-and-pexpire
-- KEYS[1]  the lock key
-- ARGV[1]  the token we stored when acquiring
-- ARGV[2]  the new ttl in milliseconds
-- returns  1 if the key held our token and its ttl was reset, 0 otherwise
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("pexpire", KEYS[1], ARGV[2])
else
    return 0
end
""",
)

#: EXTEND for many locks at once, in one call: the lease thread's renewals of the locks
#: due at the same moment (up to a few hundred), where one call of EXTEND each would cost
#: every server a script call per lock (docs/algorithm.md, "The I/O"). Each key is
#: compared and extended exactly as EXTEND does it, on its own: a key that holds another
#: token is not extended, and one whose command fails (another type of key) answers that
#: error in its place, while the others are still extended.
EXTEND_EACH = Script(
    "extend_each",
    """\
-- quorumlock extend, for each of many locks: compare-and-pexpire
-- KEYS[i]      a lock key
-- ARGV[2i-1]   the token we stored in it when acquiring
-- ARGV[2i]     its new ttl in milliseconds
-- returns      for each key in order, what EXTEND answers for it (1 if it held our
--              token and its ttl was reset, 0 otherwise), or its command's error
local answers = {}
for i = 1, #KEYS do
    local value = redis.pcall("get", KEYS[i])
    if type(value) == "table" and value.err then
        answers[i] = value
    elseif value == ARGV[2 * i - 1] then
        answers[i] = redis.pcall("pexpire", KEYS[i], ARGV[2 * i])
    else
        answers[i] = 0
    end
end
return answers
""",
)

#: The one key per server that quorumlock keeps besides the lock keys: a hash with the
#: server's incarnation (``run_id``), when it last lost its memory (``since``, server ms,
#: 0 for never), the largest ``max_ttl`` any client declared (ms), the fencing counter
#: (``fence``) and, on a replica promoted to master, the replication id of the promotion
#: that was noticed (``promotion``). It has no ttl: its absence means the server's data
#: was lost.
MARKER_KEY = "quorumlock:incarnation"

#: Commands whose call since the server's start the acquire script takes as a sign that a
#: missing marker was lost then, at an unknown moment (their ``INFO commandstats`` names):
#: they empty a database, swap one in, reload or replace the data (DEBUG RELOAD, a
#: full sync from a master), or reset the statistics this check reads (Valkey, Redis 7
#: and later name the CONFIG subcommand; Redis 6.2 does not, see docs/safety.md).
LOSS_COMMANDS = (
    "flushall",
    "flushdb",
    "swapdb",
    "debug",
    "replicaof",
    "slaveof",
    "failover",
    "config|resetstat",
)

#: R1 inside B1 and B2. The SET is exactly R1's; what surrounds it decides whether this
#: server's answer may count (restart quarantine) and draws a fencing counter.
#:
#: A server lost its memory if the marker is missing, names another process (a restart
#: that reloaded a snapshot or an AOF not fsynced on every write: counted from the
#: server's start), or the server is a replica promoted to master since the marker was
#: written (the marker came by replication, maybe without the old master's last lock
#: keys: counted from now, as the server does not keep the moment of its promotion; a
#: promotion draws a new replication id, which the marker records to tell an old
#: promotion from a new one). A missing marker is counted from the server's start when
#: the server shows no sign of a loss since then (no FLUSHALL, FLUSHDB, SWAPDB, DEBUG,
#: REPLICAOF, FAILOVER or CONFIG RESETSTAT in its command statistics, no evicted key, not
#: a cluster node): whatever it lost, it lost when it started, a new server included.
#: With such a sign, the loss happened at an unknown moment since the start: counted
#: from now. The marker records why (``lost``), for the messages. It is then
#: quarantined until ``since + max_ttl``: every
#: lock it may have forgotten was granted before ``since`` with a ttl <= max_ttl, so has
#: expired by then on every server. During the quarantine the SET still runs (the server
#: records the locks granted since) but its answer does not count toward any quorum.
#:
#: The fencing counter is +1 per attempt, so that the servers that see every attempt stay
#: in step. After a memory loss it is raised to the server's clock in microseconds at the
#: first count after the quarantine: above every token issued before the loss, as long as
#: the servers' clocks agree within max_ttl / 2 (docs/safety.md).
#:
#: This is the body that the scripts derived from it embed (the queued, fair, set,
#: read-write and semaphore acquires): its answer is always the table. ACQUIRE itself,
#: and so its cluster variant, ends with :data:`_SHORT_ANSWER` instead; the queued
#: acquire shortens its own answer the same way.
ACQUIRE_BODY = """\
-- quorumlock acquire: SET NX PX, checked against the restart quarantine
-- KEYS[1]  the lock key
-- KEYS[2]  the server's incarnation marker (a hash: run_id, since, max_ttl, fence,
--          promotion, lost, over: the end of a quarantine seen over)
-- ARGV[1]  our token
-- ARGV[2]  the ttl in milliseconds
-- ARGV[3]  max_ttl in milliseconds: the quarantine's length; 0 turns it off
-- ARGV[4]  "1" to draw a fencing counter, "0" not to
-- ARGV[5]  run_id of the server process the client's connection was opened to
-- ARGV[6]  "1" if that server runs appendonly yes + appendfsync always, "0" if not,
--          "P" .. its replication id if it is a replica promoted to master
-- returns  {granted (1/0), quarantine left in ms (0: none), fencing counter (0: none),
--           and when not granted, the value (the holder's token) found in the key;
--           in quarantine also why (the marker's "lost") and since when (server ms)}
local marker = redis.call("hmget", KEYS[2], "run_id", "since", "max_ttl", "fence", "promotion",
    "lost", "over")
local max_ttl = tonumber(ARGV[3])
local declared = tonumber(marker[3]) or 0
if max_ttl > declared then
    redis.call("hset", KEYS[2], "max_ttl", ARGV[3])
elseif max_ttl > 0 then
    max_ttl = declared
end
local since = tonumber(marker[2]) or 0
local now = nil
local function clock_us()
    local t = redis.call("time")
    return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local promotion = nil
if string.sub(ARGV[6], 1, 1) == "P" then
    promotion = string.sub(ARGV[6], 2)
end
-- A missing marker without a promotion: did the server lose data since it started?
-- Commands that empty or replace a database are counted in INFO commandstats (from a
-- script or MULTI too), evictions in INFO stats. A cluster node may have received a
-- slot without its keys, which nothing on the node counts: always a sign there.
local function loss_sign()
    if string.find(redis.call("info", "cluster"), "cluster_enabled:1", 1, true) then
        return "cluster"
    end
    local evicted = string.match(redis.call("info", "stats"), "evicted_keys:(%d+)")
    if not evicted then
        return "unknown"
    elseif tonumber(evicted) > 0 then
        return "eviction"
    end
    local signs = {flushall = true, flushdb = true, swapdb = true, debug = true,
        replicaof = true, slaveof = true, failover = true, ["config|resetstat"] = true}
    local stats = redis.call("info", "commandstats")
    for name, calls in string.gmatch(stats, "cmdstat_([%w_|%-]+):calls=(%d+)") do
        if signs[name] and tonumber(calls) > 0 then
            return name
        end
    end
    return nil
end
local lost = marker[6]
local over = tonumber(marker[7]) or 0
if marker[1] ~= ARGV[5] or (promotion and marker[5] ~= promotion) then
    now = clock_us()
    local now_ms = math.floor(now / 1000)
    local function start_ms()
        local info = redis.call("info", "server")
        -- uptime is a difference of whole seconds: the start is less than uptime - 1
        -- seconds ago at the earliest; counting from then never ends the quarantine early
        local uptime = tonumber(string.match(info, "uptime_in_seconds:(%d+)"))
        return now_ms - math.max(uptime - 1, 0) * 1000
    end
    if promotion then
        -- a promoted replica: its old master's last writes may be missing, since a moment
        -- the server does not keep; now is later, so the quarantine is never too short
        lost = "promotion"
        since = math.max(since, now_ms)
    elseif not marker[1] then
        lost = loss_sign()
        if lost then
            since = now_ms
        else
            -- nothing removed the marker since the start: a new server, or one that
            -- came back without its data; either way, nothing was lost after the start
            lost = "start"
            since = start_ms()
        end
    elseif ARGV[6] ~= "1" then
        lost = "restart"
        since = start_ms()
    end
    redis.call("hset", KEYS[2], "run_id", ARGV[5], "since", string.format("%.0f", since),
        "lost", lost or "")
    if promotion then
        redis.call("hset", KEYS[2], "promotion", promotion)
    end
end
-- over: the end (server ms) of a quarantine already seen over. Ended once, it stays
-- ended (the time passed), so the usual acquire reads no clock; one that ends later (a
-- later since, whoever wrote it, or a longer max_ttl) is checked.
local left = 0
if since > 0 and max_ttl > 0 and since + max_ttl > over then
    now = now or clock_us()
    left = math.max(0, since + max_ttl - math.floor(now / 1000))
    if left == 0 then
        redis.call("hset", KEYS[2], "over", string.format("%.0f", since + max_ttl))
    end
end
local granted = 0
local holder = false
if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
    granted = 1
else
    holder = redis.call("get", KEYS[1])
end
local fence = 0
if ARGV[4] == "1" then
    fence = tonumber(marker[4]) or 0
    if since > 0 and left == 0 and fence < (since + max_ttl) * 1000 then
        now = now or clock_us()
        fence = math.max(fence + 1, now)
    else
        fence = fence + 1
    end
    redis.call("hset", KEYS[2], "fence", string.format("%.0f", fence))
end
if left > 0 then
    return {granted, left, fence, holder, lost or "", string.format("%.0f", since)}
end
return {granted, left, fence, holder}
"""

#: How ACQUIRE ends: the usual answer (granted, no quarantine, no fencing counter) is
#: the number 1 alone. Turning a table into a reply costs a server about a microsecond
#: more per acquire (its fields are looked up one by one), on every server of every
#: uncontended acquire (docs/benchmarks.md).
_SHORT_ANSWER = """\
-- the usual answer, short: granted, no quarantine (it answered above), no counter
if granted == 1 and fence == 0 then
    return 1
end
return {granted, left, fence, holder}
"""


def _short_variant(body: str) -> str:
    """``body`` (the acquire script) with its last line, the table it answers, replaced
    by :data:`_SHORT_ANSWER`."""
    last = "return {granted, left, fence, holder}\n"
    if not body.endswith(last):
        raise AssertionError("the acquire script no longer ends where the short answer expects")
    return body[: -len(last)] + _SHORT_ANSWER


ACQUIRE = Script("acquire", _short_variant(ACQUIRE_BODY))

#: What the cluster variant of the acquire script runs first (see CLUSTER_ACQUIRE).
_CLUSTER_PREAMBLE = """\
-- quorumlock acquire on a cluster node (docs/cluster.md): the acquire script below,
-- after this check. KEYS[2] is the marker of the lock key's slot (it moves with the
-- slot). The last ARGV is the run_id of the node process the connection was opened
-- to; it is taken off ARGV here, so the acquire script sees its own arguments.
-- A marker that names another process came with data from elsewhere: this node
-- restarted, a replica was promoted, or the slot migrated here. Keys of this slot may
-- be missing, so the marker's run_id is forgotten and the acquire script finds it
-- missing: quarantine for max_ttl from now, which never ends before a quarantine
-- the marker already carried (now >= its since). Its fence and max_ttl are kept.
local quorumlock_node = ARGV[#ARGV]
local ARGV = {unpack(ARGV, 1, #ARGV - 1)}
local quorumlock_named = redis.call("hget", KEYS[2], "run_id")
if quorumlock_named and quorumlock_named ~= quorumlock_node then
    redis.call("hdel", KEYS[2], "run_id")
end
"""


def _cluster_variant(source: str) -> str:
    """``source`` with the cluster preamble in front (after a ``#!lua`` line, if any)."""
    if source.startswith("#!"):
        shebang, _, body = source.partition("\n")
        return f"{shebang}\n{_CLUSTER_PREAMBLE}{body}"
    return _CLUSTER_PREAMBLE + source


#: B1 and B2 on a cluster node: ACQUIRE, unchanged, behind a check of the slot's marker.
#: The marker of a cluster instance is per slot (``quorumlock._algorithm.cluster``), in
#: the lock key's slot, so the script touches one slot and needs no cross-slot flag. It
#: is derived from ACQUIRE's source, never edited by hand: what ACQUIRE does, it does.
#:
#: The check turns every marker that names another process into a missing one. For a
#: plain server such a marker means a restart, and ACQUIRE counts the quarantine from
#: the server's start (none if it is durable). On a cluster node it may also mean that
#: the slot arrived from another node (a migration, or a promoted replica that may have
#: missed the last writes): the node's start says nothing about when those keys could
#: have been lost, and a migrated marker may carry a quarantine that is still running.
#: A full quarantine from now is always at least as long: slot moves and restarts can
#: only add quarantine, never shorten one.
CLUSTER_ACQUIRE = Script("acquire_cluster", _cluster_variant(ACQUIRE.source))

#: What the fair variant of the acquire script runs first (see FAIR_ACQUIRE).
_FAIR_HEAD = (
    """\
-- quorumlock fair acquire (docs/algorithm.md, "Fair locks"): the acquire script below,
-- refused to anyone but the head of the key's queue of waiters; where it is refused or
-- finds the lock taken, the caller stands in line (again), in the same step. KEYS[3] is
-- the queue, KEYS[4] its expiries. The last three ARGV are the caller's id in the
-- queue ("" if it has none), its arrival ("" not to join) and its lease in ms; they are
-- taken off ARGV here, so the acquire script sees its own arguments. The acquire
-- script's answer comes with one more element: the caller's place in line where it
-- joined, else 0.
local quorumlock_member, quorumlock_arrival, quorumlock_lease = unpack(ARGV, #ARGV - 2)
local ARGV = {unpack(ARGV, 1, #ARGV - 3)}
"""
    + _SWEEP
    + _JOIN
    + """\
-- the dead off first: a join below does not look again
local quorumlock_now = quorumlock_sweep(KEYS[3], KEYS[4])
local function quorumlock_joined(reply)
    local place = 0
    if reply[1] ~= 1 and quorumlock_member ~= "" and quorumlock_arrival ~= "" then
        place = quorumlock_join(KEYS[3], KEYS[4], quorumlock_member, quorumlock_arrival,
            tonumber(quorumlock_lease), quorumlock_now)
    end
    reply[#reply + 1] = place
    return reply
end
local quorumlock_first = redis.call("zrange", KEYS[3], 0, 0, "withscores")
local quorumlock_head = quorumlock_first[1]
-- a caller that arrived before the head (not in line here: its entry left, or never
-- came) heads the line once it joins: its turn, as the head's would be
local quorumlock_earlier = quorumlock_head and quorumlock_arrival ~= ""
    and quorumlock_member ~= ""
    and tonumber(quorumlock_arrival) < tonumber(quorumlock_first[2])
if quorumlock_head and quorumlock_head ~= quorumlock_member and not quorumlock_earlier then
    -- not our turn: refused as if taken (the holder's token, or "" when it is free)
    return quorumlock_joined({0, 0, 0, redis.call("get", KEYS[1]) or ""})
end
return quorumlock_joined((function()
"""
)

#: What it runs after (see FAIR_ACQUIRE).
_FAIR_TAIL = """\
end)())
"""

#: B1 and B2 for ``fair=True``: ACQUIRE, unchanged, behind the queue's check. Where the
#: lock was not written (refused, or taken), the caller joins the queue in the same step:
#: a refused attempt costs no second round to stand in line. Derived from ACQUIRE's
#: source, never edited by hand.
FAIR_ACQUIRE = Script("acquire_fair", _FAIR_HEAD + ACQUIRE_BODY + _FAIR_TAIL)

#: FAIR_ACQUIRE on a cluster node: the cluster check first (it takes the node's run_id,
#: the last ARGV, off), then the queue's (the caller's id, arrival and lease, now last).
CLUSTER_FAIR_ACQUIRE = Script("acquire_fair_cluster", _cluster_variant(FAIR_ACQUIRE.source))

#: What the queued variant of the acquire script runs first (see QUEUED_ACQUIRE).
_QUEUED_HEAD = (
    """\
-- quorumlock queued acquire (docs/algorithm.md, "Waiting: woken by the release"): the
-- acquire script below; where it writes the lock, the caller's entry leaves the key's
-- queue of waiters, and where it does not, the caller stands in line (again), in the
-- same step. The last five ARGV are the queue, its expiries, the caller's id in it, its
-- arrival ("" not to join) and its lease in ms; they are taken off ARGV here, so the
-- acquire script sees its own arguments. The acquire script's answer comes with one
-- more element: the caller's place in line where it joined, else 0 (granted with
-- neither a quarantine nor a counter, the answer is 1 alone).
local quorumlock_queue, quorumlock_expiry, quorumlock_member, quorumlock_arrival,
    quorumlock_lease = unpack(ARGV, #ARGV - 4)
local ARGV = {unpack(ARGV, 1, #ARGV - 5)}
"""
    + _SWEEP
    + _JOIN
    + """\
local quorumlock_reply = (function()
"""
)

#: What it runs after (see QUEUED_ACQUIRE).
_QUEUED_TAIL = """\
end)()
local quorumlock_place = 0
-- pcall: a user whose ACL denies the queue still acquires
if quorumlock_reply[1] == 1 then
    pcall(function()
        redis.call("zrem", quorumlock_queue, quorumlock_member)
        redis.call("zrem", quorumlock_expiry, quorumlock_member)
    end)
elseif quorumlock_arrival ~= "" then
    local ok, place = pcall(quorumlock_join, quorumlock_queue, quorumlock_expiry,
        quorumlock_member, quorumlock_arrival, tonumber(quorumlock_lease))
    if ok then
        quorumlock_place = place
    end
end
-- granted (so not in line), with neither a quarantine nor a counter: 1 alone, as the
-- acquire script's short answer
if quorumlock_reply[1] == 1 and quorumlock_reply[2] == 0 and quorumlock_reply[3] == 0 then
    return 1
end
quorumlock_reply[#quorumlock_reply + 1] = quorumlock_place
return quorumlock_reply
"""

#: B1 and B2 for a waiter that stands in the key's queue (not ``fair``): ACQUIRE's body,
#: unchanged; where it writes the lock, the waiter's entry leaves the queue in the same
#: step, and where it does not, the waiter joins it again (a refused attempt costs no
#: second round to stand in line). A release takes the head off the queue only where it
#: deletes its holder's key, so a server the last holder never held (its release there
#: came in after the waiter's attempt: a release in flight) would otherwise keep the new
#: holder in line after it got the lock, and name it, not the next waiter, at every
#: later release. The queue's keys come as arguments, as RELEASE's do, and for the same
#: reason: a server whose ACL rule predates the queues still grants the lock. Its usual
#: grant answers 1 alone, as ACQUIRE's does. Derived from ACQUIRE's source, never
#: edited by hand.
QUEUED_ACQUIRE = Script("acquire_queued", _QUEUED_HEAD + ACQUIRE_BODY + _QUEUED_TAIL)

#: QUEUED_ACQUIRE on a cluster node: the cluster check first (it takes the node's run_id,
#: the last ARGV, off), then the queue's (the caller's entry, now last).
CLUSTER_QUEUED_ACQUIRE = Script("acquire_queued_cluster", _cluster_variant(QUEUED_ACQUIRE.source))

#: B2: make a fencing token stick on the servers that granted the lock, so that every
#: later majority meets a server whose counter is at least this token.
COMMIT_FENCE = Script(
    "commit_fence",
    """\
-- quorumlock commit fence: raise the fencing counter to the token drawn
-- KEYS[1]  the lock key
-- KEYS[2]  the server's incarnation marker
-- ARGV[1]  our token
-- ARGV[2]  the fencing token (an integer)
-- returns  1 if the key still holds our token (the counter is then >= ARGV[2]), else 0
local fence = tonumber(redis.call("hget", KEYS[2], "fence")) or 0
if fence < tonumber(ARGV[2]) then
    redis.call("hset", KEYS[2], "fence", ARGV[2])
end
if redis.call("get", KEYS[1]) == ARGV[1] then
    return 1
end
return 0
""",
)

#: B2, the resource side: a write is applied only with a fencing token >= the highest the
#: resource has seen, in one atomic step with the check.
FENCE_GUARD = Script(
    "fence_guard",
    """\
-- quorumlock fence guard: run a command only for a token >= the highest seen
-- KEYS[1]  where the resource's highest fencing token is kept
-- ARGV[1]  the writer's fencing token (an integer)
-- ARGV[2..] the command to run and its arguments
-- returns  the command's reply, or the error "STALEFENCE <highest>" (nothing was run);
--          a value no fence wrote (not a whole number from 0 to 2^53) is refused so too
local highest = redis.call("get", KEYS[1])
if highest then
    local seen = tonumber(highest)
    if not seen or seen ~= math.floor(seen) or seen < 0 or seen >= 2^53
        or seen > tonumber(ARGV[1]) then
        return redis.error_reply("STALEFENCE " .. highest)
    end
end
redis.call("set", KEYS[1], ARGV[1])
return redis.call(unpack(ARGV, 2))
""",
)

#: Provisioning (``quorumlock.provision``, ``quorumlock servers init``): mark an empty
#: server as new, so that its first use starts no restart quarantine. The check that the
#: server is empty and the stamp are one atomic step: no acquire (which would write the
#: marker itself) can come in between. A marker already there is never touched: it may
#: carry a running quarantine and the fencing counter.
PROVISION = Script(
    "provision",
    """\
-- quorumlock provision: mark an empty server as new
-- KEYS[1]  the server's incarnation marker
-- returns  {"marked", run_id}, {"known", run_id of the marker}, or {"keys", key count}
local named = redis.call("hget", KEYS[1], "run_id")
if named then
    return {"known", named}
end
local size = redis.call("dbsize")
if size > 0 then
    return {"keys", size}
end
local run_id = string.match(redis.call("info", "server"), "run_id:(%w+)")
redis.call("hset", KEYS[1], "run_id", run_id, "since", "0")
return {"marked", run_id}
""",
)

#: The multi-resource lock (``Redlock.lock_many``, docs/algorithm.md): the same scripts
#: over a set of keys, each atomic on its server, so that a server grants every key of
#: the set or none. KEYS[2] stays the marker, as for ACQUIRE; the lock keys are KEYS[1]
#: and KEYS[3..], sorted by the client (a fixed order: two overlapping sets meet their
#: common keys in the same order). Derived from ACQUIRE's source, never edited by hand:
#: the quarantine and the fencing counter are ACQUIRE's, only the SET differs.
_SET_ONE_FROM = "local granted = 0\n"
_SET_ONE_TO = 'holder = redis.call("get", KEYS[1])\nend\n'

_SET_ALL = """\
-- a set of keys (KEYS[1], KEYS[3..]): granted only if none is held here, then all are
-- set in this same atomic step; holder is the first holder met, in key order
local granted = 0
local holder = false
for i = 1, #KEYS do
    if i ~= 2 and not holder then
        holder = redis.call("get", KEYS[i])
    end
end
if not holder then
    for i = 1, #KEYS do
        if i ~= 2 then
            redis.call("set", KEYS[i], ARGV[1], "PX", ARGV[2])
        end
    end
    granted = 1
end
"""


def _many_variant(source: str) -> str:
    """ACQUIRE's source with its SET block (from ``_SET_ONE_FROM`` to ``_SET_ONE_TO``, as
    it stands) replaced by the whole set's."""
    if source.count(_SET_ONE_FROM) != 1 or source.count(_SET_ONE_TO) != 1:
        raise AssertionError("the acquire script's SET is not where the set variant expects it")
    start = source.index(_SET_ONE_FROM)
    end = source.index(_SET_ONE_TO) + len(_SET_ONE_TO)
    header = "-- quorumlock acquire of a set of keys: every key or none\n"
    return header + source[:start] + _SET_ALL + source[end:]


#: B1 and B2 for a set of keys: ACQUIRE with every key of the set taken or none.
ACQUIRE_MANY = Script("acquire_many", _many_variant(ACQUIRE_BODY))

#: ACQUIRE_MANY on a cluster node (every key of the set in one slot: the client checks).
CLUSTER_ACQUIRE_MANY = Script("acquire_many_cluster", _cluster_variant(ACQUIRE_MANY.source))

#: R3/R9 for a set: compare-and-delete each key, announcing each release. The kinds of
#: lock without a queue announce `` <notice>``, as RELEASE does with nobody in line: the
#: notice (the token, or the name the client gives the round: an undo's carries its
#: attempt) tells one release announced by several servers apart from the next, so
#: that a process wakes one waiter of each sort per release, not one per server.
RELEASE_MANY = Script(
    "release_many",
    """\
-- quorumlock release of a set of keys: compare-and-delete each, then wake the waiters
-- KEYS     the lock keys of the set
-- ARGV[1]  the token we stored when acquiring
-- ARGV[2]  "1" to publish each release on "quorumlock:released:" .. its key
-- ARGV[3]  (optional) what the announcement calls this release (default: ARGV[1])
-- returns  1 if every key held our token (all are deleted), 0 otherwise (those that
--          held it are deleted all the same)
local all = 1
local notice = " " .. (ARGV[3] or ARGV[1])
for i = 1, #KEYS do
    if redis.call("get", KEYS[i]) == ARGV[1] then
        redis.call("del", KEYS[i])
        if ARGV[2] == "1" then
            redis.pcall("publish", "quorumlock:released:" .. KEYS[i], notice)
        end
    else
        all = 0
    end
end
return all
""",
)

#: R10 for a set: reset the ttl of every key, only while every key holds our token.
EXTEND_MANY = Script(
    "extend_many",
    """\
-- quorumlock extend of a set of keys: compare-and-pexpire, all or none
-- KEYS     the lock keys of the set
-- ARGV[1]  the token we stored when acquiring
-- ARGV[2]  the new ttl in milliseconds
-- returns  1 if every key held our token and its ttl was reset, 0 otherwise (no ttl
--          was touched)
for i = 1, #KEYS do
    if redis.call("get", KEYS[i]) ~= ARGV[1] then
        return 0
    end
end
for i = 1, #KEYS do
    redis.call("pexpire", KEYS[i], ARGV[2])
end
return 1
""",
)

#: Leader election (docs/election.md): a leader records its term next to the lock key, in
#: the term record (``quorumlock._algorithm.election.term_key``, the lock key's slot), as
#: "<term> <token>", once it holds the lock; the token carries the leader's identity. The
#: record is written only while the key still holds that token, and never lowered.
CLAIM_TERM = Script(
    "claim_term",
    """\
-- quorumlock claim term: record the term of the holder of the election's lock
-- KEYS[1]  the lock key
-- KEYS[2]  the term record
-- ARGV[1]  our token
-- ARGV[2]  our term (the fencing token of the acquisition, an integer)
-- returns  1 if the key holds our token (the record names us then), 0 otherwise
if redis.call("get", KEYS[1]) ~= ARGV[1] then
    return 0
end
local recorded = redis.call("get", KEYS[2])
local term = recorded and tonumber(string.match(recorded, "^(%d+) ")) or 0
if term < tonumber(ARGV[2]) then
    redis.call("set", KEYS[2], ARGV[2] .. " " .. ARGV[1])
end
return 1
""",
)

# ---------------------------------------------------------------------------------------
# The read-write lock (docs/algorithm.md, "Read-write locks"). One sorted set per name and
# server, ``quorumlock:rw:{<name>}``, holds every hold of the lock on that server: a
# member is a mode letter and a token ("r" a reader, "w" the writer, "i" a waiting
# writer's intent), its score the server time (ms) the hold expires at plus its kind's
# base (``RW_BASES``): each kind has a band of scores of its own, so that a script finds
# the live holds of one kind in one range lookup, whatever the number of the others (a
# thousand readers, a thousand waiting writers). Each hold thus expires on its own, as
# a PX key does; the key outlives every hold, and the server deletes it with its last.
# ---------------------------------------------------------------------------------------

#: Where the read-write lock of a name keeps its holds (the name is the hash tag, so the
#: key lands in the slot of a cluster that the name's own key would).
RW_PREFIX = "quorumlock:rw:"

#: The width of a kind's band of scores: a server time in ms stays below it until the
#: year 2286, and the highest score (the writer's band) stays an exact double.
RW_BAND = 10**13

#: Each kind's base: a hold's score is its base plus the server time (ms) it expires at.
RW_BASES = {"r": 0, "i": RW_BAND, "w": 2 * RW_BAND}

#: The bands and the server's time in ms (``rw_now``), and three helpers:
#: ``rw_live(kind, limit)``, the first live holds of a kind (at most ``limit``), which
#: drops the kind's expired holds when it meets one (they come first: a band is in the
#: order its holds expire), so that a hold expires on its own, as a PX key does;
#: ``rw_mine(kind, score)``, whether our hold of that kind, with that score (false: none),
#: is live (a script that looks at our own holds only leaves the others to acquires);
#: ``rw_keep(ms)``, the key kept at least ``ms`` more for a hold set for that long: the
#: key outlives its every hold, and is deleted with its last member.
_RW_NOW = f"""\
local rw_band = {RW_BAND}
local rw_base = {{r = {RW_BASES["r"]}, i = {RW_BASES["i"]}, w = {RW_BASES["w"]}}}
local rw_clock = redis.call("time")
local rw_now = tonumber(rw_clock[1]) * 1000 + math.floor(tonumber(rw_clock[2]) / 1000)
local function rw_live(kind, limit)
    local low = string.format("%.0f", rw_base[kind])
    local high = "(" .. string.format("%.0f", rw_base[kind] + rw_band)
    local found = redis.call("zrangebyscore", KEYS[1], low, high, "withscores", "limit", 0,
        limit)
    if found[2] and tonumber(found[2]) - rw_base[kind] <= rw_now then
        redis.call("zremrangebyscore", KEYS[1], low,
            string.format("%.0f", rw_base[kind] + rw_now))
        found = redis.call("zrangebyscore", KEYS[1], low, high, "withscores", "limit", 0, limit)
    end
    local members = {{}}
    for rw_at = 1, #found, 2 do
        members[#members + 1] = found[rw_at]
    end
    return members
end
local function rw_mine(kind, score)
    return score and tonumber(score) - rw_base[kind] > rw_now
end
local function rw_keep(ms)
    if redis.call("pttl", KEYS[1]) < ms then
        redis.call("pexpire", KEYS[1], string.format("%.0f", ms))
    end
end
"""

#: Where the acquire script's SET block starts and ends: the read-write acquire replaces
#: it (see RW_ACQUIRE); its lines are not repeated here, so that they exist once.
_GRANT_FROM = "local granted = 0\n"
_GRANT_TO = 'holder = redis.call("get", KEYS[1])\nend\n'

_RW_GRANT = (
    """\
-- read-write: ARGV[1] is the mode ("r" or "w") and our token, ARGV[2] "<ttl ms>:<the
-- intent's lease in ms, 0 for none>". A reader is refused while a writer holds or one
-- waits (an intent); a writer while anyone else holds. A refused writer leaves its
-- intent, so that no new reader gets in before it (no writer starvation).
local granted = 0
local holder = false
local rw_ttl, rw_intent = string.match(ARGV[2], "^(%d+):(%d+)$")
"""
    + _RW_NOW
    + """\
local rw_mode = string.sub(ARGV[1], 1, 1)
local rw_token = string.sub(ARGV[1], 2)
-- who keeps us out: another live hold of a kind in our way (a member is ours in at most
-- one of the two looked at of each kind)
local rw_against, rw_aside = {"w", "i"}, "r"
if rw_mode == "w" then
    rw_against, rw_aside = {"w", "r"}, "i"
end
for _, kind in ipairs(rw_against) do
    for _, member in ipairs(rw_live(kind, 2)) do
        if not holder and string.sub(member, 2) ~= rw_token then
            holder = string.sub(member, 2)
        end
    end
end
rw_live(rw_aside, 1)  -- only to drop the expired holds of the kind not in our way
if holder then
    if rw_mode == "w" and tonumber(rw_intent) > 0 then
        redis.call("zadd", KEYS[1],
            string.format("%.0f", rw_base.i + rw_now + tonumber(rw_intent)), "i" .. rw_token)
        rw_keep(tonumber(rw_intent))
    end
else
    granted = 1
    redis.call("zrem", KEYS[1], "i" .. rw_token)
    redis.call("zadd", KEYS[1],
        string.format("%.0f", rw_base[rw_mode] + rw_now + tonumber(rw_ttl)), ARGV[1])
    rw_keep(tonumber(rw_ttl))
end
"""
)


def _rw_acquire_source() -> str:
    """ACQUIRE's source with its SET replaced by the read-write grant: the restart
    quarantine and the fencing counter are ACQUIRE's own, never edited by hand."""
    source = ACQUIRE_BODY
    if source.count(_GRANT_FROM) != 1 or source.count(_GRANT_TO) != 1:
        raise RuntimeError("the acquire script's SET block changed: update _GRANT_FROM/_TO")
    start = source.index(_GRANT_FROM)
    end = source.index(_GRANT_TO) + len(_GRANT_TO)
    header = "-- quorumlock read-write acquire: the acquire script with the SET below replaced\n"
    return header + source[:start] + _RW_GRANT + source[end:]


#: B1 and B2 for the read-write lock: ACQUIRE with its SET replaced by the read-write
#: grant on the sorted set KEYS[1]; same arguments (ARGV[1] the mode letter and token,
#: ARGV[2] "<ttl>:<intent>") and same reply, the holder being a blocking hold's token.
RW_ACQUIRE = Script("rw_acquire", _rw_acquire_source())

#: R3/R9 for the read-write lock: drop our hold (either mode) and, unless a waiting
#: writer keeps its claim (an undo between its attempts), our intent; announce it (as
#: RELEASE_MANY does).
RW_RELEASE = Script(
    "rw_release",
    """\
-- quorumlock read-write release
-- KEYS[1]  the lock's sorted set of holds
-- ARGV[1]  our token
-- ARGV[2]  "1" to publish the release on "quorumlock:released:" .. KEYS[1]
-- ARGV[3]  0, or a waiting writer's intent lease in ms: keep waiting as an intent
-- ARGV[4]  (optional) what the announcement calls this release (default: ARGV[1])
-- returns  1 if we held the lock here (read or write) and no longer do, 0 otherwise
"""
    + _RW_NOW
    + """\
local mine = redis.call("zmscore", KEYS[1], "r" .. ARGV[1], "w" .. ARGV[1])
local held = 0
if mine[1] or mine[2] then
    redis.call("zrem", KEYS[1], "r" .. ARGV[1], "w" .. ARGV[1])
    if rw_mine("r", mine[1]) or rw_mine("w", mine[2]) then
        held = 1
    end
end
local intent = tonumber(ARGV[3]) or 0
local changed = held
if intent > 0 then
    redis.call("zadd", KEYS[1], string.format("%.0f", rw_base.i + rw_now + intent),
        "i" .. ARGV[1])
    rw_keep(intent)
else
    changed = changed + redis.call("zrem", KEYS[1], "i" .. ARGV[1])
end
if ARGV[2] == "1" and changed > 0 then
    redis.pcall("publish", "quorumlock:released:" .. KEYS[1], " " .. (ARGV[4] or ARGV[1]))
end
if held > 0 then
    return 1
end
return 0
""",
)

#: R10 for the read-write lock: a new expiry for our live hold, never a new hold.
RW_EXTEND = Script(
    "rw_extend",
    """\
-- quorumlock read-write extend
-- KEYS[1]  the lock's sorted set of holds
-- ARGV[1]  our token
-- ARGV[2]  the new ttl in milliseconds
-- returns  1 if we held the lock here and its expiry was reset, 0 otherwise
"""
    + _RW_NOW
    + """\
local mine = redis.call("zmscore", KEYS[1], "r" .. ARGV[1], "w" .. ARGV[1])
for at, kind in ipairs({"r", "w"}) do
    if rw_mine(kind, mine[at]) then
        redis.call("zadd", KEYS[1], "XX",
            string.format("%.0f", rw_base[kind] + rw_now + tonumber(ARGV[2])), kind .. ARGV[1])
        rw_keep(tonumber(ARGV[2]))
        return 1
    end
end
return 0
""",
)

#: Downgrade, atomic on each server: our write hold becomes a read hold with the same
#: expiry, so no writer can come in between; readers waiting are told (as RELEASE_MANY
#: tells them, under a notice of its own: the release that follows has the same token).
RW_DOWNGRADE = Script(
    "rw_downgrade",
    """\
-- quorumlock read-write downgrade: our write hold becomes a read hold
-- KEYS[1]  the lock's sorted set of holds
-- ARGV[1]  our token
-- ARGV[2]  (optional) what the announcement calls this downgrade (default: ARGV[1])
-- returns  1 if we held the write lock here and now hold it for reading, 0 otherwise
"""
    + _RW_NOW
    + """\
local score = redis.call("zscore", KEYS[1], "w" .. ARGV[1])
if not rw_mine("w", score) then
    return 0
end
redis.call("zrem", KEYS[1], "w" .. ARGV[1])
redis.call("zadd", KEYS[1], string.format("%.0f", tonumber(score) - rw_base.w + rw_base.r),
    "r" .. ARGV[1])
redis.pcall("publish", "quorumlock:released:" .. KEYS[1], " " .. (ARGV[2] or ARGV[1]))
return 1
""",
)

#: ``locked()`` and ``owned()`` of a set: who holds it on this server.
PROBE_MANY = Script(
    "probe_many",
    """\
-- quorumlock probe of a set of keys: changes nothing
-- KEYS     the lock keys of the set
-- returns  the token in every key when they all hold the same one; "*" when some key is
--          held but not all by one token (held, and by nobody's whole set); nil when
--          no key is held
local first = redis.call("get", KEYS[1])
local same = true
local any = first
for i = 2, #KEYS do
    local value = redis.call("get", KEYS[i])
    if value ~= first then
        same = false
    end
    any = any or value
end
if same then
    return first
elseif any then
    return "*"
end
return nil
""",
)

#: Who leads according to this server: the lock key's value (the holder's token), its
#: time to live, and the term of the record when the record names that same token.
READ_LEADER = Script(
    "read_leader",
    """\
-- quorumlock read leader: the holder of the election's lock here, with its term
-- KEYS[1]  the lock key
-- KEYS[2]  the term record
-- returns  false when nobody holds the key, else "<pttl ms> <term> <token>" (term 0 when
--          the record does not name this holder)
local holder = redis.call("get", KEYS[1])
if not holder then
    return false
end
local pttl = redis.call("pttl", KEYS[1])
local term = "0"
local recorded = redis.call("get", KEYS[2])
if recorded then
    local number, token = string.match(recorded, "^(%d+) (.*)$")
    if token == holder then
        term = number
    end
end
return pttl .. " " .. term .. " " .. holder
""",
)

#: Who holds the read-write lock here, without changing anything: our token if we
#: hold it (either mode), else a live holder's (the writer's first), else nil.
RW_PROBE = Script(
    "rw_probe",
    f"""\
-- quorumlock read-write probe
-- KEYS[1]  the lock's sorted set of holds
-- ARGV[1]  our token ("" for none)
-- returns  our token if we hold it here, else the token of a live holder, else nil
local clock = redis.call("time")
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local bases = {{{{"w", {RW_BASES["w"]}}}, {{"r", {RW_BASES["r"]}}}}}
for _, kind in ipairs(bases) do
    local score = ARGV[1] ~= "" and redis.call("zscore", KEYS[1], kind[1] .. ARGV[1])
    if score and tonumber(score) - kind[2] > now then
        return ARGV[1]
    end
end
for _, kind in ipairs(bases) do
    local live = redis.call("zrangebyscore", KEYS[1],
        "(" .. string.format("%.0f", kind[2] + now),
        "(" .. string.format("%.0f", kind[2] + {RW_BAND}), "limit", 0, 1)
    if live[1] then
        return string.sub(live[1], 2)
    end
end
return nil
""",
)

#: COMMIT_FENCE for the writer of a read-write lock.
RW_COMMIT_FENCE = Script(
    "rw_commit_fence",
    f"""\
-- quorumlock read-write commit fence: raise the fencing counter to the token drawn
-- KEYS[1]  the lock's sorted set of holds
-- KEYS[2]  the server's incarnation marker
-- ARGV[1]  our token
-- ARGV[2]  the fencing token (an integer)
-- returns  1 if we still hold the write lock here (the counter is then >= ARGV[2]), else 0
local fence = tonumber(redis.call("hget", KEYS[2], "fence")) or 0
if fence < tonumber(ARGV[2]) then
    redis.call("hset", KEYS[2], "fence", ARGV[2])
end
local clock = redis.call("time")
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local score = redis.call("zscore", KEYS[1], "w" .. ARGV[1])
if score and tonumber(score) - {RW_BASES["w"]} > now then
    return 1
end
return 0
""",
)

#: RW_ACQUIRE on a cluster node, as CLUSTER_ACQUIRE is ACQUIRE there.
CLUSTER_RW_ACQUIRE = Script("rw_acquire_cluster", _cluster_variant(RW_ACQUIRE.source))

#: A counting semaphore's acquire on one server (docs/algorithm.md, "Semaphores"): the
#: semaphore's K permits are K slot keys, each an ordinary lock key, and a permit is held
#: as a lock on one slot. The script tries the slots in the client's (random) order and
#: runs ACQUIRE, unchanged, on the first one that is free (or already ours, from the
#: client's previous round: it is taken again afresh), so that the quarantine and the
#: fencing counter work exactly as for a lock. In the same atomic step it deletes our
#: token from every other slot: a client holds at most one slot per acquisition on each
#: server. It is derived from ACQUIRE's source, never edited by hand.
SEMAPHORE_ACQUIRE = Script(
    "semaphore_acquire",
    """\
-- quorumlock semaphore acquire: ACQUIRE on the first free slot in the client's order
-- KEYS[1..K] the slot keys; KEYS[K+1] the server's incarnation marker
-- ARGV[1..4] token, ttl ms, max_ttl ms, fencing: as for the acquire script
-- ARGV[5]    the slots to try, 0-based, in order ("2,0,3,1")
-- ARGV[6..7] run_id and durability of the session: as for the acquire script
-- returns    {slot tried (0-based), free slots ("1" free or ours, "0" taken; one per
--             slot, before this call), then the acquire script's reply for that slot}
local function acquire_one(KEYS, ARGV)
"""
    + "\n".join("    " + line if line else line for line in ACQUIRE_BODY.splitlines())
    + """
end
local k = #KEYS - 1
local token = ARGV[1]
local values = redis.call("mget", unpack(KEYS, 1, k))
local free = {}
local bits = {}
for i = 1, k do
    free[i] = (not values[i]) or values[i] == token
    bits[i] = free[i] and "1" or "0"
end
local target = nil
local first = nil
for s in string.gmatch(ARGV[5], "%d+") do
    local i = tonumber(s) + 1
    if i >= 1 and i <= k then
        first = first or i
        if free[i] then
            target = i
            break
        end
    end
end
target = target or first
-- our grants of the client's previous round go quietly: waking the waiters for a
-- grant that lived one round trip would only make them collide again
for i = 1, k do
    if values[i] == token then
        redis.call("del", KEYS[i])
    end
end
local r = acquire_one({KEYS[target], KEYS[k + 1]},
    {token, ARGV[2], ARGV[3], ARGV[4], ARGV[6], ARGV[7]})
return {target - 1, table.concat(bits), unpack(r)}
""",
)

#: A semaphore's release (and the undo of a failed acquire): compare-and-delete our
#: token on every slot key but ``keep``, then wake the semaphore's waiters (as
#: RELEASE_MANY does).
SEMAPHORE_RELEASE = Script(
    "semaphore_release",
    """\
-- quorumlock semaphore release: compare-and-delete on every slot, then wake the waiters
-- KEYS[1..K] the slot keys ("<base>:<slot>")
-- ARGV[1]    our token
-- ARGV[2]    the slot to keep (0-based), or -1 for none
-- ARGV[3]    "1" to publish on "quorumlock:released:<base>" when a key was deleted
-- ARGV[4]    (optional) what the announcement calls this release (default: ARGV[1])
-- returns    1 if a key held our token and was deleted, 0 otherwise
local deleted = 0
local keep = tonumber(ARGV[2]) + 1
local values = redis.call("mget", unpack(KEYS))
for i = 1, #KEYS do
    if i ~= keep and values[i] == ARGV[1] then
        redis.call("del", KEYS[i])
        deleted = 1
    end
end
if deleted == 1 and ARGV[3] == "1" then
    local base = string.gsub(KEYS[1], ":%d+$", "")
    redis.pcall("publish", "quorumlock:released:" .. base, " " .. (ARGV[4] or ARGV[1]))
end
return deleted
""",
)

#: Every script, by name.
SCRIPTS = {
    script.name: script
    for script in (
        ACQUIRE,
        ACQUIRE_MANY,
        CLAIM_TERM,
        CLUSTER_ACQUIRE,
        CLUSTER_ACQUIRE_MANY,
        CLUSTER_FAIR_ACQUIRE,
        CLUSTER_QUEUED_ACQUIRE,
        COMMIT_FENCE,
        EXTEND,
        EXTEND_EACH,
        EXTEND_MANY,
        FAIR_ACQUIRE,
        FENCE_GUARD,
        PROBE_MANY,
        PROVISION,
        QUEUE,
        QUEUED_ACQUIRE,
        READ_LEADER,
        RELEASE,
        RELEASE_MANY,
        RW_ACQUIRE,
        CLUSTER_RW_ACQUIRE,
        RW_COMMIT_FENCE,
        RW_DOWNGRADE,
        RW_EXTEND,
        RW_PROBE,
        RW_RELEASE,
        SEMAPHORE_ACQUIRE,
        SEMAPHORE_RELEASE,
    )
}
