"""The model's decisions and the code's, case by case: the ties of models/README.md.

``models/decisions.pml`` writes quorumlock's decisions as Promela inline functions and
macros, and the model checker verifies the algorithm built from them. These tables hold
the cases where a rule has a boundary (an exact quorum, a validity of exactly zero, a
drift that is not a whole millisecond, a quarantine that ends at this very millisecond,
a counter lifted to the clock) and check each against both sides:

- the model: one Promela driver that includes ``decisions.pml``, runs every case through
  its inline functions and prints the results, simulated by ``spin`` (no verifier to
  compile: a second or so);
- the code: the pure functions and flows of ``quorumlock._algorithm`` for the client's
  decisions, and the Lua scripts of ``scripts.py`` on a real server for the server's
  (the acquire script with the server's clock and ``INFO`` pinned by a shim in front of
  it, so that its quarantine boundaries fall on known milliseconds), read back through
  ``wire.interpret`` as a client reads them.

The model counts time in ticks, here milliseconds; the code in seconds (float) and
milliseconds (the ttl, the servers). The model rounds the drift up to a whole tick, so
that it never grants more validity than the code: the cases where that rounding shows are
marked, and there the model must be the stricter side, by less than one millisecond.

Without ``spin`` (``apt-get install spin``) the module skips; CI sets
``QUORUMLOCK_REQUIRE_SPIN=1``, which turns the skip into a failure.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from quorumlock import NodeOutcome, RedlockConfig, Reply
from quorumlock._algorithm.arithmetic import DRIFT_FLOOR, deadline, quorum
from quorumlock._algorithm.fencing import draw_fence, fence_committed
from quorumlock._algorithm.flows import (
    AcquireResult,
    ExtendResult,
    Fanout,
    Op,
    Round,
    acquire_flow,
    extend_flow,
)
from quorumlock._algorithm.outcomes import Verdict
from quorumlock._algorithm.scripts import ACQUIRE, COMMIT_FENCE, EXTEND, RELEASE
from quorumlock._algorithm.wire import interpret
from quorumlock.testing import LocalServerGroup

MODELS = Path(__file__).resolve().parents[2] / "models"
ENV_REQUIRE_SPIN = "QUORUMLOCK_REQUIRE_SPIN"
FLOOR_MS = round(DRIFT_FLOOR * 1000)  # the model's FLOOR argument, in ticks (ms)
G, X, Q, D, N = Reply.GRANTED, Reply.TAKEN, Reply.QUARANTINED, Reply.DONE, Reply.NOT_HELD


# --- the tables ---------------------------------------------------------------------


@dataclass(frozen=True)
class Acquire:
    """One acquire round: the replies, when it started and ended (ms), the ttl, the
    drift factor; ``gap``: the finish falls between the model's deadline (drift rounded
    up to a whole ms) and the code's, where only the code grants."""

    name: str
    replies: tuple[Reply, ...]
    start: int
    finish: int
    ttl: int = 1000
    factor: float = 0.01
    gap: bool = False


