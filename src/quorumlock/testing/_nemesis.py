"""Nemeses: the faults the verify suite injects while workers contend for a lock.

Each nemesis is a small class whose schedule runs in one thread of the parent process
from :meth:`Nemesis.start` until the run's stop time or :meth:`Nemesis.stop`, whichever
comes first. :meth:`Nemesis.stop` then heals everything (resumes paused servers and
workers, starts killed servers, removes added latency), so the run can be checked and
torn down. Every wait is bounded by the stop time; every signal goes to a process the
suite started, by PID.

Schedules are in units of the lock's ttl, so they keep their meaning at any ttl. The
``rejoin`` time of :class:`Targets` is how long the safe configuration keeps a restarted
server out of quorums (its ``max_ttl``); schedules leave that much quiet time after a
burst, in *every* configuration, so both configurations face the same faults.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from quorumlock.testing._proxy import LatencyProxy
from quorumlock.testing._servers import LocalServer
from quorumlock.testing._worker import WorkerHandle

__all__ = ["NEMESES", "Nemesis", "Targets", "make_nemesis"]

_JOIN_TIMEOUT: Final = 30.0  # a restart in progress may take up to its start timeout
_FLAG_POLL: Final = 0.002


@dataclass(frozen=True, slots=True, kw_only=True)
class Targets:
    """What a nemesis may hurt, and the timing it should scale its schedule to."""

    servers: Sequence[LocalServer]
    workers: Sequence[WorkerHandle]
    proxies: Sequence[LatencyProxy]
    ttl: float
    rejoin: float
    instance_timeout: float
    rng: random.Random

    @property
    def tolerated(self) -> int:
        """How many servers may fail with a majority left (at least 1, to hurt N = 1 too)."""
        n = len(self.servers)
        return max(1, n - (n // 2 + 1))


class Nemesis:
    """Base class: a fault schedule in a thread, and the healing that undoes it.

    Subclasses implement :meth:`_run` (using :meth:`_sleep` for every wait, and counting
    each injected fault in ``faults``) and may extend :meth:`_heal`.
    """

    name: ClassVar[str] = "none"

    def __init__(self, targets: Targets) -> None:
        self.targets = targets
        self.faults = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._until = 0.0
        self._thread: threading.Thread | None = None

    def start(self, *, at: float, until: float) -> None:
        """Run the schedule in a thread from monotonic time ``at`` until ``until``."""
        self._until = until

        def run() -> None:
            try:
                if self._sleep(at - time.monotonic()):
                    self._run()
            except BaseException as exc:  # reported by stop()
                self.error = exc

        self._thread = threading.Thread(target=run, name=f"nemesis-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the schedule, wait for the thread, and heal everything. Idempotent.

        Raises:
            TimeoutError: the thread did not stop within 30 s (healing is attempted anyway).
            RuntimeError: the schedule failed (for example a server could not restart); the
                error is chained as the cause.
        """
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(_JOIN_TIMEOUT)
        self._heal()
        if thread is not None and thread.is_alive():
            raise TimeoutError(f"nemesis {self.name!r} did not stop within {_JOIN_TIMEOUT} s")
        error, self.error = self.error, None
        if error is not None:
            raise RuntimeError(f"nemesis {self.name!r} failed: {error!r}") from error

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` (cut short by the stop time); False if the run is over."""
        remaining = self._until - time.monotonic()
        if remaining <= 0 or self._stop.is_set():
            return False
        self._stop.wait(max(0.0, min(seconds, remaining)))
        return not self._stop.is_set() and time.monotonic() < self._until

    def _run(self) -> None:
        """The schedule. The base nemesis injects nothing."""

    def _heal(self) -> None:
        for worker in self.targets.workers:
            if worker.paused:
                worker.resume()
        for server in self.targets.servers:
            if server.paused:
                server.resume()
            elif not server.running:
                server.start()
        for proxy in self.targets.proxies:
            proxy.set_delay(0.0)


class KillRestart(Nemesis):
    """Bursts of ``kill -9`` + immediate restart, round-robin, spaced ``ttl / 6``.

    A burst lasts ``1.2 * ttl`` (every server and then some, for N <= 7), so a holder's
    majority is wiped while it still holds: without a restart quarantine a second client
    gets the lock on the emptied servers. Bursts are ``rejoin + ttl`` apart, so that with
    the quarantine the restarted servers rejoin before the next burst.
    """

    name = "kill-restart"

    def _run(self) -> None:
        t = self.targets
        spacing = t.ttl / 6
        index = t.rng.randrange(len(t.servers))
        if not self._sleep(0.5 * t.ttl):
            return
        while True:
            burst_end = time.monotonic() + 1.2 * t.ttl
            while (now := time.monotonic()) < burst_end:
                t.servers[index % len(t.servers)].restart()
                self.faults += 1
                index += 1
                if not self._sleep(now + spacing - time.monotonic()):
                    return
            if not self._sleep(t.rejoin + t.ttl):
                return


class KillDelayedRestart(Nemesis):
    """``kill -9`` one server at a time; restart it ``1.25 * ttl`` later (R11's delayed
    restart). Kills are spaced so that at most a minority is down or rejoining at once.
    """

    name = "kill-delayed-restart"

    def _run(self) -> None:
        t = self.targets
        down = 1.25 * t.ttl
        period = (down + t.rejoin) / t.tolerated * 1.05
        index = t.rng.randrange(len(t.servers))
        if not self._sleep(0.5 * t.ttl):
            return
        while True:
            server = t.servers[index % len(t.servers)]
            index += 1
            killed_at = time.monotonic()
            server.kill()
            self.faults += 1
            alive = self._sleep(down)
            server.start()  # also when the run ends: _heal would do it anyway
            if not alive or not self._sleep(killed_at + period - time.monotonic()):
                return


class PauseServers(Nemesis):
    """SIGSTOP a random minority of servers for ``0.3..1.5 * ttl``, then SIGCONT."""

    name = "pause-servers"

    def _run(self) -> None:
        t = self.targets
        if not self._sleep(0.3 * t.ttl):
            return
        while True:
            chosen = t.rng.sample(list(t.servers), t.rng.randint(1, t.tolerated))
            for server in chosen:
                server.pause()
                self.faults += 1
            alive = self._sleep(t.rng.uniform(0.3, 1.5) * t.ttl)
            for server in chosen:
                server.resume()
            if not alive or not self._sleep(t.rng.uniform(0.1, 0.5) * t.ttl):
                return


class PauseClients(Nemesis):
    """SIGSTOP a worker for ``1.3..1.8 * ttl`` (its lock expires meanwhile), then SIGCONT.

    The worker is picked at random among those inside their critical section (between
    their validity check and their write), where a pause turns the worker into a stale
    holder that writes after it was superseded; if none is there within one ttl, any
    worker is picked.
    """

    name = "pause-clients"

    def _run(self) -> None:
        t = self.targets
        if not self._sleep(0.3 * t.ttl):
            return
        while True:
            victim = self._pick()
            if victim is None:
                return
            victim.pause()
            self.faults += 1
            alive = self._sleep(t.rng.uniform(1.3, 1.8) * t.ttl)
            victim.resume()
            if not alive or not self._sleep(t.rng.uniform(0.2, 0.5) * t.ttl):
                return

    def _pick(self) -> WorkerHandle | None:
        t = self.targets
        give_up = time.monotonic() + t.ttl
        while time.monotonic() < give_up:
            inside = [w for w in t.workers if w.alive and w.in_critical_section]
            if inside:
                return t.rng.choice(inside)
            if not self._sleep(_FLAG_POLL):
                return None
        alive = [w for w in t.workers if w.alive]
        return t.rng.choice(alive) if alive else None


class Latency(Nemesis):
    """Every ``0.2..0.6 * ttl``, give each server's proxy a new random one-way delay.

    Seven times in ten a delay well under the per-instance timeout; otherwise 0.6 to 1.5
    times it (a round trip of 1.2 to 3 times the timeout), with jitter. Requires the
    servers to be reached through :class:`LatencyProxy` instances (``Targets.proxies``).
    """

    name = "latency"

    def _run(self) -> None:
        t = self.targets
        if not t.proxies:
            raise RuntimeError("the latency nemesis needs the servers behind LatencyProxy")
        while True:
            for proxy in t.proxies:
                if t.rng.random() < 0.7:
                    proxy.set_delay(t.rng.uniform(0.0, 0.2) * t.instance_timeout)
                else:
                    base = t.rng.uniform(0.6, 1.5) * t.instance_timeout
                    proxy.set_delay(base, jitter=0.3 * t.instance_timeout)
                self.faults += 1
            if not self._sleep(t.rng.uniform(0.2, 0.6) * t.ttl):
                return


_CLASSES: Final[dict[str, type[Nemesis]]] = {
    cls.name: cls
    for cls in (Nemesis, KillRestart, KillDelayedRestart, PauseServers, PauseClients, Latency)
}

NEMESES: Final[tuple[str, ...]] = tuple(_CLASSES)
"""The names :func:`quorumlock.testing.verify` accepts, the harmless ``"none"`` first."""


def make_nemesis(name: str, targets: Targets) -> Nemesis:
    """The nemesis called ``name``.

    Raises:
        ValueError: ``name`` is not one of :data:`NEMESES`.
    """
    try:
        cls = _CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown nemesis {name!r}; choose one of {', '.join(NEMESES)}") from None
    return cls(targets)
