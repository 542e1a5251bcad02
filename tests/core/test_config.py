"""Validation of user input: precise exceptions, raised before any network call."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
import redis

from quorumlock import ConfigurationError, RedlockConfig
from quorumlock._algorithm.config import (
    MAX_NAME_BYTES,
    MAX_TIMEOUT_SECONDS,
    MAX_TTL_SECONDS,
    QUEUE_RESERVED_PREFIX,
    RESERVED_PREFIX,
    RESERVED_PREFIXES,
    bounded_timeout,
    check_wait,
    seconds,
    shown,
    to_ttl_ms,
    validate_name,
)
from quorumlock._algorithm.election import TERM_PREFIX
from quorumlock._algorithm.scripts import MARKER_KEY, QUEUE_EXPIRY_PREFIX, QUEUE_PREFIX, RW_PREFIX
from quorumlock._algorithm.semaphore import SEMAPHORE_PREFIX
from quorumlock._fence import RedisFence


@pytest.mark.parametrize(
    "name", ["orders:42", "x", "ключ", "a b", "{tag}:1", "quorumlock:job", "quorumlock:released:x"]
)
def test_good_names(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "a\x00b", "quorumlock:incarnation", "quorumlock:incarnation:{1}"]
)
def test_bad_names(name: str) -> None:
    with pytest.raises(ConfigurationError):
        validate_name(name)


@pytest.mark.parametrize("name", [None, b"orders", 42, ["a"]])
def test_names_must_be_text(name: object) -> None:
    with pytest.raises(TypeError, match="str"):
        validate_name(name)


@pytest.mark.parametrize(
    ("value", "ms"),
    [(10, 10_000), (10.0, 10_000), (0.25, 250), (timedelta(seconds=3), 3000), (1.0004, 1000)],
)
def test_ttl_in_milliseconds(value: object, ms: int) -> None:
    assert to_ttl_ms(value, 0.01) == ms


@pytest.mark.parametrize("value", [0, -1, -0.5, math.nan, math.inf, timedelta(0)])
def test_bad_ttl_values(value: object) -> None:
    with pytest.raises(ConfigurationError, match="ttl"):
        to_ttl_ms(value, 0.01)


@pytest.mark.parametrize("value", ["10", None, True, [1]])
def test_bad_ttl_types(value: object) -> None:
    with pytest.raises(TypeError, match="ttl"):
        to_ttl_ms(value, 0.01)


@pytest.mark.parametrize("value", [0.001, 0.002])
def test_ttl_that_could_never_be_valid_is_refused(value: float) -> None:
    with pytest.raises(ConfigurationError, match="too short"):
        to_ttl_ms(value, 0.01)


def test_shortest_ttl_accepted() -> None:
    assert to_ttl_ms(0.003, 0.01) == 3


def test_zero_allowed_only_where_asked() -> None:
    assert seconds(0, "timeout", allow_zero=True) == 0.0
    with pytest.raises(ConfigurationError, match=">= 0"):
        seconds(-1, "timeout", allow_zero=True)


@pytest.mark.parametrize(
    ("blocking", "timeout", "wait"),
    [(True, None, None), (True, math.inf, None), (True, 1.5, 1.5), (True, 0, 0.0),
     (False, None, None), (False, math.inf, None)],
)  # fmt: skip
def test_wait_bounds(blocking: bool, timeout: float | None, wait: float | None) -> None:
    """``math.inf`` is no limit, as None is, with ``blocking=False`` too."""
    assert check_wait(blocking, timeout) == wait


@pytest.mark.parametrize("timeout", [-1, -0.5, -math.inf, timedelta(seconds=-1)])
def test_a_negative_timeout_says_how_to_wait_without_a_limit(timeout: object) -> None:
    """threading's ``acquire(timeout=-1)`` means no limit; here None (or ``math.inf``)
    does, and the refusal says so (it said only "must be >= 0")."""
    with pytest.raises(ConfigurationError, match=r">= 0, .*None .*no limit"):
        check_wait(True, timeout)


@pytest.mark.parametrize("timeout", [0, 1.5, timedelta(seconds=1)])
def test_a_finite_timeout_with_blocking_false_is_refused(timeout: object) -> None:
    with pytest.raises(ConfigurationError, match="blocking=False"):
        check_wait(False, timeout)


def test_config_defaults() -> None:
    config = RedlockConfig()
    assert config.clock_drift_factor == 0.01
    assert config.retry_delay == 0.2
    assert config.retry_count is None
    assert config.instance_timeout is None
    assert config.timeout_for(10_000) == pytest.approx(0.05)
    assert RedlockConfig(instance_timeout=0.3).timeout_for(10_000) == 0.3


@pytest.mark.parametrize(
    "options",
    [
        {"clock_drift_factor": -0.1},
        {"clock_drift_factor": 1.0},
        {"retry_delay": 0},
        {"retry_count": -1},
        {"instance_timeout": 0},
        {"connect_timeout": math.inf},
        {"busy_poll": -1},
    ],
)
def test_bad_config_values(options: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        RedlockConfig(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "option", ["instance_timeout", "connect_timeout", "retry_delay", "busy_poll"]
)
def test_timeouts_beyond_an_hour_are_refused(option: str) -> None:
    """The sync fan-out's poll takes a C int of milliseconds and a socket's timeout a
    time_t: instance_timeout=1e9 was accepted, and every acquire raised OverflowError
    after its scripts were sent (the lock left on every server for its ttl)."""
    with pytest.raises(ConfigurationError, match=f"{option} must be at most 3600 s"):
        RedlockConfig(**{option: 1e9})  # type: ignore[arg-type]
    assert getattr(RedlockConfig(**{option: 3600}), option) == 3600  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [
        {"clock_drift_factor": "0.01"},
        {"retry_count": 1.5},
        {"retry_count": True},
        {"retry_delay": "1"},
    ],
)
def test_bad_config_types(options: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        RedlockConfig(**options)  # type: ignore[arg-type]


def test_configuration_error_is_a_value_error() -> None:
    assert issubclass(ConfigurationError, ValueError)


def test_wake_on_release_must_be_a_bool() -> None:
    assert RedlockConfig().wake_on_release is True
    with pytest.raises(TypeError, match="wake_on_release"):
        RedlockConfig(wake_on_release=1)  # type: ignore[arg-type]


def test_the_reserved_prefix_is_the_marker_key() -> None:
    assert MARKER_KEY.startswith(RESERVED_PREFIX)


def test_every_prefix_of_our_own_keys_is_reserved() -> None:
    client = redis.Redis()  # never connects: RedisFence only keeps it
    ours = [MARKER_KEY, RW_PREFIX + "{doc}", SEMAPHORE_PREFIX + "jobs:0", TERM_PREFIX + "db"]
    ours += [RedisFence(client, "x").fence_key, QUEUE_PREFIX + "x", QUEUE_EXPIRY_PREFIX + "x"]
    for key in ours:
        assert any(key.startswith(prefix) for prefix in RESERVED_PREFIXES), key
        with pytest.raises(ConfigurationError, match="quorumlock keeps for its own keys"):
            validate_name(key)
    for fine in ("quorumlock", "quorumlock:verify:lock", "orders:quorumlock:rw:1", "rw:1"):
        assert validate_name(fine) == fine


def test_names_in_the_queues_prefix_are_refused() -> None:
    assert QUEUE_PREFIX.startswith(QUEUE_RESERVED_PREFIX)
    assert QUEUE_EXPIRY_PREFIX.startswith(QUEUE_RESERVED_PREFIX)
    with pytest.raises(ConfigurationError, match="the queues of waiters"):
        validate_name(QUEUE_PREFIX + "orders")
    assert validate_name("quorumlock-queue") == "quorumlock-queue"


def test_fair_must_be_a_bool_and_needs_the_queue() -> None:
    assert RedlockConfig().fair is False
    with pytest.raises(TypeError, match="fair"):
        RedlockConfig(fair=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="wake_on_release"):
        RedlockConfig(fair=True, wake_on_release=False)


def test_the_bounds_of_a_name_a_ttl_and_a_timeout_are_inclusive() -> None:
    """The largest name, ttl and timeout allowed are allowed; one more is not."""
    assert validate_name("n" * MAX_NAME_BYTES) == "n" * MAX_NAME_BYTES
    with pytest.raises(ConfigurationError, match="longer than 4096 bytes"):
        validate_name("n" * (MAX_NAME_BYTES + 1))
    wide = "é" * (MAX_NAME_BYTES // 2)  # two bytes each: exactly the bound
    assert validate_name(wide) == wide
    with pytest.raises(ConfigurationError, match="is 4098 bytes of UTF-8"):
        validate_name(wide + "é")
    assert to_ttl_ms(MAX_TTL_SECONDS, 0.01) == MAX_TTL_SECONDS * 1000
    with pytest.raises(ConfigurationError, match="at most"):
        to_ttl_ms(MAX_TTL_SECONDS + 1, 0.01)
    assert bounded_timeout(MAX_TIMEOUT_SECONDS, "timeout") == MAX_TIMEOUT_SECONDS
    with pytest.raises(ConfigurationError, match="at most 3600 s"):
        bounded_timeout(MAX_TIMEOUT_SECONDS + 0.5, "timeout")


def test_a_ttl_must_exceed_its_drift_allowance() -> None:
    """With no drift factor, the 2 ms floor: 2 ms is refused, 3 ms is the shortest ttl."""
    with pytest.raises(ConfigurationError, match="too short"):
        to_ttl_ms(0.002, 0.0)
    assert to_ttl_ms(0.003, 0.0) == 3


def test_long_names_are_shortened_in_messages() -> None:
    assert shown("n" * 100) == repr("n" * 100)
    assert shown("n" * 101) == f"{'n' * 80!r}…(101 characters)"


HUGE = 10**400  # an int beyond any float: float(HUGE) raises OverflowError


@pytest.mark.parametrize(
    "check",
    [
        lambda: to_ttl_ms(HUGE, 0.01),
        lambda: to_ttl_ms(-HUGE, 0.01),
        lambda: check_wait(True, HUGE),
        lambda: seconds(HUGE, "clock_skew", allow_zero=True),
        lambda: RedlockConfig(retry_delay=HUGE),
        lambda: RedlockConfig(instance_timeout=HUGE),
        lambda: RedlockConfig(connect_timeout=HUGE),
        lambda: RedlockConfig(busy_poll=HUGE),
        lambda: RedlockConfig(max_ttl=HUGE),
    ],
)
def test_an_int_too_large_for_a_float_is_a_configuration_error(check: Any) -> None:
    """Bad input is a ConfigurationError (a ValueError), not the OverflowError of
    ``float()``, and the message does not print all 401 digits."""
    with pytest.raises(ConfigurationError, match=r"finite, not -?10+…\(40[12] digits\)"):
        check()


@pytest.mark.parametrize(("max_ttl", "factor"), [(0.001, 0.01), (0.002, 0.0), (0.004, 0.5)])
def test_a_max_ttl_that_admits_no_lock_is_refused(max_ttl: float, factor: float) -> None:
    with pytest.raises(ConfigurationError, match=r"max_ttl=.* s admits no lock"):
        RedlockConfig(max_ttl=max_ttl, clock_drift_factor=factor)


def test_the_shortest_max_ttl_admits_the_shortest_ttl() -> None:
    config = RedlockConfig(max_ttl=0.003)
    assert config.ttl_ms(0.003) == 3
    with pytest.raises(ConfigurationError, match="too short"):
        config.ttl_ms(0.002)
