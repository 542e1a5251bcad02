"""The sync lock against real servers: the happy paths, the wire format, bad input."""

from __future__ import annotations

import math
import pickle
import socket
import threading
import warnings
from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis

from quorumlock import (
    ConfigurationError,
    LockNotAcquired,
    QuorumLockError,
    QuorumLockWarning,
    Redlock,
    Reply,
)
from quorumlock._algorithm.config import MAX_TTL_SECONDS
from quorumlock._algorithm.scripts import EXTEND, RELEASE
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, decided, settled, values


@pytest.fixture
def rl(servers: LocalServerGroup) -> Iterator[Redlock]:
    # A generous per-instance timeout: these tests are about behaviour, and a loaded CI
    # machine can take longer than the default 20-50 ms to answer.
    with Redlock(servers.urls, instance_timeout=1.0) as manager:
        yield manager


@pytest.mark.parametrize("n", [1, 3, 5])
def test_acquire_sets_our_token_with_the_ttl_on_every_server(
    servers: LocalServerGroup, lock_name: str, n: int
) -> None:
    group = list(servers)[:n]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # odd N: no warning
        rl = Redlock([s.url for s in group], instance_timeout=1.0)
    lock = rl.lock(lock_name, ttl=10)
    assert lock.acquire()
    assert values(group, lock_name) == [lock.token] * n
    for server in group:
        pttl = client_of(server).pttl(lock_name)
        assert 9_000 < pttl <= 10_000
    assert 8.0 < lock.validity < 10.0 - 0.1 + 1e-9
    assert [o.reply for o in lock.outcomes] == [Reply.GRANTED] * n
    assert lock.release()
    assert values(group, lock_name) == [None] * n
    assert lock.validity == 0.0
    rl.close()


