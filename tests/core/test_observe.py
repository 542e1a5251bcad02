"""Observability, pure parts: clock-anomaly detection and the no-observer fast path."""

from __future__ import annotations

import logging

import pytest

from quorumlock import LockObserver, NodeOutcome, Reply, _observe
from quorumlock._algorithm.flows import Fanout, Op, Round
from quorumlock._observe import (
    STALL,
    WARN_EVERY,
    RoundEvent,
    check_observer,
    clock_anomaly,
    log_round,
    round_hook,
)

TOKEN = "0123456789abcdef0123456789abcdef01234567"


def step(timeout: float = 0.05) -> Fanout:
    return Fanout(Op.ACQUIRE, "orders:42", TOKEN, 10_000, timeout)


def round_(started: float, finished: float) -> Round:
    return Round(started, finished, (NodeOutcome("redis://a:1", Reply.GRANTED, latency=0.001),))


def test_clock_anomaly_flags_stalls_and_backward_clocks_only() -> None:
    assert clock_anomaly(step(), round_(100.0, 100.004)) is None
    assert clock_anomaly(step(), round_(100.0, 100.05 + STALL)) is None  # at the bound
    stalled = clock_anomaly(step(), round_(100.0, 103.0))
    assert stalled is not None
    assert "stalled" in stalled
    assert "2.950 s past its 50 ms timeout" in stalled
    backwards = clock_anomaly(step(), round_(100.0, 99.5))
    assert backwards is not None
    assert "backwards by 0.500 s" in backwards


def test_a_round_in_the_first_contact_grace_is_no_anomaly_until_past_it() -> None:
    """A first round that waited for connections (up to the connect timeout) was given
    that long: only a round that outlasted it by more than STALL is an anomaly."""
    outcomes = round_(100.0, 103.0).outcomes
    assert clock_anomaly(step(), Round(100.0, 103.0, outcomes, allowed=3.0)) is None
    assert clock_anomaly(step(), Round(100.0, 103.9, outcomes, allowed=3.0)) is None
    stalled = clock_anomaly(step(), Round(100.0, 105.0, outcomes, allowed=3.0))
    assert stalled is not None
    assert "2.000 s past its 3000 ms wait for first contact" in stalled
    # (a round allowed less than its timeout still had its timeout)
    stalled = clock_anomaly(step(), Round(100.0, 103.0, outcomes, allowed=0.01))
    assert stalled is not None
    assert "2.950 s past its 50 ms timeout" in stalled


def test_log_round_warns_of_a_stalled_round(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_observe, "_WARNED", {})
    monkeypatch.setattr(_observe, "_HELD_BACK", {})
    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        log_round(step(), round_(100.0, 100.004))
        assert [r.levelno for r in caplog.records] == [logging.DEBUG]
        debug = caplog.records[0].getMessage()
        assert debug.startswith(f"acquire 'orders:42' token={TOKEN[:8]}… in 4.00 ms: ")
        assert "redis://a:1: granted" in debug
        caplog.clear()
        log_round(step(), round_(100.0, 103.0))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "clock anomaly in acquire of lock 'orders:42'" in warnings[0].getMessage()
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


