"""Concurrent fan-out for the asyncio API.

Each server has one shared connection on which every concurrent request of the process
is pipelined. redis-py opens it (TLS, AUTH, HELLO, SELECT: everything of the handshake);
from then on a request writes its command straight to the transport and queues who is
waiting for the reply, and one reader task per connection parses the replies in order
(RESP answers in the order commands were sent) with hiredis and hands each to its round.
A round writes to every server, then sleeps until the last reply or its deadline. There
is no task per request: a thousand tasks locking at once share five connections and
their replies arrive in batches.

A request that times out stays queued: its reply, when it comes, is read and dropped, so
the stream stays in step and the connection stays usable. A connection that dies fails
every queued request; one that leaves requests unanswered for longer than
``connect_timeout`` with nothing to read (a frozen server, not an event loop too busy
to read) is dropped and replaced on the next round, and the releases it took along
keep their tokens' acquires away from that server (``quorumlock._io.orphans``).

A cluster instance (a ``RedisCluster`` argument) is routed per round: its place in the
round is taken by a :class:`_AsyncClusterRoute`, the master that owns the key's slot,
with its own pipelined connection. With no cluster instance, rounds never build a route.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import select
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Protocol, TypeVar

import hiredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import (
    RELEASE_OPS,
    Fanout,
    Op,
    Round,
    Session,
)
from quorumlock._algorithm.outcomes import Reply
from quorumlock._algorithm.round import (
    FINISH,
    RELEASE_LAG,
    Action,
    Connect,
    Finish,
    Member,
    RoundMachine,
    Send,
)
from quorumlock._algorithm.wire import eval_args
from quorumlock._io import forks
from quorumlock._io.cluster import (
    REFRESH_EVERY,
    ClusterPacker,
    Route,
    SlotMap,
    fetch_slots_async,
    moved_to,
)
from quorumlock._io.errors import translate
from quorumlock._io.incarnation import SameServerCheck, open_session_async
from quorumlock._io.orphans import Orphans, withheld
from quorumlock._io.packing import RoundPacker, pack
from quorumlock._io.servers import FRESH, Address, AsyncRedisConnection, ServerSpec, host_port

__all__ = ["AsyncFanout"]

T = TypeVar("T")


class _Held:
    """The commands one turn of the event loop requested on a pipe after its first, and
    when they were written, together, as the turn ended (None: not yet)."""

    __slots__ = ("commands", "written")

    def __init__(self) -> None:
        self.commands: list[bytes] = []
        self.written: float | None = None


class _Pipe:
    """One connection, the queue of rounds waiting on it, and its reader task."""

    def __init__(
        self, conn: AsyncRedisConnection, session: Session | None, orphans: Orphans
    ) -> None:
        self.conn = conn
        self.session = session  # who the server is, when the node probes (see incarnation)
        # its server's releases cut off on their way (see quorumlock._io.orphans)
        self.orphans = orphans
        # redis-py keeps its stream pair private; after the handshake they are ours.
        self._writer: asyncio.StreamWriter = conn._writer  # type: ignore[attr-defined]
        self._stream: asyncio.StreamReader = conn._reader  # type: ignore[attr-defined]
        self._parser = hiredis.Reader(replyError=BaseParser.parse_error)
        self.queue: deque[tuple[_Round, int, float]] = deque()
        self.idle_since = time.monotonic()  # when the queue last became empty
        self.dead: Exception | None = None
        # scripts (their source) the server answered NOSCRIPT to after their round had
        # ended: the next command of one of them goes in its EVAL form, which caches it
        self.unloaded: set[str | int] = set()
        # The server answered the release script on this connection: a release may end
        # without reading its answer (see ``_releases_early``).
        self.holds_release = False
        self.reader = asyncio.get_running_loop().create_task(self._read())
        # A reader still waiting when its event loop is closed (one opened by a
        # clean-up as ``asyncio.run`` ended, or a Redlock never closed) is no error of
        # the user's: asyncio would log it when the task is collected.
        self.reader._log_destroy_pending = False  # type: ignore[attr-defined]
        # Commands requested since the first one of this turn of the event loop, which
        # was written at once: written together at the end of the turn (None: nothing
        # was written in this turn yet).
        self._held: _Held | None = None
        # Set when replies come or the connection fails (see ``settle``).
        self._drained: asyncio.Future[None] | None = None

    def request(self, round_: _Round, index: int, packed: bytes) -> _Held | None:
        """Write the command and queue the round for its reply (no await: order holds).

        The first command of a turn of the event loop is written at once; the others of
        the same turn (many lease renewals, many tasks locking at once) go out together
        in one write when the turn ends: one system call instead of one per command.
        Such a command's :class:`_Held` is returned: it tells when the command went out.
        """
        if self.dead is None and self._writer.transport.is_closing():
            self.fail(RedisConnectionError("connection closed"))
        if self.dead is not None:
            round_.deliver(index, self.dead)
            return None
        self.queue.append((round_, index, time.monotonic()))
        held = self._held
        if held is not None:
            held.commands.append(packed)
            return held
        self._writer.write(packed)
        self._held = _Held()
        asyncio.get_running_loop().call_soon(self._flush)
        return None

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and held.commands and self.dead is None:
            held.written = time.monotonic()
            self._writer.write(b"".join(held.commands))
            held.commands.clear()  # (the rounds keep the hold for its time alone)

    async def _read(self) -> None:
        parser, queue = self._parser, self.queue
        try:
            while True:
                data = await self._stream.read(65536)
                if not data:
                    raise RedisConnectionError("connection closed by the server")
                parser.feed(data)
                while True:
                    reply = parser.gets()
                    if reply is False:
                        break
                    if not queue:
                        raise RedisConnectionError("a reply came with no request waiting")
                    round_, index, _ = queue.popleft()
                    round_.deliver(index, reply)
                if not queue:
                    self.idle_since = time.monotonic()
                if self._drained is not None:
                    self._wake_settle()
        except asyncio.CancelledError:
            # Cancelled by someone else: ``asyncio.run`` cancels every task as it ends,
            # this one with the user's, whose clean-ups (a release at the end of an
            # ``async with``, the undo of a cancelled acquire) still send their rounds.
            # The requests in flight fail now, and those rounds open a new connection
            # instead of waiting for replies nobody reads (keys left to their ttl).
            self.fail(RedisConnectionError("the connection's reader task was cancelled"))
            raise
        except Exception as exc:
            self.fail(exc)

    async def settle(self, deadline: float) -> None:
        """Wait, until ``deadline`` (monotonic), while the connection owes the reply of a
        release: one its server answered NOSCRIPT to after the round was over goes again
        as that answer comes (``_Round._lost_script``), and is waited for too. Closed
        before, the connection would take it along, and the key would stay on that
        server until its ttl. Other replies owed are dropped with the connection."""
        while self.dead is None and any(r.step.op in RELEASE_OPS for r, _, _ in self.queue):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            drained = self._drained = asyncio.get_running_loop().create_future()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(drained), left)

    def _wake_settle(self) -> None:
        """Replies came, or the connection failed: ``settle`` looks again."""
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def stale(self, limit: float) -> bool:
        """The oldest queued request has waited longer than ``limit`` seconds, and nothing
        the server sent waits to be read. A server that answers an event loop too busy
        to read (a thousand tasks at once) is not frozen: its connection is kept, for a
        connection given up takes nothing back (quorumlock._io.orphans)."""
        if not self.queue or time.monotonic() - self.queue[0][2] <= limit:
            return False
        return not self.unread(default=False)

    def unread(self, *, default: bool = True) -> bool:
        """The server sent what the reader task has not parsed yet: it waits in the
        stream's buffer or in the socket (one ``select``; ``default`` without one)."""
        if getattr(self._stream, "_buffer", None):  # read from the socket, not parsed
            return True
        sock = self._writer.transport.get_extra_info("socket")
        if sock is None:
            return default
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
        return bool(readable)

    def closed_while_idle(self) -> bool:
        """No request waits, yet the server sent something: EOF (a restart, an idle
        timeout) or garbage, which the reader task has not seen yet because the event
        loop was busy. One ``select``, so that a restarted server costs no failed round
        (as ``_drop_closed`` in the sync fan-out); none for a connection idle for less
        than ``FRESH`` (see there)."""
        if self.queue:
            return False
        if self._stream.at_eof():
            return True
        if time.monotonic() - self.idle_since < FRESH:
            return False
        sock = self._writer.transport.get_extra_info("socket")
        if sock is None:
            return False
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
        return bool(readable)

    def fail(self, exc: Exception) -> None:
        if self.dead is not None:
            return
        self.dead = exc
        # Written, never answered: each may still run on the server, after what a new
        # connection sends (see quorumlock._io.orphans).
        self.orphans.add(round_.step for round_, _, _ in self.queue)
        while self.queue:
            round_, index, _ = self.queue.popleft()
            round_.deliver(index, exc)
        if not self.reader.get_loop().is_closed():
            self._wake_settle()
        # redis-py's connection still holds the stream pair it made: dropped, it is
        # closed to redis-py too (it warns of an unclosed connection when collected).
        self.conn._writer = self.conn._reader = None  # type: ignore[attr-defined]
        if self.reader.get_loop().is_closed():
            return  # its event loop is gone: nothing of it can run (Redlock.close() after)
        if self.reader is not asyncio.current_task():
            self.reader.cancel()
        self._writer.transport.abort()


