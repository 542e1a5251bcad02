"""examples/django/, run as written: its manage.py in child processes, on real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import quorumlock
from quorumlock.testing import LocalServerGroup
from tests.conftest import values

PROJECT = Path(__file__).parents[2] / "examples" / "django"

# Eight concurrent payments of one invoice through Django's test client, from 4 threads.
DRIVER = """
import json
from concurrent.futures import ThreadPoolExecutor
from django.db import connections
from django.test import Client
from shop.models import Invoice

def pay(_):
    try:
        reply = Client().post("/invoices/1/pay")
        return reply.status_code, reply.json()["status"] if reply.status_code == 200 else ""
    finally:
        connections.close_all()

with ThreadPoolExecutor(4) as pool:
    replies = list(pool.map(pay, range(8), timeout=120))
print(json.dumps({"replies": replies, "charges": Invoice.objects.get(pk=1).charges}))
"""


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.timeout(300)  # four child processes, each starting Django
def test_the_example_project(servers: LocalServerGroup, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QUORUMLOCK_SERVERS": ",".join(servers.urls),
        "SHOP_DB": str(tmp_path / "db.sqlite3"),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)

    done = manage("locked", "migrations", "--wait", "60", "--", "migrate", "--noinput", env=env)
    assert done.returncode == 0, done.stderr
    assert "Applying shop.0001_initial... OK" in done.stdout

    done = manage("check", "--deploy", "--tag", "quorumlock", env=env)
    assert done.returncode == 0, done.stderr
    assert "quorumlock.W103" in done.stderr + done.stdout  # no fsync on the test servers

    done = manage("shell", "-c", DRIVER, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["charges"] == 1  # without the lock, several would read "not paid"
    statuses = [status for code, status in result["replies"] if code == 200]
    assert statuses.count("paid") == 1
    assert {code for code, _ in result["replies"]} <= {200, 409}

    other = quorumlock.Redlock(servers.urls)
    with other.lock("invoice:1", ttl=60):
        code = (
            "from django.test import Client; print(Client().post('/invoices/1/refund').status_code)"
        )
        done = manage("shell", "-c", code, env=env)
    other.close()
    assert done.stdout.split()[-1] == "423", done.stderr
    assert values(servers, "invoice:1") == [None] * len(servers)


def test_the_docs_show_the_example_as_it_is() -> None:
    page = (Path(__file__).parents[2] / "docs" / "django.md").read_text()
    blocks = [part.split("```", 1)[0] for part in page.split("```python\n")[1:]]
    sources = "\n".join(path.read_text() for path in PROJECT.rglob("*.py"))
    assert len(blocks) == 3
    for block in blocks:
        assert block in sources, block
