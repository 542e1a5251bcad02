"""``quorumlock status`` and ``quorumlock doctor`` on real servers, healthy and not."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

import quorumlock
from quorumlock._algorithm.scripts import MARKER_KEY
from quorumlock._algorithm.wire import queue_keys
from quorumlock.testing import LocalCluster, LocalServerGroup
from tests.cli import conftest as cli_conftest
from tests.cli.conftest import Cli, assert_one_line_error, clean_env, run_cli, spawn_cli
from tests.cli.test_run_rw import until_file, wait_for
from tests.conftest import ServerFactory, client_of


def test_status_of_a_free_lock(cli: Cli, lock_name: str) -> None:
    result = cli("status", lock_name)
    assert result.returncode == 0, result.stderr
    assert f"{lock_name!r} is free" in result.stdout
    data = json.loads(cli("status", lock_name, "--json").stdout)
    assert data["reachable"] == 5
    assert data["quorum"] == 3
    assert data["holder"] is None
    assert all(s["reachable"] and s["holder"] is None for s in data["servers"])


def test_status_of_a_held_lock(cli: Cli, servers: LocalServerGroup, lock_name: str) -> None:
    # Held until the test ends it: two status calls may take seconds each on a loaded machine.
    holder = spawn_cli("run", lock_name, "--ttl", "20", "--", "sleep", "60", servers=servers.urls)
    try:
        deadline = time.monotonic() + 10
        while True:
            data = json.loads(cli("status", lock_name, "--json").stdout)
            # The holder's acquire sets the key on every server in one round: a status
            # read during that round may find it on a majority only. Wait for all.
            everywhere = data["holder"] is not None and all(
                server["holder"] == data["holder"] for server in data["servers"]
            )
            if everywhere or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert data["holder"] is not None
        assert len(data["holder"]) == 12
        for server in data["servers"]:
            assert server["holder"] == data["holder"]
            assert 0 < server["remaining_ttl"] <= 20
        table = cli("status", lock_name).stdout
        assert f"{data['holder']}…" in table
        assert f"is held: token {data['holder']}… on 5 of 5" in table  # nobody in line
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.wait(timeout=30)


def test_status_of_a_semaphore_with_every_permit_held(
    cli: Cli, servers: LocalServerGroup, lock_name: str
) -> None:
    """Catches status calling a semaphore's name free while all its permits were held:
    it read the name's own key, not the semaphore's slots."""
    rl = quorumlock.Redlock(servers.urls)
    permits = [rl.semaphore(lock_name, permits=2, ttl=30) for _ in range(2)]
    try:
        assert all(permit.acquire(blocking=False) for permit in permits)
        held = {str(permit.slot): permit.token[:12] for permit in permits if permit.token}
        data = json.loads(cli("status", lock_name, "--json").stdout)
        table = cli("status", lock_name).stdout
    finally:
        for permit in permits:
            if permit.held:
                permit.release()
        rl.close()
    assert "is free" not in table
    assert f"{lock_name!r} (semaphore) is held: 2 permit(s), slot(s) 0, 1" in table
    assert "permits" in table.splitlines()[0]
    assert (data["holder"], data["permits"]) == (None, held)
    free = cli("status", lock_name)
    assert json.loads(cli("status", lock_name, "--json").stdout)["permits"] == {}
    assert f"{lock_name!r} is free" in free.stdout
    assert "permits" not in free.stdout.splitlines()[0]


@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_a_reader_that_went_away_is_no_error(
    servers: LocalServerGroup, lock_name: str, json_output: bool
) -> None:
    """``quorumlock status x | head -0``: the pipe closed before status wrote. It ended
    with 1 and "BrokenPipeError" (and ``servers start`` so failed after starting its
    servers); its output goes nowhere, and it ends as it would have."""
    extra = ["--json"] if json_output else []
    proc = spawn_cli("status", lock_name, *extra, servers=servers.urls)
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # before it has imported anything: its first write meets EPIPE
    try:
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert err == ""


def test_status_with_some_servers_down(make_servers: ServerFactory, lock_name: str) -> None:
    group = make_servers(3)
    group[2].kill()
    result = run_cli("status", lock_name, "--json", servers=group.urls)
    assert result.returncode == 0  # a majority answered
    data = json.loads(result.stdout)
    assert [s["reachable"] for s in data["servers"]] == [True, True, False]
    assert [s["in_line"] for s in data["servers"]] == [[], [], None]  # None: did not say
    group[1].kill()
    result = run_cli("status", lock_name, servers=group.urls)
    assert result.returncode == 1
    assert "only 1 of 3" in assert_one_line_error(result)


def test_status_on_the_nodes_of_a_cluster_says_so() -> None:
    """Catches status on a cluster's nodes (docs/cluster.md: the command line tool takes
    no cluster) showing redis-py's 'MovedError: 2906 127.0.0.1:...' as the reason the
    other nodes were unreachable: each says it is a cluster node, and what to do."""
    with LocalCluster(3) as cluster:
        urls = [node.url for node in cluster.nodes]
        result = run_cli("status", "job", "--json", servers=urls)
    assert result.returncode == 1
    errors = [s["error"] for s in json.loads(result.stdout)["servers"] if s["error"]]
    assert errors
    for error in errors:
        assert "MovedError" not in error
        assert error.startswith("a node of a Redis or Valkey Cluster (MOVED "), error
        assert "docs/cluster.md" in error


def test_status_counts_no_replica_toward_an_acquire(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A replica answers the reads of status but refuses every lock (READONLY): with two
    replicas of three, no lock can be taken, and status says so (it said 'free', and
    "available": true, where every acquire failed)."""
    group = make_servers(3)
    for replica in list(group)[1:]:
        client = client_of(replica)
        client.replicaof(group[0].host, group[0].port)
        client.close()
    result = run_cli("status", lock_name, "--json", servers=group.urls)
    assert result.returncode == 0  # every server answered
    data = json.loads(result.stdout)
    assert data["available"] is False
    assert [s["role"] for s in data["servers"]] == ["master", "replica", "replica"]
    table = run_cli("status", lock_name, servers=group.urls).stdout
    assert f"{lock_name!r} is free but unavailable: 1 of 3 servers" in table
    assert "2 replica(s)" in table
    assert f"{lock_name!r} is free\n" not in table


