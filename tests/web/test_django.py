"""quorumlock.django on real servers, in a real Django project (tests/web/djproject, sqlite)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import django
import pytest
import redis
from django.conf import settings
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connections
from django.test import Client, override_settings
from django.views import View

import quorumlock
from quorumlock._algorithm.wire import queue_keys
from quorumlock.django import LockedViewMixin, get_redlock, locked
from quorumlock.django._checks import CHECK_IDS
from quorumlock.testing import LocalServerGroup
from tests.conftest import client_of, exists_on, values

ROOT = Path(__file__).parents[2]
SETTINGS = "tests.web.djproject.settings"


@pytest.fixture(scope="module", autouse=True)
def project() -> Iterator[Path]:
    """Django set up with the test project's settings, on a fresh sqlite file."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "db.sqlite3"
        os.environ["DJPROJECT_DB"] = str(db)
        os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
        django.setup()
        settings.DATABASES["default"]["NAME"] = str(db)
        call_command("migrate", verbosity=0)
        try:
            yield db
        finally:
            connections.close_all()
            del os.environ["DJPROJECT_DB"]  # settings are loaded: no longer needed
            # Child processes started by later tests (a Celery worker's Django fixup,
            # say) must not find the test project's settings.
            del os.environ["DJANGO_SETTINGS_MODULE"]


@pytest.fixture
def configured(servers: LocalServerGroup) -> Iterator[LocalServerGroup]:
    """settings.QUORUMLOCK pointing at the test's servers (a fresh Redlock each test), with
    an instance timeout a loaded machine's loopback keeps (the ttl's 0.5 % is 50 ms)."""
    setting = {"SERVERS": servers.urls, "MAX_TTL": 60, "INSTANCE_TIMEOUT": 1.0}
    with override_settings(QUORUMLOCK=setting):
        yield servers


def post_many(paths: list[str]) -> list[tuple[int, bytes]]:
    """POST every path from its own thread (4 at a time), with Django's test client."""

    def one(path: str) -> tuple[int, bytes]:
        try:
            reply = Client().post(path)
            return reply.status_code, reply.content
        finally:
            connections.close_all()

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, paths, timeout=120))


@pytest.mark.parametrize("route", ["bump", "bump-unlocked"])
def test_concurrent_requests_serialise(configured: LocalServerGroup, route: str) -> None:
    # Imported once Django is set up (by the module's fixture).
    from tests.web.djproject.billing import views  # noqa: PLC0415
    from tests.web.djproject.billing.models import Invoice  # noqa: PLC0415

    pk = 1 if route == "bump" else 2
    Invoice.objects.filter(pk=pk).delete()
    views.inside.update(now=0, most=0)
    replies = post_many([f"/invoices/{pk}/{route}"] * 20)
    assert all(status == 200 for status, _ in replies), replies
    if route == "bump":
        assert views.inside["most"] == 1
        assert Invoice.objects.get(pk=pk).count == 20
        assert values(configured, "invoice:1") == [None] * len(configured)
    else:  # the same view without the decorator overlaps: the check above can fail
        assert views.inside["most"] > 1


def test_taken_lock_answers_409_or_the_configured_status(configured: LocalServerGroup) -> None:
    other = quorumlock.Redlock(configured.urls)
    client = Client()
    with other.lock("invoice:3", ttl=10):
        reply = client.post("/invoices/3")  # the mixin's POST: locked, one attempt
        assert reply.status_code == 409
        assert reply.content == b"lock 'invoice:3' is held by another request\n"
        assert client.get("/invoices/3").content == b"read"  # its GET is not locked
    with other.lock("search:cats", ttl=10):
        assert client.get("/search", {"q": "cats"}).status_code == 423
        assert client.get("/search", {"q": "dogs"}).content == b"searched dogs"
    assert client.get("/search").status_code == 400  # no q: no lock name
    reply = client.post("/invoices/3")
    assert reply.json()["lock"] == "invoice:3"
    assert 0 < reply.json()["validity"] <= 10
    other.close()