ACQUIRES = [
    # quorum boundaries (ttl 1000 ms, factor 0.01: drift 12 ms, deadline start + 988)
    Acquire("one of one", (G,), 0, 5),
    Acquire("none of one", (X,), 0, 5),
    Acquire("exact quorum of 3", (G, G, X), 0, 5),
    Acquire("one short of 3", (G, X, X), 0, 5),
    Acquire("half of 4 is not a quorum", (G, G, X, X), 0, 5),
    Acquire("exact quorum of 4", (G, G, G, X), 0, 5),
    Acquire("exact quorum of 5", (G, X, G, X, G), 0, 5),
    Acquire("one short of 5", (G, X, G, X, X), 0, 5),
    Acquire("a quarantined grant does not count", (G, Q, X), 0, 5),
    Acquire("quorum beside a quarantined one", (G, G, Q), 0, 5),
    # validity boundaries
    Acquire("validity 1 ms", (G, G, G), 100_000, 100_987),
    Acquire("validity exactly zero", (G, G, G), 100_000, 100_988),
    Acquire("validity -1 ms", (G, G, G), 100_000, 100_989),
    Acquire("no time elapsed", (G, G, G), 100_000, 100_000),
    Acquire("drift floor only: validity 1 ms", (G, G, X), 0, 997, factor=0.0),
    Acquire("drift floor only: validity zero", (G, G, X), 0, 998, factor=0.0),
    Acquire("10 s ttl: validity 1 ms", (G, G, G), 1_000, 10_897, ttl=10_000),
    Acquire("10 s ttl: validity zero", (G, G, G), 1_000, 10_898, ttl=10_000),
    Acquire("large clock: validity 1 ms", (G, G, G), 1_700_000, 1_700_987),
    Acquire("large clock: validity zero", (G, G, G), 1_700_000, 1_700_988),
    Acquire("drift factor 0.25: validity 1 ms", (G, G, X), 0, 4_995, ttl=6_664, factor=0.25),
    Acquire("drift factor 0.25: validity zero", (G, G, X), 0, 4_996, ttl=6_664, factor=0.25),
    # drift that is not a whole ms: the model rounds it up
    Acquire("ttl 1001: 12.01 ms drift, before both", (G, G, X), 0, 987, ttl=1001),
    Acquire("ttl 1001: in the rounding gap", (G, G, X), 0, 988, ttl=1001, gap=True),
    Acquire("ttl 1001: after both", (G, G, X), 0, 989, ttl=1001),
    Acquire(
        "ttl 1050, factor 0.001: in the gap", (G, G, X), 0, 1046, ttl=1050, factor=0.001, gap=True
    ),
    Acquire("ttl 1050, factor 0.001: before both", (G, G, X), 0, 1045, ttl=1050, factor=0.001),
]


@dataclass(frozen=True)
class Extend:
    """One extension round (R10): replies, start and finish (ms), the current deadline."""

    name: str
    replies: tuple[Reply, ...]
    start: int
    finish: int
    held: int
    ttl: int = 1000
    factor: float = 0.01


EXTENDS = [
    Extend("exact quorum in time", (D, D, N), 500, 510, 988),
    Extend("one short", (D, N, N), 500, 510, 988),
    Extend("quorum of 5", (D, D, D, N, N), 500, 510, 988),
    Extend("finished 1 ms before the current deadline", (D, D, D), 500, 987, 988),
    Extend("finished at the current deadline", (D, D, D), 500, 988, 988),
    Extend("started at the current deadline", (D, D, D), 988, 990, 988),
    # the new deadline (start + 988) earlier than the current one: a shorter ttl
    Extend("before the new deadline", (D, D, X), 100, 1087, 5000),
    Extend("at the new deadline", (D, D, X), 100, 1088, 5000),
    Extend("rounding: model's new deadline", (D, D, D), 100, 1087, 5000, ttl=1001),
]

QUORUMS = list(range(1, 10))

#: (name, counters of the servers, None where the grant did not count)
DRAWS = [
    ("all at one counter", (7, 7, 7)),
    ("a majority at the largest", (7, 7, 6)),
    ("the largest alone", (5, 6, 7)),
    ("two granted, equal", (7, 7, None)),
    ("two granted, unequal", (7, None, 6)),
    ("five, two at the largest", (9, 9, 8, 8, 8)),
    ("five, three at the largest", (9, 9, 9, 8, None)),
    ("five, three granted, all equal", (4, None, 4, None, 4)),
    ("one granted", (3, None, None)),
]

#: (name, counters (None: no grant), confirmed the commit)
COMMITS = [
    ("the token stuck already", (7, 7, 6), (False, False, False)),
    ("the third confirms", (5, 6, 7), (True, True, False)),
    ("one confirms: not enough", (5, 6, 7), (True, False, False)),
    ("a commit without a grant does not count", (5, None, 7), (False, True, False)),
    ("at the token, unconfirmed, counts", (7, 6, 7), (False, False, False)),
    (
        "five: two at the token, one confirms",
        (8, 8, 6, 5, None),
        (False, False, True, False, False),
    ),
    (
        "five: two at the token, none confirms",
        (8, 8, 6, 5, None),
        (False, False, False, False, True),
    ),
]


