"""Multiplexed fan-out for the sync API.

One command goes to every server at once: it is written on every server's connection,
then the replies are read as they arrive, each under the round's deadline. There is no
thread per request; a round costs about one round trip to the slowest server it waits
for, whatever N: for an acquire, an extension or a release that a majority decided, the
slowest of that majority. A reply the round did not wait for is owed by its connection
(``_OWED``), which reads it first thing in its next round, and drops it.

Connections are our own (one small LIFO pool per server, safe across threads), never
shared with the application's pools. Establishing a connection is the one thing that runs
on a helper thread: it may take a TLS handshake or hang on a frozen server, and a round
must not wait for it beyond its own deadline. A connection still being established when
the round ends keeps going and joins a later round.

A cluster instance (a ``RedisCluster`` argument) is routed per round: its place in the
round is taken by a :class:`_ClusterRoute`, the master that owns the key's slot, with its
own pool. With no cluster instance, rounds never build a route.
"""

from __future__ import annotations

import functools
import os
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as wait_futures
from typing import Any, Protocol
from weakref import WeakKeyDictionary, WeakSet, ref

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import (
    RELEASE_OPS,
    Fanout,
    Op,
    Round,
    Session,
)
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._algorithm.round import (
    FINISH,
    RELEASE_LAG,
    Action,
    Connect,
    Finish,
    Follow,
    Member,
    RoundMachine,
    Send,
)
from quorumlock._algorithm.wire import eval_args, extend_each_args, extends_one, interpret
from quorumlock._io import forks, polling
from quorumlock._io.cluster import (
    REFRESH_EVERY,
    ClusterPacker,
    Route,
    SlotMap,
    fetch_slots,
    moved_to,
)
from quorumlock._io.errors import translate
from quorumlock._io.incarnation import SameServerCheck, open_session
from quorumlock._io.orphans import Orphans, withheld
from quorumlock._io.packing import RoundPacker, pack
from quorumlock._io.servers import (
    FRESH,
    Address,
    RedisConnection,
    ServerSpec,
    host_port,
    read_reply,
)

__all__ = ["SpinPolicy", "SyncFanout"]

_POLL_IN = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP
#: A batch's deadline grows by this much per step it carries (see ``_read_batch``).
_PER_STEP = 0.0002
#: In a batch's order of replies, the one reply of its EXTEND_EACH call (``_Batch``).
_EACH = -1
#: The replies that make a round succeed when a majority gives them.
_SUCCESS = (Reply.GRANTED, Reply.DONE)
#: Connection attempts that may run at once to one server once it answers (see
#: ``_Node.connecting``).
PARALLEL_CONNECTS = 8


class SpinPolicy:
    """Whether a round busy-polls before it sleeps: only while the replies come soon
    enough for that to pay.

    A spin pays when the replies come within it: on an idle machine and a fast network,
    where waking a sleeping thread costs more than the round trip. It costs when they
    come later: on a machine whose cores are busy (many processes contending for one
    lock, say), every spinning process takes CPU time from the servers and the others,
    and every round waits for all of it. So the rounds of one ``Redlock`` keep a moving
    average of how long they waited for their replies (a quarter of the weight on the
    latest round, each counted up to four spins), and spin while it is at most one
    spin. A round that does not spin still measures its wait, so the spin comes back
    as soon as the replies do.

    A round of a name that other processes contend for (``Fanout.contended``: a
    waiter's attempt, a join, a release that puts the process in line behind the
    waiter it wakes) never spins, whatever the average: the replies of a release wake
    another process, and the processes that take turns on a name need the cores that a
    spin would take from them and from the servers. (With 2 and 16 processes on one name
    and 2 cores, this gave 23 and 12 % more critical sections per second.) Not thread
    safe, and need not be: a race between two threads only miscounts a round.
    """

    __slots__ = ("recent", "seconds")

    #: The weight of the latest round in the average.
    WEIGHT = 0.25

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds  # the longest spin (``busy_poll``); 0: never
        self.recent = 0.0  # moving average of the rounds' waits for their replies

    def budget(self) -> float:
        """How long the next round may spin (seconds)."""
        return self.seconds if self.recent <= self.seconds else 0.0

    def waited(self, seconds: float) -> None:
        """A round waited ``seconds`` for its replies, from its last send to its end."""
        self.recent += (min(seconds, 4 * self.seconds) - self.recent) * self.WEIGHT


def _running(attempts: list[Future[None]]) -> list[Future[None]]:
    """The attempts not done yet."""
    return [attempt for attempt in attempts if not attempt.done()]


class _Node:
    """One server: its spec and the idle connections to it.

    ``where`` is "" for a plain server; for a cluster master, its address, which error
    details name (the outcome's label is the cluster's).
    """

    command: ClusterPacker | None = None  # a plain server gets the round's shared bytes
    routed = False  # a cluster's route follows MOVED; a plain server does not

    def __init__(
        self,
        spec: ServerSpec,
        connect_timeout: float,
        required: bool,
        noted: Callable[[Session | None], None] | None = None,
        where: str = "",
    ) -> None:
        self.spec = spec
        self.label = spec.label
        self.where = where
        self._connect_timeout = connect_timeout
        # Each new connection asks its server who it is (Session): needed by the restart
        # quarantine and fencing (``required``), and by the same-server check (``noted``).
        self._required = required
        self._noted = noted
        self.sessions: WeakKeyDictionary[RedisConnection, Session] = WeakKeyDictionary()
        # Idle connections, each with the time it was last given back (``take_idle``).
        self._idle: deque[tuple[RedisConnection, float]] = deque()
        # The connection attempts under way (see ``connecting``), and whether the last
        # one that ended made a connection.
        self._attempts: list[Future[None]] = []
        self._answered = False
        self._mutex = threading.Lock()
        self.tried = False  # a connection attempt has ended (either way) at least once
        self.failure = ""  # why the last attempt that ended failed ("" if it connected)
        self._pid = forks.PID
        # The server answered the release script since the last connection was made (a
        # new one may reach a restarted server, whose script cache is empty): a release
        # may end without reading its answer (see ``_releases_early``).
        self.holds_release = False
        self.orphans = Orphans()  # releases cut off on their way here (``_abandon``)
        # The connections that owe the reply of a release, by the release's token: an
        # acquire of that token goes on the one, after the release
        # (``_PollRound._in_order``).
        self.owing: dict[str, list[ref[RedisConnection]]] = {}

    def take_this(self, conn: RedisConnection) -> tuple[RedisConnection, float] | None:
        """``conn`` and the time it went idle, taken out of the idle pool; None if it is
        not there (another round uses it)."""
        found = next((item for item in self._idle if item[0] is conn), None)
        if found is None:
            return None
        try:
            self._idle.remove(found)
        except ValueError:  # another thread took it meanwhile
            return None
        return found

    def take(self) -> RedisConnection | None:
        """An idle, connected connection, or None."""
        taken = self.take_idle()
        return None if taken is None else taken[0]

    def take_idle(self) -> tuple[RedisConnection, float] | None:
        """An idle, connected connection and the time (monotonic) it went idle, or None."""
        if self._pid != forks.PID:
            # A forked child must not speak on its parent's sockets: forget them (redis-py
            # does not shut down a socket created by another process).
            self._idle.clear()
            self._attempts = []
            self._pid = forks.PID
        try:
            return self._idle.pop()
        except IndexError:
            return None

    def give(self, conn: RedisConnection) -> None:
        if conn.pid == forks.PID:
            self._idle.append((conn, time.monotonic()))

    def connecting(self, executor: _Helpers) -> Future[None]:
        """A connection attempt for this server to wait for: a new one, or the oldest
        one under way.

        Until an attempt has connected, and again after one failed, at most one runs at
        a time, so a frozen or unknown server does not pile up threads. Once the server
        answers, up to :data:`PARALLEL_CONNECTS` run at once: a burst of threads, each
        needing a connection of its own, would otherwise open them one after another,
        and their rounds run out of time (releases unconfirmed, keys left to the ttl). A
        successful attempt leaves its connection in the idle pool, for any round.
        """
        with self._mutex:
            running = _running(self._attempts)
            limit = PARALLEL_CONNECTS if self._answered else 1
            if len(running) < limit:
                running.append(executor.submit(self._connect))
                self._attempts = running
                return running[-1]
            self._attempts = running
            return running[0]

    def _connect(self) -> None:
        try:
            conn = self.spec.connection(connect_timeout=self._connect_timeout)
            conn.connect()
            try:
                session = open_session(conn, self._connect_timeout, required=self._required)
            except BaseException:
                conn.disconnect()
                raise
            if session is not None:
                self.sessions[conn] = session
            if self._noted is not None:
                self._noted(session)
            self.holds_release = False
            self._idle.append((conn, time.monotonic()))
            self._answered = True
            self.failure = ""
        except BaseException as exc:
            self._answered = False
            self.failure = translate(exc)[1]
            raise
        finally:
            self.tried = True

    def after_fork(self) -> None:
        """In a forked child: a parent thread may have held the mutex at the fork."""
        self._mutex = threading.Lock()

    def close(self, deadline: float) -> None:
        """Close the idle connections, each once it owes no release's reply or at
        ``deadline`` (``_settle_by``). The next round reaches the server as a first
        contact again (it waits for the new connection as a new Redlock's does)."""
        while True:
            conn = self.take()
            if conn is None:
                break
            _settle_by(conn, deadline)
            conn.disconnect()
        self.tried = False