def test_status_counts_no_full_server_toward_an_acquire(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A server whose maxmemory is used up under noeviction refuses every new lock
    (OOM): with two of three full, status said 'free' and "available": true."""
    group = make_servers(3)
    clients = [client_of(server) for server in list(group)[1:]]
    for client in clients:
        client.config_set("maxmemory", 1)
    try:
        data = json.loads(run_cli("status", lock_name, "--json", servers=group.urls).stdout)
        table = run_cli("status", lock_name, servers=group.urls).stdout
    finally:
        for client in clients:
            client.config_set("maxmemory", 0)
            client.close()
    assert data["available"] is False
    assert [s["full"] for s in data["servers"]] == [False, True, True]
    assert "yes, full (OOM)" in table
    assert "2 full under maxmemory-policy noeviction (OOM) refuse every lock" in table


def test_status_counts_no_server_that_refuses_scripts_toward_an_acquire(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """Every lock is a script: for a user whose ACL leaves out EVALSHA on two servers of
    three, every acquire fails, and status says so (it said 'free', and "available":
    true)."""
    group = make_servers(3)
    for server in group:
        client = client_of(server)
        denied = [] if server is group[0] else ["-evalsha"]
        client.acl_setuser(
            "worker", enabled=True, passwords=["+secret"], commands=["+@all", *denied],
            keys=["~*"], channels=["*"],
        )  # fmt: skip
        client.close()
    urls = [url.replace("redis://", "redis://worker:secret@") for url in group.urls]
    with quorumlock.Redlock(urls) as rl, pytest.raises(quorumlock.QuorumUnavailable):
        rl.lock(lock_name, ttl=10).acquire(blocking=False)  # what status must foresee
    result = run_cli("status", lock_name, "--json", servers=urls)
    assert result.returncode == 0, result.stderr  # every server answered
    data = json.loads(result.stdout)
    assert data["available"] is False
    refusals = [s["scripts"] for s in data["servers"]]
    assert refusals[0] is None
    assert all("evalsha" in refusal for refusal in refusals[1:]), refusals
    assert "secret" not in result.stdout
    table = run_cli("status", lock_name, servers=urls).stdout
    assert table.count("yes, scripts refused") == 2
    assert f"{lock_name!r} is free but unavailable: 1 of 3 servers can grant a lock" in table
    assert "2 where scripts fail (" in table
    assert f"{lock_name!r} is free\n" not in table
    # with both scripts allowed, the same user's status finds the name free
    for server in list(group)[1:]:
        client = client_of(server)
        client.acl_setuser("worker", enabled=True, commands=["+evalsha"])
        client.close()
    data = json.loads(run_cli("status", lock_name, "--json", servers=urls).stdout)
    assert (data["available"], [s["scripts"] for s in data["servers"]]) == (True, [None] * 3)


def test_status_and_doctor_name_a_marker_of_another_type(
    servers: LocalServerGroup, lock_name: str
) -> None:
    """An application's list under quorumlock:incarnation on two servers of three: every
    lock with the restart quarantine fails there. status said 'free' and "available":
    true, and doctor passed every check."""
    urls = servers.urls[:3]
    for server in list(servers)[1:3]:
        client = client_of(server)
        client.delete(MARKER_KEY)
        client.rpush(MARKER_KEY, "an application's")
        client.close()
    data = json.loads(run_cli("status", lock_name, "--json", servers=urls).stdout)
    assert data["available"] is False
    assert [s["marker_of_another_type"] for s in data["servers"]] == [False, True, True]
    table = run_cli("status", lock_name, servers=urls).stdout
    assert table.count("yes, marker of another type") == 2
    assert f"{lock_name!r} is free but unavailable: 1 of 3 servers can grant a lock" in table
    assert "2 where the key quorumlock:incarnation holds another kind of value" in table
    result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=urls)
    assert result.returncode == 1
    assert assert_one_line_error(result) == "quorumlock: error: doctor found failures: quarantine"
    found = {
        c["server"]: (c["result"], c["detail"])
        for c in json.loads(result.stdout)["checks"]
        if c["check"] == "quarantine"
    }
    assert found[urls[0]] == ("pass", "not in restart quarantine")
    for url in urls[1:]:
        assert found[url][0] == "fail"
        assert found[url][1].startswith("the key quorumlock:incarnation, this server's")


def test_status_and_doctor_say_a_server_is_loading_its_dataset(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A server loading its dataset answers LOADING: it is there, not unreachable (both
    said 'unreachable: Valkey is loading the dataset in memory')."""
    (server,) = make_servers(
        1,
        save=True,
        extra_args=(
            "--enable-debug-command",
            "yes",
            "--loading-process-events-interval-bytes",
            "1024",
        ),
    )
    client = client_of(server)
    if "key-load-delay" not in client.config_get("key-load-delay"):
        pytest.skip("the server has no key-load-delay to make its loading last")
    client.execute_command("DEBUG", "POPULATE", 30_000)  # type: ignore[no-untyped-call]
    client.save()
    client.config_set("key-load-delay", 200)  # microseconds a key: 6 s at least
    reloader = redis.Redis(host=server.host, port=server.port, socket_timeout=60)
    reload = threading.Thread(
        target=reloader.execute_command, args=("DEBUG", "RELOAD", "NOSAVE"), daemon=True
    )
    reload.start()
    try:
        probe = client_of(server)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                probe.ping()
            except redis.BusyLoadingError:
                break
            time.sleep(0.01)
        else:
            pytest.fail("the server never answered LOADING")
        # both at once, while the loading lasts
        commands = [
            spawn_cli("status", lock_name, "--json", servers=[server.url]),
            spawn_cli("doctor", "--json", servers=[server.url]),
        ]
        status, doctor = (json.loads(p.communicate(timeout=60)[0]) for p in commands)
    finally:
        reload.join(60)
        reloader.close()
        client.config_set("key-load-delay", 0)
        client.close()
    (answer,) = status["servers"]
    assert str(answer["error"]).startswith("loading its dataset"), answer
    reachable = next(c for c in doctor["checks"] if c["check"] == "reachable")
    assert str(reachable["detail"]).startswith("loading its dataset"), reachable


def checks_of(output: str) -> dict[tuple[str, str], str]:
    data = json.loads(output)
    return {(c["check"], c["server"]): c["result"] for c in data["checks"]}


def test_doctor_on_healthy_servers(servers: LocalServerGroup) -> None:
    # A generous per-instance timeout: healthy servers pass the round-trip check even
    # on a loaded machine (its fail branch has a test of its own).
    result = run_cli(
        "doctor", "--clock-sample", "0.3", "--instance-timeout", "5", "--json", servers=servers.urls
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True
    checks = checks_of(result.stdout)
    for url in servers.urls:
        for name in (
            "reachable",
            "role",
            "eviction",
            "cluster",
            "scripts",
            "round trip",
            "clock rate",
        ):
            assert checks[(name, url)] == "pass", (name, url)
        assert checks[("persistence", url)] == "warn"  # no fsync-always AOF
    assert checks[("servers", "(all)")] == "pass"
    table = run_cli(
        "doctor", "--clock-sample", "0.3", "--instance-timeout", "5", servers=servers.urls
    )
    assert table.returncode == 0, table.stdout + table.stderr
    assert "PASS" in table.stdout
    assert "0 failed" in table.stdout


def test_doctor_cites_only_rule_ids_the_docs_define(make_servers: ServerFactory) -> None:
    """Catches a detail citing a rule id no page defines (persistence said "R11 a" and
    "R11 b"; docs/algorithm.md's table of rule ids has R11 only), on a durable server and
    a plain one, and in --help."""
    durable = make_servers(1, appendonly=True, appendfsync="always")
    plain = make_servers(1)
    table = (Path(__file__).resolve().parents[2] / "docs" / "algorithm.md").read_text()
    defined = set(re.findall(r"^\| ([RB]\d+) \|", table, flags=re.MULTILINE))
    assert {"R11", "B1"} <= defined
    result = run_cli(
        "doctor", "--clock-sample", "0.1", "--json", servers=[durable[0].url, plain[0].url]
    )
    texts = [c["detail"] for c in json.loads(result.stdout)["checks"]]
    texts.append(run_cli("doctor", "--help").stdout)
    cited = [re.findall(r"\b[RB]\d+\b(?: [a-z]\b)?", text) for text in texts]
    assert {"R11"} <= {rule for rules in cited for rule in rules} <= defined


def test_doctor_warns_of_a_server_in_restart_quarantine(
    make_servers: ServerFactory, lock_name: str
) -> None:
    """A server that came back without its data counts toward no quorum for max_ttl:
    the doctor warns of it, with the time left and why, as status shows it (it passed
    every check while two servers of three kept every lock away for a minute)."""
    group = make_servers(3)
    group[0].kill()
    group[0].restart()  # empty, unmarked: quarantined until it has been up max_ttl
    result = run_cli(
        "doctor",
        "--clock-sample",
        "0.1",
        "--instance-timeout",
        "5",
        "--max-ttl",
        "30",
        "--json",
        servers=group.urls,
    )
    assert result.returncode == 0, result.stdout + result.stderr  # a warning, not a failure
    data = json.loads(result.stdout)
    rows = {c["server"]: c for c in data["checks"] if c["check"] == "quarantine"}
    assert rows[group.urls[0]]["result"] == "warn"
    detail = rows[group.urls[0]]["detail"]
    assert "restart quarantine:" in detail
    assert " s left" in detail
    assert "no quorumlock marker" in detail  # why
    assert "counts toward no quorum" in detail
    left = float(detail.split(" s left")[0].rsplit(" ", 1)[1])
    assert 0 < left <= 30  # --max-ttl 30
    for url in group.urls[1:]:
        assert rows[url]["result"] == "pass"
    table = run_cli("doctor", "--clock-sample", "0.1", servers=group.urls)
    assert "quarantine" in table.stdout
    assert "WARN" in table.stdout
    usage = run_cli("doctor", "--max-ttl", "0", servers=group.urls)
    assert usage.returncode == 2
    assert "--max-ttl" in assert_one_line_error(usage)


def test_doctor_fails_a_replica_an_evicting_server_and_warns_on_even_n(
    make_servers: ServerFactory,
) -> None:
    group = make_servers(
        2, appendonly=True, appendfsync="always", extra_args=("--maxmemory", "100mb")
    )
    first, second = group
    client = redis.Redis(host=second.host, port=second.port)
    client.replicaof(first.host, first.port)
    client.close()
    client = redis.Redis(host=first.host, port=first.port)
    client.config_set("maxmemory-policy", "volatile-lru")
    client.close()
    result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=group.urls)
    assert result.returncode == 1
    assert "role" in assert_one_line_error(result)
    checks = checks_of(result.stdout)
    assert checks[("role", second.url)] == "fail"
    assert checks[("role", first.url)] == "warn"  # a master with a replica
    assert checks[("eviction", first.url)] == "fail"
    assert checks[("persistence", first.url)] == "pass"
    assert checks[("servers", "(all)")] == "warn"


def test_doctor_fails_a_server_where_scripts_cannot_run(make_servers: ServerFactory) -> None:
    """Every lock is a script: where EVALSHA or EVAL is renamed or disabled, every lock
    fails (fatal), and so does the check, naming the command, as the library does."""
    plain = make_servers(1)[0]
    no_evalsha = make_servers(1, extra_args=("--rename-command", "EVALSHA", ""))[0]
    no_eval = make_servers(1, extra_args=("--rename-command", "EVAL", "EVAL_RENAMED"))[0]
    urls = [plain.url, no_evalsha.url, no_eval.url]
    result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=urls)
    assert result.returncode == 1
    assert assert_one_line_error(result) == "quorumlock: error: doctor found failures: scripts"
    details = {
        c["server"]: (c["result"], c["detail"])
        for c in json.loads(result.stdout)["checks"]
        if c["check"] == "scripts"
    }
    renamed = "renamed or disabled on this server (quorumlock needs EVAL and EVALSHA; see "
    assert details == {
        plain.url: ("pass", "EVAL and EVALSHA run"),
        no_evalsha.url: (
            "fail",
            f"unknown command 'EVALSHA': {renamed}docs/deployment.md): every lock fails on "
            "this server",
        ),
        no_eval.url: (
            "fail",
            f"unknown command 'EVAL': {renamed}docs/deployment.md): every lock fails on "
            "this server",
        ),
    }