def test_lost_lease_answers_503(configured: LocalServerGroup) -> None:
    from tests.web.djproject.billing import views  # noqa: PLC0415

    reply = Client().get("/invoices/4/slow")
    assert reply.status_code == 503
    assert b"was lost" in reply.content
    # The mixin's self.lock.check() raises LockLost inside the view: answered 503 too.
    reply = Client().post("/invoices/5/checking")
    assert reply.status_code == 503
    assert views.checked == ["slept"]


def test_decorated_function_raises_as_with_does(configured: LocalServerGroup) -> None:
    calls: list[str] = []

    @locked("report:{day}", ttl=5)
    def build(day: str, *, full: bool = False) -> str:
        calls.append(day)
        return f"built {day}"

    @locked("report:{month}", ttl=5)
    def misnamed(day: str) -> None:
        raise AssertionError("must not run")

    assert build("mon") == "built mon"
    other = quorumlock.Redlock(configured.urls)
    with other.lock("report:tue", ttl=10), pytest.raises(quorumlock.LockNotAcquired):
        build(day="tue")
    other.close()
    with pytest.raises(quorumlock.ConfigurationError, match="'month'"):
        misnamed("wed")
    assert calls == ["mon"]

    with pytest.raises(TypeError, match="async"):

        @locked("a", ttl=5)
        async def not_supported() -> None: ...

    with pytest.raises(quorumlock.ConfigurationError, match="plain"):
        locked("a:{0}", ttl=5)
    with pytest.raises(quorumlock.ConfigurationError, match="makes no valid name"):
        locked("quorumlock:rw:{pk}", ttl=5)
    with pytest.raises(quorumlock.ConfigurationError, match="shorter than the ttl"):
        locked("a", ttl=5, max_hold=2)


def test_the_mixins_methods_are_checked_when_the_class_is_defined() -> None:
    """A str would be taken letter by letter, and the lock never taken."""

    class Upper(LockedViewMixin, View):
        lock_name = "invoice:{pk}"
        lock_methods = ("POST", "put")

    methods: object = Upper.lock_methods
    assert methods == frozenset({"post", "put"})
    with pytest.raises(TypeError, match="collection of HTTP method names"):

        class OneString(LockedViewMixin, View):
            lock_name = "invoice:{pk}"
            lock_methods = "post"

    with pytest.raises(quorumlock.ConfigurationError, match="'pots'"):

        class Misspelt(LockedViewMixin, View):
            lock_name = "invoice:{pk}"
            lock_methods = frozenset({"pots"})


def test_one_redlock_per_process_rebuilt_in_a_fork(configured: LocalServerGroup) -> None:
    rl = get_redlock()
    assert get_redlock() is rl
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a Redlock of its own, which works
        try:
            child = get_redlock()
            with child.lock("forked", ttl=5):
                ok = child is not rl
            os.write(write_end, b"ok" if ok else b"same")
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read() == b"ok"
    with rl.lock("parent", ttl=5):  # the parent's is untouched
        pass


def test_settings_are_checked() -> None:
    cases: list[tuple[Any, str]] = [
        ({"SERVERS": ["redis://127.0.0.1:1"], "max_ttl": 5}, "did you mean 'MAX_TTL'"),
        ({"SERVERS": ["redis://127.0.0.1:1"], "COLOUR": 5}, "unknown key 'COLOUR'"),
        ({"MAX_TTL": 5}, 'no "SERVERS"'),
        ({"SERVERS": ["nope://x"]}, "URL"),
        ({"SERVERS": ["redis://127.0.0.1:1"], "MAX_TTL": -1}, "max_ttl"),
        ([], "must be a dict"),
    ]
    for setting, message in cases:
        with override_settings(QUORUMLOCK=setting):
            with pytest.raises(ImproperlyConfigured, match=message):
                get_redlock()
            errors = [e for e in run_checks() if e.id == "quorumlock.E001"]
            assert len(errors) == 1
            assert message.strip("'") in errors[0].msg or "URL" in errors[0].msg


