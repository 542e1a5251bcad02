"""Every Python example of README.md and docs/*.md, run as written on real servers.

Only the servers are changed: each address a page shows (``redis://10.0.0.1:6379``,
``redis.Redis(host="resource-db")``, a cluster's or a sentinel's) is replaced by one of
a local server's, and the reader's own work (``update_stock()``, ``plan()``, ``statsd``,
...) is a stub. The examples of one page run in order in one namespace of a fresh
Python process, as a reader would type them into one session; an asyncio example runs
on an event loop of its own, in a copy of that namespace. A loop that runs for as long
as its process leads (docs/election.md) ends when its stub ``plan()`` raises
``StopExample``, which ends that example. A traceback points at the page's own line.
An example that is not a program to run here (a project's settings, a test module, the
minutes-long fault-injection tables) is listed in ``NOT_RUN`` with what covers it
instead, and the list is held to the pages' examples.

docs/benchmarks.md is the suite's generated output, not a page of examples.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

import quorumlock
from quorumlock.testing import LocalCluster, LocalSentinel, LocalServerGroup
from tests.conftest import ServerFactory

ROOT: Final = Path(__file__).resolve().parents[2]
PACKAGE_ROOT: Final = Path(quorumlock.__file__).resolve().parents[1]
PAGES: Final = [
    "README.md",
    *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if p.name != "benchmarks.md"),
]


@dataclass(frozen=True)
class Example:
    page: str
    number: int  # its rank among the page's Python examples, from 1
    line: int  # the page's line of its first line of code
    code: str


def examples(page: str) -> list[Example]:
    """The page's ```python blocks, in order."""
    found: list[Example] = []
    lines = (ROOT / page).read_text().splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```python":
            end = lines.index("```", index + 1)
            code = "\n".join(lines[index + 1 : end]) + "\n"
            found.append(Example(page, len(found) + 1, index + 2, code))
            index = end
        index += 1
    return found


#: (page, number): why the example is not run here, and what covers it instead.
NOT_RUN: Final = {
    ("README.md", 10): "a test module: tests/test_pytest_plugin.py runs it with pytest",
    ("README.md", 11): "two lines of docs/fastapi.md's example, run by tests/web",
    ("docs/celery.md", 1): "examples/celery_reports.py, run by tests/integration/test_celery.py",
    ("docs/django.md", 1): "examples/django's settings, run by tests/web/test_django_example.py",
    ("docs/django.md", 2): "examples/django's settings, run by tests/web/test_django_example.py",
    ("docs/django.md", 3): "examples/django's views, run by tests/web/test_django_example.py",
    ("docs/fastapi.md", 1): "examples/fastapi_app.py, run by tests/web/test_fastapi.py",
    ("docs/fastapi.md", 2): "an application's own lifespan (make_pool): tests/web/test_fastapi.py",
    ("docs/safety.md", 4): "minutes of fault injection: tests/faults/test_verify.py runs verify()",
    ("docs/safety.md", 5): "minutes of fault injection: tests/faults/test_verify.py runs verify()",
}

RESOURCE: Final = ('redis.Redis(host="resource-db")', "redis.Redis(port={resource_port})")
CLUSTER: Final = 'RedisCluster(host="127.0.0.1", port={cluster_port})'

#: The addresses each page shows, and what they become: a template over the local
#: servers (``{a}``, ``{b}``, ``{c}``: the lock servers' URLs; ``{resource_port}``: the
#: protected resource's server; and those of the page's own servers, below).
ADDRESSES: Final = {
    "README.md": [
        ('"redis://10.0.0.1:6379"', '"{a}"'),
        ('"redis://10.0.0.2:6379"', '"{b}"'),
        ('"redis://10.0.0.3:6379"', '"{c}"'),
        RESOURCE,
    ],
    "docs/algorithm.md": [],
    "docs/cluster.md": [
        ('RedisCluster(host="10.0.1.1", port=7000, password=...)', CLUSTER),
        ('RedisCluster(host="10.0.1.1", port=7000)', CLUSTER),
        ('"redis://10.0.2.1:6379", "redis://10.0.3.1:6379"', '"{a}", "{b}"'),
        ('"redis://10.0.2.1:6379", ...', '"{a}", "{b}"'),
    ],
    "docs/deployment.md": [
        ('"rediss://locker:pw@lock-a.zone-1.internal:6380"', '"{a}"'),
        ('"rediss://locker:pw@lock-b.zone-2.internal:6380"', '"{b}"'),
        ('"rediss://locker:pw@lock-c.zone-3.internal:6380"', '"{c}"'),
        ('"redis://lock-a:6379", "redis://lock-b:6379", "redis://lock-c:6379"', "{new}"),
        ('("sentinel-1", 26379), ("sentinel-2", 26379), ("sentinel-3", 26379)', "{sentinel}"),
        ('"rediss://lock-b:6380", "rediss://lock-c:6380"', '"{b}", "{c}"'),
    ],
    "docs/election.md": [RESOURCE],
    "docs/observability.md": [],
    "docs/safety.md": [RESOURCE],
}