def test_doctor_fails_a_full_server_under_noeviction(make_servers: ServerFactory) -> None:
    """noeviction keeps lock keys, but a server at its maxmemory refuses every new lock
    (OOM): doctor passed it."""
    plain, full = make_servers(2)
    client = client_of(full)
    client.config_set("maxmemory", 1)
    try:
        result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=[plain.url, full.url])
    finally:
        client.config_set("maxmemory", 0)
        client.close()
    assert result.returncode == 1
    assert assert_one_line_error(result) == "quorumlock: error: doctor found failures: eviction"
    details = {
        c["server"]: (c["result"], c["detail"])
        for c in json.loads(result.stdout)["checks"]
        if c["check"] == "eviction"
    }
    assert details[plain.url] == ("pass", "maxmemory-policy noeviction")
    assert details[full.url][0] == "fail"
    assert "refuses every new lock (OOM)" in details[full.url][1]


def test_doctor_says_a_server_paused_for_writes_is_paused(make_servers: ServerFactory) -> None:
    """CLIENT PAUSE WRITE holds the scripts back: the scripts row fails for it, saying
    so (it said EVAL got no reply in time and that every lock fails on this server)."""
    (server,) = make_servers(1)
    client = client_of(server)
    client.execute_command("CLIENT", "PAUSE", 30000, "WRITE")  # type: ignore[no-untyped-call]
    try:
        result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=[server.url])
    finally:
        client.execute_command("CLIENT", "UNPAUSE")  # type: ignore[no-untyped-call]
        client.close()
    assert result.returncode == 1
    (result_, detail) = next(
        (c["result"], c["detail"])
        for c in json.loads(result.stdout)["checks"]
        if c["check"] == "scripts"
    )
    assert result_ == "fail"
    assert "every lock fails on this server" not in detail
    assert "paused" in detail


