"""Multiplexed fan-out for the sync API.

One command goes to every server at once: it is written on every server's connection,
then the replies are read as they arrive, each under the round's deadline. There is no
thread per request; a round costs about one round trip to the slowest server that
answers, whatever N.

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
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import Any, Protocol
from weakref import WeakKeyDictionary

from redis.exceptions import NoScriptError, ResponseError

from quorumlock._algorithm.arithmetic import quorum
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import (
    Fanout,
    Op,
    Round,
    Session,
)
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._algorithm.wire import eval_args, interpret
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
from quorumlock._io.packing import RoundPacker
from quorumlock._io.servers import Address, RedisConnection, ServerSpec

__all__ = ["SyncFanout"]

_POLL_IN = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP
#: A batch's deadline grows by this much per step it carries (see ``_read_batch``).
_PER_STEP = 0.0002
#: The replies that make a round succeed when a majority gives them.
_SUCCESS = (Reply.GRANTED, Reply.DONE)


class _Node:
    """One server: its spec and the idle connections to it.

    ``where`` is "" for a plain server; for a cluster master, its address, which error
    details name (the outcome's label is the cluster's).
    """

    command: ClusterPacker | None = None  # a plain server gets the round's shared bytes

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
            if self._noted is not None:
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


class _Cluster:
    """A cluster instance: its slot map and one :class:`_Node` per master met."""

    def __init__(self, spec: ServerSpec, connect_timeout: float, probe: bool) -> None:
        assert spec.cluster is not None
        self.spec = spec
        self.label = spec.label
        self.map = SlotMap(spec.cluster)
        self._connect_timeout = connect_timeout
        self._probe = probe
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
                where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                node = _Node(self.spec.at(address), self._connect_timeout, self._probe, where=where)
                self._masters[address] = node
            return node

    def owner(self, slot: int) -> _Node | None:
        address = self.map.owner(slot)
        return None if address is None else self.node_at(address)

    def reload(self, executor: ThreadPoolExecutor, *, urgent: bool = False) -> Future[None]:
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

    def close(self) -> None:
        with self._mutex:
            masters = list(self._masters.values())
        for node in masters:
            node.close()


class _ClusterRoute(Route[_Node]):
    """A cluster instance in one round (:class:`~quorumlock._io.cluster.Route`), reached
    through quorumlock's sync connections."""

    __slots__ = ()

    cluster: _Cluster

    @property
    def sessions(self) -> WeakKeyDictionary[RedisConnection, Session]:
        return self.node.sessions if self.node is not None else _NO_SESSIONS

    def take(self) -> RedisConnection | None:
        if self.node is None:
            self.node = self.cluster.owner(self.slot)  # the map may have come meanwhile
        return None if self.node is None else self.node.take()

    def give(self, conn: RedisConnection) -> None:
        if self.node is not None:
            self.node.give(conn)

    def connecting(self, executor: ThreadPoolExecutor) -> Future[None]:
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