#: What a page leaves to the reader, where it differs from ``STUBS``.
PAGE_STUBS: Final = {"README.md": 'plan = "the schedule"'}

#: The reader's own work, defined before a page's first example. ``servers`` is the
#: list of lock servers the pages leave to the reader.
STUBS: Final = """
import asyncio, queue as _queue

class StopExample(Exception):
    "Ends a loop that an example runs for as long as its process leads."

servers = {lock_urls}
chunks = ["part 1", "part 2"]
queue = _queue.Queue()

def update_stock(): pass
def run_report(): pass
def alert(name): pass
def write(chunk): pass
def work(): pass
def export(slot): pass

_plans = iter(range(3))

def plan():
    try:
        return f"plan {{next(_plans)}}"
    except StopIteration:
        raise StopExample from None

class statsd:
    @staticmethod
    def timing(name, seconds): pass
    @staticmethod
    def incr(name): pass

async def _update_stock(): pass

ASYNC_STUBS = {{"update_stock": _update_stock}}
{page_stubs}
"""

#: Runs the examples given as JSON on stdin, in one namespace (see the module).
RUNNER: Final = """
import ast, asyncio, inspect, json, sys
examples = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
exec(examples.pop(0)["code"], namespace)
for example in examples:
    source = "\\n" * (example["line"] - 1) + example["code"]
    code = compile(source, example["page"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    scope = namespace
    if "quorumlock.asyncio" in example["code"]:
        scope = {**namespace, **namespace["ASYNC_STUBS"]}
    try:
        result = eval(code, scope)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    except namespace["StopExample"]:
        pass
    print(f"ran {example['page']}:{example['line']}", flush=True)
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(3) as local:
        yield local


def addresses(
    page: str,
    servers: LocalServerGroup,
    make_servers: ServerFactory,
    request: pytest.FixtureRequest,
) -> dict[str, str]:
    """What the templates of ``page``'s addresses stand for, starting what it needs."""
    a, b, c, resource, monitored = servers
    values = {"a": a.url, "b": b.url, "c": c.url, "resource_port": str(resource.port)}
    if page == "docs/cluster.md":
        cluster: LocalCluster = request.getfixturevalue("cluster")
        values["cluster_port"] = str(cluster.nodes[0].port)
    if page == "docs/deployment.md":
        # provision() marks brand-new servers: three started as by hand, never used
        values["new"] = ", ".join(f'"{s.url}"' for s in make_servers(3, fresh=False))
        sentinel = LocalSentinel(monitored.host, monitored.port, name="locks-a")
        request.addfinalizer(sentinel.close)
        sentinel.start()
        values["sentinel"] = f'("{sentinel.host}", {sentinel.port})'
    return values


def test_every_example_is_run_or_says_why() -> None:
    """NOT_RUN names examples that exist, and every page is run or skipped whole."""
    listed = {(e.page, e.number) for page in PAGES for e in examples(page)}
    assert set(NOT_RUN) <= listed
    for page in PAGES:
        if any((e.page, e.number) not in NOT_RUN for e in examples(page)):
            assert page in ADDRESSES, f"{page} has examples to run: give its addresses"


@pytest.mark.parametrize("page", sorted(ADDRESSES))
def test_the_examples_of_a_page_run_as_written(
    page: str,
    servers: LocalServerGroup,
    make_servers: ServerFactory,
    request: pytest.FixtureRequest,
) -> None:
    values = addresses(page, servers, make_servers, request)
    lock_urls = [values["a"], values["b"], values["c"]]
    blocks = [e for e in examples(page) if (e.page, e.number) not in NOT_RUN]
    assert blocks, f"{page} has no example to run"
    stubs = STUBS.format(lock_urls=lock_urls, page_stubs=PAGE_STUBS.get(page, ""))
    runs: list[dict[str, object]] = [{"code": stubs}]
    for shown, _ in ADDRESSES[page]:
        assert any(shown in e.code for e in blocks), f"{page} no longer shows {shown}"
    for example in blocks:
        code = example.code
        for shown, local in ADDRESSES[page]:
            code = code.replace(shown, local.format(**values))
        leftover = re.findall(r"\b(?:10\.0\.\d+\.\d+|resource-db|lock-[abc]\b)", code)
        assert not leftover, f"{page}:{example.line} still reaches {leftover}"
        runs.append({"page": page, "line": example.line, "code": code})
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(runs),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ran ") == len(blocks), done.stdout
