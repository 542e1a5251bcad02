"""Concurrent fan-out for the asyncio API (SPEC R7, STYLE rule 3): one task group a round.

Each server gets one task that takes (or opens) a connection, writes the command and
reads the reply under the round's deadline. The event loop is never blocked. A task that
is cancelled or times out mid-exchange drops its connection (the reply may still come,
and the stream would be out of step); only connections whose exchange completed go back
to the server's pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Sequence

from redis.exceptions import NoScriptError, ResponseError

from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.flows import Fanout, Round, command_args, eval_args, interpret
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._io.errors import translate
from quorumlock._io.servers import AsyncRedisConnection, ServerSpec

__all__ = ["AsyncFanout"]


class _AsyncNode:
    """One server and its idle connections (for one event loop at a time)."""

    def __init__(self, spec: ServerSpec, connect_timeout: float) -> None:
        self.spec = spec
        self.label = spec.label
        self._connect_timeout = connect_timeout
        self._idle: deque[AsyncRedisConnection] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()

    async def take(self) -> AsyncRedisConnection:
        """An idle connection, or a new one (its connect bounded by the caller's timeout)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._pid != os.getpid():
            # Connections belong to the loop (and process) that opened them.
            self._idle.clear()
            self._loop, self._pid = loop, os.getpid()
        if self._idle:
            return self._idle.pop()
        conn = self.spec.async_connection(connect_timeout=self._connect_timeout)
        try:
            await conn.connect()
        except BaseException:
            await _drop(conn)
            raise
        return conn

    def give(self, conn: AsyncRedisConnection) -> None:
        if self._loop is asyncio.get_running_loop():
            self._idle.append(conn)

    async def close(self) -> None:
        while self._idle:
            await _drop(self._idle.pop())


async def _drop(conn: AsyncRedisConnection) -> None:
    # Closing a broken connection may fail; it is gone either way.
    with contextlib.suppress(Exception):
        await conn.disconnect(nowait=True)


class AsyncFanout:
    """Runs :class:`Fanout` steps against a fixed list of servers, concurrently."""

    def __init__(self, specs: Sequence[ServerSpec], config: RedlockConfig) -> None:
        self.config = config
        self.nodes = [_AsyncNode(spec, config.connect_timeout) for spec in specs]

    @property
    def labels(self) -> list[str]:
        return [node.label for node in self.nodes]

    async def run(self, step: Fanout) -> Round:
        """Send ``step``'s command to every server at once and collect the replies (R7)."""
        args = command_args(step)
        started = time.monotonic()
        deadline = started + step.timeout
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(self._exchange(node, step, args, deadline)) for node in self.nodes
            ]
        finished = time.monotonic()
        return Round(started, finished, tuple(task.result() for task in tasks))

    async def _exchange(
        self, node: _AsyncNode, step: Fanout, args: tuple[str | int, ...], deadline: float
    ) -> NodeOutcome:
        conn: AsyncRedisConnection | None = None
        sent = time.monotonic()
        try:
            async with asyncio.timeout_at(_loop_time(deadline)):
                conn = await node.take()
                sent = time.monotonic()
                await conn.send_packed_command(conn.pack_command(*args), check_health=False)
                try:
                    raw = await conn.read_response(timeout=None)  # type: ignore[arg-type]
                except NoScriptError:
                    # The server lost its script cache: EVAL caches it again.
                    await conn.send_packed_command(
                        conn.pack_command(*eval_args(step)), check_health=False
                    )
                    raw = await conn.read_response(timeout=None)  # type: ignore[arg-type]
        except ResponseError as exc:
            # An error reply (READONLY, NOPERM, WRONGTYPE, ...) leaves the stream in step.
            if conn is not None:
                node.give(conn)
            return NodeOutcome(node.label, *translate(exc))
        except (Exception, asyncio.CancelledError) as exc:
            if conn is not None:
                await asyncio.shield(_drop(conn))
            if isinstance(exc, asyncio.CancelledError):
                raise
            if isinstance(exc, TimeoutError):
                detail = "still connecting" if conn is None else "no reply in time"
                return NodeOutcome(node.label, Reply.TIMEOUT, detail)
            return NodeOutcome(node.label, *translate(exc))
        node.give(conn)
        reply, detail = interpret(step.op, raw)
        return NodeOutcome(node.label, reply, detail, time.monotonic() - sent)

    async def close(self) -> None:
        for node in self.nodes:
            await node.close()


def _loop_time(monotonic_deadline: float) -> float:
    """A ``time.monotonic()`` deadline on the running loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (monotonic_deadline - time.monotonic())