def _background(task: asyncio.Task[T]) -> asyncio.Task[T]:
    """``task``, its failure read when it ends: a connection or a slot map load goes on
    after the rounds that waited for it have ended (they stop waiting at their deadline),
    and asyncio would log the failure nobody read as an error, with a traceback ("Task
    exception was never retrieved"). The next round sees the failure for itself."""
    task.add_done_callback(_read_failure)
    return task


def _read_failure(task: asyncio.Task[object]) -> None:
    if not task.cancelled():
        task.exception()


class _TlsContexts:
    """The SSL contexts of a fan-out's servers, each built once and off the event loop,
    then shared by every connection with the same TLS settings.

    redis-py's asyncio ``SSLConnection`` builds its context (the system's CAs, then the
    ``ssl_ca_certs`` file) inside ``connect()``, on the event loop: 30 ms or more (far
    more with a large CA bundle), which a new connection would pay again and again while
    a TLS server is down, and meanwhile the replies of the healthy servers would wait
    past the round's deadline. Built on a thread of its own instead, the context serves
    every event loop; a build that failed (a missing file) is tried again next time.
    """

    __slots__ = ("_built", "_pid")

    def __init__(self) -> None:
        self._built: dict[tuple[object, ...], Future[ssl.SSLContext]] = {}
        self._pid = os.getpid()

    async def prepare(self, conn: AsyncRedisConnection) -> None:
        """Give ``conn`` its context, waiting (off the loop) for it the first time."""
        holder = getattr(conn, "ssl_context", None)
        if holder is None:  # not TLS
            return
        if self._pid != os.getpid():  # a forked child: the parent's threads are gone
            self._built, self._pid = {}, os.getpid()
        key = tuple(repr(getattr(holder, name, None)) for name in _TLS_SETTINGS)
        built = self._built.get(key)
        if built is None or (built.done() and built.exception() is not None):
            self._built[key] = built = _build_in_thread(holder.get)
        holder.context = await asyncio.shield(asyncio.wrap_future(built))

    def apply(self, conn: AsyncRedisConnection) -> None:
        """Give ``conn`` its context if it is built already (no wait)."""
        holder = getattr(conn, "ssl_context", None)
        if holder is None:
            return
        key = tuple(repr(getattr(holder, name, None)) for name in _TLS_SETTINGS)
        built = self._built.get(key)
        if built is not None and built.done() and built.exception() is None:
            holder.context = built.result()