def test_doctor_warns_where_debug_is_enabled(make_servers: ServerFactory) -> None:
    """DEBUG RELOAD NOSAVE brings back older data that the restart quarantine cannot
    tell from intact data: doctor warns where DEBUG is enabled, and passes where it is
    off (the default of Valkey and Redis 7); Redis 6.2, which has no such setting, has it
    always on."""
    plain = make_servers(1)[0]
    client = redis.Redis(host=plain.host, port=plain.port)
    setting = client.config_get("enable-debug-command").get("enable-debug-command", "")
    client.close()
    urls = [plain.url]
    expected = {plain.url: "pass" if setting == "no" else "warn"}
    if setting:  # the setting exists: a server with it on
        enabled = make_servers(1, extra_args=("--enable-debug-command", "yes"))[0]
        urls.append(enabled.url)
        expected[enabled.url] = "warn"
    result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=urls)
    checks = checks_of(result.stdout)
    assert {url: checks[("debug", url)] for url in urls} == expected
    data = json.loads(result.stdout)
    details = [c["detail"] for c in data["checks"] if c["check"] == "debug"]
    assert all("DEBUG RELOAD NOSAVE" in d for d in details if "enabled" in d)


def test_doctor_round_trip_against_a_tiny_instance_timeout(servers: LocalServerGroup) -> None:
    result = run_cli(
        "doctor", "--instance-timeout", "0.000001", "--clock-sample", "0.1", "--json",
        servers=servers.urls[:3],
    )  # fmt: skip
    assert result.returncode == 1
    checks = checks_of(result.stdout)
    assert checks[("round trip", servers.urls[0])] == "fail"


