"""The fault-injection suite on real servers and real processes.

The CI matrix runs every nemesis against the safe configuration (restart quarantine and
fencing on) and asserts that the checker found nothing, and runs the two cells that are
*expected* to fail, asserting that they do: without the quarantine, ``kill-restart``
must produce overlapping holds; without fencing, ``pause-clients`` must get stale writes
accepted by the resource. A suite that cannot make the unsafe configurations fail would
prove nothing about the safe one.

Each run takes about 4 s of contention (2 s without a nemesis) plus 1-2 s of set-up and
tear-down.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from quorumlock.testing import NEMESES, VerifyReport, format_table, verify

DURATION = 4.0


def duration(nemesis: str) -> float:
    """The seconds of contention a cell of the matrix runs: ``none`` injects nothing, so
    half of it shows as much (some 40 acquisitions); a nemesis runs its schedule whole
    (kill-restart's burst and the restarted servers' quarantine need the 4 s)."""
    return DURATION / 2 if nemesis == "none" else DURATION


def children() -> set[int]:
    """PIDs of this process's live children (Linux /proc)."""
    me = str(os.getpid())
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and fields[1] == me and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def explain(report: VerifyReport) -> str:
    return f"{report.summary()}; errors {dict(report.errors)}"


@pytest.mark.slow
@pytest.mark.parametrize("fair", [False, True], ids=["default", "fair"])
@pytest.mark.parametrize("nemesis", NEMESES)
def test_the_safe_configuration_survives_every_nemesis(nemesis: str, fair: bool) -> None:
    """Also with ``fair=True``: its own acquire script (refused to all but the head of
    the line), its waiters' entries lost with a restarted server's memory or left in
    line by a paused process, and still the same."""
    before = children()
    report = verify(nemesis=nemesis, duration=duration(nemesis), fair=fair)
    config = "fair, safe" if fair else "safe"
    assert (report.config, report.quarantine, report.fencing) == (config, True, True)
    assert report.fair is fair  # as every worker ran it
    assert report.overlaps == 0, explain(report)
    assert report.stale_writes_accepted == 0, explain(report)
    assert report.token_order_violations == 0, explain(report)
    assert report.acquisitions > 0, explain(report)
    assert report.writes > 0, explain(report)
    assert report.ok, explain(report)
    assert report.stragglers == 0, explain(report)  # every worker stopped by itself
    if nemesis != "none":
        assert report.faults > 0, explain(report)
    if nemesis == "pause-clients":
        # The paused holders did try to write late: the fence is what stopped them.
        assert report.stale_writes_rejected > 0, explain(report)
    assert children() <= before  # every server and worker of the run is gone


@pytest.mark.slow
def test_without_the_quarantine_kill_restart_breaks_mutual_exclusion() -> None:
    report = verify(nemesis="kill-restart", servers=3, quarantine=False, duration=DURATION)
    assert report.config == "no quarantine"
    assert report.overlaps > 0, explain(report)
    assert not report.safe
    assert not report.ok


@pytest.mark.slow
def test_without_fencing_a_paused_client_writes_stale_data() -> None:
    report = verify(nemesis="pause-clients", fencing=False, duration=DURATION)
    assert report.config == "no fencing"
    assert report.stale_writes_accepted > 0, explain(report)
    assert report.stale_writes_rejected == 0  # there was no fence to reject anything
    assert report.overlaps == 0, explain(report)  # the lock itself was not at fault
    assert not report.ok


@pytest.mark.slow
def test_the_legacy_lock_overlaps_under_kill_restart_where_quorumlock_does_not() -> None:
    # Same nemesis, same seed, same servers count: only the lock differs.
    safe = verify(nemesis="kill-restart", servers=3, duration=DURATION, seed=2026)
    legacy = verify(
        nemesis="kill-restart", servers=3, duration=DURATION, seed=2026, contender="legacy"
    )
    assert (safe.contender, safe.config) == ("quorumlock", "safe")
    assert safe.overlaps == 0, explain(safe)
    assert safe.ok, explain(safe)
    assert (legacy.contender, legacy.config) == ("legacy", "legacy SETNX")
    assert (legacy.quarantine, legacy.fencing) == (False, False)
    assert legacy.faults > 0, explain(legacy)
    # The restarted first server forgot the key: the next SETNX succeeded while the
    # holder still held, and its check-then-DEL release then deleted the newcomer's key.
    assert legacy.overlaps > 0, explain(legacy)
    assert not legacy.safe
    assert "| kill-restart | legacy SETNX | 3 |" in format_table([safe, legacy])