class _Cluster:
    """A cluster instance: its slot map and one :class:`_Node` per master met."""

    def __init__(
        self,
        spec: ServerSpec,
        connect_timeout: float,
        probe: bool,
        noted: Callable[[Session | None], None] | None = None,
    ) -> None:
        assert spec.cluster is not None
        self.spec = spec
        self.label = spec.label
        self.map = SlotMap(spec.cluster)
        self._connect_timeout = connect_timeout
        self._probe = probe
        # Every master's connections tell the same-server check who they reach: one
        # cluster listed twice (from two of its nodes) shares its masters.
        self._noted = noted
        self._masters: dict[Address, _Node] = {}
        self._mutex = threading.Lock()
        self._loading: Future[None] | None = None
        self._pid = os.getpid()
        self.tried = False  # a slot map load has ended (either way) at least once

    def node_at(self, address: Address) -> _Node:
        with self._mutex:
            node = self._masters.get(address)
            if node is None:
                host, port = address
                where = host_port(host, port)
                node = _Node(
                    self.spec.at(address),
                    self._connect_timeout,
                    self._probe,
                    self._noted,
                    where=where,
                )
                self._masters[address] = node
            return node

    def owner(self, slot: int) -> _Node | None:
        address = self.map.owner(slot)
        return None if address is None else self.node_at(address)

    def reload(self, executor: _Helpers, *, urgent: bool = False) -> Future[None]:
        """The slot map load under way, started if there is none and the map was not
        loaded in the last :data:`REFRESH_EVERY` seconds (``urgent``: whenever)."""
        with self._mutex:
            if self._pid != os.getpid():  # a forked child: the parent's load is not ours
                self._loading, self._pid = None, os.getpid()
            if self._loading is None or self._loading.done():
                recent = time.monotonic() - self.map.loaded_at < REFRESH_EVERY
                if urgent or not recent or self._loading is None:
                    self._loading = executor.submit(self._load)
            return self._loading

    def _load(self) -> None:
        try:
            timeout = self._connect_timeout

            def connect(address: Address) -> RedisConnection:
                return self.spec.at(address).connection(connect_timeout=timeout)

            self.map.replace(fetch_slots(connect, self.map.addresses(), timeout))
        finally:
            self.tried = True

    def after_fork(self) -> None:
        """In a forked child: a parent thread may have held a mutex at the fork."""
        self._mutex = threading.Lock()
        for node in self._masters.values():
            node.after_fork()

    def close(self, deadline: float) -> None:
        with self._mutex:
            masters = list(self._masters.values())
        for node in masters:
            node.close(deadline)


class _ClusterRoute(Route[_Node]):
    """A cluster instance in one round (:class:`~quorumlock._io.cluster.Route`), reached
    through quorumlock's sync connections."""

    __slots__ = ()

    cluster: _Cluster

    @property
    def sessions(self) -> WeakKeyDictionary[RedisConnection, Session]:
        return self.node.sessions if self.node is not None else _NO_SESSIONS

    @property
    def orphans(self) -> Orphans | None:
        return self.node.orphans if self.node is not None else None

    @property
    def owing(self) -> dict[str, list[ref[RedisConnection]]] | None:
        return self.node.owing if self.node is not None else None

    def take_this(self, conn: RedisConnection) -> tuple[RedisConnection, float] | None:
        return None if self.node is None else self.node.take_this(conn)

    def take(self) -> RedisConnection | None:
        taken = self.take_idle()
        return None if taken is None else taken[0]

    def take_idle(self) -> tuple[RedisConnection, float] | None:
        if self.node is None:
            self.node = self.cluster.owner(self.slot)  # the map may have come meanwhile
        return None if self.node is None else self.node.take_idle()

    def give(self, conn: RedisConnection) -> None:
        if self.node is not None:
            self.node.give(conn)

    def connecting(self, executor: _Helpers) -> Future[None]:
        if self.node is None:
            self.node = self.cluster.owner(self.slot)
        if self.node is not None:
            return self.node.connecting(executor)
        if self.cluster.map.loaded:
            failed: Future[None] = Future()
            failed.set_exception(ConnectionError(f"slot {self.slot} has no master"))
            return failed
        return self.cluster.reload(executor, urgent=True)


_NO_SESSIONS: WeakKeyDictionary[RedisConnection, Session] = WeakKeyDictionary()


class _Target(Member, Protocol):
    """What a round's transport needs of one instance (a :class:`_Node` or a
    :class:`_ClusterRoute`), beyond what the round itself reads (:class:`Member`)."""

    @property
    def command(self) -> ClusterPacker | None: ...
    @property
    def sessions(self) -> WeakKeyDictionary[RedisConnection, Session]: ...
    @property
    def orphans(self) -> Orphans | None: ...
    @property
    def owing(self) -> dict[str, list[ref[RedisConnection]]] | None: ...
    def take_this(self, conn: RedisConnection) -> tuple[RedisConnection, float] | None: ...
    def take(self) -> RedisConnection | None: ...
    def take_idle(self) -> tuple[RedisConnection, float] | None: ...
    def give(self, conn: RedisConnection) -> None: ...
    def connecting(self, executor: _Helpers) -> Future[None]: ...