def test_the_docs_name_every_settings_key() -> None:
    """docs/django.md names every key that QUORUMLOCK accepts (those its error lists)."""
    setting = {"SERVERS": ["redis://127.0.0.1:1"], "COLOUR": 5}
    with (
        override_settings(QUORUMLOCK=setting),
        pytest.raises(ImproperlyConfigured, match="the keys are ") as raised,
    ):
        get_redlock()
    keys = str(raised.value).split("the keys are ", 1)[1].split(", ")
    page = (ROOT / "docs" / "django.md").read_text()
    section = page.split("## Settings: `QUORUMLOCK`", 1)[1].split("\n## ", 1)[0]
    assert "FAIR" in keys
    assert [key for key in keys if f"`{key}`" not in section] == []


def test_system_checks_audit_the_servers(configured: LocalServerGroup) -> None:
    out = io.StringIO()
    call_command("check", "--deploy", "--tag", "quorumlock", stdout=out, stderr=out)
    # The test servers do not fsync every write: the doctor's persistence warning.
    assert "quorumlock.W103" in out.getvalue()
    assert "quorumlock.E" not in out.getvalue()

    dead = "redis://127.0.0.1:1"
    with override_settings(QUORUMLOCK={"SERVERS": [*configured.urls[:2], dead]}):
        with pytest.raises(SystemCheckError, match=r"quorumlock\.E101") as caught:
            call_command("check", "--deploy", "--tag", "quorumlock", stdout=io.StringIO())
        assert "127.0.0.1:1" in str(caught.value)
        call_command("check", stdout=io.StringIO())  # without --deploy: no network


def test_system_checks_audit_servers_given_as_clients(configured: LocalServerGroup) -> None:
    """SERVERS may be redis.Redis clients (docs/django.md): the audit reaches them too."""
    clients = [redis.Redis(host=server.host, port=server.port) for server in configured]
    try:
        with override_settings(QUORUMLOCK={"SERVERS": clients, "MAX_TTL": 60}):
            out = io.StringIO()
            call_command("check", "--deploy", "--tag", "quorumlock", stdout=out, stderr=out)
    finally:
        for client in clients:
            client.close()
    assert "quorumlock.W103" in out.getvalue()
    assert "quorumlock.E" not in out.getvalue()