def test_status_shows_the_restart_quarantine(make_servers: ServerFactory, lock_name: str) -> None:
    group = make_servers(3)
    group[2].restart()  # empty again: it may have forgotten locks
    result = run_cli("status", lock_name, "--json", "--max-ttl", "30", servers=group.urls)
    assert result.returncode == 0, result.stderr
    left = [s["quarantined_for"] for s in json.loads(result.stdout)["servers"]]
    assert left[0] == left[1] == 0
    assert 25 < left[2] <= 30
    table = run_cli("status", lock_name, servers=group.urls).stdout
    assert "s left" in table.splitlines()[-3]  # the restarted server's row


def test_doctor_fails_two_urls_of_one_server(servers: LocalServerGroup, lock_name: str) -> None:
    """127.0.0.1 and localhost are one server: run refuses them, and so do status and
    leader (each counted that server twice toward a majority), so doctor fails them."""
    first = servers[0]
    urls = [first.url, f"redis://localhost:{first.port}", servers.urls[1]]
    for command in (["run", lock_name, "--", "true"], ["status", lock_name], ["leader", "x"]):
        refused = run_cli(*command, servers=urls)
        assert refused.returncode == 2, command
        assert "are the same server" in assert_one_line_error(refused)
        assert refused.stdout == ""
    result = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=urls)
    assert result.returncode == 1
    assert "same server" in assert_one_line_error(result)
    rows = [c for c in json.loads(result.stdout)["checks"] if c["check"] == "same server"]
    assert [(r["server"], r["result"]) for r in rows] == [(f"{urls[0]}, {urls[1]}", "fail")]
    assert urls[0] in rows[0]["detail"]
    assert urls[1] in rows[0]["detail"]
    table = run_cli("doctor", "--clock-sample", "0.1", servers=urls)
    assert table.returncode == 1
    assert "same server" in table.stdout
    healthy = run_cli("doctor", "--clock-sample", "0.1", "--json", servers=servers.urls[:3])
    assert checks_of(healthy.stdout)[("same server", "(all)")] == "pass"


