"""Multiplexed fan-out for the sync API (SPEC R7, STYLE rule 3).

One command goes to every server at once: it is written on every server's connection,
then the replies are read as they arrive, each under the round's deadline. There is no
thread per request; a round costs about one round trip to the slowest server that
answers, whatever N.

Connections are our own (one small LIFO pool per server, safe across threads), never
shared with the application's pools. Establishing a connection is the one thing that runs
on a helper thread: it may take a TLS handshake or hang on a frozen server, and a round
must not wait for it beyond its own deadline. A connection still being established when
the round ends keeps going and joins a later round.
"""

from __future__ import annotations

import functools
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import Any
from weakref import WeakKeyDictionary

from redis.exceptions import NoScriptError, ResponseError

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import (
    Fanout,
    Op,
    Round,
    Session,
    eval_args,
    interpret,
)
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._io.errors import translate
from quorumlock._io.incarnation import SameServerCheck, open_session
from quorumlock._io.packing import RoundPacker
from quorumlock._io.servers import RedisConnection, ServerSpec

__all__ = ["SyncFanout"]

_POLL_IN = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


class _Node:
    """One server: its spec and the idle connections to it."""

    def __init__(
        self,
        spec: ServerSpec,
        connect_timeout: float,
        required: bool,
        noted: Callable[[Session | None], None],
    ) -> None:
        self.spec = spec
        self.label = spec.label
        self._connect_timeout = connect_timeout
        # Each new connection asks its server who it is (Session): needed by the restart
        # quarantine and fencing (``required``), and by the same-server check (``noted``).
        self._required = required
        self._noted = noted
        self.sessions: WeakKeyDictionary[RedisConnection, Session] = WeakKeyDictionary()
        self._idle: deque[RedisConnection] = deque()
        self._pending: Future[None] | None = None
        self._mutex = threading.Lock()
        self.tried = False  # a connection attempt has ended (either way) at least once
        self._pid = os.getpid()

    def take(self) -> RedisConnection | None:
        """An idle, connected connection, or None."""
        if self._pid != os.getpid():
            # A forked child must not speak on its parent's sockets: forget them (redis-py
            # does not shut down a socket created by another process).
            self._idle.clear()
            self._pending = None
            self._pid = os.getpid()
        try:
            return self._idle.pop()
        except IndexError:
            return None

    def give(self, conn: RedisConnection) -> None:
        if conn.pid == os.getpid():
            self._idle.append(conn)

    def connecting(self, executor: ThreadPoolExecutor) -> Future[None]:
        """The connection attempt under way for this server, started if there is none.

        At most one attempt per server runs at a time, so a frozen server does not pile
        up threads. A successful attempt leaves its connection in the idle pool.
        """
        with self._mutex:
            if self._pending is None or self._pending.done():
                self._pending = executor.submit(self._connect)
            return self._pending

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
            self._noted(session)
            self._idle.append(conn)
        finally:
            self.tried = True

    def close(self) -> None:
        while True:
            conn = self.take()
            if conn is None:
                return
            conn.disconnect()


class _Exchange:
    """One connection's part in a round."""

    __slots__ = ("conn", "fd", "index", "scripted", "sent")

    def __init__(self, index: int, conn: RedisConnection, sent: float) -> None:
        self.index = index
        self.conn = conn
        self.sent = sent
        self.scripted = False  # the EVAL fallback was sent after a NOSCRIPT
        self.fd: int = _socket(conn).fileno()


def _socket(conn: RedisConnection) -> Any:
    # redis-py keeps the socket private; we only poll its file descriptor and check TLS
    # buffers, never read from it ourselves.
    return getattr(conn, "_sock")  # noqa: B009


def _drop_closed(conns: list[RedisConnection | None]) -> list[RedisConnection | None]:
    """Replace idle connections the server has closed (a restart, an idle timeout) by None.

    An idle connection has nothing to read; if its socket is readable, the server sent
    EOF (or garbage). One ``select`` for all of them, so a restarted server costs no
    failed round.
    """
    fds = {}
    for i, conn in enumerate(conns):
        if conn is not None:
            fds[_socket(conn).fileno()] = i
    if not fds:
        return conns
    readable, _, _ = select.select(list(fds), [], [], 0)
    for fd in readable:
        i = fds[fd]
        conn = conns[i]
        if conn is not None:
            conn.disconnect()
        conns[i] = None
    return conns


class SyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        required = config.max_ttl is not None or config.fencing
        self.same_server = SameServerCheck([spec.label for spec in specs])
        self.nodes = [
            _Node(
                spec,
                config.connect_timeout,
                required,
                functools.partial(self.same_server.note, index),
            )
            for index, spec in enumerate(specs)
        ]
        self._executor: ThreadPoolExecutor | None = None
        self._executor_pid = 0
        self._executor_mutex = threading.Lock()

    @property
    def labels(self) -> list[str]:
        return [node.label for node in self.nodes]

    def run(self, step: Fanout) -> Round:
        """Send ``step``'s command to every server and collect the replies (R7).

        An acquire raises :class:`ConfigurationError` when two instances turn out to be
        one server (:class:`SameServerCheck`): before sending anything if that was known,
        else after the round, once its keys were released on every server.
        """
        if step.op is Op.ACQUIRE:
            self.same_server.check()
        round_ = self._run(step)
        if step.op is Op.ACQUIRE and self.same_server.conflict:
            self._run(Fanout(Op.RELEASE, step.key, step.token, step.ttl_ms, step.timeout))
            self.same_server.check()
        return round_

    def _run(self, step: Fanout) -> Round:
        outcomes: list[NodeOutcome | None] = [None] * len(self.nodes)
        started = time.monotonic()
        deadline = started + step.timeout
        conns = _drop_closed([node.take() for node in self.nodes])
        sent: list[_Exchange] = []
        try:
            self._send(conns, step, sent, outcomes, started)
            missing = [i for i, conn in enumerate(conns) if conn is None and outcomes[i] is None]
            attempts: dict[int, Future[None]] = {}
            grace_until = deadline
            if missing:
                executor = self._helper()
                attempts = {i: self.nodes[i].connecting(executor) for i in missing}
                if step.op is Op.ACQUIRE and any(not self.nodes[i].tried for i in missing):
                    grace_until = max(deadline, started + self.config.connect_timeout)
            reusable = self._collect(
                step,
                sent=sent,
                outcomes=outcomes,
                deadline=deadline,
                attempts=attempts,
                grace_until=grace_until,
            )
        except BaseException:
            for ex in sent:  # an interrupted round leaves these connections mid-reply
                ex.conn.disconnect()
            raise
        finished = time.monotonic()
        for ex in reusable:
            self.nodes[ex.index].give(ex.conn)
        return Round(started, finished, tuple(o for o in outcomes if o is not None))

    def _send(
        self,
        conns: Sequence[RedisConnection | None],
        step: Fanout,
        live: list[_Exchange],
        outcomes: list[NodeOutcome | None],
        now: float,
    ) -> None:
        packer = RoundPacker(step)
        for i, conn in enumerate(conns):
            if conn is None:
                continue
            try:
                packed = packer.packed(self._session(i, conn))
                conn.send_packed_command([packed], check_health=False)
                live.append(_Exchange(i, conn, now))
            except Exception as exc:
                conn.disconnect()
                outcomes[i] = self._failed(i, exc)

    def _collect(
        self,
        step: Fanout,
        *,
        sent: list[_Exchange],
        outcomes: list[NodeOutcome | None],
        deadline: float,
        attempts: dict[int, Future[None]],
        grace_until: float,
    ) -> list[_Exchange]:
        """Read every reply as it arrives, until the deadline; busy-poll briefly first.

        First contact: an acquire that connects to a server for the first time may wait
        for connections (TLS, AUTH, the session probe) until ``grace_until``, but only
        while no majority has granted it. The first acquire of a new Redlock then does
        not fail for a per-instance timeout meant for replies, and a server frozen at
        first contact still costs nothing once a majority has answered. The wait counts
        against the validity like any other. (Release and extend never need it: a server
        we never reached holds none of our keys.)

        Servers still being connected to (``attempts``) get the command as soon as their
        connection is up, while the replies of the others are read: a connection that
        hangs (a frozen server) delays nobody. Returns the exchanges whose connections
        are in step and may be reused.
        """
        waiting = {ex.fd: ex for ex in sent}
        reusable: list[_Exchange] = []
        poller = select.poll()
        for fd in waiting:
            poller.register(fd, _POLL_IN)
        spin_until = time.monotonic() + self.config.busy_poll
        last_look = False
        needed = quorum(len(self.nodes))
        while waiting or attempts:
            if attempts:
                for ex in self._connected(attempts, step, sent, outcomes):
                    waiting[ex.fd] = ex
                    poller.register(ex.fd, _POLL_IN)
            now = time.monotonic()
            if now >= deadline and now < grace_until and attempts:
                granted = sum(1 for o in outcomes if o is not None and o.reply is Reply.GRANTED)
                if granted < needed:
                    deadline = grace_until  # first contact: wait on for the connections
            if now >= deadline:
                # One last look without waiting: replies that arrived in time are read,
                # not reported as timeouts.
                if last_look or not waiting:
                    break
                last_look = True
                events = poller.poll(0)
            elif not waiting:
                wait_futures(attempts.values(), deadline - now, FIRST_COMPLETED)
                continue
            elif now < spin_until:
                events = poller.poll(0)
            else:
                wait_ms = max(1, int((deadline - now) * 1000) + 1)
                events = poller.poll(min(wait_ms, 2) if attempts else wait_ms)
            for fd, _ in events:
                ex = waiting.pop(fd)
                poller.unregister(fd)
                if self._read(step, ex, outcomes, deadline):
                    reusable.append(ex)
                elif outcomes[ex.index] is None:  # NOSCRIPT: the EVAL form is on its way
                    waiting[ex.fd] = ex
                    poller.register(ex.fd, _POLL_IN)
        for i in attempts:
            outcomes[i] = NodeOutcome(self.nodes[i].label, Reply.TIMEOUT, "still connecting")
        for ex in waiting.values():
            ex.conn.disconnect()  # its reply may still come: the stream is out of step
            label = self.nodes[ex.index].label
            outcomes[ex.index] = NodeOutcome(label, Reply.TIMEOUT, "no reply in time")
        return reusable

    def _connected(
        self,
        attempts: dict[int, Future[None]],
        step: Fanout,
        sent: list[_Exchange],
        outcomes: list[NodeOutcome | None],
    ) -> list[_Exchange]:
        """Send to the servers whose connection attempt finished; return the new exchanges.

        A connection another round took first is no loss: a new attempt starts.
        """
        before = len(sent)
        for i, attempt in list(attempts.items()):
            if not attempt.done():
                continue
            del attempts[i]
            if (exc := attempt.exception()) is not None:
                outcomes[i] = self._failed(i, exc)
            elif (conn := self.nodes[i].take()) is None:
                attempts[i] = self.nodes[i].connecting(self._helper())
            else:
                fresh: list[RedisConnection | None] = [None] * len(self.nodes)
                fresh[i] = conn
                self._send(fresh, step, sent, outcomes, time.monotonic())
        return sent[before:]

    def _read(
        self,
        step: Fanout,
        ex: _Exchange,
        outcomes: list[NodeOutcome | None],
        deadline: float,
    ) -> bool:
        """Read one reply. True if the connection can be reused after this round."""
        label = self.nodes[ex.index].label
        try:
            raw = ex.conn.read_response(timeout=max(0.001, deadline - time.monotonic()))
        except NoScriptError:
            if ex.scripted:
                outcomes[ex.index] = NodeOutcome(label, Reply.ERROR, "NOSCRIPT after EVAL")
                return True
            # The server lost its script cache (a restart, SCRIPT FLUSH): EVAL caches it
            # again. Same deadline, same connection.
            ex.scripted = True
            try:
                args = eval_args(step, self._session(ex.index, ex.conn))
                ex.conn.send_packed_command(ex.conn.pack_command(*args), False)
            except Exception as exc:
                ex.conn.disconnect()
                outcomes[ex.index] = self._failed(ex.index, exc)
            return False
        except ResponseError as exc:
            # An error *reply* (READONLY, NOPERM, WRONGTYPE, ...) leaves the stream in step.
            outcomes[ex.index] = NodeOutcome(label, *translate(exc))
            return True
        except Exception as exc:
            ex.conn.disconnect()
            outcomes[ex.index] = NodeOutcome(label, *translate(exc))
            return False
        reply, detail, fence = interpret(step.op, raw)
        latency = time.monotonic() - ex.sent
        outcomes[ex.index] = NodeOutcome(label, reply, detail, latency, fence)
        return True

    def _session(self, index: int, conn: RedisConnection) -> Session | None:
        return self.nodes[index].sessions.get(conn)

    def _failed(self, index: int, exc: BaseException) -> NodeOutcome:
        reply, detail = translate(exc)
        return NodeOutcome(self.nodes[index].label, reply, detail)

    def _helper(self) -> ThreadPoolExecutor:
        with self._executor_mutex:
            if self._executor is None or self._executor_pid != os.getpid():
                # After a fork the parent's helper threads do not exist in the child.
                self._executor = ThreadPoolExecutor(
                    max_workers=len(self.nodes), thread_name_prefix="quorumlock-connect"
                )
                self._executor_pid = os.getpid()
            return self._executor

    def close(self) -> None:
        """Close every idle connection. Rounds may still open new ones afterwards."""
        for node in self.nodes:
            node.close()
        with self._executor_mutex:
            if self._executor is not None and self._executor_pid == os.getpid():
                self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