@dataclass(frozen=True)
class AcquireScript:
    """The acquire script on one server whose clock reads ``now`` (ms).

    The marker: ``present``, naming run ``mrun`` (the connection names ``prun``), with
    ``since``, the declared max_ttl ``declared`` and the counter ``fence``; the server
    runs durable (appendonly + fsync always) or not, has been up ``uptime`` seconds;
    the client's ``maxttl`` (0: quarantine off); whether the lock key is free; fencing.
    A missing marker is found with a sign of data loss (an eviction): its quarantine
    counts from now, as in the model's inline (models/README.md on SINCE_START).
    ``over``: the marker's record of when a quarantine seen over ended (0: none), on the
    server only. The model has no such record: it saves a clock read and must change no
    decision.
    """

    name: str
    present: bool = True
    mrun: int = 1
    prun: int = 1
    durable: bool = False
    uptime: int = 3600
    since: int = 0
    declared: int = 3000
    fence: int = 7
    maxttl: int = 3000
    over: int = 0
    free: bool = True
    now: int = 100_000
    fencing: bool = True


ACQUIRE_SCRIPTS = [
    AcquireScript("steady"),
    AcquireScript("steady, key taken", free=False),
    AcquireScript("steady, fencing off", fencing=False),
    AcquireScript("marker lost: quarantine from now", present=False),
    AcquireScript("marker lost, key taken", present=False, free=False),
    AcquireScript("marker lost, quarantine off: counter to the clock", present=False, maxttl=0),
    AcquireScript("restart 1 s ago: quarantined", mrun=1, prun=2, uptime=2),
    AcquireScript(
        "restart: 1 ms of quarantine left", mrun=1, prun=2, uptime=4, maxttl=3001, declared=0
    ),
    AcquireScript("restart: quarantine ends now", mrun=1, prun=2, uptime=4),
    AcquireScript("restart: quarantine over", mrun=1, prun=2, uptime=5),
    AcquireScript("restart just now (uptime 0)", mrun=1, prun=2, uptime=0),
    AcquireScript("restart, durable: nothing lost", mrun=1, prun=2, durable=True),
    AcquireScript(
        "restart, durable, old quarantine kept", mrun=1, prun=2, durable=True, since=98_000
    ),
    AcquireScript("quarantine running", since=98_000),
    AcquireScript("quarantine: 1 ms left", since=97_001),
    AcquireScript("quarantine ends at this ms: counter to the clock", since=97_000),
    # the quarantine ended at 99 000: a counter below 99 000 000 (us) is lifted to the clock
    AcquireScript("counter at the lift: not lifted", since=96_000, fence=99_000_000),
    AcquireScript("counter 1 below the lift: lifted", since=96_000, fence=98_999_999),
    AcquireScript("a longer declared max_ttl rules", since=96_000, declared=5000),
    AcquireScript("the client's longer max_ttl rules", since=98_000, declared=1000),
    AcquireScript("quarantine off keeps the declared", since=98_000, declared=5000, maxttl=0),
    AcquireScript("no max_ttl declared yet", since=98_000, declared=0, maxttl=0),
    AcquireScript("quarantine over, fencing off", since=97_000, fencing=False),
    AcquireScript("recorded over before this since: running", since=98_000, over=96_000),
    AcquireScript("recorded over at its end: not read again", since=96_000, over=99_000),
    AcquireScript("recorded over for a shorter max_ttl", since=96_000, over=98_000, maxttl=5000),
    AcquireScript("recorded over, a restart since", mrun=1, prun=2, uptime=2, over=99_000),
]

#: (name, the key's token: 0 absent, our token); tokens are 1 and 2
COMPARES = [("absent", 0, 1), ("ours", 1, 1), ("another's", 2, 1)]

#: (name, the key's token: 0 absent, our token, the marker's counter, the fencing token)
COMMIT_SCRIPTS = [
    ("ours, counter below", 1, 1, 5, 7),
    ("ours, counter at", 1, 1, 7, 7),
    ("ours, counter above", 1, 1, 9, 7),
    ("expired, counter below", 0, 1, 5, 7),
    ("another's, counter below", 2, 1, 5, 7),
    ("ours, no counter yet", 1, 1, 0, 7),
]