def test_status_shows_the_processes_in_line(
    cli: Cli, servers: LocalServerGroup, lock_name: str, tmp_path: Path
) -> None:
    done = tmp_path / "done"
    holder = spawn_cli("run", lock_name, "--", *until_file(done), servers=servers.urls)
    waiters: list[subprocess.Popen[str]] = []
    try:
        wait_for(lambda: json.loads(cli("status", lock_name, "--json").stdout)["holder"])
        # each waiter is its own process: its own entry in the name's queue of waiters
        waiters = [
            spawn_cli("run", lock_name, "--wait", "30", "--", "true", servers=servers.urls)
            for _ in range(2)
        ]

        def two_in_line_everywhere() -> bool:
            data = json.loads(cli("status", lock_name, "--json").stdout)
            return all(len(server["in_line"]) == 2 for server in data["servers"])

        wait_for(two_in_line_everywhere)
        data = json.loads(cli("status", lock_name, "--json").stdout)
        head = data["head"]
        assert (data["in_line"], len(head)) == (2, 8)
        assert all(server["in_line"][0] == head for server in data["servers"])
        table = cli("status", lock_name).stdout
        assert "in line" in table.splitlines()[0]
        assert table.count(f"2, head {head}…") == 5
        assert f"2 process(es) in line on a majority, the head {head}… on 5 of 5" in table
    finally:
        done.touch()
        assert holder.wait(timeout=30) == 0
        for waiter in waiters:
            assert waiter.wait(timeout=30) == 0
    # the waiters took the lock in turn and left the line
    data = json.loads(cli("status", lock_name, "--json").stdout)
    assert (data["in_line"], data["head"]) == (0, None)
    assert "in line" not in cli("status", lock_name).stdout


