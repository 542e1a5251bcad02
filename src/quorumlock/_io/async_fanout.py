"""Concurrent fan-out for the asyncio API (SPEC R7, STYLE rule 3).

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
``connect_timeout`` (a frozen server) is dropped and replaced on the next round.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections import deque
from collections.abc import Callable, Sequence

import hiredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

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
from quorumlock._io.incarnation import SameServerCheck, open_session_async
from quorumlock._io.packing import RoundPacker, pack
from quorumlock._io.servers import AsyncRedisConnection, ServerSpec

__all__ = ["AsyncFanout"]


class _Pipe:
    """One connection, the queue of rounds waiting on it, and its reader task."""

    def __init__(self, conn: AsyncRedisConnection, session: Session | None) -> None:
        self.conn = conn
        self.session = session  # who the server is, when the node probes (see incarnation)
        # redis-py keeps its stream pair private; after the handshake they are ours.
        self._writer: asyncio.StreamWriter = conn._writer  # type: ignore[attr-defined]
        self._stream: asyncio.StreamReader = conn._reader  # type: ignore[attr-defined]
        self._parser = hiredis.Reader(replyError=BaseParser.parse_error)
        self.queue: deque[tuple[_Round, int, float]] = deque()
        self.dead: Exception | None = None
        self.reader = asyncio.get_running_loop().create_task(self._read())

    def request(self, round_: _Round, index: int, packed: bytes) -> None:
        """Write the command and queue the round for its reply (no await: order holds)."""
        if self.dead is None and self._writer.transport.is_closing():
            self.fail(RedisConnectionError("connection closed"))
        if self.dead is not None:
            round_.deliver(index, self.dead)
            return
        self.queue.append((round_, index, time.monotonic()))
        self._writer.write(packed)

    async def _read(self) -> None:
        parser, queue = self._parser, self.queue
        try:
            while True:
                data = await self._stream.read(65536)
                if not data:
                    raise RedisConnectionError("connection closed by the server")
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    if not queue:
                        raise RedisConnectionError("a reply came with no request waiting")
                    round_, index, _ = queue.popleft()
                    round_.deliver(index, reply)
        except Exception as exc:
            self.fail(exc)

    def stale(self, limit: float) -> bool:
        """The oldest queued request has waited longer than ``limit`` seconds."""
        return bool(self.queue) and time.monotonic() - self.queue[0][2] > limit

    def fail(self, exc: Exception) -> None:
        if self.dead is not None:
            return
        self.dead = exc
        while self.queue:
            round_, index, _ = self.queue.popleft()
            round_.deliver(index, exc)
        if self.reader is not asyncio.current_task():
            self.reader.cancel()
        self._writer.transport.abort()


class _AsyncNode:
    """One server: its pipelined connection, opened on demand (per event loop)."""

    def __init__(
        self, spec: ServerSpec, config: RedlockConfig, noted: Callable[[Session | None], None]
    ) -> None:
        self.spec = spec
        self.label = spec.label
        self._config = config
        self._noted = noted  # told who the server of each new connection is
        self._pipe: _Pipe | None = None
        self._connecting: asyncio.Task[_Pipe] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()
        self.tried = False  # a connection attempt has ended (either way) at least once

    def pipe(self) -> _Pipe | asyncio.Task[_Pipe]:
        """The live pipe, or the task that is opening one (shared by all waiters)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._pid != os.getpid():
            # Connections belong to the loop (and process) that opened them.
            self._pipe, self._connecting = None, None
            self._loop, self._pid = loop, os.getpid()
        pipe = self._pipe
        if pipe is not None and pipe.dead is None:
            if not pipe.stale(self._config.connect_timeout):
                return pipe
            pipe.fail(RedisConnectionError("the server stopped answering"))
        self._pipe = None
        if self._connecting is None or self._connecting.done():
            # A task of its own, so that a round that stops waiting does not abort it:
            # the connection is then ready for the next round.
            self._connecting = loop.create_task(self._connect())
        return self._connecting

    async def _connect(self) -> _Pipe:
        config = self._config
        conn = self.spec.async_connection(connect_timeout=config.connect_timeout)
        # Who the server is: the restart quarantine and fencing need it (``required``);
        # the same-server check uses it when it can be had.
        required = config.max_ttl is not None or config.fencing
        try:
            await conn.connect()
            session = await open_session_async(conn, config.connect_timeout, required=required)
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.disconnect(nowait=True)
            raise
        finally:
            self.tried = True
        self._noted(session)
        self._pipe = _Pipe(conn, session)
        return self._pipe

    async def close(self) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.fail(RedisConnectionError("closed"))
        if self._connecting is not None:
            self._connecting.cancel()
            self._connecting = None


class AsyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers, concurrently."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        self.same_server = SameServerCheck([spec.label for spec in specs])
        self.nodes = [
            _AsyncNode(spec, config, functools.partial(self.same_server.note, index))
            for index, spec in enumerate(specs)
        ]

    @property
    def labels(self) -> list[str]:
        return [node.label for node in self.nodes]

    async def run(self, step: Fanout) -> Round:
        """Send ``step``'s command to every server at once and collect the replies (R7).

        An acquire raises :class:`ConfigurationError` when two instances turn out to be
        one server, as in ``SyncFanout.run``.
        """
        if step.op is Op.ACQUIRE:
            self.same_server.check()
        round_ = await self._run(step)
        if step.op is Op.ACQUIRE and self.same_server.conflict:
            await self._run(Fanout(Op.RELEASE, step.key, step.token, step.ttl_ms, step.timeout))
            self.same_server.check()
        return round_

    async def _run(self, step: Fanout) -> Round:
        started = time.monotonic()
        round_ = _Round(self.nodes, step)
        # First contact: an acquire may wait for connections while no majority granted
        # it (see SyncFanout._collect).
        grace = self.config.connect_timeout if step.op is Op.ACQUIRE else step.timeout
        await round_.collect(started + step.timeout, started + grace)
        return Round(started, time.monotonic(), round_.outcomes())

    async def close(self) -> None:
        for node in self.nodes:
            await node.close()


class _Round:
    """One fan-out: which server still owes a reply, and the future that ends the wait."""

    def __init__(self, nodes: Sequence[_AsyncNode], step: Fanout) -> None:
        self.nodes = nodes
        self.step = step
        # Packed once for all servers, by hiredis (redis-py's asyncio packer is Python).
        self.packer = RoundPacker(step)
        self.sent = time.monotonic()
        self.results: list[NodeOutcome | None] = [None] * len(nodes)
        self.missing = len(nodes)
        self.scripted: set[int] = set()
        self.connecting: set[int] = set()
        self.over = False
        self.grace_until: float | None = None
        self.in_grace = False
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def collect(self, deadline: float, grace_until: float) -> None:
        """Wait for every reply until ``deadline``; until ``grace_until`` if it is later,
        a server is being connected to for the first time and no majority granted yet
        (the first round of a new Redlock waits for its connections)."""
        loop = asyncio.get_running_loop()
        waits: list[asyncio.Future[_Pipe]] = []
        timer: asyncio.TimerHandle | None = None
        first_contact = False
        try:
            for i, node in enumerate(self.nodes):
                pipe = node.pipe()
                if isinstance(pipe, _Pipe):
                    self._send(pipe, i)
                else:
                    self.connecting.add(i)
                    first_contact = first_contact or not node.tried
                    # Shielded: this round may stop waiting; the connect must go on.
                    wait = asyncio.shield(pipe)
                    wait.add_done_callback(functools.partial(self._connected, i))
                    waits.append(wait)
            if first_contact and grace_until > deadline:
                self.grace_until = grace_until
            timer = loop.call_at(loop.time() + (deadline - time.monotonic()), self._on_deadline)
            if self.missing:
                await self.done
        finally:
            self.over = True
            if timer is not None:
                timer.cancel()
            for wait in waits:
                wait.cancel()

    def _connected(self, index: int, wait: asyncio.Future[_Pipe]) -> None:
        if self.over or wait.cancelled():
            return
        self.connecting.discard(index)
        exc = wait.exception()
        if exc is not None:
            self.deliver(index, exc)
        else:
            self._send(wait.result(), index)

    def _send(self, pipe: _Pipe, index: int) -> None:
        try:
            packed = self.packer.packed(pipe.session)
        except ValueError as exc:
            self.deliver(index, exc)
            return
        pipe.request(self, index, packed)

    def deliver(self, index: int, reply: object) -> None:
        """A reply (or the exception that stands for it) for server ``index``."""
        if self.over or self.results[index] is not None:
            return  # late: the round is over, the reply is dropped
        label = self.nodes[index].label
        if isinstance(reply, NoScriptError) and index not in self.scripted:
            # The server lost its script cache (a restart, SCRIPT FLUSH): EVAL caches it
            # again, within the same deadline.
            self.scripted.add(index)
            pipe = self.nodes[index].pipe()
            if isinstance(pipe, _Pipe):
                pipe.request(self, index, pack(eval_args(self.step, pipe.session)))
                return
        if isinstance(reply, BaseException):
            outcome = NodeOutcome(label, *translate(reply))
        else:
            reply_, detail, fence = interpret(self.step.op, reply)
            outcome = NodeOutcome(label, reply_, detail, time.monotonic() - self.sent, fence)
        self.results[index] = outcome
        self.missing -= 1
        if self.missing == 0 or (self.in_grace and self._granted_majority()):
            self._finish()

    def _on_deadline(self) -> None:
        if self.grace_until is not None and self.connecting and not self._granted_majority():
            loop = asyncio.get_running_loop()
            self.in_grace = True  # first contact: wait on for the connections
            delay = self.grace_until - time.monotonic()
            timer = loop.call_later(delay, self._finish)
            self.done.add_done_callback(lambda _: timer.cancel())
            return
        self._finish()

    def _granted_majority(self) -> bool:
        granted = sum(1 for r in self.results if r is not None and r.reply is Reply.GRANTED)
        return granted >= quorum(len(self.nodes))

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def outcomes(self) -> tuple[NodeOutcome, ...]:
        return tuple(
            result
            or NodeOutcome(
                self.nodes[i].label,
                Reply.TIMEOUT,
                "still connecting" if i in self.connecting else "no reply in time",
            )
            for i, result in enumerate(self.results)
        )