# --- the model's side: one driver, simulated by spin -----------------------------------


def _pm(factor: float) -> int:
    per_mille = round(factor * 1000)
    assert math.isclose(per_mille / 1000, factor), f"factor {factor} is not whole per-mille"
    return per_mille


def _mask(flags: Sequence[bool]) -> int:
    return sum(1 << i for i, flag in enumerate(flags) if flag)


def _fc(counters: Sequence[int | None]) -> str:
    return " ".join(f"fc[{i}] = {c or 0};" for i, c in enumerate(counters))


def _pstart(case: AcquireScript) -> int:
    """The start the acquire script derives from the uptime (it never counts from
    later than uptime - 1 s ago)."""
    return case.now - max(case.uptime - 1, 0) * 1000


def _driver() -> str:
    """A Promela driver printing, per case, ``T <table> <index> <values...>``."""
    lines: list[str] = []
    for i, n in enumerate(QUORUMS):
        lines.append(f'printf("T quorum {i} %d\\n", QUORUM({n}));')
    for i, a in enumerate(ACQUIRES):
        granted = a.replies.count(G)
        args = (
            f"{granted}, {len(a.replies)}, {a.start}, {a.finish}, {a.ttl}, {_pm(a.factor)}, "
            f"{FLOOR_MS}"
        )
        dl = f"DEADLINE({a.start}, {a.ttl}, {_pm(a.factor)}, {FLOOR_MS})"
        lines.append(f'printf("T acquire {i} %d %d\\n", ACQUIRED({args}), {dl});')
    for i, e in enumerate(EXTENDS):
        done = e.replies.count(D)
        args = (
            f"{done}, {len(e.replies)}, {e.start}, {e.finish}, {e.held}, {e.ttl}, "
            f"{_pm(e.factor)}, {FLOOR_MS}"
        )
        dl = f"DEADLINE({e.start}, {e.ttl}, {_pm(e.factor)}, {FLOOR_MS})"
        lines.append(f'printf("T extend {i} %d %d\\n", EXTENDED({args}), {dl});')
    for i, (_, counters) in enumerate(DRAWS):
        gmask = _mask([c is not None for c in counters])
        lines.append(_fc(counters))
        lines.append(f"draw_fence({gmask}, {len(counters)}, tok, ok);")
        lines.append(f'printf("T draw {i} %d %d\\n", tok, ok);')
    for i, (_, counters, confirmed) in enumerate(COMMITS):
        gmask = _mask([c is not None for c in counters])
        n = len(counters)
        lines.append(_fc(counters))
        lines.append(f"draw_fence({gmask}, {n}, tok, ok);")
        lines.append(f"fence_committed({gmask}, {_mask(confirmed)}, {n}, tok, ok);")
        lines.append(f'printf("T commit {i} %d %d\\n", tok, ok);')
    for i, s in enumerate(ACQUIRE_SCRIPTS):
        ins = (
            f"{int(s.present)}, {s.mrun}, {s.prun}, {int(s.durable)}, {_pstart(s)}, "
            f"{s.declared}, {s.since}, {s.fence}, {s.maxttl}, {int(s.free)}, {s.now}, "
            f"{int(s.fencing)}, 1000"
        )
        lines.append(
            f"acquire_script({ins}, o_granted, o_left, o_since, o_declared, o_fence, o_raised);"
        )
        lines.append(
            f'printf("T script {i} %d %d %d %d %d\\n", '
            "o_granted, o_left, o_since, o_declared, o_fence);"
        )
    for i, (_, held, tok) in enumerate(COMPARES):
        lines.append(f"compare_script({held}, {tok}, ok);")
        lines.append(f'printf("T compare {i} %d\\n", ok);')
    for i, (_, held, tok, counter, token) in enumerate(COMMIT_SCRIPTS):
        lines.append(f"commit_script({held}, {tok}, {counter}, {token}, ok, o_fence);")
        lines.append(f'printf("T commitscript {i} %d %d\\n", ok, o_fence);')
    body = "\n\t".join(lines)
    return f"""\
#include "decisions.pml"
int qmt, df_i, df_k, tok, ok, o_granted, o_left, o_since, o_declared, o_fence, o_raised;
int fc[9];
init {{
\t{body}
\tprintf("T end 0\\n")
}}
"""


