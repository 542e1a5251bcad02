"""Lock hand-off, pure parts: the handle, its serialised forms, the adopted validity, and
the LockState export/adopt transitions. No servers, no clock."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quorumlock import ConfigurationError, LockHandle, LockLost, RedlockConfig
from quorumlock._algorithm.handoff import adopted_validity, clock_disagreement
from quorumlock._algorithm.lockstate import LockState, new_token
from tests.core.test_flows import Script, acquire

TOKEN = "0123456789abcdef0123456789abcdef01234567"


def handle(**changes: Any) -> LockHandle:
    fields: dict[str, Any] = {
        "name": "orders:42",
        "token": TOKEN,
        "ttl": 10.0,
        "fencing_token": 7,
        "validity": 9.5,
        "exported_at": 1_000_000.0,
        "servers": ("redis://a:1", "redis://b:1", "redis://c:1"),
    }
    fields.update(changes)
    return LockHandle(**fields)


# --------------------------------------------------------------------------------------
# the handle
# --------------------------------------------------------------------------------------


def test_json_dict_and_pickle_round_trips() -> None:
    h = handle()
    assert LockHandle.from_json(h.to_json()) == h
    assert LockHandle.from_json(h.to_json().encode()) == h
    assert LockHandle.from_dict(json.loads(json.dumps(h.to_dict()))) == h
    assert pickle.loads(pickle.dumps(h)) == h
    without_fence = handle(fencing_token=None)
    assert LockHandle.from_json(without_fence.to_json()) == without_fence
    assert h.to_dict()["quorumlock_handle"] == 1


def test_handle_is_frozen() -> None:
    h = handle()
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.token = "x"  # type: ignore[misc]


def test_repr_shows_only_a_prefix_of_the_token() -> None:
    text = repr(handle())
    assert TOKEN not in text
    assert TOKEN[:8] in text
    assert "orders:42" in text
    assert text.endswith(" fencing_token=7>")
    assert "fencing_token" not in repr(handle(fencing_token=None))


def test_repr_shortens_a_long_name() -> None:
    """Names are shortened in reprs, as in messages and logs (up to 4096 bytes)."""
    text = repr(handle(name="n" * 4000))
    assert "(4000 characters)" in text
    assert len(text) < 300


def test_the_first_fencing_token_is_1() -> None:
    assert handle(fencing_token=1).fencing_token == 1


def test_numbers_are_normalised() -> None:
    h = handle(ttl=10, validity=9, exported_at=5)
    assert isinstance(h.ttl, float)
    assert isinstance(h.validity, float)
    assert isinstance(h.exported_at, float)


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"name": 5}, TypeError, "name must be a str"),
        ({"name": ""}, ConfigurationError, "empty"),
        ({"token": 5}, TypeError, "token must be a str"),
        ({"token": "not-a-token"}, ConfigurationError, "40 hex"),
        ({"token": TOKEN.upper()}, ConfigurationError, "40 hex"),
        ({"ttl": "10"}, TypeError, "ttl"),
        ({"ttl": 0}, ConfigurationError, "ttl"),
        ({"fencing_token": True}, TypeError, "fencing_token"),
        ({"fencing_token": 0}, ConfigurationError, "fencing_token"),
        ({"validity": -1.0}, ConfigurationError, "validity"),
        ({"validity": float("nan")}, ConfigurationError, "validity"),
        ({"exported_at": "now"}, TypeError, "exported_at"),
        ({"exported_at": float("inf")}, ConfigurationError, "exported_at"),
        ({"servers": ["redis://a:1"]}, TypeError, "servers"),
        ({"servers": (1,)}, TypeError, "servers"),
        ({"servers": ()}, ConfigurationError, "servers"),
    ],
)
def test_constructor_validates(changes: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        handle(**changes)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.pop("quorumlock_handle"), "not a quorumlock lock handle"),
        (lambda d: d.update(quorumlock_handle=2), "version 1"),
        (lambda d: d.pop("token"), "missing token"),
        (lambda d: d.update(colour="red"), "unknown colour"),
        (lambda d: d.update(name=5), "malformed lock handle: .*name"),
        (lambda d: d.update(servers="redis://a:1"), "servers must be a list"),
        (lambda d: d.update(token="x" * 40), "40 hex"),
        # ints beyond any float (JSON carries them): not an OverflowError
        (lambda d: d.update(ttl=10**400), "ttl must be finite"),
        (lambda d: d.update(validity=10**400), "validity must be finite"),
        (lambda d: d.update(exported_at=10**400), "exported_at must be finite"),
    ],
)
def test_from_dict_refuses_malformed_data_with_configuration_error(mutate: Any, match: str) -> None:
    data = handle().to_dict()
    mutate(data)
    with pytest.raises(ConfigurationError, match=match):
        LockHandle.from_dict(data)
    with pytest.raises(ConfigurationError, match=match):
        LockHandle.from_json(json.dumps(data))


def test_from_json_and_from_dict_errors() -> None:
    with pytest.raises(ConfigurationError, match="not JSON"):
        LockHandle.from_json("{nope")
    with pytest.raises(ConfigurationError, match="not a JSON object"):
        LockHandle.from_json("[1, 2]")
    with pytest.raises(TypeError):
        LockHandle.from_json(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        LockHandle.from_dict([("name", "x")])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# the adopted validity
# --------------------------------------------------------------------------------------


def test_adopted_validity_worked_example() -> None:
    # The module docstring's timeline: exported with 9.5 s left, adopted 0.3 s later.
    h = handle(validity=9.5, exported_at=1000.0)
    assert adopted_validity(h, now_wall=1000.3, clock_skew=0.0) == pytest.approx(9.2)
    assert adopted_validity(h, now_wall=1000.3, clock_skew=0.05) == pytest.approx(9.15)
    assert adopted_validity(h, now_wall=1010.0, clock_skew=0.0) == pytest.approx(-0.5)


@given(
    validity=st.floats(0, 60),
    exported_at=st.floats(0, 2e9),
    offset=st.floats(-100, 100),
    skew=st.floats(0, 10),
)
def test_adopted_validity_never_exceeds_the_exported_one(
    validity: float, exported_at: float, offset: float, skew: float
) -> None:
    h = handle(ttl=60.0, validity=validity, exported_at=exported_at)
    now_wall = exported_at + offset
    adopted = adopted_validity(h, now_wall=now_wall, clock_skew=skew)
    assert adopted <= validity - skew
    if offset >= 0:  # the time since the export is counted in full
        assert adopted == pytest.approx(validity - offset - skew, abs=1e-6)


@given(true_elapsed=st.floats(0, 30), skew=st.floats(0, 1), error=st.floats(-1, 1))
def test_adopted_validity_is_safe_when_the_clocks_agree_within_the_skew(
    true_elapsed: float, skew: float, error: float
) -> None:
    """If the adopter's wall clock is off by at most ``skew``, the adopted validity ends no
    later than the exported one really does."""
    clock_error = error * skew  # within the allowed skew
    h = handle(ttl=60.0, validity=30.0, exported_at=5000.0)
    adopted = adopted_validity(h, now_wall=5000.0 + true_elapsed + clock_error, clock_skew=skew)
    assert adopted <= 30.0 - true_elapsed + 1e-9
    assert clock_disagreement(h, now_wall=5000.0 + true_elapsed + clock_error, clock_skew=skew) == 0


def test_clock_disagreement_detects_a_handle_from_the_future() -> None:
    h = handle(exported_at=1000.0)
    assert clock_disagreement(h, now_wall=999.0, clock_skew=0.0) == pytest.approx(1.0)
    assert clock_disagreement(h, now_wall=999.0, clock_skew=0.4) == pytest.approx(0.6)
    assert clock_disagreement(h, now_wall=999.0, clock_skew=2.0) == 0.0
    assert clock_disagreement(h, now_wall=1001.0, clock_skew=0.0) == 0.0


# --------------------------------------------------------------------------------------
# LockState: export and adopt
# --------------------------------------------------------------------------------------


def state() -> LockState:
    return LockState(
        name="orders:42", ttl_ms=10_000, servers=5, config=RedlockConfig(), uniform=lambda: 0.5
    )


def test_export_hands_over_and_keep_keeps() -> None:
    s, net = state(), Script(5)
    assert acquire(s, net)
    assert s.deadline is not None
    deadline = s.deadline
    token, validity = s.export(now=net.now, keep=True)
    assert token == s.token
    assert validity == pytest.approx(deadline - net.now)
    assert s.held  # kept
    token2, _ = s.export(now=net.now + 1, keep=False)
    assert token2 == token
    assert not s.held
    assert not s.lost  # handed over, not lost
    with pytest.raises(RuntimeError, match="does not hold"):
        s.export(now=net.now, keep=False)
    with pytest.raises(RuntimeError, match="does not hold"):
        net.run(s.release())
    assert net.ops() == ["acquire"]  # the hand-over sent nothing


def test_export_after_the_validity_ran_out_is_lost() -> None:
    s, net = state(), Script(5)
    assert acquire(s, net)
    assert s.deadline is not None
    with pytest.raises(LockLost, match="expired"):
        s.export(now=s.deadline + 0.001, keep=False)
    assert s.lost


def test_adopt_holds_for_the_validity_given() -> None:
    s, net = state(), Script(5)
    token = new_token()
    s.adopt(token=token, fence=3, validity=4.0, now=net.now)
    assert s.token == token
    assert s.fence == 3
    assert s.validity(net.now + 1) == pytest.approx(3.0)
    with pytest.raises(RuntimeError, match="already held"):
        s.adopt(token=token, fence=3, validity=4.0, now=net.now)
    assert net.run(s.extend(ttl=None, now=net.now)) == pytest.approx(10 - 0.102)
    assert net.steps[-1].token == token  # type: ignore[union-attr]
    assert net.run(s.release())


def test_float_rounding_is_not_a_clock_disagreement() -> None:
    """Found by hypothesis: 5000 + 0 - s, compared back with 5000 - s, is off by 5.6e-16."""
    h = handle(ttl=60.0, validity=30.0, exported_at=5000.0)
    skew = 0.5650939275974446
    assert clock_disagreement(h, now_wall=(5000.0 + 0.0) + -skew, clock_skew=skew) == 0