def test_token_is_plain_text_for_other_clients(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    # The value is the token as text, readable by Redlock clients in any language.
    lock = rl.lock(lock_name, ttl=5)
    lock.acquire()
    raw = client_of(servers[0]).get(lock_name)
    assert raw == lock.token.encode() if lock.token else False
    assert len(raw or b"") == 40
    lock.release()


def test_context_manager_acquires_and_releases(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    with rl.lock(lock_name, ttl=timedelta(seconds=5), timeout=1) as lock:
        assert lock.held
        assert values(servers, lock_name) == [lock.token] * 5
    assert not lock.held
    assert values(servers, lock_name) == [None] * 5


def test_context_manager_raises_lock_not_acquired_with_outcomes(
    rl: Redlock, lock_name: str
) -> None:
    holder = rl.lock(lock_name, ttl=10)
    assert holder.acquire()
    with pytest.raises(LockNotAcquired) as info, rl.lock(lock_name, ttl=10, timeout=0.3):
        pytest.fail("must not enter")
    assert isinstance(info.value, TimeoutError)
    assert info.value.name == lock_name
    assert [o.reply for o in info.value.outcomes] == [Reply.TAKEN] * 5
    assert lock_name in str(info.value)
    holder.release()


def test_non_blocking_context_manager(rl: Redlock, lock_name: str) -> None:
    holder = rl.lock(lock_name, ttl=10)
    holder.acquire()
    with pytest.raises(LockNotAcquired), rl.lock(lock_name, ttl=10, blocking=False):
        pytest.fail("must not enter")
    holder.release()


def test_lock_not_acquired_pickles_with_its_outcomes(rl: Redlock, lock_name: str) -> None:
    holder = rl.lock(lock_name, ttl=10)
    holder.acquire()
    with pytest.raises(LockNotAcquired) as info, rl.lock(lock_name, ttl=10, blocking=False):
        pass
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is LockNotAcquired
    assert (copy.name, copy.outcomes, str(copy)) == (
        info.value.name,
        info.value.outcomes,
        str(info.value),
    )
    holder.release()


def test_body_exception_still_releases(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    with pytest.raises(ZeroDivisionError), rl.lock(lock_name, ttl=5):
        _ = 1 / 0
    assert values(servers, lock_name) == [None] * 5


def test_extend_resets_the_server_ttl(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    lock = rl.lock(lock_name, ttl=2)
    lock.acquire()
    validity = lock.extend(30)
    assert 29.0 < validity < 30.0

    def reset() -> int:  # (a server the extension did not wait for: a moment later)
        return sum(1 for s in servers if client_of(s).pttl(lock_name) > 25_000)

    # on a majority at least: a server whose script cache was empty answered NOSCRIPT
    # after the round was decided, and gets the EVAL form with the next extension only
    assert settled(reset, 5) >= 3
    lock.release()


def test_release_after_expiry_returns_false(servers: LocalServerGroup, lock_name: str) -> None:
    rl = Redlock(servers.urls)
    lock = rl.lock(lock_name, ttl=0.05)
    assert lock.acquire()
    threading.Event().wait(0.15)
    assert lock.validity == 0.0
    assert lock.release() is False
    rl.close()


def test_release_deletes_only_keys_that_hold_our_token(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    """R9: our key expired on two servers and another client took it there; our release
    deletes ours on the other three and leaves theirs."""
    lock = rl.lock(lock_name, ttl=10)
    assert lock.acquire(blocking=False)
    for server in list(servers)[:2]:
        client = client_of(server)
        client.set(lock_name, "another-client", px=10_000)
        client.close()
    assert lock.release()
    assert values(servers, lock_name) == ["another-client"] * 2 + [None] * 3


def test_usage_errors(rl: Redlock, lock_name: str) -> None:
    lock = rl.lock(lock_name, ttl=5)
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.release()
    with pytest.raises(RuntimeError, match="does not hold"):
        lock.extend()
    lock.acquire()
    with pytest.raises(RuntimeError, match="already held"):
        lock.acquire()
    lock.release()


def test_script_digests_match_a_live_server(servers: LocalServerGroup) -> None:
    client = client_of(servers[0])
    for script in (RELEASE, EXTEND):
        assert client.script_load(script.source) == script.sha


def test_noscript_falls_back_to_eval_and_caches_the_script(
    rl: Redlock, servers: LocalServerGroup, lock_name: str
) -> None:
    lock = rl.lock(lock_name, ttl=5)
    lock.acquire()
    for server in servers:
        client_of(server).script_flush()
    lock.extend()  # EVALSHA -> NOSCRIPT -> EVAL, within the same round
    # decided by a majority: a server whose NOSCRIPT came after the round gets the EVAL
    # form with a next extension on that connection (once that NOSCRIPT was read)
    assert decided([o.reply for o in lock.outcomes], [Reply.DONE] * 5), lock.outcomes

    def cached() -> bool:
        return all(client_of(s).script_exists(EXTEND.sha) == [True] for s in servers)

    for _ in range(20):
        if cached():
            break
        assert lock.extend()
    assert cached()
    assert lock.release()


def test_no_thread_per_request(rl: Redlock, lock_name: str) -> None:
    rl.lock(lock_name, ttl=5).acquire(blocking=False)  # connects (on helper threads)
    before = threading.active_count()
    for _ in range(50):
        lock = rl.lock(lock_name + ":x", ttl=5)
        lock.acquire(blocking=False)
        lock.release()
    assert threading.active_count() <= before


def test_existing_client_objects_are_accepted(servers: LocalServerGroup, lock_name: str) -> None:
    clients = [redis.Redis(host=s.host, port=s.port, decode_responses=True) for s in servers][:3]
    rl = Redlock(clients, instance_timeout=1.0)  # (first contact, every grant expected)
    assert rl.servers == [f"redis://{s.host}:{s.port}" for s in servers][:3]
    with rl.lock(lock_name, ttl=5) as lock:
        assert [o.reply for o in lock.outcomes] == [Reply.GRANTED] * 3
    rl.close()


def test_unix_socket_urls(make_servers: object, lock_name: str) -> None:
    group = make_servers(1, unixsocket=True)  # type: ignore[operator]
    rl = Redlock(group[0].unix_url)
    assert rl.servers == [group[0].unix_url]
    with rl.lock(lock_name, ttl=5) as lock:
        assert lock.outcomes[0].reply is Reply.GRANTED
    rl.close()


@pytest.mark.parametrize("n", [2, 4])
def test_even_n_warns(servers: LocalServerGroup, n: int) -> None:
    with pytest.warns(QuorumLockWarning, match="odd number"):
        Redlock(servers.urls[:n])


# Bad input: precise errors, before any network call. A listening socket that counts
# connections proves that no call reached the network.


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    yield f"redis://127.0.0.1:{sock.getsockname()[1]}", sock
    sock.close()


def assert_never_connected(sock: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        sock.accept()  # a connection attempt would be waiting in the backlog


@pytest.mark.parametrize(
    ("servers_arg", "error", "match"),
    [
        ([], ConfigurationError, "at least one"),
        ([""], ConfigurationError, "empty"),
        (["http://127.0.0.1:6379"], ConfigurationError, "scheme"),
        (["redis://127.0.0.1:notaport"], ConfigurationError, "malformed"),
        (["redis://127.0.0.1:99999"], ConfigurationError, "malformed"),
        (["redis://"], ConfigurationError, "no host"),
        (["redis://127.0.0.1:6379/db"], ConfigurationError, "database number"),
        (["unix://"], ConfigurationError, "no socket path"),
        # redis-py drops a unix URL's host: these would be the sockets /redis.sock, /x.sock
        (["unix://run/redis.sock"], ConfigurationError, "'run' is not part of the socket"),
        (["unix://u:pw@./x.sock"], ConfigurationError, "'.' is not part of the socket"),
        # the command line's form, given as one URL
        (["redis://a:1,redis://b:1"], ConfigurationError, "one URL names one server"),
        ("redis://a,redis://b", ConfigurationError, "one URL names one server"),
        (["redis://127.0.0.1:6379?nonsense_option=1"], ConfigurationError, "malformed"),
        # which one redis-py would use is not what the user can tell
        (["redis://a:1/1?db=2"], ConfigurationError, "database given twice"),
        (["redis://a:1?db=1&db=2"], ConfigurationError, "'db' given twice"),
        (["redis://a:1?socket_timeout=1&socket_timeout=2"], ConfigurationError, "given twice"),
        (["redis://a:1", "redis://A:1/2"], ConfigurationError, "listed twice"),
        ([42], TypeError, "URL or a redis.Redis"),
        (42, TypeError, "servers must be"),
    ],
)
def test_bad_server_arguments(servers_arg: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Redlock(servers_arg)  # type: ignore[arg-type]


def respelled(urls: list[str], even: str, odd: str) -> list[str]:
    """``urls`` (redis://) with their scheme written ``even`` and ``odd`` in turn."""
    return [(odd if i % 2 else even) + url.removeprefix("redis://") for i, url in enumerate(urls)]


def test_a_scheme_in_upper_case_is_accepted(servers: LocalServerGroup, lock_name: str) -> None:
    """URL schemes are case-insensitive (redis-py's parser refused REDIS://, and the error
    blamed a query option)."""
    urls = respelled(servers.urls, "Redis://", "REDIS://")
    rl = Redlock(urls)
    assert rl.servers == servers.urls
    with rl.lock(lock_name, ttl=5) as lock:
        assert [o.reply for o in lock.outcomes].count(Reply.GRANTED) >= 2
    assert Redlock(["UNIX:///tmp/x.sock"]).servers == ["unix:///tmp/x.sock"]
    rl.close()


def test_valkey_py_schemes_name_the_same_servers(servers: LocalServerGroup, lock_name: str) -> None:
    """valkey-py's valkey:// (any case) is redis://, and valkeys:// is rediss://: the
    servers are shown and locked as with those."""
    urls = respelled(servers.urls, "Valkey://", "valkey://")
    rl = Redlock(urls)
    assert rl.servers == servers.urls
    with rl.lock(lock_name, ttl=5) as lock:
        assert values(servers, lock_name).count(lock.token) >= 2
    assert values(servers, lock_name) == [None] * len(servers.urls)
    assert Redlock(["valkeys://u@h:1"]).servers == ["rediss://u@h:1"]
    rl.close()


def test_a_valkey_py_client_is_refused_with_a_hint() -> None:
    """A client object of valkey-py (which has the same API as redis-py's, but other
    classes) is refused, and the message says to give its URL instead."""
    valkey_client = type("Valkey", (), {"__module__": "valkey.client"})()
    with pytest.raises(TypeError, match=r"not Valkey \(valkey-py's clients .* URL\)"):
        Redlock([valkey_client])


def test_passwords_never_appear_in_errors_or_labels() -> None:
    with pytest.raises(ConfigurationError) as info:
        Redlock(["redis://user:hunter2@127.0.0.1:1/x"])
    assert "hunter2" not in str(info.value)
    assert "***" in str(info.value)
    rl = Redlock(["redis://user:hunter2@127.0.0.1:1"])
    assert rl.servers == ["redis://user@127.0.0.1:1"]
    assert "hunter2" not in repr(rl)


@pytest.mark.parametrize(
    ("name", "ttl", "error"),
    [
        ("", 5, ConfigurationError),
        (b"bytes", 5, TypeError),
        (None, 5, TypeError),
        ("ok", 0, ConfigurationError),
        ("ok", -1, ConfigurationError),
        ("ok", float("nan"), ConfigurationError),
        ("ok", "5", TypeError),
        ("ok", 0.001, ConfigurationError),
    ],
)
def test_bad_lock_arguments_make_no_network_call(
    listener: tuple[str, socket.socket], name: object, ttl: object, error: type[Exception]
) -> None:
    url, sock = listener
    rl = Redlock([url])
    with pytest.raises(error):
        rl.lock(name, ttl=ttl).acquire()  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        rl.lock("ok", ttl=5).acquire(blocking=False, timeout=1)
    with pytest.raises(ConfigurationError):
        rl.lock("ok", ttl=5).acquire(timeout=-1)
    assert_never_connected(sock)
    rl.close()


def test_configuration_errors_are_quorumlock_and_value_errors() -> None:
    with pytest.raises(QuorumLockError) as info:
        Redlock([])
    assert isinstance(info.value, ValueError)


def test_ttls_beyond_the_bound_are_refused_and_the_longest_is_kept(
    servers: LocalServerGroup, lock_name: str
) -> None:
    # A ttl of 1e12 s was granted, then its lease thread died (a wait beyond time_t); one
    # of 1e16 s was refused by the servers (PX overflows); neither is a lock to keep.
    for too_long in (MAX_TTL_SECONDS * 1.001, 1e12, 1e16, 1e308):
        with pytest.raises(ConfigurationError, match="max_ttl must be at most 1e"):
            Redlock(servers.urls, max_ttl=too_long)
    with Redlock(servers.urls, instance_timeout=1.0, max_ttl=None) as rl:
        for too_long in (MAX_TTL_SECONDS * 1.001, 1e12, 1e16, 1e308):
            with pytest.raises(ConfigurationError, match="ttl must be at most 1e"):
                rl.lock(lock_name, ttl=too_long)
        assert values(servers, lock_name) == [None] * len(servers)
    with Redlock(servers.urls, instance_timeout=1.0, max_ttl=MAX_TTL_SECONDS) as rl:
        lock = rl.lock(lock_name, ttl=MAX_TTL_SECONDS, auto_extend=True, max_hold=math.inf)
        assert lock.acquire(blocking=False)
        assert lock.extend(MAX_TTL_SECONDS) > MAX_TTL_SECONDS * 0.98  # less the drift
        longest = MAX_TTL_SECONDS * 1000
        ttls = [client_of(server).pttl(lock_name) for server in servers]
        assert all(longest - 60_000 < ttl <= longest for ttl in ttls)
        lock.release()
    assert values(servers, lock_name) == [None] * len(servers)