def _socket(conn: RedisConnection) -> Any:
    # redis-py keeps the socket private; we poll its file descriptor, check TLS buffers,
    # and read a plain socket's ready replies into redis-py's own reader (_read_ready).
    return getattr(conn, "_sock")  # noqa: B009


try:  # redis-py's hiredis reader and the value it gives for a reply not yet complete
    from redis._parsers.hiredis import NOT_ENOUGH_DATA as _PARTIAL
    from redis._parsers.hiredis import _HiredisParser
except ImportError:  # another redis-py: every reply goes through read_response
    _HiredisParser = None  # type: ignore[assignment,misc]
    _PARTIAL = object()


#: What a connection owes: the replies of rounds that ended before reading them (a
#: round decided early, see ``quorumlock._algorithm.round``, or one whose deadline came
#: first), each with the step and server it answers. They are read first, and dropped,
#: before the connection's next reply. Only on connections whose replies
#: ``_read_at_once`` reads without blocking (``_pipelined``); weak, so a connection
#: dropped anywhere drops its debt.
_OWED: WeakKeyDictionary[RedisConnection, list[tuple[Fanout, _Target]]] = WeakKeyDictionary()
#: The scripts (their source) a connection's server answered NOSCRIPT to among the owed
#: replies: the next command of one of them on that connection goes in its ``EVAL``
#: form, which caches it again (as a round does for a NOSCRIPT it reads itself). Without
#: this, a server always slower than the majority would never get the script back.
_UNLOADED: WeakKeyDictionary[RedisConnection, set[str | int]] = WeakKeyDictionary()
#: The connections whose server answered an EXTEND_EACH call (a batch of renewals), and
#: has not answered NOSCRIPT to one since: elsewhere the call goes in its ``EVAL`` form,
#: which caches the script, so that a batch never needs the careful path for that.
_EACH_LOADED: WeakSet[RedisConnection] = WeakSet()
#: The releases a connection's server answered NOSCRIPT to among the owed replies: its
#: script cache was emptied (``SCRIPT FLUSH``) under the live connection, and a release
#: that a majority decided ran nothing there. Each goes again, in its ``EVAL`` form, once
#: the round that read that answer is done with the connection (``_resend``), as the
#: asyncio transport sends one again at once; without it, its key would stay on that
#: server until its ttl.
_RESEND: WeakKeyDictionary[RedisConnection, list[tuple[Fanout, _Target]]] = WeakKeyDictionary()
#: A connection owing this many is closed instead (a server that lags that far).
_MAX_OWED = 8
#: The plain dicts under ``_OWED``, ``_UNLOADED`` and ``_RESEND``, for the test "is
#: anything owed, unloaded or to be sent again at all?" that every round makes: a
#: WeakKeyDictionary's ``len()`` is Python code, a dict's is not (a weak reference whose
#: connection is gone may linger in them a moment: then the lookup proper answers).
_OWED_REFS: dict[Any, Any] = _OWED.data  # type: ignore[attr-defined]  # (untyped there)
_UNLOADED_REFS: dict[Any, Any] = _UNLOADED.data  # type: ignore[attr-defined]
_RESEND_REFS: dict[Any, Any] = _RESEND.data  # type: ignore[attr-defined]


def _pipelined(conn: RedisConnection) -> bool:
    """Whether ``conn`` may owe replies: a plain socket read by redis-py's hiredis reader."""
    parser = getattr(conn, "_parser", None)
    return (
        type(parser) is _HiredisParser
        and type(getattr(conn, "_sock", None)) is _PLAIN_SOCKET
        and getattr(parser, "_reader", None) is not None
    )


def _settle(conn: RedisConnection) -> bool | None:
    """Read and drop what ``conn`` owes, as far as it has come: True when nothing is owed
    any more, False while a reply is still on its way, None when the connection broke
    (it is then closed)."""
    owed = _OWED.get(conn)
    while owed:
        response = _read_at_once(conn, look=True)
        if response is _PARTIAL and _pipelined(conn):
            return False
        if response is _PARTIAL or response is _GONE or isinstance(response, RedisConnectionError):
            _abandon(conn)
            return None
        step, node = owed.pop(0)  # the reply (or error reply) of a round that is over
        _paid(node, step, conn)
        if isinstance(response, NoScriptError):
            _unloaded(conn, step, node)
    _OWED.pop(conn, None)
    return True


def _unloaded(conn: RedisConnection, step: Fanout, node: _Target) -> None:
    """An owed reply of ``step`` on ``conn`` was NOSCRIPT: the next command of that script
    on ``conn`` goes in its ``EVAL`` form (``_UNLOADED``). A release ran nothing there:
    it goes again (``_RESEND``), and the next release on that server reads every reply
    (``_Node.holds_release``)."""
    _UNLOADED.setdefault(conn, set()).add(_script_source(conn, step, node))
    if step.op in RELEASE_OPS and isinstance(node, _Node):
        if step.op is Op.RELEASE:
            node.holds_release = False
        _RESEND.setdefault(conn, []).append((step, node))


def _resend(conn: RedisConnection) -> bool:
    """Write again, in their ``EVAL`` form, the releases ``conn``'s server answered
    NOSCRIPT to after their rounds (``_RESEND``), their replies owed: on a connection in
    step, after the command of the round that read those answers. False when the write
    failed (the connection is then closed)."""
    lost = _RESEND.pop(conn, None)
    if not lost:
        return True
    try:
        for step, node in lost:
            conn.send_packed_command([pack(_eval_form(conn, step, node))], False)
            _OWED.setdefault(conn, []).append((step, node))
            _owe(node, step, conn)
    except Exception:  # (a compare-and-delete of our own token: its loss costs its ttl)
        _abandon(conn)
        return False
    return True


def _abandon(conn: RedisConnection, sent: Sequence[tuple[Fanout, _Target]] = ()) -> None:
    """Close ``conn``, whose replies will not be read: those it owes (``_OWED``) and those
    of ``sent``, commands written on it. Each release among them may still run on its
    server, after what another connection sends: its token is kept there
    (``quorumlock._io.orphans``)."""
    for step, node in (*_OWED.pop(conn, ()), *sent):
        if (orphans := node.orphans) is not None:
            orphans.add((step,))
        _paid(node, step, conn)
    _RESEND.pop(conn, None)
    conn.disconnect()


def _owe(node: _Target, step: Fanout, conn: RedisConnection) -> None:
    """``conn`` owes the reply of ``step``: a release's, the next acquire of its token
    goes on ``conn`` (``_PollRound._in_order``)."""
    if step.op in RELEASE_OPS and (owing := node.owing) is not None:
        owing.setdefault(step.token, []).append(ref(conn))


def _paid(node: _Target, step: Fanout, conn: RedisConnection) -> None:
    """``conn`` owes the reply of ``step`` no more (read, or the connection closed)."""
    owing = node.owing
    if owing and step.op in RELEASE_OPS:
        refs = owing.get(step.token)
        if refs is None:
            return
        kept = [r for r in refs if r() is not conn]
        if kept:
            owing[step.token] = kept
        else:
            owing.pop(step.token, None)