# What a redis-py ``RedisSSLContext`` builds its context from (a name an older redis-py
# lacks is no setting of it).
_TLS_SETTINGS = (
    "keyfile", "certfile", "cert_reqs", "include_verify_flags", "exclude_verify_flags",
    "ca_certs", "ca_data", "ca_path", "check_hostname", "min_version", "ciphers", "password",
)  # fmt: skip


def _build_in_thread(build: Callable[[], ssl.SSLContext]) -> Future[ssl.SSLContext]:
    built: Future[ssl.SSLContext] = Future()

    def run() -> None:
        try:
            built.set_result(build())
        except BaseException as exc:
            built.set_exception(exc)

    threading.Thread(target=run, name="quorumlock-tls", daemon=True).start()
    return built


class _AsyncNode:
    """One server: its pipelined connection, opened on demand (per event loop).

    ``where`` is "" for a plain server; for a cluster master, its address, which error
    details name (the outcome's label is the cluster's).
    """

    command: ClusterPacker | None = None  # a plain server gets the round's shared bytes
    routed = False  # a cluster's route follows MOVED; a plain server does not

    def __init__(
        self,
        spec: ServerSpec,
        config: RedlockConfig,
        noted: Callable[[Session | None], None] | None = None,
        where: str = "",
        tls: _TlsContexts | None = None,
    ) -> None:
        self.spec = spec
        self.label = spec.label
        self.where = where
        self._config = config
        self._tls = tls or _TlsContexts()
        self._noted = noted  # told who the server of each new connection is
        self._pipe: _Pipe | None = None
        self._connecting: asyncio.Task[_Pipe] | None = None
        self._attempt: float | None = None  # when ``_connecting`` began to run
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = forks.PID
        self.tried = False  # a connection attempt has ended (either way) at least once
        self.failure = ""  # why the last attempt that ended failed ("" if it connected)
        self.orphans = Orphans()  # releases cut off on their way here

    @property
    def live_pipe(self) -> _Pipe | None:
        """The pipe of the running event loop and process, if it is alive (no check
        that the server is still there: :meth:`pipe` makes those)."""
        pipe = self._pipe
        if pipe is None or pipe.dead is not None or self._pid != forks.PID:
            return None
        return pipe if self._loop is asyncio.get_running_loop() else None

    def pipe(self) -> _Pipe | asyncio.Task[_Pipe]:
        """The live pipe, or the task that is opening one (shared by all waiters)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._pid != forks.PID:
            # Connections belong to the loop (and process) that opened them.
            self._pipe, self._connecting = None, None
            self._loop, self._pid = loop, forks.PID
        pipe = self._pipe
        if pipe is not None and pipe.dead is None:
            if pipe.closed_while_idle():
                pipe.fail(RedisConnectionError("connection closed by the server"))
            elif not pipe.stale(self._config.connect_timeout):
                return pipe
            else:
                pipe.fail(RedisConnectionError("the server stopped answering"))
        self._pipe = None
        if self._connecting is None or self._connecting.done():
            # A task of its own, so that a round that stops waiting does not abort it:
            # the connection is then ready for the next round.
            self._attempt = None
            self._connecting = _background(loop.create_task(self._connect()))
        return self._connecting

    def connecting_since(self) -> float | None:
        """When the attempt to connect that rounds wait for began (now if its task has
        not run yet: the event loop is busy); None if none is under way."""
        task = self._connecting
        if task is None or task.done():
            return None
        return time.monotonic() if self._attempt is None else self._attempt

    async def _connect(self) -> _Pipe:
        self._attempt = time.monotonic()
        config = self._config
        conn = self.spec.async_connection(connect_timeout=config.connect_timeout)
        # Who the server is: the restart quarantine and fencing need it (``required``);
        # the same-server check uses it when it can be had.
        required = config.max_ttl is not None or config.fencing
        try:
            await self._tls.prepare(conn)
            await conn.connect()
            session = await open_session_async(conn, config.connect_timeout, required=required)
        except BaseException as exc:
            if isinstance(exc, Exception):  # (not a cancel: the attempt did not end)
                self.failure = translate(exc)[1]
            with contextlib.suppress(Exception):
                await conn.disconnect(nowait=True)
            raise
        finally:
            self.tried = True
        self.failure = ""
        if self._noted is not None:
            self._noted(session)
        self._pipe = _Pipe(conn, session, self.orphans)
        return self._pipe

    async def settle(self, deadline: float) -> None:
        """Wait, until ``deadline``, while the running loop's connection owes the reply
        of a release (see :meth:`_Pipe.settle`)."""
        pipe = self.live_pipe
        if pipe is not None:
            await pipe.settle(deadline)

    async def close(self) -> None:
        """Close the connection; the next round reaches the server as a first contact
        again (it waits for the new connection as a new Redlock's does)."""
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.fail(RedisConnectionError("closed"))
        if self._connecting is not None and not self._connecting.get_loop().is_closed():
            self._connecting.cancel()
        self._connecting = None
        self.tried = False


class _AsyncCluster:
    """A cluster instance: its slot map and one :class:`_AsyncNode` per master met."""

    def __init__(
        self,
        spec: ServerSpec,
        config: RedlockConfig,
        tls: _TlsContexts,
        noted: Callable[[Session | None], None] | None = None,
    ) -> None:
        assert spec.cluster is not None
        self.spec = spec
        self.label = spec.label
        self.map = SlotMap(spec.cluster)
        self._config = config
        # Every master's connections tell the same-server check who they reach: one
        # cluster listed twice (from two of its nodes) shares its masters.
        self._noted = noted
        self._masters: dict[Address, _AsyncNode] = {}
        self._tls = tls
        self._loading: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()
        self.tried = False  # a slot map load has ended (either way) at least once

    def node_at(self, address: Address) -> _AsyncNode:
        node = self._masters.get(address)
        if node is None:
            host, port = address
            where = host_port(host, port)
            node = _AsyncNode(
                self.spec.at(address), self._config, self._noted, where=where, tls=self._tls
            )
            self._masters[address] = node
        return node

    def owner(self, slot: int) -> _AsyncNode | None:
        address = self.map.owner(slot)
        return None if address is None else self.node_at(address)

    def reload(self, *, urgent: bool = False) -> asyncio.Task[None]:
        """The slot map load under way, started if there is none and the map was not
        loaded in the last :data:`REFRESH_EVERY` seconds (``urgent``: whenever)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._pid != os.getpid():
            self._loading, self._loop, self._pid = None, loop, os.getpid()
        if self._loading is None or self._loading.done():
            recent = time.monotonic() - self.map.loaded_at < REFRESH_EVERY
            if urgent or not recent or self._loading is None:
                self._loading = _background(loop.create_task(self._load()))
        return self._loading

    async def _load(self) -> None:
        timeout = self._config.connect_timeout

        def connect(address: Address) -> AsyncRedisConnection:
            conn = self.spec.at(address).async_connection(connect_timeout=timeout)
            self._tls.apply(conn)
            return conn

        seed = self.map.addresses()
        try:
            if seed:
                await self._tls.prepare(connect(seed[0]))
            self.map.replace(await fetch_slots_async(connect, seed, timeout))
        finally:
            self.tried = True

    async def settle(self, deadline: float) -> None:
        await asyncio.gather(*(node.settle(deadline) for node in list(self._masters.values())))

    async def close(self) -> None:
        for node in list(self._masters.values()):
            await node.close()
        if self._loading is not None and self._loop is asyncio.get_running_loop():
            self._loading.cancel()
        self._loading = None


class _AsyncClusterRoute(Route[_AsyncNode]):
    """A cluster instance in one round (:class:`~quorumlock._io.cluster.Route`), reached
    through quorumlock's asyncio connections."""

    __slots__ = ()

    cluster: _AsyncCluster

    @property
    def orphans(self) -> Orphans | None:
        return self.node.orphans if self.node is not None else None

    def connecting_since(self) -> float | None:
        return self.node.connecting_since() if self.node is not None else None

    def pipe(self) -> _Pipe | asyncio.Task[_Pipe]:
        if self.node is None:
            self.node = self.cluster.owner(self.slot)
        if self.node is not None:
            return self.node.pipe()
        return _background(asyncio.get_running_loop().create_task(self._mapped_pipe()))

    async def _mapped_pipe(self) -> _Pipe:
        """The owner's pipe once the slot map is loaded (the first round of a new map)."""
        if not self.cluster.map.loaded:
            await asyncio.shield(self.cluster.reload(urgent=True))
        node = self.cluster.owner(self.slot)
        if node is None:
            raise RedisConnectionError(f"slot {self.slot} has no master")
        self.node = node
        pipe = node.pipe()
        return pipe if isinstance(pipe, _Pipe) else await asyncio.shield(pipe)


class _Target(Member, Protocol):
    """What a round's transport needs of one instance (an :class:`_AsyncNode` or a cluster
    route), beyond what the round itself reads (:class:`Member`)."""

    @property
    def command(self) -> ClusterPacker | None: ...
    @property
    def orphans(self) -> Orphans | None: ...
    def pipe(self) -> _Pipe | asyncio.Task[_Pipe]: ...
    def connecting_since(self) -> float | None: ...


class AsyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers, concurrently."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        self.same_server = SameServerCheck([spec.label for spec in specs])
        tls = _TlsContexts()
        self._instances: list[_AsyncNode | _AsyncCluster] = [
            _AsyncNode(spec, config, functools.partial(self.same_server.note, index), tls=tls)
            if spec.cluster is None
            else _AsyncCluster(spec, config, tls, functools.partial(self.same_server.note, index))
            for index, spec in enumerate(specs)
        ]
        # The plain servers, when there is no cluster instance: rounds use this list as
        # it is. None: every round routes its cluster instances.
        self.nodes: list[_AsyncNode] | None = [
            n for n in self._instances if isinstance(n, _AsyncNode)
        ]
        if len(self.nodes) < len(self._instances):
            self.nodes = None

    @property
    def labels(self) -> list[str]:
        return [node.label for node in self._instances]

    async def run(self, step: Fanout) -> Round:
        """Send ``step``'s command to every server at once and collect the replies (R7).

        An acquire, or a read of who holds or leads, raises :class:`ConfigurationError`
        when two instances turn out to be one server, as in ``SyncFanout.run``.
        """
        if step.counts_servers:
            self.same_server.check()
        round_ = await self._run(step)
        if step.counts_servers and self.same_server.conflict:
            if step.acquires:
                await self._run(step.undo())
            self.same_server.check()
        return round_

    async def _run(self, step: Fanout) -> Round:
        nodes: Sequence[_Target] = (
            self.nodes
            if self.nodes is not None
            else [
                _AsyncClusterRoute(n, step) if isinstance(n, _AsyncCluster) else n
                for n in self._instances
            ]
        )
        round_ = _Round(nodes, step, time.monotonic(), self.config.connect_timeout)
        result = await round_.collect()
        if self.nodes is None:
            # A cluster instance that failed may have a new master for the slot
            # (failover, resharding): reload its map in the background (at most every s).
            for node, outcome in zip(nodes, result.outcomes, strict=True):
                if isinstance(node, _AsyncClusterRoute) and (
                    node.redirected or outcome.reply in (Reply.ERROR, Reply.TIMEOUT)
                ):
                    node.cluster.reload()
        return result

    async def close(self) -> None:
        """Close the running loop's connections, each once it owes no release's reply
        or ``connect_timeout`` has passed (see :meth:`_Pipe.settle`)."""
        deadline = time.monotonic() + self.config.connect_timeout
        await asyncio.gather(*(node.settle(deadline) for node in self._instances))
        for node in self._instances:
            await node.close()


def _releases_early(step: Fanout, nodes: Sequence[_Target]) -> bool:
    """Whether ``step`` is a release that may end at a majority (``RoundMachine``'s
    ``release_early``): every server's live connection answered the release script, and
    none lags (``RELEASE_LAG``). Otherwise a server without the script would answer
    NOSCRIPT to a round that is over (which :meth:`_Round._lost_script` mends), and a
    server always slower than the majority would have ever more requests in flight."""
    if step.op is not Op.RELEASE:
        return False
    for node in nodes:
        pipe = node.live_pipe if isinstance(node, _AsyncNode) else None
        if pipe is None or not pipe.holds_release or len(pipe.queue) > RELEASE_LAG:
            return False
    return True


#: A round waits past its deadline, while a server that owes it a reply has sent what
#: the event loop has not read yet, for up to this share of the lock's ttl.
UNREAD_SHARE = 0.05


def unread_grace(step: Fanout) -> float:
    """How long past its deadline a round waits on while a server it waits for has sent
    what is not read yet, or has not had its time since the loop got to it (see
    ``_Round._late``): 5 % of the ttl, at least one timeout. A reply read late came in
    time, or the server answers in order what it was sent before: only the event loop
    was too busy to read it (a thousand tasks locking at once), and a round ended then
    would count live servers as dead, fail acquires for want of a quorum and leave
    released keys to their ttl. Likewise a command written late (held to the end of a
    turn of the loop that ran a thousand tasks' first steps) gives its server its
    timeout from the write, and a connection whose attempt began late its time from
    the attempt's start. A verdict given later costs an acquire only validity, which
    runs from the round's start; a server that sends nothing (dead, frozen, slow) gets
    no more time than its timeout from when it was asked."""
    return max(step.timeout, step.ttl_ms / 1000 * UNREAD_SHARE)


class _Round:
    """One round's transport: writes what the :class:`RoundMachine` asks on the pipes,
    and feeds it the replies the reader tasks deliver, the connections as they open and
    the deadline's timer."""

    def __init__(
        self, nodes: Sequence[_Target], step: Fanout, now: float, connect_timeout: float
    ) -> None:
        self.nodes = nodes
        self.step = step
        # Packed once for all servers, by hiredis (redis-py's asyncio packer is Python).
        self.packer = RoundPacker(step)
        self.machine = RoundMachine(
            step,
            nodes,
            now=now,
            connect_timeout=connect_timeout,
            release_early=_releases_early(step, nodes),
        )
        # Per server: its pipe, or the task opening one.
        self.pipes: list[_Pipe | asyncio.Task[_Pipe]] = []
        # Per server whose command went out after the round's start (its connection
        # opened meanwhile), or after others of its turn: when (see ``_late``).
        self.late: dict[int, _Held | float] = {}
        self.timer: asyncio.Handle | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def collect(self) -> Round:
        """Send to every server, then wait until the machine finishes."""
        machine = self.machine
        try:
            self.pipes = [node.pipe() for node in self.nodes]
            ready = [isinstance(pipe, _Pipe) for pipe in self.pipes]
            for action in machine.start(ready, withheld(self.step, self.nodes)):
                self._act(action)
            if machine.finished:
                self._finish()  # (every server withheld)
            if not self.done.done():
                self._arm()
                await self.done
        except BaseException:
            # The task stopped waiting (cancelled): the round is over all the same. A
            # reply that comes later changes nothing, and above all an acquire that a
            # server answers NOSCRIPT to is not sent again in its EVAL form: it would
            # run after the clean-up that undoes it, and its key would stay until the
            # ttl (a release still is, see ``_lost_script``).
            machine.result(time.monotonic())
            raise
        finally:
            if self.timer is not None:
                self.timer.cancel()
        return machine.result(time.monotonic())

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        when = loop.time() + (self.machine.deadline - time.monotonic())
        self.timer = loop.call_at(when, self._on_deadline)

    def _on_deadline(self) -> None:
        now, machine = time.monotonic(), self.machine
        until = machine.deadline + unread_grace(self.step)
        if machine.deadline <= now < until:
            loop = asyncio.get_running_loop()
            if self._unread():
                # A reply this round waits for may have come in time and wait, unread,
                # behind an event loop too busy to read it (a thousand tasks locking at
                # once): the reader tasks go first (see ``unread_grace``).
                self.timer = loop.call_soon(self._on_deadline)
                return
            late = self._late(now) if machine.owing_may_decide() else -math.inf
            if now < late:
                # A command went out late, or a connection began to open late (a turn
                # of the loop that ran many tasks): its server has its time from then.
                wake = min(late, until)
                self.timer = loop.call_at(loop.time() + (wake - now), self._on_deadline)
                return
        if machine.tick(now) is FINISH:
            self._finish()
        else:  # first contact: the grace goes on (or the timer fired a little early)
            self._arm()

    def _late(self, now: float) -> float:
        """Until when a server that owes this round its reply still has its time, counted
        from when the event loop got to it (see ``unread_grace``): its timeout from a
        command written after the round's start or held to the end of a turn, or what
        the round allows a server it connects to (its timeout, or first contact's
        grace) from the start of the attempt to connect that it waits for (``now`` for
        one not written or begun yet); -inf for none."""
        machine, late = self.machine, -math.inf
        for i, pipe in enumerate(self.pipes):
            if machine.answered(i):
                continue
            if isinstance(pipe, _Pipe):
                written = self.late.get(i)
                if isinstance(written, _Held):
                    written = now if written.written is None else written.written
                if written is not None:
                    late = max(late, written + self.step.timeout)
            elif (since := self.nodes[i].connecting_since()) is not None:
                late = max(late, since + machine.allowance)
        return late

    def _unread(self) -> bool:
        """A server that owes this round its reply has sent what is not read yet."""
        return any(
            isinstance(pipe, _Pipe) and not self.machine.answered(i) and pipe.unread(default=False)
            for i, pipe in enumerate(self.pipes)
        )

    def _act(self, action: Action | None) -> None:
        if action is None:
            return
        if isinstance(action, Finish):
            self._finish()
            return
        i = action.index
        if isinstance(action, Send):
            self._send(i, action.eval)
        elif isinstance(action, Connect):
            # A callback, not an await: the round's end cancels nothing, and the connect
            # goes on for the next round. Never removed, for removing one costs as many
            # steps as the task has callbacks (5,000 tasks waiting for one connect made
            # their ends quadratic: seconds of a loop that opened nothing meanwhile);
            # a connection that comes after the round's end changes nothing.
            pending = self.pipes[i]
            assert not isinstance(pending, _Pipe)
            pending.add_done_callback(functools.partial(self._connected, i))
        else:
            route = self.nodes[i]
            assert isinstance(route, _AsyncClusterRoute)
            self.pipes[i] = pipe = route.follow(action.slot, action.address).pipe()
            self._act(self.machine.open(i, isinstance(pipe, _Pipe)))

    def _send(self, index: int, eval_form: bool) -> None:
        pipe = self.pipes[index]
        assert isinstance(pipe, _Pipe)
        command = self.nodes[index].command
        if not eval_form and pipe.unloaded:
            try:
                source = self._eval_form(index, pipe)[1]
            except ValueError:  # not a script
                source = ""
            if source in pipe.unloaded:  # its server lost it: EVAL caches it again
                pipe.unloaded.discard(source)
                eval_form = True
        try:
            if eval_form:
                packed = pack(self._eval_form(index, pipe))
            else:
                packed = (command or self.packer).packed(pipe.session)
        except ValueError as exc:
            self.deliver(index, exc)
            return
        held = pipe.request(self, index, packed)
        if held is not None:
            self.late[index] = held

    def _connected(self, index: int, wait: asyncio.Future[_Pipe]) -> None:
        if wait.cancelled() or self.machine.finished:
            return
        exc = wait.exception()
        if exc is not None:
            self._act(self.machine.connect_failed(index, *translate(exc)))
            return
        self.pipes[index] = wait.result()
        action = self.machine.connected(index)
        if action is not None:
            now = time.monotonic()
            self.machine.sent(index, now)
            self.late[index] = now  # (replaced by the turn's hold if it is held)
        self._act(action)

    def deliver(self, index: int, reply: object) -> None:
        """A reply (or the exception that stands for it) for server ``index``; late ones
        (the round is over) change nothing."""
        machine = self.machine
        action: Action | None
        if machine.finished and isinstance(reply, NoScriptError):
            self._lost_script(index)
        elif self.step.op is Op.RELEASE and not isinstance(reply, BaseException):
            pipe = self.pipes[index]
            if isinstance(pipe, _Pipe):
                pipe.holds_release = True
        if machine.decided:
            # Decided early: the servers still owing a reply stay "not read", as on the
            # sync transport, even when it comes before this round's task resumes.
            return
        if not isinstance(reply, BaseException):
            action = machine.reply(index, reply, time.monotonic())
        elif isinstance(reply, NoScriptError):
            pipe = self.pipes[index]
            if isinstance(pipe, _Pipe) and self.step.op is Op.RELEASE:
                pipe.holds_release = False  # its script cache was emptied
            action = machine.noscript(index, *translate(reply))
        elif (moved := moved_to(reply)) is not None:
            action = machine.moved(index, *moved, *translate(reply))
        else:
            action = machine.error(index, *translate(reply))
        self._act(action)

    def _lost_script(self, index: int) -> None:
        """Server ``index`` lost its script cache and answered NOSCRIPT after the round
        ended (decided early, or past its deadline): its pipe's next command of that
        script goes in the EVAL form, so that a server always slower than the majority
        still gets the script back. A release is sent again at once, in that form: it
        did not run there (its answer, to a round that is over, is dropped)."""
        pipe = self.pipes[index]
        if not isinstance(pipe, _Pipe):
            return
        if self.step.op in RELEASE_OPS:
            if self.step.op is Op.RELEASE:
                pipe.holds_release = False
            pipe.request(self, index, pack(self._eval_form(index, pipe)))
            return
        pipe.unloaded.add(self._eval_form(index, pipe)[1])

    def _eval_form(self, index: int, pipe: _Pipe) -> tuple[str | int, ...]:
        """The ``EVAL`` form of this round's command on server ``index`` (``ValueError``
        if it runs no script)."""
        command = self.nodes[index].command
        session = pipe.session
        return eval_args(self.step, session) if command is None else command.eval_args(session)

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)