@pytest.fixture(scope="module")
def model() -> dict[tuple[str, int], list[int]]:
    """Every case's results from the model: ``(table, index) -> values``."""
    spin = shutil.which("spin")
    if spin is None:
        reason = "spin is not installed (apt-get install spin): the model's side cannot run"
        if os.environ.get(ENV_REQUIRE_SPIN) == "1":
            pytest.fail(f"{ENV_REQUIRE_SPIN}=1 but {reason}")
        pytest.skip(reason)
    with tempfile.TemporaryDirectory(prefix="quorumlock-ties-") as work:
        shutil.copy(MODELS / "decisions.pml", work)
        (Path(work) / "ties.pml").write_text(_driver())
        run = subprocess.run(
            [spin, "ties.pml"], cwd=work, capture_output=True, text=True, timeout=120, check=False
        )
    assert run.returncode == 0, run.stdout + run.stderr
    results: dict[tuple[str, int], list[int]] = {}
    for line in run.stdout.splitlines():
        words = line.split()
        if words[:1] == ["T"]:
            results[words[1], int(words[2])] = [int(w) for w in words[3:]]
    # spin stops a simulation at an error, and says so on stdout
    assert ("end", 0) in results, run.stdout + run.stderr
    return results


# --- the code's side, and the ties ------------------------------------------------------


def _ids(cases: Sequence[object]) -> list[str]:
    return [getattr(c, "name", None) or str(c[0]) for c in cases]  # type: ignore[index]


def _outcomes(
    replies: Sequence[Reply], fences: Sequence[int | None] = ()
) -> tuple[NodeOutcome, ...]:
    fences = list(fences) or [None] * len(replies)
    return tuple(
        NodeOutcome(f"s{i}", r, fence=f)
        for i, (r, f) in enumerate(zip(replies, fences, strict=True))
    )


def _config(factor: float) -> RedlockConfig:
    return RedlockConfig(clock_drift_factor=factor, wake_on_release=False)


def _code_acquires(case: Acquire) -> bool:
    """Whether the code's acquire flow takes the lock after this round."""
    flow = acquire_flow(
        key="k",
        token="t",
        ttl_ms=case.ttl,
        config=_config(case.factor),
        blocking=False,
        timeout=None,
        now=case.start / 1000,
        uniform=lambda: 0.5,
    )
    step = next(flow)
    assert isinstance(step, Fanout)
    assert step.op is Op.ACQUIRE
    try:
        after = flow.send(Round(case.start / 1000, case.finish / 1000, _outcomes(case.replies)))
    except StopIteration as stop:
        result = stop.value
        assert isinstance(result, AcquireResult)
        return result.verdict is Verdict.ACQUIRED
    assert isinstance(after, Fanout)
    assert after.op is Op.RELEASE  # the undo (R6 step 5)
    return False


def test_the_tables_sit_on_the_boundaries() -> None:
    """The cases named for a boundary are on it, by the code's own arithmetic (no spin
    needed): a change of a default would otherwise move them off it unnoticed."""
    for a in ACQUIRES:
        margin = deadline(a.start / 1000, a.ttl, a.factor) * 1000 - a.finish
        if "validity zero" in a.name or "exactly zero" in a.name:
            assert margin == pytest.approx(0, abs=1e-6), a.name
        elif "validity 1 ms" in a.name:
            assert margin == pytest.approx(1, abs=1e-6), a.name
        elif a.gap:
            assert 0 < margin < 1, a.name
    for s in ACQUIRE_SCRIPTS:
        since = _pstart(s) if s.mrun != s.prun and not s.durable else s.since
        end = since + max(s.maxttl, s.declared)
        if "1 ms" in s.name:
            assert end - s.now == 1, s.name
        elif "ends now" in s.name or "ends at this ms" in s.name:
            assert end == s.now, s.name
        elif "at the lift" in s.name:
            assert s.fence == end * 1000, s.name
        elif "1 below the lift" in s.name:
            assert s.fence == end * 1000 - 1, s.name