def test_the_rounds_of_one_stall_make_one_warning_and_the_next_counts_them(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stall of a process with many rounds under way (a thousand tasks, or a loop that
    ran them all in one turn) made a warning per round: now at most one every
    WARN_EVERY seconds, and the next says how many were held back; every round keeps
    its debug line."""
    monkeypatch.setattr(_observe, "_WARNED", {})
    monkeypatch.setattr(_observe, "_HELD_BACK", {})
    with caplog.at_level(logging.DEBUG, logger="quorumlock"):
        for i in range(1000):
            log_round(step(), round_(100.0 + i / 1000, 103.0 + i / 1000))
        log_round(step(), round_(100.0 + WARN_EVERY, 103.0 + WARN_EVERY))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert warnings[0].endswith("or the clock jumped")
    assert warnings[1].endswith("(999 more since the last such warning, held back)")
    assert len([r for r in caplog.records if r.levelno == logging.DEBUG]) == 1001


def test_a_round_every_server_answered_still_ends_a_run_of_unanswered_acquires(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is warned of after a round every server answered, but it ends a run of
    acquires no server answered: the next such acquire starts a new run, warned of only
    once that one has lasted UNREACHABLE_AFTER."""
    monkeypatch.setattr(_observe, "_UNANSWERED", {})
    monkeypatch.setattr(_observe, "_WARNED", {})
    timeout = NodeOutcome("redis://a:1", Reply.TIMEOUT, "no reply in time")
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        log_round(step(), Round(100.0, 100.01, (timeout,)))
        assert _observe._UNANSWERED == {"redis://a:1": (100.01, 100.01)}
        log_round(step(), round_(200.0, 200.004))  # answered
        assert _observe._UNANSWERED == {}
        log_round(step(), Round(300.0, 300.01, (timeout,)))  # a new run: not warned of
    assert caplog.records == []
    assert _observe._UNANSWERED == {"redis://a:1": (300.01, 300.01)}


def test_a_run_of_unanswered_acquires_spans_locks_but_not_a_long_pause(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The servers' run of unanswered acquires goes on from one lock to the next, and
    the warning says how long it lasted and which lock's acquire was the last; rounds
    that resume after a pause longer than STREAK_GAP begin a new run (an hour later,
    nothing says the servers did not answer meanwhile)."""
    monkeypatch.setattr(_observe, "_UNANSWERED", {})
    monkeypatch.setattr(_observe, "_WARNED", {})
    timeout = (NodeOutcome("redis://a:1", Reply.TIMEOUT, "no reply in time"),)
    other = Fanout(Op.ACQUIRE, "orders:43", TOKEN, 10_000, 0.05)
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        t = 100.0
        while t < 103.0:  # orders:42, 3 s
            log_round(step(), Round(t, t + 0.05, timeout))
            t += 0.25
        while t < 106.0:  # then orders:43, 3 s more
            log_round(other, Round(t, t + 0.05, timeout))
            t += 0.25
        (warned,) = [r.getMessage() for r in caplog.records]
        assert warned.startswith(
            "no server answered acquires for 5.0 s (the last: lock 'orders:43'): "
        )
        caplog.clear()
        monkeypatch.setattr(_observe, "_WARNED", {})
        t += _observe.STREAK_GAP + 1.0  # long after: a run of its own
        log_round(other, Round(t, t + 0.05, timeout))
        log_round(other, Round(t + 4.0, t + 4.05, timeout))
    assert caplog.records == []
    runs = _observe._UNANSWERED
    assert runs == {"redis://a:1": (t + 0.05, t + 4.05)}


def test_a_server_in_quarantine_is_warned_of_among_servers_that_answered(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_observe, "_WARNED", {})
    outcomes = (
        NodeOutcome("redis://a:1", Reply.GRANTED, latency=0.001),
        NodeOutcome("redis://b:1", Reply.QUARANTINED, "restart quarantine: a restart"),
        NodeOutcome("redis://c:1", Reply.GRANTED, latency=0.001),
    )
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        log_round(step(), Round(100.0, 100.004, outcomes))
    assert [r.getMessage().split(":", 2)[:2] for r in caplog.records] == [["redis", "//b"]]
    assert "counts toward no quorum: restart quarantine" in caplog.records[0].getMessage()


def test_without_an_observer_the_round_hook_is_the_logger_itself() -> None:
    """Zero cost when no observer is set: not even a wrapper around the logging."""
    assert round_hook(log_round, None) is log_round


def test_round_hook_logs_then_tells_the_observer() -> None:
    seen: list[RoundEvent] = []
    logged: list[Fanout] = []

    class Rounds(LockObserver):
        def on_round(self, event: RoundEvent) -> None:
            seen.append(event)

    hook = round_hook(lambda s, r: logged.append(s), Rounds())
    hook(step(), round_(100.0, 100.004))
    assert len(logged) == 1
    assert len(seen) == 1
    assert seen[0].name == "orders:42"
    assert seen[0].op == "acquire"
    assert seen[0].seconds == pytest.approx(0.004)
    assert seen[0].outcomes[0].latency == 0.001


def test_observers_are_checked() -> None:
    assert check_observer(None) is None

    class Partial:
        def on_acquire(self, event: object) -> None:
            pass

    with pytest.raises(TypeError, match="on_extend, on_release, on_lost, on_round"):
        check_observer(Partial())

    class Nothing(LockObserver):
        pass  # every method inherited: a no-op

    observer = Nothing()
    assert check_observer(observer) is observer
    observer.on_acquire(None)  # type: ignore[arg-type]
    # The class for an instance (observer=Stats for observer=Stats()) passed the check,
    # and every event was then an error logged and ignored: no event reached it.
    with pytest.raises(TypeError, match=r"Nothing\(\)"):
        check_observer(Nothing)