def _settle_by(conn: RedisConnection, deadline: float) -> None:
    """Before ``conn`` is closed: while it owes the reply of a release, wait for its
    replies until ``deadline`` (monotonic), and send again the releases its server
    answered NOSCRIPT to (``_RESEND``), waiting for theirs too. A release decided by a
    majority before a slow server answered ran nothing there if that server had lost its
    scripts: closed at once, the connection would take the release with it, and the key
    would stay there until its ttl. Other replies owed are dropped with the connection,
    as before."""
    while True:
        settled = _settle(conn)
        if settled is None:
            return  # the connection broke (and is closed)
        if settled or not any(step.op in RELEASE_OPS for step, _ in _OWED.get(conn, ())):
            if not _RESEND_REFS or conn not in _RESEND or not _resend(conn):
                return
            continue  # the releases sent again are owed now
        left = deadline - time.monotonic()
        if left <= 0:
            return
        sock = getattr(conn, "_sock", None)
        if sock is None:
            return
        select.select((sock,), (), (), left)


def _eval_form(conn: RedisConnection, step: Fanout, node: _Target) -> tuple[str | int, ...]:
    """The ``EVAL`` form of ``step``'s command on ``node`` (``ValueError`` if it runs no
    script)."""
    session = node.sessions.get(conn)
    command = node.command
    return eval_args(step, session) if command is None else command.eval_args(session)


def _script_source(conn: RedisConnection, step: Fanout, node: _Target) -> str | int:
    """The source of the script ``step`` runs on ``node`` (the ``EVAL`` form's)."""
    return _eval_form(conn, step, node)[1]


def _read_ready(conn: RedisConnection, deadline: float, first: object = _PARTIAL) -> object:
    """One reply from ``conn``, usually one whose socket ``poll`` found readable (a
    batch reads its replies in order, whether they have come yet or not).

    On a plain socket with redis-py's hiredis reader: what the reader holds, or one
    non-blocking read fed to it, which is all a short reply needs (redis-py's own read
    sets the socket's timeout twice and goes through three layers). Anything else (TLS,
    another parser, nothing there yet, the end of the stream, a reply longer than that
    read, a RESP3 push) goes through ``read_response``, with the time left as its
    timeout; it carries on with what the reader holds. Error replies are raised as
    ``read_response`` raises them.
    """
    response = _read_at_once(conn) if first is _PARTIAL else first
    kind = type(response)
    if kind is int or kind is bytes or response is None:
        return response  # a plain reply (neither an error nor a push): as it is
    if response is _PARTIAL or response is _GONE:
        return read_reply(conn, max(0.001, deadline - time.monotonic()))
    if isinstance(response, RedisConnectionError) or (
        isinstance(response, list) and response and isinstance(response[0], RedisConnectionError)
    ):
        conn.disconnect()  # as read_response does: the connection is not to be used again
        raise response if isinstance(response, RedisConnectionError) else response[0]
    if isinstance(response, ResponseError):
        raise response
    return response


def _read_at_once(conn: RedisConnection, look: bool = False) -> object:
    """A reply that needs no waiting (see :func:`_read_ready`); ``_PARTIAL`` when there is
    none yet (or this connection is not read this way), ``_GONE`` when the stream ended
    or failed. ``look``: the socket was not found readable; look first (a socket with a
    timeout waits for data before any read, even a non-blocking one)."""
    parser = getattr(conn, "_parser", None)
    if type(parser) is not _HiredisParser:  # (None when redis-py has no hiredis reader)
        return _PARTIAL
    sock = getattr(conn, "_sock")  # noqa: B009 (see _socket)
    reader, buffer = getattr(parser, "_reader", None), getattr(parser, "_buffer", None)
    if reader is None or buffer is None or type(sock) is not _PLAIN_SOCKET:
        return _PARTIAL  # disconnected, TLS, or a parser unlike this one
    response = reader.gets()
    if response is _PARTIAL:
        try:
            if sock.timeout is not None and _READV is not None:
                # Non-blocking underneath: one read, without the poll that a read on a
                # socket with a timeout makes first (a system call per reply).
                size = _READV(sock.fileno(), (buffer,))
            elif look and not polling.readable_now((sock,)):
                return _PARTIAL
            else:
                size = sock.recv_into(buffer, 0, _DONTWAIT)
        except BlockingIOError:
            return _PARTIAL  # nothing yet
        except OSError:
            return _GONE  # an error read_response meets and reports
        if not size:
            return _GONE  # the end of the stream: read_response reports it
        reader.feed(buffer, 0, size)
        response = reader.gets()
    push = getattr(parser, "_hiredis_PushNotificationType", None)
    if push is not None and isinstance(response, push):
        # not a reply: redis-py's handlers have it
        parser.handle_push_response(response)  # type: ignore[no-untyped-call]
        return _PARTIAL
    return response


_PLAIN_SOCKET = socket.socket
_DONTWAIT = socket.MSG_DONTWAIT
_READV: Callable[[int, Sequence[bytearray]], int] | None = getattr(os, "readv", None)


def _write(conn: RedisConnection, data: bytes) -> None:
    """Write one command on ``conn``.

    On a plain socket, one ``write``: a socket with a timeout (ours have one) is
    non-blocking underneath, and ``send_packed_command``, whose ``sendall`` polls the
    socket before each send, would cost a system call more per server and round. What
    that write left (the socket's buffer was full), or any failure, goes through
    ``send_packed_command``, which writes the rest or meets the failure again and
    reports it as redis-py does (closing the connection).
    """
    sock = getattr(conn, "_sock", None)
    if type(sock) is _PLAIN_SOCKET and sock.timeout is not None:
        try:
            written = os.write(sock.fileno(), data)
        except OSError:  # (BlockingIOError: nothing written yet)
            written = 0
        if written == len(data):
            return
        data = data[written:]
    conn.send_packed_command([data], check_health=False)


#: What ``_read_at_once`` gives for a stream that ended or failed (``read_response``
#: reports it).
_GONE = object()


def _drop_closed(
    taken: Sequence[tuple[RedisConnection, float] | None],
) -> list[RedisConnection | None]:
    """The connections ``taken`` (each with the time it went idle, see
    :meth:`_Node.take_idle`), those the server has closed (a restart, an idle timeout)
    replaced by None.

    An idle connection has nothing to read; if its socket is readable, the server sent
    EOF (or garbage). One ``select`` for all of them, so a restarted server costs no
    failed round. A connection idle for less than ``FRESH`` is not looked at (see
    there); what it owes (``_OWED``) is read when the round reads its reply, after the
    command went. Another connection that owes replies first reads what came of them;
    one still owed is not checked (the round reads what it owes first).
    """
    now = time.monotonic()
    conns: list[RedisConnection | None] = [None if item is None else item[0] for item in taken]
    fds = {}
    for i, item in enumerate(taken):
        if item is not None and now - item[1] >= FRESH:
            conn = item[0]
            if _OWED_REFS and conn in _OWED:
                settled = _settle(conn)
                if settled is None:
                    conns[i] = None
                if not settled:
                    continue
            fds[_socket(conn).fileno()] = i
    if not fds:
        return conns
    for fd in polling.readable_now(fds):
        i = fds[fd]
        closed = conns[i]
        if closed is not None:
            closed.disconnect()
        conns[i] = None
    return conns


