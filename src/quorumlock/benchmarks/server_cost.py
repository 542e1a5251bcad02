"""What one uncontended cycle's commands cost a server: ``python -m
quorumlock.benchmarks.server_cost``.

The scripts' part of the uncontended gap (figure 1: the bare floor's loop sending
quorumlock's two scripts, against the bare floor) is the servers' work, on the cores the
client shares with them. This measures that work on one local server, part by part:
each cycle is an acquire and a release, each command sent alone and its reply read
before the next (one round trip each, as in a real cycle), and the server process's CPU
time is read from ``/proc/<pid>/schedstat`` (nanoseconds, kernel time included) around
slices of cycles. The variants, one slice each per round, in an order rotated from round
to round:

* the floor: ``SET key token NX PX`` and the compare-and-delete script;
* a ``SET`` in a script: the floor with its ``SET`` sent as a one-line script instead,
  the cost of calling a script at all;
* ``+ HMGET`` of the marker: that script reading the incarnation marker first, as the
  acquire script does;
* the acquire script, as quorumlock sends it (the restart quarantine's check), with the
  floor's release;
* the same on a server that quorumlock did not start: the server started here is
  stamped new (its marker's ``since`` is 0: it never lost its memory), where a server a
  user runs has its start there (an hour ago, for this variant's slices), whose
  quarantine each acquire checks until it has seen it over;
* the release script, as quorumlock sends it (announcing the release to waiters), after
  the floor's ``SET``;
* both scripts: what quorumlock's cycle asks of each server.

Each variant's cost is given as its median server CPU time per cycle and as the median,
over rounds, of its difference from the floor's slice of the same round. Linux only (the
schedstat file); the server is started here, as its process must be known. Numbers only:
nothing is judged against a time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, cast

import redis

from quorumlock._algorithm.lockstate import new_token
from quorumlock._algorithm.scripts import ACQUIRE, MARKER_KEY, RELEASE
from quorumlock._algorithm.wire import command_args
from quorumlock._io.incarnation import open_session
from quorumlock._io.packing import pack
from quorumlock.benchmarks._common import SOCKET_TIMEOUT, bounded
from quorumlock.benchmarks.uncontended import TOKEN_MARK, TTL_MS, RawConnection, cycle_commands
from quorumlock.testing import LocalServerGroup, ServerBinaryNotFound, server_version

__all__ = ["VARIANTS", "main", "measure"]

#: The floor's release, as in the uncontended benchmark's bare floor.
BARE_RELEASE: Final = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end"
)

#: The acquire scripts of the probes, called with the acquire script's own arguments.
SET_IN_A_SCRIPT: Final = (
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"
)
HMGET_AND_SET: Final = (
    "redis.call('hmget', KEYS[2], 'run_id', 'since', 'max_ttl', 'fence', 'promotion', "
    "'lost') " + SET_IN_A_SCRIPT
)

#: The variant whose slices run with the marker of a server started an hour ago.
UNSTAMPED: Final = "on a server not stamped"

#: Each variant's name and its acquire and release, by the names :func:`_commands` gives.
VARIANTS: Final[tuple[tuple[str, str, str], ...]] = (
    ("the floor", "set", "bare release"),
    ("a SET in a script", "set in a script", "bare release"),
    ("+ HMGET of the marker", "hmget and set", "bare release"),
    ("the acquire script", "acquire", "bare release"),
    (UNSTAMPED, "acquire", "bare release"),
    ("the release script", "set", "release"),
    ("both scripts", "acquire", "release"),
)


def _cpu_ns(pid: int) -> int:
    """The process's time on a CPU so far, in ns (user and kernel)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def _commands(conn: RawConnection, key: str) -> dict[str, list[bytes]]:
    """Each command of the variants, packed once and split where the token goes."""
    shas: dict[str, str] = {}
    for name, source in (
        ("bare release", BARE_RELEASE),
        ("set in a script", SET_IN_A_SCRIPT),
        ("hmget and set", HMGET_AND_SET),
        ("acquire", ACQUIRE.source),
        ("release", RELEASE.source),
    ):
        conn.send_command("SCRIPT", "LOAD", source)
        reply = conn.read_response()
        shas[name] = reply.decode() if isinstance(reply, bytes) else str(reply)
    acquire, release = cycle_commands(key)
    acquire_args = list(command_args(acquire, open_session(cast(Any, conn), SOCKET_TIMEOUT)))
    commands = {
        "set": pack(("SET", key, TOKEN_MARK, "NX", "PX", TTL_MS)),
        "bare release": pack(("EVALSHA", shas["bare release"], 1, key, TOKEN_MARK)),
        "acquire": pack(tuple(acquire_args)),
        "release": pack(command_args(release)),
    }
    for probe in ("set in a script", "hmget and set"):
        args = list(acquire_args)
        args[1] = shas[probe]  # the acquire script's keys and arguments, another script
        commands[probe] = pack(tuple(args))
    return {name: packed.split(TOKEN_MARK.encode()) for name, packed in commands.items()}


