"""Leader failover: how long an election has no leader when its leader dies, against
the ttl, and when it resigns.

``python -m quorumlock.benchmarks.failover [--servers 5] [--ttl 2] [--trials 10]``

Each trial, on N local servers (or ``$QUORUMLOCK_SERVERS``):

1. a leader process campaigns (``rl.election(name, ttl=...)``), prints its term and
   sleeps, renewing its leadership a third of the ttl after each renewal;
2. a candidate in this process campaigns and waits;
3. after a random pause (uniform in one ttl, so the kill falls at a random point of
   the renewal cycle) the leader is killed with SIGKILL, and the time from the kill to
   the candidate leading is the **failover**. Nothing tells the candidate that the
   leader died: it leads once the dead leader's keys expired, between two thirds of a
   ttl and one ttl after the kill (the time left since the last renewal), plus at
   most one polling pause (``retry_delay``, 0.2 s by default);
4. the candidate then resigns while a second candidate waits: the time from the end
   of the resign to the second one leading is the **resign hand-over**, about one
   round trip (the resign's release is announced and wakes the waiter).

Both are measured on CLOCK_MONOTONIC in this process. Printed: min, median and max of
each, and the failover as a share of the ttl.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from quorumlock import Redlock
from quorumlock.benchmarks._common import local_servers

__all__ = ["FailoverResult", "main", "measure"]

# The leader process: campaigns, prints its term, then sleeps until it is killed.
_LEADER = """
import json, sys, time
import quorumlock
servers, name, ttl = json.loads(sys.argv[1])
rl = quorumlock.Redlock(servers)
with rl.election(name, ttl=ttl, identity="doomed").campaign(timeout=60) as term:
    print(json.dumps({"term": term.number}), flush=True)
    time.sleep(600)
"""


@dataclass(frozen=True)
class FailoverResult:
    """Seconds per trial: from the SIGKILL to the next leader, and from a resign's end to
    the next leader."""

    ttl: float
    servers: int
    failovers: tuple[float, ...]
    resigns: tuple[float, ...]

    def summary(self) -> str:
        def three(values: Sequence[float]) -> str:
            return (
                f"min {min(values):.3f} s, median {statistics.median(values):.3f} s, "
                f"max {max(values):.3f} s"
            )

        share = statistics.median(self.failovers) / self.ttl
        return (
            f"N = {self.servers}, ttl {self.ttl:g} s, {len(self.failovers)} trials\n"
            f"failover after SIGKILL: {three(self.failovers)} "
            f"(median {share:.2f} x ttl)\n"
            f"hand-over after a resign: {three(self.resigns)}"
        )


def _campaign_in_thread(rl: Redlock, name: str, ttl: float, led: list[float]) -> threading.Thread:
    """A candidate that campaigns in a thread, notes when it leads, then resigns once told
    (the list gets a second entry), so that the next trial step can measure the resign."""

    def run() -> None:
        with rl.election(name, ttl=ttl, identity=f"candidate-{len(led)}").campaign(timeout=60):
            led.append(time.monotonic())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def measure(urls: Sequence[str], *, ttl: float = 2.0, trials: int = 5) -> FailoverResult:
    """Run ``trials`` failovers and resign hand-overs on the servers ``urls``."""
    failovers: list[float] = []
    resigns: list[float] = []
    rng = random.Random()
    rl = Redlock(list(urls), retry_delay=0.2)
    try:
        for trial in range(trials):
            name = f"bench:failover:{os.getpid()}:{trial}"
            leader = subprocess.Popen(
                [sys.executable, "-c", _LEADER, json.dumps([list(urls), name, ttl])],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert leader.stdout is not None
                json.loads(leader.stdout.readline())
                led: list[float] = []
                waiting = _campaign_in_thread(rl, name, ttl, led)
                time.sleep(rng.uniform(0, ttl))
                killed = time.monotonic()
                os.kill(leader.pid, signal.SIGKILL)
                leader.wait(timeout=10)
                waiting.join(timeout=ttl * 5 + 10)
                if not led:
                    raise RuntimeError(f"no new leader within {ttl * 5 + 10:g} s of the kill")
                failovers.append(led[0] - killed)
                # The candidate resigned as soon as it led; measure the next hand-over
                # with a leader that holds until this process tells it to resign.
                resigns.append(_resign_handover(rl, name, ttl))
            finally:
                if leader.poll() is None:
                    os.kill(leader.pid, signal.SIGKILL)
                    leader.wait(timeout=10)
    finally:
        rl.close()
    return FailoverResult(ttl, len(urls), tuple(failovers), tuple(resigns))


def _resign_handover(rl: Redlock, name: str, ttl: float) -> float:
    """From the end of a resign to the waiting candidate leading, in seconds."""
    election = rl.election(name, ttl=ttl, identity="resigning")
    led: list[float] = []
    with election.campaign(timeout=60):
        waiting = _campaign_in_thread(rl, name, ttl, led)
        time.sleep(min(0.5, ttl / 2))  # the candidate tried, failed and waits
    resigned = time.monotonic()
    waiting.join(timeout=ttl * 5 + 10)
    if not led:
        raise RuntimeError("no new leader after the resign")
    return led[0] - resigned


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.failover", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--servers", type=int, default=5, help="local servers to start (5)")
    parser.add_argument("--ttl", type=float, default=2.0, help="the election's ttl (2 s)")
    parser.add_argument("--trials", type=int, default=10, help="trials (10)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    with local_servers(os.environ.get("QUORUMLOCK_SERVERS"), args.servers) as (urls, _):
        result = measure(urls, ttl=args.ttl, trials=args.trials)
    if args.json:
        print(json.dumps(result.__dict__))
    else:
        print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