def test_status_counts_the_live_entries_only_and_says_where_it_cannot_see(
    servers: LocalServerGroup, lock_name: str
) -> None:
    queue, expiry = queue_keys(lock_name)
    for server in servers:
        client = client_of(server)
        now_ms = int(client.time()[0]) * 1000
        client.zadd(queue, {"aaaaaaaa11111111": 1, "bbbbbbbb22222222": 2, "cccccccc3333": 3})
        # the second one's lease ran out: the next script on the server sweeps it away
        client.zadd(
            expiry,
            {"aaaaaaaa11111111": now_ms + 60_000, "bbbbbbbb22222222": now_ms - 1_000,
             "cccccccc3333": now_ms + 60_000},
        )  # fmt: skip
        # a user who may read the lock's key but not its queue (on the first server only)
        keys = f"~{lock_name}" if server is servers[0] else "~*"
        client.acl_setuser(
            "viewer", enabled=True, passwords=["+secret"], commands=["+@all"], keys=[keys]
        )
        client.close()
    try:
        result = run_cli("status", lock_name, "--json", servers=servers.urls)
        data = json.loads(result.stdout)
        assert [s["in_line"] for s in data["servers"]] == [["aaaaaaaa", "cccccccc"]] * 5
        assert (data["in_line"], data["head"]) == (2, "aaaaaaaa")
        urls = [url.replace("redis://", "redis://viewer:secret@") for url in servers.urls]
        result = run_cli("status", lock_name, "--json", servers=urls)
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        lines = [s["in_line"] for s in data["servers"]]
        assert lines == [None] + [["aaaaaaaa", "cccccccc"]] * 4
        assert (data["in_line"], data["head"]) == (2, "aaaaaaaa")
        rows = run_cli("status", lock_name, servers=urls).stdout.splitlines()
        assert rows[2].rstrip().endswith("unknown")
        assert rows[3].rstrip().endswith("2, head aaaaaaaa…")
    finally:  # the servers are shared: the user goes (their data goes before each test)
        for server in servers:
            client = client_of(server)
            client.acl_deluser("viewer")
            client.close()