@pytest.mark.parametrize("n", QUORUMS)
def test_quorum(model: dict[tuple[str, int], list[int]], n: int) -> None:
    assert model["quorum", QUORUMS.index(n)] == [quorum(n)]


@pytest.mark.parametrize("case", ACQUIRES, ids=_ids(ACQUIRES))
def test_acquire_round(model: dict[tuple[str, int], list[int]], case: Acquire) -> None:
    acquired, model_deadline = model["acquire", ACQUIRES.index(case)]
    code = _code_acquires(case)
    code_deadline = deadline(case.start / 1000, case.ttl, case.factor) * 1000
    # the model's deadline is the code's with the drift rounded up to a whole ms
    assert code_deadline - 1 < model_deadline <= code_deadline + 1e-6
    if case.gap:
        assert (bool(acquired), code) == (False, True), "expected only the code to grant"
    else:
        assert bool(acquired) == code


@pytest.mark.parametrize("case", EXTENDS, ids=_ids(EXTENDS))
def test_extend_round(model: dict[tuple[str, int], list[int]], case: Extend) -> None:
    extended, model_deadline = model["extend", EXTENDS.index(case)]
    flow = extend_flow(
        key="k",
        token="t",
        ttl_ms=case.ttl,
        config=_config(case.factor),
        held_until=case.held / 1000,
        now=case.start / 1000,
    )
    step = next(flow)
    assert isinstance(step, Fanout)
    result: ExtendResult | None = None
    if step.op is Op.EXTEND:
        try:
            step = flow.send(Round(case.start / 1000, case.finish / 1000, _outcomes(case.replies)))
        except StopIteration as stop:
            result = stop.value
    code = None if result is None else result.deadline
    if code is None:  # a failed extension releases
        assert isinstance(step, Fanout)
        assert step.op is Op.RELEASE
    assert bool(extended) == (code is not None)
    if code is not None:
        assert code * 1000 - 1 < model_deadline <= code * 1000 + 1e-6


@pytest.mark.parametrize("case", DRAWS, ids=_ids(DRAWS))
def test_draw_fence(
    model: dict[tuple[str, int], list[int]], case: tuple[str, tuple[int | None, ...]]
) -> None:
    _, counters = case
    outcomes = _outcomes([G if c is not None else X for c in counters], counters)
    token, stuck = draw_fence(outcomes)
    assert model["draw", DRAWS.index(case)] == [token, int(stuck)]


@pytest.mark.parametrize("case", COMMITS, ids=_ids(COMMITS))
def test_fence_committed(
    model: dict[tuple[str, int], list[int]],
    case: tuple[str, tuple[int | None, ...], tuple[bool, ...]],
) -> None:
    _, counters, confirmed = case
    acquired = _outcomes([G if c is not None else X for c in counters], counters)
    committed = _outcomes([D if ok else N for ok in confirmed])
    token, _ = draw_fence(acquired)
    assert model["commit", COMMITS.index(case)] == [
        token,
        int(fence_committed(acquired, committed)),
    ]


# --- the server's side: the Lua scripts on a real server --------------------------------


@pytest.fixture
def client(servers: LocalServerGroup) -> Iterator[redis.Redis]:
    server = next(iter(servers))
    connection = redis.Redis(host=server.host, port=server.port, socket_timeout=5)
    yield connection
    connection.close()


def _pinned(source: str, case: AcquireScript) -> str:
    """``source`` behind a shim that answers TIME and INFO as the case says; every other
    command goes to the server. A local ``redis`` shadows the global in the chunk."""
    seconds, ms = divmod(case.now, 1000)
    return f"""\
local quorumlock_server = redis
local redis = setmetatable({{}}, {{__index = quorumlock_server}})
redis.call = function(command, ...)
    local name = string.lower(command)
    if name == "time" then
        return {{"{seconds}", "{ms * 1000}"}}
    elseif name == "info" then
        local section = ...
        if section == "server" then
            return "run_id:pinned\\r\\nuptime_in_seconds:{case.uptime}\\r\\n"
        elseif section == "stats" then
            return "evicted_keys:1\\r\\n"
        elseif section == "cluster" then
            return "cluster_enabled:0\\r\\n"
        end
        return ""
    end
    return quorumlock_server.call(command, ...)
end
{source}"""