@pytest.mark.parametrize("nemesis", NEMESES)
def test_the_election_survives_every_nemesis(nemesis: str) -> None:
    """Workers campaign instead of locking: never two leaders within validity, terms
    strictly increasing, a paused leader's late write refused by its term."""
    report = verify(nemesis=nemesis, duration=duration(nemesis), election=True)
    assert report.config == "election, safe"
    assert report.overlaps == 0, explain(report)
    assert report.token_order_violations == 0, explain(report)
    assert report.stale_writes_accepted == 0, explain(report)
    assert report.acquisitions > 0, explain(report)
    assert report.ok, explain(report)
    if nemesis != "none":
        assert report.faults > 0, explain(report)


@pytest.mark.slow
def test_an_election_without_the_quarantine_has_two_leaders_under_kill_restart() -> None:
    """The cell that must be caught: the election checker sees overlapping terms."""
    report = verify(
        nemesis="kill-restart", servers=3, quarantine=False, duration=DURATION, election=True
    )
    assert report.config == "election, no quarantine"
    assert report.overlaps > 0, explain(report)
    assert not report.ok


@pytest.mark.parametrize("nemesis", NEMESES)
def test_a_semaphore_never_has_more_than_k_holders(nemesis: str) -> None:
    """Five workers for 2 permits under the nemesis: the K-exclusion checker finds no
    moment with more than 2 holders."""
    report = verify(nemesis=nemesis, servers=3, workers=5, permits=2, duration=duration(nemesis))
    assert report.permits == 2
    assert report.config == "safe, semaphore K=2"
    assert report.overlaps == 0, explain(report)
    assert report.ok, explain(report)
    assert "holders beyond K=2" in report.summary()


@pytest.mark.slow
def test_without_the_quarantine_kill_restart_lets_more_than_k_hold() -> None:
    """The cell that must be caught: restarted servers that forget their slot keys and
    vote again at once let a third holder in beside two."""
    report = verify(
        nemesis="kill-restart", servers=3, workers=5, permits=2, quarantine=False,
        duration=DURATION,
    )  # fmt: skip
    assert report.overlaps > 0, explain(report)
    assert not report.safe


@pytest.mark.slow
def test_an_interrupted_run_leaves_no_process_behind() -> None:
    before = children()
    timers: list[threading.Timer] = []

    def progress(message: str) -> None:
        if message.startswith("running"):
            # SIGINT this process mid-run, while a worker may be SIGSTOPped.
            timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
            timers.append(timer)
            timer.start()

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        verify(nemesis="pause-clients", duration=30.0, progress=progress)
    for timer in timers:
        timer.join(5.0)
    assert time.monotonic() - began < 20.0
    assert children() <= before