def _slice(
    conn: RawConnection, pid: int, acquire: list[bytes], release: list[bytes], cycles: int
) -> float:
    """The server's CPU microseconds per cycle over ``cycles`` cycles."""
    started = _cpu_ns(pid)
    for _ in range(cycles):
        token = new_token().encode()
        conn.send_packed_command([token.join(acquire)], check_health=False)
        granted = conn.read_response()
        conn.send_packed_command([token.join(release)], check_health=False)
        released = conn.read_response()
        if granted not in (1, b"OK") or released != 1:
            raise RuntimeError(f"an uncontended cycle failed: {granted!r}, {released!r}")
    return (_cpu_ns(pid) - started) / cycles / 1000


def _since(conn: RawConnection, hours_ago: int) -> None:
    """Set the marker's ``since`` to the server's clock ``hours_ago`` hours ago (0: to
    0, the stamp of a new server)."""
    since = 0
    if hours_ago:
        conn.send_command("TIME")
        seconds = cast(list[bytes], conn.read_response())[0]
        since = (int(seconds) - 3600 * hours_ago) * 1000
    conn.send_command("HSET", MARKER_KEY, "since", since)
    conn.read_response()


def measure(
    conn: RawConnection, pid: int, key: str, *, cycles: int, seconds: float
) -> tuple[int, dict[str, list[float]]]:
    """Rounds of one slice per variant until ``seconds`` passed (at least one round):
    the number of rounds and each variant's server CPU microseconds per cycle, by
    round."""
    commands = _commands(conn, key)
    names = [name for name, _, _ in VARIANTS]
    parts = {name: (commands[a], commands[r]) for name, a, r in VARIANTS}

    def one_slice(name: str, count: int) -> float:
        if name != UNSTAMPED:
            return _slice(conn, pid, *parts[name], count)
        _since(conn, 1)
        try:
            return _slice(conn, pid, *parts[name], count)
        finally:
            _since(conn, 0)

    for name in names:  # warm-up
        one_slice(name, min(cycles, 100))
    costs: dict[str, list[float]] = {name: [] for name in names}
    rounds = 0
    deadline = time.monotonic() + seconds
    while rounds == 0 or time.monotonic() < deadline:
        shift = rounds % len(names)
        for name in names[shift:] + names[:shift]:
            costs[name].append(one_slice(name, cycles))
        rounds += 1
    return rounds, costs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.server_cost",
        description="What an uncontended cycle's commands cost one server, part by part: "
        "the server process's CPU time per cycle, each command a round trip.",
    )
    parser.add_argument(
        "--seconds",
        type=lambda text: bounded(text, float, 3600, unit="s"),
        default=30.0,
        help="how long to measure (default 30)",
    )
    parser.add_argument(
        "--cycles",
        type=lambda text: bounded(text, int, 100_000),
        default=400,
        help="cycles per slice (default 400)",
    )
    args = parser.parse_args(argv)
    if not Path("/proc/self/schedstat").exists():
        print("error: this needs Linux's /proc/<pid>/schedstat", file=sys.stderr)
        return 2
    try:
        group = LocalServerGroup(1)
    except ServerBinaryNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with group:
        server = group[0]
        pid = server.pid
        if pid is None:
            raise RuntimeError("the server started for this benchmark has no process")
        conn = cast(
            RawConnection,
            redis.Connection(  # type: ignore[no-untyped-call]
                host=server.host, port=server.port, socket_timeout=SOCKET_TIMEOUT, protocol=2
            ),
        )
        conn.connect()
        try:
            rounds, costs = measure(
                conn, pid, "quorumlock-bench:server-cost", cycles=args.cycles,
                seconds=args.seconds,
            )  # fmt: skip
        finally:
            conn.disconnect()
        version = server_version(server.binary)
    floor = costs[VARIANTS[0][0]]
    print(
        f"one server ({version}), {rounds} rounds of {args.cycles} cycles per "
        "variant; server CPU per cycle (acquire + release, a round trip each):"
    )
    for name, _, _ in VARIANTS:
        extra = statistics.median(c - f for c, f in zip(costs[name], floor, strict=True))
        print(f"  {name:<24} {statistics.median(costs[name]):7.1f} us   {extra:+6.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
