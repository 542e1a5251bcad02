"""Reading a server's answers to the session probe (``quorumlock._io.incarnation``), in
both of the forms redis-py gives them: RESP3's maps (redis-py 8's default) and RESP2's
flat lists (before 8, or ``?protocol=2``). The suite's servers answer in the newest
redis-py's form only; CI's run with the oldest redis-py admitted meets the other."""

from __future__ import annotations

import logging

import pytest
from redis import exceptions as rx

from quorumlock._algorithm.flows import Session
from quorumlock._algorithm.outcomes import MARKER_OF_ANOTHER_TYPE, Reply
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import MarkerOfAnotherType, translate
from quorumlock._io.incarnation import (
    SameServerCheck,
    _check_scripting,
    _config_pairs,
    _evicts,
    _info_field,
    _session,
    eviction_risk,
    noeviction_use,
    session_from,
)

INFO = b"# Server\r\nredis_version:7.2.4\r\nrun_id:abc123\r\nuptime_in_seconds:42\r\n"
NEVER_PROMOTED = "# Replication\r\nrole:master\r\nmaster_replid:r1\r\nsecond_repl_offset:-1\r\n"
PROMOTED = "# Replication\r\nrole:master\r\nmaster_replid:r2\r\nsecond_repl_offset:1234\r\n"
A_REPLICA = "# Replication\r\nrole:slave\r\nmaster_replid:r3\r\nsecond_repl_offset:1234\r\n"


def test_an_info_field_from_text_or_a_parsed_dict() -> None:
    assert _info_field(INFO, "run_id") == "abc123"
    assert _info_field(INFO.decode(), "uptime_in_seconds") == "42"
    assert _info_field(INFO, "run") == ""  # a whole name, not a prefix
    assert _info_field(INFO, "missing") == ""
    assert _info_field({"run_id": b"abc123"}, "run_id") == "abc123"
    assert _info_field({}, "run_id") == ""


@pytest.mark.parametrize(
    "reply",
    [
        {b"appendonly": b"yes", b"appendfsync": b"always"},  # RESP3: a map
        [b"appendonly", b"yes", b"appendfsync", b"always"],  # RESP2: name, value, ...
        (b"appendonly", b"yes", b"appendfsync", b"always"),
    ],
    ids=["resp3", "resp2", "tuple"],
)
def test_config_pairs_in_either_form(reply: object) -> None:
    assert _config_pairs(reply) == {"appendonly": "yes", "appendfsync": "always"}
    assert session_from(INFO, reply).durable


def test_config_pairs_of_anything_else_are_none() -> None:
    assert _config_pairs(b"OK") == {}
    assert _config_pairs(None) == {}


@pytest.mark.parametrize(
    ("pairs", "durable"),
    [
        ([b"appendonly", b"yes", b"appendfsync", b"always"], True),
        ([b"appendfsync", b"always", b"appendonly", b"yes"], True),  # any order
        ([b"appendonly", b"yes", b"appendfsync", b"everysec"], False),
        ([b"appendonly", b"no", b"appendfsync", b"always"], False),
        ([b"appendonly", b"yes"], False),
        ([], False),
    ],
)
def test_only_an_fsync_of_every_write_is_durable(pairs: list[bytes], durable: bool) -> None:
    assert session_from(INFO, pairs).durable is durable
    as_map = dict(zip(pairs[::2], pairs[1::2], strict=True))
    assert session_from(INFO, as_map).durable is durable


def test_a_refused_config_is_not_durable() -> None:
    refused = rx.ResponseError("NOPERM this user has no permissions to run the 'config' command")
    assert session_from(INFO, refused, PROMOTED) == Session("abc123", False, "r2")


def test_an_info_without_run_id_is_refused() -> None:
    with pytest.raises(ValueError, match="no run_id"):
        session_from("# Server\r\nredis_version:7.2.4\r\n", {})


@pytest.mark.parametrize(
    ("replication", "promotion"),
    [(NEVER_PROMOTED, ""), (PROMOTED, "r2"), (A_REPLICA, ""), ("", "")],
    ids=["never-promoted", "promoted", "a-replica", "not-read"],
)
def test_a_promotion_is_a_master_with_a_second_history(replication: str, promotion: str) -> None:
    assert session_from(INFO, {}, replication).promotion == promotion


@pytest.mark.parametrize(
    ("policy", "maxmemory", "risk"),
    [
        ("allkeys-lru", 100, "maxmemory-policy allkeys-lru with maxmemory 100"),
        ("volatile-ttl", 1, "maxmemory-policy volatile-ttl with maxmemory 1"),
        ("noeviction", 100, None),
        ("allkeys-lru", 0, None),  # no maxmemory: nothing is evicted
        ("", 100, None),  # not known
    ],
)
def test_eviction_risk(policy: str, maxmemory: int, risk: str | None) -> None:
    assert eviction_risk(policy, maxmemory) == risk
    memory = f"# Memory\r\nmaxmemory:{maxmemory}\r\nmaxmemory_policy:{policy}\r\n"
    assert _evicts(memory) == (risk or "")