def test_status_of_a_key_of_another_type(
    cli: Cli, servers: LocalServerGroup, lock_name: str
) -> None:
    # Each server answered WRONGTYPE to the GET, shown as unreachable: exit status 1.
    for server in list(servers)[1:]:
        client = client_of(server)
        client.hset(lock_name, "field", "value")
        client.close()
    result = cli("status", lock_name)
    assert result.returncode == 0, result.stderr
    assert "WRONGTYPE" not in result.stdout + result.stderr
    assert result.stdout.count("not a lock: hash") == 4, result.stdout
    assert (
        f"{lock_name!r} is not a quorumlock lock, nor held by quorumlock: the key is a hash "
        "on 4 of 5 servers"
    ) in result.stdout
    data = json.loads(cli("status", lock_name, "--json").stdout)
    assert data["reachable"] == 5
    assert data["available"] is False  # no acquire of that name can succeed
    assert [s["other_type"] for s in data["servers"]] == [None] + ["hash"] * 4
    assert all(s["reachable"] and s["holder"] is None for s in data["servers"])
    for server in list(servers)[2:]:
        client = client_of(server)
        client.delete(lock_name)
        client.close()
    data = json.loads(cli("status", lock_name, "--json").stdout)
    assert data["available"] is True  # one server of five refuses it: a majority is left


def test_status_and_doctor_in_an_ascii_or_latin_1_locale(servers: LocalServerGroup) -> None:
    """Output whose encoding cannot carry the tables' "…" and "±", nor a lock name, gets
    backslash escapes, not an internal error after half a table (exit status 1)."""
    name = "ünï🔒"
    redlock = quorumlock.Redlock(servers.urls)
    lock = redlock.lock(name, ttl=30)
    assert lock.acquire(blocking=False)
    try:
        for encoding in ("ascii", "latin-1"):
            env = {**clean_env(servers.urls), "PYTHONIOENCODING": encoding}
            outputs = []
            # (a generous timeout: doctor's round-trip check is not what is tested here)
            checks = ("doctor", "--clock-sample", "0.2", "--instance-timeout", "5")
            for args in (("status", name), checks):
                result = subprocess.run(
                    [*cli_conftest.command(), *args],
                    capture_output=True,
                    env=env,
                    timeout=60,
                    check=False,
                )
                assert (result.returncode, result.stderr) == (0, b""), result.stderr
                outputs.append(result.stdout.decode(encoding))
            status, doctor = outputs
            assert "\\u2026 on 5 of 5" in status  # "is held: token 0c41cfa5e614… on 5 of 5"
            assert " 0 failed" in doctor
    finally:
        lock.release()
        redlock.close()