class _Target(Protocol):
    """What a round needs of one instance: a :class:`_Node`, or a :class:`_ClusterRoute`."""

    @property
    def label(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def tried(self) -> bool: ...
    @property
    def command(self) -> ClusterPacker | None: ...
    @property
    def sessions(self) -> WeakKeyDictionary[RedisConnection, Session]: ...
    def take(self) -> RedisConnection | None: ...
    def give(self, conn: RedisConnection) -> None: ...
    def connecting(self, executor: ThreadPoolExecutor) -> Future[None]: ...


def _detail(target: _Target, text: str) -> str:
    """An error detail, naming the cluster node it comes from."""
    where = target.where
    return f"{where}: {text}" if where else text


class _Exchange:
    """One connection's part in a round."""

    __slots__ = ("conn", "fd", "index", "node", "scripted", "sent")

    def __init__(self, index: int, node: _Target, conn: RedisConnection, sent: float) -> None:
        self.index = index
        self.node = node
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


class _Batch:
    """The outcomes of a :meth:`SyncFanout.run_batch`: per step, per server."""

    def __init__(self, steps: Sequence[Fanout], servers: int, started: float) -> None:
        self.steps = steps
        self.started = started
        self.outcomes: list[list[NodeOutcome | None]] = [[None] * servers for _ in steps]
        self.redo: set[int] = set()

    def set(self, step: int, server: int, outcome: NodeOutcome) -> None:
        self.outcomes[step][server] = outcome

    def fail_from(self, first: int, server: int, outcome: NodeOutcome) -> None:
        """Server ``server`` gives ``outcome`` to every step from ``first`` on."""
        for j in range(first, len(self.steps)):
            self.outcomes[j][server] = outcome

    def rounds(self, finished: float) -> list[Round]:
        """One round per step, each ``finished`` when the whole batch was (the latest
        time any of its replies may have been read: the safe side for a validity)."""
        rounds = []
        for row in self.outcomes:
            outcomes = tuple(o for o in row if o is not None)
            assert len(outcomes) == len(row), "a server left a step without an outcome"
            rounds.append(Round(self.started, finished, outcomes))
        return rounds


class SyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        required = config.max_ttl is not None or config.fencing
        timeout = config.connect_timeout
        self.same_server = SameServerCheck([spec.label for spec in specs])
        self._instances: list[_Node | _Cluster] = [
            _Node(spec, timeout, required, functools.partial(self.same_server.note, index))
            if spec.cluster is None
            else _Cluster(spec, timeout, required)
            for index, spec in enumerate(specs)
        ]
        # The plain servers, when there is no cluster instance: rounds use this list as
        # it is. None: every round routes its cluster instances (``_route``).
        self.nodes: list[_Node] | None = [n for n in self._instances if isinstance(n, _Node)]
        if len(self.nodes) < len(self._instances):
            self.nodes = None
        self._executor: ThreadPoolExecutor | None = None
        self._executor_pid = 0
        self._executor_mutex = threading.Lock()

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
        nodes: Sequence[_Target] = self.nodes if self.nodes is not None else self._route(step)
        outcomes: list[NodeOutcome | None] = [None] * len(nodes)
        started = time.monotonic()
        deadline = started + step.timeout
        conns = _drop_closed([node.take() for node in nodes])
        sent: list[_Exchange] = []
        try:
            self._send(nodes, conns, step, sent, outcomes, now=started)
            missing = [i for i, conn in enumerate(conns) if conn is None and outcomes[i] is None]
            attempts: dict[int, Future[None]] = {}
            grace_until = deadline
            if missing:
                executor = self._helper()
                attempts = {i: nodes[i].connecting(executor) for i in missing}
                if any(not nodes[i].tried for i in missing):
                    grace_until = max(deadline, started + self.config.connect_timeout)
            reusable = self._collect(
                step,
                nodes=nodes,
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
            ex.node.give(ex.conn)
        if self.nodes is None:
            self._after_routed(nodes, outcomes)
        return Round(started, finished, tuple(o for o in outcomes if o is not None))

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
        if len(steps) < 2 or self.nodes is None or any(s.per_session for s in steps):
            return [self.run(step) for step in steps]
        nodes = self.nodes
        conns = _drop_closed([node.take() for node in nodes])
        if any(conn is None for conn in conns):
            for node, conn in zip(nodes, conns, strict=True):
                if conn is not None:
                    node.give(conn)
            return [self.run(step) for step in steps]
        started = time.monotonic()
        payload = [b"".join(RoundPacker(step).packed(None) for step in steps)]
        batch = _Batch(steps, len(nodes), started)
        sent: list[tuple[int, RedisConnection]] = []
        try:
            for i, conn in enumerate(conns):  # R7: all written, then all read
                assert conn is not None
                try:
                    conn.send_packed_command(payload, check_health=False)
                    sent.append((i, conn))
                except Exception as exc:
                    conn.disconnect()
                    batch.fail_from(0, i, self._failed(nodes[i], exc))
            while sent:
                i, conn = sent[0]
                if self._read_batch(nodes[i], i, conn, batch):
                    nodes[i].give(conn)
                sent.pop(0)
        except BaseException:
            for _, conn in sent:  # interrupted: these connections are mid-reply
                conn.disconnect()
            raise
        rounds = batch.rounds(time.monotonic())
        for j in sorted(batch.redo):  # NOSCRIPT somewhere: this one again, the careful way
            rounds[j] = self.run(steps[j])
        return rounds

    def _read_batch(self, node: _Node, index: int, conn: RedisConnection, batch: _Batch) -> bool:
        """Read server ``index``'s replies to a batch, in order; True if still in step."""
        steps = batch.steps
        # One step's timeout, plus what reading a batch takes: the servers answer a batch
        # in one go, but parsing and judging hundreds of replies costs this process time.
        deadline = batch.started + max(step.timeout for step in steps) + _PER_STEP * len(steps)
        for j, step in enumerate(steps):
            try:
                raw = conn.read_response(timeout=max(0.001, deadline - time.monotonic()))
            except NoScriptError:
                batch.set(j, index, NodeOutcome(node.label, Reply.ERROR, "NOSCRIPT"))
                batch.redo.add(j)
                continue
            except ResponseError as exc:  # an error reply leaves the stream in step
                batch.set(j, index, self._failed(node, exc))
                continue
            except Exception as exc:
                conn.disconnect()
                batch.fail_from(j, index, self._failed(node, exc))
                return False
            now = time.monotonic()
            reply, detail, fence, holder = interpret(step.op, raw)
            latency = now - batch.started
            batch.set(j, index, NodeOutcome(node.label, reply, detail, latency, fence, holder))
        return True

    def _after_routed(
        self, nodes: Sequence[_Target], outcomes: Sequence[NodeOutcome | None]
    ) -> None:
        """A cluster instance that failed may have a new master for the slot (failover,
        resharding): reload its slot map in the background (at most every second)."""
        for node, outcome in zip(nodes, outcomes, strict=True):
            if not isinstance(node, _ClusterRoute) or outcome is None:
                continue
            if node.redirected or outcome.reply in (Reply.ERROR, Reply.TIMEOUT):
                node.cluster.reload(self._helper())

    def _send(
        self,
        nodes: Sequence[_Target],
        conns: Sequence[RedisConnection | None],
        step: Fanout,
        live: list[_Exchange],
        outcomes: list[NodeOutcome | None],
        *,
        now: float,
    ) -> None:
        packer = RoundPacker(step)
        for i, conn in enumerate(conns):
            if conn is None:
                continue
            node = nodes[i]
            try:
                packed = (node.command or packer).packed(node.sessions.get(conn))
                conn.send_packed_command([packed], check_health=False)
                live.append(_Exchange(i, node, conn, now))
            except Exception as exc:
                conn.disconnect()
                outcomes[i] = self._failed(node, exc)

    def _collect(
        self,
        step: Fanout,
        *,
        nodes: Sequence[_Target],
        sent: list[_Exchange],
        outcomes: list[NodeOutcome | None],
        deadline: float,
        attempts: dict[int, Future[None]],
        grace_until: float,
    ) -> list[_Exchange]:
        """Read every reply as it arrives, until the deadline; busy-poll briefly first.

        First contact: a round that connects to a server for the first time may wait for
        connections (TLS, AUTH, the session probe) until ``grace_until``, but only while
        no majority has granted (or, for an extend or a release, confirmed) it and the
        servers still owing a reply could make one (a majority of refusals ends it). The first
        acquire of a new Redlock then does not fail for a per-instance timeout meant for
        replies, nor does the first extend of a lock adopted from another process, and a
        server frozen at first contact still costs nothing once a majority has answered.
        The wait counts against the validity like any other.

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
        needed = quorum(len(nodes))
        fresh: set[int] = set()  # connections made during this round (their first reply)
        while waiting or attempts:
            if attempts:
                for ex in self._connected(attempts, step, nodes, sent, outcomes):
                    waiting[ex.fd] = ex
                    fresh.add(ex.fd)
                    poller.register(ex.fd, _POLL_IN)
            now = time.monotonic()
            first_contact = attempts or not fresh.isdisjoint(waiting)
            if now >= deadline and now < grace_until and first_contact:
                done = sum(1 for o in outcomes if o is not None and o.reply in _SUCCESS)
                if done < needed <= done + len(attempts) + len(waiting):  # may still succeed
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
                reuse, pending = self._read(step, ex, outcomes, deadline, attempts)
                if reuse:
                    reusable.append(ex)
                if pending is not None:  # NOSCRIPT: the EVAL form; MOVED: the new owner
                    if pending is not ex:
                        sent.append(pending)
                    waiting[pending.fd] = pending
                    poller.register(pending.fd, _POLL_IN)
        for i in attempts:
            outcomes[i] = NodeOutcome(
                nodes[i].label, Reply.TIMEOUT, _detail(nodes[i], "still connecting")
            )
        for ex in waiting.values():
            ex.conn.disconnect()  # its reply may still come: the stream is out of step
            detail = _detail(ex.node, "no reply in time")
            outcomes[ex.index] = NodeOutcome(ex.node.label, Reply.TIMEOUT, detail)
        return reusable

    def _connected(
        self,
        attempts: dict[int, Future[None]],
        step: Fanout,
        nodes: Sequence[_Target],
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
                outcomes[i] = self._failed(nodes[i], exc)
            elif (conn := nodes[i].take()) is None:
                attempts[i] = nodes[i].connecting(self._helper())
            else:
                fresh: list[RedisConnection | None] = [None] * len(nodes)
                fresh[i] = conn
                self._send(nodes, fresh, step, sent, outcomes, now=time.monotonic())
        return sent[before:]

    def _read(
        self,
        step: Fanout,
        ex: _Exchange,
        outcomes: list[NodeOutcome | None],
        deadline: float,
        attempts: dict[int, Future[None]],
    ) -> tuple[bool, _Exchange | None]:
        """Read one reply. Returns whether the connection can be reused after this round,
        and the exchange to wait on for this server's answer if it is still to come."""
        node = ex.node
        try:
            raw = ex.conn.read_response(timeout=max(0.001, deadline - time.monotonic()))
        except NoScriptError:
            if ex.scripted:
                outcomes[ex.index] = NodeOutcome(
                    node.label, Reply.ERROR, _detail(node, "NOSCRIPT after EVAL")
                )
                return True, None
            # The server lost its script cache (a restart, SCRIPT FLUSH): EVAL caches it
            # again. Same deadline, same connection.
            ex.scripted = True
            try:
                session = node.sessions.get(ex.conn)
                command = node.command
                args = eval_args(step, session) if command is None else command.eval_args(session)
                ex.conn.send_packed_command(ex.conn.pack_command(*args), False)
            except Exception as exc:
                ex.conn.disconnect()
                outcomes[ex.index] = self._failed(node, exc)
                return False, None
            return False, ex
        except ResponseError as exc:
            # An error *reply* (READONLY, NOPERM, WRONGTYPE, MOVED...) leaves the stream
            # in step.
            if isinstance(node, _ClusterRoute) and not node.redirected:
                moved = moved_to(exc)
                if moved is not None and node.node is not None:
                    # This connection is in step: back to its own master's pool after
                    # the round, while the route moves on to the new owner.
                    ex.node = node.node
                    return True, self._follow(
                        node, ex, moved, step, outcomes=outcomes, attempts=attempts
                    )
            outcomes[ex.index] = self._failed(node, exc)
            return True, None
        except Exception as exc:
            ex.conn.disconnect()
            outcomes[ex.index] = self._failed(node, exc)
            return False, None
        reply, detail, fence, holder = interpret(step.op, raw)
        latency = time.monotonic() - ex.sent
        outcomes[ex.index] = NodeOutcome(node.label, reply, detail, latency, fence, holder)
        return True, None

    def _follow(
        self,
        route: _ClusterRoute,
        ex: _Exchange,
        moved: tuple[int, Address],
        step: Fanout,
        *,
        outcomes: list[NodeOutcome | None],
        attempts: dict[int, Future[None]],
    ) -> _Exchange | None:
        """Send the command to the slot's new owner (once per round, same deadline).

        Returns the new exchange, or None when a connection to the new owner is being
        made (``attempts``) or sending failed (``outcomes``).
        """
        target = route.follow(*moved)
        conn = target.take()
        if conn is None:
            attempts[ex.index] = route.connecting(self._helper())
            return None
        live: list[_Exchange] = []
        conns: list[RedisConnection | None] = [None] * len(outcomes)
        conns[ex.index] = conn
        nodes: list[_Target] = [route] * len(outcomes)
        self._send(nodes, conns, step, live, outcomes, now=time.monotonic())
        return live[0] if live else None

    def _failed(self, node: _Target, exc: BaseException) -> NodeOutcome:
        reply, detail = translate(exc)
        return NodeOutcome(node.label, reply, _detail(node, detail))

    def _helper(self) -> ThreadPoolExecutor:
        with self._executor_mutex:
            if self._executor is None or self._executor_pid != os.getpid():
                # After a fork the parent's helper threads do not exist in the child.
                # A cluster instance may load its slot map while connecting: room for both.
                clusters = sum(1 for n in self._instances if isinstance(n, _Cluster))
                self._executor = ThreadPoolExecutor(
                    max_workers=len(self._instances) + 2 * clusters,
                    thread_name_prefix="quorumlock-connect",
                )
                self._executor_pid = os.getpid()
            return self._executor

    def close(self) -> None:
        """Close every idle connection. Rounds may still open new ones afterwards."""
        for node in self._instances:
            node.close()
        with self._executor_mutex:
            if self._executor is not None and self._executor_pid == os.getpid():
                self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
