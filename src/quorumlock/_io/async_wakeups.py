"""Release announcements for the asyncio API: the twin of ``quorumlock._io.wakeups``.

One subscriber connection per server and ``Redlock``, owned by one task that reads it
(with hiredis, like the fan-out's reader) and writes the subscriptions the waiting tasks
ask for. Connections and tasks belong to the event loop that made them; another loop (or
a forked child) starts afresh. A task stops after a while without waiters.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections.abc import Callable, Sequence

import hiredis

from quorumlock._algorithm.flows import Watch
from quorumlock._algorithm.outcomes import NodeOutcome, Verdict, judge_acquire
from quorumlock._io.packing import pack
from quorumlock._io.servers import ServerSpec
from quorumlock._io.wakeups import (
    IDLE_STOP,
    RECONNECT_PAUSE,
    Entry,
    Lingering,
    Stood,
    Turns,
    Woke,
    arrival,
    channel_key,
    enlist,
    enough,
    heard_everything,
    listen_in,
    may_keep,
    new_member,
    note_woke,
    parse,
    release_channel,
    route,
    spot_behind,
    subscriber_spec,
    wake_channel,
    wanted_channels,
    withdraw,
)

__all__ = ["AsyncWaiter", "AsyncWakeups"]


class AsyncWaiter:
    """One blocking acquire's view of the announcements for its key."""

    __slots__ = (
        "_event", "_turn", "alone", "arrival", "channel", "channels", "entry", "kind",
        "popped", "queued", "requeue",
    )  # fmt: skip

    def __init__(
        self,
        channel: bytes,
        entry: Entry[AsyncWaiter],
        others: tuple[bytes, ...] = (),
        *,
        queued: bool = True,
        kind: str = "",
    ) -> None:
        self.channel = channel
        self.channels = (channel, *(c for c in others if c != channel))
        self.entry = entry
        self.queued = queued
        self.kind = kind
        self.arrival = arrival()
        self.popped = False
        self.alone = False
        self.requeue = False
        self._event = asyncio.Event()
        self._turn: asyncio.Event | None = None  # while it waits on behind the poller

    def settle(self) -> None:
        """Forget a wake-up that only asked to put the entry back in line."""
        if self.requeue:
            self.requeue = False
            self._event.clear()

    def rearm(self) -> None:
        """Forget earlier announcements: call it just before sending an attempt."""
        self.alone = self.requeue = False
        self._event.clear()

    async def wait(self, seconds: float, longer: float = 0.0) -> bool:
        """Wait up to ``seconds``; True if a release was announced since :meth:`rearm`.
        Then, while another waiter of the entry polls for it (``Entry.poller``), up to
        ``longer`` more (``math.inf``: no bound), until this one is the poller or an
        announcement comes."""
        if self._event.is_set():
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, seconds)):
                await self._event.wait()
        if self._event.is_set() or longer <= 0 or not self.entry.polled_for(self):
            return self._event.is_set()
        turn = self._turn = asyncio.Event()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if math.isinf(longer) else longer):
                    while True:
                        if self._event.is_set() or not self.entry.polled_for(self):
                            break
                        turn.clear()
                        await turn.wait()
        finally:
            self._turn = None
        return self._event.is_set()

    def notified(self) -> bool:
        return self._event.is_set()

    def notify(self, *, alone: bool = False, requeue: bool = False) -> None:
        if alone:
            self.alone = self.popped = True
        self.requeue = requeue
        self._event.set()
        self.promote()

    def promote(self) -> None:
        """End a wait past the pause (:meth:`wait`): this waiter polls now, or is told."""
        if self._turn is not None:
            self._turn.set()