def _releases_early(nodes: Sequence[_Node], conns: list[RedisConnection | None]) -> bool:
    """Whether a release may end at a majority (``RoundMachine``'s ``release_early``):
    every server answered the release script since its last connection was made, and no
    connection lags (``RELEASE_LAG``). Otherwise a server without the script would answer
    NOSCRIPT to a round that is over, and a server always slower than the majority would
    owe ever more replies, until its connection is closed (``_MAX_OWED``). Before the
    round writes anything: what came of the replies a connection owes is read first,
    and only those still on their way count; a connection that broke meanwhile is
    replaced by None in ``conns`` (it is closed)."""
    early = True
    for i, (node, conn) in enumerate(zip(nodes, conns, strict=True)):
        if conn is not None and _OWED_REFS and len(_OWED.get(conn, ())) > RELEASE_LAG:
            if _settle(conn) is None:
                conns[i] = None
                early = False
            elif len(_OWED.get(conn, ())) > RELEASE_LAG:
                early = False
        if conn is None or not node.holds_release:
            early = False
    return early


class _PollRound:
    """One round's transport: writes what the :class:`RoundMachine` asks, polls the
    connections and feeds it what happens.

    Servers still being connected to (``attempts``) get the command as soon as their
    connection is up, while the replies of the others are read: a connection that
    hangs (a frozen server) delays nobody.
    """

    __slots__ = (
        "attempts",
        "conns",
        "fanout",
        "machine",
        "nodes",
        "now",
        "packed",
        "packer",
        "poller",
        "releases",
        "reusable",
        "step",
        "waiting",
    )

    def __init__(
        self, fanout: SyncFanout, step: Fanout, nodes: Sequence[_Target], now: float
    ) -> None:
        self.fanout = fanout
        self.step = step
        self.nodes = nodes
        self.now = now
        self.packer = RoundPacker(step)
        # The bytes every plain server gets, when they do not depend on its session.
        self.packed = self.packer.shared
        self.conns: list[RedisConnection | None] = []
        self.attempts: dict[int, Future[None]] = {}
        self.waiting: dict[int, int] = {}  # file descriptor -> server, a reply is due
        self.poller = polling.poller()
        # The plain servers of a release, whose answers tell which hold its script.
        self.releases: list[_Node] | None = None
        # Connections in step once the round is over, and the pool each goes back to.
        self.reusable: list[tuple[_Target, RedisConnection]] = []

    def run(self) -> Round:
        targets = self.step.targets  # a server left out gets no connection
        # nor one an acquire must not reach (see quorumlock._io.orphans)
        held_back = withheld(self.step, self.nodes)
        if targets or held_back:
            taken = [
                node.take_idle() if (not targets or targets[i]) and i not in held_back else None
                for i, node in enumerate(self.nodes)
            ]
        else:
            taken = [node.take_idle() for node in self.nodes]
        if self.step.acquires:
            held_back = self._in_order(taken, held_back)
        self.conns = conns = _drop_closed(taken)
        if self.step.acquires and _OWED_REFS:
            # a connection that owed a release broke as it was looked at (_abandon; only
            # one that owed replies can have)
            late = withheld(self.step, self.nodes) - held_back
            for i in late:
                if (conn := conns[i]) is not None:
                    self.nodes[i].give(conn)
                    conns[i] = None
            held_back |= late
        # A release's answers tell which servers hold its script (``_releases_early``).
        plain = self.fanout.nodes if self.step.op is Op.RELEASE else None
        self.releases = plain
        release_early = plain is not None and _releases_early(plain, conns)
        ready = [conn is not None for conn in conns]
        # The usual round (plain servers, every one connected and targeted, no script to
        # cache again) writes its command before anything else: what the round machine
        # costs to set up runs while the servers work, not before they start.
        sent = (
            self._send_first(conns)
            if not targets and self.fanout.nodes is not None and not _UNLOADED_REFS and all(ready)
            else None
        )  # (not with a server held back: it has no connection)
        self.machine = RoundMachine(
            self.step,
            self.nodes,
            now=self.now,
            connect_timeout=self.fanout.config.connect_timeout,
            release_early=release_early,
        )
        try:
            for action in self.machine.start(ready, held_back):
                if sent is None or not isinstance(action, Send):
                    self._act(action)
                else:
                    self._sent(action.index, sent[action.index], True)
            if not self.machine.finished:  # (every server held back)
                self._collect()
        except BaseException:
            for i in self.waiting.values():  # interrupted: these connections are mid-reply
                conn = self.conns[i]
                if conn is not None:
                    _abandon(conn, ((self.step, self.nodes[i]),))
            raise
        for i in self.waiting.values():
            conn = self.conns[i]
            if conn is None:
                continue
            # The round ended (decided early, or its deadline) before this server
            # answered: its reply may still come. It is read, and dropped, first thing in
            # the connection's next round; a connection that cannot read that way, or
            # owes too many, is closed instead (the stream is out of step).
            owed = _OWED.get(conn)
            if (owed is None or len(owed) < _MAX_OWED) and _pipelined(conn):
                if owed is None:
                    _OWED[conn] = owed = []
                owed.append((self.step, self.nodes[i]))
                _owe(self.nodes[i], self.step, conn)
                self.reusable.append((self.nodes[i], conn))
            else:
                _abandon(conn, ((self.step, self.nodes[i]),))
        round_ = self.machine.result(time.monotonic())
        for node, conn in self.reusable:
            if not _RESEND_REFS or conn not in _RESEND or _resend(conn):
                node.give(conn)
        return round_

    def _in_order(
        self, taken: list[tuple[RedisConnection, float] | None], held_back: frozenset[int]
    ) -> frozenset[int]:
        """An acquire of a token whose release's reply a connection still owes: on that
        server it goes on that connection, after the release (each connection's
        commands run in order; on another one it could run first, and the release late,
        deleting its grant: see ``quorumlock._io.orphans``). The connection is taken in
        place of the one ``taken``; where another round uses it, the server is held back
        (returned with ``held_back``)."""
        token = self.step.token
        more = set(held_back)
        for i, node in enumerate(self.nodes):
            owing = node.owing
            refs = owing.get(token) if owing and i not in held_back else None
            if not refs:
                continue
            owners = {id(r()): r() for r in refs}  # (a connection gone: None)
            owner = next(iter(owners.values())) if len(owners) == 1 else None
            mine = taken[i]
            if mine is not None and mine[0] is owner:
                continue
            swapped = None if owner is None else node.take_this(owner)
            if mine is not None:
                node.give(mine[0])
            taken[i] = swapped
            if swapped is None:
                more.add(i)
        return frozenset(more)

    def _collect(self) -> None:
        """Read every reply as it arrives until the machine finishes; busy-poll briefly
        first (waking a sleeping thread costs more than a loopback round trip)."""
        machine, poller, attempts = self.machine, self.poller, self.attempts
        spin = self.fanout.spin
        began = time.monotonic()
        spin_until = began + (0.0 if self.step.contended else spin.budget())
        last_look = False
        while True:
            if attempts:
                self._connected()
            now = time.monotonic()
            if machine.tick(now) is FINISH:
                # One last look without waiting: replies that arrived in time are read,
                # not reported as timeouts (a round decided early reads them later).
                if last_look or not self.waiting or machine.decided:
                    spin.waited(now - began)
                    return
                last_look = True
                events = poller.poll(0)
            elif not self.waiting:
                wait_futures(attempts.values(), machine.deadline - now, FIRST_COMPLETED)
                continue
            elif now < spin_until:
                events = poller.poll(0)
            else:
                wait_ms = max(1, int((machine.deadline - now) * 1000) + 1)
                events = poller.poll(min(wait_ms, 2) if attempts else wait_ms)
            for fd, _ in events:
                self._read(fd)

    def _act(self, action: Action | None) -> None:
        if action is None or isinstance(action, Finish):
            return
        i = action.index
        if isinstance(action, Send):
            self._send(i, action.eval)
        elif isinstance(action, Connect):
            self.attempts[i] = self.nodes[i].connecting(self.fanout._helper())
        else:
            route = self.nodes[i]
            assert isinstance(route, _ClusterRoute)
            conn = self.conns[i]
            if conn is not None and route.node is not None:
                # In step: back to its own master's pool, while the route moves on.
                self.reusable.append((route.node, conn))
            route.follow(action.slot, action.address)
            self.conns[i] = conn = route.take()
            self.now = time.monotonic()
            self._act(self.machine.open(i, conn is not None))

    def _send(self, i: int, eval_form: bool) -> None:
        node, conn = self.nodes[i], self.conns[i]
        assert conn is not None
        first = not eval_form  # (not the EVAL form sent again after a NOSCRIPT)
        unloaded = _UNLOADED.get(conn) if _UNLOADED_REFS else None
        if unloaded and first and self._lacks_script(conn, node, unloaded):
            eval_form = True  # its server lost it (an owed NOSCRIPT): EVAL caches it again
        try:
            if eval_form:
                args = _eval_form(conn, self.step, node)
                conn.send_packed_command([pack(args)], False)
            else:
                _write(conn, self._packed_for(node, conn))
        except Exception as exc:
            self._sent(i, exc, first)
            return
        self._sent(i, None, first)

    def _send_first(self, conns: list[RedisConnection | None]) -> list[Exception | None]:
        """Write the round's command on every connection (all there, to plain servers,
        none owing a script) before the round machine exists; what each write raised.
        The machine hears of them from :meth:`_sent` once it does."""
        failed: list[Exception | None] = []
        for node, conn in zip(self.nodes, conns, strict=True):
            assert conn is not None
            try:
                _write(conn, self._packed_for(node, conn))
            except Exception as exc:
                failed.append(exc)
            else:
                failed.append(None)
        return failed

    def _packed_for(self, node: _Target, conn: RedisConnection) -> bytes:
        """The bytes of the round's command for ``node`` on ``conn``: the shared ones,
        unless they depend on the connection's session or the node routes (a cluster's)."""
        packed = self.packed
        if packed is None or node.command is not None:
            packed = (node.command or self.packer).packed(node.sessions.get(conn))
        return packed

    def _sent(self, i: int, failed: Exception | None, first: bool) -> None:
        """Server ``i``'s command was written (its reply is awaited; ``first``: not the
        ``EVAL`` form sent again after a NOSCRIPT), or writing it raised ``failed`` (the
        connection is closed, the machine told)."""
        conn = self.conns[i]
        assert conn is not None
        if failed is not None:
            _abandon(conn, ((self.step, self.nodes[i]),))  # (perhaps written in part)
            self.conns[i] = None
            self._act(self.machine.error(i, *translate(failed)))
            return
        if first:
            self.machine.sent(i, self.now)
        fd = getattr(conn, "_sock").fileno()  # noqa: B009 (see _socket)
        self.waiting[fd] = i
        self.poller.register(fd, _POLL_IN)

    def _lacks_script(self, conn: RedisConnection, node: _Target, unloaded: set[str | int]) -> bool:
        """Whether this round's command runs a script that ``conn``'s server lost (one of
        ``unloaded``, which it then leaves: the ``EVAL`` form about to go caches it)."""
        try:
            source = _script_source(conn, self.step, node)
        except ValueError:  # not a script
            return False
        if source not in unloaded:
            return False
        unloaded.discard(source)
        if not unloaded:
            # Nothing left to cache again: the connection leaves ``_UNLOADED``, whose
            # being empty lets every round write its command first (``run``).
            _UNLOADED.pop(conn, None)
        return True

    def _connected(self) -> None:
        """Feed the connection attempts that ended. A connection another round took
        first is no loss: a new attempt starts."""
        for i, attempt in list(self.attempts.items()):
            if not attempt.done():
                continue
            del self.attempts[i]
            node = self.nodes[i]
            if (exc := attempt.exception()) is not None:
                self._act(self.machine.connect_failed(i, *translate(exc)))
            elif (conn := node.take()) is None:
                self.attempts[i] = node.connecting(self.fanout._helper())
            elif (action := self.machine.connected(i)) is None:
                node.give(conn)
            else:
                self.conns[i] = conn
                self.now = time.monotonic()
                self._act(action)

    def _read(self, fd: int) -> None:
        """Read one reply and feed it; a connection whose stream is in step after it is
        kept for the pool."""
        i = self.waiting[fd]
        node, conn, machine = self.nodes[i], self.conns[i], self.machine
        assert conn is not None
        first: object = _PARTIAL
        settled: bool | None = True
        if _OWED_REFS and conn in _OWED:
            settled = _settle(conn)
            if settled is False:
                return  # a reply to an earlier round is still on its way: poll again
            if settled:
                first = _read_at_once(conn, look=True)
                if first is _PARTIAL:
                    return  # ours is not here yet
        del self.waiting[fd]
        self.poller.unregister(fd)
        if settled is None:  # the connection broke (and was closed)
            _abandon(conn, ((self.step, node),))
            self.conns[i] = None
            lost = RedisConnectionError("connection closed while reading an earlier reply")
            self._act(machine.error(i, *translate(lost)))
            return
        try:
            raw = _read_ready(conn, machine.deadline, first)
        except NoScriptError as exc:
            if machine.finished:
                # Read after the round ended (in the batch of the reply that decided it,
                # or at the last look): as an owed NOSCRIPT, the next command of that
                # script on this connection caches it again (a release goes again).
                _unloaded(conn, self.step, node)
                if machine.decided:  # a server the round did not wait for: "not read"
                    self.reusable.append((node, conn))
                    return
            elif self.releases is not None:
                self.releases[i].holds_release = False  # its script cache was emptied
            action: Action | None = machine.noscript(i, *translate(exc))
        except ResponseError as exc:  # an error *reply* leaves the stream in step
            moved = moved_to(exc)
            kind, detail = translate(exc)
            if moved is None:
                action = machine.error(i, kind, detail)
            else:
                action = machine.moved(i, *moved, kind, detail)
        except Exception as exc:
            _abandon(conn, ((self.step, node),))
            self.conns[i] = None
            self._act(machine.error(i, *translate(exc)))
            return
        else:
            action = machine.reply(i, raw, time.monotonic())
            if self.releases is not None:
                self.releases[i].holds_release = True
            if action is None:  # the usual reply: in step, and the round goes on
                self.reusable.append((node, conn))
                return
        if not isinstance(action, Send | Follow):  # Send: the EVAL form on this connection
            self.reusable.append((node, conn))
        self._act(action)