def manage(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m django ARGS`` in a child process, with the test project's settings."""
    return subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def spawn_manage(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """``python -m django ARGS`` started in a child process (:func:`manage` waits)."""
    return subprocess.Popen(
        [sys.executable, "-m", "django", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def child_env(servers: LocalServerGroup, db: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": SETTINGS,
        "QUORUMLOCK_SERVERS": ",".join(servers.urls),
        "DJPROJECT_DB": str(db),
        # The quorumlock under test (this worktree's src/ with PYTHONPATH), not whichever
        # one the environment has installed, as tests/integration/test_celery.py does.
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(Path(quorumlock.__file__).resolve().parents[1])]
        ),
    }


# Each child process starts Django (a few seconds each on a loaded machine).
SUBPROCESS_TIMEOUT = pytest.mark.timeout(300)


@SUBPROCESS_TIMEOUT
def test_locked_command_runs_a_command_and_exits_with_its_status(
    servers: LocalServerGroup, project: Path
) -> None:
    env = child_env(servers, project)
    done = manage("locked", "migrations", "--", "migrate", "--noinput", env=env)
    assert done.returncode == 0, done.stderr
    assert "No migrations to apply" in done.stdout
    code = "import sys; sys.exit(3)"
    assert manage("locked", "job", "--", "shell", "-c", code, env=env).returncode == 3
    assert values(servers, "job") == [None] * len(servers)


@SUBPROCESS_TIMEOUT
def test_locked_command_taken_or_unavailable(servers: LocalServerGroup, project: Path) -> None:
    env = child_env(servers, project)
    other = quorumlock.Redlock(servers.urls)
    with other.lock("job", ttl=60):  # a child's start may take seconds on a loaded machine
        done = manage("locked", "job", "--wait", "0", "--", "migrate", env=env)
    other.close()
    assert done.returncode == 75, done.stderr
    assert "lock 'job' is held by someone else" in done.stderr

    dead = {**env, "QUORUMLOCK_SERVERS": "redis://127.0.0.1:1"}
    done = manage("locked", "job", "--", "migrate", env=dead)
    assert done.returncode == 69, done.stderr
    assert values(servers, "job") == [None] * len(servers)


@SUBPROCESS_TIMEOUT
def test_locked_command_refuses_bad_input(servers: LocalServerGroup, project: Path) -> None:
    env = child_env(servers, project)
    done = manage("locked", "job", "migrate", env=env)  # no '--'
    assert done.returncode == 2
    done = manage("locked", "job", env=env)
    assert done.returncode == 2
    assert "missing '--'" in done.stderr
    assert manage("locked", "job", "--ttl", "-1", "--", "migrate", env=env).returncode == 2
    done = manage("locked", "job", "--ttl", "600", "--", "migrate", env=env)
    assert done.returncode == 2
    assert "max_ttl" in done.stderr
    # A bad settings.QUORUMLOCK (the command skips the system checks): one line, 2.
    done = manage("locked", "job", "--", "migrate", env={**env, "QUORUMLOCK_SERVERS": "nope://x"})
    assert done.returncode == 2, done.stderr
    assert "settings.QUORUMLOCK: malformed server URL 'nope://x'" in done.stderr
    assert "Traceback" not in done.stderr


@SUBPROCESS_TIMEOUT
def test_locked_command_stops_the_command_when_the_lock_is_lost(
    servers: LocalServerGroup, project: Path
) -> None:
    env = child_env(servers, project)
    code = "import time; time.sleep(60)"
    argv = ["locked", "sleeper", "--ttl", "1", "--grace", "2", "--", "shell", "-c", code]
    proc = spawn_manage(*argv, env=env)
    try:
        deadline = time.monotonic() + 60
        while values(servers, "sleeper").count(None) == len(servers):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for server in servers:  # someone deletes the key: the next extension fails
            client = client_of(server)
            client.delete("sleeper")
            client.close()
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 124, stderr
    assert "was lost" in stderr


@SUBPROCESS_TIMEOUT
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=str)
def test_locked_command_interrupted_while_waiting(
    servers: LocalServerGroup, project: Path, signum: signal.Signals
) -> None:
    """A signal while the lock is waited for: as with ``quorumlock run``, the command
    ends with 128+N and one line naming the signal, never runs the command, and leaves
    no key, its place in the queue of waiters included (it died of the signal, with the
    place left on every server, or with a KeyboardInterrupt traceback)."""
    env = child_env(servers, project)
    queue, leases = queue_keys("waited")
    other = quorumlock.Redlock(servers.urls)
    try:
        with other.lock("waited", ttl=60):
            proc = spawn_manage("locked", "waited", "--", "migrate", env=env)
            try:
                deadline = time.monotonic() + 60
                while sum(exists_on(servers, queue)) < 2:  # not in line on a majority
                    assert proc.poll() is None, proc.communicate()
                    assert time.monotonic() < deadline, "the command never waited in line"
                    time.sleep(0.05)
                proc.send_signal(signum)
                out, err = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(timeout=10)
    finally:
        other.close()
    assert proc.returncode == 128 + signum, err
    assert err.strip().splitlines() == [f"CommandError: interrupted by {signum.name}"]
    assert "Operations to perform" not in out  # migrate never ran
    for key in (queue, leases, "waited"):
        assert exists_on(servers, key) == [0] * len(servers), key


def test_threads_share_one_redlock(configured: LocalServerGroup) -> None:
    seen: list[int] = []
    barrier = threading.Barrier(4, timeout=30)

    def grab() -> None:
        barrier.wait()
        seen.append(id(get_redlock()))

    threads = [threading.Thread(target=grab) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(seen) == 4
    assert len(set(seen)) == 1


def test_every_doctor_check_has_its_own_id() -> None:
    """Each check the quick audit can give (every one of doctor's but the clock rate) has
    an id of its own in the table of docs/django.md, not the catch-all 199."""
    source = (Path(quorumlock.__file__).parent / "cli" / "_doctor.py").read_text()
    names = set(re.findall(r'Check\(\s*"([a-z ]+)"', source)) - {"clock rate"}
    assert names <= set(CHECK_IDS), names - set(CHECK_IDS)
    doc = (Path(__file__).parents[2] / "docs" / "django.md").read_text()
    for name, number in CHECK_IDS.items():
        assert re.search(rf"^\| `quorumlock\.[EW]{number}`", doc, re.M), name