class AsyncWakeups:
    """The subscriptions of one asyncio ``Redlock``."""

    def __init__(self, specs: Sequence[ServerSpec], connect_timeout: float) -> None:
        self._specs = list(specs)
        self._connect_timeout = connect_timeout
        self._waiters: dict[bytes, Entry[AsyncWaiter]] = {}
        self._lingering = Lingering()
        self._listeners: list[_AsyncListener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()
        self._changed: asyncio.Condition | None = None
        self._member = new_member()
        self._wake = wake_channel(self._member)
        self._woke = Woke()
        self._turns = Turns()
        self._timer: asyncio.TimerHandle | None = None  # for the earliest wake-up owed
        self._timer_at = math.inf  # when it fires (monotonic)
        #: see :attr:`quorumlock._io.wakeups.SyncWakeups.on_pass` (called on the loop)
        self.on_pass: Callable[[str, str], None] | None = None
        #: see :attr:`quorumlock._io.wakeups.SyncWakeups.on_wake` (called on the loop)
        self.on_wake: Callable[[str], None] | None = None

    async def watch(self, step: Watch) -> tuple[AsyncWaiter, bool]:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.watch`."""
        key, timeout, keys, queued = step.key, step.timeout, step.keys, step.queued
        since, kind = step.since, step.kind
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._pid != os.getpid():
            for listener in self._listeners:
                listener.stop()
            self._waiters.clear()
            self._lingering.clear()
            self._woke.clear()
            self._forget_turns()
            self._listeners = [
                _AsyncListener(spec, self, self._connect_timeout) for spec in self._specs
            ]
            if self._pid != os.getpid():
                self._member = new_member()  # the parent's stays the parent's
                self._wake = wake_channel(self._member)
            self._loop, self._pid = loop, os.getpid()
            self._changed = asyncio.Condition()
        assert self._changed is not None
        channel = release_channel(key)
        entry = self._waiters.setdefault(channel, Entry(self._member))
        others = tuple(release_channel(k) for k in keys)
        waiter = AsyncWaiter(channel, entry, others, queued=queued, kind=kind)
        heard = [self._lingering.take(c) for c in waiter.channels]
        missed = not heard_everything(self._listeners, heard, waiter.channels, since, self._wake)
        if enlist(self._waiters, waiter, self._member):
            for listener in self._listeners:
                listener.want()
        listeners = self._listeners
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout), self._changed:
                    await self._changed.wait_for(
                        lambda: enough(listeners, waiter.channel, self._wake)
                    )
        except BaseException:
            # cancelled while the subscriptions were being confirmed: the caller never
            # gets the waiter to unwatch, so the subscription would outlive it
            self.unwatch(waiter)
            raise
        return waiter, missed

    def join(self, waiter: AsyncWaiter, lease_ms: int) -> tuple[str, str] | None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.join`."""
        waiter.settle()
        return waiter.entry.join(waiter, lease_ms, time.monotonic())

    def woke(self, key: str, stood: Stood | None, *, started: float, token: str) -> None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.woke`."""
        note_woke(
            self._woke, self._lingering, key, stood, started=started, token=token,
            servers=len(self._specs),
        )  # fmt: skip

    def stand_behind(self, key: str, lease_ms: int) -> tuple[str, str] | None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.stand_behind`."""
        if self._loop is not asyncio.get_running_loop() or self._pid != os.getpid():
            return None
        return spot_behind(
            self._waiters, self._lingering, self._listeners, release_channel(key),
            self._wake, member=self._member, lease_ms=lease_ms, now=time.monotonic(),
        )  # fmt: skip

    def stood(self) -> tuple[str, list[str]]:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.stood`."""
        if self._pid != os.getpid():
            return self._member, []
        return self._member, self._woke.stood(time.monotonic())

    def listen(self, key: str) -> tuple[AsyncWaiter | None, float | None, int | None]:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.listen`."""
        channel = release_channel(key)
        now = time.monotonic()
        since, stood = self._woke.since(key, now)
        if self._loop is not asyncio.get_running_loop() or self._pid != os.getpid():
            return None, since, None
        if self._turns.asked(key, now):
            return None, since, None  # taking the lock back: a plain attempt first
        waiter, place = listen_in(
            self._waiters, self._lingering, self._listeners, channel, self._wake,
            member=self._member, stood=stood, new_waiter=AsyncWaiter, now=now,
        )  # fmt: skip
        return waiter, since, place

    def attempted(
        self, waiter: AsyncWaiter, outcomes: Sequence[NodeOutcome], *, fair: bool = False
    ) -> None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.attempted`."""
        now = time.monotonic()
        waiter.entry.attempted(waiter, outcomes, now, fair=fair)
        if judge_acquire(outcomes, in_time=True) is Verdict.ACQUIRED:  # a hold begins
            self._turns.held(channel_key(waiter.channel), now)

    def keep_turn(self, key: str) -> bool:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.keep_turn`."""
        if self._loop is not asyncio.get_running_loop() or self._pid != os.getpid():
            return False
        return may_keep(
            self._turns, self._waiters, self._lingering, self._listeners, key,
            wake=self._wake, now=time.monotonic(),
        )  # fmt: skip

    def released(self, key: str, started: float, finished: float, *, kept: bool) -> None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.released`: a timer of the event
        loop wakes the waiter."""
        if self._loop is not asyncio.get_running_loop() or self._pid != os.getpid():
            return
        self._turns.released(key, started, finished, kept=kept)
        if kept:
            self._arm()

    def gave_up(self, key: str) -> None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.gave_up`: the timer sends it."""
        if self._loop is not asyncio.get_running_loop() or self._pid != os.getpid():
            return
        if self._turns.gave_up(key, time.monotonic()):
            self._arm()

    def owed(self) -> list[str]:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.owed`."""
        if self._pid != os.getpid():
            return []
        return self._turns.due()

    def _arm(self) -> None:
        """Have the earliest wake-up owed sent when it is due (one timer at a time)."""
        due = self._turns.next_due()
        if due is None or self._loop is None or self._timer_at <= due:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        delay = max(0.0, due - time.monotonic())
        self._timer = self._loop.call_at(self._loop.time() + delay, self._wake_due)

    def _wake_due(self) -> None:
        self._timer, self._timer_at = None, math.inf
        keys = self._turns.due(time.monotonic())
        if self.on_wake is not None:
            for key in keys:
                self.on_wake(key)
        self._arm()

    def _forget_turns(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
        self._turns.clear()

    def unwatch(
        self, waiter: AsyncWaiter, *, kept: bool = False, acquired: bool = False
    ) -> str | None:
        """See :meth:`quorumlock._io.wakeups.SyncWakeups.unwatch`."""
        member, dropped = withdraw(
            self._waiters, waiter, self._member, kept=kept, acquired=acquired
        )
        # still subscribed for a while; the listeners look again within a second
        self._lingering.leave(dropped, time.monotonic())
        return member

    def close(self) -> None:
        """Stop the subscriber tasks (waiters still waiting fall back to polling)."""
        for listener in self._listeners:
            listener.stop()
        self._listeners = []
        self._waiters.clear()
        self._lingering.clear()
        self._forget_turns()
        self._loop = None

    # Called by the subscriber tasks.

    def wanted(self, listener: _AsyncListener) -> set[bytes] | None:
        if listener not in self._listeners:
            return None
        lingering = self._lingering.channels(time.monotonic())
        return wanted_channels(self._waiters, lingering, self._wake)

    async def confirmed(self) -> None:
        if self._changed is not None:
            async with self._changed:
                self._changed.notify_all()

    def deliver(self, channel: bytes, payload: bytes) -> None:
        now = time.monotonic()
        unheard = route(
            self._waiters, self._lingering, self._wake, channel=channel, payload=payload,
            now=now,
        )  # fmt: skip
        if unheard is None or not self._woke.passing(*unheard, now):
            return
        if self.on_pass is not None:
            self.on_pass(unheard[0], self._member)


class _AsyncListener:
    """The subscriber connection to one server and the task that owns it."""

    def __init__(self, spec: ServerSpec, hub: AsyncWakeups, connect_timeout: float) -> None:
        self._spec = spec
        self._hub = hub
        self._connect_timeout = connect_timeout
        self.confirmed: dict[bytes, float] = {}  # each channel confirmed, and when
        self.refused = False  # the server answered a SUBSCRIBE with an error (NOPERM)
        self._task: asyncio.Task[None] | None = None
        self._poked = asyncio.Event()
        self._stopped = False
        self._failures = 0

    def want(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        self.poke()

    def poke(self) -> None:
        self._poked.set()

    def stop(self) -> None:
        self._stopped = True
        if self._task is not None and not self._task.done():
            with contextlib.suppress(RuntimeError):  # its loop may be closed already
                self._task.cancel()

    async def _run(self) -> None:
        while not self._stopped:
            outcome = await self._session()
            if outcome == "retired":
                return
            if outcome == "failed":
                # The next attempt after a pause, or at once for a channel added since
                # this one began (``want``); none once nothing is wanted (``want``
                # starts the task again). A server that refuses at once (a unix socket
                # that is gone) must not be retried in a loop that never yields.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RECONNECT_PAUSE):
                        await self._poked.wait()
                if not self._hub.wanted(self):
                    return

    async def _session(self) -> str:
        self._poked.clear()  # (what was wanted so far, this session subscribes to)
        spec = subscriber_spec(self._spec, self._failures)
        conn = spec.async_connection(connect_timeout=self._connect_timeout)
        try:
            await conn.connect()
            writer: asyncio.StreamWriter = conn._writer  # type: ignore[attr-defined]
            stream: asyncio.StreamReader = conn._reader  # type: ignore[attr-defined]
            reader = hiredis.Reader()
            incoming: asyncio.Task[bytes] | None = None
            try:
                subscribed: set[bytes] = set()
                idle_since: float | None = None
                while True:
                    if self._stopped:
                        break
                    wanted = self._hub.wanted(self)
                    if wanted is None:
                        self._stopped = True
                        break
                    if not wanted:
                        now = time.monotonic()
                        idle_since = idle_since or now
                        if now - idle_since >= IDLE_STOP:
                            return "retired"
                    else:
                        idle_since = None
                    if added := wanted - subscribed:
                        writer.write(pack(("SUBSCRIBE", *added)))
                        subscribed |= added
                    if removed := subscribed - wanted:
                        writer.write(pack(("UNSUBSCRIBE", *removed)))
                        subscribed -= removed
                        kept = self.confirmed.keys() & wanted
                        self.confirmed = {c: self.confirmed[c] for c in kept}
                    self._poked.clear()
                    if incoming is None:
                        incoming = asyncio.ensure_future(stream.read(65536))
                    poked = asyncio.ensure_future(self._poked.wait())
                    try:
                        done, _ = await asyncio.wait(
                            {incoming, poked}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED
                        )
                    finally:  # stopped meanwhile (close()): not left waiting for ever
                        poked.cancel()
                    if incoming not in done:
                        continue
                    data, incoming = incoming.result(), None
                    if not data:
                        raise ConnectionError("the server closed the connection")
                    reader.feed(data)
                    while True:
                        message = reader.gets()
                        if message is False:
                            break
                        await self._handle(message)
            finally:
                if incoming is not None:
                    incoming.cancel()
            return "stopped"
        except Exception:
            self._failures += 1
            return "failed"
        finally:
            self.confirmed = {}
            with contextlib.suppress(Exception):
                await conn.disconnect(nowait=True)

    async def _handle(self, message: object) -> None:
        kind, channel, payload = parse(message, self._spec.label)
        if kind == "message":
            self._hub.deliver(channel, payload)
        elif kind != "other":
            self.refused = kind == "refused"
            if kind == "subscribed":
                self.confirmed = {**self.confirmed, channel: time.monotonic()}
            await self._hub.confirmed()