def test_an_unreadable_memory_reply_is_no_risk() -> None:
    assert _evicts(rx.ResponseError("NOPERM")) == ""
    assert _evicts("maxmemory:lots\r\nmaxmemory_policy:allkeys-lru\r\n") == ""


def test_noeviction_use_counts_what_the_server_counts() -> None:
    memory = {
        "maxmemory_policy": "noeviction",
        "maxmemory": 1000,
        "used_memory": 900,
        "mem_not_counted_for_evict": 100,
    }
    assert noeviction_use(memory) == (800, 1000)
    assert noeviction_use({**memory, "maxmemory": 0}) is None
    assert noeviction_use({**memory, "maxmemory_policy": "allkeys-lru"}) is None
    assert noeviction_use({"maxmemory_policy": b"noeviction", "maxmemory": 10}) == (0, 10)


def test_a_renamed_eval_or_evalsha_is_raised_and_other_errors_are_not() -> None:
    _check_scripting([1, rx.ResponseError("NOSCRIPT No matching script")])
    unknown = rx.ResponseError("ERR unknown command 'EVALSHA', with args beginning with: ")
    with pytest.raises(rx.ResponseError) as raised:
        _check_scripting([1, unknown])
    assert raised.value is unknown


def test_the_probe_s_seven_replies() -> None:
    memory = "maxmemory:100\r\nmaxmemory_policy:allkeys-lru\r\n"
    config = [b"appendonly", b"no"]
    session = _session([INFO, config, PROMOTED, memory, 1, 1, b"abc123"], required=True)
    assert session == Session(
        "abc123", False, "r2", "maxmemory-policy allkeys-lru with maxmemory 100"
    )
    assert _session([INFO, config, NEVER_PROMOTED, "", 1, 1, None], required=True) == Session(
        "abc123"
    )
    refused = rx.ResponseError("NOPERM this user has no permissions to run the 'info' command")
    for replies in (
        [refused, config, PROMOTED, memory, 1, 1, None],
        [INFO, config, refused, memory, 1, 1, None],
    ):
        with pytest.raises(rx.ResponseError):
            _session(replies, required=True)
        assert _session(replies, required=False) is None


def test_a_marker_of_another_type_fails_where_the_session_is_needed() -> None:
    """The HMGET of the marker: WRONGTYPE (an application's key of that name) fails the
    connection where the quarantine or fencing needs the session, with the error that
    names the marker; any other error reply (an ACL without the key) leaves it alone."""
    config = [b"appendonly", b"no"]
    wrong = rx.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
    replies = [INFO, config, NEVER_PROMOTED, "", 1, 1, wrong]
    with pytest.raises(MarkerOfAnotherType) as raised:
        _session(replies, required=True)
    assert translate(raised.value) == (Reply.FATAL, MARKER_OF_ANOTHER_TYPE)
    assert _session(replies, required=False) == Session("abc123")
    denied = rx.NoPermissionError("No permissions to access a key")
    assert _session([*replies[:-1], denied], required=True) == Session("abc123")


def test_an_evicting_server_is_warned_of_once_per_server(caplog: pytest.LogCaptureFixture) -> None:
    check = SameServerCheck(["redis://a:1", "redis://b:2"])
    evicting = Session("r1", evicts="maxmemory-policy allkeys-lru with maxmemory 100")
    with caplog.at_level(logging.WARNING, logger="quorumlock"):
        for _ in range(3):  # a connection after another
            check.note(0, evicting)
        check.note(1, Session("r2", evicts="maxmemory-policy volatile-lru with maxmemory 9"))
        check.note(1, Session("r2"))
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2, warned
    assert warned[0].startswith("redis://a:1 may evict keys")
    assert "restart quarantine" in warned[0]  # allkeys-: the marker may go too
    assert warned[1].startswith("redis://b:2 may evict keys")
    assert "restart quarantine" not in warned[1]


def test_two_servers_that_are_one_process_are_a_configuration_error() -> None:
    check = SameServerCheck(["redis://a:1", "redis://b:2", "redis://c:3"])
    check.note(0, None)  # a server not checked (no INFO): nothing noted
    check.note(2, Session("same"))
    check.note(1, Session("other"))
    assert not check.conflict
    check.check()
    check.note(0, Session("same"))
    assert check.conflict
    with pytest.raises(ConfigurationError, match=r"redis://a:1 and redis://c:3 are the same"):
        check.check()
    check.note(1, Session("same"))  # the first conflict stays the one reported
    with pytest.raises(ConfigurationError, match=r"redis://a:1 and redis://c:3"):
        check.check()
