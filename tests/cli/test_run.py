"""``quorumlock run``: the real command, with real children, on real servers."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

import quorumlock
from quorumlock.cli import _run
from quorumlock.cli._app import build_parser
from quorumlock.cli._common import Interrupted
from quorumlock.testing import LocalServerGroup
from tests.cli.conftest import (
    Cli,
    assert_one_line_error,
    clean_env,
    command,
    ended,
    pid_alive,
    run_cli,
    spawn_cli,
)
from tests.conftest import ServerFactory, values


def wait_for(predicate: object, timeout: float = 10.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def held_on(group: LocalServerGroup, name: str) -> int:
    count = 0
    for url in group.urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        count += client.exists(name)
        client.close()
    return count


def test_exit_status_is_the_commands(cli: Cli, lock_name: str) -> None:
    assert cli("run", lock_name, "--", "sh", "-c", "exit 3").returncode == 3
    assert cli("run", lock_name, "--", "true").returncode == 0


def test_the_lock_is_held_while_the_command_runs_and_released_after(
    cli: Cli, servers: LocalServerGroup, lock_name: str
) -> None:
    holder = spawn_cli("run", lock_name, "--", "sleep", "1", servers=servers.urls)
    try:
        wait_for(lambda: held_on(servers, lock_name) >= 3)
    finally:
        assert holder.wait(timeout=30) == 0
    assert held_on(servers, lock_name) == 0


def test_signal_death_is_128_plus_n(cli: Cli, lock_name: str) -> None:
    assert cli("run", lock_name, "--", "sh", "-c", "kill -KILL $$").returncode == 128 + 9


def test_command_not_found_and_not_executable(cli: Cli, lock_name: str, tmp_path: Path) -> None:
    result = cli("run", lock_name, "--", "no-such-command-here")
    assert result.returncode == 127
    assert "not found" in assert_one_line_error(result)
    result = cli("run", lock_name, "--", "")  # 127 as a shell says it, not 126
    assert result.returncode == 127
    assert "command not found: ''" in assert_one_line_error(result)
    script = tmp_path / "plain.txt"
    script.write_text("not a program")
    result = cli("run", lock_name, "--", str(script))
    assert result.returncode == 126
    assert_one_line_error(result)


def test_wait_zero_tries_once(servers: LocalServerGroup, cli: Cli, lock_name: str) -> None:
    # The holder keeps the lock until it is stopped: a second command that waited for it
    # would still wait when its call times out, however slow the machine.
    holder = spawn_cli("run", lock_name, "--", "sleep", "120", servers=servers.urls)
    try:
        wait_for(lambda: held_on(servers, lock_name) >= 3)
        result = cli("run", lock_name, "--wait", "0", "--", "echo", "ran", timeout=30)
        assert result.returncode == 75
        assert "ran" not in result.stdout
        assert "held by someone else" in result.stderr
        assert holder.poll() is None  # it gave up while the lock was held
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.wait(timeout=30)


def test_wait_gives_up_after_the_time_then_succeeds_once_free(
    servers: LocalServerGroup, cli: Cli, lock_name: str
) -> None:
    # 5 s: a loaded machine may take seconds to start the second command
    holder = spawn_cli("run", lock_name, "--", "sleep", "5", servers=servers.urls)
    try:
        wait_for(lambda: held_on(servers, lock_name) >= 3)
        began = time.monotonic()
        assert cli("run", lock_name, "--wait", "0.5", "--", "true").returncode == 75
        assert time.monotonic() - began >= 0.5
        result = cli("run", lock_name, "--wait", "20", "--", "echo", "ran")
        assert result.returncode == 0
        assert result.stdout == "ran\n"
    finally:
        assert holder.wait(timeout=30) == 0


def test_mutual_exclusion_between_commands(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    body = f"echo in >> {log}; sleep 0.2; echo out >> {log}"
    procs = [
        spawn_cli("run", lock_name, "--wait", "30", "--", "sh", "-c", body, servers=servers.urls)
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    assert log.read_text().split() == ["in", "out"] * 4


def test_fencing_token_in_the_environment(cli: Cli, lock_name: str) -> None:
    tokens = []
    for _ in range(3):
        result = cli(
            "run", lock_name, "--fencing", "--", "sh", "-c", "echo $QUORUMLOCK_FENCING_TOKEN"
        )
        assert result.returncode == 0, result.stderr
        tokens.append(int(result.stdout))
    assert tokens == sorted(set(tokens))
    result = cli("run", lock_name, "--", "sh", "-c", 'echo "${QUORUMLOCK_FENCING_TOKEN-none}"')
    assert result.stdout.strip() == "none"


def test_sigterm_to_quorumlock_reaches_the_command(
    servers: LocalServerGroup, lock_name: str
) -> None:
    proc = spawn_cli("run", lock_name, "--", "sleep", "30", servers=servers.urls)
    try:
        wait_for(lambda: held_on(servers, lock_name) >= 3)
        proc.send_signal(signal.SIGTERM)
        assert ended(proc, 20) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert held_on(servers, lock_name) == 0  # released once the command ended


def test_a_server_error_is_shown_whole(servers: LocalServerGroup, cli: Cli, lock_name: str) -> None:
    """A key of another type under the name: every server's error follows the server's
    URL unmasked, as the library gave it (saying what is wrong: the server's own text,
    its script's line '@user_script:N' among it, said less)."""
    for url in servers.urls:
        client = redis.Redis.from_url(url, socket_timeout=2)
        client.hset(lock_name, "field", "value")
        client.close()
    result = cli("run", lock_name, "--wait", "0", "--", "true")
    assert result.returncode == 69, result.stderr
    line = assert_one_line_error(result)
    assert "***" not in line
    for url in servers.urls:
        assert f"{url}: " in line
    assert line.count("fatal (WRONGTYPE: the lock's key holds another kind") == len(servers.urls)


STUBBORN = """
echo $$ > {pidfile}
trap 'echo TERM >> {log}' TERM
while :; do sleep 0.05; done
"""


def test_a_lost_lock_terminates_a_stubborn_command(
    make_servers: ServerFactory, lock_name: str, tmp_path: Path
) -> None:
    """The child outlives the lock: SIGTERM (ignored), SIGKILL after the grace, status 124."""
    group = make_servers(3)
    pidfile, log = tmp_path / "pid", tmp_path / "log"
    script = STUBBORN.format(pidfile=pidfile, log=log)
    proc = spawn_cli(
        "run", lock_name, "--ttl", "1", "--grace", "1", "--", "sh", "-c", script,
        servers=group.urls,
    )  # fmt: skip
    try:
        wait_for(pidfile.exists)
        wait_for(lambda: pidfile.read_text().strip() != "")
        child = int(pidfile.read_text())
        time.sleep(1.5)  # a few renewals went through
        assert proc.poll() is None
        began = time.monotonic()
        group[0].kill()
        group[1].kill()  # no majority left: the lease cannot be renewed
        status = proc.wait(timeout=30)
        took = time.monotonic() - began
        _, stderr = proc.communicate(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert status == 124
    assert f"the lock was lost: lock {lock_name!r} " in stderr
    # the failed renewal's own count (1, or 0 where the third timed out on a busy machine)
    assert re.search(r"only [01] of 3 servers confirmed it", stderr), stderr
    assert "SIGKILL" in stderr
    assert log.read_text().split() == ["TERM"]  # it got SIGTERM first, and ignored it
    assert not pid_alive(child)
    assert took < 1 + 1 + 5  # validity (<= ttl) + grace + slack


def test_a_lost_lock_stops_a_cooperative_command_at_once(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """Someone deletes the key everywhere: the next renewal finds it gone."""

    def delete_everywhere(proc: subprocess.Popen[str]) -> None:
        for url in servers.urls:
            client = redis.Redis.from_url(url, socket_timeout=2)
            client.delete(lock_name)
            client.close()

    status, stderr = run_losing(servers, lock_name, delete_everywhere)
    assert status == 124
    assert f"the lock was lost: lock {lock_name!r} could not be extended: " in stderr
    assert "SIGKILL" not in stderr  # sleep dies of SIGTERM


def test_a_lock_that_ran_out_while_run_was_stopped_says_so(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """run itself stopped (SIGSTOP) past its validity: the lock ran out unrenewed, and
    that is the reason given, not a failed extension that every server confirmed."""

    def stop_past_the_ttl(proc: subprocess.Popen[str]) -> None:
        proc.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        proc.send_signal(signal.SIGCONT)

    status, stderr = run_losing(servers, lock_name, stop_past_the_ttl)
    assert status == 124
    assert f"the lock was lost: lock {lock_name!r} expired: its validity ran out" in stderr
    assert "no renewal in time" in stderr, stderr


def run_losing(
    servers: LocalServerGroup, lock_name: str, lose: Callable[[subprocess.Popen[str]], None]
) -> tuple[int, str]:
    """``run NAME --ttl 1 -- sleep 30``, whose lock ``lose`` makes it lose once run holds
    it (its command runs: the keys on a majority alone may be an acquire that run has
    not finished, which a SIGSTOP then fails on its validity, and run takes the lock
    afresh): its exit status and stderr."""
    proc = spawn_cli("run", lock_name, "--ttl", "1", "--", "sleep", "30", servers=servers.urls)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        wait_for(lambda: held_on(servers, lock_name) >= 3 and children.read_text().strip())
        lose(proc)
        status = proc.wait(timeout=20)
        _, stderr = proc.communicate(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
    return status, stderr


def test_password_file_for_acl(make_servers: ServerFactory, tmp_path: Path, lock_name: str) -> None:
    group = make_servers(3, extra_args=("--requirepass", "s3cr3t-pw"))
    secret = tmp_path / "pw"
    secret.write_text("s3cr3t-pw\n")
    ok = run_cli(
        "run", lock_name, "--password-file", str(secret), "--", "echo", "in", servers=group.urls
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "in\n"
    secret.write_text("wrong-pw\n")
    bad = run_cli(
        "run", lock_name, "--password-file", str(secret), "--", "true", servers=group.urls
    )
    assert bad.returncode == 69
    assert_one_line_error(bad)
    in_url = [url.replace("redis://", "redis://:s3cr3t-pw@") for url in group.urls]
    shown = run_cli("status", lock_name, "--debug", servers=in_url)
    assert shown.returncode == 0, shown.stderr
    assert "s3cr3t-pw" not in shown.stdout + shown.stderr
    doctor = run_cli("doctor", "--clock-sample", "0.1", "--debug", servers=in_url)
    assert "s3cr3t-pw" not in doctor.stdout + doctor.stderr


@pytest.mark.parametrize("password", ["e", "0", "null"])
def test_a_short_password_masks_nothing_else(
    make_servers: ServerFactory, tmp_path: Path, lock_name: str, password: str
) -> None:
    """A password of one letter, a digit, a JSON word: status's table and its --json
    come out whole (a mask of every 'e' garbled the words, one of '0' or 'null' broke
    the JSON)."""
    group = make_servers(1, extra_args=("--requirepass", password))
    secret = tmp_path / "pw"
    secret.write_text(f"{password}\n")
    words = ("status", lock_name, "--password-file", str(secret))
    table = run_cli(*words, servers=group.urls)
    assert table.returncode == 0, table.stderr
    assert table.stdout.split()[:5] == ["server", "reachable", "holder", "ttl", "left"]
    assert group.urls[0] in table.stdout
    report = run_cli(*words, "--json", servers=group.urls)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert [(s["server"], s["reachable"]) for s in data["servers"]] == [(group.urls[0], True)]
    assert data["holder"] is None


def keys_of(group: LocalServerGroup, name: str) -> list[set[str]]:
    """The keys of lock ``name`` on each server: its own, its queue of waiters'."""
    found = []
    for url in group.urls:
        client = redis.Redis.from_url(url, socket_timeout=2, decode_responses=True)
        found.append({key for key in map(str, client.keys("*")) if name in key})
        client.close()
    return found


def test_between_the_acquire_and_the_command_a_signal_stops_run_through_its_clean_up(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the end of the acquire to the start of CMD's supervision (which passes
    signals on to CMD), SIGTERM, SIGHUP and SIGINT raise Interrupted, as while waiting:
    run releases the lock and ends with 128+N. They had their previous handlers back
    there (the default: death, the lock left to its ttl). Looked at in this process:
    the supervision is replaced by a look at the handlers."""
    signals = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    seen: dict[int, object] = {}

    def supervised(
        lock: object, command: list[str], args: object, lost: list[str], received: object
    ) -> int:
        seen.update({signum: signal.getsignal(signum) for signum in signals})
        held = [value for value in values(servers, lock_name) if value is not None]
        assert len(held) == len(servers)  # held now, everywhere
        return 0

    before = {signum: signal.getsignal(signum) for signum in signals}
    monkeypatch.setattr(_run, "_supervise", supervised)
    args = build_parser().parse_args(["run", lock_name, "--servers", ",".join(servers.urls)])
    args.child_command = ["true"]
    assert args.handler(args) == 0
    handler = seen[signal.SIGTERM]
    assert seen == dict.fromkeys(signals, handler)
    assert callable(handler)
    with pytest.raises(Interrupted) as raised:
        handler(signal.SIGHUP, None)
    assert raised.value.signum == signal.SIGHUP
    assert {signum: signal.getsignal(signum) for signum in signals} == before
    assert values(servers, lock_name) == [None] * len(servers)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_whose_exception_a_finaliser_dropped_still_stops_run(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM whose handler ran inside an object's ``__del__`` as the acquire went on:
    Python prints its exception and drops it (CI caught run so, its lock held and CMD
    started, the SIGTERM lost). run stops all the same: it releases the lock, ends
    interrupted, and never starts CMD. Looked at in this process."""
    acquire = quorumlock.Lock.acquire

    class Finalised:
        def __del__(self) -> None:
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)  # as the signal's handler runs, in a finaliser

    def acquired_as_a_finaliser_ran(
        self: quorumlock.Lock, blocking: bool = True, timeout: float | None = None
    ) -> bool:
        got = acquire(self, blocking, timeout)
        Finalised()  # dropped at once: its __del__ runs, and its exception is dropped
        return got

    supervised: list[object] = []

    def supervise(*args: object) -> int:
        supervised.append(args)
        return 0

    monkeypatch.setattr(quorumlock.Lock, "acquire", acquired_as_a_finaliser_ran)
    monkeypatch.setattr(_run, "_supervise", supervise)
    args = build_parser().parse_args(["run", lock_name, "--servers", ",".join(servers.urls)])
    args.child_command = ["true"]
    with pytest.raises(Interrupted) as raised:
        args.handler(args)
    assert raised.value.signum == signal.SIGTERM
    assert supervised == []
    assert values(servers, lock_name) == [None] * len(servers)


def test_a_signal_once_the_command_ended_keeps_its_status(
    servers: LocalServerGroup, lock_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM while run releases the lock after CMD succeeded: run still ends with
    CMD's status, having released the lock (it ended with 143, "interrupted", which
    says CMD was not run: a caller would run a finished job again). Looked at in this
    process: the release sends the signal to it first."""
    release = quorumlock.Lock.release
    sent: list[object] = []

    def signalled(self: quorumlock.Lock) -> bool:
        sent.append(signal.getsignal(signal.SIGTERM))
        os.kill(os.getpid(), signal.SIGTERM)  # handled at once, on this thread
        return release(self)

    monkeypatch.setattr(quorumlock.Lock, "release", signalled)
    before = signal.getsignal(signal.SIGTERM)
    args = build_parser().parse_args(["run", lock_name, "--servers", ",".join(servers.urls)])
    args.child_command = ["true"]
    assert args.handler(args) == 0
    assert sent == [_run._ignore]
    assert signal.getsignal(signal.SIGTERM) == before
    assert values(servers, lock_name) == [None] * len(servers)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=str)
def test_a_signal_while_waiting_leaves_no_key(
    servers: LocalServerGroup, lock_name: str, signum: signal.Signals
) -> None:
    """SIGTERM, SIGHUP or SIGINT to a ``run`` that waits for the lock: it ends with
    status 128+N, naming the signal, never runs its command, and leaves no key, not
    even its place in the queue of waiters. The waiter is known to be waiting once it
    is in that queue (not after a fixed sleep: under load it may not have started by
    then); the holder holds until told to stop, its key on every server (its acquire
    returns with a majority's grants, the others' may come a moment later: CI once saw
    one appear after the snapshot below)."""
    holder = spawn_cli("run", lock_name, "--", "sleep", "120", servers=servers.urls)
    try:
        wait_for(lambda: held_on(servers, lock_name) == len(servers), timeout=30)
        held = keys_of(servers, lock_name)
        waiter = spawn_cli("run", lock_name, "--", "echo", "ran", servers=servers.urls)

        def in_line() -> bool:
            now = keys_of(servers, lock_name)
            return sum(keys > was for keys, was in zip(now, held, strict=True)) >= 3

        wait_for(in_line, timeout=30)
        waiter.send_signal(signum)
        out, err = waiter.communicate(timeout=20)
        assert waiter.returncode == 128 + signum, err
        assert "ran" not in out
        assert err.strip().splitlines() == [f"quorumlock: error: interrupted by {signum.name}"]
        assert keys_of(servers, lock_name) == held
        assert held_on(servers, lock_name) >= 3  # the holder still holds it
    finally:
        holder.send_signal(signal.SIGTERM)
        assert ended(holder, 30) == 128 + signal.SIGTERM
    assert held_on(servers, lock_name) == 0


FAMILY = """
sleep 1000 &
echo $! > {grandchild}
echo $$ > {child}
wait
"""


def test_sigkill_to_run_kills_the_command_and_its_children(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """``run`` dies of SIGKILL: its command (and the command's children) die with it.

    Otherwise the command would go on unprotected while the lock runs out and a second
    ``run`` takes it. The children must be gone while the keys of the first holder are
    still there (ttl 10 s: ample time), and the second ``run`` gets the lock once they
    have run out, without overlapping the first command.
    """
    child_file, grandchild_file = tmp_path / "child", tmp_path / "grandchild"
    script = FAMILY.format(child=child_file, grandchild=grandchild_file)
    proc = spawn_cli(
        "run", lock_name, "--ttl", "10", "--", "sh", "-c", script, servers=servers.urls
    )
    pids: list[int] = []
    try:
        wait_for(lambda: child_file.exists() and child_file.read_text().strip() != "")
        wait_for(lambda: grandchild_file.exists() and grandchild_file.read_text().strip() != "")
        pids = [int(child_file.read_text()), int(grandchild_file.read_text())]
        wait_for(lambda: held_on(servers, lock_name) >= 3)
        proc.kill()  # SIGKILL to the run process this test started
        proc.wait(timeout=10)
        wait_for(lambda: not any(pid_alive(pid) for pid in pids), timeout=8)
        assert held_on(servers, lock_name) >= 3  # they died before the lock ran out
        second = run_cli(
            "run", lock_name, "--wait", "30", "--", "sh", "-c",
            f"kill -0 {pids[0]} 2>/dev/null && echo overlap || echo alone",
            servers=servers.urls,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr
        assert second.stdout == "alone\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pid in pids:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigkill_to_run_kills_the_command_on_a_terminal(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """On a terminal the command stays in run's process group (no watchdog there): the
    kernel's parent-death signal alone must end it."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux only (docs/cli.md, 'If run is killed')")
    child_file = tmp_path / "child"
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*command(), "run", lock_name, "--ttl", "10", "--", "sh", "-c",
             f"echo $$ > {child_file}; exec sleep 1000"],
            stdin=follower, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=clean_env(servers.urls),
        )  # fmt: skip
    finally:
        os.close(follower)
    child = 0
    try:
        wait_for(lambda: child_file.exists() and child_file.read_text().strip() != "")
        child = int(child_file.read_text())
        proc.kill()  # SIGKILL to the run process this test started
        proc.wait(timeout=10)
        wait_for(lambda: not pid_alive(child), timeout=8)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        if child and pid_alive(child):
            os.kill(child, signal.SIGKILL)


def test_ctrl_c_on_a_terminal_reaches_the_command(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """On a terminal the command shares run's process group, and Ctrl-C (the terminal's
    SIGINT to that group, sent here with killpg) must end it: run may not pass SIGINT
    on to it ignored (an ignored signal survives exec). The command dies of SIGINT, run
    exits with 130 and releases the lock."""
    ready = tmp_path / "ready"
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*command(), "run", lock_name, "--", "sh", "-c",
             f"grep SigIgn /proc/self/status > {ready}; exec sleep 30"],
            stdin=follower, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=clean_env(servers.urls), process_group=0,
        )  # fmt: skip
    finally:
        os.close(follower)
    try:
        wait_for(lambda: ready.exists() and ready.read_text().strip() != "", timeout=30)
        os.killpg(proc.pid, signal.SIGINT)  # the group of the run this test started
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 128 + signal.SIGINT, (ready.read_text(), err)
        assert held_on(servers, lock_name) == 0
    finally:
        os.close(leader)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


# --------------------------------------------------------------------------------------
# --permits K: a counting semaphore
# --------------------------------------------------------------------------------------


def permits_held(group: LocalServerGroup, name: str, permits: int) -> list[int]:
    """On how many servers each slot of semaphore ``name`` is held."""
    return [held_on(group, f"quorumlock:semaphore:{name}:{slot}") for slot in range(permits)]


def test_permits_runs_at_most_k_commands_at_once(
    servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    """Five commands, 2 permits: the log of entries and exits never has more than 2
    inside; each command sees its permit's number; nothing is left on the servers."""
    log = tmp_path / "log"
    body = f'echo "in $QUORUMLOCK_PERMIT_SLOT" >> {log}; sleep 0.2; echo out >> {log}'
    args = ("run", "--permits", "2", lock_name, "--wait", "60", "--", "sh", "-c", body)
    procs = [spawn_cli(*args, servers=servers.urls) for _ in range(5)]
    for proc in procs:
        assert proc.wait(timeout=90) == 0, proc.stderr.read() if proc.stderr else ""
    inside = most = 0
    slots = set()
    for line in log.read_text().splitlines():
        if line.startswith("in"):
            inside += 1
            slots.add(line.split()[1])
        else:
            inside -= 1
        most = max(most, inside)
    assert most <= 2
    assert slots <= {"0", "1"}
    assert permits_held(servers, lock_name, 2) == [0, 0]


def test_permits_all_held_then_refused(
    servers: LocalServerGroup, cli: Cli, lock_name: str, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    # Each holder runs until the test is done (at most 60 s): slow starts never matter.
    body = f"for i in $(seq 1200); do [ -e {done} ] && exit 0; sleep 0.05; done; exit 1"
    holders = [
        spawn_cli("run", "--permits", "2", lock_name, "--", "sh", "-c", body, servers=servers.urls)
        for _ in range(2)
    ]
    try:
        wait_for(lambda: all(n >= 3 for n in permits_held(servers, lock_name, 2)), timeout=20)
        result = cli("run", "--permits", "2", lock_name, "--wait", "0", "--", "echo", "ran")
        assert result.returncode == 75
        assert "ran" not in result.stdout
        assert "all 2 permits" in result.stderr
        # A plain lock of the same name is another thing: it runs.
        assert cli("run", lock_name, "--wait", "0", "--", "true").returncode == 0
    finally:
        done.touch()
        for holder in holders:
            assert holder.wait(timeout=30) == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", ">= 1"), ("-2", ">= 1"), ("1025", "at most 1024"), ("two", "an integer")],
)
def test_bad_permits_is_a_usage_error(cli: Cli, lock_name: str, value: str, message: str) -> None:
    result = cli("run", "--permits", value, lock_name, "--", "true")
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