def test_verify_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown nemesis"):
        verify(nemesis="meteor")
    with pytest.raises(ValueError, match="servers"):
        verify(nemesis="none", servers=0)
    with pytest.raises(ValueError, match="workers"):
        verify(nemesis="none", workers=0)
    with pytest.raises(ValueError, match="duration"):
        verify(nemesis="none", duration=float("inf"))
    with pytest.raises(ValueError, match="ttl"):
        verify(nemesis="none", ttl=0)
    with pytest.raises(ValueError, match="unknown contender 'zookeeper'"):
        verify(nemesis="none", contender="zookeeper")
    with pytest.raises(ValueError, match="election"):
        verify(nemesis="none", election=True, fencing=False)
    for permits in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="permits"):
            verify(nemesis="none", permits=permits)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lock must be one of 'mutex', 'rw', 'many', not 'set'"):
        verify(nemesis="none", lock="set")
    with pytest.raises(ValueError, match="a multi-resource lock runs on quorumlock only"):
        verify(nemesis="none", lock="many", contender="legacy")
    # Each refusal names what was asked, not every combination it might have been.
    for kwargs, message in [
        (
            {"lock": "rw", "contender": "legacy"},
            "a read-write lock runs on quorumlock only, not on 'legacy'",
        ),
        (
            {"lock": "many", "election": True},
            "a multi-resource lock does not run as an election: lock='many', election=True",
        ),
        (
            {"permits": 2, "contender": "legacy"},
            "a semaphore runs on quorumlock only, not on 'legacy'",
        ),
        (
            {"permits": 2, "election": True},
            "a semaphore does not run as an election: permits=2, election=True",
        ),
        (
            {"permits": 2, "lock": "many"},
            "a semaphore is not a multi-resource lock: permits=2, lock='many'",
        ),
    ]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            verify(nemesis="none", **kwargs)  # type: ignore[arg-type]
    for kwargs, message in [
        ({"seed": "abc"}, "seed must be an int or None, not 'abc'"),
        ({"seed": 1.5}, "seed must be an int or None, not 1.5"),
        ({"duration": True}, "duration must be a number of seconds, not True"),
        ({"ttl": "1"}, "ttl must be a number of seconds, not '1'"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            verify(nemesis="none", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fair must be True or False, not 1"):
        verify(nemesis="none", fair=1)  # type: ignore[arg-type]
    # A switch given as a string would be true: quarantine="no" ran the safe
    # configuration and reported it safe, as the unsafe one the caller asked for.
    for switch in ("quarantine", "fencing", "election"):
        with pytest.raises(ValueError, match=f"^{switch} must be True or False, not 'no'$"):
            verify(nemesis="none", **{switch: "no"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^progress must be a callable or None, not 'print'$"):
        verify(nemesis="none", progress="print")  # type: ignore[arg-type]
    for other in ({"lock": "rw"}, {"lock": "many"}, {"permits": 2}, {"contender": "legacy"}):
        with pytest.raises(ValueError, match="fair orders the waiters of quorumlock's lock"):
            verify(nemesis="none", fair=True, **other)


def test_the_nemeses() -> None:
    assert NEMESES == (
        "none",
        "kill-restart",
        "kill-delayed-restart",
        "pause-servers",
        "pause-clients",
        "latency",
    )


def report(nemesis: str, *, overlaps: int = 0, stale: int = 0, **config: bool) -> VerifyReport:
    return VerifyReport(
        nemesis=nemesis,
        config="safe" if not config else "no fencing",
        servers=5,
        workers=4,
        duration=4.0,
        ttl=1.0,
        quarantine=config.get("quarantine", True),
        fencing=config.get("fencing", True),
        seed=1,
        acquisitions=40,
        acquisitions_per_second=10.0,
        writes=40,
        overlaps=overlaps,
        stale_writes_accepted=stale,
        stale_writes_rejected=3,
        token_order_violations=0,
        longest_gap=1.25,
        faults=7,
    )


def test_format_table() -> None:
    table = format_table([report("pause-clients"), report("pause-clients", stale=2, fencing=False)])
    lines = table.splitlines()
    assert lines[0].startswith("| nemesis | configuration | N | overlaps | stale writes accepted")
    assert lines[2] == "| pause-clients | safe | 5 | 0 | 0 | 3 | 10.0 | 1.25 | 7 | ok |"
    assert lines[3] == (
        "| pause-clients | no fencing | 5 | 0 | 2 | 3 | 10.0 | 1.25 | 7 | **UNSAFE** |"
    )
    assert len(lines) == 4
    assert report("none").ok
    assert not report("none", overlaps=1).safe


@pytest.mark.slow
@pytest.mark.parametrize("nemesis", NEMESES)
def test_the_rwlock_keeps_readers_and_writers_apart_under_faults(nemesis: str) -> None:
    """The "none" cell is also the mutation check's proof that this checker catches a
    server that grants a reader beside a writer (tests/mutation/run.py)."""
    report = verify(nemesis=nemesis, duration=duration(nemesis), lock="rw")
    assert report.config == "rwlock, safe"
    assert report.ok, explain(report)
    assert report.writes > 0, explain(report)
    assert report.stragglers == 0, explain(report)
    if nemesis != "none":
        assert report.faults > 0, explain(report)


@pytest.mark.slow
def test_without_the_quarantine_kill_restart_breaks_the_rwlock_too() -> None:
    """The read-write cell that must be caught: a restarted server forgot the holds and
    grants again at once, so a writer meets a reader or another writer."""
    report = verify(
        nemesis="kill-restart", servers=3, quarantine=False, duration=DURATION, lock="rw"
    )
    assert report.config == "rwlock, no quarantine"
    assert report.overlaps > 0, explain(report)
    assert not report.safe


@pytest.mark.slow
@pytest.mark.parametrize("nemesis", NEMESES)
def test_lock_many_keeps_overlapping_sets_apart_under_faults(nemesis: str) -> None:
    """Workers take random subsets of three names: holders of sets that share a name
    never overlap, and each name's fence sees its holders' tokens in order. The "none"
    cell is also the mutation check's proof that this checker catches a server that
    grants a set while a later name of it is held (tests/mutation/run.py)."""
    report = verify(nemesis=nemesis, duration=duration(nemesis), lock="many")
    assert report.config == "lock_many, safe"
    assert report.overlaps == 0, explain(report)
    assert report.stale_writes_accepted == 0, explain(report)
    assert report.token_order_violations == 0, explain(report)
    assert report.ok, explain(report)
    assert report.writes > 0, explain(report)
    assert report.stragglers == 0, explain(report)
    if nemesis != "none":
        assert report.faults > 0, explain(report)
    if nemesis == "pause-clients":
        assert report.stale_writes_rejected > 0, explain(report)


@pytest.mark.slow
def test_without_the_quarantine_kill_restart_breaks_lock_many_too() -> None:
    """The multi-resource cell that must be caught: a restarted server forgot the set's
    keys and grants an overlapping set at once."""
    report = verify(
        nemesis="kill-restart", servers=3, quarantine=False, duration=DURATION, lock="many"
    )
    assert report.config == "lock_many, no quarantine"
    assert report.overlaps > 0, explain(report)
    assert not report.safe