@pytest.mark.parametrize("case", ACQUIRE_SCRIPTS, ids=_ids(ACQUIRE_SCRIPTS))
def test_acquire_script(
    model: dict[tuple[str, int], list[int]], client: redis.Redis, case: AcquireScript
) -> None:
    key, marker = "tie:lock", "tie:marker"
    if case.present:
        client.hset(
            marker, mapping={"run_id": f"run{case.mrun}", "since": case.since, "fence": case.fence}
        )
        if case.declared:
            client.hset(marker, "max_ttl", case.declared)
        if case.over:
            client.hset(marker, "over", case.over)
    if not case.free:
        client.set(key, "someone else", px=60_000)
    raw = client.eval(
        _pinned(ACQUIRE.source, case),
        2,
        key,
        marker,
        "ours",
        1000,
        case.maxttl,
        int(case.fencing),
        f"run{case.prun}",
        int(case.durable),
    )
    reply, _, counter, _ = interpret(Op.ACQUIRE, raw)
    stored = client.hmget(marker, ["since", "max_ttl", "fence"])
    since, declared, fence = (int(v) if v is not None else 0 for v in stored)
    granted, left, m_since, m_declared, m_fence = model["script", ACQUIRE_SCRIPTS.index(case)]
    # granted with neither a quarantine nor a counter, the script answers 1 alone
    assert (raw == 1) == (granted == 1 and left == 0 and m_fence == 0)
    fields = [1, 0, 0] if raw == 1 else raw
    assert (fields[0], fields[1], fields[2]) == (granted, left, m_fence)
    assert (since, declared) == (m_since, m_declared)
    if case.fencing:
        assert fence == m_fence
    assert reply is (Q if left > 0 else G if granted else X)
    assert counter == (m_fence or None)
    assert (client.get(key) == b"ours") == bool(granted)


def _token(n: int) -> str:
    return f"token{n}"


@pytest.mark.parametrize("case", COMPARES, ids=_ids(COMPARES))
@pytest.mark.parametrize("script", [RELEASE, EXTEND], ids=["release", "extend"])
def test_compare_scripts(
    model: dict[tuple[str, int], list[int]],
    client: redis.Redis,
    script: object,
    case: tuple[str, int, int],
) -> None:
    _, held, tok = case
    if held:
        client.set("tie:lock", _token(held), px=60_000)
    args = ("0",) if script is RELEASE else (5000,)
    raw = client.eval(script.source, 1, "tie:lock", _token(tok), *args)  # type: ignore[attr-defined]
    (expected,) = model["compare", COMPARES.index(case)]
    assert raw == expected
    value = client.get("tie:lock")
    if script is RELEASE:
        assert value == (None if expected or not held else _token(held).encode())
    else:  # never re-created, never taken over; the ttl reset iff it answered 1
        assert value == (_token(held).encode() if held else None)
        if expected:
            assert 0 < client.pttl("tie:lock") <= 5000


@pytest.mark.parametrize("case", COMMIT_SCRIPTS, ids=_ids(COMMIT_SCRIPTS))
def test_commit_script(
    model: dict[tuple[str, int], list[int]],
    client: redis.Redis,
    case: tuple[str, int, int, int, int],
) -> None:
    _, held, tok, counter, token = case
    if held:
        client.set("tie:lock", _token(held), px=60_000)
    if counter:
        client.hset("tie:marker", "fence", counter)
    raw = client.eval(COMMIT_FENCE.source, 2, "tie:lock", "tie:marker", _token(tok), token)
    stored = client.hget("tie:marker", "fence")
    assert [raw, int(stored or 0)] == model["commitscript", COMMIT_SCRIPTS.index(case)]