class _Batch:
    """The rounds of a batch (:meth:`SyncFanout.run_batch`) as its replies are read.

    Renewals answer 1 or 0 on every server nearly always: those replies are kept as
    they are (``plain``) and a step whose every server answered so becomes its
    :class:`Round` directly, its outcomes built once per batch for each set of replies
    met (all 1s nearly always). Any
    other event of a step (an error, another reply, a failed send) gives that step a
    :class:`RoundMachine`, which then gets its plain replies too: every case but the
    usual one keeps the one careful implementation of a round. A server's latency is
    the time its first reply of the batch was read (the servers answer a batch in one
    go).
    """

    __slots__ = (
        "_alone",
        "_machines",
        "connect_timeout",
        "each",
        "nodes",
        "order",
        "plain",
        "read_at",
        "redo",
        "started",
        "steps",
    )

    def __init__(
        self,
        steps: Sequence[Fanout],
        nodes: Sequence[_Node],
        started: float,
        connect_timeout: float,
    ) -> None:
        self.steps = steps
        # The plain extends go together, as one EXTEND_EACH call written first (when
        # there are two or more); every other step is a command of its own, in order.
        each: list[int] = []
        alone: list[int] = []
        for j, step in enumerate(steps):
            (each if extends_one(step) else alone).append(j)
        if len(each) < 2:
            each, alone = [], list(range(len(steps)))
        self.each = each
        # What each server answers, in order: _EACH for the EXTEND_EACH call's one reply.
        self.order = ([_EACH] if each else []) + alone
        self.nodes = nodes
        self.started = started
        self.connect_timeout = connect_timeout
        self.plain: list[list[int | None]] = [[None] * len(nodes) for _ in steps]
        self.read_at = [started] * len(nodes)
        self.redo: set[int] = set()
        self._machines: dict[int, RoundMachine] = {}
        self._alone: bytes | None = None  # the packed steps that go alone (``payload``)

    def payload(self, eval_form: bool = False) -> bytes:
        """What every server is sent, in :attr:`order` (``eval_form``: the EXTEND_EACH
        call as ``EVAL``, for a connection where its script is not known to be cached).
        The other steps are packed once for both."""
        if self._alone is None:
            steps = self.steps
            self._alone = b"".join(
                RoundPacker(steps[j]).packed(None) for j in self.order if j != _EACH
            )
        if not self.each:
            return self._alone
        each = [self.steps[j] for j in self.each]
        return pack(extend_each_args(each, eval_form=eval_form)) + self._alone

    def answer(self, j: int, index: int, raw: object) -> None:
        """Server ``index``'s reply to step ``j``."""
        if type(raw) is int and raw in (0, 1):
            self.plain[j][index] = raw
        else:
            self.machine(j).reply(index, raw, time.monotonic())

    def machine(self, j: int) -> RoundMachine:
        machine = self._machines.get(j)
        if machine is None:
            machine = RoundMachine(
                self.steps[j], self.nodes, now=self.started, connect_timeout=self.connect_timeout
            )
            self._machines[j] = machine
        return machine

    def rounds(self, finished: float) -> list[Round]:
        """Every step's round, ``finished`` when the batch was."""
        # Per command and replies (all 1 nearly always): the outcomes, built when met.
        shared: dict[Op, dict[tuple[int | None, ...], tuple[NodeOutcome, ...]]] = {}
        rounds = []
        for j, step in enumerate(self.steps):
            plain = tuple(self.plain[j])
            if j not in self._machines and None not in plain:
                known = shared.setdefault(step.op, {})
                outcomes = known.get(plain)
                if outcomes is None:
                    outcomes = known[plain] = self._outcomes(step.op, plain)
                rounds.append(Round(self.started, finished, outcomes))
                continue
            machine = self.machine(j)
            for i, raw in enumerate(plain):
                if raw is not None:
                    machine.reply(i, raw, self.read_at[i])
            rounds.append(machine.result(finished))
        return rounds

    def _outcomes(self, op: Op, plain: tuple[int | None, ...]) -> tuple[NodeOutcome, ...]:
        outcomes = []
        for i, raw in enumerate(plain):
            reply, detail, _, _ = interpret(op, raw)
            latency = self.read_at[i] - self.started
            outcomes.append(NodeOutcome(self.nodes[i].label, reply, detail, latency))
        return tuple(outcomes)


class SyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        self.spin = SpinPolicy(config.busy_poll)
        required = config.max_ttl is not None or config.fencing
        timeout = config.connect_timeout
        self.same_server = SameServerCheck([spec.label for spec in specs])
        self._instances: list[_Node | _Cluster] = [
            _Node(spec, timeout, required, functools.partial(self.same_server.note, index))
            if spec.cluster is None
            else _Cluster(spec, timeout, required, functools.partial(self.same_server.note, index))
            for index, spec in enumerate(specs)
        ]
        # The plain servers, when there is no cluster instance: rounds use this list as
        # it is. None: every round routes its cluster instances (``_route``).
        self.nodes: list[_Node] | None = [n for n in self._instances if isinstance(n, _Node)]
        if len(self.nodes) < len(self._instances):
            self.nodes = None

    @property
    def labels(self) -> list[str]:
        return [node.label for node in self._instances]

    def _route(self, step: Fanout) -> list[_Target]:
        return [
            _ClusterRoute(node, step) if isinstance(node, _Cluster) else node
            for node in self._instances
        ]

    def run(self, step: Fanout) -> Round:
        """Send ``step``'s command to every server and collect the replies (R7).

        An acquire, or a read of who holds or leads, raises :class:`ConfigurationError`
        when two instances turn out to be one server (:class:`SameServerCheck`): before
        sending anything if that was known, else after the round (an acquire's once its
        keys were released on every server).
        """
        if step.counts_servers:
            self.same_server.check()
        round_ = self._run(step)
        if step.counts_servers and self.same_server.conflict:
            if step.acquires:
                self._run(step.undo())
            self.same_server.check()
        return round_

    def _run(self, step: Fanout) -> Round:
        nodes: Sequence[_Target] = self.nodes if self.nodes is not None else self._route(step)
        round_ = _PollRound(self, step, nodes, time.monotonic()).run()
        if self.nodes is None:
            self._after_routed(nodes, round_.outcomes)
        return round_

    def run_batch(self, steps: Sequence[Fanout]) -> list[Round]:
        """Run many independent fan-outs at once: one write of all their commands per
        server, then every reply read in order (RESP answers in the order of the
        commands). What N rounds cost in one round trip, for the lease thread that
        renews many locks at the same moment.

        Only with live connections to plain servers, and commands that need no session
        (extend, release): anything else (a cluster instance, a server not connected, a
        NOSCRIPT reply) goes the way of :meth:`run`, one round at a time, so every case
        of a round keeps its one careful implementation. Every round ``finished`` when
        the batch did, and the deadline of a batch is a step's timeout plus 0.2 ms per
        step (reading hundreds of replies takes this process time): a flow judges its
        round by ``finished`` against the validity, as always.
        """
        if len(steps) < 2 or self.nodes is None or any(s.per_session or s.targets for s in steps):
            return [self.run(step) for step in steps]
        nodes = self.nodes
        conns = self._batch_connections(nodes, min(step.timeout for step in steps))
        if conns is None:
            return [self.run(step) for step in steps]
        started = time.monotonic()
        batch = _Batch(steps, nodes, started, self.config.connect_timeout)
        payload = batch.payload()
        eval_payload: bytes | None = None
        sent: list[tuple[int, RedisConnection]] = []
        try:
            for i, conn in enumerate(conns):  # R7: all written, then all read
                try:
                    if batch.each and conn not in _EACH_LOADED:
                        # EVAL caches the call's script where it may be missing
                        eval_payload = eval_payload or batch.payload(eval_form=True)
                        _write(conn, eval_payload)
                    else:
                        _write(conn, payload)
                    sent.append((i, conn))
                except Exception as exc:
                    _abandon(conn)
                    failed = translate(exc)
                    for j in range(len(steps)):
                        batch.machine(j).error(i, *failed)
            while True:
                if not sent:
                    break
                i, conn = sent[0]
                if self._read_batch(i, conn, batch) and (
                    not _RESEND_REFS or conn not in _RESEND or _resend(conn)
                ):
                    nodes[i].give(conn)
                sent.pop(0)
        except BaseException:
            for _, conn in sent:  # interrupted: these connections are mid-reply
                _abandon(conn)
            raise
        rounds = batch.rounds(time.monotonic())
        for j in sorted(batch.redo):  # NOSCRIPT somewhere: this one again, the careful way
            rounds[j] = self.run(steps[j])
        return rounds

    def _batch_connections(
        self, nodes: Sequence[_Node], timeout: float
    ) -> list[RedisConnection] | None:
        """An idle connection to every server for a batch, or None (each taken is given
        back). A server whose idle connections are all in use (another thread's round)
        gets a new one, waited for up to ``timeout``: one round per step instead would
        make a batch of hundreds take hundreds of round trips."""
        conns = _drop_closed([node.take_idle() for node in nodes])
        missing = [i for i, conn in enumerate(conns) if conn is None]
        if missing and all(nodes[i].tried for i in missing):
            attempts = [nodes[i].connecting(self._helper()) for i in missing]
            wait_futures(attempts, timeout)
            for i in missing:
                conns[i] = nodes[i].take()
        if any(conn is None for conn in conns):
            for node, conn in zip(nodes, conns, strict=True):
                if conn is not None:
                    node.give(conn)
            return None
        return [conn for conn in conns if conn is not None]

    def _read_batch(self, index: int, conn: RedisConnection, batch: _Batch) -> bool:
        """Read server ``index``'s replies to a batch, in order; True if still in step."""
        steps = batch.steps
        # One step's timeout, plus what reading a batch takes: the servers answer a batch
        # in one go, but parsing and judging hundreds of replies costs this process time.
        deadline = batch.started + max(step.timeout for step in steps) + _PER_STEP * len(steps)
        owed = _OWED.pop(conn, [])
        for n, (step, node) in enumerate(owed):  # the replies of rounds that are over
            try:
                try:
                    _read_ready(conn, deadline)
                except NoScriptError:
                    _unloaded(conn, step, node)
                except ResponseError:
                    pass
                _paid(node, step, conn)
            except Exception as exc:
                _abandon(conn, owed[n:])
                failed = translate(exc)
                for j in range(len(steps)):
                    batch.machine(j).error(index, *failed)
                return False
        order = batch.order
        for n, j in enumerate(order):
            try:
                raw = _read_ready(conn, deadline)
            except NoScriptError:
                if j == _EACH:  # its server lost the script: EVAL next time
                    _EACH_LOADED.discard(conn)
                batch.redo.update(batch.each if j == _EACH else (j,))
                continue
            except ResponseError as exc:  # an error reply leaves the stream in step
                if j == _EACH:  # refused as a whole (an ACL's key): each one alone
                    batch.redo.update(batch.each)
                else:
                    batch.machine(j).error(index, *translate(exc))
                continue
            except Exception as exc:
                conn.disconnect()
                failed = translate(exc)
                for later in order[n:]:
                    for k in batch.each if later == _EACH else (later,):
                        batch.machine(k).error(index, *failed)
                return False
            if n == 0:
                batch.read_at[index] = time.monotonic()
            if j != _EACH:
                batch.answer(j, index, raw)
            elif isinstance(raw, list) and len(raw) == len(batch.each):
                _EACH_LOADED.add(conn)
                for k, each_raw in zip(batch.each, raw, strict=True):
                    if isinstance(each_raw, ResponseError):
                        batch.machine(k).error(index, *translate(each_raw))
                    else:
                        batch.answer(k, index, each_raw)
            else:  # not the answer of EXTEND_EACH (a server renamed scripts?): each alone
                batch.redo.update(batch.each)
        return True

    def _after_routed(self, nodes: Sequence[_Target], outcomes: Sequence[NodeOutcome]) -> None:
        """A cluster instance that failed may have a new master for the slot (failover,
        resharding): reload its slot map in the background (at most every second)."""
        for node, outcome in zip(nodes, outcomes, strict=True):
            if not isinstance(node, _ClusterRoute):
                continue
            if node.redirected or outcome.reply in (Reply.ERROR, Reply.TIMEOUT):
                node.cluster.reload(self._helper())

    def _helper(self) -> _Helpers:
        return _HELPERS

    def after_fork(self) -> None:
        """In a forked child: a parent thread may have held any of the pools' mutexes at
        the fork (connecting, or in the same-server check); no thread would let them go
        here."""
        self.same_server.after_fork()
        for node in self._instances:
            node.after_fork()

    def close(self) -> None:
        """Close every idle connection, once it owes no release's reply or
        ``connect_timeout`` has passed (see ``_settle_by``). Rounds may still open new
        ones afterwards."""
        deadline = time.monotonic() + self.config.connect_timeout
        for node in self._instances:
            node.close(deadline)


class _Helpers:
    """Runs each connection attempt or slot map load on a daemon thread of its own: at
    most one of each per server at a time (``_Node.connecting``, ``_Cluster.reload``),
    so as many threads as servers at most.

    Not a ``ThreadPoolExecutor``: the interpreter joins its threads at exit, and a
    process that ended while a frozen server held an attempt waited for it, up to
    ``connect_timeout``. Nobody waits for these at exit; a round waits for them only
    until its own deadline.
    """

    def submit(self, work: Callable[[], None]) -> Future[None]:
        future: Future[None] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                work()
            except BaseException as exc:  # handed to the round, as an executor does
                future.set_exception(exc)
            else:
                future.set_result(None)

        threading.Thread(target=run, name="quorumlock-connect", daemon=True).start()
        return future


_HELPERS = _Helpers()
